/* sk_shot_int.h: what sk_usda (the USD writer of `skinner frames`) shares
 * with sk_shot's frame loop: the state of one shot being computed, the
 * skin matrices of a chunk of frames and one primitive of one frame
 * posed. Not for other callers. */
#ifndef SK_SHOT_INT_H
#define SK_SHOT_INT_H

#include "sk_shot.h"
#include "sk_skinv.h"

typedef struct sk_shot__state {
  size_t chunk, mats, row_floats;
  sk_clips_runner runner;
  sk_sample_ctx **ctx; /* one per character */
  float *finals;       /* chunk * mats * 16, one character at a time */
  float *outbuf[2];    /* chunk * characters * row_floats, 64-byte aligned */
  double *times;
  /* Per frame thread, the largest primitive's count x 3 (bounds without
   * positions out); scratch[0] is sk_shot__skin's. */
  float *scratch[SK_SKINV_MAX_THREADS];
  unsigned frame_threads; /* threads a chunk's frames are split over (1: vertex ranges, if any) */
  sk_threads *pool;       /* borrowed: sh->pool, or &own_pool, or NULL (the caller's thread only) */
  sk_threads own_pool;    /* started by sk_shot__open when sh->pool is NULL and threads > 1 */
} sk_shot__state;

/* Sizes and allocates the state of `sh` (validated by the caller). 0 or
 * SK_ENOMEM; *st is to be closed either way. */
int sk_shot__open(const sk_shot *sh, sk_shot__state *st);
void sk_shot__close(sk_shot__state *st, size_t characters);

/* Frames [f0, f0 + n) (n <= st->chunk) of character 0: their times into
 * st->times and their skin matrices into st->finals. */
int sk_shot__finals(const sk_shot *sh, sk_shot__state *st, size_t f0, size_t n);

/* Primitive `prim` at frame k of the chunk st->finals holds, as the daemon
 * answers it: positions into `pos` (count x 3; NULL: into the scratch),
 * normals into `nrm` (count x 3, or NULL; ignored without NORMAL), its
 * exact box into box[0..6) (min xyz, max xyz) when `box` is not NULL. */
void sk_shot__skin(const sk_shot *sh, sk_shot__state *st, size_t k, uint32_t prim, float *pos, float *nrm,
                   float *box);

#endif
