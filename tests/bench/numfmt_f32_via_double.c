/* Whether sk_numfmt_f32's shortest text, read as a double (strtod) and
 * rounded to float32, gives back every float32: how USD's text reader (and
 * JavaScript, and Python's struct) reads the floats of `skinner frames
 * --format usda` and of the daemon's JSON. Not a test (all 2^32 patterns
 * take minutes); a stride samples them:
 *
 *   gcc -std=c11 -O2 -Isrc/base src/base/sk_numfmt.c src/base/sk_numfmt_f64.c src/base/sk_buf.c \
 *       src/base/sk_cpu.c src/base/sk_error.c tests/bench/numfmt_f32_via_double.c -o /tmp/f32_via_double -lm
 *   /tmp/f32_via_double 0 0x100000000 61
 *
 * Prints the patterns checked and the first that differ; exits 1 if any. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_numfmt.h"

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s FIRST END STRIDE   (bit patterns FIRST, FIRST+STRIDE, ... below END)\n", argv[0]);
    return 2;
  }
  const uint64_t lo = strtoull(argv[1], NULL, 0), hi = strtoull(argv[2], NULL, 0), st = strtoull(argv[3], NULL, 0);
  uint64_t bad = 0, n = 0;
  char b[SK_NUMFMT_F32_MAX + 1];
  for (uint64_t x = lo; x < hi && st > 0; x += st) {
    const uint32_t u = (uint32_t)x;
    float f;
    memcpy(&f, &u, 4);
    if (!isfinite(f))
      continue;
    sk_numfmt_f32(f, b);
    const float g = (float)strtod(b, NULL);
    uint32_t w;
    memcpy(&w, &g, 4);
    n++;
    if (w != u && bad++ < 5)
      printf("differs: %08x printed %s read back %08x\n", u, b, w);
  }
  printf("checked %llu float32 patterns, %llu differ\n", (unsigned long long)n, (unsigned long long)bad);
  return bad != 0;
}
