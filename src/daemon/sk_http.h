/* sk_http: libmicrohttpd driven by a libuv loop.
 *
 * libmicrohttpd runs with no thread of its own (MHD_USE_EPOLL): its epoll fd
 * is watched by a uv_poll_t, MHD_run() runs when it is readable, and a
 * uv_timer_t follows MHD_get_timeout(). Everything here runs on the loop
 * thread except the `work` callbacks handed to sk_http_defer().
 *
 * The request protocol for the layer above (sk_routes):
 *   begin(req)   headers are in; pick the route, maybe answer early (405,
 *                415, 413 from Content-Length...). The body is read into
 *                req->body unless an answer is already set.
 *   handle(req)  the whole body is in; answer with sk_http_respond(), or
 *                hand work to the thread pool with sk_http_defer().
 *   complete(req) the answer went out (or the client left); for metrics.
 * The answer is queued on the final handler call (queuing on the first call
 * costs ~4x throughput with libmicrohttpd 0.9.75, see the figures).
 *
 * libmicrohttpd 0.9.75 traps handled here: resuming from a worker thread
 * does not wake the loop, so deferred connections are resumed in the
 * after-work callback on the loop thread and MHD is run again; suspended
 * connections never time out, so each job has a deadline and jobs in flight
 * are capped; the default connection timeout is "never", so one is set, with
 * a per-connection memory limit; on shutdown, every suspended connection is
 * resumed before MHD_stop_daemon().
 *
 * Fairness (docs/connections.md): at conn_limit MHD stops accepting and
 * newcomers wait in the listen backlog, so idle connections (no request
 * bytes since they opened or since their last answer, by TCP_INFO) are
 * closed oldest first to make room; idle ones are also closed after
 * idle_timeout_ms (under TLS, where the handshake's bytes hide requests
 * from TCP_INFO, idle means no complete headers and nothing received for
 * 1 s); per_ip_limit caps one address (MHD closes the excess right after
 * accept). */
#ifndef SK_HTTP_H
#define SK_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "sk_budget.h"
#include "sk_buf.h"
#include "sk_list.h"

typedef struct sk_http sk_http;
typedef struct sk_http_req sk_http_req;

typedef struct sk_http_handler {
  void *ctx;
  void (*begin)(void *ctx, sk_http_req *req);
  void (*handle)(void *ctx, sk_http_req *req);
  void (*complete)(void *ctx, sk_http_req *req); /* may be NULL */
} sk_http_handler;

/* Zeroed fields take the defaults in brackets. */
/* The body limit when none is set: skinnerd's --max-body default too, so
 * the library and the daemon agree. */
#define SK_HTTP_MAX_BODY_DEFAULT ((size_t)4 << 20)

typedef struct sk_http_config {
  const char *host;            /* numeric IPv4 or IPv6 address ["127.0.0.1"] */
  unsigned port;               /* 0: any free port */
  int listen_fd;               /* > 0: an already bound, listening socket to serve
                                  (systemd socket activation); host/port unused */
  size_t max_body;             /* bytes [SK_HTTP_MAX_BODY_DEFAULT] */
  unsigned conn_timeout_s;     /* idle connection timeout [30] */
  size_t conn_memory;          /* per-connection buffer for headers and body chunks [16 KiB] */
  unsigned conn_limit;         /* simultaneous connections [1024] */
  unsigned max_jobs;           /* thread-pool jobs in flight [64] */
  unsigned job_deadline_ms;    /* a job still queued after this is answered 503 [10000] */
  unsigned shutdown_grace_ms;  /* how long shutdown waits for requests in flight [10000] */
  unsigned header_timeout_ms;  /* a request's headers must be complete this long after
                                  the connection opened or its previous answer went out
                                  (slowloris: each byte restarts the idle timeout) [10000] */
  unsigned body_timeout_ms;    /* and its body this long after the headers [60000] */
  int log_level;               /* -1 silent, 0 error, 1 warn, 2 info, 3 debug [0] */
  unsigned per_ip_limit;       /* simultaneous connections from one address; libmicrohttpd
                                  closes the ones over it right after accept [0: no cap] */
  unsigned idle_timeout_ms;    /* a connection that sent no byte since it opened or since
                                  its previous answer is closed after this [5000] */
  sk_budget *budget;           /* borrowed, or NULL: request bodies (by Content-Length, or
                                  per chunk) and answers are counted in it [NULL] */
  struct sk_tls *tls;          /* HTTPS with this certificate (borrowed, outlives the
                                  server; swapped by sk_tls_reload); NULL: plain HTTP */
  const char *tls_priorities;  /* GnuTLS priority string with `tls`, borrowed; checked
                                  beforehand with sk_tls_check_priorities
                                  [NULL: SK_TLS_DEFAULT_PRIORITIES] */
  size_t stream_per_addr;      /* the share of the budget kept for other clients: the
                                  streamed answers of one client address may hold more only
                                  while that much stays free (sk_http_reserve_stream), so a
                                  few slow readers cannot pin the whole budget; SIZE_MAX: no
                                  cap [0: a quarter of the budget's limit] */
} sk_http_config;

