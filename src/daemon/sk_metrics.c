#include "sk_metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sk_error.h"

static const int k_statuses[] = {SK_METRICS_STATUSES};
_Static_assert(sizeof k_statuses / sizeof k_statuses[0] == SK_METRICS_NSTATUS - 1, "SK_METRICS_NSTATUS counts the list + other");
static const double k_bounds[SK_METRICS_NBUCKETS - 1] = {SK_METRICS_BOUNDS};
static const char *const k_bound_text[SK_METRICS_NBUCKETS] = {"0.0001", "0.00025", "0.0005", "0.001", "0.0025",
                                                              "0.005",  "0.01",    "0.025",  "0.05",  "0.1",
                                                              "0.25",   "0.5",     "1",      "+Inf"};
static const char *const k_routes[] = {
#define SK_ROUTE_LABEL(name, label) label,
    SK_ROUTE_MAP(SK_ROUTE_LABEL)
#undef SK_ROUTE_LABEL
};
static const char *const k_methods[] = {
#define SK_METHOD_LABEL(name, label) label,
    SK_METHOD_MAP(SK_METHOD_LABEL)
#undef SK_METHOD_LABEL
};

void sk_metrics_init(sk_metrics *m) { memset(m, 0, sizeof *m); }

int sk_metrics_method(const char *method) {
  for (int i = 1; i < SK_METHOD_COUNT; i++)
    if (strcmp(method, k_methods[i]) == 0)
      return i;
  return SK_METHOD_OTHER;
}

static int bucket_of(double seconds) {
  for (int i = 0; i < SK_METRICS_NBUCKETS - 1; i++)
    if (seconds <= k_bounds[i])
      return i;
  return SK_METRICS_NBUCKETS - 1;
}

void sk_metrics_observe(sk_metrics *m, int route, int method, int status, double seconds) {
  if (route < 0 || route >= SK_ROUTE_COUNT)
    route = SK_ROUTE_OTHER;
  if (method < 0 || method >= SK_METHOD_COUNT)
    method = SK_METHOD_OTHER;
  int si = SK_METRICS_NSTATUS - 1;
  for (int i = 0; i < SK_METRICS_NSTATUS - 1; i++)
    if (k_statuses[i] == status)
      si = i;
  m->requests[route][method][si]++;
  m->dur_buckets[route][bucket_of(seconds)]++;
  m->dur_count[route]++;
  m->dur_sum[route] += seconds;
}

void sk_metrics_observe_loop(sk_metrics *m, double wall, double cpu) {
  m->loop_buckets[SK_METRICS_LOOP_WALL][bucket_of(wall)]++;
  m->loop_buckets[SK_METRICS_LOOP_CPU][bucket_of(cpu)]++;
  m->loop_count++;
  m->loop_sum[SK_METRICS_LOOP_WALL] += wall;
  m->loop_sum[SK_METRICS_LOOP_CPU] += cpu;
}

void sk_metrics_add_poses(sk_metrics *m, uint64_t poses, uint64_t bone_matrices) {
  m->poses_evaluated += poses;
  m->bone_matrices_evaluated += bone_matrices;
}

/* Appends printf output; truncation is impossible with these fixed-size
 * lines but is checked anyway. */
__attribute__((format(printf, 2, 3))) static void put(sk_strbuf *b, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof line) {
    b->failed = 1;
    return;
  }
  sk_strbuf_append(b, line, (size_t)n);
}

/* The loop's iterations: how long one request or job can hold every other
 * client (a healthy loop stays under a few ms; /healthz waits as long). */
static void write_loop(const sk_metrics *m, sk_strbuf *out) {
  static const char *const names[2] = {"skinnerd_loop_iteration_seconds", "skinnerd_loop_iteration_cpu_seconds"};
  static const char *const helps[2] = {
      "Time each event-loop iteration kept the loop thread from serving others, waits for I/O excluded.",
      "CPU time the loop thread used in each event-loop iteration."};
  for (int k = 0; k < 2; k++) {
    put(out, "# HELP %s %s\n# TYPE %s histogram\n", names[k], helps[k], names[k]);
    uint64_t cum = 0;
    for (int b = 0; b < SK_METRICS_NBUCKETS; b++) {
      cum += m->loop_buckets[k][b];
      put(out, "%s_bucket{le=\"%s\"} %llu\n", names[k], k_bound_text[b], (unsigned long long)cum);
    }
    put(out, "%s_sum %.9g\n%s_count %llu\n", names[k], m->loop_sum[k], names[k], (unsigned long long)m->loop_count);
  }
}

