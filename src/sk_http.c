#include "sk_http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
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
#include "sk_metrics.h"

/* Bytes of an unwanted body read before the connection is dropped instead. */
#define SK_HTTP_DISCARD_MAX (64u << 20)

struct sk_http {
  uv_loop_t *loop;
  sk_http_config cfg;
  sk_http_handler h;
  struct MHD_Daemon *mhd;
  unsigned port;
  uv_poll_t poll;       /* MHD's epoll fd */
  uv_timer_t timer;     /* MHD_get_timeout() */
  uv_timer_t house;     /* job deadlines while jobs run; shutdown progress while stopping */
  int open_handles;
  bool stopping, stopped;
  uint64_t stop_deadline_ns;
  void (*done)(void *arg);
  void *done_arg;
  unsigned jobs, active; /* jobs on the pool; requests begun and not completed */
  sk_http_req *jobs_head;
  uv_timer_t sweep;      /* once a second: connections past their header or body deadline */
  bool closed;           /* a connection closed during the current MHD_run */
  struct conn_state *conns; /* every open connection */
};

/* Per connection (MHD's socket context): when the request being read
 * began, so a client that trickles bytes cannot hold a slot for ever. */
typedef struct conn_state {
  struct conn_state *prev, *next;
  int fd;
  uint64_t since_ns;   /* connection opened, or the previous answer went out */
  uint64_t headers_ns; /* headers of the current request complete; 0 while reading them */
  bool body_done;      /* the whole body is in (handled, queued or on the pool) */
  bool cut;            /* shut down by the sweep */
} conn_state;

