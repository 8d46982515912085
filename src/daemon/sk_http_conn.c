/* sk_http's connections: each open connection's deadlines (header, body,
 * idle), and room made at the connection limit by closing idle ones. The
 * kernel's TCP counters say whether a connection sent anything, which
 * libmicrohttpd does not tell. */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sk_http_int.h"

/* At the connection limit, an idle connection is one that sent nothing
 * since it opened (or since its previous answer) and nothing for this long
 * by the kernel's clock: a client that has just connected and is about to
 * send its request is younger than that. */
#define SK_HTTP_EVICT_MIN_IDLE_MS 100u

/* Under TLS the kernel's byte count cannot tell a request from the
 * handshake (or from a TLS alert or a session ticket's answer), and the
 * decrypted bytes stay inside libmicrohttpd. So a TLS connection is idle
 * when no request's headers are complete and nothing at all arrived for
 * this long: enough for a handshake's round trips and the first request
 * right after it. A request trickled slower than that is idle too, which
 * only brings forward a cut the header deadline would make later. */
#define SK_HTTP_TLS_MIN_IDLE_MS 1000u

/* The kernel's struct tcp_info goes on past glibc's copy (which ends at
 * tcpi_total_retrans); the ABI only ever appends, and <linux/tcp.h> cannot
 * be included beside <netinet/tcp.h> (which uv.h pulls in). */
typedef struct tcp_info_ext {
  struct tcp_info base;
  uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
} tcp_info_ext;
_Static_assert(sizeof(struct tcp_info) == 104, "glibc's struct tcp_info changed: check tcp_info_ext");

bool sk_http__tcp_acked(int fd, uint64_t *bytes) {
  tcp_info_ext ti;
  socklen_t len = sizeof ti;
  memset(&ti, 0, sizeof ti);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 || len < sizeof ti)
    return false;
  *bytes = ti.bytes_acked;
  return true;
}

/* Bytes the kernel has received on fd (counting those not read yet) and ms
 * since the last data arrived (or since the handshake). False when unknown
 * (not TCP, or a kernel before 4.1): such a connection is never idle. */
static bool tcp_rx(int fd, uint64_t *bytes, uint32_t *quiet_ms) {
  tcp_info_ext ti;
  socklen_t len = sizeof ti;
  memset(&ti, 0, sizeof ti);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 || len < sizeof ti)
    return false;
  *bytes = ti.bytes_received;
  *quiet_ms = ti.base.tcpi_last_data_recv;
  return true;
}

/* No request bytes pending: nothing received since since_ns (plain HTTP;
 * under TLS see SK_HTTP_TLS_MIN_IDLE_MS), and nothing for at least
 * `min_quiet_ms`. */
static bool conn_idle(const conn_state *c, uint32_t min_quiet_ms) {
  uint64_t rx;
  uint32_t quiet;
  if (c->cut || c->upgraded || c->body_done || c->headers_ns != 0 || !tcp_rx(c->fd, &rx, &quiet))
    return false;
  if (c->http->cfg.tls != NULL)
    return quiet >= (min_quiet_ms > SK_HTTP_TLS_MIN_IDLE_MS ? min_quiet_ms : SK_HTTP_TLS_MIN_IDLE_MS);
  return rx == c->rx_mark && quiet >= min_quiet_ms;
}

static void conn_cut(conn_state *c) {
  shutdown(c->fd, SHUT_RDWR);
  c->cut = true;
}

/* The connection limit is reached: libmicrohttpd stops accepting, and every
 * newcomer (a health check, a real client) would wait in the listen backlog
 * until some connection ends, up to the header timeout when idle ones hold
 * every slot. So idle connections are closed, oldest first, a batch at a
 * time (a thirty-second of the limit) so this scan runs once per batch of
 * accepts, not at each. Connections with request bytes are never touched:
 * the header and body deadlines bound those. */
