/* sk_numfmt's float array writer for CPUs with AVX2 but not AVX-512: the
 * steps of the AVX-512 writer in sk_numfmt.c (Schubfach on a block of
 * floats, each text made by one byte shuffle of 16 source bytes), in four
 * 64-bit lanes, with what AVX2 lacks (mask registers, 64-bit arithmetic
 * shifts, min/max, abs and leading-zero counts) done by compares and
 * blends on values known to fit 32 bits. Byte-identical to put_f32 on all
 * 2^32 bit patterns (tests/bench/numfmt_exhaustive.c avx2); valgrind, which
 * has no AVX-512, runs this one. */
#include <stdint.h>
#include <string.h>

#include "sk_numfmt_int.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define SK_AVX2 __attribute__((target("avx2")))
#define SK_AVX2_INLINE SK_AVX2 static inline __attribute__((always_inline))

/* Four floats after the vector step, as f32_block8 in sk_numfmt.c: source
 * bytes, layout row offset | length << 16, and which go the scalar way. */
typedef struct {
  char src[4][16];
  uint32_t info[4];
  int slow;
} f32_block4;

SK_AVX2_INLINE __m256i set1(int64_t x) { return _mm256_set1_epi64x(x); }

/* x / d for x < 2^32 in 64-bit lanes, as (x * m) >> s. */
SK_AVX2_INLINE __m256i divc(__m256i x, uint32_t m, int s) {
  return _mm256_srli_epi64(_mm256_mul_epu32(x, set1(m)), s);
}

/* Arithmetic right shift of 64-bit lanes whose values fit an int32. */
SK_AVX2_INLINE __m256i sra_small(__m256i x, int s) {
  const __m256i t = _mm256_srai_epi32(x, s);
  return _mm256_blend_epi32(t, _mm256_srai_epi32(t, 31), 0xAA);
}

/* a <= b, and a > b, for 64-bit lanes below 2^62 (signed compares do). */
SK_AVX2_INLINE __m256i le(__m256i a, __m256i b) { return _mm256_xor_si256(_mm256_cmpgt_epi64(a, b), set1(-1)); }
SK_AVX2_INLINE __m256i gt(__m256i a, __m256i b) { return _mm256_cmpgt_epi64(a, b); }
/* m ? b : a, m all ones or all zeros per lane */
SK_AVX2_INLINE __m256i sel(__m256i m, __m256i a, __m256i b) { return _mm256_blendv_epi8(a, b, m); }
/* m ? 1 : 0 */
SK_AVX2_INLINE __m256i bit(__m256i m) { return _mm256_srli_epi64(m, 63); }

SK_AVX2_INLINE __m256i round_to_odd4(__m256i g, __m256i cp) {
  const __m256i lo = _mm256_mul_epu32(g, cp);
  const __m256i sum = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(g, 32), cp), _mm256_srli_epi64(lo, 32));
  const __m256i hi = _mm256_srli_epi64(sum, 32);
  const __m256i sticky = gt(_mm256_and_si256(sum, set1(0xffffffff)), set1(1));
  return _mm256_or_si256(hi, bit(sticky));
}

