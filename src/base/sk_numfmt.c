/* sk_numfmt: shortest round-trip float -> decimal, ECMAScript layout.
 *
 * Doubles: Ryu, in sk_numfmt_f64.c. Floats (what every matrix answer
 * prints): Schubfach, see f32_to_decimal(). The layout step (plain vs
 * exponent notation) and the buffer helpers are ours.
 *
 * Why not snprintf("%.9g"): %.9g always prints 9 digits (bloating every
 * reply), goes through the locale machinery, and costs ~200 ns per float
 * here against 12-18 ns for a float written into a JSON array, 8-12 ns by
 * the AVX-512 writer below (tests/bench/numfmt_bench.c). Why not %.Ng in a
 * loop until strtof round-trips: up to 9 formats + parses per number. Ryu
 * and Schubfach compute the shortest digits directly from a few scaled
 * products.
 *
 * Verified beyond tests/check_sk_numfmt.c: every positive finite float32
 * (2^31 patterns, sign only adds '-') round-trips through strtof, has no
 * shorter round-tripping decimal, and equals the correctly rounded digits
 * whenever those round-trip; 3 million doubles match node's String(x). */
#include "sk_numfmt.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sk_cpu.h"
#include "sk_error.h"
#include "sk_numfmt_int.h"

/* The layout helpers are written once for both widths with a constant
 * `wide` flag; gcc -O2 otherwise shares one out-of-line copy and the float
 * path pays for the double branches (~15% of its instructions). */
#if defined(__GNUC__)
#define SK_NUMFMT_INLINE static inline __attribute__((always_inline))
#else
#define SK_NUMFMT_INLINE static inline
#endif

/* Two ASCII digits per entry: writing digit pairs halves the divisions. */
static const char digit_pairs[200] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* ---- float32: Schubfach --------------------------------------------- */

/* The float path is Schubfach (Raffaello Giulietti, "The Schubfach way to
 * render doubles", 2020), written here from the paper for float32: one
 * table entry and three 64x32-bit products decide the shortest digits with
 * no digit-removal loop, about half the time of Ryu's float path on the
 * matrix-like values of tests/bench/numfmt_bench.c. Checked exhaustively
 * against the Ryu float path it replaced: for all
 * 2^32 float32 bit patterns both print the same bytes, layout included.
 * tests/check_sk_numfmt.c checks a stride over all patterns against
 * printf/strtof (round trip, shortest, correctly rounded) on every run.
 *
 * sk_numfmt__f32_pow10_g[k + 31] = ceil(10^k / 2^r), r = floor(log2 10^k) - 63, for
 * k = -31..45 (the range float32 needs): a 64-bit overestimate of 10^k.
 * Regenerate with:
 *
 *   from fractions import Fraction; import math
 *   for k in range(-31, 46):
 *       v = Fraction(10)**k
 *       r = v.numerator.bit_length() - v.denominator.bit_length()
 *       r -= Fraction(2)**r > v
 *       print(hex(math.ceil(v / Fraction(2)**(r - 63))))
 */
const uint64_t sk_numfmt__f32_pow10_g[77] = {
    UINT64_C(0x81CEB32C4B43FCF5), UINT64_C(0xA2425FF75E14FC32), UINT64_C(0xCAD2F7F5359A3B3F),
    UINT64_C(0xFD87B5F28300CA0E), UINT64_C(0x9E74D1B791E07E49), UINT64_C(0xC612062576589DDB),
    UINT64_C(0xF79687AED3EEC552), UINT64_C(0x9ABE14CD44753B53), UINT64_C(0xC16D9A0095928A28),
    UINT64_C(0xF1C90080BAF72CB2), UINT64_C(0x971DA05074DA7BEF), UINT64_C(0xBCE5086492111AEB),
    UINT64_C(0xEC1E4A7DB69561A6), UINT64_C(0x9392EE8E921D5D08), UINT64_C(0xB877AA3236A4B44A),
    UINT64_C(0xE69594BEC44DE15C), UINT64_C(0x901D7CF73AB0ACDA), UINT64_C(0xB424DC35095CD810),
    UINT64_C(0xE12E13424BB40E14), UINT64_C(0x8CBCCC096F5088CC), UINT64_C(0xAFEBFF0BCB24AAFF),
    UINT64_C(0xDBE6FECEBDEDD5BF), UINT64_C(0x89705F4136B4A598), UINT64_C(0xABCC77118461CEFD),
    UINT64_C(0xD6BF94D5E57A42BD), UINT64_C(0x8637BD05AF6C69B6), UINT64_C(0xA7C5AC471B478424),
    UINT64_C(0xD1B71758E219652C), UINT64_C(0x83126E978D4FDF3C), UINT64_C(0xA3D70A3D70A3D70B),
    UINT64_C(0xCCCCCCCCCCCCCCCD), UINT64_C(0x8000000000000000), UINT64_C(0xA000000000000000),
    UINT64_C(0xC800000000000000), UINT64_C(0xFA00000000000000), UINT64_C(0x9C40000000000000),
    UINT64_C(0xC350000000000000), UINT64_C(0xF424000000000000), UINT64_C(0x9896800000000000),
    UINT64_C(0xBEBC200000000000), UINT64_C(0xEE6B280000000000), UINT64_C(0x9502F90000000000),
    UINT64_C(0xBA43B74000000000), UINT64_C(0xE8D4A51000000000), UINT64_C(0x9184E72A00000000),
    UINT64_C(0xB5E620F480000000), UINT64_C(0xE35FA931A0000000), UINT64_C(0x8E1BC9BF04000000),
    UINT64_C(0xB1A2BC2EC5000000), UINT64_C(0xDE0B6B3A76400000), UINT64_C(0x8AC7230489E80000),
    UINT64_C(0xAD78EBC5AC620000), UINT64_C(0xD8D726B7177A8000), UINT64_C(0x878678326EAC9000),
    UINT64_C(0xA968163F0A57B400), UINT64_C(0xD3C21BCECCEDA100), UINT64_C(0x84595161401484A0),
    UINT64_C(0xA56FA5B99019A5C8), UINT64_C(0xCECB8F27F4200F3A), UINT64_C(0x813F3978F8940985),
    UINT64_C(0xA18F07D736B90BE6), UINT64_C(0xC9F2C9CD04674EDF), UINT64_C(0xFC6F7C4045812297),
    UINT64_C(0x9DC5ADA82B70B59E), UINT64_C(0xC5371912364CE306), UINT64_C(0xF684DF56C3E01BC7),
    UINT64_C(0x9A130B963A6C115D), UINT64_C(0xC097CE7BC90715B4), UINT64_C(0xF0BDC21ABB48DB21),
    UINT64_C(0x96769950B50D88F5), UINT64_C(0xBC143FA4E250EB32), UINT64_C(0xEB194F8E1AE525FE),
    UINT64_C(0x92EFD1B8D0CF37BF), UINT64_C(0xB7ABC627050305AE), UINT64_C(0xE596B7B0C643C71A),
    UINT64_C(0x8F7E32CE7BEA5C70), UINT64_C(0xB35DBF821AE4F38C),
};

