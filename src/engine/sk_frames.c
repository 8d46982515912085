#include "sk_frames.h"
#include "sk_frames_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_clips.h"
#include "sk_cpu.h"
#include "sk_json.h"
#include "sk_kernel.h"
#include "sk_mat.h"
#include "sk_pose_range.h"
#include "sk_poseops.h"

const sk_frames_sample_fn sk_frames_sample_default = sk_pose_parse_anim;
const sk_frames_sample_fn sk_frames_sample_range = sk_pose_parse_range;

/* A slice of sk_frames_write: bounded memory, few sink calls. */
#define SK_FRAMES_SLICE (64u << 10)

void sk_frames_mat3x4(const float m[16], float dest[12]) {
  for (int c = 0; c < 3; c++)
    for (int r = 0; r < 4; r++)
      dest[4 * c + r] = m[4 * r + c];
}

/* ---- scratch ---------------------------------------------------------------------- */

void sk_frames_scratch_close(sk_frames_scratch *sc) {
  sk_pose_buffers_close(&sc->buf);
  free(sc->input);
  free(sc->input64);
  free(sc->final);
  free(sc->mode);
  free(sc->changed);
  free(sc->offset);
  free(sc->hits);
  sk_clips_plan_close(&sc->plan);
  free(sc->ovr);
  sk_sample_rest_memo_close(&sc->rest);
  sk_poseops_copy_close(&sc->ops_copy);
  memset(sc, 0, sizeof *sc);
}

static int reserve_core(sk_frames_scratch *sc, size_t bones) {
  if (sc->buf.final != NULL && sc->buf.bones >= bones)
    return 0;
  sk_pose_buffers nb;
  if (sk_pose_buffers_init(&nb, bones) != 0)
    return SK_ENOMEM;
  sk_pose_buffers_close(&sc->buf);
  sc->buf = nb;
  return 0;
}

int sk_frames__reserve_bones(sk_frames_scratch *sc, size_t bones) {
  if (bones <= sc->bones_cap)
    return 0;
  free(sc->mode);
  free(sc->changed);
  free(sc->offset);
  free(sc->hits);
  sk_clips_plan_close(&sc->plan);
  sc->mode = malloc(bones);
  sc->changed = malloc(bones);
  sc->offset = malloc(bones * sizeof *sc->offset);
  sc->hits = malloc(bones * sizeof *sc->hits);
  const int plan = sk_clips_plan_init(&sc->plan, bones);
  sc->bones_cap = sc->mode && sc->changed && sc->offset && sc->hits && plan == 0 ? bones : 0;
  return sc->bones_cap ? 0 : SK_ENOMEM;
}

int sk_frames__reserve_ovr(sk_frames_scratch *sc, size_t bones) {
  if (bones <= sc->ovr_cap)
    return 0;
  free(sc->ovr);
  sc->ovr = malloc((bones ? bones : 1) * sizeof *sc->ovr);
  sc->ovr_cap = sc->ovr ? bones : 0;
  return sc->ovr ? 0 : SK_ENOMEM;
}

int sk_frames__reserve_aligned(void **p, size_t *cap, size_t n, size_t size) {
  if (n <= *cap)
    return 0;
  free(*p);
  *p = aligned_alloc(64, (n * size + 63) & ~(size_t)63);
  *cap = *p ? n : 0;
  return *p ? 0 : SK_ENOMEM;
}

/* ---- the plan ---------------------------------------------------------------------- */

bool sk_frames_uses_kernel(const sk_model *e, const sk_pose *poses, size_t n, const sk_frames_opts *o) {
  const sk_skeleton *s = e->skel;
  (void)o;
  /* One pose is the core's: the same bits, and faster than a 16-lane
   * kernel block holding one pose (Fox, f32 answers: 1.1 us against 5 us
   * for the fast kernel, docs/history/kernel.md), so no precision changes that. */
  if (e->rig == NULL || n < 2 || s->count == 0)
    return false;
  for (size_t i = 0; i < n; i++) {
    if (poses[i].output != SK_OUT_FINAL || poses[i].has_initial_skin != poses[0].has_initial_skin ||
        poses[i].ops != NULL)
      return false;
    if (poses[i].has_initial_skin && memcmp(poses[i].initial_skin, poses[0].initial_skin, sizeof poses[0].initial_skin))
      return false;
  }
  return true;
}

