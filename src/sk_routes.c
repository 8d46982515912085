/* sk_routes: HTTP to calls and calls to answers. This file holds the route
 * table (every route of API v1 at a glance), matching (once per request,
 * kept in req->data), the checks every route shares (access, method,
 * body type and size, answer format), dispatch, the operational routes and
 * the pure helpers the tests call. The resources' handlers live in
 * sk_routes_skeletons.c and sk_routes_poses.c, CORS and skeleton versions
 * (If-Match, ETag) in sk_routes_cond.c; errors go out through sk_problem. */
#include "sk_routes.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "sk_error.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_numfmt.h"
#include "sk_problem.h"
#include "sk_routes_int.h"
#include "sk_ui.h"

const char *const sk_routes__pose_offers[3] = {"application/json", "application/octet-stream",
                                               "application/x-skinner-mat3x4"};
static const char *const k_json_offer[] = {"application/json"};

/* ---- small pure helpers (public for tests) --------------------------------- */

void sk_routes_mat3x4(const float m[16], float dest[12]) { sk_frames_mat3x4(m, dest); }

/* A real with an integral value that an integer of jansson's holds exactly:
 * jansson prints it as "1.0", the integer 1 as "1". */
static bool integral_real(const json_t *v) {
  if (!json_is_real(v))
    return false;
  double d = json_real_value(v);
  return d > -9.2e18 && d < 9.2e18 && d == (double)(json_int_t)d;
}

/* true when `v` holds an integral real anywhere (the common body has none,
 * and then is hashed without a copy). */
static bool has_integral_real(const json_t *v) {
  if (integral_real(v))
    return true;
  size_t i;
  const char *key;
  json_t *x;
  if (json_is_array(v))
    json_array_foreach((json_t *)v, i, x) if (has_integral_real(x)) return true;
  if (json_is_object(v))
    json_object_foreach((json_t *)v, key, x) if (has_integral_real(x)) return true;
  return false;
}

/* Rewrites integral reals of `v` (owned by the caller) as integers, in place. */
static int integers_by_value(json_t *v) {
  size_t i;
  const char *key;
  json_t *x;
  if (json_is_array(v))
    json_array_foreach(v, i, x) {
      if (integral_real(x) ? json_array_set_new(v, i, json_integer((json_int_t)json_real_value(x)))
                           : integers_by_value(x))
        return SK_ENOMEM;
    }
  if (json_is_object(v))
    json_object_foreach(v, key, x) {
      if (integral_real(x) ? json_object_set_new(v, key, json_integer((json_int_t)json_real_value(x)))
                           : integers_by_value(x))
        return SK_ENOMEM;
    }
  return 0;
}

int sk_routes_content_id(const json_t *json, char dest[17]) {
  /* Numbers count by value: [1.0, 2, 3] and [1, 2, 3] are one document. A
   * body without integral reals hashes as it always did (stored ids stay). */
  json_t *canon = NULL;
  if (has_integral_real(json) && ((canon = json_deep_copy(json)) == NULL || integers_by_value(canon) != 0)) {
    json_decref(canon);
    return SK_ENOMEM;
  }
  char *text = json_dumps(canon != NULL ? canon : json, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
  json_decref(canon);
  if (text == NULL)
    return SK_ENOMEM;
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char *p = (const unsigned char *)text; *p; p++)
    h = (h ^ *p) * 1099511628211ull;
  free(text);
  snprintf(dest, 17, "%016llx", (unsigned long long)h);
  return 0;
}

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
  double q[8];
  int spec[8];
  if (n > 8)
    n = 8;
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


/* ---- answers ----------------------------------------------------------------- */

void sk_routes__respond_json(sk_http_req *req, int status, sk_strbuf *b, const char *const *headers) {
  if (b->failed) {
    sk_strbuf_free(b);
    sk_problem(req, SK_ENOMEM, "", "out of memory writing the answer");
    return;
  }
  size_t len = b->len;
  void *data = b->data;
  memset(b, 0, sizeof *b);
  if (data == NULL) { /* empty buffer: never happens for JSON, but stay safe */
    sk_http_respond(req, status, SK_ROUTES_CT_JSON, (void *)"", 0, false, headers);
    return;
  }
  sk_http_respond(req, status, SK_ROUTES_CT_JSON, data, len, true, headers);
}



