#include "sk_eval.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_animops.h"
#include "sk_gltf.h"
#include "sk_gltf_mesh.h"
#include "sk_json.h"
#include "sk_meshout.h"
#include "sk_ops.h"
#include "sk_clips.h"
#include "sk_frames.h"
#include "sk_pose_int.h"
#include "sk_poseops.h"
#include "sk_sample.h"

/* ---- ops ------------------------------------------------------------------ */

static int op_bone(const sk_skeleton *s, const json_t *op, const char *ptr, bool required, int32_t *bone,
                   sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sk_pointer_child(p, sizeof p, ptr, "bone");
  const json_t *name = json_object_get(op, "bone");
  *bone = -1;
  if (name == NULL) {
    if (required)
      return sk_error_set(err, SK_EMISSING, p, "this op needs a \"bone\"");
    return 0;
  }
  if (!json_is_string(name))
    return sk_error_set(err, SK_ETYPE, p, "expected a bone name");
  *bone = sk_skeleton_find(s, json_string_value(name));
  if (*bone < 0)
    return sk_error_set(err, SK_ENOTFOUND, p, "no bone named \"%s\"", json_string_value(name));
  return 0;
}

static int check_op_keys(const json_t *op, const char *ptr, const char *const *allowed, sk_error *err) {
  return sk_json_check_keys(op, ptr, allowed, NULL, err);
}

/* What the Bone-API ops of a case share: Babylon's lazy absolute matrices
 * of the case's skeleton and the case's default mesh. */
typedef struct eval_ctx {
  sk_bones bones;
  bool has_mesh;
  sk_mesh mesh;
  sk_sampler *sampler; /* owned; built by the first frame range */
  const sk_eval_opts *o;
  /* For the MESH outputs: the glTF skin's skinned primitives (a reference,
   * or NULL) and the case's default mesh as JSON (owned, or NULL), what a
   * model published from the case skeleton gets, as an upload's does. */
  sk_geom *geom;
  char *mesh_json;
} eval_ctx;

static bool binary(const eval_ctx *ctx) { return ctx->o->fmt != SK_FMT_JSON; }

/* The answer leaves `out` through o->flush once it holds a megabyte (or at
 * the end, `last`), so a shot of any length is written in pieces. */
static int flush_out(const eval_ctx *ctx, sk_strbuf *out, bool last) {
  const sk_eval_opts *o = ctx->o;
  if (o->flush == NULL || out->len == 0 || (!last && out->len < SK_EVAL_FLUSH_BYTES))
    return 0;
  int rc = o->flush(o->flush_arg, out->data, out->len) != 0 ? SK_EIO : 0;
  out->len = 0;
  return rc;
}

/* What a binary answer cannot carry, refused at its field as skinnerd
 * refuses it (sk_routes__binary_outputs, sk_poseops): an output other than
 * the final matrices, a query's value. */
static int binary_refusals(const json_t *op, const char *ptr, const sk_op *ops, size_t nops, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  const json_t *out = json_object_get(op, "output");
  for (size_t i = 0; i < json_array_size(out); i++) {
    const char *name = json_string_value(json_array_get(out, i));
    if (name != NULL && (strcmp(name, "final") == 0 ||
                         (sk_answer_output_bit(name, strlen(name)) & sk_answer_family_mask(SK_OUTPUT_MESH))))
      continue; /* the mesh's floats follow the matrices, as in skinnerd's binary answer */
    sk_pointer_child(p, sizeof p, ptr, "output");
    sk_pointer_push_index(p, sizeof p, i);
    return sk_error_set(err, SK_ERANGE, p,
                        "binary output carries final matrices and mesh outputs only; use --format json for \"%s\"",
                        name ? name : "");
  }
  for (size_t k = 0; k < nops; k++)
    if (ops[k].kind == SK_OP_QUERY) {
      sk_pointer_child(p, sizeof p, ptr, "ops");
      sk_pointer_push_index(p, sizeof p, k);
      return sk_error_set(err, SK_ERANGE, p, "a query's value is JSON; binary output carries final matrices only");
    }
  return 0;
}


/* The parts of a "pose"/"evaluate" op that sk_pose_parse does not know:
 * the "world"/"positions" outputs, a "mesh" for them and, on a pose,
 * "ops" applied after the bone overrides. */
typedef struct pose_ext {
  json_t *op; /* new: the op without them */
  bool world, positions, has_mesh;
  sk_mesh mesh;
  sk_op *ops; /* owned */
  size_t nops;
} pose_ext;

