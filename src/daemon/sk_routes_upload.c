/* sk_routes_upload: storing a skeleton, PUT /v1/skeletons/{id} and POST
 * /v1/skeletons. The body is a JSON skeleton (Babylon's serialize() format
 * with its clips, or ours) or a glTF/GLB file (?skin= picks the skin); a
 * large one is parsed and built on the pool; ?dryRun=true builds and
 * answers what would be stored. The rest of the skeleton resource (list,
 * GET, DELETE, PATCH bones, POST rest) is sk_routes_skeletons.c. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_error.h"
#include "sk_gltf.h"
#include "sk_gltf_mesh.h"
#include "sk_hash.h"
#include "sk_json.h"
#include "sk_ops.h"
#include "sk_problem.h"
#include "sk_routes_int.h"
#include "sk_sample.h"

/* ---- the id of a POST: the content's hash (public for tests) -------------------------- */

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
  uint64_t h = sk_hash_fnv64_str(SK_HASH_FNV64_INIT, text);
  free(text);
  snprintf(dest, 17, "%016llx", (unsigned long long)h);
  return 0;
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
  sk_gltf_extra extra;     /* glTF: default mesh and skins; JSON: mesh_json alone */
  bool dry_run;            /* ?dryRun=true: build, answer, store nothing */
  sk_error err;
  int rc;
  size_t reserved;         /* bytes of the memory budget held for the import */
  sk_store_staged staged;  /* with --data-dir: the record, written where the job ran */
} upload_job;

/* Imports a glTF skin: its in-memory size is estimated from the file's
 * counts and refused past --max-skeleton-mb, then reserved in the memory
 * budget (503 when it does not fit now) before anything is built. The
 * reservation is held until the answer (the cache counts the stored
 * skeleton itself). Any thread: the budget is atomic. */