/* ---- request helpers the resources share ------------------------------------------------------------ */

json_t *sk_routes__load_body(sk_http_req *req) {
  json_t *j = NULL;
  sk_error err;
  sk_error_clear(&err);
  if (sk_json_load(req->body.data, req->body.len, &j, &err) != 0) {
    sk_problem_err(req, &err, SK_ESYNTAX);
    return NULL;
  }
  return j;
}

int sk_routes__load_pooled(const sk_routes *r, const char *text, size_t len, json_t **out, size_t *reserved,
                           sk_error *err) {
  *out = NULL;
  *reserved = 0;
  size_t bound = sk_json_tree_bound(text, len);
  if (sk_budget_reserve(r->cfg.budget, bound) != 0)
    return sk_error_set(err, SK_EBUSY, "",
                        "parsing this %zu-byte body takes up to %zu bytes, more than the memory budget "
                        "(--memory-mb) has now; retry later",
                        len, bound);
  *reserved = bound;
  return sk_json_load(text, len, out, err);
}

sk_cache_entry *sk_routes__entry_or_404(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  sk_cache_entry *e = m->id_ok ? sk_cache_get(r->cache, m->id) : NULL;
  if (e == NULL && m->id_ok && sk_cache_evicted(r->cache, m->id))
    sk_problem(req, SK_ENOTFOUND, "", "skeleton \"%s\" was evicted under --cache-mb: re-send PUT /v1/skeletons/%s",
            m->id, m->id);
  else if (e == NULL)
    sk_problem(req, SK_ENOTFOUND, "", "no skeleton with id \"%s\"", m->id_ok ? m->id : "(invalid id)");
  return e;
}

int sk_routes__check_keys(const json_t *obj, const char *const *allowed, sk_error *err) {
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)obj, key, val) {
    bool ok = false;
    for (const char *const *a = allowed; *a && !ok; a++)
      ok = strcmp(*a, key) == 0;
    if (!ok) {
      char p[SK_ERROR_POINTER_MAX] = "";
      sk_pointer_push(p, sizeof p, key);
      return sk_error_set(err, SK_EUNKNOWN, p, "unknown field \"%s\"", key);
    }
  }
  return 0;
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



/* ---- operational routes ------------------------------------------------------------- */

static void respond_static_json(sk_http_req *req, int status, const char *text) {
  sk_http_respond(req, status, SK_ROUTES_CT_JSON, (void *)text, strlen(text), false, NULL);
}

static void get_healthz(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  (void)r, (void)m;
  respond_static_json(req, 200, "{\"status\":\"ok\"}");
}

static void get_readyz(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  (void)m;
  if (sk_http_stopping(req->http))
    respond_static_json(req, 503, "{\"status\":\"stopping\"}");
  else if (sk_cache_store_full(r->cache)) /* until a put succeeds again */
    respond_static_json(req, 503, "{\"status\":\"out-of-storage\"}");
  else
    respond_static_json(req, 200, "{\"status\":\"ready\"}");
}

static void get_metrics(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
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
                         .memory_limit_bytes = bs.limit,
                         .memory_used_bytes = bs.used,
                         .memory_high_bytes = bs.high,
                         .memory_refused = bs.refused,
                         .cache_tombstones = st.tombstones};
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


/* ---- the route table ------------------------------------------------------------------ */

#define M(name) (1u << SK_METHOD_##name)


#define POSE_OFFERS sk_routes__pose_offers, 3
#define JSON_OFFER k_json_offer, 1

