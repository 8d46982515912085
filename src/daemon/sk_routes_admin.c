/* sk_routes_admin: the operational routes, /healthz, /readyz and /metrics,
 * served on the public listener and on the admin one (--admin-listen).
 * Their clients are probes and scrapers, so they take any query parameter
 * (Q_ANY in the route table). */
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <string.h>
#include <uv.h>

#include "sk_error.h"
#include "sk_problem.h"
#include "sk_routes_int.h"

static void respond_static_json(sk_http_req *req, int status, const char *text) {
  sk_http_respond(req, status, SK_ROUTES_CT_JSON, (void *)text, strlen(text), false, NULL);
}

void sk_routes__healthz(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  (void)r, (void)m;
  respond_static_json(req, 200, "{\"status\":\"ok\"}");
}

/* Ready, with a warning when damaged records were skipped: the service
 * works, but some stored skeletons are gone until someone looks at the log. */
static void readyz_ready(sk_routes *r, sk_http_req *req) {
  sk_cache_stats st;
  sk_cache_get_stats(r->cache, &st);
  if (st.damaged == 0) {
    respond_static_json(req, 200, "{\"status\":\"ready\"}");
    return;
  }
  sk_strbuf b = {0};
  char text[160];
  int n = snprintf(text, sizeof text,
                   "{\"status\":\"ready\",\"warnings\":[\"%llu damaged record(s) in the data directory skipped; "
                   "see the log\"]}",
                   (unsigned long long)st.damaged);
  if (n > 0 && (size_t)n < sizeof text)
    sk_strbuf_append(&b, text, (size_t)n);
  sk_routes__respond_json(req, 200, &b, NULL);
}

void sk_routes__readyz(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  (void)m;
  if (sk_http_stopping(req->http))
    respond_static_json(req, 503, "{\"status\":\"stopping\"}");
  else if (sk_cache_store_full(r->cache)) /* until a put succeeds again */
    respond_static_json(req, 503, "{\"status\":\"out-of-storage\"}");
  else
    readyz_ready(r, req);
}

void sk_routes__metrics(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  (void)m;
  sk_cache_stats st;
  sk_cache_get_stats(r->cache, &st);
  /* The public listener's figures, also when asked on the admin one. */
  sk_http *pub = r->listener != NULL ? r->listener : req->http;
  sk_http_conn_stats cs;
  sk_http_get_conn_stats(pub, &cs);
  sk_budget_stats bs;
  sk_budget_get_stats(r->cfg.budget, &bs);
  sk_metrics_gauges g = {.cache_skeletons = st.count,
                         .cache_bytes = st.bytes,
                         .cache_evictions = st.evictions,
                         .jobs_in_flight = sk_http_jobs_in_flight(pub),
                         .conns_open = cs.open,
                         .conns_evicted = cs.evicted,
                         .conns_idle_closed = cs.idle_closed,
                         .conns_deadline_cut = cs.deadline_cut,
                         .conns_stall_cut = cs.stall_cut,
                         .memory_limit_bytes = bs.limit,
                         .memory_used_bytes = bs.used,
                         .memory_high_bytes = bs.high,
                         .memory_refused = bs.refused,
                         .cache_tombstones = st.tombstones,
                         .store_damaged_records = st.damaged,
                         .libmicrohttpd = MHD_get_version(),
                         .libuv = uv_version_string(),
                         .gnutls = gnutls_check_version(NULL)};
  sk_metrics_process proc;
  if (sk_metrics_read_process(&proc) == 0) /* a few /proc reads, per scrape only */
    g.process = &proc;
  sk_strbuf b = {0};
  if (sk_metrics_write(r->metrics, &g, &b) != 0 || b.data == NULL) {
    sk_strbuf_free(&b);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  size_t len = b.len;
  sk_http_charge(req, len); /* counted, never refused: /metrics must answer while the budget is full */
  sk_http_respond(req, 200, "text/plain; version=0.0.4; charset=utf-8", b.data, len, true, NULL);
}
