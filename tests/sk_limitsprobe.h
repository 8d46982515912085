/* The limits suites' fixture (check_limits.c, check_limits_bodies.c): the
 * daemon under test (D) beside an idle control (C), a thread asking both
 * for /healthz every 5 ms, the systemd watchdog's pings as the daemon sends
 * them, and attack(): one request timed, with the daemon's VmHWM before and
 * after and the slowest /healthz meanwhile. Only those two suites include
 * it, so its names stay as short as they were in one file. */
#ifndef SK_LIMITSPROBE_H
#define SK_LIMITSPROBE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>
#include <time.h>

#include <jansson.h>

#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_metrics.h"
#include "sk_numfmt.h"
#include "sk_testutil.h"

static sk_daemon D;
/* The control: an idle skinnerd, probed beside D, so that the machine's
 * own noise is measured at the same moments. No watchdog. */
static sk_daemon C;

/* ---- daemon, requests, memory ------------------------------------------------ */

static inline int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The systemd watchdog as skinnerd sees it: $NOTIFY_SOCKET is a datagram
 * socket of ours and $WATCHDOG_USEC asks for a ping every 10 ms (a uv timer
 * on the loop thread, like /healthz). A thread records when each arrives. */
#define PINGS_MAX 100000
static struct {
  int fd;
  char path[108];
  pthread_t thread;
  atomic_bool stop;
  double at[PINGS_MAX];
  atomic_size_t n;
} W = {.fd = -1};

/* Wall-clock seconds: the clock of the kernel's receive timestamps. */
static inline double rt_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Each ping's time is the kernel's receive timestamp (SO_TIMESTAMP), not
 * when this thread got to read it: a busy machine delays the reader too. */
static inline void *watch_main(void *arg) {
  (void)arg;
  char buf[256];
  union {
    struct cmsghdr h;
    char space[CMSG_SPACE(sizeof(struct timeval))];
  } ctl;
  while (!atomic_load(&W.stop)) {
    struct iovec iov = {buf, sizeof buf - 1};
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl.space;
    msg.msg_controllen = sizeof ctl.space;
    ssize_t k = recvmsg(W.fd, &msg, 0);
    if (k <= 0)
      continue; /* the 100 ms receive timeout: look at `stop` again */
    buf[k] = 0;
    double at = rt_now();
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMP) {
        struct timeval tv;
        memcpy(&tv, CMSG_DATA(c), sizeof tv);
        at = (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
      }
    size_t n = atomic_load(&W.n);
    if (strstr(buf, "WATCHDOG=1") != NULL && n < PINGS_MAX) {
      W.at[n] = at;
      atomic_store(&W.n, n + 1);
    }
  }
  return NULL;
}

static inline void watch_start(void) {
  W.fd = socket(AF_UNIX, SOCK_DGRAM, 0);
  ck_assert_int_ge(W.fd, 0);
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  snprintf(W.path, sizeof W.path, "/tmp/sk-limits-%d.notify", (int)getpid());
  snprintf(a.sun_path, sizeof a.sun_path, "%s", W.path);
  unlink(W.path);
  ck_assert_int_eq(bind(W.fd, (struct sockaddr *)&a, sizeof a), 0);
  struct timeval tv = {0, 100 * 1000};
  setsockopt(W.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  int on = 1;
  setsockopt(W.fd, SOL_SOCKET, SO_TIMESTAMP, &on, sizeof on);
  setenv("NOTIFY_SOCKET", W.path, 1);
  setenv("WATCHDOG_USEC", "20000", 1);
  atomic_store(&W.n, 0);
  atomic_store(&W.stop, false);
  ck_assert_int_eq(pthread_create(&W.thread, NULL, watch_main, NULL), 0);
}

/* p99 and max of the gaps between watchdog pings from `from` on; the count. */
static inline size_t watch_gaps(double from, double *p99, double *max) {
  static double gaps[PINGS_MAX];
  size_t n = atomic_load(&W.n), g = 0;
  for (size_t i = 1; i < n; i++)
    if (W.at[i - 1] >= from)
      gaps[g++] = (W.at[i] - W.at[i - 1]) * 1e3;
  qsort(gaps, g, sizeof gaps[0], cmp_double);
  *p99 = g ? gaps[g * 99 / 100] : 0;
  *max = g ? gaps[g - 1] : 0;
  return g;
}

/* The latency bound of this test: 50 ms, unless the machine is so busy
 * right now that an idle daemon started beside the one under test (the
 * control, probed in the same loop) misses it too: then 2 x the control's
 * figure + 10 ms. A loop thread blocked by one request (the figures in
 * docs/limits.md: 190 ms to 21 s) stays outside it. */
static inline double latency_bound(double control_ms) {
  return control_ms * 2 + 10 > 50 ? control_ms * 2 + 10 : 50;
}

/* Gaps between watchdog pings from `from` (rt_now) on: p99 under the
 * latency bound (+ the 10 ms period) and none past 1 s (systemd's
 * WatchdogSec is 30 s). */
static inline void watch_check(const char *what, double from, double control_p99) {
  double p99, max;
  size_t g = watch_gaps(from, &p99, &max);
  ck_assert_msg(g >= 10, "%zu watchdog pings while %s", g, what);
  fprintf(stderr, "limits: %s: %zu watchdog gaps, p99 %.1f ms, max %.1f ms\n", what, g, p99, max);
  /* a gap is the 10 ms period plus the loop's lateness */
  ck_assert_msg(p99 < latency_bound(control_p99) + 10, "watchdog gap p99 %.1f ms while %s (control /healthz p99 %.1f ms)",
                p99, what, control_p99);
  ck_assert_msg(max < 1000, "a watchdog gap of %.1f ms while %s", max, what);
}

static inline void watch_stop(void) {
  atomic_store(&W.stop, true);
  pthread_join(W.thread, NULL);
  close(W.fd);
  W.fd = -1;
  unlink(W.path);
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");
}

static inline void start(const char *const *extra) {
  if (W.fd < 0)
    watch_start();
  sk_fixture_start(&D, extra);
}

static inline void stop(void) {
  int st = sk_daemon_stop(&D, SIGTERM);
  if (C.pid > 0)
    sk_daemon_stop(&C, SIGTERM);
  watch_stop();
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "skinnerd did not exit 0 after SIGTERM (status %d)", st);
}