int sk_frames_check_cost(const sk_model *e, const sk_pose *poses, size_t n, const sk_frames_opts *o,
                         const sk_cost_limits *l, const char *ptr, sk_error *err) {
  sk_cost cost = {0};
  for (size_t i = 0; i < n; i++) {
    if (sk_cost_add_poses(&cost, l, e->skel, 1, poses[i].output, o->fmt, ptr, err) != 0)
      return SK_ETOOBIG;
    if (poses[i].ops != NULL) {
      cost.eval += sk_poseops_work(e->skel, poses[i].ops, o->fmt);
      cost.answer += sk_poseops_answer_bytes(e->skel, poses[i].ops, o->fmt);
      if (sk_cost_work(&cost) > l->max_work && poses[i].ops->nrays > 0) {
        char p[SK_ERROR_POINTER_MAX];
        sk_pointer_child(p, sizeof p, ptr, "rays");
        return sk_error_set(err, SK_ETOOBIG, p,
                            "%zu rays x %llu triangles on %zu poses are over the work limit (--max-work); ask "
                            "for fewer rays, poses or primitives",
                            poses[i].ops->nrays, (unsigned long long)(poses[i].ops->ray_tests / poses[i].ops->nrays),
                            i + 1);
      }
      if (sk_cost_work(&cost) > l->max_work)
        return sk_error_set(err, SK_ETOOBIG, ptr, "the ops and outputs of %zu poses are over the work limit", i + 1);
      if (cost.answer > l->max_answer && poses[i].ops->mesh_out != 0)
        return sk_error_set(err, SK_ETOOBIG, ptr,
                            "the answer's skinned mesh outputs of %zu poses would be over %llu bytes "
                            "(--max-answer-mb); ask for fewer frames or outputs",
                            i + 1, (unsigned long long)l->max_answer);
      if (cost.answer > l->max_answer)
        return sk_error_set(err, SK_ETOOBIG, ptr, "the answer would be over %llu bytes",
                            (unsigned long long)l->max_answer);
    }
  }
  return 0;
}

/* Per-matrix costs measured on a loaded 2-core AMD EPYC: scalar
 * core ~150 ns, batch kernel ~7 ns, JSON encoding of 16 floats ~650 ns
 * (sk_numfmt), binary copy ~1 ns. */
double sk_frames_cost_us(const sk_model *e, const sk_pose *poses, size_t n, const sk_frames_opts *o) {
  double mats = (double)n * (double)(e->skel->count + 1);
  double eval = sk_frames_uses_kernel(e, poses, n, o) ? 7 : 150;
  double enc = o->fmt == SK_FMT_JSON ? 650 : 1;
  double ops = 0; /* sk_poseops work units, ~150 ns each */
  for (size_t i = 0; i < n; i++)
    if (poses[i].ops != NULL)
      ops += (double)sk_poseops_work(e->skel, poses[i].ops, o->fmt);
  return (mats * (eval + enc) + ops * 150) * 1e-3;
}

size_t sk_frames_answer_bound(const sk_model *e, const sk_pose *poses, size_t n, int fmt) {
  const sk_skeleton *s = e->skel;
  size_t mats = s->count + 1, floats = 0;
  if (fmt != SK_FMT_JSON) {
    size_t bytes = n * mats * (fmt == SK_FMT_F32 ? 16 : 12) * sizeof(float);
    for (size_t i = 0; i < n; i++)
      if (poses[i].ops != NULL) /* world matrices and positions after the finals */
        bytes += sk_poseops_answer_bytes(s, poses[i].ops, fmt);
    return bytes;
  }
  size_t extra = 0;
  for (size_t i = 0; i < n; i++) {
    floats += 16 * sk_answer_core_matrices(poses[i].output, s->count);
    if (poses[i].ops != NULL)
      extra += sk_poseops_answer_bytes(s, poses[i].ops, fmt);
  }
  return floats * 16 + n * 64 + extra;
}

