/* One gate for every route (issue 31): against the real skinnerd, every
 * row of the route table (sk_routes__table, so a route added later is
 * walked too), with every method it takes and OPTIONS, plus a path no row
 * matches, on the public and the admin listener, is sent the requests the
 * gate refuses: a duplicate Content-Length and Transfer-Encoding with
 * Content-Length, each hiding a DELETE of a stored skeleton after the
 * body a proxy would see, a Host not allowed, and, with --tokens, no
 * token. Each must get the very refusal POST .../pose gets (status and
 * problem+json kind), one answer and no 2xx, and the hidden DELETE must
 * never run. Every daemon listens on 127.0.0.1 and a free port. */
#include <fcntl.h>
#include <stdbool.h>

#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_metrics.h"
#include "sk_routes_int.h"
#include "sk_testskel.h"
#include "sk_testutil.h"
#include "sk_ui.h"

#define TW "writer-0123456789abcdef"
#define TR "reader-0123456789abcdef"
#define SKEL "/v1/skeletons/g"
/* The request a proxy reading the body another way would see as part of
 * the first one; Connection: close so that, where it runs, the exchange
 * ends with it instead of waiting for the idle timeout. */
#define HIDDEN "DELETE " SKEL " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"

static sk_daemon L;
static char tokens_path[64];

/* skinnerd on 127.0.0.1:0 and an admin listener on 127.0.0.1:0; with
 * `tokens`, --tokens with a reader and a writer. */
