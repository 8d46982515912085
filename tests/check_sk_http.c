/* sk_http: libmicrohttpd on a libuv loop, with a tiny handler of our own
 * (no routes): suspended jobs, the jobs cap, job deadlines, the body
 * limit, and a stop that finishes the job in flight. The loop runs on its
 * own thread; the test drives it over loopback with sk_httpc. */
#include <pthread.h>

#include "sk_error.h"
#include "sk_http.h"
#include "sk_http_int.h"
#include "sk_httpc.h"
#include "sk_tls.h"
#include "sk_testutil.h"

typedef struct server {
  uv_loop_t loop;
  uv_async_t stop_async;
  sk_http *http;
  sk_http_config cfg;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int ready, stopped, completed;
  unsigned port;
} server;

static void on_begin(void *ctx, sk_http_req *req) {
  (void)ctx;
  (void)req;
}

static void slow_work(void *arg) {
  usleep((useconds_t)(uintptr_t)arg * 1000);
}

static void slow_after(sk_http_req *req, void *arg, int status) {
  (void)arg;
  if (status == SK_EBUSY)
    sk_http_respond(req, 503, "text/plain", (void *)"late\n", 5, false, NULL);
  else
    sk_http_respond(req, 200, "text/plain", (void *)"slow\n", 5, false, NULL);
}

/* A streamed answer of `left` bytes of a pattern, at most 1000 a call. */
typedef struct counter {
  size_t left, at;
  int *released;
} counter;

static long produce_pattern(void *arg, char *dest, size_t cap) {
  counter *c = arg;
  size_t n = c->left < cap ? c->left : cap;
  if (n > 1000)
    n = 1000;
  for (size_t i = 0; i < n; i++)
    dest[i] = (char)('a' + (c->at + i) % 26);
  c->at += n;
  c->left -= n;
  return (long)n;
}

static void release_pattern(void *arg) {
  counter *c = arg;
  (*c->released)++; /* loop thread */
  free(c);
}

static int g_released; /* loop thread; read after the server stopped */

static void on_handle(void *ctx, sk_http_req *req) {
  (void)ctx;
  if (req->body_too_large) {
    sk_http_respond(req, 413, "text/plain", (void *)"big\n", 4, false, NULL);
    return;
  }
  if (req->over_budget) {
    sk_http_respond(req, 503, "text/plain", (void *)"budget\n", 7, false, NULL);
    return;
  }
  if (strncmp(req->url, "/charged/", 9) == 0) {
    size_t n = strtoul(req->url + 9, NULL, 10);
    char *body = malloc(n);
    memset(body, 'c', n);
    sk_http_charge(req, n);
    sk_http_respond(req, 200, "text/plain", body, n, true, NULL);
    return;
  }
  bool known = strncmp(req->url, "/streamlen/", 11) == 0;
  if (known || strncmp(req->url, "/stream/", 8) == 0) {
    counter *c = calloc(1, sizeof *c);
    c->left = strtoul(req->url + (known ? 11 : 8), NULL, 10);
    c->released = &g_released;
    sk_http_respond_stream(req, 200, "text/plain", known ? c->left : SK_HTTP_LENGTH_UNKNOWN, 4096, produce_pattern, c,
                           release_pattern, NULL);
    return;
  }
  if (strcmp(req->url, "/marked") == 0) { /* a handler that marks both phases */
    sk_http_mark(req, SK_HTTP_PARSED);
    sk_http_mark(req, SK_HTTP_EVALUATED);
    sk_http_respond(req, 200, "text/plain", (void *)"m\n", 2, false, NULL);
    return;
  }
  if (strncmp(req->url, "/slow/", 6) == 0) {
    uintptr_t ms = (uintptr_t)strtoul(req->url + 6, NULL, 10);
    if (sk_http_defer(req, slow_work, slow_after, (void *)ms) != 0)
      sk_http_respond(req, 503, "text/plain", (void *)"busy\n", 5, false, NULL);
    return;
  }
  char *copy = malloc(req->body.len + 1);
  memcpy(copy, req->body.data, req->body.len + 1);
  const char *hdr[] = {"X-Method", req->method, NULL};
  sk_http_respond(req, 200, "application/octet-stream", copy, req->body.len, true, hdr);
}

