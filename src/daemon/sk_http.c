#include "sk_http.h"

#include <arpa/inet.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <strings.h>
#include <unistd.h>

#include "sk_error.h"
#include "sk_http_int.h"
#include "sk_metrics.h"
#include "sk_tls.h"

/* Bytes of an unwanted body read before the connection is dropped instead. */
#define SK_HTTP_DISCARD_MAX (64u << 20)

void sk_http__logf(const sk_http *h, int level, const char *fmt, ...) {
  if (level > h->cfg.log_level)
    return;
  static const char *const names[] = {"error", "warn", "info", "debug"};
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "skinnerd %s: ", names[level]);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}


static void on_timer(uv_timer_t *t) { sk_http__run_mhd(t->data); }

static void on_again(uv_idle_t *i) {
  uv_idle_stop(i);
  sk_http__run_mhd(i->data);
}

void sk_http__run_soon(sk_http *h) {
  if (h->mhd != NULL)
    uv_idle_start(&h->again, on_again);
}

static void on_poll(uv_poll_t *p, int status, int events) {
  (void)events;
  sk_http *h = p->data;
  if (status < 0)
    sk_http__logf(h, 1, "poll: %s", uv_strerror(status));
  sk_http__run_mhd(h);
}

/* The loop thread's time for MHD passes back to back while MHD has more
 * to do at once (a streamed answer whose socket takes more): a pass is one
 * slice per connection, ~0.1 ms; more than one per iteration keeps a
 * stream's throughput (one pass per iteration cost a 6.6 MB JSON answer
 * 8 %), the budget keeps the iteration short for everyone else. */
#define SK_HTTP_PASS_BUDGET_NS 2000000u

/* MHD passes, then re-arm: MHD reports a timeout of 0 when it has work
 * that no fd event would announce (pipelined requests, resumed
 * connections, a streamed answer whose socket can take more), and a later
 * one for its connection timeouts. Past the budget, the 0 case is an idle
 * handle, so the next pass comes in the next loop iteration, after other
 * clients' I/O: a 0 ms uv timer re-armed from its own callback runs again
 * in the same pass of libuv's timers (1.44), and a streamed 6.6 MB answer
 * was then produced whole in one iteration (25 ms; 250 ms under the
 * sanitizers) while /healthz waited. */
void sk_http__run_mhd(sk_http *h) {
  if (h->mhd == NULL)
    return;
  const uint64_t t0 = uv_hrtime();
  MHD_UNSIGNED_LONG_LONG ms;
  bool has;
  do {
    h->closed = false;
    MHD_run(h->mhd);
    has = !h->closed && MHD_get_timeout(h->mhd, &ms) == MHD_YES;
  } while (has && ms == 0 && uv_hrtime() - t0 < SK_HTTP_PASS_BUDGET_NS);
  if (h->closed || (has && ms == 0)) { /* closed: see sk_http__on_connection, one more pass to listen again */
    uv_timer_stop(&h->timer);
    uv_idle_start(&h->again, on_again);
  } else if (has) {
    uv_idle_stop(&h->again);
    uv_timer_start(&h->timer, on_timer, ms, 0);
  } else {
    uv_idle_stop(&h->again);
    uv_timer_stop(&h->timer);
  }
}