/* ---- encoding ---------------------------------------------------------------------- */

/* Whether matrices m[0..16 * mats) hold a non-finite float: its exponent
 * bits all set (inf or NaN), which adding one to the exponent carries into
 * the sign bit. Integer ORs, a matrix a step: 3-4 ns a matrix on the loaded
 * 2-core test machine before the accumulators, against ~7 for the batch kernel and ~650 for JSON encoding (docs/history/kernel.md). */
/* Any non-finite float in m[0 .. 16 * mats): an exponent of all ones is
 * one that carries into bit 31 when 1 is added at the exponent's lowest
 * bit. Vectors of the ISA's register width (GNU vector types: 16 lanes
 * with AVX-512, 8 with AVX2, 4 with SSE2), ORed into one accumulator
 * folded once at the end: with a scalar `bad`, gcc folded the vector after
 * every matrix, and with a 16-lane vector on AVX2 it kept the accumulator
 * on the stack (23 instructions a matrix, stores and reloads of mixed
 * widths). Built once per ISA below: on the baseline target alone it ran
 * as four SSE2 vectors a matrix (7 % of a range). */
typedef uint32_t nf_u32x16 __attribute__((vector_size(64)));
typedef uint32_t nf_u32x8 __attribute__((vector_size(32)));
typedef uint32_t nf_u32x4 __attribute__((vector_size(16)));
#define NONFINITE_BODY(V, LANES)                                                                          \
  const V expo = (V){0} + 0x7f800000u, one = (V){0} + 0x00800000u;                                       \
  V acc = {0}, u;                                                                                        \
  for (size_t k = 0; k < 16 * mats; k += (LANES)) {                                                      \
    memcpy(&u, &m[k], sizeof u);                                                                         \
    acc |= (u & expo) + one;                                                                             \
  }                                                                                                      \
  uint32_t bad = 0;                                                                                      \
  for (int i = 0; i < (LANES); i++)                                                                      \
    bad |= acc[i];                                                                                       \
  return (bad & 0x80000000u) != 0;

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512f"))) static bool nonfinite_avx512(const float *m, size_t mats) {
  NONFINITE_BODY(nf_u32x16, 16)
}
__attribute__((target("avx2"))) static bool nonfinite_avx2(const float *m, size_t mats) {
  NONFINITE_BODY(nf_u32x8, 8)
}
#endif
static bool nonfinite_base(const float *m, size_t mats) { NONFINITE_BODY(nf_u32x4, 4) }
#undef NONFINITE_BODY

bool sk_frames_nonfinite(const float *m, size_t mats) {
#if defined(__x86_64__) || defined(__i386__)
  if (sk_cpu_has(SK_CPU_AVX512F))
    return nonfinite_avx512(m, mats);
  if (sk_cpu_has(SK_CPU_AVX2))
    return nonfinite_avx2(m, mats);
#endif
  return nonfinite_base(m, mats);
}

/* The first bone, parent-first (so the one where an overflow starts, not
 * a descendant that inherits it), whose matrix in the slot-ordered m is
 * non-finite, or SIZE_MAX. Finite inputs can still overflow float32 in the
 * products (a scale of 3e38 under another one); such a pose is refused
 * rather than answered with null (JSON) or NaN (binary). The trailing
 * identity of `final` is never written, so never checked. */
static size_t nonfinite_bone(const sk_skeleton *s, const float *m) {
  if (!sk_frames_nonfinite(m, s->count)) /* the usual case: one pass over the slots */
    return SIZE_MAX;
  for (size_t b = 0; b < s->count; b++)
    if (s->bones[b].index >= 0 && sk_frames_nonfinite(m + 16 * (size_t)s->bones[b].index, 1))
      return b;
  return SIZE_MAX;
}

/* SK_ENOTFINITE with sc->bad_* set when pose i's answer would hold a
 * non-finite number: its final matrices, and for JSON the absolute and
 * local ones it asks for (all in slot order). */
