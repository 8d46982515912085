/* sk_routes_poses: the pose resource. POST /pose (one pose, or a frame
 * range) and POST /poses (a batch), answered as JSON, float32 or mat3x4:
 * parse (sk_fastpose, else jansson and sk_eval, clips sampled by sk_anim),
 * cost (sk_cost), then sk_routes_batch.c answers (sk_frames inline, on the
 * pool or streamed). Large bodies are parsed on the pool. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_error.h"
#include "sk_pose.h"
#include "sk_fastpose.h"
#include "sk_json.h"
#include "sk_numfmt.h"
#include "sk_poseops.h"
#include "sk_problem.h"
#include "sk_routes_int.h"

static void defer_parse(sk_routes *r, sk_http_req *req, sk_cache_entry *e, json_t *j, int fmt, bool batch);

/* Parses one pose object that may name clips (the /pose body): sampling
 * happens here, so it runs where sk_cost said it may. */
static int parse_single(const sk_routes *r, sk_routes_batch *bj, const json_t *j, sk_error *err) {
  int rc = sk_poseops_sample(r->cfg.sample, bj->entry->model, j, "", bj->fmt, &bj->opsets, &bj->poses, &bj->n, err);
  if (!rc && bj->n > r->cfg.max_batch)
    rc = sk_error_set(err, SK_ETOOBIG, "", "%zu frames; the limit is %zu (--max-batch)", bj->n, r->cfg.max_batch);
  if (!rc)
    rc = sk_routes__binary_outputs(bj->poses, bj->n, bj->fmt, 0, false, err);
  bj->bare = !rc && bj->n == 1 && !bj->poses[0].frame_range; /* a range answers {"results": [...]} */
  return rc;
}