static int pose_ext_parse(const sk_skeleton *s, const eval_ctx *ctx, const json_t *op, const char *ptr, bool is_pose,
                          pose_ext *x, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  memset(x, 0, sizeof *x);
  x->has_mesh = ctx->has_mesh;
  x->mesh = ctx->mesh;
  if ((x->op = json_copy((json_t *)op)) == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  int rc = 0;
  const json_t *out = json_object_get(op, "output");
  if (json_is_array(out)) {
    json_t *kept = json_array();
    unsigned seen = 0;
    for (size_t i = 0; kept != NULL && !rc && i < json_array_size(out); i++) {
      const char *name = json_string_value(json_array_get(out, i));
      const unsigned bit = name == NULL ? 0 : sk_answer_output_bit(name, strlen(name));
      sk_pointer_child(p, sizeof p, ptr, "output");
      sk_pointer_push_index(p, sizeof p, i);
      char names[SK_ANSWER_NAMES_MAX];
      if (bit == 0) {
        sk_answer_output_names(names, sizeof names, " or ");
        rc = sk_error_set(err, SK_ERANGE, p, "expected %s", names);
      } else if (seen & bit) {
        rc = sk_error_set(err, SK_EDUPLICATE, p, "output listed twice");
      }
      seen |= bit;
      if (!rc && (bit & sk_answer_family_mask(SK_OUTPUT_CORE)))
        json_array_append_new(kept, json_string(name));
    }
    x->world = seen & SK_OUT_WORLD;
    x->positions = seen & SK_OUT_POSITIONS;
    if (kept == NULL || json_object_set_new(x->op, "output", kept) != 0)
      rc = rc ? rc : sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  }
  const json_t *mj = json_object_get(op, "mesh");
  if (!rc && mj != NULL) {
    sk_pointer_child(p, sizeof p, ptr, "mesh");
    rc = sk_ops_parse_mesh(mj, p, &x->has_mesh, &x->mesh, err);
    json_object_del(x->op, "mesh");
  }
  const json_t *oj = json_object_get(op, "ops");
  if (!rc && oj != NULL && is_pose) {
    sk_pointer_child(p, sizeof p, ptr, "ops");
    rc = sk_ops_parse(s, oj, p, x->has_mesh ? &x->mesh : NULL, &x->ops, &x->nops, err);
    json_object_del(x->op, "ops");
  }
  /* "output": [] asks for nothing: refused as skinnerd refuses it
   * (sk_routes__binary_outputs), unless query results are the answer. */
  bool queries = false;
  for (size_t k = 0; k < x->nops; k++)
    queries |= x->ops[k].kind == SK_OP_QUERY;
  if (!rc && json_is_array(out) && json_array_size(out) == 0 && !queries) {
    sk_pointer_child(p, sizeof p, ptr, "output");
    char names[SK_ANSWER_NAMES_MAX];
    sk_answer_output_names(names, sizeof names, ", ");
    rc = sk_error_set(err, SK_ERANGE, p, "\"output\" is empty; ask for at least one of %s (or leave it out for "
                                         "[\"final\"])", names);
  }
  if (rc) {
    json_decref(x->op);
    free(x->ops);
  }
  return rc;
}

/* Removes the closing brace of the result object just written, so members
 * can follow; returns whether the object is empty. */
static bool reopen_object(sk_strbuf *out) {
  out->len--;
  return out->len > 0 && out->data[out->len - 1] == '{';
}

/* One pose with ops or world outputs: on a scratch copy (Babylon's oracle
 * replays the history on a fresh skeleton: the same state), so nothing
 * stays. Query results go in the pose's own "queries". */
static int pose_on_copy(const sk_skeleton *s, const eval_ctx *ctx, const pose_ext *x, const sk_pose *pose,
                        sk_pose_buffers *buf, sk_strbuf *out) {
  const int fmt = ctx->o->fmt;
  sk_skeleton *c;
  if (sk_skeleton_clone(s, &c))
    return SK_ENOMEM;
  sk_bones cb;
  int rc = sk_bones_init(&cb, c);
  if (rc) {
    sk_skeleton_destroy(c);
    return rc;
  }
  memcpy(cb.absolute, ctx->bones.absolute, 16 * s->count * sizeof *cb.absolute); /* cb.seen_valid stays false */
  sk_skeleton_apply(c, pose->overrides, pose->count);
  sk_strbuf q = {0};
  size_t nq = 0;
  rc = sk_ops_apply(&cb, x->ops, x->nops, &q, &nq);
  sk_pose p0 = *pose;
  p0.overrides = NULL;
  p0.count = 0;
  float *w = NULL, *p = NULL; /* world matrices and positions, computed once */
  if (!rc) {
    sk_pose_evaluate(c, &p0, buf);
    if (x->world || x->positions)
      rc = sk_poseops_world(&cb, x->has_mesh ? &x->mesh : NULL, &w, &p);
  }
  if (!rc) {
    /* refused as skinnerd refuses it, rather than printed as null */
    if (sk_poseops_nonfinite_bone(c, buf, fmt, p0.output, w) != SIZE_MAX)
      rc = SK_ENOTFINITE;
  }
  if (!rc && fmt != SK_FMT_JSON) /* final matrices only (binary_refusals) */
    rc = sk_frames_append_binary(out, buf->final, s->count + 1, fmt);
  else if (!rc)
    rc = sk_pose_write_json(c, &p0, buf, NULL, out);
  if (!rc && fmt == SK_FMT_JSON) {
    bool first = reopen_object(out);
    rc = sk_ops_write_world_arrays(w, p, s->count, x->world, x->positions, first, out);
    first = first && !x->world && !x->positions;
    if (!rc && x->nops > 0 &&
        ((!first && sk_strbuf_append(out, ",", 1)) || sk_strbuf_append(out, "\"queries\":[", 11) ||
         (q.len > 0 && sk_strbuf_append(out, q.data, q.len)) || sk_strbuf_append(out, "]", 1)))
      rc = SK_ENOMEM;
    if (!rc && sk_strbuf_append(out, "}", 1))
      rc = SK_ENOMEM;
  }
  free(w);
  free(p);
  sk_strbuf_free(&q);
  sk_bones_close(&cb);
  sk_skeleton_destroy(c);
  return rc;
}

/* Why a pose op's answer could not be written: memory, or a matrix that
 * overflowed float32 (finite inputs can: a scale of 3e38 under another). */
static int answer_error(int rc, const char *ptr, sk_error *err) {
  if (rc == SK_ENOTFINITE)
    return sk_error_set(err, rc, ptr, "a matrix of the result is not finite (float32 overflow)");
  return sk_error_set(err, rc, ptr, "out of memory writing the result");
}

/* Where a plain range's frames go (range_put): each frame's result, JSON
 * objects comma-separated or binary finals, into `out`. */
typedef struct range_sink {
  const eval_ctx *ctx;
  const sk_skeleton *s;
  const sk_pose *base; /* its output (final only) */
  sk_strbuf *out;
  size_t *nresults;
} range_sink;

static int range_put(void *arg, const float *final, size_t n) {
  range_sink *k = arg;
  const size_t mats = k->s->count + 1;
  sk_pose_buffers fb;
  memset(&fb, 0, sizeof fb);
  for (size_t f = 0; f < n; f++) {
    const float *m = final + f * 16 * mats;
    /* refused as sk_frames refuses it (its JSON would print null) */
    if (sk_frames_nonfinite(m, mats))
      return SK_ENOTFINITE;
    int rc;
    if (binary(k->ctx)) {
      rc = sk_frames_append_binary(k->out, m, mats, k->ctx->o->fmt);
    } else {
      fb.final = (float *)m;
      rc = *k->nresults > 0 && sk_strbuf_append(k->out, ",", 1) ? SK_ENOMEM
                                                                 : sk_pose_write_json(k->s, k->base, &fb, NULL, k->out);
    }
    if (rc)
      return rc;
    (*k->nresults)++;
  }
  return flush_out(k->ctx, k->out, false);
}

/* A plain frame range (final matrices of weighted glTF layers, no "bones"
 * overrides): sampled straight into the batch kernel's rows in chunks by
 * sk_clips, so memory stays bounded whatever the frame count; the bytes
 * sk_frames gives for the same poses (tests/check_eval_identity.c).
 * *done says whether this path answered. */
static int plain_range(const sk_skeleton *s, const sk_anim *anim, eval_ctx *ctx, const json_t *op, const char *ptr,
                       sk_strbuf *out, size_t *nresults, bool *done, sk_error *err) {
  static const char *const k_op[] = {"op", NULL};
  sk_pose_spec sp;
  *done = false;
  int rc = sk_pose__spec_parse(s, anim, op, ptr, k_op, &sp, err);
  if (rc)
    return rc;
  /* The sampler (sk_sample) does plain weighted glTF layers; additive or
   * masked layers and Babylon-format clips take sk_pose_parse_anim. */
  if (sp.animated && sp.times != NULL && sp.base.count == 0 && sp.base.output == SK_OUT_FINAL && sp.plain_layers &&
      !anim->babylon) {
    *done = true;
    range_sink k = {.ctx = ctx, .s = s, .base = &sp.base, .out = out, .nresults = nresults};
    rc = sk_clips_range_finals(s, anim, &ctx->sampler, sp.l, sp.nl, sp.times, sp.nf,
                               sp.base.has_initial_skin ? sp.base.initial_skin : NULL, range_put, &k);
    if (rc == SK_EIO)
      rc = sk_error_set(err, rc, ptr, "writing the output failed");
    else if (rc)
      rc = answer_error(rc, ptr, err);
  }
  sk_pose__spec_close(&sp);
  return rc;
}

/* poses[0..n) through sk_frames, the pipeline skinnerd answers with: one
 * pose by the exact core, a range or batch wanting final matrices by the
 * exact batch kernel, the same bytes either way (sk_frames.h). The model is
 * published from a copy of the case skeleton as it is now (ops before this
 * one may have changed it, and may change it again after), by the
 * constructor an upload goes through. */
static int model_answer(const sk_model *m, const eval_ctx *ctx, const sk_pose *poses, size_t n, sk_strbuf *out,
                        size_t *nresults) {
  const sk_frames_opts o = {.fmt = ctx->o->fmt, .precision = SK_FRAMES_EXACT, .threads = 1};
  int rc = 0;
  if (!binary(ctx) && *nresults > 0 && n > 0 && sk_strbuf_append(out, ",", 1))
    rc = SK_ENOMEM;
  /* in slices, each flushed: the bytes sk_frames_eval gives, never held whole */
  sk_frames_run run;
  if (!rc && (rc = sk_frames_run_init(&run, m, poses, n, &o)) == 0) {
    while (!rc && !sk_frames_run_done(&run))
      if ((rc = sk_frames_run_next(&run, out, SK_EVAL_FLUSH_BYTES)) == 0)
        rc = flush_out(ctx, out, false);
    sk_frames_run_close(&run);
  }
  *nresults += n;
  return rc;
}

static int frames_answer(const sk_skeleton *s, const eval_ctx *ctx, const sk_pose *poses, size_t n, sk_strbuf *out,
                         size_t *nresults) {
  sk_skeleton *copy = NULL;
  sk_model *m = NULL;
  int rc = sk_skeleton_clone(s, &copy);
  if (!rc)
    rc = sk_model_create(copy, NULL, NULL, NULL, -1, &m);
  if (!rc)
    rc = model_answer(m, ctx, poses, n, out, nresults);
  sk_model_unref(m);
  return rc;
}

/* Whether op's "output" names a MESH output. */
static bool wants_mesh(const json_t *op) {
  const json_t *out = json_object_get(op, "output");
  for (size_t i = 0; i < json_array_size(out); i++) {
    const char *name = json_string_value(json_array_get(out, i));
    if (name != NULL && (sk_answer_output_bit(name, strlen(name)) & sk_answer_family_mask(SK_OUTPUT_MESH)))
      return true;
  }
  return false;
}

/* A "pose" op naming MESH outputs: the pose object answered as skinnerd
 * answers it (sk_poseops_sample with the daemon's sampler, then sk_frames)
 * on a model published from the case skeleton as it is now, with its clips,
 * the glTF skin's geometry and the mesh wing's writer: the same bytes as
 * skinnerd's answer to the same pose of the uploaded file. Its "ops" start,
 * as skinnerd's do, from a freshly built skeleton's Bone API state. */
static int mesh_pose(const sk_skeleton *s, const sk_anim *anim, eval_ctx *ctx, const json_t *op, const char *ptr,
                     sk_strbuf *out, size_t *nresults, sk_error *err) {
  json_t *j = json_copy((json_t *)op);
  sk_skeleton *copy = NULL;
  sk_model *m = NULL;
  int rc = j == NULL || sk_skeleton_clone(s, &copy) ? SK_ENOMEM : 0;
  if (!rc)
    rc = sk_model_create(copy, anim != NULL ? sk_anim_ref((sk_anim *)anim) : NULL, ctx->mesh_json, NULL, -1, &m);
  if (rc) {
    json_decref(j);
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  }
  if (ctx->geom != NULL)
    sk_model_set_geom(m, ctx->geom, &sk_mesh_hook_json); /* takes its own reference */
  json_object_del(j, "op");
  sk_poseops *owner = NULL;
  sk_pose *poses = NULL;
  size_t np = 0;
  rc = sk_poseops_sample(sk_frames_sample_range, m, j, ptr, ctx->o->fmt, &owner, &poses, &np, err);
  json_decref(j);
  if (!rc) {
    rc = model_answer(m, ctx, poses, np, out, nresults);
    if (rc == SK_EIO)
      rc = sk_error_set(err, rc, ptr, "writing the output failed");
    else if (rc)
      rc = answer_error(rc, ptr, err);
  }
  sk_pose_array_free(poses, np);
  sk_poseops_free(owner);
  sk_model_unref(m);
  return rc;
}

/* A pose with "world"/"positions" outputs or ops, one at a time: a "pose"
 * on a scratch copy, an "evaluate" on the case skeleton's Bone API state. */
static int ext_answer(sk_skeleton *s, eval_ctx *ctx, const pose_ext *x, bool is_pose, const sk_pose *poses, size_t n,
                      sk_pose_buffers *buf, sk_strbuf *out, size_t *nresults) {
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    if (!binary(ctx) && *nresults > 0 && sk_strbuf_append(out, ",", 1))
      rc = SK_ENOMEM;
    if (!rc && is_pose) {
      rc = pose_on_copy(s, ctx, x, &poses[i], buf, out);
    } else if (!rc) {
      sk_pose_evaluate(s, &poses[i], buf);
      rc = sk_pose_write_json(s, &poses[i], buf, NULL, out);
      if (!rc && (poses[i].output & SK_OUT_ABSOLUTE))
        sk_bones_refresh_all(&ctx->bones);
      if (!rc) {
        bool first = reopen_object(out);
        rc = sk_ops_write_world(&ctx->bones, x->has_mesh ? &x->mesh : NULL, x->world, x->positions, first, out);
        if (!rc && sk_strbuf_append(out, "}", 1))
          rc = SK_ENOMEM;
      }
    }
    if (!rc) /* whole results only: pose_on_copy reopens the object it wrote */
      rc = flush_out(ctx, out, false);
    (*nresults)++;
  }
  return rc;
}

