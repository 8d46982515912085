/* Tests for sk_numfmt: exact strings for hand-picked values, round trips
 * over a stride through every float32 bit pattern and random doubles, and
 * the growable buffer.
 *
 * The reference for "shortest" is the C library: the smallest p for which
 * printf("%.{p-1}e") reads back to the same value. glibc's printf is exact
 * and its strtof/strtod round correctly, so where that p equals our digit
 * count the digits must be identical (both are the correctly rounded p-digit
 * decimal), and we hold the layout to an independent, naive formatter of the
 * ECMAScript Number::toString rules. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_error.h"
#include <jansson.h>

#include "sk_numfmt.h"

/* ---- helpers ------------------------------------------------------------ */

/* ck_assert* records every passing check through a pipe to the parent
 * (one write(2) each in fork mode); across ~25 million values that syscall
 * dominated the run time. The hot loops use this instead, which only talks
 * to Check on failure. */
#define EXPECT(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) ck_abort_msg(__VA_ARGS__);                                    \
  } while (0)

static float bits_to_f32(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static uint32_t f32_to_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

static double bits_to_f64(uint64_t b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

static uint64_t f64_to_bits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

/* xorshift64: deterministic, so a failure reproduces. */
static uint64_t next_random(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  *state = x;
  return x;
}

/* RFC 8259 number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int is_json_number(const char *s) {
  if (*s == '-') s++;
  if (*s == '0') {
    s++;
  } else if (*s >= '1' && *s <= '9') {
    while (*s >= '0' && *s <= '9') s++;
  } else {
    return 0;
  }
  if (*s == '.') {
    s++;
    if (!(*s >= '0' && *s <= '9')) return 0;
    while (*s >= '0' && *s <= '9') s++;
  }
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '+' || *s == '-') s++;
    if (!(*s >= '0' && *s <= '9')) return 0;
    while (*s >= '0' && *s <= '9') s++;
  }
  return *s == '\0';
}

/* Number of significant digits in a number's text (leading zeros and the
 * zeros of a plain integer's tail do not count). */
static int significant_digits(const char *s) {
  char digits[64];
  int n = 0;
  for (; *s && *s != 'e'; s++) {
    if (*s >= '0' && *s <= '9') digits[n++] = *s;
  }
  int first = 0;
  while (first < n && digits[first] == '0') first++;
  while (n > first && digits[n - 1] == '0') n--;
  return n - first;
}

/* The ECMAScript layout of digits (k of them, no trailing zero) with the
 * point after position n, spelled out literally from the spec's four cases,
 * except that plain integers stop at 18 digits (sk_numfmt.c says why). */
static void ecma_layout(char *out, int negative, const char *digits, int n) {
  const int k = (int)strlen(digits);
  char *p = out;
  if (negative) *p++ = '-';
  if (k <= n && n <= 18) {
    p += sprintf(p, "%s", digits);
    for (int i = 0; i < n - k; i++) *p++ = '0';
  } else if (0 < n && n < k) {
    p += sprintf(p, "%.*s.%s", n, digits, digits + n);
  } else if (-6 < n && n <= 0) {
    p += sprintf(p, "0.");
    for (int i = 0; i < -n; i++) *p++ = '0';
    p += sprintf(p, "%s", digits);
  } else {
    if (k == 1) {
      p += sprintf(p, "%c", digits[0]);
    } else {
      p += sprintf(p, "%c.%s", digits[0], digits + 1);
    }
    p += sprintf(p, "e%c%d", n - 1 < 0 ? '-' : '+', abs(n - 1));
  }
  *p = '\0';
}

/* Turns printf "%.*e" output into its digits (trailing zeros dropped) and
 * point position n; returns the digit count. */
static int digits_from_e(const char *e_text, char *digits, int *n) {
  const char *s = e_text;
  if (*s == '-') s++;
  int k = 0;
  for (; *s != 'e'; s++) {
    if (*s != '.') digits[k++] = *s;
  }
  while (k > 1 && digits[k - 1] == '0') k--;
  digits[k] = '\0';
  *n = atoi(s + 1) + 1;
  return k;
}

/* Shortest correctly rounded "%.{p-1}e" that strtof reads back; builds the
 * ECMAScript text of it in `expect`. Returns p. */
static int shortest_by_printf_f32(float v, char *expect) {
  char text[64], digits[32];
  for (int p = 1; p <= 9; p++) {
    snprintf(text, sizeof text, "%.*e", p - 1, (double)v);
    if (f32_to_bits(strtof(text, NULL)) == f32_to_bits(v)) {
      int n;
      const int k = digits_from_e(text, digits, &n);
      ecma_layout(expect, signbit(v) != 0, digits, n);
      return k;
    }
  }
  ck_abort_msg("%%.9e does not round-trip %a", (double)v);
  return 0;
}

static int shortest_by_printf_f64(double v, char *expect) {
  char text[64], digits[32];
  for (int p = 1; p <= 17; p++) {
    snprintf(text, sizeof text, "%.*e", p - 1, v);
    if (f64_to_bits(strtod(text, NULL)) == f64_to_bits(v)) {
      int n;
      const int k = digits_from_e(text, digits, &n);
      ecma_layout(expect, signbit(v) != 0, digits, n);
      return k;
    }
  }
  ck_abort_msg("%%.17e does not round-trip %a", v);
  return 0;
}

/* Formats one float and checks length, syntax and round trip; with `full`,
 * also shortness, digits and layout against the printf reference. */
static void check_f32(uint32_t bits, int full) {
  const float v = bits_to_f32(bits);
  char out[SK_NUMFMT_F32_MAX + 1 + 8];
  memset(out, 'x', sizeof out);
  const size_t len = sk_numfmt_f32(v, out);
  EXPECT(len <= SK_NUMFMT_F32_MAX && out[len] == '\0' && strlen(out) == len,
                "length %zu for %08x", len, (unsigned)bits);
  EXPECT(out[SK_NUMFMT_F32_MAX + 1] == 'x', "wrote past the limit for %08x",
                (unsigned)bits);
  EXPECT(is_json_number(out), "not a JSON number: \"%s\" (%08x)", out,
                (unsigned)bits);
  const uint32_t back = f32_to_bits(strtof(out, NULL));
  EXPECT(back == bits, "\"%s\" reads back as %08x, not %08x", out, (unsigned)back,
                (unsigned)bits);
  if (!full || v == 0) return;
  char expect[64];
  const int ref_digits = shortest_by_printf_f32(v, expect);
  const int digits = significant_digits(out);
  EXPECT(digits <= ref_digits, "\"%s\" longer than \"%s\" (%08x)", out, expect,
                (unsigned)bits);
  if (digits == ref_digits) {
    EXPECT(strcmp(out, expect) == 0, "\"%s\" != \"%s\" (%08x)", out, expect,
                  (unsigned)bits);
  }
}

static void check_f64(uint64_t bits, int full) {
  const double v = bits_to_f64(bits);
  char out[SK_NUMFMT_F64_MAX + 1 + 8];
  memset(out, 'x', sizeof out);
  const size_t len = sk_numfmt_f64(v, out);
  EXPECT(len <= SK_NUMFMT_F64_MAX && out[len] == '\0' && strlen(out) == len,
                "length %zu for %016llx", len, (unsigned long long)bits);
  EXPECT(out[SK_NUMFMT_F64_MAX + 1] == 'x', "wrote past the limit");
  EXPECT(is_json_number(out), "not a JSON number: \"%s\"", out);
  const uint64_t back = f64_to_bits(strtod(out, NULL));
  EXPECT(back == bits, "\"%s\" reads back as %016llx, not %016llx", out,
                (unsigned long long)back, (unsigned long long)bits);
  if (!full || v == 0) return;
  char expect[64];
  const int ref_digits = shortest_by_printf_f64(v, expect);
  const int digits = significant_digits(out);
  EXPECT(digits <= ref_digits, "\"%s\" longer than \"%s\"", out, expect);
  if (digits == ref_digits) {
    EXPECT(strcmp(out, expect) == 0, "\"%s\" != \"%s\" (%016llx)", out, expect,
                  (unsigned long long)bits);
  }
}

/* ---- golden ------------------------------------------------------------- */

static const struct {
  float v;
  const char *text;
} f32_golden[] = {
    {0.0f, "0"},
    {-0.0f, "-0"},
    {1.0f, "1"},
    {-1.0f, "-1"},
    {0.5f, "0.5"},
    {-1.5f, "-1.5"},
    {0.1f, "0.1"},
    {0.3f, "0.3"},
    {1.0f / 3.0f, "0.33333334"},
    {2.0f / 3.0f, "0.6666667"},
    {123456.7f, "123456.7"},
    {3.14159265f, "3.1415927"},
    {100.0f, "100"},
    {16777216.0f, "16777216"},
    {16777217.0f, "16777216"}, /* not representable; rounds to 2^24 */
    {123456789.0f, "123456790"},
    {1e10f, "10000000000"},
    {1e17f, "100000000000000000"},    /* n = 18: last plain integer */
    {1e20f, "1e+20"},                 /* n = 21: exponent form, so jansson reads it back */
    {1e21f, "1e+21"},                 /* n = 22: exponent form */
    {1.2345678e21f, "1.2345678e+21"},
    {9.999999e20f, "9.999999e+20"},
    {0.000001f, "0.000001"}, /* n = -5: last plain fraction */
    {0.0000025f, "0.0000025"},
    {1e-7f, "1e-7"}, /* n = -6: exponent form */
    {1.5e-7f, "1.5e-7"},
    {-2.5e-10f, "-2.5e-10"},
    {0.001f, "0.001"},
    {FLT_MAX, "3.4028235e+38"},
    {-FLT_MAX, "-3.4028235e+38"},
    {FLT_MIN, "1.1754944e-38"},            /* smallest normal */
    {1e-45f, "1e-45"},                     /* smallest subnormal, 2^-149 */
    {2.8e-45f, "3e-45"},                   /* 2 * 2^-149 */
    {1.1754942e-38f, "1.1754942e-38"},     /* largest subnormal */
    {33554432.0f, "33554432"},             /* 2^25: asymmetric interval */
    {7.038531e-26f, "7.038531e-26"},
    {1.00000012f, "1.0000001"},            /* 1 + ulp */
    {0.99999994f, "0.99999994"},           /* 1 - ulp/2 */
};

START_TEST(test_f32_golden) {
  for (size_t i = 0; i < sizeof f32_golden / sizeof f32_golden[0]; i++) {
    char out[SK_NUMFMT_F32_MAX + 1];
    const size_t len = sk_numfmt_f32(f32_golden[i].v, out);
    ck_assert_msg(strcmp(out, f32_golden[i].text) == 0, "%a: got \"%s\", want \"%s\"",
                  (double)f32_golden[i].v, out, f32_golden[i].text);
    ck_assert_uint_eq(len, strlen(f32_golden[i].text));
  }
}
END_TEST

static const struct {
  double v;
  const char *text;
} f64_golden[] = {
    {0.0, "0"},
    {-0.0, "-0"},
    {1.0, "1"},
    {0.1, "0.1"},
    {0.1 + 0.2, "0.30000000000000004"},
    {1.0 / 3.0, "0.3333333333333333"},
    {(double)0.1f, "0.10000000149011612"}, /* a Float32Array element in JS */
    {DBL_MAX, "1.7976931348623157e+308"},
    {DBL_MIN, "2.2250738585072014e-308"},
    {5e-324, "5e-324"},
    {9007199254740992.0, "9007199254740992"},
    {1234567890123456789.0, "1.2345678901234568e+18"},
    {1e20, "1e+20"},
    {1e21, "1e+21"},
    {1e23, "1e+23"},
    {123e-20, "1.23e-18"},
    {0.000001, "0.000001"},
    {1.2345678901234567e-6, "0.0000012345678901234567"}, /* widest output */
    {1e-7, "1e-7"},
    {-1.5, "-1.5"},
    {2.0, "2"},
    {1e100, "1e+100"},
};

START_TEST(test_f64_golden) {
  for (size_t i = 0; i < sizeof f64_golden / sizeof f64_golden[0]; i++) {
    char out[SK_NUMFMT_F64_MAX + 1];
    const size_t len = sk_numfmt_f64(f64_golden[i].v, out);
    ck_assert_msg(strcmp(out, f64_golden[i].text) == 0, "%a: got \"%s\", want \"%s\"",
                  f64_golden[i].v, out, f64_golden[i].text);
    ck_assert_uint_eq(len, strlen(f64_golden[i].text));
  }
}
END_TEST

START_TEST(test_integers_plain_up_to_18_digits) {
  /* Every power of ten prints plainly up to 1e17 and in exponent form from
   * 1e18 on: a 19-digit integer literal can exceed 2^63, which jansson
   * rejects, and skinner's output must read back through its own parser. */
  char out[SK_NUMFMT_F64_MAX + 1], expect[32];
  for (int e = 0; e <= 17; e++) {
    expect[0] = '1';
    memset(expect + 1, '0', (size_t)e);
    expect[e + 1] = '\0';
    sk_numfmt_f64(pow(10.0, e), out);
    ck_assert_str_eq(out, expect);
    sk_numfmt_f32((float)pow(10.0, e), out);
    ck_assert_str_eq(out, expect);
  }
  sk_numfmt_f64(1e18, out);
  ck_assert_str_eq(out, "1e+18");
  sk_numfmt_f64(1e21, out);
  ck_assert_str_eq(out, "1e+21");
  sk_numfmt_f32(1e21f, out);
  ck_assert_str_eq(out, "1e+21");
  /* The values the fuzzer found: between 2^63 and 1e21 they read back. */
  const float big[] = {-1.6836672e20f, 9.3e18f, 1.8446744e19f};
  for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
    sk_numfmt_f32(big[i], out);
    json_t *j = json_loads(out, JSON_DECODE_ANY, NULL);
    ck_assert_msg(j != NULL && json_is_real(j) && (float)json_real_value(j) == big[i], "%s does not read back", out);
    json_decref(j);
  }
  /* Integers up to 2^24 are exact floats and print as themselves. */
  for (uint32_t i = 0; i <= (UINT32_C(1) << 24); i += 9973) {
    snprintf(expect, sizeof expect, "%u", (unsigned)i);
    sk_numfmt_f32((float)i, out);
    ck_assert_str_eq(out, expect);
  }
}
END_TEST

START_TEST(test_non_finite_is_null) {
  char out[SK_NUMFMT_F64_MAX + 1];
  const float f32[] = {INFINITY, -INFINITY, NAN, -NAN};
  for (size_t i = 0; i < 4; i++) {
    ck_assert_uint_eq(sk_numfmt_f32(f32[i], out), 4);
    ck_assert_str_eq(out, "null");
  }
  const double f64[] = {INFINITY, -INFINITY, NAN, -NAN};
  for (size_t i = 0; i < 4; i++) {
    ck_assert_uint_eq(sk_numfmt_f64(f64[i], out), 4);
    ck_assert_str_eq(out, "null");
  }
}
END_TEST

/* ---- roundtrip ---------------------------------------------------------- */

/* The 2^32 patterns are split into slices (one loop-test index each) so a
 * failure names its slice. An odd stride visits every exponent with varying
 * low mantissa bits; 2^32 / 199 = 21.6 million patterns in total, of which
 * every 97th also goes through the (slow) printf shortness reference. */
#define F32_SLICES 8
#define F32_STRIDE 199
#define F32_FULL_EVERY 97

START_TEST(test_f32_stride_all_patterns) {
  const uint64_t slice = (UINT64_C(1) << 32) / F32_SLICES;
  const uint64_t lo = slice * (uint64_t)_i, hi = lo + slice;
  uint64_t visited = 0;
  /* Continue the global stride sequence so slices do not all start at 0 mod 199. */
  uint64_t b = lo + (F32_STRIDE - lo % F32_STRIDE) % F32_STRIDE;
  for (; b < hi; b += F32_STRIDE) {
    const uint32_t bits = (uint32_t)b;
    if (((bits >> 23) & 0xff) == 0xff) continue; /* NaN, Inf: covered by golden */
    check_f32(bits, visited % F32_FULL_EVERY == 0);
    visited++;
  }
  ck_assert_uint_gt(visited, 2000000);
}
END_TEST

START_TEST(test_f32_edges) {
  /* Both neighbours of every power of two (where the rounding interval is
   * asymmetric), and the ends of the subnormal range, with the full check. */
  for (uint32_t e = 0; e < 255; e++) {
    for (int32_t d = -2; d <= 2; d++) {
      const uint32_t bits = (e << 23) + (uint32_t)d;
      if (((bits >> 23) & 0xff) == 0xff) continue;
      check_f32(bits, 1);
      check_f32(bits | 0x80000000u, 1);
    }
  }
  for (uint32_t m = 1; m < 5000; m++) {
    check_f32(m, 1);
    check_f32(0x00800000u - m, 1);
  }
}
END_TEST

/* Random doubles: raw bit patterns (all exponents), floats widened to double
 * (17-digit outputs), and values near 1 (the daemon's typical magnitudes). */
#define F64_RANDOM 3000000
#define F64_FULL_EVERY 40

START_TEST(test_f64_random) {
  uint64_t state = UINT64_C(0x9E3779B97F4A7C15);
  for (int i = 0; i < F64_RANDOM; i++) {
    uint64_t bits = next_random(&state);
    switch (i % 3) {
    case 1: {
      const double d = (double)bits_to_f32((uint32_t)bits);
      bits = f64_to_bits(d);
      break;
    }
    case 2: /* exponent within 2^-32..2^31 */
      bits = (bits & UINT64_C(0x800FFFFFFFFFFFFF)) |
             ((uint64_t)(1023 - 32 + (int)((bits >> 52) & 63)) << 52);
      break;
    default:
      break;
    }
    if (((bits >> 52) & 0x7ff) == 0x7ff) continue;
    check_f64(bits, i % F64_FULL_EVERY == 0);
  }
}
END_TEST

START_TEST(test_f64_edges) {
  for (uint64_t e = 0; e < 2047; e++) {
    for (int64_t d = -2; d <= 2; d++) {
      const uint64_t bits = (e << 52) + (uint64_t)d;
      if (((bits >> 52) & 0x7ff) == 0x7ff) continue;
      check_f64(bits, 1);
    }
  }
  /* Integers around 2^53 (end of the exact-integer fast path). */
  for (int64_t d = -1000; d <= 1000; d++) {
    check_f64(f64_to_bits(9007199254740992.0 + (double)d), 1);
  }
}
END_TEST

/* ---- strbuf ------------------------------------------------------------- */

START_TEST(test_strbuf_failure_is_sticky) {
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_strbuf_append(&b, "[1]", 3), 0);
  /* An impossible size fails without touching the contents... */
  ck_assert_int_eq(sk_strbuf_reserve(&b, SIZE_MAX), SK_ENOMEM);
  ck_assert_int_ne(b.failed, 0);
  ck_assert_str_eq(b.data, "[1]");
  /* ...and every later append fails too, so one check at the end suffices. */
  ck_assert_int_eq(sk_strbuf_append(&b, "x", 1), SK_ENOMEM);
  const float v[] = {1.0f};
  ck_assert_int_eq(sk_strbuf_append_f32_array(&b, v, 1), SK_ENOMEM);
  ck_assert_uint_eq(b.len, 3);
  ck_assert_str_eq(b.data, "[1]");
  sk_strbuf_free(&b);
  ck_assert_int_eq(b.failed, 0);
  ck_assert_int_eq(sk_strbuf_append(&b, "ok", 2), 0);
  sk_strbuf_free(&b);
}
END_TEST