/* One request; returns its wall time in ms (the answer in *r, status 0 when none). */
static inline double timed(const char *method, const char *path, const char *ct, const void *body, size_t len,
                           sk_httpc_resp *r) {
  char h[256] = "";
  if (ct != NULL)
    snprintf(h, sizeof h, "Content-Type: %s\r\n", ct);
  double t0 = sk_test_now();
  if (sk_httpc_request(D.host, D.port, method, path, h, body, len, r) != 0)
    r->status = 0;
  return (sk_test_now() - t0) * 1e3;
}

/* A field in "Name:   123 kB" form of /proc/PID/status, in KiB. */
static inline long status_kb(const char *field) {
  char path[64], line[256], fmt[64];
  snprintf(path, sizeof path, "/proc/%d/status", (int)D.pid);
  snprintf(fmt, sizeof fmt, "%s: %%ld kB", field);
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  long kb = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, fmt, &kb) == 1)
      break;
  fclose(f);
  return kb;
}

/* Peak RSS bounds: `kb` (VmHWM, or its growth) under `bound_kb`. */
static inline void expect_hwm(long kb, long bound_kb, const char *what) {
  ck_assert_msg(kb < bound_kb || sk_daemon_sanitized(&D), "%s: %ld kB, over %ld kB", what, kb, bound_kb);
}

/* A problem+json answer's pointer and detail. */
static inline void expect_problem(const sk_httpc_resp *r, int status, const char *pointer, const char *flag) {
  ck_assert_msg(r->status == status, "status %d, want %d: %.300s", r->status, status, r->body ? r->body : "");
  json_t *j = json_loads(r->body, 0, NULL);
  ck_assert_msg(j != NULL, "not JSON: %.200s", r->body);
  const char *p = json_string_value(json_object_get(j, "pointer"));
  const char *d = json_string_value(json_object_get(j, "detail"));
  ck_assert_msg(p != NULL && strcmp(p, pointer) == 0, "pointer %s, want %s (%s)", p ? p : "(none)", pointer,
                d ? d : "");
  ck_assert_msg(d != NULL && strstr(d, flag) != NULL, "detail \"%s\" does not name %s", d ? d : "", flag);
  json_decref(j);
}

/* ---- the /healthz prober ---------------------------------------------------- */

#define PROBES_MAX 100000
static struct {
  pthread_t thread;
  atomic_bool stop;
  double ms[PROBES_MAX], control[PROBES_MAX]; /* the daemon under test, the idle control */
  atomic_size_t n;
  int failures;
} P;


static inline void control_start(void) {
  if (C.pid > 0)
    return;
  char *ns = getenv("NOTIFY_SOCKET") ? strdup(getenv("NOTIFY_SOCKET")) : NULL;
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");
  ck_assert_int_eq(sk_daemon_start(&C, NULL), 0);
  if (ns != NULL) {
    setenv("NOTIFY_SOCKET", ns, 1);
    setenv("WATCHDOG_USEC", "20000", 1);
    free(ns);
  }
}