static int run_pose_op(sk_skeleton *s, const sk_anim *anim, eval_ctx *ctx, const json_t *op, const char *ptr,
                       bool is_pose, sk_pose_buffers *buf, sk_strbuf *out, size_t *nresults, sk_error *err) {
  static const char *const k_op[] = {"op", NULL};
  static const char *const k_eval[] = {"op", "initialSkinMatrix", "output", "mesh", NULL};
  sk_pose *poses;
  size_t np;
  pose_ext x;
  int rc;
  if (!is_pose && (rc = check_op_keys(op, ptr, k_eval, err)))
    return rc;
  /* "events" too: the daemon's pose path answers them (sk_eventframes) */
  if (wants_mesh(op) || (is_pose && json_object_get(op, "events") != NULL)) {
    if (!is_pose)
      return sk_error_set(err, SK_ERANGE, ptr, "mesh outputs come with a \"pose\" op, not \"evaluate\"");
    if (binary(ctx) && (rc = binary_refusals(op, ptr, NULL, 0, err)))
      return rc;
    return mesh_pose(s, anim, ctx, op, ptr, out, nresults, err);
  }
  if ((rc = pose_ext_parse(s, ctx, op, ptr, is_pose, &x, err)))
    return rc;
  bool ext = x.world || x.positions || x.nops > 0 || (is_pose && json_object_get(op, "ops") != NULL);
  bool done = false;
  if (binary(ctx))
    rc = binary_refusals(op, ptr, x.ops, x.nops, err);
  if (!rc && !ext)
    rc = plain_range(s, anim, ctx, x.op, ptr, out, nresults, &done, err);
  if (rc || done) {
    json_decref(x.op);
    free(x.ops);
    return rc;
  }
  /* A pose naming clips gives one result per frame: for sk_frames, in
   * range form where a range takes it (a Babylon-format clip's, a glTF
   * range with "bones" on top), as skinnerd's routes parse it; the Bone
   * API paths want every frame's overrides. */
  rc = (ext ? sk_pose_parse_anim : sk_pose_parse_range)(s, anim, x.op, ptr, k_op, &poses, &np, err);
  json_decref(x.op);
  if (rc) {
    free(x.ops);
    return rc;
  }
  if (ext) {
    rc = ext_answer(s, ctx, &x, is_pose, poses, np, buf, out, nresults);
  } else {
    rc = frames_answer(s, ctx, poses, np, out, nresults);
    /* Babylon's "absolute" output computes every root's absolute matrices:
     * the lazy state the Bone API reads changes too (once is enough: the
     * poses leave the skeleton as it was). */
    for (size_t i = 0; !rc && !is_pose && i < np; i++)
      if (poses[i].output & SK_OUT_ABSOLUTE) {
        sk_bones_refresh_all(&ctx->bones);
        break;
      }
  }
  sk_pose_array_free(poses, np);
  free(x.ops);
  if (rc == SK_EIO)
    return sk_error_set(err, rc, ptr, "writing the output failed");
  return rc ? answer_error(rc, ptr, err) : 0;
}