START_TEST(test_strbuf_f32_array_small) {
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_strbuf_append_f32_array(&b, NULL, 0), 0);
  ck_assert_str_eq(b.data, "[]");
  const float v[] = {1.0f, 0.5f, -0.0f, NAN, 1e-7f, 1e21f, 0.1f, -INFINITY};
  ck_assert_int_eq(sk_strbuf_append(&b, ",", 1), 0);
  ck_assert_int_eq(sk_strbuf_append_f32_array(&b, v, 8), 0);
  ck_assert_str_eq(b.data, "[],[1,0.5,-0,null,1e-7,1e+21,0.1,null]");
  ck_assert_uint_eq(b.len, strlen(b.data));
  sk_strbuf_free(&b);
}
END_TEST

/* The per-element text joined by commas: what every array writer owes.
 * (Plain checks in these loops: each ck_assert writes its location to
 * Check's log file, which cost more than everything else here.) */
static void want_array(sk_strbuf *want, const float *v, size_t n) {
  int rc = sk_strbuf_append(want, "[", 1);
  for (size_t i = 0; i < n; i++) {
    char one[SK_NUMFMT_F32_MAX + 1];
    const size_t len = sk_numfmt_f32(v[i], one);
    if (i > 0) rc |= sk_strbuf_append(want, ",", 1);
    rc |= sk_strbuf_append(want, one, len);
  }
  rc |= sk_strbuf_append(want, "]", 1);
  if (rc != 0) ck_abort_msg("out of memory");
}