static int check_finite(const sk_model *e, const sk_pose *pose, size_t i, const float *kernel_final,
                        const sk_pose_buffers *buf, int fmt, sk_frames_scratch *sc) {
  const sk_skeleton *s = e->skel;
  const float *final = kernel_final ? kernel_final : buf->final;
  size_t b = (fmt != SK_FMT_JSON || (pose->output & SK_OUT_FINAL)) ? nonfinite_bone(s, final) : SIZE_MAX;
  if (b == SIZE_MAX && fmt == SK_FMT_JSON && !kernel_final && (pose->output & SK_OUT_ABSOLUTE))
    b = nonfinite_bone(s, buf->absolute);
  if (b == SIZE_MAX && fmt == SK_FMT_JSON && !kernel_final && (pose->output & SK_OUT_LOCAL))
    b = nonfinite_bone(s, buf->local);
  if (b == SIZE_MAX)
    return 0;
  sc->bad_pose = i;
  sc->bad_bone = b;
  return SK_ENOTFINITE;
}

int sk_frames_nonfinite_error(const sk_model *e, const sk_frames_scratch *sc, bool batch, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX] = "";
  if (batch) {
    snprintf(p, sizeof p, "/poses");
    sk_pointer_push_index(p, sizeof p, sc->bad_pose);
  }
  if (sc->bad_bone >= e->skel->count) { /* a skinned vertex (sk_poseops_answer) */
    sk_pointer_push(p, sizeof p, "output");
    return sk_error_set(err, SK_ENOTFINITE, p,
                        "a skinned vertex overflows float32 in pose %zu of the answer: the inputs are finite but "
                        "their products are not; scale them down",
                        sc->bad_pose);
  }
  const sk_bone *bone = &e->skel->bones[sc->bad_bone];
  sk_pointer_push(p, sizeof p, "bones");
  sk_pointer_push(p, sizeof p, bone->name);
  return sk_error_set(err, SK_ENOTFINITE, p,
                      "the matrix of bone \"%.100s\" (slot %d) overflows float32 in pose %zu of the answer: the "
                      "inputs are finite but their products are not; scale them down",
                      bone->name, (int)bone->index, sc->bad_pose);
}

int sk_frames_append_binary(sk_strbuf *out, const float *final, size_t mats, int fmt) {
  if (fmt == SK_FMT_F32)
    return sk_strbuf_append(out, (const char *)final, mats * 16 * sizeof(float));
  if (sk_strbuf_reserve(out, mats * 12 * sizeof(float)))
    return SK_ENOMEM;
  float *d = (float *)(void *)(out->data + out->len);
  for (size_t k = 0; k < mats; k++)
    sk_frames_mat3x4(final + 16 * k, d + 12 * k);
  out->len += mats * 12 * sizeof(float);
  out->data[out->len] = 0;
  return 0;
}

/* Pose i's answer from its final matrices (kernel) or the core's buffers. */
static int encode(const sk_model *e, const sk_pose *pose, size_t i, const float *kernel_final,
                  const sk_pose_buffers *buf, int fmt, sk_frames_scratch *sc, sk_strbuf *out) {
  const sk_skeleton *s = e->skel;
  int rc = check_finite(e, pose, i, kernel_final, buf, fmt, sc);
  if (rc)
    return rc;
  if (fmt != SK_FMT_JSON)
    return sk_frames_append_binary(out, kernel_final ? kernel_final : buf->final, s->count + 1, fmt);
  if (i > 0 && sk_strbuf_append(out, ",", 1))
    return SK_ENOMEM;
  /* The stored pose's text is copied where a matrix equals it: the same
   * bytes the number writer would print, whichever engine computed them. */
  if (kernel_final)
    return sk_json_write_result_ref(out, s->count, kernel_final, &e->base_final_text, NULL, NULL);
  return sk_pose_write_json(s, pose, buf, &e->base_final_text, out);
}

