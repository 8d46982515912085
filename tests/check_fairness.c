/* Fair connections (issue 11) against the real skinnerd: thousands of idle
 * and trickling clients must not starve health checks or normal clients.
 * Every client is on loopback; a client socket bound to 127.0.x.y acts as
 * another address (Linux routes all of 127.0.0.0/8 to lo). */
#include <check.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>

#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_testskel.h"
#include "sk_testutil.h"

static sk_daemon D;

/* Starts skinnerd on 127.0.0.1:0 with `extra` args; with `admin`, also
 * --admin-listen 127.0.0.1:0 (its port from the second stdout line). */
static void start(const char *const *extra, int admin) {
  const char *args[32];
  int argc = 0;
  if (admin) {
    args[argc++] = "--admin-listen";
    args[argc++] = "127.0.0.1:0";
  }
  for (; extra != NULL && *extra != NULL && argc < 30; extra++)
    args[argc++] = *extra;
  args[argc] = NULL;
  sk_fixture_start(&D, args);
  if (admin) {
    ck_assert_uint_ne(D.admin_port, 0);
    ck_assert_uint_ne(D.admin_port, D.port);
  }
}

static void stop(void) { sk_fixture_stop(&D); }

/* A socket bound to `src`, connecting to 127.0.0.1:port; non-blocking when
 * `nb` (the connect is then only started). -1 on failure. */