const char *sk_http_query(sk_http_req *req, const char *name) {
  return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* The headers the routes ask for on every request (framing, Host, the
 * token, negotiation, CORS, versions). Looking each up in libmicrohttpd
 * walks its header list every time (~14 lookups a pose request, ~1 800
 * instructions under callgrind, plus a counting pass of ~800); one pass
 * records each one's first value, as a lookup finds it, and its count. */
static const struct known_header {
  const char *name;
  size_t len;
} k_known[SK_HTTP_KNOWN_HEADERS] = {
#define KH(s) {s, sizeof s - 1}
    KH("Host"),   KH("Content-Length"), KH("Transfer-Encoding"), KH("Authorization"), KH("Accept"),
    KH("Content-Type"), KH("Origin"), KH("If-Match"), KH("If-None-Match"), KH("Access-Control-Request-Method"),
    KH("Access-Control-Request-Headers"),
#undef KH
};

/* The index of the header called [name, name + len) in k_known, or -1. */
static int known_named(const char *name, size_t len) {
  for (int i = 0; i < SK_HTTP_KNOWN_HEADERS; i++)
    if (k_known[i].len == len && strncasecmp(k_known[i].name, name, len) == 0)
      return i;
  return -1;
}

/* The index of `name` in k_known, or -1. The routes pass the same string
 * literals as k_known, which the linker merges (mergeable string
 * sections), so the pointer usually decides; the comparison is for the
 * rest. */
static int known_index(const char *name) {
  for (int i = 0; i < SK_HTTP_KNOWN_HEADERS; i++)
    if (k_known[i].name == name)
      return i;
  return known_named(name, strlen(name));
}

/* libmicrohttpd's names are its own copies, never our literals: straight
 * to the comparison, with the length it already has. */
static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                   const char *value, size_t value_size) {
  (void)kind;
  (void)value_size;
  sk_http_req *req = cls;
  int i = key != NULL ? known_named(key, key_size) : -1;
  if (i >= 0) {
    if (req->hdr_count[i] == 0)
      req->hdr_value[i] = value;
    req->hdr_count[i]++;
  }
  return MHD_YES;
}

static void scan_headers(sk_http_req *req) {
  if (req->hdr_scanned)
    return;
  MHD_get_connection_values_n(req->conn, MHD_HEADER_KIND, scan_header, req);
  req->hdr_scanned = true;
}

const char *sk_http_header(sk_http_req *req, const char *name) {
  int i = known_index(name);
  if (i < 0)
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
  scan_headers(req);
  return req->hdr_value[i];
}

typedef struct sk_http_query_list {
  const char **names;
  size_t cap, count;
} sk_http_query_list;

typedef struct header_counts {
  const char *const *names;
  unsigned *counts;
  size_t n;
} header_counts;

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
  (void)kind;
  (void)value;
  header_counts *hc = cls;
  for (size_t i = 0; key != NULL && i < hc->n; i++)
    if (strcasecmp(key, hc->names[i]) == 0)
      hc->counts[i]++;
  return MHD_YES;
}

void sk_http_header_counts(sk_http_req *req, const char *const *names, unsigned *counts, size_t n) {
  int idx[8];
  bool known = n <= 8;
  for (size_t i = 0; known && i < n; i++)
    known = (idx[i] = known_index(names[i])) >= 0;
  if (known) {
    scan_headers(req);
    for (size_t i = 0; i < n; i++)
      counts[i] = req->hdr_count[idx[i]];
    return;
  }
  header_counts hc = {names, counts, n};
  memset(counts, 0, n * sizeof *counts);
  MHD_get_connection_values(req->conn, MHD_HEADER_KIND, count_header, &hc);
}

static enum MHD_Result collect_query(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
  (void)kind;
  (void)value;
  sk_http_query_list *ql = cls;
  if (ql->count < ql->cap)
    ql->names[ql->count] = key != NULL ? key : "";
  ql->count++;
  return MHD_YES;
}

size_t sk_http_query_names(sk_http_req *req, const char **names, size_t cap) {
  sk_http_query_list ql = {names, cap, 0};
  MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, collect_query, &ql);
  return ql.count;
}

static enum MHD_Result queue(sk_http_req *req) {
  req->queued = true;
  if (req->resp == NULL)
    return MHD_NO;
  enum MHD_Result rc = MHD_queue_response(req->conn, (unsigned)req->status, req->resp);
  if (!req->resp_kept)
    MHD_destroy_response(req->resp); /* MHD holds its own reference */
  req->resp = NULL;
  return rc;
}

/* Counts the body buffer growing to hold `n` more bytes (sk_strbuf
 * doubles its capacity; the reservation follows the capacity, not the
 * length). SK_EBUSY when the budget has no room. */
