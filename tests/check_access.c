/* Access control, Host check, HTTP framing and signals against the real
 * skinnerd (issue 11): bearer tokens by scope, the DNS-rebinding guard,
 * request smuggling that must never run its hidden request, and SIGHUP
 * reloads that keep connections open. Every test starts its own daemon on
 * 127.0.0.1 and a free port and stops it with SIGTERM, expecting exit 0. */
#include <fcntl.h>
#include <stdbool.h>

#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_testskel.h"
#include "sk_testutil.h"

#define TR "reader-0123456789abcdef"
#define TW "writer-0123456789abcdef"
#define TA "admin-0123456789abcdef00"
#define TNEW "newreader-0123456789abcdef"
/* A token whose base64url differs from its base64 ('-' for '+'). */
#define TB "browser~~~/+=-0123456789"
#define TB_B64URL "YnJvd3Nlcn5-fi8rPS0wMTIzNDU2Nzg5"
#define TB_B64 "YnJvd3Nlcn5+fi8rPS0wMTIzNDU2Nzg5"
#define TR_B64URL "cmVhZGVyLTAxMjM0NTY3ODlhYmNkZWY"

static sk_daemon D;
static char tokens_path[64];

static void write_file(const char *path, const char *text) {
  char tmp[128];
  snprintf(tmp, sizeof tmp, "%s.new", path);
  FILE *f = fopen(tmp, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  ck_assert_int_eq(rename(tmp, path), 0); /* the daemon never reads half a file */
}

static void start_with_tokens(const char *tokens, const char *const *more) {
  snprintf(tokens_path, sizeof tokens_path, "/tmp/sk_access_%d.tokens", (int)getpid());
  write_file(tokens_path, tokens);
  const char *args[16] = {"--tokens", tokens_path};
  int n = 2;
  for (; more != NULL && *more != NULL && n < 15; more++)
    args[n++] = *more;
  args[n] = NULL;
  sk_fixture_start(&D, args);
}

static void start_open(const char *const *args) { sk_fixture_start(&D, args); }

static void stop(void) {
  sk_fixture_stop(&D);
  if (tokens_path[0] != '\0')
    unlink(tokens_path);
  tokens_path[0] = '\0';
}

/* One request with an optional bearer token; returns the status. */
static int call(const char *method, const char *path, const char *token, const char *body, sk_httpc_resp *r) {
  char h[256] = "";
  int n = 0;
  if (token != NULL)
    n += snprintf(h + n, sizeof h - (size_t)n, "Authorization: Bearer %s\r\n", token);
  if (body != NULL)
    snprintf(h + n, sizeof h - (size_t)n, "Content-Type: application/json\r\n");
  int rc = sk_httpc_request(D.host, D.port, method, path, h, body, body ? strlen(body) : 0, r);
  ck_assert_msg(rc == 0, "%s %s: no answer (%s)", method, path, r->error);
  return r->status;
}

static int status_of(const char *method, const char *path, const char *token, const char *body) {
  sk_httpc_resp r;
  int st = call(method, path, token, body, &r);
  sk_httpc_free(&r);
  return st;
}

/* Sends raw bytes on a fresh connection and reads until the server closes
 * it; returns everything it said (malloc'ed). */
static char *raw_exchange(const char *bytes, size_t len) {
  int fd = sk_httpc_connect(D.host, D.port);
  ck_assert_int_ge(fd, 0);
  sk_httpc_send_all(fd, bytes, len);
  size_t cap = 1 << 16, got = 0;
  char *buf = malloc(cap + 1);
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

static int count_answers(const char *all) {
  int n = 0;
  for (const char *p = all; (p = strstr(p, "HTTP/1.1 ")) != NULL; p++)
    n++;
  return n;
}

/* ---- keep-alive client ---------------------------------------------------- */

/* One request on an open connection; reads one answer by its
 * Content-Length. Returns the status, or 0 when the connection failed. */
static int ka_call(int fd, const char *path, const char *token) {
  char req[512];
  int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer %s\r\n\r\n", path,
                   token);
  if (sk_httpc_send_all(fd, req, (size_t)n) != 0)
    return 0;
  char buf[16384];
  buf[0] = '\0';
  size_t got = 0;
  char *end = NULL;
  while ((end = strstr(buf, "\r\n\r\n")) == NULL) {
    ssize_t k = recv(fd, buf + got, sizeof buf - 1 - got, 0);
    if (k <= 0)
      return 0;
    got += (size_t)k;
    buf[got] = 0;
  }
  int st = 0;
  sscanf(buf, "HTTP/1.1 %d", &st);
  const char *cl = strcasestr(buf, "\r\nContent-Length:");
  size_t want = cl != NULL ? strtoul(cl + 17, NULL, 10) : 0;
  size_t have = got - (size_t)(end + 4 - buf);
  while (have < want) {
    ssize_t k = recv(fd, buf, sizeof buf, 0);
    if (k <= 0)
      return 0;
    have += (size_t)k;
  }
  ck_assert_ptr_null(strcasestr(buf, "Connection: close"));
  return st;
}

static const char tokens_all[] = "# test tokens\n" TR " read\n" TW " write\n" TA " admin\n";

/* ---- tokens --------------------------------------------------------------- */

START_TEST(each_route_answers_401_403_or_200_by_the_token_scope) {
  start_with_tokens(tokens_all, NULL);
  sk_httpc_resp r;
  ck_assert_int_eq(status_of("GET", "/healthz", NULL, NULL), 200);
  ck_assert_int_eq(status_of("GET", "/readyz", NULL, NULL), 200);

  ck_assert_int_eq(call("GET", "/v1/skeletons", NULL, NULL, &r), 401);
  char v[256];
  ck_assert_str_eq(sk_httpc_header(&r, "WWW-Authenticate", v, sizeof v), "Bearer realm=\"skinnerd\"");
  ck_assert_str_eq(sk_httpc_header(&r, "Content-Type", v, sizeof v), "application/problem+json");
  ck_assert_ptr_nonnull(strstr(r.body, "\"status\":401"));
  ck_assert_ptr_nonnull(strstr(r.body, "scope read"));
  sk_httpc_free(&r);

  ck_assert_int_eq(call("GET", "/v1/skeletons", "unknown-token-0123456789", NULL, &r), 401);
  ck_assert_str_eq(sk_httpc_header(&r, "WWW-Authenticate", v, sizeof v),
                   "Bearer realm=\"skinnerd\", error=\"invalid_token\"");
  sk_httpc_free(&r);

  char *skel = sk_test_tree_skeleton(5);
  ck_assert_int_eq(call("PUT", "/v1/skeletons/s", TR, skel, &r), 403);
  ck_assert_str_eq(sk_httpc_header(&r, "WWW-Authenticate", v, sizeof v),
                   "Bearer realm=\"skinnerd\", error=\"insufficient_scope\", scope=\"write\"");
  ck_assert_ptr_nonnull(strstr(r.body, "this route needs scope write; the token has scope read"));
  sk_httpc_free(&r);
  ck_assert_int_eq(status_of("PUT", "/v1/skeletons/s", TW, skel), 201);
  ck_assert_int_eq(status_of("PUT", "/v1/skeletons/s", TA, skel), 200); /* admin ⊇ write */
  free(skel);

  /* read: GETs and the evaluation POSTs */
  ck_assert_int_eq(status_of("GET", "/v1/skeletons", TR, NULL), 200);
  ck_assert_int_eq(status_of("GET", "/v1/skeletons/s", TR, NULL), 200);
  ck_assert_int_eq(status_of("POST", "/v1/skeletons/s/pose", TR, "{}"), 200);
  ck_assert_int_eq(status_of("POST", "/v1/skeletons/s/poses", TR, "{\"poses\":[{}]}"), 200);
  /* write: what changes skeletons */
  ck_assert_int_eq(status_of("POST", "/v1/skeletons/s/rest", TR, "{}"), 403);
  ck_assert_int_eq(status_of("PATCH", "/v1/skeletons/s/bones", TR, "{}"), 403);
  ck_assert_int_eq(status_of("DELETE", "/v1/skeletons/s", TR, NULL), 403);
  ck_assert_int_eq(status_of("POST", "/v1/skeletons/s/rest", TW, "{}"), 200);
  /* admin: metrics */
  ck_assert_int_eq(status_of("GET", "/metrics", NULL, NULL), 401);
  ck_assert_int_eq(status_of("GET", "/metrics", TR, NULL), 403);
  ck_assert_int_eq(status_of("GET", "/metrics", TW, NULL), 403);
  ck_assert_int_eq(status_of("GET", "/metrics", TA, NULL), 200);
  ck_assert_int_eq(status_of("DELETE", "/v1/skeletons/s", TW, NULL), 204);
  stop();
}
END_TEST

START_TEST(without_tokens_everything_stays_open) {
  start_open(NULL);
  ck_assert_int_eq(status_of("GET", "/v1/skeletons", NULL, NULL), 200);
  ck_assert_int_eq(status_of("GET", "/metrics", NULL, NULL), 200);
  ck_assert_int_eq(status_of("GET", "/v1/skeletons", "whatever-token-0123456", NULL), 200);
  stop();
}
END_TEST

/* The 401 goes out on the headers alone: the client never has to send the
 * megabyte it announced, and the connection is closed afterwards. */
START_TEST(an_unauthenticated_upload_is_refused_before_its_body) {
  start_with_tokens(tokens_all, NULL);
  const char head[] = "PUT /v1/skeletons/big HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                      "Content-Length: 1000000\r\n\r\n{\"bones\":[";
  double t0 = sk_test_now();
  char *all = raw_exchange(head, sizeof head - 1);
  double dt = sk_test_now() - t0;
  ck_assert_msg(strncmp(all, "HTTP/1.1 401", 12) == 0, "got: %.200s", all);
  ck_assert_ptr_nonnull(strcasestr(all, "Connection: close"));
  ck_assert_msg(dt < 5.0, "answered after %.1f s: it waited for the body", dt);
  free(all);
  ck_assert_int_eq(status_of("GET", "/v1/skeletons/big", TR, NULL), 404);
  stop();
}
END_TEST

/* ---- the WebSocket token subprotocol ------------------------------------ */

#define WS_HEAD(path)                                                                                                \
  "GET " path " HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"                         \
  "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"

/* Sends a handshake (`head` ends with its header lines, without the blank
 * line) and reads the answer's head (and a refusal's body) into buf.
 * Returns the open socket. */
static int ws_open(const char *head, char *buf, size_t cap) {
  int fd = sk_httpc_connect(D.host, D.port);
  ck_assert_int_ge(fd, 0);
  char req[1024];
  int n = snprintf(req, sizeof req, "%s\r\n", head);
  ck_assert_int_eq(sk_httpc_send_all(fd, req, (size_t)n), 0);
  size_t got = 0;
  buf[0] = 0;
  while (strstr(buf, "\r\n\r\n") == NULL && got < cap - 1) {
    ssize_t k = recv(fd, buf + got, 1, 0); /* byte by byte: nothing past the head is taken */
    if (k <= 0)
      break;
    buf[++got] = 0;
  }
  const char *cl = strncmp(buf, "HTTP/1.1 101", 12) != 0 ? strcasestr(buf, "\r\nContent-Length:") : NULL;
  size_t want = cl != NULL ? strtoul(cl + 17, NULL, 10) : 0; /* a refusal's problem+json follows */
  ck_assert_uint_lt(got + want, cap);
  if (want > 0) {
    ck_assert_int_eq(recv(fd, buf + got, want, MSG_WAITALL), (ssize_t)want);
    buf[got + want] = 0;
  }
  return fd;
}

/* One pose request as a masked text message; the answer's opcode and
 * payload length (a binary answer of `/pose`'s bytes: opcode 2). */
static int ws_roundtrip(int fd, const char *text, size_t *len) {
  uint8_t f[256] = {0x81, (uint8_t)(0x80 | strlen(text)), 1, 2, 3, 4};
  size_t n = strlen(text);
  ck_assert_uint_lt(n, 126);
  for (size_t i = 0; i < n; i++)
    f[6 + i] = (uint8_t)text[i] ^ f[2 + i % 4];
  ck_assert_int_eq(sk_httpc_send_all(fd, (const char *)f, 6 + n), 0);
  uint8_t h[4];
  ck_assert_int_eq(recv(fd, h, 2, MSG_WAITALL), 2);
  *len = h[1] & 127;
  if (*len == 126) {
    ck_assert_int_eq(recv(fd, h + 2, 2, MSG_WAITALL), 2);
    *len = (size_t)h[2] << 8 | h[3];
  }
  return h[0] & 15;
}

/* A browser's WebSocket cannot set Authorization: it offers
 * ["skinner.v1", "base64url.bearer.skinner." + base64url(token)] and the
 * 101 selects skinner.v1 (never echoing the token). */
START_TEST(a_browser_websocket_authenticates_with_the_token_subprotocol) {
  start_with_tokens("# test tokens\n" TR " read\n" TW " write\n" TB " read\n", NULL);
  char *skel = sk_test_tree_skeleton(3);
  ck_assert_int_eq(status_of("PUT", "/v1/skeletons/s", TW, skel), 201);
  free(skel);
  char buf[4096];
  static const char *const good[] = {
      WS_HEAD("/v1/skeletons/s/stream") "Sec-WebSocket-Protocol: skinner.v1, base64url.bearer.skinner." TB_B64URL "\r\n",
      WS_HEAD("/v1/skeletons/s/stream") "Sec-WebSocket-Protocol: base64url.bearer.skinner." TR_B64URL ",skinner.v1\r\n",
      WS_HEAD("/v1/skeletons/s/stream?format=mat3x4") "Sec-WebSocket-Protocol: skinner.v1, base64url.bearer.skinner." TB_B64URL "\r\n",
  };
  int fd;
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    fd = ws_open(good[i], buf, sizeof buf);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 101", 12) == 0, "handshake %zu got: %.300s", i, buf);
    ck_assert_msg(strstr(buf, "\r\nSec-WebSocket-Protocol: skinner.v1\r\n") != NULL, "%zu: %.400s", i, buf);
    ck_assert_ptr_null(strstr(buf, "bearer"));
    ck_assert_ptr_nonnull(strstr(buf, "\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"));
    size_t len = 0;
    ck_assert_int_eq(ws_roundtrip(fd, "{\"id\":1}", &len), 2);
    /* header 16 + id "1" padded to 4, then 4 matrices (3 bones + root) of 16 or 12 floats */
    ck_assert_uint_eq(len, 20 + 4 * (i == 2 ? 12 : 16) * 4);
    close(fd);
  }
  /* the event-stream fallback is a plain GET: Authorization only */
  fd = ws_open("GET /v1/skeletons/s/stream?animation=x&fps=30&frames=0,1 HTTP/1.1\r\nHost: localhost\r\n"
               "Accept: text/event-stream\r\nSec-WebSocket-Protocol: skinner.v1, base64url.bearer.skinner." TB_B64URL "\r\n",
               buf, sizeof buf);
  ck_assert_msg(strncmp(buf, "HTTP/1.1 401", 12) == 0, "got: %.300s", buf);
  close(fd);
  fd = ws_open("GET /v1/skeletons/s/stream?animation=x&fps=30&frames=0,1 HTTP/1.1\r\nHost: localhost\r\n"
               "Accept: text/event-stream\r\nAuthorization: Bearer " TR "\r\n", buf, sizeof buf);
  ck_assert_msg(strncmp(buf, "HTTP/1.1 404", 12) == 0 && strstr(buf, "\"pointer\":\"/animation\"") != NULL,
                "got: %.900s", buf); /* past the token: the tree skeleton has no clip */
  close(fd);
  /* Authorization alone still works, and needs no subprotocol */
  fd = ws_open(WS_HEAD("/v1/skeletons/s/stream") "Authorization: Bearer " TR "\r\n", buf, sizeof buf);
  ck_assert_msg(strncmp(buf, "HTTP/1.1 101", 12) == 0, "got: %.300s", buf);
  ck_assert_ptr_null(strstr(buf, "Sec-WebSocket-Protocol"));
  close(fd);
  stop();
}
END_TEST

START_TEST(the_token_subprotocol_is_refused_when_ambiguous_malformed_or_unknown) {
  start_with_tokens("# test tokens\n" TR " read\n" TW " write\n" TB " read\n", NULL);
  char *skel = sk_test_tree_skeleton(3);
  ck_assert_int_eq(status_of("PUT", "/v1/skeletons/s", TW, skel), 201);
  free(skel);
  static const struct {
    const char *head;
    const char *status, *says;
  } bad[] = {
      /* both credentials: neither is picked */
      {WS_HEAD("/v1/skeletons/s/stream") "Authorization: Bearer " TR "\r\n"
                                         "Sec-WebSocket-Protocol: skinner.v1, base64url.bearer.skinner." TB_B64URL "\r\n",
       "HTTP/1.1 400", "both an Authorization header and the base64url.bearer.skinner. subprotocol; send one"},
      {WS_HEAD("/v1/skeletons/s/stream") "Sec-WebSocket-Protocol: skinner.v1\r\n"
                                         "Sec-WebSocket-Protocol: base64url.bearer.skinner." TB_B64URL "\r\n",
       "HTTP/1.1 400", "more than one Sec-WebSocket-Protocol header; send the subprotocols in one"},
      /* base64 is not base64url */
      {WS_HEAD("/v1/skeletons/s/stream") "Sec-WebSocket-Protocol: skinner.v1, base64url.bearer.skinner." TB_B64 "\r\n",
       "HTTP/1.1 401", "subprotocol is not base64url (no padding) of a 16 to 256 byte token"},
      {WS_HEAD("/v1/skeletons/s/stream") "Sec-WebSocket-Protocol: skinner.v1, base64url.bearer.skinner." TR_B64URL "=\r\n",
       "HTTP/1.1 401", "subprotocol is not base64url"},
      {WS_HEAD("/v1/skeletons/s/stream") "Sec-WebSocket-Protocol: skinner.v1, base64url.bearer.skinner.c2hvcnQ\r\n",
       "HTTP/1.1 401", "16 to 256 byte token"},
      {WS_HEAD("/v1/skeletons/s/stream") "Sec-WebSocket-Protocol: skinner.v1, base64url.bearer.skinner."
                                         "dW5rbm93bi10b2tlbi0wMTIzNDU2Nzg5\r\n",
       "HTTP/1.1 401", "the bearer token is not known"},
      {WS_HEAD("/v1/skeletons/s/stream") "Sec-WebSocket-Protocol: skinner.v1\r\n", "HTTP/1.1 401",
       "(Authorization: Bearer TOKEN, or the subprotocol base64url.bearer.skinner.BASE64URL_TOKEN)"},
      /* a token but no protocol to select: a browser would fail the handshake */
      {WS_HEAD("/v1/skeletons/s/stream") "Sec-WebSocket-Protocol: base64url.bearer.skinner." TB_B64URL "\r\n",
       "HTTP/1.1 400", "Sec-WebSocket-Protocol offers no subprotocol spoken here; offer skinner.v1"},
      {WS_HEAD("/v1/skeletons/s/stream") "Sec-WebSocket-Protocol: Skinner.V1, base64url.bearer.skinner." TB_B64URL "\r\n",
       "HTTP/1.1 400", "offer skinner.v1"},
  };
  char buf[4096];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int fd = ws_open(bad[i].head, buf, sizeof buf);
    ck_assert_msg(strncmp(buf, bad[i].status, 12) == 0, "case %zu got: %.300s", i, buf);
    ck_assert_ptr_nonnull(strstr(buf, "application/problem+json"));
    ck_assert_ptr_null(strstr(buf, "\r\nSec-WebSocket-Accept"));
    ck_assert_ptr_null(strstr(buf, "\r\nSec-WebSocket-Protocol"));
    ck_assert_msg(strstr(buf, bad[i].says) != NULL, "case %zu: no \"%s\" in %.600s", i, bad[i].says, buf);
    ck_assert_ptr_null(strstr(buf, TB_B64URL)); /* a token is never echoed */
    close(fd);
  }
  stop();
}
END_TEST

