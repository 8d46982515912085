/* sk_sample's private types: a sampler's clips, channels, timelines and
 * channel groups, shared by its build (sk_sample_build.c) and its runs
 * (sk_sample.c, sk_sample_lanes.h). Private to those. */
#ifndef SK_SAMPLE_INT_H
#define SK_SAMPLE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "sk_sample.h"

/* One channel as the sampler keeps it. Keys are widened to double once
 * (float -> double is exact, so the sums below see the same operands as
 * sk_anim's). Values stay interleaved per key ([key][component], with the
 * in-tangent/value/out-tangent triple for CUBICSPLINE): a cursor reads one
 * key pair per frame, so one or two cache lines per channel. */
typedef struct samp_chan {
  size_t line; /* its timeline in samp_clip.lines */
  int32_t bone;
  int comp;   /* first TRS component: 0, 3 or 7 */
  int width;  /* 3 or 4 */
  int interp; /* SK_ANIM_* */
  size_t count;
  double tscale;        /* CUBICSPLINE: what a stored tangent is scaled by before the key interval (1/fps glTF, 1) */
  const double *frames; /* borrowed from the sk_anim (the sampler holds a reference) */
  double *keys;         /* owned */
  double *slerp;        /* owned, LINEAR rotations only: per interval k, |dot|, sign flag, acos, 1/sin */
} samp_chan;

/* A timeline: key times shared by channels. Exporters give the channels of
 * a bone (often of a whole clip) the same key times; equal times give equal
 * clamps, keys and gradients, so each is found and divided once per frame
 * and timeline instead of once per channel. */
typedef struct samp_line {
  const double *frames; /* borrowed from the first channel that has them */
  size_t count;
} samp_line;

/* Channels computed together, one per SIMD lane (sk_sample_lanes.h). */
#define SAMP_LANES 8
typedef double samp_vd __attribute__((vector_size(SAMP_LANES * 8)));
typedef int64_t samp_vi __attribute__((vector_size(SAMP_LANES * 8)));

/* Group kinds. The rotation groups come first in samp_clip.groups (their
 * sines are computed together); the others in any order. STEP groups also
 * take every one-key channel (any interpolation: its value never moves). */
enum { GROUP_VEC3, GROUP_ROT, GROUP_STEP3, GROUP_STEP4, GROUP_CUB3, GROUP_CUB4 };

/* Up to SAMP_LANES channels of one kind on one timeline, with their keys
 * lane-major: per key k, vectors of every lane's values (samp_group_per of
 * them):
 *   GROUP_VEC3 (LINEAR translations, scales)  x, y, z
 *   GROUP_ROT (LINEAR rotations)  x, y, z, w, then the interval k..k+1's
 *     acos, 1/sin, sign flag and |dot| (sk_anim__slerp_prep; zeros after
 *     the last key)
 *   GROUP_STEP3/4  the key's value (3 or 4 components)
 *   GROUP_CUB3/4 (CUBICSPLINE)  the value, then the interval k..k+1's two
 *     tangents as chan_value scales them, (out * (1 / fps)) * frame delta
 *     and (next in * (1 / fps)) * frame delta (the same doubles, computed
 *     once; zeros after the last key)
 * Lanes past `lanes` repeat lane 0 and are never stored. */
typedef struct samp_group {
  size_t line;
  int kind;
  int width; /* components a lane writes: 3 or 4 */
  int lanes;
  size_t count;           /* keys */
  size_t at[SAMP_LANES];  /* where lane j writes in a B * SK_ANIM_TRS frame: bone * SK_ANIM_TRS + comp */
  size_t chan[SAMP_LANES]; /* the channels, by index in samp_clip.chans */
  size_t bone[SAMP_LANES];
  int comp[SAMP_LANES];
  double *data;           /* owned */
} samp_group;

/* Vectors per key of a group of kind `kind`. */
static inline size_t samp_group_per(int kind) {
  static const unsigned char per[] = {3, 8, 3, 4, 9, 12};
  return per[kind];
}