static int connect_from(const char *src, unsigned port, int nb) {
  int fd = socket(AF_INET, SOCK_STREAM | (nb ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0)
    return -1;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  inet_pton(AF_INET, src, &a.sin_addr);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  a.sin_port = htons((unsigned short)port);
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (!nb) {
    struct timeval tv = {30, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && !(nb && errno == EINPROGRESS)) {
    close(fd);
    return -1;
  }
  return fd;
}

/* One "Connection: close" request from address `src`. 0 when answered. */
static int request_from(const char *src, unsigned port, const char *method, const char *path, const char *body,
                        sk_httpc_resp *r) {
  memset(r, 0, sizeof *r);
  int fd = connect_from(src, port, 0);
  if (fd < 0) {
    snprintf(r->error, sizeof r->error, "connect: %s", strerror(errno));
    return -1;
  }
  char head[512];
  int n = snprintf(head, sizeof head,
                   "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n"
                   "Content-Length: %zu\r\n\r\n",
                   method, path, body ? strlen(body) : 0);
  int rc = sk_httpc_send_all(fd, head, (size_t)n);
  if (rc == 0 && body != NULL)
    rc = sk_httpc_send_all(fd, body, strlen(body));
  rc = sk_httpc_read_response(fd, r);
  close(fd);
  return rc;
}

static void raise_nofile(void) {
  struct rlimit rl;
  ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
  rl.rlim_cur = rl.rlim_max;
  ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
  /* the flood's 6 000 client sockets, plus the daemon's 1 024 + 64 (it
   * inherits this limit) */
  ck_assert_msg(rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= 7500,
                "the open-file hard limit is %llu; this test needs 7500 (ulimit -Hn)",
                (unsigned long long)rl.rlim_cur);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double percentile(double *v, size_t n, double q) {
  qsort(v, n, sizeof *v, cmp_double);
  size_t i = (size_t)(q * (double)n);
  return v[i < n ? i : n - 1];
}

static const char k_pose[] = "{\"bones\":{\"bone3\":{\"rotation\":[0.1,0.2,0.5]}},"
                             "\"initialSkinMatrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0.25,0,0,1]}";

/* ---- the flood ----------------------------------------------------------------- */

enum { IDLE = 5000, TRICKLE = 1000, PER_ADDR = 50, HEALTH = 300 };

typedef struct flood {
  int idle[IDLE], slow[TRICKLE];
  size_t pos[TRICKLE];
  atomic_int stop;
  int idle_opened, slow_opened;
  long bytes;
} flood;

static const char k_slow_head[] = "POST /v1/skeletons/s/pose HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                                  "application/json\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char k_slow_body[] = "POST /v1/skeletons/s/pose HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                                  "application/json\r\nContent-Length: 100000\r\n\r\n";

/* Opens the idle clients (never a byte) and the trickling ones (half slow
 * headers, half slow bodies), each group spread over addresses PER_ADDR at
 * a time, so the per-address cap (64 here) refuses none of them and only
 * the connection handling is tested. */
static void flood_open(flood *F, unsigned port) {
  char src[32];
  for (int i = 0; i < IDLE; i++) {
    snprintf(src, sizeof src, "127.0.1.%d", 1 + i / PER_ADDR);
    F->idle[i] = connect_from(src, port, 1);
    F->idle_opened += F->idle[i] >= 0;
  }
  for (int i = 0; i < TRICKLE; i++) {
    snprintf(src, sizeof src, "127.0.2.%d", 1 + i / PER_ADDR);
    F->slow[i] = connect_from(src, port, 1);
    F->slow_opened += F->slow[i] >= 0;
    F->pos[i] = 0;
  }
}

/* One byte per trickling client per ~second; a slow body sends its whole
 * header first. A send that fails (not connected yet, or cut) is retried. */
static void *flood_trickle(void *arg) {
  flood *F = arg;
  while (!atomic_load(&F->stop)) {
    for (int i = 0; i < TRICKLE && !atomic_load(&F->stop); i++) {
      if (F->slow[i] < 0)
        continue;
      ssize_t k;
      if (i % 2 == 0)
        k = F->pos[i] + 1 < sizeof k_slow_head
                ? send(F->slow[i], k_slow_head + F->pos[i], 1, MSG_NOSIGNAL | MSG_DONTWAIT)
                : 0;
      else if (F->pos[i] == 0)
        k = send(F->slow[i], k_slow_body, sizeof k_slow_body - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      else
        k = send(F->slow[i], " ", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k > 0) {
        F->pos[i] += (size_t)k;
        F->bytes += k;
      }
      if (i % 10 == 9)
        usleep(10000); /* 1 000 clients in ~1 s */
    }
  }
  return NULL;
}

static void flood_close(flood *F) {
  for (int i = 0; i < IDLE; i++)
    if (F->idle[i] >= 0)
      close(F->idle[i]);
  for (int i = 0; i < TRICKLE; i++)
    if (F->slow[i] >= 0)
      close(F->slow[i]);
}

/* The attack: 5 000 idle clients and 1 000 trickling ones. Before
 * the fix /healthz waited 41 s behind 5 000 idle connections. Bounds:
 * /healthz on the admin listener p99 under 50 ms over 300 requests while
 * the flood runs; a pose on the public port (from an address of its own)
 * answered 200 within 10 s, the header timeout, which is what it waited
 * for at least before (every slot was held by a connection that only that
 * timeout would close). */
START_TEST(admin_healthz_stays_fast_and_the_public_port_answers_under_5000_idle_and_1000_trickling_clients) {
  raise_nofile();
  const char *const args[] = {"--max-per-ip", "64", "--max-connections", "1024", NULL};
  start(args, 1);
  char *skel = sk_test_tree_skeleton(65);
  sk_httpc_resp r;
  ck_assert_int_eq(request_from("127.0.0.1", D.port, "PUT", "/v1/skeletons/s", skel, &r), 0);
  ck_assert_msg(r.status == 201, "PUT: %d %s", r.status, r.body);
  sk_httpc_free(&r);
  free(skel);

  static flood F;
  memset(&F, 0, sizeof F);
  double t_open = sk_test_now();
  flood_open(&F, D.port);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, flood_trickle, &F), 0);
  double opened_s = sk_test_now() - t_open;
  usleep(500000); /* the daemon is at its connection limit, the backlog full */

  /* The public port first, while the backlog is at its longest. */
  double t0 = sk_test_now();
  int rc = request_from("127.0.0.3", D.port, "POST", "/v1/skeletons/s/pose", k_pose, &r);
  double pose_s = sk_test_now() - t0;
  ck_assert_msg(rc == 0 && r.status == 200, "pose on the public port: rc %d status %d %s", rc, r.status, r.error);
  sk_httpc_free(&r);

  double lat[HEALTH];
  int failed = 0;
  double t_h = sk_test_now();
  for (int i = 0; i < HEALTH; i++) {
    double t = sk_test_now();
    rc = request_from("127.0.0.1", D.admin_port, "GET", "/healthz", NULL, &r);
    lat[i] = sk_test_now() - t;
    failed += rc != 0 || r.status != 200;
    sk_httpc_free(&r);
    usleep(5000);
  }
  double health_s = sk_test_now() - t_h;
  double p50 = percentile(lat, HEALTH, 0.5), p99 = percentile(lat, HEALTH, 0.99), max = lat[HEALTH - 1];

  /* And the public port once more, after the churn. */
  t0 = sk_test_now();
  rc = request_from("127.0.0.3", D.port, "POST", "/v1/skeletons/s/pose", k_pose, &r);
  double pose2_s = sk_test_now() - t0;
  ck_assert_msg(rc == 0 && r.status == 200, "second pose: rc %d status %d %s", rc, r.status, r.error);
  sk_httpc_free(&r);

  /* The public listener's counters, read on the admin one. */
  ck_assert_int_eq(request_from("127.0.0.1", D.admin_port, "GET", "/metrics", NULL, &r), 0);
  ck_assert_int_eq(r.status, 200);
  unsigned long long evicted = 0, open_now = 0;
  const char *ev = strstr(r.body, "skinnerd_connections_closed_total{reason=\"evicted_idle\"} ");
  const char *op = strstr(r.body, "\nskinnerd_connections ");
  ck_assert_ptr_nonnull(ev);
  ck_assert_ptr_nonnull(op);
  sscanf(strchr(ev, '}') + 2, "%llu", &evicted);
  sscanf(op + 22, "%llu", &open_now);
  sk_httpc_free(&r);

  atomic_store(&F.stop, 1);
  pthread_join(th, NULL);
  fprintf(stderr,
          "fairness: %d idle + %d trickling clients opened in %.1f s (%ld bytes trickled); admin /healthz over %d "
          "requests in %.1f s: p50 %.2f ms p99 %.2f ms max %.2f ms, %d failed; public pose answered in %.0f ms, "
          "again after %.1f s of flood in %.0f ms; %llu idle connections evicted, %llu open\n",
          F.idle_opened, F.slow_opened, opened_s, F.bytes, HEALTH, health_s, p50 * 1e3, p99 * 1e3, max * 1e3, failed,
          pose_s * 1e3, sk_test_now() - t_open, pose2_s * 1e3, evicted, open_now);
  flood_close(&F);
  ck_assert_int_eq(F.idle_opened, IDLE);
  ck_assert_int_eq(F.slow_opened, TRICKLE);
  ck_assert_int_eq(failed, 0);
  ck_assert_msg(evicted >= IDLE / 2, "only %llu idle connections evicted", evicted);
  ck_assert_msg(open_now <= 1024, "%llu connections open over --max-connections 1024", open_now);
  ck_assert_msg(p99 < 0.050, "admin /healthz p99 %.1f ms (bound 50 ms)", p99 * 1e3);
  ck_assert_msg(pose_s < 10.0, "public pose took %.1f s (bound 10 s)", pose_s);
  ck_assert_msg(pose2_s < 10.0, "second public pose took %.1f s (bound 10 s)", pose2_s);
  stop();
}
END_TEST

/* ---- per-address cap ----------------------------------------------------------- */

/* True when the server closed fd without a byte of answer (EOF or reset)
 * within `ms`. */
static int closed_silently(int fd, int ms) {
  struct pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, ms) != 1)
    return 0;
  char c;
  ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
  return n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE));
}

