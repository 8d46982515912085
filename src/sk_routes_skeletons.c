/* sk_routes_skeletons: the skeleton resource. List, store (JSON or glTF,
 * large uploads imported on the pool), get, delete, PATCH bones (all or
 * nothing, on a copy published atomically) and POST rest. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_error.h"
#include "sk_eval.h"
#include "sk_gltf.h"
#include "sk_gltf_mesh.h"
#include "sk_json.h"
#include "sk_ops.h"
#include "sk_numfmt.h"
#include "sk_problem.h"
#include "sk_routes_int.h"

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

/* ,"slots":[...]: bone order[k]'s output slot (its matrix in `final`), -1
 * for none. Slots need not follow `order` (a file may list its joints in
 * any order), so a client maps matrix k through this, not through `order`. */
static void write_slots(sk_strbuf *b, const sk_skeleton *s) {
  sk_strbuf_append(b, ",\"slots\":[", 10);
  for (size_t i = 0; i < s->count; i++) {
    if (i > 0)
      sk_strbuf_append(b, ",", 1);
    write_int(b, s->bones[i].index);
  }
  sk_strbuf_append(b, "]", 1);
}

/* ,"mesh":<chain>|null and, for a glTF skeleton, ,"skin":k,"skins":[...]
 * (texts made by jansson at the put, copied in as they are). */
static void write_mesh_skins(sk_strbuf *b, const char *mesh_json, const char *skins_json, long long skin) {
  sk_strbuf_append(b, ",\"mesh\":", 8);
  if (mesh_json != NULL)
    sk_strbuf_append(b, mesh_json, strlen(mesh_json));
  else
    sk_strbuf_append(b, "null", 4);
  if (skins_json != NULL) {
    sk_strbuf_append(b, ",\"skin\":", 8);
    write_int(b, skin);
    sk_strbuf_append(b, ",\"skins\":", 9);
    sk_strbuf_append(b, skins_json, strlen(skins_json));
  }
}

/* {"id","bones","order","slots","mesh","skin"?,"skins"?,"animations"?} of a
 * skeleton stored or, for a dry run, only built. */
static void write_summary_of(sk_strbuf *b, const char *id, const sk_skeleton *s, const char *mesh_json,
                             const char *skins_json, long long skin, const sk_anim *anim) {
  sk_strbuf_append(b, "{\"id\":", 6);
  sk_json_write_string(b, id);
  sk_strbuf_append(b, ",\"bones\":", 9);
  write_uint(b, s->count);
  sk_strbuf_append(b, ",\"order\":", 9);
  sk_eval_write_order(s, b);
  write_slots(b, s);
  write_mesh_skins(b, mesh_json, skins_json, skin);
  if (anim != NULL) { /* the clips it came with, as GET lists them */
    sk_strbuf_append(b, ",\"animations\":", 14);
    sk_anim_write_clips_json(anim, b);
  }
  sk_strbuf_append(b, "}", 1);
}

static void write_summary(sk_strbuf *b, const sk_cache_entry *e) {
  write_summary_of(b, e->id, e->skel, e->mesh_json, e->skins_json, e->skin, e->anim);
}

/* {"id","order","slots","bones":[{"name","parent","index","length"?,"local","bind","rest"}],...} */
static void write_skeleton(sk_strbuf *b, const sk_cache_entry *e) {
  const sk_skeleton *s = e->skel;
  sk_strbuf_append(b, "{\"id\":", 6);
  sk_json_write_string(b, e->id);
  sk_strbuf_append(b, ",\"order\":", 9);
  sk_eval_write_order(s, b);
  write_slots(b, s);
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
  write_mesh_skins(b, e->mesh_json, e->skins_json, e->skin);
  sk_strbuf_append(b, "}", 1);
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
  sk_routes__respond_json(req, 200, &b, NULL);
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
} upload_job;

static void gltf_finish(sk_routes *r, sk_http_req *req, const char *given_id, upload_job *uj);

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
  if (!rc && (rc = sk_gltf_extra_fill(g, skin, true, &uj->extra)) != 0)
    sk_error_set(&uj->err, rc, "", "out of memory");
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
  write_summary_of(&b, id, uj->s, uj->extra.mesh_json, uj->gltf ? uj->extra.skins_json : NULL,
                   (long long)uj->extra.skin, uj->anim);
  sk_routes__respond_json(req, 200, &b, NULL);
}

static void upload_after(sk_http_req *req, void *arg, int status) {
  upload_job *uj = arg;
  if (status == SK_EBUSY)
    sk_problem(req, SK_EBUSY, "", "the upload waited past its deadline; retry later");
  else if (uj->rc)
    sk_problem_err(req, &uj->err, uj->gltf ? SK_EFORMAT : uj->rc);
  else if (uj->gltf)
    gltf_finish(uj->routes, req, uj->has_id ? uj->id : NULL, uj);
  else if (uj->dry_run)
    dry_run_answer(req, uj->id, uj);
  else if (uj->anim != NULL) { /* Babylon clips: the record keeps the text, re-parsed on load */
    const sk_cache_source text = {.gltf = uj->anim->source, .gltf_len = uj->anim->source_len,
                                  .mesh_json = uj->extra.mesh_json, .json = true};
    store_and_answer(uj->routes, req, uj->id, !uj->has_id, uj->s, uj->anim, &text);
  } else {
    const sk_cache_source json_source = {.mesh_json = uj->extra.mesh_json};
    store_and_answer(uj->routes, req, uj->id, !uj->has_id, uj->s, NULL, &json_source);
  }
  if (status == SK_EBUSY || uj->rc || uj->dry_run) { /* built but not stored */
    sk_skeleton_destroy(uj->s);
    sk_anim_destroy(uj->anim);
  }
  sk_gltf_extra_clear(&uj->extra);
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

/* Stores an imported glTF skin. A POST id hashes the file and the selector. */
static void gltf_finish(sk_routes *r, sk_http_req *req, const char *given_id, upload_job *uj) {
  const char *skin = uj->skin;
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
  if (uj->dry_run) {
    dry_run_answer(req, id, uj);
    return;
  }
  sk_cache_source src = {.gltf = req->body.data, .gltf_len = req->body.len, .skin = skin,
                         .mesh_json = uj->extra.mesh_json, .skins_json = uj->extra.skins_json,
                         .skin_index = (int32_t)uj->extra.skin};
  store_and_answer(r, req, id, given_id == NULL, uj->s, uj->anim, &src);
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
  if (sk_routes__precondition_failed(r, req)) { /* a large upload waited on the pool */
    sk_skeleton_destroy(s);
    sk_anim_destroy(anim);
    return;
  }
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
    sk_routes__respond_json(req, 201, &b, hdr); /* headers are copied: loc may go */
  } else {
    sk_routes__respond_json(req, replaced ? 200 : 201, &b, NULL);
  }
  sk_cache_entry_unref(e);
}

