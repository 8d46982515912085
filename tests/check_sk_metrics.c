/* sk_metrics: the Prometheus text exposition, line by line. */
#include "config.h"
#include "sk_error.h"
#include "sk_metrics.h"
#include "sk_testutil.h"

static char *write_text(const sk_metrics *m, const sk_metrics_gauges *g) {
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_metrics_write(m, g, &b), 0);
  return b.data;
}

START_TEST(counters_by_route_method_and_status) {
  sk_metrics *m = calloc(1, sizeof *m);
  sk_metrics_init(m);
  sk_metrics_observe(m, SK_ROUTE_POSE, sk_metrics_method("POST"), 200, 0.0002);
  sk_metrics_observe(m, SK_ROUTE_POSE, sk_metrics_method("POST"), 200, 0.003);
  sk_metrics_observe(m, SK_ROUTE_POSE, sk_metrics_method("POST"), 422, 0.00005);
  sk_metrics_observe(m, SK_ROUTE_OTHER, sk_metrics_method("BREW"), 418, 2.0);
  sk_metrics_add_poses(m, 3, 198);
  sk_metrics_gauges g = {.cache_skeletons = 2, .cache_bytes = 4096, .cache_evictions = 1};
  char *t = write_text(m, &g);
  ck_assert_ptr_nonnull(strstr(t, "# TYPE skinnerd_requests_total counter\n"));
  ck_assert_ptr_nonnull(
      strstr(t, "skinnerd_requests_total{route=\"/v1/skeletons/{id}/pose\",method=\"POST\",status=\"200\"} 2\n"));
  ck_assert_ptr_nonnull(
      strstr(t, "skinnerd_requests_total{route=\"/v1/skeletons/{id}/pose\",method=\"POST\",status=\"422\"} 1\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_requests_total{route=\"other\",method=\"other\",status=\"other\"} 1\n"));
  /* histogram: cumulative buckets, +Inf = count */
  ck_assert_ptr_nonnull(strstr(t, "# TYPE skinnerd_request_duration_seconds histogram\n"));
  ck_assert_ptr_nonnull(strstr(
      t, "skinnerd_request_duration_seconds_bucket{route=\"/v1/skeletons/{id}/pose\",le=\"0.0001\"} 1\n"));
  ck_assert_ptr_nonnull(strstr(
      t, "skinnerd_request_duration_seconds_bucket{route=\"/v1/skeletons/{id}/pose\",le=\"0.00025\"} 2\n"));
  ck_assert_ptr_nonnull(strstr(
      t, "skinnerd_request_duration_seconds_bucket{route=\"/v1/skeletons/{id}/pose\",le=\"0.005\"} 3\n"));
  ck_assert_ptr_nonnull(strstr(
      t, "skinnerd_request_duration_seconds_bucket{route=\"/v1/skeletons/{id}/pose\",le=\"+Inf\"} 3\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_request_duration_seconds_count{route=\"/v1/skeletons/{id}/pose\"} 3\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_request_duration_seconds_bucket{route=\"other\",le=\"1\"} 0\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_request_duration_seconds_bucket{route=\"other\",le=\"+Inf\"} 1\n"));
  /* routes without requests have no series */
  ck_assert_ptr_null(strstr(t, "route=\"/metrics\""));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_cache_skeletons 2\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_cache_bytes 4096\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_cache_evictions_total 1\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_poses_evaluated_total 3\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_bone_matrices_evaluated_total 198\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_jobs_in_flight 0\n"));
  free(t);
  free(m);
}
END_TEST