/* f32_shortest8 of sk_numfmt.c for 4 floats. */
SK_AVX2_INLINE void f32_shortest4(__m256i bits, __m256i *digits_out, __m256i *exp10_out) {
  const __m256i one = set1(1), zero = _mm256_setzero_si256();
  const __m256i mant = _mm256_and_si256(bits, set1(0x7fffff));
  const __m256i ex = _mm256_and_si256(_mm256_srli_epi64(bits, 23), set1(0xff));
  const __m256i subnormal = _mm256_cmpeq_epi64(ex, zero);
  const __m256i c = _mm256_or_si256(mant, _mm256_andnot_si256(subnormal, set1(1 << 23)));
  const __m256i q = sel(subnormal, _mm256_sub_epi64(ex, set1(150)), set1(-149));
  const __m256i closer = _mm256_and_si256(_mm256_cmpeq_epi64(mant, zero), gt(ex, one));
  const __m256i c4 = _mm256_slli_epi64(c, 2);
  const __m256i cbl = _mm256_add_epi64(_mm256_sub_epi64(c4, set1(2)), bit(closer));
  const __m256i cbr = _mm256_add_epi64(c4, set1(2));
  __m256i k = _mm256_mul_epi32(q, set1(1262611));
  k = sra_small(_mm256_sub_epi64(k, _mm256_and_si256(closer, set1(524031))), 22);
  const __m256i negk = _mm256_sub_epi64(zero, k);
  const __m256i h = _mm256_add_epi64(_mm256_add_epi64(q, sra_small(_mm256_mul_epi32(negk, set1(1741647)), 19)), one);
  /* Zero and non-finite lanes compute garbage, but within the table: the
   * clamps in 32-bit halves also zero the high halves. */
  const __m256i idx = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi64(negk, set1(31)), zero), set1(76));
  const __m256i g = _mm256_i64gather_epi64((const long long *)(const void *)sk_numfmt__f32_pow10_g, idx, 8);
  const __m256i vbl = round_to_odd4(g, _mm256_sllv_epi64(cbl, h));
  const __m256i vb = round_to_odd4(g, _mm256_sllv_epi64(c4, h));
  const __m256i vbr = round_to_odd4(g, _mm256_sllv_epi64(cbr, h));
  const __m256i odd1 = _mm256_and_si256(c, one);
  const __m256i lower = _mm256_add_epi64(vbl, odd1);
  const __m256i upper = _mm256_sub_epi64(vbr, odd1);
  const __m256i s = _mm256_srli_epi64(vb, 2);
  const __m256i sp = divc(s, 0xCCCCCCCDu, 35);
  const __m256i sp40 = _mm256_add_epi64(_mm256_slli_epi64(sp, 5), _mm256_slli_epi64(sp, 3));
  const __m256i up_in = le(lower, sp40);
  const __m256i wp_in = le(_mm256_add_epi64(sp40, set1(40)), upper);
  const __m256i shorter = _mm256_and_si256(gt(s, set1(9)), _mm256_xor_si256(up_in, wp_in));
  const __m256i s4 = _mm256_slli_epi64(s, 2);
  const __m256i u_in = le(lower, s4);
  const __m256i w_in = le(_mm256_add_epi64(s4, set1(4)), upper);
  const __m256i mid = _mm256_add_epi64(s4, set1(2));
  const __m256i closest =
      _mm256_or_si256(gt(vb, mid), _mm256_and_si256(_mm256_cmpeq_epi64(vb, mid), _mm256_sub_epi64(zero, _mm256_and_si256(s, one))));
  const __m256i one_in = _mm256_xor_si256(u_in, w_in);
  const __m256i up = _mm256_or_si256(_mm256_and_si256(one_in, w_in), _mm256_andnot_si256(one_in, closest));
  __m256i digits = _mm256_add_epi64(s, bit(up));
  digits = sel(shorter, digits, _mm256_add_epi64(sp, bit(wp_in)));
  __m256i exp10 = _mm256_add_epi64(k, bit(shorter));
  /* Integers below 2^24: the digits are c >> -q. */
  const __m256i nq = _mm256_sub_epi64(zero, q);
  const __m256i low_bits = _mm256_sub_epi64(_mm256_sllv_epi64(one, nq), one);
  const __m256i integer = _mm256_andnot_si256(
      subnormal, _mm256_and_si256(_mm256_and_si256(le(q, zero), gt(q, set1(-24))),
                                  _mm256_cmpeq_epi64(_mm256_and_si256(c, low_bits), zero)));
  digits = sel(integer, digits, _mm256_srlv_epi64(c, nq));
  exp10 = _mm256_andnot_si256(integer, exp10);
  *digits_out = digits;
  *exp10_out = exp10;
}