static int body_grow(sk_http_req *req, size_t n) {
  sk_strbuf *b = &req->body;
  size_t need = b->len + n + 1;
  if (need <= b->cap && b->cap <= req->body_reserved)
    return 0;
  size_t cap = b->cap;
  if (need > cap) {
    cap = cap < 64 ? 64 : cap;
    while (cap < need)
      cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  }
  if (cap <= req->body_reserved)
    return 0;
  size_t extra = cap - req->body_reserved;
  if (sk_budget_reserve(req->http->cfg.budget, extra) != 0)
    return SK_EBUSY;
  req->body_reserved += extra;
  req->held += extra;
  return 0;
}

/* Frees a body that will not be used and gives its reservation back: a
 * client whose body is dropped while it keeps sending pins nothing. */
static void body_drop(sk_http_req *req) {
  sk_strbuf_free(&req->body);
  sk_budget_release(req->http->cfg.budget, req->body_reserved);
  req->held -= req->body_reserved;
  req->body_reserved = 0;
}

/* Right after begin(): a body announced by Content-Length is reserved in
 * full before a byte of it is read, so half-sent bodies can pin at most the
 * budget, and its buffer is allocated at its exact size (no doublings).
 * False when it does not fit. */
static bool body_admit(sk_http *h, sk_http_req *req) {
  const char *cl = sk_http_header(req, MHD_HTTP_HEADER_CONTENT_LENGTH);
  unsigned long long len = cl != NULL ? strtoull(cl, NULL, 10) : 0;
  if (len == 0 || len > h->cfg.max_body)
    return true; /* nothing to reserve, or a 413 on the way */
  if (sk_budget_reserve(h->cfg.budget, (size_t)len + 1) != 0)
    return false;
  req->body_reserved += (size_t)len + 1;
  req->held += (size_t)len + 1;
  char *data = malloc((size_t)len + 1);
  if (data != NULL) { /* else the body grows as usual, within the reservation */
    data[0] = '\0';
    req->body.data = data;
    req->body.cap = (size_t)len + 1;
  }
  return true;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* libmicrohttpd's %HH decoding, except that "%00" stays as it is: a decoded
 * NUL would end the C string every handler gets, so PUT /v1/skeletons/a%00z
 * stored id "a". Left encoded, the '%' fails the id syntax (400). */
static size_t unescape_keep_nul(void *cls, struct MHD_Connection *conn, char *s) {
  (void)cls;
  (void)conn;
  char *w = s;
  for (const char *r = s; *r != '\0';) {
    int hi, lo;
    if (r[0] == '%' && (hi = hex_digit(r[1])) >= 0 && (lo = hex_digit(r[2])) >= 0 && (hi | lo) != 0) {
      *w++ = (char)(hi << 4 | lo);
      r += 3;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
  return (size_t)(w - s);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
  sk_http *h = cls;
  sk_http_req *req = *con_cls;
  if (req == NULL) {
    req = calloc(1, sizeof *req);
    if (req == NULL)
      return MHD_NO; /* drops the connection: nothing better is possible */
    sk_list_init(&req->job);
    sk_list_init(&req->stream);
    req->http = h;
    req->conn = conn;
    req->url = url;
    req->method = method;
    req->version = version;
    req->method_id = sk_metrics_method(method);
    req->start_ns = uv_hrtime();
    *con_cls = req;
    h->active++;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    req->cstate = ci != NULL ? ci->socket_context : NULL;
    if (req->cstate != NULL) {
      req->cstate->headers_ns = req->start_ns;
      req->cstate->body_done = false;
    }
    h->h.begin(h->h.ctx, req);
    if (req->resp == NULL && h->cfg.budget != NULL && !body_admit(h, req)) {
      /* Answered now, like the 413 below: the body is never read. */
      sk_http__logf(h, 2, "%s %s: body over the memory budget", method, url);
      req->over_budget = true;
      req->handled = true;
      req->close_after = true;
      sk_strbuf_append(&req->body, "", 0);
      h->h.handle(h->h.ctx, req);
      return queue(req);
    }
    /* An early 413, or an answer begin() wants out before the body (an
     * unauthenticated client must not make us read one; a body whose
     * framing is in doubt must not be read at all), goes out now (MHD
     * allows queuing only now or once the body is complete); MHD then
     * reads nothing more and the connection closes. */
    if (req->resp != NULL && (req->status == 413 || req->close_after)) {
      req->handled = true;
      req->close_after = true;
      return queue(req);
    }
    if (req->resp != NULL)
      req->discard_body = true;
    return MHD_YES;
  }
  if (*upload_data_size != 0) {
    size_t n = *upload_data_size;
    *upload_data_size = 0;
    if (req->discard_body) {
      /* A body we will not use is read and dropped (MHD 0.9.75 cannot
       * answer in the middle of a body) but not forever. */
      req->discarded += n;
      return req->discarded > SK_HTTP_DISCARD_MAX ? MHD_NO : MHD_YES;
    }
    if (req->body.len + n > h->cfg.max_body) {
      /* Over the limit mid-stream (chunked): stop storing, answer 413 once
       * the body is over. */
      sk_http__logf(h, 3, "%s %s: body over %zu bytes", method, url, h->cfg.max_body);
      req->body_too_large = true;
      req->discard_body = true;
      req->close_after = true;
      body_drop(req);
      return MHD_YES;
    }
    if (h->cfg.budget != NULL && body_grow(req, n) != 0) {
      /* A chunked body past the budget: drop it, answer 503 at its end. */
      sk_http__logf(h, 2, "%s %s: body over the memory budget", method, url);
      req->over_budget = true;
      req->discard_body = true;
      req->close_after = true;
      body_drop(req);
      return MHD_YES;
    }
    if (sk_strbuf_append(&req->body, upload_data, n) != 0)
      return MHD_NO;
    return MHD_YES;
  }
  if (req->cstate != NULL)
    req->cstate->body_done = true;
  if (req->queued)
    return MHD_YES;
  if (!req->handled) {
    req->handled = true;
    if (req->resp == NULL) {
      if (req->body.data == NULL)
        sk_strbuf_append(&req->body, "", 0); /* data non-NULL and NUL-terminated */
      h->h.handle(h->h.ctx, req);
    }
  }
  if (req->resp != NULL)
    return queue(req);
  if (req->suspended)
    return MHD_YES;
  /* The handler answered nothing and deferred nothing: a bug above, but
   * the client still gets an answer. */
  sk_http__logf(h, 0, "%s %s: no answer", method, url);
  sk_http_respond(req, 500, "text/plain", (void *)"internal error\n", 15, false, NULL);
  return queue(req);
}

/* The bytes of a completed request as they came over the wire, when they
 * are known without asking the kernel: its header block (request line to
 * the empty line, libmicrohttpd's count) and a body of exactly its
 * Content-Length, read whole. 0 (unknown) for a chunked body, one not
 * read or dropped, or a request that did not end normally: the next
 * idle check must know whether bytes came after the answer
 * (sk_http_conn.c), and getsockopt(TCP_INFO) after every answer cost
 * 0.6-0.9 us here, a tenth of the libmicrohttpd ceiling's request. */
static uint64_t wire_bytes(sk_http_req *req, enum MHD_RequestTerminationCode toe) {
  if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK || req->discard_body || req->body_too_large || req->over_budget ||
      req->close_after || sk_http_header(req, MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL)
    return 0;
  const char *cl = sk_http_header(req, MHD_HTTP_HEADER_CONTENT_LENGTH);
  unsigned long long len = cl != NULL ? strtoull(cl, NULL, 10) : 0;
  if (len != req->body.len)
    return 0;
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
  if (ci == NULL || ci->header_size == 0)
    return 0;
  return (uint64_t)ci->header_size + len;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  (void)conn;
  sk_http *h = cls;
  sk_http_req *req = *con_cls;
  if (req == NULL)
    return;
  *con_cls = NULL;
  if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && req->queued == false)
    req->status = 0; /* the client left before an answer */
  if (req->cstate != NULL)
    sk_http__conn_next(req->cstate, wire_bytes(req, toe));
  if (h->h.complete != NULL)
    h->h.complete(h->h.ctx, req);
  if (h->cfg.log_level >= 3)
    sk_http__logf(h, 3, "%s %s -> %d in %.0f us", req->method, req->url, req->status,
          (double)(uv_hrtime() - req->start_ns) * 1e-3);
  if (req->resp != NULL && !req->resp_kept)
    MHD_destroy_response(req->resp);
  if (req->cleanup != NULL)
    req->cleanup(req->data);
  sk_strbuf_free(&req->body);
  sk_http__stream_unlink(req);
  sk_http__upgrade_request_done(req);
  sk_budget_release(h->cfg.budget, req->held);
  free(req);
  h->active--;
}

/* ---- thread-pool jobs ------------------------------------------------------ */

static void on_work(uv_work_t *w) {
  sk_http_req *req = w->data;
  /* Pool threads yield to the loop thread: with as many busy pool threads
   * as cores, an equal-priority loop thread waited tens of ms for a core
   * to answer /healthz or ping the watchdog. Per thread (Linux), idempotent,
   * ~1 us against jobs of 250 us and more; threads they start inherit it. */
  setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), SK_HTTP_POOL_NICE);
  req->work_cb(req->work_arg);
}

