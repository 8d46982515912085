/* sk_kernel_impl: what the batch kernel's translation units share (the
 * rig's layout, layout helpers, the float32 fast paths' entry points). Not
 * a public header: include it only from src/sk_kernel*.c. */
#ifndef SK_KERNEL_IMPL_H
#define SK_KERNEL_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sk_kernel.h"

#if defined(__x86_64__) || defined(__i386__)
#define SK_KERNEL_X86 1
#include <immintrin.h>
#endif

/* Scratch world slots one pass needs. The rig visits children lightest
 * subtree first, so a bone's world stays live only while a lighter sibling
 * subtree (at most half its parent's size) is walked: at most
 * log2(B) + 2 slots, 22 for the 1,000,000-bone limit. */
#define SK_RIG_MAX_LIVE 24

/* Input prefetch distance in poses (a multiple of 16) and locality hint.
 * One group ahead is enough: a group of 16 poses x 65 bones takes
 * microseconds, DRAM ~100 ns; distances of 16 to 128 and hints 0, 2 and 3
 * measured the same (blocked layout, 65 x 65536). Build-time knobs for
 * experiments. */
#ifndef SK_KERNEL_PREFETCH_HINT
#define SK_KERNEL_PREFETCH_HINT 2
#endif
#ifndef SK_KERNEL_PREFETCH
#define SK_KERNEL_PREFETCH 16
#endif

/* One bone in the rig's processing order. */
typedef struct sk_rig_step {
  uint32_t bone;          /* position in sk_skeleton.bones[]: index into job mode/offset/locals */
  int32_t parent_slot;    /* scratch slot holding the parent's world, -1 for a root */
  int32_t slot;           /* scratch slot for this bone's world, -1 when no child reads it */
  int32_t out;            /* output slot (Babylon's _index), -1 for none */
  bool inv_bind_affine;   /* column 3 of the inverse bind is (0, 0, 0, 1) */
  bool inv_bind_one;      /* its entry 15 is bitwise 1: row 3 of inverse bind · world ends "+ world[12+j]" */
  float final_col3[4];    /* column 3 of inverse bind · world for any world whose column 3 is bitwise
                             (+0, +0, +0, 1): ((ib[4i]·0 + ib[4i+1]·0) + ib[4i+2]·0) + ib[4i+3]·1, exact.
                             Inverse binds computed by inversion carry -0 there, which the affine test
                             rejects; with this the kernel's affine step needs only inv_bind_one. */
} sk_rig_step;

struct sk_rig {
  size_t bones;               /* B */
  size_t steps;               /* bones that write something or feed a bone that does */
  size_t live;                /* scratch slots used, <= SK_RIG_MAX_LIVE */
  size_t unused;              /* output slots in [0, B) no bone writes: zero in every pose */
  const sk_rig_step *step;    /* [steps], parent before child */
  const float *inv_bind;      /* [16 * steps], 64-byte aligned, absolute inverse bind of step s */
  const double *inv_bind64;   /* the same widened to double: the batch kernel broadcasts each entry
                                 straight from memory into its products (one operand, no conversion) */
  const uint32_t *unused_slot; /* [unused] */
  size_t stream_bytes;        /* outputs above this are streamed (AUTO): the L2 size, read here so run does no I/O */
};

static const float sk_kernel_zero16[16] __attribute__((aligned(64))) = {0};
static const float sk_kernel_identity16[16] __attribute__((aligned(64))) = {1, 0, 0, 0, 0, 1, 0, 0,
                                                                            0, 0, 1, 0, 0, 0, 0, 1};

/* Column 3 is bitwise (+0, +0, +0, 1): the kernel's cheaper product then
 * gives the exact product's bits (sk_kernel_lanes.h says why -0 is not enough). */
static inline bool is_affine(const float m[16]) {
  uint32_t u[16];
  memcpy(u, m, sizeof u);
  return u[3] == 0 && u[7] == 0 && u[11] == 0 && u[15] == 0x3F800000u;
}
#define SK_KERNEL_ONE_BITS 0x3FF0000000000000ull /* 1.0 as a double */

/* Where pose p's entry of a bone's row 0 is, relative to the bone's offset. */
static inline __attribute__((always_inline)) size_t pose_at(const sk_kernel_job *job, size_t p) {
  return job->block_stride != 0 ? p / 16 * job->block_stride + p % 16 : p;
}

/* The float32 paths (sk_kernel_f32.c): precision SK_KERNEL_PRECISION_FAST.
 * Same contract as the exact paths' run (poses [begin, end), streaming
 * stores when `stream`), float arithmetic with FMA. */
void sk_kernel_f32_run_scalar(const sk_kernel_job *job, size_t begin, size_t end, bool stream);
#ifdef SK_KERNEL_X86
void sk_kernel_f32_run_sse2(const sk_kernel_job *job, size_t begin, size_t end, bool stream);
void sk_kernel_f32_run_avx2(const sk_kernel_job *job, size_t begin, size_t end, bool stream);
void sk_kernel_f32_run_avx512(const sk_kernel_job *job, size_t begin, size_t end, bool stream);
#endif

#endif
