#include "sk_routes.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sk_error.h"
#include "sk_eval.h"
#include "sk_fastpose.h"
#include "sk_frames.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_kernel.h"
#include "sk_numfmt.h"
#include "sk_problem.h"
#include "sk_ui.h"

struct sk_routes {
  sk_routes_config cfg;
  sk_cache *cache;     /* borrowed */
  sk_metrics *metrics; /* borrowed */
  sk_frames_scratch sc; /* loop thread only: reused by every inline pose and batch */
  sk_http *listener;   /* borrowed: the public listener, for /metrics; may be NULL */
};

#define CT_JSON "application/json"

static const char *const k_pose_offers[] = {"application/json", "application/octet-stream",
                                            "application/x-skinner-mat3x4"};
static const char *const k_json_offer[] = {"application/json"};

/* ---- small pure helpers (public for tests) --------------------------------- */

void sk_routes_mat3x4(const float m[16], float dest[12]) { sk_frames_mat3x4(m, dest); }

int sk_routes_content_id(const json_t *json, char dest[17]) {
  char *text = json_dumps(json, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
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

static void respond_json(sk_http_req *req, int status, sk_strbuf *b, const char *const *headers) {
  if (b->failed) {
    sk_strbuf_free(b);
    sk_problem(req, SK_ENOMEM, "", "out of memory writing the answer");
    return;
  }
  size_t len = b->len;
  void *data = b->data;
  memset(b, 0, sizeof *b);
  if (data == NULL) { /* empty buffer: never happens for JSON, but stay safe */
    sk_http_respond(req, status, CT_JSON, (void *)"", 0, false, headers);
    return;
  }
  sk_http_respond(req, status, CT_JSON, data, len, true, headers);
}

static void respond_static_json(sk_http_req *req, int status, const char *text) {
  sk_http_respond(req, status, CT_JSON, (void *)text, strlen(text), false, NULL);
}

/* ---- routing ----------------------------------------------------------------- */

typedef struct {
  int route;
  char id[SK_CACHE_ID_MAX + 1];
  bool id_ok; /* the id segment matched the id syntax */
} match;

/* Splits the path (query string ignored) into a route. */
static void route_match(const char *url, match *m) {
  memset(m, 0, sizeof *m);
  m->route = SK_ROUTE_OTHER;
  size_t plen = strcspn(url, "?#");
  if (plen == 8 && strncmp(url, "/healthz", 8) == 0) {
    m->route = SK_ROUTE_HEALTHZ;
    return;
  }
  if (plen == 7 && strncmp(url, "/readyz", 7) == 0) {
    m->route = SK_ROUTE_READYZ;
    return;
  }
  if (plen == 8 && strncmp(url, "/metrics", 8) == 0) {
    m->route = SK_ROUTE_METRICS;
    return;
  }
  static const char base[] = "/v1/skeletons";
  size_t blen = sizeof base - 1;
  if (plen < blen || strncmp(url, base, blen) != 0)
    return;
  if (plen == blen || (plen == blen + 1 && url[blen] == '/')) {
    m->route = SK_ROUTE_SKELETONS;
    return;
  }
  if (url[blen] != '/')
    return;
  const char *id = url + blen + 1;
  size_t rest = plen - blen - 1;
  size_t idlen = strcspn(id, "/");
  if (idlen > rest)
    idlen = rest;
  const char *tail = id + idlen;
  size_t tlen = rest - idlen;
  int route = SK_ROUTE_OTHER;
  if (tlen == 0)
    route = SK_ROUTE_SKELETON;
  else if (tlen == 6 && strncmp(tail, "/bones", 6) == 0)
    route = SK_ROUTE_BONES;
  else if (tlen == 5 && strncmp(tail, "/rest", 5) == 0)
    route = SK_ROUTE_REST;
  else if (tlen == 5 && strncmp(tail, "/pose", 5) == 0)
    route = SK_ROUTE_POSE;
  else if (tlen == 6 && strncmp(tail, "/poses", 6) == 0)
    route = SK_ROUTE_POSES;
  if (route == SK_ROUTE_OTHER)
    return;
  m->route = route;
  m->id_ok = sk_cache_id_valid(id, idlen);
  if (m->id_ok) {
    memcpy(m->id, id, idlen);
    m->id[idlen] = 0;
  }
}

/* Allowed methods per route, as the Allow header lists them. */
static const char *route_allow(int route) {
  switch (route) {
  case SK_ROUTE_SKELETONS: return "GET, HEAD, POST";
  case SK_ROUTE_SKELETON: return "GET, HEAD, PUT, DELETE";
  case SK_ROUTE_BONES: return "PATCH";
  case SK_ROUTE_REST:
  case SK_ROUTE_POSE:
  case SK_ROUTE_POSES: return "POST";
  case SK_ROUTE_HEALTHZ:
  case SK_ROUTE_READYZ:
  case SK_ROUTE_METRICS: return "GET, HEAD";
  default: return "";
  }
}

static bool method_allowed(int route, int method) {
  const char *allow = route_allow(route);
  const char *name = NULL;
  switch (method) {
  case SK_METHOD_GET: name = "GET"; break;
  case SK_METHOD_HEAD: name = "HEAD"; break;
  case SK_METHOD_POST: name = "POST"; break;
  case SK_METHOD_PUT: name = "PUT"; break;
  case SK_METHOD_PATCH: name = "PATCH"; break;
  case SK_METHOD_DELETE: name = "DELETE"; break;
  default: return false;
  }
  for (const char *p = allow; *p;) {
    size_t n = strcspn(p, ",");
    if (n == strlen(name) && strncmp(p, name, n) == 0)
      return true;
    p += n;
    p += strspn(p, ", ");
  }
  return false;
}

static bool route_takes_body(int route, int method) {
  return method == SK_METHOD_PUT || method == SK_METHOD_POST || method == SK_METHOD_PATCH ||
         (route == SK_ROUTE_OTHER && method != SK_METHOD_GET);
}

/* Headers are in: reject what can be rejected without the body. */
/* 1 for model/gltf-binary, 2 for model/gltf+json (any parameters, any
 * case), else 0. */
static int gltf_type(const char *ct) {
  if (ct == NULL)
    return 0;
  size_t n = strcspn(ct, "; \t");
  if (n == strlen("model/gltf-binary") && strncasecmp(ct, "model/gltf-binary", n) == 0)
    return 1;
  if (n == strlen("model/gltf+json") && strncasecmp(ct, "model/gltf+json", n) == 0)
    return 2;
  return 0;
}

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
      .scope = sk_access_scope(route, req->method_id),
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

static void on_begin(void *ctx, sk_http_req *req) {
  sk_routes *r = ctx;
  if (sk_ui_serve(req)) /* /ui and /ui/...: the preview page, answered whole here */
    return;
  match m;
  route_match(req->url, &m);
  req->route = m.route;
  if (access_refused(r, req, m.route))
    return;
  if (m.route == SK_ROUTE_OTHER) {
    sk_problem(req, SK_ENOTFOUND, "", "no route for %s", req->url);
    return;
  }
  if (!method_allowed(m.route, req->method_id)) {
    const char *hdr[] = {"Allow", route_allow(m.route), NULL};
    char detail[128];
    snprintf(detail, sizeof detail, "%s is not allowed here; use %s", req->method, route_allow(m.route));
    sk_problem_send(req, 405, "method-not-allowed", "Method not allowed", detail, "", 0, 0, hdr);
    return;
  }
  if (route_takes_body(m.route, req->method_id)) {
    const char *cl = sk_http_header(req, "Content-Length");
    const char *te = sk_http_header(req, "Transfer-Encoding");
    unsigned long long len = 0;
    if (cl != NULL) {
      len = strtoull(cl, NULL, 10);
      if (len > r->cfg.max_body) {
        sk_problem(req, SK_ETOOBIG, "", "the body has %llu bytes; the limit is %zu (--max-body)", len, r->cfg.max_body);
        return;
      }
    }
    const char *ct = sk_http_header(req, "Content-Type");
    bool skeleton_body = (m.route == SK_ROUTE_SKELETONS || m.route == SK_ROUTE_SKELETON);
    if ((len > 0 || te != NULL) && !sk_routes_is_json(ct) && !(skeleton_body && gltf_type(ct) != 0)) {
      sk_problem(req, SK_EUNSUPPORTED, "", "%s", skeleton_body
                  ? "skeleton bodies are application/json, model/gltf-binary or model/gltf+json"
                  : "bodies must be application/json");
      return;
    }
  }
  if (m.route == SK_ROUTE_POSE || m.route == SK_ROUTE_POSES) {
    if (sk_routes_negotiate(sk_http_header(req, "Accept"), k_pose_offers, 3) < 0) {
      sk_problem_send(req, 406, "not-acceptable", "Not acceptable",
                   "this route answers application/json, application/octet-stream or application/x-skinner-mat3x4",
                   "", 0, 0, NULL);
      return;
    }
  } else if (m.route != SK_ROUTE_METRICS && req->method_id != SK_METHOD_DELETE &&
             sk_routes_negotiate(sk_http_header(req, "Accept"), k_json_offer, 1) < 0) {
    sk_problem_send(req, 406, "not-acceptable", "Not acceptable", "this route answers application/json", "", 0, 0, NULL);
    return;
  }
}

/* ---- writers ------------------------------------------------------------------ */

static void write_f64(sk_strbuf *b, double v) {
  char t[SK_NUMFMT_F64_MAX + 1];
  size_t n = sk_numfmt_f64(v, t);
  sk_strbuf_append(b, t, n);
}

static void write_uint(sk_strbuf *b, unsigned long long v) {
  char t[32];
  int n = snprintf(t, sizeof t, "%llu", v);
  sk_strbuf_append(b, t, (size_t)n);
}

static void write_int(sk_strbuf *b, long long v) {
  char t[32];
  int n = snprintf(t, sizeof t, "%lld", v);
  sk_strbuf_append(b, t, (size_t)n);
}

/* {"id","bones","order"} */
static void write_summary(sk_strbuf *b, const sk_cache_entry *e) {
  sk_strbuf_append(b, "{\"id\":", 6);
  sk_json_write_string(b, e->id);
  sk_strbuf_append(b, ",\"bones\":", 9);
  write_uint(b, e->bone_count);
  sk_strbuf_append(b, ",\"order\":", 9);
  sk_eval_write_order(e->skel, b);
  sk_strbuf_append(b, "}", 1);
}

/* {"id","order","bones":[{"name","parent","index","length"?,"local","bind","rest"}]} */
static void write_skeleton(sk_strbuf *b, const sk_cache_entry *e) {
  const sk_skeleton *s = e->skel;
  sk_strbuf_append(b, "{\"id\":", 6);
  sk_json_write_string(b, e->id);
  sk_strbuf_append(b, ",\"order\":", 9);
  sk_eval_write_order(s, b);
  sk_strbuf_append(b, ",\"bones\":[", 10);
  for (size_t i = 0; i < s->count; i++) {
    const sk_bone *bn = &s->bones[i];
    sk_strbuf_append(b, i ? ",{\"name\":" : "{\"name\":", i ? 9 : 8);
    sk_json_write_string(b, bn->name);
    sk_strbuf_append(b, ",\"parent\":", 10);
    if (bn->parent >= 0)
      sk_json_write_string(b, s->bones[bn->parent].name);
    else
      sk_strbuf_append(b, "null", 4);
    sk_strbuf_append(b, ",\"index\":", 9);
    write_int(b, bn->index);
    if (bn->has_length) {
      sk_strbuf_append(b, ",\"length\":", 10);
      write_f64(b, bn->length);
    }
    sk_strbuf_append(b, ",\"local\":", 9);
    sk_strbuf_append_f32_array(b, bn->local.matrix, 16);
    sk_strbuf_append(b, ",\"bind\":", 8);
    sk_strbuf_append_f32_array(b, bn->bind, 16);
    sk_strbuf_append(b, ",\"rest\":", 8);
    sk_strbuf_append_f32_array(b, bn->rest, 16);
    sk_strbuf_append(b, "}", 1);
  }
  sk_strbuf_append(b, "],\"animations\":", 15);
  if (e->anim != NULL)
    sk_anim_write_clips_json(e->anim, b);
  else
    sk_strbuf_append(b, "[]", 2);
  sk_strbuf_append(b, "}", 1);
}

/* ---- request helpers ------------------------------------------------------------ */

/* Loads the body as JSON; answers the problem itself on failure. */
static json_t *load_body(sk_http_req *req) {
  json_t *j = NULL;
  sk_error err;
  sk_error_clear(&err);
  if (sk_json_load(req->body.data, req->body.len, &j, &err) != 0) {
    sk_problem_err(req, &err, SK_ESYNTAX);
    return NULL;
  }
  return j;
}

/* The stored entry for the matched id, or a 404 answered. */
static sk_cache_entry *entry_or_404(sk_routes *r, sk_http_req *req, const match *m) {
  sk_cache_entry *e = m->id_ok ? sk_cache_get(r->cache, m->id) : NULL;
  if (e == NULL && m->id_ok && sk_cache_evicted(r->cache, m->id))
    sk_problem(req, SK_ENOTFOUND, "", "skeleton \"%s\" was evicted under --cache-mb: re-send PUT /v1/skeletons/%s",
            m->id, m->id);
  else if (e == NULL)
    sk_problem(req, SK_ENOTFOUND, "", "no skeleton with id \"%s\"", m->id_ok ? m->id : "(invalid id)");
  return e;
}

static int check_keys(const json_t *obj, const char *const *allowed, sk_error *err) {
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

/* ---- skeleton routes ---------------------------------------------------------------- */

static int cmp_entry_id(const void *a, const void *b) {
  return strcmp((*(const sk_cache_entry *const *)a)->id, (*(const sk_cache_entry *const *)b)->id);
}

typedef struct {
  const sk_cache_entry **v;
  size_t n;
} entry_list;

static void collect(void *arg, const sk_cache_entry *e) {
  entry_list *l = arg;
  l->v[l->n++] = e;
}

static void get_list(sk_routes *r, sk_http_req *req) {
  sk_cache_stats st;
  sk_cache_get_stats(r->cache, &st);
  entry_list l = {calloc(st.stored ? st.stored : 1, sizeof *l.v), 0};
  if (l.v == NULL) {
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  sk_cache_foreach(r->cache, collect, &l);
  qsort(l.v, l.n, sizeof *l.v, cmp_entry_id);
  sk_strbuf b = {0};
  sk_strbuf_append(&b, "{\"skeletons\":[", 14);
  for (size_t i = 0; i < l.n; i++) {
    sk_strbuf_append(&b, i ? ",{\"id\":" : "{\"id\":", i ? 7 : 6);
    sk_json_write_string(&b, l.v[i]->id);
    sk_strbuf_append(&b, ",\"bones\":", 9);
    write_uint(&b, l.v[i]->bone_count);
    sk_strbuf_append(&b, "}", 1);
  }
  sk_strbuf_append(&b, "]}", 2);
  free(l.v);
  respond_json(req, 200, &b, NULL);
}

/* PUT (id given) and POST (id derived). */
static void store_and_answer(sk_routes *r, sk_http_req *req, const char *id, bool derived_id, sk_skeleton *s,
                             sk_anim *anim, const sk_cache_source *src);

/* A skeleton upload (glTF, or a JSON skeleton) built on the thread pool
 * when its body is large: a multi-MB file takes tens of ms to parse and
 * build, too long for the loop thread. The body and the ?skin= value
 * belong to the request, which stays put while it is suspended; the store
 * happens back on the loop thread. Small bodies run the same code inline. */
typedef struct upload_job {
  sk_routes *routes;
  const char *data, *skin; /* borrowed from the request */
  size_t len;
  bool gltf;
  char id[SK_CACHE_ID_MAX + 1];
  bool has_id;             /* PUT: id given; POST: derived (JSON: into id) */
  sk_skeleton *s;
  sk_anim *anim;
  sk_error err;
  int rc;
  size_t reserved;         /* bytes of the memory budget held for the import */
} upload_job;

static void gltf_finish(sk_routes *r, sk_http_req *req, const char *given_id, const char *skin, sk_skeleton *s,
                        sk_anim *anim);

/* Imports a glTF skin: its in-memory size is estimated from the file's
 * counts and refused past --max-skeleton-mb, then reserved in the memory
 * budget (503 when it does not fit now) before anything is built. The
 * reservation is held until the answer (the cache counts the stored
 * skeleton itself). Any thread: the budget is atomic. */
static int import_gltf(const sk_routes *r, upload_job *uj) {
  sk_gltf *g;
  size_t skin, estimate = 0;
  int rc = sk_gltf_parse(uj->data, uj->len, &g, &uj->err);
  if (rc)
    return rc;
  if (!(rc = sk_gltf_find_skin(g, uj->skin, &skin, &uj->err)) &&
      !(rc = sk_gltf_estimate(g, skin, r->cfg.max_skeleton, &estimate, &uj->err))) {
    if (sk_budget_reserve(r->cfg.budget, estimate) != 0)
      rc = sk_error_set(&uj->err, SK_EBUSY, "",
                        "the skeleton (an estimated %zu bytes) does not fit in the memory budget (--memory-mb) now; "
                        "retry later",
                        estimate);
    else
      uj->reserved = estimate;
  }
  if (!rc)
    rc = sk_gltf_load_skin(g, skin, r->cfg.max_bones, &uj->s, &uj->anim, &uj->err);
  sk_gltf_destroy(g);
  return rc;
}

static void upload_work(void *arg) {
  upload_job *uj = arg;
  const sk_routes *r = uj->routes;
  if (uj->gltf) {
    uj->rc = import_gltf(r, uj);
    return;
  }
  json_t *j = NULL;
  if ((uj->rc = sk_json_load(uj->data, uj->len, &j, &uj->err)) != 0)
    return;
  uj->rc = sk_json_parse_skeleton(j, "", r->cfg.max_bones, &uj->s, &uj->err);
  if (!uj->rc && !uj->has_id && sk_routes_content_id(j, uj->id) != 0) {
    sk_skeleton_destroy(uj->s);
    uj->s = NULL;
    uj->rc = sk_error_set(&uj->err, SK_ENOMEM, "", "out of memory");
  }
  json_decref(j);
}

static void upload_after(sk_http_req *req, void *arg, int status) {
  upload_job *uj = arg;
  static const sk_cache_source json_source = {NULL, 0, NULL};
  if (status == SK_EBUSY)
    sk_problem(req, SK_EBUSY, "", "the upload waited past its deadline; retry later");
  else if (uj->rc)
    sk_problem_err(req, &uj->err, uj->gltf ? SK_EFORMAT : uj->rc);
  else if (uj->gltf)
    gltf_finish(uj->routes, req, uj->has_id ? uj->id : NULL, uj->skin, uj->s, uj->anim);
  else
    store_and_answer(uj->routes, req, uj->id, !uj->has_id, uj->s, NULL, &json_source);
  sk_budget_release(uj->routes->cfg.budget, uj->reserved);
  free(uj);
}

/* PUT/POST of a skeleton. A glTF/GLB body gives the skin picked by ?skin=
 * (default 0) with its clips, refused before anything is built when its
 * estimate is over --max-skeleton-mb. Bodies of pool_upload bytes and
 * more (32 KiB) are parsed and built on the pool. */
static void put_skeleton(sk_routes *r, sk_http_req *req, const char *given_id) {
  upload_job *uj = calloc(1, sizeof *uj);
  if (uj == NULL) {
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  uj->routes = r;
  uj->data = req->body.data ? req->body.data : "";
  uj->len = req->body.len;
  uj->gltf = gltf_type(sk_http_header(req, "Content-Type")) != 0;
  uj->skin = uj->gltf ? sk_http_query(req, "skin") : NULL;
  uj->has_id = given_id != NULL;
  if (given_id != NULL)
    snprintf(uj->id, sizeof uj->id, "%s", given_id);
  if (req->body.len >= r->cfg.pool_upload) {
    if (sk_http_defer(req, upload_work, upload_after, uj) != 0) {
      free(uj);
      sk_problem(req, SK_EBUSY, "", "too many jobs in flight; retry later");
    }
    return;
  }
  upload_work(uj);
  upload_after(req, uj, 0);
}

/* Stores an imported glTF skin. A POST id hashes the file and the selector. */
static void gltf_finish(sk_routes *r, sk_http_req *req, const char *given_id, const char *skin, sk_skeleton *s,
                        sk_anim *anim) {
  char derived[17];
  const char *id = given_id;
  if (id == NULL) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the file, then the selector */
    for (size_t i = 0; i < req->body.len; i++)
      h = (h ^ (unsigned char)req->body.data[i]) * 1099511628211ull;
    for (const char *p = skin ? skin : ""; *p; p++)
      h = (h ^ (unsigned char)*p) * 1099511628211ull;
    snprintf(derived, sizeof derived, "%016llx", (unsigned long long)h);
    id = derived;
  }
  sk_cache_source src = {req->body.data, req->body.len, skin};
  store_and_answer(r, req, id, given_id == NULL, s, anim, &src);
}

/* The detail of a failed put; nothing was changed in any case. */
static const char *store_failure(int rc) {
  switch (rc) {
  case SK_ENOSPACE:
    return "the data directory is full or read-only (ENOSPC, EDQUOT, EFBIG or EROFS): nothing was changed";
  case SK_EIO: return "cannot write the skeleton to the data directory: nothing was changed";
  default: return "cannot store the skeleton";
  }
}

/* Publishes a new skeleton and answers 201/200 with its summary. */
static void store_and_answer(sk_routes *r, sk_http_req *req, const char *id, bool derived_id, sk_skeleton *s,
                             sk_anim *anim, const sk_cache_source *src) {
  bool replaced;
  sk_cache_entry *e;
  int rc = sk_cache_put_full(r->cache, id, s, anim, src, &replaced, &e);
  if (rc) {
    sk_problem(req, rc, "", "%s", store_failure(rc));
    return;
  }
  sk_strbuf b = {0};
  write_summary(&b, e);
  const char *gone[SK_CACHE_EVICTED_LIST];
  size_t ngone = sk_cache_last_evicted(r->cache, gone, SK_CACHE_EVICTED_LIST);
  if (ngone > 0 && b.len > 0) {
    /* Without a data directory those skeletons are gone: say which, so the
     * client knows what to send again ("evictedCount" when more than listed). */
    b.len--; /* the summary's closing brace */
    sk_strbuf_append(&b, ",\"evicted\":[", 12);
    for (size_t i = 0; i < ngone && i < SK_CACHE_EVICTED_LIST; i++) {
      if (i > 0)
        sk_strbuf_append(&b, ",", 1);
      sk_json_write_string(&b, gone[i]);
    }
    sk_strbuf_append(&b, "],\"evictedCount\":", 17);
    write_uint(&b, ngone);
    sk_strbuf_append(&b, "}", 1);
  }
  if (derived_id) {
    char loc[sizeof "/v1/skeletons/" + SK_CACHE_ID_MAX];
    snprintf(loc, sizeof loc, "/v1/skeletons/%s", id);
    const char *hdr[] = {"Location", loc, NULL};
    respond_json(req, 201, &b, hdr); /* headers are copied: loc may go */
  } else {
    respond_json(req, replaced ? 200 : 201, &b, NULL);
  }
  sk_cache_entry_unref(e);
}

static void get_skeleton(sk_routes *r, sk_http_req *req, const match *m) {
  sk_cache_entry *e = entry_or_404(r, req, m);
  if (e == NULL)
    return;
  sk_strbuf b = {0};
  write_skeleton(&b, e);
  sk_cache_entry_unref(e);
  respond_json(req, 200, &b, NULL);
}

static void delete_skeleton(sk_routes *r, sk_http_req *req, const match *m) {
  int rc = m->id_ok ? sk_cache_delete(r->cache, m->id) : SK_ENOTFOUND;
  if (rc == SK_EIO || rc == SK_ENOSPACE) {
    sk_problem(req, rc, "", "cannot remove the skeleton from the data directory%s",
            rc == SK_ENOSPACE ? " (read-only)" : "");
    return;
  }
  if (rc != 0) {
    sk_problem(req, SK_ENOTFOUND, "", "no skeleton with id \"%s\"", m->id_ok ? m->id : "(invalid id)");
    return;
  }
  sk_http_respond(req, 204, NULL, (void *)"", 0, false, NULL);
}

/* Publishes a changed clone and answers with the whole skeleton. */
static void publish(sk_routes *r, sk_http_req *req, const char *id, sk_skeleton *clone, sk_anim *anim) {
  sk_cache_entry *e;
  int rc = sk_cache_put_full(r->cache, id, clone, anim, NULL, NULL, &e);
  if (rc) {
    sk_problem(req, rc, "", "%s", store_failure(rc));
    return;
  }
  sk_strbuf b = {0};
  write_skeleton(&b, e);
  sk_cache_entry_unref(e);
  respond_json(req, 200, &b, NULL);
}

/* Ends a PATCH or /rest: on success publishes the changed copy `c` of
 * `e` (sharing its clips) and answers the whole skeleton; on failure drops
 * the copy and answers the problem. Releases `e` and `c` either way. */
static void finish_update(sk_routes *r, sk_http_req *req, sk_cache_entry *e, sk_skeleton *c, int rc,
                          const sk_error *err) {
  if (rc) {
    sk_skeleton_destroy(c);
    sk_cache_entry_unref(e);
    sk_problem_err(req, err, rc);
    return;
  }
  char id[SK_CACHE_ID_MAX + 1];
  memcpy(id, e->id, sizeof id);
  sk_anim *anim = sk_anim_ref(e->anim);
  sk_cache_entry_unref(e);
  publish(r, req, id, c, anim);
}

/* Applies a PATCH /bones body to a copy of `base`: *out is the copy (new,
 * also on failure, when it may be NULL). Pure: any thread. */
static int patch_apply(const sk_skeleton *base, const json_t *j, sk_skeleton **out, sk_error *err) {
  static const char *const k_top[] = {"bones", NULL};
  static const char *const k_trs[] = {"matrix", "position", "rotation", "rotationQuaternion", "scaling", NULL};
  sk_skeleton *c = NULL;
  json_t *trs = NULL;
  sk_override *o = NULL;
  size_t no = 0;
  int rc = 0;
  const json_t *bones = json_object_get(j, "bones");
  if (!json_is_object(j))
    rc = sk_error_set(err, SK_ETYPE, "", "expected {\"bones\": {name: changes}}");
  else if ((rc = check_keys(j, k_top, err)) != 0)
    ;
  else if (bones == NULL)
    rc = sk_error_set(err, SK_EMISSING, "/bones", "a PATCH needs \"bones\"");
  else if (!json_is_object(bones))
    rc = sk_error_set(err, SK_ETYPE, "/bones", "expected an object of bone name -> changes");
  else if (sk_skeleton_clone(base, &c) != 0)
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  const char *name;
  json_t *spec;
  if (rc == 0) {
    json_object_foreach((json_t *)bones, name, spec) {
      char p[SK_ERROR_POINTER_MAX] = "/bones";
      sk_pointer_push(p, sizeof p, name);
      int32_t bone = sk_skeleton_find(c, name);
      if (bone < 0) {
        rc = sk_error_set(err, SK_ENOTFOUND, p, "no bone named \"%s\"", name);
        break;
      }
      if (!json_is_object(spec)) {
        rc = sk_error_set(err, SK_ETYPE, p, "expected an object of changes");
        break;
      }
      const char *key;
      json_t *val;
      trs = json_object();
      json_t *wrap = json_object();
      if (trs == NULL || wrap == NULL) {
        json_decref(wrap);
        rc = sk_error_set(err, SK_ENOMEM, p, "out of memory");
        break;
      }
      json_object_foreach(spec, key, val) {
        bool is_trs = false;
        for (const char *const *k = k_trs; *k; k++)
          is_trs |= strcmp(*k, key) == 0;
        if (is_trs)
          json_object_set(trs, key, val);
        else if (strcmp(key, "bind") != 0 && strcmp(key, "keepLocal") != 0 && strcmp(key, "rest") != 0) {
          size_t at = sk_pointer_push(p, sizeof p, key);
          rc = sk_error_set(err, SK_EUNKNOWN, p, "unknown field \"%s\"", key);
          p[at] = 0;
          break;
        }
      }
      float mat[16];
      const json_t *bind = json_object_get(spec, "bind"), *keep = json_object_get(spec, "keepLocal");
      const json_t *rest = json_object_get(spec, "rest");
      if (!rc && keep != NULL) {
        size_t at = sk_pointer_push(p, sizeof p, "keepLocal");
        if (!json_is_boolean(keep))
          rc = sk_error_set(err, SK_ETYPE, p, "expected true or false");
        else if (bind == NULL)
          rc = sk_error_set(err, SK_EMISSING, p, "\"keepLocal\" goes with \"bind\"");
        p[at] = 0;
      }
      if (!rc && json_object_size(trs) > 0) {
        if (json_object_set(wrap, name, trs) != 0)
          rc = sk_error_set(err, SK_ENOMEM, p, "out of memory");
        else if ((rc = sk_json_parse_overrides(c, wrap, "/bones", &o, &no, err)) == 0) {
          sk_skeleton_apply(c, o, no);
          free(o);
          o = NULL;
        }
      }
      if (!rc && bind != NULL) {
        size_t at = sk_pointer_push(p, sizeof p, "bind");
        rc = sk_json_floats(bind, 16, p, mat, err);
        if (!rc && sk_skeleton_set_bind(c, bone, mat, json_is_true(keep)) != 0)
          rc = sk_error_set(err, SK_ESINGULAR, p, "the absolute bind matrix of bone \"%s\" would not be invertible",
                            name);
        p[at] = 0;
      }
      if (!rc && rest != NULL) {
        size_t at = sk_pointer_push(p, sizeof p, "rest");
        rc = sk_json_floats(rest, 16, p, mat, err);
        if (!rc)
          sk_skeleton_set_rest(c, bone, mat);
        p[at] = 0;
      }
      json_decref(wrap);
      json_decref(trs);
      trs = NULL;
      if (rc)
        break;
    }
  }
  *out = c;
  return rc;
}

/* PATCH /bones: per bone, in key order: the local setters (matrix,
 * position, rotation, scaling, Babylon setter by setter, as the eval tool's
 * "set"), then bind (setBindMatrix, which also replaces the local matrix, or
 * updateMatrix with keepLocal), then rest (setRestPose) -- the order
 * proto/openapi.yaml documents.
 * Everything lands on a clone that replaces the stored version only when
 * every change succeeded. */
static void patch_bones(sk_routes *r, sk_http_req *req, const match *m) {
  json_t *j = load_body(req);
  if (j == NULL)
    return;
  sk_cache_entry *e = entry_or_404(r, req, m);
  if (e == NULL) {
    json_decref(j);
    return;
  }
  sk_error err;
  sk_error_clear(&err);
  sk_skeleton *c = NULL;
  int rc = patch_apply(e->skel, j, &c, &err);
  json_decref(j);
  finish_update(r, req, e, c, rc, &err);
}

/* Applies a /rest body (NULL: none) to a copy of `base`, as patch_apply. */
static int rest_apply(const sk_skeleton *base, const json_t *j, sk_skeleton **out, sk_error *err) {
  static const char *const k_top[] = {"bones", NULL};
  int rc = 0;
  const json_t *bones = j ? json_object_get(j, "bones") : NULL;
  sk_skeleton *c = NULL;
  if (j != NULL && !json_is_object(j))
    rc = sk_error_set(err, SK_ETYPE, "", "expected {} or {\"bones\": [names]}");
  else if (j != NULL && (rc = check_keys(j, k_top, err)) != 0)
    ;
  else if (bones != NULL && !json_is_array(bones))
    rc = sk_error_set(err, SK_ETYPE, "/bones", "expected an array of bone names");
  else if (sk_skeleton_clone(base, &c) != 0)
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  if (!rc && bones == NULL)
    sk_skeleton_return_to_rest(c);
  for (size_t i = 0; !rc && bones != NULL && i < json_array_size(bones); i++) {
    char p[SK_ERROR_POINTER_MAX] = "/bones";
    sk_pointer_push_index(p, sizeof p, i);
    const char *name = json_string_value(json_array_get(bones, i));
    int32_t bone = name ? sk_skeleton_find(c, name) : -1;
    if (name == NULL)
      rc = sk_error_set(err, SK_ETYPE, p, "expected a bone name");
    else if (bone < 0)
      rc = sk_error_set(err, SK_ENOTFOUND, p, "no bone named \"%s\"", name);
    else
      sk_skeleton_bone_return_to_rest(c, bone);
  }
  *out = c;
  return rc;
}

static void post_rest(sk_routes *r, sk_http_req *req, const match *m) {
  json_t *j = NULL;
  if (req->body.len > 0 && (j = load_body(req)) == NULL)
    return;
  sk_cache_entry *e = entry_or_404(r, req, m);
  if (e == NULL) {
    json_decref(j);
    return;
  }
  sk_error err;
  sk_error_clear(&err);
  sk_skeleton *c = NULL;
  int rc = rest_apply(e->skel, j, &c, &err);
  json_decref(j);
  finish_update(r, req, e, c, rc, &err);
}

/* ---- poses -------------------------------------------------------------------------- */

_Static_assert((int)SK_FRAMES_JSON == (int)SK_FMT_JSON && (int)SK_FRAMES_F32 == (int)SK_FMT_F32 &&
                   (int)SK_FRAMES_MAT3X4 == (int)SK_FMT_MAT3X4,
               "formats");

/* How sk_frames answers in `fmt`: always exact. (--fast-binary is accepted
 * and ignored: the float32 kernel measured no faster than the exact one on
 * Fox, docs/design.md.) */
static sk_frames_opts frames_opts(const sk_routes *r, int fmt, unsigned threads) {
  (void)r;
  return (sk_frames_opts){.fmt = fmt, .precision = SK_FRAMES_EXACT, .threads = threads};
}

static const char *fmt_type(int fmt) { return k_pose_offers[fmt]; }

/* "%zu" into buf (>= 21 bytes): snprintf's format parsing was ~400
 * instructions a header on the hottest path. */
static void decimal_size(char *buf, size_t v) {
  char t[24];
  size_t n = 0;
  do
    t[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  for (size_t i = 0; i < n; i++)
    buf[i] = t[n - 1 - i];
  buf[n] = '\0';
}

static void respond_poses(sk_routes *r, sk_http_req *req, const sk_skeleton *s, size_t n, int fmt, sk_strbuf *b) {
  sk_metrics_add_poses(r->metrics, n, n * (s->count + 1));
  if (b->failed) {
    sk_strbuf_free(b);
    sk_problem(req, SK_ENOMEM, "", "out of memory writing the answer");
    return;
  }
  if (fmt == SK_FMT_JSON) {
    respond_json(req, 200, b, NULL);
    return;
  }
  char bones[24], poses[24], mats[24];
  decimal_size(bones, s->count);
  decimal_size(poses, n);
  decimal_size(mats, s->count + 1);
  const char *hdr[] = {"Skinner-Bone-Count", bones, "Skinner-Pose-Count", poses, "Skinner-Matrix-Count", mats, NULL};
  size_t len = b->len;
  void *data = b->data;
  memset(b, 0, sizeof *b);
  if (data == NULL)
    sk_http_respond(req, 200, fmt_type(fmt), (void *)"", 0, false, hdr);
  else
    sk_http_respond(req, 200, fmt_type(fmt), data, len, true, hdr);
}

/* Binary answers carry final matrices only: a pose that asks for absolute
 * or local matrices in a binary answer gets a 422 at its "output" rather
 * than a silently smaller answer. Returns true when it answered. Otherwise
 * sets every pose's output to final. For a batch (`batch`), pose i is at
 * /poses/<first + i>; else the pose is the body itself. */
static int binary_outputs(sk_pose *poses, size_t n, int fmt, size_t first, bool batch, sk_error *err) {
  if (fmt == SK_FMT_JSON)
    return 0;
  for (size_t i = 0; i < n; i++) {
    if (poses[i].output & (SK_OUT_ABSOLUTE | SK_OUT_LOCAL)) {
      char p[SK_ERROR_POINTER_MAX] = "";
      if (batch) {
        snprintf(p, sizeof p, "/poses");
        sk_pointer_push_index(p, sizeof p, first + i);
      }
      sk_pointer_push(p, sizeof p, "output");
      return sk_error_set(err, SK_ERANGE, p, "binary answers carry final matrices only; ask for application/json to get "
                                              "absolute or local matrices");
    }
    poses[i].output = SK_OUT_FINAL;
  }
  return 0;
}

static bool reject_binary_outputs(sk_http_req *req, sk_pose *poses, size_t n, int fmt, size_t first, bool batch) {
  sk_error err;
  sk_error_clear(&err);
  if (binary_outputs(poses, n, fmt, first, batch, &err) == 0)
    return false;
  sk_problem_err(req, &err, SK_ERANGE);
  return true;
}

/* A batch answer larger than this is produced while the client reads it. */
#define SK_ROUTES_STREAM_MIN (1u << 20)
/* A streamed answer's pending text is refilled up to about this much
 * (plus at most one pose) per producer call: the loop thread's slice. */
#define SK_ROUTES_STREAM_SLICE (64u << 10)
/* libmicrohttpd's own buffer per streamed answer. */
#define SK_ROUTES_STREAM_BLOCK (32u << 10)

typedef struct batch_job batch_job;
/* A batch on the thread pool: everything the worker touches is in here. */
struct batch_job {
  sk_routes *routes;
  sk_cache_entry *entry; /* a reference: the version the batch started on */
  sk_pose *poses;
  size_t n;
  int fmt, rc;
  sk_strbuf out;
  /* Clip work over the loop bound (sk_cost) is parsed on the pool too: */
  json_t *json;  /* the body, owned until parsed; NULL once poses are in */
  bool batch;    /* json is {"poses": [...]} (else one pose object) */
  bool bare;     /* one pose object that gave one pose: no "results" wrapper */
  sk_error err;  /* a parse error found on the pool */
  const char *body; /* a large body parsed on the pool: borrowed from the request */
  size_t body_len;
  char id[SK_CACHE_ID_MAX + 1]; /* for the 404 of a body parsed on the pool */
  size_t pool_reserved; /* budget bytes a pool job reserved for the poses and answer it built */
  bool stream_on_loop;  /* parsed on the pool, answered as a stream by the loop */
};
static void run_batch(sk_routes *r, sk_http_req *req, batch_job *bj);
static size_t batch_answer_bound(const batch_job *bj, size_t *poses_bytes);
static void stream_batch(sk_routes *r, sk_http_req *req, batch_job *bj);
static void batch_free(batch_job *bj);
static void defer_parse(sk_routes *r, sk_http_req *req, sk_cache_entry *e, json_t *j, int fmt, bool batch);

/* sk_cost's answer formats are sk_routes' SK_FMT_* */
_Static_assert((int)SK_COST_JSON == (int)SK_FMT_JSON && (int)SK_COST_F32 == (int)SK_FMT_F32 &&
                   (int)SK_COST_MAT3X4 == (int)SK_FMT_MAT3X4,
               "formats");

/* Parses one pose object that may name clips (the /pose body): sampling
 * happens here, so it runs where sk_cost said it may. */
static int parse_single(const sk_routes *r, batch_job *bj, const json_t *j, sk_error *err) {
  int rc = sk_pose_parse_anim(bj->entry->skel, bj->entry->anim, j, "", NULL, &bj->poses, &bj->n, err);
  if (!rc && bj->n > r->cfg.max_batch)
    rc = sk_error_set(err, SK_ETOOBIG, "", "%zu frames; the limit is %zu (--max-batch)", bj->n, r->cfg.max_batch);
  if (!rc)
    rc = binary_outputs(bj->poses, bj->n, bj->fmt, 0, false, err);
  bj->bare = !rc && bj->n == 1;
  return rc;
}

static void post_pose(sk_routes *r, sk_http_req *req, const match *m) {
  int fmt = sk_routes_negotiate(sk_http_header(req, "Accept"), k_pose_offers, 3);
  sk_pose pose;
  sk_cache_entry *e = m->id_ok ? sk_cache_get(r->cache, m->id) : NULL;
  int rc = e ? sk_fastpose_parse(e->skel, req->body.data, req->body.len, &pose) : SK_FASTPOSE_DECLINE;
  if (rc == SK_ENOMEM) {
    sk_cache_entry_unref(e);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  if (rc == SK_FASTPOSE_DECLINE) {
    /* jansson decides, in the order a client expects: 400, then 404, then 4xx of the pose */
    sk_cache_entry_unref(e);
    json_t *j = load_body(req);
    if (j == NULL)
      return;
    if ((e = entry_or_404(r, req, m)) == NULL) {
      json_decref(j);
      return;
    }
    sk_error err;
    sk_error_clear(&err);
    sk_cost cost = {0};
    if (sk_cost_add_pose_json(&cost, &r->cfg.cost, e->skel, e->anim, j, "", fmt, &err) != 0) {
      json_decref(j);
      sk_cache_entry_unref(e);
      sk_problem_err(req, &err, SK_ETOOBIG);
      return;
    }
    if (!sk_cost_inline(&cost, &r->cfg.cost)) {
      defer_parse(r, req, e, j, fmt, false);
      return;
    }
    sk_pose *poses = NULL;
    size_t n = 0;
    rc = sk_pose_parse_anim(e->skel, e->anim, j, "", NULL, &poses, &n, &err);
    json_decref(j);
    if (!rc && n > r->cfg.max_batch) {
      sk_pose_array_free(poses, n);
      rc = sk_error_set(&err, SK_ETOOBIG, "", "%zu frames; the limit is %zu (--max-batch)", n, r->cfg.max_batch);
    }
    if (rc) {
      sk_cache_entry_unref(e);
      sk_problem_err(req, &err, rc);
      return;
    }
    if (n != 1) {
      /* A frame range ("times", "from"/"to"/"fps"): one result per frame,
       * through the batch path like /poses. */
      batch_job *bj = calloc(1, sizeof *bj);
      if (bj == NULL) {
        sk_pose_array_free(poses, n);
        sk_cache_entry_unref(e);
        sk_problem(req, SK_ENOMEM, "", "out of memory");
        return;
      }
      bj->routes = r;
      bj->entry = e;
      bj->fmt = fmt;
      bj->poses = poses;
      bj->n = n;
      if (reject_binary_outputs(req, poses, n, fmt, 0, false)) {
        batch_free(bj);
        return;
      }
      run_batch(r, req, bj);
      return;
    }
    pose = poses[0];
    free(poses); /* the pose itself moved out */
  }
  if (reject_binary_outputs(req, &pose, 1, fmt, 0, false)) {
    sk_pose_close(&pose);
    sk_cache_entry_unref(e);
    return;
  }
  sk_strbuf b = {0};
  const sk_frames_opts fo = frames_opts(r, fmt, 1);
  if (sk_frames_eval(e, &pose, 1, &fo, &r->sc, &b) != 0)
    b.failed = 1;
  sk_pose_close(&pose);
  respond_poses(r, req, e->skel, 1, fmt, &b);
  sk_cache_entry_unref(e);
}


static void batch_free(batch_job *bj) {
  for (size_t i = 0; i < bj->n; i++)
    sk_pose_close(&bj->poses[i]);
  free(bj->poses);
  sk_cache_entry_unref(bj->entry);
  sk_strbuf_free(&bj->out);
  json_decref(bj->json);
  free(bj);
}

static void batch_work(void *arg) {
  batch_job *bj = arg;
  sk_frames_scratch sc = {0};
  const sk_frames_opts fo = frames_opts(bj->routes, bj->fmt, bj->routes->cfg.kernel_threads);
  if (bj->fmt == SK_FMT_JSON && !bj->bare)
    sk_strbuf_append(&bj->out, "{\"results\":[", 12);
  bj->rc = sk_frames_eval(bj->entry, bj->poses, bj->n, &fo, &sc, &bj->out);
  if (bj->fmt == SK_FMT_JSON && !bj->bare && !bj->rc && sk_strbuf_append(&bj->out, "]}", 2))
    bj->rc = SK_ENOMEM;
  sk_frames_scratch_close(&sc);
}

/* The pool's half of a body parsed there: the answer is costed against the
 * memory budget before it is built, as run_batch does on the loop. A
 * streamed answer is left to the loop (its producer runs there in slices);
 * any other is reserved (atomically: the budget is shared) and built here.
 * batch_after gives the reservation back once the answer is counted. */
static void pool_evaluate(batch_job *bj) {
  size_t poses_bytes, answer = batch_answer_bound(bj, &poses_bytes);
  if (answer > SK_ROUTES_STREAM_MIN && !bj->bare) {
    bj->stream_on_loop = true;
    return;
  }
  if (sk_budget_reserve(bj->routes->cfg.budget, poses_bytes + answer) != 0) {
    bj->rc = sk_error_set(&bj->err, SK_EBUSY, "",
                          "the batch (%zu poses, an answer of up to %zu bytes) does not fit in the memory budget "
                          "(--memory-mb) now; retry later",
                          bj->n, answer);
    return;
  }
  bj->pool_reserved = poses_bytes + answer;
  batch_work(bj);
}

static void batch_after(sk_http_req *req, void *arg, int status) {
  batch_job *bj = arg;
  sk_budget_release(bj->routes->cfg.budget, bj->pool_reserved);
  bj->pool_reserved = 0;
  if (status == 0 && bj->rc == 0 && bj->stream_on_loop) {
    size_t poses_bytes;
    batch_answer_bound(bj, &poses_bytes);
    if (sk_http_reserve(req, poses_bytes) != 0) {
      sk_problem(req, SK_EBUSY, "", "the batch (%zu poses) does not fit in the memory budget (--memory-mb) now; retry later",
              bj->n);
      batch_free(bj);
      return;
    }
    stream_batch(bj->routes, req, bj); /* takes bj */
    return;
  }
  if (status == SK_EBUSY)
    sk_problem(req, SK_EBUSY, "", "the batch waited past its deadline; retry later");
  else if (bj->err.code)
    sk_problem_err(req, &bj->err, bj->rc);
  else if (bj->rc)
    sk_problem(req, SK_ENOMEM, "", "out of memory evaluating the batch");
  else
    respond_poses(bj->routes, req, bj->entry->skel, bj->n, bj->fmt, &bj->out);
  batch_free(bj);
}

/* Estimated loop time to evaluate and encode a parsed batch, in us, from
 * per-matrix costs measured on the 2-core EPYC of issue 4 (loaded):
 * scalar core ~150 ns, batch kernel ~7 ns, JSON encoding of 16 floats
 * ~650 ns (sk_numfmt), binary copy ~1 ns. Above --inline-limit the batch
 * goes to the pool, whose hand-off (suspend, queue, resume, MHD run) costs
 * ~15-40 us: a 64-pose binary batch (~30 us) stays inline, the same batch
 * as JSON (~2.7 ms) does not. */
static double batch_cost_us(const batch_job *bj) {
  const sk_frames_opts fo = frames_opts(bj->routes, bj->fmt, 1);
  return sk_frames_cost_us(bj->entry, bj->poses, bj->n, &fo);
}

/* Parses the poses of a /poses body (already checked to be {"poses": [...]}
 * within --max-batch) into `bj`: frame ranges and clips are sampled here,
 * so it runs where sk_cost said it may. */
static int parse_batch(const sk_routes *r, batch_job *bj, const json_t *j, sk_error *err) {
  const json_t *poses = json_object_get(j, "poses");
  size_t n = json_array_size(poses);
  int fmt = bj->fmt, rc = 0;
  if ((bj->poses = calloc(n ? n : 1, sizeof *bj->poses)) == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  size_t cap = n;
  for (size_t i = 0; i < n && !rc; i++) {
    char p[SK_ERROR_POINTER_MAX] = "/poses";
    sk_pointer_push_index(p, sizeof p, i);
    sk_pose *item = NULL;
    size_t k = 0;
    rc = sk_pose_parse_anim(bj->entry->skel, bj->entry->anim, json_array_get(poses, i), p, NULL, &item, &k, err);
    if (rc)
      break;
    /* A frame range inside a batch contributes one pose per frame. */
    if (bj->n + k > r->cfg.max_batch) {
      sk_pose_array_free(item, k);
      rc = sk_error_set(err, SK_ETOOBIG, p, "the batch expands to more than %zu poses (--max-batch)",
                        r->cfg.max_batch);
      break;
    }
    if (bj->n + k > cap) {
      size_t ncap = (bj->n + k) * 2;
      sk_pose *grown = realloc(bj->poses, ncap * sizeof *grown);
      if (grown == NULL) {
        sk_pose_array_free(item, k);
        rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
        break;
      }
      bj->poses = grown;
      cap = ncap;
    }
    if (fmt != SK_FMT_JSON) {
      for (size_t f = 0; f < k; f++) {
        if (item[f].output & (SK_OUT_ABSOLUTE | SK_OUT_LOCAL)) {
          size_t at = sk_pointer_push(p, sizeof p, "output");
          rc = sk_error_set(err, SK_ERANGE, p, "binary answers carry final matrices only; ask for "
                                                "application/json to get absolute or local matrices");
          p[at] = 0;
          break;
        }
        item[f].output = SK_OUT_FINAL;
      }
      if (rc) {
        sk_pose_array_free(item, k);
        break;
      }
    }
    for (size_t f = 0; f < k; f++)
      bj->poses[bj->n++] = item[f];
    free(item); /* the poses moved into the batch */
  }
  return rc;
}

static void parse_work(void *arg) {
  batch_job *bj = arg;
  int rc = bj->batch ? parse_batch(bj->routes, bj, bj->json, &bj->err) : parse_single(bj->routes, bj, bj->json, &bj->err);
  json_decref(bj->json); /* the job's own reference: nothing else holds the body */
  bj->json = NULL;
  if (rc) {
    bj->rc = rc;
    return;
  }
  pool_evaluate(bj);
}

/* The /poses body's shape (400/422 in the order a client expects, then
 * --max-batch), then each pose's cost (sk_cost) into `cost`. */
static int batch_shape_cost(const sk_routes *r, const sk_cache_entry *e, const json_t *j, int fmt, sk_cost *cost,
                            sk_error *err) {
  static const char *const k_top[] = {"poses", NULL};
  int rc = 0;
  const json_t *poses = json_object_get(j, "poses");
  if (!json_is_object(j))
    rc = sk_error_set(err, SK_ETYPE, "", "expected {\"poses\": [pose, ...]}");
  else if ((rc = check_keys(j, k_top, err)) != 0)
    ;
  else if (poses == NULL)
    rc = sk_error_set(err, SK_EMISSING, "/poses", "a batch needs \"poses\"");
  else if (!json_is_array(poses))
    rc = sk_error_set(err, SK_ETYPE, "/poses", "expected an array of poses");
  else if (json_array_size(poses) > r->cfg.max_batch)
    rc = sk_error_set(err, SK_ETOOBIG, "/poses", "%zu poses; the limit is %zu (--max-batch)", json_array_size(poses),
                      r->cfg.max_batch);
  for (size_t i = 0; !rc && i < json_array_size(poses); i++) {
    char p[SK_ERROR_POINTER_MAX] = "/poses";
    sk_pointer_push_index(p, sizeof p, i);
    rc = sk_cost_add_pose_json(cost, &r->cfg.cost, e->skel, e->anim, json_array_get(poses, i), p, fmt, err);
  }
  return rc;
}

/* Evaluation and answer size of parsed poses (the fast parser's, or
 * already costed from JSON), before either is started. */
static int parsed_cost(const sk_routes *r, const batch_job *bj, const char *ptr, sk_error *err) {
  sk_cost cost = {0};
  for (size_t i = 0; i < bj->n; i++)
    if (sk_cost_add_poses(&cost, &r->cfg.cost, bj->entry->skel, 1, bj->poses[i].output, bj->fmt, ptr, err) != 0)
      return SK_ETOOBIG;
  return 0;
}

/* A pose request whose body is large (pool_upload bytes and more), all on
 * the pool: jansson takes ~50 ms a MB and the fast parser a few, too long
 * for the loop thread. The same steps, in the same order, as post_pose
 * and post_poses; `bj->entry` may be NULL (404 after the 400s). */
static void pose_body_work(void *arg) {
  batch_job *bj = arg;
  const sk_routes *r = bj->routes;
  sk_error *err = &bj->err;
  const char *ptr = bj->batch ? "/poses" : "";
  int rc;
  if (bj->batch && bj->entry != NULL &&
      sk_fastpose_parse_batch(bj->entry->skel, bj->body, bj->body_len, r->cfg.max_batch, &bj->poses, &bj->n) == 0) {
    rc = binary_outputs(bj->poses, bj->n, bj->fmt, 0, true, err);
  } else {
    json_t *j = NULL;
    sk_cost cost = {0};
    if ((rc = sk_json_load(bj->body, bj->body_len, &j, err)) != 0)
      ;
    else if (bj->entry == NULL)
      rc = sk_error_set(err, SK_ENOTFOUND, "", "no skeleton with id \"%s\"", bj->id);
    else if (bj->batch) {
      if ((rc = batch_shape_cost(r, bj->entry, j, bj->fmt, &cost, err)) == 0)
        rc = parse_batch(r, bj, j, err);
    } else if ((rc = sk_cost_add_pose_json(&cost, &r->cfg.cost, bj->entry->skel, bj->entry->anim, j, "", bj->fmt,
                                           err)) == 0) {
      rc = parse_single(r, bj, j, err);
    }
    json_decref(j);
  }
  if (!rc)
    rc = parsed_cost(r, bj, ptr, err);
  if (rc) {
    bj->rc = rc;
    return;
  }
  pool_evaluate(bj);
}

/* Hands a large pose body to the pool (pose_body_work). */
static void defer_pose_body(sk_routes *r, sk_http_req *req, const match *m, bool batch) {
  batch_job *bj = calloc(1, sizeof *bj);
  if (bj == NULL) {
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  bj->routes = r;
  bj->entry = m->id_ok ? sk_cache_get(r->cache, m->id) : NULL;
  snprintf(bj->id, sizeof bj->id, "%s", m->id_ok ? m->id : "(invalid id)");
  bj->fmt = sk_routes_negotiate(sk_http_header(req, "Accept"), k_pose_offers, 3);
  bj->batch = batch;
  bj->body = req->body.data;
  bj->body_len = req->body.len;
  if (sk_http_defer(req, pose_body_work, batch_after, bj) != 0) {
    batch_free(bj);
    sk_problem(req, SK_EBUSY, "", "too many batches in flight; retry later");
  }
}

static void post_poses(sk_routes *r, sk_http_req *req, const match *m) {
  int fmt = sk_routes_negotiate(sk_http_header(req, "Accept"), k_pose_offers, 3);
  batch_job *bj = NULL;
  sk_cache_entry *e = m->id_ok ? sk_cache_get(r->cache, m->id) : NULL;
  if (e != NULL && (bj = calloc(1, sizeof *bj)) != NULL) {
    int fr = sk_fastpose_parse_batch(e->skel, req->body.data, req->body.len, r->cfg.max_batch, &bj->poses, &bj->n);
    if (fr == 0) {
      bj->routes = r;
      bj->entry = e;
      bj->fmt = fmt;
      if (reject_binary_outputs(req, bj->poses, bj->n, fmt, 0, true)) {
        batch_free(bj);
        return;
      }
      run_batch(r, req, bj);
      return;
    }
    free(bj);
    bj = NULL;
  }
  sk_cache_entry_unref(e);
  /* the slow path decides errors, in the order a client expects: 400, 404, then the batch's own */
  json_t *j = load_body(req);
  if (j == NULL)
    return;
  if ((e = entry_or_404(r, req, m)) == NULL) {
    json_decref(j);
    return;
  }
  sk_error err;
  sk_error_clear(&err);
  sk_cost cost = {0};
  int rc = batch_shape_cost(r, e, j, fmt, &cost, &err);
  if (!rc && !sk_cost_inline(&cost, &r->cfg.cost)) {
    defer_parse(r, req, e, j, fmt, true);
    return;
  }
  if (!rc) {
    bj = calloc(1, sizeof *bj);
    if (bj == NULL) {
      rc = sk_error_set(&err, SK_ENOMEM, "", "out of memory");
    } else {
      bj->routes = r;
      bj->entry = e;
      bj->fmt = fmt;
      e = NULL;
      rc = parse_batch(r, bj, j, &err);
    }
  }
  json_decref(j);
  sk_cache_entry_unref(e);
  if (rc) {
    if (bj)
      batch_free(bj);
    sk_problem_err(req, &err, rc);
    return;
  }
  run_batch(r, req, bj);
}

/* ---- streamed answers ------------------------------------------------------------------ */


/* A batch answer produced as its client reads it: a bounded `pending`
 * buffer refilled from the next poses by sk_frames_run (planned once for
 * the whole batch). The bytes are those run_batch would have built in one
 * piece. */
typedef struct pose_stream {
  batch_job *bj;          /* owned: the poses and the entry reference */
  sk_frames_run run;      /* borrows bj's entry and poses */
  sk_strbuf pending;
  size_t off;             /* bytes of `pending` already sent */
  bool closed;            /* JSON: "]}" written */
} pose_stream;

static void stream_release(void *arg) {
  pose_stream *st = arg;
  sk_frames_run_close(&st->run);
  batch_free(st->bj);
  sk_strbuf_free(&st->pending);
  free(st);
}

static long stream_produce(void *arg, char *dest, size_t cap) {
  pose_stream *st = arg;
  if (st->off == st->pending.len) {
    st->pending.len = st->off = 0;
    if (sk_frames_run_next(&st->run, &st->pending, SK_ROUTES_STREAM_SLICE) != 0)
      return -1; /* out of memory mid-answer: the client sees it cut short */
    if (sk_frames_run_done(&st->run) && st->bj->fmt == SK_FMT_JSON && !st->closed) {
      sk_strbuf_append(&st->pending, "]}", 2);
      st->closed = true;
    }
    if (st->pending.failed)
      return -1;
  }
  size_t n = st->pending.len - st->off;
  if (n > cap)
    n = cap;
  memcpy(dest, st->pending.data + st->off, n);
  st->off += n;
  return (long)n;
}

/* What the stream keeps while its client reads: the pending slice (plus
 * one pose's text, up to ~16 bytes a float), the kernel's 16-pose input
 * and output or the core's buffers, libmicrohttpd's block, and the
 * skeleton version it reads, which an eviction or a replacement takes out
 * of the cache's count but not out of memory while the stream holds it. */
static size_t stream_bytes(const batch_job *bj, bool kernel) {
  const size_t mats = bj->entry->skel->count + 1;
  size_t pose_text = bj->fmt == SK_FMT_JSON ? mats * 16 * 3 * 16 + 64 : mats * 16 * sizeof(float);
  size_t eval = sk_frames_run_bytes(bj->entry, kernel);
  return 2 * (SK_ROUTES_STREAM_SLICE + pose_text) + eval + SK_ROUTES_STREAM_BLOCK + bj->entry->bytes;
}

/* Answers `bj` as a stream; takes `bj`. */
static void stream_batch(sk_routes *r, sk_http_req *req, batch_job *bj) {
  const sk_skeleton *s = bj->entry->skel;
  pose_stream *st = calloc(1, sizeof *st);
  if (st == NULL) {
    batch_free(bj);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  st->bj = bj;
  const sk_frames_opts fo = frames_opts(r, bj->fmt, 1);
  int rc = sk_http_reserve(req, stream_bytes(bj, sk_frames_uses_kernel(bj->entry, bj->poses, bj->n, &fo)));
  if (rc == 0)
    rc = sk_frames_run_init(&st->run, bj->entry, bj->poses, bj->n, &fo);
  if (rc == 0 && bj->fmt == SK_FMT_JSON)
    rc = sk_strbuf_append(&st->pending, "{\"results\":[", 12);
  if (rc != 0) {
    stream_release(st);
    if (rc == SK_EBUSY)
      sk_problem(req, SK_EBUSY, "", "the answer's buffers do not fit in the memory budget (--memory-mb) now; retry later");
    else
      sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  sk_metrics_add_poses(r->metrics, bj->n, bj->n * (s->count + 1));
  if (bj->fmt == SK_FMT_JSON) {
    sk_http_respond_stream(req, 200, CT_JSON, SK_HTTP_LENGTH_UNKNOWN, SK_ROUTES_STREAM_BLOCK, stream_produce, st,
                           stream_release, NULL);
    return;
  }
  char bones[24], poses[24], mats[24];
  decimal_size(bones, s->count);
  decimal_size(poses, bj->n);
  decimal_size(mats, s->count + 1);
  const char *hdr[] = {"Skinner-Bone-Count", bones, "Skinner-Pose-Count", poses, "Skinner-Matrix-Count", mats, NULL};
  uint64_t len = (uint64_t)bj->n * (s->count + 1) * (bj->fmt == SK_FMT_F32 ? 16 : 12) * sizeof(float);
  sk_http_respond_stream(req, 200, fmt_type(bj->fmt), len, SK_ROUTES_STREAM_BLOCK, stream_produce, st,
                         stream_release, hdr);
}

/* The most bytes the answer to `bj` can take, and the parsed poses it
 * holds: ~16 bytes per float of JSON (the longest shortest float is 15
 * characters), exact for binary. */
static size_t batch_answer_bound(const batch_job *bj, size_t *poses_bytes) {
  const sk_skeleton *s = bj->entry->skel;
  size_t mats = s->count + 1, floats = 0, held = bj->n * sizeof *bj->poses;
  for (size_t i = 0; i < bj->n; i++) {
    /* The parsers grow override arrays by doubling from 16: count what
     * they may have allocated, not only what they filled. */
    size_t cap = 16;
    while (cap < bj->poses[i].count)
      cap *= 2;
    held += cap * sizeof *bj->poses[i].overrides;
    if (bj->fmt == SK_FMT_JSON)
      floats += 16 * (((bj->poses[i].output & SK_OUT_FINAL) ? mats : 0) +
                      ((bj->poses[i].output & SK_OUT_ABSOLUTE) ? s->count : 0) +
                      ((bj->poses[i].output & SK_OUT_LOCAL) ? s->count : 0));
  }
  *poses_bytes = held;
  if (bj->fmt == SK_FMT_JSON)
    return floats * 16 + bj->n * 64 + 16;
  return bj->n * mats * (bj->fmt == SK_FMT_F32 ? 16 : 12) * sizeof(float);
}

/* Hands a costed request whose clip work is over the loop bound to the
 * pool: parsing (which samples the clips) and evaluation both run there.
 * Steals `e` and `j`. */
static void defer_parse(sk_routes *r, sk_http_req *req, sk_cache_entry *e, json_t *j, int fmt, bool batch) {
  batch_job *bj = calloc(1, sizeof *bj);
  if (bj == NULL) {
    json_decref(j);
    sk_cache_entry_unref(e);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  bj->routes = r;
  bj->entry = e;
  bj->fmt = fmt;
  bj->json = j;
  bj->batch = batch;
  if (sk_http_defer(req, parse_work, batch_after, bj) != 0) {
    batch_free(bj);
    sk_problem(req, SK_EBUSY, "", "too many batches in flight; retry later");
  }
}

/* Evaluates a parsed batch inline or on the pool (by size), answers, and
 * releases `bj` (or hands it to the job). */
static void run_batch(sk_routes *r, sk_http_req *req, batch_job *bj) {
  int rc;
  int fmt = bj->fmt;
  sk_error err;
  sk_error_clear(&err);
  if (parsed_cost(r, bj, req->route == SK_ROUTE_POSES ? "/poses" : "", &err) != 0) {
    batch_free(bj);
    sk_problem_err(req, &err, SK_ETOOBIG);
    return;
  }
  /* The memory budget first: the parsed poses, and the answer (in full, or
   * a streamed answer's bounded buffers). */
  size_t poses_bytes, answer = batch_answer_bound(bj, &poses_bytes);
  bool stream = answer > SK_ROUTES_STREAM_MIN;
  if (sk_http_reserve(req, poses_bytes + (stream ? 0 : answer)) != 0) {
    size_t n = bj->n;
    batch_free(bj);
    sk_problem(req, SK_EBUSY, "", "the batch (%zu poses, an answer of up to %zu bytes) does not fit in the memory "
                               "budget (--memory-mb) now; retry later", n, answer);
    return;
  }
  if (stream) {
    stream_batch(r, req, bj);
    return;
  }
  if (r->cfg.pool_always || batch_cost_us(bj) > (double)r->cfg.inline_limit) {
    rc = sk_http_defer(req, batch_work, batch_after, bj);
    if (rc == 0)
      return;
    batch_free(bj);
    sk_problem(req, SK_EBUSY, "", "too many batches in flight; retry later");
    return;
  }
  const sk_frames_opts fo = frames_opts(r, fmt, 1);
  if (fmt == SK_FMT_JSON)
    sk_strbuf_append(&bj->out, "{\"results\":[", 12);
  if (sk_frames_eval(bj->entry, bj->poses, bj->n, &fo, &r->sc, &bj->out) != 0 ||
      (fmt == SK_FMT_JSON && sk_strbuf_append(&bj->out, "]}", 2)))
    bj->out.failed = 1;
  respond_poses(r, req, bj->entry->skel, bj->n, fmt, &bj->out);
  batch_free(bj);
}

/* ---- operational routes --------------------------------------------------------------- */

static void get_metrics(sk_routes *r, sk_http_req *req) {
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

/* ---- dispatch ------------------------------------------------------------------------- */

/* A large PATCH /bones or /rest body, parsed and applied to a copy of the
 * stored version on the pool (jansson takes ~65 ms a MB, and freeing the
 * tree ~15 ns a value); the copy is published back on the loop thread.
 * Errors come in the loop path's order: 400, 404, then the body's own. */
typedef struct json_body_job {
  sk_routes *routes;
  sk_cache_entry *entry; /* a reference, or NULL: 404 after the 400 */
  bool bones;            /* PATCH /bones, else /rest */
  const char *data;      /* borrowed from the request */
  size_t len;
  char id[SK_CACHE_ID_MAX + 1];
  sk_skeleton *copy;
  sk_error err;
  int rc;
} json_body_job;

static void json_body_work(void *arg) {
  json_body_job *jb = arg;
  json_t *j = NULL;
  if ((jb->rc = sk_json_load(jb->data, jb->len, &j, &jb->err)) != 0)
    return;
  if (jb->entry == NULL)
    jb->rc = sk_error_set(&jb->err, SK_ENOTFOUND, "", "no skeleton with id \"%s\"", jb->id);
  else if (jb->bones)
    jb->rc = patch_apply(jb->entry->skel, j, &jb->copy, &jb->err);
  else
    jb->rc = rest_apply(jb->entry->skel, j, &jb->copy, &jb->err);
  json_decref(j);
}

static void json_body_after(sk_http_req *req, void *arg, int status) {
  json_body_job *jb = arg;
  sk_routes *r = jb->routes;
  sk_cache_entry *now = jb->entry != NULL ? sk_cache_get(r->cache, jb->entry->id) : NULL;
  bool stale = jb->rc == 0 && now != jb->entry;
  sk_cache_entry_unref(now);
  if (status == SK_EBUSY) {
    sk_cache_entry_unref(jb->entry);
    sk_problem(req, SK_EBUSY, "", "the request waited past its deadline; retry later");
  } else if (stale) {
    /* Another update was published while this one was on the pool: apply
     * it to that version instead, here (rare; the body is still in req). */
    sk_skeleton_destroy(jb->copy);
    sk_cache_entry_unref(jb->entry);
    match m;
    route_match(req->url, &m);
    if (jb->bones)
      patch_bones(r, req, &m);
    else
      post_rest(r, req, &m);
  } else {
    finish_update(r, req, jb->entry, jb->copy, jb->rc, &jb->err); /* releases both; 400/404 when rc says so */
  }
  free(jb);
}

static void defer_json_body(sk_routes *r, sk_http_req *req, const match *m) {
  json_body_job *jb = calloc(1, sizeof *jb);
  if (jb == NULL) {
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  jb->routes = r;
  jb->entry = m->id_ok ? sk_cache_get(r->cache, m->id) : NULL;
  jb->bones = m->route == SK_ROUTE_BONES;
  snprintf(jb->id, sizeof jb->id, "%s", m->id_ok ? m->id : "(invalid id)");
  jb->data = req->body.data;
  jb->len = req->body.len;
  if (sk_http_defer(req, json_body_work, json_body_after, jb) != 0) {
    sk_cache_entry_unref(jb->entry);
    free(jb);
    sk_problem(req, SK_EBUSY, "", "too many jobs in flight; retry later");
  }
}

static void on_handle(void *ctx, sk_http_req *req) {
  sk_routes *r = ctx;
  match m;
  route_match(req->url, &m);
  int me = req->method_id;
  if (req->body_too_large) {
    sk_problem(req, SK_ETOOBIG, "", "the body is over the limit of %zu bytes (--max-body)", r->cfg.max_body);
    return;
  }
  if (req->over_budget) {
    sk_problem(req, SK_EBUSY, "", "the body does not fit in the memory budget (--memory-mb) now; retry later");
    return;
  }
  switch (m.route) {
  case SK_ROUTE_HEALTHZ:
    respond_static_json(req, 200, "{\"status\":\"ok\"}");
    return;
  case SK_ROUTE_READYZ:
    if (sk_http_stopping(req->http))
      respond_static_json(req, 503, "{\"status\":\"stopping\"}");
    else if (sk_cache_store_full(r->cache)) /* until a put succeeds again */
      respond_static_json(req, 503, "{\"status\":\"out-of-storage\"}");
    else
      respond_static_json(req, 200, "{\"status\":\"ready\"}");
    return;
  case SK_ROUTE_METRICS:
    get_metrics(r, req);
    return;
  case SK_ROUTE_SKELETONS:
    if (me == SK_METHOD_POST)
      put_skeleton(r, req, NULL);
    else
      get_list(r, req);
    return;
  case SK_ROUTE_SKELETON:
    if (me == SK_METHOD_PUT) {
      if (!m.id_ok)
        sk_problem(req, SK_EINVAL, "", "skeleton ids match [A-Za-z0-9._-]{1,128}, not \".\" or \"..\"");
      else
        put_skeleton(r, req, m.id);
    } else if (me == SK_METHOD_DELETE) {
      delete_skeleton(r, req, &m);
    } else {
      get_skeleton(r, req, &m);
    }
    return;
  case SK_ROUTE_BONES:
  case SK_ROUTE_REST:
    if (req->body.len >= r->cfg.pool_upload)
      defer_json_body(r, req, &m);
    else if (m.route == SK_ROUTE_BONES)
      patch_bones(r, req, &m);
    else
      post_rest(r, req, &m);
    return;
  case SK_ROUTE_POSE:
  case SK_ROUTE_POSES:
    if (req->body.len >= r->cfg.pool_upload)
      defer_pose_body(r, req, &m, m.route == SK_ROUTE_POSES);
    else if (m.route == SK_ROUTE_POSE)
      post_pose(r, req, &m);
    else
      post_poses(r, req, &m);
    return;
  default:
    sk_problem(req, SK_ENOTFOUND, "", "no route for %s", req->url);
    return;
  }
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
  match m;
  route_match(req->url, &m);
  if (m.route != SK_ROUTE_HEALTHZ && m.route != SK_ROUTE_READYZ && m.route != SK_ROUTE_METRICS) {
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
  if (r->cfg.pool_upload == 0)
    r->cfg.pool_upload = 32u << 10;
  r->cache = cache;
  r->metrics = metrics;
  *out = r;
  return 0;
}

void sk_routes_destroy(sk_routes *r) {
  if (r == NULL)
    return;
  sk_frames_scratch_close(&r->sc);
  free(r);
}
