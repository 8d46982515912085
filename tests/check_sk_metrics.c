/* sk_metrics: the Prometheus text exposition, line by line. */
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

static Suite *metrics_suite(void) {
  Suite *s = suite_create("sk_metrics");
  TCase *t = tcase_create("golden");
  tcase_add_test(t, counters_by_route_method_and_status);
  tcase_add_test(t, every_line_is_a_comment_or_a_sample);
  tcase_add_test(t, connection_counters_of_the_public_listener);
  tcase_add_test(t, memory_budget_gauges_only_with_a_budget);
  tcase_add_test(t, refusals_of_the_governance_checks_have_their_own_status);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(metrics_suite()); }