/* ---- Host ----------------------------------------------------------------- */

START_TEST(host_header_is_checked_before_routing) {
  start_open(NULL);
  static const char rebinding[] = "GET /v1/skeletons HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n";
  char *all = raw_exchange(rebinding, sizeof rebinding - 1);
  ck_assert_msg(strncmp(all, "HTTP/1.1 421", 12) == 0, "got: %.200s", all);
  ck_assert_ptr_nonnull(strstr(all, "application/problem+json"));
  ck_assert_ptr_nonnull(strstr(all, "attacker.example"));
  free(all);
  static const char nohost[] = "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n";
  all = raw_exchange(nohost, sizeof nohost - 1);
  ck_assert_msg(strncmp(all, "HTTP/1.1 400", 12) == 0, "got: %.200s", all);
  ck_assert_ptr_nonnull(strstr(all, "needs a Host header"));
  free(all);
  static const char http10[] = "GET /healthz HTTP/1.0\r\n\r\n";
  all = raw_exchange(http10, sizeof http10 - 1);
  ck_assert_msg(strncmp(all, "HTTP/1.0 200", 12) == 0 || strncmp(all, "HTTP/1.1 200", 12) == 0, "got: %.200s", all);
  free(all);
  static const char twohosts[] = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n";
  all = raw_exchange(twohosts, sizeof twohosts - 1);
  ck_assert_msg(strncmp(all, "HTTP/1.1 400", 12) == 0, "got: %.200s", all);
  free(all);
  ck_assert_int_eq(status_of("GET", "/healthz", NULL, NULL), 200); /* Host: 127.0.0.1:PORT */
  stop();

  const char *args[] = {"--allowed-hosts", "api.example:8443,other.example", NULL};
  start_open(args);
  static const char named[] = "GET /healthz HTTP/1.1\r\nHost: API.example:8443\r\nConnection: close\r\n\r\n";
  all = raw_exchange(named, sizeof named - 1);
  ck_assert_msg(strncmp(all, "HTTP/1.1 200", 12) == 0, "got: %.200s", all);
  free(all);
  ck_assert_int_eq(status_of("GET", "/healthz", NULL, NULL), 421); /* 127.0.0.1 is not listed */
  stop();
}
END_TEST