/* floor(x / 2^n) for negative x too (gcc and clang shift arithmetically). */
static inline int32_t floor_shift(int32_t x, int n) { return x >> n; }

/* The high 32 bits of g * cp / 2^32 (a 96-bit product), rounded to odd:
 * the lowest bit is set when anything below was, so comparisons against
 * the scaled interval ends stay exact. */
static inline uint32_t round_to_odd(uint64_t g, uint32_t cp) {
#ifdef SK_NUMFMT_HAVE_INT128
  const sk_u128 p = (sk_u128)g * cp;
  const uint32_t hi = (uint32_t)(p >> 64), mid = (uint32_t)((uint64_t)p >> 32);
#else
  const uint64_t lo = (uint64_t)(uint32_t)g * cp;
  const uint64_t sum = (g >> 32) * cp + (lo >> 32);
  const uint32_t hi = (uint32_t)(sum >> 32), mid = (uint32_t)sum;
#endif
  return hi | (mid > 1);
}


/* Shortest digits for a finite non-zero float given its raw fields, the
 * closest of them to the value, ties to even digits. The digits may end in
 * decimal zeros (put_decimal32 drops them: digits * 10^exp10 is the value
 * either way).
 *
 * The value is c * 2^q; its rounding interval is [cbl, cbr] * 2^(q-2)
 * (ends included when c is even, as strtof rounds ties to even). k is
 * chosen so that scaling by 10^-k leaves at most one multiple of 10 inside
 * the scaled interval: then either that one (a digit shorter) or the
 * integer just below or above the scaled value is the answer. */
SK_NUMFMT_INLINE decimal f32_to_decimal(uint32_t ieee_mant, uint32_t ieee_exp) {
  uint32_t c;
  int32_t q;
  if (ieee_exp != 0) {
    c = (UINT32_C(1) << 23) | ieee_mant;
    q = (int32_t)ieee_exp - 150;
    if (q <= 0 && q > -24 && (c & ((UINT32_C(1) << -q) - 1)) == 0) {
      /* An integer below 2^24 (1, -1, 2, ... are common in matrices). */
      decimal d = {c >> -q, 0};
      return d;
    }
  } else {
    c = ieee_mant;
    q = -149;
  }
  const int even = (c & 1) == 0;
  /* At a power of two the float below is closer (except the smallest normal). */
  const int closer = ieee_mant == 0 && ieee_exp > 1;
  const uint32_t cbl = 4 * c - 2 + (uint32_t)closer, cb = 4 * c, cbr = 4 * c + 2;
  /* k = floor(log10(2^q)), or floor(log10(3/4 2^q)) for the narrower interval. */
  const int32_t k = floor_shift(q * 1262611 - (closer ? 524031 : 0), 22);
  /* h = q + floor(log2(10^-k)) + 1, in 1..4 */
  const int32_t h = q + floor_shift(-k * 1741647, 19) + 1;
  const uint64_t g = sk_numfmt__f32_pow10_g[-k + 31];
  const uint32_t vbl = round_to_odd(g, cbl << h), vb = round_to_odd(g, cb << h), vbr = round_to_odd(g, cbr << h);
  const uint32_t lower = vbl + !even, upper = vbr - !even;
  /* Every candidate is computed and the choice made with selects, not
   * branches: which one wins depends on the value's bits, so branches
   * mispredicted about half the time (14 ns against 10 ns per float). */
  const uint32_t s = vb / 4, sp = s / 10;
  /* One digit shorter: sp*10 or (sp+1)*10, if exactly one is inside. */
  const uint32_t up_in = lower <= 40 * sp, wp_in = 40 * sp + 40 <= upper;
  const uint32_t shorter = (s >= 10) & (up_in != wp_in);
  /* Else s or s+1: the one inside, or if both are, the closer (ties to even). */
  const uint32_t u_in = lower <= 4 * s, w_in = 4 * s + 4 <= upper;
  const uint32_t mid = 4 * s + 2;
  const uint32_t closest = (vb > mid) | ((vb == mid) & s);
  const uint32_t up = u_in != w_in ? w_in : closest;
  decimal d = {shorter ? sp + wp_in : s + up, k + (int32_t)shorter};
  return d;
}

/* ---- layout ----------------------------------------------------------- */

/* Writes exactly `len` digits of v (len = its decimal length) to p[0..len). */
SK_NUMFMT_INLINE void put_digits32(char *p, uint32_t v, uint32_t len) {
  char *end = p + len;
  while (v >= 10000) {
    const uint32_t c = v % 10000;
    v /= 10000;
    memcpy(end - 2, digit_pairs + 2 * (c % 100), 2);
    memcpy(end - 4, digit_pairs + 2 * (c / 100), 2);
    end -= 4;
  }
  if (v >= 100) {
    const uint32_t c = v % 100;
    v /= 100;
    memcpy(end - 2, digit_pairs + 2 * c, 2);
    end -= 2;
  }
  if (v >= 10) {
    memcpy(end - 2, digit_pairs + 2 * v, 2);
  } else {
    end[-1] = (char)('0' + v);
  }
}

/* put_digits32 for up to 17 digits. `wide` is a compile-time constant at
 * every call, so the float path keeps only the 32-bit branch. */
SK_NUMFMT_INLINE void put_digits(char *p, uint64_t v, uint32_t len, int wide) {
  if (wide && (v >> 32) != 0) {
    /* At most 17 digits, so the part above the low 8 fits 32 bits; the
     * low 8 are written with their leading zeros. */
    const uint64_t hi = v / 100000000;
    uint32_t lo = (uint32_t)(v - hi * 100000000);
    char *end = p + len;
    const uint32_t c = lo % 10000;
    lo /= 10000;
    memcpy(end - 2, digit_pairs + 2 * (c % 100), 2);
    memcpy(end - 4, digit_pairs + 2 * (c / 100), 2);
    memcpy(end - 6, digit_pairs + 2 * (lo % 100), 2);
    memcpy(end - 8, digit_pairs + 2 * (lo / 100), 2);
    put_digits32(p, (uint32_t)hi, len - 8);
  } else {
    put_digits32(p, (uint32_t)v, len);
  }
}

/* ECMAScript Number::toString layout (ECMA-262, Number::toString, steps for
 * k digits and point position n = exp10 + k), except that integers stop at
 * 18 digits instead of 21: an integer literal of 19+ digits can exceed
 * 2^63, which jansson (and so our own parser) rejects as an overflowing
 * integer, so skinner's output would not read back.
 *   k <= n <= 18   digits then n-k zeros        "1500", "100000000000000000"
 *   0 < n < k      point after n digits         "1.5", "123456.7"
 *   -6 < n <= 0    "0." then -n zeros, digits   "0.001", "0.000001"
 *   otherwise      d[.ddd]e(+|-)(n-1)           "1e+18", "1.5e-7"
 * No NUL is written. Returns the length. */