static inline double probe_one(const sk_daemon *d, int *failures) {
  sk_httpc_resp r;
  double t0 = sk_test_now();
  if (sk_httpc_request(d->host, d->port, "GET", "/healthz", "", NULL, 0, &r) != 0 || r.status != 200)
    (*failures)++;
  sk_httpc_free(&r);
  return (sk_test_now() - t0) * 1e3;
}

static inline size_t P_count(void) { return atomic_load(&P.n); }

static inline void *probe_main(void *arg) {
  (void)arg;
  int control_failures = 0;
  while (!atomic_load(&P.stop) && atomic_load(&P.n) < PROBES_MAX) {
    size_t n = atomic_load(&P.n);
    P.ms[n] = probe_one(&D, &P.failures);
    P.control[n] = probe_one(&C, &control_failures);
    atomic_fetch_add(&P.n, 1);
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

static double g_probe_from; /* rt_now() */

static inline void probe_start(void) {
  control_start();
  g_probe_from = rt_now();
  atomic_store(&P.n, 0);
  P.failures = 0;
  atomic_store(&P.stop, false);
  ck_assert_int_eq(pthread_create(&P.thread, NULL, probe_main, NULL), 0);
}

/* Stops the prober (after at least 200 probes); asserts /healthz p99 < 50 ms
 * and that every probe got its 200. */
static inline void probe_stop(const char *what) {
  /* enough probes that the p99 is not one unlucky time slice of a shared machine */
  while (P_count() < 200) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  atomic_store(&P.stop, true);
  pthread_join(P.thread, NULL);
  size_t n = P_count();
  qsort(P.ms, n, sizeof P.ms[0], cmp_double);
  qsort(P.control, n, sizeof P.control[0], cmp_double);
  double p99 = P.ms[n * 99 / 100], max = P.ms[n - 1], c99 = P.control[n * 99 / 100];
  fprintf(stderr, "limits: %s: /healthz %zu probes, p99 %.1f ms, max %.1f ms, %d failed (idle control: p99 %.1f ms)\n",
          what, n, p99, max, P.failures, c99);
  ck_assert_msg(P.failures == 0, "%d /healthz probes failed", P.failures);
  ck_assert_msg(p99 < latency_bound(c99), "/healthz p99 %.1f ms while %s (control p99 %.1f ms)", p99, what, c99);
  watch_check(what, g_probe_from, c99);
}

/* ---- attack inputs and attacks ---------------------------------------------- */

/* {"layers": [{"animation": 0, "time": 0.5} x n]} */
static inline char *layers_body(int n) {
  sk_strbuf b = {0};
  sk_strbuf_append(&b, "{\"layers\":[", 11);
  for (int i = 0; i < n; i++)
    sk_strbuf_append(&b, i ? ",{\"animation\":0,\"time\":0.5}" : "{\"animation\":0,\"time\":0.5}", i ? 27 : 26);
  sk_strbuf_append(&b, "]}", 2);
  ck_assert(!b.failed);
  return b.data;
}

static inline void put_body(const char *id, const char *ct, const void *body, size_t len) {
  char path[128];
  snprintf(path, sizeof path, "/v1/skeletons/%s", id);
  sk_httpc_resp r;
  double ms = timed("PUT", path, ct, body, len, &r);
  fprintf(stderr, "limits: PUT %s (%zu bytes): %d in %.0f ms\n", id, len, r.status, ms);
  ck_assert_msg(r.status == 201 || r.status == 200, "PUT %s: %d %.300s", id, r.status, r.body ? r.body : "");
  sk_httpc_free(&r);
}

static inline void put_asset(const char *id, const char *asset) {
  size_t len;
  unsigned char *d = sk_test_read_asset(asset, &len);
  put_body(id, "model/gltf-binary", d, len);
  free(d);
}

/* The daemon's own account of its loop (skinnerd_loop_iteration_seconds
 * and _cpu_seconds in /metrics): cumulative counts per bucket of each. */
#define LOOP_BUCKETS SK_METRICS_NBUCKETS
static const double k_loop_bounds[LOOP_BUCKETS - 1] = {SK_METRICS_BOUNDS};
typedef struct {
  unsigned long long wall[LOOP_BUCKETS], cpu[LOOP_BUCKETS];
} loop_hist;

static inline void loop_read(loop_hist *h) {
  sk_httpc_resp r;
  timed("GET", "/metrics", NULL, NULL, 0, &r);
  ck_assert_msg(r.status == 200 && r.body != NULL, "/metrics: %d", r.status);
  static const char *const names[2] = {"skinnerd_loop_iteration_seconds_bucket{le=\"",
                                       "skinnerd_loop_iteration_cpu_seconds_bucket{le=\""};
  for (int k = 0; k < 2; k++) {
    unsigned long long *dest = k ? h->cpu : h->wall;
    const char *p = r.body;
    for (int b = 0; b < LOOP_BUCKETS; b++) {
      p = strstr(p, names[k]);
      ck_assert_msg(p != NULL, "/metrics has no %s (bucket %d)", names[k], b);
      p = strchr(p, '}');
      ck_assert_int_eq(sscanf(p, "} %llu", &dest[b]), 1);
    }
  }
  sk_httpc_free(&r);
}

/* Iterations between `a` and `b` that took longer than `ms` (rounded up to
 * a bucket's bound) on one clock. */
static inline unsigned long long loop_over(const unsigned long long *a, const unsigned long long *b, double ms) {
  int k = 0;
  while (k < LOOP_BUCKETS - 1 && k_loop_bounds[k] * 1e3 < ms)
    k++;
  return (b[LOOP_BUCKETS - 1] - b[k]) - (a[LOOP_BUCKETS - 1] - a[k]);
}

/* The bucket bound (ms) under which every iteration between `a` and `b`
 * stayed; INFINITY past the last one. */
static inline double loop_longest(const unsigned long long *a, const unsigned long long *b) {
  for (int k = 0; k < LOOP_BUCKETS - 1; k++)
    if (b[LOOP_BUCKETS - 1] - b[k] == a[LOOP_BUCKETS - 1] - a[k])
      return k_loop_bounds[k] * 1e3;
  return INFINITY;
}

static double g_worst, g_control_worst; /* the slowest /healthz during the last attack, and the control's */
static loop_hist g_loop_before, g_loop_after; /* the daemon's loop around the last attack */

/* The last attack left the loop thread free: no iteration of the daemon's
 * loop used 50 ms of CPU (the loop's own work, which neither the prober
 * nor the rest of the machine moves), none held the loop for a second on
 * the wall clock (a blocking call: the wall clock also counts the core
 * being taken away mid-iteration, which a loaded 2-core machine does for
 * 50-100 ms at times), and /healthz answered within a second. The slowest
 * probe alone is not the measure: a probe also waits for the prober's
 * thread and the machine (one took 60 ms under the sanitizers while the
 * loop's iterations stayed under 5 ms), and a stall that began as the
 * request ended escaped it. Both are printed with each attack. */
static inline void expect_loop_free(const char *what) {
  const unsigned long long cpu = loop_over(g_loop_before.cpu, g_loop_after.cpu, 50);
  const unsigned long long wall = loop_over(g_loop_before.wall, g_loop_after.wall, 1000);
  ck_assert_msg(cpu == 0, "%llu loop iterations used over 50 ms of CPU during %s", cpu, what);
  ck_assert_msg(wall == 0, "%llu loop iterations held the loop over 1 s during %s", wall, what);
  const double bound = latency_bound(g_control_worst);
  if (g_worst >= bound)
    fprintf(stderr, "limits: %s: the slowest /healthz took %.1f ms (bound %.0f ms) while no loop iteration used "
            "50 ms of CPU\n", what, g_worst, bound);
  ck_assert_msg(g_worst < 1000, "/healthz took %.1f ms during %s (control: %.1f ms)", g_worst, what,
                g_control_worst);
}

/* POSTs `body` to `path` and reports it as attack `what`; the answer in *r. */
static inline double attack_with(const char *method, const char *what, const char *path, const char *body, size_t len,
                                 sk_httpc_resp *r) {
  long before = status_kb("VmHWM");
  loop_read(&g_loop_before);
  size_t n0 = P_count();
  double ms = timed(method, path, "application/json", body, len, r);
  long after = status_kb("VmHWM");
  /* the probe waiting on a busy loop finishes just after the attack */
  struct timespec ts = {0, 30 * 1000 * 1000};
  nanosleep(&ts, NULL);
  loop_read(&g_loop_after);
  double worst = 0, cworst = 0;
  for (size_t i = n0; i < P_count(); i++) {
    worst = P.ms[i] > worst ? P.ms[i] : worst;
    cworst = P.control[i] > cworst ? P.control[i] : cworst;
  }
  g_worst = worst;
  g_control_worst = cworst;
  fprintf(stderr,
          "limits: %s (%zu-byte body): %d in %.0f ms, %zu-byte answer, VmHWM %ld -> %ld MB, slowest /healthz meanwhile "
          "%.1f ms, loop iterations <= %g ms (CPU <= %g ms)\n",
          what, len, r->status, ms, r->len, before >> 10, after >> 10, worst,
          loop_longest(g_loop_before.wall, g_loop_after.wall), loop_longest(g_loop_before.cpu, g_loop_after.cpu));
  return ms;
}

static inline double attack(const char *what, const char *path, const char *body, size_t len, sk_httpc_resp *r) {
  return attack_with("POST", what, path, body, len, r);
}

static const char *const k_args[] = {"--max-body", "8388608", "--threads", "2", NULL};

#endif