/* f32_strip8 of sk_numfmt.c: trailing zeros off, 8, 4, 2, then 1. */
SK_AVX2_INLINE void f32_strip4(__m256i bits, __m256i *digits_io, __m256i *exp10_io) {
  const __m256i zero = _mm256_cmpeq_epi64(_mm256_and_si256(bits, set1(0x7fffffff)), _mm256_setzero_si256());
  __m256i digits = *digits_io, exp10 = *exp10_io;
  const __m256i tenth = divc(digits, 0xCCCCCCCDu, 35);
  const __m256i ends0 = _mm256_cmpeq_epi64(_mm256_mul_epu32(tenth, set1(10)), digits);
  if (!_mm256_testz_si256(_mm256_andnot_si256(zero, ends0), ends0)) {
    static const struct {
      uint32_t pow, mul;
      int shift, zeros;
    } strip[4] = {{100000000u, 2882303762u, 58, 8}, {10000u, 0xD1B71759u, 45, 4}, {100u, 0x51EB851Fu, 37, 2},
                  {10u, 0xCCCCCCCDu, 35, 1}};
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
      const __m256i t = divc(digits, strip[i].mul, strip[i].shift);
      const __m256i m = _mm256_cmpeq_epi64(_mm256_mul_epu32(t, set1(strip[i].pow)), digits);
      digits = sel(m, digits, t);
      exp10 = _mm256_add_epi64(exp10, _mm256_and_si256(m, set1(strip[i].zeros)));
    }
  }
  *digits_io = _mm256_andnot_si256(zero, digits);
  *exp10_io = _mm256_andnot_si256(zero, exp10);
}

/* f32_text8 of sk_numfmt.c for 4 floats. */
SK_AVX2_INLINE void f32_text4(__m256i bits, __m256i digits, __m256i exp10, f32_block4 *out) {
  static const int64_t pow10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
  const __m256i one = set1(1), zero = _mm256_setzero_si256();
  /* k = number of digits, 1..9 for every lane that prints this way (the
   * others go the scalar way; their k stays in 1..9, inside the table). */
  __m256i nd = one;
#pragma GCC unroll 8
  for (int i = 1; i <= 8; i++) nd = _mm256_sub_epi64(nd, gt(digits, set1(pow10[i] - 1)));
  const __m256i la =
      _mm256_mul_epu32(digits, _mm256_i64gather_epi64((const long long *)(const void *)pow10,
                                                     _mm256_sub_epi64(set1(9), nd), 8));
  const __m256i top = divc(la, 2882303762u, 58);
  const __m256i low8 = _mm256_sub_epi64(la, _mm256_mul_epu32(top, set1(100000000)));
  const __m256i hi4 = divc(low8, 0xD1B71759u, 45);
  const __m256i lo4 = _mm256_sub_epi64(low8, _mm256_mul_epu32(hi4, set1(10000)));
  const __m256i v4 = _mm256_or_si256(hi4, _mm256_slli_epi64(lo4, 32));
  const __m256i q2 = _mm256_srli_epi32(_mm256_mulhi_epu16(v4, _mm256_set1_epi32(10486)), 4);
  const __m256i r2 = _mm256_sub_epi32(v4, _mm256_mullo_epi16(q2, _mm256_set1_epi32(100)));
  const __m256i v2 = _mm256_or_si256(q2, _mm256_slli_epi32(r2, 16));
  const __m256i q1 = _mm256_srli_epi16(_mm256_mullo_epi16(v2, _mm256_set1_epi16(103)), 10);
  const __m256i r1 = _mm256_sub_epi16(v2, _mm256_mullo_epi16(q1, _mm256_set1_epi16(10)));
  const __m256i eight = _mm256_add_epi64(_mm256_or_si256(q1, _mm256_slli_epi16(r1, 8)), set1(0x3030303030303030));
  const __m256i n = _mm256_add_epi64(exp10, nd);
  const __m256i e = _mm256_sub_epi64(n, one);
  const __m256i ae = _mm256_and_si256(_mm256_abs_epi32(e), set1(0xffffffff)); /* |e| <= 46 */
  const __m256i tens = divc(ae, 0xCCCCCCCDu, 35);
  const __m256i ones = _mm256_sub_epi64(ae, _mm256_mul_epu32(tens, set1(10)));
  const __m256i esign = sel(gt(zero, e), set1('+'), set1('-'));
  const __m256i w0 = _mm256_or_si256(_mm256_add_epi64(top, set1('0')), _mm256_slli_epi64(eight, 8));
  __m256i w1 = _mm256_or_si256(_mm256_srli_epi64(eight, 56), set1(0x000000652D302E00));
  w1 = _mm256_or_si256(w1, _mm256_slli_epi64(esign, 40));
  w1 = _mm256_or_si256(w1, _mm256_slli_epi64(_mm256_add_epi64(tens, set1('0')), 48));
  w1 = _mm256_or_si256(w1, _mm256_slli_epi64(_mm256_add_epi64(ones, set1('0')), 56));
  const __m256i neg = _mm256_srli_epi64(bits, 31);
  const __m256i case_a = _mm256_and_si256(gt(n, set1(-6)), le(n, zero));
  const __m256i case_b = _mm256_and_si256(gt(n, zero), le(n, set1(18)));
  const __m256i ae10 = gt(ae, set1(9));
  const __m256i epos = _mm256_sub_epi64(nd, gt(nd, one));
  const __m256i len_d = _mm256_add_epi64(epos, set1(3));
  __m256i len = _mm256_sub_epi64(len_d, ae10);
  len = sel(case_a, len, _mm256_add_epi64(_mm256_sub_epi64(set1(2), n), nd));
  const __m256i len_b = sel(gt(nd, n), n, _mm256_add_epi64(nd, one));
  len = _mm256_add_epi64(sel(case_b, len, len_b), neg);
  const __m256i slow = _mm256_or_si256(
      gt(len, set1(16)), _mm256_cmpeq_epi64(_mm256_and_si256(bits, set1(0x7f800000)), set1(0x7f800000)));
  out->slow = _mm256_movemask_pd(_mm256_castsi256_pd(slow));
  const __m256i row_d = _mm256_add_epi64(_mm256_slli_epi64(nd, 1), set1(20));
  __m256i row = _mm256_sub_epi64(row_d, ae10);
  row = sel(_mm256_or_si256(case_a, case_b), row, _mm256_add_epi64(n, set1(5)));
  const __m256i at = _mm256_slli_epi64(_mm256_add_epi64(_mm256_add_epi64(row, row), neg), 4);
  const __m256i info = _mm256_or_si256(at, _mm256_slli_epi64(len, 16));
  _mm_storeu_si128((__m128i *)(void *)out->info,
                   _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(info, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6))));
  const __m256i lo = _mm256_unpacklo_epi64(w0, w1), hi = _mm256_unpackhi_epi64(w0, w1);
  _mm256_storeu_si256((__m256i *)(void *)out->src[0], _mm256_permute2x128_si256(lo, hi, 0x20));
  _mm256_storeu_si256((__m256i *)(void *)out->src[2], _mm256_permute2x128_si256(lo, hi, 0x31));
}

