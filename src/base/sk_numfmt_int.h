/* Private to sk_numfmt (sk_numfmt.c: floats, the layout and the buffers;
 * sk_numfmt_f64.c: the shortest digits of a double, Ryu). */
#ifndef SK_NUMFMT_INT_H
#define SK_NUMFMT_INT_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

/* 128-bit products. gcc/clang on 64-bit targets have unsigned __int128
 * (one MUL instruction); elsewhere, or with -DSK_NUMFMT_NO_INT128 (which the
 * tests use to exercise the fallback), a 32-bit-limb version is used.
 * __extension__ keeps -Wpedantic quiet about the non-ISO type. */
#if defined(__SIZEOF_INT128__) && !defined(SK_NUMFMT_NO_INT128)
#define SK_NUMFMT_HAVE_INT128 1
__extension__ typedef unsigned __int128 sk_u128;
#endif

/* A finite non-zero value as digits * 10^exp10, digits without trailing
 * decimal zeros (at most 9 digits for float, 17 for double). */
typedef struct decimal {
  uint64_t digits;
  int32_t exp10;
} decimal;

static inline uint32_t decimal_length9(uint32_t v) {
  assert(v < 1000000000u);
  if (v >= 100000000u) return 9;
  if (v >= 10000000u) return 8;
  if (v >= 1000000u) return 7;
  if (v >= 100000u) return 6;
  if (v >= 10000u) return 5;
  if (v >= 1000u) return 4;
  if (v >= 100u) return 3;
  if (v >= 10u) return 2;
  return 1;
}

static inline uint32_t decimal_length17(uint64_t v) {
  assert(v < UINT64_C(100000000000000000));
  if (v >= UINT64_C(10000000000000000)) return 17;
  if (v >= UINT64_C(1000000000000000)) return 16;
  if (v >= UINT64_C(100000000000000)) return 15;
  if (v >= UINT64_C(10000000000000)) return 14;
  if (v >= UINT64_C(1000000000000)) return 13;
  if (v >= UINT64_C(100000000000)) return 12;
  if (v >= UINT64_C(10000000000)) return 11;
  if (v >= UINT64_C(1000000000)) return 10;
  return decimal_length9((uint32_t)v);
}

/* Shortest digits of a finite non-zero double given its raw fields (Ryu;
 * integers below 2^53 exactly, the cheap way). */
decimal sk_numfmt__f64_decimal(uint64_t ieee_mant, uint32_t ieee_exp);

/* Shared by the float writers of sk_numfmt.c and sk_numfmt_avx2.c:
 * Schubfach's table of 64-bit powers of ten (10^-31..10^45), the vector
 * writers' shuffle rows (16-byte aligned), the one-at-a-time writer
 * (v[0..n), each text followed by a comma; returns the end), and the AVX2
 * writer (count a multiple of 4; the caller checked the CPU). */
extern const uint64_t sk_numfmt__f32_pow10_g[77];
extern const uint8_t sk_numfmt__layout_rows[80][16];
char *sk_numfmt__put_commas_scalar(char *p, const float *v, size_t n);
char *sk_numfmt__put_commas_avx2(char *p, const float *v, size_t count);

#endif