/* ---- framing -------------------------------------------------------------- */

/* Each smuggling attempt hides a DELETE of skeleton s behind a request
 * whose framing is ambiguous: the daemon answers that request 400 and
 * closes, so the DELETE never runs. */
START_TEST(smuggled_requests_never_run) {
  start_open(NULL);
  char *skel = sk_test_tree_skeleton(3);
  ck_assert_int_eq(status_of("PUT", "/v1/skeletons/s", NULL, skel), 201);
  free(skel);
#define HIDDEN "DELETE /v1/skeletons/s HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n"
  static const char *const attacks[] = {
      /* TE + CL: MHD reads chunked ("0" ends the body), a CL-reading proxy sees 60 bytes */
      "POST /v1/skeletons/s/pose HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
      "Content-Length: 60\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" HIDDEN,
      /* CL + TE, other order */
      "POST /v1/skeletons/s/pose HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n"
      "Content-Type: application/json\r\nContent-Length: 4\r\n\r\n2\r\n{}\r\n0\r\n\r\n" HIDDEN,
      /* two different Content-Lengths: MHD takes the first */
      "POST /v1/skeletons/s/pose HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
      "Content-Length: 2\r\nContent-Length: 80\r\n\r\n{}" HIDDEN,
      /* two equal ones: refused too */
      "POST /v1/skeletons/s/pose HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
      "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}" HIDDEN,
      /* a coding MHD does not decode */
      "POST /v1/skeletons/s/pose HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
      "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" HIDDEN,
      /* two Transfer-Encoding lines */
      "POST /v1/skeletons/s/pose HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
      "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n" HIDDEN,
      /* not a plain decimal: libmicrohttpd's own 400 (HTML), then it closes */
      "POST /v1/skeletons/s/pose HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
      "Content-Length: +2\r\n\r\n{}" HIDDEN,
  };
  for (size_t i = 0; i < sizeof attacks / sizeof attacks[0]; i++) {
    char *all = raw_exchange(attacks[i], strlen(attacks[i]));
    ck_assert_msg(strncmp(all, "HTTP/1.1 400", 12) == 0, "attack %zu got: %.300s", i, all);
    ck_assert_msg(strstr(all, "HTTP/1.1 2") == NULL, "attack %zu: the hidden request ran: %.600s", i, all);
    if (i < 6) { /* ours: one problem+json answer, then the connection closes */
      ck_assert_msg(count_answers(all) == 1, "attack %zu: %d answers: %.600s", i, count_answers(all), all);
      ck_assert_ptr_nonnull(strstr(all, "application/problem+json"));
      ck_assert_ptr_nonnull(strstr(all, "bad-framing"));
      ck_assert_ptr_nonnull(strcasestr(all, "Connection: close"));
    }
    free(all);
    ck_assert_msg(status_of("GET", "/v1/skeletons/s", NULL, NULL) == 200, "attack %zu deleted the skeleton", i);
  }
#undef HIDDEN
  /* the honest versions still work */
  static const char chunked[] = "POST /v1/skeletons/s/pose HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
  char *all = raw_exchange(chunked, sizeof chunked - 1);
  ck_assert_msg(strncmp(all, "HTTP/1.1 200", 12) == 0, "got: %.300s", all);
  free(all);
  stop();
}
END_TEST

