/* sk_routes_checks: what every route's request is checked for before its
 * body is read, in the order on_begin (sk_routes.c) runs them: access
 * (framing, Host, bearer token), method (405), query parameters (the route
 * table's query column), body size and type (413, 415) and the answer's
 * type (406), with the content-negotiation helpers behind the last two.
 * Each check answers the problem itself and returns true when it refused. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sk_error.h"
#include "sk_problem.h"
#include "sk_routes_int.h"

/* ---- content negotiation (public for tests) ------------------------------------------ */

static bool token_eq(const char *a, size_t alen, const char *b) {
  return strlen(b) == alen && strncasecmp(a, b, alen) == 0;
}

int sk_routes_is_json(const char *ct) {
  if (ct == NULL)
    return 0;
  while (*ct == ' ' || *ct == '\t')
    ct++;
  size_t n = strcspn(ct, "; \t");
  return token_eq(ct, n, "application/json");
}

/* How well the media range [r, r+n) matches `offer`: 3 exact, 2 "type/ *",
 * 1 "* / *" (spaces only to keep this a comment), 0 not at all. */
static int range_match(const char *r, size_t n, const char *offer) {
  if (token_eq(r, n, "*/*"))
    return 1;
  const char *slash = strchr(offer, '/');
  size_t tlen = (size_t)(slash - offer);
  if (n == tlen + 2 && strncasecmp(r, offer, tlen + 1) == 0 && r[tlen + 1] == '*')
    return 2;
  return token_eq(r, n, offer) ? 3 : 0;
}

int sk_routes_negotiate(const char *accept, const char *const *offers, int n) {
  if (accept == NULL)
    return 0;
  if (n > 8)
    n = 8;
  /* One media range and no parameter (what most clients send, e.g.
   * "application/octet-stream"): every offer it matches has q 1, so the
   * first one wins, as in the general parse below (which cost ~500
   * instructions, twice a pose request). */
  if (accept[strcspn(accept, ",;")] == '\0') {
    const char *r = accept + strspn(accept, " \t");
    size_t rlen = strcspn(r, " \t");
    if (rlen == 0)
      return 0;
    for (int i = 0; i < n; i++)
      if (range_match(r, rlen, offers[i]) > 0)
        return i;
    return -1;
  }
  double q[8];
  int spec[8];
  for (int i = 0; i < n; i++) {
    q[i] = -1; /* not mentioned */
    spec[i] = 0;
  }
  bool any_range = false;
  const char *p = accept;
  while (*p) {
    while (*p == ' ' || *p == '\t' || *p == ',')
      p++;
    if (!*p)
      break;
    const char *elem = p;
    size_t elen = strcspn(p, ",");
    p += elen;
    size_t rlen = strcspn(elem, ";, \t");
    if (rlen > elen)
      rlen = elen;
    double qv = 1;
    /* parameters: only q matters */
    const char *par = elem + rlen;
    while (par < elem + elen) {
      par += strspn(par, "; \t");
      if (par >= elem + elen)
        break;
      if ((par[0] == 'q' || par[0] == 'Q') && par[1] == '=') {
        char *end;
        qv = strtod(par + 2, &end);
        if (end == par + 2 || qv < 0 || qv > 1)
          qv = 1;
      }
      par += strcspn(par, ";,");
    }
    if (rlen == 0)
      continue;
    any_range = true;
    for (int i = 0; i < n; i++) {
      int m = range_match(elem, rlen, offers[i]);
      if (m > spec[i]) { /* the most specific range decides (RFC 9110 12.5.1) */
        spec[i] = m;
        q[i] = qv;
      }
    }
  }
  if (!any_range)
    return 0;
  int best = -1;
  for (int i = 0; i < n; i++)
    if (q[i] > 0 && (best < 0 || q[i] > q[best]))
      best = i;
  return best;
}

int sk_routes__gltf_type(const char *ct) {
  if (ct == NULL)
    return 0;
  size_t n = strcspn(ct, "; \t");
  if (n == strlen("model/gltf-binary") && strncasecmp(ct, "model/gltf-binary", n) == 0)
    return 1;
  if (n == strlen("model/gltf+json") && strncasecmp(ct, "model/gltf+json", n) == 0)
    return 2;
  return 0;
}

/* ---- the checks every route shares, before the body ---------------------------------- */

/* The scope a request on `rt` (NULL: no route) needs. Browsers send
 * preflights without credentials and OPTIONS reveals nothing but the
 * route's methods (no skeleton is looked up); a browser navigating to the
 * preview page sends no token either, and the page's files are built into
 * the binary (every API call the page makes then needs its own). */
static int request_scope(const sk_route *rt, int method) {
  if (method == SK_METHOD_OPTIONS || (rt != NULL && rt->handle == sk_routes__ui))
    return SK_SCOPE_NONE;
  return sk_access_scope(rt != NULL ? rt->id : SK_ROUTE_OTHER, method);
}

/* Framing, Host and bearer token (sk_access), before anything else looks
 * at the request. True when refused (the answer is set). */
