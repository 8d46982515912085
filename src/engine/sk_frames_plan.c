/* sk_frames' batch-kernel side: each bone's mode over a batch (the plan)
 * and the kernel's input rows filled from the poses, range-form runs
 * sampled straight into them (sk_frames_int.h). */
#include "sk_frames_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sk_clips.h"
#include "sk_kernel.h"
#include "sk_mat.h"
#include "sk_pose_range.h"

/* Planning's marks in sc->changed: some pose sets the bone's matrix; some
 * pose sets only part of its TRS (its lanes then start from the stored
 * local; else every lane of a TRS64 bone is written whole by its pose);
 * every pose sets the bone (a MATRIX lane is then written whole by its
 * pose: fill_override writes all 16 rows); and from bit PLAN_EVERY_SHIFT
 * on, the fields (SK_OVERRIDE_* bits of PLAN_TRS) every pose sets on a
 * partly set TRS64 bone, whose rows each pose's lane gets from the pose,
 * so the stored local's need not be written there first. */
enum { PLAN_MATRIX = 1, PLAN_PARTIAL = 2, PLAN_ALL = 4, PLAN_EVERY_SHIFT = 3 };
#define PLAN_TRS (SK_OVERRIDE_POSITION | SK_OVERRIDE_ROTATION | SK_OVERRIDE_SCALING)
_Static_assert((PLAN_TRS << PLAN_EVERY_SHIFT) <= 0xff && (PLAN_TRS << PLAN_EVERY_SHIFT) > PLAN_ALL,
               "the fields fit in the marks' byte above the flags");

/* The hits and marks of the Babylon-format range poses of poses[0..n): a
 * run of frames of one range at a time, each driven bone counted once per
 * frame. */
static void plan_babylon_ranges(sk_frames_scratch *sc, const sk_pose *poses, size_t n, size_t nb, uint8_t *every) {
  for (size_t p = 0; p < n;) {
    const sk_pose_range *r = poses[p].range;
    size_t q = p + 1;
    while (q < n && poses[q].range == r)
      q++;
    for (size_t b = 0; r != NULL && r->anim != NULL && b < nb; b++) {
      const unsigned d = r->driven[b];
      every[b] &= (uint8_t)(d & PLAN_TRS);
      if (d == 0)
        continue;
      sc->hits[b] += (uint32_t)(q - p);
      sc->changed[b] |= (d & SK_OVERRIDE_MATRIX) ? PLAN_MATRIX : (d & PLAN_TRS) != PLAN_TRS ? PLAN_PARTIAL : 0;
    }
    p = q;
  }
}

/* A glTF range's "bones" on top that set a matrix: the bone's local is that
 * matrix in every frame (sk_pose__merge_overrides), so its lanes are
 * MATRIX, filled by fill_range. Once per run of one range's poses. */
static void plan_matrix_tops(sk_frames_scratch *sc, const sk_pose *poses, size_t n) {
  for (size_t p = 0; p < n; p++) {
    const sk_pose_range *r = poses[p].range;
    if (r == NULL || r->anim != NULL || (p > 0 && poses[p - 1].range == r))
      continue;
    for (size_t k = 0; k < r->ntop; k++)
      if (r->top[k].mask & SK_OVERRIDE_MATRIX)
        sc->changed[r->top[k].bone] |= PLAN_MATRIX;
  }
}

/* Each bone's kernel mode over the whole batch poses[0..n), into sc->mode.
 * A batch run in slices is planned once, so every pose gets the modes it
 * would get in one run (with the exact kernel the bits do not depend on
 * them anyway; with the fast one they do). */