static void on_complete(void *ctx, sk_http_req *req) {
  server *s = ctx;
  (void)req;
  s->completed++; /* loop thread only */
}

static void on_stopped(void *arg) {
  server *s = arg;
  uv_close((uv_handle_t *)&s->stop_async, NULL);
}

static void on_stop_async(uv_async_t *a) {
  server *s = a->data;
  sk_http_stop(s->http, on_stopped, s);
}

static void *loop_main(void *arg) {
  server *s = arg;
  uv_loop_init(&s->loop);
  uv_async_init(&s->loop, &s->stop_async, on_stop_async);
  s->stop_async.data = s;
  sk_http_handler h = {s, on_begin, on_handle, on_complete};
  int rc = sk_http_start(&s->loop, &s->cfg, &h, &s->http);
  pthread_mutex_lock(&s->mu);
  s->ready = rc == 0 ? 1 : -1;
  s->port = rc == 0 ? sk_http_port(s->http) : 0;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
  if (rc != 0) {
    uv_close((uv_handle_t *)&s->stop_async, NULL);
    uv_run(&s->loop, UV_RUN_DEFAULT);
    uv_loop_close(&s->loop);
    return NULL;
  }
  uv_run(&s->loop, UV_RUN_DEFAULT);
  sk_http_destroy(s->http);
  uv_loop_close(&s->loop);
  pthread_mutex_lock(&s->mu);
  s->stopped = 1;
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

static void start(server *s) {
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  ck_assert_int_eq(pthread_create(&s->thread, NULL, loop_main, s), 0);
  pthread_mutex_lock(&s->mu);
  while (s->ready == 0)
    pthread_cond_wait(&s->cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
  ck_assert_int_eq(s->ready, 1);
}

static void stop(server *s) {
  uv_async_send(&s->stop_async);
  pthread_join(s->thread, NULL);
  ck_assert(s->stopped);
}

typedef struct call {
  server *s;
  const char *path;
  sk_httpc_resp r;
} call;

static void *call_main(void *arg) {
  call *c = arg;
  sk_httpc_request("127.0.0.1", c->s->port, "GET", c->path, NULL, NULL, 0, &c->r);
  return NULL;
}

START_TEST(requests_get_their_answers_and_port_0_picks_a_port) {
  server s;
  memset(&s, 0, sizeof s);
  start(&s);
  ck_assert_uint_gt(s.port, 0);
  sk_httpc_resp r;
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "PUT", "/echo", NULL, "hello", 5, &r), 0);
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_eq(r.body, "hello");
  char m[16];
  ck_assert_str_eq(sk_httpc_header(&r, "X-Method", m, sizeof m), "PUT");
  sk_httpc_free(&r);
  stop(&s);
  ck_assert_int_eq(s.completed, 1);
}
END_TEST

/* Every answer has Server-Timing: "total" alone, or the phases the
 * handler marked before it, durations in ms. */
START_TEST(every_answer_has_server_timing_with_the_marked_phases) {
  server s;
  memset(&s, 0, sizeof s);
  start(&s);
  sk_httpc_resp r;
  char v[160];
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "PUT", "/echo", NULL, "hello", 5, &r), 0);
  ck_assert_ptr_nonnull(sk_httpc_header(&r, "Server-Timing", v, sizeof v));
  double total = -1;
  ck_assert_int_eq(sscanf(v, "total;dur=%lf", &total), 1);
  ck_assert(total >= 0 && total < 10000);
  sk_httpc_free(&r);
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "GET", "/marked", NULL, NULL, 0, &r), 0);
  ck_assert_ptr_nonnull(sk_httpc_header(&r, "Server-Timing", v, sizeof v));
  double p = -1, e = -1, w = -1, t = -1;
  ck_assert_int_eq(sscanf(v, "parse;dur=%lf, evaluate;dur=%lf, write;dur=%lf, total;dur=%lf", &p, &e, &w, &t), 4);
  ck_assert(p >= 0 && e >= 0 && w >= 0 && t >= p + e + w - 0.003); /* each rounded to 1 us */
  sk_httpc_free(&r);
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "GET", "/slow/1", NULL, NULL, 0, &r), 0); /* via the pool */
  ck_assert_ptr_nonnull(sk_httpc_header(&r, "Server-Timing", v, sizeof v));
  sk_httpc_free(&r);
  stop(&s);
}
END_TEST