static const sk_route k_routes[] = {
    /* id               path              per id methods                   bodies             answers      admin  handle                pooled */
    {SK_ROUTE_HEALTHZ,   "/healthz",      false, M(GET) | M(HEAD),          BODY_NONE,         JSON_OFFER,  true,  get_healthz,          NULL},
    {SK_ROUTE_READYZ,    "/readyz",       false, M(GET) | M(HEAD),          BODY_NONE,         JSON_OFFER,  true,  get_readyz,           NULL},
    {SK_ROUTE_METRICS,   "/metrics",      false, M(GET) | M(HEAD),          BODY_NONE,         NULL, 0,     true,  get_metrics,          NULL},
    {SK_ROUTE_SKELETONS, "/v1/skeletons", false, M(GET) | M(HEAD) | M(POST), BODY_JSON_OR_GLTF, JSON_OFFER,  false, sk_routes__skeletons, NULL},
    {SK_ROUTE_SKELETON,  "",              true,  M(GET) | M(HEAD) | M(PUT) | M(DELETE), BODY_JSON_OR_GLTF, JSON_OFFER, false, sk_routes__skeleton, NULL},
    {SK_ROUTE_BONES,     "/bones",        true,  M(PATCH),                  BODY_JSON,         JSON_OFFER,  false, sk_routes__bones,     sk_routes__bones_pooled},
    {SK_ROUTE_REST,      "/rest",         true,  M(POST),                   BODY_JSON,         JSON_OFFER,  false, sk_routes__rest,      sk_routes__bones_pooled},
    {SK_ROUTE_POSE,      "/pose",         true,  M(POST),                   BODY_JSON,         POSE_OFFERS, false, sk_routes__pose,      sk_routes__pose_pooled},
    {SK_ROUTE_POSES,     "/poses",        true,  M(POST),                   BODY_JSON,         POSE_OFFERS, false, sk_routes__poses,     sk_routes__pose_pooled},
    {SK_ROUTE_OPS,       "/ops",          true,  M(POST),                   BODY_JSON,         JSON_OFFER,  false, sk_routes__ops,       sk_routes__ops_pooled},
    {SK_ROUTE_ANIMATION, "/animations/",  true,  M(GET) | M(HEAD),          BODY_NONE,         JSON_OFFER,  false, sk_routes__animation, NULL},
    {SK_ROUTE_ANIMATIONS, "/animations",  true,  M(POST),                   BODY_JSON,         JSON_OFFER,  false, sk_routes__animations, NULL},
};
#define NROUTES (sizeof k_routes / sizeof k_routes[0])

/* Matches the path (query string ignored) against the table. */
static void route_match(const char *url, sk_route_match *m) {
  memset(m, 0, sizeof *m);
  static const char base[] = "/v1/skeletons";
  const size_t blen = sizeof base - 1, plen = strcspn(url, "?#"), len = plen;
  for (size_t i = 0; i < NROUTES; i++)
    if (!k_routes[i].per_id && strlen(k_routes[i].path) == len && strncmp(url, k_routes[i].path, len) == 0) {
      m->route = &k_routes[i];
      return;
    }
  if (plen <= blen + 1 || strncmp(url, base, blen) != 0 || url[blen] != '/')
    return;
  const char *id = url + blen + 1;
  size_t rest = plen - blen - 1, idlen = strcspn(id, "/");
  if (idlen > rest)
    idlen = rest;
  const char *tail = id + idlen;
  const size_t tlen = rest - idlen;
  for (size_t i = 0; i < NROUTES && m->route == NULL; i++)
    if (k_routes[i].per_id && strlen(k_routes[i].path) == tlen && strncmp(tail, k_routes[i].path, tlen) == 0)
      m->route = &k_routes[i];
  /* /animations/{clip}: one more segment, any bytes but '/' */
  static const char anim[] = "/animations/";
  const size_t alen = sizeof anim - 1;
  if (m->route == NULL && tlen > alen && strncmp(tail, anim, alen) == 0 && memchr(tail + alen, '/', tlen - alen) == NULL)
    for (size_t i = 0; i < NROUTES && m->route == NULL; i++)
      if (k_routes[i].id == SK_ROUTE_ANIMATION) {
        m->route = &k_routes[i];
        m->clip_ok = tlen - alen <= SK_ROUTES_CLIP_MAX;
        if (m->clip_ok) {
          memcpy(m->clip, tail + alen, tlen - alen);
          m->clip[tlen - alen] = 0;
        }
      }
  if (m->route == NULL)
    return;
  m->id_ok = sk_cache_id_valid(id, idlen);
  if (m->id_ok) {
    memcpy(m->id, id, idlen);
    m->id[idlen] = 0;
  }
}

