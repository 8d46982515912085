#include "sk_clips.h"

#include <stdlib.h>
#include <string.h>

#include "sk_pose.h"
#include "sk_mat.h"

/* Frames sampled and then composed together (a multiple of the kernel's
 * 16-pose blocks). */
#define SK_CLIPS_SLICE 32


void sk_clips_sample_job(sk_sample_ctx *c, const double *times, size_t begin, size_t end, const sk_kernel_job *job,
                         float *input, double *input64, bool rest_kept) {
  sk_sample_out o = {.f64 = input64,
                     .f32 = input64 != NULL ? NULL : input,
                     .offset = job->offset,
                     .pose_stride = job->pose_stride,
                     .block_stride = job->block_stride,
                     .rest_kept = rest_kept};
  sk_sample_run(c, times, begin, end, &o);
}

void sk_clips_runner_close(sk_clips_runner *r) {
  free(r->mode);
  free(r->offset);
  free(r->input64);
  sk_clips_plan_close(&r->plan);
  sk_sample_rest_memo_close(&r->rest);
  free(r->trs);
  free(r->locals);
  free(r->scratch);
  memset(r, 0, sizeof *r);
}

int sk_clips_runner_init(sk_clips_runner *r, const sk_skeleton *s, const sk_rig *rig, int engine, size_t chunk) {
  memset(r, 0, sizeof *r);
  if (s == NULL || chunk == 0 || (engine == SK_CLIPS_KERNEL && rig == NULL) ||
      (engine != SK_CLIPS_KERNEL && engine != SK_CLIPS_EXACT))
    return SK_EINVAL;
  r->skel = s;
  r->rig = rig;
  r->engine = engine;
  r->chunk = chunk;
  const size_t nb = s->count ? s->count : 1;
  if (engine == SK_CLIPS_KERNEL) {
    r->mode = malloc(nb);
    r->offset = malloc(nb * sizeof *r->offset);
    if (r->mode == NULL || r->offset == NULL || sk_clips_plan_init(&r->plan, nb) != 0)
      return SK_ENOMEM;
    memset(r->mode, SK_KERNEL_TRS64, nb);
    r->slice = chunk < SK_CLIPS_SLICE ? chunk : SK_CLIPS_SLICE;
    r->input_floats =
        sk_kernel_blocked_layout(r->mode, s->count, r->slice, r->offset, &r->pose_stride, &r->block_stride);
    if (r->input_floats == 0)
      return SK_ENOMEM;
    sk_clips_plan_consts(&r->plan, &r->rest, s->count, r->mode, r->offset); /* no rows yet: every bone TRS64 */
    /* Whole cache lines, so the kernel's aligned loads never split one. */
    size_t bytes = (r->input_floats * sizeof(double) + 63) / 64 * 64;
    if ((r->input64 = aligned_alloc(64, bytes)) == NULL)
      return SK_ENOMEM;
    memset(r->input64, 0, bytes);
    return 0;
  }
  if (chunk > SIZE_MAX / (nb * SK_ANIM_TRS * sizeof(double)))
    return SK_ENOMEM;
  r->trs = malloc(chunk * nb * SK_ANIM_TRS * sizeof *r->trs);
  r->locals = malloc(nb * 16 * sizeof *r->locals);
  r->scratch = malloc(nb * 16 * sizeof *r->scratch);
  return r->trs && r->locals && r->scratch ? 0 : SK_ENOMEM;
}

int sk_clips_plan_init(sk_clips_plan *p, size_t bones) {
  const size_t nb = bones ? bones : 1;
  p->mode = malloc(nb);
  p->offset = malloc(nb * sizeof *p->offset);
  p->consts = malloc(nb * 16 * sizeof *p->consts);
  p->restv = malloc(nb * SK_ANIM_TRS * sizeof *p->restv);
  p->held = malloc(nb * sizeof *p->held);
  return p->mode && p->offset && p->consts && p->restv && p->held ? 0 : SK_ENOMEM;
}

void sk_clips_plan_close(sk_clips_plan *p) {
  free(p->mode);
  free(p->offset);
  free(p->consts);
  free(p->restv);
  free(p->held);
  memset(p, 0, sizeof *p);
}

size_t sk_clips_plan_bytes(size_t bones) {
  return bones * (1 + sizeof(size_t) + 16 * sizeof(float) + SK_ANIM_TRS * sizeof(double) + sizeof(uint16_t));
}

size_t sk_clips_plan_consts(sk_clips_plan *p, const sk_sample_rest_memo *m, size_t bones, const uint8_t *mode,
                            const size_t *offset) {
  memcpy(p->mode, mode, bones);
  memcpy(p->offset, offset, bones * sizeof *offset);
  if (!sk_sample_rest_memo_holds(m))
    return 0;
  memset(p->held, 0, bones * sizeof *p->held);
  for (size_t i = 0; i < m->count; i++) {
    const sk_sample_rest *x = &m->rows[i];
    if (x->bone >= bones || x->comp >= SK_ANIM_TRS)
      continue; /* not this skeleton's: never CONST */
    p->held[x->bone] |= (uint16_t)(1u << x->comp);
    p->restv[x->bone * SK_ANIM_TRS + x->comp] = x->value;
  }
  size_t n = 0;
  for (size_t b = 0; b < bones; b++) {
    if (p->held[b] != (1u << SK_ANIM_TRS) - 1)
      continue;
    const double *v = p->restv + b * SK_ANIM_TRS;
    sk_mat_compose(v + 7, v + 3, v, p->consts + 16 * b);
    p->mode[b] = SK_KERNEL_CONST;
    p->offset[b] = 16 * b;
    n++;
  }
  return n;
}