START_TEST(test_strbuf_f32_array_large) {
  /* Spans several internal chunks; must equal the per-element formatting
   * joined by commas, and parse back to the same floats. */
  enum { N = 10007 };
  float *v = malloc(N * sizeof *v);
  ck_assert_ptr_nonnull(v);
  uint64_t state = 42;
  for (int i = 0; i < N; i++) {
    v[i] = bits_to_f32((uint32_t)next_random(&state) & 0xbfffffffu); /* no NaN/Inf */
  }
  sk_strbuf got = {0}, want = {0};
  ck_assert_int_eq(sk_strbuf_append(&got, "x", 1), 0);
  ck_assert_int_eq(sk_strbuf_append_f32_array(&got, v, N), 0);
  ck_assert_int_eq(sk_strbuf_append(&want, "x", 1), 0);
  want_array(&want, v, N);
  ck_assert_uint_eq(got.len, want.len);
  ck_assert(strcmp(got.data, want.data) == 0);

  const char *p = got.data + 2;
  for (int i = 0; i < N; i++) {
    char *end;
    const float back = strtof(p, &end);
    ck_assert_uint_eq(f32_to_bits(back), f32_to_bits(v[i]));
    ck_assert_int_eq(*end, i + 1 < N ? ',' : ']');
    p = end + 1;
  }
  sk_strbuf_free(&got);
  sk_strbuf_free(&want);
  free(v);
}
END_TEST