/* libmicrohttpd accepts the connection over the cap and closes it at once:
 * the client sees EOF (or a reset when it had sent its request), never an
 * HTTP answer. Another address is served as usual. */
START_TEST(clients_over_the_per_address_cap_are_closed_while_another_address_is_served) {
  const char *const args[] = {"--max-per-ip", "8", NULL};
  start(args, 0);
  int held[8];
  for (int i = 0; i < 8; i++) {
    held[i] = connect_from("127.0.0.2", D.port, 0);
    ck_assert_int_ge(held[i], 0);
    ck_assert_int_eq(sk_httpc_send_all(held[i], "GET /he", 7), 0); /* not idle: kept */
  }
  usleep(200000);
  int over = connect_from("127.0.0.2", D.port, 0);
  ck_assert_int_ge(over, 0); /* the kernel completes the handshake */
  const char *get = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  sk_httpc_send_all(over, get, strlen(get));
  ck_assert_msg(closed_silently(over, 3000), "the 9th connection from 127.0.0.2 was not closed without an answer");
  close(over);
  sk_httpc_resp r;
  ck_assert_int_eq(request_from("127.0.0.3", D.port, "GET", "/healthz", NULL, &r), 0);
  ck_assert_int_eq(r.status, 200);
  sk_httpc_free(&r);
  for (int i = 0; i < 8; i++) {
    char c;
    ck_assert_msg(recv(held[i], &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN, "held connection %d closed", i);
    close(held[i]);
  }
  /* Slots are given back: the same address is served again. */
  usleep(200000);
  ck_assert_int_eq(request_from("127.0.0.2", D.port, "GET", "/healthz", NULL, &r), 0);
  ck_assert_int_eq(r.status, 200);
  sk_httpc_free(&r);
  stop();
}
END_TEST

/* ---- idle connections -------------------------------------------------------- */

/* Before: with every slot held by a connection that never sent a byte, a
 * new client waited in the backlog for the header timeout (10 s). Now
 * idle ones are closed, oldest first, as soon as the limit is reached. */
START_TEST(at_the_connection_limit_idle_connections_make_room_oldest_first) {
  const char *const args[] = {"--max-connections", "16", "--max-per-ip", "0", NULL};
  start(args, 0);
  int idle[16];
  for (int i = 0; i < 16; i++) {
    idle[i] = connect_from("127.0.0.2", D.port, 0);
    ck_assert_int_ge(idle[i], 0);
  }
  usleep(300000); /* all accepted and quiet for more than 100 ms */
  double t0 = sk_test_now();
  sk_httpc_resp r;
  ck_assert_int_eq(request_from("127.0.0.3", D.port, "GET", "/healthz", NULL, &r), 0);
  double dt = sk_test_now() - t0;
  ck_assert_int_eq(r.status, 200);
  sk_httpc_free(&r);
  fprintf(stderr, "fairness: healthz at the limit of 16 idle connections: %.1f ms\n", dt * 1e3);
  ck_assert_msg(dt < 2.0, "healthz waited %.2f s at the connection limit (bound 2 s)", dt);
  ck_assert_msg(closed_silently(idle[0], 1000), "the oldest idle connection is still open");
  for (int i = 0; i < 16; i++)
    close(idle[i]);
  stop();
}
END_TEST

START_TEST(a_connection_that_sends_nothing_is_closed_after_the_idle_timeout) {
  const char *const args[] = {"--idle-timeout", "1", NULL};
  start(args, 0);
  int quiet = connect_from("127.0.0.2", D.port, 0);
  int talker = connect_from("127.0.0.2", D.port, 0);
  ck_assert_int_ge(quiet, 0);
  ck_assert_int_ge(talker, 0);
  ck_assert_int_eq(sk_httpc_send_all(talker, "GET /healthz HTTP/1.1\r\n", 23), 0);
  double t0 = sk_test_now();
  ck_assert_msg(closed_silently(quiet, 4000), "an idle connection outlived --idle-timeout 1 by 3 s");
  double dt = sk_test_now() - t0;
  /* one with request bytes pending waits for its header deadline instead */
  char c;
  ck_assert_msg(recv(talker, &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN, "a connection with bytes was closed");
  ck_assert_msg(dt > 0.9, "closed after %.2f s, before the idle timeout", dt);
  close(quiet);
  close(talker);
  stop();
}
END_TEST

/* The same after an answer on a keep-alive connection: one that sends
 * nothing more is closed after the idle timeout; one that starts its next
 * request (well after the answer) waits for its header deadline. */
START_TEST(after_an_answer_a_quiet_keep_alive_connection_is_closed_after_the_idle_timeout) {
  const char *const args[] = {"--idle-timeout", "1", NULL};
  start(args, 0);
  int quiet = connect_from("127.0.0.2", D.port, 0);
  int talker = connect_from("127.0.0.2", D.port, 0);
  ck_assert_int_ge(quiet, 0);
  ck_assert_int_ge(talker, 0);
  const char *get = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
  int fds[2] = {quiet, talker};
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(sk_httpc_send_all(fds[i], get, strlen(get)), 0);
    char buf[1024];
    ssize_t n = recv(fds[i], buf, sizeof buf - 1, 0); /* the small answer comes in one segment */
    ck_assert_int_gt(n, 12);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 200", 12) == 0, "answer %d", i);
  }
  usleep(200000);
  ck_assert_int_eq(sk_httpc_send_all(talker, "GET /healthz HTTP/1.1\r\n", 23), 0);
  double t0 = sk_test_now();
  ck_assert_msg(closed_silently(quiet, 4000), "a quiet keep-alive connection outlived --idle-timeout 1 by 3 s");
  double dt = sk_test_now() - t0;
  char c;
  ck_assert_msg(recv(talker, &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN, "a connection with bytes was closed");
  ck_assert_msg(dt > 0.6, "closed after %.2f s, before the idle timeout", dt);
  close(quiet);
  close(talker);
  stop();
}
END_TEST

/* ---- the admin listener ----------------------------------------------------------- */

START_TEST(the_admin_listener_serves_health_and_metrics_and_takes_metrics_off_the_public_port) {
  start(NULL, 1);
  sk_httpc_resp r;
  char h[128];
  static const struct {
    const char *path;
    int pub, admin;
  } want[] = {{"/healthz", 200, 200}, {"/readyz", 200, 200}, {"/metrics", 404, 200}, {"/v1/skeletons", 200, 404},
              {"/metrics?x=1", 404, 200}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    ck_assert_int_eq(request_from("127.0.0.1", D.port, "GET", want[i].path, NULL, &r), 0);
    ck_assert_msg(r.status == want[i].pub, "public %s: %d", want[i].path, r.status);
    if (r.status == 404)
      ck_assert_str_eq(sk_httpc_header(&r, "Content-Type", h, sizeof h), "application/problem+json");
    sk_httpc_free(&r);
    ck_assert_int_eq(request_from("127.0.0.1", D.admin_port, "GET", want[i].path, NULL, &r), 0);
    ck_assert_msg(r.status == want[i].admin, "admin %s: %d", want[i].path, r.status);
    if (r.status == 404) {
      ck_assert_str_eq(sk_httpc_header(&r, "Content-Type", h, sizeof h), "application/problem+json");
      ck_assert_ptr_nonnull(strstr(r.body, "/healthz, /readyz and /metrics only"));
    }
    sk_httpc_free(&r);
  }
  /* the admin requests are counted with the others */
  ck_assert_int_eq(request_from("127.0.0.1", D.admin_port, "GET", "/metrics", NULL, &r), 0);
  ck_assert_ptr_nonnull(strstr(r.body, "route=\"/healthz\""));
  sk_httpc_free(&r);
  stop();
}
END_TEST

START_TEST(without_an_admin_listener_metrics_stay_on_the_public_port) {
  start(NULL, 0);
  sk_httpc_resp r;
  ck_assert_int_eq(request_from("127.0.0.1", D.port, "GET", "/metrics", NULL, &r), 0);
  ck_assert_int_eq(r.status, 200);
  sk_httpc_free(&r);
  stop();
}
END_TEST

START_TEST(bad_values_for_the_new_flags_are_refused_at_start) {
  const char *exe = getenv("SKINNERD") ? getenv("SKINNERD") : "./skinnerd";
  static const char *const bad[] = {"--admin-listen nowhere", "--admin-listen 127.0.0.1:70000", "--max-per-ip -1",
                                    "--idle-timeout 0", "--max-per-ip x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --listen 127.0.0.1:0 %s 2>/dev/null", exe, bad[i]);
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s: status %d", bad[i], st);
  }
  /* the environment too */
  char cmd[512];
  snprintf(cmd, sizeof cmd, "SKINNERD_MAX_PER_IP=lots %s --listen 127.0.0.1:0 2>/dev/null", exe);
  int st = system(cmd);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "SKINNERD_MAX_PER_IP=lots: status %d", st);
}
END_TEST