static void make_room(sk_http *h) {
  unsigned want = h->cfg.conn_limit / 32 > 0 ? h->cfg.conn_limit / 32 : 1, got = 0;
  sk_list *q;
  sk_list_foreach_reverse(q, &h->conns) {
    if (got >= want)
      break;
    conn_state *c = sk_list_data(q, conn_state, node);
    if (conn_idle(c, SK_HTTP_EVICT_MIN_IDLE_MS)) {
      conn_cut(c);
      got++;
    }
  }
  h->stats.evicted += got;
  if (got > 0)
    sk_http__logf(h, 3, "at the connection limit (%u): closed %u idle connections", h->cfg.conn_limit, got);
}

void sk_http__on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
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
    c->http = h;
    c->since_ns = uv_hrtime();
    sk_list_insert_head(&h->conns, &c->node);
    *socket_context = c;
    if (++h->stats.open >= h->cfg.conn_limit)
      make_room(h);
  } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
    /* At --max-connections libmicrohttpd 0.9.75 has taken its listen socket
     * out of epoll; it puts it back in a later MHD_run, which nothing might
     * call if this was the last busy connection: run_mhd schedules one. */
    h->closed = true;
    conn_state *c = *socket_context;
    if (c == NULL)
      return;
    h->stats.open--;
    sk_list_remove(&c->node);
    sk_http__kept_drop(c);
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
void sk_http__on_sweep(uv_timer_t *t) {
  sk_http *h = t->data;
  uint64_t now = uv_hrtime();
  unsigned cut = 0, idle = 0;
  uint64_t idle_ns = (uint64_t)h->cfg.idle_timeout_ms * 1000000u;
  sk_list *q;
  sk_list_foreach(q, &h->conns) {
    conn_state *c = sk_list_data(q, conn_state, node);
    if (c->cut || c->upgraded || c->body_done)
      continue;
    /* quiet for the whole timeout: with plain HTTP the same as no byte
     * since since_ns; what makes it hold under TLS */
    if (c->headers_ns == 0 && now - c->since_ns > idle_ns && conn_idle(c, h->cfg.idle_timeout_ms)) {
      conn_cut(c);
      idle++;
      continue;
    }
    bool late = c->headers_ns == 0 ? now - c->since_ns > (uint64_t)h->cfg.header_timeout_ms * 1000000u
                                   : now - c->headers_ns > (uint64_t)h->cfg.body_timeout_ms * 1000000u;
    if (late) {
      conn_cut(c);
      cut++;
    }
  }
  h->stats.deadline_cut += cut;
  h->stats.idle_closed += idle;
  if (cut > 0)
    sk_http__logf(h, 2, "cut %u connections past their header or body deadline", cut);
  if (idle > 0)
    sk_http__logf(h, 3, "closed %u connections idle for %u ms", idle, h->cfg.idle_timeout_ms);
  /* At the limit with nobody accepted since (so on_connection did not run):
   * the clients in the backlog get their room here, within a second. */
  if (h->stats.open >= h->cfg.conn_limit)
    make_room(h);
  /* Every tick, not only after a cut: a second guard (after the one in
   * on_connection) against libmicrohttpd leaving its listen socket out of
   * epoll at --max-connections; without either, clients waiting in the
   * backlog were never accepted once the last busy connection closed. */
  sk_http__run_mhd(h);
}

void sk_http__conn_next(conn_state *c, uint64_t request_bytes) {
  c->since_ns = uv_hrtime();
  c->headers_ns = 0;
  c->body_done = false;
  /* Bytes counted here exclude any of the next request that arrived
   * before this call (libmicrohttpd completes a request in a later pass
   * than the one that sent its answer): such a connection is not idle. */
  uint32_t quiet;
  if (c->http->cfg.tls != NULL)
    return; /* conn_idle reads no byte count under TLS */
  if (request_bytes != 0)
    c->rx_mark += request_bytes;
  else if (!tcp_rx(c->fd, &c->rx_mark, &quiet))
    c->rx_mark = UINT64_MAX; /* never idle: see conn_idle */
}