static void on_house(uv_timer_t *t);

static void on_after_work(uv_work_t *w, int status) {
  sk_http_req *req = w->data;
  sk_http *h = req->http;
  h->jobs--;
  sk_list_remove(&req->job);
  req->in_after = true;
  req->requeued = false;
  req->after_cb(req, req->work_arg, status == UV_ECANCELED ? SK_EBUSY : 0);
  req->in_after = false;
  if (req->requeued && req->resp == NULL)
    return; /* the after-callback handed a next step to the pool: still suspended */
  if (req->resp == NULL)
    sk_http_respond(req, 500, "text/plain", (void *)"internal error\n", 15, false, NULL);
  /* Resume here, on the loop thread, then run MHD: a resume from the worker
   * would not wake this loop (MHD 0.9.75 with external epoll). */
  req->suspended = false;
  MHD_resume_connection(req->conn);
  sk_http__run_mhd(h);
}

int sk_http_defer(sk_http_req *req, void (*work)(void *arg), void (*after)(sk_http_req *req, void *arg, int status),
                  void *arg) {
  sk_http *h = req->http;
  if (h->jobs >= h->cfg.max_jobs)
    return SK_EBUSY;
  req->work.data = req;
  req->work_cb = work;
  req->after_cb = after;
  req->work_arg = arg;
  req->deadline_ns = uv_hrtime() + (uint64_t)h->cfg.job_deadline_ms * 1000000u;
  int rc = uv_queue_work(h->loop, &req->work, on_work, on_after_work);
  if (rc != 0) {
    sk_http__logf(h, 0, "uv_queue_work: %s", uv_strerror(rc));
    return SK_EBUSY;
  }
  if (req->in_after)
    req->requeued = true; /* suspended already, since the first step */
  else
    MHD_suspend_connection(req->conn);
  req->suspended = true;
  h->jobs++;
  sk_list_insert_head(&h->job_list, &req->job);
  if (!uv_is_active((uv_handle_t *)&h->house))
    uv_timer_start(&h->house, on_house, 50, 50);
  return 0;
}

