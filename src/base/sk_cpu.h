/* sk_cpu: which instruction sets a code path may use, asked in one place.
 *
 * Every module with SIMD paths (the kernels, the sampler, the float
 * printer, V8's sines, the matrix product) names its paths by ISA and each
 * path by the CPU features it needs; this module turns a path's name into
 * its ISA once, at the API's edge, and answers whether this CPU has a set
 * of features: what libgcc read at start-up (__builtin_cpu_supports), so
 * no state here. */
#ifndef SK_CPU_H
#define SK_CPU_H

#include <stdbool.h>

typedef enum sk_isa { SK_ISA_SCALAR = 0, SK_ISA_SSE2, SK_ISA_AVX2, SK_ISA_AVX512, SK_ISA_COUNT } sk_isa;

/* CPU features, as bits. */
enum {
  SK_CPU_SSE2 = 1u << 0,
  SK_CPU_AVX2 = 1u << 1,
  SK_CPU_FMA = 1u << 2,
  SK_CPU_AVX512F = 1u << 3,
  SK_CPU_AVX512BW = 1u << 4,
  SK_CPU_AVX512DQ = 1u << 5,
  SK_CPU_AVX512CD = 1u << 6,
};

/* True when this CPU has every feature of `want` (0: true). Inline: with
 * a constant `want` it is the same few tests of libgcc's start-up reading
 * as the bare builtins, on hot paths too (sk_mat_mul asks per product). */
static inline bool sk_cpu_has(unsigned want) {
#if defined(__x86_64__) || defined(__i386__)
  return (!(want & SK_CPU_SSE2) || __builtin_cpu_supports("sse2")) &&
         (!(want & SK_CPU_AVX2) || __builtin_cpu_supports("avx2")) &&
         (!(want & SK_CPU_FMA) || __builtin_cpu_supports("fma")) &&
         (!(want & SK_CPU_AVX512F) || __builtin_cpu_supports("avx512f")) &&
         (!(want & SK_CPU_AVX512BW) || __builtin_cpu_supports("avx512bw")) &&
         (!(want & SK_CPU_AVX512DQ) || __builtin_cpu_supports("avx512dq")) &&
         (!(want & SK_CPU_AVX512CD) || __builtin_cpu_supports("avx512cd"));
#else
  return want == 0;
#endif
}

/* The ISA a path name names: "avx512", "avx2", "sse2", and "scalar" or
 * "generic" (the plain C path under either name). -1 for any other name or
 * NULL. */
int sk_isa_parse(const char *name);

#endif
