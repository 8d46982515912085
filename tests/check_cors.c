/* CORS and skeleton versions against the real skinnerd (issue 15): a
 * browser tool on another origin gets its preflights answered and can
 * read every answer (errors too); two editors working on one skeleton
 * cannot overwrite each other without noticing (ETag, If-Match: 412),
 * and a reader revalidates for free (If-None-Match: 304). Every test
 * starts its own daemon on 127.0.0.1 and a free port and stops it. */
#include <stdbool.h>
#include <sys/wait.h>

#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_testasset.h"
#include "sk_testskel.h"
#include "sk_testutil.h"

#define TOOL "http://tool.example:5173"
#define EVIL "http://evil.example"
#define TR "reader-0123456789abcdef"
#define TW "writer-0123456789abcdef"
#define SKEL "{\"bones\":[{\"name\":\"hips\"},{\"name\":\"spine\",\"parent\":\"hips\",\"position\":[0,1,0]}]}"

static sk_daemon D;
static char tokens_path[64];

static void start(const char *const *args) { sk_fixture_start(&D, args); }

static void start_with_tokens(const char *origin) {
  snprintf(tokens_path, sizeof tokens_path, "/tmp/sk_cors_%d.tokens", (int)getpid());
  FILE *f = fopen(tokens_path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(TR " read\n" TW " write\n", f);
  fclose(f);
  const char *args[] = {"--tokens", tokens_path, "--cors-origin", origin, NULL};
  sk_fixture_start(&D, args);
}

static void stop(void) {
  sk_fixture_stop(&D);
  if (tokens_path[0] != '\0')
    unlink(tokens_path);
  tokens_path[0] = '\0';
}

/* One request; `headers` are "Name: v\r\n" lines or NULL; a body is JSON. */
static int req(const char *method, const char *path, const char *headers, const char *body, sk_httpc_resp *r) {
  char h[1024];
  snprintf(h, sizeof h, "%s%s", headers ? headers : "", body ? "Content-Type: application/json\r\n" : "");
  sk_fixture_request(&D, method, path, h, body, body ? strlen(body) : 0, r);
  return r->status;
}

/* Header `name` of r, or "" when absent (static buffer per call site is
 * enough: the tests compare right away). */
static const char *hdr(const sk_httpc_resp *r, const char *name) {
  static char buf[4][512];
  static int k;
  k = (k + 1) % 4;
  const char *v = sk_httpc_header(r, name, buf[k], sizeof buf[k]);
  return v ? v : "";
}

static bool has_token(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    p += strspn(p, ", ");
    size_t m = strcspn(p, ",");
    if (m == n && strncasecmp(p, name, n) == 0)
      return true;
    p += m;
  }
  return false;
}

/* An allowed origin's answer: ACAO echoes it, Vary names Origin, and the
 * headers clients read are exposed. */
static void assert_cors(const sk_httpc_resp *r, const char *origin) {
  ck_assert_msg(strcmp(hdr(r, "Access-Control-Allow-Origin"), origin) == 0, "status %d, head:\n%s", r->status,
                r->head);
  ck_assert(has_token(hdr(r, "Vary"), "Origin"));
  const char *exp = hdr(r, "Access-Control-Expose-Headers");
  static const char *const read_by_clients[] = {"ETag", "Location", "Retry-After", "Skinner-Pose-Count",
                                                "Skinner-Bone-Count", "Skinner-Matrix-Count",
                                                "Skinner-Skeleton-ETag", "WWW-Authenticate", "Allow", "Content-Length"};
  for (size_t i = 0; i < sizeof read_by_clients / sizeof *read_by_clients; i++)
    ck_assert_msg(has_token(exp, read_by_clients[i]), "%s not exposed: %s", read_by_clients[i], exp);
}

static void assert_problem(const sk_httpc_resp *r, int status, const char *detail_part) {
  ck_assert_msg(r->status == status, "want %d, got %d: %s", status, r->status, r->body ? r->body : "");
  ck_assert_str_eq(hdr(r, "Content-Type"), "application/problem+json");
  ck_assert_msg(r->body != NULL && strstr(r->body, detail_part) != NULL, "detail without \"%s\": %s", detail_part,
                r->body ? r->body : "");
}

