/* Small helpers shared by the Check suites. */
#ifndef SK_TESTUTIL_H
#define SK_TESTUTIL_H

#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* check_sk_vsin's loops of random arguments (every SIMD path against the
 * scalar fdlibm) take 1/SK_TEST_RANDOM_DIVISOR of their arguments in a
 * sanitizer build: the same assertions over the same code paths, which add
 * no memory or UB coverage past the first thousands of pure arithmetic
 * calls; under ASan + UBSan the suite took 101 s of CI's run, 7 s now. The
 * plain build (`make check`, `make distcheck`) keeps every argument. */
#if defined(__SANITIZE_ADDRESS__)
#define SK_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SK_TEST_SANITIZED 1
#endif
#endif
#ifndef SK_TEST_SANITIZED
#define SK_TEST_SANITIZED 0
#endif
#define SK_TEST_RANDOM_DIVISOR (SK_TEST_SANITIZED ? 16 : 1)

/* Seconds on the monotonic clock. */
static inline double sk_test_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Path of a file under tests/ (SK_TEST_DATA, set by `make check`). */
static inline const char *sk_test_path(const char *rel, char *buf, size_t cap) {
  const char *dir = getenv("SK_TEST_DATA");
  snprintf(buf, cap, "%s/%s", dir != NULL ? dir : "tests", rel);
  return buf;
}

/* |a - b| <= tol * max(1, max |b|) over one 16-number matrix. */
static inline int sk_test_mat_close(const float *a, const float *b, double tol) {
  double scale = 1;
  for (int i = 0; i < 16; i++)
    if (fabs(b[i]) > scale)
      scale = fabs(b[i]);
  for (int i = 0; i < 16; i++)
    if (!(fabs((double)a[i] - (double)b[i]) <= tol * scale))
      return 0;
  return 1;
}

#define SK_ASSERT_MAT_CLOSE(a, b, tol)                                                                          \
  do {                                                                                                          \
    const float *a_ = (a), *b_ = (b);                                                                           \
    ck_assert_msg(sk_test_mat_close(a_, b_, (tol)),                                                             \
                  "matrices differ:\n got  %g %g %g %g | %g %g %g %g | %g %g %g %g | %g %g %g %g\n want %g %g %g " \
                  "%g | %g %g %g %g | %g %g %g %g | %g %g %g %g",                                               \
                  a_[0], a_[1], a_[2], a_[3], a_[4], a_[5], a_[6], a_[7], a_[8], a_[9], a_[10], a_[11], a_[12],  \
                  a_[13], a_[14], a_[15], b_[0], b_[1], b_[2], b_[3], b_[4], b_[5], b_[6], b_[7], b_[8], b_[9],  \
                  b_[10], b_[11], b_[12], b_[13], b_[14], b_[15]);                                              \
  } while (0)

/* Reads tests/<rel> whole into a new buffer (free()); NULL when absent. */
static inline unsigned char *sk_test_read_file(const char *rel, size_t *len) {
  char path[1024];
  FILE *f = fopen(sk_test_path(rel, path, sizeof path), "rb");
  if (f == NULL)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
  ck_assert_ptr_nonnull(buf);
  ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return buf;
}

/* A glTF test asset: tests/data/<asset> (real files) or
 * tests/data/gltf/<asset> (hand-made). Fails the test when absent. */
static inline unsigned char *sk_test_read_asset(const char *asset, size_t *len) {
  char rel[512];
  snprintf(rel, sizeof rel, "data/%s", asset);
  unsigned char *d = sk_test_read_file(rel, len);
  if (d == NULL) {
    snprintf(rel, sizeof rel, "data/gltf/%s", asset);
    d = sk_test_read_file(rel, len);
  }
  ck_assert_msg(d != NULL, "asset %s not found under tests/data", asset);
  return d;
}

/* Max of |got - want| / max(1, max |want| of that matrix) over n floats
 * (whole 16-number matrices) against a JSON array of expected numbers. */
static inline double sk_test_final_error(const float *got, const json_t *want, size_t n) {
  ck_assert_uint_eq(json_array_size(want), n);
  double worst = 0;
  for (size_t m = 0; m < n; m += 16) {
    double scale = 1;
    for (size_t i = 0; i < 16; i++)
      scale = fmax(scale, fabs(json_number_value(json_array_get(want, m + i))));
    for (size_t i = 0; i < 16; i++) {
      double e = fabs((double)got[m + i] - json_number_value(json_array_get(want, m + i))) / scale;
      if (!(e <= worst))
        worst = isnan(e) ? INFINITY : e;
    }
  }
  return worst;
}

/* Index of the first of n floats whose float32 bits (the sign of zero
 * included) differ from a JSON array of expected numbers read as float32;
 * n when every float is the same. */
static inline size_t sk_test_final_mismatch(const float *got, const json_t *want, size_t n) {
  ck_assert_uint_eq(json_array_size(want), n);
  for (size_t i = 0; i < n; i++) {
    const float w = (float)json_number_value(json_array_get(want, i));
    if (memcmp(&got[i], &w, sizeof w) != 0)
      return i;
  }
  return n;
}

/* A double's bits, and the double of some bits (bit-for-bit checks). */
static inline uint64_t sk_test_bits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static inline double sk_test_from_bits(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

static inline int sk_test_run(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
