/* sk_bench_mix: the exact batch kernel's instruction-mix bound, for
 * `skinner bench`.
 *
 * The AVX-512 exact kernel's common step (one bone, one group of 8 poses:
 * compose the local from TRS, world = local · parent, final = inverse bind
 * · world, rounded and transposed into 8 poses' matrices) executes a fixed
 * list of instructions. sk_bench_mix_run executes that list, in the
 * kernel's order, with every dependency between its instructions removed
 * (each writes a register nothing else reads; loads and stores stay in L1).
 * Its time per iteration is what this CPU needs for those instructions
 * alone, whatever the schedule: an upper bound on the kernel's speed. A
 * target the bound cannot reach is unreachable by the kernel on this CPU
 * without changing its instructions (and Babylon's bits fix most of them:
 * docs/kernel.md). */
#ifndef SK_BENCH_MIX_H
#define SK_BENCH_MIX_H

#include <stdbool.h>
#include <stddef.h>

/* Bone matrices one iteration stands for (a group of poses). */
#define SK_BENCH_MIX_LANES 8

/* Whether this build and CPU can run the bound (x86-64 with AVX-512F). */
bool sk_bench_mix_supported(void);

/* Runs `iterations` iterations (none when 0 or when unsupported). */
void sk_bench_mix_run(size_t iterations);

#endif