SK_NUMFMT_INLINE size_t put_decimal(char *dest, int negative, decimal d, uint32_t k, int wide) {
  /* Branch-free sign: matrices are ~half negative, a 50% mispredict. */
  dest[0] = '-';
  char *p = dest + negative;
  const int32_t n = d.exp10 + (int32_t)k;
  if ((int32_t)k <= n && n <= 18) {
    put_digits(p, d.digits, k, wide);
    memset(p + k, '0', (size_t)(n - (int32_t)k));
    p += n;
  } else if (0 < n && n < (int32_t)k) {
    /* Digits one byte to the right, then slide the integer part left over
     * the gap and put the point behind it; n < k <= 17 bytes move. */
    put_digits(p + 1, d.digits, k, wide);
    for (int32_t i = 0; i < n; i++) p[i] = p[i + 1];
    p[n] = '.';
    p += k + 1;
  } else if (-6 < n && n <= 0) {
    /* One fixed 8-byte store writes "0." and the (at most 5) zeros; the
     * digits overwrite the rest. Bytes past the returned length may be
     * scribbled, but never past the documented buffer size (25 >= 1 + 8). */
    memcpy(p, "0.000000", 8);
    put_digits(p + 2 - n, d.digits, k, wide);
    p += 2 - n + (int32_t)k;
  } else {
    put_digits(p + 1, d.digits, k, wide);
    p[0] = p[1];
    if (k > 1) {
      p[1] = '.';
      p += k + 1;
    } else {
      p += 1;
    }
    int32_t e = n - 1;
    *p++ = 'e';
    if (e < 0) {
      *p++ = '-';
      e = -e;
    } else {
      *p++ = '+';
    }
    if (e >= 100) {
      *p++ = (char)('0' + e / 100);
      e %= 100;
      memcpy(p, digit_pairs + 2 * e, 2);
      p += 2;
    } else if (e >= 10) {
      memcpy(p, digit_pairs + 2 * e, 2);
      p += 2;
    } else {
      *p++ = (char)('0' + e);
    }
  }
  return (size_t)(p - dest);
}

/* Decimal digits of v (1 <= v < 10^9), without branches: the bit length
 * gives the count or one less (1233/4096 ~ log10(2)). */
static inline uint32_t digits9(uint32_t v) {
  static const uint32_t pow10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
  const uint32_t k = ((uint32_t)(32 - __builtin_clz(v)) * 1233) >> 12;
  return k + (v >= pow10[k]);
}

static inline void store64(char *p, uint64_t w) { memcpy(p, &w, 8); }

/* put_decimal for float digits (at most 9, trailing zeros allowed),
 * written for speed: the digits are left-aligned to nine (zeros after
 * them) and made ASCII in two 64-bit words with multiply-shift divisions
 * (the steps of f32_text8 below, in one register: no table, no stores and
 * reloads of single digit pairs), the count of significant digits read
 * off the last non-zero one, then each layout stores whole words. Same
 * output as put_decimal, byte for byte (the exhaustive check above);
 * stores stay inside the SK_NUMFMT_F32_MAX + 1 bytes callers provide. */
SK_NUMFMT_INLINE size_t put_decimal32(char *dest, int negative, uint32_t digits, int32_t exp10) {
  static const uint32_t pow10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
  const uint32_t len = digits9(digits);
  const int32_t n = exp10 + (int32_t)len; /* the point's position */
  const uint32_t la = digits * pow10[9 - len];
  const uint32_t top = la / 100000000, low = la - top * 100000000;
  const uint32_t hi4 = low / 10000, lo4 = low - hi4 * 10000;
  /* digits 2..9: two halves of 4, four pairs, eight bytes (digit 2 lowest) */
  uint64_t x = hi4 | (uint64_t)lo4 << 32;
  uint64_t q = ((x * 10486) >> 20) & UINT64_C(0x0000007F0000007F);
  x = q | (x - q * 100) << 16;
  q = ((x * 103) >> 10) & UINT64_C(0x000F000F000F000F);
  x = q | (x - q * 10) << 8;
  const uint64_t first8 = top | x << 8; /* digits 1..8, top >= 1 */
  const uint32_t ninth = (uint32_t)(x >> 56);
  const uint32_t k = ninth != 0 ? 9 : 8 - ((uint32_t)__builtin_clzll(first8) >> 3);
  const uint64_t zeros = UINT64_C(0x3030303030303030);
  const uint64_t w0 = first8 | zeros, w1 = ninth | zeros; /* the text's digits, then '0's */
  dest[0] = '-';
  char *p = dest + negative;
  if (-6 < n && n <= 0) { /* "0.000ddd": at most 2 + 5 + 9 bytes */
    memcpy(p, "0.000000", 8);
    store64(p + 2 - n, w0);
    store64(p + 10 - n, w1);
    return (size_t)(negative + 2 - n + (int32_t)k);
  }
  if (0 < n && n < (int32_t)k) { /* "dd.ddd": n <= 8 and k - n <= 8 */
    store64(p, w0);
    p[n] = '.';
    /* the digits from the (n+1)th on: the 16 bytes w1:w0 shifted down n */
    store64(p + n + 1, (w0 >> (8 * n - 8) >> 8) | (w1 << (64 - 8 * n)));
    return (size_t)(negative + (int32_t)k + 1);
  }
  if ((int32_t)k <= n && n <= 18) { /* an integer: digits, then zeros */
    store64(p, w0);
    store64(p + 8, w1);
    memcpy(p + 16, "00", 2); /* rare: 1 and -1 are most integers in a matrix */
    return (size_t)(negative + n);
  }
  /* "d.ddde-7": the point only with more than one digit. */
  p[0] = (char)w0;
  p[1] = '.';
  store64(p + 2, (w0 >> 8) | (w1 << 56));
  p += k + (k > 1);
  const int32_t e = n - 1;
  const uint32_t ae = (uint32_t)(e < 0 ? -e : e); /* <= 45 */
  p[0] = 'e';
  p[1] = e < 0 ? '-' : '+';
  memcpy(p + 2, digit_pairs + 2 * ae + (ae < 10), 2);
  p += 3 + (ae >= 10);
  return (size_t)(p - dest);
}

/* sk_numfmt_f32 without the NUL, for writers that append more text. */
SK_NUMFMT_INLINE size_t put_f32(char *dest, float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  const int negative = (int)(bits >> 31);
  const uint32_t ieee_mant = bits & ((UINT32_C(1) << 23) - 1);
  const uint32_t ieee_exp = (bits >> 23) & 0xff;
  if (ieee_exp == 0xff) {
    memcpy(dest, "null", 4);
    return 4;
  }
  if (ieee_exp == 0 && ieee_mant == 0) {
    if (negative) {
      memcpy(dest, "-0", 2);
      return 2;
    }
    dest[0] = '0';
    return 1;
  }
  const decimal d = f32_to_decimal(ieee_mant, ieee_exp);
  return put_decimal32(dest, negative, (uint32_t)d.digits, d.exp10);
}

