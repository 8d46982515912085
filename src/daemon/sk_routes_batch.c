/* sk_routes_batch: parsed poses to an HTTP answer. Prices the work
 * (sk_frames_cost_us), reserves the answer in the memory budget, then
 * evaluates inline, on the thread pool (sk_http_defer), or as a stream
 * produced while the client reads (sk_http_respond_stream, sk_frames_run in
 * slices); every way gives the same bytes (tests/check_frames_identity.c). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_error.h"
#include "sk_pose.h"
#include "sk_json.h"
#include "sk_numfmt.h"
#include "sk_problem.h"
#include "sk_poseops.h"
#include "sk_routes_int.h"

/* A batch answer larger than this is produced while the client reads it. */
#define SK_ROUTES_STREAM_MIN (1u << 20)
/* A streamed answer's pending text is refilled up to about this much
 * (plus at most one pose) per producer call: the loop thread's slice. */
#define SK_ROUTES_STREAM_SLICE (64u << 10)
/* libmicrohttpd's own buffer per streamed answer. */
#define SK_ROUTES_STREAM_BLOCK (32u << 10)
/* ... and per binary one, which the kernel fills whole poses at a time
 * (sk_frames_run_next_raw) and which goes out in one send(): 128 KiB
 * measured as fast as 256 and 512 KiB on Fox ranges, and faster than
 * 32 KiB (docs/clips.md, "The HTTP answer path"). */
#define SK_ROUTES_STREAM_BLOCK_BINARY (128u << 10)

static size_t batch_answer_bound(const sk_routes_batch *bj, size_t *poses_bytes);
static void stream_batch(sk_routes *r, sk_http_req *req, sk_routes_batch *bj);

/* How sk_frames answers in `fmt`: always exact. (--fast-binary is
 * deprecated and ignored, sk_config_finish warns: the float32 kernel
 * measured no faster than the exact one on Fox, docs/history/kernel.md.) */