/* One answer with a Content-Length off a keep-alive connection: its head
 * (status line and headers) and body into the buffers. -1 on failure. */
static int read_one(int fd, char *head, size_t hcap, char *body, size_t bcap) {
  size_t len = 0;
  char buf[4096];
  char *end = NULL;
  while (end == NULL) {
    ssize_t k = recv(fd, buf + len, sizeof buf - 1 - len, 0);
    if (k <= 0)
      return -1;
    len += (size_t)k;
    buf[len] = 0;
    end = strstr(buf, "\r\n\r\n");
  }
  size_t hl = (size_t)(end - buf);
  if (hl >= hcap)
    return -1;
  memcpy(head, buf, hl);
  head[hl] = 0;
  const char *cl = strstr(head, "\r\nContent-Length:"); /* libmicrohttpd's spelling */
  size_t want = cl != NULL ? strtoul(cl + 17, NULL, 10) : 0, have = len - hl - 4;
  if (want >= bcap || have > want)
    return -1;
  memcpy(body, end + 4, have);
  while (have < want) {
    ssize_t k = recv(fd, body + have, want - have, 0);
    if (k <= 0)
      return -1;
    have += (size_t)k;
  }
  body[want] = 0;
  return 0;
}

/* One keep-alive connection: answers of the same length and headers reuse
 * the connection's kept response (sk_http.c, respond_kept), so each must
 * still carry its own bytes, and one with other headers or another length
 * its own headers. */
START_TEST(answers_on_one_connection_carry_their_own_bytes_and_headers) {
  server s;
  memset(&s, 0, sizeof s);
  start(&s);
  int fd = sk_httpc_connect("127.0.0.1", s.port);
  ck_assert_int_ge(fd, 0);
  static const struct {
    const char *method, *body;
  } steps[] = {{"PUT", "aaaa"}, {"PUT", "bbbb"}, {"POST", "cccc"}, {"PUT", "dd"}, {"PUT", "eeee"}, {"PUT", "ffff"}};
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    char head[256];
    int n = snprintf(head, sizeof head, "%s /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %zu\r\n\r\n%s",
                     steps[i].method, strlen(steps[i].body), steps[i].body);
    ck_assert_int_eq(sk_httpc_send_all(fd, head, (size_t)n), 0);
    char ahead[1024], abody[64], want[64];
    ck_assert_int_eq(read_one(fd, ahead, sizeof ahead, abody, sizeof abody), 0);
    ck_assert_msg(strncmp(ahead, "HTTP/1.1 200", 12) == 0, "%s", ahead);
    ck_assert_str_eq(abody, steps[i].body);
    snprintf(want, sizeof want, "\r\nX-Method: %s\r\n", steps[i].method);
    ck_assert_msg(strstr(strcat(ahead, "\r\n"), want) != NULL, "no %s in %s", want, ahead);
  }
  close(fd);
  stop(&s);
  ck_assert_int_eq(s.completed, 6);
}
END_TEST

/* A kept response reused for the next answer (respond_kept) carries that
 * answer's own Server-Timing, once: the header is replaced, not added. */