void sk_clips_kernel_job(const sk_clips_runner *r, const float *initial_skin, float *final, sk_kernel_job *job) {
  memset(job, 0, sizeof *job);
  job->rig = r->rig;
  job->poses = r->slice;
  job->pose_stride = r->pose_stride;
  job->block_stride = r->block_stride;
  job->mode = r->plan.mode;
  job->offset = r->plan.offset;
  job->input = r->plan.consts;
  job->input_floats = 16 * r->skel->count;
  job->input64 = r->input64;
  job->input64_doubles = r->input_floats;
  job->initial_skin = initial_skin;
  job->final = final;
}

int sk_clips_finals(sk_clips_runner *r, sk_sample_ctx *c, const double *times, size_t n, const float *initial_skin,
                    float *final) {
  if (n > r->chunk)
    return SK_EINVAL;
  if (n == 0)
    return 0;
  const sk_skeleton *s = r->skel;
  const size_t nb = s->count;
  if (r->engine == SK_CLIPS_EXACT) {
    sk_sample_out o = {.f64 = r->trs};
    sk_sample_run(c, times, 0, n, &o);
    /* A pose request sets position, rotation and scaling of every bone
     * with Babylon's setters (sk_local_apply); each setter recomposes, and
     * the last compose reads only the three values given, so the local is
     * sk_mat_compose(scaling, rotation, position): the decompositions
     * before it never reach the result. Same bits, a fraction of the work. */
    for (size_t p = 0; p < n; p++) {
      const double *trs = r->trs + p * nb * SK_ANIM_TRS;
      for (size_t b = 0; b < nb; b++) {
        const double *t = trs + b * SK_ANIM_TRS;
        sk_mat_compose(t + 7, t + 3, t, r->locals + 16 * b);
      }
      sk_skeleton_evaluate(s, r->locals, initial_skin, r->scratch, final + p * (nb + 1) * 16, NULL, NULL);
    }
    return 0;
  }
  /* Only sk_sample_run writes the runner's rows: they hold the rest rows
   * of the last context sampled, for the frames it reached. */
  if (!sk_sample_rest_memo_same(&r->rest, c, s->count)) {
    r->rest_frames = 0;
    /* 4 of Fox's 24 bones in its clips are CONST */
    sk_clips_plan_consts(&r->plan, &r->rest, nb, r->mode, r->offset);
  }
  sk_kernel_job job;
  sk_clips_kernel_job(r, initial_skin, final, &job);
  job.poses = n < r->slice ? n : r->slice;
  if (sk_kernel_validate(&job, NULL) != 0)
    return SK_EINVAL;
  sk_kernel_job rows = job; /* where the sampler writes: every bone's TRS64 rows, CONST bones' too */
  rows.offset = r->offset;
  /* Sampled and composed a slice at a time through the same rows (32
   * frames of ten doubles a bone: 166 KB for 65 bones), still in L1/L2
   * when the kernel reads them and when the next slice writes them; a
   * whole 256-frame chunk of rows is larger than L2. */
  for (size_t f0 = 0; f0 < n; f0 += r->slice) {
    const size_t m = n - f0 < r->slice ? n - f0 : r->slice;
    sk_clips_sample_job(c, times + f0, 0, m, &rows, NULL, r->input64, m <= r->rest_frames);
    if (sk_sample_rest_memo_holds(&r->rest) && m > r->rest_frames)
      r->rest_frames = m;
    job.final = final + f0 * (nb + 1) * 16;
    sk_kernel_run(&job, 0, m);
  }
  return 0;
}

int sk_clips_range_finals(const sk_skeleton *s, const sk_anim *anim, sk_sampler **sampler,
                          const sk_anim_layer *layers, size_t nl, const double *times, size_t nf,
                          const float *initial_skin, sk_clips_put_fn put, void *arg) {
  if (*sampler == NULL && sk_sampler_create(anim, sampler) != 0)
    return SK_ENOMEM;
  sk_sample_ctx *c = NULL;
  sk_clips_runner r;
  memset(&r, 0, sizeof r);
  sk_rig *rig = NULL;
  int rc = sk_sample_ctx_create(*sampler, layers, nl, &c);
  /* The rig snapshots inverse binds: built here, after any "setBind" op
   * before this range. */
  if (!rc && SK_CLIPS_RANGE_ENGINE == SK_CLIPS_KERNEL)
    rc = sk_rig_create(s, &rig);
  if (!rc)
    rc = sk_clips_runner_init(&r, s, rig, SK_CLIPS_RANGE_ENGINE, SK_CLIPS_RANGE_CHUNK);
  const size_t per = 16 * (s->count + 1);
  float *fin = rc ? NULL : aligned_alloc(64, (SK_CLIPS_RANGE_CHUNK * per * sizeof(float) + 63) / 64 * 64);
  if (!rc && fin == NULL)
    rc = SK_ENOMEM;
  for (size_t f0 = 0; !rc && f0 < nf; f0 += SK_CLIPS_RANGE_CHUNK) {
    size_t n = nf - f0 < SK_CLIPS_RANGE_CHUNK ? nf - f0 : SK_CLIPS_RANGE_CHUNK;
    rc = sk_clips_finals(&r, c, times + f0, n, initial_skin, fin);
    if (!rc)
      rc = put(arg, fin, n);
  }
  free(fin);
  sk_clips_runner_close(&r);
  sk_rig_destroy(rig);
  sk_sample_ctx_destroy(c);
  return rc;
}