sk_frames_opts sk_routes__frames_opts(const sk_routes *r, int fmt, unsigned threads) {
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

void sk_routes__respond_poses(sk_routes *r, sk_http_req *req, const sk_skeleton *s, size_t n, int fmt, sk_strbuf *b) {
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

/* The pose asks for the Bone API's outputs, query results or the mesh
 * outputs (sk_poseops), which "output" alone does not show. */
static bool asks_world(const sk_pose *p) {
  return p->ops != NULL && (p->ops->world || p->ops->positions || p->ops->nqueries > 0 || p->ops->mesh_out != 0);
}

/* A pose whose "output" is empty is a 422 there (any format). Binary
 * answers carry final matrices only: a pose that asks for absolute
 * or local matrices in a binary answer gets a 422 at its "output" rather
 * than a silently smaller answer. Returns true when it answered. Otherwise
 * sets every pose's output to final. For a batch (`batch`), pose i is at
 * /poses/<first + i>; else the pose is the body itself. */
int sk_routes__binary_outputs(sk_pose *poses, size_t n, int fmt, size_t first, bool batch, sk_error *err) {
  /* "output": [] asks for nothing: refused rather than answered as {} */
  for (size_t i = 0; i < n; i++)
    if (poses[i].output == 0 && !asks_world(&poses[i])) {
      char p[SK_ERROR_POINTER_MAX] = "";
      if (batch) {
        snprintf(p, sizeof p, "/poses");
        sk_pointer_push_index(p, sizeof p, first + i);
      }
      sk_pointer_push(p, sizeof p, "output");
      char names[SK_ANSWER_NAMES_MAX];
      sk_answer_output_names(names, sizeof names, ", ");
      return sk_error_set(err, SK_ERANGE, p, "\"output\" is empty; ask for at least one of %s (or leave it out for "
                                              "[\"final\"])", names);
    }
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

bool sk_routes__reject_binary_outputs(sk_http_req *req, sk_pose *poses, size_t n, int fmt, size_t first, bool batch) {
  sk_error err;
  sk_error_clear(&err);
  if (sk_routes__binary_outputs(poses, n, fmt, first, batch, &err) == 0)
    return false;
  sk_problem_err(req, &err, SK_ERANGE);
  return true;
}

sk_routes_batch *sk_routes__batch_new(sk_routes *r, sk_cache_entry *e, int fmt, sk_pose *poses, size_t n) {
  sk_routes_batch *bj = calloc(1, sizeof *bj);
  if (bj == NULL)
    return NULL;
  bj->routes = r;
  bj->entry = e;
  bj->fmt = fmt;
  bj->poses = poses;
  bj->n = n;
  return bj;
}

void sk_routes__batch_free(sk_routes_batch *bj) {
  for (size_t i = 0; i < bj->n; i++)
    sk_pose_close(&bj->poses[i]);
  free(bj->poses);
  sk_cache_entry_unref(bj->entry);
  sk_strbuf_free(&bj->out);
  json_decref(bj->json);
  sk_poseops_free(bj->opsets); /* after the poses that borrow them */
  free(bj);
}

/* Whether a pose's overflow is pointed at under /poses/<i> (a /poses body). */
static bool nonfinite_in_batch(const sk_routes_batch *bj) { return bj->batch || bj->in_poses; }

static void batch_work(void *arg) {
  sk_routes_batch *bj = arg;
  sk_frames_scratch sc = {0};
  sk_frames_opts fo = sk_routes__frames_opts(bj->routes, bj->fmt, bj->routes->cfg.kernel_threads);
  fo.mesh_threads = bj->routes->cfg.mesh_threads;
  if (bj->fmt == SK_FMT_JSON && !bj->bare)
    sk_strbuf_append(&bj->out, "{\"results\":[", 12);
  bj->rc = sk_frames_eval(bj->entry->model, bj->poses, bj->n, &fo, &sc, &bj->out);
  if (bj->rc == SK_ENOTFINITE)
    sk_frames_nonfinite_error(bj->entry->model, &sc, nonfinite_in_batch(bj), &bj->err);
  if (bj->fmt == SK_FMT_JSON && !bj->bare && !bj->rc && sk_strbuf_append(&bj->out, "]}", 2))
    bj->rc = SK_ENOMEM;
  sk_frames_scratch_close(&sc);
}

/* The pool's half of a body parsed there: the answer is costed against the
 * memory budget before it is built, as sk_routes__run_batch does on the loop. A
 * streamed answer is left to the loop (its producer runs there in slices);
 * any other is reserved (atomically: the budget is shared) and built here.
 * sk_routes__batch_after gives the reservation back once the answer is counted. */
void sk_routes__batch_pool_evaluate(sk_routes_batch *bj) {
  size_t poses_bytes, answer = batch_answer_bound(bj, &poses_bytes);
  if (answer > SK_ROUTES_STREAM_MIN && !bj->bare) {
    /* The parsed poses live until the stream ends: reserved here, where they
     * were made, not when the loop thread gets to the batch (64 parsed
     * batches waiting for the loop held 60 MB that no budget counted). */
    if (sk_budget_reserve(bj->routes->cfg.budget, poses_bytes) != 0) {
      bj->rc = sk_error_set(&bj->err, SK_EBUSY, "",
                            "the batch (%zu poses) does not fit in the memory budget (--memory-mb) now; retry later",
                            bj->n);
      return;
    }
    bj->pool_reserved = poses_bytes;
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

void sk_routes__batch_after(sk_http_req *req, void *arg, int status) {
  sk_routes_batch *bj = arg;
  if (status == 0 && bj->rc == 0 && bj->stream_on_loop) {
    /* the pool's reservation of the parsed poses passes to the request,
     * which releases it when it completes: no moment without it */
    sk_budget_release(bj->routes->cfg.budget, bj->pool_reserved);
    sk_http_charge(req, bj->pool_reserved);
    bj->pool_reserved = 0;
    stream_batch(bj->routes, req, bj); /* takes bj */
    return;
  }
  sk_budget_release(bj->routes->cfg.budget, bj->pool_reserved);
  bj->pool_reserved = 0;
  if (status == SK_EBUSY)
    sk_problem(req, SK_EBUSY, "", "the batch waited past its deadline; retry later");
  else if (bj->err.code)
    sk_problem_err(req, &bj->err, bj->rc);
  else if (bj->rc)
    sk_problem(req, SK_ENOMEM, "", "out of memory evaluating the batch");
  else {
    sk_http_mark(req, SK_HTTP_EVALUATED); /* back from the pool */
    sk_routes__respond_poses(bj->routes, req, bj->entry->model->skel, bj->n, bj->fmt, &bj->out);
  }
  sk_routes__batch_free(bj);
}

/* Estimated loop time to evaluate and encode a parsed batch, in us, from
 * per-matrix costs measured on a loaded 2-core AMD EPYC:
 * scalar core ~150 ns, batch kernel ~7 ns, JSON encoding of 16 floats
 * ~650 ns (sk_numfmt), binary copy ~1 ns. Above --inline-limit the batch
 * goes to the pool, whose hand-off (suspend, queue, resume, MHD run) costs
 * ~15-40 us: a 64-pose binary batch (~30 us) stays inline, the same batch
 * as JSON (~2.7 ms) does not. */
static double batch_cost_us(const sk_routes_batch *bj) {
  const sk_frames_opts fo = sk_routes__frames_opts(bj->routes, bj->fmt, 1);
  return sk_frames_cost_us(bj->entry->model, bj->poses, bj->n, &fo);
}

/* Evaluation and answer size of parsed poses (the fast parser's, or
 * already costed from JSON), before either is started. */
int sk_routes__parsed_cost(const sk_routes *r, const sk_routes_batch *bj, const char *ptr, sk_error *err) {
  const sk_frames_opts fo = sk_routes__frames_opts(r, bj->fmt, 1);
  return sk_frames_check_cost(bj->entry->model, bj->poses, bj->n, &fo, &r->cfg.cost, ptr, err);
}

/* A batch answer produced as its client reads it: a bounded `pending`
 * buffer refilled from the next poses by sk_frames_run (planned once for
 * the whole batch). The bytes are those sk_routes__run_batch would have built in one
 * piece. */
typedef struct pose_stream {
  sk_routes_batch *bj;          /* owned: the poses and the entry reference */
  sk_frames_run run;      /* borrows bj's entry and poses */
  sk_strbuf pending;
  size_t off;             /* bytes of `pending` already sent */
  bool closed;            /* JSON: "]}" written */
} pose_stream;

static void stream_release(void *arg) {
  pose_stream *st = arg;
  sk_frames_run_close(&st->run);
  sk_routes__batch_free(st->bj);
  sk_strbuf_free(&st->pending);
  free(st);
}

static long stream_produce(void *arg, char *dest, size_t cap) {
  pose_stream *st = arg;
  if (st->off == st->pending.len && st->bj->fmt != SK_FMT_JSON) {
    /* Binary from the kernel: whole poses straight into libmicrohttpd's
     * block, which it sends from (no pending copy, no memcpy here). */
    size_t w;
    int rc = sk_frames_run_next_raw(&st->run, dest, cap, &w);
    if (rc == 0)
      return w > 0 ? (long)w : 0;
    if (rc != SK_EINVAL)
      return -1; /* as below: the answer is cut short */
  }
  if (st->off == st->pending.len) {
    st->pending.len = st->off = 0;
    /* Out of memory, or a pose past the first slice whose matrices
     * overflow float32 (docs/contract.md), mid-answer: the status is
     * sent, so the client sees the answer cut short, never a NaN. */
    if (sk_frames_run_next(&st->run, &st->pending, SK_ROUTES_STREAM_SLICE) != 0)
      return -1;
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

/* libmicrohttpd's block for `bj`'s stream: binary answers are written
 * into it whole poses at a time, and each block is one send(). */
static size_t stream_block(const sk_routes_batch *bj) {
  return bj->fmt == SK_FMT_JSON ? SK_ROUTES_STREAM_BLOCK : SK_ROUTES_STREAM_BLOCK_BINARY;
}

/* What the stream keeps while its client reads: the pending slice (plus
 * one pose's text, up to ~16 bytes a float), the kernel's 16-pose input
 * and output or the core's buffers, libmicrohttpd's block, and the
 * skeleton version it reads, which an eviction or a replacement takes out
 * of the cache's count but not out of memory while the stream holds it. */
static size_t stream_bytes(const sk_routes_batch *bj, bool kernel) {
  const size_t mats = bj->entry->model->skel->count + 1;
  size_t pose_text = bj->fmt == SK_FMT_JSON ? mats * 16 * 3 * 16 + 64 : mats * 16 * sizeof(float);
  size_t eval = kernel && bj->fmt != SK_FMT_JSON ? sk_frames_run_raw_bytes(bj->entry->model, bj->fmt, stream_block(bj))
                                                 : sk_frames_run_bytes(bj->entry->model, kernel);
  return 2 * (SK_ROUTES_STREAM_SLICE + pose_text) + eval + stream_block(bj) + bj->entry->bytes;
}

/* Answers `bj` as a stream; takes `bj`. */
static void stream_batch(sk_routes *r, sk_http_req *req, sk_routes_batch *bj) {
  const sk_skeleton *s = bj->entry->model->skel;
  pose_stream *st = calloc(1, sizeof *st);
  if (st == NULL) {
    sk_routes__batch_free(bj);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  st->bj = bj;
  const sk_frames_opts fo = sk_routes__frames_opts(r, bj->fmt, 1);
  size_t cap = 0;
  int rc = sk_http_reserve_stream(req, stream_bytes(bj, sk_frames_uses_kernel(bj->entry->model, bj->poses, bj->n, &fo)),
                                  &cap);
  if (rc == 0)
    rc = sk_frames_run_init(&st->run, bj->entry->model, bj->poses, bj->n, &fo);
  if (rc == 0 && bj->fmt == SK_FMT_JSON)
    rc = sk_strbuf_append(&st->pending, "{\"results\":[", 12);
  /* The first slice before the status: an overflow there is still a 422. */
  if (rc == 0)
    rc = sk_frames_run_next(&st->run, &st->pending, SK_ROUTES_STREAM_SLICE);
  if (rc == SK_ENOTFINITE) {
    sk_error err;
    sk_error_clear(&err);
    sk_frames_nonfinite_error(bj->entry->model, &st->run.sc, req->route == SK_ROUTE_POSES, &err);
    stream_release(st);
    sk_problem_err(req, &err, SK_ENOTFINITE);
    return;
  }
  if (rc != 0) {
    stream_release(st);
    if (rc == SK_ETOOBIG) /* the cap on one address's slow readers: others keep their share */
      sk_problem(req, SK_EBUSY, "",
                 "the streamed answers to this client address would hold more than their %zu bytes "
                 "(--stream-mb-per-ip) while the memory budget (--memory-mb) keeps that much for other clients; "
                 "retry once they are read",
                 cap);
    else if (rc == SK_EBUSY)
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
  uint64_t len = sk_frames_answer_bound(bj->entry->model, bj->poses, bj->n, bj->fmt); /* exact for binary */
  sk_http_respond_stream(req, 200, fmt_type(bj->fmt), len, stream_block(bj), stream_produce, st,
                         stream_release, hdr);
}

/* The most bytes the answer to `bj` can take, and the parsed poses it
 * holds: ~16 bytes per float of JSON (the longest shortest float is 15
 * characters), exact for binary. */
static size_t batch_answer_bound(const sk_routes_batch *bj, size_t *poses_bytes) {
  const sk_skeleton *s = bj->entry->model->skel;
  size_t mats = s->count + 1, floats = 0, held = bj->n * sizeof *bj->poses, extra = 0;
  for (const sk_poseops *x = bj->opsets; x != NULL; x = x->next)
    held += x->block * sizeof *x + x->nops * sizeof *x->ops; /* a block: one copy a pose (mesh clip frames) */
  for (size_t i = 0; i < bj->n; i++) {
    if (bj->poses[i].ops != NULL) /* Bone-API outputs and queries (sk_poseops) */
      extra += sk_poseops_answer_bytes(s, bj->poses[i].ops, bj->fmt);
    held += sk_pose_held_bytes(&bj->poses[i]); /* overrides as grown, or a share of its range */
    if (bj->fmt == SK_FMT_JSON)
      floats += 16 * sk_answer_core_matrices(bj->poses[i].output, s->count);
  }
  *poses_bytes = held;
  if (bj->fmt == SK_FMT_JSON)
    return floats * 16 + bj->n * 64 + 16 + extra;
  return bj->n * mats * (bj->fmt == SK_FMT_F32 ? 16 : 12) * sizeof(float) + extra;
}

/* Evaluates a parsed batch inline or on the pool (by size), answers, and
 * releases `bj` (or hands it to the job). */
void sk_routes__run_batch(sk_routes *r, sk_http_req *req, sk_routes_batch *bj) {
  int rc;
  int fmt = bj->fmt;
  sk_error err;
  sk_error_clear(&err);
  bj->in_poses = req->route == SK_ROUTE_POSES;
  sk_http_mark(req, SK_HTTP_PARSED);
  if (sk_routes__parsed_cost(r, bj, req->route == SK_ROUTE_POSES ? "/poses" : "", &err) != 0) {
    sk_routes__batch_free(bj);
    sk_problem_err(req, &err, SK_ETOOBIG);
    return;
  }
  /* The memory budget first: the parsed poses, and the answer (in full, or
   * a streamed answer's bounded buffers). */
  size_t poses_bytes, answer = batch_answer_bound(bj, &poses_bytes);
  bool stream = answer > SK_ROUTES_STREAM_MIN && !bj->bare;
  if (sk_http_reserve(req, poses_bytes + (stream ? 0 : answer)) != 0) {
    size_t n = bj->n;
    sk_routes__batch_free(bj);
    sk_problem(req, SK_EBUSY, "", "the batch (%zu poses, an answer of up to %zu bytes) does not fit in the memory "
                               "budget (--memory-mb) now; retry later", n, answer);
    return;
  }
  if (stream) {
    stream_batch(r, req, bj);
    return;
  }
  if (r->cfg.pool_always || batch_cost_us(bj) > (double)r->cfg.inline_limit) {
    rc = sk_http_defer(req, batch_work, sk_routes__batch_after, bj);
    if (rc == 0)
      return;
    sk_routes__batch_free(bj);
    sk_problem(req, SK_EBUSY, "", "too many batches in flight; retry later");
    return;
  }
  const sk_frames_opts fo = sk_routes__frames_opts(r, fmt, 1);
  if (fmt == SK_FMT_JSON && !bj->bare)
    sk_strbuf_append(&bj->out, "{\"results\":[", 12);
  rc = sk_frames_eval(bj->entry->model, bj->poses, bj->n, &fo, &r->sc, &bj->out);
  sk_http_mark(req, SK_HTTP_EVALUATED);
  if (rc == SK_ENOTFINITE) {
    sk_frames_nonfinite_error(bj->entry->model, &r->sc, req->route == SK_ROUTE_POSES, &err);
    sk_routes__batch_free(bj);
    sk_problem_err(req, &err, SK_ENOTFINITE);
    return;
  }
  if (rc != 0 || (fmt == SK_FMT_JSON && !bj->bare && sk_strbuf_append(&bj->out, "]}", 2)))
    bj->out.failed = 1;
  sk_routes__respond_poses(r, req, bj->entry->model->skel, bj->n, fmt, &bj->out);
  sk_routes__batch_free(bj);
}
