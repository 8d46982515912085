/* sk_gltf_nodes: the nodes Babylon's glTF loader puts below `__root__`
 * (GLTFLoader.loadSceneAsync, loadNodeAsync, _loadMeshAsync), by name and
 * parent, for retargeting's checkHierarchy: it searches all of them by
 * name, meshes included, so a mesh named as its joint makes the joint's
 * name ambiguous there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_gltf_int.h"

/* What one glTF node becomes: `primary` (the transform node its children,
 * camera and light hang from), `mesh` (a skinned node's mesh, placed
 * beside the skeleton root; -1 otherwise), `own` (node._babylonTransformNode:
 * the mesh when there is one). Entries are indices into the list. */
typedef struct {
  int32_t primary, mesh, own;
  int32_t prims;  /* primitives of its mesh (1: the mesh itself) */
  int32_t camera; /* glTF camera index, or -1 */
  int32_t light;  /* KHR_lights_punctual light index, or -1 */
  bool skinned;
} node_plan;

static int32_t index_of(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < INT32_MAX
             ? (int32_t)json_integer_value(v)
             : -1;
}

static const char *name_of(const json_t *o) {
  const char *s = json_string_value(json_object_get(o, "name"));
  return s != NULL && s[0] != '\0' ? s : NULL;
}

static bool uses(const json_t *root, const char *ext) {
  size_t i;
  const json_t *v;
  json_array_foreach(json_object_get(root, "extensionsUsed"), i, v) if (json_is_string(v) &&
                                                                          strcmp(json_string_value(v), ext) == 0) return true;
  return false;
}

/* Loaded: below a node of the default scene (scene, else scenes[0]). */
static int mark_loaded(const sk_gltf *g, uint8_t *loaded) {
  const json_t *scenes = json_object_get(g->root, "scenes");
  const int32_t si = index_of(g->root, "scene");
  const json_t *scene = json_array_get(scenes, si >= 0 ? (size_t)si : 0);
  uint8_t *top = calloc(g->node_count ? g->node_count : 1, 1);
  if (top == NULL)
    return SK_ENOMEM;
  size_t i;
  const json_t *v;
  json_array_foreach(json_object_get(scene, "nodes"), i, v) {
    const json_int_t n = json_integer_value(v);
    if (json_is_integer(v) && n >= 0 && (size_t)n < g->node_count && g->parent[n] < 0)
      top[n] = 1;
  }
  /* state: 0 not known yet, 1 loaded, 2 not; each node is settled once
   * (a walk stops at the first settled node), so deep chains stay linear. */
  for (size_t k = 0; k < g->node_count; k++)
    if (g->parent[k] < 0)
      loaded[k] = top[k] ? 1 : 2;
  for (size_t k = 0; k < g->node_count; k++) {
    int32_t r = (int32_t)k;
    while (loaded[r] == 0)
      r = g->parent[r];
    const uint8_t state = loaded[r];
    for (r = (int32_t)k; loaded[r] == 0; r = g->parent[r])
      loaded[r] = state;
  }
  for (size_t k = 0; k < g->node_count; k++)
    loaded[k] = loaded[k] == 1;
  free(top);
  return 0;
}

/* What node i becomes (entries but their indices) and its names' bytes. */
static size_t describe(const sk_gltf *g, const json_t *lights, size_t i, node_plan *p) {
  const json_t *nd = json_array_get(json_object_get(g->root, "nodes"), i);
  const char *nm = name_of(nd);
  const size_t len = nm != NULL ? strlen(nm) : (size_t)snprintf(NULL, 0, "node%zu", i);
  const int32_t mi = index_of(nd, "mesh");
  const json_t *mesh = mi >= 0 ? json_array_get(json_object_get(g->root, "meshes"), (size_t)mi) : NULL;
  const size_t prims = json_array_size(json_object_get(mesh, "primitives"));
  p->prims = mesh != NULL && prims > 1 ? (int32_t)prims : 1;
  p->skinned = mesh != NULL && index_of(nd, "skin") >= 0;
  size_t t = (p->skinned ? 2 : 1) * (len + 1) + (p->prims > 1 ? (size_t)p->prims * (len + 32) : 0);
  const int32_t ci = index_of(nd, "camera");
  const json_t *cam = ci >= 0 ? json_array_get(json_object_get(g->root, "cameras"), (size_t)ci) : NULL;
  p->camera = cam != NULL ? ci : -1;
  if (cam != NULL)
    t += (name_of(cam) != NULL ? strlen(name_of(cam)) : 0) + 32;
  const int32_t li = index_of(json_object_get(json_object_get(nd, "extensions"), "KHR_lights_punctual"), "light");
  const json_t *light = li >= 0 ? json_array_get(lights, (size_t)li) : NULL;
  p->light = light != NULL ? li : -1;
  if (light != NULL)
    t += (name_of(light) != NULL ? strlen(name_of(light)) : len) + 1;
  return t;
}

