/* sk_banim_blend: Babylon-format clips played as weighted layers, as
 * Babylon composes them (scene.beginWeightedAnimation per layer,
 * Animatable.goToFrame, then the scene's late animation bindings), one
 * frame at a time into overrides. Its own module beside sk_anim (the
 * clips and their sampling) and sk_banim_add (additive keys). */
#ifndef SK_BANIM_BLEND_H
#define SK_BANIM_BLEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_anim.h"
#include "sk_sample.h"
#include "sk_skeleton.h"

/* Babylon-format clips played as weighted layers, as Babylon composes
 * them: scene.beginWeightedAnimation(skeleton, range, weight) per layer,
 * Animatable.goToFrame(frame, true), then the late animation bindings.
 * Per bone and driven property (position, scaling, rotationQuaternion,
 * _matrix), with the weights of the layers whose clip drives it (clamped
 * to [0, 1], as Animatable.weight clamps them): a
 * total under 1 mixes in the bone's current value in `s` with 1 - total;
 * otherwise the weights are normalised. Vectors add, rotations blend by
 * cumulative slerp, matrices are decomposed, blended (quaternions summed
 * with sign correction, then normalised) and composed. Writes bone_count
 * overrides into `out` (masks: the driven properties) and *driven, the
 * bones with any. `ext` (NULL: none) gives masks: a bone of weight 0 in
 * layer i's bone_weights is left out of that layer (beginAnimation's
 * targetMask: its animation is not started); other weights must be 1
 * (fractions have no Babylon meaning here; the caller refuses them).
 * Additive layers (ext[i].additive) are made as MakeAnimationAdditive
 * makes them (sk_banim_add; once by the caller in ext[i].babylon_add, or
 * kept with the clips, or here per call) and added after the weighted
 * ones, raw weights; their masks apply here too, so ext[i].babylon_add may
 * hold every bone's channels (the layers kept with the clips do). 0 or
 * SK_ENOMEM. Layer clips must be valid. */
int sk_banim_blend(const sk_anim *a, const sk_skeleton *s, const sk_anim_layer *layers, const sk_anim_layer_ext *ext,
                    size_t count, sk_override *out, size_t *driven);

/* sk_banim_blend with layer `blended` (not additive, no mask) crossfaded
 * in, as Babylon blends a skeleton's animations started with
 * enableBlending and blendingSpeed (RuntimeAnimation._setValue): while
 * `factor` <= 1 each of its values becomes Matrix.DecomposeLerp (a
 * "_matrix") or Vector3.Lerp / Quaternion.Slerp (position, scaling,
 * rotationQuaternion) from the bone's value in `snap` (the skeleton posed
 * as the blend found it) to the clip's, before the late animation
 * bindings, whose original values are `snap`'s too (the animatables
 * started on that pose). 0 or SK_ENOMEM. */
int sk_banim_blend_in(const sk_anim *a, const sk_skeleton *snap, const sk_anim_layer *layers,
                      const sk_anim_layer_ext *ext, size_t count, size_t blended, double factor, sk_override *out,
                      size_t *driven);

/* The same for the frames of a range, keeping what does not change from
 * frame to frame: sk_banim_blend_open plans the blend from the skeleton,
 * the layers and `ext` (which channels count, a cursor for each,
 * sk_anim_cursor; which layers drive each bone's paths with which
 * weights; each bone's current TRS and local matrix, copied).
 * sk_banim_blend_frame then blends `layers` (the same clips, weights and
 * masks as at open; their times are the frame's) into `out` as
 * sk_banim_blend would, the same bits. 0 or SK_ENOMEM. `a` and the
 * channels of ext[i].babylon_add stay borrowed until sk_banim_blend_close;
 * the skeleton, `layers` and `ext` are read at open only, except by a
 * context that blends frame by frame: an additive layer whose keys are
 * made per call (ext[i].babylon_add NULL) makes it do so, as sk_banim_blend
 * does, and it borrows them all until close. */
typedef struct sk_banim_blend_ctx sk_banim_blend_ctx;
int sk_banim_blend_open(const sk_anim *a, const sk_skeleton *s, const sk_anim_layer *layers,
                        const sk_anim_layer_ext *ext, size_t count, sk_banim_blend_ctx **out);
/* sk_banim_blend_open with `smp` (stolen: kept until close, or destroyed;
 * NULL: none), a sampler of `a` (sk_sample.h): the weighted layers whose
 * clips it built are sampled through it (the channels in SIMD groups, the
 * slerps' key-pair constants made once per sampler), the same bits. */
int sk_banim_blend_open_sampled(const sk_anim *a, const sk_skeleton *s, const sk_anim_layer *layers,
                                const sk_anim_layer_ext *ext, size_t count, sk_sampler *smp, sk_banim_blend_ctx **out);
int sk_banim_blend_frame(sk_banim_blend_ctx *c, const sk_anim_layer *layers, sk_override *out, size_t *driven);
/* Frames [0, m) of a range at once, m <= sk_banim_blend_run_max(c): layer
 * i plays frame f at times[f * count + i] (`layers` as at open otherwise);
 * out[f] receives frame f's bone_count overrides and driven[f] its driven
 * bones, each as sk_banim_blend gives them, the same bits. The run samples
 * each channel's frames together and blends the rotations of all its
 * frames one slerp step at a time (the acos and sines as arrays). */
int sk_banim_blend_run(sk_banim_blend_ctx *c, const sk_anim_layer *layers, const double *times, size_t m,
                       sk_override *const *out, size_t *driven);
/* Frames a run takes: 1 to SK_ANIM_RUN_MAX, fewer for many layers of many
 * bones (a run keeps about 64 KiB of values). */
size_t sk_banim_blend_run_max(const sk_banim_blend_ctx *c);
/* The kernel's rows for sk_banim_blend_run_rows (sk_kernel.h's blocked
 * layout: bone b's row k of lane i at offset[b] + i / 16 * block + i % 16
 * + k * stride): TRS64 doubles in rows64, MATRIX floats in rows. */
typedef struct sk_banim_blend_rows {
  double *rows64;
  float *rows;
  const size_t *offset;
  size_t stride, block;
  size_t lane; /* frame 0's lane */
} sk_banim_blend_rows;
/* sk_banim_blend_run's frames straight into the rows, lanes lane.. lane +
 * m - 1: each driven bone's fields into its TRS64 rows (0-2 position, 3-6
 * rotation, 7-9 scaling), a "_matrix" blend into its 16 MATRIX rows: what
 * sk_frames' fill_override writes from sk_banim_blend_run's overrides. The
 * rows of fields no layer drives are left as they are. Only for a context
 * sk_banim_blend_driven accepts. */
void sk_banim_blend_run_rows(sk_banim_blend_ctx *c, const double *times, size_t m, const sk_banim_blend_rows *rows);
/* Each bone's driven fields (SK_OVERRIDE_* bits, 0 for a bone no layer
 * drives) into driven[0..bone_count); false (nothing written) for a
 * context that blends frame by frame (sk_banim_blend_open). */
bool sk_banim_blend_driven(const sk_banim_blend_ctx *c, uint8_t *driven);
/* Bytes the context holds, its own sampler's included (an upper bound
 * for the run's path; the frame-by-frame one's scratch is not counted). */
size_t sk_banim_blend_memory(const sk_banim_blend_ctx *c);
/* NULL is a no-op. */
void sk_banim_blend_close(sk_banim_blend_ctx *c);

#endif
