/* Every float32 bit pattern through every array writer this CPU has: the
 * AVX-512 and AVX2 writers must print exactly the bytes of the one-at-a-time writer
 * (which tests/check_sk_numfmt.c checks against strtof and printf). Not a
 * test (about 70 s per 2^31 patterns here); run it after changing either
 * writer. Takes a range of patterns, so two halves can run on two cores:
 *
 *   gcc -std=c11 -O2 -Isrc/base src/base/sk_numfmt.c src/base/sk_numfmt_avx2.c src/base/sk_numfmt_f64.c src/base/sk_buf.c \
 *       src/base/sk_cpu.c tests/bench/numfmt_exhaustive.c -o /tmp/numfmt_exhaustive
 *   /tmp/numfmt_exhaustive 0 0x80000000 & /tmp/numfmt_exhaustive 0x80000000 0x100000000
 *
 * Built with -DSK_EXH_AGAINST and an older sk_numfmt.c compiled with its
 * symbols prefixed old_ (tests/bench/numfmt_against.sh does both), it
 * checks instead that each writer of this build prints the bytes of the
 * older build's generic writer: byte identity with a past printer on all
 * 2^32 patterns.
 *
 * Prints the first differing patterns and exits 1 if any differ, 2 if this
 * CPU has neither vector writer (without SK_EXH_AGAINST). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_numfmt.h"

#ifdef SK_EXH_AGAINST
int old_sk_strbuf_append_f32_array_on(const char *isa, sk_strbuf *b, const float *v, size_t count);
#define REF_WRITER(b, v, n) old_sk_strbuf_append_f32_array_on("generic", b, v, n)
#else
#define REF_WRITER(b, v, n) sk_strbuf_append_f32_array_on("generic", b, v, n)
#endif

/* Pattern by pattern (in a block of 8, so the vector path runs): prints
 * the differing ones. */
static uint64_t culprits(const char *isa, const float *v, size_t n, uint64_t bad) {
  for (size_t i = 0; i < n; i++) {
    float eight[8];
    for (int j = 0; j < 8; j++) eight[j] = v[i];
    sk_strbuf a = {0}, b = {0};
    REF_WRITER(&a, eight, 8);
    sk_strbuf_append_f32_array_on(isa, &b, eight, 8);
    if (a.data != NULL && b.data != NULL && strcmp(a.data, b.data) != 0) {
      uint32_t bits;
      memcpy(&bits, &v[i], sizeof bits);
      if (bad < 20) printf("0x%08x: %s: %s against %s\n", (unsigned)bits, isa, b.data, a.data);
      bad++;
    }
    sk_strbuf_free(&a);
    sk_strbuf_free(&b);
  }
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s FIRST END [STRIDE]   (bit patterns FIRST..END-1)\n", argv[0]);
    return 2;
  }
  const uint64_t lo = strtoull(argv[1], NULL, 0), hi = strtoull(argv[2], NULL, 0);
  const uint64_t stride = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
  enum { N = 1 << 16 };
  static float v[N];
  sk_strbuf one = {0}, vec = {0};
  /* the writers to check: every vector one this CPU has (and, against an
   * older build, the generic one too) */
#ifdef SK_EXH_AGAINST
  static const char *const all[] = {"generic", "avx512", "avx2"};
#else
  static const char *const all[] = {"avx512", "avx2"};
#endif
  const char *isas[3];
  int nisa = 0;
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
    if (sk_strbuf_append_f32_array_on(all[k], &vec, v, 0) == 0) isas[nisa++] = all[k];
  if (nisa == 0) {
    fprintf(stderr, "this CPU has no vector array writer\n");
    return 2;
  }
  uint64_t checked = 0, bad = 0;
  for (uint64_t x = lo; x < hi && stride > 0;) {
    size_t n = 0;
    for (; n < N && x < hi; n++, x += stride) {
      const uint32_t bits = (uint32_t)x;
      memcpy(&v[n], &bits, sizeof bits);
    }
    one.len = 0;
    if (REF_WRITER(&one, v, n) != 0) {
      fprintf(stderr, "out of memory\n");
      return 2;
    }
    checked += n;
    for (int k = 0; k < nisa; k++) {
      vec.len = 0;
      if (sk_strbuf_append_f32_array_on(isas[k], &vec, v, n) != 0) {
        fprintf(stderr, "out of memory\n");
        return 2;
      }
      if (one.len != vec.len || memcmp(one.data, vec.data, one.len) != 0) bad = culprits(isas[k], v, n, bad);
    }
  }
  printf("checked %llu patterns with %d writer%s, %llu differ\n", (unsigned long long)checked, nisa,
         nisa > 1 ? "s" : "", (unsigned long long)bad);
  sk_strbuf_free(&one);
  sk_strbuf_free(&vec);
  return bad != 0;
}