size_t sk_numfmt_f32(float v, char *dest) {
  const size_t len = put_f32(dest, v);
  dest[len] = '\0';
  return len;
}

size_t sk_numfmt_f64(double v, char *dest) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  const int negative = (int)(bits >> 63);
  const uint64_t ieee_mant = bits & ((UINT64_C(1) << 52) - 1);
  const uint32_t ieee_exp = (uint32_t)(bits >> 52) & 0x7ff;
  size_t len;
  if (ieee_exp == 0x7ff) {
    memcpy(dest, "null", 4);
    len = 4;
  } else if (ieee_exp == 0 && ieee_mant == 0) {
    len = 0;
    if (negative) dest[len++] = '-';
    dest[len++] = '0';
  } else {
    decimal d;
    d = sk_numfmt__f64_decimal(ieee_mant, ieee_exp);
    len = put_decimal(dest, negative, d, decimal_length17(d.digits), 1);
  }
  dest[len] = '\0';
  return len;
}

/* v[0..n) the scalar way, each followed by a comma (the vector writers'
 * blocks with a long text or a non-finite value): out of line, so their
 * loops stay small. */
__attribute__((noinline)) char *sk_numfmt__put_commas_scalar(char *p, const float *v, size_t n) {
  for (size_t j = 0; j < n; j++) {
    p += put_f32(p, v[j]);
    *p++ = ',';
  }
  return p;
}

/* ---- float arrays, 8 at a time (AVX-512) --------------------------------
 *
 * A JSON pose answer is ~1 000 floats, and printing them was half of the
 * daemon's time per request: f32_to_decimal itself is cheap, but which
 * branch of the layout a matrix entry takes (1, 0, 0.97, 2.1e-9, ...)
 * is close to random, and so were the integer and trailing-zero branches.
 * Here the same Schubfach steps run on 8 floats per vector with selects in
 * place of branches; the vector unit also makes each float's 16 source
 * bytes (its digits left-aligned as ASCII, and every other character its
 * text may need), its length and which of 40 shuffle rows lays it out, so
 * the scalar step per float is one byte shuffle, one store and a comma.
 * Texts over 16 bytes (rare: 17- and 18-digit integers, "-0.00000ddddddddd")
 * and non-finite values send their block of 8 the scalar way. Byte-identical
 * to put_f32 on all 2^32 bit patterns (tests/bench/numfmt_exhaustive.c, run
 * after every change; tests/check_sk_numfmt.c compares both writers on a
 * stride and on every layout at every block position on every run). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SK_NUMFMT_X86 1
#define SK_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512cd")))

/* Eight floats after the vector step: each one's 16 source bytes (its 9
 * digits, '.', '0', '-', 'e', the exponent's sign and two digits), and in
 * `info` the byte offset in layout_rows of the row that shuffles them into
 * its text (sign included) in the low 16 bits, the text's length above.
 * Bit i of `slow`: float i needs the scalar path. */
typedef struct {
  char src[8][16];
  uint32_t info[8];
  __mmask8 slow;
} f32_block8;

/* Shuffle rows: byte j of a text (after the sign) is source byte row[j]
 * (9 '.', 10 '0', 12 'e', 13 exponent sign, 14/15 exponent digits). Row
 * n + 5 for "0.000ddd" (n = -5..0) and "dd.ddd"/"ddd00" (n = 1..16),
 * where n is the point position; row 20 + 2k + (exponent >= 10) for
 * "d.ddde-N" with k digits. Bytes past a text's length are don't-cares.
 * Each row r is in the table twice: at 2r, and at 2r + 1 after a '-'
 * (source byte 11), so a negative value's text is one shuffle too (its
 * last byte dropped: a text of 16 bytes and a sign goes the scalar way). */
#define LAYOUT_A(n, j) ((j) == 1 ? 9 : (j) < 2 - (n) ? 10 : (j) - 2 + (n))
#define LAYOUT_B(n, j) ((j) < (n) ? ((j) <= 8 ? (j) : 10) : (j) == (n) ? 9 : (j) - 1)
#define LAYOUT_E(k) ((k) + ((k) > 1))
#define LAYOUT_D(x, j)                                                                                     \
  ((j) == 0                           ? 0                                                                  \
   : (j) == LAYOUT_E((x) / 2)         ? 12                                                                 \
   : (j) == LAYOUT_E((x) / 2) + 1     ? 13                                                                 \
   : (j) == LAYOUT_E((x) / 2) + 2     ? 15 - (x) % 2                                                       \
   : (j) == LAYOUT_E((x) / 2) + 3     ? 15                                                                 \
   : (j) == 1                         ? 9                                                                  \
   : (j) <= (x) / 2                   ? (j) - 1                                                            \
                                      : 0)
#define LAYOUT_ROW1(F, x)                                                                                  \
  {F(x, 0),  F(x, 1),  F(x, 2),  F(x, 3),  F(x, 4),  F(x, 5),  F(x, 6),  F(x, 7),                           \
   F(x, 8),  F(x, 9),  F(x, 10), F(x, 11), F(x, 12), F(x, 13), F(x, 14), F(x, 15)},                        \
  {11,       F(x, 0),  F(x, 1),  F(x, 2),  F(x, 3),  F(x, 4),  F(x, 5),  F(x, 6),                           \
   F(x, 7),  F(x, 8),  F(x, 9),  F(x, 10), F(x, 11), F(x, 12), F(x, 13), F(x, 14)}
#define LAYOUT_ROW(F, x) LAYOUT_ROW1(F, x)
const uint8_t sk_numfmt__layout_rows[80][16] __attribute__((aligned(16))) = {
    LAYOUT_ROW(LAYOUT_A, -5), LAYOUT_ROW(LAYOUT_A, -4), LAYOUT_ROW(LAYOUT_A, -3), LAYOUT_ROW(LAYOUT_A, -2),
    LAYOUT_ROW(LAYOUT_A, -1), LAYOUT_ROW(LAYOUT_A, 0),  LAYOUT_ROW(LAYOUT_B, 1),  LAYOUT_ROW(LAYOUT_B, 2),
    LAYOUT_ROW(LAYOUT_B, 3),  LAYOUT_ROW(LAYOUT_B, 4),  LAYOUT_ROW(LAYOUT_B, 5),  LAYOUT_ROW(LAYOUT_B, 6),
    LAYOUT_ROW(LAYOUT_B, 7),  LAYOUT_ROW(LAYOUT_B, 8),  LAYOUT_ROW(LAYOUT_B, 9),  LAYOUT_ROW(LAYOUT_B, 10),
    LAYOUT_ROW(LAYOUT_B, 11), LAYOUT_ROW(LAYOUT_B, 12), LAYOUT_ROW(LAYOUT_B, 13), LAYOUT_ROW(LAYOUT_B, 14),
    LAYOUT_ROW(LAYOUT_B, 15), LAYOUT_ROW(LAYOUT_B, 16), LAYOUT_ROW(LAYOUT_D, 2),  LAYOUT_ROW(LAYOUT_D, 3),
    LAYOUT_ROW(LAYOUT_D, 4),  LAYOUT_ROW(LAYOUT_D, 5),  LAYOUT_ROW(LAYOUT_D, 6),  LAYOUT_ROW(LAYOUT_D, 7),
    LAYOUT_ROW(LAYOUT_D, 8),  LAYOUT_ROW(LAYOUT_D, 9),  LAYOUT_ROW(LAYOUT_D, 10), LAYOUT_ROW(LAYOUT_D, 11),
    LAYOUT_ROW(LAYOUT_D, 12), LAYOUT_ROW(LAYOUT_D, 13), LAYOUT_ROW(LAYOUT_D, 14), LAYOUT_ROW(LAYOUT_D, 15),
    LAYOUT_ROW(LAYOUT_D, 16), LAYOUT_ROW(LAYOUT_D, 17), LAYOUT_ROW(LAYOUT_D, 18), LAYOUT_ROW(LAYOUT_D, 19),
};

