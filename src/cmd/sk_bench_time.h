/* What the benchmarks (sk_bench.c, sk_bench_clips.c, sk_bench_ops.c) share:
 * the process's CPU clock (all threads; on a shared machine it leaves out
 * the time other processes had the core) and a comparator for medians. */
#ifndef SK_BENCH_TIME_H
#define SK_BENCH_TIME_H

#include <time.h>

static inline double sk_bench_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* qsort comparator of doubles, ascending. */
static inline int sk_bench_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#endif