/* Components of a bone no channel of the clip drives (the rest TRS). */
typedef struct samp_rest {
  size_t bone;
  int comp, width;
} samp_rest;

typedef struct samp_clip samp_clip;

/* What a blend computes per block: the rotations (rot[0..nrot): bones) and
 * the translations and scalings (ts[0..nts): bone * SK_ANIM_TRS + 0 or 7)
 * that some layer drives. The components no layer drives hold the same
 * blended value in every frame: the context's constant rows. */
typedef struct samp_blend {
  size_t *rot, nrot;
  size_t *ts, nts;
} samp_blend;

/* One ISA's group functions (sk_sample_lanes.h). */
typedef struct samp_lanes {
  void (*vec3)(const samp_group *g, size_t key, double grad, double *trs);
  void (*rot_args)(const samp_group *g, size_t key, double grad, double *args);
  void (*rot_args_block)(const samp_group *g, const size_t *key, const double *grad, size_t lines, double *args,
                         size_t args_stride);
  void (*rot_finish)(const samp_group *g, size_t key, double grad, const double *sines, double *trs);
  void (*vec3_rows)(const samp_group *g, const size_t *key, const double *grad, size_t lines, size_t p0, size_t m,
                    const sk_sample_out *o);
  void (*rot_rows)(const samp_group *g, const size_t *key, const double *grad, size_t lines, const double *sines,
                   size_t sines_stride, size_t p0, size_t m, const sk_sample_out *o);
  /* STEP and CUBICSPLINE groups: one frame into a TRS array, a block of
   * frames into the kernel's rows (as vec3 and vec3_rows). */
  void (*other)(const samp_group *g, size_t key, double grad, double *trs);
  void (*other_rows)(const samp_group *g, const size_t *key, const double *grad, size_t lines, size_t p0, size_t m,
                     const sk_sample_out *o);
  void (*rest_fill)(const samp_rest *rest, size_t n, const double *values, size_t p0, size_t m,
                    const sk_sample_out *o);
  void (*blend_ts)(double *acc, const double *src, const samp_blend *bl, double w, bool first);
  void (*blend_dots)(const double *acc, const double *src, const samp_blend *bl, double *num4, int64_t *neg);
  void (*blend_args)(const double *num4, const double *acos, size_t n, double amount, double *s);
  void (*blend_apply)(double *acc, const double *src, const samp_blend *bl, double amount, const double *num4,
                      const int64_t *neg, const double *s);
  void (*block_flush)(const double *acc, const samp_blend *bl, size_t p0, size_t q0, size_t q1,
                      const sk_sample_out *o);
} samp_lanes;

/* A block of rows for blends: SAMP_BW frames of a bone's ten TRS
 * components, [k][lane]; a frame's blocks of every layer stay in L1. */
#define SAMP_BW SAMP_LANES
#define SAMP_BLOCK (SK_ANIM_TRS * SAMP_BW)
/* Layers whose blocks a context keeps apart, rest rows and all: the usual
 * blends (two to four clips) skip rewriting them; up to 64 layers of 1024
 * bones would otherwise hold 42 MB of blocks. */
#define SAMP_KEEP_LAYERS 4


struct samp_clip {
  bool built; /* false: a clip sk_sampler_create_clips left out, or a Babylon-format clip it does not take */
  double end_frame;
  /* A Babylon-format clip (sk_banim): the range whose frame a time plays
   * (sk_anim__clip_frame), borrowed from the anim; NULL for glTF. */
  const sk_anim_clip *babylon;
  size_t count;
  samp_chan *chans; /* owned; the channels that win on their (bone, path), file order */
  size_t line_count;
  samp_line *lines; /* owned */
  size_t group_count, rot_groups; /* the GROUP_ROT groups come first */
  samp_group *groups;  /* owned: every channel is in one */
  size_t rest_count;
  samp_rest *rest; /* owned */
};

struct sk_sampler {
  sk_anim *anim; /* a reference; borrowed when `shared` (the anim owns the sampler) */
  bool shared;
  size_t clip_count;
  samp_clip *clips;
};

#endif