/* ---- the array writers: every implementation, byte for byte ------------ */

static const char *const ARRAY_ISAS[] = {"generic", "avx512", "avx2"};

/* Each writer this CPU has must print exactly want_array's bytes. Returns
 * how many writers ran. The buffers are the caller's, reused (emptied
 * here): growing fresh ones for every array costs more than the check. */
static int check_array_writers(sk_strbuf *want, sk_strbuf *got, const float *v, size_t n) {
  want->len = 0;
  want_array(want, v, n);
  int ran = 0;
  for (size_t w = 0; w < sizeof ARRAY_ISAS / sizeof ARRAY_ISAS[0]; w++) {
    got->len = 0;
    if (got->data != NULL) memset(got->data, '#', got->cap); /* no stale bytes pass for output */
    const int rc = sk_strbuf_append_f32_array_on(ARRAY_ISAS[w], got, v, n);
    if (rc == -1) continue; /* not on this CPU */
    if (rc != 0) ck_abort_msg("%s writer: %d", ARRAY_ISAS[w], rc);
    ran++;
    if (got->len != want->len || memcmp(got->data, want->data, want->len) != 0) {
      size_t at = 0;
      while (at < got->len && at < want->len && got->data[at] == want->data[at]) at++;
      const size_t from = at > 40 ? at - 40 : 0;
      ck_abort_msg("%s writer differs at byte %zu: got ...%.60s want ...%.60s", ARRAY_ISAS[w], at,
                   got->data + from, want->data + from);
    }
  }
  return ran;
}