START_TEST(a_reused_answer_carries_its_own_server_timing_once) {
  server s;
  memset(&s, 0, sizeof s);
  start(&s);
  int fd = sk_httpc_connect("127.0.0.1", s.port);
  ck_assert_int_ge(fd, 0);
  for (int i = 0; i < 5; i++) {
    static const char put[] = "PUT /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n\r\nabcd";
    ck_assert_int_eq(sk_httpc_send_all(fd, put, sizeof put - 1), 0);
    char ahead[1024], abody[64];
    ck_assert_int_eq(read_one(fd, ahead, sizeof ahead, abody, sizeof abody), 0);
    const char *st = strstr(ahead, "\r\nServer-Timing: total;dur=");
    ck_assert_msg(st != NULL, "no Server-Timing in %s", ahead);
    ck_assert_msg(strstr(st + 15, "Server-Timing") == NULL, "two Server-Timing headers in %s", ahead);
    ck_assert_str_eq(abody, "abcd");
  }
  close(fd);
  stop(&s);
}
END_TEST

START_TEST(a_small_request_is_served_while_a_job_runs) {
  server s;
  memset(&s, 0, sizeof s);
  start(&s);
  call slow = {&s, "/slow/400", {0}};
  pthread_t t;
  pthread_create(&t, NULL, call_main, &slow);
  usleep(50000);
  uint64_t t0 = uv_hrtime();
  sk_httpc_resp r;
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "POST", "/echo", NULL, "x", 1, &r), 0);
  ck_assert_int_eq(r.status, 200);
  ck_assert_msg(uv_hrtime() - t0 < 300000000u, "the small request waited for the job");
  sk_httpc_free(&r);
  pthread_join(t, NULL);
  ck_assert_int_eq(slow.r.status, 200);
  ck_assert_str_eq(slow.r.body, "slow\n");
  sk_httpc_free(&slow.r);
  stop(&s);
}
END_TEST

START_TEST(jobs_past_the_cap_get_503) {
  server s;
  memset(&s, 0, sizeof s);
  s.cfg.max_jobs = 1;
  start(&s);
  call a = {&s, "/slow/300", {0}}, b = {&s, "/slow/10", {0}};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, call_main, &a);
  usleep(50000);
  pthread_create(&tb, NULL, call_main, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  ck_assert_int_eq(a.r.status, 200);
  ck_assert_int_eq(b.r.status, 503);
  ck_assert_str_eq(b.r.body, "busy\n");
  sk_httpc_free(&a.r);
  sk_httpc_free(&b.r);
  stop(&s);
}
END_TEST

START_TEST(a_job_queued_past_its_deadline_is_answered_503) {
  /* One pool thread: the second job waits behind the first past its deadline. */
  setenv("UV_THREADPOOL_SIZE", "1", 1);
  server s;
  memset(&s, 0, sizeof s);
  s.cfg.job_deadline_ms = 100;
  start(&s);
  call a = {&s, "/slow/500", {0}}, b = {&s, "/slow/10", {0}};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, call_main, &a);
  usleep(50000);
  pthread_create(&tb, NULL, call_main, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  ck_assert_int_eq(a.r.status, 200);
  ck_assert_int_eq(b.r.status, 503);
  ck_assert_str_eq(b.r.body, "late\n");
  sk_httpc_free(&a.r);
  sk_httpc_free(&b.r);
  stop(&s);
}
END_TEST

START_TEST(stop_finishes_the_job_in_flight) {
  server s;
  memset(&s, 0, sizeof s);
  start(&s);
  call a = {&s, "/slow/300", {0}};
  pthread_t ta;
  pthread_create(&ta, NULL, call_main, &a);
  usleep(50000);
  stop(&s); /* returns once the loop has ended */
  pthread_join(ta, NULL);
  ck_assert_int_eq(a.r.status, 200);
  sk_httpc_free(&a.r);
  /* not accepting any more */
  sk_httpc_resp r;
  ck_assert_int_ne(sk_httpc_request("127.0.0.1", s.port, "GET", "/echo", NULL, NULL, 0, &r), 0);
}
END_TEST

