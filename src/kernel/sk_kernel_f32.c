/* sk_kernel_f32: the float32 batch kernel, kept as an opt-in mode
 * (sk_kernel_job.precision = SK_KERNEL_PRECISION_FAST): float arithmetic
 * with fused multiply-adds, 16 poses per AVX-512 register. It is about three
 * times the exact kernel's speed and NOT Babylon-exact: on Fox.glb's clips
 * it is up to 8.3e-6 of the matrix's scale off the exact answer
 * (tests/check_sk_conformance_kernel.c prints it; docs/kernel.md).
 * The exact kernel (sk_kernel.c) is the default. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sk_kernel_impl.h"
#include "sk_kernel_store.h"

/* scalar: one lane, plain float arithmetic. */
#define SKK(name) name##_scalar_f32
#define SKK_ATTR
#define SKK_N 1
#define SKK_PREFETCH SK_KERNEL_PREFETCH
#define V float
#define VLOAD(p) (*(p))
#define VLOADN(p, n) (*(p))
#define VSET1(x) (x)
#define VZERO() 0.0f
#define VADD(a, b) ((a) + (b))
#define VSUB(a, b) ((a) - (b))
#define VMUL(a, b) ((a) * (b))
#define VFMA(a, b, c) ((a) * (b) + (c))
#define VALL_EQ(v, x) ((v) == (x))
static inline void store_mats_scalar_f32(float *dst, size_t stride, const float *m, size_t n, bool stream) {
  (void)stride, (void)n, (void)stream;
  memcpy(dst, m, 16 * sizeof *dst);
}
#define SKK_STORE_CONST sk_kernel__store_const_scalar
#include "sk_kernel_lanes_f32.h"

#ifdef SK_KERNEL_X86
/* sse2: 4 lanes, baseline x86-64; no FMA (mul then add). */
#define SKK(name) name##_sse2_f32
#define SKK_ATTR __attribute__((target("sse2")))
#define SKK_N 4
#define SKK_PREFETCH SK_KERNEL_PREFETCH
#define V __m128
#define VLOAD(p) _mm_loadu_ps(p)
#define VLOADN(p, n) load_n_sse2_f32((p), (n))
#define VSET1(x) _mm_set1_ps(x)
#define VZERO() _mm_setzero_ps()
#define VADD(a, b) _mm_add_ps((a), (b))
#define VSUB(a, b) _mm_sub_ps((a), (b))
#define VMUL(a, b) _mm_mul_ps((a), (b))
#define VFMA(a, b, c) _mm_add_ps(_mm_mul_ps((a), (b)), (c))
#define VALL_EQ(v, x) (_mm_movemask_ps(_mm_cmpeq_ps((v), _mm_set1_ps(x))) == 0xF)
static SKK_ATTR inline __attribute__((always_inline)) __m128 load_n_sse2_f32(const float *p, size_t n) {
  float t[4] = {0};
  memcpy(t, p, n * sizeof *t);
  return _mm_loadu_ps(t);
}
/* Four 4x4 transposes: rows 4g..4g+3 of lane i become floats 4g..4g+3 of pose i. */
static SKK_ATTR inline __attribute__((always_inline)) void store_mats_sse2_f32(float *dst, size_t stride, const __m128 *m, size_t n, bool stream) {
#pragma GCC unroll 16
  for (int g = 0; g < 4; g++) {
    __m128 r0 = m[4 * g], r1 = m[4 * g + 1], r2 = m[4 * g + 2], r3 = m[4 * g + 3];
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    const __m128 o[4] = {r0, r1, r2, r3};
    for (size_t i = 0; i < n; i++) {
      if (stream)
        _mm_stream_ps(dst + i * stride + 4 * g, o[i]);
      else
        _mm_storeu_ps(dst + i * stride + 4 * g, o[i]);
    }
  }
}
#define SKK_STORE_CONST sk_kernel__store_const_sse2
#include "sk_kernel_lanes_f32.h"

