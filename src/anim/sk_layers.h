/* sk_layers: glTF clips played as layers with bone masks and additive
 * layers (sk_anim_layer_ext) over runs of frames, with
 * sk_anim_sample_layers_ext's bits.
 *
 * sk_anim_sample_layers_ext samples one frame: each layer by binary
 * search, each slerp's acos and sines one at a time, and an additive
 * layer's keys made relative to its reference frame again at every call
 * (an allocation and a pass over its keys per channel and frame: 14 us a
 * frame of Fox through skinnerd). A context does, once per range, what
 * every frame repeats (the weights' checks and normalisation, the
 * additive keys), then samples runs of frames: the weighted layers through
 * one-layer sk_sample contexts (key cursors, SIMD groups), every slerp of
 * a step of the blend (all bones of all frames of the run) with its acos
 * and sines as arrays (sk_anim__slerp_n). Each value is what
 * sk_anim_sample_layers_ext gives that frame: the same operations on the
 * same operands (tests/check_sk_layers.c compares them byte for byte). */
#ifndef SK_LAYERS_H
#define SK_LAYERS_H

#include <stddef.h>

#include "sk_anim.h"
#include "sk_sample.h"

typedef struct sk_layers_ctx sk_layers_ctx;

/* A context keeps every additive layer's keys made additive (doubles: up
 * to 96 bytes a key for a CUBICSPLINE rotation), except those the clips
 * keep already (reference 0, sk_anim_additive_share); past this many keys
 * together it declines (SK_ETOOBIG) and the caller blends frame by frame,
 * making them per channel and frame as sk_anim_sample_layers_ext does, so
 * many additive layers of a long clip cannot multiply its memory (the
 * budget of sk_banim_add.h's SK_BANIM_ADD_KEEP_KEYS). */
#define SK_LAYERS_KEEP_KEYS (1u << 18)

/* A context for `layers[0..count)` of glTF clips of `a` with `ext[i]` for
 * layer i (NULL: all plain), all borrowed until sk_layers_close (their
 * times are not read: each run gives them). `smp` (stolen: kept, or
 * destroyed; NULL: none) is a sampler of `a` whose built clips sample the
 * weighted layers. *out is new. Errors: SK_ERANGE (nothing made) where
 * sk_anim_sample_layers_ext refuses the weights or a clip index,
 * SK_EINVAL for Babylon-format clips (sk_banim_blend blends those),
 * SK_ETOOBIG past SK_LAYERS_KEEP_KEYS additive keys, SK_ENOMEM. */
int sk_layers_open(const sk_anim *a, const sk_anim_layer *layers, const sk_anim_layer_ext *ext, size_t count,
                   sk_sampler *smp, sk_layers_ctx **out);
/* Frames a run takes: 1 to SK_ANIM_RUN_MAX (a run keeps about 64 KiB of
 * a layer's frames, or one frame). */
size_t sk_layers_run_max(const sk_layers_ctx *c);
/* Frames [0, m) at once, m <= sk_layers_run_max(c): layer i plays frame f
 * at times[f * count + i]; frame f's TRS of every bone (bone_count *
 * SK_ANIM_TRS doubles) into trs + f * bone_count * SK_ANIM_TRS, each as
 * sk_anim_sample_layers_ext writes it for those times. */
void sk_layers_run(sk_layers_ctx *c, const double *times, size_t m, double *trs);
/* Bytes the context holds (its own sampler's included). */
size_t sk_layers_memory(const sk_layers_ctx *c);
/* NULL is a no-op. */
void sk_layers_close(sk_layers_ctx *c);

#endif