START_TEST(bodies_over_the_limit_are_not_stored) {
  server s;
  memset(&s, 0, sizeof s);
  s.cfg.max_body = 100;
  start(&s);
  char body[300];
  memset(body, 'x', sizeof body);
  sk_httpc_resp r;
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "PUT", "/echo", NULL, body, 100, &r), 0);
  ck_assert_int_eq(r.status, 200);
  ck_assert_uint_eq(r.len, 100);
  sk_httpc_free(&r);
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "PUT", "/echo", NULL, body, sizeof body, &r), 0);
  ck_assert_int_eq(r.status, 413);
  char h[32];
  ck_assert_str_eq(sk_httpc_header(&r, "Connection", h, sizeof h), "close");
  sk_httpc_free(&r);
  stop(&s);
}
END_TEST

START_TEST(a_taken_port_is_an_error) {
  server a;
  memset(&a, 0, sizeof a);
  start(&a);
  server b;
  memset(&b, 0, sizeof b);
  b.cfg.port = a.port;
  b.cfg.log_level = -1; /* the failure is expected: keep the log quiet */
  pthread_mutex_init(&b.mu, NULL);
  pthread_cond_init(&b.cv, NULL);
  pthread_create(&b.thread, NULL, loop_main, &b);
  pthread_join(b.thread, NULL);
  ck_assert_int_eq(b.ready, -1);
  stop(&a);
}
END_TEST

START_TEST(a_passed_listening_socket_is_served) {
  /* what systemd socket activation hands over */
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  ck_assert_int_eq(listen(fd, 16), 0);
  socklen_t len = sizeof a;
  getsockname(fd, (struct sockaddr *)&a, &len);
  server s;
  memset(&s, 0, sizeof s);
  s.cfg.listen_fd = fd;
  start(&s);
  ck_assert_uint_eq(s.port, ntohs(a.sin_port));
  sk_httpc_resp r;
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "PUT", "/echo", NULL, "fd", 2, &r), 0);
  ck_assert_str_eq(r.body, "fd");
  sk_httpc_free(&r);
  stop(&s);
}
END_TEST

START_TEST(a_streamed_answer_arrives_whole_and_its_producer_is_released) {
  server s;
  memset(&s, 0, sizeof s);
  g_released = 0;
  start(&s);
  sk_httpc_resp r;
  char v[64];
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "GET", "/stream/300000", NULL, NULL, 0, &r), 0);
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_eq(sk_httpc_header(&r, "Transfer-Encoding", v, sizeof v), "chunked");
  ck_assert_uint_eq(r.len, 300000);
  for (size_t i = 0; i < r.len; i++)
    ck_assert_int_eq(r.body[i], 'a' + (int)(i % 26));
  sk_httpc_free(&r);
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "GET", "/streamlen/300000", NULL, NULL, 0, &r), 0);
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_eq(sk_httpc_header(&r, "Content-Length", v, sizeof v), "300000");
  ck_assert_uint_eq(r.len, 300000);
  ck_assert_int_eq(r.body[299999], 'a' + 299999 % 26);
  sk_httpc_free(&r);
  /* A client that leaves mid-answer: the producer is released all the same. */
  int fd = sk_httpc_connect("127.0.0.1", s.port);
  const char *get = "GET /stream/100000000 HTTP/1.1\r\nHost: x\r\n\r\n";
  ck_assert_int_eq(sk_httpc_send_all(fd, get, strlen(get)), 0);
  char buf[8192];
  ck_assert_int_gt(recv(fd, buf, sizeof buf, 0), 0);
  close(fd);
  usleep(100 * 1000);
  stop(&s);
  ck_assert_int_eq(g_released, 3);
}
END_TEST

