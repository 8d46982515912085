/* sk_pose_range: a frame range kept as its sampler context instead of one
 * override per bone and frame.
 *
 * sk_pose_parse_range (sk_pose.h) gives the frames of a glTF range (with
 * any "bones" on top) as poses that point at one shared range (their
 * `range` and `frame`; no overrides of their own). sk_frames samples runs
 * of such lanes straight into the batch kernel's TRS64 rows
 * (sk_sample_run; a bone whose matrix is set on top gets MATRIX lanes
 * holding that matrix), and builds
 * a pose's overrides on demand (sk_pose_materialize) wherever it needs
 * them: the scalar core, Bone-API ops, the fast precision. Both give the
 * bytes of the overrides sk_pose_parse_anim writes: the same sampler, the
 * same doubles, copied the same way (tests/check_sk_pose_range.c).
 * A range of one Babylon-format clip (no layers; "bones" on top: fields,
 * or a matrix, which its bone's MATRIX lanes hold) is kept the same way,
 * with the fields its clip drives per bone:
 * sampled by a sk_sample context when the sampler builds the clip, else by
 * sk_anim's per-channel functions with cursors
 * (sk_pose_range_babylon_fill). The overrides it replaces were a third of
 * such a range's time.
 *
 * A range is reference-counted: each of its poses holds one reference, so
 * the poses may be closed in any order. Sampling moves the context's key
 * cursors, so a range is used by one thread at a time (its request's); the
 * cursors change the speed, never the bits (sk_sample.h). */
#ifndef SK_POSE_RANGE_H
#define SK_POSE_RANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_sample.h"
#include "sk_skeleton.h"

typedef struct sk_pose_range {
  size_t refs;
  sk_sampler *sampler; /* owned */
  sk_sample_ctx *ctx;  /* owned; its cursors move as frames are sampled */
  double *times;       /* owned; nf frame times in seconds */
  size_t nf;
  size_t bones;        /* B: TRS of bones[0..B) per frame */
  double *trs;         /* owned; B * SK_ANIM_TRS: one frame, for sk_pose_materialize */
  size_t bytes;        /* what the range holds, sampler and context included (an upper bound) */
  /* owned, or NULL: the request's "bones" on top of every frame, merged
   * as sk_pose_parse_anim merges them (set by sk_pose_parse_range): fields
   * over the sampled ones; a matrix replaces the bone's override */
  sk_override *top;
  size_t ntop;
  /* A range of one Babylon-format clip instead (sampler and ctx: sk_sample's
   * when it builds the clip, else NULL; sk_pose_range_create_babylon):
   * clip `clip` of `anim` (a reference held) at `times` (the layer's
   * offset applied), a cursor per channel (sk_anim_cursor), and per bone
   * the SK_OVERRIDE_* bits of the fields the clip or the "bones" on top
   * (top, ntop) drive (0: a bone left as it is). */
  sk_anim *anim;
  size_t clip;
  bool loop;
  sk_anim_cursor *cur;
  uint8_t *driven;
  /* Layers of Babylon-format clips instead (blend non-NULL; anim and
   * driven as above, clip and cur unused): their blend context, sampling
   * and blending runs of frames (sk_banim_blend_run), the layers (each
   * time its offset) and their additive keys (adds[0..nl), owned), and a
   * run's layer times (scratch). */
  struct sk_banim_blend_ctx *blend;
  sk_anim_layer *layers;
  size_t nl;
  struct sk_banim_add_layer *adds;
  double *ltimes;
  /* glTF layers with masks or additive layers instead (lctx non-NULL;
   * sampler, ctx and anim NULL): their sk_layers context, the layers
   * (layers, nl and ltimes as above) and their masks (owned), the anim
   * they play (a reference held) and a run's TRS (scratch). */
  struct sk_layers_ctx *lctx;
  float *masks;
  sk_anim *held;
  double *lrun;
} sk_pose_range;

/* A range of `nf` frames at `times` sampled by `ctx` of `sampler`. It
 * steals all three on success AND on failure, and starts with `refs`
 * references (one per pose). *out is new. Errors: SK_ENOMEM. */
int sk_pose_range_create(sk_sampler *sampler, sk_sample_ctx *ctx, double *times, size_t nf, size_t refs,
                         sk_pose_range **out);
/* A range of `nf` frames of Babylon-format clip `clip` of `a` played at
 * times[0..nf) (seconds, any offset applied; `loop` as a layer's), with
 * `refs` references. Takes a reference on `a`; steals `times` on success
 * AND on failure. *out is new. Errors: SK_ENOMEM. */
int sk_pose_range_create_babylon(const sk_anim *a, size_t clip, bool loop, double *times, size_t nf, size_t refs,
                                 sk_pose_range **out);
/* A range of `nf` frames of Babylon-format layers: `blend` (a context
 * sk_banim_blend_driven accepts, on no bone blending a "_matrix" with
 * fields) opened on `layers[0..nl)` (their times the offsets), `adds`
 * (nl entries or NULL: the additive keys the context reads) and the frame
 * times `times` (seconds, before the offsets), with `refs` references.
 * Takes a reference on `a`; steals blend, adds and times on success AND
 * on failure. *out is new. Errors: SK_ENOMEM. */
