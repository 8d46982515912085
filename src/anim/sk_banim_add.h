/* sk_banim_add: additive layers of Babylon-format clips, as Babylon makes
 * and plays them.
 *
 * Babylon's Skeleton.MakeAnimationAdditive(skeleton, referenceFrame, range)
 * runs AnimationMakeAnimationAdditive on every bone animation: it inserts a
 * key at each end of the range where none is (Animation.createKeyForFrame:
 * the value interpolated there, no tangents, so a Hermite segment that
 * crosses a range end becomes two linear ones), takes the value at the
 * reference frame, and turns the keys of the range into differences to it
 * (vectors key - ref, quaternions conjugate(normalize(ref)) * key, matrices
 * decomposed: position - ref, scaling / ref, rotation as a quaternion, then
 * composed in float32). Keys outside the range keep their values, and so
 * does the last key when the range ends on it and a key was inserted at
 * the start (Babylon's end index is counted before that insertion). It is
 * done after RuntimeAnimation has inserted its frame-0 key, which shares the
 * value object of the key it copies (Skeleton.MakeAnimationAdditive looks
 * for the playing animatable of the range): that pair is changed once when
 * the range starts at frame 0, and not at all otherwise (Babylon's loop
 * skips every key sharing the first key's value).
 *
 * Every additive layer works on its own copy of the clip's keys (in Babylon,
 * its own parse of the skeleton's animations), so weighted layers and other
 * additive layers still see the original keys. */
#ifndef SK_BANIM_ADD_H
#define SK_BANIM_ADD_H

#include "sk_anim.h"
#include "sk_error.h"
#include "sk_skeleton.h"

/* The frame an additive layer's `reference` (seconds) names in clip `c`:
 * c->from_frame + reference * c->fps, as a layer's time plays. */
double sk_banim_add_ref_frame(const sk_anim_clip *c, double reference);

/* Whether clip `clip` of Babylon-format `a` can be made additive against
 * `reference` seconds, refusing what Babylon cannot do or skinnerd cannot
 * reproduce from the keys a clip keeps: a reference after the clip's end
 * beyond the keys kept after it (SK_ERANGE at ptr/reference), a bone animation that ends before the range
 * does (Babylon throws in createKeyForFrame), a bone with several animations
 * (only the first carries the ranges), several keys at frame 0 with
 * reference 0 (SK_EUNSUPPORTED at ptr/additive, naming the bone of `s`).
 * `ptr` is the layer's pointer. */
int sk_banim_add_check(const sk_anim *a, size_t clip, double reference, const sk_skeleton *s, const char *ptr,
                       sk_error *err);

/* *out = channel `ch` of clip `c` with its keys as MakeAnimationAdditive
 * leaves them against frame `ref_frame` (new arrays, owned by *out: free
 * with sk_banim_add_channel_close). `ch` must pass sk_banim_add_check.
 * 0 or SK_ENOMEM. */
int sk_banim_add_channel(const sk_anim_clip *c, const sk_anim_channel *ch, double ref_frame, sk_anim_channel *out);

/* Frees what sk_banim_add_channel allocated. NULL fields are fine. */
void sk_banim_add_channel_close(sk_anim_channel *ch);

/* One additive layer's channels, made once and sampled at every frame of a
 * pose (a frame range would otherwise redo O(keys) work per frame). A pose
 * keeps at most SK_BANIM_ADD_KEEP_KEYS keys so made (~100 bytes a key);
 * further layers make theirs per frame, one at a time. */
#define SK_BANIM_ADD_KEEP_KEYS (1u << 18)
typedef struct sk_banim_add_layer {
  size_t count;
  sk_anim_channel *channels; /* owned; the clip's channels of bones the mask keeps, made additive */
} sk_banim_add_layer;

/* *out = the channels of clip `clip` of `a` made additive against
 * `reference` seconds, leaving out bones of weight 0 in `bone_weights`
 * (NULL: none). The clip must pass sk_banim_add_check. 0 or SK_ENOMEM
 * (*out is then empty). */
int sk_banim_add_layer_make(const sk_anim *a, size_t clip, double reference, const float *bone_weights,
                            sk_banim_add_layer *out);
/* Frees what sk_banim_add_layer_make made; an empty (zeroed) layer is fine. */
void sk_banim_add_layer_close(sk_banim_add_layer *l);
/* What sk_banim_add_layer_make allocates at most for clip `clip` of `a`
 * without a mask (bytes, the key-sharing scratch included), known before
 * it makes anything. */
size_t sk_banim_add_layer_bound(const sk_anim *a, size_t clip);
/* Closes layers[0..n) and frees the array (malloc'd); NULL is a no-op. */
void sk_banim_add_layers_free(sk_banim_add_layer *layers, size_t n);

/* The additive layers a Babylon-format anim keeps (sk_anim_additive_share):
 * layers[clip] is the clip made additive against reference 0 with no
 * mask, kept[clip] false where the clip fails sk_banim_add_check there. */
typedef struct sk_banim_add_kept {
  size_t bytes, count;
  sk_banim_add_layer *layers;
  bool *kept;
} sk_banim_add_kept;

/* sk_anim_additive_share for Babylon-format `a` (`s` names the bones of
 * the checks). 0, SK_ETOOBIG past `max_bytes` (nothing kept), SK_ENOMEM. */
int sk_banim_add__share(sk_anim *a, const sk_skeleton *s, size_t max_bytes);
void sk_banim_add__kept_free(sk_banim_add_kept *k);
/* Clip `clip` of `a` made additive against reference 0 with no mask, as
 * kept (borrowed, lives with `a`), or NULL: not kept. */
const sk_banim_add_layer *sk_banim_add_kept_layer(const sk_anim *a, size_t clip);

#endif