START_TEST(every_line_is_a_comment_or_a_sample) {
  sk_metrics *m = calloc(1, sizeof *m);
  sk_metrics_init(m);
  for (int r = 0; r < SK_ROUTE_COUNT; r++)
    sk_metrics_observe(m, r, SK_METHOD_GET, 200, 0.001 * r);
  sk_metrics_gauges g = {.jobs_in_flight = 3, .memory_limit_bytes = 1 << 20, .memory_used_bytes = 4096,
                         .memory_high_bytes = 8192, .memory_refused = 2, .cache_tombstones = 1};
  char *t = write_text(m, &g);
  ck_assert(t[strlen(t) - 1] == '\n');
  for (char *line = strtok(t, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    if (line[0] == '#') {
      ck_assert(strncmp(line, "# HELP skinnerd_", 16) == 0 || strncmp(line, "# TYPE skinnerd_", 16) == 0);
      continue;
    }
    ck_assert_msg(strncmp(line, "skinnerd_", 9) == 0, "%s", line);
    const char *sp = strrchr(line, ' ');
    ck_assert_ptr_nonnull(sp);
    char *end;
    strtod(sp + 1, &end);
    ck_assert_msg(*end == '\0', "value of %s", line);
  }
  free(t);
  free(m);
}
END_TEST

START_TEST(connection_counters_of_the_public_listener) {
  sk_metrics *m = calloc(1, sizeof *m);
  sk_metrics_init(m);
  sk_metrics_gauges g = {.conns_open = 17, .conns_evicted = 5, .conns_idle_closed = 3, .conns_deadline_cut = 2};
  char *t = write_text(m, &g);
  ck_assert_ptr_nonnull(strstr(t, "# TYPE skinnerd_connections gauge\nskinnerd_connections 17\n"));
  ck_assert_ptr_nonnull(strstr(t, "# TYPE skinnerd_connections_closed_total counter\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_connections_closed_total{reason=\"evicted_idle\"} 5\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_connections_closed_total{reason=\"idle_timeout\"} 3\n"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_connections_closed_total{reason=\"deadline\"} 2\n"));
  free(t);
  free(m);
}
END_TEST

START_TEST(memory_budget_gauges_only_with_a_budget) {
  sk_metrics *m = calloc(1, sizeof *m);
  sk_metrics_init(m);
  sk_metrics_gauges g = {.memory_limit_bytes = 1 << 20, .memory_used_bytes = 4096, .memory_high_bytes = 8192,
                         .memory_refused = 2, .cache_tombstones = 1};
  char *t = write_text(m, &g);
  ck_assert_ptr_nonnull(strstr(t, "# TYPE skinnerd_memory_budget_bytes gauge\nskinnerd_memory_budget_bytes 1048576\n"));
  ck_assert_ptr_nonnull(strstr(t, "\nskinnerd_memory_used_bytes 4096\n"));
  ck_assert_ptr_nonnull(strstr(t, "\nskinnerd_memory_high_water_bytes 8192\n"));
  ck_assert_ptr_nonnull(strstr(t, "# TYPE skinnerd_memory_refused_total counter\nskinnerd_memory_refused_total 2\n"));
  ck_assert_ptr_nonnull(strstr(t, "\nskinnerd_cache_tombstones 1\n"));
  free(t);
  sk_metrics_gauges none = {.cache_skeletons = 1};
  t = write_text(m, &none);
  ck_assert_ptr_null(strstr(t, "skinnerd_memory_"));
  free(t);
  free(m);
}
END_TEST

START_TEST(refusals_of_the_governance_checks_have_their_own_status) {
  sk_metrics *m = calloc(1, sizeof *m);
  sk_metrics_init(m);
  static const int codes[] = {304, 401, 403, 409, 412, 421, 507};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
    sk_metrics_observe(m, SK_ROUTE_SKELETON, sk_metrics_method("PUT"), codes[i], 0.001);
  sk_metrics_gauges g = {.cache_skeletons = 0};
  char *t = write_text(m, &g);
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    char want[128];
    snprintf(want, sizeof want, "route=\"/v1/skeletons/{id}\",method=\"PUT\",status=\"%d\"} 1\n", codes[i]);
    ck_assert_msg(strstr(t, want) != NULL, "no line for %d", codes[i]);
  }
  ck_assert_ptr_null(strstr(t, "method=\"PUT\",status=\"other\"} 1"));
  free(t);
  free(m);
}
END_TEST

/* proc(5)'s fields counted from the last ')': a command name with spaces
 * and parentheses does not shift them. utime 300 + stime 150 ticks at
 * 100 Hz, started 12345 ticks after a boot at 1.7e9 s, 8 MiB virtual,
 * 512 pages resident. */
START_TEST(process_figures_from_proc_self_stat) {
  const char *stat = "4242 (sk d) (x) S 1 4242 4242 0 -1 4194560 900 0 0 0 300 150 0 0 20 0 5 0 12345 8388608 512 "
                     "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  sk_metrics_process p = {0};
  ck_assert_int_eq(sk_metrics_parse_stat(stat, 1.7e9, 100, 4096, &p), 0);
  ck_assert_double_eq(p.cpu_seconds, 4.5);
  ck_assert_double_eq(p.start_time_seconds, 1.7e9 + 123.45);
  ck_assert_uint_eq(p.virtual_bytes, 8388608);
  ck_assert_uint_eq(p.resident_bytes, 512 * 4096);
  ck_assert_int_eq(sk_metrics_parse_stat("4242 (sk) S 1 2", 0, 100, 4096, &p), SK_EINVAL); /* cut short */
  ck_assert_int_eq(sk_metrics_parse_stat("no parenthesis", 0, 100, 4096, &p), SK_EINVAL);
  ck_assert_int_eq(sk_metrics_parse_stat(stat, 0, 0, 4096, &p), SK_EINVAL);
  /* this process, read for real */
  sk_metrics_process self;
  ck_assert_int_eq(sk_metrics_read_process(&self), 0);
  ck_assert(self.ok);
  ck_assert_uint_gt(self.resident_bytes, 0);
  ck_assert_uint_ge(self.open_fds, 3); /* stdin, stdout, stderr */
  ck_assert_uint_ge(self.max_fds, self.open_fds);
  ck_assert(self.start_time_seconds > 1.5e9);
}
END_TEST

/* Prometheus' client conventions: the process_* names and types, after
 * skinnerd_build_info (always written, its labels stripped to plain
 * characters so no value needs escaping). */
START_TEST(build_info_and_process_metrics) {
  sk_metrics *m = calloc(1, sizeof *m);
  sk_metrics_init(m);
  sk_metrics_process p = {.ok = true, .cpu_seconds = 1.25, .start_time_seconds = 1700000000.5,
                          .resident_bytes = 1 << 20, .virtual_bytes = 1 << 24, .open_fds = 12, .max_fds = 1024};
  sk_metrics_gauges g = {.libmicrohttpd = "0.9.75", .libuv = "1.44.2", .gnutls = "3.7\"9\\", .process = &p};
  char *t = write_text(m, &g);
  ck_assert_ptr_nonnull(strstr(t, "# TYPE skinnerd_build_info gauge\nskinnerd_build_info{version=\"" PACKAGE_VERSION
                                  "\",libmicrohttpd=\"0.9.75\",libuv=\"1.44.2\",gnutls=\"3.79\"} 1\n"));
  ck_assert_ptr_nonnull(strstr(t, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.25\n"));
  ck_assert_ptr_nonnull(strstr(t, "# TYPE process_open_fds gauge\nprocess_open_fds 12\n"));
  ck_assert_ptr_nonnull(strstr(t, "# TYPE process_max_fds gauge\nprocess_max_fds 1024\n"));
  ck_assert_ptr_nonnull(strstr(t, "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 1048576\n"));
  ck_assert_ptr_nonnull(strstr(t, "# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes 16777216\n"));
  ck_assert_ptr_nonnull(strstr(t, "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds 1700000000.50\n"));
  free(t);
  p.ok = false; /* not read: no process_* lines */
  t = write_text(m, &g);
  ck_assert_ptr_null(strstr(t, "process_"));
  ck_assert_ptr_nonnull(strstr(t, "skinnerd_build_info{"));
  free(t);
  free(m);
}
END_TEST

static Suite *metrics_suite(void) {
  Suite *s = suite_create("sk_metrics");
  TCase *t = tcase_create("golden");
  tcase_add_test(t, counters_by_route_method_and_status);
  tcase_add_test(t, every_line_is_a_comment_or_a_sample);
  tcase_add_test(t, connection_counters_of_the_public_listener);
  tcase_add_test(t, memory_budget_gauges_only_with_a_budget);
  tcase_add_test(t, refusals_of_the_governance_checks_have_their_own_status);
  tcase_add_test(t, build_info_and_process_metrics);
  tcase_add_test(t, process_figures_from_proc_self_stat);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(metrics_suite()); }
