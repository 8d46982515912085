#include "sk_geom.h"

#include <math.h>

#include "sk_anim.h"
#include "sk_answer.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(ptr, ...) sk_error_set(err, SK_EFORMAT, (ptr), __VA_ARGS__)

/* The primitives to keep: (mesh, first node) pairs, each mesh once. */
typedef struct {
  size_t mesh, node;
} mesh_use;

static const json_t *item(const json_t *root, const char *name, size_t i) {
  return json_array_get(json_object_get(root, name), i);
}

static bool index_of(const json_t *v, size_t *out) {
  if (!json_is_integer(v) || json_integer_value(v) < 0)
    return false;
  *out = (size_t)json_integer_value(v);
  return true;
}

/* The meshes skin `skin` skins, in node order; *n of them (new array). */
static int mesh_uses(const json_t *root, size_t skin, mesh_use **out, size_t *n) {
  const json_t *nodes = json_object_get(root, "nodes");
  *out = NULL;
  *n = 0;
  mesh_use *u = NULL;
  for (size_t i = 0; i < json_array_size(nodes); i++) {
    const json_t *node = json_array_get(nodes, i);
    size_t s, m;
    if (!index_of(json_object_get(node, "skin"), &s) || s != skin || !index_of(json_object_get(node, "mesh"), &m) ||
        item(root, "meshes", m) == NULL)
      continue;
    bool seen = false;
    for (size_t k = 0; k < *n && !seen; k++)
      seen = u[k].mesh == m;
    if (seen)
      continue;
    mesh_use *grown = realloc(u, (*n + 1) * sizeof *u);
    if (grown == NULL) {
      free(u);
      return SK_ENOMEM;
    }
    u = grown;
    u[(*n)++] = (mesh_use){m, i};
  }
  *out = u;
  return 0;
}

/* An attribute's accessor index, or false when the attribute is absent. */
static bool attribute(const json_t *attrs, const char *name, size_t *acc) {
  return index_of(json_object_get(attrs, name), acc);
}

static uint64_t acc_count(const json_t *root, size_t acc) {
  const json_t *c = json_object_get(item(root, "accessors", acc), "count");
  return json_is_integer(c) && json_integer_value(c) > 0 ? (uint64_t)json_integer_value(c) : 0;
}

