/* Conformance cases through the daemon: a case's pose ops sent to /pose
 * (and its single-time poses again as one /poses batch) must answer the
 * bytes `skinner eval` prints for the same ops. Shared by the suites that
 * run committed .jsonl cases over HTTP. */
#ifndef SK_CASECHECK_H
#define SK_CASECHECK_H

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "sk_eval.h"
#include "sk_fixture.h"

/* Counts of what sk_casecheck_run sent. */
typedef struct sk_casecheck_counts {
  int poses, ranges, batches;
} sk_casecheck_counts;

/* The body of an answer that must be `status` (new, free()). */
static inline char *sk_casecheck_answer(const sk_daemon *d, const char *path, const char *body, int status) {
  sk_httpc_resp r;
  sk_fixture_request(d, "POST", path, "Content-Type: application/json\r\n", body, strlen(body), &r);
  ck_assert_msg(r.status == status, "POST %s: %d, want %d: %.300s", path, r.status, status, r.body);
  char *out = strndup(r.body ? r.body : "", r.len);
  sk_httpc_free(&r);
  return out;
}

/* The results `skinner eval` prints for a case of this one op, without the
 * surrounding array: one result object, or several for a frame range. */
static inline char *sk_casecheck_eval_one(const json_t *skeleton, const json_t *op) {
  json_t *c = json_pack("{s:O,s:[O]}", "skeleton", skeleton, "ops", op);
  sk_strbuf out = {0};
  sk_error e;
  sk_error_clear(&e);
  ck_assert_msg(sk_eval_case(c, &out, &e) == 0, "eval: %s at %s", e.text, e.pointer);
  json_decref(c);
  const char *at = strstr(out.data, ",\"results\":[");
  ck_assert_ptr_nonnull(at);
  at += 12;
  char *r = strndup(at, out.len - (size_t)(at - out.data) - 2); /* drop "]}" */
  sk_strbuf_free(&out);
  return r;
}

static inline void sk_casecheck_append(sk_strbuf *b, size_t n, const char *s) {
  if (n > 0)
    sk_strbuf_append(b, ",", 1);
  sk_strbuf_append(b, s, strlen(s));
}

/* Stores `skel` as `id` and sends every op of `ops` (pose ops: their
 * "op" key is dropped) to /pose: a frame range ("from" or "times") must
 * answer {"results": [skinner eval's results]}, a single pose exactly
 * skinner eval's result; the single poses are then sent again as one
 * /poses batch (when there are two or more). */
static inline void sk_casecheck_run(const sk_daemon *d, const char *id, const json_t *skel, const json_t *ops,
                                    sk_casecheck_counts *n) {
  char url[96], *text = json_dumps(skel, JSON_COMPACT);
  sk_fixture_put_json(d, id, text);
  free(text);
  snprintf(url, sizeof url, "/v1/skeletons/%s/pose", id);
  sk_strbuf batch = {0}, batch_want = {0};
  sk_strbuf_append(&batch, "{\"poses\":[", 10);
  sk_strbuf_append(&batch_want, "{\"results\":[", 12);
  size_t nbatch = 0;
  for (size_t i = 0; i < json_array_size(ops); i++) {
    json_t *op = json_deep_copy(json_array_get(ops, i));
    char *want = sk_casecheck_eval_one(skel, op);
    json_object_del(op, "op");
    char *body = json_dumps(op, JSON_COMPACT), *got = sk_casecheck_answer(d, url, body, 200);
    if (json_object_get(op, "from") != NULL || json_object_get(op, "times") != NULL) {
      ck_assert_msg(strncmp(got, "{\"results\":[", 12) == 0 && strlen(got) == strlen(want) + 14 &&
                        strncmp(got + 12, want, strlen(want)) == 0,
                    "%s op %zu (range): differs from skinner eval:\n got %.300s\nwant %.300s", id, i, got, want);
      n->ranges++;
    } else {
      ck_assert_msg(strcmp(got, want) == 0, "%s op %zu: differs from skinner eval:\n got %.300s\nwant %.300s", id, i,
                    got, want);
      sk_casecheck_append(&batch, nbatch, body);
      sk_casecheck_append(&batch_want, nbatch, want);
      nbatch++;
    }
    n->poses++;
    free(got);
    free(body);
    free(want);
    json_decref(op);
  }
  if (nbatch > 1) {
    sk_strbuf_append(&batch, "]}", 2);
    sk_strbuf_append(&batch_want, "]}", 2);
    snprintf(url, sizeof url, "/v1/skeletons/%s/poses", id);
    char *got = sk_casecheck_answer(d, url, batch.data, 200);
    ck_assert_msg(strcmp(got, batch_want.data) == 0, "%s /poses: differs:\n got %.300s\nwant %.300s", id, got,
                  batch_want.data);
    free(got);
    n->batches++;
  }
  sk_strbuf_free(&batch);
  sk_strbuf_free(&batch_want);
}

#endif
