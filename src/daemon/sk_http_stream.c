/* sk_http's cap on what the streamed answers to one client address hold
 * in the memory budget (sk_http_reserve_stream, --stream-mb-per-ip): a
 * slow reader holds its stream's buffers for as long as it reads, and 8 of
 * them held all of a 64 MB budget, so every other client's streamed batch
 * got 503. Loop thread only, like the rest of sk_http. */
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "sk_error.h"
#include "sk_http_int.h"

/* The client's address of `req` as family + bytes into dest[17]; false
 * when libmicrohttpd does not say (then no cap applies). */
static bool client_addr(sk_http_req *req, unsigned char dest[17]) {
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  memset(dest, 0, 17);
  if (ci == NULL || ci->client_addr == NULL)
    return false;
  const struct sockaddr *sa = ci->client_addr;
  if (sa->sa_family == AF_INET) {
    dest[0] = 4;
    memcpy(dest + 1, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
    return true;
  }
  if (sa->sa_family == AF_INET6) {
    dest[0] = 6;
    memcpy(dest + 1, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
    return true;
  }
  return false;
}

static size_t stream_cap(const sk_http *h) {
  if (h->cfg.stream_per_addr != 0)
    return h->cfg.stream_per_addr;
  sk_budget_stats st = {0};
  if (h->cfg.budget != NULL)
    sk_budget_get_stats(h->cfg.budget, &st);
  return st.limit != 0 ? st.limit / 4 : SIZE_MAX;
}

int sk_http_reserve_stream(sk_http_req *req, size_t bytes, size_t *cap) {
  sk_http *h = req->http;
  *cap = stream_cap(h);
  unsigned char addr[17];
  /* One walk of the streams in flight (at most the connections): cheaper
   * than keeping a table for the rare moment a stream starts. */
  if (*cap != SIZE_MAX && req->stream_held == 0 && client_addr(req, addr)) {
    size_t held = req->held + bytes;
    const sk_list *q;
    sk_list_foreach(q, &h->streams) {
      const sk_http_req *o = sk_list_data(q, const sk_http_req, stream);
      if (held > *cap)
        break;
      if (memcmp(o->addr, addr, sizeof addr) == 0)
        held += o->stream_held;
    }
    /* Past its share, an address's streams may still use the budget while a
     * share stays free for everyone else: one client's readers are then
     * served as before, and a crowd of them cannot take the last share. */
    sk_budget_stats st = {0};
    if (held > *cap && h->cfg.budget != NULL)
      sk_budget_get_stats(h->cfg.budget, &st);
    if (held > *cap && st.limit != 0 && (st.limit < *cap || st.used > st.limit - *cap ||
                                          bytes > st.limit - *cap - st.used))
      return SK_ETOOBIG;
    if (sk_http_reserve(req, bytes) != 0)
      return SK_EBUSY;
    memcpy(req->addr, addr, sizeof addr);
    req->stream_held = req->held;
    sk_list_insert_head(&h->streams, &req->stream);
    return 0;
  }
  return sk_http_reserve(req, bytes);
}

void sk_http__stream_unlink(sk_http_req *req) {
  if (req->stream_held == 0)
    return;
  sk_list_remove(&req->stream);
  req->stream_held = 0;
}