START_TEST(bodies_and_answers_are_counted_in_the_budget) {
  server s;
  memset(&s, 0, sizeof s);
  sk_budget b;
  sk_budget_init(&b, 64 * 1024);
  s.cfg.budget = &b;
  start(&s);
  static char body[100 * 1024];
  memset(body, 'x', sizeof body);
  sk_httpc_resp r;
  /* 20 KB in, 20 KB echoed back: fits. */
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "PUT", "/echo", NULL, body, 20 * 1024, &r), 0);
  ck_assert_int_eq(r.status, 200);
  ck_assert_uint_eq(r.len, 20 * 1024);
  sk_httpc_free(&r);
  /* 100 KB announced: refused before a byte of it is read. */
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "PUT", "/echo", NULL, body, sizeof body, &r), 0);
  ck_assert_int_eq(r.status, 503);
  ck_assert_str_eq(r.body, "budget\n");
  sk_httpc_free(&r);
  /* 40 KB in fits, but 40 KB more for its echo does not: the answer is
   * refused with a problem+json 503 naming the flag. */
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "PUT", "/echo", NULL, body, 40 * 1024, &r), 0);
  ck_assert_int_eq(r.status, 503);
  char v[64];
  ck_assert_str_eq(sk_httpc_header(&r, "Retry-After", v, sizeof v), "1");
  ck_assert_str_eq(sk_httpc_header(&r, "Content-Type", v, sizeof v), "application/problem+json");
  ck_assert_ptr_nonnull(strstr(r.body, "--memory-mb"));
  sk_httpc_free(&r);
  /* A charged answer (what /metrics does) goes out past the budget. */
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", s.port, "GET", "/charged/100000", NULL, NULL, 0, &r), 0);
  ck_assert_int_eq(r.status, 200);
  ck_assert_uint_eq(r.len, 100000);
  sk_httpc_free(&r);
  stop(&s);
  sk_budget_stats st;
  sk_budget_get_stats(&b, &st);
  ck_assert_uint_eq(st.used, 0); /* every reservation came back */
  ck_assert_uint_eq(st.refused, 2);
  ck_assert_uint_ge(st.high, 100000);
}
END_TEST

/* ---- the options handed to libmicrohttpd ------------------------------------ */

/* The slot of `opt` in items[0..n), or NULL; fails when it is there twice. */
static const struct MHD_OptionItem *option(const struct MHD_OptionItem *items, size_t n, enum MHD_OPTION opt) {
  const struct MHD_OptionItem *found = NULL;
  for (size_t i = 0; i < n; i++)
    if (items[i].option == opt) {
      ck_assert_msg(found == NULL, "option %d set twice", (int)opt);
      found = &items[i];
    }
  return found;
}

/* Before: with a certificate, the certificate callback overwrote the
 * per-address cap's slot, so --max-per-ip did nothing under TLS. Every
 * setting, TLS or not, has a slot of its own with its value. */