int sk_frames__plan(const sk_model *e, const sk_pose *poses, size_t n, bool fast, sk_frames_scratch *sc) {
  const sk_skeleton *s = e->skel;
  const size_t nb = s->count;
  if (sk_frames__reserve_bones(sc, nb))
    return SK_ENOMEM;
  /* hits[b]: poses that set bone b (a pose setting it twice counts once;
   * offset[] holds the last pose seen until the layout overwrites it);
   * changed[b]: some pose sets its matrix. */
  /* A glTF range pose sets every bone (position, rotation and scaling):
   * counted once for all, not bone by bone (1024 frames of 65 bones a
   * request). A Babylon-format one sets the fields its clip drives. */
  size_t ranges = 0;
  for (size_t p = 0; p < n; p++)
    ranges += poses[p].range != NULL && poses[p].range->anim == NULL;
  for (size_t b = 0; b < nb; b++) {
    sc->hits[b] = ranges;
    sc->offset[b] = SIZE_MAX;
  }
  memset(sc->changed, 0, nb);
  /* every[b]: the fields every pose that sets b sets (a pose with two
   * overrides of b counts the fields both set: fewer, never more); kept
   * in sc->mode's bytes until the modes are set below */
  uint8_t *every = sc->mode;
  memset(every, PLAN_TRS, nb);
  plan_babylon_ranges(sc, poses, n, nb, every);
  plan_matrix_tops(sc, poses, n);
  for (size_t p = 0; p < n; p++) {
    for (size_t k = 0; k < poses[p].count; k++) {
      const sk_override *o = &poses[p].overrides[k];
      if (poses[p].range == NULL && sc->offset[o->bone] != p)
        sc->hits[o->bone]++;
      every[o->bone] &= (uint8_t)(o->mask & PLAN_TRS);
      sc->offset[o->bone] = p;
      if (o->mask & SK_OVERRIDE_MATRIX)
        sc->changed[o->bone] |= PLAN_MATRIX;
      else if ((o->mask & PLAN_TRS) != PLAN_TRS)
        sc->changed[o->bone] |= PLAN_PARTIAL;
    }
  }
  /* CONST: no pose sets the bone. TRS64: every pose sets it with position,
   * rotation or scaling only, so every lane is compose(TRS) of the stored
   * local's TRS (decomposed first when stale, as the setters do) with the
   * pose's fields, which is what the core's setters compute. Else MATRIX:
   * each lane gets the local the core's setters compute. The fast
   * precision takes no TRS64 and gets MATRIX lanes: its float32 compose of
   * TRS rounded to float32 first was 1.64e-5 off on Fox's clips, against
   * 8.3e-6 from exact locals (sk_kernel.h). */
  const uint8_t trs = fast ? SK_KERNEL_MATRIX : SK_KERNEL_TRS64;
  for (size_t b = 0; b < nb; b++) {
    /* the fields every pose sets, kept where every pose sets the bone */
    const uint8_t all = sc->hits[b] == n ? (uint8_t)(every[b] << PLAN_EVERY_SHIFT) | PLAN_ALL : 0;
    sc->mode[b] = sc->hits[b] == 0                                                       ? SK_KERNEL_CONST
                  : sc->hits[b] == n && !(sc->changed[b] & PLAN_MATRIX) ? trs
                                                                                        : SK_KERNEL_MATRIX;
    sc->changed[b] |= all;
  }
  return 0;
}

/* One lane's TRS rows: the stored local's, then the pose's overrides. A
 * local set as a matrix is decomposed here, once a slice, as Babylon's
 * setters (sk_local_apply) would decompose it for every pose. */
static void lane_trs(const sk_local *l, double v[10]) {
  if (l->need_decompose) {
    sk_mat_decompose(l->matrix, v + 7, v + 3, v);
    return;
  }
  memcpy(v, l->position, 3 * sizeof(double));
  memcpy(v + 3, l->rotation, 4 * sizeof(double));
  memcpy(v + 7, l->scaling, 3 * sizeof(double));
}

/* Lanes [first, blocks * 16) of bone b, padding too, start as the stored
 * local (the lanes below `first` are written whole by their poses); so do
 * lanes [n, ...) of the rows of the fields in `set` (SK_OVERRIDE_* bits:
 * below n, every pose writes them). Each row's lanes are contiguous: one
 * value stored over them. */
static void fill_bone_default(const sk_frames_scratch *sc, const sk_local *l, uint8_t mode, size_t off, size_t first,
                              unsigned set, size_t n, size_t blocks, size_t stride, size_t block) {
  if (mode == SK_KERNEL_CONST) {
    memcpy(sc->input + off, l->matrix, 16 * sizeof(float));
    return;
  }
  double trs[10];
  if (mode != SK_KERNEL_MATRIX) /* MATRIX lanes take the stored matrix: no decomposition */
    lane_trs(l, trs);
  static const unsigned field[10] = {SK_OVERRIDE_POSITION, SK_OVERRIDE_POSITION, SK_OVERRIDE_POSITION,
                                     SK_OVERRIDE_ROTATION, SK_OVERRIDE_ROTATION, SK_OVERRIDE_ROTATION,
                                     SK_OVERRIDE_ROTATION, SK_OVERRIDE_SCALING,  SK_OVERRIDE_SCALING,
                                     SK_OVERRIDE_SCALING};
  const size_t rows = mode == SK_KERNEL_MATRIX ? 16 : 10;
  for (size_t r = 0; r < rows; r++) {
    const size_t from = r < 10 && (set & field[r]) && n > first ? n : first;
    for (size_t g = from / 16; g < blocks; g++) {
      const size_t at = off + g * block + r * stride, q0 = g == from / 16 ? from % 16 : 0;
      if (mode == SK_KERNEL_TRS64)
        for (size_t q = q0; q < 16; q++)
          sc->input64[at + q] = trs[r];
      else
        for (size_t q = q0; q < 16; q++)
          sc->input[at + q] = mode == SK_KERNEL_TRS ? (float)trs[r] : l->matrix[r];
    }
  }
}