/* The core for one pose: only the subtrees of the bones it sets are
 * recomputed when it wants final matrices without an initial skin, the
 * rest come from the model's base evaluation, bit for bit the same answer
 * (tests/check_sk_skeleton.c compares the two). */
static int eval_core(const sk_model *e, const sk_pose *pose, sk_frames_scratch *sc) {
  const sk_skeleton *s = e->skel;
  if (reserve_core(sc, s->count))
    return SK_ENOMEM;
  if (e->base_world == NULL || pose->output != SK_OUT_FINAL || pose->has_initial_skin ||
      sk_frames__reserve_bones(sc, s->count)) {
    sk_pose_evaluate(s, pose, &sc->buf);
    return 0;
  }
  memset(sc->changed, 0, s->count);
  sk_skeleton_pose_overrides(s, pose->overrides, pose->count, sc->buf.locals, sc->changed);
  sk_skeleton_evaluate_changed(s, sc->buf.locals, sc->changed, e->base_world, e->base_final, sc->buf.scratch,
                               sc->buf.final);
  return 0;
}

/* Pose i's answer from the core; a pose with Bone-API ops or world
 * outputs is evaluated on a scratch copy (sk_poseops). */
static int core_answer(const sk_model *e, const sk_pose *pose, size_t i, sk_frames_scratch *sc, int fmt,
                       sk_strbuf *out) {
  sk_pose view; /* a range-form pose's overrides, materialised */
  if (pose->range != NULL) {
    if (sk_frames__reserve_ovr(sc, e->skel->count))
      return SK_ENOMEM;
    sk_pose_materialize(pose, sc->ovr, &view);
    pose = &view;
  }
  if (pose->ops != NULL) {
    size_t bad = SIZE_MAX;
    int rc = reserve_core(sc, e->skel->count) ? SK_ENOMEM : sk_poseops_answer(e->skel, pose, i, &sc->ops_copy, &sc->buf, fmt, &bad, out);
    if (rc == SK_ENOTFINITE) {
      sc->bad_pose = i;
      sc->bad_bone = bad;
    }
    return rc;
  }
  int rc = eval_core(e, pose, sc);
  return rc ? rc : encode(e, pose, i, NULL, &sc->buf, fmt, sc, out);
}

/* ---- whole answers ----------------------------------------------------------------- */

static int eval_kernel(const sk_model *e, const sk_pose *poses, size_t n, const sk_frames_opts *o,
                       sk_frames_scratch *sc, sk_strbuf *out) {
  const size_t mats = e->skel->count + 1, total = n * mats * 16;
  const bool fast = o->precision == SK_FRAMES_FAST && o->fmt != SK_FMT_JSON;
  float *dest;
  if (o->fmt == SK_FMT_F32) { /* straight into the answer */
    if (sk_strbuf_reserve(out, total * sizeof(float)))
      return SK_ENOMEM;
    dest = (float *)(void *)(out->data + out->len);
  } else {
    if (sk_frames__reserve_aligned((void **)&sc->final, &sc->final_cap, total, sizeof(float)))
      return SK_ENOMEM;
    dest = sc->final;
  }
  int rc = sk_frames__plan(e, poses, n, fast, sc);
  /* One thread runs the batch in slices whose TRS64 input (B x 10 doubles
   * a pose) stays within ~256 KiB, so the kernel reads rows the fill has
   * just written from L2 instead of memory (a 1024-frame range of Fox is
   * 2 MB of rows; slices made the route 1.3x faster here). The kernel's
   * bits do not depend on how a batch is split (sk_kernel.h). Threads take
   * the batch whole, as before. */
  size_t slice = n;
  if (!(o->threads > 1 && n >= 32 && n * e->bone_count >= (1u << 18))) {
    slice = ((256u << 10) / ((e->skel->count ? e->skel->count : 1) * 10 * sizeof(double))) & ~(size_t)15;
    slice = slice < 16 ? 16 : slice;
  }
  for (size_t i = 0; !rc && i < n; i += slice)
    rc = sk_frames__fill_run(e, poses + i, n - i < slice ? n - i : slice, fast, sc, dest + i * mats * 16, o->threads);
  if (rc)
    return rc;
  if (o->fmt == SK_FMT_F32) {
    /* one pass over the batch (the trailing identities are finite); the
     * pose and bone only when something overflowed */
    const bool bad = sk_frames_nonfinite(dest, n * mats);
    for (size_t i = 0; bad && i < n && !rc; i++)
      rc = check_finite(e, &poses[i], i, dest + i * mats * 16, NULL, o->fmt, sc);
    if (rc)
      return rc;
    out->len += total * sizeof(float);
    out->data[out->len] = 0;
    return 0;
  }
  for (size_t i = 0; i < n && !rc; i++)
    rc = encode(e, &poses[i], i, dest + i * mats * 16, NULL, o->fmt, sc, out);
  return rc;
}

