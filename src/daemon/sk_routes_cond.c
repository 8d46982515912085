/* sk_routes_cond: what the routes layer adds for browsers and editors:
 * CORS (sk_cors: the headers on every answer, OPTIONS preflights) and
 * skeleton versions (sk_etag: ETag on the answers, If-Match and
 * If-None-Match on every /v1/skeletons/{id}... route, 412 and 304). Called
 * from sk_routes.c at three points: begin (decorate_init, options),
 * dispatch (preconditions), and from every write's publish step
 * (sk_routes__precondition_failed). docs/security.md, "CORS and versions". */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sk_cors.h"
#include "sk_etag.h"
#include "sk_problem.h"
#include "sk_routes_int.h"

/* True when the request is a write on its route: a PUT, PATCH or DELETE,
 * or a POST that is not a pose evaluation (so write routes added later
 * are writes without a word of their own). */
static bool route_writes(const sk_route *rt, int method) {
  if (method == SK_METHOD_PUT || method == SK_METHOD_PATCH || method == SK_METHOD_DELETE)
    return true;
  return method == SK_METHOD_POST && rt->id != SK_ROUTE_POSE && rt->id != SK_ROUTE_POSES;
}

bool sk_routes__conditional(sk_http_req *req) {
  return sk_http_header(req, "If-Match") != NULL || sk_http_header(req, "If-None-Match") != NULL;
}

/* Into m->etag: the version a successful write just published; "" when
 * it stored nothing (a DELETE, ?dryRun=true). */
static void published_etag(sk_http_req *req, sk_route_match *m) {
  m->etag[0] = 0;
  const char *dry = sk_http_query(req, "dryRun");
  sk_cache *c = m->routes->cache;
  if (req->method_id == SK_METHOD_DELETE || (dry != NULL && strcmp(dry, "true") == 0) ||
      sk_cache_stored_only(c, m->id))
    return;
  sk_cache_entry *e = sk_cache_get(c, m->id); /* published on this thread just now: in memory */
  if (e != NULL)
    sk_etag_format(m->routes->etag_epoch, e->version, m->etag);
  sk_cache_entry_unref(e);
}

/* sk_http's decorate: the headers every answer of the request carries.
 * CORS for an allowed Origin; the skeleton version: after a write, the
 * version it published (ETag); else the version the request read or was
 * checked against (ETag on the skeleton itself, 304 and 412;
 * Skinner-Skeleton-ETag on the answers computed from it, e.g. poses). */
static const char *const *decorate(sk_http_req *req, int status) {
  sk_route_match *m = req->data;
  size_t n = 0;
  if (m->routes->cfg.cors != NULL) {
    m->hdr[n++] = "Vary";
    m->hdr[n++] = "Origin";
  }
  if (m->cors_allow != NULL) {
    m->hdr[n++] = "Access-Control-Allow-Origin";
    m->hdr[n++] = m->cors_allow;
    m->hdr[n++] = "Access-Control-Expose-Headers";
    m->hdr[n++] = SK_CORS_EXPOSE_HEADERS;
  }
  const sk_route *rt = m->route;
  bool ok = status >= 200 && status < 300;
  if (rt != NULL && rt->per_id && m->id_ok && req->method_id != SK_METHOD_OPTIONS) {
    const char *name = rt->id == SK_ROUTE_SKELETON ? "ETag" : "Skinner-Skeleton-ETag";
    if (ok && route_writes(rt, req->method_id)) {
      published_etag(req, m);
      name = "ETag";
    } else if (status == 304 || status == 412) {
      name = "ETag";
    } else if (!ok) {
      name = NULL;
    }
    if (name != NULL && m->etag[0] != 0) {
      m->hdr[n++] = name;
      m->hdr[n++] = m->etag;
    }
  }
  m->hdr[n] = NULL;
  return m->hdr;
}

void sk_routes__decorate_init(sk_routes *r, sk_http_req *req, sk_route_match *m) {
  m->routes = r;
  m->cors_allow = sk_cors_allow(r->cfg.cors, sk_http_header(req, "Origin"));
  req->decorate = decorate;
}

/* OPTIONS: a CORS preflight (Origin and Access-Control-Request-Method),
 * or a plain OPTIONS answered with the route's Allow. Looks nothing up:
 * it answers the same for every id, with or without a token. */
