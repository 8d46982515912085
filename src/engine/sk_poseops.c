#include "sk_poseops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_frames.h"
#include "sk_json.h"
#include "sk_mat.h"
#include "sk_rootframes.h"
#include "sk_eventframes.h"

/* An unknown bone inside an op is a field of the body (422), not a missing
 * resource: sk_ops says SK_ENOTFOUND, which sk_problem would answer 404. */
static int body_code(int rc, sk_error *err) {
  if (rc == SK_ENOTFOUND) {
    if (err != NULL)
      err->code = SK_EUNKNOWN;
    return SK_EUNKNOWN;
  }
  return rc;
}

/* True when the pose object has extras for this module. */
static bool has_extras(const json_t *j) {
  if (!json_is_object(j))
    return false;
  if (json_object_get(j, "ops") != NULL || json_object_get(j, "mesh") != NULL || json_object_get(j, "rays") != NULL ||
      json_object_get(j, "rootMotion") != NULL || json_object_get(j, "events") != NULL)
    return true;
  const json_t *out = json_object_get(j, "output");
  for (size_t i = 0; i < json_array_size(out); i++) {
    const char *name = json_string_value(json_array_get(out, i));
    if (name != NULL && (sk_answer_output_bit(name, strlen(name)) &
                         (sk_answer_family_mask(SK_OUTPUT_BONES) | sk_answer_family_mask(SK_OUTPUT_MESH))))
      return true;
  }
  return false;
}

/* A MESH output (`bit`) at output index i: the model's geometry and
 * writer must be there, the answer JSON. */
static int mesh_output(const sk_model *e, sk_poseops *x, unsigned bit, const char *ptr, size_t i, int fmt,
                       sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sk_pointer_child(p, sizeof p, ptr, "output");
  sk_pointer_push_index(p, sizeof p, i);
  if (x->mesh_out & bit)
    return sk_error_set(err, SK_EDUPLICATE, p, "output listed twice");
  if (e->geom == NULL || e->mesh_hook == NULL)
    return sk_error_set(err, SK_ERANGE, p,
                        "this skeleton has no skinned mesh: upload its glTF file, whose nodes with this skin have "
                        "meshes, to ask for \"vertices\", \"normals\" or \"bounds\"");
  if (fmt != SK_FMT_JSON && e->mesh_hook->write_f32 == NULL)
    return sk_error_set(err, SK_ERANGE, p, "binary answers carry no mesh outputs here; ask for application/json");
  if (bit == SK_OUT_HITS && e->mesh_hook->write_hits == NULL)
    return sk_error_set(err, SK_ERANGE, p, "ray hits are not answered here");
  for (uint32_t k = 0; k < e->geom->nprims; k++) {
    const sk_geom_prim *q = &e->geom->prims[k];
    if (q->unweighted >= 0)
      return sk_error_set(err, SK_ERANGE, p,
                          "vertex %lld of /meshes/%u/primitives/%u has no weight above 0 (/accessors/%u): Babylon "
                          "skins it to NaN; fix the file's weights to ask for the mesh",
                          (long long)q->unweighted, q->mesh, q->prim, q->weights_accessor);
  }
  x->mesh_out |= bit;
  x->geom = e->geom;
  x->mesh_hook = e->mesh_hook;
  return 0;
}

