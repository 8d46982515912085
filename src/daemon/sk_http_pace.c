/* sk_http's paced answers (sk_http_respond_paced): a streamed answer whose
 * producer may have nothing to send yet (an event stream played at its
 * fps). Waiting is a suspended connection and a libuv timer on the loop,
 * not a thread per stream and not a busy poll: libmicrohttpd 0.9.75 calls
 * a content reader that returned 0 again on its next pass, so the
 * connection is suspended from inside the reader (the one place besides
 * the access handler where MHD_suspend_connection is safe) and resumed by
 * the timer. The same timer, while bytes wait for the client (libmicrohttpd
 * asks for more only once the socket took the previous ones), checks
 * every quarter of stall_ms whether the client took any: the bytes its
 * TCP acknowledged (TCP_INFO), since a slow reader that empties its window
 * a little at a time leaves the socket unwritable for seconds (the kernel
 * wakes a writer once half its send buffer is free). Unchanged for
 * stall_ms: the client stopped reading, and the connection is cut.
 *
 * The socket's send buffer is fixed at SK_HTTP_PACED_SNDBUF: with the
 * kernel's autotuning (tcp_wmem up to 4 MiB) a stream nobody reads kept
 * being written, one frame per send, until 4 MiB of kernel memory held
 * its frames (200 such streams: 25% of a core for tens of seconds, and
 * /healthz 11-22 ms). A fixed buffer ends autotuning for the connection,
 * so it closes after the answer. Loop thread only. */
#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "sk_error.h"
#include "sk_http_int.h"

/* What a paced answer's socket holds at most (the kernel doubles it for
 * its bookkeeping): 30 frames of a 65-bone pose, and at 1 ms of round trip
 * 128 MB/s, above what 1000 frames a second of 1024 bones take. */
#define SK_HTTP_PACED_SNDBUF 65536

typedef struct paced {
  sk_http *h;
  struct MHD_Connection *conn;
  uv_timer_t timer; /* the wait, or the stall deadline */
  sk_list node;     /* in sk_http.paced */
  sk_http_paced_producer produce;
  void *arg;
  void (*release)(void *arg);
  unsigned stall_ms;
  unsigned quiet_ms; /* since the client last took a byte, by the checks so far */
  uint64_t acked;    /* the client's TCP acknowledged bytes at the last check */
  bool suspended, cut;
} paced;

static void resume(paced *p) {
  p->suspended = false;
  MHD_resume_connection(p->conn);
  sk_http__run_soon(p->h);
}

static unsigned check_ms(const paced *p) { return p->stall_ms / 4 > 0 ? p->stall_ms / 4 : 1; }

static void on_timer(uv_timer_t *t) {
  paced *p = t->data;
  if (p->suspended) {
    resume(p);
    return;
  }
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(p->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
  uint64_t acked = 0;
  bool known = ci != NULL && sk_http__tcp_acked(ci->connect_fd, &acked);
  if (known && acked != p->acked) {
    p->acked = acked;
    p->quiet_ms = 0;
  } else
    p->quiet_ms += check_ms(p); /* unknown: libmicrohttpd's asks are the only sign */
  if (p->quiet_ms < p->stall_ms) {
    uv_timer_start(&p->timer, on_timer, check_ms(p), 0);
    return;
  }
  if (ci != NULL)
    shutdown(ci->connect_fd, SHUT_RDWR);
  p->cut = true;
  p->h->stats.stall_cut++;
  sk_http__logf(p->h, 2, "cut a streamed answer whose client took nothing for %u ms", p->stall_ms);
  sk_http__run_soon(p->h);
}

static ssize_t paced_read(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  paced *p = cls;
  if (p->cut)
    return MHD_CONTENT_READER_END_WITH_ERROR;
  uint64_t wait_ns = 0;
  long n = p->produce(p->arg, buf, max, &wait_ns);
  if (n == 0 && wait_ns > 0 && !p->h->stopping) {
    uint64_t ms = (wait_ns + 999999u) / 1000000u;
    MHD_suspend_connection(p->conn);
    p->suspended = true;
    uv_timer_start(&p->timer, on_timer, ms, 0);
    return 0;
  }
  if (n == 0)
    return MHD_CONTENT_READER_END_OF_STREAM;
  if (n < 0 || (size_t)n > max)
    return MHD_CONTENT_READER_END_WITH_ERROR;
  if (p->stall_ms != 0) {
    p->quiet_ms = 0;
    p->acked = UINT64_MAX; /* the first check only reads it */
    uv_timer_start(&p->timer, on_timer, check_ms(p), 0);
  }
  return (ssize_t)n;
}

static void on_closed(uv_handle_t *t) { free(t->data); }

static void paced_free(void *cls) {
  paced *p = cls;
  if (p->release != NULL)
    p->release(p->arg);
  sk_list_remove(&p->node);
  uv_close((uv_handle_t *)&p->timer, on_closed);
}

int sk_http_respond_paced(sk_http_req *req, int status, const char *content_type, size_t block, unsigned stall_ms,
                          sk_http_paced_producer produce, void *arg, void (*release)(void *arg),
                          const char *const *headers) {
  paced *p = req->resp == NULL ? calloc(1, sizeof *p) : NULL;
  if (p == NULL) {
    if (release != NULL)
      release(arg);
    return req->resp != NULL ? SK_EINVAL : sk_http__respond_response(req, NULL, status, content_type, headers, true);
  }
  p->h = req->http;
  p->conn = req->conn;
  p->produce = produce;
  p->arg = arg;
  p->release = release;
  p->stall_ms = stall_ms;
  uv_timer_init(p->h->loop, &p->timer);
  p->timer.data = p;
  sk_list_insert_head(&p->h->paced, &p->node);
  struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, block, paced_read, p, paced_free);
  if (r == NULL)
    paced_free(p);
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
  int sndbuf = SK_HTTP_PACED_SNDBUF;
  if (r != NULL && ci != NULL && setsockopt(ci->connect_fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf) != 0)
    sk_http__logf(p->h, 3, "a paced answer's send buffer stays as it was: setsockopt(SO_SNDBUF) failed");
  return sk_http__respond_response(req, r, status, content_type, headers, true);
}

void sk_http__paced_resume_all(sk_http *h) {
  sk_list *q;
  sk_list_foreach(q, &h->paced) {
    paced *p = sk_list_data(q, paced, node);
    if (p->suspended) {
      uv_timer_stop(&p->timer);
      resume(p);
    }
  }
}