/* Pose p's override `o` into its lane. */
static void fill_override(const sk_frames_scratch *sc, const sk_skeleton *s, const sk_override *o, size_t p,
                          size_t stride, size_t block) {
  const uint8_t mode = sc->mode[o->bone];
  const size_t at = sc->offset[o->bone] + p / 16 * block + p % 16;
  if (mode == SK_KERNEL_MATRIX) {
    sk_local l = s->bones[o->bone].local;
    sk_local_apply(&l, o);
    for (size_t r = 0; r < 16; r++)
      sc->input[at + r * stride] = l.matrix[r];
    return;
  }
  if (mode == SK_KERNEL_TRS64) {
    /* the fields the override sets, each straight into its rows (what
     * sk_override_fields copies; the others keep the lane's doubles) */
    double *d = sc->input64 + at;
    for (size_t r = 0; (o->mask & SK_OVERRIDE_POSITION) && r < 3; r++)
      d[r * stride] = o->position[r];
    for (size_t r = 0; (o->mask & SK_OVERRIDE_ROTATION) && r < 4; r++)
      d[(3 + r) * stride] = o->rotation[r];
    for (size_t r = 0; (o->mask & SK_OVERRIDE_SCALING) && r < 3; r++)
      d[(7 + r) * stride] = o->scaling[r];
    return;
  }
  double v[10];
  for (size_t r = 0; r < 10; r++)
    v[r] = (double)sc->input[at + r * stride];
  sk_override_fields(o, v, v + 3, v + 7);
  for (size_t r = 0; r < 10; r++)
    sc->input[at + r * stride] = (float)v[r];
}

/* The end of the run of lanes from p (up to n) that hold consecutive
 * frames of poses[p]'s range. */
static size_t range_run_end(const sk_pose *poses, size_t p, size_t n) {
  size_t q = p + 1;
  while (q < n && poses[q].range == poses[p].range && poses[q].frame == poses[p].frame + (q - p))
    q++;
  return q;
}

/* Lanes [p, q) of range-form poses of `r` (consecutive frames from
 * `frame`) one by one: each frame's overrides materialised, then filled as
 * any pose's. */
static void fill_range_lanes(sk_frames_scratch *sc, const sk_skeleton *s, sk_pose_range *r, size_t frame, size_t p,
                             size_t q, size_t stride, size_t block) {
  for (size_t i = p; i < q; i++) {
    size_t nb = sk_pose_range_materialize(r, frame + (i - p), sc->ovr);
    for (size_t b = 0; b < nb; b++)
      fill_override(sc, s, &sc->ovr[b], i, stride, block);
  }
}

/* The lanes from p on that hold consecutive frames of one range (up to n):
 * sampled straight into their TRS64 rows by sk_sample_run, as the kernel
 * row of `skinner bench --clips` does, instead of B overrides written at
 * parse time and read back here (24 % of the route, docs/clips.md). The
 * sampler writes the doubles the overrides would hold, where fill_override
 * would copy them, so the bits are the same. `rows64` is this batch's
 * TRS64 buffer, NULL under the fast precision (the scratch may still hold
 * an earlier batch's, sized for another layout). Returns the lane after
 * the run. */
