/* Micro-benchmark: the exact batch kernel on one rig built as `skinner
 * bench` builds its skeletons (each bone hangs off one of the 4 before it,
 * TRS input in the blocked layout), CPU time per run and a hash of the
 * answers (two builds agree bit for bit when the hashes do). Also the
 * subject of kernel_icount.py, which counts its instructions. Not a test.
 *
 * Build and run (from the build directory, after make):
 *   gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Isrc/base -Isrc/babylon -Isrc/kernel \
 *       tests/bench/kernel_group.c src/.libs/libskcore.a -lm -lpthread -o /tmp/kernel_group
 *   /tmp/kernel_group [bones=65] [poses=64] [cpu seconds=2] [path: avx512|avx2|sse2|scalar]
 * Two builds A/B: build each, then alternate their runs and compare medians. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sk_kernel.h"
#include "sk_mat.h"
#include "sk_skeleton.h"

static uint64_t rng = 0x5EED5EED5EEDull; /* sk_bench.c's xorshift64* and seed */
static double unit(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}
static double range(double lo, double hi) { return lo + (hi - lo) * unit(); }

static void rand_trs(double s[3], double q[4], double t[3]) {
  double n = 0;
  for (int k = 0; k < 4; k++) {
    q[k] = range(-1, 1);
    n += q[k] * q[k];
  }
  n = __builtin_sqrt(n);
  for (int k = 0; k < 4; k++)
    q[k] /= n;
  for (int k = 0; k < 3; k++) {
    s[k] = range(0.9, 1.1);
    t[k] = range(-1, 1);
  }
}

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  const size_t nb = argc > 1 ? (size_t)atoi(argv[1]) : 65, np = argc > 2 ? (size_t)atoi(argv[2]) : 64;
  const double secs = argc > 3 ? atof(argv[3]) : 2;
  sk_bone_desc *d = calloc(nb, sizeof *d);
  char(*names)[24] = calloc(nb, sizeof *names);
  uint8_t *mode = malloc(nb);
  size_t *off = malloc(nb * sizeof *off);
  if (nb < 1 || np < 1 || d == NULL || names == NULL || mode == NULL || off == NULL)
    return 1;
  for (size_t i = 0; i < nb; i++) {
    snprintf(names[i], sizeof names[i], "b%zu", i);
    d[i].name = names[i];
    if (i > 0) {
      const size_t back = 1 + (size_t)(unit() * (i < 4 ? (double)i : 4.0));
      d[i].parent = names[i - (back > i ? i : back)];
    }
    double s[3], q[4], t[3];
    rand_trs(s, q, t);
    sk_mat_compose(s, q, t, d[i].local);
  }
  sk_error e = {0};
  sk_skeleton *sk = NULL;
  sk_rig *rig = NULL;
  if (sk_skeleton_create(d, nb, "/bones", &sk, &e) != 0 || sk_rig_create(sk, &rig) != 0)
    return 1;
  memset(mode, SK_KERNEL_TRS, nb);
  size_t stride, block;
  const size_t floats = sk_kernel_blocked_layout(mode, nb, np, off, &stride, &block);
  float *in = aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64);
  const size_t fl = np * (nb + 1) * 16;
  float *fin = aligned_alloc(64, (fl * sizeof(float) + 63) / 64 * 64);
  if (in == NULL || fin == NULL)
    return 1;
  memset(in, 0, floats * sizeof(float));
  for (size_t b = 0; b < nb; b++)
    for (size_t p = 0; p < (np + 15) / 16 * 16; p++) {
      double s[3], q[4], t[3];
      rand_trs(s, q, t);
      const double v[10] = {t[0], t[1], t[2], q[0], q[1], q[2], q[3], s[0], s[1], s[2]};
      float *x = in + off[b] + p / 16 * block + p % 16;
      for (int k = 0; k < 10; k++)
        x[k * stride] = (float)v[k];
    }
  sk_kernel_job j;
  memset(&j, 0, sizeof j);
  j.rig = rig;
  j.poses = np;
  j.pose_stride = stride;
  j.block_stride = block;
  j.mode = mode;
  j.offset = off;
  j.input = in;
  j.input_floats = floats;
  j.final = fin;
  j.path = argc > 4 ? argv[4] : NULL;
  if (sk_kernel_validate(&j, &e) != 0) {
    fprintf(stderr, "kernel_group: %s\n", e.text);
    return 1;
  }
  sk_kernel_run(&j, 0, np);
  uint64_t h = 1469598103934665603ull; /* FNV-1a over the answers' bits */
  for (size_t i = 0; i < fl; i++) {
    uint32_t u;
    memcpy(&u, &fin[i], sizeof u);
    h = (h ^ u) * 1099511628211ull;
  }
  size_t runs = 0;
  const double t0 = cpu_now();
  double t1;
  do {
    for (int k = 0; k < 16; k++)
      sk_kernel_run(&j, 0, np);
    runs += 16;
    t1 = cpu_now();
  } while (t1 - t0 < secs);
  printf("%.2f M bone matrices/s (CPU time), %s path, %zu x %zu, hash %016llx\n",
         (double)(runs * np * nb) / (t1 - t0) / 1e6, j.path != NULL ? j.path : sk_kernel_path(), nb, np,
         (unsigned long long)h);
  return 0;
}
