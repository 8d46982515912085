/* sk_http_upgrade: connections that leave HTTP for another protocol
 * (WebSocket streaming sessions) through libmicrohttpd's upgrade support.
 * libmicrohttpd keeps such a connection in its count (so --max-connections
 * and the per-address cap hold) until the protocol closes it here; the
 * sweep's HTTP deadlines stop applying once it is upgraded. */
#include <stdlib.h>

#include "sk_error.h"
#include "sk_http_int.h"

struct sk_http_upgrade {
  sk_list node; /* in sk_http.upgrades */
  sk_http *http;
  sk_http_req *req; /* until the request ends, which may come before or after the 101 */
  const sk_http_upgrade_ops *ops;
  void *arg;
  struct MHD_UpgradeResponseHandle *urh;
  conn_state *cstate;
  bool started;
};

static void on_upgrade(void *cls, struct MHD_Connection *conn, void *con_cls, const char *extra, size_t n,
                       MHD_socket sock, struct MHD_UpgradeResponseHandle *urh) {
  (void)con_cls;
  sk_http_upgrade *u = cls;
  u->started = true;
  u->urh = urh;
  if (u->req != NULL)
    u->req->upgrade = NULL;
  u->http->upgrades_open++;
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  u->cstate = ci != NULL ? ci->socket_context : NULL;
  if (u->cstate != NULL)
    u->cstate->upgraded = true;
  u->ops->ready(u->arg, u, u->http->loop, sock, extra, n);
}

struct MHD_Response *sk_http__upgrade_response(sk_http_req *req, const sk_http_upgrade_ops *ops, void *arg) {
  sk_http_upgrade *u = calloc(1, sizeof *u);
  struct MHD_Response *r = u != NULL ? MHD_create_response_for_upgrade(on_upgrade, u) : NULL;
  if (r == NULL) {
    free(u);
    ops->abandon(arg);
    return NULL;
  }
  u->http = req->http;
  u->req = req;
  u->ops = ops;
  u->arg = arg;
  req->upgrade = u;
  sk_list_insert_head(&req->http->upgrades, &u->node);
  return r;
}

void sk_http__upgrade_request_done(sk_http_req *req) {
  sk_http_upgrade *u = req->upgrade;
  if (u == NULL)
    return;
  req->upgrade = NULL;
  u->req = NULL;
  if (u->started)
    return;
  sk_list_remove(&u->node);
  u->ops->abandon(u->arg);
  free(u);
}

void sk_http_upgrade_close(sk_http_upgrade *u) {
  sk_http *h = u->http;
  sk_list_remove(&u->node);
  h->upgrades_open--;
  MHD_upgrade_action(u->urh, MHD_UPGRADE_ACTION_CLOSE);
  free(u);
  sk_http__run_soon(h);
}

unsigned sk_http_upgrades_open(const sk_http *h) { return h->upgrades_open; }

void sk_http__upgrades_stop(sk_http *h) {
  sk_list *q, *next;
  for (q = h->upgrades.next; q != &h->upgrades; q = next) {
    next = q->next; /* stop() may close it at once */
    sk_http_upgrade *u = sk_list_data(q, sk_http_upgrade, node);
    if (u->started)
      u->ops->stop(u->arg);
  }
}

void sk_http__upgrades_close_all(sk_http *h) {
  while (h->upgrades.next != &h->upgrades) {
    sk_http_upgrade *u = sk_list_data(h->upgrades.next, sk_http_upgrade, node);
    if (!u->started) {
      sk_list_remove(&u->node);
      if (u->req != NULL)
        u->req->upgrade = NULL;
      u->ops->abandon(u->arg);
      free(u);
      continue;
    }
    void *arg = u->arg;
    const sk_http_upgrade_ops *ops = u->ops;
    sk_http_upgrade_close(u);
    ops->abandon(arg); /* the protocol's state goes with it */
  }
}