#define ARRAY_SLICES 8
#define ARRAY_STRIDE 251

/* A stride over all 2^32 patterns (NaN and infinities included), in arrays
 * of 4099 floats so every tail length and block position comes up. */
START_TEST(test_array_writers_stride) {
  enum { N = 4099 };
  static float v[N];
  const uint64_t slice = (UINT64_C(1) << 32) / ARRAY_SLICES;
  const uint64_t lo = slice * (uint64_t)_i, hi = lo + slice;
  uint64_t b = lo + (ARRAY_STRIDE - lo % ARRAY_STRIDE) % ARRAY_STRIDE;
  int ran = 0;
  sk_strbuf want = {0}, got = {0};
  while (b < hi) {
    size_t n = 0;
    for (; n < N && b < hi; n++, b += ARRAY_STRIDE) v[n] = bits_to_f32((uint32_t)b);
    ran = check_array_writers(&want, &got, v, n);
  }
  sk_strbuf_free(&want);
  sk_strbuf_free(&got);
  if (ran < 3) printf("note: this CPU lacks AVX-512 (F, BW, DQ, CD) or AVX2; %d of the 3 array writers ran\n", ran);
}
END_TEST

/* Texts of every layout and length next to each other: the vector writer
 * lays out 8 at a time and sends blocks with a long text or a non-finite
 * value the scalar way. */
