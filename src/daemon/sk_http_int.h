/* Private to the sk_http module (sk_http.c: requests, answers, jobs and
 * lifecycle; sk_http_conn.c: per-connection deadlines and admission at the
 * connection limit; sk_http_timing.c: Server-Timing; sk_http_pace.c: paced
 * answers). Not for other modules. */
#ifndef SK_HTTP_INT_H
#define SK_HTTP_INT_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "sk_http.h"
#include "sk_list.h"

struct sk_http {
  uv_loop_t *loop;
  sk_http_config cfg;
  sk_http_handler h;
  struct MHD_Daemon *mhd;
  unsigned port;
  uv_poll_t poll;       /* MHD's epoll fd */
  uv_timer_t timer;     /* MHD_get_timeout() */
  uv_idle_t again;      /* MHD has work now: one more pass, next loop iteration */
  uv_timer_t house;     /* job deadlines while jobs run; shutdown progress while stopping */
  int open_handles;
  bool stopping, stopped;
  uint64_t stop_deadline_ns;
  void (*done)(void *arg);
  void *done_arg;
  unsigned jobs, active; /* jobs on the pool; requests begun and not completed */
  sk_list job_list;      /* the requests with a job on the pool (sk_http_req.job) */
  uv_timer_t sweep;      /* once a second: connections past their header or body deadline */
  bool closed;           /* a connection closed during the current MHD_run */
  sk_list conns;         /* every open connection (conn_state.node), newest first */
  sk_http_conn_stats stats;
  sk_list streams;       /* requests holding streamed answers (sk_http_req.stream) */
  sk_list paced;         /* paced answers (sk_http_pace.c), waiting or not */
  sk_list upgrades;      /* upgraded connections, begun or waiting for their 101 (sk_http_upgrade.c) */
  unsigned upgrades_open; /* of which running a protocol */
};

/* Answers kept per connection (conn_state.kept): bodies up to the
 * connection's pool size (--conn-memory, 16 KiB by default) or
 * SK_HTTP_KEPT_MIN, the larger, and at most SK_HTTP_KEPT_MAX (a 65-bone
 * pose is 4 224 bytes binary, ~9 KB as JSON: a pool lowered to 4 KiB
 * still keeps both), header text up to SK_HTTP_KEPT_KEY bytes. */
#define SK_HTTP_KEPT_MIN 16384u
#define SK_HTTP_KEPT_MAX 65536u
#define SK_HTTP_KEPT_KEY 384u
/* The Server-Timing header's text, at most (sk_http__server_timing). */
#define SK_HTTP_TIMING_MAX 192

/* Per connection (MHD's socket context): when the request being read
 * began, so a client that trickles bytes cannot hold a slot for ever. */
typedef struct conn_state {
  sk_list node;        /* in sk_http.conns */
  sk_http *http;       /* for the TLS certificate callback */
  int fd;
  uint64_t since_ns;   /* connection opened, or the previous answer went out */
  uint64_t headers_ns; /* headers of the current request complete; 0 while reading them */
  bool body_done;      /* the whole body is in (handled, queued or on the pool) */
  bool cut;            /* shut down by the sweep */
  bool upgraded;       /* runs another protocol now: no HTTP deadlines apply */
  uint64_t rx_mark;    /* bytes the kernel had received at since_ns (0 when opened) */
  /* The connection's last owned answer of up to SK_HTTP_KEPT_MAX bytes,
   * kept for the next one (sk_http.c, respond_kept): one reference to the
   * response, its body (freed with it) and the header text it carries. */
  struct MHD_Response *kept;
  char *kept_body;
  size_t kept_len, kept_key_len;
  char kept_key[SK_HTTP_KEPT_KEY];
  char kept_timing[SK_HTTP_TIMING_MAX]; /* the kept response's Server-Timing, replaced on reuse */
} conn_state;

/* Slots sk_http__options fills at most, MHD_OPTION_END included. */
#define SK_HTTP_MAX_OPTIONS 12

/* The libmicrohttpd options that carry the settings of `c` (defaults
 * filled), one slot each, into dest[0..cap) and an MHD_OPTION_END after
 * them; returns how many (without the end). `ss` is the listening address
 * (borrowed into the SOCK_ADDR slot). Exposed for the test that every
 * setting reaches libmicrohttpd. */
size_t sk_http__options(const sk_http_config *c, struct sockaddr_storage *ss, struct MHD_OptionItem *dest,
                        size_t cap);

/* Takes a completed request out of the streams' list, if it is there
 * (sk_http_stream.c). */
void sk_http__stream_unlink(sk_http_req *req);
/* Makes `r` the answer with the headers every answer carries (the
 * content type, `headers`, the decoration, Server-Timing, Connection:
 * close when `close` or stopping); NULL `r` or a failure: a bare 503
 * (SK_ENOMEM). */
int sk_http__respond_response(sk_http_req *req, struct MHD_Response *r, int status, const char *content_type,
                              const char *const *headers, bool close);
/* Resumes every paced answer waiting (the server stops: each produces its
 * end now, and libmicrohttpd cannot stop with suspended connections). */
void sk_http__paced_resume_all(sk_http *h);
/* Logs at `level` (0 error .. 3 debug) when the configured level allows. */
void sk_http__logf(const sk_http *h, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* One more libmicrohttpd pass in the next loop iteration (work no fd
 * event announces, e.g. an upgraded connection closed). */
void sk_http__run_soon(sk_http *h);
/* Runs libmicrohttpd once and re-arms the loop's poll and timer for it. */
void sk_http__run_mhd(sk_http *h);

/* libmicrohttpd's connection notification (MHD_OPTION_NOTIFY_CONNECTION):
 * tracks every open connection and makes room at the connection limit. */
void sk_http__on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                            enum MHD_ConnectionNotificationCode code);
/* Drops the answer `c` keeps, if any (the connection closed). */
void sk_http__kept_drop(conn_state *c);
/* An answer went out on `c`: the next request's clock starts now.
 * `request_bytes`: the bytes of the request just answered as they came
 * over the wire (header block and body), when known, else 0: the kernel's
 * count is then read (a system call). */
void sk_http__conn_next(conn_state *c, uint64_t request_bytes);
/* Bytes the peer of fd has acknowledged (TCP_INFO), i.e. taken into its
 * receive window: false when unknown (not TCP, a kernel before 4.1). */
bool sk_http__tcp_acked(int fd, uint64_t *bytes);
/* Once a second: cuts connections past their header, body or idle deadline. */
void sk_http__on_sweep(uv_timer_t *t);

/* The Server-Timing value of `req` answered now (sk_http_timing.c) into
 * buf: at most four phases of at most 13 + 20 + 6 bytes, so
 * SK_HTTP_TIMING_MAX always holds it with its NUL. */
void sk_http__server_timing(const sk_http_req *req, char buf[SK_HTTP_TIMING_MAX]);

/* The MHD response of a 101 for `req` whose upgrade handler starts `u`
 * (sk_http_upgrade.c); NULL when out of memory (u freed, abandon run). */
struct MHD_Response *sk_http__upgrade_response(sk_http_req *req, const sk_http_upgrade_ops *ops, void *arg);
/* A request ended: an upgrade it asked for that never started is abandoned. */
void sk_http__upgrade_request_done(sk_http_req *req);
/* The server is stopping: every upgraded connection is told to finish. */
void sk_http__upgrades_stop(sk_http *h);
/* Closes whatever upgraded connections remain (just before MHD stops). */
void sk_http__upgrades_close_all(sk_http *h);

#endif