/* Connection counters of one listener (loop thread). */
typedef struct sk_http_conn_stats {
  unsigned open;          /* connections open now */
  uint64_t evicted;       /* idle ones closed to make room at the connection limit */
  uint64_t idle_closed;   /* closed by the idle timeout */
  uint64_t deadline_cut;  /* closed past their header or body deadline */
  uint64_t stall_cut;     /* paced answers cut: their client took no byte for their stall time */
} sk_http_conn_stats;

/* Headers sk_http_header() answers from one pass over the request's
 * headers (the names the routes ask for; sk_http.c, k_known). */
#define SK_HTTP_KNOWN_HEADERS 11

struct sk_http_req {
  /* Read-only for handlers. */
  sk_http *http;
  const char *method, *url; /* borrowed from libmicrohttpd, valid for the request */
  int method_id;            /* SK_METHOD_* (sk_metrics.h) */
  sk_strbuf body;           /* the request body, NUL-terminated once complete */
  uint64_t start_ns;
  int status;               /* the answer's status once set */
  bool body_too_large;      /* the body went over max_body: answer 413 */
  bool over_budget;         /* the body did not fit in the memory budget: answer 503
                               (handle() then runs at once, with no body, and the
                               answer goes out before the body is read) */
  const char *version;      /* "HTTP/1.1" or "HTTP/1.0", borrowed like url */
  /* Free for the handler layer. */
  int route;                /* SK_ROUTE_* for metrics */
  void *data;               /* handler state; released by `cleanup` */
  void (*cleanup)(void *data);
  bool discard_body;        /* begin() may set it: read and drop the body */
  bool close_after;         /* begin() may set it with an answer: the answer goes out
                               before the body is read, then the connection closes */
  /* May be set from begin() on: called on the loop thread as each answer is
   * set (errors and answers sk_http makes itself too) with its status;
   * returns headers to add (NULL or NULL-terminated name, value pairs,
   * valid until it returns): CORS and ETag headers every answer needs. */
  const char *const *(*decorate)(sk_http_req *req, int status);
  uint64_t mark_ns[2];      /* sk_http_mark: when the body was parsed, the answer built (0: not marked) */
  /* Private below. */
  struct MHD_Connection *conn;
  struct MHD_Response *resp;
  bool handled, queued, suspended;
  bool resp_kept;          /* resp is the connection's kept answer (not ours to destroy) */
  bool hdr_scanned;        /* hdr_value/hdr_count hold the known headers (sk_http.c) */
  const char *hdr_value[SK_HTTP_KNOWN_HEADERS];
  unsigned hdr_count[SK_HTTP_KNOWN_HEADERS];
  bool in_after, requeued; /* inside a job's after-callback; it deferred again */
  size_t discarded;
  uv_work_t work;
  void (*work_cb)(void *arg);
  void (*after_cb)(sk_http_req *req, void *arg, int status);
  void *work_arg;
  uint64_t deadline_ns;
  sk_list job;              /* in the listener's jobs on the pool */
  struct conn_state *cstate; /* the connection's deadline state, or NULL */
  size_t held;              /* bytes this request holds in the budget (body, answer) */
  size_t body_reserved;     /* of which for the body's buffer */
  size_t answer_reserved;   /* of which reserved ahead for the answer (sk_http_reserve) */
  size_t stream_held;       /* what this request counts against its address's stream cap */
  unsigned char addr[17];   /* the client's address family and bytes, once streaming */
  sk_list stream;           /* in the listener's requests with stream_held */
  struct sk_http_upgrade *upgrade; /* a 101 asked for and not yet started, or NULL */
};

/* Starts listening on `loop`. *out is new; sk_http_destroy() after the loop
 * has run the close callbacks (sk_http_stop's `done`). Errors: SK_EINVAL for
 * a bad address, SK_EIO when libmicrohttpd cannot start (e.g. port in use). */
