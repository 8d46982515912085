/* sk_http's answers: what a request answers (an owned or static body, a
 * streamed one, a bare 503 when even that fails), counted in the memory
 * budget, with the headers every answer carries, and the answer a
 * connection keeps for its next one (respond_kept). Loop thread, like the
 * rest of sk_http (sk_http.c queues the answer libmicrohttpd sends). */
#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "sk_error.h"
#include "sk_http_int.h"

/* Owned answers up to this size are counted but never refused: a problem
 * body or a small JSON answer must always get out (at most one per
 * connection, so bounded by --max-connections). */
#define SK_HTTP_SMALL_ANSWER 4096u

/* The 503 for an answer that does not fit in the budget. */
static const char k_over_budget[] =
    "{\"type\":\"https://skinnerd.dev/problems/overloaded\",\"title\":\"Busy\",\"status\":503,"
    "\"detail\":\"the answer does not fit in the memory budget (--memory-mb) now; retry later\",\"pointer\":\"\"}";

int sk_http_reserve(sk_http_req *req, size_t bytes) {
  if (sk_budget_reserve(req->http->cfg.budget, bytes) != 0)
    return SK_EBUSY;
  req->held += bytes;
  req->answer_reserved += bytes;
  return 0;
}

void sk_http_charge(sk_http_req *req, size_t bytes) {
  sk_budget_charge(req->http->cfg.budget, bytes);
  req->held += bytes;
  req->answer_reserved += bytes;
}

/* Counts an owned answer body of `len` bytes: against what was reserved
 * ahead first, the rest reserved now. SK_EBUSY when it does not fit. */
static int count_answer(sk_http_req *req, size_t len) {
  sk_budget *b = req->http->cfg.budget;
  if (b == NULL || len <= req->answer_reserved)
    return 0;
  size_t extra = len - req->answer_reserved;
  if (extra <= SK_HTTP_SMALL_ANSWER)
    sk_budget_charge(b, extra);
  else if (sk_budget_reserve(b, extra) != 0)
    return SK_EBUSY;
  req->held += extra;
  req->answer_reserved = len;
  return 0;
}

/* The answer when even an answer cannot be made: a bare 503. */
static int respond_oom(sk_http_req *req) {
  struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  if (r != NULL)
    MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
  req->resp = r;
  req->status = 503;
  return SK_ENOMEM;
}

/* Adds the content type, `headers`, the decoration `deco`, Server-Timing
 * (its text left in `timing`) and Connection: close when `close`, and
 * makes `r` the answer. Frees `r` and answers a bare 503 on failure. */
static int set_response_timed(sk_http_req *req, struct MHD_Response *r, int status, const char *content_type,
                              const char *const *headers, const char *const *deco, bool close,
                              char timing[SK_HTTP_TIMING_MAX]) {
  if (content_type != NULL && MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) != MHD_YES)
    goto oom_r;
  for (const char *const *p = headers; p != NULL && p[0] != NULL; p += 2)
    if (MHD_add_response_header(r, p[0], p[1]) != MHD_YES)
      goto oom_r;
  for (const char *const *p = deco; p != NULL && p[0] != NULL; p += 2)
    if (MHD_add_response_header(r, p[0], p[1]) != MHD_YES)
      goto oom_r;
  sk_http__server_timing(req, timing);
  if (MHD_add_response_header(r, "Server-Timing", timing) != MHD_YES)
    goto oom_r;
  if (close && MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close") != MHD_YES)
    goto oom_r;
  req->resp = r;
  req->status = status;
  return 0;
oom_r:
  MHD_destroy_response(r);
  return respond_oom(req);
}

static int set_response(sk_http_req *req, struct MHD_Response *r, int status, const char *content_type,
                        const char *const *headers, const char *const *deco, bool close) {
  char timing[SK_HTTP_TIMING_MAX];
  return set_response_timed(req, r, status, content_type, headers, deco, close, timing);
}

/* The kept response `c->kept` with this request's Server-Timing in place
 * of the previous one's (the one header that differs between two answers
 * of the same key): one header freed and one added, against the ~4 500
 * instructions of a new response. False when libmicrohttpd refused. */