int sk_geom_estimate(const sk_gltf *g, size_t skin, size_t base, size_t limit, size_t *bytes, sk_error *err) {
  const json_t *root = sk_gltf_json(g);
  mesh_use *u;
  size_t n;
  *bytes = 0;
  if (mesh_uses(root, skin, &u, &n) != 0)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  const uint64_t joints = json_array_size(json_object_get(item(root, "skins", skin), "joints")) + 1;
  uint64_t total = 64, peak = 0;
  int rc = 0;
  for (size_t k = 0; !rc && k < n; k++) {
    const json_t *prims = json_object_get(item(root, "meshes", u[k].mesh), "primitives");
    total += json_array_size(prims) * (uint64_t)(sizeof(sk_geom_prim) + 64);
    for (size_t p = 0; !rc && p < json_array_size(prims); p++) {
      const json_t *attrs = json_object_get(json_array_get(prims, p), "attributes");
      size_t acc;
      if (!attribute(attrs, "POSITION", &acc))
        continue;
      const uint64_t count = acc_count(root, acc);
      const json_t *targets = json_object_get(json_array_get(prims, p), "targets");
      /* positions, normals, 8 joints (u16) and 8 weights, per target two
       * float arrays and its influence; the read of one accessor at once */
      uint64_t add = count * (6 * sizeof(float) + 8 * (sizeof(uint32_t) + sizeof(float))) +
                     json_array_size(targets) * (count * 6 * sizeof(float) + sizeof(sk_geom_target) + 8) +
                     /* the conservative bounds' boxes, per joint; the joint map */
                     joints * (sizeof(uint32_t) + sizeof(int32_t) + 6 * sizeof(double) * (1 + json_array_size(targets))) +
                     /* the vertex kernel's runs */
                     count + (count / SK_GEOM_RUN_BLOCK + 1) * SK_GEOM_RUN_CLASSES * sizeof(uint16_t);
      /* the triangles' indices, read as floats then kept as uint32 */
      size_t ia;
      const uint64_t nidx = index_of(json_object_get(json_array_get(prims, p), "indices"), &ia) ? acc_count(root, ia) : 0;
      add += nidx * sizeof(uint32_t);
      total += add;
      if (count * 4 * sizeof(float) > peak)
        peak = count * 4 * sizeof(float);
      if (nidx * sizeof(float) > peak)
        peak = nidx * sizeof(float);
      if (limit != 0 && base + total + peak > limit) {
        char ptr[SK_ERROR_POINTER_MAX];
        snprintf(ptr, sizeof ptr, "/accessors/%zu/count", acc);
        rc = sk_error_set(err, SK_ETOOBIG, ptr,
                          "the skeleton, its clips and its skinned mesh would take about %llu bytes in memory; "
                          "the limit is %zu (--max-skeleton-mb)",
                          (unsigned long long)(base + total + peak), limit);
      }
    }
  }
  /* the "weights" channels kept: per key a double frame (two pads) and the
   * output values, the largest input and output read at once */
  const json_t *anims = json_object_get(root, "animations");
  for (size_t a = 0; !rc && n > 0 && a < json_array_size(anims); a++) {
    const json_t *an = json_array_get(anims, a), *chs = json_object_get(an, "channels");
    for (size_t c = 0; !rc && c < json_array_size(chs); c++) {
      const json_t *target = json_object_get(json_array_get(chs, c), "target");
      const char *path = json_string_value(json_object_get(target, "path"));
      size_t node, smp, in, out;
      bool ours = false;
      for (size_t k = 0; k < n && !ours; k++)
        ours = index_of(json_object_get(target, "node"), &node) && node == u[k].node;
      const json_t *sj = index_of(json_object_get(json_array_get(chs, c), "sampler"), &smp)
                             ? json_array_get(json_object_get(an, "samplers"), smp)
                             : NULL;
      if (path == NULL || strcmp(path, "weights") != 0 || !ours || !index_of(json_object_get(sj, "input"), &in) ||
          !index_of(json_object_get(sj, "output"), &out))
        continue;
      const uint64_t keys = acc_count(root, in) + 2, vals = acc_count(root, out);
      total += sizeof(sk_geom_weights) + keys * sizeof(double) + vals * sizeof(float) * 2;
      if ((keys + vals) * sizeof(float) > peak)
        peak = (keys + vals) * sizeof(float);
      if (limit != 0 && base + total + peak > limit) {
        char ptr[SK_ERROR_POINTER_MAX];
        snprintf(ptr, sizeof ptr, "/accessors/%zu/count", out);
        rc = sk_error_set(err, SK_ETOOBIG, ptr,
                          "the skeleton, its clips and its skinned mesh would take about %llu bytes in memory; "
                          "the limit is %zu (--max-skeleton-mb)",
                          (unsigned long long)(base + total + peak), limit);
      }
    }
  }
  free(u);
  total += peak;
  *bytes = total > SIZE_MAX ? SIZE_MAX : (size_t)total;
  return rc;
}

/* ---- building ------------------------------------------------------------- */

static void prim_free(sk_geom_prim *p) {
  free(p->pos);
  free(p->nrm);
  free(p->joints);
  free(p->weights);
  for (uint32_t t = 0; p->targets != NULL && t < p->ntargets; t++) {
    free(p->targets[t].pos);
    free(p->targets[t].nrm);
  }
  free(p->targets);
  free(p->influence);
  free(p->box_joint);
  free(p->boxes);
  free(p->dboxes);
  free(p->tris);
  free(p->order);
  free(p->runs);
}

static void geom_free(sk_geom *geom) {
  for (uint32_t i = 0; i < geom->nprims; i++)
    prim_free(&geom->prims[i]);
  free(geom->prims);
  for (uint32_t i = 0; i < geom->nweights; i++) {
    free(geom->weights[i].frames);
    free(geom->weights[i].values);
  }
  free(geom->weights);
  free(geom);
}

sk_geom *sk_geom_ref(sk_geom *geom) {
  if (geom != NULL)
    __atomic_add_fetch(&geom->refs, 1, __ATOMIC_RELAXED);
  return geom;
}

void sk_geom_unref(sk_geom *geom) {
  if (geom != NULL && __atomic_sub_fetch(&geom->refs, 1, __ATOMIC_ACQ_REL) == 0)
    geom_free(geom);
}

/* Reads accessor `acc` (attribute `name` of the primitive at `pptr`) as
 * floats of type `type` with `count` elements (0: any), each finite. */
