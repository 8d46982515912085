/* sk_routes_poses: the pose resource. POST /pose (one pose, or a frame
 * range) and POST /poses (a batch), answered as JSON, float32 or mat3x4:
 * parse (sk_fastpose, else jansson and sk_eval, clips sampled by sk_anim),
 * cost (sk_cost), evaluate and encode (sk_frames), inline, on the pool or
 * streamed. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_error.h"
#include "sk_eval.h"
#include "sk_fastpose.h"
#include "sk_json.h"
#include "sk_numfmt.h"
#include "sk_problem.h"
#include "sk_routes_int.h"

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

static const char *fmt_type(int fmt) { return sk_routes__pose_offers[fmt]; }

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
    sk_routes__respond_json(req, 200, b, NULL);
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

static void post_pose(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  int fmt = sk_routes_negotiate(sk_http_header(req, "Accept"), sk_routes__pose_offers, 3);
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
    json_t *j = sk_routes__load_body(req);
    if (j == NULL)
      return;
    if ((e = sk_routes__entry_or_404(r, req, m)) == NULL) {
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
static void defer_pose_body(sk_routes *r, sk_http_req *req, const sk_route_match *m, bool batch) {
  batch_job *bj = calloc(1, sizeof *bj);
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
  if (sk_http_defer(req, pose_body_work, batch_after, bj) != 0) {
    batch_free(bj);
    sk_problem(req, SK_EBUSY, "", "too many batches in flight; retry later");
  }
}

static void post_poses(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  int fmt = sk_routes_negotiate(sk_http_header(req, "Accept"), sk_routes__pose_offers, 3);
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
  json_t *j = sk_routes__load_body(req);
  if (j == NULL)
    return;
  if ((e = sk_routes__entry_or_404(r, req, m)) == NULL) {
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
    sk_http_respond_stream(req, 200, SK_ROUTES_CT_JSON, SK_HTTP_LENGTH_UNKNOWN, SK_ROUTES_STREAM_BLOCK, stream_produce, st,
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


/* ---- the resource's handlers (the route table's entries) --------------------------------- */

void sk_routes__pose(sk_routes *r, sk_http_req *req, const sk_route_match *m) { post_pose(r, req, m); }

void sk_routes__poses(sk_routes *r, sk_http_req *req, const sk_route_match *m) { post_poses(r, req, m); }

void sk_routes__pose_pooled(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  defer_pose_body(r, req, m, m->route->id == SK_ROUTE_POSES);
}
