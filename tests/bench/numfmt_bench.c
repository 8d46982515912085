/* Micro-benchmark: sk_numfmt_f32 against snprintf("%.9g") on 1M float32
 * values shaped like bone matrices (rotation/scale in [-1, 1], translations
 * in [-100, 100], a 0 0 0 1 last row). One timed pass each, after one
 * untimed warm-up pass; prints ns per float and the ratio.
 *
 * With a file argument (raw little-endian float32, e.g. a binary pose answer
 * from skinnerd), it also times printing exactly that array into a reused
 * buffer, as the daemon does for each JSON answer.
 *
 * Not a test. Build and run (from the repository root):
 *   gcc -std=c11 -O2 -Isrc/base src/base/sk_numfmt.c src/base/sk_numfmt_avx2.c src/base/sk_numfmt_f64.c \
 *       src/base/sk_cpu.c src/base/sk_buf.c tests/bench/numfmt_bench.c \
 *       -o /tmp/numfmt_bench && /tmp/numfmt_bench [answer.f32] */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sk_numfmt.h"

#define COUNT (1u << 20)

static uint64_t next_random(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  *state = x;
  return x;
}

/* Uniform in [lo, hi). */
static float uniform(uint64_t *state, float lo, float hi) {
  const double u = (double)(next_random(state) >> 11) * (1.0 / 9007199254740992.0);
  return (float)(lo + (hi - lo) * u);
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Column-major 4x4: elements 12..14 are the translation. */
static void fill_matrices(float *v, size_t count) {
  uint64_t state = UINT64_C(0x2545F4914F6CDD1D);
  for (size_t i = 0; i < count; i++) {
    const size_t e = i % 16;
    if (e == 3 || e == 7 || e == 11) {
      v[i] = 0.0f;
    } else if (e == 15) {
      v[i] = 1.0f;
    } else if (e >= 12) {
      v[i] = uniform(&state, -100.0f, 100.0f);
    } else {
      v[i] = uniform(&state, -1.0f, 1.0f);
    }
  }
}

/* Both loops write into one scratch line and fold the bytes into a checksum
 * so the compiler cannot drop the work. */
static double time_numfmt(const float *v, size_t count, size_t *bytes, unsigned *sum) {
  char out[SK_NUMFMT_F32_MAX + 1];
  size_t total = 0;
  unsigned s = 0;
  const double t0 = now_ns();
  for (size_t i = 0; i < count; i++) {
    const size_t n = sk_numfmt_f32(v[i], out);
    total += n;
    s += (unsigned char)out[n - 1];
  }
  const double t1 = now_ns();
  *bytes = total;
  *sum = s;
  return (t1 - t0) / (double)count;
}

static double time_snprintf(const float *v, size_t count, size_t *bytes, unsigned *sum) {
  char out[32];
  size_t total = 0;
  unsigned s = 0;
  const double t0 = now_ns();
  for (size_t i = 0; i < count; i++) {
    const int n = snprintf(out, sizeof out, "%.9g", (double)v[i]);
    total += (size_t)n;
    s += (unsigned char)out[n - 1];
  }
  const double t1 = now_ns();
  *bytes = total;
  *sum = s;
  return (t1 - t0) / (double)count;
}

/* What a JSON answer does: append the whole array to a buffer. The buffer
 * is grown and faulted in by an untimed first pass, as a server's reused
 * answer buffer would be; the median of 5 passes is reported. */
static double time_array(const float *v, size_t count, size_t *bytes) {
  sk_strbuf b = {0};
  double t[5];
  for (int pass = -1; pass < 5; pass++) {
    b.len = 0;
    const double t0 = now_ns();
    const int rc = sk_strbuf_append_f32_array(&b, v, count);
    const double t1 = now_ns();
    if (rc != 0) {
      fprintf(stderr, "sk_strbuf_append_f32_array failed: %d\n", rc);
      exit(1);
    }
    if (pass >= 0)
      t[pass] = (t1 - t0) / (double)count;
  }
  *bytes = b.len;
  sk_strbuf_free(&b);
  for (int i = 1; i < 5; i++) /* insertion sort: the median of five */
    for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
      const double x = t[j];
      t[j] = t[j - 1];
      t[j - 1] = x;
    }
  return t[2];
}

