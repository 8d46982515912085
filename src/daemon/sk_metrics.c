#include "sk_metrics.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "config.h"
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

int sk_metrics_parse_stat(const char *stat, double btime, long hz, long page, sk_metrics_process *p) {
  /* "pid (comm) state ppid ...": comm may hold spaces and parentheses, so
   * the fields are counted from the last ')'; utime, stime, starttime,
   * vsize and rss are fields 14, 15, 22, 23 and 24 of proc(5). */
  const char *s = stat != NULL ? strrchr(stat, ')') : NULL;
  if (s == NULL || hz <= 0 || page <= 0)
    return SK_EINVAL;
  unsigned long long f[25] = {0};
  int field = 2;
  for (s++; *s && field < 24;) {
    while (*s == ' ')
      s++;
    if (!*s)
      break;
    field++;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) { /* the state letter */
      end = (char *)s + strcspn(s, " ");
      v = 0;
    }
    f[field] = v;
    s = end;
  }
  if (field < 24)
    return SK_EINVAL;
  p->cpu_seconds = (double)(f[14] + f[15]) / (double)hz;
  p->start_time_seconds = btime + (double)f[22] / (double)hz;
  p->virtual_bytes = f[23];
  p->resident_bytes = f[24] * (unsigned long long)page;
  return 0;
}

/* Reads a small /proc file whole into buf (NUL-terminated). */
static int read_small(const char *path, char *buf, size_t cap) {
  FILE *fp = fopen(path, "r");
  if (fp == NULL)
    return SK_EIO;
  size_t n = fread(buf, 1, cap - 1, fp);
  fclose(fp);
  buf[n] = 0;
  return n > 0 ? 0 : SK_EIO;
}

int sk_metrics_read_process(sk_metrics_process *p) {
  memset(p, 0, sizeof *p);
  char stat[1024], boot[8192];
  if (read_small("/proc/self/stat", stat, sizeof stat) != 0 || read_small("/proc/stat", boot, sizeof boot) != 0)
    return SK_EIO;
  const char *bt = strstr(boot, "\nbtime ");
  if (bt == NULL || sk_metrics_parse_stat(stat, strtod(bt + 7, NULL), sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE), p))
    return SK_EIO;
  DIR *d = opendir("/proc/self/fd");
  if (d != NULL) {
    uint64_t n = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;)
      n += de->d_name[0] != '.';
    closedir(d);
    p->open_fds = n > 0 ? n - 1 : 0; /* less the one opendir held */
  }
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
    p->max_fds = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
  p->ok = true;
  return 0;
}

/* A label value from a library's version string: its plain characters
 * only, so no quote or backslash needs escaping. */
static void label_value(const char *in, char *out, size_t cap) {
  size_t n = 0;
  for (; in != NULL && *in && n + 1 < cap; in++)
    if ((*in >= '0' && *in <= '9') || (*in >= 'a' && *in <= 'z') || (*in >= 'A' && *in <= 'Z') ||
        strchr("._+-~", *in) != NULL)
      out[n++] = *in;
  out[n] = 0;
}

/* skinnerd_build_info and, when read, the process_* figures: written last,
 * after the daemon's own metrics. */
static void write_build_and_process(const sk_metrics_gauges *g, sk_strbuf *out) {
  char mhd[40], uv[40], tls[40];
  label_value(g->libmicrohttpd, mhd, sizeof mhd);
  label_value(g->libuv, uv, sizeof uv);
  label_value(g->gnutls, tls, sizeof tls);
  put(out,
      "# HELP skinnerd_build_info The daemon's version and the libraries it runs with; always 1.\n"
      "# TYPE skinnerd_build_info gauge\n"
      "skinnerd_build_info{version=\"%s\",libmicrohttpd=\"%s\",libuv=\"%s\",gnutls=\"%s\"} 1\n",
      PACKAGE_VERSION, mhd, uv, tls);
  const sk_metrics_process *p = g->process;
  if (p == NULL || !p->ok)
    return;
  put(out,
      "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
      "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.9g\n",
      p->cpu_seconds);
  put(out,
      "# HELP process_open_fds Number of open file descriptors.\n# TYPE process_open_fds gauge\n"
      "process_open_fds %llu\n"
      "# HELP process_max_fds Maximum number of open file descriptors.\n# TYPE process_max_fds gauge\n"
      "process_max_fds %llu\n",
      (unsigned long long)p->open_fds, (unsigned long long)p->max_fds);
  put(out,
      "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
      "# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes %llu\n"
      "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
      "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes %llu\n",
      (unsigned long long)p->virtual_bytes, (unsigned long long)p->resident_bytes);
  put(out,
      "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
      "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.2f\n",
      p->start_time_seconds);
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
      "--max-connections, idle ones after --idle-timeout, ones past their header or body deadline, and event "
      "streams whose reader stopped.\n"
      "# TYPE skinnerd_connections_closed_total counter\n"
      "skinnerd_connections_closed_total{reason=\"evicted_idle\"} %llu\n"
      "skinnerd_connections_closed_total{reason=\"idle_timeout\"} %llu\n"
      "skinnerd_connections_closed_total{reason=\"deadline\"} %llu\n",
      (unsigned long long)g->conns_evicted,
      (unsigned long long)g->conns_idle_closed, (unsigned long long)g->conns_deadline_cut);
  put(out, "skinnerd_connections_closed_total{reason=\"stalled_reader\"} %llu\n",
      (unsigned long long)g->conns_stall_cut);
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
  write_build_and_process(g, out);
  return out->failed ? SK_ENOMEM : 0;
}