/* Takes the extras out of `stripped` (a copy of the pose object) into `x`. */
static int parse_extras(const sk_model *e, json_t *stripped, const char *ptr, int fmt, sk_poseops *x,
                        sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  int rc = 0;
  json_t *out = json_object_get(stripped, "output");
  if (json_is_array(out)) {
    /* world/positions out of the list; duplicates and the others are
     * sk_pose_parse's to judge, at the same indexes. */
    json_t *kept = json_array();
    if (kept == NULL)
      return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
    for (size_t i = 0; !rc && i < json_array_size(out); i++) {
      json_t *v = json_array_get(out, i);
      const char *name = json_string_value(v);
      const unsigned bit = name == NULL ? 0 : sk_answer_output_bit(name, strlen(name));
      bool *flag = bit == SK_OUT_WORLD ? &x->world : bit == SK_OUT_POSITIONS ? &x->positions : NULL;
      if (bit & sk_answer_family_mask(SK_OUTPUT_MESH)) {
        rc = mesh_output(e, x, bit, ptr, i, fmt, err);
        continue;
      }
      if (flag == NULL) {
        if (json_array_append(kept, v) != 0)
          rc = sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
        continue;
      }
      if (*flag) {
        sk_pointer_child(p, sizeof p, ptr, "output");
        sk_pointer_push_index(p, sizeof p, i);
        rc = sk_error_set(err, SK_EDUPLICATE, p, "output listed twice");
      }
      *flag = true;
    }
    if (!rc && (x->mesh_out & SK_OUT_NORMALS) && !(x->mesh_out & SK_OUT_VERTICES)) {
      sk_pointer_child(p, sizeof p, ptr, "output");
      rc = sk_error_set(err, SK_ERANGE, p, "\"normals\" comes with \"vertices\": ask for both");
    }
    if (!rc && (x->mesh_out & SK_OUT_HITS) && json_object_get(stripped, "rays") == NULL) {
      sk_pointer_child(p, sizeof p, ptr, "rays");
      rc = sk_error_set(err, SK_EMISSING, p, "\"hits\" needs \"rays\": [{\"origin\": [x, y, z], \"direction\": [x, y, z]}]");
    }
    if (!rc && json_object_set_new(stripped, "output", kept) != 0)
      rc = sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
    else if (rc)
      json_decref(kept);
  }
  x->has_mesh = e->has_mesh;
  if (e->has_mesh)
    x->mesh = e->mesh;
  const json_t *mj = json_object_get(stripped, "mesh");
  if (!rc && mj != NULL) {
    sk_pointer_child(p, sizeof p, ptr, "mesh");
    rc = sk_ops_parse_mesh(mj, p, &x->has_mesh, &x->mesh, err);
  }
  const json_t *oj = json_object_get(stripped, "ops");
  if (!rc && oj != NULL) {
    sk_pointer_child(p, sizeof p, ptr, "ops");
    rc = body_code(sk_ops_parse(e->skel, oj, p, x->has_mesh ? &x->mesh : NULL, &x->ops, &x->nops, err), err);
  }
  for (size_t k = 0; !rc && k < x->nops; k++) {
    if (x->ops[k].kind != SK_OP_QUERY)
      continue;
    x->nqueries++;
    if (fmt != SK_FMT_JSON) {
      sk_pointer_child(p, sizeof p, ptr, "ops");
      sk_pointer_push_index(p, sizeof p, k);
      rc = sk_error_set(err, SK_ERANGE, p, "binary answers carry no query results; ask for application/json");
    }
  }
  const json_t *rj = json_object_get(stripped, "rays");
  if (!rc && rj != NULL) {
    sk_pointer_child(p, sizeof p, ptr, "rays");
    if (!(x->mesh_out & SK_OUT_HITS))
      rc = sk_error_set(err, SK_ERANGE, p, "\"rays\" go with \"hits\" in \"output\"");
    else
      rc = sk_geom_parse_rays(x->geom, rj, p, &x->rays, &x->nrays, &x->ray_tests, err);
  }
  if (!rc && json_object_get(stripped, "rootMotion") != NULL)
    rc = sk_rootframes_parse(e, stripped, ptr, &x->rootframes, &x->rootframes_owned, err);
  json_object_del(stripped, "mesh");
  json_object_del(stripped, "ops");
  json_object_del(stripped, "rays");
  long ev_clip = -1;
  if (!rc && json_object_get(stripped, "events") != NULL &&
      (rc = sk_eventframes_parse(e->anim, stripped, ptr, &ev_clip, err)) == 0 && ev_clip >= 0) {
    x->events = true;
    x->ev_clip = ev_clip;
    x->ev_table = &e->anim->clips[ev_clip].events;
  }
  json_object_del(stripped, "mesh");
  json_object_del(stripped, "ops");
  json_object_del(stripped, "rays");
  json_object_del(stripped, "rootMotion");
  json_object_del(stripped, "events");
  return rc;
}