unsigned sk_http_jobs_in_flight(const sk_http *h) { return h->jobs; }

void sk_http_get_conn_stats(const sk_http *h, sk_http_conn_stats *dest) { *dest = h->stats; }

/* ---- lifecycle ------------------------------------------------------------- */

static void on_closed(uv_handle_t *handle) {
  sk_http *h = handle->data;
  if (--h->open_handles == 0 && h->done != NULL)
    h->done(h->done_arg);
}

static void finish_stop(sk_http *h) {
  h->stopped = true;
  uv_timer_stop(&h->house);
  /* Suspended connections must be resumed or MHD_stop_daemon() hangs on
   * them; jobs are all done here, so this only matters for robustness. */
  sk_list *q;
  sk_list_foreach(q, &h->job_list) {
    sk_http_req *r = sk_list_data(q, sk_http_req, job);
    if (r->suspended)
      MHD_resume_connection(r->conn);
  }
  sk_http__paced_resume_all(h);
  sk_http__upgrades_close_all(h);
  /* Stop watching the epoll fd before MHD closes it. */
  uv_poll_stop(&h->poll);
  MHD_stop_daemon(h->mhd);
  h->mhd = NULL;
  h->open_handles = 5;
  uv_close((uv_handle_t *)&h->poll, on_closed);
  uv_close((uv_handle_t *)&h->timer, on_closed);
  uv_close((uv_handle_t *)&h->again, on_closed);
  uv_close((uv_handle_t *)&h->house, on_closed);
  uv_close((uv_handle_t *)&h->sweep, on_closed);
}

