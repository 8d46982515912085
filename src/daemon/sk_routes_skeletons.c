/* sk_routes_skeletons: the skeleton resource. List, get, delete, PATCH
 * bones (all or nothing, on a copy published atomically) and POST rest,
 * with the writers of a skeleton and its summary. Storing one (PUT, POST,
 * glTF imports, dry runs) is sk_routes_upload.c. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_reply.h"
#include "sk_error.h"
#include "sk_pose.h"
#include "sk_json.h"
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

void sk_routes__write_summary(sk_strbuf *b, const char *id, const sk_skeleton *s, const char *mesh_json,
                              const char *skins_json, long long skin, const sk_anim *anim) {
  sk_strbuf_append(b, "{\"id\":", 6);
  sk_json_write_string(b, id);
  sk_strbuf_append(b, ",\"bones\":", 9);
  write_uint(b, s->count);
  sk_strbuf_append(b, ",\"order\":", 9);
  sk_json_write_order(s, b);
  write_slots(b, s);
  write_mesh_skins(b, mesh_json, skins_json, skin);
  if (anim != NULL) { /* the clips it came with, as GET lists them */
    sk_strbuf_append(b, ",\"animations\":", 14);
    sk_anim_write_clips_json(anim, b);
  }
  sk_strbuf_append(b, "}", 1);
}

/* {"id","order","slots","bones":[{"name","parent","index","length"?,"local","bind","rest"}],...} */
static void write_skeleton(sk_strbuf *b, const sk_cache_entry *e) {
  const sk_skeleton *s = e->model->skel;
  sk_strbuf_append(b, "{\"id\":", 6);
  sk_json_write_string(b, e->id);
  sk_strbuf_append(b, ",\"order\":", 9);
  sk_json_write_order(s, b);
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
  if (e->model->anim != NULL)
    sk_anim_write_clips_json(e->model->anim, b);
  else
    sk_strbuf_append(b, "[]", 2);
  write_mesh_skins(b, e->model->mesh_json, e->model->skins_json, e->model->skin);
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

/* The listing's rows, copied on the loop thread for any thread to write. */
typedef struct list_answer {
  size_t n;
  struct {
    char id[SK_CACHE_ID_MAX + 1];
    size_t bones;
  } v[];
} list_answer;

static int list_build(void *arg, sk_strbuf *b) {
  const list_answer *la = arg;
  sk_strbuf_append(b, "{\"skeletons\":[", 14);
  for (size_t i = 0; i < la->n; i++) {
    sk_strbuf_append(b, i ? ",{\"id\":" : "{\"id\":", i ? 7 : 6);
    sk_json_write_string(b, la->v[i].id);
    sk_strbuf_append(b, ",\"bones\":", 9);
    write_uint(b, la->v[i].bones);
    sk_strbuf_append(b, "}", 1);
  }
  sk_strbuf_append(b, "]}", 2);
  return b->failed ? SK_ENOMEM : 0;
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
  /* The ids and counts copied (the entries are the loop's), then costed
   * and written like every read answer (sk_reply_send). */
  list_answer *la = calloc(1, sizeof *la + l.n * sizeof la->v[0]);
  if (la == NULL) {
    free(l.v);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  size_t bound = 16;
  for (size_t i = 0; i < l.n; i++) {
    memcpy(la->v[i].id, l.v[i]->id, sizeof la->v[i].id);
    la->v[i].bones = l.v[i]->bone_count;
    bound += 40 + sk_reply_cost_string(l.v[i]->id);
  }
  la->n = l.n;
  free(l.v);
  const sk_reply a = {.bound = bound, .max_answer = r->cfg.cost.max_answer, .status = 200,
                       .what = "the skeleton listing", .build = list_build, .release = free, .arg = la};
  sk_reply_send(req, &a);
}

const char *sk_routes__store_failure(int rc) {
  switch (rc) {
  case SK_ENOSPACE:
    return "the data directory is full or read-only (ENOSPC, EDQUOT, EFBIG or EROFS): nothing was changed";
  case SK_EIO: return "cannot write the skeleton to the data directory: nothing was changed";
  default: return "cannot store the skeleton";
  }
}

static int skeleton_build(void *arg, sk_strbuf *out) {
  write_skeleton(out, arg);
  return out->failed ? SK_ENOMEM : 0;
}

static void skeleton_release(void *arg) { sk_cache_entry_unref(arg); }

/* A skeleton's JSON is 48 floats a bone: costed (sk_reply), and
 * written on the pool for the large ones (the entry is immutable). */
static void get_skeleton(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  sk_cache_entry *e = sk_routes__entry_or_404(r, req, m);
  if (e == NULL)
    return;
  const sk_reply a = {.bound = sk_reply_cost_skeleton(e), .max_answer = r->cfg.cost.max_answer, .status = 200,
                       .what = "the skeleton's JSON", .build = skeleton_build, .release = skeleton_release, .arg = e};
  sk_reply_send(req, &a);
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
    sk_problem(req, rc, "", "%s", sk_routes__store_failure(rc));
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
  sk_anim *anim = sk_anim_ref(e->model->anim);
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
        rc = sk_json_no_bone(c, name, p, err);
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
  json_t *j;
  sk_cache_entry *e = sk_routes__body_and_entry(r, req, m, &j);
  if (e == NULL)
    return;
  sk_error err;
  sk_error_clear(&err);
  sk_skeleton *c = NULL;
  int rc = patch_apply(e->model->skel, j, &c, &err);
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
      rc = sk_json_no_bone(c, name, p, err);
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
  int rc = rest_apply(e->model->skel, j, &c, &err);
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
    jb->rc = patch_apply(jb->entry->model->skel, j, &jb->copy, &jb->err);
  else
    jb->rc = rest_apply(jb->entry->model->skel, j, &jb->copy, &jb->err);
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
    sk_routes__put_skeleton(r, req, NULL);
  else
    get_list(r, req);
}

void sk_routes__skeleton(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  if (req->method_id == SK_METHOD_PUT) {
    if (!m->id_ok)
      sk_problem(req, SK_EINVAL, "", "skeleton ids match [A-Za-z0-9._-]{1,128}, not \".\" or \"..\"");
    else
      sk_routes__put_skeleton(r, req, m->id);
  } else if (req->method_id == SK_METHOD_DELETE) {
    delete_skeleton(r, req, m);
  } else {
    get_skeleton(r, req, m);
  }
}

void sk_routes__bones(sk_routes *r, sk_http_req *req, const sk_route_match *m) { patch_bones(r, req, m); }

void sk_routes__rest(sk_routes *r, sk_http_req *req, const sk_route_match *m) { post_rest(r, req, m); }

void sk_routes__bones_pooled(sk_routes *r, sk_http_req *req, const sk_route_match *m) { defer_json_body(r, req, m); }