/* ---- signals -------------------------------------------------------------- */

/* Polls until `path` with `token` answers `want` (a reload is asynchronous). */
static bool eventually(const char *path, const char *token, int want) {
  for (int i = 0; i < 100; i++) {
    if (status_of("GET", path, token, NULL) == want)
      return true;
    usleep(50000);
  }
  return false;
}

START_TEST(sighup_reloads_tokens_and_keeps_connections_open) {
  start_with_tokens(TR " read\n", NULL);
  int ka = sk_httpc_connect(D.host, D.port);
  ck_assert_int_ge(ka, 0);
  ck_assert_int_eq(ka_call(ka, "/v1/skeletons", TR), 200);
  ck_assert_int_eq(status_of("GET", "/v1/skeletons", TNEW, NULL), 401);

  write_file(tokens_path, TNEW " read\n");
  kill(D.pid, SIGHUP);
  ck_assert_msg(eventually("/v1/skeletons", TNEW, 200), "the added token never worked");
  ck_assert_int_eq(status_of("GET", "/v1/skeletons", TR, NULL), 401); /* removed */
  /* the connection opened before the reload carries on */
  ck_assert_int_eq(ka_call(ka, "/v1/skeletons", TNEW), 200);
  ck_assert_int_eq(ka_call(ka, "/v1/skeletons", TR), 401);

  /* a bad file keeps the tokens in force */
  write_file(tokens_path, TR " read\nshort write\n");
  kill(D.pid, SIGHUP);
  usleep(300000);
  ck_assert_int_eq(status_of("GET", "/v1/skeletons", TNEW, NULL), 200);
  ck_assert_int_eq(status_of("GET", "/v1/skeletons", TR, NULL), 401);
  ck_assert_int_eq(ka_call(ka, "/healthz", TNEW), 200);
  close(ka);
  stop();
}
END_TEST