/* avx2: 8 lanes with FMA. */
#define SKK(name) name##_avx2_f32
#define SKK_ATTR __attribute__((target("avx2,fma")))
#define SKK_N 8
#define SKK_PREFETCH SK_KERNEL_PREFETCH
#define V __m256
#define VLOAD(p) _mm256_loadu_ps(p)
#define VLOADN(p, n) _mm256_maskload_ps((p), _mm256_loadu_si256((const __m256i *)(sk_kernel_mask8 + 8 - (n))))
#define VSET1(x) _mm256_set1_ps(x)
#define VZERO() _mm256_setzero_ps()
#define VADD(a, b) _mm256_add_ps((a), (b))
#define VSUB(a, b) _mm256_sub_ps((a), (b))
#define VMUL(a, b) _mm256_mul_ps((a), (b))
#define VFMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define VALL_EQ(v, x) (_mm256_movemask_ps(_mm256_cmp_ps((v), _mm256_set1_ps(x), _CMP_EQ_OQ)) == 0xFF)
/* sk_kernel_mask8 + 8 - n: n lanes of -1 (load) then zeros. */
static const int32_t sk_kernel_mask8[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
/* Two 8x8 transposes (rows 0-7, rows 8-15). Within 128-bit halves:
 *   unpack ps   t = (a0 b0 a1 b1) ...   unpack pd   u[4g+e] = (r4g[e] r4g+1[e] r4g+2[e] r4g+3[e])
 * then permute2f128 joins row groups 0 and 1 of the same pose. */
static SKK_ATTR inline __attribute__((always_inline)) void store_mats_avx2_f32(float *dst, size_t stride, const __m256 *m, size_t n, bool stream) {
#pragma GCC unroll 16
  for (int h = 0; h < 2; h++) {
    const __m256 *r = m + 8 * h;
    __m256 t[8], u[8];
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) {
      t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
#pragma GCC unroll 16
    for (int g = 0; g < 2; g++) {
      const __m256d a = _mm256_castps_pd(t[4 * g]), b = _mm256_castps_pd(t[4 * g + 1]);
      const __m256d c = _mm256_castps_pd(t[4 * g + 2]), d = _mm256_castps_pd(t[4 * g + 3]);
      u[4 * g + 0] = _mm256_castpd_ps(_mm256_unpacklo_pd(a, c));
      u[4 * g + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(a, c));
      u[4 * g + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(b, d));
      u[4 * g + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(b, d));
    }
    __m256 o[8];
#pragma GCC unroll 16
    for (int e = 0; e < 4; e++) {
      o[e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x20);
      o[4 + e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x31);
    }
    for (size_t i = 0; i < n; i++) {
      if (stream)
        _mm256_stream_ps(dst + i * stride + 8 * h, o[i]);
      else
        _mm256_storeu_ps(dst + i * stride + 8 * h, o[i]);
    }
  }
}
#define SKK_STORE_CONST sk_kernel__store_const_avx2
#include "sk_kernel_lanes_f32.h"

/* avx512: 16 lanes with FMA; the tail uses masked loads. */
#define SKK(name) name##_avx512_f32
#define SKK_ATTR __attribute__((target("avx512f,avx2,fma")))
#define SKK_N 16
#define SKK_PREFETCH SK_KERNEL_PREFETCH
#define V __m512
#define VLOAD(p) _mm512_loadu_ps(p)
#define VLOADN(p, n) _mm512_maskz_loadu_ps((__mmask16)((1u << (n)) - 1u), (p))
#define VSET1(x) _mm512_set1_ps(x)
#define VZERO() _mm512_setzero_ps()
#define VADD(a, b) _mm512_add_ps((a), (b))
#define VSUB(a, b) _mm512_sub_ps((a), (b))
#define VMUL(a, b) _mm512_mul_ps((a), (b))
#define VFMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define VALL_EQ(v, x) (_mm512_cmp_ps_mask((v), _mm512_set1_ps(x), _CMP_EQ_OQ) == 0xFFFF)
/* 16x16 transpose, rows = matrix entries, lanes = poses. Per 128-bit lane k:
 *   unpack ps, unpack pd: u[4g+e] lane k = entries 4g..4g+3 of pose 4k+e
 *   shuffle_f32x4 twice: gather lane k of u[e], u[4+e], u[8+e], u[12+e] = pose 4k+e.
 * 64 shuffles per 16 matrices; one full 64-byte line per pose. */
static SKK_ATTR inline __attribute__((always_inline)) void store_mats_avx512_f32(float *dst, size_t stride, const __m512 *m, size_t n, bool stream) {
  __m512 t[16], u[16], o[16];
  sk_kernel__unpack512(m, t, u, 4);
#pragma GCC unroll 16
  for (int e = 0; e < 4; e++) {
    const __m512 s0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0x44), s1 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0xEE);
    const __m512 s2 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0x44);
    const __m512 s3 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0xEE);
    o[e] = _mm512_shuffle_f32x4(s0, s2, 0x88);
    o[4 + e] = _mm512_shuffle_f32x4(s0, s2, 0xDD);
    o[8 + e] = _mm512_shuffle_f32x4(s1, s3, 0x88);
    o[12 + e] = _mm512_shuffle_f32x4(s1, s3, 0xDD);
  }
  sk_kernel__rows512(dst, stride, o, n, 16, stream);
}
#define SKK_STORE_CONST sk_kernel__store_const_avx512
#include "sk_kernel_lanes_f32.h"
#endif /* SK_KERNEL_X86 */

void sk_kernel_f32_run_scalar(const sk_kernel_job *job, size_t begin, size_t end, bool stream) {
  run_scalar_f32(job, begin, end, stream);
}
#ifdef SK_KERNEL_X86
void sk_kernel_f32_run_sse2(const sk_kernel_job *job, size_t begin, size_t end, bool stream) {
  run_sse2_f32(job, begin, end, stream);
}
void sk_kernel_f32_run_avx2(const sk_kernel_job *job, size_t begin, size_t end, bool stream) {
  run_avx2_f32(job, begin, end, stream);
}
void sk_kernel_f32_run_avx512(const sk_kernel_job *job, size_t begin, size_t end, bool stream) {
  run_avx512_f32(job, begin, end, stream);
}
#endif