START_TEST(a_preflight_from_an_allowed_origin_gets_the_routes_methods) {
  const char *args[] = {"--cors-origin", "http://other.example", "--cors-origin", TOOL, NULL};
  start(args);
  sk_httpc_resp r;
  req("OPTIONS", "/v1/skeletons/fox",
      "Origin: " TOOL "\r\nAccess-Control-Request-Method: PUT\r\n"
      "Access-Control-Request-Headers: content-type, if-match, authorization\r\n",
      NULL, &r);
  ck_assert_int_eq(r.status, 204);
  ck_assert_str_eq(hdr(&r, "Access-Control-Allow-Origin"), TOOL);
  ck_assert(has_token(hdr(&r, "Vary"), "Origin"));
  ck_assert_str_eq(hdr(&r, "Access-Control-Allow-Methods"), "GET, HEAD, PUT, DELETE");
  const char *ah = hdr(&r, "Access-Control-Allow-Headers");
  static const char *const asked[] = {"Content-Type", "Authorization", "If-Match", "If-None-Match", "Accept"};
  for (size_t i = 0; i < 5; i++)
    ck_assert_msg(has_token(ah, asked[i]), "%s not allowed: %s", asked[i], ah);
  ck_assert_str_eq(hdr(&r, "Access-Control-Max-Age"), "600");
  ck_assert(r.body == NULL || r.body[0] == '\0');
  sk_httpc_free(&r);
  /* Each route answers its own methods; the other origin is allowed too. */
  static const struct {
    const char *path, *method, *allow;
  } routes[] = {{"/v1/skeletons", "POST", "GET, HEAD, POST"},
                {"/v1/skeletons/fox/bones", "PATCH", "PATCH"},
                {"/v1/skeletons/fox/rest", "POST", "POST"},
                {"/v1/skeletons/fox/pose", "POST", "POST"},
                {"/v1/skeletons/fox/poses", "POST", "POST"},
                {"/healthz", "GET", "GET, HEAD"}};
  for (size_t i = 0; i < sizeof routes / sizeof *routes; i++) {
    char h[256];
    snprintf(h, sizeof h, "Origin: http://other.example\r\nAccess-Control-Request-Method: %s\r\n", routes[i].method);
    req("OPTIONS", routes[i].path, h, NULL, &r);
    ck_assert_msg(r.status == 204, "%s: %d", routes[i].path, r.status);
    ck_assert_str_eq(hdr(&r, "Access-Control-Allow-Origin"), "http://other.example");
    ck_assert_str_eq(hdr(&r, "Access-Control-Allow-Methods"), routes[i].allow);
    sk_httpc_free(&r);
  }
  /* A plain OPTIONS (no preflight) says what the route allows. */
  req("OPTIONS", "/v1/skeletons/fox/pose", NULL, NULL, &r);
  ck_assert_int_eq(r.status, 204);
  ck_assert_str_eq(hdr(&r, "Allow"), "POST, OPTIONS");
  ck_assert_str_eq(hdr(&r, "Access-Control-Allow-Origin"), "");
  sk_httpc_free(&r);
  stop();
}
END_TEST

START_TEST(a_refused_preflight_says_why) {
  const char *args[] = {"--cors-origin", TOOL, NULL};
  start(args);
  sk_httpc_resp r;
  req("OPTIONS", "/v1/skeletons/fox", "Origin: " EVIL "\r\nAccess-Control-Request-Method: GET\r\n", NULL, &r);
  assert_problem(&r, 403, "the origin " EVIL " is not in --cors-origin");
  ck_assert_str_eq(hdr(&r, "Access-Control-Allow-Origin"), "");
  ck_assert_str_eq(hdr(&r, "Access-Control-Allow-Methods"), "");
  sk_httpc_free(&r);
  req("OPTIONS", "/v1/skeletons/fox/pose", "Origin: " TOOL "\r\nAccess-Control-Request-Method: DELETE\r\n", NULL, &r);
  assert_problem(&r, 405, "Access-Control-Request-Method DELETE is not allowed here; use POST");
  ck_assert_str_eq(hdr(&r, "Allow"), "POST");
  ck_assert_str_eq(hdr(&r, "Access-Control-Allow-Methods"), "");
  sk_httpc_free(&r);
  req("OPTIONS", "/v1/skeletons/fox/pose",
      "Origin: " TOOL "\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type, x-debug\r\n",
      NULL, &r);
  assert_problem(&r, 403, "the request header x-debug is not allowed");
  sk_httpc_free(&r);
  req("OPTIONS", "/v1/nothing", "Origin: " TOOL "\r\nAccess-Control-Request-Method: GET\r\n", NULL, &r);
  assert_problem(&r, 404, "no route for /v1/nothing");
  assert_cors(&r, TOOL); /* the page can read why */
  sk_httpc_free(&r);
  stop();
  /* Without --cors-origin, no origin is allowed, and the answer says how. */
  start(NULL);
  req("OPTIONS", "/v1/skeletons", "Origin: " TOOL "\r\nAccess-Control-Request-Method: POST\r\n", NULL, &r);
  assert_problem(&r, 403, "cross-origin requests are off; start skinnerd with --cors-origin " TOOL);
  ck_assert_str_eq(hdr(&r, "Vary"), "");
  sk_httpc_free(&r);
  stop();
}
END_TEST