/* One answer printed over and over into a reused buffer; the median of 5
 * passes of `reps` answers each, in ns per float. */
static double time_answer(const char *isa, const float *v, size_t count, size_t *bytes) {
  sk_strbuf b = {0};
  const int reps = (int)(2000000 / count) + 1;
  double t[5];
  for (int pass = -1; pass < 5; pass++) {
    const double t0 = now_ns();
    for (int r = 0; r < reps; r++) {
      b.len = 0;
      if (sk_strbuf_append_f32_array_on(isa, &b, v, count) != 0) {
        fprintf(stderr, "sk_strbuf_append_f32_array_on(%s) failed\n", isa);
        exit(1);
      }
    }
    const double t1 = now_ns();
    if (pass >= 0)
      t[pass] = (t1 - t0) / (double)count / reps;
  }
  *bytes = b.len;
  sk_strbuf_free(&b);
  for (int i = 1; i < 5; i++)
    for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
      const double x = t[j];
      t[j] = t[j - 1];
      t[j - 1] = x;
    }
  return t[2];
}

int main(int argc, char **argv) {
  if (argc > 1) {
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
      perror(argv[1]);
      return 1;
    }
    static float answer[1 << 20];
    const size_t n = fread(answer, sizeof answer[0], sizeof answer / sizeof answer[0], f);
    fclose(f);
    if (n == 0) {
      fprintf(stderr, "%s: no floats\n", argv[1]);
      return 1;
    }
    static const char *const isas[] = {"generic", "avx2", "avx512"};
    for (int i = 0; i < 3; i++) {
      size_t bytes;
      sk_strbuf probe = {0};
      const int have = sk_strbuf_append_f32_array_on(isas[i], &probe, answer, 0) == 0;
      sk_strbuf_free(&probe);
      if (!have) continue;
      const double ns = time_answer(isas[i], answer, n, &bytes);
      printf("%s, %-7s: %zu floats, %zu bytes as a JSON array: %.2f ns/float, %.2f us per answer\n", argv[1],
             isas[i], n, bytes, ns, ns * (double)n / 1000.0);
    }
  }
  float *v = malloc(COUNT * sizeof *v);
  if (v == NULL) return 1;
  fill_matrices(v, COUNT);

  size_t bytes_fast, bytes_printf, bytes_array;
  unsigned sum_fast, sum_printf;
  (void)time_numfmt(v, COUNT, &bytes_fast, &sum_fast); /* warm caches, tables */
  (void)time_snprintf(v, COUNT, &bytes_printf, &sum_printf);
  const double ns_fast = time_numfmt(v, COUNT, &bytes_fast, &sum_fast);
  const double ns_printf = time_snprintf(v, COUNT, &bytes_printf, &sum_printf);
  const double ns_array = time_array(v, COUNT, &bytes_array);

  printf("floats: %u (matrix-like), checksums %u/%u\n", COUNT, sum_fast, sum_printf);
  printf("sk_numfmt_f32               %7.2f ns/float  %5.2f bytes/float\n", ns_fast,
         (double)bytes_fast / COUNT);
  printf("snprintf(\"%%.9g\")            %7.2f ns/float  %5.2f bytes/float\n", ns_printf,
         (double)bytes_printf / COUNT);
  printf("sk_strbuf_append_f32_array  %7.2f ns/float  %5.2f bytes/float (with commas)\n",
         ns_array, (double)bytes_array / COUNT);
  printf("speedup sk_numfmt_f32 vs snprintf: %.1fx\n", ns_printf / ns_fast);
  free(v);
  return 0;
}
