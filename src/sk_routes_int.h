/* sk_routes' private half, shared by sk_routes.c (routing, negotiation,
 * the route table, operational routes), sk_routes_skeletons.c and
 * sk_routes_poses.c. Never included by the mains or installed. Names with
 * the sk_routes__ prefix are internal (libuv's uv__ convention). */
#ifndef SK_ROUTES_INT_H
#define SK_ROUTES_INT_H

#include <stdbool.h>

#include "sk_frames.h"
#include "sk_routes.h"

struct sk_routes {
  sk_routes_config cfg;
  sk_cache *cache;      /* borrowed */
  sk_metrics *metrics;  /* borrowed */
  sk_frames_scratch sc; /* loop thread only: reused by every inline pose and batch */
  sk_http *listener;    /* borrowed: the public listener, for /metrics; may be NULL */
};

#define SK_ROUTES_CT_JSON "application/json"

/* The formats a pose answer is offered in, indexed by SK_FMT_*. */
extern const char *const sk_routes__pose_offers[3];

typedef struct sk_route sk_route;

/* A request's route, matched once in begin() and kept in req->data for
 * handle() and any pool job's after-callback. */
typedef struct sk_route_match {
  const sk_route *route; /* NULL: no route (404) */
  char id[SK_CACHE_ID_MAX + 1];
  bool id_ok; /* the id segment matched the id syntax */
} sk_route_match;

/* A handler: the route matched, the body (if any) complete and within
 * the limits, the answer format acceptable. It answers `req`. */
typedef void (*sk_route_fn)(sk_routes *r, sk_http_req *req, const sk_route_match *m);

/* sk_route.bodies */
enum { BODY_NONE = 0, BODY_JSON = 1, BODY_JSON_OR_GLTF = 2 };

/* One route: how it is matched, what it accepts, who answers it. */
struct sk_route {
  int id;                    /* SK_ROUTE_*: the metrics label and the access scope */
  const char *path;          /* the whole path, or with per_id the tail after /v1/skeletons/{id} */
  bool per_id;               /* /v1/skeletons/{id}<path> */
  unsigned methods;          /* M(GET) | ...; others get 405 with an Allow header listing these */
  int bodies;                /* what PUT/POST/PATCH bodies may be (415 otherwise); up to --max-body (413) */
  const char *const *offers; /* answer types in preference order (406 when none is acceptable); NULL: not negotiated */
  int noffers;
  bool admin;                /* also served on the admin listener */
  sk_route_fn handle;        /* answers the request */
  sk_route_fn pooled;        /* bodies of pool_upload bytes and more (32 KiB) are parsed on the pool by this; NULL: never */
};

/* ---- shared helpers (sk_routes.c) ---- */

/* Answers `b` (taken) as application/json; out of memory: a 503 problem. */
void sk_routes__respond_json(sk_http_req *req, int status, sk_strbuf *b, const char *const *headers);
/* Loads the body as JSON; answers the problem itself on failure. */
json_t *sk_routes__load_body(sk_http_req *req);
/* The stored entry for the matched id (a new reference), or a 404 answered. */
sk_cache_entry *sk_routes__entry_or_404(sk_routes *r, sk_http_req *req, const sk_route_match *m);
/* SK_EUNKNOWN at the first key of `obj` not in the NULL-terminated `allowed`. */
int sk_routes__check_keys(const json_t *obj, const char *const *allowed, sk_error *err);
/* 1 for model/gltf-binary, 2 for model/gltf+json (any parameters, any case), else 0. */
int sk_routes__gltf_type(const char *content_type);

/* ---- skeleton handlers (sk_routes_skeletons.c) ---- */

void sk_routes__skeletons(sk_routes *r, sk_http_req *req, const sk_route_match *m);   /* GET list, POST */
void sk_routes__skeleton(sk_routes *r, sk_http_req *req, const sk_route_match *m);    /* GET, PUT, DELETE */
void sk_routes__bones(sk_routes *r, sk_http_req *req, const sk_route_match *m);       /* PATCH */
void sk_routes__rest(sk_routes *r, sk_http_req *req, const sk_route_match *m);        /* POST */
/* PATCH /bones or POST /rest with a large body: parsed and applied on the pool. */
void sk_routes__bones_pooled(sk_routes *r, sk_http_req *req, const sk_route_match *m);

/* ---- pose handlers (sk_routes_poses.c) ---- */

void sk_routes__pose(sk_routes *r, sk_http_req *req, const sk_route_match *m);  /* POST /pose */
void sk_routes__poses(sk_routes *r, sk_http_req *req, const sk_route_match *m); /* POST /poses */
/* /pose or /poses with a large body: parsed on the pool. */
void sk_routes__pose_pooled(sk_routes *r, sk_http_req *req, const sk_route_match *m);

#endif