static bool retime_kept(sk_http_req *req, conn_state *c) {
  char timing[SK_HTTP_TIMING_MAX];
  sk_http__server_timing(req, timing);
  if (MHD_del_response_header(c->kept, "Server-Timing", c->kept_timing) != MHD_YES ||
      MHD_add_response_header(c->kept, "Server-Timing", timing) != MHD_YES)
    return false;
  memcpy(c->kept_timing, timing, sizeof timing);
  return true;
}

static const char *const *decoration(sk_http_req *req, int status) {
  return req->decorate != NULL ? req->decorate(req, status) : NULL;
}

static bool closing(const sk_http_req *req) { return req->close_after || req->http->stopping; }

/* Appends s and its NUL to the key; false when it does not fit. */
static bool key_add(char *key, size_t *n, const char *s) {
  size_t len = strlen(s) + 1;
  if (len > SK_HTTP_KEPT_KEY - *n)
    return false;
  memcpy(key + *n, s, len);
  *n += len;
  return true;
}

/* Every header an answer carries, as one text (content type, headers,
 * decoration, close): two answers with the same text and length can be
 * the same response. False when over SK_HTTP_KEPT_KEY. */
static bool answer_key(const char *content_type, const char *const *headers, const char *const *deco, bool close,
                       char key[SK_HTTP_KEPT_KEY], size_t *n) {
  *n = 0;
  if (!key_add(key, n, content_type != NULL ? content_type : "") || !key_add(key, n, close ? "c" : "k"))
    return false;
  for (const char *const *p = headers; p != NULL && p[0] != NULL; p += 2)
    if (!key_add(key, n, p[0]) || !key_add(key, n, p[1]))
      return false;
  key_add(key, n, "");
  for (const char *const *p = deco; p != NULL && p[0] != NULL; p += 2)
    if (!key_add(key, n, p[0]) || !key_add(key, n, p[1]))
      return false;
  return true;
}

void sk_http__kept_drop(conn_state *c) {
  if (c->kept != NULL)
    MHD_destroy_response(c->kept); /* the body goes with it (free callback) */
  c->kept = NULL;
  c->kept_body = NULL;
  c->kept_len = c->kept_key_len = 0;
}

/* An owned answer of up to --conn-memory bytes (16 KiB at least) on a
 * connection with state: a pose client asks the same kind of question again and again, and
 * creating the libmicrohttpd response with its headers (an allocation per
 * header and two string copies, each checked) cost ~4 500 instructions of
 * a pose request's ~62 000 under callgrind. So the connection keeps its
 * last such response; an answer with the same header text and length is
 * copied into the kept body and the kept response queued again. Safe
 * because libmicrohttpd runs one request at a time per connection: when a
 * handler answers, the previous answer on the connection has gone out and
 * nothing reads the kept body. The kept bytes are per-connection memory
 * like libmicrohttpd's own pool and bounded like it (--conn-memory, or
 * 16 KiB when the pool is smaller), not answers being sent: outside the
 * budget, which counted this answer like any other (count_answer).
 * Takes `body` in every case. */
static int respond_kept(sk_http_req *req, int status, const char *content_type, char *body, size_t len,
                        const char *const *headers) {
  conn_state *c = req->cstate;
  const char *const *deco = decoration(req, status);
  const bool close = closing(req);
  char key[SK_HTTP_KEPT_KEY];
  size_t klen;
  bool keyed = answer_key(content_type, headers, deco, close, key, &klen);
  if (keyed && c->kept != NULL && c->kept_len == len && c->kept_key_len == klen && memcmp(c->kept_key, key, klen) == 0 &&
      retime_kept(req, c)) {
    memcpy(c->kept_body, body, len);
    free(body);
    req->resp = c->kept;
    req->resp_kept = true;
    req->status = status;
    return 0;
  }
  struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback(len, body, free);
  if (r == NULL) {
    free(body);
    return respond_oom(req);
  }
  char timing[SK_HTTP_TIMING_MAX];
  int rc = set_response_timed(req, r, status, content_type, headers, deco, close, timing);
  if (rc != 0 || !keyed)
    return rc;
  sk_http__kept_drop(c);
  memcpy(c->kept_timing, timing, sizeof timing);
  c->kept = r; /* our reference moves to the connection */
  c->kept_body = body;
  c->kept_len = len;
  memcpy(c->kept_key, key, klen);
  c->kept_key_len = klen;
  req->resp_kept = true;
  return 0;
}