int sk_pose_range_create_babylon_layers(const sk_anim *a, struct sk_banim_blend_ctx *blend, const sk_anim_layer *layers,
                                        size_t nl, struct sk_banim_add_layer *adds, double *times, size_t nf,
                                        size_t refs, sk_pose_range **out);
/* A range of `nf` frames of glTF layers with masks or additive layers:
 * `lctx` (sk_layers) opened on `layers[0..nl)` (their times the offsets)
 * and `masks` (what their bone weights point into, or NULL), at the frame
 * times `times` (before the offsets), with `refs` references. Takes a
 * reference on `a`; steals lctx, layers, masks and times on success AND on
 * failure. *out is new. Errors: SK_ENOMEM. */
int sk_pose_range_create_layers(const sk_anim *a, struct sk_layers_ctx *lctx, sk_anim_layer *layers, float *masks,
                                size_t nl, double *times, size_t nf, size_t refs, sk_pose_range **out);
/* A glTF layers range's frames `frame`.. into lanes [a, q) of TRS64 rows
 * in the kernel's blocked layout (as below): every bone's ten rows, what
 * sk_sample_run writes for a plain range and fill_override copies from
 * the materialised overrides. The "bones" on top are not applied. */
void sk_pose_range_layers_rows(sk_pose_range *r, size_t frame, double *rows64, const size_t *offset, size_t stride,
                               size_t block, size_t a, size_t q);
/* Gives the Babylon-format range `r` the "bones" on top of its frames,
 * top[0..n) (stolen; a matrix, or fields on bones its clip holds no "_matrix"
 * for): merged into each frame as sk_pose_parse_anim merges them (their
 * fields over the sampled ones), and counted as driven fields. */
void sk_pose_range_babylon_top(sk_pose_range *r, sk_override *top, size_t n);
/* Gives the Babylon-format range `r` the sampler `s` (stolen: kept, or
 * destroyed) when `s` built its clip (sk_sample.h: each channel lerps or
 * slerps, steps or Hermite-interpolates throughout): its frames are then sampled by a context of it, the channels
 * in SIMD groups, the same bits. Without one (s NULL, the clip unbuilt,
 * memory short) they are sampled channel by channel. */
void sk_pose_range_babylon_sampler(sk_pose_range *r, sk_sampler *s);
/* Drops one reference; the last frees the range. NULL is a no-op. */
void sk_pose_range_unref(sk_pose_range *r);

/* Frame `frame`'s overrides into dst[0..B), the bytes sk_pose_parse_anim
 * gives that frame: a glTF range's one per bone (position, rotation and
 * scaling), a Babylon-format range's one per bone the clip drives (its
 * driven fields), in bone order. Returns how many. */
size_t sk_pose_range_materialize(sk_pose_range *r, size_t frame, sk_override *dst);

/* The "bones" on top of glTF range `r` that set `bone`'s matrix, or NULL
 * (the tops are sorted by bone: a binary search). */
const sk_override *sk_pose_range_matrix_top(const sk_pose_range *r, int32_t bone);

/* The range's "bones" on top over the rows in the kernel's blocked
 * layout (sk_kernel.h: bone b's component k of lane i at offset[b] +
 * i / 16 * block + i % 16 + k * stride), lanes [a, q), after the clip was
 * sampled there: fields over the TRS64 rows (rows64), a matrix into its
 * bone's MATRIX rows (rows). The rows the kernel reads then hold what each
 * frame's materialised overrides hold. */
void sk_pose_range_top_rows(const sk_pose_range *r, double *rows64, float *rows, const size_t *offset, size_t stride,
                            size_t block, size_t a, size_t q);

/* A Babylon-format range's frames `frame`.. into lanes [a, q) of the
 * kernel's blocked layout (as above): for each channel of the clip, in
 * the clip's order (a later channel of a bone and field wins, as in
 * sk_anim_sample_overrides), the sampled doubles into the TRS64 rows
 * `rows64` of the field it drives, or a "_matrix" channel's held key into
 * the 16 float rows `rows` of its bone. What fill_override writes from
 * the materialised overrides when every driven bone's lanes are TRS64
 * (matrix-driven: MATRIX) and the other rows hold the stored locals: the
 * same doubles and floats. */
void sk_pose_range_babylon_rows(sk_pose_range *r, size_t frame, double *rows64, float *rows, const size_t *offset,
                                size_t stride, size_t block, size_t a, size_t q);
/* The same rows, by the range's sampler context when it has one (lanes
 * from the first multiple of 16 on: sk_sample_run's blocks; the lanes
 * before it channel by channel), else by sk_pose_range_babylon_rows. */
void sk_pose_range_babylon_fill(sk_pose_range *r, size_t frame, double *rows64, float *rows, const size_t *offset,
                                size_t stride, size_t block, size_t a, size_t q);

#endif