int sk_http_start(uv_loop_t *loop, const sk_http_config *cfg, const sk_http_handler *h, sk_http **out);

/* Bound port (useful after port 0). */
unsigned sk_http_port(const sk_http *h);

/* True from sk_http_stop() on. */
bool sk_http_stopping(const sk_http *h);

/* Stops accepting, lets requests in flight finish (at most the grace
 * period), resumes every suspended connection, stops libmicrohttpd, closes
 * the libuv handles, then calls `done(arg)` on the loop thread. Idempotent. */
void sk_http_stop(sk_http *h, void (*done)(void *arg), void *arg);
/* Frees a stopped sk_http. NULL is fine. */
void sk_http_destroy(sk_http *h);

/* The names of the request's query arguments (decoded, in order, repeats
 * included) into names[0..cap), borrowed for the request's life; returns
 * how many there are (more than cap when they did not all fit). */
size_t sk_http_query_names(sk_http_req *req, const char **names, size_t cap);

/* Value of query argument `name` (decoded), or NULL. */
const char *sk_http_query(sk_http_req *req, const char *name);

/* Value of request header `name` (case-insensitive), or NULL. */
const char *sk_http_header(sk_http_req *req, const char *name);

/* How many header lines named names[i] (case-insensitive) the request
 * has, into counts[i], in one pass: sk_http_header() shows only the first. */
void sk_http_header_counts(sk_http_req *req, const char *const *names, unsigned *counts, size_t n);

/* Sets the answer: `body` (len bytes) is stolen when `own` (freed with
 * free()), else must outlive the response (static text). `headers` is NULL
 * or a NULL-terminated list of name, value pairs (copied). The first answer
 * wins; later calls free their body and return SK_EINVAL. Returns 0 or
 * SK_ENOMEM (then a bare 503 goes out). */
int sk_http_respond(sk_http_req *req, int status, const char *content_type, void *body, size_t len, bool own,
                    const char *const *headers);

/* Reserves `bytes` of the memory budget ahead for this request's answer
 * (e.g. before a thread-pool job builds it); released when the request
 * completes, and an owned body handed to sk_http_respond() later is counted
 * against it first. 0, or SK_EBUSY when the budget has no room (nothing
 * reserved). Loop thread. */
int sk_http_reserve(sk_http_req *req, size_t bytes);

/* sk_http_reserve for an answer about to be streamed (the producer's
 * buffers), which a slow reader holds for as long as it reads: also
 * refused when the streamed answers from the client's address would then
 * hold more than the config's stream_per_addr, counting all this request
 * holds (its body, parsed poses and these bytes), and the budget would
 * have less than stream_per_addr left for other clients. 0; SK_EBUSY when the
 * budget has no room; SK_ETOOBIG when the address's cap is reached (*cap
 * says how many bytes it is, for the 503's detail). Nothing is reserved
 * on failure. Loop thread. */
int sk_http_reserve_stream(sk_http_req *req, size_t bytes, size_t *cap);

/* Counts `bytes` for this request's answer without refusing them, even
 * past the budget: for operational answers that must get out while the
 * budget is full (/metrics), bounded by their nature. Released when the
 * request completes. Loop thread. */
void sk_http_charge(sk_http_req *req, size_t bytes);

/* The phases of Server-Timing (W3C Server Timing): every
 * answer carries "Server-Timing" with `total` (headers in -> answer set,
 * in ms), and, when the handler marked them, `parse` (headers in -> body
 * parsed), `evaluate` (parsed -> answer built: evaluation and encoding,
 * pool wait included) and `write` (built -> answer set). A mark is one
 * clock read; the header is formatted into a fixed buffer (loop thread). */
enum { SK_HTTP_PARSED = 0, SK_HTTP_EVALUATED = 1 };
void sk_http_mark(sk_http_req *req, int phase);

/* Fills dest[0..cap) with the answer's next bytes and returns how many
 * (1..cap); 0 when the answer is complete; negative to cut the connection
 * (the client sees a truncated answer). Runs on the loop thread whenever
 * the client can take more, so one call must do a small, bounded amount of
 * work. */
typedef long (*sk_http_producer)(void *arg, char *dest, size_t cap);

#define SK_HTTP_LENGTH_UNKNOWN UINT64_MAX

