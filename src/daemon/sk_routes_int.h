/* sk_routes' private half, shared by sk_routes.c (the route table,
 * matching, dispatch), sk_routes_checks.c (the checks before the body),
 * sk_routes_admin.c (operational routes), the resources' handlers
 * (sk_routes_skeletons.c, sk_routes_upload.c, sk_routes_poses.c,
 * sk_routes_batch.c, sk_routes_anim.c, sk_routes_ops.c) and
 * sk_routes_cond.c (CORS, versions). Never included by the mains or
 * installed. Names with the sk_routes__ prefix are internal (libuv's uv__
 * convention). */
#ifndef SK_ROUTES_INT_H
#define SK_ROUTES_INT_H

#include <stdbool.h>

#include "sk_etag.h"
#include "sk_pose.h"
#include "sk_frames.h"
#include "sk_routes.h"

/* A clip's bounds answered before (sk_routes__clip_bounds), for the
 * skeleton version it was computed on: loop thread only, its bytes
 * reserved in the memory budget while kept. */
#define SK_ROUTES_MEMOS 16
typedef struct sk_routes_memo {
  char id[SK_CACHE_ID_MAX + 1];
  uint64_t version, used;
  size_t clip;
  double fps;
  char *text; /* owned; NULL: a free slot */
  size_t len;
} sk_routes_memo;

struct sk_routes {
  sk_routes_config cfg;
  sk_routes_memo memo[SK_ROUTES_MEMOS];
  uint64_t memo_clock;
  sk_cache *cache;      /* borrowed */
  sk_metrics *metrics;  /* borrowed */
  sk_frames_scratch sc; /* loop thread only: reused by every inline pose and batch */
  sk_http *listener;    /* borrowed: the public listener, for /metrics; may be NULL */
  uint32_t etag_epoch;  /* this run's part of every ETag (sk_etag) */
  /* Streaming sessions' work in the current loop iteration (sk_routes_stream.c). */
  uint64_t stream_iter, stream_spent_ns;
};

#define SK_ROUTES_CT_JSON "application/json"

/* The formats a pose answer is offered in, indexed by SK_FMT_*. */
extern const char *const sk_routes__pose_offers[3];

typedef struct sk_route sk_route;

#define SK_ROUTES_CLIP_MAX 255 /* longest clip name a URL may address */

/* A request's route, matched once in begin() and kept in req->data for
 * handle() and any pool job's after-callback. */