int sk_frames_eval(const sk_model *e, const sk_pose *poses, size_t n, const sk_frames_opts *o,
                   sk_frames_scratch *sc, sk_strbuf *out) {
  /* Room for the usual JSON answer at once (~12 bytes a float), instead of
   * about nine doublings from 64 bytes, each copying what was written;
   * capped, past which the doublings cost little against the printing. */
  if (o->fmt == SK_FMT_JSON) {
    size_t floats = sk_frames_answer_bound(e, poses, n, o->fmt) / 16;
    if (sk_strbuf_reserve(out, floats < (4u << 20) / 12 ? floats * 12 + 64 : 4u << 20) != 0)
      return SK_ENOMEM;
  }
  if (sk_frames_uses_kernel(e, poses, n, o)) {
    int rc = eval_kernel(e, poses, n, o, sc, out);
    if (rc == SK_ENOTFINITE)
      return rc;
    if (rc != SK_EINVAL)
      return rc || out->failed ? SK_ENOMEM : 0;
    /* the kernel refused the job: the scalar core answers instead */
  }
  int rc = 0;
  sk_poseops_copy_forget(&sc->ops_copy); /* the last request's skeleton may be gone */
  sc->ops_copy.mesh_threads = o->mesh_threads;
  for (size_t i = 0; i < n && !rc; i++)
    rc = core_answer(e, &poses[i], i, sc, o->fmt, out);
  if (rc == SK_ENOTFINITE)
    return rc;
  return rc || out->failed ? SK_ENOMEM : 0;
}

/* ---- runs in slices ---------------------------------------------------------------- */

int sk_frames_run_init(sk_frames_run *run, const sk_model *e, const sk_pose *poses, size_t n,
                       const sk_frames_opts *o) {
  memset(run, 0, sizeof *run);
  run->model = e;
  run->poses = poses;
  run->n = n;
  run->opts = *o;
  if (run->opts.fmt == SK_FMT_JSON)
    run->opts.precision = SK_FRAMES_EXACT;
  run->kernel = sk_frames_uses_kernel(e, poses, n, &run->opts);
  int rc = run->kernel ? sk_frames__plan(e, poses, n, run->opts.precision == SK_FRAMES_FAST, &run->sc)
                       : reserve_core(&run->sc, e->skel->count);
  if (rc)
    sk_frames_run_close(run);
  return rc;
}

/* Pose i's answer appended to `out`, evaluating the next 16 kernel poses
 * when i is past the ones evaluated. */
static int run_pose(sk_frames_run *run, size_t i, sk_strbuf *out) {
  const sk_model *e = run->model;
  const size_t mats = e->skel->count + 1;
  if (run->kernel && i >= run->evaluated) {
    size_t k = run->n - i < 16 ? run->n - i : 16;
    if (sk_frames__reserve_aligned((void **)&run->sc.final, &run->sc.final_cap, 16 * mats * 16, sizeof(float)))
      return SK_ENOMEM;
    const bool fast = run->opts.precision == SK_FRAMES_FAST;
    int rc = sk_frames__fill_run(e, run->poses + i, k, fast, &run->sc, run->sc.final, 1);
    /* The kernel refuses only malformed jobs or sizes that overflow, so a
     * 16-pose slice of a batch it takes is taken. Should the first slice be
     * refused anyway, the core answers all of it, as sk_frames_eval would. */
    if (rc == SK_EINVAL && i == 0 && reserve_core(&run->sc, e->skel->count) == 0)
      run->kernel = false;
    else if (rc)
      return rc;
    else
      run->evaluated = i + k;
  }
  if (run->kernel)
    return encode(e, &run->poses[i], i, run->sc.final + (i % 16) * mats * 16, NULL, run->opts.fmt, &run->sc, out);
  return core_answer(e, &run->poses[i], i, &run->sc, run->opts.fmt, out);
}

