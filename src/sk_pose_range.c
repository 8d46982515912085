/* sk_pose_range: the shared sampler context of a frame range's poses, and
 * the overrides of one of its frames built on demand (sk_pose_range.h). */
#include "sk_pose_range.h"

#include <stdlib.h>
#include <string.h>

#include "sk_pose.h"
#include "sk_pose_int.h"

int sk_pose_range_create(sk_sampler *sampler, sk_sample_ctx *ctx, double *times, size_t nf, size_t refs,
                         sk_pose_range **out) {
  const sk_anim *a = sk_sampler_anim(sampler);
  const size_t nb = a->bone_count;
  sk_pose_range *r = calloc(1, sizeof *r);
  double *trs = malloc((nb ? nb : 1) * SK_ANIM_TRS * sizeof *trs);
  if (r == NULL || trs == NULL) {
    free(r);
    free(trs);
    sk_sample_ctx_destroy(ctx);
    sk_sampler_destroy(sampler);
    free(times);
    *out = NULL;
    return SK_ENOMEM;
  }
  *r = (sk_pose_range){.refs = refs, .sampler = sampler, .ctx = ctx, .times = times, .nf = nf, .bones = nb,
                       .trs = trs};
  /* A shared sampler is counted with its anim's cache entry. */
  r->bytes = sizeof *r + (sk_sampler_is_shared(sampler) ? 0 : sk_sampler_memory(sampler)) +
             sk_sample_ctx_memory(ctx) + nf * sizeof *times +
             (nb ? nb : 1) * SK_ANIM_TRS * sizeof *trs;
  *out = r;
  return 0;
}

void sk_pose_range_unref(sk_pose_range *r) {
  if (r == NULL || --r->refs > 0)
    return;
  sk_sample_ctx_destroy(r->ctx);
  sk_sampler_destroy(r->sampler);
  free(r->times);
  free(r->trs);
  free(r->top);
  free(r);
}

size_t sk_pose_range_materialize(sk_pose_range *r, size_t frame, sk_override *dst) {
  const sk_pose top = {.overrides = r->top, .count = r->ntop};
  const sk_sample_out o = {.f64 = r->trs};
  sk_sample_run(r->ctx, r->times + frame, 0, 1, &o);
  sk_pose__merge_overrides(sk_sampler_anim(r->sampler), r->trs, &top, dst);
  return r->bones;
}

void sk_pose_materialize(const sk_pose *pose, sk_override *scratch, sk_pose *view) {
  *view = *pose;
  if (pose->range == NULL)
    return;
  view->count = sk_pose_range_materialize(pose->range, pose->frame, scratch);
  view->overrides = scratch;
  view->overrides_shared = true;
  view->range = NULL;
}

/* Each field's doubles where the frame's sampled ones were, as
 * sk_pose__merge_overrides puts them in the frame's override. */
void sk_pose_range_top_rows(const sk_pose_range *r, double *rows64, const size_t *offset, size_t stride, size_t block,
                            size_t a, size_t q) {
  for (size_t t = 0; t < r->ntop; t++) {
    const sk_override *o = &r->top[t];
    for (size_t i = a; i < q; i++) {
      double *d = rows64 + offset[o->bone] + i / 16 * block + i % 16, v[SK_ANIM_TRS];
      for (size_t k = 0; k < SK_ANIM_TRS; k++)
        v[k] = d[k * stride];
      sk_override_fields(o, v, v + 3, v + 7);
      for (size_t k = 0; k < SK_ANIM_TRS; k++)
        d[k * stride] = v[k];
    }
  }
}

size_t sk_pose_held_bytes(const sk_pose *pose) {
  if (pose->range != NULL) /* each frame's share of the range, rounded up: the shares cover it */
    return (pose->range->bytes + pose->range->nf - 1) / pose->range->nf;
  /* The parsers grow override arrays by doubling from 16: count what they
   * may have allocated, not only what they filled. */
  size_t cap = 16;
  while (cap < pose->count)
    cap *= 2;
  return cap * sizeof *pose->overrides;
}
