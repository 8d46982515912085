/* sk_gltf_mesh: the skinned mesh's default TransformNode chain and the
 * skins list of a glTF file (see sk_gltf_mesh.h for Babylon's rules). */
#include "sk_gltf_mesh.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_gltf_int.h"
#include "sk_mat.h"
#include "sk_ops.h"

/* One Babylon node of the chain: its own TRS. */
typedef struct {
  double p[3], r[4], s[3];
  bool euler; /* a Mesh/TransformNode whose rotationQuaternion stayed null */
} cnode;

typedef struct {
  const sk_gltf *g;
  const json_t *nodes;
  cnode n[SK_MESH_MAX_DEPTH + 1];
  size_t count;
  bool bad; /* too deep (a parent cycle through skinned meshes ends here too) or unreadable */
} chain;

/* `node.x != undefined` in the loader: JSON null counts as absent. */
static bool present(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  return v != NULL && !json_is_null(v);
}

static bool push(chain *c, const cnode *x) {
  if (c->bad || c->count >= SK_MESH_MAX_DEPTH) {
    c->bad = true;
    return false;
  }
  c->n[c->count++] = *x;
  return true;
}

static const cnode k_identity = {{0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}, true};

/* The loader's `__root__`: _LoadTransform of rotation [0,1,0,0], scale [1,1,-1]. */
static void push_root(chain *c) {
  const cnode root = {{0, 0, 0}, {0, 1, 0, 0}, {1, 1, -1}, false};
  push(c, &root);
}

/* _LoadTransform(node): its TRS (a matrix decomposed from float32, as
 * Matrix.FromArray + decompose), nothing for a skinned node; then the
 * camera handedness fix of loadNode. */
static bool node_trs(const chain *c, size_t i, cnode *x) {
  const json_t *nd = json_array_get(c->nodes, i);
  *x = k_identity;
  if (!present(nd, "skin")) {
    double m[16];
    bool ht, hr, hs, hm;
    if (sk_gltf__get_numbers(nd, "translation", "", 3, x->p, &ht, NULL) ||
        sk_gltf__get_numbers(nd, "rotation", "", 4, x->r, &hr, NULL) ||
        sk_gltf__get_numbers(nd, "scale", "", 3, x->s, &hs, NULL) ||
        sk_gltf__get_numbers(nd, "matrix", "", 16, m, &hm, NULL))
      return false;
    if (hm) {
      float mf[16];
      for (int k = 0; k < 16; k++)
        mf[k] = (float)m[k];
      sk_mat_decompose(mf, x->s, x->r, x->p);
    }
    x->euler = false;
    for (int k = 0; k < 4; k++) /* a float32 overflow in a decomposed matrix: no usable chain */
      if (!isfinite(x->r[k]) || (k < 3 && (!isfinite(x->p[k]) || !isfinite(x->s[k]))))
        return false;
  }
  if (present(nd, "camera"))
    x->s[0] = -1;
  return true;
}

static bool skinned_mesh_node(const chain *c, int32_t i) {
  const json_t *nd = json_array_get(c->nodes, (size_t)i);
  return present(nd, "skin") && present(nd, "mesh");
}

static void babylon_node(chain *c, int32_t i);

/* The Babylon node that glTF node `i`'s children are parented to, and up:
 * the node's own TransformNode/Mesh, or for a skinned mesh node the
 * `_babylonTransformNodeForSkin` that loadNode ran on (identity). */
static void child_parent(chain *c, int32_t i) {
  while (!c->bad) {
    if (i < 0) {
      push_root(c);
      return;
    }
    cnode x;
    if (!node_trs(c, (size_t)i, &x)) {
      c->bad = true;
      return;
    }
    push(c, &x);
    i = c->g->parent[i];
  }
}

/* The skinned mesh of node `m` and what the loader parents it to. */
static void skinned_mesh(chain *c, int32_t m) {
  const json_t *nd = json_array_get(c->nodes, (size_t)m);
  const json_t *mesh = json_array_get(json_object_get(c->g->root, "meshes"),
                                      (size_t)json_integer_value(json_object_get(nd, "mesh")));
  /* Every step pushes before it recurses, so a parent cycle through
   * skinned meshes (the loader would make one) ends at the depth bound. */
  if (!push(c, &k_identity))
    return;
  if (json_array_size(json_object_get(mesh, "primitives")) > 1 && !push(c, &k_identity))
    return; /* primitive 0's parent: the node's TransformNode */
  json_int_t skin = json_integer_value(json_object_get(nd, "skin"));
  int32_t root = skin >= 0 && (size_t)skin < sk_gltf_skin_count(c->g) ? sk_gltf__skin_root(c->g, (size_t)skin) : -2;
  if (root == -2) {
    c->bad = true;
    return;
  }
  if (root < 0) {
    push_root(c);
    return;
  }
  int32_t pn = c->g->parent[root];
  if (pn == m)
    child_parent(c, c->g->parent[m]); /* the ForSkin node's parent */
  else
    babylon_node(c, pn);
}