static int read_attr(sk_gltf *g, size_t acc, const char *type, uint64_t count, float **out, size_t *n,
                     sk_error *err) {
  char ptr[SK_ERROR_POINTER_MAX];
  const json_t *a = item(sk_gltf_json(g), "accessors", acc);
  const char *t = json_string_value(json_object_get(a, "type"));
  if (a != NULL && (t == NULL || strcmp(t, type) != 0)) {
    snprintf(ptr, sizeof ptr, "/accessors/%zu/type", acc);
    return FAIL(ptr, "expected \"%s\" for this attribute", type);
  }
  size_t ncomp;
  int rc = sk_gltf_read_accessor(g, acc, out, n, &ncomp, err);
  if (rc)
    return rc;
  if (count != 0 && *n != count) {
    snprintf(ptr, sizeof ptr, "/accessors/%zu/count", acc);
    free(*out);
    *out = NULL;
    return FAIL(ptr, "expected %llu (the POSITION count of the primitive)", (unsigned long long)count);
  }
  for (size_t i = 0; i < *n * ncomp; i++)
    if (!isfinite((*out)[i])) {
      snprintf(ptr, sizeof ptr, "/accessors/%zu", acc);
      free(*out);
      *out = NULL;
      return sk_error_set(err, SK_EFORMAT, ptr, "element %zu holds a non-finite value", i / ncomp);
    }
  return 0;
}

/* JOINTS_k/WEIGHTS_k (accessors ja, wa) into lanes [lane, lane + 4) of
 * the primitive's influences. */
static int read_influences(sk_gltf *g, sk_geom_prim *p, size_t ja, size_t wa, unsigned lane, size_t joints,
                           sk_error *err) {
  float *j = NULL, *w = NULL;
  size_t n;
  int rc = read_attr(g, ja, "VEC4", p->count, &j, &n, err);
  if (!rc)
    rc = read_attr(g, wa, "VEC4", p->count, &w, &n, err);
  for (size_t v = 0; !rc && v < p->count; v++)
    for (unsigned k = 0; !rc && k < 4; k++) {
      const float jf = j[4 * v + k], wf = w[4 * v + k];
      const size_t at = (size_t)v * p->influences + lane + k;
      p->weights[at] = wf;
      p->joints[at] = 0;
      if (!(wf > 0)) /* Babylon skips the influence: its joint is never read */
        continue;
      if (jf < 0 || jf != floorf(jf) || jf >= (float)joints) {
        char ptr[SK_ERROR_POINTER_MAX];
        snprintf(ptr, sizeof ptr, "/accessors/%zu", ja);
        rc = FAIL(ptr, "vertex %zu: joint %g with weight %g is not one of the skin's %zu joints", v, (double)jf,
                  (double)wf, joints);
      } else {
        p->joints[at] = (uint32_t)jf;
      }
    }
  free(j);
  free(w);
  return rc;
}

/* Morph targets of primitive `pj` (at `pptr`) on its loaded positions and
 * normals; default influences from `node`, else `mesh`. */
static int read_targets(sk_gltf *g, sk_geom_prim *p, const json_t *pj, const json_t *node, const json_t *mesh,
                        const char pptr[64], sk_error *err) {
  const json_t *targets = json_object_get(pj, "targets");
  char ptr[96];
  if (json_array_size(targets) > SK_GEOM_MAX_TARGETS) {
    snprintf(ptr, sizeof ptr, "%s/targets", pptr);
    return sk_error_set(err, SK_ETOOBIG, ptr, "at most %d morph targets per primitive", SK_GEOM_MAX_TARGETS);
  }
  p->ntargets = (uint32_t)json_array_size(targets);
  if (p->ntargets == 0)
    return 0;
  p->targets = calloc(p->ntargets, sizeof *p->targets);
  p->influence = calloc(p->ntargets, sizeof *p->influence);
  if (p->targets == NULL || p->influence == NULL)
    return sk_error_set(err, SK_ENOMEM, pptr, "out of memory");
  const json_t *weights = json_object_get(node, "weights");
  if (weights == NULL)
    weights = json_object_get(mesh, "weights");
  int rc = 0;
  for (uint32_t t = 0; !rc && t < p->ntargets; t++) {
    const json_t *tj = json_array_get(targets, t), *wv = json_array_get(weights, t);
    p->influence[t] = json_is_number(wv) ? json_number_value(wv) : 0;
    const char *names[2] = {"POSITION", "NORMAL"};
    float *base[2] = {p->pos, p->nrm}, **dest[2] = {&p->targets[t].pos, &p->targets[t].nrm};
    for (int k = 0; !rc && k < 2; k++) {
      size_t acc, n;
      /* the loader sets a target attribute only where the mesh has it */
      if (!attribute(tj, names[k], &acc) || base[k] == NULL)
        continue;
      if ((rc = read_attr(g, acc, "VEC3", p->count, dest[k], &n, err)) != 0)
        break;
      for (size_t i = 0; i < (size_t)p->count * 3; i++)
        (*dest[k])[i] = (*dest[k])[i] + base[k][i]; /* float32 + float32, rounded once: the loader's sum */
    }
  }
  return rc;
}