int sk_frames_run_next(sk_frames_run *run, sk_strbuf *out, size_t budget) {
  const size_t start = out->len;
  while (run->next < run->n && out->len - start < budget) {
    int rc = run_pose(run, run->next++, out);
    if (rc == SK_ENOTFINITE)
      return rc;
    if (rc != 0 || out->failed)
      return SK_ENOMEM;
  }
  return 0;
}

/* Pose i's binary answer from its final matrices into raw `d`. */
static void write_binary(char *d, const float *final, size_t mats, int fmt) {
  if (fmt == SK_FMT_F32) {
    memcpy(d, final, mats * 16 * sizeof(float));
    return;
  }
  float m[12];
  for (size_t k = 0; k < mats; k++, d += sizeof m) {
    sk_frames_mat3x4(final + 16 * k, m);
    memcpy(d, m, sizeof m);
  }
}

int sk_frames_run_next_raw(sk_frames_run *run, char *dest, size_t cap, size_t *written) {
  const sk_model *e = run->model;
  const size_t mats = e->skel->count + 1;
  const int fmt = run->opts.fmt;
  const bool fast = run->opts.precision == SK_FRAMES_FAST;
  const size_t pb = mats * (fmt == SK_FMT_F32 ? 16 : 12) * sizeof(float);
  *written = 0;
  if (!run->kernel || fmt == SK_FMT_JSON || cap < pb)
    return SK_EINVAL;
  size_t w = 0;
  for (;;) {
    /* poses evaluated into sc.final and not yet written (by run_pose, or
     * below when fewer than 16 fit) */
    for (; run->next < run->evaluated && w + pb <= cap; run->next++, w += pb) {
      const float *f = run->sc.final + (run->next % 16) * mats * 16;
      int rc = check_finite(e, &run->poses[run->next], run->next, f, NULL, fmt, &run->sc);
      if (rc)
        return rc;
      write_binary(dest + w, f, mats, fmt);
    }
    if (run->next < run->evaluated || run->next == run->n || w + pb > cap)
      break;
    /* run->evaluated, hence i, is a multiple of 16 (run_pose reads pose i
     * at sc.final + i % 16): so is every slice but the batch's last */
    const size_t i = run->next;
    size_t k = (cap - w) / pb;
    k = k < SK_FRAMES_RAW_POSES ? k : SK_FRAMES_RAW_POSES;
    k = k < run->n - i ? ((i + k) & ~(size_t)15) - i : run->n - i;
    float *out = (float *)(void *)(dest + w);
    const bool direct = k > 0 && fmt == SK_FMT_F32 && (uintptr_t)out % _Alignof(float) == 0;
    if (k == 0) /* under 16 poses fit: 16 into sc.final, written above as they fit */
      k = run->n - i < 16 ? run->n - i : 16;
    if (!direct) {
      const size_t need = (k > 16 ? k : 16) * mats * 16;
      if (sk_frames__reserve_aligned((void **)&run->sc.final, &run->sc.final_cap, need, sizeof(float)))
        return SK_ENOMEM;
      out = run->sc.final;
    }
    int rc = sk_frames__fill_run(e, run->poses + i, k, fast, &run->sc, out, 1);
    if (rc)
      return rc == SK_EINVAL ? SK_ENOMEM : rc; /* the run's plan was taken whole: not refused now */
    run->evaluated = i + k;
    if (!direct && k <= 16)
      continue; /* sc.final holds them as run_pose would */
    /* one pass over the slice; the pose and bone only on an overflow */
    const bool bad = sk_frames_nonfinite(out, k * mats);
    for (size_t p = 0; bad && p < k; p++)
      if ((rc = check_finite(e, &run->poses[i + p], i + p, out + p * mats * 16, NULL, fmt, &run->sc)) != 0)
        return rc;
    for (size_t p = 0; !direct && p < k; p++)
      write_binary(dest + w + p * pb, out + p * mats * 16, mats, fmt);
    run->next = i + k;
    w += k * pb;
  }
  *written = w;
  return 0;
}