START_TEST(test_array_writers_layouts) {
  static const float cases[] = {
      0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -2.5f, 10.0f, 100.0f, 1e8f, 16777216.0f, 123456792.0f,
      1e16f, 1e17f, -1e17f, 1e18f, 1e19f, 3.4028235e38f, -3.4028235e38f, 1e-45f, -1e-45f, 1.17549435e-38f,
      0.1f, 0.01f, 0.001f, 1e-4f, 1e-5f, 1e-6f, 1e-7f, 1.2345678e-6f, -1.2345678e-6f, 1.23456791e-6f,
      -1.23456791e-6f, 0.123456791f, -0.99999994f, 0.70710677f, 2.1695181e-9f, -4.376154e-8f, 1.5e-10f,
      9.999999e-7f, 123.456f, -98765.43f, 1234567.9f, 12345679.0f, 1.5e21f, 7e22f, -4.2e-20f, NAN,
      INFINITY, -INFINITY, 33554432.0f, 4.5035996e15f, 9.223372e18f,
  };
  const size_t nc = sizeof cases / sizeof cases[0];
  float v[64];
  sk_strbuf want = {0}, got = {0};
  /* Every case at every block position, next to every other case. */
  for (size_t a = 0; a < nc; a++)
    for (size_t c = 0; c < nc; c++) {
      for (size_t i = 0; i < 17; i++) v[i] = i % 3 == 0 ? cases[a] : cases[(c + i) % nc];
      check_array_writers(&want, &got, v, 17);
    }
  /* Every count from 0 to 64: tails of each length. */
  for (size_t n = 0; n <= 64; n++) {
    for (size_t i = 0; i < n; i++) v[i] = cases[(i * 7 + n) % nc];
    check_array_writers(&want, &got, v, n);
  }
  sk_strbuf_free(&want);
  sk_strbuf_free(&got);
}
END_TEST

/* ---- reference text ----------------------------------------------------- */

/* An array printed against a reference text must come out byte for byte as
 * printed without it, whichever groups match: equal ones are copied, the
 * others printed; -0 against 0 and NaN payloads are different bits. */