/* `node._babylonTransformNode` (the loader's root for -1). */
static void babylon_node(chain *c, int32_t i) {
  if (i >= 0 && skinned_mesh_node(c, i))
    skinned_mesh(c, i);
  else
    child_parent(c, i);
}

/* Nodes the loader loads: the scene's roots and everything below them. */
static uint8_t *loaded_nodes(const sk_gltf *g) {
  const size_t n = g->node_count;
  uint8_t *state = calloc(n ? n : 1, 1); /* 0 unknown, 1 no, 2 yes */
  int32_t *stack = malloc((n ? n : 1) * sizeof *stack);
  if (state == NULL || stack == NULL) {
    free(state);
    free(stack);
    return NULL;
  }
  const json_t *scenes = json_object_get(g->root, "scenes");
  const json_t *sel = json_object_get(g->root, "scene");
  const json_t *scene = json_is_integer(sel) ? json_array_get(scenes, (size_t)json_integer_value(sel))
                                             : json_array_get(scenes, 0);
  const json_t *roots = json_object_get(scene, "nodes");
  for (size_t k = 0; k < json_array_size(roots); k++) {
    json_int_t r = json_integer_value(json_array_get(roots, k));
    if (r >= 0 && (size_t)r < n)
      state[r] = 2;
  }
  for (size_t i = 0; i < n; i++) {
    size_t depth = 0;
    int32_t j = (int32_t)i;
    while (j >= 0 && state[j] == 0) {
      stack[depth++] = j;
      j = g->parent[j];
    }
    uint8_t v = j >= 0 ? state[j] : 1;
    while (depth > 0)
      state[stack[--depth]] = v;
  }
  free(stack);
  return state;
}

/* First node (index order) of the loaded scene whose mesh uses `skin`; -1. */
static int32_t first_mesh_of(const sk_gltf *g, const uint8_t *loaded, size_t skin) {
  const json_t *nodes = json_object_get(g->root, "nodes");
  for (size_t i = 0; i < g->node_count; i++) {
    const json_t *nd = json_array_get(nodes, i);
    const json_t *s = json_object_get(nd, "skin");
    if (loaded[i] == 2 && present(nd, "mesh") && json_is_integer(s) && json_integer_value(s) == (json_int_t)skin)
      return (int32_t)i;
  }
  return -1;
}

static json_t *vec_json(const double *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; a != NULL && i < n; i++)
    if (json_array_append_new(a, json_real(v[i])) != 0) {
      json_decref(a);
      return NULL;
    }
  return a;
}

/* The chain as nested mesh nodes, from the top (`__root__`) down. */
static json_t *chain_json(const chain *c) {
  json_t *parent = NULL;
  for (size_t k = c->count; k-- > 0;) {
    const cnode *x = &c->n[k];
    json_t *o = json_object();
    if (o == NULL) {
      json_decref(parent);
      return NULL;
    }
    if (json_object_set_new(o, "position", vec_json(x->p, 3)) ||
        json_object_set_new(o, x->euler ? "rotation" : "rotationQuaternion", vec_json(x->r, x->euler ? 3 : 4)) ||
        json_object_set_new(o, "scaling", vec_json(x->s, 3))) {
      json_decref(o);
      json_decref(parent);
      return NULL;
    }
    /* set_new steals `parent` on failure too */
    if (parent != NULL && json_object_set_new(o, "parent", parent)) {
      json_decref(o);
      return NULL;
    }
    parent = o;
  }
  return parent;
}

