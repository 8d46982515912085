/* The end-to-end suites' fixture: start the real daemon on a loopback port
 * it picks, ask it things with assertions on the way, stop it and check it
 * exited 0. Built on sk_httpc.h (the client, sk_daemon_start/stop); the
 * assets come from sk_testutil.h's one loader (sk_test_read_asset). */
#ifndef SK_FIXTURE_H
#define SK_FIXTURE_H

/* mkdtemp is POSIX 2008, not C11: a suite that includes this header first
 * gets it without a flag of its own. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <jansson.h>

#include "sk_buf.h"
#include "sk_httpc.h"
#include "sk_testutil.h"

/* Starts skinnerd (SKINNERD, or ./skinnerd) with the NULL-terminated extra
 * arguments on 127.0.0.1:0. */
static inline void sk_fixture_start(sk_daemon *d, const char *const *extra) {
  ck_assert_msg(sk_daemon_start(d, extra) == 0, "skinnerd did not start (SKINNERD=%s)",
                getenv("SKINNERD") ? getenv("SKINNERD") : "./skinnerd");
}

/* SIGTERM, then the daemon must exit 0 (it drains what is in flight). */
static inline void sk_fixture_stop(sk_daemon *d) {
  int st = sk_daemon_stop(d, SIGTERM);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "skinnerd did not exit 0 after SIGTERM (status %d)", st);
}

/* One request that must be answered (any status); `headers` is "Name: v\r\n"
 * lines or NULL. */
static inline void sk_fixture_request(const sk_daemon *d, const char *method, const char *path, const char *headers,
                                      const void *body, size_t len, sk_httpc_resp *r) {
  int rc = sk_httpc_request(d->host, d->port, method, path, headers, body, len, r);
  ck_assert_msg(rc == 0, "%s %s: no answer (%s)", method, path, r->error);
}

/* One request with a Content-Type `ct` and an Accept `accept` header (each
 * left out when NULL); returns sk_httpc_request's rc without asserting it:
 * the hostile suites send what may get no answer. */
static inline int sk_fixture_send(const sk_daemon *d, const char *method, const char *path, const char *ct,
                                  const char *accept, const void *body, size_t len, sk_httpc_resp *r) {
  char h[512];
  int n = 0;
  h[0] = 0;
  if (ct != NULL)
    n += snprintf(h + n, sizeof h - (size_t)n, "Content-Type: %s\r\n", ct);
  if (accept != NULL)
    snprintf(h + n, sizeof h - (size_t)n, "Accept: %s\r\n", accept);
  return sk_httpc_request(d->host, d->port, method, path, h, body, len, r);
}

/* A request that must get an answer (a JSON body, or none; `accept` or
 * NULL); returns its status. */
static inline int sk_fixture_must(const sk_daemon *d, const char *method, const char *path, const char *body,
                                  const char *accept, sk_httpc_resp *r) {
  const int rc = sk_fixture_send(d, method, path, body ? "application/json" : NULL, accept, body,
                                 body ? strlen(body) : 0, r);
  ck_assert_msg(rc == 0, "%s %s: no answer (%s)", method, path, r->error);
  return r->status;
}

/* POSTs the pose request `body` to `path` (/pose or /poses), which must
 * answer 200, and appends the answer's poses to `out`: JSON as its
 * "results" entries, comma-joined (a bare single answer is one entry), so
 * answers of several requests compare with one answer of them all; binary
 * (Accept: application/octet-stream) as its bytes. */
static inline void sk_fixture_append_poses(const sk_daemon *d, const char *path, const char *body, size_t len,
                                           bool binary, sk_strbuf *out) {
  sk_httpc_resp r;
  sk_fixture_request(d, "POST", path,
                     binary ? "Content-Type: application/json\r\nAccept: application/octet-stream\r\n"
                            : "Content-Type: application/json\r\n",
                     body, len, &r);
  ck_assert_msg(r.status == 200, "%d %.300s for %.200s", r.status, r.body, body);
  const char *p = r.body;
  size_t n = r.len;
  if (!binary && strncmp(p, "{\"results\":[", 12) == 0) {
    p += 12;
    n -= 14;
  }
  if (!binary && out->len > 0)
    sk_strbuf_append(out, ",", 1);
  sk_strbuf_append(out, p, n);
  sk_httpc_free(&r);
}

/* {"poses":[ `item` x n ]} (new; free): a batch body of n copies. */
static inline char *sk_fixture_repeat_poses(const char *item, int n) {
  size_t il = strlen(item);
  char *b = malloc(16 + (il + 1) * (size_t)n);
  ck_assert_ptr_nonnull(b);
  size_t at = (size_t)sprintf(b, "{\"poses\":[");
  for (int i = 0; i < n; i++) {
    if (i)
      b[at++] = ',';
    memcpy(b + at, item, il);
    at += il;
  }
  strcpy(b + at, "]}");
  return b;
}

/* One request that must be answered, with a JSON body (or none) and the
 * extra `headers` ("Name: v\r\n" lines, or NULL). */
static inline void sk_fixture_json_request(const sk_daemon *d, const char *method, const char *path,
                                           const char *headers, const char *body, sk_httpc_resp *r) {
  char h[1024];
  snprintf(h, sizeof h, "%s%s", body ? "Content-Type: application/json\r\n" : "", headers ? headers : "");
  sk_fixture_request(d, method, path, h, body, body ? strlen(body) : 0, r);
}

