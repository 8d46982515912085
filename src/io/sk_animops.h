/* sk_animops: the parts of `skinner eval` poses and ops that tools use
 * with clips (docs/animation.md): a layer's "additive"/"reference"/"mask"
 * and the "copyAnimationRange" op. Kept out of sk_eval.c, which parses the
 * rest of a pose. */
#ifndef SK_ANIMOPS_H
#define SK_ANIMOPS_H

#include <jansson.h>

#include "sk_anim.h"
#include "sk_error.h"
#include "sk_skeleton.h"

/* Reads "additive", "reference" and "mask" of layer object `o` (pointer
 * `ptr`) into `x` (zeroed first). `w` (s->count floats, owned by the
 * caller) receives the mask's bone weights; x->bone_weights points at it
 * when there is a mask. Errors: SK_ETYPE, SK_ERANGE, SK_ENOTFINITE,
 * SK_ENOTFOUND (unknown bone), SK_EUNKNOWN (unknown mask key), SK_ENOMEM. */
int sk_animops_layer_ext(const sk_skeleton *s, const json_t *o, const char *ptr, sk_anim_layer_ext *x, float *w,
                         sk_error *err);

/* {"op": "copyAnimationRange", "from": <Babylon skeleton>, "name": range,
 * "rescale"?: bool} at `ptr`: Babylon's Skeleton.copyAnimationRange on the
 * case's skeleton `s`, whose Babylon JSON is *cur (NULL: not that format,
 * SK_EUNSUPPORTED). On success *cur (a new reference) and *anim (new clips
 * for `s`) are replaced and the old ones released; on failure both are
 * unchanged. Errors: those of sk_banim_copy_range and sk_banim_parse. */
int sk_animops_copy_range(const sk_skeleton *s, json_t **cur, sk_anim **anim, const json_t *op, const char *ptr,
                          sk_error *err);

#endif