/* Housekeeping, every 50 ms while there is something to watch:
 *  - jobs still queued past their deadline are cancelled (answered 503);
 *    a job already running cannot be stopped and is bounded by --max-batch
 *    x --max-bones anyway;
 *  - while stopping: once no request is in flight (or the grace period is
 *    over) and no job runs, stop libmicrohttpd. */
static void on_house(uv_timer_t *t) {
  sk_http *h = t->data;
  uint64_t now = uv_hrtime();
  sk_list *q;
  sk_list_foreach(q, &h->job_list) {
    sk_http_req *r = sk_list_data(q, sk_http_req, job);
    if (now > r->deadline_ns)
      uv_cancel((uv_req_t *)&r->work); /* UV_EBUSY when running: fine */
  }
  if (h->stopping && !h->stopped) {
    if (h->jobs == 0 && ((h->active == 0 && h->upgrades_open == 0) || now > h->stop_deadline_ns))
      finish_stop(h);
    return;
  }
  if (h->jobs == 0)
    uv_timer_stop(&h->house);
}

void sk_http_stop(sk_http *h, void (*done)(void *arg), void *arg) {
  if (h->stopping)
    return;
  h->stopping = true;
  h->done = done;
  h->done_arg = arg;
  h->stop_deadline_ns = uv_hrtime() + (uint64_t)h->cfg.shutdown_grace_ms * 1000000u;
  MHD_socket fd = MHD_quiesce_daemon(h->mhd); /* stop accepting; connections carry on */
  if (fd != MHD_INVALID_SOCKET)
    close(fd);
  sk_http__logf(h, 2, "stopping: %u requests and %u jobs in flight", h->active, h->jobs);
  sk_http__upgrades_stop(h); /* sessions say goodbye (WebSocket 1001) and close */
  sk_http__paced_resume_all(h); /* event streams end with a problem naming where to resume */
  uv_timer_start(&h->house, on_house, 0, 10);
}

bool sk_http_stopping(const sk_http *h) { return h->stopping; }

unsigned sk_http_port(const sk_http *h) { return h->port; }

void sk_http_destroy(sk_http *h) { free(h); }

static void mhd_log(void *cls, const char *fmt, va_list ap) {
  sk_http *h = cls;
  if (h->cfg.log_level < 3)
    return;
  fprintf(stderr, "skinnerd debug: libmicrohttpd: ");
  vfprintf(stderr, fmt, ap);
}

/* GnuTLS asks for the server certificate on each handshake (libmicrohttpd
 * installs this with gnutls_certificate_set_retrieve_function2, which has
 * no user pointer): the session's pointer is the MHD connection, whose
 * socket context leads back to this server and its current certificate. So
 * a reload takes effect at the next handshake and no connection drops. */
static int tls_cert(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                    const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
                    unsigned int *pcert_length, gnutls_privkey_t *privkey) {
  (void)req_ca_rdn;
  (void)nreqs;
  (void)pk_algos;
  (void)pk_algos_length;
  struct MHD_Connection *conn = gnutls_session_get_ptr(session);
  const union MHD_ConnectionInfo *ci =
      conn != NULL ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT) : NULL;
  conn_state *c = ci != NULL ? ci->socket_context : NULL;
  if (c == NULL || c->http->cfg.tls == NULL)
    return -1; /* the handshake fails; nothing else is possible without a certificate */
  sk_tls_current(c->http->cfg.tls, pcert, pcert_length, privkey);
  return 0;
}