static int run_op(sk_skeleton *s, const sk_anim *anim, eval_ctx *ctx, const json_t *op, const char *ptr,
                  sk_pose_buffers *buf, sk_strbuf *out, size_t *nresults, sk_error *err) {
  static const char *const k_set[] = {"op", "bones", NULL};
  static const char *const k_bind[] = {"op", "bone", "matrix", "keepLocal", NULL};
  static const char *const k_rest[] = {"op", "bone", "matrix", NULL};
  static const char *const k_rtr[] = {"op", "bone", NULL};
  char p[SK_ERROR_POINTER_MAX];
  int rc;
  if (!json_is_object(op))
    return sk_error_set(err, SK_ETYPE, ptr, "expected an op object");
  const char *name = json_string_value(json_object_get(op, "op"));
  sk_pointer_child(p, sizeof p, ptr, "op");
  if (name == NULL)
    return sk_error_set(err, SK_EMISSING, p, "every op needs an \"op\" string");

  if (strcmp(name, "set") == 0) {
    if ((rc = check_op_keys(op, ptr, k_set, err)))
      return rc;
    sk_override *o;
    size_t n;
    const json_t *bones = json_object_get(op, "bones");
    sk_pointer_child(p, sizeof p, ptr, "bones");
    if (bones == NULL)
      return sk_error_set(err, SK_EMISSING, p, "\"set\" needs \"bones\"");
    if ((rc = sk_json_parse_overrides(s, bones, p, &o, &n, err)))
      return rc;
    sk_skeleton_apply(s, o, n);
    for (size_t k = 0; k < n; k++)
      sk_bones_touch(&ctx->bones, o[k].bone);
    free(o);
    return 0;
  }
  if (strcmp(name, "pose") == 0 || strcmp(name, "evaluate") == 0)
    return run_pose_op(s, anim, ctx, op, ptr, name[0] == 'p', buf, out, nresults, err);
  if (sk_ops_known(name)) {
    sk_op bop;
    if ((rc = sk_ops_parse_one(s, op, ptr, ctx->has_mesh ? &ctx->mesh : NULL, &bop, err)))
      return rc;
    if (binary(ctx) && bop.kind == SK_OP_QUERY)
      return sk_error_set(err, SK_ERANGE, ptr, "a query's value is JSON; binary output carries final matrices only");
    if (sk_ops_apply(&ctx->bones, &bop, 1, out, nresults))
      return sk_error_set(err, SK_ENOMEM, ptr, "out of memory writing the result");
    return 0;
  }
  if (strcmp(name, "setBind") == 0 || strcmp(name, "setRest") == 0) {
    bool bind = name[3] == 'B';
    if ((rc = check_op_keys(op, ptr, bind ? k_bind : k_rest, err)))
      return rc;
    int32_t bone;
    if ((rc = op_bone(s, op, ptr, true, &bone, err)))
      return rc;
    float m[16];
    sk_pointer_child(p, sizeof p, ptr, "matrix");
    const json_t *mj = json_object_get(op, "matrix");
    if (mj == NULL)
      return sk_error_set(err, SK_EMISSING, p, "\"%s\" needs a \"matrix\"", name);
    if ((rc = sk_json_floats(mj, 16, p, m, err)))
      return rc;
    sk_bones_touch(&ctx->bones, bone);
    if (!bind) {
      sk_skeleton_set_rest(s, bone, m);
      return 0;
    }
    const json_t *kl = json_object_get(op, "keepLocal");
    if (kl != NULL && !json_is_boolean(kl)) {
      sk_pointer_child(p, sizeof p, ptr, "keepLocal");
      return sk_error_set(err, SK_ETYPE, p, "expected true or false");
    }
    if (sk_skeleton_set_bind(s, bone, m, json_is_true(kl)) != 0)
      return sk_error_set(err, SK_ESINGULAR, p, "the absolute bind matrix of bone \"%s\" would not be invertible",
                          s->bones[bone].name);
    return 0;
  }
  if (strcmp(name, "returnToRest") == 0) {
    if ((rc = check_op_keys(op, ptr, k_rtr, err)))
      return rc;
    int32_t bone;
    if ((rc = op_bone(s, op, ptr, false, &bone, err)))
      return rc;
    sk_bones_return_to_rest(&ctx->bones, bone);
    return 0;
  }
  return sk_error_set(err, SK_ERANGE, p, "unknown op \"%s\"", name);
}