/* The 404 of a path no route matches. One rule for trailing slashes: a
 * path never takes one (not the collection, not a skeleton), and the
 * answer says so rather than redirecting, so every client sees the same
 * 404 whatever its redirect policy (docs/contract.md). */
static void no_route(sk_http_req *req) {
  const char *url = req->url;
  size_t len = strcspn(url, "?#");
  if (len > 1 && url[len - 1] == '/') {
    sk_problem(req, SK_ENOTFOUND, "", "no route for %s: paths take no trailing slash; use %.*s", url,
               (int)(len - 1 > 200 ? 200 : len - 1), url);
    return;
  }
  sk_problem(req, SK_ENOTFOUND, "", "no route for %s", url);
}

/* The query parameters each route takes (NULL-terminated); routes not
 * listed take none. NULL: any, for the operational routes, whose clients
 * are probes and scrapers (Prometheus' `params:`, cache-busting health
 * checks) that add parameters of their own. */
static const char *const *route_params(const sk_route *rt, int method) {
  static const char *const upload[] = {"skin", "dryRun", NULL};
  static const char *const none[] = {NULL};
  if (rt->admin)
    return NULL;
  if ((rt->id == SK_ROUTE_SKELETONS && method == SK_METHOD_POST) ||
      (rt->id == SK_ROUTE_SKELETON && method == SK_METHOD_PUT))
    return upload;
  return none;
}

/* Strict query strings, for every route in one place: a parameter the
 * route does not take (a typo such as ?skn=1 would otherwise do nothing)
 * or one given twice (which one wins is anyone's guess) is a 400 naming
 * it. True when refused (the answer is set). */
static bool query_refused(sk_http_req *req, const sk_route *rt) {
  const char *names[16];
  size_t n = sk_http_query_names(req, names, 16);
  if (n == 0)
    return false;
  const char *const *allowed = route_params(rt, req->method_id);
  if (allowed == NULL)
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

void sk_routes__allow_text(const sk_route *rt, char *buf, size_t cap) {
  static const char *const names[] = {
#define SK_METHOD_NAME(name, label) label,
      SK_METHOD_MAP(SK_METHOD_NAME)
#undef SK_METHOD_NAME
  };
  size_t n = 0;
  buf[0] = 0;
  for (int k = 0; k < SK_METHOD_COUNT; k++)
    if (rt->methods & (1u << k))
      n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%s", n ? ", " : "", names[k]);
}

static void free_match(void *data) { free(data); }

/* The request's match: made on the first call, kept in req->data. NULL
 * when out of memory (a 503 is answered). */
static sk_route_match *request_match(sk_http_req *req) {
  if (req->data != NULL)
    return req->data;
  sk_route_match *m = malloc(sizeof *m);
  if (m == NULL) {
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return NULL;
  }
  route_match(req->url, m);
  req->data = m;
  req->cleanup = free_match;
  req->route = m->route != NULL ? m->route->id : SK_ROUTE_OTHER;
  return m;
}

/* ---- the checks every route shares, before the body ---------------------------------- */

/* Framing, Host and bearer token (sk_access), before anything else looks
 * at the request. True when refused (the answer is set). */
static bool access_refused(sk_routes *r, sk_http_req *req, int route) {
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
      /* Browsers send preflights without credentials; OPTIONS reveals
       * nothing but the route's methods (no skeleton is looked up). */
      .scope = req->method_id == SK_METHOD_OPTIONS ? SK_SCOPE_NONE : sk_access_scope(route, req->method_id),
  };
  sk_access_verdict v;
  sk_access_check(r->cfg.access, &rq, &v);
  if (v.status == 0)
    return false;
  req->close_after = v.close; /* before the answer: it then says Connection: close */
  const char *hdr[] = {"WWW-Authenticate", v.www_authenticate, NULL};
  sk_problem_send(req, v.status, v.kind, v.title, v.detail, "", 0, 0, v.www_authenticate[0] ? hdr : NULL);
  return true;
}


