/* sk_metrics: the daemon's counters, written as Prometheus text (0.0.4).
 *
 * Owned and updated by the loop thread only (thread-pool jobs report back
 * in their after-work callback), so nothing here is atomic. Label values
 * come from small fixed tables: a client cannot grow the label space. */
#ifndef SK_METRICS_H
#define SK_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "sk_buf.h"

/* Route labels: the route patterns, never raw paths (ids would explode the
 * label space). */
#define SK_ROUTE_MAP(X)                                   \
  X(OTHER, "other")                                       \
  X(SKELETONS, "/v1/skeletons")                           \
  X(SKELETON, "/v1/skeletons/{id}")                       \
  X(BONES, "/v1/skeletons/{id}/bones")                    \
  X(REST, "/v1/skeletons/{id}/rest")                      \
  X(POSE, "/v1/skeletons/{id}/pose")                      \
  X(POSES, "/v1/skeletons/{id}/poses")                    \
  X(HEALTHZ, "/healthz")                                  \
  X(READYZ, "/readyz")                                    \
  X(METRICS, "/metrics")                                  \
  X(OPS, "/v1/skeletons/{id}/ops")                           \
  X(ANIMATION, "/v1/skeletons/{id}/animations/{clip}")   \
  X(ANIMATIONS, "/v1/skeletons/{id}/animations")  \
  X(CLIP_BOUNDS, "/v1/skeletons/{id}/animations/{clip}/bounds") \
  X(STREAM, "/v1/skeletons/{id}/stream")

enum {
#define SK_ROUTE_ENUM(name, label) SK_ROUTE_##name,
  SK_ROUTE_MAP(SK_ROUTE_ENUM)
#undef SK_ROUTE_ENUM
  SK_ROUTE_COUNT
};

#define SK_METHOD_MAP(X) X(OTHER, "other") X(GET, "GET") X(HEAD, "HEAD") X(POST, "POST") X(PUT, "PUT") \
  X(PATCH, "PATCH") X(DELETE, "DELETE") X(OPTIONS, "OPTIONS")

enum {
#define SK_METHOD_ENUM(name, label) SK_METHOD_##name,
  SK_METHOD_MAP(SK_METHOD_ENUM)
#undef SK_METHOD_ENUM
  SK_METHOD_COUNT
};

/* Statuses the daemon answers with; anything else is counted as "other". */
#define SK_METRICS_STATUSES 200, 201, 204, 304, 400, 401, 403, 404, 405, 406, 409, 412, 413, 415, 421, 422, 500, 503, 507
#define SK_METRICS_NSTATUS 20 /* the list above + "other" */
#define SK_METRICS_NBUCKETS 14
/* The histograms' upper bounds in seconds, the last bucket (+Inf) aside:
 * one list for the exposition and for whoever reads it back (the tests). */
#define SK_METRICS_BOUNDS 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1

typedef struct sk_metrics {
  uint64_t requests[SK_ROUTE_COUNT][SK_METHOD_COUNT][SK_METRICS_NSTATUS];
  uint64_t dur_buckets[SK_ROUTE_COUNT][SK_METRICS_NBUCKETS]; /* not cumulative */
  uint64_t dur_count[SK_ROUTE_COUNT];
  double dur_sum[SK_ROUTE_COUNT];
  uint64_t poses_evaluated, bone_matrices_evaluated;
  /* The loop thread's iterations (sk_loopstat): what each took apart from
   * waiting for I/O, on the wall clock and in the thread's CPU time. */
  uint64_t loop_buckets[2][SK_METRICS_NBUCKETS]; /* [SK_METRICS_LOOP_*]; not cumulative */
  uint64_t loop_count;
  double loop_sum[2];
} sk_metrics;

enum { SK_METRICS_LOOP_WALL = 0, SK_METRICS_LOOP_CPU = 1 };

/* The process itself, as Prometheus' client libraries export it
 * (process_cpu_seconds_total, process_resident_memory_bytes, ...). */
typedef struct sk_metrics_process {
  bool ok;                   /* false: not read (no /proc); no process_* lines */
  double cpu_seconds;        /* user + system */
  double start_time_seconds; /* since the Unix epoch */
  uint64_t resident_bytes, virtual_bytes;
  uint64_t open_fds, max_fds;
} sk_metrics_process;

/* Gauges owned by other modules, sampled when the text is written. */
typedef struct sk_metrics_gauges {
  uint64_t cache_skeletons, cache_bytes, cache_evictions, jobs_in_flight;
  /* The public listener's connections (sk_http_conn_stats). */
  uint64_t conns_open, conns_evicted, conns_idle_closed, conns_deadline_cut, conns_stall_cut;
  /* The memory budget (sk_budget); written only when memory_limit_bytes or
   * memory_used_bytes is non-zero. */
  uint64_t memory_limit_bytes, memory_used_bytes, memory_high_bytes, memory_refused;
  uint64_t cache_tombstones; /* ids evicted without a data directory, remembered */
  uint64_t store_damaged_records; /* data-directory records skipped or dropped as damaged (always written) */
  /* skinnerd_build_info's labels besides the version (borrowed; NULL: left out). */
  const char *libmicrohttpd, *libuv, *gnutls;
  const sk_metrics_process *process; /* borrowed; NULL or !ok: no process_* lines */
} sk_metrics_gauges;

/* Zeroes every counter. */
void sk_metrics_init(sk_metrics *m);
/* Method name -> SK_METHOD_*. */
int sk_metrics_method(const char *method);
/* Counts one finished request of `route` (SK_ROUTE_*) and `method`
 * (SK_METHOD_*) answered with `status`, which took `seconds`. */
void sk_metrics_observe(sk_metrics *m, int route, int method, int status, double seconds);
/* Counts evaluated poses and the bone matrices they produced. */
void sk_metrics_add_poses(sk_metrics *m, uint64_t poses, uint64_t bone_matrices);
/* Counts one loop iteration that kept the loop thread busy for `wall`
 * seconds (not counting its wait for I/O), `cpu` of them on a core. */
void sk_metrics_observe_loop(sk_metrics *m, double wall, double cpu);
/* This process's figures from /proc/self/stat, /proc/stat (boot time),
 * /proc/self/fd and RLIMIT_NOFILE into *p. 0, or SK_EIO with p->ok false. */
int sk_metrics_read_process(sk_metrics_process *p);
/* The /proc/self/stat line `stat` with the boot time `btime` (s since the
 * epoch), `hz` clock ticks per second and `page` bytes into p's CPU,
 * start-time and memory fields. 0 or SK_EINVAL (a line it cannot read). */
int sk_metrics_parse_stat(const char *stat, double btime, long hz, long page, sk_metrics_process *p);
/* Appends the Prometheus text exposition. 0 or SK_ENOMEM. */
int sk_metrics_write(const sk_metrics *m, const sk_metrics_gauges *g, sk_strbuf *out);

#endif