typedef struct sk_route_match {
  const sk_route *route; /* NULL: no route (404) */
  char id[SK_CACHE_ID_MAX + 1];
  bool id_ok; /* the id segment matched the id syntax */
  /* /animations/{clip}: the clip segment as the URL gave it (decoded by
   * libmicrohttpd); clip_ok false when longer than SK_ROUTES_CLIP_MAX. */
  char clip[SK_ROUTES_CLIP_MAX + 1];
  bool clip_ok;
  /* What every answer to the request adds (sk_http's decorate): */
  sk_routes *routes;
  const char *cors_allow;   /* Access-Control-Allow-Origin, or NULL */
  char etag[SK_ETAG_MAX];   /* the skeleton version the request was checked
                               against and read ("" : none) */
  const char *hdr[12];      /* the headers handed to sk_http */
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
  unsigned query_methods;    /* the methods that take the parameters `query` names; the others take none */
  const char *const *query;  /* NULL-terminated; NULL: any. A parameter not taken, or given twice: 400 */
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
/* sk_json_load for a large body on a pool thread: the tree's bound
 * (sk_json_tree_bound) is reserved in the memory budget first (SK_EBUSY,
 * a 503, when it does not fit now); *reserved is what to give back with
 * sk_budget_release once the tree is freed. Any thread. */
int sk_routes__load_pooled(const sk_routes *r, const char *text, size_t len, json_t **out, size_t *reserved,
                           sk_error *err);
/* The stored entry for the matched id (a new reference), or a 404 answered. */
sk_cache_entry *sk_routes__entry_or_404(sk_routes *r, sk_http_req *req, const sk_route_match *m);
/* The same, and the matched clip's index as *clip, or a 404 answered
 * (no such clip, or none at all). */
sk_cache_entry *sk_routes__clip_or_404(sk_routes *r, sk_http_req *req, const sk_route_match *m, size_t *clip);
/* A JSON write's two first steps, in the order a client expects (400 for
 * the body, then 404): the body as *j (new) and the entry (a new
 * reference); NULL when either answered its problem (*j then NULL). */
sk_cache_entry *sk_routes__body_and_entry(sk_routes *r, sk_http_req *req, const sk_route_match *m, json_t **j);
/* The Allow header of a route: its methods in the enum's order. */
void sk_routes__allow_text(const sk_route *rt, char *buf, size_t cap);

/* ---- the checks every route shares, before the body (sk_routes_checks.c) ----
 * In on_begin's order; each answers the problem itself and returns true
 * when it refused the request. */

/* The gate's checks: framing, Host and bearer token (sk_access) for the
 * route `rt` (NULL: no route, or none this listener serves): 400, 401,
 * 403, 421. on_begin runs it before anything else can answer. */
bool sk_routes__access_refused(sk_routes *r, sk_http_req *req, const sk_route *rt);
/* A method the route does not take: 405 with Allow. */
bool sk_routes__method_refused(sk_http_req *req, const sk_route *rt);
/* Strict query strings: a parameter the route and method do not take (a
 * typo such as ?skn=1 would otherwise do nothing) or one given twice
 * (which one wins is anyone's guess): 400 naming it. */
bool sk_routes__query_refused(sk_http_req *req, const sk_route *rt);
/* A PUT/POST/PATCH body over --max-body by its Content-Length (413) or of
 * a type the route does not take (415). */
bool sk_routes__body_refused(sk_routes *r, sk_http_req *req, const sk_route *rt);
/* No answer type of the route is acceptable by Accept: 406. */
bool sk_routes__answer_refused(sk_http_req *req, const sk_route *rt);

/* The route table (sk_routes.c), in matching order: *n rows. For tests
 * that walk every route. */
const sk_route *sk_routes__table(size_t *n);
/* GET/HEAD /ui and /ui/...: the preview page (sk_ui_answer). */
void sk_routes__ui(sk_routes *r, sk_http_req *req, const sk_route_match *m);
/* GET/HEAD /openapi.yaml and /schemas/...: the contract (sk_ui_spec_answer). */
void sk_routes__spec(sk_routes *r, sk_http_req *req, const sk_route_match *m);

/* ---- operational routes (sk_routes_admin.c) ---- */

void sk_routes__healthz(sk_routes *r, sk_http_req *req, const sk_route_match *m); /* GET /healthz */
void sk_routes__readyz(sk_routes *r, sk_http_req *req, const sk_route_match *m);  /* GET /readyz */
void sk_routes__metrics(sk_routes *r, sk_http_req *req, const sk_route_match *m); /* GET /metrics */

/* ---- CORS and versions (sk_routes_cond.c) ---- */

/* Sets req->decorate (CORS and ETag headers on every answer) and the
 * request's allowed origin; in begin(), before anything can answer. */
void sk_routes__decorate_init(sk_routes *r, sk_http_req *req, sk_route_match *m);
/* Answers OPTIONS on a matched route: a CORS preflight (204, or 403/405
 * saying why), or a plain OPTIONS (204 with Allow). */
void sk_routes__options(sk_http_req *req, const sk_route_match *m);
/* True when the request has If-Match or If-None-Match. */
bool sk_routes__conditional(sk_http_req *req);
/* RFC 9110 preconditions before a /v1/skeletons/{id}... handler (loop
 * thread): true when answered (412, 304, 400). Records the version. */
bool sk_routes__preconditions(sk_routes *r, sk_http_req *req, sk_route_match *m);
/* Checks If-Match / If-None-Match again where a write is about to be
 * published (a pooled write may have waited while another one landed):
 * true when it answered 412 (the caller then publishes nothing). Loop
 * thread. Any new write route that publishes after a pool job calls it. */
bool sk_routes__precondition_failed(sk_routes *r, sk_http_req *req);
/* SK_EUNKNOWN at the first key of `obj` not in the NULL-terminated `allowed`. */
int sk_routes__check_keys(const json_t *obj, const char *const *allowed, sk_error *err);
/* 1 for model/gltf-binary, 2 for model/gltf+json (any parameters, any case), else 0 (sk_routes_checks.c). */
int sk_routes__gltf_type(const char *content_type);

/* ---- skeleton handlers (sk_routes_skeletons.c) ---- */

/* {"id","bones","order","slots","mesh","skin"?,"skins"?,"animations"?} of a
 * skeleton stored or, for a dry run, only built (anim NULL: no clips). */
void sk_routes__write_summary(sk_strbuf *b, const char *id, const sk_skeleton *s, const char *mesh_json,
                              const char *skins_json, long long skin, const sk_anim *anim);
/* The detail of a failed sk_cache_put_full; nothing was changed in any case. */
const char *sk_routes__store_failure(int rc);

void sk_routes__skeletons(sk_routes *r, sk_http_req *req, const sk_route_match *m);   /* GET list, POST */
void sk_routes__skeleton(sk_routes *r, sk_http_req *req, const sk_route_match *m);    /* GET, PUT, DELETE */
void sk_routes__bones(sk_routes *r, sk_http_req *req, const sk_route_match *m);       /* PATCH */
void sk_routes__rest(sk_routes *r, sk_http_req *req, const sk_route_match *m);        /* POST */
/* PATCH /bones or POST /rest with a large body: parsed and applied on the pool. */
void sk_routes__bones_pooled(sk_routes *r, sk_http_req *req, const sk_route_match *m);

/* ---- skeleton uploads (sk_routes_upload.c) ---- */

/* PUT (`given_id`) or POST (NULL: the id is derived from the content) of a
 * skeleton: a JSON body, or a glTF/GLB one whose skin ?skin= picks (default
 * 0), built inline or, from pool_upload bytes (32 KiB), on the pool;
 * ?dryRun=true answers 200 with what would be stored and stores nothing.
 * Answers 201/200 with the summary (Location for a POST). */
void sk_routes__put_skeleton(sk_routes *r, sk_http_req *req, const char *given_id);

/* ---- clips (sk_routes_anim.c) ---- */

/* GET /v1/skeletons/{id}/animations/{clip}: the clip's animated bones and
 * each channel's key frames (sk_anim_write_clip_json); 404 problem+json for
 * an unknown skeleton or clip. */
void sk_routes__animation(sk_routes *r, sk_http_req *req, const sk_route_match *m);
/* GET /v1/skeletons/{id}/animations/{clip}/bounds?fps=F (sk_clipbounds). */
void sk_routes__clip_bounds(sk_routes *r, sk_http_req *req, const sk_route_match *m);
/* Drops every memo (sk_routes_destroy). */
void sk_routes__memo_clear(sk_routes *r);
/* GET …/animations/{clip}/rootMotion (sk_routes_rootmotion.c). */
void sk_routes__root_motion(sk_routes *r, sk_http_req *req, const sk_route_match *m);
/* The clips of an upload `j` (text[0..len)) built into `s`: none (*anim
 * NULL) unless it is in Babylon's serialize() format; then their size is
 * estimated first (sk_banim_estimate) and refused past --max-skeleton-mb
 * (SK_ETOOBIG) or reserved in the memory budget (SK_EBUSY when it does not
 * fit now; *reserved += what to release after the answer), built, and the
 * text kept (sk_routes__keep_babylon_source). Any thread. */
int sk_routes__babylon_clips(const sk_routes *r, const json_t *j, const sk_skeleton *s, const char *text, size_t len,
                             sk_anim **anim, size_t *reserved, sk_error *err);
/* For an upload `j` (text[0..len)) in Babylon's serialize() format, built
 * into `s` with clips *anim (NULL: none, then an empty set is made): keeps
 * a copy of the text on *anim, so the record can re-parse it and a
 * retarget can read it, after checking the skeleton, clips and text against
 * --max-skeleton-mb (SK_ETOOBIG). Other formats: nothing to do. Any thread.
 * On failure *anim is left as it was (the caller drops it). SK_ENOMEM. */
int sk_routes__keep_babylon_source(const sk_routes *r, const json_t *j, const sk_skeleton *s, sk_anim **anim,
                                   const char *text, size_t len, sk_error *err);
/* POST /v1/skeletons/{id}/animations: stores a copy of another skeleton's
 * Babylon range on this one (copyAnimationRange), persisted. */
void sk_routes__animations(sk_routes *r, sk_http_req *req, const sk_route_match *m);
/* ... with a body of pool_upload bytes and more: parsed on the pool, its
 * tree reserved in the memory budget first. */
void sk_routes__animations_pooled(sk_routes *r, sk_http_req *req, const sk_route_match *m);
/* A /pose whose "from" is a skeleton id (a frame range's "from" is a
 * number): plays that skeleton's range "animation" on `e` by bone name, as
 * copyAnimationRange (with "rescale") would copy it, without storing the
 * copy. Returns false, touching nothing, for any other pose; true when it
 * took `e` (a reference) and `j` and answers the request (on the pool). */
bool sk_routes__pose_retarget(sk_routes *r, sk_http_req *req, sk_cache_entry *e, json_t *j, int fmt);

/* ---- parsed poses to answers (sk_routes_batch.c) ---- */

typedef struct sk_routes_batch sk_routes_batch;
/* Parsed poses on their way to an answer, inline, on the thread pool or
 * streamed: everything a pool worker touches is in here. */
struct sk_routes_batch {
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
  bool in_poses;        /* POST /poses: an overflow's pointer is under /poses/<i> */
  struct sk_poseops *opsets; /* owned: the Bone-API ops the poses borrow (sk_poseops) */
};

/* How sk_frames answers in `fmt` (SK_FMT_*). */
sk_frames_opts sk_routes__frames_opts(const sk_routes *r, int fmt, unsigned threads);
/* Answers `n` poses of `s` encoded in `b` (taken) in `fmt`, with the
 * Skinner-*-Count headers for binary answers; counts them in the metrics. */
void sk_routes__respond_poses(sk_routes *r, sk_http_req *req, const sk_skeleton *s, size_t n, int fmt, sk_strbuf *b);
/* SK_ERANGE at the first pose whose "output" is empty; binary answers
 * carry final matrices only: SK_ERANGE at the first pose's
 * "output" asking for more (pose i at /poses/<first + i> when `batch`),
 * else every pose's output set to final. */
int sk_routes__binary_outputs(sk_pose *poses, size_t n, int fmt, size_t first, bool batch, sk_error *err);
/* sk_routes__binary_outputs answering the 422 itself; true when it did. */
bool sk_routes__reject_binary_outputs(sk_http_req *req, sk_pose *poses, size_t n, int fmt, size_t first, bool batch);
/* SK_ETOOBIG (err set at `ptr`) when the parsed poses' evaluation or answer is over sk_cost's limits. */
int sk_routes__parsed_cost(const sk_routes *r, const sk_routes_batch *bj, const char *ptr, sk_error *err);
/* Evaluates a parsed batch inline, on the pool or as a stream (by its cost
 * and answer size, within the memory budget), answers, and releases `bj`. */
void sk_routes__run_batch(sk_routes *r, sk_http_req *req, sk_routes_batch *bj);
/* A pool job's second half for a batch it parsed: evaluates it there, or
 * leaves a large answer to be streamed by the loop (sets stream_on_loop). */
void sk_routes__batch_pool_evaluate(sk_routes_batch *bj);
/* The after-callback of every pool job holding a sk_routes_batch: answers and frees it. */
void sk_routes__batch_after(sk_http_req *req, void *arg, int status);
/* A new batch of r's answering n poses (may be NULL, 0) of e in fmt; it
 * steals e and poses. NULL when out of memory, and then takes nothing. */
sk_routes_batch *sk_routes__batch_new(sk_routes *r, sk_cache_entry *e, int fmt, sk_pose *poses, size_t n);
/* Releases the poses, the entry reference, the answer and the body. NULL-safe: no. */
void sk_routes__batch_free(sk_routes_batch *bj);

/* ---- pose handlers (sk_routes_poses.c) ---- */

void sk_routes__pose(sk_routes *r, sk_http_req *req, const sk_route_match *m);  /* POST /pose */
void sk_routes__poses(sk_routes *r, sk_http_req *req, const sk_route_match *m); /* POST /poses */
/* One pose request `j` of a streaming session, evaluated into `out` as
 * /pose answers it in `fmt` (binary; sk_routes_poses.c): *n poses,
 * *reserved bytes of the budget to release once they are sent. Inline
 * work only: over the loop bound, SK_ETOOBIG. */
int sk_routes__pose_message(sk_routes *r, sk_cache_entry *e, const json_t *j, int fmt, sk_strbuf *out, size_t *n,
                            size_t *reserved, sk_error *err);
/* Frame k of playback request `j` (its "frames" set to [k, k + 1]) of
 * skeleton `id` as sk_routes__pose_message answers it; *entry: the
 * version answered, a reference the caller drops (NULL: none, SK_ENOTFOUND). */
int sk_routes__play_message(sk_routes *r, const char *id, json_t *j, long long k, int fmt, sk_strbuf *out, size_t *n,
                            size_t *reserved, sk_cache_entry **entry, sk_error *err);
/* GET /v1/skeletons/{id}/stream: a WebSocket session (sk_routes_stream.c). */
void sk_routes__stream(sk_routes *r, sk_http_req *req, const sk_route_match *m);
/* GET …/stream with Accept: text/event-stream: a playback as Server-Sent Events (sk_routes_sse.c). */
void sk_routes__stream_sse(sk_routes *r, sk_http_req *req, const sk_route_match *m);
/* /pose or /poses with a large body: parsed on the pool. */
void sk_routes__pose_pooled(sk_routes *r, sk_http_req *req, const sk_route_match *m);

/* ---- Bone-API ops on the stored skeleton (sk_routes_ops.c) ---- */

void sk_routes__ops(sk_routes *r, sk_http_req *req, const sk_route_match *m);        /* POST /ops */
/* POST /ops with a large body: parsed and applied on the pool. */
void sk_routes__ops_pooled(sk_routes *r, sk_http_req *req, const sk_route_match *m);

#endif