/* The punctual lights, when the loader loads the extension (it is used). */
static const json_t *lights_of(const sk_gltf *g) {
  const json_t *ext = json_object_get(json_object_get(g->root, "extensions"), "KHR_lights_punctual");
  return uses(g->root, "KHR_lights_punctual") ? json_object_get(ext, "lights") : NULL;
}

static size_t entries(const node_plan *p) {
  return (p->skinned ? 2u : 1u) + (p->prims > 1 ? (size_t)p->prims : 0) + (p->camera >= 0) + (p->light >= 0);
}

/* Entry indices, in the loader's creation order per node; *count and the
 * names' *text bytes. */
static void plan(const sk_gltf *g, const uint8_t *loaded, node_plan *np, size_t *count, size_t *text) {
  size_t n = 0, t = 0;
  const json_t *lights = lights_of(g);
  for (size_t i = 0; i < g->node_count; i++) {
    node_plan *p = &np[i];
    p->primary = p->mesh = p->own = -1;
    if (!loaded[i])
      continue;
    t += describe(g, lights, i, p);
    p->primary = (int32_t)n;
    p->mesh = p->skinned ? (int32_t)n + 1 : -1;
    p->own = p->skinned ? p->mesh : p->primary;
    n += entries(p);
  }
  *count = n;
  *text = t;
}

uint64_t sk_gltf__scene_nodes_bytes(const sk_gltf *g) {
  uint64_t bytes = 64;
  const json_t *lights = lights_of(g);
  for (size_t i = 0; i < g->node_count; i++) {
    node_plan p;
    const size_t t = describe(g, lights, i, &p);
    bytes += t + entries(&p) * (sizeof(const char *) + sizeof(int32_t)) + sizeof(int32_t);
  }
  return bytes;
}

/* Where a skinned node's mesh goes (the loader's post-scene action: beside
 * the skeleton root _loadBones settled on, skin.skeleton or the joints'
 * nearest common ancestor), -2 when that is outside `__root__`, -3 out of
 * memory. `roots` caches each skin's root (-3: not known yet). */
static int32_t skinned_mesh_parent(const sk_gltf *g, const uint8_t *loaded, const node_plan *np, size_t i,
                                   int32_t *roots) {
  const int32_t si = index_of(json_array_get(json_object_get(g->root, "nodes"), i), "skin");
  if (si < 0 || (size_t)si >= sk_gltf_skin_count(g))
    return -1;
  if (roots[si] == -3)
    roots[si] = sk_gltf__skin_root(g, (size_t)si);
  const int32_t sr = roots[si];
  if (sr == -2)
    return -3;
  if (sr < 0)
    return -1;
  const int32_t pn = g->parent[sr];
  if (pn == (int32_t)i)
    return g->parent[i] >= 0 ? np[g->parent[i]].primary : -1;
  if (pn < 0)
    return -1;
  return loaded[pn] ? np[pn].own : -2;
}

/* Copies `a` then `b` (may be NULL) as one name at `at`; past its NUL. */
static char *put(char *at, const char **slot, const char *a, const char *b) {
  *slot = at;
  const size_t la = strlen(a), lb = b != NULL ? strlen(b) : 0;
  memcpy(at, a, la);
  if (b != NULL)
    memcpy(at + la, b, lb);
  at[la + lb] = '\0';
  return at + la + lb + 1;
}