static bool body_refused(sk_routes *r, sk_http_req *req, const sk_route *rt) {
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

static bool answer_refused(sk_http_req *req, const sk_route *rt) {
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

/* Headers are in: match, then reject what can be rejected without the body. */
static void on_begin(void *ctx, sk_http_req *req) {
  sk_routes *r = ctx;
  if (sk_ui_serve(req)) /* /ui and /ui/...: the preview page, answered whole here */
    return;
  sk_route_match *m = request_match(req);
  if (m == NULL)
    return;
  sk_routes__decorate_init(r, req, m); /* first: the refusals below carry CORS headers too */
  if (access_refused(r, req, req->route))
    return;
  const sk_route *rt = m->route;
  if (rt == NULL) {
    no_route(req);
    return;
  }
  if (req->method_id == SK_METHOD_OPTIONS) {
    sk_routes__options(req, m);
    return;
  }
  if (!(rt->methods & (1u << req->method_id))) {
    char allow[64], detail[128];
    sk_routes__allow_text(rt, allow, sizeof allow);
    const char *hdr[] = {"Allow", allow, NULL};
    snprintf(detail, sizeof detail, "%s is not allowed here; use %s", req->method, allow);
    sk_problem_send(req, 405, "method-not-allowed", "Method not allowed", detail, "", 0, 0, hdr);
    return;
  }
  if (query_refused(req, rt) || body_refused(r, req, rt) || answer_refused(req, rt))
    return;
}

static void dispatch(sk_routes *r, sk_http_req *req, sk_route_match *m) {
  if (sk_routes__preconditions(r, req, m))
    return;
  if (m->route->pooled != NULL && req->body.len >= r->cfg.pool_upload)
    m->route->pooled(r, req, m);
  else
    m->route->handle(r, req, m);
}

/* An evicted skeleton that is on disk (--data-dir) is read back on the
 * pool, not by the handler's sk_cache_get on the loop thread: a glTF
 * skeleton's clips are rebuilt from its file, ~350 ms for a 3 MB one. The
 * request is dispatched as usual once it is published. */
typedef struct reload_job {
  sk_routes *routes;
  char id[SK_CACHE_ID_MAX + 1];
  sk_cache_loaded loaded;
  int rc;
} reload_job;

static void reload_work(void *arg) {
  reload_job *rj = arg;
  rj->rc = sk_cache_load_stored(rj->routes->cache, rj->id, &rj->loaded);
}

static void reload_after(sk_http_req *req, void *arg, int status) {
  reload_job *rj = arg;
  sk_routes *r = rj->routes;
  if (status == SK_EBUSY) {
    sk_problem(req, SK_EBUSY, "", "the skeleton's reload waited past its deadline; retry later");
  } else {
    /* A record that cannot be read back stays stored-only: the handler's
     * sk_cache_get answers as it always did for it. */
    if (rj->rc == 0 && sk_cache_adopt_stored(r->cache, rj->id, &rj->loaded) != 0)
      sk_problem(req, SK_ENOMEM, "", "out of memory");
    sk_route_match *m = request_match(req);
    if (req->resp == NULL && m != NULL)
      dispatch(r, req, m);
  }
  sk_cache_loaded_clear(&rj->loaded); /* adopt took it all, unless it never ran */
  free(rj);
}

static int defer_reload(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  reload_job *rj = calloc(1, sizeof *rj);
  if (rj == NULL)
    return SK_ENOMEM;
  rj->routes = r;
  snprintf(rj->id, sizeof rj->id, "%s", m->id);
  if (sk_http_defer(req, reload_work, reload_after, rj) != 0) {
    free(rj);
    return SK_EBUSY; /* the handler reloads it inline, as before */
  }
  return 0;
}

/* The body is in (or refused): dispatch by the table. */
static void on_handle(void *ctx, sk_http_req *req) {
  sk_routes *r = ctx;
  sk_route_match *m = request_match(req);
  if (m == NULL)
    return;
  if (req->body_too_large) {
    sk_problem(req, SK_ETOOBIG, "", "the body is over the limit of %zu bytes (--max-body)", r->cfg.max_body);
    return;
  }
  if (req->over_budget) {
    sk_problem(req, SK_EBUSY, "", "the body does not fit in the memory budget (--memory-mb) now; retry later");
    return;
  }
  if (m->route == NULL) {
    no_route(req);
    return;
  }
  /* A blind PUT or DELETE needs no stored version; a conditional one is
   * checked against it (sk_routes__preconditions). */
  bool blind = (req->method_id == SK_METHOD_PUT || req->method_id == SK_METHOD_DELETE) && !sk_routes__conditional(req);
  if (m->id_ok && !blind && sk_cache_stored_only(r->cache, m->id) && defer_reload(r, req, m) == 0)
    return; /* dispatched once the skeleton is back in memory */
  dispatch(r, req, m);
}

static void on_complete(void *ctx, sk_http_req *req) {
  sk_routes *r = ctx;
  if (req->status == 0)
    return; /* the client left without an answer */
  double secs = (double)(uv_hrtime() - req->start_ns) * 1e-9;
  sk_metrics_observe(r->metrics, req->route, req->method_id, req->status, secs);
}

/* The public listener: with an admin listener, /metrics stays off it. */
static void on_begin_public(void *ctx, sk_http_req *req) {
  sk_routes *r = ctx;
  if (r->cfg.metrics_admin_only && strncmp(req->url, "/metrics", 8) == 0 && strchr("?#", req->url[8]) != NULL) {
    req->route = SK_ROUTE_OTHER;
    sk_problem(req, SK_ENOTFOUND, "", "/metrics is served on the admin listener only (--admin-listen)");
    return;
  }
  on_begin(ctx, req);
}

/* The admin listener: the operational routes and nothing else, so its
 * small connection budget is never spent on the API. */
static void on_begin_admin(void *ctx, sk_http_req *req) {
  const sk_route_match *m = request_match(req);
  if (m == NULL)
    return;
  if (m->route == NULL || !m->route->admin) {
    req->route = SK_ROUTE_OTHER;
    sk_problem(req, SK_ENOTFOUND, "", "the admin listener serves /healthz, /readyz and /metrics only");
    return;
  }
  on_begin(ctx, req);
}

sk_http_handler sk_routes_handler(sk_routes *r) {
  sk_http_handler h = {r, on_begin_public, on_handle, on_complete};
  return h;
}

sk_http_handler sk_routes_admin_handler(sk_routes *r) {
  sk_http_handler h = {r, on_begin_admin, on_handle, on_complete};
  return h;
}

void sk_routes_set_listener(sk_routes *r, sk_http *public_http) { r->listener = public_http; }

int sk_routes_create(const sk_routes_config *cfg, sk_cache *cache, sk_metrics *metrics, sk_routes **out) {
  *out = NULL;
  sk_routes *r = calloc(1, sizeof *r);
  if (r == NULL)
    return SK_ENOMEM;
  r->cfg = *cfg;
  if (r->cfg.max_body == 0)
    r->cfg.max_body = 1u << 20;
  if (r->cfg.max_bones == 0)
    r->cfg.max_bones = 1024;
  if (r->cfg.max_batch == 0)
    r->cfg.max_batch = 1024;
  if (r->cfg.inline_limit == 0)
    r->cfg.inline_limit = 250;
  if (r->cfg.cost.max_poses == 0)
    r->cfg.cost.max_poses = r->cfg.max_batch;
  sk_cost_limits_fill(&r->cfg.cost);
  if (r->cfg.max_skeleton == 0)
    r->cfg.max_skeleton = SK_GLTF_MAX_SKELETON_BYTES;
  if (r->cfg.sample == NULL)
    r->cfg.sample = sk_frames_sample_default;
  if (r->cfg.pool_upload == 0)
    r->cfg.pool_upload = 32u << 10;
  r->cache = cache;
  r->metrics = metrics;
  /* Random, so that no ETag of an earlier run (whose versions also
   * started at 1) matches one of this run. */
  if (getrandom(&r->etag_epoch, sizeof r->etag_epoch, GRND_NONBLOCK) != (ssize_t)sizeof r->etag_epoch)
    r->etag_epoch = (uint32_t)(uv_hrtime() ^ (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)r >> 4));
  *out = r;
  return 0;
}

void sk_routes_destroy(sk_routes *r) {
  if (r == NULL)
    return;
  sk_frames_scratch_close(&r->sc);
  free(r);
}