static size_t fill_range(sk_frames_scratch *sc, const sk_skeleton *s, const sk_pose *poses, size_t p, size_t n,
                         size_t stride, size_t block, double *rows64, bool rest_kept) {
  sk_pose_range *r = poses[p].range;
  const size_t f0 = poses[p].frame, q = range_run_end(poses, p, n);
  /* sk_sample_run writes every bone at its offset: TRS64 rows, or the rows
   * of a MATRIX bone (16 of them, so the 10 fit), fixed up below. The fast
   * precision has no TRS64 rows; a run starting inside a 16-lane block
   * (a /poses batch mixing forms) samples its head lane by lane. */
  bool direct = rows64 != NULL;
  for (size_t b = 0; direct && b < s->count; b++)
    direct = sc->mode[b] == SK_KERNEL_TRS64 || sc->mode[b] == SK_KERNEL_MATRIX;
  size_t a = direct ? (p + 15) / 16 * 16 : q;
  a = a < q ? a : q;
  fill_range_lanes(sc, s, r, f0, p, a, stride, block);
  if (a == q)
    return q;
  if (r->lctx != NULL) { /* glTF layers with masks or additive layers: sk_layers' runs */
    sk_pose_range_layers_rows(r, f0 + (a - p), rows64, sc->offset, stride, block, a, q);
  } else {
    const sk_sample_out o = {.f64 = rows64 + a / 16 * block, .offset = sc->offset, .pose_stride = stride,
                             .block_stride = block, .rest_kept = rest_kept && a == 0};
    sk_sample_run(r->ctx, r->times + f0 + (a - p), 0, q - a, &o);
  }
  /* the fields on top over the sampled rows, a matrix on top into its lanes */
  sk_pose_range_top_rows(r, rows64, sc->input, sc->offset, stride, block, a, q);
  /* MATRIX bones (a local that must be decomposed, or a matrix another
   * pose of the batch sets): each lane gets the core's local of the TRS
   * just sampled into its rows, which the kernel does not read for them;
   * not a bone whose matrix is set on top (its lanes hold that matrix). */
  for (size_t b = 0; b < s->count; b++) {
    if (sc->mode[b] != SK_KERNEL_MATRIX || sk_pose_range_matrix_top(r, (int32_t)b) != NULL)
      continue;
    sk_override ov = {.bone = (int32_t)b, .mask = PLAN_TRS};
    for (size_t i = a; i < q; i++) {
      const double *d = rows64 + sc->offset[b] + i / 16 * block + i % 16;
      for (size_t k = 0; k < 3; k++) {
        ov.position[k] = d[k * stride];
        ov.scaling[k] = d[(7 + k) * stride];
      }
      for (size_t k = 0; k < 4; k++)
        ov.rotation[k] = d[(3 + k) * stride];
      fill_override(sc, s, &ov, i, stride, block);
    }
  }
  return q;
}

/* fill_range for a Babylon-format range: its lanes written straight by
 * sk_pose_range_babylon_fill when every bone it drives has the lanes the
 * plan gives such a range alone (TRS64, or MATRIX for a "_matrix"
 * channel), else frame by frame from the materialised overrides (the fast
 * precision's MATRIX lanes, a batch whose other poses set those bones
 * another way). */
static size_t fill_range_babylon(sk_frames_scratch *sc, const sk_skeleton *s, const sk_pose *poses, size_t p,
                                 size_t n, size_t stride, size_t block, double *rows64) {
  sk_pose_range *r = poses[p].range;
  const size_t f0 = poses[p].frame, q = range_run_end(poses, p, n);
  bool direct = rows64 != NULL;
  for (size_t b = 0; direct && b < s->count; b++)
    if (r->driven[b] != 0)
      direct = sc->mode[b] == ((r->driven[b] & SK_OVERRIDE_MATRIX) ? SK_KERNEL_MATRIX : SK_KERNEL_TRS64);
  if (direct)
    sk_pose_range_babylon_fill(r, f0, rows64, sc->input, sc->offset, stride, block, p, q);
  else
    fill_range_lanes(sc, s, r, f0, p, q, stride, block);
  return q;
}

/* Whether poses[0..n) are consecutive frames of one range with every bone
 * in TRS64 rows: fill_range then writes lanes [0, n) with one
 * sk_sample_run and nothing else writes there. */
static bool one_range_run(const sk_frames_scratch *sc, const sk_pose *poses, size_t n, size_t nb, bool fast) {
  const sk_pose_range *r = poses[0].range;
  /* "bones" on top write there too; a Babylon-format range has its own
   * fill, and a glTF layers range (sk_layers) no sampler context */
  if (fast || r == NULL || r->ntop > 0 || r->anim != NULL || r->ctx == NULL)
    return false;
  for (size_t q = 1; q < n; q++)
    if (poses[q].range != r || poses[q].frame != poses[0].frame + q)
      return false;
  for (size_t b = 0; b < nb; b++)
    if (sc->mode[b] != SK_KERNEL_TRS64)
      return false;
  return true;
}

/* For a slice that is one range run: whether input64 already holds its
 * context's rest rows for lanes [0, n) (the last such slice of this
 * scratch had equal rest rows, in the same layout, over as many lanes);
 * else records them as the ones this slice will write. */
static bool rest_rows_kept(sk_frames_scratch *sc, const sk_sample_ctx *c, size_t nb, size_t n, size_t stride,
                           size_t block) {
  const bool same = sk_sample_rest_memo_same(&sc->rest, c, nb);
  const bool kept = same && n <= sc->rest_lanes && stride == sc->rest_stride && block == sc->rest_block;
  sc->rest_stride = stride;
  sc->rest_block = block;
  return kept;
}

