/* sk_routes_anim: the clips of a stored skeleton over HTTP. One clip's
 * detail (GET /v1/skeletons/{id}/animations/{clip}), a stored retarget
 * (POST /v1/skeletons/{id}/animations: copyAnimationRange from another
 * skeleton) and what an upload of Babylon-format clips keeps (its JSON text, persisted and re-parsed on
 * load: the text is what the client sent, so a reload parses exactly the
 * bits it parsed the first time). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sk_anim.h"
#include "sk_banim.h"
#include "sk_error.h"
#include "sk_json.h"
#include "sk_problem.h"
#include "sk_routes_int.h"

static bool babylon_format(const json_t *j) {
  const json_t *bones = json_object_get(j, "bones");
  return json_array_size(bones) > 0 && json_object_get(json_array_get(bones, 0), "parentBoneIndex") != NULL;
}

int sk_routes__keep_babylon_source(const sk_routes *r, const json_t *j, const sk_skeleton *s, sk_anim **anim,
                                   const char *text, size_t len, sk_error *err) {
  if (*anim == NULL && !babylon_format(j))
    return 0;
  /* What the upload will hold in memory: the skeleton, its clips and the
   * text; the same cap a glTF upload's estimate meets. */
  size_t bytes = sk_cache_skeleton_bytes(s) + sk_anim_memory(*anim) + len;
  if (bytes > r->cfg.max_skeleton)
    return sk_error_set(err, SK_ETOOBIG, "",
                        "the skeleton and its Babylon clips take %zu bytes; the limit is %zu (--max-skeleton-mb)", bytes,
                        r->cfg.max_skeleton);
  sk_anim *made = NULL;
  if (*anim == NULL && sk_anim_create_babylon_empty(s->count, &made) != 0)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  sk_anim *a = made ? made : *anim;
  if ((a->source = malloc(len ? len : 1)) == NULL) {
    sk_anim_destroy(made);
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  }
  memcpy(a->source, text, len);
  a->source_len = len;
  *anim = a;
  return 0;
}

void sk_routes__animation(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  sk_cache_entry *e = sk_routes__entry_or_404(r, req, m);
  if (e == NULL)
    return;
  size_t clip;
  if (!m->clip_ok || m->clip[0] == 0 || e->anim == NULL || sk_anim_find_clip(e->anim, m->clip, &clip) != 0) {
    sk_problem(req, SK_ENOTFOUND, "", "skeleton \"%s\" has no clip \"%s\"%s", e->id, m->clip_ok ? m->clip : "(too long)",
               e->anim == NULL ? " (it has no animations)" : "");
    sk_cache_entry_unref(e);
    return;
  }
  sk_strbuf b = {0};
  sk_anim_write_clip_json(e->anim, e->skel, clip, &b); /* out of memory: b.failed, answered 503 */
  sk_cache_entry_unref(e);
  sk_routes__respond_json(req, 200, &b, NULL);
}

/* The Babylon text `e` was uploaded with, parsed; NULL (with a problem in
 * err at `ptr`) for a skeleton uploaded in another format. */
static json_t *babylon_text(const sk_cache_entry *e, const char *ptr, sk_error *err) {
  json_t *j = NULL;
  if (e->anim == NULL || e->anim->source == NULL)
    sk_error_set(err, SK_EUNSUPPORTED, ptr,
                 "skeleton \"%s\" was not uploaded in Babylon's Skeleton.serialize() format (bones with "
                 "\"parentBoneIndex\"): copyAnimationRange needs that format on both sides",
                 e->id);
  else if (sk_json_load(e->anim->source, e->anim->source_len, &j, err) != 0)
    j = NULL; /* it parsed at upload: only out of memory */
  return j;
}

/* Copies range `name` of `src` onto `dst` (copyAnimationRange) and builds
 * the result: *text (new, NUL-terminated) the new Babylon JSON of `dst`,
 * *anim (new) its clips with that text kept. */