static void box_grow(double *box, const double *v) {
  for (int a = 0; a < 3; a++) {
    if (v[a] < box[a])
      box[a] = v[a];
    if (v[a] > box[3 + a])
      box[3 + a] = v[a];
  }
}

/* Vertex v into box k: its base position and its targets' deltas. */
static void box_add(sk_geom_prim *p, uint32_t k, size_t v) {
  const double b[3] = {p->pos[3 * v], p->pos[3 * v + 1], p->pos[3 * v + 2]};
  box_grow(p->boxes + 6 * (size_t)k, b);
  for (uint32_t t = 0; t < p->ntargets; t++) {
    const float *tp = p->targets[t].pos;
    double d[3] = {0, 0, 0};
    for (int a = 0; tp != NULL && a < 3; a++)
      d[a] = (double)tp[3 * v + a] - b[a];
    box_grow(p->dboxes + 6 * ((size_t)k * p->ntargets + t), d);
  }
}

/* The per-joint boxes of the conservative bounds (sk_geom_prim.nboxes). */
static int build_boxes(sk_geom_prim *p, size_t joints, sk_error *err) {
  int32_t *slot = malloc((joints + 1) * sizeof *slot);
  const size_t most = p->influences > 0 ? joints : 1;
  p->box_joint = calloc(most + 1, sizeof *p->box_joint);
  p->boxes = malloc((most + 1) * 6 * sizeof *p->boxes);
  p->dboxes = p->ntargets > 0 ? malloc((most + 1) * p->ntargets * 6 * sizeof *p->dboxes) : NULL;
  if (slot == NULL || p->box_joint == NULL || p->boxes == NULL || (p->ntargets > 0 && p->dboxes == NULL)) {
    free(slot);
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  }
  for (size_t j = 0; j <= joints; j++)
    slot[j] = -1;
  for (size_t k = 0; k < (most + 1) * 6; k++)
    p->boxes[k] = k % 6 < 3 ? INFINITY : -INFINITY;
  for (size_t k = 0; p->dboxes != NULL && k < (most + 1) * p->ntargets * 6; k++)
    p->dboxes[k] = k % 6 < 3 ? INFINITY : -INFINITY;
  for (size_t v = 0; v < p->count; v++) {
    if (p->influences == 0) {
      p->nboxes = 1;
      box_add(p, 0, v);
      continue;
    }
    for (unsigned i = 0; i < p->influences; i++) {
      const size_t at = v * p->influences + i;
      if (!(p->weights[at] > 0))
        continue;
      const uint32_t j = p->joints[at];
      if (slot[j] < 0) {
        slot[j] = (int32_t)p->nboxes;
        p->box_joint[p->nboxes++] = j;
      }
      box_add(p, (uint32_t)slot[j], v);
    }
  }
  free(slot);
  return 0;
}

/* The primitive's triangles for ray hits (sk_geom_prim.ntris). */
static int read_triangles(sk_gltf *g, sk_geom_prim *p, const json_t *pj, const char pptr[64], sk_error *err) {
  char ptr[SK_ERROR_POINTER_MAX];
  const json_t *mode = json_object_get(pj, "mode"), *ij = json_object_get(pj, "indices");
  p->indices_accessor = UINT32_MAX;
  if (mode != NULL && !(json_is_integer(mode) && json_integer_value(mode) == 4))
    return 0; /* not TRIANGLES: no triangle to hit */
  size_t acc;
  if (ij == NULL) {
    p->ntris = p->count / 3;
    return 0;
  }
  if (!index_of(ij, &acc) || acc > UINT32_MAX) {
    snprintf(ptr, sizeof ptr, "%s/indices", pptr);
    return FAIL(ptr, "expected an accessor index");
  }
  const json_t *a = item(sk_gltf_json(g), "accessors", acc), *ct = json_object_get(a, "componentType");
  const char *type = json_string_value(json_object_get(a, "type"));
  if (a != NULL && (type == NULL || strcmp(type, "SCALAR") != 0)) {
    snprintf(ptr, sizeof ptr, "/accessors/%zu/type", acc);
    return FAIL(ptr, "expected \"SCALAR\" for indices");
  }
  if (a != NULL && !(json_is_integer(ct) && (json_integer_value(ct) == 5121 || json_integer_value(ct) == 5123 ||
                                             json_integer_value(ct) == 5125))) {
    snprintf(ptr, sizeof ptr, "/accessors/%zu/componentType", acc);
    return FAIL(ptr, "indices are UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT (5121, 5123, 5125)");
  }
  float *v = NULL;
  size_t n, nc;
  int rc = sk_gltf_read_accessor(g, acc, &v, &n, &nc, err);
  if (rc)
    return rc;
  p->indices_accessor = (uint32_t)acc;
  p->ntris = (uint32_t)(n / 3);
  p->tris = malloc(((size_t)p->ntris * 3 + 1) * sizeof *p->tris);
  if (p->tris == NULL)
    rc = sk_error_set(err, SK_ENOMEM, pptr, "out of memory");
  /* integer components read as floats are exact below 2^24; a larger one
   * is above any vertex count an accessor can hold (SK_GLTF_MAX_FLOATS) */
  for (size_t i = 0; !rc && i < (size_t)p->ntris * 3; i++) {
    if (!(v[i] < (float)p->count)) {
      snprintf(ptr, sizeof ptr, "/accessors/%zu", acc);
      rc = FAIL(ptr, "index %zu is %.0f, not below the primitive's %u vertices", i, (double)v[i], p->count);
    } else {
      p->tris[i] = (uint32_t)v[i];
    }
  }
  free(v);
  return rc;
}