bool sk_routes__access_refused(sk_routes *r, sk_http_req *req, const sk_route *rt) {
  static const char *const names[] = {"Host", "Content-Length", "Transfer-Encoding"};
  unsigned counts[3];
  sk_http_header_counts(req, names, counts, 3);
  sk_access_request rq = {
      .version = req->version,
      .host = sk_http_header(req, "Host"),
      .host_count = counts[0],
      .content_length = sk_http_header(req, "Content-Length"),
      .content_length_count = counts[1],
      .transfer_encoding = sk_http_header(req, "Transfer-Encoding"),
      .transfer_encoding_count = counts[2],
      .authorization = sk_http_header(req, "Authorization"),
      .websocket = rt != NULL && rt->id == SK_ROUTE_STREAM && sk_http_header(req, "Upgrade") != NULL,
      .scope = request_scope(rt, req->method_id),
  };
  if (rq.websocket) { /* only here: the count walks every header line */
    static const char *const ws[] = {"Sec-WebSocket-Protocol"};
    sk_http_header_counts(req, ws, &rq.ws_protocol_count, 1);
    rq.ws_protocol = sk_http_header(req, "Sec-WebSocket-Protocol");
  }
  sk_access_verdict v;
  sk_access_check(r->cfg.access, &rq, &v);
  if (v.status == 0)
    return false;
  req->close_after = v.close; /* before the answer: it then says Connection: close */
  const char *hdr[] = {"WWW-Authenticate", v.www_authenticate, NULL};
  sk_problem_send(req, v.status, v.kind, v.title, v.detail, "", 0, 0, v.www_authenticate[0] ? hdr : NULL);
  return true;
}

bool sk_routes__method_refused(sk_http_req *req, const sk_route *rt) {
  if (rt->methods & (1u << req->method_id))
    return false;
  char allow[64], detail[128];
  sk_routes__allow_text(rt, allow, sizeof allow);
  const char *hdr[] = {"Allow", allow, NULL};
  snprintf(detail, sizeof detail, "%s is not allowed here; use %s", req->method, allow);
  sk_problem_send(req, 405, "method-not-allowed", "Method not allowed", detail, "", 0, 0, hdr);
  return true;
}

bool sk_routes__query_refused(sk_http_req *req, const sk_route *rt) {
  static const char *const none[] = {NULL};
  const char *names[16];
  size_t n = sk_http_query_names(req, names, 16);
  if (n == 0)
    return false;
  const char *const *allowed = rt->query_methods & (1u << req->method_id) ? rt->query : none;
  if (allowed == NULL) /* any: probes and scrapers add parameters of their own */
    return false;
  char takes[96] = "";
  for (const char *const *a = allowed; *a != NULL; a++)
    snprintf(takes + strlen(takes), sizeof takes - strlen(takes), "%s\"%s\"", takes[0] ? ", " : "", *a);
  if (n > 16) {
    sk_problem(req, SK_EINVAL, "", "%zu query parameters; this route and method take %s", n,
               takes[0] ? takes : "none");
    return true;
  }
  for (size_t i = 0; i < n; i++) {
    bool known = false;
    for (const char *const *a = allowed; *a != NULL && !known; a++)
      known = strcmp(*a, names[i]) == 0;
    if (!known) {
      sk_problem(req, SK_EINVAL, "", "unknown query parameter \"%.64s\"; this route and method take %s", names[i],
                 takes[0] ? takes : "none");
      return true;
    }
    for (size_t k = 0; k < i; k++)
      if (strcmp(names[k], names[i]) == 0) {
        sk_problem(req, SK_EINVAL, "", "query parameter \"%.64s\" given more than once", names[i]);
        return true;
      }
  }
  return false;
}

bool sk_routes__body_refused(sk_routes *r, sk_http_req *req, const sk_route *rt) {
  const int me = req->method_id;
  if (me != SK_METHOD_PUT && me != SK_METHOD_POST && me != SK_METHOD_PATCH)
    return false;
  const char *cl = sk_http_header(req, "Content-Length");
  const char *te = sk_http_header(req, "Transfer-Encoding");
  unsigned long long len = 0;
  if (cl != NULL) {
    len = strtoull(cl, NULL, 10);
    if (len > r->cfg.max_body) {
      sk_problem(req, SK_ETOOBIG, "", "the body has %llu bytes; the limit is %zu (--max-body)", len, r->cfg.max_body);
      return true;
    }
  }
  const char *ct = sk_http_header(req, "Content-Type");
  bool gltf_ok = rt->bodies == BODY_JSON_OR_GLTF;
  if ((len > 0 || te != NULL) && !sk_routes_is_json(ct) && !(gltf_ok && sk_routes__gltf_type(ct) != 0)) {
    sk_problem(req, SK_EUNSUPPORTED, "", "%s", gltf_ok ? "skeleton bodies are application/json, model/gltf-binary or model/gltf+json"
                                                      : "bodies must be application/json");
    return true;
  }
  return false;
}

bool sk_routes__answer_refused(sk_http_req *req, const sk_route *rt) {
  if (rt->offers == NULL || req->method_id == SK_METHOD_DELETE) /* DELETE answers no body */
    return false;
  if (sk_routes_negotiate(sk_http_header(req, "Accept"), rt->offers, rt->noffers) >= 0)
    return false;
  char detail[160] = "this route answers ";
  for (int i = 0; i < rt->noffers; i++)
    snprintf(detail + strlen(detail), sizeof detail - strlen(detail), "%s%s",
             i == 0 ? "" : i + 1 == rt->noffers ? " or " : ", ", rt->offers[i]);
  sk_problem_send(req, 406, "not-acceptable", "Not acceptable", detail, "", 0, 0, NULL);
  return true;
}