/* Zeroed settings take their defaults. */
static void fill_defaults(sk_http_config *c) {
  if (c->host == NULL)
    c->host = "127.0.0.1";
  if (c->max_body == 0)
    c->max_body = SK_HTTP_MAX_BODY_DEFAULT;
  if (c->conn_timeout_s == 0)
    c->conn_timeout_s = 30;
  /* libmicrohttpd 0.9.75 zeroes the pool for every request (under callgrind
   * the largest user-space cost of a small request), so a smaller pool is a
   * cheaper request: 16 KiB instead of MHD's default 32 KiB halves that, and
   * still holds headers of about 15 KB. Not smaller: the pool's read half
   * then splits a batch body of 6.6 KB over several reads, which cost more
   * CPU under load than the zeroing saves (docs/performance.md). */
  if (c->conn_memory == 0)
    c->conn_memory = 16 * 1024;
  if (c->conn_limit == 0)
    c->conn_limit = 1024;
  if (c->max_jobs == 0)
    c->max_jobs = 64;
  if (c->job_deadline_ms == 0)
    c->job_deadline_ms = 10000;
  if (c->shutdown_grace_ms == 0)
    c->shutdown_grace_ms = 10000;
  if (c->header_timeout_ms == 0)
    c->header_timeout_ms = 10000;
  if (c->body_timeout_ms == 0)
    c->body_timeout_ms = 60000;
  if (c->idle_timeout_ms == 0)
    c->idle_timeout_ms = 5000;

}

/* The listening address from host and port into `ss`, and the daemon
 * flags it needs. SK_EINVAL for a bad address. */
static int listen_address(const sk_http_config *c, struct sockaddr_storage *ss, unsigned *flags_out) {
  memset(ss, 0, sizeof *ss);
  unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_ALLOW_UPGRADE | MHD_USE_ERROR_LOG;
  if (strchr(c->host, ':') != NULL) {
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)c->port);
    if (inet_pton(AF_INET6, c->host, &a6->sin6_addr) != 1)
      return SK_EINVAL;
    flags |= MHD_USE_IPv6;
  } else {
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)c->port);
    if (inet_pton(AF_INET, c->host, &a4->sin_addr) != 1)
      return SK_EINVAL;
  }
  if (c->port > 65535)
    return SK_EINVAL;
  *flags_out = flags;
  return 0;
}

size_t sk_http__options(const sk_http_config *c, struct sockaddr_storage *ss, struct MHD_OptionItem *dest,
                        size_t cap) {
  size_t n = 0;
#define SK_OPT(o, v, p)                                                                                              \
  do {                                                                                                               \
    if (n + 1 < cap)                                                                                                 \
      dest[n++] = (struct MHD_OptionItem){(o), (intptr_t)(v), (p)};                                                  \
  } while (0)
  /* A passed socket (an int) or our address (a pointer). The socket's
   * family must match MHD_USE_IPv6, i.e. the host given. */
  if (c->listen_fd > 0)
    SK_OPT(MHD_OPTION_LISTEN_SOCKET, c->listen_fd, NULL);
  else
    SK_OPT(MHD_OPTION_SOCK_ADDR, 0, ss);
  if (c->per_ip_limit > 0) /* MHD then keeps a tree of addresses, checked at accept */
    SK_OPT(MHD_OPTION_PER_IP_CONNECTION_LIMIT, c->per_ip_limit, NULL);
  SK_OPT(MHD_OPTION_CONNECTION_TIMEOUT, c->conn_timeout_s, NULL);
  SK_OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, c->conn_memory, NULL);
  SK_OPT(MHD_OPTION_CONNECTION_LIMIT, c->conn_limit, NULL);
  if (c->tls != NULL) {
    /* POSIX lets a function pointer travel as void *, which is how
     * MHD_OPTION_ARRAY carries this option. */
    SK_OPT(MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)tls_cert);
    /* libmicrohttpd 0.9.75 hands this string to gnutls_priority_init as
     * is, in place of its "@SYSTEM" default (it has no _APPEND option). */
    SK_OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)(c->tls_priorities != NULL ? c->tls_priorities
                                                                               : SK_TLS_DEFAULT_PRIORITIES));
  }