/* x / d for x < 2^32 in 64-bit lanes, as (x * m) >> s. */
SK_AVX512 static inline __m512i divc(__m512i x, uint32_t m, int s) {
  return _mm512_srli_epi64(_mm512_mul_epu32(x, _mm512_set1_epi64(m)), s);
}

/* round_to_odd for 8 lanes: g 64-bit, cp < 2^32. */
SK_AVX512 static inline __m512i round_to_odd8(__m512i g, __m512i cp) {
  const __m512i lo = _mm512_mul_epu32(g, cp);
  const __m512i sum = _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(g, 32), cp), _mm512_srli_epi64(lo, 32));
  const __m512i hi = _mm512_srli_epi64(sum, 32);
  const __mmask8 sticky = _mm512_cmpgt_epu64_mask(_mm512_and_si512(sum, _mm512_set1_epi64(0xffffffff)),
                                                  _mm512_set1_epi64(1));
  return _mm512_mask_or_epi64(hi, sticky, hi, _mm512_set1_epi64(1));
}

/* f32_to_decimal for 8 floats (their bits in 64-bit lanes): the shortest
 * digits that read back as the float, *digits, times 10^*exp10 (zero and
 * non-finite lanes: garbage, kept within the table). */
SK_AVX512 static inline __attribute__((always_inline)) void f32_shortest8(__m512i bits, __m512i *digits_out,
                                                                          __m512i *exp10_out) {
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i mant = _mm512_and_si512(bits, _mm512_set1_epi64(0x7fffff));
  const __m512i ex = _mm512_and_si512(_mm512_srli_epi64(bits, 23), _mm512_set1_epi64(0xff));
  const __mmask8 normal = _mm512_test_epi64_mask(ex, ex);
  const __m512i c = _mm512_mask_or_epi64(mant, normal, mant, _mm512_set1_epi64(1 << 23));
  const __m512i q = _mm512_mask_sub_epi64(_mm512_set1_epi64(-149), normal, ex, _mm512_set1_epi64(150));
  const __mmask8 closer = _mm512_testn_epi64_mask(mant, mant) & _mm512_cmpgt_epi64_mask(ex, one);
  const __m512i closer1 = _mm512_maskz_mov_epi64(closer, one);
  const __m512i c4 = _mm512_slli_epi64(c, 2);
  const __m512i cbl = _mm512_add_epi64(_mm512_sub_epi64(c4, _mm512_set1_epi64(2)), closer1);
  const __m512i cbr = _mm512_add_epi64(c4, _mm512_set1_epi64(2));
  /* k = floor(log10(2^q)) (or of 3/4 2^q), h = q + floor(log2(10^-k)) + 1 */
  __m512i k = _mm512_mul_epi32(q, _mm512_set1_epi64(1262611));
  k = _mm512_srai_epi64(_mm512_mask_sub_epi64(k, closer, k, _mm512_set1_epi64(524031)), 22);
  const __m512i negk = _mm512_sub_epi64(_mm512_setzero_si512(), k);
  const __m512i h = _mm512_add_epi64(
      _mm512_add_epi64(q, _mm512_srai_epi64(_mm512_mul_epi32(negk, _mm512_set1_epi64(1741647)), 19)), one);
  /* Zero and non-finite lanes compute garbage, but within the table. */
  const __m512i idx = _mm512_min_epi64(_mm512_max_epi64(_mm512_add_epi64(negk, _mm512_set1_epi64(31)),
                                                        _mm512_setzero_si512()),
                                       _mm512_set1_epi64(76));
  const __m512i g = _mm512_i64gather_epi64(idx, (const void *)sk_numfmt__f32_pow10_g, 8);
  const __m512i vbl = round_to_odd8(g, _mm512_sllv_epi64(cbl, h));
  const __m512i vb = round_to_odd8(g, _mm512_sllv_epi64(c4, h));
  const __m512i vbr = round_to_odd8(g, _mm512_sllv_epi64(cbr, h));
  const __mmask8 odd = _mm512_test_epi64_mask(c, one);
  const __m512i lower = _mm512_mask_add_epi64(vbl, odd, vbl, one);
  const __m512i upper = _mm512_mask_sub_epi64(vbr, odd, vbr, one);
  const __m512i s = _mm512_srli_epi64(vb, 2);
  const __m512i sp = divc(s, 0xCCCCCCCDu, 35);
  const __m512i sp40 = _mm512_add_epi64(_mm512_slli_epi64(sp, 5), _mm512_slli_epi64(sp, 3));
  const __mmask8 up_in = _mm512_cmple_epu64_mask(lower, sp40);
  const __mmask8 wp_in = _mm512_cmple_epu64_mask(_mm512_add_epi64(sp40, _mm512_set1_epi64(40)), upper);
  const __mmask8 shorter = _mm512_cmpge_epu64_mask(s, _mm512_set1_epi64(10)) & (up_in ^ wp_in);
  const __m512i s4 = _mm512_slli_epi64(s, 2);
  const __mmask8 u_in = _mm512_cmple_epu64_mask(lower, s4);
  const __mmask8 w_in = _mm512_cmple_epu64_mask(_mm512_add_epi64(s4, _mm512_set1_epi64(4)), upper);
  const __m512i mid = _mm512_add_epi64(s4, _mm512_set1_epi64(2));
  const __mmask8 closest =
      _mm512_cmpgt_epu64_mask(vb, mid) | (_mm512_cmpeq_epi64_mask(vb, mid) & _mm512_test_epi64_mask(s, one));
  const __mmask8 up = (__mmask8)(((u_in ^ w_in) & w_in) | (~(u_in ^ w_in) & closest));
  __m512i digits = _mm512_mask_add_epi64(s, up, s, one);
  digits = _mm512_mask_mov_epi64(digits, shorter, _mm512_mask_add_epi64(sp, wp_in, sp, one));
  __m512i exp10 = _mm512_mask_add_epi64(k, shorter, k, one);
  /* Integers below 2^24: the digits are c >> -q (as in f32_to_decimal). */
  const __m512i nq = _mm512_sub_epi64(_mm512_setzero_si512(), q);
  const __m512i low_bits = _mm512_sub_epi64(_mm512_sllv_epi64(one, nq), one);
  const __mmask8 integer = normal & _mm512_cmple_epi64_mask(q, _mm512_setzero_si512()) &
                           _mm512_cmpgt_epi64_mask(q, _mm512_set1_epi64(-24)) &
                           _mm512_testn_epi64_mask(c, low_bits);
  digits = _mm512_mask_mov_epi64(digits, integer, _mm512_srlv_epi64(c, nq));
  exp10 = _mm512_mask_mov_epi64(exp10, integer, _mm512_setzero_si512());
  *digits_out = digits;
  *exp10_out = exp10;
}

