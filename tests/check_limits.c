/* Requests whose cost is not in their size (issue 11, first attacks),
 * against the real skinnerd on 127.0.0.1: each is answered 413 within a
 * bound, before its work, while a second thread keeps asking /healthz
 * (p99 under 50 ms) and the daemon's peak RSS (VmHWM) stays bounded; the
 * clip work that is allowed runs on the pool and answers exactly what the
 * loop thread answers.
 *
 * Each test prints one line per attack ("limits: ...") with its status,
 * time and the daemon's VmHWM: run with SKINNERD=<an older skinnerd> to
 * measure the attacks against it (the assertions then fail, the figures
 * are still printed). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>
#include <time.h>

#include <jansson.h>

#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_numfmt.h"
#include "sk_testskel.h"
#include "sk_testutil.h"

static sk_daemon D;
/* The control: an idle skinnerd, probed beside D, so that the machine's
 * own noise is measured at the same moments. No watchdog. */
static sk_daemon C;

/* ---- daemon, requests, memory ------------------------------------------------ */

static int cmp_double(const void *a, const void *b) {
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
static double rt_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Each ping's time is the kernel's receive timestamp (SO_TIMESTAMP), not
 * when this thread got to read it: a busy machine delays the reader too. */
static void *watch_main(void *arg) {
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

static void watch_start(void) {
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
static size_t watch_gaps(double from, double *p99, double *max) {
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
static double latency_bound(double control_ms) {
  return control_ms * 2 + 10 > 50 ? control_ms * 2 + 10 : 50;
}

/* Gaps between watchdog pings from `from` (rt_now) on: p99 under the
 * latency bound (+ the 10 ms period) and none past 1 s (systemd's
 * WatchdogSec is 30 s). */
static void watch_check(const char *what, double from, double control_p99) {
  double p99, max;
  size_t g = watch_gaps(from, &p99, &max);
  ck_assert_msg(g >= 10, "%zu watchdog pings while %s", g, what);
  fprintf(stderr, "limits: %s: %zu watchdog gaps, p99 %.1f ms, max %.1f ms\n", what, g, p99, max);
  /* a gap is the 10 ms period plus the loop's lateness */
  ck_assert_msg(p99 < latency_bound(control_p99) + 10, "watchdog gap p99 %.1f ms while %s (control /healthz p99 %.1f ms)",
                p99, what, control_p99);
  ck_assert_msg(max < 1000, "a watchdog gap of %.1f ms while %s", max, what);
}

static void watch_stop(void) {
  atomic_store(&W.stop, true);
  pthread_join(W.thread, NULL);
  close(W.fd);
  W.fd = -1;
  unlink(W.path);
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");
}

static void start(const char *const *extra) {
  if (W.fd < 0)
    watch_start();
  sk_fixture_start(&D, extra);
}

static void stop(void) {
  int st = sk_daemon_stop(&D, SIGTERM);
  if (C.pid > 0)
    sk_daemon_stop(&C, SIGTERM);
  watch_stop();
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "skinnerd did not exit 0 after SIGTERM (status %d)", st);
}

/* One request; returns its wall time in ms (the answer in *r, status 0 when none). */
static double timed(const char *method, const char *path, const char *ct, const void *body, size_t len,
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
static long status_kb(const char *field) {
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
static void expect_hwm(long kb, long bound_kb, const char *what) {
  ck_assert_msg(kb < bound_kb || sk_daemon_sanitized(&D), "%s: %ld kB, over %ld kB", what, kb, bound_kb);
}

/* A problem+json answer's pointer and detail. */
static void expect_problem(const sk_httpc_resp *r, int status, const char *pointer, const char *flag) {
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


static void control_start(void) {
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

static double probe_one(const sk_daemon *d, int *failures) {
  sk_httpc_resp r;
  double t0 = sk_test_now();
  if (sk_httpc_request(d->host, d->port, "GET", "/healthz", "", NULL, 0, &r) != 0 || r.status != 200)
    (*failures)++;
  sk_httpc_free(&r);
  return (sk_test_now() - t0) * 1e3;
}

static size_t P_count(void) { return atomic_load(&P.n); }

static void *probe_main(void *arg) {
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

static void probe_start(void) {
  control_start();
  g_probe_from = rt_now();
  atomic_store(&P.n, 0);
  P.failures = 0;
  atomic_store(&P.stop, false);
  ck_assert_int_eq(pthread_create(&P.thread, NULL, probe_main, NULL), 0);
}

/* Stops the prober (after at least 200 probes); asserts /healthz p99 < 50 ms
 * and that every probe got its 200. */
static void probe_stop(const char *what) {
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

/* ---- attack inputs, generated ----------------------------------------------- */

static void b64(const unsigned char *in, size_t n, char *out) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
    out[o++] = t[v >> 18 & 63];
    out[o++] = t[v >> 12 & 63];
    out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
    out[o++] = i + 2 < n ? t[v & 63] : '=';
  }
  out[o] = 0;
}

/* One joint, one 2-key rotation sampler (0 s and 100 s), and `nch`
 * channels all driving that joint through it: ~50 bytes a channel. */
static char *many_channels_gltf(int nch, size_t *len) {
  float data[2 + 8] = {0, 100, 0, 0, 0, 1, 0, 0.70710677f, 0, 0.70710677f};
  char enc[64];
  b64((const unsigned char *)data, sizeof data, enc);
  sk_strbuf b = {0};
  char head[1024];
  int n = snprintf(head, sizeof head,
                   "{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{\"name\":\"j\"}],\"skins\":[{\"joints\":[0]}],"
                   "\"buffers\":[{\"byteLength\":40,\"uri\":\"data:application/octet-stream;base64,%s\"}],"
                   "\"bufferViews\":[{\"buffer\":0,\"byteLength\":8},{\"buffer\":0,\"byteOffset\":8,\"byteLength\":32}],"
                   "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":2,\"type\":\"SCALAR\"},"
                   "{\"bufferView\":1,\"componentType\":5126,\"count\":2,\"type\":\"VEC4\"}],"
                   "\"animations\":[{\"samplers\":[{\"input\":0,\"output\":1}],\"channels\":[",
                   enc);
  sk_strbuf_append(&b, head, (size_t)n);
  static const char ch[] = "{\"sampler\":0,\"target\":{\"node\":0,\"path\":\"rotation\"}}";
  for (int i = 0; i < nch; i++) {
    if (i > 0)
      sk_strbuf_append(&b, ",", 1);
    sk_strbuf_append(&b, ch, sizeof ch - 1);
  }
  sk_strbuf_append(&b, "]}]}", 4);
  ck_assert(!b.failed);
  *len = b.len;
  return b.data;
}

/* {"layers": [{"animation": 0, "time": 0.5} x n]} */
static char *layers_body(int n) {
  sk_strbuf b = {0};
  sk_strbuf_append(&b, "{\"layers\":[", 11);
  for (int i = 0; i < n; i++)
    sk_strbuf_append(&b, i ? ",{\"animation\":0,\"time\":0.5}" : "{\"animation\":0,\"time\":0.5}", i ? 27 : 26);
  sk_strbuf_append(&b, "]}", 2);
  ck_assert(!b.failed);
  return b.data;
}

static void put_body(const char *id, const char *ct, const void *body, size_t len) {
  char path[128];
  snprintf(path, sizeof path, "/v1/skeletons/%s", id);
  sk_httpc_resp r;
  double ms = timed("PUT", path, ct, body, len, &r);
  fprintf(stderr, "limits: PUT %s (%zu bytes): %d in %.0f ms\n", id, len, r.status, ms);
  ck_assert_msg(r.status == 201 || r.status == 200, "PUT %s: %d %.300s", id, r.status, r.body ? r.body : "");
  sk_httpc_free(&r);
}

static void put_asset(const char *id, const char *asset) {
  size_t len;
  unsigned char *d = sk_test_read_asset(asset, &len);
  put_body(id, "model/gltf-binary", d, len);
  free(d);
}

/* POSTs `body` to `path` and reports it as attack `what`; the answer in *r. */
static double g_worst, g_control_worst; /* the slowest /healthz during the last attack, and the control's */

/* The last attack kept /healthz under the latency bound. */
static void expect_loop_free(const char *what) {
  ck_assert_msg(g_worst < latency_bound(g_control_worst), "/healthz took %.1f ms during %s (control: %.1f ms)", g_worst,
                what, g_control_worst);
}

static double attack_with(const char *method, const char *what, const char *path, const char *body, size_t len,
                          sk_httpc_resp *r) {
  long before = status_kb("VmHWM");
  size_t n0 = P_count();
  double ms = timed(method, path, "application/json", body, len, r);
  long after = status_kb("VmHWM");
  /* the probe waiting on a busy loop finishes just after the attack */
  struct timespec ts = {0, 30 * 1000 * 1000};
  nanosleep(&ts, NULL);
  double worst = 0, cworst = 0;
  for (size_t i = n0; i < P_count(); i++) {
    worst = P.ms[i] > worst ? P.ms[i] : worst;
    cworst = P.control[i] > cworst ? P.control[i] : cworst;
  }
  g_worst = worst;
  g_control_worst = cworst;
  fprintf(stderr,
          "limits: %s (%zu-byte body): %d in %.0f ms, %zu-byte answer, VmHWM %ld -> %ld MB, slowest /healthz meanwhile "
          "%.1f ms\n",
          what, len, r->status, ms, r->len, before >> 10, after >> 10, worst);
  return ms;
}

static double attack(const char *what, const char *path, const char *body, size_t len, sk_httpc_resp *r) {
  return attack_with("POST", what, path, body, len, r);
}

static const char *const k_args[] = {"--max-body", "8388608", "--threads", "2", NULL};

/* ---- tests ---------------------------------------------------------------------- */

/* Starts the daemon with the prober running and the 60 000-channel glTF stored as "many". */
static void start_many(void) {
  start(k_args);
  probe_start();
  size_t len;
  char *g = many_channels_gltf(60000, &len);
  ck_assert_uint_gt(len, 3000000);
  put_body("many", "model/gltf+json", g, len);
  free(g);
}

static void stop_many(const char *what) {
  probe_stop(what);
  long hwm = status_kb("VmHWM");
  expect_hwm(hwm, 256 * 1024, "VmHWM");
  stop();
}

START_TEST(a_100_second_range_on_60000_channels_is_refused_before_any_sampling) {
  start_many();
  sk_httpc_resp r;
  static const char range[] = "{\"animation\":0,\"from\":0,\"to\":100,\"fps\":60}";
  double ms = attack("100 s at 60 fps on 60 000 channels", "/v1/skeletons/many/pose", range, strlen(range), &r);
  expect_problem(&r, 413, "/fps", "--max-frames");
  ck_assert_msg(ms < 1000, "413 after %.0f ms", ms);
  sk_httpc_free(&r);
  /* within --max-frames, over --max-work: 601 frames x 60 001 */
  static const char ten[] = "{\"animation\":0,\"from\":0,\"to\":10,\"fps\":60}";
  ms = attack("10 s at 60 fps on 60 000 channels", "/v1/skeletons/many/pose", ten, strlen(ten), &r);
  expect_problem(&r, 413, "", "--max-work");
  ck_assert_msg(ms < 1000, "413 after %.0f ms", ms);
  sk_httpc_free(&r);
  stop_many("the 60 000-channel frame ranges were refused");
}
END_TEST

START_TEST(two_thousand_layers_are_refused_before_any_sampling) {
  start_many();
  sk_httpc_resp r;
  char *l2000 = layers_body(2000);
  ck_assert_uint_lt(strlen(l2000), 80 * 1024);
  double ms = attack("2000 layers on 60 000 channels", "/v1/skeletons/many/pose", l2000, strlen(l2000), &r);
  expect_problem(&r, 413, "/layers", "--max-layers");
  ck_assert_msg(ms < 1000, "413 after %.0f ms", ms);
  sk_httpc_free(&r);
  free(l2000);
  stop_many("2000 layers were refused");
}
END_TEST

START_TEST(allowed_clip_work_runs_on_the_pool_and_healthz_stays_fast) {
  start_many();
  sk_httpc_resp r;
  /* 64 layers (3.8 M channel samples), one frame (60 000), a batch of 16 frames */
  char *l64 = layers_body(64);
  attack("64 layers on 60 000 channels", "/v1/skeletons/many/pose", l64, strlen(l64), &r);
  expect_loop_free("64 layers");
  ck_assert_msg(r.status == 200 && strncmp(r.body, "{\"final\":", 9) == 0, "%d %.200s", r.status, r.body);
  sk_httpc_free(&r);
  free(l64);
  static const char one[] = "{\"animation\":0,\"time\":50}";
  attack("one frame of 60 000 channels", "/v1/skeletons/many/pose", one, strlen(one), &r);
  expect_loop_free("one frame");
  ck_assert_msg(r.status == 200 && strncmp(r.body, "{\"final\":", 9) == 0, "%d %.200s", r.status, r.body);
  /* halfway between the keys (identity and a quarter turn about y): an
   * eighth turn, cos(45 deg) first */
  json_t *j = json_loads(r.body, 0, NULL);
  ck_assert_ptr_nonnull(j);
  double m00 = json_number_value(json_array_get(json_object_get(j, "final"), 0));
  ck_assert_msg(fabs(m00 - 0.70710678) < 1e-5, "final[0] = %.7f", m00);
  json_decref(j);
  sk_httpc_free(&r);
  static const char batch[] = "{\"poses\":[{\"animation\":0,\"from\":0,\"to\":15,\"fps\":1}]}";
  attack("16 frames of 60 000 channels in a batch", "/v1/skeletons/many/poses", batch, strlen(batch), &r);
  expect_loop_free("16 frames");
  ck_assert_msg(r.status == 200 && strncmp(r.body, "{\"results\":[{\"final\":", 21) == 0, "%d %.200s", r.status,
                r.body);
  sk_httpc_free(&r);
  stop_many("allowed 60 000-channel work ran");
}
END_TEST

/* With --data-dir, an evicted glTF skeleton is read back from its record
 * (its clips rebuilt from the 3 MB file: ~350 ms) on the pool, not on the
 * loop thread: /healthz stays fast while a pose brings it back. */
START_TEST(an_evicted_skeleton_is_reloaded_off_the_loop) {
  char dir[] = "/tmp/sk_limits_reload_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  const char *const args[] = {"--max-body", "8388608", "--threads", "2", "--data-dir", dir, "--cache-mb", "1", NULL};
  start(args);
  probe_start();
  size_t len;
  char *g = many_channels_gltf(60000, &len);
  put_body("many", "model/gltf+json", g, len);
  free(g);
  put_asset("fox", "Fox.glb"); /* --cache-mb 1: "many" leaves memory, stays on disk */
  sk_httpc_resp r;
  static const char one[] = "{\"animation\":0,\"time\":50}";
  attack("a pose on an evicted 60 000-channel skeleton", "/v1/skeletons/many/pose", one, strlen(one), &r);
  expect_loop_free("the reload");
  ck_assert_msg(r.status == 200 && strncmp(r.body, "{\"final\":", 9) == 0, "%d %.200s", r.status, r.body);
  sk_httpc_free(&r);
  probe_stop("an evicted skeleton was reloaded");
  stop();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(zero_filled_accessors_are_refused_before_anything_is_allocated) {
  start(k_args);
  probe_start();
  /* one joint, two channels on one sampler whose accessors have no
   * bufferView, so count alone decides their size (each channel keeps its
   * own copy of the keys) */
  static const char text[] =
      "{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{}],\"skins\":[{\"joints\":[0]}],"
      "\"accessors\":[{\"componentType\":5126,\"count\":4000000,\"type\":\"SCALAR\"},"
      "{\"componentType\":5126,\"count\":4000000,\"type\":\"VEC4\"}],"
      "\"animations\":[{\"samplers\":[{\"input\":0,\"output\":1}],\"channels\":[{\"sampler\":0,\"target\":{\"node\":0,"
      "\"path\":\"rotation\"}},{\"sampler\":0,\"target\":{\"node\":0,\"path\":\"rotation\"}}]}]}";
  long before = status_kb("VmHWM");
  sk_httpc_resp r;
  double ms = timed("PUT", "/v1/skeletons/empty", "model/gltf+json", text, strlen(text), &r);
  long after = status_kb("VmHWM");
  fprintf(stderr, "limits: %zu-byte glTF of zero-filled accessors: %d in %.0f ms, VmHWM %ld -> %ld MB\n", strlen(text),
          r.status, ms, before >> 10, after >> 10);
  expect_problem(&r, 413, "/accessors/1/count", "--max-skeleton-mb");
  sk_httpc_free(&r);
  expect_hwm(after - before, 16 * 1024, "VmHWM growth");
  /* and nothing was stored */
  timed("GET", "/v1/skeletons/empty", NULL, NULL, 0, &r);
  ck_assert_int_eq(r.status, 404);
  sk_httpc_free(&r);
  probe_stop("the zero-filled glTF was refused");
  stop();
}
END_TEST

START_TEST(a_gltf_whose_estimate_does_not_fit_the_memory_budget_gets_503_before_it_is_built) {
  static const char *const args[] = {"--memory-mb", "16", "--max-body", "8388608", NULL};
  start(args);
  /* Within --max-skeleton-mb (64), but not within a 16 MB budget: the
   * estimate is reserved before anything is built. */
  static const char text[] =
      "{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{}],\"skins\":[{\"joints\":[0]}],"
      "\"accessors\":[{\"componentType\":5126,\"count\":500000,\"type\":\"SCALAR\"},"
      "{\"componentType\":5126,\"count\":500000,\"type\":\"VEC4\"}],"
      "\"animations\":[{\"samplers\":[{\"input\":0,\"output\":1}],\"channels\":[{\"sampler\":0,\"target\":{\"node\":0,"
      "\"path\":\"rotation\"}},{\"sampler\":0,\"target\":{\"node\":0,\"path\":\"rotation\"}}]}]}";
  long before = status_kb("VmHWM");
  sk_httpc_resp r;
  timed("PUT", "/v1/skeletons/big", "model/gltf+json", text, strlen(text), &r);
  long after = status_kb("VmHWM");
  fprintf(stderr, "limits: a glTF estimated over a 16 MB budget: %d, VmHWM %ld -> %ld MB\n", r.status, before >> 10,
          after >> 10);
  ck_assert_msg(r.status == 503, "status %d: %.300s", r.status, r.body ? r.body : "");
  ck_assert_ptr_nonnull(strstr(r.body, "--memory-mb"));
  ck_assert_ptr_nonnull(strstr(r.head, "\r\nRetry-After: 1\r\n"));
  sk_httpc_free(&r);
  expect_hwm(after - before, 16 * 1024, "VmHWM growth");
  timed("GET", "/v1/skeletons/big", NULL, NULL, 0, &r);
  ck_assert_int_eq(r.status, 404);
  sk_httpc_free(&r);
  /* The reservation went back: a real asset still fits. */
  put_asset("fox", "Fox.glb");
  stop();
}
END_TEST

START_TEST(a_49_byte_frame_range_on_a_real_asset_is_refused_before_sampling) {
  start(k_args);
  put_asset("mq", "mannequiny-0.3.0.glb");
  probe_start();
  /* 90 001 frames of 46 bones: under the old 4 Mi bone-pose bound */
  static const char range[] = "{\"animation\":\"walk\",\"from\":0,\"to\":1500,\"fps\":60}";
  sk_httpc_resp r;
  long before = status_kb("VmHWM");
  double ms = attack("90 001 frames of a real asset", "/v1/skeletons/mq/pose", range, strlen(range), &r);
  expect_problem(&r, 413, "/fps", "--max-frames");
  sk_httpc_free(&r);
  ck_assert_msg(ms < 1000, "413 after %.0f ms", ms);
  expect_hwm(status_kb("VmHWM") - before, 16 * 1024, "VmHWM growth");
  /* the same inside a batch */
  static const char batch[] = "{\"poses\":[{},{\"animation\":\"walk\",\"from\":0,\"to\":1500,\"fps\":60}]}";
  attack("90 001 frames inside a batch", "/v1/skeletons/mq/poses", batch, strlen(batch), &r);
  expect_problem(&r, 413, "/poses/1/fps", "--max-frames");
  sk_httpc_free(&r);
  probe_stop("the frame ranges were refused");
  stop();
}
END_TEST

START_TEST(a_41_kb_batch_asking_for_a_gigabyte_answer_is_refused_before_evaluating) {
  start(k_args);
  char *skel = sk_test_tree_skeleton(1024);
  put_body("big", "application/json", skel, strlen(skel));
  free(skel);
  probe_start();
  sk_strbuf b = {0};
  sk_strbuf_append(&b, "{\"poses\":[", 10);
  static const char pose[] = "{\"output\":[\"final\",\"absolute\",\"local\"]}";
  for (int i = 0; i < 1024; i++) {
    if (i > 0)
      sk_strbuf_append(&b, ",", 1);
    sk_strbuf_append(&b, pose, sizeof pose - 1);
  }
  sk_strbuf_append(&b, "]}", 2);
  ck_assert(!b.failed);
  ck_assert_uint_lt(b.len, 42 * 1024);
  sk_httpc_resp r;
  long before = status_kb("VmHWM");
  double ms = attack("1024 poses x 3 outputs x 1024 bones", "/v1/skeletons/big/poses", b.data, b.len, &r);
  ck_assert_msg(r.status == 413, "%d", r.status);
  ck_assert_msg(strstr(r.body, "--max-answer-mb") != NULL, "%.300s", r.body);
  ck_assert_msg(strstr(r.body, "\"pointer\":\"/poses") != NULL, "%.300s", r.body);
  sk_httpc_free(&r);
  ck_assert_msg(ms < 1000, "413 after %.0f ms", ms);
  expect_hwm(status_kb("VmHWM") - before, 16 * 1024, "VmHWM growth");
  sk_strbuf_free(&b);
  probe_stop("the gigabyte answer was refused");
  stop();
}
END_TEST

/* "[<item>,<item>,...]" of n items inside prefix and suffix. */
static char *repeated(const char *prefix, const char *item, size_t n, const char *suffix, size_t *len) {
  sk_strbuf b = {0};
  sk_strbuf_append(&b, prefix, strlen(prefix));
  for (size_t i = 0; i < n; i++) {
    if (i > 0)
      sk_strbuf_append(&b, ",", 1);
    sk_strbuf_append(&b, item, strlen(item));
  }
  sk_strbuf_append(&b, suffix, strlen(suffix));
  ck_assert(!b.failed);
  *len = b.len;
  return b.data;
}

/* 4 MB of "{}" builds a ~300 MB jansson tree: its bound is reserved in the
 * memory budget before the parse, so under a small budget the body gets a
 * 503 instead of the tree (and a body that fits is parsed as before). */
START_TEST(a_body_whose_parse_tree_does_not_fit_the_budget_gets_503_before_parsing) {
  static const char *const args[] = {"--memory-mb", "64", "--max-body", "8388608", NULL};
  start(args);
  put_asset("fox", "Fox.glb");
  size_t len;
  char *body = repeated("{\"poses\":[", "{}", 1300000, "]}", &len);
  long before = status_kb("VmHWM");
  sk_httpc_resp r;
  double ms = timed("POST", "/v1/skeletons/fox/poses", "application/json", body, len, &r);
  long after = status_kb("VmHWM");
  free(body);
  fprintf(stderr, "limits: %zu bytes of {} under --memory-mb 64: %d in %.0f ms, VmHWM %ld -> %ld MB\n", len, r.status, ms,
          before >> 10, after >> 10);
  ck_assert_msg(r.status == 503, "status %d: %.300s", r.status, r.body ? r.body : "");
  ck_assert_ptr_nonnull(strstr(r.body, "--memory-mb"));
  ck_assert_ptr_nonnull(strstr(r.head, "\r\nRetry-After: 1\r\n"));
  sk_httpc_free(&r);
  expect_hwm(after - before, 48 * 1024, "VmHWM growth");
  /* a large body whose tree fits is parsed and answered as before */
  body = repeated("{\"poses\":[", "{\"bones\":{\"b_Head_05\":{\"rotation\":[0,0.5,0]}}}", 600, "]}", &len);
  timed("POST", "/v1/skeletons/fox/poses", "application/json", body, len, &r);
  free(body);
  ck_assert_msg(r.status == 200, "status %d: %.300s", r.status, r.body ? r.body : "");
  sk_httpc_free(&r);
  stop();
}
END_TEST

START_TEST(multi_megabyte_pose_bodies_are_parsed_off_the_loop) {
  start(k_args);
  put_asset("mq", "mannequiny-0.3.0.glb");
  probe_start();
  size_t len;
  /* 2 M frame times: jansson alone held the loop ~200 ms for this */
  char *body = repeated("{\"animation\":\"walk\",\"times\":[", "0", 2000000, "]}", &len);
  sk_httpc_resp r;
  attack("a 4 MB list of frame times", "/v1/skeletons/mq/pose", body, len, &r);
  expect_loop_free("a 4 MB body");
  expect_problem(&r, 413, "/times", "--max-frames");
  sk_httpc_free(&r);
  free(body);
  body = repeated("{\"poses\":[", "{}", 200000, "]}", &len);
  attack("200 000 empty poses", "/v1/skeletons/mq/poses", body, len, &r);
  expect_loop_free("200 000 poses");
  expect_problem(&r, 413, "/poses", "--max-batch");
  sk_httpc_free(&r);
  free(body);
  /* a large body that is fine answers as a small one does */
  static const char item[] = "{\"animation\":\"walk\",\"time\":0.25,\"loop\":false,\"output\":[\"final\"]}";
  body = repeated("{\"poses\":[", item, 1024, "]}", &len);
  ck_assert_uint_ge(len, 64 * 1024);
  attack("1024 clip poses in a 66 KB body", "/v1/skeletons/mq/poses", body, len, &r);
  expect_loop_free("a 66 KB batch");
  ck_assert_msg(r.status == 200, "%d %.300s", r.status, r.body);
  json_t *big = json_loads(r.body, 0, NULL);
  sk_httpc_free(&r);
  free(body);
  body = repeated("{\"poses\":[", item, 16, "]}", &len);
  timed("POST", "/v1/skeletons/mq/poses", "application/json", body, len, &r);
  free(body);
  ck_assert_int_eq(r.status, 200);
  json_t *small = json_loads(r.body, 0, NULL);
  sk_httpc_free(&r);
  ck_assert_ptr_nonnull(big);
  ck_assert_ptr_nonnull(small);
  ck_assert_uint_eq(json_array_size(json_object_get(big, "results")), 1024);
  /* a full 16-pose kernel block in both (partial blocks may round differently) */
  for (size_t i = 0; i < 16; i++)
    ck_assert(json_equal(json_array_get(json_object_get(big, "results"), i),
                         json_array_get(json_object_get(small, "results"), i)));
  json_decref(big);
  json_decref(small);
  /* PATCH and /rest bodies too: parsed on the pool, refused at their field */
  body = repeated("{\"x\":[", "0", 2000000, "]}", &len);
  attack_with("PATCH", "a 4 MB PATCH body", "/v1/skeletons/mq/bones", body, len, &r);
  expect_loop_free("a 4 MB PATCH");
  expect_problem(&r, 422, "/x", "unknown field");
  sk_httpc_free(&r);
  timed("POST", "/v1/skeletons/mq/rest", "application/json", body, len, &r);
  expect_problem(&r, 422, "/x", "unknown field");
  sk_httpc_free(&r);
  body[len - 1] = ',';
  timed("PATCH", "/v1/skeletons/mq/bones", "application/json", body, len, &r);
  ck_assert_int_eq(r.status, 400);
  sk_httpc_free(&r);
  free(body);
  /* a valid PATCH padded past 32 KiB (pool) does what the same small one (loop) does */
  put_asset("mq2", "mannequiny-0.3.0.glb");
  timed("GET", "/v1/skeletons/mq", NULL, NULL, 0, &r);
  json_t *sk = json_loads(r.body, 0, NULL);
  sk_httpc_free(&r);
  ck_assert_ptr_nonnull(sk);
  char patch[256];
  int n = snprintf(patch, sizeof patch, "{\"bones\":{\"%s\":{\"position\":[0,1,0],\"rotation\":[0.1,0.2,0.3]}}}",
                   json_string_value(json_array_get(json_object_get(sk, "order"), 3)));
  json_decref(sk);
  timed("PATCH", "/v1/skeletons/mq/bones", "application/json", patch, (size_t)n, &r);
  ck_assert_int_eq(r.status, 200);
  json_t *small_patch = json_loads(r.body, 0, NULL);
  sk_httpc_free(&r);
  body = malloc(40000 + (size_t)n);
  memset(body, ' ', 40000);
  memcpy(body + 40000, patch, (size_t)n);
  timed("PATCH", "/v1/skeletons/mq2/bones", "application/json", body, 40000 + (size_t)n, &r);
  ck_assert_int_eq(r.status, 200);
  json_t *big_patch = json_loads(r.body, 0, NULL);
  sk_httpc_free(&r);
  free(body);
  ck_assert(json_equal(json_object_get(small_patch, "bones"), json_object_get(big_patch, "bones")));
  json_decref(small_patch);
  json_decref(big_patch);
  /* and a 404 still comes after the 400 for a large body */
  body = repeated("{\"poses\":[", "{}", 40000, "]}", &len);
  timed("POST", "/v1/skeletons/nope/poses", "application/json", body, len, &r);
  expect_problem(&r, 404, "", "nope");
  sk_httpc_free(&r);
  body[len - 1] = ',';
  timed("POST", "/v1/skeletons/nope/poses", "application/json", body, len, &r);
  ck_assert_int_eq(r.status, 400);
  sk_httpc_free(&r);
  free(body);
  probe_stop("multi-megabyte pose bodies were parsed");
  long hwm = status_kb("VmHWM");
  expect_hwm(hwm, 256 * 1024, "VmHWM");
  stop();
}
END_TEST

/* `n` frame times from t0, 1/60 s apart, as a pose body on clip "walk". */
static char *times_body(int first, int n, bool batch) {
  json_t *ts = json_array();
  for (int i = 0; i < n; i++)
    json_array_append_new(ts, json_real((first + i) / 60.0));
  json_t *pose = json_pack("{s:s,s:o}", "animation", "walk", "times", ts);
  json_t *j = batch ? json_pack("{s:[o]}", "poses", pose) : pose;
  char *text = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  return text;
}

static json_t *results_of(const char *path, const char *body) {
  sk_httpc_resp r;
  timed("POST", path, "application/json", body, strlen(body), &r);
  ck_assert_msg(r.status == 200, "%d %.300s", r.status, r.body ? r.body : "");
  json_t *j = json_loads(r.body, 0, NULL);
  sk_httpc_free(&r);
  ck_assert_ptr_nonnull(j);
  json_t *res = json_incref(json_object_get(j, "results"));
  json_decref(j);
  ck_assert_ptr_nonnull(res);
  return res;
}

START_TEST(clip_work_on_the_pool_answers_what_the_loop_answers) {
  start(k_args);
  put_asset("mq", "mannequiny-0.3.0.glb");
  probe_start();
  /* 300 frames x (135 channels + 46 bones): over the loop bound, sampled on
   * the pool; the same frames 48 at a time stay on the loop thread (48: the
   * batch kernel works in blocks of 16 poses, whose last digits may depend
   * on a pose's lane, so the chunks keep every frame in its lane) */
  for (int batch = 0; batch < 2; batch++) {
    const char *path = batch ? "/v1/skeletons/mq/poses" : "/v1/skeletons/mq/pose";
    char *all = times_body(0, 300, batch);
    json_t *whole = results_of(path, all);
    free(all);
    ck_assert_uint_eq(json_array_size(whole), 300);
    for (int first = 0; first < 300; first += 48) {
      int n = first + 48 <= 300 ? 48 : 300 - first;
      char *part = times_body(first, n, batch);
      json_t *chunk = results_of(path, part);
      free(part);
      for (int i = 0; i < n; i++)
        ck_assert_msg(json_equal(json_array_get(chunk, (size_t)i), json_array_get(whole, (size_t)(first + i))),
                      "frame %d differs between the pool and the loop", first + i);
      json_decref(chunk);
    }
    json_decref(whole);
  }
  probe_stop("clip work ran on the pool");
  stop();
}
END_TEST

START_TEST(normal_requests_stay_exact_after_every_attack) {
  start(k_args);
  put_asset("fox", "Fox.glb");
  static const char pose[] = "{\"animation\":\"Run\",\"time\":0.37}";
  static const char range[] = "{\"animation\":\"Walk\",\"from\":0,\"to\":0.5,\"fps\":30}";
  sk_httpc_resp a, b;
  timed("POST", "/v1/skeletons/fox/pose", "application/json", pose, strlen(pose), &a);
  timed("POST", "/v1/skeletons/fox/pose", "application/json", range, strlen(range), &b);
  ck_assert_int_eq(a.status, 200);
  ck_assert_int_eq(b.status, 200);
  probe_start();
  sk_httpc_resp r;
  static const char huge[] = "{\"animation\":\"Walk\",\"from\":0,\"to\":3000,\"fps\":30}";
  attack("90 001 Fox frames", "/v1/skeletons/fox/pose", huge, strlen(huge), &r);
  ck_assert_int_eq(r.status, 413);
  sk_httpc_free(&r);
  char *l = layers_body(100);
  attack("100 layers", "/v1/skeletons/fox/pose", l, strlen(l), &r);
  ck_assert_int_eq(r.status, 413);
  sk_httpc_free(&r);
  free(l);
  sk_httpc_resp a2, b2;
  timed("POST", "/v1/skeletons/fox/pose", "application/json", pose, strlen(pose), &a2);
  timed("POST", "/v1/skeletons/fox/pose", "application/json", range, strlen(range), &b2);
  ck_assert_int_eq(a2.status, 200);
  ck_assert_int_eq(b2.status, 200);
  ck_assert_uint_eq(a.len, a2.len);
  ck_assert_mem_eq(a.body, a2.body, a.len);
  ck_assert_uint_eq(b.len, b2.len);
  ck_assert_mem_eq(b.body, b2.body, b.len);
  sk_httpc_free(&a);
  sk_httpc_free(&b);
  sk_httpc_free(&a2);
  sk_httpc_free(&b2);
  probe_stop("Fox attacks ran");
  stop();
}
END_TEST

START_TEST(flags_and_environment_set_the_limits) {
  const char *exe = getenv("SKINNERD") ? getenv("SKINNERD") : "./skinnerd";
  char cmd[1200];
  static const char *const bad[] = {"--max-frames 0", "--max-layers x", "--max-work -1", "--max-answer-mb 0",
                                    "--max-skeleton-mb 2000000"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", exe, bad[i]);
    ck_assert_msg(WEXITSTATUS(system(cmd)) == 2, "%s was accepted", bad[i]);
  }
  snprintf(cmd, sizeof cmd, "SKINNERD_MAX_WORK=lots %s 2>/dev/null", exe);
  ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
  static const char *const help[] = {"--max-frames N", "SKINNERD_MAX_FRAMES", "--max-layers N", "SKINNERD_MAX_LAYERS",
                                     "--max-work N", "SKINNERD_MAX_WORK", "--max-answer-mb N", "SKINNERD_MAX_ANSWER_MB",
                                     "--max-skeleton-mb N", "SKINNERD_MAX_SKELETON_MB"};
  for (size_t i = 0; i < sizeof help / sizeof help[0]; i++) {
    snprintf(cmd, sizeof cmd, "%s --help | grep -q -- '%s'", exe, help[i]);
    ck_assert_msg(WEXITSTATUS(system(cmd)) == 0, "--help does not mention %s", help[i]);
  }

  setenv("SKINNERD_MAX_FRAMES", "5", 1);
  const char *const args[] = {"--max-layers", "2", "--max-work", "100000", "--max-skeleton-mb", "1", NULL};
  start(args);
  put_asset("fox", "Fox.glb"); /* estimated at ~110 KB */
  sk_httpc_resp r;
  size_t len;
  char *mq = (char *)sk_test_read_asset("mannequiny-0.3.0.glb", &len); /* ~1.1 MB */
  timed("PUT", "/v1/skeletons/mq", "model/gltf-binary", mq, len, &r);
  free(mq);
  ck_assert_msg(r.status == 413 && strstr(r.body, "--max-skeleton-mb"), "%d %.300s", r.status, r.body);
  sk_httpc_free(&r);
  static const char five[] = "{\"animation\":\"Walk\",\"times\":[0,0.1,0.2,0.3,0.4]}";
  timed("POST", "/v1/skeletons/fox/pose", "application/json", five, strlen(five), &r);
  ck_assert_int_eq(r.status, 200);
  sk_httpc_free(&r);
  static const char six[] = "{\"animation\":\"Walk\",\"times\":[0,0.1,0.2,0.3,0.4,0.5]}";
  timed("POST", "/v1/skeletons/fox/pose", "application/json", six, strlen(six), &r);
  expect_problem(&r, 413, "/times", "the limit is 5 (--max-frames)");
  sk_httpc_free(&r);
  char *l3 = layers_body(3);
  timed("POST", "/v1/skeletons/fox/pose", "application/json", l3, strlen(l3), &r);
  expect_problem(&r, 413, "/layers", "the limit is 2 (--max-layers)");
  sk_httpc_free(&r);
  free(l3);
  /* 1024 plain poses of 24 bones: 125 units each as JSON (25 matrices, 4 a
   * matrix to write), over 100 000 */
  char *batch = repeated("{\"poses\":[", "{}", 1024, "]}", &len);
  timed("POST", "/v1/skeletons/fox/poses", "application/json", batch, len, &r);
  expect_problem(&r, 413, "/poses", "the limit is 100000 (--max-work)");
  sk_httpc_free(&r);
  stop();
  unsetenv("SKINNERD_MAX_FRAMES");
  /* as float32 the same batch is 25 units a pose but 1.6 MB */
  const char *const args2[] = {"--max-answer-mb", "1", NULL};
  start(args2);
  put_asset("fox", "Fox.glb");
  char h[128];
  snprintf(h, sizeof h, "Content-Type: application/json\r\nAccept: application/octet-stream\r\n");
  ck_assert_int_eq(sk_httpc_request(D.host, D.port, "POST", "/v1/skeletons/fox/poses", h, batch, len, &r), 0);
  expect_problem(&r, 413, "/poses", "the limit is 1048576 (--max-answer-mb)");
  sk_httpc_free(&r);
  free(batch);
  stop();
}
END_TEST

static Suite *limits_suite(void) {
  Suite *s = suite_create("limits");
  TCase *t = tcase_create("attacks");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, a_100_second_range_on_60000_channels_is_refused_before_any_sampling);
  tcase_add_test(t, two_thousand_layers_are_refused_before_any_sampling);
  tcase_add_test(t, allowed_clip_work_runs_on_the_pool_and_healthz_stays_fast);
  tcase_add_test(t, an_evicted_skeleton_is_reloaded_off_the_loop);
  tcase_add_test(t, zero_filled_accessors_are_refused_before_anything_is_allocated);
  tcase_add_test(t, a_gltf_whose_estimate_does_not_fit_the_memory_budget_gets_503_before_it_is_built);
  tcase_add_test(t, a_49_byte_frame_range_on_a_real_asset_is_refused_before_sampling);
  tcase_add_test(t, a_41_kb_batch_asking_for_a_gigabyte_answer_is_refused_before_evaluating);
  tcase_add_test(t, clip_work_on_the_pool_answers_what_the_loop_answers);
  tcase_add_test(t, multi_megabyte_pose_bodies_are_parsed_off_the_loop);
  tcase_add_test(t, a_body_whose_parse_tree_does_not_fit_the_budget_gets_503_before_parsing);
  tcase_add_test(t, normal_requests_stay_exact_after_every_attack);
  tcase_add_test(t, flags_and_environment_set_the_limits);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(limits_suite()); }
