/* sk_routes_anim: the clips of a stored skeleton over HTTP. One clip's
 * detail (GET /v1/skeletons/{id}/animations/{clip}), a stored retarget
 * (POST /v1/skeletons/{id}/animations: copyAnimationRange from another
 * skeleton, or with "retarget" AnimatorAvatar.retargetAnimationGroup
 * between glTF skeletons) and what an upload of Babylon-format clips keeps (its JSON text, persisted and re-parsed on
 * load: the text is what the client sent, so a reload parses exactly the
 * bits it parsed the first time). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_anim.h"
#include "sk_reply.h"
#include "sk_banim.h"
#include "sk_clipbounds.h"
#include "sk_cost.h"
#include "sk_pose.h"
#include "sk_frames.h"
#include "sk_error.h"
#include "sk_gltf_mesh.h"
#include "sk_json.h"
#include "sk_problem.h"
#include "sk_retarget.h"
#include "sk_retarget_json.h"
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

int sk_routes__babylon_clips(const sk_routes *r, const json_t *j, const sk_skeleton *s, const char *text, size_t len,
                             sk_anim **anim, size_t *reserved, sk_error *err) {
  *anim = NULL;
  if (!babylon_format(j))
    return 0;
  size_t estimate = 0, fixed = sk_cache_skeleton_bytes(s) + len;
  int rc = sk_banim_estimate(j, "", s, &estimate, err);
  if (rc)
    return rc;
  if (estimate > r->cfg.max_skeleton || fixed > r->cfg.max_skeleton - estimate)
    return sk_error_set(err, SK_ETOOBIG, "",
                        "the skeleton and its Babylon clips would take up to %zu bytes; the limit is %zu "
                        "(--max-skeleton-mb)",
                        estimate + fixed, r->cfg.max_skeleton);
  if (sk_budget_reserve(r->cfg.budget, estimate) != 0)
    return sk_error_set(err, SK_EBUSY, "",
                        "the Babylon clips (up to %zu bytes) do not fit in the memory budget (--memory-mb) now; "
                        "retry later",
                        estimate);
  *reserved += estimate;
  if ((rc = sk_banim_parse(j, "", s, anim, err)) != 0)
    return rc;
  rc = sk_routes__keep_babylon_source(r, j, s, anim, text, len, err);
  if (rc) {
    sk_anim_destroy(*anim);
    *anim = NULL;
  }
  return rc;
}

/* One clip's detail on its way out (sk_reply_send): the entry is a
 * reference, immutable, so the pool may write from it. */
typedef struct clip_answer {
  sk_cache_entry *e;
  size_t clip;
} clip_answer;

static int clip_build(void *arg, sk_strbuf *out) {
  const clip_answer *ca = arg;
  return sk_anim_write_clip_json(ca->e->model->anim, ca->e->model->skel, ca->clip, out);
}

static void clip_release(void *arg) {
  clip_answer *ca = arg;
  sk_cache_entry_unref(ca->e);
  free(ca);
}

/* Answers clip ca->clip of ca->e (takes `ca`) with `status`: costed, then
 * written inline or on the pool (a clip's key times can be tens of MB).
 * The 201 of a stored copy is not refused: the write is done, and the
 * clip fit --max-skeleton-mb. */
static void answer_clip(sk_routes *r, sk_http_req *req, clip_answer *ca, int status) {
  const sk_reply a = {.bound = sk_reply_cost_clip(ca->e->model->anim, ca->e->model->skel, ca->clip),
                      .max_answer = r->cfg.cost.max_answer, .status = status, .what = "the clip's detail",
                      .after_write = status == 201,
                      .build = clip_build, .release = clip_release, .arg = ca};
  sk_reply_send(req, &a);
}