START_TEST(test_f32_text_reference) {
  enum { G = 16, GROUPS = 67, N = G * GROUPS };
  static float base[N], v[N];
  uint64_t state = 7;
  for (int i = 0; i < N; i++) {
    const uint32_t r = (uint32_t)next_random(&state);
    base[i] = (i % 5 == 0) ? (float)(r % 3) : bits_to_f32(r & 0xbfffffffu);
  }
  base[3] = 0.0f;
  sk_f32_text t;
  ck_assert_int_eq(sk_f32_text_build(&t, base, N, G), 0);
  ck_assert_uint_gt(sk_f32_text_bytes(&t), (size_t)N);
  sk_strbuf want = {0}, got = {0};
  for (int round = 0; round < 40; round++) {
    memcpy(v, base, sizeof v);
    /* Round 0: all equal; then a growing share of groups changed. */
    for (int g = 0; g < GROUPS; g++) {
      if (round == 0 || (int)(next_random(&state) % 40) >= round) continue;
      const int at = g * G + (int)(next_random(&state) % G);
      switch (round % 4) {
      case 0: v[at] = bits_to_f32((uint32_t)next_random(&state)); break;          /* anything, NaN too */
      case 1: v[at] = v[at] == 0.0f ? -0.0f : -v[at]; break;                      /* sign only */
      case 2: v[at] = bits_to_f32(f32_to_bits(v[at]) ^ 1u); break;                /* one ulp */
      default: v[at] = NAN; break;
      }
    }
    want.len = 0;
    ck_assert_int_eq(sk_strbuf_append_f32_array_on("generic", &want, v, N), 0);
    got.len = 0;
    if (got.data != NULL) memset(got.data, '#', got.cap);
    ck_assert_int_eq(sk_strbuf_append_f32_array_ref(&got, v, N, &t), 0);
    ck_assert_uint_eq(got.len, want.len);
    ck_assert_msg(memcmp(got.data, want.data, want.len) == 0, "round %d differs", round);
  }
  /* A reference for another count is not used; nor an empty one. */
  got.len = 0;
  ck_assert_int_eq(sk_strbuf_append_f32_array_ref(&got, v, N - G, &t), 0);
  want.len = 0;
  ck_assert_int_eq(sk_strbuf_append_f32_array_on("generic", &want, v, N - G), 0);
  ck_assert_str_eq(got.data, want.data);
  sk_f32_text empty = {0};
  got.len = 0;
  ck_assert_int_eq(sk_strbuf_append_f32_array_ref(&got, v, 0, &empty), 0);
  ck_assert_str_eq(got.data, "[]");
  sk_f32_text_free(&t);
  ck_assert_uint_eq(sk_f32_text_bytes(&t), 0);
  ck_assert_int_eq(sk_f32_text_build(&t, base, N - 1, G), SK_EINVAL);
  ck_assert_int_eq(sk_f32_text_build(&t, base, N, 0), SK_EINVAL);
  sk_strbuf_free(&want);
  sk_strbuf_free(&got);
}
END_TEST

/* ---- the bytes of every writer, pinned ----------------------------------- */

/* A hash of the text the array writers print for a stride over all 2^32
 * float32 patterns (NaN and infinities included): 2^32 / 17 = 253 million
 * floats, in arrays of 4099 so every block position comes up, hashed per
 * slice. The constants are the hashes of the printer as it was before the
 * faster one (commit 930c12d): any change of any byte of any of these
 * texts changes them. tests/bench/numfmt_exhaustive.c --against checks all
 * 2^32 patterns against an older build of sk_numfmt.c. */
#define PIN_SLICES 8
#define PIN_STRIDE 17

static uint64_t pin_hash(uint64_t h, const char *p, size_t n) {
  /* 8 bytes a step: fast enough for ~2 GB of text per run. */
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * UINT64_C(0x100000001b3);
    h ^= h >> 29;
  }
  for (; i < n; i++) h = (h ^ (unsigned char)p[i]) * UINT64_C(0x100000001b3);
  return (h ^ n) * UINT64_C(0x9E3779B97F4A7C15);
}

static uint64_t pin_slice(const char *isa, int slice_index) {
  enum { N = 4099 };
  static float v[N];
  const uint64_t slice = (UINT64_C(1) << 32) / PIN_SLICES;
  const uint64_t lo = slice * (uint64_t)slice_index, hi = lo + slice;
  uint64_t b = lo + (PIN_STRIDE - lo % PIN_STRIDE) % PIN_STRIDE;
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  sk_strbuf t = {0};
  while (b < hi) {
    size_t n = 0;
    for (; n < N && b < hi; n++, b += PIN_STRIDE) v[n] = bits_to_f32((uint32_t)b);
    t.len = 0;
    ck_assert_int_eq(sk_strbuf_append_f32_array_on(isa, &t, v, n), 0);
    h = pin_hash(h, t.data, t.len);
  }
  sk_strbuf_free(&t);
  return h;
}

static const uint64_t pin_f32[PIN_SLICES] = {
    UINT64_C(0x4c627eb31e94939e),
    UINT64_C(0x14095b9b08c3cea7),
    UINT64_C(0x7f31c742cf5bfd05),
    UINT64_C(0x81120654f5aaa90f),
    UINT64_C(0x3cfda254fb406266),
    UINT64_C(0x1113673c2d43467f),
    UINT64_C(0x05577f516c340176),
    UINT64_C(0x88dc9575251b2ed7),
};