START_TEST(answers_and_errors_carry_the_cors_headers) {
  const char *args[] = {"--cors-origin", TOOL, "--max-body", "4096", NULL};
  start(args);
  sk_httpc_resp r;
  req("PUT", "/v1/skeletons/s", "Origin: " TOOL "\r\n", SKEL, &r);
  ck_assert_int_eq(r.status, 201);
  assert_cors(&r, TOOL);
  sk_httpc_free(&r);
  req("GET", "/v1/skeletons", "Origin: " TOOL "\r\n", NULL, &r);
  ck_assert_int_eq(r.status, 200);
  assert_cors(&r, TOOL);
  sk_httpc_free(&r);
  req("POST", "/v1/skeletons/s/pose", "Origin: " TOOL "\r\nAccept: application/octet-stream\r\n", "{}", &r);
  ck_assert_int_eq(r.status, 200);
  assert_cors(&r, TOOL);
  ck_assert_str_eq(hdr(&r, "Skinner-Bone-Count"), "2");
  sk_httpc_free(&r);
  /* Errors: 404, 415, 413 (by Content-Length, before the body), 405, 422. */
  req("GET", "/v1/skeletons/none", "Origin: " TOOL "\r\n", NULL, &r);
  assert_problem(&r, 404, "no skeleton with id");
  assert_cors(&r, TOOL);
  sk_httpc_free(&r);
  sk_fixture_request(&D, "PUT", "/v1/skeletons/s", "Origin: " TOOL "\r\nContent-Type: text/plain\r\n", "x", 1, &r);
  ck_assert_int_eq(r.status, 415);
  assert_cors(&r, TOOL);
  sk_httpc_free(&r);
  char *big = malloc(8193);
  memset(big, ' ', 8192);
  big[8192] = 0;
  req("PUT", "/v1/skeletons/s", "Origin: " TOOL "\r\n", big, &r);
  free(big);
  assert_problem(&r, 413, "--max-body");
  assert_cors(&r, TOOL);
  sk_httpc_free(&r);
  req("PATCH", "/v1/skeletons/s", "Origin: " TOOL "\r\n", "{}", &r);
  ck_assert_int_eq(r.status, 405);
  assert_cors(&r, TOOL);
  sk_httpc_free(&r);
  req("PATCH", "/v1/skeletons/s/bones", "Origin: " TOOL "\r\n", "{\"bones\":{\"nope\":{}}}", &r);
  assert_problem(&r, 404, "no bone named");
  assert_cors(&r, TOOL);
  sk_httpc_free(&r);
  /* Another origin: served (CORS is the browser's check), but nothing
   * lets its page read the answer; Vary keeps caches honest. */
  req("GET", "/v1/skeletons", "Origin: " EVIL "\r\n", NULL, &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_eq(hdr(&r, "Access-Control-Allow-Origin"), "");
  ck_assert_str_eq(hdr(&r, "Access-Control-Expose-Headers"), "");
  ck_assert(has_token(hdr(&r, "Vary"), "Origin"));
  sk_httpc_free(&r);
  stop();
}
END_TEST

START_TEST(with_tokens_a_preflight_needs_none_and_the_request_needs_one) {
  start_with_tokens(TOOL);
  sk_httpc_resp r;
  req("OPTIONS", "/v1/skeletons/s/bones", "Origin: " TOOL "\r\nAccess-Control-Request-Method: PATCH\r\n"
      "Access-Control-Request-Headers: authorization, content-type, if-match\r\n", NULL, &r);
  ck_assert_int_eq(r.status, 204);
  ck_assert_str_eq(hdr(&r, "Access-Control-Allow-Methods"), "PATCH");
  ck_assert_str_eq(hdr(&r, "WWW-Authenticate"), "");
  sk_httpc_free(&r);
  /* No skeleton named, no token: the same 204 for an id that does not exist. */
  req("OPTIONS", "/v1/skeletons/never-stored", "Origin: " TOOL "\r\nAccess-Control-Request-Method: GET\r\n", NULL, &r);
  ck_assert_int_eq(r.status, 204);
  sk_httpc_free(&r);
  req("GET", "/v1/skeletons", "Origin: " TOOL "\r\n", NULL, &r);
  assert_problem(&r, 401, "bearer token");
  assert_cors(&r, TOOL); /* the page can read the 401 and its WWW-Authenticate */
  ck_assert_str_ne(hdr(&r, "WWW-Authenticate"), "");
  sk_httpc_free(&r);
  req("PUT", "/v1/skeletons/s", "Origin: " TOOL "\r\nAuthorization: Bearer " TR "\r\n", SKEL, &r);
  ck_assert_int_eq(r.status, 403);
  assert_cors(&r, TOOL);
  sk_httpc_free(&r);
  req("PUT", "/v1/skeletons/s", "Origin: " TOOL "\r\nAuthorization: Bearer " TW "\r\n", SKEL, &r);
  ck_assert_int_eq(r.status, 201);
  assert_cors(&r, TOOL);
  sk_httpc_free(&r);
  req("GET", "/v1/skeletons/s", "Origin: " TOOL "\r\nAuthorization: Bearer " TR "\r\n", NULL, &r);
  ck_assert_int_eq(r.status, 200);
  assert_cors(&r, TOOL);
  sk_httpc_free(&r);
  stop();
  /* "*" with tokens: any origin, answered with "*". */
  start_with_tokens("*");
  req("GET", "/v1/skeletons", "Origin: https://anyone.example\r\nAuthorization: Bearer " TR "\r\n", NULL, &r);
  ck_assert_int_eq(r.status, 200);
  assert_cors(&r, "*");
  sk_httpc_free(&r);
  req("OPTIONS", "/v1/skeletons", "Origin: null\r\nAccess-Control-Request-Method: POST\r\n", NULL, &r);
  ck_assert_int_eq(r.status, 204);
  ck_assert_str_eq(hdr(&r, "Access-Control-Allow-Origin"), "*");
  sk_httpc_free(&r);
  stop();
}
END_TEST

START_TEST(star_without_tokens_stops_the_start) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s --listen 127.0.0.1:0 --cors-origin '*' 2>&1",
           getenv("SKINNERD") ? getenv("SKINNERD") : "./skinnerd");
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  char out[512] = "";
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = 0;
  int st = pclose(p);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d, output %s", st, out);
  ck_assert_str_eq(out, "skinnerd: --cors-origin \"*\" needs --tokens: without tokens any web page could read and "
                        "change the skeletons; list the origins instead\n");
  snprintf(cmd, sizeof cmd, "%s --listen 127.0.0.1:0 --cors-origin http://a.example/ 2>&1",
           getenv("SKINNERD") ? getenv("SKINNERD") : "./skinnerd");
  p = popen(cmd, "r");
  n = fread(out, 1, sizeof out - 1, p);
  out[n] = 0;
  st = pclose(p);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d, output %s", st, out);
  ck_assert_msg(strstr(out, "an origin has no path") != NULL, "%s", out);
}
END_TEST