void sk_routes__animation(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  size_t clip;
  sk_cache_entry *e = sk_routes__clip_or_404(r, req, m, &clip);
  if (e == NULL)
    return;
  clip_answer *ca = malloc(sizeof *ca);
  if (ca == NULL) {
    sk_cache_entry_unref(e);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  *ca = (clip_answer){e, clip};
  answer_clip(r, req, ca, 200);
}

/* A clip's bounds on their way out: built on the pool from the immutable model. */
typedef struct bounds_answer {
  sk_routes *r;
  sk_cache_entry *e;
  size_t clip;
  double fps;
} bounds_answer;

static void memo_drop(sk_routes *r, sk_routes_memo *m) {
  if (m->text != NULL)
    sk_budget_release(r->cfg.budget, m->len);
  free(m->text);
  memset(m, 0, sizeof *m);
}

void sk_routes__memo_clear(sk_routes *r) {
  for (size_t k = 0; k < SK_ROUTES_MEMOS; k++)
    memo_drop(r, &r->memo[k]);
}

static sk_routes_memo *memo_find(sk_routes *r, const sk_cache_entry *e, size_t clip, double fps) {
  for (size_t k = 0; k < SK_ROUTES_MEMOS; k++) {
    sk_routes_memo *m = &r->memo[k];
    if (m->text != NULL && m->version == e->version && m->clip == clip && m->fps == fps && strcmp(m->id, e->id) == 0)
      return m;
  }
  return NULL;
}

/* sk_reply.keep: the least recently used slot (or one of an older
 * version of the same id) takes a copy, when the budget has room. */
static void bounds_keep(void *arg, const char *text, size_t len) {
  const bounds_answer *ba = arg;
  sk_routes *r = ba->r;
  if (memo_find(r, ba->e, ba->clip, ba->fps) != NULL)
    return;
  sk_routes_memo *slot = &r->memo[0];
  for (size_t k = 0; k < SK_ROUTES_MEMOS; k++) {
    sk_routes_memo *m = &r->memo[k];
    if (m->text == NULL || (strcmp(m->id, ba->e->id) == 0 && m->version != ba->e->version)) {
      slot = m;
      break;
    }
    if (m->used < slot->used)
      slot = m;
  }
  memo_drop(r, slot);
  char *copy = malloc(len ? len : 1);
  if (copy == NULL || sk_budget_reserve(r->cfg.budget, len) != 0) {
    free(copy);
    return;
  }
  memcpy(copy, text, len);
  *slot = (sk_routes_memo){.version = ba->e->version, .used = ++r->memo_clock, .clip = ba->clip, .fps = ba->fps,
                           .text = copy, .len = len};
  snprintf(slot->id, sizeof slot->id, "%s", ba->e->id);
}

static int bounds_build(void *arg, sk_strbuf *out) {
  const bounds_answer *ba = arg;
  sk_error err;
  sk_error_clear(&err);
  return sk_clipbounds_write(ba->e->model, ba->clip, ba->fps, out, &err);
}

static void bounds_release(void *arg) {
  bounds_answer *ba = arg;
  sk_cache_entry_unref(ba->e);
  free(ba);
}

/* "fps": a plain decimal number, e.g. 30 or 29.97. */
static bool parse_fps(const char *v, double *fps) {
  if (v == NULL || *v == 0 || strlen(v) > 32 || strspn(v, "0123456789.") != strlen(v))
    return false;
  char *end;
  *fps = strtod(v, &end);
  return *end == 0;
}

void sk_routes__clip_bounds(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  size_t clip;
  sk_cache_entry *e = sk_routes__clip_or_404(r, req, m, &clip);
  if (e == NULL)
    return;
  double fps;
  const char *q = sk_http_query(req, "fps");
  if (!parse_fps(q, &fps)) {
    sk_problem(req, q == NULL ? SK_EMISSING : SK_ETYPE, "fps",
               "the query parameter fps (frames a second, a decimal number such as 30) is %s",
               q == NULL ? "required" : "not a number");
    sk_cache_entry_unref(e);
    return;
  }
  sk_error err;
  sk_error_clear(&err);
  size_t bound;
  if (sk_clipbounds_check(e->model, clip, fps, &r->cfg.cost, &bound, &err) != 0) {
    sk_problem_err(req, &err, SK_ERANGE);
    sk_cache_entry_unref(e);
    return;
  }
  sk_routes_memo *hit = memo_find(r, e, clip, fps);
  if (hit != NULL) {
    hit->used = ++r->memo_clock;
    sk_strbuf b = {0};
    sk_strbuf_append(&b, hit->text, hit->len);
    sk_cache_entry_unref(e);
    sk_routes__respond_json(req, 200, &b, NULL);
    return;
  }
  bounds_answer *ba = malloc(sizeof *ba);
  if (ba == NULL) {
    sk_cache_entry_unref(e);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  *ba = (bounds_answer){r, e, clip, fps};
  const sk_reply a = {.bound = bound, .max_answer = r->cfg.cost.max_answer, .status = 200, .pooled = true,
                      .what = "the clip's bounds", .build = bounds_build, .keep = bounds_keep, .release = bounds_release,
                      .arg = ba};
  sk_reply_send(req, &a);
}

/* The Babylon text `e` was uploaded with, parsed with its tree's bound
 * reserved in the memory budget (added to *reserved); NULL (with the
 * problem in err at `ptr`) for a skeleton uploaded in another format, a
 * budget that cannot hold the tree now (503) or no memory. Any thread. */
static json_t *babylon_text(const sk_routes *r, const sk_cache_entry *e, const char *ptr, size_t *reserved,
                            sk_error *err) {
  json_t *j = NULL;
  size_t got = 0;
  if (e->model->anim == NULL || e->model->anim->source == NULL)
    sk_error_set(err, SK_EUNSUPPORTED, ptr,
                 "skeleton \"%s\" was not uploaded in Babylon's Skeleton.serialize() format (bones with "
                 "\"parentBoneIndex\"): copyAnimationRange needs that format on both sides",
                 e->id);
  else if (sk_routes__load_pooled(r, e->model->anim->source, e->model->anim->source_len, &j, &got, err) != 0)
    j = NULL; /* it parsed at upload: the budget or memory */
  *reserved += got;
  return j;
}

/* Copies range `name` of `src` onto `dst` (copyAnimationRange) and builds
 * the result: *anim (new) the clips of dst's new Babylon JSON, with that
 * text kept. Pure (reads immutable entries): any thread. */
static int copy_range(const sk_routes *r, const sk_cache_entry *dst, const sk_cache_entry *src, const char *name,
                      bool rescale, sk_anim **anim, sk_error *err) {
  *anim = NULL;
  size_t reserved = 0;
  json_t *dj = babylon_text(r, dst, "", &reserved, err);
  json_t *sj = dj ? babylon_text(r, src, "/from", &reserved, err) : NULL, *out = NULL;
  json_t *again = NULL;
  sk_skeleton *fresh = NULL;
  char *text = NULL;
  int rc = sj == NULL ? (err->code ? err->code : SK_ENOMEM) : 0;
  if (!rc)
    rc = sk_banim_copy_range(dj, sj, "/from", name, "/animation", rescale, &out, err);
  json_decref(sj);
  json_decref(dj);
  sj = dj = NULL;
  /* Stored as text and parsed back from it, as a reload will parse it:
   * jansson writes doubles with 17 digits, so the keys keep their bits. */
  if (!rc && (text = json_dumps(out, JSON_COMPACT)) == NULL)
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  json_decref(out);
  size_t got = 0;
  if (!rc && (rc = sk_routes__load_pooled(r, text, strlen(text), &again, &got, err)) == 0 &&
      json_object_del(again, "mesh") >= -1 && /* the default mesh is the entry's, kept apart */
      (rc = sk_json_parse_skeleton(again, "", r->cfg.max_bones, &fresh, err)) == 0)
    rc = sk_routes__babylon_clips(r, again, fresh, text, strlen(text), anim, &reserved, err);
  reserved += got;
  if (!rc && (*anim == NULL || (*anim)->bone_count != dst->model->skel->count))
    rc = sk_error_set(err, SK_EINVAL, "", "the copy does not fit the stored skeleton");
  if (rc) {
    sk_anim_destroy(*anim);
    *anim = NULL;
  }
  sk_skeleton_destroy(fresh);
  free(text);
  json_decref(again);
  sk_budget_release(r->cfg.budget, reserved);
  return rc;
}

/* Parses {"from": id, "animation": range, "rescale"?: bool} or, with
 * "retarget": {options}, a glTF clip's retargeting (*retarget borrowed). */
static int parse_copy(const json_t *j, const char **from, const char **name, bool *rescale, const json_t **retarget,
                      sk_error *err) {
  static const char *const keys[] = {"from", "animation", "rescale", "retarget", NULL};
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
  *retarget = json_object_get(j, "retarget");
  if (*retarget != NULL && s != NULL)
    return sk_error_set(err, SK_EUNKNOWN, "/rescale",
                        "\"rescale\" is copyAnimationRange's; a retargeting takes its options in \"retarget\"");
  *from = json_string_value(f);
  *name = json_string_value(a);
  *rescale = json_is_true(s);
  return 0;
}

/* A copy in flight: parsed on the loop thread, copied inline or (large
 * texts: ~40 ms a MB to parse) on the pool, published on the loop thread. */
typedef struct copy_job {
  sk_routes *routes;
  sk_cache_entry *dst, *src; /* references */
  char *name;                /* owned */
  bool rescale;
  json_t *retarget;          /* owned: the "retarget" options, or NULL: copyAnimationRange */
  sk_strbuf clips;           /* the target's retargeted clips as the record keeps them */
  sk_anim *anim;             /* the result */
  sk_error err;
  int rc;
  /* A body of pool_upload bytes and more, parsed on the pool first: */
  const char *body;          /* borrowed from the request */
  size_t body_len;
  char from[SK_CACHE_ID_MAX + 1]; /* the source's id, found there */
  bool from_too_long;
} copy_job;

static void copy_job_free(copy_job *cj) {
  sk_cache_entry_unref(cj->dst);
  sk_cache_entry_unref(cj->src);
  sk_anim_destroy(cj->anim);
  json_decref(cj->retarget);
  sk_strbuf_free(&cj->clips);
  free(cj->name);
  free(cj);
}

/* ---- retargeting between glTF skeletons (sk_retarget) ---- */

typedef struct rt_sides {
  sk_retarget_side src, dst;
  double *above_src, *above_dst;
  sk_retarget_json o;
  size_t clip;
} rt_sides;

static void rt_sides_free(rt_sides *x) {
  free(x->above_src);
  free(x->above_dst);
  sk_retarget_json_free(&x->o);
}

static int rt_side(const sk_cache_entry *e, const char *ptr, sk_retarget_side *sd, double **above, sk_error *err) {
  const sk_model *md = e->model;
  if (md->anim == NULL || md->anim->babylon)
    return sk_error_set(err, SK_EUNSUPPORTED, ptr,
                        "skeleton \"%s\" was not uploaded as glTF: \"retarget\" retargets glTF clips onto glTF "
                        "skeletons (Babylon's format: copyAnimationRange, without \"retarget\")",
                        e->id);
  size_t n = 0;
  if (sk_gltf_mesh_chain_above(md->mesh_json, true, above, &n) != 0)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  *sd = (sk_retarget_side){.s = md->skel, .a = md->anim, .above = *above, .above_count = n};
  return 0;
}

/* Everything checked before any work: formats, the clip, the options, the
 * cost against --max-work and the bytes of the new clips (*bytes) against
 * --max-skeleton-mb. Reads immutable entries: any thread. */
static int retarget_prepare(const sk_routes *r, const copy_job *cj, rt_sides *x, size_t *bytes, sk_error *err) {
  memset(x, 0, sizeof *x);
  int rc;
  if ((rc = rt_side(cj->dst, "", &x->dst, &x->above_dst, err)) != 0 ||
      (rc = rt_side(cj->src, "/from", &x->src, &x->above_src, err)) != 0)
    return rc;
  if (sk_anim_find_clip(x->src.a, cj->name, &x->clip) != 0)
    return sk_error_set(err, SK_ENOTFOUND, "/animation", "skeleton \"%s\" has no clip \"%.128s\"", cj->src->id,
                        cj->name);
  if ((rc = sk_retarget_json_parse(cj->retarget, &x->o, err)) != 0)
    return rc;
  const size_t cost = sk_retarget_cost(&x->src, x->clip, &x->dst, &x->o.o);
  if (cost > r->cfg.cost.max_work)
    return sk_error_set(err, SK_ETOOBIG, "/animation",
                        "retargeting this clip costs %zu work units, over --max-work %llu", cost,
                        (unsigned long long)r->cfg.cost.max_work);
  const sk_anim_clip *c = &x->src.a->clips[x->clip];
  size_t b = sk_anim_memory(x->dst.a) + sizeof *c + strlen(c->name) + 256;
  for (size_t k = 0; k < c->channel_count; k++)
    b += sizeof *c->channels + c->channels[k].count * (sizeof(double) * 13 + 1);
  *bytes = b;
  if (b > r->cfg.max_skeleton)
    return sk_error_set(err, SK_ETOOBIG, "/animation",
                        "the target's clips with this one would take %zu bytes; the limit is %zu (--max-skeleton-mb)",
                        b, r->cfg.max_skeleton);
  return 0;
}

/* Retargets (the work reserved in the memory budget first) and builds the
 * target's new clips into cj->anim; cj->name becomes the new clip's. */
static void gltf_retarget_work(copy_job *cj) {
  const sk_routes *r = cj->routes;
  rt_sides x;
  size_t bytes = 0;
  sk_anim_clip clip;
  memset(&clip, 0, sizeof clip);
  int rc = retarget_prepare(r, cj, &x, &bytes, &cj->err);
  bool reserved = false;
  if (!rc && sk_budget_reserve(r->cfg.budget, bytes) != 0)
    rc = sk_error_set(&cj->err, SK_EBUSY, "", "the retargeted clips (%zu bytes) do not fit in the memory budget "
                      "(--memory-mb) now; retry later", bytes);
  else if (!rc)
    reserved = true;
  if (!rc)
    rc = sk_retarget_clip(&x.src, x.clip, &x.dst, &x.o.o, &clip, &cj->err);
  char *name = rc ? NULL : strdup(clip.name);
  if (!rc && name == NULL)
    rc = sk_error_set(&cj->err, SK_ENOMEM, "", "out of memory");
  if (!rc && (rc = sk_retarget_append(x.dst.a, &clip, &cj->anim, &cj->err)) == 0) {
    free(cj->name);
    cj->name = name;
    name = NULL;
    if (sk_retarget_clips_encode(cj->anim, &cj->clips) != 0)
      rc = sk_error_set(&cj->err, SK_ENOMEM, "", "out of memory");
  }
  free(name);
  sk_retarget_clip_free(&clip);
  rt_sides_free(&x);
  if (reserved)
    sk_budget_release(r->cfg.budget, bytes);
  cj->rc = rc;
}

static void copy_work(void *arg) {
  copy_job *cj = arg;
  if (cj->retarget != NULL) {
    gltf_retarget_work(cj);
    return;
  }
  cj->rc = copy_range(cj->routes, cj->dst, cj->src, cj->name, cj->rescale, &cj->anim, &cj->err);
}

/* Publishes the copy with the current skeleton of its id and answers the
 * new clip (201), or the problem. Frees `cj`. Loop thread. */
static void copy_publish(sk_http_req *req, copy_job *cj) {
  sk_routes *r = cj->routes;
  sk_skeleton *clone = NULL;
  size_t clip = 0;
  sk_cache_entry *now = NULL;
  int rc = cj->rc;
  sk_error *err = &cj->err;
  if (!rc && sk_skeleton_clone(cj->dst->model->skel, &clone) != 0)
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  if (!rc && sk_anim_find_clip(cj->anim, cj->name, &clip) != 0)
    rc = sk_error_set(err, SK_EINVAL, "/animation", "the copied range is missing"); /* copy_range adds it */
  if (!rc) {
    /* The stored skeleton (PATCHes included) with the new clips; the
     * record keeps the new text. */
    const sk_cache_source text = {.gltf = cj->anim->source, .gltf_len = cj->anim->source_len,
                                  .mesh_json = cj->dst->model->mesh_json, .json = true};
    /* A retargeting keeps the file, mesh and skins; the record gets the clips. */
    const sk_cache_source kept = {.keep = true, .clips = cj->clips.data, .clips_len = cj->clips.len};
    rc = sk_cache_put_full(r->cache, cj->dst->id, clone, cj->anim, cj->retarget != NULL ? &kept : &text, NULL, &now);
    clone = NULL;
    cj->anim = NULL;
    if (rc)
      sk_error_set(err, rc, "", "cannot store the skeleton%s",
                   rc == SK_EIO || rc == SK_ENOSPACE ? " in the data directory: nothing was changed" : "");
  }
  sk_skeleton_destroy(clone);
  if (rc) {
    sk_problem_err(req, err, rc);
    copy_job_free(cj);
    return;
  }
  copy_job_free(cj);
  clip_answer *ca = malloc(sizeof *ca);
  if (ca == NULL) {
    sk_cache_entry_unref(now);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  *ca = (clip_answer){now, clip};
  answer_clip(r, req, ca, 201);
}

static void copy_after(sk_http_req *req, void *arg, int status) {
  copy_job *cj = arg;
  sk_cache_entry *now = sk_cache_get(cj->routes->cache, cj->dst->id);
  bool stale = now != cj->dst;
  sk_cache_entry_unref(now);
  if (status == SK_EBUSY) {
    sk_problem(req, SK_EBUSY, "", "the request waited past its deadline; retry later");
    copy_job_free(cj);
  } else if (stale && cj->rc == 0) {
    /* the skeleton changed (or went) while the copy ran: not on top of a
     * version nobody asked for */
    sk_problem(req, SK_EBUSY, "", "skeleton \"%s\" changed while the copy was made; retry", cj->dst->id);
    copy_job_free(cj);
  } else {
    copy_publish(req, cj);
  }
}

/* Finds the source `from` (a borrowed id), then copies inline or, for
 * large texts, on the pool. Takes `cj`; answers. Loop thread. */
static void start_copy(sk_routes *r, sk_http_req *req, copy_job *cj, const char *from) {
  int rc = 0;
  if ((cj->src = sk_cache_get(r->cache, from)) == NULL)
    rc = sk_error_set(&cj->err, SK_ENOTFOUND, "/from", "no skeleton with id \"%s\"", from);
  if (rc) {
    sk_problem_err(req, &cj->err, rc);
    copy_job_free(cj);
    return;
  }
  const sk_cache_entry *e = cj->dst;
  size_t text =
      (e->model->anim ? e->model->anim->source_len : 0) + (cj->src->model->anim ? cj->src->model->anim->source_len : 0);
  if (cj->retarget != NULL) /* keys, as a Babylon text's bytes: a retargeting's size */
    text = cj->src->model->anim != NULL ? sk_anim_memory(cj->src->model->anim) : 0;
  if (text >= r->cfg.pool_upload) {
    if (sk_http_defer(req, copy_work, copy_after, cj) != 0) {
      sk_problem(req, SK_EBUSY, "", "too many jobs in flight; retry later");
      copy_job_free(cj);
    }
    return;
  }
  copy_work(cj);
  copy_publish(req, cj);
}

void sk_routes__animations(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  json_t *j;
  sk_cache_entry *e = sk_routes__body_and_entry(r, req, m, &j);
  if (e == NULL)
    return;
  copy_job *cj = calloc(1, sizeof *cj);
  if (cj == NULL) {
    sk_cache_entry_unref(e);
    json_decref(j);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  cj->routes = r;
  cj->dst = e;
  sk_error_clear(&cj->err);
  const char *from = NULL, *name = NULL;
  const json_t *rt = NULL;
  int rc = parse_copy(j, &from, &name, &cj->rescale, &rt, &cj->err);
  if (!rc && (cj->name = strdup(name)) == NULL)
    rc = sk_error_set(&cj->err, SK_ENOMEM, "", "out of memory");
  if (!rc && rt != NULL && (cj->retarget = json_deep_copy(rt)) == NULL)
    rc = sk_error_set(&cj->err, SK_ENOMEM, "", "out of memory");
  if (rc) {
    json_decref(j);
    sk_problem_err(req, &cj->err, rc);
    copy_job_free(cj);
    return;
  }
  start_copy(r, req, cj, from);
  json_decref(j);
}

/* A large body's parse on the pool, its tree's bound reserved in the
 * memory budget first (sk_routes__load_pooled; 503 when it does not fit):
 * a --max-body body parsed on the loop thread held it for ~65 ms a MB,
 * outside the budget. Leaves the names in cj; the tree is freed here. */
static void copy_parse_work(void *arg) {
  copy_job *cj = arg;
  json_t *j = NULL;
  size_t tree = 0;
  const char *from = NULL, *name = NULL;
  const json_t *rt = NULL;
  cj->rc = sk_routes__load_pooled(cj->routes, cj->body, cj->body_len, &j, &tree, &cj->err);
  if (!cj->rc)
    cj->rc = parse_copy(j, &from, &name, &cj->rescale, &rt, &cj->err);
  if (!cj->rc && (cj->name = strdup(name)) == NULL)
    cj->rc = sk_error_set(&cj->err, SK_ENOMEM, "", "out of memory");
  if (!cj->rc && rt != NULL && (cj->retarget = json_deep_copy(rt)) == NULL)
    cj->rc = sk_error_set(&cj->err, SK_ENOMEM, "", "out of memory");
  if (!cj->rc) {
    cj->from_too_long = strlen(from) >= sizeof cj->from;
    snprintf(cj->from, sizeof cj->from, "%s", from);
  }
  json_decref(j);
  sk_budget_release(cj->routes->cfg.budget, tree);
}

/* Errors in the loop path's order: the body's syntax (400), the skeleton
 * (404), then the body's own fields. */
static void copy_parse_after(sk_http_req *req, void *arg, int status) {
  copy_job *cj = arg;
  sk_routes *r = cj->routes;
  const sk_route_match *m = req->data;
  if (status == SK_EBUSY) {
    sk_problem(req, SK_EBUSY, "", "the request waited past its deadline; retry later");
    copy_job_free(cj);
    return;
  }
  bool syntax = cj->rc == SK_ESYNTAX || cj->rc == SK_EBUSY || cj->rc == SK_ENOMEM;
  if (!syntax && (cj->dst = sk_routes__entry_or_404(r, req, m)) == NULL) {
    copy_job_free(cj);
    return;
  }
  if (cj->rc) {
    sk_problem_err(req, &cj->err, cj->rc);
    copy_job_free(cj);
    return;
  }
  if (cj->from_too_long) {
    sk_problem(req, SK_ENOTFOUND, "/from", "no skeleton with that id (longer than %d bytes)", SK_CACHE_ID_MAX);
    copy_job_free(cj);
    return;
  }
  char from[SK_CACHE_ID_MAX + 1];
  memcpy(from, cj->from, sizeof from);
  start_copy(r, req, cj, from);
}

void sk_routes__animations_pooled(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  (void)m;
  copy_job *cj = calloc(1, sizeof *cj);
  if (cj == NULL) {
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  cj->routes = r;
  sk_error_clear(&cj->err);
  cj->body = req->body.data;
  cj->body_len = req->body.len;
  if (sk_http_defer(req, copy_parse_work, copy_parse_after, cj) != 0) {
    free(cj);
    sk_problem(req, SK_EBUSY, "", "too many jobs in flight; retry later");
  }
}

/* ---- a retargeted pose: "from": "<skeleton id>" on a clip pose --------------------------- */

/* The copy and the sampling of a retargeted /pose, both on the pool (the
 * copy parses both skeletons' texts), answered on the loop thread. */
typedef struct retarget_job {
  copy_job copy;  /* dst = the posed skeleton */
  json_t *pose;   /* owned: the pose body without "from" and "rescale" */
  int fmt;
  sk_pose *poses; /* owned */
  size_t n;
} retarget_job;

static void retarget_free(retarget_job *rj) {
  sk_pose_array_free(rj->poses, rj->n);
  json_decref(rj->pose);
  sk_cache_entry_unref(rj->copy.dst);
  sk_cache_entry_unref(rj->copy.src);
  sk_anim_destroy(rj->copy.anim);
  json_decref(rj->copy.retarget);
  sk_strbuf_free(&rj->copy.clips);
  free(rj->copy.name);
  free(rj);
}

static void retarget_work(void *arg) {
  retarget_job *rj = arg;
  copy_job *cj = &rj->copy;
  const sk_routes *r = cj->routes;
  if (cj->retarget != NULL) { /* a glTF clip retargeted for this pose only */
    gltf_retarget_work(cj);
    if (!cj->rc && json_object_set_new(rj->pose, "animation", json_string(cj->name)) != 0)
      cj->rc = sk_error_set(&cj->err, SK_ENOMEM, "", "out of memory");
  } else {
    cj->rc = copy_range(r, cj->dst, cj->src, cj->name, cj->rescale, &cj->anim, &cj->err);
  }
  if (cj->rc)
    return;
  sk_cost cost = {0};
  const sk_skeleton *dst = cj->dst->model->skel;
  if (sk_cost_add_pose_json(&cost, &r->cfg.cost, dst, cj->anim, rj->pose, "", rj->fmt, &cj->err) != 0) {
    cj->rc = SK_ETOOBIG;
    return;
  }
  cj->rc = r->cfg.sample(dst, cj->anim, rj->pose, "", NULL, &rj->poses, &rj->n, &cj->err);
  if (!cj->rc && rj->n > r->cfg.max_batch)
    cj->rc = sk_error_set(&cj->err, SK_ETOOBIG, "", "%zu frames; the limit is %zu (--max-batch)", rj->n,
                          r->cfg.max_batch);
}

static void retarget_after(sk_http_req *req, void *arg, int status) {
  retarget_job *rj = arg;
  sk_routes *r = rj->copy.routes;
  if (status == SK_EBUSY || rj->copy.rc) {
    if (status == SK_EBUSY)
      sk_problem(req, SK_EBUSY, "", "the request waited past its deadline; retry later");
    else
      sk_problem_err(req, &rj->copy.err, rj->copy.rc);
    retarget_free(rj);
    return;
  }
  if (sk_routes__reject_binary_outputs(req, rj->poses, rj->n, rj->fmt, 0, false)) {
    retarget_free(rj);
    return;
  }
  if (rj->n != 1 || rj->poses[0].frame_range) { /* a frame range: the batch path, as /pose answers one */
    sk_routes_batch *bj = sk_routes__batch_new(r, rj->copy.dst, rj->fmt, rj->poses, rj->n);
    if (bj == NULL) {
      sk_problem(req, SK_ENOMEM, "", "out of memory");
      retarget_free(rj);
      return;
    }
    rj->copy.dst = NULL;
    rj->poses = NULL;
    rj->n = 0;
    retarget_free(rj);
    sk_routes__run_batch(r, req, bj);
    return;
  }
  sk_strbuf b = {0};
  const sk_frames_opts fo = sk_routes__frames_opts(r, rj->fmt, 1);
  if (sk_frames_eval(rj->copy.dst->model, rj->poses, 1, &fo, &r->sc, &b) != 0)
    b.failed = 1;
  sk_routes__respond_poses(r, req, rj->copy.dst->model->skel, 1, rj->fmt, &b);
  retarget_free(rj);
}

/* The pose's "retarget" options kept in cj; the clip, never stored, is
 * named apart from the target's own unless animationGroupName names it. */
static int pose_retarget_opts(const json_t *j, copy_job *cj) {
  const json_t *rt = json_object_get(j, "retarget");
  if ((cj->retarget = json_deep_copy(rt)) == NULL)
    return sk_error_set(&cj->err, SK_ENOMEM, "", "out of memory");
  if (!json_is_object(rt) || json_object_get(rt, "animationGroupName") != NULL)
    return 0; /* sk_retarget_json_parse names what is wrong */
  char name[300];
  snprintf(name, sizeof name, "retarget:%.255s", cj->name);
  return json_object_set_new(cj->retarget, "animationGroupName", json_string(name)) != 0
             ? sk_error_set(&cj->err, SK_ENOMEM, "", "out of memory")
             : 0;
}

bool sk_routes__pose_retarget(sk_routes *r, sk_http_req *req, sk_cache_entry *e, json_t *j, int fmt) {
  const json_t *from = json_object_get(j, "from");
  if (!json_is_string(from))
    return false; /* a frame range's number, or no "from": an ordinary pose */
  retarget_job *rj = calloc(1, sizeof *rj);
  if (rj == NULL) {
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    sk_cache_entry_unref(e);
    json_decref(j);
    return true;
  }
  copy_job *cj = &rj->copy;
  cj->routes = r;
  cj->dst = e;
  rj->pose = j;
  rj->fmt = fmt;
  sk_error_clear(&cj->err);
  const json_t *a = json_object_get(j, "animation"), *s = json_object_get(j, "rescale");
  int rc = 0;
  if (!json_is_string(a))
    rc = sk_error_set(&cj->err, a == NULL ? SK_EMISSING : SK_ETYPE, "/animation",
                      "a retargeted pose plays one range of the source: \"animation\" names it");
  else if (s != NULL && !json_is_boolean(s))
    rc = sk_error_set(&cj->err, SK_ETYPE, "/rescale", "expected true or false");
  else if ((cj->src = sk_cache_get(r->cache, json_string_value(from))) == NULL)
    rc = sk_error_set(&cj->err, SK_ENOTFOUND, "/from", "no skeleton with id \"%s\"", json_string_value(from));
  else if ((cj->name = strdup(json_string_value(a))) == NULL)
    rc = sk_error_set(&cj->err, SK_ENOMEM, "", "out of memory");
  else if (json_object_get(j, "retarget") != NULL && s != NULL)
    rc = sk_error_set(&cj->err, SK_EUNKNOWN, "/rescale",
                      "\"rescale\" is copyAnimationRange's; a retargeting takes its options in \"retarget\"");
  else if (json_object_get(j, "retarget") != NULL)
    rc = pose_retarget_opts(j, cj);
  cj->rescale = json_is_true(s);
  if (rc) {
    sk_problem_err(req, &cj->err, rc);
    retarget_free(rj);
    return true;
  }
  json_object_del(j, "from"); /* the pose parser sees an ordinary clip pose */
  json_object_del(j, "rescale");
  json_object_del(j, "retarget");
  if (sk_http_defer(req, retarget_work, retarget_after, rj) != 0) {
    sk_problem(req, SK_EBUSY, "", "too many jobs in flight; retry later");
    retarget_free(rj);
  }
  return true;
}