/* {"gltf": "path", "skin"?: index | "name"}: reads and imports the file. An
 * error inside the file keeps its code; the pointer becomes /skeleton/gltf
 * and the text names the file and the pointer into the glTF JSON. */
static int load_gltf_skeleton(const json_t *skel, const char *base_dir, sk_skeleton **s, sk_anim **anim,
                              json_t **mesh, sk_geom **geom, sk_error *err) {
  static const char *const k_gltf[] = {"gltf", "skin", NULL};
  int rc = check_op_keys(skel, "/skeleton", k_gltf, err);
  if (rc)
    return rc;
  const char *rel = json_string_value(json_object_get(skel, "gltf"));
  if (rel == NULL || rel[0] == '\0')
    return sk_error_set(err, SK_ETYPE, "/skeleton/gltf", "expected the path of a .glb or .gltf file");
  char skin_sel[32] = "";
  const json_t *skin = json_object_get(skel, "skin");
  if (json_is_integer(skin) && json_integer_value(skin) >= 0)
    snprintf(skin_sel, sizeof skin_sel, "%lld", (long long)json_integer_value(skin));
  else if (json_is_integer(skin))
    return sk_error_set(err, SK_ERANGE, "/skeleton/skin", "skin indices start at 0");
  else if (skin != NULL && !json_is_string(skin))
    return sk_error_set(err, SK_ETYPE, "/skeleton/skin", "expected a skin index or name");
  char path[4096];
  int n = rel[0] == '/' || base_dir == NULL || base_dir[0] == '\0'
              ? snprintf(path, sizeof path, "%s", rel)
              : snprintf(path, sizeof path, "%s/%s", base_dir, rel);
  if (n < 0 || (size_t)n >= sizeof path)
    return sk_error_set(err, SK_ERANGE, "/skeleton/gltf", "path too long");
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return sk_error_set(err, SK_ENOTFOUND, "/skeleton/gltf", "%s: %s", path, strerror(errno));
  sk_strbuf data = {0};
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
    if (sk_strbuf_append(&data, chunk, got))
      break;
  bool bad = ferror(f) != 0;
  fclose(f);
  if (data.failed || bad) {
    sk_strbuf_free(&data);
    return sk_error_set(err, data.failed ? SK_ENOMEM : SK_EIO, "/skeleton/gltf", "cannot read %s", path);
  }
  sk_error ge;
  sk_error_clear(&ge);
  size_t estimate;
  sk_gltf_extra x;
  rc = sk_gltf_import_extra(data.data != NULL ? data.data : "", data.len,
                            json_is_string(skin) ? json_string_value(skin) : skin_sel, 0, 0, &estimate, false, s,
                            anim, &x, &ge);
  sk_strbuf_free(&data);
  if (rc == 0) {
    /* The file's default mesh, as the daemon stores it for an upload. */
    *mesh = x.mesh_json != NULL ? json_loads(x.mesh_json, 0, NULL) : NULL;
    *geom = sk_geom_ref(x.geom);
    sk_gltf_extra_clear(&x);
    return 0;
  }
  bool no_skin = rc == SK_ENOTFOUND && strcmp(ge.pointer, "/skins") == 0;
  return sk_error_set(err, rc, no_skin ? "/skeleton/skin" : "/skeleton/gltf", "%s at \"%s\": %s", path, ge.pointer,
                      ge.text);
}