/* Fills the kernel's input for poses[0..n) under the modes in sc->mode and
 * runs it into `dest` (n*(B+1)*16 floats). */
int sk_frames__fill_run(const sk_model *e, const sk_pose *poses, size_t n, bool fast, sk_frames_scratch *sc,
                        float *dest, unsigned threads) {
  const sk_skeleton *s = e->skel;
  const size_t nb = s->count;
  /* Blocked layout: the kernel reads each 16-pose block as one stream. */
  size_t stride, block;
  const size_t floats = sk_kernel_blocked_layout(sc->mode, nb, n, sc->offset, &stride, &block);
  const size_t cap64 = sc->input64_cap;
  if (floats == 0 || sk_frames__reserve_ovr(sc, nb) ||
      sk_frames__reserve_aligned((void **)&sc->input, &sc->input_cap, floats, sizeof(float)) ||
      (!fast && sk_frames__reserve_aligned((void **)&sc->input64, &sc->input64_cap, floats, sizeof(double))))
    return SK_ENOMEM;
  if (sc->input64_cap != cap64) /* a new buffer holds nothing yet */
    sc->rest_lanes = 0;
  const bool one_run = one_range_run(sc, poses, n, nb, fast);
  const bool kept = one_run && rest_rows_kept(sc, poses[0].range->ctx, nb, n, stride, block);
  const size_t blocks = (n + 15) / 16;
  for (size_t b = 0; b < nb; b++) {
    bool whole = (sc->mode[b] == SK_KERNEL_TRS64 && !(sc->changed[b] & PLAN_PARTIAL)) ||
                 (sc->mode[b] == SK_KERNEL_MATRIX && (sc->changed[b] & PLAN_ALL));
    /* a partly set TRS64 bone: the fields every pose sets are not defaulted below n */
    const unsigned set = sc->mode[b] == SK_KERNEL_TRS64 ? (unsigned)sc->changed[b] >> PLAN_EVERY_SHIFT : 0;
    fill_bone_default(sc, &s->bones[b].local, sc->mode[b], sc->offset[b], whole ? n : 0, set, n, blocks, stride,
                      block);
  }
  for (size_t p = 0; p < n;) {
    if (poses[p].range != NULL && poses[p].range->anim != NULL) {
      p = fill_range_babylon(sc, s, poses, p, n, stride, block, fast ? NULL : sc->input64);
      continue;
    }
    if (poses[p].range != NULL) {
      p = fill_range(sc, s, poses, p, n, stride, block, fast ? NULL : sc->input64, kept);
      continue;
    }
    for (size_t k = 0; k < poses[p].count; k++)
      fill_override(sc, s, &poses[p].overrides[k], p, stride, block);
    p++;
  }
  /* The padding lanes from n on now hold the stored locals. */
  sc->rest_lanes = one_run && sk_sample_rest_memo_holds(&sc->rest) ? n : 0;
  /* One range's bones at rest in every frame: composed once (the same
   * bits, sk_clips_plan_consts), their rows written but not read. */
  const bool consts = one_run && sk_clips_plan_consts(&sc->plan, &sc->rest, nb, sc->mode, sc->offset) > 0;
  sk_kernel_job job = {.rig = e->rig,
                       .poses = n,
                       .pose_stride = stride,
                       .block_stride = block,
                       .mode = consts ? sc->plan.mode : sc->mode,
                       .offset = consts ? sc->plan.offset : sc->offset,
                       .input = consts ? sc->plan.consts : sc->input,
                       .input_floats = consts ? 16 * nb : floats,
                       .input64 = fast ? NULL : sc->input64,
                       .input64_doubles = fast ? 0 : floats,
                       .precision = fast ? SK_KERNEL_PRECISION_FAST : SK_KERNEL_PRECISION_EXACT,
                       .initial_skin = poses[0].has_initial_skin ? poses[0].initial_skin : NULL,
                       .final = dest};
  if (sk_kernel_validate(&job, NULL) != 0)
    return SK_EINVAL;
  /* Large batches split by pose ranges across cores; starting threads
   * costs tens of microseconds, so only from ~256k bone matrices up. */
  if (threads > 1 && n >= 32 && n * e->bone_count >= (1u << 18))
    return sk_kernel_run_threads(&job, threads) == 0 ? 0 : SK_ENOMEM;
  sk_kernel_run(&job, 0, n);
  return 0;
}
