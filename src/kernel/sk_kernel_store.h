/* Stores both batch kernels (sk_kernel.c exact, sk_kernel_f32.c float32)
 * share: the same 16 floats to n poses' matrices (an unused slot's zeros,
 * the trailing identity), and n rows of 16 floats from AVX-512 registers.
 * Not a public header: include it only from src/sk_kernel*.c, after
 * sk_kernel_impl.h. Each carries its ISA's target attribute so the
 * always_inline calls fold into the paths' code; `stream` selects
 * non-temporal stores, which need dst aligned to the vector size. */
#ifndef SK_KERNEL_STORE_H
#define SK_KERNEL_STORE_H

#include "sk_kernel_impl.h"

/* One pose a group: its 16 floats. */
static inline __attribute__((always_inline)) void sk_kernel__store_const_scalar(float *dst, size_t stride,
                                                                                 const float *m, size_t n,
                                                                                 bool stream) {
  (void)stride, (void)n, (void)stream;
  memcpy(dst, m, 16 * sizeof *dst);
}

#ifdef SK_KERNEL_X86
/* m: 16 floats, 16-byte aligned (sk_kernel_zero16, sk_kernel_identity16). */
static inline __attribute__((always_inline, target("sse2"))) void sk_kernel__store_const_sse2(float *dst, size_t stride,
                                                                                             const float *m, size_t n,
                                                                                             bool stream) {
  for (size_t i = 0; i < n; i++)
#pragma GCC unroll 16
    for (int g = 0; g < 4; g++) {
      if (stream)
        _mm_stream_ps(dst + i * stride + 4 * g, _mm_load_ps(m + 4 * g));
      else
        _mm_storeu_ps(dst + i * stride + 4 * g, _mm_load_ps(m + 4 * g));
    }
}

static inline __attribute__((always_inline, target("avx2"))) void sk_kernel__store_const_avx2(float *dst, size_t stride,
                                                                                            const float *m, size_t n,
                                                                                            bool stream) {
  const __m256 lo = _mm256_load_ps(m), hi = _mm256_load_ps(m + 8);
  for (size_t i = 0; i < n; i++) {
    if (stream) {
      _mm256_stream_ps(dst + i * stride, lo);
      _mm256_stream_ps(dst + i * stride + 8, hi);
    } else {
      _mm256_storeu_ps(dst + i * stride, lo);
      _mm256_storeu_ps(dst + i * stride + 8, hi);
    }
  }
}

static inline __attribute__((always_inline, target("avx512f"))) void sk_kernel__store_const_avx512(float *dst,
                                                                                                 size_t stride,
                                                                                                 const float *m,
                                                                                                 size_t n,
                                                                                                 bool stream) {
  const __m512 v = _mm512_load_ps(m);
  for (size_t i = 0; i < n; i++) {
    if (stream)
      _mm512_stream_ps(dst + i * stride, v);
    else
      _mm512_storeu_ps(dst + i * stride, v);
  }
}

/* o[i] (one pose's 16 floats) to dst + i*stride for i < n; `full` is the
 * group width (a constant at each call), whose loop is unrolled. */
static inline __attribute__((always_inline, target("avx512f"))) void sk_kernel__rows512(float *dst, size_t stride,
                                                                                      const __m512 *o, size_t n,
                                                                                      size_t full, bool stream) {
  if (n == full && stream) {
#pragma GCC unroll 16
    for (size_t i = 0; i < full; i++)
      _mm512_stream_ps(dst + i * stride, o[i]);
  } else if (n == full) {
#pragma GCC unroll 16
    for (size_t i = 0; i < full; i++)
      _mm512_storeu_ps(dst + i * stride, o[i]);
  } else {
    for (size_t i = 0; i < n; i++) {
      if (stream)
        _mm512_stream_ps(dst + i * stride, o[i]);
      else
        _mm512_storeu_ps(dst + i * stride, o[i]);
    }
  }
}
#endif

#endif