/* ---- versions ---------------------------------------------------------------- */

static void get_etag(const char *id, char *etag, size_t cap) {
  char path[128];
  snprintf(path, sizeof path, "/v1/skeletons/%s", id);
  sk_httpc_resp r;
  ck_assert_int_eq(req("GET", path, NULL, NULL, &r), 200);
  snprintf(etag, cap, "%s", hdr(&r, "ETag"));
  ck_assert_msg(etag[0] == '"' && etag[strlen(etag) - 1] == '"', "not a strong ETag: %s", etag);
  sk_httpc_free(&r);
}

START_TEST(two_editors_cannot_silently_overwrite_each_other) {
  start(NULL);
  sk_fixture_put_json(&D, "rig", SKEL);
  char a[64], b[64], h[128];
  get_etag("rig", a, sizeof a); /* editor A opens the skeleton */
  get_etag("rig", b, sizeof b); /* so does editor B */
  ck_assert_str_eq(a, b);
  sk_httpc_resp r;
  /* A saves first: accepted, and told the new version. */
  snprintf(h, sizeof h, "If-Match: %s\r\n", a);
  req("PATCH", "/v1/skeletons/rig/bones", h, "{\"bones\":{\"spine\":{\"position\":[0,2,0]}}}", &r);
  ck_assert_int_eq(r.status, 200);
  char a2[64];
  snprintf(a2, sizeof a2, "%s", hdr(&r, "ETag"));
  ck_assert_str_ne(a2, a);
  sk_httpc_free(&r);
  /* B saves on the version it saw: refused, told the current one. */
  snprintf(h, sizeof h, "If-Match: %s\r\n", b);
  req("PATCH", "/v1/skeletons/rig/bones", h, "{\"bones\":{\"hips\":{\"position\":[5,0,0]}}}", &r);
  assert_problem(&r, 412, "the skeleton is now at version");
  ck_assert_str_eq(hdr(&r, "ETag"), a2);
  sk_httpc_free(&r);
  /* Nothing of B's landed: A's change is there, B's is not. */
  req("GET", "/v1/skeletons/rig", NULL, NULL, &r);
  ck_assert_str_eq(hdr(&r, "ETag"), a2);
  ck_assert_ptr_nonnull(strstr(r.body, "\"local\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]")); /* hips untouched */
  ck_assert_ptr_nonnull(strstr(r.body, "0,2,0,1]"));                                  /* A's spine */
  sk_httpc_free(&r);
  /* B reloads and saves again: both edits are kept. */
  snprintf(h, sizeof h, "If-Match: %s\r\n", a2);
  req("PATCH", "/v1/skeletons/rig/bones", h, "{\"bones\":{\"hips\":{\"position\":[5,0,0]}}}", &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_ptr_nonnull(strstr(r.body, "5,0,0,1]"));
  ck_assert_ptr_nonnull(strstr(r.body, "0,2,0,1]"));
  sk_httpc_free(&r);
  /* The same for every write: /rest, PUT, DELETE with a stale version. */
  snprintf(h, sizeof h, "If-Match: %s\r\n", a2);
  req("POST", "/v1/skeletons/rig/rest", h, "{}", &r);
  assert_problem(&r, 412, "If-Match");
  sk_httpc_free(&r);
  req("PUT", "/v1/skeletons/rig", h, SKEL, &r);
  assert_problem(&r, 412, "If-Match");
  sk_httpc_free(&r);
  req("DELETE", "/v1/skeletons/rig", h, NULL, &r);
  assert_problem(&r, 412, "If-Match");
  sk_httpc_free(&r);
  char cur[64];
  get_etag("rig", cur, sizeof cur);
  snprintf(h, sizeof h, "If-Match: \"stale\", %s\r\n", cur); /* a list: any member may match */
  ck_assert_int_eq(req("DELETE", "/v1/skeletons/rig", h, NULL, &r), 204);
  sk_httpc_free(&r);
  stop();
}
END_TEST

START_TEST(a_large_patch_on_the_pool_checks_the_version_too) {
  start(NULL);
  sk_fixture_put_json(&D, "rig", SKEL);
  char e[64], h[128];
  get_etag("rig", e, sizeof e);
  /* Over 32 KiB: parsed and applied on the thread pool. */
  size_t pad = 40000;
  char *body = malloc(pad + 128);
  int n = snprintf(body, pad + 128, "{\"bones\":{\"spine\":{\"position\":[0,3,0]}}");
  memset(body + n, ' ', pad);
  snprintf(body + n + pad, 128, "}");
  snprintf(h, sizeof h, "If-Match: \"00000000-1\"\r\n");
  sk_httpc_resp r;
  req("PATCH", "/v1/skeletons/rig/bones", h, body, &r);
  assert_problem(&r, 412, "If-Match");
  sk_httpc_free(&r);
  snprintf(h, sizeof h, "If-Match: %s\r\n", e);
  req("PATCH", "/v1/skeletons/rig/bones", h, body, &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_ne(hdr(&r, "ETag"), e);
  sk_httpc_free(&r);
  free(body);
  stop();
}
END_TEST

/* Sends one request on a new connection without waiting; the answer is
 * read later with finish(). */
static int send_only(const char *method, const char *path, const char *headers, const char *body, size_t len) {
  int fd = sk_httpc_connect(D.host, D.port);
  ck_assert_int_ge(fd, 0);
  char head[1024];
  int n = snprintf(head, sizeof head,
                   "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%sContent-Type: application/json\r\n"
                   "Content-Length: %zu\r\n\r\n",
                   method, path, headers, len);
  ck_assert_int_eq(sk_httpc_send_all(fd, head, (size_t)n), 0);
  ck_assert_int_eq(sk_httpc_send_all(fd, body, len), 0);
  return fd;
}

static void finish(int fd, sk_httpc_resp *r) {
  memset(r, 0, sizeof *r);
  ck_assert_int_eq(sk_httpc_read_response(fd, r), 0);
  close(fd);
}

static unsigned jobs_in_flight(void) {
  sk_httpc_resp r;
  ck_assert_int_eq(req("GET", "/metrics", NULL, NULL, &r), 200);
  const char *at = strstr(r.body, "\nskinnerd_jobs_in_flight ");
  ck_assert_ptr_nonnull(at);
  unsigned n = (unsigned)atoi(at + strlen("\nskinnerd_jobs_in_flight "));
  sk_httpc_free(&r);
  return n;
}

START_TEST(two_writers_racing_on_one_version_never_both_win) {
  /* One pool thread, busy importing a 1.9 MB glTF: a second glTF PUT
   * (imported on the pool too) passes its If-Match check and waits behind
   * it; meanwhile a small PATCH with the same If-Match is applied inline
   * and published. The PUT must see the new version as it publishes (412),
   * not overwrite it. Whatever the timing, exactly one of the two wins. */
  const char *args[] = {"--threads", "1", NULL};
  start(args);
  size_t glen, big_len;
  unsigned char *big = sk_test_read_asset("mannequiny-0.3.0.glb", &big_len);
  unsigned char *glb = sk_test_read_asset("CesiumMan.glb", &glen);
  sk_fixture_put(&D, "rig", "model/gltf-binary", glb, glen);
  int raced = 0;
  for (int round = 0; round < 5; round++) {
    char e[64], h[160];
    get_etag("rig", e, sizeof e);
    int busy = sk_httpc_connect(D.host, D.port); /* a large glTF import holds the one pool thread */
    ck_assert_int_ge(busy, 0);
    char bhead[256];
    int bn = snprintf(bhead, sizeof bhead,
                      "PUT /v1/skeletons/busy HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                      "Content-Type: model/gltf-binary\r\nContent-Length: %zu\r\n\r\n", big_len);
    ck_assert_int_eq(sk_httpc_send_all(busy, bhead, (size_t)bn), 0);
    ck_assert_int_eq(sk_httpc_send_all(busy, big, big_len), 0);
    for (int k = 0; k < 2000 && jobs_in_flight() < 1; k++) /* the import is on the pool */
      ;
    snprintf(h, sizeof h, "If-Match: %s\r\n", e);
    int fd = sk_httpc_connect(D.host, D.port);
    ck_assert_int_ge(fd, 0);
    char head[256];
    int n = snprintf(head, sizeof head,
                     "PUT /v1/skeletons/rig HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s"
                     "Content-Type: model/gltf-binary\r\nContent-Length: %zu\r\n\r\n", h, glen);
    ck_assert_int_eq(sk_httpc_send_all(fd, head, (size_t)n), 0);
    ck_assert_int_eq(sk_httpc_send_all(fd, glb, glen), 0);
    /* Both jobs on the pool: the PUT passed its check and waits. */
    bool waiting = false;
    for (int k = 0; k < 2000 && !waiting; k++)
      waiting = jobs_in_flight() >= 2;
    const char *patch = "{\"bones\":{}}";
    int small = send_only("PATCH", "/v1/skeletons/rig/bones", h, patch, strlen(patch));
    sk_httpc_resp rs, rb, rq;
    finish(small, &rs);
    finish(fd, &rb);
    finish(busy, &rq);
    ck_assert_msg(rq.status == 200 || rq.status == 201, "the busy PUT: %d", rq.status);
    ck_assert_msg((rs.status == 200 && rb.status == 412) || (rs.status == 412 && rb.status == 200),
                  "round %d: PATCH %d, PUT %d: both won or both lost", round, rs.status, rb.status);
    const sk_httpc_resp *won = rs.status == 200 ? &rs : &rb, *lost = rs.status == 200 ? &rb : &rs;
    ck_assert_str_eq(hdr(lost, "ETag"), hdr(won, "ETag")); /* the loser is told the winner's version */
    char now[64];
    get_etag("rig", now, sizeof now);
    ck_assert_str_eq(now, hdr(won, "ETag"));
    if (waiting && rs.status == 200) /* the PATCH landed while the PUT waited: caught at publish */
      raced++;
    sk_httpc_free(&rs);
    sk_httpc_free(&rb);
    sk_httpc_free(&rq);
  }
  free(big);
  free(glb);
  /* The first import holds the pool long enough (every round on the
   * shared 2-core machine): at least one round took the publish-time check. */
  ck_assert_msg(raced >= 1, "no round caught the PUT waiting on the pool");
  stop();
}
END_TEST

START_TEST(ops_and_dry_runs_follow_the_same_rules) {
  start(NULL);
  sk_fixture_put_json(&D, "rig", SKEL);
  char e1[64], h[128];
  get_etag("rig", e1, sizeof e1);
  sk_httpc_resp r;
  /* POST /ops is a write like any other: If-Match, and the new ETag. */
  snprintf(h, sizeof h, "If-Match: %s\r\n", e1);
  req("POST", "/v1/skeletons/rig/ops", h, "{\"ops\":[]}", &r);
  ck_assert_int_eq(r.status, 200);
  char e2[64];
  snprintf(e2, sizeof e2, "%s", hdr(&r, "ETag"));
  ck_assert_str_ne(e2, e1);
  sk_httpc_free(&r);
  req("POST", "/v1/skeletons/rig/ops", h, "{\"ops\":[]}", &r);
  assert_problem(&r, 412, "If-Match");
  ck_assert_str_eq(hdr(&r, "ETag"), e2);
  sk_httpc_free(&r);
  /* Over 32 KiB: parsed and applied on the pool, checked the same. */
  size_t pad = 40000;
  char *body = malloc(pad + 32);
  int n = snprintf(body, pad + 32, "{\"ops\":[]");
  memset(body + n, ' ', pad);
  snprintf(body + n + pad, 32, "}");
  req("POST", "/v1/skeletons/rig/ops", h, body, &r);
  assert_problem(&r, 412, "If-Match");
  sk_httpc_free(&r);
  snprintf(h, sizeof h, "If-Match: %s\r\n", e2);
  req("POST", "/v1/skeletons/rig/ops", h, body, &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_ne(hdr(&r, "ETag"), e2);
  sk_httpc_free(&r);
  free(body);
  /* A dry run stores nothing, so names no version. */
  char cur[64];
  get_etag("rig", cur, sizeof cur);
  req("PUT", "/v1/skeletons/rig?dryRun=true", NULL, SKEL, &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_eq(hdr(&r, "ETag"), "");
  sk_httpc_free(&r);
  char after[64];
  get_etag("rig", after, sizeof after);
  ck_assert_str_eq(after, cur);
  stop();
}
END_TEST

START_TEST(a_reader_revalidates_with_if_none_match) {
  start(NULL);
  sk_fixture_put_json(&D, "rig", SKEL);
  char e[64], h[160];
  get_etag("rig", e, sizeof e);
  sk_httpc_resp r;
  snprintf(h, sizeof h, "If-None-Match: %s\r\n", e);
  req("GET", "/v1/skeletons/rig", h, NULL, &r);
  ck_assert_int_eq(r.status, 304);
  ck_assert_str_eq(hdr(&r, "ETag"), e);
  ck_assert(r.body == NULL || r.body[0] == '\0');
  sk_httpc_free(&r);
  snprintf(h, sizeof h, "If-None-Match: \"x\", W/%s\r\n", e); /* weak comparison */
  ck_assert_int_eq(req("GET", "/v1/skeletons/rig", h, NULL, &r), 304);
  sk_httpc_free(&r);
  ck_assert_int_eq(req("HEAD", "/v1/skeletons/rig", "If-None-Match: *\r\n", NULL, &r), 304);
  sk_httpc_free(&r);
  ck_assert_int_eq(req("GET", "/v1/skeletons/rig", "If-None-Match: \"00000000-1\"\r\n", NULL, &r), 200);
  ck_assert_str_eq(hdr(&r, "ETag"), e);
  sk_httpc_free(&r);
  /* A change makes the old tag stale: the full answer again. */
  req("POST", "/v1/skeletons/rig/rest", NULL, "{}", &r);
  ck_assert_int_eq(r.status, 200);
  char e2[64];
  snprintf(e2, sizeof e2, "%s", hdr(&r, "ETag"));
  ck_assert_str_ne(e2, e);
  sk_httpc_free(&r);
  snprintf(h, sizeof h, "If-None-Match: %s\r\n", e);
  ck_assert_int_eq(req("GET", "/v1/skeletons/rig", h, NULL, &r), 200);
  ck_assert_str_eq(hdr(&r, "ETag"), e2);
  sk_httpc_free(&r);
  /* A pose answer names the version it was computed from. */
  req("POST", "/v1/skeletons/rig/pose", NULL, "{}", &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_eq(hdr(&r, "Skinner-Skeleton-ETag"), e2);
  ck_assert_str_eq(hdr(&r, "ETag"), "");
  sk_httpc_free(&r);
  /* and takes If-Match too: computed from that version or not at all. */
  snprintf(h, sizeof h, "If-Match: %s\r\n", e);
  req("POST", "/v1/skeletons/rig/pose", h, "{}", &r);
  assert_problem(&r, 412, "If-Match");
  sk_httpc_free(&r);
  /* Preconditions do not hide a 404. */
  ck_assert_int_eq(req("GET", "/v1/skeletons/none", "If-None-Match: *\r\n", NULL, &r), 404);
  sk_httpc_free(&r);
  ck_assert_int_eq(req("PATCH", "/v1/skeletons/none/bones", "If-Match: *\r\n", "{\"bones\":{}}", &r), 404);
  sk_httpc_free(&r);
  stop();
}
END_TEST

START_TEST(put_with_star_is_create_only_or_update_only) {
  start(NULL);
  sk_httpc_resp r;
  req("PUT", "/v1/skeletons/new", "If-Match: *\r\n", SKEL, &r); /* update-only on nothing */
  assert_problem(&r, 412, "If-Match: the skeleton does not exist");
  ck_assert_str_eq(hdr(&r, "ETag"), "");
  sk_httpc_free(&r);
  ck_assert_int_eq(req("GET", "/v1/skeletons/new", NULL, NULL, &r), 404);
  sk_httpc_free(&r);
  req("PUT", "/v1/skeletons/new", "If-None-Match: *\r\n", SKEL, &r); /* create-only */
  ck_assert_int_eq(r.status, 201);
  char e[64];
  snprintf(e, sizeof e, "%s", hdr(&r, "ETag"));
  sk_httpc_free(&r);
  char g[64];
  get_etag("new", g, sizeof g);
  ck_assert_str_eq(g, e); /* the PUT's ETag is the stored version's */
  req("PUT", "/v1/skeletons/new", "If-None-Match: *\r\n", SKEL, &r); /* a second creator loses */
  assert_problem(&r, 412, "If-None-Match");
  ck_assert_str_eq(hdr(&r, "ETag"), e);
  sk_httpc_free(&r);
  req("PUT", "/v1/skeletons/new", "If-Match: *\r\n", SKEL, &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_ne(hdr(&r, "ETag"), e);
  sk_httpc_free(&r);
  /* Malformed fields are a 400 naming the field. */
  req("PUT", "/v1/skeletons/new", "If-Match: v1\r\n", SKEL, &r);
  assert_problem(&r, 400, "If-Match: expected * or a list of quoted entity tags");
  sk_httpc_free(&r);
  req("GET", "/v1/skeletons/new", "If-None-Match: \"a\" junk\r\n", NULL, &r);
  assert_problem(&r, 400, "If-None-Match: expected");
  sk_httpc_free(&r);
  stop();
}
END_TEST

START_TEST(an_etag_survives_eviction_but_not_a_restart) {
  char dir[64];
  snprintf(dir, sizeof dir, "/tmp/sk_cors_data_%d", (int)getpid());
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
  /* A 1 MB cache holds a few of these 200-bone skeletons at a time. */
  const char *args[] = {"--data-dir", dir, "--cache-mb", "1", NULL};
  start(args);
  char *big = sk_test_tree_skeleton(200);
  sk_fixture_put_json(&D, "first", big);
  char e[64], h[128];
  get_etag("first", e, sizeof e);
  for (int i = 0; i < 40; i++) {
    char id[16];
    snprintf(id, sizeof id, "fill%d", i);
    sk_fixture_put_json(&D, id, big);
  }
  free(big);
  sk_httpc_resp r;
  ck_assert_int_eq(req("GET", "/metrics", NULL, NULL, &r), 200);
  const char *ev = strstr(r.body, "\nskinnerd_cache_evictions_total ");
  ck_assert_ptr_nonnull(ev);
  ck_assert_msg(atoi(ev + 32) >= 10, "too few evictions: %.60s", ev); /* "first", the oldest, among them */
  sk_httpc_free(&r);
  /* "first" was evicted (its version stays on disk) and comes back with its tag. */
  snprintf(h, sizeof h, "If-None-Match: %s\r\n", e);
  ck_assert_int_eq(req("GET", "/v1/skeletons/first", h, NULL, &r), 304);
  sk_httpc_free(&r);
  stop();
  start(args);
  snprintf(h, sizeof h, "If-Match: %s\r\n", e);
  req("DELETE", "/v1/skeletons/first", h, NULL, &r); /* another run: versions start over */
  assert_problem(&r, 412, "If-Match");
  sk_httpc_free(&r);
  stop();
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cors");
  TCase *t = tcase_create("cors");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, a_preflight_from_an_allowed_origin_gets_the_routes_methods);
  tcase_add_test(t, a_refused_preflight_says_why);
  tcase_add_test(t, answers_and_errors_carry_the_cors_headers);
  tcase_add_test(t, with_tokens_a_preflight_needs_none_and_the_request_needs_one);
  tcase_add_test(t, star_without_tokens_stops_the_start);
  suite_add_tcase(s, t);
  t = tcase_create("versions");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, two_editors_cannot_silently_overwrite_each_other);
  tcase_add_test(t, a_large_patch_on_the_pool_checks_the_version_too);
  tcase_add_test(t, two_writers_racing_on_one_version_never_both_win);
  tcase_add_test(t, ops_and_dry_runs_follow_the_same_rules);
  tcase_add_test(t, a_reader_revalidates_with_if_none_match);
  tcase_add_test(t, put_with_star_is_create_only_or_update_only);
  tcase_add_test(t, an_etag_survives_eviction_but_not_a_restart);
  suite_add_tcase(s, t);
  return sk_test_run(s);
}