/* Vertex v's class (sk_geom_prim.order). */
static unsigned run_class(const sk_geom_prim *p, size_t v) {
  const float *w = p->weights + v * p->influences;
  unsigned c = 0;
  while (c < p->influences && w[c] > 0)
    c++;
  for (unsigned k = c; k < p->influences; k++)
    if (w[k] > 0)
      return 0;
  return c;
}

int sk_geom_prim_runs(sk_geom_prim *p) {
  if (p->influences == 0 || p->influences > SK_GEOM_RUN_CLASSES - 1)
    return 0;
  const size_t blocks = ((size_t)p->count + SK_GEOM_RUN_BLOCK - 1) / SK_GEOM_RUN_BLOCK;
  uint8_t *order = malloc((size_t)p->count + 1);
  uint16_t *runs = calloc(blocks * SK_GEOM_RUN_CLASSES + 1, sizeof *runs);
  if (order == NULL || runs == NULL) {
    free(order);
    free(runs);
    return SK_ENOMEM;
  }
  for (size_t b = 0; b < blocks; b++) {
    const size_t v0 = b * SK_GEOM_RUN_BLOCK, n = p->count - v0 < SK_GEOM_RUN_BLOCK ? p->count - v0 : SK_GEOM_RUN_BLOCK;
    uint16_t *r = runs + b * SK_GEOM_RUN_CLASSES, at[SK_GEOM_RUN_CLASSES];
    uint8_t cls[SK_GEOM_RUN_BLOCK];
    for (size_t i = 0; i < n; i++)
      r[cls[i] = (uint8_t)run_class(p, v0 + i)]++;
    at[0] = 0;
    for (unsigned c = 1; c < SK_GEOM_RUN_CLASSES; c++)
      at[c] = at[c - 1] + r[c - 1];
    for (size_t i = 0; i < n; i++) /* a counting sort: stable */
      order[v0 + at[cls[i]]++] = (uint8_t)i;
  }
  p->order = order;
  p->runs = runs;
  return 0;
}