/* Sets an answer produced while the client reads it: libmicrohttpd calls
 * `produce(arg, ...)` for at most `block` bytes at a time, so a slow reader
 * holds `block` bytes plus what the producer keeps, not the whole answer.
 * `length` is the exact total (sent as Content-Length), or
 * SK_HTTP_LENGTH_UNKNOWN (chunked with HTTP/1.1; the connection closes at
 * the end with HTTP/1.0). `release(arg)` runs once when the answer is
 * done with (sent, failed or abandoned), also when this call fails; `arg`
 * is owned from here on. Headers as sk_http_respond(). Returns 0 or
 * SK_ENOMEM (then a bare 503 goes out). */
int sk_http_respond_stream(sk_http_req *req, int status, const char *content_type, uint64_t length, size_t block,
                           sk_http_producer produce, void *arg, void (*release)(void *arg),
                           const char *const *headers);
/* A producer that may have nothing to send yet: as sk_http_producer, and
 * 0 with *wait_ns set above 0 means "nothing now, ask again in *wait_ns
 * ns" (0 with *wait_ns left at 0 still ends the answer). */
typedef long (*sk_http_paced_producer)(void *arg, char *dest, size_t cap, uint64_t *wait_ns);

/* As sk_http_respond_stream with an unknown length, for a producer that
 * paces itself (an event stream at its fps): while it waits, the
 * connection is suspended (neither read nor written, no thread, no busy
 * poll) and a loop timer asks again, to the millisecond. When the server
 * stops, waiting answers are asked at once and a wait then ends the
 * answer, so a producer checks sk_http_stopping() first. A client that
 * takes no byte for `stall_ms` ms while the producer has bytes for it is
 * cut (0: never; counted in sk_http_conn_stats.stall_cut). The socket's
 * send buffer is fixed small (sk_http_pace.c), so the connection closes
 * after the answer. `release` and errors as sk_http_respond_stream. */
int sk_http_respond_paced(sk_http_req *req, int status, const char *content_type, size_t block, unsigned stall_ms,
                          sk_http_paced_producer produce, void *arg, void (*release)(void *arg),
                          const char *const *headers);

/* The nice value of thread-pool threads while they run sk_http_defer work:
 * under CPU contention the loop thread (I/O, /healthz, the watchdog) goes
 * first. */
#define SK_HTTP_POOL_NICE 10

/* Runs `work(arg)` on the thread pool with the connection suspended, then
 * `after(req, arg, status)` on the loop thread, which must answer with
 * sk_http_respond() or defer a next step. status is 0, or SK_EBUSY when the job missed its
 * deadline before it started (work was not run). Call from handle(), or
 * from an after-callback to run a second step on the pool (the connection
 * stays suspended in between).
 * Returns SK_EBUSY (nothing started) when the jobs cap is reached. */
int sk_http_defer(sk_http_req *req, void (*work)(void *arg), void (*after)(sk_http_req *req, void *arg, int status),
                  void *arg);

/* ---- protocol upgrades (sk_http_upgrade.c): WebSocket sessions ---- */

typedef struct sk_http_upgrade sk_http_upgrade;
typedef struct sk_http_upgrade_ops {
  /* The 101 went out: the new protocol runs on `fd` (non-blocking; read
   * and write it, never close it), extra[0..n) already read from it
   * (valid during the call). The connection stays counted in the
   * connection limits until sk_http_upgrade_close. */
  void (*ready)(void *arg, sk_http_upgrade *u, uv_loop_t *loop, int fd, const char *extra, size_t n);
  /* The server is stopping: finish soon, then sk_http_upgrade_close. */
  void (*stop)(void *arg);
  /* The 101 never went out (the client left first), or the server closed
   * the connection itself at its stop: release `arg`, never touch `u`. */
  void (*abandon)(void *arg);
} sk_http_upgrade_ops;

/* Answers 101 Switching Protocols with `headers` (as sk_http_respond);
 * `ops` (static) and `arg` take over once it is sent. Returns 0, or
 * SK_ENOMEM (abandon(arg) has run, a bare 503 goes out). */
int sk_http_respond_upgrade(sk_http_req *req, const char *const *headers, const sk_http_upgrade_ops *ops, void *arg);
/* Closes an upgraded connection (libmicrohttpd closes the socket) and
 * frees `u`. Loop thread. */
void sk_http_upgrade_close(sk_http_upgrade *u);
/* Upgraded connections open now. */
unsigned sk_http_upgrades_open(const sk_http *h);

/* Jobs on the thread pool now. */
unsigned sk_http_jobs_in_flight(const sk_http *h);

/* Fills *dest with the listener's connection counters. */
void sk_http_get_conn_stats(const sk_http *h, sk_http_conn_stats *dest);

#endif