/* The answer's body, which must be JSON; a new reference. */
static inline json_t *sk_fixture_body_json(const sk_httpc_resp *r) {
  json_error_t je;
  json_t *j = json_loadb(r->body, r->len, 0, &je);
  ck_assert_msg(j != NULL, "answer is not JSON (%s): %.200s", je.text, r->body);
  return j;
}

/* GET /healthz answers 200. */
static inline void sk_fixture_expect_healthy(const sk_daemon *d) {
  sk_httpc_resp r;
  sk_fixture_request(d, "GET", "/healthz", NULL, NULL, 0, &r);
  ck_assert_int_eq(r.status, 200);
  sk_httpc_free(&r);
}

/* PUT /v1/skeletons/<id> with a body of `content_type`: 201 or 200. */
static inline void sk_fixture_put(const sk_daemon *d, const char *id, const char *content_type, const void *body,
                                  size_t len) {
  char path[256], h[128];
  snprintf(path, sizeof path, "/v1/skeletons/%s", id);
  snprintf(h, sizeof h, "Content-Type: %s\r\n", content_type);
  sk_httpc_resp r;
  sk_fixture_request(d, "PUT", path, h, body, len, &r);
  ck_assert_msg(r.status == 201 || r.status == 200, "PUT %s: %d %.300s", id, r.status, r.body ? r.body : "");
  sk_httpc_free(&r);
}

/* PUT of a JSON skeleton. */
static inline void sk_fixture_put_json(const sk_daemon *d, const char *id, const char *json) {
  sk_fixture_put(d, id, "application/json", json, strlen(json));
}

/* PUT of a glTF asset from tests/data (a .glb). */
static inline void sk_fixture_put_asset(const sk_daemon *d, const char *id, const char *asset) {
  size_t len;
  unsigned char *data = sk_test_read_asset(asset, &len);
  sk_fixture_put(d, id, "model/gltf-binary", data, len);
  free(data);
}

/* A fresh directory /tmp/<stem>.XXXXXX in `dir` (n bytes), for a data
 * directory the suite removes with sk_fixture_teardown. */
static inline void sk_fixture_tmpdir(char *dir, size_t n, const char *stem) {
  ck_assert_int_lt(snprintf(dir, n, "/tmp/%s.XXXXXX", stem), (int)n);
  ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp %s failed", dir);
}

/* rm -rf of a directory sk_fixture_tmpdir made. */
static inline void sk_fixture_rmdir(const char *dir) {
  char cmd[320];
  ck_assert_int_lt(snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir), (int)sizeof cmd);
  ck_assert_int_eq(system(cmd), 0);
}

/* The checked fixture's end: the daemon stopped (exit 0) when it runs,
 * then its directory removed. */
static inline void sk_fixture_teardown(sk_daemon *d, const char *dir) {
  if (d->pid > 0)
    sk_fixture_stop(d);
  sk_fixture_rmdir(dir);
}

/* The answer's body (new, NUL-terminated; free) to a request whose status
 * must be `status`; Content-Type `ct` and Accept `accept` are sent when not
 * NULL; `n` (or NULL) gets the body's length. */
static inline char *sk_fixture_ask_text(const sk_daemon *d, const char *method, const char *path, const char *ct,
                                        const char *accept, const void *body, size_t len, int status, size_t *n) {
  sk_httpc_resp r;
  const int rc = sk_fixture_send(d, method, path, ct, accept, body, len, &r);
  ck_assert_msg(rc == 0, "%s %s: no answer (%s)", method, path, r.error);
  ck_assert_msg(r.status == status, "%s %s: %d, want %d: %.400s", method, path, r.status, status, r.body);
  char *text = malloc(r.len + 1);
  ck_assert_ptr_nonnull(text);
  memcpy(text, r.body, r.len);
  text[r.len] = 0;
  if (n != NULL)
    *n = r.len;
  sk_httpc_free(&r);
  return text;
}

/* The answer, which must be JSON with status `status` (new; json_decref). */
static inline json_t *sk_fixture_ask(const sk_daemon *d, const char *method, const char *path, const char *ct,
                                     const void *body, size_t len, int status) {
  size_t n;
  char *t = sk_fixture_ask_text(d, method, path, ct, NULL, body, len, status, &n);
  json_t *j = json_loadb(t, n, 0, NULL);
  ck_assert_msg(j != NULL, "%s %s: not JSON: %.200s", method, path, t);
  free(t);
  return j;
}

/* sk_fixture_ask with a JSON body. */
static inline json_t *sk_fixture_ask_json(const sk_daemon *d, const char *method, const char *path, const char *body,
                                          int status) {
  return sk_fixture_ask(d, method, path, "application/json", body, strlen(body), status);
}

/* PUT /v1/skeletons/<id><query> of a glTF asset from tests/data (.glb as
 * binary, else glTF JSON) that must answer 201; the upload's summary. */
static inline json_t *sk_fixture_upload(const sk_daemon *d, const char *id, const char *asset, const char *query) {
  size_t len;
  unsigned char *data = sk_test_read_asset(asset, &len);
  char path[256];
  snprintf(path, sizeof path, "/v1/skeletons/%s%s", id, query ? query : "");
  const char *ct = asset[strlen(asset) - 1] == 'b' ? "model/gltf-binary" : "model/gltf+json";
  json_t *j = sk_fixture_ask(d, "PUT", path, ct, data, len, 201);
  free(data);
  return j;
}

#endif