static int read_prim(sk_gltf *g, sk_geom_prim *p, const json_t *pj, const json_t *node, const json_t *mesh,
                     size_t joints, sk_error *err) {
  char pptr[64], ptr[SK_ERROR_POINTER_MAX]; /* two u32 indices: 36 bytes at most */
  snprintf(pptr, sizeof pptr, "/meshes/%u/primitives/%u", p->mesh, p->prim);
  const json_t *attrs = json_object_get(pj, "attributes");
  size_t acc, j0, w0, j1 = 0, w1 = 0, n;
  if (!attribute(attrs, "POSITION", &acc)) {
    snprintf(ptr, sizeof ptr, "%s/attributes", pptr);
    return sk_error_set(err, SK_EFORMAT, ptr, "a skinned primitive needs POSITION");
  }
  int rc = read_attr(g, acc, "VEC3", 0, &p->pos, &n, err);
  if (rc)
    return rc;
  if (n > UINT32_MAX)
    return sk_error_set(err, SK_ETOOBIG, pptr, "too many vertices");
  p->count = (uint32_t)n;
  if (attribute(attrs, "NORMAL", &acc) && (rc = read_attr(g, acc, "VEC3", p->count, &p->nrm, &n, err)) != 0)
    return rc;
  if (attribute(attrs, "JOINTS_0", &j0) && attribute(attrs, "WEIGHTS_0", &w0)) {
    const bool extra = attribute(attrs, "JOINTS_1", &j1) && attribute(attrs, "WEIGHTS_1", &w1);
    p->influences = extra ? 8 : 4;
    p->joints = calloc((size_t)p->count * p->influences + 1, sizeof *p->joints);
    p->weights = calloc((size_t)p->count * p->influences + 1, sizeof *p->weights);
    if (p->joints == NULL || p->weights == NULL)
      return sk_error_set(err, SK_ENOMEM, pptr, "out of memory");
    rc = read_influences(g, p, j0, w0, 0, joints, err);
    if (!rc && extra)
      rc = read_influences(g, p, j1, w1, 4, joints, err);
    if (rc)
      return rc;
    p->weights_accessor = (uint32_t)w0;
    for (size_t v = 0; v < p->count && p->unweighted < 0; v++) {
      bool any = false;
      for (unsigned k = 0; k < p->influences; k++)
        any = any || p->weights[v * p->influences + k] > 0;
      if (!any)
        p->unweighted = (int64_t)v;
    }
    if (p->unweighted >= 0) {
      snprintf(ptr, sizeof ptr, "/accessors/%zu", w0);
      return FAIL(ptr, "vertex %lld has no weight above 0: Babylon skins it by a zero matrix, to NaN",
                  (long long)p->unweighted);
    }
  }
  rc = read_targets(g, p, pj, node, mesh, pptr, err);
  if (!rc)
    rc = build_boxes(p, joints, err);
  if (!rc && sk_geom_prim_runs(p) != 0)
    rc = sk_error_set(err, SK_ENOMEM, pptr, "out of memory");
  return rc ? rc : read_triangles(g, p, pj, pptr, err);
}

static size_t prim_bytes(const sk_geom_prim *p) {
  size_t v = p->count, b = sizeof *p + v * 3 * sizeof(float) * (1 + (p->nrm != NULL));
  b += v * p->influences * (sizeof(uint32_t) + sizeof(float));
  for (uint32_t t = 0; t < p->ntargets; t++)
    b += sizeof(sk_geom_target) + sizeof(double) + v * 3 * sizeof(float) * ((p->targets[t].pos != NULL) + (p->targets[t].nrm != NULL));
  b += p->tris != NULL ? (size_t)p->ntris * 3 * sizeof(uint32_t) : 0;
  if (p->order != NULL)
    b += v + ((v + SK_GEOM_RUN_BLOCK - 1) / SK_GEOM_RUN_BLOCK) * SK_GEOM_RUN_CLASSES * sizeof(uint16_t);
  return b + (size_t)(p->nboxes + 1) * (sizeof(uint32_t) + 6 * sizeof(double) * (1 + p->ntargets));
}