START_TEST(sigusr1_and_sigusr2_do_not_kill_the_daemon) {
  start_open(NULL);
  kill(D.pid, SIGUSR1);
  kill(D.pid, SIGUSR2);
  kill(D.pid, SIGHUP); /* no --tokens, no TLS: nothing to reload */
  usleep(200000);
  ck_assert_int_eq(waitpid(D.pid, NULL, WNOHANG), 0);
  ck_assert_int_eq(status_of("GET", "/healthz", NULL, NULL), 200);
  stop();
}
END_TEST

START_TEST(a_bad_token_file_stops_the_start_with_file_and_line) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/sk_access_bad_%d.tokens", (int)getpid());
  write_file(path, "# ok\n" TR " read\n" TW " writer\n");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s --listen 127.0.0.1:0 --tokens %s 2>&1",
           getenv("SKINNERD") ? getenv("SKINNERD") : "./skinnerd", path);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  char out[512] = "";
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = 0;
  int st = pclose(p);
  unlink(path);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d, output %s", st, out);
  char want[256];
  snprintf(want, sizeof want, "skinnerd: --tokens: %s:3: unknown scope (read, write or admin)\n", path);
  ck_assert_str_eq(out, want);
}
END_TEST

int main(void) {
  Suite *s = suite_create("access");
  TCase *t = tcase_create("tokens");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, each_route_answers_401_403_or_200_by_the_token_scope);
  tcase_add_test(t, without_tokens_everything_stays_open);
  tcase_add_test(t, an_unauthenticated_upload_is_refused_before_its_body);
  tcase_add_test(t, a_bad_token_file_stops_the_start_with_file_and_line);
  suite_add_tcase(s, t);
  t = tcase_create("websocket");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, a_browser_websocket_authenticates_with_the_token_subprotocol);
  tcase_add_test(t, the_token_subprotocol_is_refused_when_ambiguous_malformed_or_unknown);
  suite_add_tcase(s, t);
  t = tcase_create("host");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, host_header_is_checked_before_routing);
  suite_add_tcase(s, t);
  t = tcase_create("framing");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, smuggled_requests_never_run);
  suite_add_tcase(s, t);
  t = tcase_create("signals");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, sighup_reloads_tokens_and_keeps_connections_open);
  tcase_add_test(t, sigusr1_and_sigusr2_do_not_kill_the_daemon);
  suite_add_tcase(s, t);
  return sk_test_run(s);
}
