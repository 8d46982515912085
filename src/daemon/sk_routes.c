/* sk_routes: HTTP to calls and calls to answers. This file holds the route
 * table (every route of API v1 at a glance: methods, query parameters,
 * body and answer types, handlers), matching (once per request, kept in
 * req->data), dispatch (inline or pooled, after a stored skeleton's reload)
 * and the helpers the handlers share. The checks every route shares
 * (access, method, query, body, answer type) are in sk_routes_checks.c,
 * the operational routes in sk_routes_admin.c, the resources' handlers in
 * sk_routes_skeletons.c, sk_routes_upload.c, sk_routes_poses.c,
 * sk_routes_anim.c and sk_routes_ops.c, CORS and skeleton versions
 * (If-Match, ETag) in sk_routes_cond.c; errors go out through sk_problem. */
#include "sk_routes.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
  return sk_json_load_budgeted(r->cfg.budget, text, len, out, reserved, err);
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

sk_cache_entry *sk_routes__clip_or_404(sk_routes *r, sk_http_req *req, const sk_route_match *m, size_t *clip) {
  sk_cache_entry *e = sk_routes__entry_or_404(r, req, m);
  if (e == NULL)
    return NULL;
  const sk_anim *anim = e->model->anim;
  if (!m->clip_ok || m->clip[0] == 0 || anim == NULL || sk_anim_find_clip(anim, m->clip, clip) != 0) {
    sk_problem(req, SK_ENOTFOUND, "", "skeleton \"%s\" has no clip \"%s\"%s", e->id,
               m->clip_ok ? m->clip : "(too long)", anim == NULL ? " (it has no animations)" : "");
    sk_cache_entry_unref(e);
    return NULL;
  }
  return e;
}

sk_cache_entry *sk_routes__body_and_entry(sk_routes *r, sk_http_req *req, const sk_route_match *m, json_t **j) {
  if ((*j = sk_routes__load_body(req)) == NULL)
    return NULL;
  sk_cache_entry *e = sk_routes__entry_or_404(r, req, m);
  if (e == NULL) {
    json_decref(*j);
    *j = NULL;
  }
  return e;
}

int sk_routes__check_keys(const json_t *obj, const char *const *allowed, sk_error *err) {
  return sk_json_check_keys(obj, "", allowed, NULL, err);
}

/* ---- the route table ------------------------------------------------------------------ */

#define M(name) (1u << SK_METHOD_##name)
#define ALL_METHODS (~0u)

/* Query parameters (the "query" column): the methods that take them, and
 * their names; every other method of the route takes none. */
#define Q(methods, ...) methods, (const char *const[]){__VA_ARGS__, NULL}
#define Q_NONE 0, NULL
/* Any parameter, for the operational routes: their clients are probes and
 * scrapers (Prometheus' `params:`, cache-busting health checks) that add
 * parameters of their own. */
#define Q_ANY ALL_METHODS, NULL

#define POSE_OFFERS sk_routes__pose_offers, 3
#define JSON_OFFER k_json_offer, 1
#define NO_OFFER NULL, 0

/* Every route of API v1. path: the whole path, or with "per id" the tail
 * after /v1/skeletons/{id} ("/animations/" takes one more segment, the
 * clip). A method not listed: 405; a query parameter not listed for the
 * method: 400; a body of another type: 415, over --max-body: 413; no
 * acceptable answer type: 406. Bodies of pool_upload bytes (32 KiB) and
 * more go to the pooled handler; admin routes are also on --admin-listen.
 * A path ending in '/' (not per id) is that path and every path under it.
 * Every row, and every path no row matches, passes the gate first
 * (on_begin): a route added here cannot be answered before it. */