/* Each pose of the object gets its clip frames (the geometry's morph
 * weights are animated): *x becomes a block of `count` copies. */
static int mesh_clock(const sk_model *e, const json_t *j, const char *ptr, sk_poseops **x, size_t count,
                      sk_error *err) {
  sk_pose_clock clk;
  if (sk_pose_anim_clock(e->anim, j, &clk) != 0)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  char p[SK_ERROR_POINTER_MAX];
  sk_pointer_child(p, sizeof p, ptr, "layers");
  int rc = 0;
  if (clk.layers && (clk.additive || clk.nlayers > SK_MESH_LAYERS_MAX))
    rc = sk_error_set(err, SK_ERANGE, p,
                      "the mesh's morph weights are animated: its mesh outputs take at most %d layers, none "
                      "additive or masked",
                      SK_MESH_LAYERS_MAX);
  const size_t nl = clk.layers ? clk.nlayers : clk.clip >= 0 ? 1 : 0;
  if (!rc && nl > 0 && count > 0) {
    sk_poseops *b = count > 1 ? calloc(count, sizeof *b) : *x;
    if (b == NULL) {
      rc = sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
    } else {
      for (size_t i = 0; i < count; i++) {
        if (b != *x)
          b[i] = **x;
        b[i].block = count;
        b[i].mesh_nlayers = nl;
        b[i].mesh_blend = clk.layers;
        /* a range's frame time, each layer's "time" an offset to it (sk_sample_layer_time) */
        const bool range = clk.times != NULL && i < clk.n;
        const double t = range ? clk.times[i] : clk.time;
        for (size_t k = 0; k < nl; k++) {
          const sk_anim_layer *l = clk.layers ? &clk.layer[k] : NULL;
          const long clip = l ? (long)l->clip : clk.clip;
          const double lt = l == NULL ? t : range ? (l->time == 0 ? t : l->time + t) : l->time;
          b[i].mesh_layers[k] = (sk_mesh_layer){
              clip, sk_anim__layer_frame(&e->anim->clips[clip], lt, l ? l->loop : clk.loop, l ? clk.speed[k] : 0),
              l ? l->weight : 1};
        }
      }
      if (b != *x) {
        free(*x);
        *x = b;
      }
    }
  }
  free(clk.times);
  free(clk.layer);
  return rc;
}

/* Each pose of the object gets its own copy of *x (one block), unless it
 * has one already. */
static int own_block(sk_poseops **x, size_t count) {
  if ((*x)->block == count || count <= 1)
    return 0;
  sk_poseops *b = calloc(count, sizeof *b);
  if (b == NULL)
    return SK_ENOMEM;
  for (size_t i = 0; i < count; i++) {
    b[i] = **x;
    b[i].block = count;
  }
  free(*x);
  *x = b;
  return 0;
}

/* The in-place root and each pose's motion ("rootMotion"). */
static int root_frames(const sk_model *e, const json_t *j, const char *ptr, sk_poseops **x, sk_pose *poses,
                       size_t count, sk_error *err) {
  double *v = calloc(count ? count : 1, SK_ROOTFRAMES_VALUES * sizeof *v);
  int rc = v == NULL ? SK_ENOMEM : own_block(x, count);
  if (!rc)
    rc = sk_rootframes_apply((*x)->rootframes, e->anim, j, poses, count, v);
  for (size_t i = 0; !rc && i < count; i++)
    memcpy((*x)[(*x)->block > 1 ? i : 0].root_motion, v + i * SK_ROOTFRAMES_VALUES, sizeof (*x)->root_motion);
  free(v);
  return rc ? sk_error_set(err, SK_ENOMEM, ptr, "out of memory") : 0;
}