SK_AVX2_INLINE void f32_decimal4(const float *v, f32_block4 *out) {
  const __m256i bits = _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(const void *)v));
  __m256i digits, exp10;
  f32_shortest4(bits, &digits, &exp10);
  f32_strip4(bits, &digits, &exp10);
  f32_text4(bits, digits, exp10, out);
}

SK_AVX2_INLINE char *put_block4(char *p, const float *v, const f32_block4 *blk) {
  if (__builtin_expect(blk->slow != 0, 0)) return sk_numfmt__put_commas_scalar(p, v, 4);
  const char *rows = (const char *)sk_numfmt__layout_rows;
  for (int j = 0; j < 4; j++) {
    const uint32_t info = blk->info[j], len = info >> 16;
    const __m128i text = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)blk->src[j]),
                                          _mm_load_si128((const __m128i *)(const void *)(rows + (info & 0xffff))));
    _mm_storeu_si128((__m128i *)(void *)p, text);
    p[len] = ',';
    p += len + 1;
  }
  return p;
}

/* Two blocks a step, as the AVX-512 writer: two independent chains. */
SK_AVX2 char *sk_numfmt__put_commas_avx2(char *p, const float *v, size_t count) {
  f32_block4 a, b;
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    f32_decimal4(v + i, &a);
    f32_decimal4(v + i + 4, &b);
    p = put_block4(p, v + i, &a);
    p = put_block4(p, v + i + 4, &b);
  }
  if (i < count) {
    f32_decimal4(v + i, &a);
    p = put_block4(p, v + i, &a);
  }
  return p;
}
#endif