/* clang-format off */
static const sk_route k_routes[] = {
/*   id                   path             per id  methods                                query (methods, names)        bodies             answers      admin  handle                 pooled */
    {SK_ROUTE_HEALTHZ,    "/healthz",      false,  M(GET) | M(HEAD),                      Q_ANY,                        BODY_NONE,         JSON_OFFER,  true,  sk_routes__healthz,    NULL},
    {SK_ROUTE_READYZ,     "/readyz",       false,  M(GET) | M(HEAD),                      Q_ANY,                        BODY_NONE,         JSON_OFFER,  true,  sk_routes__readyz,     NULL},
    {SK_ROUTE_METRICS,    "/metrics",      false,  M(GET) | M(HEAD),                      Q_ANY,                        BODY_NONE,         NO_OFFER,    true,  sk_routes__metrics,    NULL},
    {SK_ROUTE_SKELETONS,  "/v1/skeletons", false,  M(GET) | M(HEAD) | M(POST),            Q(M(POST), "skin", "dryRun"), BODY_JSON_OR_GLTF, JSON_OFFER,  false, sk_routes__skeletons,  NULL},
    {SK_ROUTE_SKELETON,   "",              true,   M(GET) | M(HEAD) | M(PUT) | M(DELETE), Q(M(PUT), "skin", "dryRun"),  BODY_JSON_OR_GLTF, JSON_OFFER,  false, sk_routes__skeleton,   NULL},
    {SK_ROUTE_BONES,      "/bones",        true,   M(PATCH),                              Q_NONE,                       BODY_JSON,         JSON_OFFER,  false, sk_routes__bones,      sk_routes__bones_pooled},
    {SK_ROUTE_REST,       "/rest",         true,   M(POST),                               Q_NONE,                       BODY_JSON,         JSON_OFFER,  false, sk_routes__rest,       sk_routes__bones_pooled},
    {SK_ROUTE_POSE,       "/pose",         true,   M(POST),                               Q_NONE,                       BODY_JSON,         POSE_OFFERS, false, sk_routes__pose,       sk_routes__pose_pooled},
    {SK_ROUTE_POSES,      "/poses",        true,   M(POST),                               Q_NONE,                       BODY_JSON,         POSE_OFFERS, false, sk_routes__poses,      sk_routes__pose_pooled},
    {SK_ROUTE_OPS,        "/ops",          true,   M(POST),                               Q_NONE,                       BODY_JSON,         JSON_OFFER,  false, sk_routes__ops,        sk_routes__ops_pooled},
    {SK_ROUTE_ANIMATION,  "/animations/",  true,   M(GET) | M(HEAD),                      Q_NONE,                       BODY_NONE,         JSON_OFFER,  false, sk_routes__animation,  NULL},
    {SK_ROUTE_ANIMATIONS, "/animations",   true,   M(POST),                               Q_NONE,                       BODY_JSON,         JSON_OFFER,  false, sk_routes__animations, sk_routes__animations_pooled},
    /* the clip's segment is matched as /animations/'s (route_match) */
    {SK_ROUTE_CLIP_BOUNDS, "/animations/{clip}/bounds", true, M(GET) | M(HEAD),          Q(M(GET) | M(HEAD), "fps"),   BODY_NONE,         JSON_OFFER,  false, sk_routes__clip_bounds, NULL},
    /* /animations/{clip}/rootMotion: matched by route_match, counted as the clip's detail */
    {SK_ROUTE_ANIMATION,  "/animations/{clip}/rootMotion", true, M(GET) | M(HEAD), Q(M(GET) | M(HEAD), "source", "extractRotation", "samplesPerSecond", "minimumTravel", "minimumTurn", "directionSnapAngle", "extractLateralMotion", "rootNode", "contactNodes"), BODY_NONE, JSON_OFFER, false, sk_routes__root_motion, NULL},
    {SK_ROUTE_STREAM,     "/stream",       true,   M(GET),                                Q(M(GET), "format", "animation", "fps", "frames", "speed"), BODY_NONE, NO_OFFER, false, sk_routes__stream,     NULL},
    /* the preview page (sk_ui): counted under "other", never needs a token (sk_routes__access_refused) */
    {SK_ROUTE_OTHER,      "/ui",           false,  M(GET) | M(HEAD),                      Q_ANY,                        BODY_NONE,         NO_OFFER,    false, sk_routes__ui,         NULL},
    {SK_ROUTE_OTHER,      "/ui/",          false,  M(GET) | M(HEAD),                      Q_ANY,                        BODY_NONE,         NO_OFFER,    false, sk_routes__ui,         NULL},
    /* the contract (proto/, embedded by sk_ui): counted under "other", scope read as any other GET */
    {SK_ROUTE_OTHER,      "/openapi.yaml", false,  M(GET) | M(HEAD),                      Q_ANY,                        BODY_NONE,         NO_OFFER,    false, sk_routes__spec,       NULL},
    {SK_ROUTE_OTHER,      "/schemas/",     false,  M(GET) | M(HEAD),                      Q_ANY,                        BODY_NONE,         NO_OFFER,    false, sk_routes__spec,       NULL},
};
/* clang-format on */
#define NROUTES (sizeof k_routes / sizeof k_routes[0])