/* The events each pose fires ("events"): indices owned by the block's owner. */
static int event_frames(const sk_model *e, const json_t *j, const char *ptr, sk_poseops **x, size_t count,
                        sk_error *err) {
  size_t *off = calloc(count + 1, sizeof *off);
  uint32_t *idx = NULL;
  int rc = off == NULL ? SK_ENOMEM : own_block(x, count);
  if (!rc)
    rc = sk_eventframes_apply(e->anim, (*x)->ev_clip, j, count, &idx, off);
  for (size_t i = 0; !rc && i < count; i++) {
    sk_poseops *p = &(*x)[(*x)->block > 1 ? i : 0];
    p->ev_idx = idx != NULL ? idx + off[i] : NULL;
    p->ev_n = off[i + 1] - off[i];
  }
  if (!rc)
    (*x)->ev_owned = idx;
  else
    free(idx);
  free(off);
  return rc ? sk_error_set(err, SK_ENOMEM, ptr, "out of memory") : 0;
}

int sk_poseops_sample(sk_poseops_sample_fn sample, const sk_model *e, const json_t *j, const char *ptr, int fmt,
                      sk_poseops **owner, sk_pose **poses, size_t *count, sk_error *err) {
  if (!has_extras(j))
    return sample(e->skel, e->anim, j, ptr, NULL, poses, count, err);
  sk_poseops *x = calloc(1, sizeof *x);
  json_t *stripped = json_copy((json_t *)j);
  if (x == NULL || stripped == NULL) {
    free(x);
    json_decref(stripped);
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  }
  x->block = 1;
  int rc = parse_extras(e, stripped, ptr, fmt, x, err);
  /* rootMotion rewrites each pose's root override: poses of their own */
  bool sampled = false;
  const sk_poseops_sample_fn fn = x->rootframes != NULL ? sk_pose_parse_anim : sample;
  if (!rc && (rc = fn(e->skel, e->anim, stripped, ptr, NULL, poses, count, err)) == 0)
    sampled = true;
  if (!rc && x->mesh_out != 0 && e->geom->nweights > 0)
    rc = mesh_clock(e, j, ptr, &x, *count, err);
  if (!rc && x->rootframes != NULL)
    rc = root_frames(e, j, ptr, &x, *poses, *count, err);
  if (!rc && x->events)
    rc = event_frames(e, j, ptr, &x, *count, err);
  if (rc && sampled) {
    sk_pose_array_free(*poses, *count);
    *poses = NULL;
    *count = 0;
  }
  json_decref(stripped);
  if (rc) {
    sk_poseops_free(x);
    return rc;
  }
  for (size_t i = 0; i < *count; i++)
    (*poses)[i].ops = x + (x->block > 1 ? i : 0);
  x->next = *owner;
  *owner = x;
  return 0;
}

void sk_poseops_free(sk_poseops *list) {
  while (list != NULL) {
    sk_poseops *next = list->next;
    if (list->rootframes_owned)
      sk_rootframes_free(list->rootframes);
    free(list->ev_owned);
    free(list->ops);
    free(list->rays);
    free(list);
    list = next;
  }
}