static void logf_(const sk_http *h, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void logf_(const sk_http *h, int level, const char *fmt, ...) {
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

static void run_mhd(sk_http *h);

static void on_timer(uv_timer_t *t) { run_mhd(t->data); }

static void on_poll(uv_poll_t *p, int status, int events) {
  (void)events;
  sk_http *h = p->data;
  if (status < 0)
    logf_(h, 1, "poll: %s", uv_strerror(status));
  run_mhd(h);
}

/* One MHD pass, then re-arm the timer: MHD reports 0 when it has buffered
 * work (pipelined requests, resumed connections) that no fd event would
 * announce, so the timer is what keeps those moving. */
static void run_mhd(sk_http *h) {
  if (h->mhd == NULL)
    return;
  h->closed = false;
  MHD_run(h->mhd);
  MHD_UNSIGNED_LONG_LONG ms;
  if (h->closed) /* see on_connection: one more pass to listen again */
    uv_timer_start(&h->timer, on_timer, 0, 0);
  else if (MHD_get_timeout(h->mhd, &ms) == MHD_YES)
    uv_timer_start(&h->timer, on_timer, ms, 0);
  else
    uv_timer_stop(&h->timer);
}

const char *sk_http_query(sk_http_req *req, const char *name) {
  return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *sk_http_header(sk_http_req *req, const char *name) {
  return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

int sk_http_respond(sk_http_req *req, int status, const char *content_type, void *body, size_t len, bool own,
                    const char *const *headers) {
  if (req->resp != NULL) {
    if (own)
      free(body);
    return SK_EINVAL;
  }
  struct MHD_Response *r =
      MHD_create_response_from_buffer(len, body, own ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
  if (r == NULL) {
    if (own)
      free(body);
    goto oom;
  }
  if (content_type != NULL && MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) != MHD_YES)
    goto oom_r;
  for (const char *const *p = headers; p != NULL && p[0] != NULL; p += 2)
    if (MHD_add_response_header(r, p[0], p[1]) != MHD_YES)
      goto oom_r;
  if ((req->close_after || req->http->stopping) &&
      MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close") != MHD_YES)
    goto oom_r;
  req->resp = r;
  req->status = status;
  return 0;
oom_r:
  MHD_destroy_response(r);
oom:
  r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  if (r != NULL)
    MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
  req->resp = r;
  req->status = 503;
  return SK_ENOMEM;
}

static enum MHD_Result queue(sk_http_req *req) {
  req->queued = true;
  if (req->resp == NULL)
    return MHD_NO;
  enum MHD_Result rc = MHD_queue_response(req->conn, (unsigned)req->status, req->resp);
  MHD_destroy_response(req->resp); /* MHD holds its own reference */
  req->resp = NULL;
  return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
  (void)version;
  sk_http *h = cls;
  sk_http_req *req = *con_cls;
  if (req == NULL) {
    req = calloc(1, sizeof *req);
    if (req == NULL)
      return MHD_NO; /* drops the connection: nothing better is possible */
    req->http = h;
    req->conn = conn;
    req->url = url;
    req->method = method;
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
    /* An early 413 goes out before the body is read (MHD allows queuing
     * only now or once the body is complete); the connection then closes. */
    if (req->resp != NULL && req->status == 413) {
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
      logf_(h, 3, "%s %s: body over %zu bytes", method, url, h->cfg.max_body);
      req->body_too_large = true;
      req->discard_body = true;
      req->close_after = true;
      sk_strbuf_free(&req->body);
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
  logf_(h, 0, "%s %s: no answer", method, url);
  sk_http_respond(req, 500, "text/plain", (void *)"internal error\n", 15, false, NULL);
  return queue(req);
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
  if (req->cstate != NULL) { /* the next request's clock starts now */
    req->cstate->since_ns = uv_hrtime();
    req->cstate->headers_ns = 0;
    req->cstate->body_done = false;
  }
  if (h->h.complete != NULL)
    h->h.complete(h->h.ctx, req);
  if (h->cfg.log_level >= 3)
    logf_(h, 3, "%s %s -> %d in %.0f us", req->method, req->url, req->status,
          (double)(uv_hrtime() - req->start_ns) * 1e-3);
  if (req->resp != NULL)
    MHD_destroy_response(req->resp);
  if (req->cleanup != NULL)
    req->cleanup(req->data);
  sk_strbuf_free(&req->body);
  free(req);
  h->active--;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
  sk_http *h = cls;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    conn_state *c = calloc(1, sizeof *c);
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (c == NULL || ci == NULL) {
      free(c); /* no deadline for this one: the idle timeout still holds */
      *socket_context = NULL;
      return;
    }
    c->fd = ci->connect_fd;
    c->since_ns = uv_hrtime();
    c->next = h->conns;
    if (h->conns != NULL)
      h->conns->prev = c;
    h->conns = c;
    *socket_context = c;
  } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
    /* At --max-connections libmicrohttpd 0.9.75 has taken its listen socket
     * out of epoll; it puts it back in a later MHD_run, which nothing might
     * call if this was the last busy connection: run_mhd schedules one. */
    h->closed = true;
    conn_state *c = *socket_context;
    if (c == NULL)
      return;
    if (c->prev != NULL)
      c->prev->next = c->next;
    else
      h->conns = c->next;
    if (c->next != NULL)
      c->next->prev = c->prev;
    free(c);
    *socket_context = NULL;
  }
}

/* Cuts connections past their deadline: headers not complete within
 * header_timeout_ms of the connection opening (or of the previous answer on
 * it), or a body not complete within body_timeout_ms of its headers.
 * shutdown() makes libmicrohttpd see the end of the stream and close the
 * connection through its usual path. Requests whose body is in (being
 * handled, answered, or on the thread pool) are never cut. */
static void on_sweep(uv_timer_t *t) {
  sk_http *h = t->data;
  uint64_t now = uv_hrtime();
  unsigned cut = 0;
  for (conn_state *c = h->conns; c != NULL; c = c->next) {
    if (c->cut || c->body_done)
      continue;
    bool late = c->headers_ns == 0 ? now - c->since_ns > (uint64_t)h->cfg.header_timeout_ms * 1000000u
                                   : now - c->headers_ns > (uint64_t)h->cfg.body_timeout_ms * 1000000u;
    if (late) {
      shutdown(c->fd, SHUT_RDWR);
      c->cut = true;
      cut++;
    }
  }
  if (cut > 0)
    logf_(h, 2, "cut %u connections past their header or body deadline", cut);
  /* Every tick, not only after a cut: a second guard (after the one in
   * on_connection) against libmicrohttpd leaving its listen socket out of
   * epoll at --max-connections; without either, clients waiting in the
   * backlog were never accepted once the last busy connection closed. */
  run_mhd(h);
}

/* ---- thread-pool jobs ------------------------------------------------------ */

static void job_unlink(sk_http *h, sk_http_req *req) {
  if (req->job_prev)
    req->job_prev->job_next = req->job_next;
  else
    h->jobs_head = req->job_next;
  if (req->job_next)
    req->job_next->job_prev = req->job_prev;
  req->job_prev = req->job_next = NULL;
}

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
  job_unlink(h, req);
  req->after_cb(req, req->work_arg, status == UV_ECANCELED ? SK_EBUSY : 0);
  if (req->resp == NULL)
    sk_http_respond(req, 500, "text/plain", (void *)"internal error\n", 15, false, NULL);
  /* Resume here, on the loop thread, then run MHD: a resume from the worker
   * would not wake this loop (MHD 0.9.75 with external epoll). */
  req->suspended = false;
  MHD_resume_connection(req->conn);
  run_mhd(h);
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
    logf_(h, 0, "uv_queue_work: %s", uv_strerror(rc));
    return SK_EBUSY;
  }
  MHD_suspend_connection(req->conn);
  req->suspended = true;
  h->jobs++;
  req->job_next = h->jobs_head;
  if (h->jobs_head)
    h->jobs_head->job_prev = req;
  h->jobs_head = req;
  if (!uv_is_active((uv_handle_t *)&h->house))
    uv_timer_start(&h->house, on_house, 50, 50);
  return 0;
}

unsigned sk_http_jobs_in_flight(const sk_http *h) { return h->jobs; }

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
  for (sk_http_req *r = h->jobs_head; r != NULL; r = r->job_next)
    if (r->suspended)
      MHD_resume_connection(r->conn);
  /* Stop watching the epoll fd before MHD closes it. */
  uv_poll_stop(&h->poll);
  MHD_stop_daemon(h->mhd);
  h->mhd = NULL;
  h->open_handles = 4;
  uv_close((uv_handle_t *)&h->poll, on_closed);
  uv_close((uv_handle_t *)&h->timer, on_closed);
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
  for (sk_http_req *r = h->jobs_head; r != NULL; r = r->job_next)
    if (now > r->deadline_ns)
      uv_cancel((uv_req_t *)&r->work); /* UV_EBUSY when running: fine */
  if (h->stopping && !h->stopped) {
    if (h->jobs == 0 && (h->active == 0 || now > h->stop_deadline_ns))
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
  logf_(h, 2, "stopping: %u requests and %u jobs in flight", h->active, h->jobs);
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

int sk_http_start(uv_loop_t *loop, const sk_http_config *cfg, const sk_http_handler *hd, sk_http **out) {
  *out = NULL;
  sk_http *h = calloc(1, sizeof *h);
  if (h == NULL)
    return SK_ENOMEM;
  h->loop = loop;
  h->cfg = *cfg;
  h->h = *hd;
  if (h->cfg.host == NULL)
    h->cfg.host = "127.0.0.1";
  if (h->cfg.max_body == 0)
    h->cfg.max_body = 1u << 20;
  if (h->cfg.conn_timeout_s == 0)
    h->cfg.conn_timeout_s = 30;
  /* libmicrohttpd 0.9.75 zeroes the pool for every request (under callgrind
   * the largest user-space cost of a small request), so a smaller pool is a
   * cheaper request: 16 KiB instead of MHD's default 32 KiB halves that, and
   * still holds headers of about 15 KB. */
  if (h->cfg.conn_memory == 0)
    h->cfg.conn_memory = 16 * 1024;
  if (h->cfg.conn_limit == 0)
    h->cfg.conn_limit = 1024;
  if (h->cfg.max_jobs == 0)
    h->cfg.max_jobs = 64;
  if (h->cfg.job_deadline_ms == 0)
    h->cfg.job_deadline_ms = 10000;
  if (h->cfg.shutdown_grace_ms == 0)
    h->cfg.shutdown_grace_ms = 10000;
  if (h->cfg.header_timeout_ms == 0)
    h->cfg.header_timeout_ms = 10000;
  if (h->cfg.body_timeout_ms == 0)
    h->cfg.body_timeout_ms = 60000;

  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
  if (strchr(h->cfg.host, ':') != NULL) {
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)h->cfg.port);
    if (inet_pton(AF_INET6, h->cfg.host, &a6->sin6_addr) != 1)
      goto bad_addr;
    flags |= MHD_USE_IPv6;
  } else {
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)h->cfg.port);
    if (inet_pton(AF_INET, h->cfg.host, &a4->sin_addr) != 1)
      goto bad_addr;
  }
  if (h->cfg.port > 65535)
    goto bad_addr;
  /* A passed socket (MHD_OPTION_LISTEN_SOCKET, an int) or our address
   * (MHD_OPTION_SOCK_ADDR, a pointer): an option array carries either
   * without a second copy of the call. The socket's family must match
   * MHD_USE_IPv6, i.e. the host given. */
  struct MHD_OptionItem where[2] = {
      {MHD_OPTION_SOCK_ADDR, 0, &ss},
      {MHD_OPTION_END, 0, NULL},
  };
  if (h->cfg.listen_fd > 0) {
    where[0].option = MHD_OPTION_LISTEN_SOCKET;
    where[0].value = h->cfg.listen_fd;
    where[0].ptr_value = NULL;
  }
  h->mhd = MHD_start_daemon(flags, (uint16_t)h->cfg.port, NULL, NULL, on_request, h, MHD_OPTION_ARRAY, where,
                            MHD_OPTION_CONNECTION_TIMEOUT, h->cfg.conn_timeout_s,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, h->cfg.conn_memory, MHD_OPTION_CONNECTION_LIMIT,
                            h->cfg.conn_limit, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                            MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h, MHD_OPTION_END);
  if (h->mhd == NULL) {
    logf_(h, 0, "cannot listen on %s:%u (address in use or not available)", h->cfg.host, h->cfg.port);
    free(h);
    return SK_EIO;
  }
  const union MHD_DaemonInfo *ei = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
  const union MHD_DaemonInfo *pi = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
  if (ei == NULL || pi == NULL) {
    MHD_stop_daemon(h->mhd);
    free(h);
    return SK_EIO;
  }
  h->port = pi->port;
  /* Poll first: it is the one init that can fail, and nothing is
   * registered with the loop yet when it does (uv_timer_init cannot fail). */
  int rc = uv_poll_init(loop, &h->poll, ei->epoll_fd);
  if (rc != 0) {
    logf_(h, 0, "libuv: %s", uv_strerror(rc));
    MHD_stop_daemon(h->mhd);
    free(h);
    return SK_EIO;
  }
  uv_timer_init(loop, &h->timer);
  uv_timer_init(loop, &h->house);
  uv_timer_init(loop, &h->sweep);
  h->poll.data = h->timer.data = h->house.data = h->sweep.data = h;
  uv_poll_start(&h->poll, UV_READABLE, on_poll);
  uv_timer_start(&h->sweep, on_sweep, 1000, 1000);
  *out = h;
  run_mhd(h);
  return 0;
bad_addr:
  free(h);
  return SK_EINVAL;
}