/* A listening socket on 127.0.0.1:0 moved to fd >= 10; its port in *port. */
static int listener(unsigned *port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ck_assert_int_ge(fd, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  socklen_t len = sizeof a;
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  ck_assert_int_eq(listen(fd, 16), 0);
  ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
  *port = ntohs(a.sin_port);
  int high = fcntl(fd, F_DUPFD, 10);
  close(fd);
  return high;
}

/* systemd passes the sockets of skinnerd.socket in order from fd 3: with a
 * second ListenStream=, fd 4 is the admin listener. Started by hand: the
 * fixture's start gives --listen, this one must inherit fds 3 and 4. */
START_TEST(under_socket_activation_a_second_socket_is_the_admin_listener) {
  const char *exe = getenv("SKINNERD") ? getenv("SKINNERD") : "./skinnerd";
  unsigned pub_port, admin_port;
  int s1 = listener(&pub_port), s2 = listener(&admin_port);
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(p[1], 1);
    if (dup2(s1, 3) != 3 || dup2(s2, 4) != 4)
      _exit(126);
    char pidbuf[32];
    snprintf(pidbuf, sizeof pidbuf, "%d", (int)getpid());
    setenv("LISTEN_PID", pidbuf, 1);
    setenv("LISTEN_FDS", "2", 1);
    execl(exe, exe, (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  close(s1);
  close(s2);
  memset(&D, 0, sizeof D);
  D.pid = pid;
  char line[256];
  unsigned fd, port;
  sk_daemon__read_line(p[0], line, sizeof line);
  ck_assert_msg(sscanf(line, "listening on inherited socket (fd %u), port %u", &fd, &port) == 2 && fd == 3 &&
                    port == pub_port,
                "first line: \"%s\"", line);
  sk_daemon__read_line(p[0], line, sizeof line);
  ck_assert_msg(sscanf(line, "admin listening on inherited socket (fd %u), port %u", &fd, &port) == 2 && fd == 4 &&
                    port == admin_port,
                "second line: \"%s\"", line);
  close(p[0]);
  sk_httpc_resp r;
  ck_assert_int_eq(request_from("127.0.0.1", pub_port, "GET", "/metrics", NULL, &r), 0);
  ck_assert_int_eq(r.status, 404);
  sk_httpc_free(&r);
  ck_assert_int_eq(request_from("127.0.0.1", admin_port, "GET", "/metrics", NULL, &r), 0);
  ck_assert_int_eq(r.status, 200);
  sk_httpc_free(&r);
  ck_assert_int_eq(request_from("127.0.0.1", pub_port, "GET", "/healthz", NULL, &r), 0);
  ck_assert_int_eq(r.status, 200);
  sk_httpc_free(&r);
  stop();
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("fairness");
  TCase *t = tcase_create("admin");
  tcase_set_timeout(t, 30);
  tcase_add_test(t, the_admin_listener_serves_health_and_metrics_and_takes_metrics_off_the_public_port);
  tcase_add_test(t, without_an_admin_listener_metrics_stay_on_the_public_port);
  tcase_add_test(t, bad_values_for_the_new_flags_are_refused_at_start);
  tcase_add_test(t, under_socket_activation_a_second_socket_is_the_admin_listener);
  suite_add_tcase(s, t);
  t = tcase_create("limits");
  tcase_set_timeout(t, 30);
  tcase_add_test(t, clients_over_the_per_address_cap_are_closed_while_another_address_is_served);
  tcase_add_test(t, at_the_connection_limit_idle_connections_make_room_oldest_first);
  tcase_add_test(t, a_connection_that_sends_nothing_is_closed_after_the_idle_timeout);
  tcase_add_test(t, after_an_answer_a_quiet_keep_alive_connection_is_closed_after_the_idle_timeout);
  suite_add_tcase(s, t);
  t = tcase_create("flood");
  tcase_set_timeout(t, 90);
  tcase_add_test(t,
                 admin_healthz_stays_fast_and_the_public_port_answers_under_5000_idle_and_1000_trickling_clients);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(suite()); }