/* Trailing zeros off the digits: 8, 4, 2, then 1 of them (at most 8 in
 * 9 digits); zero lanes print as the one digit "0" at n = 1. */
SK_AVX512 static inline __attribute__((always_inline)) void f32_strip8(__m512i bits, __m512i *digits_io,
                                                                       __m512i *exp10_io) {
  const __mmask8 zero = _mm512_testn_epi64_mask(bits, _mm512_set1_epi64(0x7fffffff));
  __m512i digits = *digits_io, exp10 = *exp10_io;
  /* Skipped when no lane ends in 0, as in most blocks of matrix entries. */
  const __m512i tenth = divc(digits, 0xCCCCCCCDu, 35);
  if (_mm512_mask_cmpeq_epi64_mask((__mmask8)~zero, _mm512_mul_epu32(tenth, _mm512_set1_epi64(10)), digits)) {
    static const struct {
      uint32_t pow, mul;
      int shift, zeros;
    } strip[4] = {{100000000u, 2882303762u, 58, 8}, {10000u, 0xD1B71759u, 45, 4}, {100u, 0x51EB851Fu, 37, 2},
                  {10u, 0xCCCCCCCDu, 35, 1}};
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
      const __m512i t = divc(digits, strip[i].mul, strip[i].shift);
      const __mmask8 m = _mm512_cmpeq_epi64_mask(_mm512_mul_epu32(t, _mm512_set1_epi64(strip[i].pow)), digits);
      digits = _mm512_mask_mov_epi64(digits, m, t);
      exp10 = _mm512_mask_add_epi64(exp10, m, exp10, _mm512_set1_epi64(strip[i].zeros));
    }
  }
  digits = _mm512_maskz_mov_epi64((__mmask8)~zero, digits);
  exp10 = _mm512_maskz_mov_epi64((__mmask8)~zero, exp10);
  *digits_io = digits;
  *exp10_io = exp10;
}

/* The texts of 8 floats as `out` holds them for put_f32_commas_avx512:
 * each one's layout row, length, sign and 16 source bytes (its 9 digits,
 * '.', '0', '-', 'e', the exponent's sign and two digits). */