int sk_http_respond(sk_http_req *req, int status, const char *content_type, void *body, size_t len, bool own,
                    const char *const *headers) {
  if (req->resp != NULL) {
    if (own)
      free(body);
    return SK_EINVAL;
  }
  if (own && count_answer(req, len) != 0) {
    free(body);
    static const char *const retry[] = {MHD_HTTP_HEADER_RETRY_AFTER, "1", NULL};
    sk_http__logf(req->http, 2, "%s %s: a %zu-byte answer is over the memory budget", req->method, req->url, len);
    return sk_http_respond(req, 503, "application/problem+json", (void *)k_over_budget, sizeof k_over_budget - 1,
                           false, retry);
  }
  const size_t kept_cap = req->http->cfg.conn_memory > SK_HTTP_KEPT_MIN ? req->http->cfg.conn_memory : SK_HTTP_KEPT_MIN;
  if (own && req->cstate != NULL && len > 0 && len <= SK_HTTP_KEPT_MAX && len <= kept_cap)
    return respond_kept(req, status, content_type, body, len, headers);
  struct MHD_Response *r =
      MHD_create_response_from_buffer(len, body, own ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
  if (r != NULL)
    return set_response(req, r, status, content_type, headers, decoration(req, status), closing(req));
  if (own)
    free(body);
  return respond_oom(req);
}

/* A streamed answer's producer, as libmicrohttpd's content reader. */
typedef struct stream {
  sk_http_producer produce;
  void *arg;
  void (*release)(void *arg);
} stream;

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  stream *st = cls;
  long n = st->produce(st->arg, buf, max);
  if (n == 0)
    return MHD_CONTENT_READER_END_OF_STREAM;
  if (n < 0 || (size_t)n > max)
    return MHD_CONTENT_READER_END_WITH_ERROR;
  return (ssize_t)n;
}

static void stream_free(void *cls) {
  stream *st = cls;
  if (st->release != NULL)
    st->release(st->arg);
  free(st);
}

int sk_http_respond_stream(sk_http_req *req, int status, const char *content_type, uint64_t length, size_t block,
                           sk_http_producer produce, void *arg, void (*release)(void *arg),
                           const char *const *headers) {
  stream *st = req->resp == NULL ? malloc(sizeof *st) : NULL;
  if (st == NULL) {
    if (release != NULL)
      release(arg);
    return req->resp != NULL ? SK_EINVAL : respond_oom(req);
  }
  st->produce = produce;
  st->arg = arg;
  st->release = release;
  struct MHD_Response *r = MHD_create_response_from_callback(
      length == SK_HTTP_LENGTH_UNKNOWN ? MHD_SIZE_UNKNOWN : length, block, stream_read, st, stream_free);
  if (r == NULL) {
    stream_free(st);
    return respond_oom(req);
  }
  return set_response(req, r, status, content_type, headers, decoration(req, status), closing(req));
}

int sk_http__respond_response(sk_http_req *req, struct MHD_Response *r, int status, const char *content_type,
                              const char *const *headers, bool close) {
  if (r == NULL)
    return respond_oom(req);
  return set_response(req, r, status, content_type, headers, decoration(req, status), close || closing(req));
}

int sk_http_respond_upgrade(sk_http_req *req, const char *const *headers, const sk_http_upgrade_ops *ops, void *arg) {
  if (req->resp != NULL) {
    ops->abandon(arg);
    return SK_EINVAL;
  }
  struct MHD_Response *r = sk_http__upgrade_response(req, ops, arg);
  if (r == NULL)
    return respond_oom(req);
  return set_response(req, r, 101, NULL, headers, decoration(req, 101), false);
}