/* Appends the primitives of use `u` to `geom`. */
static int add_mesh(sk_gltf *g, sk_geom *geom, const mesh_use *u, size_t joints, sk_error *err) {
  const json_t *root = sk_gltf_json(g);
  const json_t *mesh = item(root, "meshes", u->mesh), *node = item(root, "nodes", u->node);
  const json_t *prims = json_object_get(mesh, "primitives");
  const size_t np = json_array_size(prims);
  if (geom->nprims + np > SK_GEOM_MAX_PRIMS) {
    char ptr[SK_ERROR_POINTER_MAX];
    snprintf(ptr, sizeof ptr, "/meshes/%zu/primitives", u->mesh);
    return sk_error_set(err, SK_ETOOBIG, ptr, "the skin's meshes have more than %d primitives", SK_GEOM_MAX_PRIMS);
  }
  sk_geom_prim *grown = realloc(geom->prims, (geom->nprims + np) * sizeof *grown);
  if (grown == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  geom->prims = grown;
  int rc = 0;
  for (size_t k = 0; !rc && k < np; k++) {
    sk_geom_prim *p = &geom->prims[geom->nprims++];
    memset(p, 0, sizeof *p);
    p->unweighted = -1;
    p->mesh = (uint32_t)u->mesh;
    p->prim = (uint32_t)k;
    rc = read_prim(g, p, json_array_get(prims, k), node, mesh, joints, err);
    if (!rc && k > 0 && p->ntargets != geom->prims[geom->nprims - 1 - k].ntargets) {
      char ptr[SK_ERROR_POINTER_MAX];
      snprintf(ptr, sizeof ptr, "/meshes/%zu/primitives/%zu/targets", u->mesh, k);
      rc = FAIL(ptr, "expected %u targets, as primitive 0 of the mesh has", geom->prims[geom->nprims - 1 - k].ntargets);
    }
    if (!rc) {
      geom->vertices += p->count;
      geom->bytes += prim_bytes(p);
      if (p->ntargets > geom->max_targets)
        geom->max_targets = p->ntargets;
    }
  }
  return rc;
}

/* ---- morph weight channels ----------------------------------------------- */

/* A sampler's key times (new; free), or NULL. */
static float *sampler_times(sk_gltf *g, const json_t *smp, size_t *n, sk_error *err) {
  size_t acc, nc;
  float *t = NULL;
  if (!index_of(json_object_get(smp, "input"), &acc) || sk_gltf_read_accessor(g, acc, &t, n, &nc, err) != 0)
    return NULL;
  if (nc != 1 || *n == 0) {
    free(t);
    return NULL;
  }
  return t;
}

/* The frame animation `an`'s group ends on: its channels' last keys (the
 * ones on nodes, any of the four paths), x 60, as sk_gltf's clips. */
static double anim_end(sk_gltf *g, const json_t *an, sk_error *err) {
  const json_t *chs = json_object_get(an, "channels"), *smps = json_object_get(an, "samplers");
  double end = 0;
  for (size_t c = 0; c < json_array_size(chs); c++) {
    const json_t *ch = json_array_get(chs, c), *target = json_object_get(ch, "target");
    const char *path = json_string_value(json_object_get(target, "path"));
    size_t s, n;
    if (path == NULL || json_object_get(target, "node") == NULL || !index_of(json_object_get(ch, "sampler"), &s) ||
        (strcmp(path, "translation") && strcmp(path, "rotation") && strcmp(path, "scale") && strcmp(path, "weights")))
      continue;
    float *t = sampler_times(g, json_array_get(smps, s), &n, err);
    if (t != NULL && (double)t[n - 1] * SK_ANIM_FPS > end)
      end = (double)t[n - 1] * SK_ANIM_FPS;
    free(t);
  }
  return end;
}

/* Channel `ch` of animation `a` (ending at `end`) on mesh `mesh` with
 * `ntargets` targets into *w. */
static int read_weights(sk_gltf *g, size_t a, const json_t *an, const json_t *ch, double end, uint32_t mesh,
                        uint32_t ntargets, sk_geom_weights *w, sk_error *err) {
  const json_t *smp = json_array_get(json_object_get(an, "samplers"), (size_t)json_integer_value(json_object_get(ch, "sampler")));
  const char *ip = json_string_value(json_object_get(smp, "interpolation"));
  w->interp = ip == NULL || strcmp(ip, "LINEAR") == 0 ? SK_ANIM_LINEAR
              : strcmp(ip, "STEP") == 0              ? SK_ANIM_STEP
                                                     : SK_ANIM_CUBICSPLINE;
  w->clip = (uint32_t)a;
  w->mesh = mesh;
  w->ntargets = ntargets;
  size_t nt, nv, nc, acc;
  float *times = sampler_times(g, smp, &nt, err), *vals = NULL;
  char ptr[SK_ERROR_POINTER_MAX];
  if (times == NULL)
    return err != NULL && err->code ? err->code : FAIL("/animations", "a weights channel without key times");
  if (!index_of(json_object_get(smp, "output"), &acc) || sk_gltf_read_accessor(g, acc, &vals, &nv, &nc, err) != 0) {
    free(times);
    return err != NULL && err->code ? err->code : FAIL("/animations", "a weights channel without values");
  }
  const size_t per = (w->interp == SK_ANIM_CUBICSPLINE ? 3 : 1) * (size_t)ntargets;
  int rc = 0;
  snprintf(ptr, sizeof ptr, "/accessors/%zu", acc);
  if (nv * nc != nt * per)
    rc = FAIL(ptr, "%zu values for %zu keys of %u morph targets; expected %zu", nv * nc, nt, ntargets, nt * per);
  for (size_t i = 0; !rc && i < nv * nc; i++)
    if (!isfinite(vals[i]))
      rc = FAIL(ptr, "value %zu is not finite", i);
  const size_t pre = times[0] * SK_ANIM_FPS > 0, post = (double)times[nt - 1] * SK_ANIM_FPS < end;
  w->count = nt + pre + post;
  if (!rc && ((w->frames = malloc(w->count * sizeof *w->frames)) == NULL ||
              (w->values = malloc(w->count * per * sizeof *w->values)) == NULL))
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  if (!rc) { /* padded as AnimationGroup.normalize(0) pads (sk_gltf's pad_keys) */
    if (pre) {
      w->frames[0] = 0;
      memcpy(w->values, vals, per * sizeof *vals);
    }
    for (size_t i = 0; i < nt; i++)
      w->frames[pre + i] = (double)times[i] * SK_ANIM_FPS;
    memcpy(w->values + pre * per, vals, nt * per * sizeof *vals);
    if (post) {
      w->frames[w->count - 1] = end;
      memcpy(w->values + (w->count - 1) * per, vals + (nt - 1) * per, per * sizeof *vals);
    }
  }
  free(times);
  free(vals);
  return rc;
}

/* Every "weights" channel on node `use->node` (whose mesh has `ntargets`
 * targets: Babylon ignores the channel without targets). */
static int add_weights(sk_gltf *g, sk_geom *geom, const mesh_use *use, uint32_t ntargets, sk_error *err) {
  const json_t *anims = json_object_get(sk_gltf_json(g), "animations");
  int rc = 0;
  for (size_t a = 0; !rc && ntargets > 0 && a < json_array_size(anims); a++) {
    const json_t *an = json_array_get(anims, a), *chs = json_object_get(an, "channels");
    double end = -1;
    for (size_t c = 0; !rc && c < json_array_size(chs); c++) {
      const json_t *ch = json_array_get(chs, c), *target = json_object_get(ch, "target");
      const char *path = json_string_value(json_object_get(target, "path"));
      size_t node;
      if (path == NULL || strcmp(path, "weights") != 0 || !index_of(json_object_get(target, "node"), &node) ||
          node != use->node)
        continue;
      if (end < 0)
        end = anim_end(g, an, err);
      sk_geom_weights *grown = realloc(geom->weights, (geom->nweights + 1) * sizeof *grown);
      if (grown == NULL)
        return sk_error_set(err, SK_ENOMEM, "", "out of memory");
      geom->weights = grown;
      sk_geom_weights *w = &geom->weights[geom->nweights++];
      memset(w, 0, sizeof *w);
      rc = read_weights(g, a, an, ch, end, (uint32_t)use->mesh, ntargets, w, err);
      if (!rc)
        geom->bytes += sizeof *w + w->count * (sizeof(double) + (w->interp == SK_ANIM_CUBICSPLINE ? 3 : 1) *
                                                                      (size_t)ntargets * sizeof(float));
    }
  }
  return rc;
}

int sk_geom_build(sk_gltf *g, size_t skin, sk_geom **out, sk_error *err) {
  *out = NULL;
  const json_t *root = sk_gltf_json(g);
  const size_t joints = json_array_size(json_object_get(item(root, "skins", skin), "joints"));
  mesh_use *u;
  size_t n;
  if (mesh_uses(root, skin, &u, &n) != 0)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  if (n == 0) {
    free(u);
    return 0;
  }
  sk_geom *geom = calloc(1, sizeof *geom);
  int rc = geom == NULL ? sk_error_set(err, SK_ENOMEM, "", "out of memory") : 0;
  if (geom != NULL)
    geom->bytes = sizeof *geom;
  for (size_t k = 0; !rc && k < n; k++) {
    const uint32_t first = geom->nprims;
    rc = add_mesh(g, geom, &u[k], joints, err);
    if (!rc && geom->nprims > first)
      rc = add_weights(g, geom, &u[k], geom->prims[first].ntargets, err);
  }
  free(u);
  if (rc) {
    if (geom != NULL)
      geom_free(geom);
    return rc;
  }
  geom->refs = 1;
  *out = geom;
  return 0;
}

uint64_t sk_geom_f32_floats(const sk_geom *geom, unsigned outputs) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < geom->nprims; i++) {
    const sk_geom_prim *p = &geom->prims[i];
    if (outputs & SK_OUT_VERTICES)
      n += (uint64_t)p->count * 3 * (1 + ((outputs & SK_OUT_NORMALS) && p->nrm != NULL));
    n += 6 * (((outputs & SK_OUT_BOUNDS) != 0) + ((outputs & SK_OUT_BOUNDS_CONSERVATIVE) != 0));
    /* morph weights once a mesh, as the JSON items */
    if ((outputs & SK_OUT_MORPH_WEIGHTS) && p->ntargets > 0 && (i == 0 || geom->prims[i - 1].mesh != p->mesh))
      n += p->ntargets;
  }
  return n;
}