/* What a scratch holds per bone whatever the batch: one range-form frame
 * materialised, and the planning's arrays (reserve_bones). */
static size_t bone_bytes(size_t bones) {
  return bones * (sizeof(sk_override) + 2 + sizeof(size_t) + sizeof(uint32_t)) + sk_clips_plan_bytes(bones);
}

size_t sk_frames_run_bytes(const sk_model *e, bool kernel) {
  const size_t mats = e->skel->count + 1;
  /* kernel: 16 poses of output, float input and TRS64 input (doubles);
   * core: its five matrix arrays; either: bone_bytes */
  const size_t ovr = bone_bytes(e->skel->count);
  return ovr + (kernel ? 4 * 16 * mats * 16 * sizeof(float) : 5 * mats * 16 * sizeof(float));
}

size_t sk_frames_run_raw_bytes(const sk_model *e, int fmt, size_t cap) {
  const size_t mats = e->skel->count + 1;
  const size_t pb = mats * (fmt == SK_FMT_F32 ? 16 : 12) * sizeof(float);
  size_t k = cap / pb < SK_FRAMES_RAW_POSES ? cap / pb : SK_FRAMES_RAW_POSES;
  k = (k + 15) & ~(size_t)15; /* the blocked layout's rows hold 16 poses */
  k = k < 16 ? 16 : k;
  /* per pose and slot: the float input, the TRS64 input and the output;
   * and bone_bytes (as sk_frames_run_bytes) */
  const size_t ovr = bone_bytes(e->skel->count);
  return ovr + k * mats * 16 * (sizeof(float) + sizeof(double) + sizeof(float));
}

void sk_frames_run_close(sk_frames_run *run) {
  sk_frames_scratch_close(&run->sc);
  run->next = run->n;
}

/* ---- sinks --------------------------------------------------------------------------- */

static int strbuf_write(void *ctx, const void *data, size_t len) {
  return sk_strbuf_append(ctx, data, len) ? -1 : 0;
}

static int file_write(void *ctx, const void *data, size_t len) {
  return len == 0 || fwrite(data, 1, len, ctx) == len ? 0 : -1;
}

sk_frames_sink sk_frames_sink_strbuf(sk_strbuf *b) { return (sk_frames_sink){strbuf_write, b}; }
sk_frames_sink sk_frames_sink_file(FILE *f) { return (sk_frames_sink){file_write, f}; }

int sk_frames_write(const sk_model *e, const sk_pose *poses, size_t n, const sk_frames_opts *o,
                    sk_frames_sink sink) {
  sk_frames_run run;
  int rc = sk_frames_run_init(&run, e, poses, n, o);
  if (rc)
    return rc;
  sk_strbuf pending = {0};
  bool json = o->fmt == SK_FMT_JSON;
  if (json && sk_strbuf_append(&pending, "{\"results\":[", 12))
    rc = SK_ENOMEM;
  while (!rc) {
    rc = sk_frames_run_next(&run, &pending, SK_FRAMES_SLICE);
    bool done = sk_frames_run_done(&run);
    if (!rc && done && json && sk_strbuf_append(&pending, "]}", 2))
      rc = SK_ENOMEM;
    if (!rc && pending.len > 0 && sink.write(sink.ctx, pending.data, pending.len) != 0)
      rc = SK_EIO;
    pending.len = 0;
    if (done)
      break;
  }
  sk_strbuf_free(&pending);
  sk_frames_run_close(&run);
  return rc;
}