SK_AVX512 static inline __attribute__((always_inline)) void f32_text8(__m512i bits, __m512i digits, __m512i exp10,
                                                                      f32_block8 *out) {
  const __m512i one = _mm512_set1_epi64(1);
  /* k = number of digits: from the bit length, then one compare. */
  const __m512i pow10_lo = _mm512_setr_epi64(1, 10, 100, 1000, 10000, 100000, 1000000, 10000000);
  const __m512i pow10_hi = _mm512_setr_epi64(100000000, 1000000000, 1, 1, 1, 1, 1, 1);
  const __m512i bitlen = _mm512_sub_epi64(_mm512_set1_epi64(64), _mm512_lzcnt_epi64(digits));
  __m512i nd = _mm512_srli_epi64(_mm512_mul_epu32(bitlen, _mm512_set1_epi64(1233)), 12);
  nd = _mm512_mask_add_epi64(nd, _mm512_cmpge_epu64_mask(digits, _mm512_permutex2var_epi64(pow10_lo, nd, pow10_hi)),
                             nd, one);
  nd = _mm512_max_epi64(nd, one);
  /* Left-align to 9 digits, then to ASCII: the top digit, and the other 8
   * as two halves of 4 -> four pairs -> eight digits (multiply-shift
   * divisions in 32- then 16-bit lanes). */
  const __m512i la =
      _mm512_mul_epu32(digits, _mm512_permutex2var_epi64(pow10_lo, _mm512_sub_epi64(_mm512_set1_epi64(9), nd),
                                                         pow10_hi));
  const __m512i top = divc(la, 2882303762u, 58);
  const __m512i low8 = _mm512_sub_epi64(la, _mm512_mul_epu32(top, _mm512_set1_epi64(100000000)));
  const __m512i hi4 = divc(low8, 0xD1B71759u, 45);
  const __m512i lo4 = _mm512_sub_epi64(low8, _mm512_mul_epu32(hi4, _mm512_set1_epi64(10000)));
  const __m512i v4 = _mm512_or_si512(hi4, _mm512_slli_epi64(lo4, 32));
  /* v4's halves are below 10^4, so 16-bit products serve (vpmulld is
   * two uops on Intel): (x * 10486) >> 20 as the high half, shifted. */
  const __m512i q2 = _mm512_srli_epi32(_mm512_mulhi_epu16(v4, _mm512_set1_epi32(10486)), 4);
  const __m512i r2 = _mm512_sub_epi32(v4, _mm512_mullo_epi16(q2, _mm512_set1_epi32(100)));
  const __m512i v2 = _mm512_or_si512(q2, _mm512_slli_epi32(r2, 16));
  const __m512i q1 = _mm512_srli_epi16(_mm512_mullo_epi16(v2, _mm512_set1_epi16(103)), 10);
  const __m512i r1 = _mm512_sub_epi16(v2, _mm512_mullo_epi16(q1, _mm512_set1_epi16(10)));
  const __m512i eight = _mm512_add_epi64(_mm512_or_si512(q1, _mm512_slli_epi16(r1, 8)),
                                         _mm512_set1_epi64(0x3030303030303030));
  /* Each float's text is a byte shuffle of 16 source bytes: its 9 digits,
   * '.', '0', '-', 'e', the exponent's sign and its two digits. */
  const __m512i n = _mm512_add_epi64(exp10, nd);
  const __m512i e = _mm512_sub_epi64(n, one);
  const __m512i ae = _mm512_abs_epi64(e);
  const __m512i tens = divc(ae, 0xCCCCCCCDu, 35);
  const __m512i ones = _mm512_sub_epi64(ae, _mm512_mul_epu32(tens, _mm512_set1_epi64(10)));
  const __mmask8 eneg = _mm512_cmplt_epi64_mask(e, _mm512_setzero_si512());
  const __m512i esign = _mm512_mask_mov_epi64(_mm512_set1_epi64('+'), eneg, _mm512_set1_epi64('-'));
  const __m512i w0 = _mm512_or_si512(_mm512_add_epi64(top, _mm512_set1_epi64('0')), _mm512_slli_epi64(eight, 8));
  __m512i w1 = _mm512_or_si512(_mm512_srli_epi64(eight, 56), _mm512_set1_epi64(0x000000652D302E00));
  w1 = _mm512_or_si512(w1, _mm512_slli_epi64(esign, 40));
  w1 = _mm512_or_si512(w1, _mm512_slli_epi64(_mm512_add_epi64(tens, _mm512_set1_epi64('0')), 48));
  w1 = _mm512_or_si512(w1, _mm512_slli_epi64(_mm512_add_epi64(ones, _mm512_set1_epi64('0')), 56));
  /* The layouts: "0.00ddd" (case a: -6 < n <= 0), "dd.ddd" or an integer
   * (case b: 0 < n <= 18), else "d.ddde-N"; the text's length in each. */
  const __m512i neg = _mm512_srli_epi64(bits, 31);
  const __mmask8 case_a = _mm512_cmpgt_epi64_mask(n, _mm512_set1_epi64(-6)) &
                          _mm512_cmple_epi64_mask(n, _mm512_setzero_si512());
  const __mmask8 case_b = _mm512_cmpgt_epi64_mask(n, _mm512_setzero_si512()) &
                          _mm512_cmple_epi64_mask(n, _mm512_set1_epi64(18));
  const __mmask8 ae10 = _mm512_cmpge_epi64_mask(ae, _mm512_set1_epi64(10));
  const __m512i epos = _mm512_mask_add_epi64(nd, _mm512_cmpgt_epi64_mask(nd, one), nd, one);
  const __m512i len_d = _mm512_add_epi64(epos, _mm512_set1_epi64(3));
  __m512i len = _mm512_mask_add_epi64(len_d, ae10, len_d, one);
  len = _mm512_mask_mov_epi64(len, case_a, _mm512_add_epi64(_mm512_sub_epi64(_mm512_set1_epi64(2), n), nd));
  const __m512i len_b = _mm512_mask_mov_epi64(n, _mm512_cmplt_epi64_mask(n, nd), _mm512_add_epi64(nd, one));
  len = _mm512_add_epi64(_mm512_mask_mov_epi64(len, case_b, len_b), neg);
  /* Texts over 16 bytes and non-finite values go the scalar way. */
  out->slow = _mm512_cmpgt_epi64_mask(len, _mm512_set1_epi64(16)) |
              _mm512_cmpeq_epi64_mask(_mm512_and_si512(bits, _mm512_set1_epi64(0x7f800000)),
                                      _mm512_set1_epi64(0x7f800000));
  /* Which row of layout_rows: n + 5 in cases a and b, else 20 + 2k + (ae >= 10);
   * then 2 row + sign, as a byte offset, and the length above it. */
  const __m512i row_d = _mm512_add_epi64(_mm512_slli_epi64(nd, 1), _mm512_set1_epi64(20));
  __m512i row = _mm512_mask_add_epi64(row_d, ae10, row_d, one);
  row = _mm512_mask_mov_epi64(row, case_a | case_b, _mm512_add_epi64(n, _mm512_set1_epi64(5)));
  const __m512i at = _mm512_slli_epi64(_mm512_add_epi64(_mm512_add_epi64(row, row), neg), 4);
  _mm256_storeu_si256((__m256i *)(void *)out->info, _mm512_cvtepi64_epi32(_mm512_or_si512(at, _mm512_slli_epi64(len, 16))));
  _mm512_storeu_si512(out->src[0], _mm512_permutex2var_epi64(w0, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), w1));
  _mm512_storeu_si512(out->src[4], _mm512_permutex2var_epi64(w0, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), w1));
}

/* f32_to_decimal and the digit step of put_decimal32 for v[0..7]. */
SK_AVX512 static inline __attribute__((always_inline)) void f32_decimal8(const float *v, f32_block8 *out) {
  const __m512i bits = _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)v));
  __m512i digits, exp10;
  f32_shortest8(bits, &digits, &exp10);
  f32_strip8(bits, &digits, &exp10);
  f32_text8(bits, digits, exp10, out);
}


/* The texts of a block f32_decimal8 made, each followed by a comma. */
SK_AVX512 static inline __attribute__((always_inline)) char *put_block8(char *p, const float *v,
                                                                         const f32_block8 *blk) {
  if (__builtin_expect(blk->slow != 0, 0)) return sk_numfmt__put_commas_scalar(p, v, 8);
  const char *rows = (const char *)sk_numfmt__layout_rows;
  for (int j = 0; j < 8; j++) {
    const uint32_t info = blk->info[j], len = info >> 16;
    const __m128i text = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)blk->src[j]),
                                          _mm_load_si128((const __m128i *)(const void *)(rows + (info & 0xffff))));
    _mm_storeu_si128((__m128i *)(void *)p, text);
    p[len] = ',';
    p += len + 1;
  }
  return p;
}

/* Elements v[0..count) (count a multiple of 8), each followed by a comma.
 * Returns the end; writes up to 17 bytes from an element's start. Two
 * blocks a step: one block's steps are one long dependency chain (~240
 * cycles in llvm-mca's model for ~320 instructions), and two independent
 * chains side by side keep the vector units busy while each waits. */
SK_AVX512 static char *put_f32_commas_avx512(char *p, const float *v, size_t count) {
  f32_block8 a, b;
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    f32_decimal8(v + i, &a);
    f32_decimal8(v + i + 8, &b);
    p = put_block8(p, v + i, &a);
    p = put_block8(p, v + i + 8, &b);
  }
  if (i < count) {
    f32_decimal8(v + i, &a);
    p = put_block8(p, v + i, &a);
  }
  return p;
}

static int have_avx512_numfmt(void) {
  return sk_cpu_has(SK_CPU_AVX512F | SK_CPU_AVX512BW | SK_CPU_AVX512DQ | SK_CPU_AVX512CD);
}
#endif

/* ---- float arrays into an sk_strbuf ------------------------------------ */

/* Floats formatted per reservation in sk_strbuf_append_f32_array: bounds the
 * worst-case over-reservation (25 bytes per float against ~10 typical) to
 * ~100 KiB instead of 2.5x the whole array. */
#define F32_ARRAY_CHUNK 4096

/* v[0..n), each followed by a comma, from p; returns the end. vector: 1
 * for the AVX-512 writer (the caller checked the CPU). Writes at most
 * n * (SK_NUMFMT_F32_MAX + 1) + 32 bytes from p (the writers may scribble
 * up to 28 bytes from an element's start). */