uint64_t sk_poseops_work(const sk_skeleton *s, const sk_poseops *x, int fmt) {
  const uint64_t mats = s->count + 1;
  /* the copy ~ one pass over the bones; an op refreshes at most the
   * absolutes (IK and look-at a few times: measured ~1-1.5 passes on Fox) */
  uint64_t w = mats * (1 + 2 * (uint64_t)x->nops);
  uint64_t outs = (x->world ? s->count : 0) + (x->positions ? s->count : 0);
  w += outs * (fmt == SK_FMT_JSON ? 1 + SK_COST_JSON_MATRIX : 1);
  if (x->mesh_out != 0) {
    /* skinning a vertex (8 influences and a morph target or two) ~ one
     * core matrix; printing its 3 floats ~ 3/16 of a matrix's 16; the
     * conservative bounds ~ one matrix a joint box (no vertex) */
    const uint64_t v = x->geom->vertices;
    if (x->mesh_out & (SK_OUT_VERTICES | SK_OUT_BOUNDS))
      w += v * (1 + x->geom->max_targets / 4);
    for (uint32_t k = 0; (x->mesh_out & SK_OUT_BOUNDS_CONSERVATIVE) && k < x->geom->nprims; k++)
      w += 1 + x->geom->prims[k].nboxes * (1 + (uint64_t)x->geom->prims[k].ntargets / 8);
    /* binary: a copy of the floats, ~1/16 of a matrix each */
    const uint64_t print = fmt == SK_FMT_JSON ? SK_COST_JSON_MATRIX : 1;
    w += v * 3 * print / 16 * (((x->mesh_out & SK_OUT_VERTICES) != 0) + ((x->mesh_out & SK_OUT_NORMALS) != 0));
    /* hits: the primitives skinned again, a ray-triangle test ~ 1/4 of a
     * core matrix (~40 double operations), a printed hit ~ 4 floats */
    if (x->mesh_out & SK_OUT_HITS)
      w += v * (1 + x->geom->max_targets / 4) + x->ray_tests / 4 + x->nrays * print / 4;
  }
  return w + x->nqueries * SK_COST_JSON_MATRIX;
}

size_t sk_poseops_answer_bytes(const sk_skeleton *s, const sk_poseops *x, int fmt) {
  size_t per_mat = fmt == SK_FMT_MAT3X4 ? 12 : 16;
  size_t floats = (x->world ? s->count * per_mat : 0) + (x->positions ? s->count * 3 : 0);
  const size_t rm = (x->rootframes != NULL ? SK_ROOTFRAMES_VALUES * sizeof(double) : 0) +
                    (x->events ? sk_eventframes_answer_bytes(x->ev_n, fmt == SK_FMT_JSON) : 0);
  if (fmt != SK_FMT_JSON) /* exact: the Content-Length of a streamed binary answer */
    return (floats + (x->mesh_out != 0 ? sk_geom_f32_floats(x->geom, x->mesh_out) : 0) +
            x->nrays * SK_GEOM_HIT_WORDS) *
               sizeof(float) +
           rm;
  /* ~16 bytes a printed float; a query at most 16 values, names bounded by
   * the skeleton's (a bone name up to 256 bytes, escaped x6) */
  size_t mesh = 0;
  if (x->mesh_out != 0) { /* ~16 bytes a float, 64 per primitive item */
    const size_t arrays = ((x->mesh_out & SK_OUT_VERTICES) != 0) + ((x->mesh_out & SK_OUT_NORMALS) != 0);
    mesh = (size_t)x->geom->vertices * 3 * 16 * arrays + (size_t)x->geom->nprims * 2 * (64 + 6 * 16) * 2 +
           (size_t)x->geom->nprims * (32 + 26 * (size_t)x->geom->max_targets) + 4 * 32;
    /* a hit: its keys and primitive's name (two u32, 56 bytes), a u32
     * and three doubles (25 bytes at most each): under 224 */
    mesh += 16 + x->nrays * 224;
  }
  return floats * 16 + 64 + x->nqueries * (16 * 26 + 6 * 256 + 64) + mesh + (x->rootframes != NULL ? 8 * 26 + 80 : 0) +
         (x->events ? sk_eventframes_answer_bytes(x->ev_n, true) : 0);
}

static int append_mats(sk_strbuf *out, const float *m, size_t n, int fmt) {
  if (fmt == SK_FMT_F32)
    return sk_strbuf_append(out, (const char *)m, n * 16 * sizeof(float));
  float d[12];
  for (size_t k = 0; k < n; k++) {
    sk_frames_mat3x4(m + 16 * k, d);
    if (sk_strbuf_append(out, (const char *)d, sizeof d))
      return SK_ENOMEM;
  }
  return 0;
}

