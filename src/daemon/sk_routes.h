/* sk_routes: HTTP API v1 on top of sk_http, sk_cache and the skeleton core.
 *
 * Routes (JSON bodies unless said; errors are RFC 9457 problem+json):
 *   GET    /healthz, /readyz, /metrics
 *   GET    /v1/skeletons                 list
 *   POST   /v1/skeletons                 store, id derived from the content
 *   PUT    /v1/skeletons/{id}            create (201) or replace (200)
 *   GET    /v1/skeletons/{id}            bones with local, bind, rest
 *   DELETE /v1/skeletons/{id}            204
 *   PATCH  /v1/skeletons/{id}/bones      setters, all or nothing
 *   POST   /v1/skeletons/{id}/rest       returnToRest
 *   POST   /v1/skeletons/{id}/pose       one pose (JSON or binary)
 *   POST   /v1/skeletons/{id}/poses      a batch (JSON or binary)
 *   OPTIONS on every route: CORS preflight (--cors-origin), or its Allow
 * Every /v1/skeletons/{id}... route takes If-Match and If-None-Match
 * against the skeleton's version (sk_etag): 412 on a stale one, 304 for
 * a GET; skeleton answers carry its ETag (docs/security.md).
 * Everything runs on the loop thread except large batches, clip work over
 * sk_cost's loop bound and large glTF imports, which go to the thread pool
 * holding a reference to the skeleton version they started on. Pose
 * requests are costed (sk_cost) before any sampling or evaluation. */
#ifndef SK_ROUTES_H
#define SK_ROUTES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sk_access.h"
#include "sk_cache.h"
#include "sk_cost.h"
#include "sk_frames.h"
#include "sk_http.h"
#include "sk_metrics.h"

/* Zeroed fields take the defaults in brackets. */
typedef struct sk_routes_config {
  size_t max_body;     /* bytes, checked against Content-Length [SK_HTTP_MAX_BODY_DEFAULT] */
  size_t max_bones;    /* per skeleton [1024] */
  size_t max_batch;    /* poses per batch request [1024] */
  size_t inline_limit; /* estimated us of evaluation + encoding up to which a
                          batch stays on the loop thread; larger goes to the
                          pool [250]; SIZE_MAX: always inline */
  int pool_always;     /* every batch goes to the thread pool (--inline-limit 0) */
  unsigned kernel_threads; /* threads one large pool batch is split across [1] */
  sk_threads *mesh_threads; /* borrowed: the process's spare threads that pool batches split big
                               primitives over (sk_threads.h); NULL: none, one thread each */
  int metrics_admin_only; /* /metrics only through sk_routes_admin_handler();
                             the public handler answers it 404 (--admin-listen) */
  sk_budget *budget;   /* borrowed, or NULL: the memory budget, for /metrics */
  const sk_access *access; /* framing, Host and token checks before routing
                              (borrowed); NULL: framing and Host presence only */
  sk_cost_limits cost; /* pose requests' limits, checked before any work
                          (max_poses is max_batch); zeroed: sk_cost defaults */
  size_t max_skeleton; /* bytes a glTF upload may build (sk_gltf_estimate)
                          [SK_GLTF_MAX_SKELETON_BYTES] */
  size_t pool_upload;  /* bodies from this many bytes are parsed on the
                          thread pool (jansson: ~2 ms for 32 KiB) [32768] */
  unsigned stall_ms;   /* an event stream whose reader takes no byte this long while
                          a frame waits is cut (--stall-timeout) [10000] */
  sk_frames_sample_fn sample; /* the clip sampling step of pose requests [sk_frames_sample_range] */
  const struct sk_cors *cors; /* origins allowed to call from a browser (borrowed); NULL: none */
} sk_routes_config;

typedef struct sk_routes sk_routes;

/* `cache` and `metrics` are borrowed and must outlive the routes. *out is new. */
int sk_routes_create(const sk_routes_config *cfg, sk_cache *cache, sk_metrics *metrics, sk_routes **out);
/* Frees the routes (not the cache or metrics). NULL is fine. */
void sk_routes_destroy(sk_routes *r);
/* The callbacks to hand to sk_http_start(). */
sk_http_handler sk_routes_handler(sk_routes *r);
/* The callbacks for the admin listener: /healthz, /readyz and /metrics
 * only, everything else 404. */
sk_http_handler sk_routes_admin_handler(sk_routes *r);
/* The public listener (borrowed) whose connection counters /metrics shows,
 * wherever /metrics is served. Unset: the listener serving the request. */
void sk_routes_set_listener(sk_routes *r, sk_http *public_http);

/* Response formats for poses: sk_answer.h's SK_FMT_*. */

/* Picks among `offers` (n media types, in server preference order) by an
 * Accept header (NULL: anything), honouring q-values, type/ and * / *
 * ranges: the highest q wins, ties go to the earlier offer. Returns the
 * offer's index, or -1 when none is acceptable (406). */
int sk_routes_negotiate(const char *accept, const char *const *offers, int n);

/* True when a Content-Type header value names application/json (any
 * parameters, any case). */
int sk_routes_is_json(const char *content_type);

/* Writes one Babylon matrix (16 floats, row-vector convention, translation
 * in m[12..14]) as the 12 floats of a GPU mat3x4: its first three columns as
 * rows, i.e. dest[4c + r] = m[4r + c] for c < 3. A shader computes the
 * skinned position as vec4(p, 1) * M34 (GLSL), i.e. dot(row c, p1) = (p1 · m)_c. */
void sk_routes_mat3x4(const float m[16], float dest[12]);

/* The content-derived id of POST /v1/skeletons: 16 lowercase hex digits of
 * the 64-bit FNV-1a hash of the body's canonical JSON (keys sorted, compact,
 * numbers by value: 1.0 and 1 are the same), so the same document always
 * gets the same id. `dest` needs 17 bytes. */
int sk_routes_content_id(const json_t *json, char dest[17]);

#endif