int sk_eval_case(const json_t *c, sk_strbuf *out, sk_error *err) { return sk_eval_case_opts(c, NULL, out, err); }

int sk_eval_case_at(const json_t *c, const char *base_dir, sk_strbuf *out, sk_error *err) {
  const sk_eval_opts o = {.base_dir = base_dir};
  return sk_eval_case_opts(c, &o, out, err);
}

int sk_eval_case_opts(const json_t *c, const sk_eval_opts *o, sk_strbuf *out, sk_error *err) {
  static const sk_eval_opts zeroed = {0};
  if (o == NULL)
    o = &zeroed;
  if (o->fmt != SK_FMT_JSON && o->fmt != SK_FMT_F32 && o->fmt != SK_FMT_MAT3X4)
    return sk_error_set(err, SK_EINVAL, "", "unknown answer format %d", o->fmt);
  const char *base_dir = o->base_dir;
  static const char *const k_case[] = {"skeleton", "ops", "mesh", NULL};
  if (!json_is_object(c))
    return sk_error_set(err, SK_ETYPE, "", "expected a case object {\"skeleton\", \"ops\"}");
  int rc = check_op_keys(c, "", k_case, err);
  if (rc)
    return rc;
  const json_t *skel = json_object_get(c, "skeleton");
  if (skel == NULL)
    return sk_error_set(err, SK_EMISSING, "/skeleton", "a case needs a \"skeleton\"");
  const json_t *ops = json_object_get(c, "ops");
  if (ops != NULL && !json_is_array(ops))
    return sk_error_set(err, SK_ETYPE, "/ops", "expected an array of ops");
  sk_skeleton *s;
  sk_anim *anim = NULL;
  json_t *file_mesh = NULL;
  sk_geom *geom = NULL;
  if (json_is_object(skel) && json_object_get(skel, "gltf") != NULL)
    rc = load_gltf_skeleton(skel, base_dir, &s, &anim, &file_mesh, &geom, err);
  else
    rc = sk_json_parse_skeleton_anim(skel, "/skeleton", 0, &s, &anim, err);
  if (rc)
    return rc;
  /* The additive keys an upload keeps with its clips: the same bytes, and
   * the conformance cases then play them as skinnerd does. Optional. */
  sk_anim_additive_share(anim, s, SK_ANIM_ADDITIVE_SHARE_MAX);
  eval_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.o = o;
  ctx.geom = geom;
  /* No "mesh" in a glTF case: the file's default mesh, as an upload of the
   * file gets (one that does not compose, a zero scale above the mesh: none,
   * as in the daemon). "mesh": null still means none. */
  const json_t *case_mesh = json_object_get(c, "mesh");
  if (case_mesh == NULL && file_mesh != NULL &&
      sk_ops_parse_mesh(file_mesh, "/mesh", &ctx.has_mesh, &ctx.mesh, NULL) != 0)
    ctx.has_mesh = false;
  const json_t *shown = case_mesh != NULL ? case_mesh : file_mesh;
  ctx.mesh_json = json_is_object(shown) ? json_dumps(shown, JSON_COMPACT) : NULL;
  json_decref(file_mesh);
  if (case_mesh != NULL && (rc = sk_ops_parse_mesh(case_mesh, "/mesh", &ctx.has_mesh, &ctx.mesh, err))) {
    free(ctx.mesh_json);
    sk_geom_unref(geom);
    sk_skeleton_destroy(s);
    sk_anim_destroy(anim);
    return rc;
  }
  sk_pose_buffers buf;
  if ((rc = sk_pose_buffers_init(&buf, s->count)) || (rc = sk_bones_init(&ctx.bones, s))) {
    sk_pose_buffers_close(&buf);
    free(ctx.mesh_json);
    sk_geom_unref(geom);
    sk_skeleton_destroy(s);
    sk_anim_destroy(anim);
    return sk_error_set(err, rc, "", "out of memory");
  }
  size_t nresults = 0;
  if (!binary(&ctx) && (sk_strbuf_append(out, "{\"order\":", 9) || sk_json_write_order(s, out) ||
                        sk_strbuf_append(out, ",\"results\":[", 12)))
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  /* The Babylon-format skeleton JSON, for copyAnimationRange. */
  const json_t *b0 = json_array_get(json_object_get(skel, "bones"), 0);
  json_t *cur = json_object_get(b0, "parentBoneIndex") != NULL ? json_incref((json_t *)skel) : NULL;
  for (size_t i = 0; !rc && i < json_array_size(ops); i++) {
    char p[SK_ERROR_POINTER_MAX] = "/ops";
    sk_pointer_push_index(p, sizeof p, i);
    const json_t *op = json_array_get(ops, i);
    const char *opname = json_string_value(json_object_get(op, "op"));
    if (opname != NULL && strcmp(opname, "copyAnimationRange") == 0)
      rc = sk_animops_copy_range(s, &cur, &anim, op, p, err);
    else
      rc = run_op(s, anim, &ctx, op, p, &buf, out, &nresults, err);
  }
  json_decref(cur);
  if (!rc && !binary(&ctx) && sk_strbuf_append(out, "]}", 2))
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  if (!rc && flush_out(&ctx, out, true) != 0)
    rc = sk_error_set(err, SK_EIO, "", "writing the output failed");
  sk_pose_buffers_close(&buf);
  sk_bones_close(&ctx.bones);
  sk_sampler_destroy(ctx.sampler);
  free(ctx.mesh_json);
  sk_geom_unref(geom);
  sk_skeleton_destroy(s);
  sk_anim_destroy(anim);
  return rc;
}