START_TEST(test_f32_bytes_pinned) {
  /* The fastest writer this CPU has (the one answers use); the others it
   * has as well, every other slice: the generic one on even slices, the
   * AVX2 one on odd slices when AVX-512 is the fastest. */
  sk_strbuf probe = {0};
  const int v512 = sk_strbuf_append_f32_array_on("avx512", &probe, NULL, 0) == 0;
  const int v2 = sk_strbuf_append_f32_array_on("avx2", &probe, NULL, 0) == 0;
  sk_strbuf_free(&probe);
  const char *fastest = v512 ? "avx512" : v2 ? "avx2" : "generic";
  const uint64_t h = pin_slice(fastest, _i);
  if (getenv("SK_PIN_PRINT") != NULL) printf("slice %d: UINT64_C(0x%016llx)\n", _i, (unsigned long long)h);
  ck_assert_msg(h == pin_f32[_i], "slice %d of the float32 texts changed (%s writer): hash 0x%016llx", _i, fastest,
                (unsigned long long)h);
  if ((v512 || v2) && _i % 2 == 0) ck_assert_msg(pin_slice("generic", _i) == pin_f32[_i], "slice %d, generic writer", _i);
  if (v512 && v2 && _i % 2 == 1) ck_assert_msg(pin_slice("avx2", _i) == pin_f32[_i], "slice %d, AVX2 writer", _i);
}
END_TEST

/* Doubles: 4 million random bit patterns (finite and not) and 4 million
 * doubles widened from random floats, through sk_numfmt_f64. */
START_TEST(test_f64_bytes_pinned) {
  uint64_t state = UINT64_C(0x853c49e6748fea9b), h = UINT64_C(0xcbf29ce484222325);
  char out[SK_NUMFMT_F64_MAX + 1];
  for (int i = 0; i < 8000000; i++) {
    const uint64_t r = next_random(&state);
    double d;
    if (i % 2 == 0) {
      memcpy(&d, &r, sizeof d);
    } else {
      d = (double)bits_to_f32((uint32_t)r);
    }
    const size_t n = sk_numfmt_f64(d, out);
    h = pin_hash(h, out, n);
  }
  if (getenv("SK_PIN_PRINT") != NULL) printf("f64: UINT64_C(0x%016llx)\n", (unsigned long long)h);
  ck_assert_msg(h == UINT64_C(0x67d3a219a2bae00e), "the double texts changed: hash 0x%016llx", (unsigned long long)h);
}
END_TEST

/* ---- suite -------------------------------------------------------------- */

static Suite *numfmt_suite(void) {
  Suite *s = suite_create("sk_numfmt");

  TCase *golden = tcase_create("golden");
  tcase_add_test(golden, test_f32_golden);
  tcase_add_test(golden, test_f64_golden);
  tcase_add_test(golden, test_integers_plain_up_to_18_digits);
  tcase_add_test(golden, test_non_finite_is_null);
  suite_add_tcase(s, golden);

  TCase *roundtrip = tcase_create("roundtrip");
  /* ~1-2 s per slice on one core; generous for sanitizer builds. */
  tcase_set_timeout(roundtrip, 120);
  tcase_add_loop_test(roundtrip, test_f32_stride_all_patterns, 0, F32_SLICES);
  tcase_add_test(roundtrip, test_f32_edges);
  tcase_add_test(roundtrip, test_f64_random);
  tcase_add_test(roundtrip, test_f64_edges);
  suite_add_tcase(s, roundtrip);

  TCase *strbuf = tcase_create("strbuf");
  tcase_add_test(strbuf, test_strbuf_failure_is_sticky);
  tcase_add_test(strbuf, test_strbuf_f32_array_small);
  tcase_add_test(strbuf, test_strbuf_f32_array_large);
  suite_add_tcase(s, strbuf);

  TCase *writers = tcase_create("array_writers");
  tcase_set_timeout(writers, 120);
  tcase_add_loop_test(writers, test_array_writers_stride, 0, ARRAY_SLICES);
  tcase_add_test(writers, test_array_writers_layouts);
  tcase_add_test(writers, test_f32_text_reference);
  suite_add_tcase(s, writers);

  TCase *pinned = tcase_create("pinned");
  /* ~3 s per slice with AVX-512 (~5 s without); generous for sanitizers. */
  tcase_set_timeout(pinned, 300);
  tcase_add_loop_test(pinned, test_f32_bytes_pinned, 0, PIN_SLICES);
  tcase_add_test(pinned, test_f64_bytes_pinned);
  suite_add_tcase(s, pinned);

  return s;
}

int main(void) {
  SRunner *runner = srunner_create(numfmt_suite());
  srunner_run_all(runner, CK_NORMAL);
  const int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
