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

/* The first two steps of a transpose in 128-bit lanes of 4 * groups rows z
 * (groups 2 or 4, a constant at each call): unpack ps pairs rows, unpack pd
 * pairs the pairs, so u[4g+e] lane k holds entry e of rows 4g..4g+3 in lane
 * k's four floats; t is the caller's scratch of 4 * groups. The callers'
 * last step joins lanes into poses. */
static inline __attribute__((always_inline, target("avx512f"))) void sk_kernel__unpack512(const __m512 *z, __m512 *t,
                                                                                        __m512 *u, int groups) {
#pragma GCC unroll 16
  for (int i = 0; i < 2 * groups; i++) {
    t[2 * i] = _mm512_unpacklo_ps(z[2 * i], z[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(z[2 * i], z[2 * i + 1]);
  }
#pragma GCC unroll 16
  for (int g = 0; g < groups; g++) {
    const __m512d a = _mm512_castps_pd(t[4 * g]), b = _mm512_castps_pd(t[4 * g + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * g + 2]), d = _mm512_castps_pd(t[4 * g + 3]);
    u[4 * g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
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
