/* sk_skinv: the vertex kernel behind sk_skin_run, with runtime dispatch
 * (as the bone kernel: sk_cpu names the paths) and vertex ranges over
 * threads for large primitives. Every path gives the scalar job's bytes
 * (positions, normals, bounds); why each step may run in SIMD lanes is
 * argued in sk_skinv.c next to the code. The SIMD paths read the matrix
 * of every joint slot, weight > 0 or not (masked, never added): joints
 * must be below `slots` everywhere, as sk_geom_build leaves them (0 where
 * the weight is <= 0). */
#ifndef SK_SKINV_H
#define SK_SKINV_H

#include <stddef.h>

#include "sk_skin.h"
#include "sk_threads.h"

#define SK_SKINV_MAX_THREADS 16

/* The path sk_skin_run takes on this CPU: "avx512", "avx2" or "scalar". */
const char *sk_skinv_path(void);

/* 0 when `path` ("avx512", "avx2", "scalar"/"generic") runs on this CPU,
 * -1 otherwise (unknown name, or the CPU or build lacks it). */
int sk_skinv_path_check(const char *path);

/* Runs the (validated) job on `path` (NULL: the best this CPU runs; a path
 * sk_skinv_path_check refuses: the scalar one), its vertices split into
 * up to `threads` ranges (1 or 0: the caller's thread only): the caller's
 * thread takes the first, the threads it takes from `pool` (borrowed,
 * started once by main: sk_threads.h; NULL: none) the others, given back
 * before it returns. Same bytes for every path and thread count. */
void sk_skinv_run(sk_skin_job *job, const char *path, sk_threads *pool, unsigned threads);

/* Internal to the wing (sk_skin.c holds the scalar steps). */
bool sk_skin__morphs(const sk_geom_prim *p, const double *influence, int which);
void sk_skin__morph(const sk_geom_prim *p, const double *influence, int which, size_t v0, size_t v1, float *dest);
void sk_skin__scalar(const sk_geom_prim *p, const float *final, size_t v0, size_t v1, const float *sp, float *dp,
                     const float *sn, float *dn);

#endif