const sk_route *sk_routes__table(size_t *n) {
  *n = NROUTES;
  return k_routes;
}

void sk_routes__ui(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  (void)r, (void)m;
  sk_ui_answer(req);
}

void sk_routes__spec(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  (void)r, (void)m;
  sk_ui_spec_answer(req);
}

/* A row's path matches [url, url + len): exactly, or as a prefix when it
 * ends in '/'. One pass, no strlen: every request tries every row, and
 * most differ from the URL in their first bytes. */
static bool path_matches(const char *path, const char *url, size_t len) {
  size_t i = 0;
  while (path[i] != 0 && i < len && path[i] == url[i])
    i++;
  return path[i] == 0 && (i == len || (i > 0 && path[i - 1] == '/'));
}

/* [s, s + n) equals the whole of `path` (s holds no NUL before n). */
static bool equals_path(const char *s, size_t n, const char *path) { return strncmp(s, path, n) == 0 && path[n] == 0; }

/* Matches the path (query string ignored) against the table. */
static void route_match(const char *url, sk_route_match *m) {
  memset(m, 0, sizeof *m);
  static const char base[] = "/v1/skeletons";
  const size_t blen = sizeof base - 1, plen = strcspn(url, "?#"), len = plen;
  for (size_t i = 0; i < NROUTES; i++)
    if (!k_routes[i].per_id && path_matches(k_routes[i].path, url, len)) {
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
    if (k_routes[i].per_id && equals_path(tail, tlen, k_routes[i].path))
      m->route = &k_routes[i];
  /* /animations/{clip}, …/{clip}/bounds, …/{clip}/rootMotion: the clip
   * segment (any bytes but '/'), then the row whose path ends with what
   * follows it */
  static const char anim[] = "/animations/";
  const size_t alen = sizeof anim - 1;
  if (m->route == NULL && tlen > alen && strncmp(tail, anim, alen) == 0) {
    const char *seg = tail + alen, *slash = memchr(seg, '/', tlen - alen);
    const size_t clen = slash != NULL ? (size_t)(slash - seg) : tlen - alen, sublen = tlen - alen - clen;
    for (size_t i = 0; i < NROUTES && m->route == NULL && clen > 0; i++) {
      const char *path = k_routes[i].path, *psub = path + alen;
      if (!k_routes[i].per_id || strncmp(path, anim, alen) != 0)
        continue;
      if (strncmp(psub, "{clip}", 6) == 0)
        psub += 6;
      if (!equals_path(seg + clen, sublen, psub))
        continue;
      m->route = &k_routes[i];
      m->clip_ok = clen <= SK_ROUTES_CLIP_MAX;
      if (m->clip_ok) {
        memcpy(m->clip, seg, clen);
        m->clip[clen] = 0;
      }
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
 * when out of memory (a 503 is answered, and the connection closes: the
 * gate has not seen the request's framing). */
static sk_route_match *request_match(sk_http_req *req) {
  if (req->data != NULL)
    return req->data;
  sk_route_match *m = malloc(sizeof *m);
  if (m == NULL) {
    req->close_after = true;
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return NULL;
  }
  route_match(req->url, m);
  req->data = m;
  req->cleanup = free_match;
  req->route = m->route != NULL ? m->route->id : SK_ROUTE_OTHER;
  return m;
}

/* The listener a request came in on: the admin one serves the admin
 * rows only; with one, /metrics is off the public one. */
enum { LISTENER_PUBLIC, LISTENER_ADMIN };

/* The route as `listener` serves it: NULL when it serves none there; *why
 * then names the listener's rule (NULL: no route at all). */
static const sk_route *served_here(const sk_routes *r, const sk_route *rt, int listener, const char **why) {
  *why = NULL;
  if (rt == NULL)
    return NULL;
  if (listener == LISTENER_ADMIN && !rt->admin)
    *why = "the admin listener serves /healthz, /readyz and /metrics only";
  else if (listener == LISTENER_PUBLIC && rt->id == SK_ROUTE_METRICS && r->cfg.metrics_admin_only)
    *why = "/metrics is served on the admin listener only (--admin-listen)";
  return *why == NULL ? rt : NULL;
}

/* Headers are in. The gate comes first for every request, whatever it
 * asks for (a row of the table, a path no row matches, a row this listener
 * does not serve): CORS decoration, then framing, Host and the bearer
 * token (sk_routes__access_refused). Nothing answers a request before it,
 * so a request whose framing is in doubt is refused and its connection
 * closed before a byte past its headers is read. Then what can be
 * rejected without the body. */
static void on_begin(sk_routes *r, sk_http_req *req, int listener) {
  sk_route_match *m = request_match(req);
  if (m == NULL)
    return;
  sk_routes__decorate_init(r, req, m); /* first: the refusals below carry CORS headers too */
  const char *why;
  const sk_route *rt = served_here(r, m->route, listener, &why);
  if (rt != m->route) { /* not served here: no route, for the gate's scope, the metrics and handle() */
    m->route = NULL;
    req->route = SK_ROUTE_OTHER;
  }
  if (sk_routes__access_refused(r, req, rt))
    return;
  if (why != NULL) {
    sk_problem(req, SK_ENOTFOUND, "", "%s", why);
    return;
  }
  if (rt == NULL) {
    no_route(req);
    return;
  }
  if (req->method_id == SK_METHOD_OPTIONS) {
    sk_routes__options(req, m);
    return;
  }
  if (sk_routes__method_refused(req, rt) || sk_routes__query_refused(req, rt) || sk_routes__body_refused(r, req, rt) ||
      sk_routes__answer_refused(req, rt))
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
    /* A damaged record is dropped (logged, counted), so the handler's 404
     * and the listing agree; one whose parse does not fit the budget now
     * stays stored-only and is answered 503. */
    if (rj->rc == SK_EFORMAT)
      sk_cache_drop_damaged(r->cache, rj->id);
    if (rj->rc == SK_EBUSY || rj->rc == SK_ENOMEM)
      sk_problem(req, SK_EBUSY, "",
                 "reading skeleton \"%s\" back from the data directory does not fit in the memory budget "
                 "(--memory-mb) now; retry later",
                 rj->id);
    else if (rj->rc == 0 && sk_cache_adopt_stored(r->cache, rj->id, &rj->loaded) != 0)
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
    return SK_EBUSY;
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
  if (m->id_ok && !blind && sk_cache_stored_only(r->cache, m->id)) {
    int rc = defer_reload(r, req, m);
    if (rc == 0)
      return; /* dispatched once the skeleton is back in memory */
    if (rc == SK_EBUSY) { /* not inline on the loop: a read-back is a glTF import */
      sk_problem(req, SK_EBUSY, "", "too many jobs in flight to read skeleton \"%s\" back; retry later", m->id);
      return;
    }
  }
  dispatch(r, req, m);
}

static void on_complete(void *ctx, sk_http_req *req) {
  sk_routes *r = ctx;
  if (req->status == 0)
    return; /* the client left without an answer */
  double secs = (double)(uv_hrtime() - req->start_ns) * 1e-9;
  sk_metrics_observe(r->metrics, req->route, req->method_id, req->status, secs);
}

static void on_begin_public(void *ctx, sk_http_req *req) { on_begin(ctx, req, LISTENER_PUBLIC); }

/* The admin listener: the operational routes and nothing else, so its
 * small connection budget is never spent on the API. */
static void on_begin_admin(void *ctx, sk_http_req *req) { on_begin(ctx, req, LISTENER_ADMIN); }

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
    r->cfg.max_body = SK_HTTP_MAX_BODY_DEFAULT;
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
    r->cfg.sample = sk_frames_sample_range;
  if (r->cfg.pool_upload == 0)
    r->cfg.pool_upload = 32u << 10;
  if (r->cfg.stall_ms == 0)
    r->cfg.stall_ms = 10000;
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
  sk_routes__memo_clear(r);
  free(r);
}