/* The binary answer of the copy: final, then world, then positions (`w`
 * and `p` from sk_poseops_world when the pose asks for them), then the
 * mesh outputs' floats (`mesh`, proto/mesh.md). */
static int write_binary(const sk_skeleton *s, const sk_poseops *x, const sk_pose_buffers *buf, const float *w,
                        const float *p, int fmt, const sk_strbuf *mesh, sk_strbuf *out) {
  const size_t n = s->count;
  int rc = append_mats(out, buf->final, n + 1, fmt);
  if (!rc && x->world)
    rc = append_mats(out, w, n, fmt);
  if (!rc && x->positions && sk_strbuf_append(out, (const char *)p, n * 3 * sizeof(float)))
    rc = SK_ENOMEM;
  if (!rc && mesh->len > 0 && sk_strbuf_append(out, mesh->data, mesh->len))
    rc = SK_ENOMEM;
  /* rootMotion: 8 little-endian float64 (proto/rootmotion.md) */
  if (!rc && x->rootframes != NULL && sk_strbuf_append(out, (const char *)x->root_motion, sizeof x->root_motion))
    rc = SK_ENOMEM;
  /* events: u32 count, u32 indices (sk_eventframes.h) */
  if (!rc && x->events)
    rc = sk_eventframes_write_binary(x->ev_idx, x->ev_n, out);
  return rc;
}

/* The JSON result object: sk_pose_write_json's members, then "world",
 * "positions", the mesh members (`mesh`, written by the model's hook) and
 * "queries", as `skinner eval` writes a pose with ops. */
static int write_json(const sk_skeleton *s, const sk_poseops *x, const sk_pose *p0, const sk_pose_buffers *buf,
                      const float *w, const float *p, const sk_strbuf *q, const sk_strbuf *mesh, sk_strbuf *out) {
  int rc = sk_pose_write_json(s, p0, buf, NULL, out);
  if (rc)
    return rc;
  out->len--; /* reopen the object */
  bool first = out->len > 0 && out->data[out->len - 1] == '{';
  rc = sk_ops_write_world_arrays(w, p, s->count, x->world, x->positions, first, out);
  first = first && !x->world && !x->positions;
  if (!rc && mesh->len > 0) {
    if ((!first && sk_strbuf_append(out, ",", 1)) || sk_strbuf_append(out, mesh->data, mesh->len))
      rc = SK_ENOMEM;
    first = false;
  }
  if (!rc && x->rootframes != NULL) {
    if (!first && sk_strbuf_append(out, ",", 1))
      rc = SK_ENOMEM;
    rc = rc || sk_rootframes_write_json(x->root_motion, out);
    first = false;
  }
  if (!rc && x->events) {
    if (!first && sk_strbuf_append(out, ",", 1))
      rc = SK_ENOMEM;
    rc = rc || sk_eventframes_write_json(x->ev_table, x->ev_idx, x->ev_n, out);
    first = false;
  }
  if (!rc && x->nops > 0 &&
      ((!first && sk_strbuf_append(out, ",", 1)) || sk_strbuf_append(out, "\"queries\":[", 11) ||
       (q->len > 0 && sk_strbuf_append(out, q->data, q->len)) || sk_strbuf_append(out, "]", 1)))
    rc = SK_ENOMEM;
  if (!rc && sk_strbuf_append(out, "}", 1))
    rc = SK_ENOMEM;
  return rc;
}

int sk_poseops_world(sk_bones *cb, const sk_mesh *mesh, float **w, float **p) {
  const size_t n = cb->s->count ? cb->s->count : 1;
  *w = malloc(n * 16 * sizeof **w);
  *p = malloc(n * 3 * sizeof **p);
  if (*w == NULL || *p == NULL) {
    free(*w);
    free(*p);
    *w = *p = NULL;
    return SK_ENOMEM;
  }
  sk_bones_world(cb, mesh, *w, *p);
  return 0;
}