static char *put_commas(char *p, const float *v, size_t n, int vector) {
  size_t i = 0;
#ifdef SK_NUMFMT_X86
  if (vector == 1) {
    i = n & ~(size_t)7;
    p = put_f32_commas_avx512(p, v, i);
  } else if (vector == 2) {
    i = n & ~(size_t)3;
    p = sk_numfmt__put_commas_avx2(p, v, i);
  }
#else
  (void)vector;
#endif
  for (; i < n; i++) {
    p += put_f32(p, v[i]);
    *p++ = ',';
  }
  return p;
}

#define PUT_COMMAS_ROOM(n) ((n) * (SK_NUMFMT_F32_MAX + 1) + 32)

/* 1: the AVX-512 writer, 2: the AVX2 one (sk_numfmt_avx2.c), 0: one float
 * at a time. */
static int vector_writer(size_t count) {
#ifdef SK_NUMFMT_X86
  if (count >= 8 && have_avx512_numfmt()) return 1;
  return count >= 4 && sk_cpu_has(SK_CPU_AVX2) ? 2 : 0;
#else
  (void)count;
  return 0;
#endif
}

/* Room for `extra` more bytes from p in b (b->len set to p's offset):
 * the common case, room already there, without a call. 0 or SK_ENOMEM. */
static inline int room_at(sk_strbuf *b, char **p, size_t extra) {
  b->len = (size_t)(*p - b->data);
  if (b->cap - b->len > extra && !b->failed) return 0;
  if (sk_strbuf_reserve(b, extra) != 0) return SK_ENOMEM;
  *p = b->data + b->len;
  return 0;
}

/* Group g of v bit-identical to ref's. */
static inline int same_group(const float *v, const sk_f32_text *ref, size_t g) {
  return memcmp(v + g * ref->group, ref->values + g * ref->group, ref->group * sizeof *v) == 0;
}

/* v[0..count) each followed by a comma from *p, groups equal to ref's
 * copied from its text, the others printed a run of consecutive groups at
 * a time (one writer call per run, not per group: a pose that moves an arm
 * prints its ~20 matrices in one or two runs). */
static int put_commas_ref(sk_strbuf *b, char **pp, const float *v, size_t count, int vector, const sk_f32_text *ref) {
  const size_t groups = count / ref->group;
  char *p = *pp;
  int rc = 0;
  for (size_t g = 0; g < groups && rc == 0;) {
    if (same_group(v, ref, g)) { /* same bits, same text */
      const size_t n = ref->at[g + 1] - ref->at[g];
      if ((rc = room_at(b, &p, n + 1)) != 0) break;
      memcpy(p, ref->text + ref->at[g], n);
      p[n] = ',';
      p += n + 1;
      g++;
      continue;
    }
    size_t h = g + 1;
    while (h < groups && !same_group(v, ref, h)) h++;
    /* h is a same group (copied next, its test repeated) or the end. */
    const size_t n = (h - g) * ref->group;
    if ((rc = room_at(b, &p, PUT_COMMAS_ROOM(n))) != 0) break;
    p = put_commas(p, v + g * ref->group, n, vector);
    g = h;
  }
  *pp = p;
  return rc;
}

/* The array's text, with groups equal to ref's (when ref is non-NULL)
 * copied from it. */
static int append_f32_array(sk_strbuf *b, const float *v, size_t count, int vector, const sk_f32_text *ref) {
  const size_t start = b->len;
  if (sk_strbuf_reserve(b, 2) != 0) return SK_ENOMEM; /* "[]" */
  char *p = b->data + b->len;
  *p++ = '[';
  int rc = 0;
  if (ref != NULL) {
    rc = put_commas_ref(b, &p, v, count, vector, ref);
  } else {
    for (size_t i = 0; i < count && rc == 0; i += F32_ARRAY_CHUNK) {
      const size_t chunk = count - i < F32_ARRAY_CHUNK ? count - i : F32_ARRAY_CHUNK;
      if ((rc = room_at(b, &p, PUT_COMMAS_ROOM(chunk))) == 0) p = put_commas(p, v + i, chunk, vector);
    }
  }
  if (rc != 0) {
    b->len = start;
    if (b->data != NULL) b->data[start] = '\0';
    return SK_ENOMEM;
  }
  /* The last comma becomes the closing bracket. */
  if (count > 0) p--;
  *p++ = ']';
  b->len = (size_t)(p - b->data);
  b->data[b->len] = '\0';
  return 0;
}

int sk_f32_text_build(sk_f32_text *t, const float *values, size_t count, size_t group) {
  memset(t, 0, sizeof *t);
  if (group == 0 || count % group != 0) return SK_EINVAL;
  const size_t groups = count / group;
  sk_strbuf text = {0};
  uint32_t *at = malloc((groups + 1) * sizeof *at);
  if (at == NULL) return SK_ENOMEM;
  const int vector = vector_writer(group);
  at[0] = 0;
  for (size_t g = 0; g < groups; g++) {
    if (sk_strbuf_reserve(&text, PUT_COMMAS_ROOM(group)) != 0 || text.len > UINT32_MAX / 2) {
      free(at);
      sk_strbuf_free(&text);
      return SK_ENOMEM;
    }
    char *end = put_commas(text.data + text.len, values + g * group, group, vector);
    text.len = (size_t)(end - 1 - text.data); /* no comma after a group */
    at[g + 1] = (uint32_t)text.len;
  }
  /* Trimmed to its length: the cache counts these bytes against --cache-mb. */
  char *trimmed = realloc(text.data, text.len);
  t->values = values;
  t->count = count;
  t->group = group;
  t->text = trimmed != NULL ? trimmed : text.data;
  t->at = at;
  return 0;
}

void sk_f32_text_free(sk_f32_text *t) {
  free(t->text);
  free(t->at);
  memset(t, 0, sizeof *t);
}

size_t sk_f32_text_bytes(const sk_f32_text *t) {
  return t->at == NULL ? 0 : t->at[t->count / t->group] + (t->count / t->group + 1) * sizeof *t->at;
}

int sk_strbuf_append_f32_array_ref(sk_strbuf *b, const float *v, size_t count, const sk_f32_text *ref) {
  if (ref != NULL && (ref->at == NULL || ref->count != count)) ref = NULL;
  return append_f32_array(b, v, count, vector_writer(ref != NULL ? ref->group : count), ref);
}

int sk_strbuf_append_f32_array(sk_strbuf *b, const float *v, size_t count) {
  return append_f32_array(b, v, count, vector_writer(count), NULL);
}

int sk_strbuf_append_f32_array_on(const char *isa, sk_strbuf *b, const float *v, size_t count) {
  const int which = sk_isa_parse(isa);
  if (which == SK_ISA_SCALAR) return append_f32_array(b, v, count, 0, NULL);
#ifdef SK_NUMFMT_X86
  if (which == SK_ISA_AVX512 && have_avx512_numfmt()) return append_f32_array(b, v, count, 1, NULL);
  if (which == SK_ISA_AVX2 && sk_cpu_has(SK_CPU_AVX2)) return append_f32_array(b, v, count, 2, NULL);
#endif
  return -1;
}