static int import_gltf(const sk_routes *r, upload_job *uj) {
  sk_gltf *g;
  size_t skin, estimate = 0;
  /* The parse's own cost first: a 4 MB list of {} is ~320 MB as a tree,
   * and a data: URI is its string plus its decoded bytes. */
  size_t bound = sk_gltf_parse_bound(uj->data, uj->len);
  if (sk_budget_reserve(r->cfg.budget, bound) != 0)
    return sk_error_set(&uj->err, SK_EBUSY, "",
                        "parsing this %zu-byte glTF takes up to %zu bytes, more than the memory budget "
                        "(--memory-mb) has now; retry later",
                        uj->len, bound);
  int rc = sk_gltf_parse(uj->data, uj->len, &g, &uj->err);
  if (rc) {
    sk_budget_release(r->cfg.budget, bound);
    return rc;
  }
  size_t geom_bytes = 0;
  if (!(rc = sk_gltf_find_skin(g, uj->skin, &skin, &uj->err)) &&
      !(rc = sk_gltf_estimate(g, skin, r->cfg.max_skeleton, &estimate, &uj->err)) &&
      !(rc = sk_geom_estimate(g, skin, estimate, r->cfg.max_skeleton, &geom_bytes, &uj->err))) {
    estimate += geom_bytes; /* the skinned primitives are kept with the skeleton */
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
  if (!rc) { /* here, on the pool: the cache would build them on the loop */
    sk_sampler_share(uj->anim, SK_SAMPLER_SHARE_MAX);
    sk_anim_additive_share(uj->anim, uj->s, SK_ANIM_ADDITIVE_SHARE_MAX);
  }
  if (!rc && (rc = sk_gltf_extra_fill(g, skin, true, &uj->extra)) != 0)
    sk_error_set(&uj->err, rc, "", "out of memory");
  if (!rc)
    rc = sk_geom_build(g, skin, &uj->extra.geom, &uj->err);
  sk_gltf_destroy(g);
  sk_budget_release(r->cfg.budget, bound);
  return rc;
}

/* A POST's id for a glTF body: FNV-1a over the file, then the selector. */
static void gltf_derived_id(const upload_job *uj, char dest[17]) {
  uint64_t h = sk_hash_fnv64(SK_HASH_FNV64_INIT, uj->data, uj->len);
  h = sk_hash_fnv64_str(h, uj->skin ? uj->skin : "");
  snprintf(dest, 17, "%016llx", (unsigned long long)h);
}

/* What the record of a built upload keeps besides the skeleton. */
static sk_cache_source upload_source(upload_job *uj) {
  sk_cache_source src = {.mesh_json = uj->extra.mesh_json, .staged = &uj->staged};
  if (uj->gltf) {
    src.gltf = uj->data;
    src.gltf_len = uj->len;
    src.skin = uj->skin;
    src.skins_json = uj->extra.skins_json;
    src.skin_index = (int32_t)uj->extra.skin;
    src.geom = uj->extra.geom;
  } else if (uj->anim != NULL) { /* Babylon clips: the record keeps the text, re-parsed on load */
    src.gltf = uj->anim->source;
    src.gltf_len = uj->anim->source_len;
    src.json = true;
  }
  return src;
}

/* With --data-dir, the record is written and synced here, where the upload
 * was built (the pool for large bodies), and only put in place on the loop
 * thread (sk_cache_put_full: a rename and the directory's fsync). A record
 * that cannot be staged is written by the put, or refused there. */
static void upload_stage(upload_job *uj) {
  if (!uj->rc && uj->gltf && !uj->has_id)
    gltf_derived_id(uj, uj->id);
  if (uj->rc || uj->dry_run)
    return;
  sk_cache_source src = upload_source(uj);
  sk_cache_stage(uj->routes->cache, uj->id, uj->s, &src, &uj->staged);
}

static void upload_build(upload_job *uj);

static void upload_work(void *arg) {
  upload_job *uj = arg;
  upload_build(uj);
  upload_stage(uj);
}

static void upload_build(upload_job *uj) {
  const sk_routes *r = uj->routes;
  if (uj->gltf) {
    uj->rc = import_gltf(r, uj);
    return;
  }
  json_t *j = NULL;
  size_t tree = 0;
  if ((uj->rc = sk_routes__load_pooled(r, uj->data, uj->len, &j, &tree, &uj->err)) != 0) {
    sk_budget_release(r->cfg.budget, tree);
    return;
  }
  /* "mesh" (the default mesh) is ours, not the skeleton parser's: taken out
   * for it, put back for the content id (same bones, other mesh: other id). */
  json_t *mesh = json_incref(json_object_get(j, "mesh"));
  json_object_del(j, "mesh");
  uj->rc = sk_json_parse_skeleton(j, "", r->cfg.max_bones, &uj->s, &uj->err);
  if (!uj->rc && mesh != NULL) {
    bool has;
    sk_mesh m;
    if ((uj->rc = sk_ops_parse_mesh(mesh, "/mesh", &has, &m, &uj->err)) == 0 && has &&
        (uj->extra.mesh_json = json_dumps(mesh, JSON_COMPACT)) == NULL)
      uj->rc = sk_error_set(&uj->err, SK_ENOMEM, "", "out of memory");
  }
  if (!uj->rc) /* Babylon's format: its clips, estimated and reserved first, and its text */
    uj->rc = sk_routes__babylon_clips(r, j, uj->s, uj->data, uj->len, &uj->anim, &uj->reserved, &uj->err);
  if (!uj->rc && uj->anim != NULL) { /* the clips' sampler and additive keys, here on the pool as for glTF */
    sk_sampler_share(uj->anim, SK_SAMPLER_SHARE_MAX);
    sk_anim_additive_share(uj->anim, uj->s, SK_ANIM_ADDITIVE_SHARE_MAX);
  }
  if (mesh != NULL)
    json_object_set_new(j, "mesh", mesh);
  if (!uj->rc && !uj->has_id && sk_routes_content_id(j, uj->id) != 0)
    uj->rc = sk_error_set(&uj->err, SK_ENOMEM, "", "out of memory");
  if (uj->rc) {
    sk_skeleton_destroy(uj->s);
    sk_anim_destroy(uj->anim);
    uj->s = NULL;
    uj->anim = NULL;
  }
  json_decref(j);
  sk_budget_release(r->cfg.budget, tree);
}

/* A dry run's answer: what the upload would store (and under which id),
 * 200, nothing stored or evicted. */
static void dry_run_answer(sk_http_req *req, const char *id, const upload_job *uj) {
  sk_strbuf b = {0};
  sk_routes__write_summary(&b, id, uj->s, uj->extra.mesh_json, uj->gltf ? uj->extra.skins_json : NULL,
                   (long long)uj->extra.skin, uj->anim);
  sk_routes__respond_json(req, 200, &b, NULL);
}

static void upload_after(sk_http_req *req, void *arg, int status) {
  upload_job *uj = arg;
  if (status == SK_EBUSY)
    sk_problem(req, SK_EBUSY, "", "the upload waited past its deadline; retry later");
  else if (uj->rc)
    sk_problem_err(req, &uj->err, uj->gltf ? SK_EFORMAT : uj->rc);
  else if (uj->dry_run)
    dry_run_answer(req, uj->id, uj);
  else {
    const sk_cache_source src = upload_source(uj);
    store_and_answer(uj->routes, req, uj->id, !uj->has_id, uj->s, uj->anim, &src);
  }
  if (status == SK_EBUSY || uj->rc || uj->dry_run) { /* built but not stored */
    sk_skeleton_destroy(uj->s);
    sk_anim_destroy(uj->anim);
  }
  sk_cache_discard(uj->routes->cache, &uj->staged); /* not committed: a refusal after the pool */
  sk_gltf_extra_clear(&uj->extra);
  sk_budget_release(uj->routes->cfg.budget, uj->reserved);
  free(uj);
}

/* PUT/POST of a skeleton. A glTF/GLB body gives the skin picked by ?skin=
 * (default 0) with its clips, refused before anything is built when its
 * estimate is over --max-skeleton-mb. Bodies of pool_upload bytes and
 * more (32 KiB) are parsed and built on the pool. */
void sk_routes__put_skeleton(sk_routes *r, sk_http_req *req, const char *given_id) {
  /* A GLB labelled as JSON would be a 400 malformed-json at line 1: name
   * what it is and the type to send instead. */
  if (sk_routes__gltf_type(sk_http_header(req, "Content-Type")) == 0 && req->body.len >= 12 &&
      memcmp(req->body.data, "glTF", 4) == 0) {
    sk_problem(req, SK_EUNSUPPORTED, "",
               "the body is a binary glTF (GLB: it starts with \"glTF\"), not JSON; send it with Content-Type: "
               "model/gltf-binary");
    return;
  }
  upload_job *uj = calloc(1, sizeof *uj);
  if (uj == NULL) {
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  uj->routes = r;
  uj->data = req->body.data ? req->body.data : "";
  uj->len = req->body.len;
  uj->gltf = sk_routes__gltf_type(sk_http_header(req, "Content-Type")) != 0;
  uj->skin = uj->gltf ? sk_http_query(req, "skin") : NULL;
  uj->has_id = given_id != NULL;
  const char *dry = sk_http_query(req, "dryRun");
  if (dry != NULL && strcmp(dry, "true") != 0 && strcmp(dry, "false") != 0) {
    free(uj);
    sk_problem(req, SK_EINVAL, "", "dryRun is true or false, not \"%s\"", dry);
    return;
  }
  uj->dry_run = dry != NULL && strcmp(dry, "true") == 0;
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

/* The detail of a failed put; nothing was changed in any case. */

/* Publishes a new skeleton and answers 201/200 with its summary. */
static void store_and_answer(sk_routes *r, sk_http_req *req, const char *id, bool derived_id, sk_skeleton *s,
                             sk_anim *anim, const sk_cache_source *src) {
  if (sk_routes__precondition_failed(r, req)) { /* a large upload waited on the pool */
    sk_skeleton_destroy(s);
    sk_anim_destroy(anim);
    return;
  }
  bool replaced;
  sk_cache_entry *e;
  int rc = sk_cache_put_full(r->cache, id, s, anim, src, &replaced, &e);
  if (rc) {
    sk_problem(req, rc, "", "%s", sk_routes__store_failure(rc));
    return;
  }
  sk_strbuf b = {0};
  sk_routes__write_summary(&b, e->id, e->model->skel, e->model->mesh_json, e->model->skins_json, e->model->skin,
                           e->model->anim);
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
    char tail[48];
    sk_strbuf_append(&b, tail, (size_t)snprintf(tail, sizeof tail, "],\"evictedCount\":%zu}", ngone));
  }
  if (derived_id) {
    char loc[sizeof "/v1/skeletons/" + SK_CACHE_ID_MAX];
    snprintf(loc, sizeof loc, "/v1/skeletons/%s", id);
    const char *hdr[] = {"Location", loc, NULL};
    sk_routes__respond_json(req, 201, &b, hdr); /* headers are copied: loc may go */
  } else {
    sk_routes__respond_json(req, replaced ? 200 : 201, &b, NULL);
  }
  sk_cache_entry_unref(e);
}