int sk_gltf_default_mesh(const sk_gltf *g, size_t skin, json_t **out) {
  *out = NULL;
  uint8_t *loaded = loaded_nodes(g);
  if (loaded == NULL)
    return SK_ENOMEM;
  int32_t m = first_mesh_of(g, loaded, skin);
  free(loaded);
  if (m < 0)
    return 0;
  chain *c = calloc(1, sizeof *c);
  if (c == NULL)
    return SK_ENOMEM;
  c->g = g;
  c->nodes = json_object_get(g->root, "nodes");
  skinned_mesh(c, m);
  int rc = 0;
  if (!c->bad && (*out = chain_json(c)) == NULL)
    rc = SK_ENOMEM;
  free(c);
  return rc;
}

int sk_gltf_skins_json(const sk_gltf *g, json_t **out) {
  *out = NULL;
  const json_t *skins = json_object_get(g->root, "skins"), *nodes = json_object_get(g->root, "nodes");
  size_t n = sk_gltf_skin_count(g);
  if (n > SK_GLTF_SKINS_LISTED)
    n = SK_GLTF_SKINS_LISTED;
  uint8_t *loaded = loaded_nodes(g);
  json_t *list = json_array();
  int rc = loaded == NULL || list == NULL ? SK_ENOMEM : 0;
  for (size_t i = 0; !rc && i < n; i++) {
    const json_t *sk = json_array_get(skins, i);
    const char *name = json_string_value(json_object_get(sk, "name"));
    json_t *o = json_pack("{s:I, s:o, s:I, s:[]}", "index", (json_int_t)i, "name",
                          name ? json_string(name) : json_null(), "joints",
                          (json_int_t)json_array_size(json_object_get(sk, "joints")), "meshes");
    if (o == NULL || json_array_append_new(list, o) != 0)
      rc = SK_ENOMEM;
  }
  /* One pass over the nodes, whatever the number of skins. */
  for (size_t k = 0; !rc && k < g->node_count; k++) {
    const json_t *nd = json_array_get(nodes, k);
    const json_t *s = json_object_get(nd, "skin");
    if (loaded[k] != 2 || !present(nd, "mesh") || !json_is_integer(s) || json_integer_value(s) < 0 ||
        (size_t)json_integer_value(s) >= n)
      continue;
    const char *nn = json_string_value(json_object_get(nd, "name"));
    char dflt[32];
    snprintf(dflt, sizeof dflt, "node%zu", k); /* Babylon's name for an unnamed node */
    json_t *meshes = json_object_get(json_array_get(list, (size_t)json_integer_value(s)), "meshes");
    if (json_array_append_new(meshes, json_string(nn != NULL && nn[0] ? nn : dflt)) != 0)
      rc = SK_ENOMEM;
  }
  free(loaded);
  if (rc) {
    json_decref(list);
    return rc;
  }
  *out = list;
  return 0;
}

void sk_gltf_extra_clear(sk_gltf_extra *x) {
  free(x->mesh_json);
  free(x->skins_json);
  sk_geom_unref(x->geom);
  memset(x, 0, sizeof *x);
}

int sk_gltf_extra_fill(const sk_gltf *g, size_t skin, bool want_skins, sk_gltf_extra *x) {
  memset(x, 0, sizeof *x);
  x->skin = skin;
  json_t *mesh = NULL, *skins = NULL;
  int rc = sk_gltf_default_mesh(g, skin, &mesh);
  if (!rc && mesh != NULL && (x->mesh_json = json_dumps(mesh, JSON_COMPACT)) == NULL)
    rc = SK_ENOMEM;
  if (!rc && want_skins && (rc = sk_gltf_skins_json(g, &skins)) == 0 &&
      (x->skins_json = json_dumps(skins, JSON_COMPACT)) == NULL)
    rc = SK_ENOMEM;
  json_decref(mesh);
  json_decref(skins);
  if (rc)
    sk_gltf_extra_clear(x);
  return rc;
}

/* The import, with each allocation step reserved in `budget` first (NULL:
 * not counted): the parse's bound, then the skin's estimate. Both are given
 * back before returning; the caller counts what it keeps. */