static int fill(const sk_gltf *g, const uint8_t *loaded, const node_plan *np, int32_t *roots, sk_anim_nodes *out) {
  const json_t *nodes = json_object_get(g->root, "nodes"), *cameras = json_object_get(g->root, "cameras");
  const json_t *lights = lights_of(g);
  char *at = sk_anim_nodes_text(out);
  for (size_t i = 0; i < g->node_count; i++) {
    const node_plan *p = &np[i];
    if (p->primary < 0)
      continue;
    char own[32], num[40];
    snprintf(own, sizeof own, "node%zu", i);
    const char *nm = name_of(json_array_get(nodes, i)) != NULL ? name_of(json_array_get(nodes, i)) : own;
    at = put(at, &out->names[p->primary], nm, NULL);
    out->parents[p->primary] = g->parent[i] >= 0 ? np[g->parent[i]].primary : -1;
    int32_t next = p->primary + 1;
    if (p->skinned) {
      at = put(at, &out->names[p->mesh], nm, NULL);
      if ((out->parents[p->mesh] = skinned_mesh_parent(g, loaded, np, i, roots)) == -3)
        return SK_ENOMEM;
      next++;
    }
    for (int32_t k = 0; p->prims > 1 && k < p->prims; k++, next++) {
      snprintf(num, sizeof num, "_primitive%d", (int)k);
      at = put(at, &out->names[next], nm, num);
      out->parents[next] = p->own;
    }
    if (p->camera >= 0) {
      const char *cn = name_of(json_array_get(cameras, (size_t)p->camera));
      snprintf(num, sizeof num, "camera%d", (int)p->camera);
      at = put(at, &out->names[next], cn != NULL ? cn : num, NULL);
      out->parents[next++] = p->primary;
    }
    if (p->light >= 0) {
      const char *ln = name_of(json_array_get(lights, (size_t)p->light));
      at = put(at, &out->names[next], ln != NULL ? ln : nm, NULL);
      out->parents[next++] = p->primary;
    }
  }
  return 0;
}

/* A skinned mesh parented outside `__root__` is no descendant of it, nor
 * is anything below it: nameless here, so no search finds it. Two skinned
 * nodes can place their meshes under each other: a cycle, outside too.
 * `state` (count bytes, zeroed) settles each entry once: 1 below
 * `__root__`, 2 not, 3 on the walk being made. */
static void drop_outside(sk_anim_nodes *n, uint8_t *state) {
  for (size_t e = 0; e < n->count; e++) {
    int32_t at = (int32_t)e;
    while (at >= 0 && state[at] == 0) {
      state[at] = 3;
      at = n->parents[at];
    }
    const uint8_t v = at == -1 ? 1 : at < 0 || state[at] == 3 ? 2 : state[at];
    for (at = (int32_t)e; at >= 0 && state[at] == 3; at = n->parents[at])
      state[at] = v;
    if (v != 1)
      n->names[e] = NULL;
  }
}

int sk_gltf__scene_nodes(const sk_gltf *g, const int32_t *bone_node, size_t bone_count, sk_anim_nodes **out) {
  *out = NULL;
  const size_t nn = g->node_count, ns = sk_gltf_skin_count(g);
  uint8_t *loaded = calloc(nn ? nn : 1, 1);
  node_plan *np = calloc(nn ? nn : 1, sizeof *np);
  int32_t *roots = malloc((ns ? ns : 1) * sizeof *roots);
  sk_anim_nodes *n = NULL;
  int rc = SK_ENOMEM;
  if (loaded != NULL && np != NULL && roots != NULL && mark_loaded(g, loaded) == 0) {
    for (size_t k = 0; k < ns; k++)
      roots[k] = -3;
    size_t count, text;
    plan(g, loaded, np, &count, &text);
    uint8_t *state = NULL;
    if ((n = sk_anim_nodes_new(count, bone_count, text)) != NULL && fill(g, loaded, np, roots, n) == 0 &&
        (state = calloc(count ? count : 1, 1)) != NULL) {
      drop_outside(n, state);
      for (size_t b = 0; b < bone_count; b++)
        n->of_bone[b] = np[bone_node[b]].own;
      *out = n;
      n = NULL;
      rc = 0;
    }
    free(state);
  }
  free(n);
  free(loaded);
  free(np);
  free(roots);
  return rc;
}