static void post_pose(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  int fmt = sk_routes_negotiate(sk_http_header(req, "Accept"), sk_routes__pose_offers, 3);
  sk_pose pose;
  sk_poseops *opsets = NULL; /* what `pose` borrows */
  sk_cache_entry *e = m->id_ok ? sk_cache_get(r->cache, m->id) : NULL;
  int rc = e ? sk_fastpose_parse(e->model->skel, req->body.data, req->body.len, &pose) : SK_FASTPOSE_DECLINE;
  if (rc == SK_ENOMEM) {
    sk_cache_entry_unref(e);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  if (rc == SK_FASTPOSE_DECLINE) {
    /* jansson decides, in the order a client expects: 400, then 404, then 4xx of the pose */
    sk_cache_entry_unref(e);
    json_t *j;
    if ((e = sk_routes__body_and_entry(r, req, m, &j)) == NULL)
      return;
    if (sk_routes__pose_retarget(r, req, e, j, fmt)) /* "from": a skeleton id (sk_routes_anim.c) */
      return;
    sk_error err;
    sk_error_clear(&err);
    sk_cost cost = {0};
    if (sk_cost_add_pose_json(&cost, &r->cfg.cost, e->model->skel, e->model->anim, j, "", fmt, &err) != 0) {
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
    rc = sk_poseops_sample(r->cfg.sample, e->model, j, "", fmt, &opsets, &poses, &n, &err);
    json_decref(j);
    if (!rc && n > r->cfg.max_batch) {
      sk_pose_array_free(poses, n);
      rc = sk_error_set(&err, SK_ETOOBIG, "", "%zu frames; the limit is %zu (--max-batch)", n, r->cfg.max_batch);
    }
    if (rc) {
      sk_poseops_free(opsets);
      sk_cache_entry_unref(e);
      sk_problem_err(req, &err, rc);
      return;
    }
    if (n != 1 || poses[0].frame_range || poses[0].ops != NULL) {
      /* A frame range ("times", "from"/"to"/"fps"), even of one frame: one
       * result per frame, through the batch path like /poses. So is one
       * pose with Bone-API ops, bare: its cost decides inline or pool. */
      sk_routes_batch *bj = sk_routes__batch_new(r, e, fmt, poses, n);
      if (bj == NULL) {
        sk_pose_array_free(poses, n);
        sk_poseops_free(opsets);
        sk_cache_entry_unref(e);
        sk_problem(req, SK_ENOMEM, "", "out of memory");
        return;
      }
      bj->opsets = opsets;
      bj->bare = n == 1 && !poses[0].frame_range;
      if (sk_routes__reject_binary_outputs(req, poses, n, fmt, 0, false)) {
        sk_routes__batch_free(bj);
        return;
      }
      sk_routes__run_batch(r, req, bj);
      return;
    }
    pose = poses[0];
    free(poses); /* the pose itself moved out */
  }
  if (sk_routes__reject_binary_outputs(req, &pose, 1, fmt, 0, false)) {
    sk_pose_close(&pose);
    sk_poseops_free(opsets);
    sk_cache_entry_unref(e);
    return;
  }
  sk_strbuf b = {0};
  const sk_frames_opts fo = sk_routes__frames_opts(r, fmt, 1);
  sk_http_mark(req, SK_HTTP_PARSED);
  int erc = sk_frames_eval(e->model, &pose, 1, &fo, &r->sc, &b);
  sk_http_mark(req, SK_HTTP_EVALUATED);
  sk_pose_close(&pose);
  sk_poseops_free(opsets);
  if (erc == SK_ENOTFINITE) {
    sk_error err;
    sk_error_clear(&err);
    sk_frames_nonfinite_error(e->model, &r->sc, false, &err);
    sk_strbuf_free(&b);
    sk_cache_entry_unref(e);
    sk_problem_err(req, &err, SK_ENOTFINITE);
    return;
  }
  if (erc != 0)
    b.failed = 1;
  sk_routes__respond_poses(r, req, e->model->skel, 1, fmt, &b);
  sk_cache_entry_unref(e);
}

/* Parses the poses of a /poses body (already checked to be {"poses": [...]}
 * within --max-batch) into `bj`: frame ranges and clips are sampled here,
 * so it runs where sk_cost said it may. */
static int parse_batch(const sk_routes *r, sk_routes_batch *bj, const json_t *j, sk_error *err) {
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
    rc = sk_poseops_sample(r->cfg.sample, bj->entry->model, json_array_get(poses, i), p, fmt, &bj->opsets, &item, &k,
                           err);
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
  sk_routes_batch *bj = arg;
  int rc = bj->batch ? parse_batch(bj->routes, bj, bj->json, &bj->err) : parse_single(bj->routes, bj, bj->json, &bj->err);
  json_decref(bj->json); /* the job's own reference: nothing else holds the body */
  bj->json = NULL;
  if (rc) {
    bj->rc = rc;
    return;
  }
  sk_routes__batch_pool_evaluate(bj);
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
  else if ((rc = sk_routes__check_keys(j, k_top, err)) != 0)
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
    rc = sk_cost_add_pose_json(cost, &r->cfg.cost, e->model->skel, e->model->anim, json_array_get(poses, i), p, fmt,
                               err);
  }
  return rc;
}

/* A pose request whose body is large (pool_upload bytes and more), all on
 * the pool: jansson takes ~50 ms a MB and the fast parser a few, too long
 * for the loop thread. The same steps, in the same order, as post_pose
 * and post_poses; `bj->entry` may be NULL (404 after the 400s). */
static void pose_body_work(void *arg) {
  sk_routes_batch *bj = arg;
  const sk_routes *r = bj->routes;
  sk_error *err = &bj->err;
  const char *ptr = bj->batch ? "/poses" : "";
  int rc;
  const sk_model *m = bj->entry != NULL ? bj->entry->model : NULL;
  if (bj->batch && m != NULL &&
      sk_fastpose_parse_batch(m->skel, bj->body, bj->body_len, r->cfg.max_batch, &bj->poses, &bj->n) == 0) {
    rc = sk_routes__binary_outputs(bj->poses, bj->n, bj->fmt, 0, true, err);
  } else {
    json_t *j = NULL;
    sk_cost cost = {0};
    size_t tree = 0;
    if ((rc = sk_routes__load_pooled(r, bj->body, bj->body_len, &j, &tree, err)) != 0)
      ;
    else if (bj->entry == NULL)
      rc = sk_error_set(err, SK_ENOTFOUND, "", "no skeleton with id \"%s\"", bj->id);
    else if (bj->batch) {
      if ((rc = batch_shape_cost(r, bj->entry, j, bj->fmt, &cost, err)) == 0)
        rc = parse_batch(r, bj, j, err);
    } else if ((rc = sk_cost_add_pose_json(&cost, &r->cfg.cost, m->skel, m->anim, j, "", bj->fmt, err)) == 0) {
      rc = parse_single(r, bj, j, err);
    }
    json_decref(j);
    sk_budget_release(r->cfg.budget, tree);
  }
  if (!rc)
    rc = sk_routes__parsed_cost(r, bj, ptr, err);
  if (rc) {
    bj->rc = rc;
    return;
  }
  sk_routes__batch_pool_evaluate(bj);
}

/* Hands a large pose body to the pool (pose_body_work). */
static void defer_pose_body(sk_routes *r, sk_http_req *req, const sk_route_match *m, bool batch) {
  sk_routes_batch *bj = calloc(1, sizeof *bj);
  if (bj == NULL) {
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  bj->routes = r;
  bj->entry = m->id_ok ? sk_cache_get(r->cache, m->id) : NULL;
  snprintf(bj->id, sizeof bj->id, "%s", m->id_ok ? m->id : "(invalid id)");
  bj->fmt = sk_routes_negotiate(sk_http_header(req, "Accept"), sk_routes__pose_offers, 3);
  bj->batch = batch;
  bj->body = req->body.data;
  bj->body_len = req->body.len;
  if (sk_http_defer(req, pose_body_work, sk_routes__batch_after, bj) != 0) {
    sk_routes__batch_free(bj);
    sk_problem(req, SK_EBUSY, "", "too many batches in flight; retry later");
  }
}

static void post_poses(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  int fmt = sk_routes_negotiate(sk_http_header(req, "Accept"), sk_routes__pose_offers, 3);
  sk_routes_batch *bj = NULL;
  sk_cache_entry *e = m->id_ok ? sk_cache_get(r->cache, m->id) : NULL;
  if (e != NULL && (bj = calloc(1, sizeof *bj)) != NULL) {
    int fr =
        sk_fastpose_parse_batch(e->model->skel, req->body.data, req->body.len, r->cfg.max_batch, &bj->poses, &bj->n);
    if (fr == 0) {
      bj->routes = r;
      bj->entry = e;
      bj->fmt = fmt;
      if (sk_routes__reject_binary_outputs(req, bj->poses, bj->n, fmt, 0, true)) {
        sk_routes__batch_free(bj);
        return;
      }
      sk_routes__run_batch(r, req, bj);
      return;
    }
    free(bj);
    bj = NULL;
  }
  sk_cache_entry_unref(e);
  /* the slow path decides errors, in the order a client expects: 400, 404, then the batch's own */
  json_t *j;
  if ((e = sk_routes__body_and_entry(r, req, m, &j)) == NULL)
    return;
  sk_error err;
  sk_error_clear(&err);
  sk_cost cost = {0};
  int rc = batch_shape_cost(r, e, j, fmt, &cost, &err);
  if (!rc && !sk_cost_inline(&cost, &r->cfg.cost)) {
    defer_parse(r, req, e, j, fmt, true);
    return;
  }
  if (!rc) {
    bj = sk_routes__batch_new(r, e, fmt, NULL, 0);
    if (bj == NULL) {
      rc = sk_error_set(&err, SK_ENOMEM, "", "out of memory");
    } else {
      e = NULL;
      rc = parse_batch(r, bj, j, &err);
    }
  }
  json_decref(j);
  sk_cache_entry_unref(e);
  if (rc) {
    if (bj)
      sk_routes__batch_free(bj);
    sk_problem_err(req, &err, rc);
    return;
  }
  sk_routes__run_batch(r, req, bj);
}

/* Hands a costed request whose clip work is over the loop bound to the
 * pool: parsing (which samples the clips) and evaluation both run there.
 * Steals `e` and `j`. */
static void defer_parse(sk_routes *r, sk_http_req *req, sk_cache_entry *e, json_t *j, int fmt, bool batch) {
  sk_routes_batch *bj = sk_routes__batch_new(r, e, fmt, NULL, 0);
  if (bj == NULL) {
    json_decref(j);
    sk_cache_entry_unref(e);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  bj->json = j;
  bj->batch = batch;
  if (sk_http_defer(req, parse_work, sk_routes__batch_after, bj) != 0) {
    sk_routes__batch_free(bj);
    sk_problem(req, SK_EBUSY, "", "too many batches in flight; retry later");
  }
}

/* One pose request of a streaming session (sk_routes_stream.c): the /pose
 * body's steps (cost, parse_single, the parsed cost) and evaluation in
 * `fmt` (binary), so its bytes are the ones /pose answers. Work over the
 * loop bound is refused (the session runs on the loop thread). The answer
 * is reserved in the budget first: *reserved is what to release once the
 * bytes are sent. *n: the poses answered. */
int sk_routes__pose_message(sk_routes *r, sk_cache_entry *e, const json_t *j, int fmt, sk_strbuf *out, size_t *n,
                            size_t *reserved, sk_error *err) {
  *n = 0;
  *reserved = 0;
  const sk_model *m = e->model;
  if (json_is_string(json_object_get(j, "from")))
    return sk_error_set(err, SK_ERANGE, "/from", "a retarget (\"from\": a skeleton id) is not streamed; use /pose");
  sk_cost cost = {0};
  int rc = sk_cost_add_pose_json(&cost, &r->cfg.cost, m->skel, m->anim, j, "", fmt, err);
  if (rc)
    return rc;
  if (!sk_cost_inline(&cost, &r->cfg.cost))
    return sk_error_set(err, SK_ETOOBIG, "", "the request's clip work is over a session's bound; send it to /pose");
  sk_routes_batch bj = {0};
  bj.routes = r;
  bj.entry = e;
  bj.fmt = fmt;
  rc = parse_single(r, &bj, j, err);
  if (!rc)
    rc = sk_routes__parsed_cost(r, &bj, "", err);
  size_t bytes = 0;
  for (size_t i = 0; !rc && i < bj.n; i++)
    bytes += (m->skel->count + 1) * (fmt == SK_FMT_MAT3X4 ? 12 : 16) * sizeof(float) +
             (bj.poses[i].ops != NULL ? sk_poseops_answer_bytes(m->skel, bj.poses[i].ops, fmt) : 0);
  if (!rc && sk_budget_reserve(r->cfg.budget, bytes) != 0)
    rc = sk_error_set(err, SK_EBUSY, "", "the answer (%zu bytes) does not fit in the memory budget (--memory-mb) now",
                      bytes);
  if (!rc) {
    *reserved = bytes;
    const sk_frames_opts fo = sk_routes__frames_opts(r, fmt, 1);
    rc = sk_frames_eval(m, bj.poses, bj.n, &fo, &r->sc, out);
    if (rc == SK_ENOTFINITE)
      sk_frames_nonfinite_error(m, &r->sc, false, err);
    else if (rc)
      rc = sk_error_set(err, SK_ENOMEM, "", "out of memory writing the answer");
    else {
      *n = bj.n;
      sk_metrics_add_poses(r->metrics, bj.n, bj.n * (m->skel->count + 1));
    }
  }
  sk_pose_array_free(bj.poses, bj.n);
  sk_poseops_free(bj.opsets);
  return rc;
}

int sk_routes__play_message(sk_routes *r, const char *id, json_t *j, long long k, int fmt, sk_strbuf *out, size_t *n,
                            size_t *reserved, sk_cache_entry **entry, sk_error *err) {
  json_t *fr = json_object_get(j, "frames");
  json_array_set_new(fr, 0, json_integer(k));
  json_array_set_new(fr, 1, json_integer(k + 1));
  *n = *reserved = 0;
  *entry = sk_cache_get(r->cache, id);
  return *entry == NULL ? sk_error_set(err, SK_ENOTFOUND, "", "no skeleton with id \"%s\"", id)
                        : sk_routes__pose_message(r, *entry, j, fmt, out, n, reserved, err);
}

/* ---- the resource's handlers (the route table's entries) --------------------------------- */

void sk_routes__pose(sk_routes *r, sk_http_req *req, const sk_route_match *m) { post_pose(r, req, m); }

void sk_routes__poses(sk_routes *r, sk_http_req *req, const sk_route_match *m) { post_poses(r, req, m); }

void sk_routes__pose_pooled(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  defer_pose_body(r, req, m, m->route->id == SK_ROUTE_POSES);
}