int sk_metrics_write(const sk_metrics *m, const sk_metrics_gauges *g, sk_strbuf *out) {
  put(out, "# HELP skinnerd_requests_total HTTP requests answered, by route pattern, method and status.\n"
           "# TYPE skinnerd_requests_total counter\n");
  for (int r = 0; r < SK_ROUTE_COUNT; r++)
    for (int me = 0; me < SK_METHOD_COUNT; me++)
      for (int s = 0; s < SK_METRICS_NSTATUS; s++) {
        uint64_t v = m->requests[r][me][s];
        if (v == 0)
          continue;
        char st[16];
        if (s < SK_METRICS_NSTATUS - 1)
          snprintf(st, sizeof st, "%d", k_statuses[s]);
        else
          snprintf(st, sizeof st, "other");
        put(out, "skinnerd_requests_total{route=\"%s\",method=\"%s\",status=\"%s\"} %llu\n", k_routes[r],
            k_methods[me], st, (unsigned long long)v);
      }
  put(out, "# HELP skinnerd_request_duration_seconds Time from request headers to response completion.\n"
           "# TYPE skinnerd_request_duration_seconds histogram\n");
  for (int r = 0; r < SK_ROUTE_COUNT; r++) {
    if (m->dur_count[r] == 0)
      continue;
    uint64_t cum = 0;
    for (int b = 0; b < SK_METRICS_NBUCKETS; b++) {
      cum += m->dur_buckets[r][b];
      put(out, "skinnerd_request_duration_seconds_bucket{route=\"%s\",le=\"%s\"} %llu\n", k_routes[r],
          k_bound_text[b], (unsigned long long)cum);
    }
    put(out, "skinnerd_request_duration_seconds_sum{route=\"%s\"} %.9g\n", k_routes[r], m->dur_sum[r]);
    put(out, "skinnerd_request_duration_seconds_count{route=\"%s\"} %llu\n", k_routes[r],
        (unsigned long long)m->dur_count[r]);
  }
  write_loop(m, out);
  put(out,
      "# HELP skinnerd_cache_skeletons Skeletons in the cache.\n# TYPE skinnerd_cache_skeletons gauge\n"
      "skinnerd_cache_skeletons %llu\n"
      "# HELP skinnerd_cache_bytes Bytes the cached skeletons occupy.\n# TYPE skinnerd_cache_bytes gauge\n"
      "skinnerd_cache_bytes %llu\n"
      "# HELP skinnerd_cache_evictions_total Skeletons evicted to stay under --cache-mb.\n"
      "# TYPE skinnerd_cache_evictions_total counter\nskinnerd_cache_evictions_total %llu\n",
      (unsigned long long)g->cache_skeletons, (unsigned long long)g->cache_bytes,
      (unsigned long long)g->cache_evictions);
  put(out,
      "# HELP skinnerd_poses_evaluated_total Poses evaluated.\n# TYPE skinnerd_poses_evaluated_total counter\n"
      "skinnerd_poses_evaluated_total %llu\n"
      "# HELP skinnerd_bone_matrices_evaluated_total Final bone matrices computed.\n"
      "# TYPE skinnerd_bone_matrices_evaluated_total counter\nskinnerd_bone_matrices_evaluated_total %llu\n"
      "# HELP skinnerd_jobs_in_flight Batch jobs on the thread pool.\n# TYPE skinnerd_jobs_in_flight gauge\n"
      "skinnerd_jobs_in_flight %llu\n",
      (unsigned long long)m->poses_evaluated, (unsigned long long)m->bone_matrices_evaluated,
      (unsigned long long)g->jobs_in_flight);
  put(out,
      "# HELP skinnerd_connections Connections open on the public listener.\n"
      "# TYPE skinnerd_connections gauge\nskinnerd_connections %llu\n",
      (unsigned long long)g->conns_open);
  put(out,
      "# HELP skinnerd_connections_closed_total Connections the daemon closed: idle ones to make room at "
      "--max-connections, idle ones after --idle-timeout, and ones past their header or body deadline.\n"
      "# TYPE skinnerd_connections_closed_total counter\n"
      "skinnerd_connections_closed_total{reason=\"evicted_idle\"} %llu\n"
      "skinnerd_connections_closed_total{reason=\"idle_timeout\"} %llu\n"
      "skinnerd_connections_closed_total{reason=\"deadline\"} %llu\n",
      (unsigned long long)g->conns_evicted,
      (unsigned long long)g->conns_idle_closed, (unsigned long long)g->conns_deadline_cut);
  if (g->memory_limit_bytes != 0 || g->memory_used_bytes != 0) {
    /* One put per metric: put() writes lines of at most 511 bytes. */
    put(out,
        "# HELP skinnerd_memory_budget_bytes The memory budget (--memory-mb); 0 = unlimited.\n"
        "# TYPE skinnerd_memory_budget_bytes gauge\nskinnerd_memory_budget_bytes %llu\n",
        (unsigned long long)g->memory_limit_bytes);
    put(out,
        "# HELP skinnerd_memory_used_bytes Bytes counted in the budget: cache, bodies, answers.\n"
        "# TYPE skinnerd_memory_used_bytes gauge\nskinnerd_memory_used_bytes %llu\n",
        (unsigned long long)g->memory_used_bytes);
    put(out,
        "# HELP skinnerd_memory_high_water_bytes The most skinnerd_memory_used_bytes has been.\n"
        "# TYPE skinnerd_memory_high_water_bytes gauge\nskinnerd_memory_high_water_bytes %llu\n",
        (unsigned long long)g->memory_high_bytes);
    put(out,
        "# HELP skinnerd_memory_refused_total Reservations refused (503) because the budget was full.\n"
        "# TYPE skinnerd_memory_refused_total counter\nskinnerd_memory_refused_total %llu\n",
        (unsigned long long)g->memory_refused);
    put(out,
        "# HELP skinnerd_cache_tombstones Ids evicted without a data directory, remembered for their 404 that says so.\n"
        "# TYPE skinnerd_cache_tombstones gauge\nskinnerd_cache_tombstones %llu\n",
        (unsigned long long)g->cache_tombstones);
  }
  put(out,
      "# HELP skinnerd_store_damaged_records Records of the data directory skipped at start-up or dropped at a "
      "read-back because they are damaged (each one is logged).\n"
      "# TYPE skinnerd_store_damaged_records gauge\nskinnerd_store_damaged_records %llu\n",
      (unsigned long long)g->store_damaged_records);
  return out->failed ? SK_ENOMEM : 0;
}