#undef SK_OPT
  dest[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
  return n;
}

/* libmicrohttpd on that address (or the passed socket), external epoll.
 * The settings from the configuration go through sk_http__options, one
 * array slot each (a shared slot once lost --max-per-ip under TLS); the
 * callbacks, which are not configuration, follow as arguments. */
static struct MHD_Daemon *start_mhd(sk_http *h, struct sockaddr_storage *ss, unsigned flags) {
  struct MHD_OptionItem opts[SK_HTTP_MAX_OPTIONS];
  sk_http__options(&h->cfg, ss, opts, SK_HTTP_MAX_OPTIONS);
  if (h->cfg.tls != NULL)
    flags |= MHD_USE_TLS;
  /* Port 0 with a passed socket: MHD then reads the bound port from the
   * socket (with --listen's port it reported that one, not the real one). */
  return MHD_start_daemon(flags, (uint16_t)(h->cfg.listen_fd > 0 ? 0 : h->cfg.port), NULL, NULL, on_request, h,
                          MHD_OPTION_ARRAY, opts, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                          MHD_OPTION_NOTIFY_CONNECTION, sk_http__on_connection, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
                          MHD_OPTION_UNESCAPE_CALLBACK, unescape_keep_nul, h, MHD_OPTION_END);
}

/* The bound port, and the daemon's epoll descriptor watched by the loop;
 * the sweep timer started. SK_EIO (nothing registered) on failure. */
static int attach_loop(sk_http *h, uv_loop_t *loop) {
  const union MHD_DaemonInfo *ei = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
  const union MHD_DaemonInfo *pi = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
  if (ei == NULL || pi == NULL)
    return SK_EIO;
  h->port = pi->port;
  /* Poll first: it is the one init that can fail, and nothing is
   * registered with the loop yet when it does (uv_timer_init cannot fail). */
  int rc = uv_poll_init(loop, &h->poll, ei->epoll_fd);
  if (rc != 0) {
    sk_http__logf(h, 0, "libuv: %s", uv_strerror(rc));
    return SK_EIO;
  }
  uv_timer_init(loop, &h->timer);
  uv_idle_init(loop, &h->again);
  uv_timer_init(loop, &h->house);
  uv_timer_init(loop, &h->sweep);
  h->again.data = h->poll.data = h->timer.data = h->house.data = h->sweep.data = h;
  uv_poll_start(&h->poll, UV_READABLE, on_poll);
  uv_timer_start(&h->sweep, sk_http__on_sweep, 1000, 1000);
  return 0;
}

int sk_http_start(uv_loop_t *loop, const sk_http_config *cfg, const sk_http_handler *hd, sk_http **out) {
  *out = NULL;
  sk_http *h = calloc(1, sizeof *h);
  if (h == NULL)
    return SK_ENOMEM;
  sk_list_init(&h->job_list);
  sk_list_init(&h->conns);
  sk_list_init(&h->streams);
  sk_list_init(&h->upgrades);
  sk_list_init(&h->paced);
  h->loop = loop;
  h->cfg = *cfg;
  h->h = *hd;
  fill_defaults(&h->cfg);
  struct sockaddr_storage ss;
  unsigned flags;
  if (listen_address(&h->cfg, &ss, &flags) != 0) {
    free(h);
    return SK_EINVAL;
  }
  if ((h->mhd = start_mhd(h, &ss, flags)) == NULL) {
    sk_http__logf(h, 0, "cannot listen on %s:%u (address in use or not available)", h->cfg.host, h->cfg.port);
    free(h);
    return SK_EIO;
  }
  if (attach_loop(h, loop) != 0) {
    MHD_stop_daemon(h->mhd);
    free(h);
    return SK_EIO;
  }
  *out = h;
  sk_http__run_mhd(h);
  return 0;
}