size_t sk_poseops_nonfinite_bone(const sk_skeleton *s, const sk_pose_buffers *buf, int fmt, unsigned output,
                                 const float *world) {
  const bool json = fmt == SK_FMT_JSON;
  for (size_t b = 0; b < s->count; b++) {
    const int32_t slot = s->bones[b].index;
    const size_t at = 16 * (size_t)(slot >= 0 ? slot : 0);
    if (slot >= 0 && (((!json || (output & SK_OUT_FINAL)) && sk_frames_nonfinite(buf->final + at, 1)) ||
                      (json && (output & SK_OUT_ABSOLUTE) && sk_frames_nonfinite(buf->absolute + at, 1)) ||
                      (json && (output & SK_OUT_LOCAL) && sk_frames_nonfinite(buf->local + at, 1))))
      return b;
    if (world != NULL && sk_frames_nonfinite(world + 16 * b, 1)) /* positions are its row 3 */
      return b;
  }
  return SIZE_MAX;
}

void sk_poseops_copy_forget(sk_poseops_copy *x) { x->from = NULL; }

void sk_poseops_copy_close(sk_poseops_copy *x) {
  if (x->cb.s != NULL)
    sk_bones_close(&x->cb);
  sk_skeleton_destroy(x->c);
  x->c = NULL;
  x->from = NULL;
}

/* Whether ops[0..n) may change a rest matrix. */
static bool ops_change_rests(const sk_op *ops, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (ops[k].kind == SK_OP_SET_CURRENT_POSE_AS_REST)
      return true;
  return false;
}

/* x made a copy of `s` as a fresh clone with fresh sk_bones would be,
 * for a pose running ops[0..n). */
static int copy_reset(sk_poseops_copy *x, const sk_skeleton *s, const sk_op *ops, size_t n) {
  if (x->from == s) { /* only what the last pose could change */
    for (size_t k = 0; k < s->count; k++) {
      x->c->bones[k].local = s->bones[k].local;
      if (x->rests)
        memcpy(x->c->bones[k].rest, s->bones[k].rest, sizeof s->bones[k].rest);
    }
  } else {
    x->from = NULL;
    if (x->c != NULL && x->c->count != s->count) /* cb's arrays are sized by the count */
      sk_poseops_copy_close(x);
    if (sk_skeleton_clone_into(s, &x->c) != 0) {
      sk_poseops_copy_close(x);
      return SK_ENOMEM;
    }
    if (x->cb.s == NULL && sk_bones_init(&x->cb, x->c) != 0)
      return SK_ENOMEM;
    x->cb.s = x->c; /* clone_into may have replaced it (other name sizes) */
    x->from = s;
  }
  sk_bones_reset(&x->cb);
  x->rests = ops_change_rests(ops, n);
  return 0;
}