static void start(bool tokens) {
  const char *extra[8] = {"--admin-listen", "127.0.0.1:0"};
  int n = 2;
  if (tokens) {
    snprintf(tokens_path, sizeof tokens_path, "/tmp/sk_gate_%d.tokens", (int)getpid());
    FILE *f = fopen(tokens_path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(TW " write\n" TR " read\n", f);
    fclose(f);
    extra[n++] = "--tokens";
    extra[n++] = tokens_path;
  }
  extra[n] = NULL;
  sk_fixture_start(&L, extra);
  ck_assert_uint_ne(L.admin_port, 0);
}

static void stop(void) {
  sk_fixture_stop(&L);
  if (tokens_path[0] != '\0')
    unlink(tokens_path);
  tokens_path[0] = '\0';
}

/* Sends raw bytes on a fresh connection and returns everything the server
 * said until it closed (malloc'ed); at most 3 s of silence are waited for. */
static char *raw_exchange(unsigned port, const char *bytes, size_t len) {
  int fd = sk_httpc_connect("127.0.0.1", port);
  ck_assert_int_ge(fd, 0);
  struct timeval tv = {3, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sk_httpc_send_all(fd, bytes, len);
  size_t cap = 1 << 20, got = 0;
  char *buf = malloc(cap + 1);
  ck_assert_ptr_nonnull(buf);
  for (;;) {
    ssize_t k = recv(fd, buf + got, cap - got, 0);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0 || (got += (size_t)k) == cap)
      break;
  }
  buf[got] = 0;
  close(fd);
  return buf;
}

/* What a refusal is: the first answer's status and problem kind, how many
 * answers came, whether any was a 2xx and whether the connection was
 * closed by the first. */
typedef struct verdict {
  int status, answers;
  char kind[48];
  bool any_2xx, closes;
} verdict;

static verdict judge(const char *all) {
  verdict v = {0};
  sscanf(all, "HTTP/1.1 %d", &v.status);
  for (const char *p = all; (p = strstr(p, "HTTP/1.1 ")) != NULL; p++) {
    v.answers++;
    v.any_2xx |= p[9] == '2';
  }
  const char *t = strstr(all, "\"type\":\"https://skinnerd.dev/problems/");
  if (t != NULL)
    sscanf(t + 38, "%47[^\"]", v.kind);
  const char *end = strstr(all, "\r\n\r\n");
  const char *c = strcasestr(all, "\r\nConnection: close");
  v.closes = c != NULL && end != NULL && c < end;
  return v;
}

/* ---- the targets: the route table walked ------------------------------------ */

typedef struct target {
  char method[16];
  char path[160];
  bool admin_row; /* served on the admin listener */
  bool open;      /* takes no token: /healthz, /readyz, the preview page, OPTIONS */
} target;

#define TARGETS_MAX 96

static const char *const k_method_names[] = {
#define NAME(name, label) label,
    SK_METHOD_MAP(NAME)
#undef NAME
};

static size_t add(target *t, size_t n, const char *method, const char *path, bool admin_row, bool open) {
  ck_assert_uint_lt(n, TARGETS_MAX);
  snprintf(t[n].method, sizeof t[n].method, "%s", method);
  snprintf(t[n].path, sizeof t[n].path, "%s", path);
  t[n].admin_row = admin_row;
  t[n].open = open;
  return n + 1;
}

/* Every row with every method it takes, and OPTIONS; a path no row
 * matches with GET and POST. Which rows take no token is written here,
 * independently of the daemon's code (docs/security.md, "Scope per
 * route"): every other row needs one, also a row added later. */
static size_t walk_table(target *t) {
  size_t nrows, n = 0;
  const sk_route *rows = sk_routes__table(&nrows);
  ck_assert_uint_ge(nrows, 14);
  bool ui_bare = false, ui_dir = false;
  for (size_t i = 0; i < nrows; i++) {
    const sk_route *rt = &rows[i];
    char path[160];
    if (rt->per_id && strstr(rt->path, "{clip}") != NULL)
      snprintf(path, sizeof path, SKEL "/animations/c%s", strstr(rt->path, "{clip}") + 6);
    else if (rt->per_id)
      snprintf(path, sizeof path, SKEL "%s%s", rt->path, strcmp(rt->path, "/animations/") == 0 ? "c" : "");
    else
      snprintf(path, sizeof path, "%s", rt->path);
    char *brace = strstr(path, "{clip}"); /* a clip segment inside the row's path */
    if (brace != NULL) {
      memmove(brace + 1, brace + 6, strlen(brace + 6) + 1);
      *brace = 'c';
    }
    ui_bare |= strcmp(path, "/ui") == 0;
    ui_dir |= strcmp(path, "/ui/") == 0;
    bool open = rt->id == SK_ROUTE_HEALTHZ || rt->id == SK_ROUTE_READYZ || strncmp(path, "/ui", 3) == 0;
    for (int k = 0; k < SK_METHOD_COUNT; k++)
      if ((rt->methods & (1u << k)) && k != SK_METHOD_OPTIONS)
        n = add(t, n, k_method_names[k], path, rt->admin, open);
    n = add(t, n, "OPTIONS", path, rt->admin, true);
  }
  ck_assert_msg(ui_bare && ui_dir, "/ui and /ui/ are rows of the route table");
  n = add(t, n, "GET", "/ui/index.html", false, true);
  n = add(t, n, "GET", "/no/such/route", false, false);
  n = add(t, n, "POST", "/no/such/route", false, false);
  return n;
}

/* ---- the attacks -------------------------------------------------------------- */

enum { DUP_CL, TE_CL, BAD_HOST, NO_TOKEN, NATTACKS };
static const char *const k_attack_names[] = {"duplicate Content-Length", "Transfer-Encoding + Content-Length",
                                             "Host: evil.example", "no token"};

static char *attack(unsigned port, int kind, const char *method, const char *path) {
  char req[1024];
  int n = 0;
  switch (kind) {
  case DUP_CL: /* libmicrohttpd reads the first (0): the DELETE would be the next request */
    n = snprintf(req, sizeof req,
                 "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 0\r\n"
                 "Content-Length: %zu\r\n\r\n" HIDDEN,
                 method, path, strlen(HIDDEN));
    break;
  case TE_CL: /* chunked ends at "0": the DELETE would be the next request */
    n = snprintf(req, sizeof req,
                 "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" HIDDEN,
                 method, path, strlen(HIDDEN) + 5);
    break;
  case BAD_HOST:
    n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n", method, path);
    break;
  default:
    n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", method, path);
  }
  ck_assert_int_lt(n, (int)sizeof req);
  return raw_exchange(port, req, (size_t)n);
}

static bool skeleton_exists(const char *token) {
  sk_httpc_resp r;
  char h[128] = "";
  if (token != NULL)
    snprintf(h, sizeof h, "Authorization: Bearer %s\r\n", token);
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", L.port, "GET", SKEL, h, NULL, 0, &r), 0);
  int st = r.status;
  sk_httpc_free(&r);
  return st == 200;
}

static void put_skeleton(const char *token) {
  char *skel = sk_test_tree_skeleton(3);
  char h[160] = "Content-Type: application/json\r\n";
  if (token != NULL)
    snprintf(h + strlen(h), sizeof h - strlen(h), "Authorization: Bearer %s\r\n", token);
  sk_httpc_resp r;
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", L.port, "PUT", SKEL, h, skel, strlen(skel), &r), 0);
  ck_assert_int_eq(r.status, 201);
  sk_httpc_free(&r);
  free(skel);
}

/* The pose route's refusal of `kind`: the reference every target must get. */
static verdict reference(int kind) {
  char *all = attack(L.port, kind, "POST", SKEL "/pose");
  verdict v = judge(all);
  ck_assert_msg(v.answers == 1 && !v.any_2xx, "%s on the pose route: %.400s", k_attack_names[kind], all);
  free(all);
  return v;
}

/* Sends `kind` to every target on both listeners; returns how many were
 * answered otherwise than `want`, printing each. The hidden DELETE must
 * never have run. */
static int send_all(const target *t, size_t n, int kind, verdict want, const char *token) {
  int bad = 0;
  for (size_t i = 0; i < n; i++)
    for (int on_admin = 0; on_admin < 2; on_admin++) {
      if (kind == NO_TOKEN && t[i].open && (strcmp(t[i].method, "OPTIONS") == 0 || !on_admin || t[i].admin_row))
        continue; /* open where served, and OPTIONS everywhere: nothing to refuse */
      char *all = attack(on_admin ? L.admin_port : L.port, kind, t[i].method, t[i].path);
      verdict v = judge(all);
      bool head = strcmp(t[i].method, "HEAD") == 0; /* its answer has no body to name the kind */
      bool same = v.status == want.status && (head || strcmp(v.kind, want.kind) == 0) && v.answers == 1 && !v.any_2xx &&
                  (v.closes || !want.closes);
      bool kept = kind == BAD_HOST || kind == NO_TOKEN || skeleton_exists(token);
      if (!same || !kept) {
        fprintf(stderr, "gate: %s %s on the %s listener, %s: %d %s, %d answer(s)%s%s: %.200s\n", t[i].method,
                t[i].path, on_admin ? "admin" : "public", k_attack_names[kind], v.status, v.kind, v.answers,
                v.any_2xx ? ", a 2xx" : "", kept ? "" : ", THE HIDDEN DELETE RAN", all);
        bad++;
      }
      if (!kept)
        put_skeleton(token);
      free(all);
    }
  return bad;
}

START_TEST(every_route_refuses_ambiguous_framing_and_a_foreign_host_like_the_pose_route) {
  target t[TARGETS_MAX];
  size_t n = walk_table(t);
  start(false);
  put_skeleton(NULL);
  int bad = 0;
  for (int kind = DUP_CL; kind <= BAD_HOST; kind++) {
    verdict want = reference(kind);
    if (kind == BAD_HOST) {
      ck_assert_int_eq(want.status, 421);
      ck_assert_str_eq(want.kind, "misdirected-request");
    } else {
      ck_assert_int_eq(want.status, 400);
      ck_assert_str_eq(want.kind, "bad-framing");
      ck_assert(want.closes);
    }
    bad += send_all(t, n, kind, want, NULL);
  }
  ck_assert(skeleton_exists(NULL));
  stop();
  ck_assert_msg(bad == 0, "%d of %zu targets x 2 listeners x 3 attacks were not refused as the pose route is", bad,
                n);
}
END_TEST

START_TEST(with_tokens_every_route_but_the_open_ones_needs_one_and_the_gate_still_comes_first) {
  target t[TARGETS_MAX];
  size_t n = walk_table(t);
  start(true);
  put_skeleton(TW);
  int bad = 0;
  verdict want = reference(NO_TOKEN);
  ck_assert_int_eq(want.status, 401);
  ck_assert_str_eq(want.kind, "unauthorized");
  bad += send_all(t, n, NO_TOKEN, want, TR);
  /* framing and Host come before the token: the same refusals as without tokens */
  for (int kind = DUP_CL; kind <= BAD_HOST; kind++)
    bad += send_all(t, n, kind, reference(kind), TR);
  /* the open rows stay open: the page needs no token (a browser's navigation carries none) */
  sk_httpc_resp r;
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", L.port, "GET", "/ui/", NULL, NULL, 0, &r), 0);
  ck_assert_int_eq(r.status, 200);
  sk_httpc_free(&r);
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", L.port, "GET", "/healthz", NULL, NULL, 0, &r), 0);
  ck_assert_int_eq(r.status, 200);
  sk_httpc_free(&r);
  ck_assert(skeleton_exists(TR));
  stop();
  ck_assert_msg(bad == 0, "%d answers were not the pose route's refusal", bad);
}
END_TEST

/* The page's own answers are unchanged by going through the gate, and
 * carry the gate's CORS decoration like every answer. */
START_TEST(the_page_behind_the_gate_answers_as_before) {
  start(false);
  sk_httpc_resp r;
  char h[256];
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", L.port, "GET", "/ui?id=fox", NULL, NULL, 0, &r), 0);
  ck_assert_int_eq(r.status, 301);
  ck_assert_str_eq(sk_httpc_header(&r, "Location", h, sizeof h), "/ui/?id=fox");
  sk_httpc_free(&r);
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", L.port, "GET", "/ui/", NULL, NULL, 0, &r), 0);
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_eq(sk_httpc_header(&r, "Cache-Control", h, sizeof h), "no-cache");
  ck_assert_str_eq(sk_httpc_header(&r, "ETag", h, sizeof h), sk_ui_find("", 0)->etag);
  sk_httpc_free(&r);
  /* a body on a GET of the page is read and ignored, and the connection is reusable */
  static const char two[] = "GET /ui/ HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}"
                            "GET /ui/app.js HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  char *all = raw_exchange(L.port, two, sizeof two - 1);
  verdict v = judge(all);
  ck_assert_msg(v.status == 200 && v.answers == 2, "got: %.300s", all);
  free(all);
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", L.port, "DELETE", "/ui/", NULL, NULL, 0, &r), 0);
  ck_assert_int_eq(r.status, 405);
  ck_assert_str_eq(sk_httpc_header(&r, "Allow", h, sizeof h), "GET, HEAD");
  sk_httpc_free(&r);
  /* not served on the admin listener, as before */
  ck_assert_int_eq(sk_httpc_request("127.0.0.1", L.admin_port, "GET", "/ui/", NULL, NULL, 0, &r), 0);
  ck_assert_int_eq(r.status, 404);
  sk_httpc_free(&r);
  stop();
}
END_TEST

static Suite *gate_suite(void) {
  Suite *s = suite_create("gate");
  TCase *tc = tcase_create("every_route");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, every_route_refuses_ambiguous_framing_and_a_foreign_host_like_the_pose_route);
  tcase_add_test(tc, with_tokens_every_route_but_the_open_ones_needs_one_and_the_gate_still_comes_first);
  tcase_add_test(tc, the_page_behind_the_gate_answers_as_before);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sk_test_run(gate_suite()); }