static int import_extra(sk_budget *budget, const void *data, size_t len, const char *skin_selector,
                        size_t max_bones, size_t max_bytes, size_t *estimate, bool want_skins,
                        sk_skeleton **skeleton, sk_anim **anim, sk_gltf_extra *extra, sk_error *err) {
  *skeleton = NULL;
  *anim = NULL;
  *estimate = 0;
  memset(extra, 0, sizeof *extra);
  size_t bound = budget != NULL ? sk_gltf_parse_bound(data, len) : 0, held = 0;
  if (sk_budget_reserve(budget, bound) != 0)
    return sk_error_set(err, SK_EBUSY, "",
                        "parsing this %zu-byte glTF takes up to %zu bytes, more than the memory budget "
                        "(--memory-mb) has now; retry later",
                        len, bound);
  sk_gltf *g;
  int rc = sk_gltf_parse(data, len, &g, err);
  if (rc) {
    sk_budget_release(budget, bound);
    return rc;
  }
  size_t skin;
  size_t geom_bytes = 0;
  if (!(rc = sk_gltf_find_skin(g, skin_selector, &skin, err)) &&
      !(rc = sk_gltf_estimate(g, skin, max_bytes, estimate, err)) &&
      !(rc = sk_geom_estimate(g, skin, *estimate, max_bytes, &geom_bytes, err))) {
    *estimate += geom_bytes;
    if (budget != NULL && sk_budget_reserve(budget, *estimate) != 0)
      rc = sk_error_set(err, SK_EBUSY, "",
                        "the skeleton (an estimated %zu bytes) does not fit in the memory budget (--memory-mb) now; "
                        "retry later",
                        *estimate);
    else
      held = budget != NULL ? *estimate : 0;
  }
  if (!rc && !(rc = sk_gltf_load_skin(g, skin, max_bones, skeleton, anim, err)) &&
      (rc = sk_gltf_extra_fill(g, skin, want_skins, extra)) != 0) {
    sk_error_set(err, rc, "", "out of memory");
  }
  if (!rc && *skeleton != NULL) {
    /* A read-back (budget given) keeps a record an earlier build accepted
     * whose geometry this one refuses: it answers without a mesh. */
    sk_error gerr = {0};
    rc = sk_geom_build(g, skin, &extra->geom, budget != NULL ? &gerr : err);
    if (rc && budget != NULL && rc != SK_ENOMEM)
      rc = 0;
    else if (rc)
      sk_gltf_extra_clear(extra);
  }
  if (rc && *skeleton != NULL) {
    sk_skeleton_destroy(*skeleton);
    sk_anim_destroy(*anim);
    *skeleton = NULL;
    *anim = NULL;
  }
  sk_gltf_destroy(g);
  sk_budget_release(budget, bound + held);
  return rc;
}

int sk_gltf_import_extra(const void *data, size_t len, const char *skin_selector, size_t max_bones,
                         size_t max_bytes, size_t *estimate, bool want_skins, sk_skeleton **skeleton,
                         sk_anim **anim, sk_gltf_extra *extra, sk_error *err) {
  return import_extra(NULL, data, len, skin_selector, max_bones, max_bytes, estimate, want_skins, skeleton, anim,
                      extra, err);
}

int sk_gltf_import_budgeted(sk_budget *budget, const void *data, size_t len, const char *skin_selector,
                            size_t max_bones, size_t max_bytes, size_t *estimate, bool want_skins,
                            sk_skeleton **skeleton, sk_anim **anim, sk_gltf_extra *extra, sk_error *err) {
  return import_extra(budget, data, len, skin_selector, max_bones, max_bytes, estimate, want_skins, skeleton, anim,
                      extra, err);
}

int sk_gltf_mesh_chain_above(const char *mesh_json, bool with_root, double **above, size_t *n) {
  *above = NULL;
  *n = 0;
  if (mesh_json == NULL)
    return 0;
  json_t *j = json_loads(mesh_json, 0, NULL);
  if (j == NULL)
    return SK_ENOMEM;
  size_t count = 0;
  for (const json_t *x = j; x != NULL; x = json_object_get(x, "parent"))
    count++;
  double *a = calloc(count + 1, SK_ANIM_TRS * sizeof *a);
  if (a == NULL) {
    json_decref(j);
    return SK_ENOMEM;
  }
  for (const json_t *x = j; x != NULL; x = json_object_get(x, "parent")) {
    const json_t *q = json_object_get(x, "rotationQuaternion");
    if (q == NULL || (!with_root && json_object_get(x, "parent") == NULL))
      continue;
    double *t = a + (*n)++ * SK_ANIM_TRS;
    for (size_t i = 0; i < 3; i++) {
      t[i] = json_number_value(json_array_get(json_object_get(x, "position"), i));
      t[7 + i] = json_number_value(json_array_get(json_object_get(x, "scaling"), i));
    }
    for (size_t i = 0; i < 4; i++)
      t[3 + i] = json_number_value(json_array_get(q, i));
  }
  json_decref(j);
  *above = a;
  return 0;
}