static int copy_range(const sk_routes *r, const sk_cache_entry *dst, const sk_cache_entry *src, const char *name,
                      bool rescale, sk_anim **anim, sk_error *err) {
  *anim = NULL;
  json_t *dj = babylon_text(dst, "", err), *sj = dj ? babylon_text(src, "/from", err) : NULL, *out = NULL;
  json_t *again = NULL;
  sk_skeleton *fresh = NULL;
  char *text = NULL;
  int rc = sj == NULL ? (err->code ? err->code : SK_ENOMEM) : 0;
  if (!rc)
    rc = sk_banim_copy_range(dj, sj, "/from", name, "/animation", rescale, &out, err);
  /* Stored as text and parsed back from it, as a reload will parse it:
   * jansson writes doubles with 17 digits, so the keys keep their bits. */
  if (!rc && (text = json_dumps(out, JSON_COMPACT)) == NULL)
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  if (!rc && (rc = sk_json_load(text, strlen(text), &again, err)) == 0)
    rc = sk_json_parse_skeleton_anim(again, "", r->cfg.max_bones, &fresh, anim, err);
  if (!rc && (*anim == NULL || (*anim)->bone_count != dst->skel->count))
    rc = sk_error_set(err, SK_EINVAL, "", "the copy does not fit the stored skeleton");
  if (!rc)
    rc = sk_routes__keep_babylon_source(r, again, fresh, anim, text, strlen(text), err);
  if (rc) {
    sk_anim_destroy(*anim);
    *anim = NULL;
  }
  sk_skeleton_destroy(fresh);
  free(text);
  json_decref(again);
  json_decref(out);
  json_decref(sj);
  json_decref(dj);
  return rc;
}

/* Parses {"from": id, "animation": range, "rescale"?: bool}. */
static int parse_copy(const json_t *j, const char **from, const char **name, bool *rescale, sk_error *err) {
  static const char *const keys[] = {"from", "animation", "rescale", NULL};
  const json_t *f = json_object_get(j, "from"), *a = json_object_get(j, "animation"), *s = json_object_get(j, "rescale");
  int rc;
  if (!json_is_object(j))
    return sk_error_set(err, SK_ETYPE, "", "expected {\"from\": skeleton id, \"animation\": range name, \"rescale\"?}");
  if ((rc = sk_routes__check_keys(j, keys, err)) != 0)
    return rc;
  if (f == NULL || a == NULL)
    return sk_error_set(err, SK_EMISSING, f == NULL ? "/from" : "/animation", "needs \"from\" and \"animation\"");
  if (!json_is_string(f))
    return sk_error_set(err, SK_ETYPE, "/from", "expected the id of the source skeleton");
  if (!json_is_string(a))
    return sk_error_set(err, SK_ETYPE, "/animation", "expected the name of a range of the source skeleton");
  if (s != NULL && !json_is_boolean(s))
    return sk_error_set(err, SK_ETYPE, "/rescale", "expected true or false");
  *from = json_string_value(f);
  *name = json_string_value(a);
  *rescale = json_is_true(s);
  return 0;
}

void sk_routes__animations(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  json_t *j = sk_routes__load_body(req);
  if (j == NULL)
    return;
  sk_cache_entry *e = sk_routes__entry_or_404(r, req, m), *src = NULL;
  if (e == NULL) {
    json_decref(j);
    return;
  }
  sk_error err;
  sk_error_clear(&err);
  const char *from = NULL, *name = NULL;
  bool rescale = false;
  sk_anim *anim = NULL;
  int rc = parse_copy(j, &from, &name, &rescale, &err);
  if (!rc && (src = sk_cache_get(r->cache, from)) == NULL)
    rc = sk_error_set(&err, SK_ENOTFOUND, "/from", "no skeleton with id \"%s\"", from);
  if (!rc)
    rc = copy_range(r, e, src, name, rescale, &anim, &err);
  sk_skeleton *clone = NULL;
  if (!rc && sk_skeleton_clone(e->skel, &clone) != 0)
    rc = sk_error_set(&err, SK_ENOMEM, "", "out of memory");
  size_t clip = 0;
  if (!rc && sk_anim_find_clip(anim, name, &clip) != 0)
    rc = sk_error_set(&err, SK_EINVAL, "/animation", "the copied range is missing"); /* copy_range adds it */
  sk_cache_entry *now = NULL;
  if (!rc) {
    /* The stored skeleton (PATCHes included) with the new clips; the
     * record keeps the new text. */
    const sk_cache_source text = {anim->source, anim->source_len, NULL, true};
    rc = sk_cache_put_full(r->cache, e->id, clone, anim, &text, NULL, &now);
    clone = NULL;
    anim = NULL;
    if (rc)
      sk_error_set(&err, rc, "", "cannot store the skeleton%s",
                   rc == SK_EIO || rc == SK_ENOSPACE ? " in the data directory: nothing was changed" : "");
  }
  sk_skeleton_destroy(clone);
  sk_anim_destroy(anim);
  sk_cache_entry_unref(src);
  sk_cache_entry_unref(e);
  json_decref(j);
  if (rc) {
    sk_problem_err(req, &err, rc);
    return;
  }
  sk_strbuf b = {0};
  sk_anim_write_clip_json(now->anim, now->skel, clip, &b);
  sk_cache_entry_unref(now);
  sk_routes__respond_json(req, 201, &b, NULL);
}