void sk_routes__options(sk_http_req *req, const sk_route_match *m) {
  char allow[80], detail[256];
  sk_routes__allow_text(m->route, allow, sizeof allow);
  const char *origin = sk_http_header(req, "Origin");
  const char *method = sk_http_header(req, "Access-Control-Request-Method");
  if (origin == NULL || method == NULL) {
    snprintf(allow + strlen(allow), sizeof allow - strlen(allow), ", OPTIONS");
    const char *hdr[] = {"Allow", allow, NULL};
    sk_http_respond(req, 204, NULL, (void *)"", 0, false, hdr);
    return;
  }
  if (m->cors_allow == NULL) {
    if (m->routes->cfg.cors == NULL)
      snprintf(detail, sizeof detail, "cross-origin requests are off; start skinnerd with --cors-origin %.180s", origin);
    else
      snprintf(detail, sizeof detail, "the origin %.180s is not in --cors-origin", origin);
    sk_problem_send(req, 403, "origin-not-allowed", "Origin not allowed", detail, "", 0, 0, NULL);
    return;
  }
  int me = sk_metrics_method(method);
  if (me == SK_METHOD_OTHER || me == SK_METHOD_OPTIONS || !(m->route->methods & (1u << me))) {
    const char *hdr[] = {"Allow", allow, NULL};
    snprintf(detail, sizeof detail, "Access-Control-Request-Method %.60s is not allowed here; use %s", method, allow);
    sk_problem_send(req, 405, "method-not-allowed", "Method not allowed", detail, "", 0, 0, hdr);
    return;
  }
  char bad[64];
  if (!sk_cors_headers_ok(sk_http_header(req, "Access-Control-Request-Headers"), bad, sizeof bad)) {
    snprintf(detail, sizeof detail, "the request header %s is not allowed; allowed: %s", bad, SK_CORS_ALLOW_HEADERS);
    sk_problem_send(req, 403, "header-not-allowed", "Header not allowed", detail, "", 0, 0, NULL);
    return;
  }
  const char *hdr[] = {"Access-Control-Allow-Methods", allow, "Access-Control-Allow-Headers", SK_CORS_ALLOW_HEADERS,
                       "Access-Control-Max-Age", SK_CORS_MAX_AGE, NULL};
  sk_http_respond(req, 204, NULL, (void *)"", 0, false, hdr);
}

static void precondition_failed(sk_http_req *req, const char *field, const char *cur) {
  char detail[200];
  if (cur == NULL)
    snprintf(detail, sizeof detail, "%s: the skeleton does not exist", field);
  else
    snprintf(detail, sizeof detail, "%s: the skeleton is now at version %s; GET it, then retry with that ETag", field,
             cur);
  sk_problem_send(req, 412, "precondition-failed", "Precondition failed", detail, "", 0, 0, NULL);
}

/* RFC 9110 13.2.2 on a /v1/skeletons/{id}... route: If-Match (strong),
 * then If-None-Match (weak), against the stored version, which goes into
 * m->etag. True when it answered: 412, 304 for a GET or HEAD, 400 for a
 * malformed field. A request whose answer would be 404 without them is
 * left to its handler (RFC 9110 13.2.1), except a PUT, which creates. */
bool sk_routes__preconditions(sk_routes *r, sk_http_req *req, sk_route_match *m) {
  m->etag[0] = 0;
  if (m->route == NULL || !m->route->per_id || !m->id_ok)
    return false;
  const char *im = sk_http_header(req, "If-Match"), *inm = sk_http_header(req, "If-None-Match");
  const int me = req->method_id;
  if (im == NULL && inm == NULL && (me == SK_METHOD_PUT || me == SK_METHOD_DELETE))
    return false; /* blind: no version to read (nor an evicted one to reload) */
  sk_cache_entry *e = sk_cache_get(r->cache, m->id);
  if (e != NULL)
    sk_etag_format(r->etag_epoch, e->version, m->etag);
  sk_cache_entry_unref(e);
  if ((im == NULL && inm == NULL) || (e == NULL && me != SK_METHOD_PUT))
    return false;
  const char *cur = e != NULL ? m->etag : NULL;
  int a = im != NULL ? sk_etag_match(im, cur, false) : 1;
  int b = inm != NULL ? sk_etag_match(inm, cur, true) : 0;
  if (a < 0 || b < 0) {
    sk_problem_send(req, 400, "invalid-request", "Invalid argument",
                    a < 0 ? "If-Match: expected * or a list of quoted entity tags, e.g. \"1a2b3c4d-7\""
                          : "If-None-Match: expected * or a list of quoted entity tags, e.g. \"1a2b3c4d-7\"",
                    "", 0, 0, NULL);
    return true;
  }
  if (a == 0) {
    precondition_failed(req, "If-Match", cur);
    return true;
  }
  if (b == 1) {
    if (me == SK_METHOD_GET || me == SK_METHOD_HEAD)
      sk_http_respond(req, 304, NULL, (void *)"", 0, false, NULL);
    else
      precondition_failed(req, "If-None-Match", cur);
    return true;
  }
  return false;
}

bool sk_routes__precondition_failed(sk_routes *r, sk_http_req *req) {
  sk_route_match *m = req->data;
  if (m == NULL || m->route == NULL || !route_writes(m->route, req->method_id))
    return false;
  return sk_routes__preconditions(r, req, m);
}
