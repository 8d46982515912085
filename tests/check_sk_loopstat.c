/* sk_loopstat: a loop iteration's busy time counts, its wait for I/O does
 * not; CPU time tells work from a blocked or preempted thread. */
#include <time.h>

#include "sk_loopstat.h"
#include "sk_testutil.h"

/* Iterations counted above `seconds` (a bucket bound) in clock k. */
static uint64_t over(const sk_metrics *m, int k, double seconds) {
  static const double bounds[SK_METRICS_NBUCKETS - 1] = {SK_METRICS_BOUNDS};
  uint64_t n = 0;
  for (int b = 0; b < SK_METRICS_NBUCKETS; b++)
    if (b == SK_METRICS_NBUCKETS - 1 || bounds[b] > seconds * 1.0000001)
      n += m->loop_buckets[k][b];
  return n;
}

static double now_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
  int left;  /* firings to go */
  int spin;  /* 1: burn 30 ms of CPU; 0: sleep 30 ms */
} job;

static void on_timer(uv_timer_t *t) {
  job *j = t->data;
  if (j->spin > 0) {
    const double until = now_s(CLOCK_THREAD_CPUTIME_ID) + 0.030;
    while (now_s(CLOCK_THREAD_CPUTIME_ID) < until) {
    }
  } else if (j->spin == 0) {
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  if (--j->left == 0)
    uv_timer_stop(t);
}

/* Runs `n` firings of a timer every `every_ms`, the work of `spin` (-1: none)
 * in each, on a fresh loop with a loopstat; the histograms in *m. */
static void run(int n, int spin, uint64_t every_ms, sk_metrics *m) {
  uv_loop_t loop;
  ck_assert_int_eq(uv_loop_init(&loop), 0);
  sk_metrics_init(m);
  sk_loopstat ls = {0};
  ck_assert_int_eq(sk_loopstat_start(&loop, m, &ls), 0);
  uv_timer_t t;
  job j = {n, spin};
  uv_timer_init(&loop, &t);
  t.data = &j;
  uv_timer_start(&t, on_timer, every_ms, every_ms);
  ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0); /* the loopstat does not keep it alive */
  uv_close((uv_handle_t *)&t, NULL);
  sk_loopstat_stop(&ls);
  sk_loopstat_stop(&ls); /* idempotent */
  uv_run(&loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
}

START_TEST(cpu_work_counts_on_both_clocks) {
  sk_metrics m;
  run(3, 1, 5, &m);
  ck_assert_uint_ge(m.loop_count, 3);
  ck_assert_uint_eq(over(&m, SK_METRICS_LOOP_CPU, 0.025), 3);
  ck_assert_uint_eq(over(&m, SK_METRICS_LOOP_WALL, 0.025), 3);
  ck_assert(m.loop_sum[SK_METRICS_LOOP_CPU] >= 0.09);
  ck_assert(m.loop_sum[SK_METRICS_LOOP_WALL] >= m.loop_sum[SK_METRICS_LOOP_CPU] * 0.999);
}
END_TEST

/* A callback blocked in a system call holds the loop as long as a busy
 * one: the wall clock counts it, CPU time does not. */
START_TEST(a_blocking_call_counts_on_the_wall_clock_only) {
  sk_metrics m;
  run(3, 0, 5, &m);
  ck_assert_uint_eq(over(&m, SK_METRICS_LOOP_WALL, 0.025), 3);
  ck_assert_uint_eq(over(&m, SK_METRICS_LOOP_CPU, 0.025), 0);
}
END_TEST

/* 4 x 60 ms of waiting for the timer: nothing of it is the loop's. */
START_TEST(waiting_for_io_is_not_counted) {
  sk_metrics m;
  const double t0 = now_s(CLOCK_MONOTONIC);
  run(4, -1, 60, &m);
  ck_assert(now_s(CLOCK_MONOTONIC) - t0 >= 0.239);
  ck_assert_uint_ge(m.loop_count, 4);
  ck_assert_uint_eq(over(&m, SK_METRICS_LOOP_WALL, 0.025), 0);
  ck_assert_msg(m.loop_sum[SK_METRICS_LOOP_WALL] < 0.05, "busy %.3f s of 0.24", m.loop_sum[SK_METRICS_LOOP_WALL]);
}
END_TEST

START_TEST(the_histograms_are_written) {
  sk_metrics *m = calloc(1, sizeof *m);
  sk_metrics_init(m);
  sk_metrics_observe_loop(m, 0.03, 0.0002);
  sk_metrics_observe_loop(m, 0.0007, 0.0007);
  sk_metrics_gauges g = {0};
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_metrics_write(m, &g, &b), 0);
  const char *t = b.data;
  ck_assert_ptr_nonnull(strstr(t, "# TYPE skinnerd_loop_iteration_seconds histogram\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_loop_iteration_seconds_bucket{le=\"0.001\"} 1\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_loop_iteration_seconds_bucket{le=\"0.025\"} 1\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_loop_iteration_seconds_bucket{le=\"0.05\"} 2\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_loop_iteration_seconds_bucket{le=\"+Inf\"} 2\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_loop_iteration_seconds_count 2\n"));
  ck_assert_ptr_nonnull(strstr(t, "# TYPE skinnerd_loop_iteration_cpu_seconds histogram\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_loop_iteration_cpu_seconds_bucket{le=\"0.00025\"} 1\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_loop_iteration_cpu_seconds_bucket{le=\"0.001\"} 2\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_loop_iteration_cpu_seconds_sum 0.0009\n"));
  sk_strbuf_free(&b);
  free(m);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sk_loopstat");
  TCase *t = tcase_create("lifecycle");
  tcase_add_test(t, cpu_work_counts_on_both_clocks);
  tcase_add_test(t, a_blocking_call_counts_on_the_wall_clock_only);
  tcase_add_test(t, waiting_for_io_is_not_counted);
  tcase_add_test(t, the_histograms_are_written);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(suite()); }