int sk_poseops_answer(const sk_skeleton *s, const sk_pose *pose, size_t i, sk_poseops_copy *copy,
                      sk_pose_buffers *buf, int fmt, size_t *bad_bone, sk_strbuf *out) {
  const sk_poseops *x = pose->ops;
  if (fmt == SK_FMT_JSON && i > 0 && sk_strbuf_append(out, ",", 1))
    return SK_ENOMEM;
  int rc = copy_reset(copy, s, x->ops, x->nops);
  if (rc)
    return rc;
  sk_skeleton *c = copy->c;
  sk_bones *cb = &copy->cb;
  sk_skeleton_apply(c, pose->overrides, pose->count);
  sk_strbuf q = {0};
  size_t nq = 0;
  rc = sk_ops_apply(cb, x->ops, x->nops, fmt == SK_FMT_JSON ? &q : NULL, &nq);
  /* the overrides are in the copy now */
  sk_pose p0 = *pose;
  p0.overrides = NULL;
  p0.count = 0;
  float *w = NULL, *p = NULL; /* world matrices and positions, computed once */
  if (!rc) {
    sk_pose pe = p0; /* the mesh outputs read the skin matrices, asked or not */
    if (x->mesh_out != 0)
      pe.output |= SK_OUT_FINAL;
    sk_pose_evaluate(c, &pe, buf);
    if (x->world || x->positions)
      rc = sk_poseops_world(cb, x->has_mesh ? &x->mesh : NULL, &w, &p);
  }
  if (!rc) {
    *bad_bone = sk_poseops_nonfinite_bone(c, buf, fmt, p0.output, w);
    if (*bad_bone != SIZE_MAX)
      rc = SK_ENOTFINITE;
  }
  /* the mesh members first, so that a vertex overflowing float32 abandons
   * the answer before any of it is appended (*bad_bone stays SIZE_MAX) */
  sk_strbuf mesh = {0};
  const unsigned others = x->mesh_out & ~(unsigned)SK_OUT_HITS;
  if (!rc && others != 0) /* skin matrices in slot order, (count + 1): what ApplySkeleton reads */
    rc = fmt == SK_FMT_JSON ? x->mesh_hook->write_json(x->geom, others, buf->final, c->count + 1, x->mesh_layers,
                                                       x->mesh_nlayers, x->mesh_blend, true, copy->mesh_threads, &mesh)
                            : x->mesh_hook->write_f32(x->geom, others, buf->final, c->count + 1, x->mesh_layers,
                                                      x->mesh_nlayers, x->mesh_blend, copy->mesh_threads, &mesh);
  if (!rc && (x->mesh_out & SK_OUT_HITS)) /* the last mesh member, as in the table */
    rc = x->mesh_hook->write_hits(x->geom, x->rays, x->nrays, buf->final, c->count + 1, x->mesh_layers,
                                  x->mesh_nlayers, x->mesh_blend, fmt, mesh.len == 0, copy->mesh_threads, &mesh);
  if (!rc)
    rc = fmt == SK_FMT_JSON ? write_json(c, x, &p0, buf, w, p, &q, &mesh, out)
                            : write_binary(c, x, buf, w, p, fmt, &mesh, out);
  free(w);
  free(p);
  sk_strbuf_free(&q);
  sk_strbuf_free(&mesh);
  if (rc == SK_ENOTFINITE)
    return rc;
  return rc || out->failed ? SK_ENOMEM : 0;
}

int sk_poseops_apply_body(const sk_skeleton *base, const sk_mesh *def, const json_t *j, sk_skeleton **out,
                          sk_strbuf *queries, size_t *nq, sk_error *err) {
  *out = NULL;
  *nq = 0;
  if (!json_is_object(j))
    return sk_error_set(err, SK_ETYPE, "", "expected {\"ops\": [op, ...], \"mesh\"?}");
  static const char *const k_keys[] = {"ops", "mesh", NULL};
  int rc = sk_json_check_keys(j, "", k_keys, NULL, err);
  if (rc)
    return rc;
  const json_t *oj = json_object_get(j, "ops");
  if (oj == NULL)
    return sk_error_set(err, SK_EMISSING, "/ops", "a body needs \"ops\"");
  bool has_mesh = def != NULL;
  sk_mesh mesh;
  if (def != NULL)
    mesh = *def;
  if (json_object_get(j, "mesh") != NULL &&
      (rc = sk_ops_parse_mesh(json_object_get(j, "mesh"), "/mesh", &has_mesh, &mesh, err)) != 0)
    return rc;
  sk_op *ops = NULL;
  size_t n = 0;
  if ((rc = body_code(sk_ops_parse(base, oj, "/ops", has_mesh ? &mesh : NULL, &ops, &n, err), err)) != 0)
    return rc;
  sk_skeleton *c = NULL;
  sk_bones cb = {0};
  if (sk_skeleton_clone(base, &c) != 0 || sk_bones_init(&cb, c) != 0 || sk_ops_apply(&cb, ops, n, queries, nq) != 0)
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  if (cb.s != NULL)
    sk_bones_close(&cb);
  free(ops);
  if (rc) {
    sk_skeleton_destroy(c);
    return rc;
  }
  *out = c;
  return 0;
}