START_TEST(every_setting_reaches_libmicrohttpd_with_and_without_tls) {
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  for (int tls = 0; tls < 2; tls++)
    for (int passed = 0; passed < 2; passed++) {
      sk_http_config c = {.per_ip_limit = 8, .conn_timeout_s = 7, .conn_memory = 12345, .conn_limit = 99,
                          .listen_fd = passed ? 42 : 0, .tls = tls ? (struct sk_tls *)&ss : NULL,
                          .tls_priorities = passed ? "NORMAL" : NULL};
      struct MHD_OptionItem items[SK_HTTP_MAX_OPTIONS];
      size_t n = sk_http__options(&c, &ss, items, SK_HTTP_MAX_OPTIONS);
      ck_assert_uint_lt(n, SK_HTTP_MAX_OPTIONS);
      ck_assert_int_eq(items[n].option, MHD_OPTION_END);
      const struct MHD_OptionItem *o;
      ck_assert_ptr_nonnull(o = option(items, n, MHD_OPTION_PER_IP_CONNECTION_LIMIT));
      ck_assert_int_eq(o->value, 8);
      ck_assert_ptr_nonnull(o = option(items, n, MHD_OPTION_CONNECTION_TIMEOUT));
      ck_assert_int_eq(o->value, 7);
      ck_assert_ptr_nonnull(o = option(items, n, MHD_OPTION_CONNECTION_MEMORY_LIMIT));
      ck_assert_int_eq(o->value, 12345);
      ck_assert_ptr_nonnull(o = option(items, n, MHD_OPTION_CONNECTION_LIMIT));
      ck_assert_int_eq(o->value, 99);
      if (passed) {
        ck_assert_ptr_nonnull(o = option(items, n, MHD_OPTION_LISTEN_SOCKET));
        ck_assert_int_eq(o->value, 42);
        ck_assert_ptr_null(option(items, n, MHD_OPTION_SOCK_ADDR));
      } else {
        ck_assert_ptr_nonnull(o = option(items, n, MHD_OPTION_SOCK_ADDR));
        ck_assert_ptr_eq(o->ptr_value, &ss);
        ck_assert_ptr_null(option(items, n, MHD_OPTION_LISTEN_SOCKET));
      }
      if (tls) {
        ck_assert_ptr_nonnull(o = option(items, n, MHD_OPTION_HTTPS_CERT_CALLBACK));
        ck_assert_ptr_nonnull(o->ptr_value);
        ck_assert_ptr_nonnull(o = option(items, n, MHD_OPTION_HTTPS_PRIORITIES));
        ck_assert_str_eq(o->ptr_value, passed ? "NORMAL" : SK_TLS_DEFAULT_PRIORITIES);
      } else {
        ck_assert_ptr_null(option(items, n, MHD_OPTION_HTTPS_CERT_CALLBACK));
        ck_assert_ptr_null(option(items, n, MHD_OPTION_HTTPS_PRIORITIES));
      }
    }
  /* no cap configured: no slot (MHD would keep its address tree for nothing) */
  sk_http_config c = {.conn_limit = 1};
  struct MHD_OptionItem items[SK_HTTP_MAX_OPTIONS];
  size_t n = sk_http__options(&c, &ss, items, SK_HTTP_MAX_OPTIONS);
  ck_assert_ptr_null(option(items, n, MHD_OPTION_PER_IP_CONNECTION_LIMIT));
}
END_TEST

START_TEST(the_default_tls_priorities_are_accepted_by_gnutls_and_a_bad_string_is_named) {
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_tls_check_priorities(SK_TLS_DEFAULT_PRIORITIES, &err), 0);
  ck_assert_int_eq(sk_tls_check_priorities("NORMAL:+NO-SUCH-THING", &err), SK_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.text, "+NO-SUCH-THING"));
}
END_TEST

static Suite *http_suite(void) {
  Suite *s = suite_create("sk_http");
  TCase *t = tcase_create("lifecycle");
  tcase_set_timeout(t, 30);
  tcase_add_test(t, requests_get_their_answers_and_port_0_picks_a_port);
  tcase_add_test(t, every_answer_has_server_timing_with_the_marked_phases);
  tcase_add_test(t, answers_on_one_connection_carry_their_own_bytes_and_headers);
  tcase_add_test(t, a_reused_answer_carries_its_own_server_timing_once);
  tcase_add_test(t, a_small_request_is_served_while_a_job_runs);
  tcase_add_test(t, jobs_past_the_cap_get_503);
  tcase_add_test(t, a_job_queued_past_its_deadline_is_answered_503);
  tcase_add_test(t, stop_finishes_the_job_in_flight);
  tcase_add_test(t, a_taken_port_is_an_error);
  tcase_add_test(t, a_passed_listening_socket_is_served);
  tcase_add_test(t, a_streamed_answer_arrives_whole_and_its_producer_is_released);
  tcase_add_test(t, bodies_and_answers_are_counted_in_the_budget);
  suite_add_tcase(s, t);
  t = tcase_create("options");
  tcase_add_test(t, every_setting_reaches_libmicrohttpd_with_and_without_tls);
  tcase_add_test(t, the_default_tls_priorities_are_accepted_by_gnutls_and_a_bad_string_is_named);
  suite_add_tcase(s, t);
  t = tcase_create("errors");
  tcase_add_test(t, bodies_over_the_limit_are_not_stored);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(http_suite()); }