static void get_skeleton(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  sk_cache_entry *e = sk_routes__entry_or_404(r, req, m);
  if (e == NULL)
    return;
  sk_strbuf b = {0};
  write_skeleton(&b, e);
  sk_cache_entry_unref(e);
  sk_routes__respond_json(req, 200, &b, NULL);
}

static void delete_skeleton(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
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
  if (sk_routes__precondition_failed(r, req)) { /* another write landed while a pooled one waited */
    sk_skeleton_destroy(clone);
    sk_anim_destroy(anim);
    return;
  }
  sk_cache_entry *e;
  int rc = sk_cache_put_full(r->cache, id, clone, anim, NULL, NULL, &e);
  if (rc) {
    sk_problem(req, rc, "", "%s", store_failure(rc));
    return;
  }
  sk_strbuf b = {0};
  write_skeleton(&b, e);
  sk_cache_entry_unref(e);
  sk_routes__respond_json(req, 200, &b, NULL);
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
  else if ((rc = sk_routes__check_keys(j, k_top, err)) != 0)
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
static void patch_bones(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  json_t *j = sk_routes__load_body(req);
  if (j == NULL)
    return;
  sk_cache_entry *e = sk_routes__entry_or_404(r, req, m);
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
  else if (j != NULL && (rc = sk_routes__check_keys(j, k_top, err)) != 0)
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

static void post_rest(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  json_t *j = NULL;
  if (req->body.len > 0 && (j = sk_routes__load_body(req)) == NULL)
    return;
  sk_cache_entry *e = sk_routes__entry_or_404(r, req, m);
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


/* ---- large PATCH and rest bodies on the pool ------------------------------------------ */

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
  size_t tree = 0;
  if ((jb->rc = sk_routes__load_pooled(jb->routes, jb->data, jb->len, &j, &tree, &jb->err)) != 0) {
    sk_budget_release(jb->routes->cfg.budget, tree);
    return;
  }
  if (jb->entry == NULL)
    jb->rc = sk_error_set(&jb->err, SK_ENOTFOUND, "", "no skeleton with id \"%s\"", jb->id);
  else if (jb->bones)
    jb->rc = patch_apply(jb->entry->skel, j, &jb->copy, &jb->err);
  else
    jb->rc = rest_apply(jb->entry->skel, j, &jb->copy, &jb->err);
  json_decref(j);
  sk_budget_release(jb->routes->cfg.budget, tree);
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
    const sk_route_match *m = req->data;
    if (jb->bones)
      patch_bones(r, req, m);
    else
      post_rest(r, req, m);
  } else {
    finish_update(r, req, jb->entry, jb->copy, jb->rc, &jb->err); /* releases both; 400/404 when rc says so */
  }
  free(jb);
}

static void defer_json_body(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  json_body_job *jb = calloc(1, sizeof *jb);
  if (jb == NULL) {
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  jb->routes = r;
  jb->entry = m->id_ok ? sk_cache_get(r->cache, m->id) : NULL;
  jb->bones = m->route->id == SK_ROUTE_BONES;
  snprintf(jb->id, sizeof jb->id, "%s", m->id_ok ? m->id : "(invalid id)");
  jb->data = req->body.data;
  jb->len = req->body.len;
  if (sk_http_defer(req, json_body_work, json_body_after, jb) != 0) {
    sk_cache_entry_unref(jb->entry);
    free(jb);
    sk_problem(req, SK_EBUSY, "", "too many jobs in flight; retry later");
  }
}


/* ---- the resource's handlers (the route table's entries) --------------------------------- */

void sk_routes__skeletons(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  (void)m;
  if (req->method_id == SK_METHOD_POST)
    put_skeleton(r, req, NULL);
  else
    get_list(r, req);
}

void sk_routes__skeleton(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  if (req->method_id == SK_METHOD_PUT) {
    if (!m->id_ok)
      sk_problem(req, SK_EINVAL, "", "skeleton ids match [A-Za-z0-9._-]{1,128}, not \".\" or \"..\"");
    else
      put_skeleton(r, req, m->id);
  } else if (req->method_id == SK_METHOD_DELETE) {
    delete_skeleton(r, req, m);
  } else {
    get_skeleton(r, req, m);
  }
}

void sk_routes__bones(sk_routes *r, sk_http_req *req, const sk_route_match *m) { patch_bones(r, req, m); }

void sk_routes__rest(sk_routes *r, sk_http_req *req, const sk_route_match *m) { post_rest(r, req, m); }

void sk_routes__bones_pooled(sk_routes *r, sk_http_req *req, const sk_route_match *m) { defer_json_body(r, req, m); }
