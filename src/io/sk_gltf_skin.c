/* sk_gltf_skin: a glTF skin as a Babylon skeleton (the loader's bone
 * hierarchy, names, binds and rest pose) and the file's animations as clips
 * of its bones. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_events_json.h"
#include "sk_gltf_int.h"
#include "sk_hash.h"
#include "sk_mat.h"

/* Babylon's TransformNode TRS for a node: what prepare() copies into the bone. */
static int node_rest_trs(const sk_gltf *g, size_t node, double *trs, sk_error *err) {
  const json_t *nd = json_array_get(json_object_get(g->root, "nodes"), node);
  ptr_t p;
  const char *base = sk_gltf__mkptr(&p, "nodes", node, NULL, -1);
  char b[SK_ERROR_POINTER_MAX];
  snprintf(b, sizeof b, "%s", base);
  double t[3] = {0, 0, 0}, q[4] = {0, 0, 0, 1}, s[3] = {1, 1, 1}, m[16];
  bool ht, hr, hs, hm;
  int rc;
  if ((rc = sk_gltf__get_numbers(nd, "translation", b, 3, t, &ht, err)) ||
      (rc = sk_gltf__get_numbers(nd, "rotation", b, 4, q, &hr, err)) || (rc = sk_gltf__get_numbers(nd, "scale", b, 3, s, &hs, err)) ||
      (rc = sk_gltf__get_numbers(nd, "matrix", b, 16, m, &hm, err)))
    return rc;
  if (json_object_get(nd, "skin") != NULL) {
    /* _LoadTransform ignores a skinned node's TRS; a TransformNode without
     * rotationQuaternion gives the identity through bone.rotation. */
    const double id[SK_ANIM_TRS] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1};
    memcpy(trs, id, sizeof id);
    return 0;
  }
  if (hm) {
    float mf[16];
    for (int i = 0; i < 16; i++)
      mf[i] = (float)m[i];
    sk_mat_decompose(mf, s, q, t);
  }
  memcpy(trs, t, 3 * sizeof *t);
  memcpy(trs + 3, q, 4 * sizeof *q);
  memcpy(trs + 7, s, 3 * sizeof *s);
  return 0;
}

/* A small string set for unique bone names. */
typedef struct {
  char **slot;
  size_t mask;
} name_set;

static uint32_t str_hash(const char *s) { return sk_hash_fnv32_str(SK_HASH_FNV32_INIT, s); }

static bool set_has(const name_set *ns, const char *s) {
  for (size_t at = str_hash(s) & ns->mask; ns->slot[at] != NULL; at = (at + 1) & ns->mask)
    if (strcmp(ns->slot[at], s) == 0)
      return true;
  return false;
}

static void set_add(name_set *ns, char *s) {
  size_t at = str_hash(s) & ns->mask;
  while (ns->slot[at] != NULL)
    at = (at + 1) & ns->mask;
  ns->slot[at] = s;
}

static char *bone_name(const json_t *node, size_t index, name_set *ns) {
  const char *nm = json_string_value(json_object_get(node, "name"));
  char buf[40];
  if (nm == NULL || nm[0] == '\0') {
    snprintf(buf, sizeof buf, "joint%zu", index);
    nm = buf;
  }
  size_t len = strlen(nm);
  char *s = malloc(len + 32);
  if (s == NULL)
    return NULL;
  memcpy(s, nm, len + 1);
  if (set_has(ns, s)) {
    snprintf(s + len, 32, "#%zu", index);
    size_t l2 = strlen(s);
    char *t = s;
    while (set_has(ns, t)) {
      char *u = realloc(t, l2 + 2);
      if (u == NULL) {
        free(t);
        return NULL;
      }
      t = u;
      t[l2++] = '\'';
      t[l2] = '\0';
    }
    s = t;
  }
  set_add(ns, s);
  return s;
}

typedef struct {
  size_t count;     /* bones */
  int32_t *node;    /* bone -> node */
  int32_t *parent;  /* bone -> parent bone or -1 */
  int32_t *index;   /* bone -> joint slot or -1 */
  int32_t *bone_of; /* node -> bone or -1 */
  char **names;
} bone_list;

static void bone_list_free(bone_list *bl) {
  for (size_t i = 0; bl->names != NULL && i < bl->count; i++)
    free(bl->names[i]);
  free(bl->names);
  free(bl->node);
  free(bl->parent);
  free(bl->index);
  free(bl->bone_of);
}

/* Nearest common ancestor of the joints (_findSkeletonRootNode: the last
 * node of the common prefix of their root paths), or -1 when they share no
 * root. Linear in the node count, whatever the depth: count the joints below
 * every node, deepest nodes first; the answer is the deepest node whose
 * subtree holds all nj (distinct) joints. `depth` and `order` are scratch. */
static int32_t common_root(const sk_gltf *g, const int32_t *joints, size_t nj, const int32_t *slot_of, int32_t *depth,
                           int32_t *order) {
  const size_t n = g->node_count;
  for (size_t i = 0; i < n; i++)
    depth[i] = -1;
  int32_t max_depth = 0;
  for (size_t i = 0; i < n; i++) {
    /* Walk up to a node of known depth, then assign on the way back. */
    size_t k = 0;
    int32_t j = (int32_t)i;
    while (j >= 0 && depth[j] < 0) {
      order[k++] = j;
      j = g->parent[j];
    }
    int32_t d = j >= 0 ? depth[j] : -1;
    while (k > 0) {
      depth[order[--k]] = ++d;
      if (d > max_depth)
        max_depth = d;
    }
  }
  /* Counting sort by depth, deepest first. */
  int32_t *start = calloc((size_t)max_depth + 2, sizeof *start);
  int32_t *count = calloc(n ? n : 1, sizeof *count);
  if (start == NULL || count == NULL) {
    free(start);
    free(count);
    return -2;
  }
  for (size_t i = 0; i < n; i++)
    start[max_depth - depth[i] + 1]++;
  for (int32_t d = 0; d <= max_depth; d++)
    start[d + 1] += start[d];
  for (size_t i = 0; i < n; i++)
    order[start[max_depth - depth[i]]++] = (int32_t)i;
  int32_t best = -1;
  for (size_t k = 0; k < n; k++) {
    int32_t i = order[k];
    if (slot_of[i] >= 0)
      count[i]++;
    if ((size_t)count[i] == nj && (best < 0 || depth[i] > depth[best]))
      best = i;
    if (g->parent[i] >= 0)
      count[g->parent[i]] += count[i];
  }
  (void)joints;
  free(start);
  free(count);
  return best;
}

int32_t sk_gltf__skin_root(const sk_gltf *g, size_t skin) {
  const json_t *sk = json_array_get(json_object_get(g->root, "skins"), skin);
  const json_t *root = json_object_get(sk, "skeleton");
  const size_t nn = g->node_count;
  if (json_is_integer(root))
    return json_integer_value(root) >= 0 && (size_t)json_integer_value(root) < nn ? (int32_t)json_integer_value(root) : -2;
  const json_t *joints = json_object_get(sk, "joints");
  size_t nj = json_array_size(joints);
  if (nj == 0 || nn == 0)
    return -1;
  int32_t *slot_of = malloc(nn * sizeof *slot_of), *depth = malloc(nn * sizeof *depth),
          *order = malloc(nn * sizeof *order);
  int32_t best = -2;
  if (slot_of != NULL && depth != NULL && order != NULL) {
    for (size_t i = 0; i < nn; i++)
      slot_of[i] = -1;
    size_t distinct = 0;
    for (size_t k = 0; k < nj; k++) {
      json_int_t x = json_integer_value(json_array_get(joints, k));
      if (x < 0 || (size_t)x >= nn)
        goto done; /* the skin does not load either */
      if (slot_of[x] < 0)
        distinct++;
      slot_of[x] = (int32_t)k;
    }
    best = common_root(g, NULL, distinct, slot_of, depth, order);
  }
done:
  free(slot_of);
  free(depth);
  free(order);
  return best;
}

static int build_bones(const sk_gltf *g, size_t skin, const json_t *sk, size_t max_bones, bone_list *bl,
                       sk_error *err) {
  ptr_t p;
  const size_t nn = g->node_count;
  const json_t *joints = json_object_get(sk, "joints");
  if (!json_is_array(joints) || json_array_size(joints) == 0)
    return FAIL(sk_gltf__mkptr(&p, "skins", skin, "joints", -1), "expected a non-empty array of node indices");
  size_t nj = json_array_size(joints);
  int32_t *jn = malloc(nj * sizeof *jn);
  int32_t *slot_of = malloc((nn ? nn : 1) * sizeof *slot_of);
  int32_t *chain = malloc((nn ? nn : 1) * sizeof *chain);
  int32_t *chain2 = malloc((nn ? nn : 1) * sizeof *chain2);
  bl->bone_of = malloc((nn ? nn : 1) * sizeof *bl->bone_of);
  bl->node = malloc((nn ? nn : 1) * sizeof *bl->node);
  bl->parent = malloc((nn ? nn : 1) * sizeof *bl->parent);
  bl->index = malloc((nn ? nn : 1) * sizeof *bl->index);
  bl->names = calloc(nn ? nn : 1, sizeof *bl->names);
  name_set ns = {0};
  size_t cap = 16;
  while (cap < 2 * nn + 2)
    cap <<= 1;
  ns.slot = calloc(cap, sizeof *ns.slot);
  ns.mask = cap - 1;
  int rc = 0;
  if (!jn || !slot_of || !chain || !chain2 || !bl->bone_of || !bl->node || !bl->parent || !bl->index || !bl->names ||
      !ns.slot) {
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
    goto done;
  }
  for (size_t i = 0; i < nn; i++)
    slot_of[i] = bl->bone_of[i] = -1;
  for (size_t k = 0; k < nj; k++) {
    const json_t *v = json_array_get(joints, k);
    json_int_t x = json_integer_value(v);
    if (!json_is_integer(v) || x < 0 || (size_t)x >= nn) {
      rc = FAIL(sk_gltf__mkptr(&p, "skins", skin, "joints", (long)k), "expected a node index in [0, %zu)", nn);
      goto done;
    }
    if (slot_of[x] >= 0) {
      rc = FAIL(sk_gltf__mkptr(&p, "skins", skin, "joints", (long)k), "node %lld is already joint %d of this skin", (long long)x,
                slot_of[x]);
      goto done;
    }
    slot_of[x] = (int32_t)k;
    jn[k] = (int32_t)x;
  }
  uint64_t root_u;
  bool has_root;
  char sbase[SK_ERROR_POINTER_MAX];
  snprintf(sbase, sizeof sbase, "%s", sk_gltf__mkptr(&p, "skins", skin, NULL, -1));
  if ((rc = sk_gltf__get_uint(sk, "skeleton", sbase, false, 0, nn ? nn - 1 : 0, &root_u, &has_root, err)))
    goto done;
  if (has_root && nn == 0) {
    rc = FAIL(sk_gltf__mkptr(&p, "skins", skin, "skeleton", -1), "there are no nodes");
    goto done;
  }
  int32_t root = has_root ? (int32_t)root_u : common_root(g, jn, nj, slot_of, chain, chain2);
  if (root == -2) {
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
    goto done;
  }

  const json_t *nodes = json_object_get(g->root, "nodes");
  size_t count = 0;
  for (size_t k = 0; k < nj; k++) {
    size_t depth = 0;
    int32_t node = jn[k];
    while (bl->bone_of[node] < 0) {
      chain[depth++] = node;
      if (node == root || g->parent[node] < 0) {
        node = -1;
        break;
      }
      node = g->parent[node];
    }
    int32_t parent_bone = node >= 0 ? bl->bone_of[node] : -1;
    while (depth > 0) {
      int32_t nd = chain[--depth];
      if (count >= max_bones) {
        rc = sk_error_set(err, SK_ETOOBIG, sk_gltf__mkptr(&p, "skins", skin, "joints", -1), "the skin needs more than %zu bones",
                          max_bones);
        goto done;
      }
      bl->node[count] = nd;
      bl->parent[count] = parent_bone;
      bl->index[count] = slot_of[nd];
      if ((bl->names[count] = bone_name(json_array_get(nodes, (size_t)nd), (size_t)nd, &ns)) == NULL) {
        rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
        goto done;
      }
      bl->bone_of[nd] = (int32_t)count;
      parent_bone = (int32_t)count;
      count++;
      bl->count = count;
    }
  }
done:
  free(jn);
  free(slot_of);
  free(chain);
  free(chain2);
  free(ns.slot);
  return rc;
}

/* ---- animations ----------------------------------------------------------- */

/* Reads a sampler's input: SCALAR, finite, non-decreasing key times. */
static int read_input(sk_gltf *g, size_t anim, size_t sampler, uint64_t acc, float **times, size_t *n, sk_error *err) {
  size_t nc;
  ptr_t p;
  char sp[SK_ERROR_POINTER_MAX];
  snprintf(sp, sizeof sp, "%s/input", sk_gltf__mkptr(&p, "animations", anim, "samplers", (long)sampler));
  int rc = sk_gltf__read_accessor(g, (size_t)acc, sp, times, n, &nc, err);
  if (rc)
    return rc;
  if (nc != 1)
    rc = FAIL(sp, "animation input must be a SCALAR accessor");
  for (size_t i = 0; !rc && i < *n; i++) {
    if (!isfinite((*times)[i]))
      rc = FAIL(sp, "key time %zu is not finite", i);
    else if (i > 0 && (*times)[i] < (*times)[i - 1])
      rc = FAIL(sp, "key times must not decrease (key %zu)", i);
  }
  if (rc) {
    free(*times);
    *times = NULL;
  }
  return rc;
}

typedef struct {
  int32_t bone;
  int path, interp;
  size_t sampler;
} pending_channel;

/* The clip's name: the file's, or Babylon's "animation<a>". */
static int clip_name(const json_t *an, size_t a, sk_anim_clip *clip, sk_error *err) {
  const char *nm = json_string_value(json_object_get(an, "name"));
  char buf[40];
  clip->named = nm != NULL && nm[0] != '\0';
  if (!clip->named) {
    snprintf(buf, sizeof buf, "animation%zu", a);
    nm = buf;
  }
  if ((clip->name = strdup(nm)) == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  return 0;
}

/* SK_ANIM_TRANSLATION/ROTATION/SCALE for a target path, -1 for "weights"
 * (read for the clip's length, drives no bone), -2 for paths to skip
 * (extension paths such as KHR_animation_pointer drive no node TRS). */
static int channel_path(const char *path) {
  if (path != NULL && strcmp(path, "translation") == 0)
    return SK_ANIM_TRANSLATION;
  if (path != NULL && strcmp(path, "rotation") == 0)
    return SK_ANIM_ROTATION;
  if (path != NULL && strcmp(path, "scale") == 0)
    return SK_ANIM_SCALE;
  return path != NULL && strcmp(path, "weights") == 0 ? -1 : -2;
}

/* A sampler's interpolation (LINEAR when absent). */
static int sampler_interp(const json_t *smp, const char *sbase, int *interp, sk_error *err) {
  const char *ip = json_string_value(json_object_get(smp, "interpolation"));
  *interp = SK_ANIM_LINEAR;
  if (json_object_get(smp, "interpolation") == NULL)
    return 0;
  if (ip != NULL && strcmp(ip, "STEP") == 0)
    *interp = SK_ANIM_STEP;
  else if (ip != NULL && strcmp(ip, "CUBICSPLINE") == 0)
    *interp = SK_ANIM_CUBICSPLINE;
  else if (ip == NULL || strcmp(ip, "LINEAR") != 0) {
    char ipp[SK_ERROR_POINTER_MAX];
    sk_gltf__joinp(ipp, sbase, "interpolation");
    return FAIL(ipp, "expected LINEAR, STEP or CUBICSPLINE");
  }
  return 0;
}

/* The clip being loaded: its JSON, and the channels kept so far. */
typedef struct clip_scan {
  size_t a;
  const json_t *channels, *samplers;
  size_t ns;
  const bone_list *bl;
  pending_channel *pc;
  size_t kept;
  double end; /* the clip's last key frame over every channel */
} clip_scan;

/* First pass over channel c: checks its target and sampler, reads its key
 * times for the clip's length, and keeps it when it drives a bone. */
static int scan_channel(sk_gltf *g, clip_scan *cs, size_t c, sk_error *err) {
  ptr_t p;
  const json_t *ch = json_array_get(cs->channels, c);
  char cbase[SK_ERROR_POINTER_MAX], tb[SK_ERROR_POINTER_MAX], sbase[SK_ERROR_POINTER_MAX];
  snprintf(cbase, sizeof cbase, "%s", sk_gltf__mkptr(&p, "animations", cs->a, "channels", (long)c));
  if (!json_is_object(ch))
    return FAIL(cbase, "expected an object");
  uint64_t s;
  int rc;
  if ((rc = sk_gltf__get_uint(ch, "sampler", cbase, true, 0, cs->ns ? cs->ns - 1 : 0, &s, NULL, err)))
    return rc;
  if (cs->ns == 0) {
    char sp[SK_ERROR_POINTER_MAX];
    sk_gltf__joinp(sp, cbase, "sampler");
    return FAIL(sp, "the animation has no samplers");
  }
  const json_t *target = json_object_get(ch, "target");
  sk_gltf__joinp(tb, cbase, "target");
  if (!json_is_object(target))
    return FAIL(tb, "expected an object");
  const int pth = channel_path(json_string_value(json_object_get(target, "path")));
  if (pth == -2)
    return 0;
  uint64_t node;
  bool has_node;
  if ((rc = sk_gltf__get_uint(target, "node", tb, false, 0, g->node_count ? g->node_count - 1 : 0, &node, &has_node, err)))
    return rc;
  if (!has_node)
    return 0;
  if (g->node_count == 0)
    return FAIL(tb, "there are no nodes");
  const json_t *smp = json_array_get(cs->samplers, (size_t)s);
  snprintf(sbase, sizeof sbase, "%s", sk_gltf__mkptr(&p, "animations", cs->a, "samplers", (long)s));
  if (!json_is_object(smp))
    return FAIL(sbase, "expected an object");
  int interp;
  uint64_t in_acc;
  if ((rc = sampler_interp(smp, sbase, &interp, err)) || (rc = sk_gltf__get_uint(smp, "input", sbase, true, 0, SIZE_MAX, &in_acc, NULL, err)))
    return rc;
  float *times;
  size_t nt;
  if ((rc = read_input(g, cs->a, (size_t)s, in_acc, &times, &nt, err)))
    return rc;
  double last = (double)times[nt - 1] * SK_ANIM_FPS;
  free(times);
  if (last > cs->end)
    cs->end = last;
  if (pth < 0 || cs->bl->bone_of[node] < 0)
    return 0;
  cs->pc[cs->kept++] = (pending_channel){.bone = cs->bl->bone_of[node], .path = pth, .interp = interp, .sampler = (size_t)s};
  return 0;
}

/* A channel's keys, padded to [0, end] as AnimationGroup.normalize(0)
 * does: the first value held from frame 0, the last to `end`. */
static int pad_keys(sk_anim_channel *out, const pending_channel *pc, const float *times, size_t nt, const float *vals,
                    size_t stride, double end, sk_error *err) {
  size_t pre = times[0] * SK_ANIM_FPS > 0 ? 1 : 0;
  size_t post = (double)times[nt - 1] * SK_ANIM_FPS < end ? 1 : 0;
  size_t n = nt + pre + post;
  out->frames = malloc(n * sizeof *out->frames);
  out->values = malloc(n * stride * sizeof *out->values);
  if (out->frames == NULL || out->values == NULL) {
    free(out->frames);
    free(out->values);
    out->frames = NULL;
    out->values = NULL;
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  }
  out->bone = pc->bone;
  out->path = pc->path;
  out->interp = pc->interp;
  out->count = n;
  out->pads = (uint8_t)((pre ? SK_ANIM_PAD_START : 0) | (post ? SK_ANIM_PAD_END : 0));
  if (pre) {
    out->frames[0] = 0;
    memcpy(out->values, vals, stride * sizeof *vals);
  }
  for (size_t i = 0; i < nt; i++)
    out->frames[pre + i] = (double)times[i] * SK_ANIM_FPS;
  memcpy(out->values + pre * stride, vals, nt * stride * sizeof *vals);
  if (post) {
    out->frames[n - 1] = end;
    memcpy(out->values + (n - 1) * stride, vals + (nt - 1) * stride, stride * sizeof *vals);
  }
  return 0;
}

/* Second pass, one kept channel: its output values checked (shape, count,
 * finite) and its keys into the clip's next channel. */
static int load_channel(sk_gltf *g, const clip_scan *cs, const pending_channel *pc, sk_anim_clip *clip, sk_error *err) {
  ptr_t p;
  const json_t *smp = json_array_get(cs->samplers, pc->sampler);
  char sbase[SK_ERROR_POINTER_MAX], op[SK_ERROR_POINTER_MAX];
  snprintf(sbase, sizeof sbase, "%s", sk_gltf__mkptr(&p, "animations", cs->a, "samplers", (long)pc->sampler));
  uint64_t in_acc, out_acc;
  sk_gltf__get_uint(smp, "input", sbase, true, 0, SIZE_MAX, &in_acc, NULL, err); /* checked by the first pass */
  int rc;
  if ((rc = sk_gltf__get_uint(smp, "output", sbase, true, 0, SIZE_MAX, &out_acc, NULL, err)))
    return rc;
  float *times = NULL, *vals = NULL;
  size_t nt, nv, nc;
  if ((rc = read_input(g, cs->a, pc->sampler, in_acc, &times, &nt, err)))
    return rc;
  sk_gltf__joinp(op, sbase, "output");
  if ((rc = sk_gltf__read_accessor(g, (size_t)out_acc, op, &vals, &nv, &nc, err))) {
    free(times);
    return rc;
  }
  const size_t w = pc->path == SK_ANIM_ROTATION ? 4 : 3;
  const size_t per = pc->interp == SK_ANIM_CUBICSPLINE ? 3 : 1;
  if (nc != w)
    rc = FAIL(op, "a %s channel needs a %s output accessor", pc->path == SK_ANIM_ROTATION ? "rotation" : "vector",
              w == 4 ? "VEC4" : "VEC3");
  else if (nv != nt * per)
    rc = FAIL(op, "%zu output values for %zu keys; %s needs %zu", nv, nt,
              pc->interp == SK_ANIM_CUBICSPLINE ? "CUBICSPLINE" : "this interpolation", nt * per);
  for (size_t i = 0; !rc && i < nv * nc; i++)
    if (!isfinite(vals[i]))
      rc = FAIL(op, "output value %zu is not finite", i / nc);
  if (!rc && (rc = pad_keys(&clip->channels[clip->channel_count], pc, times, nt, vals, w * per, cs->end, err)) == 0)
    clip->channel_count++;
  free(times);
  free(vals);
  return rc;
}

/* Animation `a` into `clip`: its name, a first pass over the channels (the
 * clip's length, the channels that drive bones), a second reading their
 * keys. */
static int load_clip(sk_gltf *g, size_t a, const json_t *an, const bone_list *bl, sk_anim_clip *clip, sk_error *err) {
  ptr_t p;
  int rc = clip_name(an, a, clip, err);
  if (rc)
    return rc;
  clip_scan cs = {.a = a, .channels = json_object_get(an, "channels"), .samplers = json_object_get(an, "samplers"),
                  .bl = bl};
  if (!json_is_array(cs.channels))
    return FAIL(sk_gltf__mkptr(&p, "animations", a, "channels", -1), "expected an array");
  if (!json_is_array(cs.samplers))
    return FAIL(sk_gltf__mkptr(&p, "animations", a, "samplers", -1), "expected an array");
  const size_t nch = json_array_size(cs.channels);
  cs.ns = json_array_size(cs.samplers);
  clip->gltf_channels = nch;
  clip->channels = calloc(nch ? nch : 1, sizeof *clip->channels);
  cs.pc = calloc(nch ? nch : 1, sizeof *cs.pc);
  if (clip->channels == NULL || cs.pc == NULL) {
    free(cs.pc);
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  }
  for (size_t c = 0; c < nch && !rc; c++)
    rc = scan_channel(g, &cs, c, err);
  clip->end_frame = cs.end;
  for (size_t k = 0; k < cs.kept && !rc; k++)
    rc = load_channel(g, &cs, &cs.pc[k], clip, err);
  free(cs.pc);
  /* skinnerd's extension: named markers, the clip's AnimationEvents */
  const json_t *ex = json_object_get(an, "extras"), *mk = json_is_object(ex) ? json_object_get(ex, "markers") : NULL;
  if (!rc && mk != NULL) {
    char mp[SK_ERROR_POINTER_MAX];
    snprintf(mp, sizeof mp, "%s/extras/markers", sk_gltf__mkptr(&p, "animations", a, NULL, -1));
    rc = sk_events_json_parse(mk, mp, true, &clip->events, err);
  }
  return rc;
}

/* ---- the whole skin --------------------------------------------------------- */

/* What sk_gltf_load_skin builds, freed (or handed out) at its end. */
typedef struct skin_load {
  sk_gltf *g;
  size_t skin, nj;
  const json_t *sk;
  bone_list bl;
  sk_anim *an;
  sk_bone_desc *descs;
  float *binds, *abs_bind, *abs_inv, *ibm;
  char sbase[SK_ERROR_POINTER_MAX], ibm_ptr[SK_ERROR_POINTER_MAX];
} skin_load;

static int skin_alloc(skin_load *st, sk_error *err) {
  const size_t n = st->bl.count;
  st->an = calloc(1, sizeof *st->an);
  st->descs = calloc(n, sizeof *st->descs);
  st->binds = malloc(n * 16 * sizeof *st->binds);
  st->abs_bind = malloc(n * 16 * sizeof *st->abs_bind);
  st->abs_inv = malloc(n * 16 * sizeof *st->abs_inv);
  if (st->an == NULL || st->descs == NULL || st->binds == NULL || st->abs_bind == NULL || st->abs_inv == NULL ||
      (st->an->rest = malloc(n * SK_ANIM_TRS * sizeof *st->an->rest)) == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  st->an->bone_count = n;
  return 0;
}

/* The skin's inverse bind matrices, when it has them: a MAT4 accessor with
 * a finite matrix for every joint. */
static int read_ibms(skin_load *st, sk_error *err) {
  ptr_t p;
  uint64_t ibm_acc;
  bool has_ibm;
  st->nj = json_array_size(json_object_get(st->sk, "joints"));
  snprintf(st->sbase, sizeof st->sbase, "%s", sk_gltf__mkptr(&p, "skins", st->skin, NULL, -1));
  sk_gltf__joinp(st->ibm_ptr, st->sbase, "inverseBindMatrices");
  int rc = sk_gltf__get_uint(st->sk, "inverseBindMatrices", st->sbase, false, 0, SIZE_MAX, &ibm_acc, &has_ibm, err);
  if (rc || !has_ibm)
    return rc;
  size_t cnt, nc;
  if ((rc = sk_gltf__read_accessor(st->g, (size_t)ibm_acc, st->ibm_ptr, &st->ibm, &cnt, &nc, err)))
    return rc;
  if (nc != 16)
    return FAIL(st->ibm_ptr, "inverse bind matrices must be a MAT4 accessor");
  if (cnt < st->nj)
    return FAIL(st->ibm_ptr, "%zu inverse bind matrices for %zu joints", cnt, st->nj);
  for (size_t i = 0; i < st->nj * 16; i++)
    if (!isfinite(st->ibm[i]))
      return FAIL(st->ibm_ptr, "matrix %zu is not finite", i / 16);
  return 0;
}

/* Bone b as Babylon's _updateBoneMatrices makes it (bones[] order, parents
 * first): its bind from the inverse bind matrix relative to its parent's,
 * absolute bind and inverse checked, its rest TRS from its node, and its
 * description for sk_skeleton_create. */
static int bind_bone(skin_load *st, size_t b, sk_error *err) {
  const bone_list *bl = &st->bl;
  float *base = st->binds + 16 * b, *abs_bind = st->abs_bind, *abs_inv = st->abs_inv;
  if (st->ibm != NULL && bl->index[b] >= 0)
    sk_mat_invert(st->ibm + 16 * (size_t)bl->index[b], base);
  else
    sk_mat_identity(base);
  const int32_t pb = bl->parent[b];
  if (pb >= 0)
    sk_mat_mul(base, abs_inv + 16 * (size_t)pb, base);
  if (pb >= 0)
    sk_mat_mul(base, abs_bind + 16 * (size_t)pb, abs_bind + 16 * b);
  else
    memcpy(abs_bind + 16 * b, base, 16 * sizeof *base);
  const char *where = bl->index[b] >= 0 ? st->ibm_ptr : st->sbase;
  if (sk_mat_det(abs_bind + 16 * b) == 0)
    return FAIL(where, "bone \"%s\" (node %d) gets a singular bind matrix", bl->names[b], bl->node[b]);
  sk_mat_invert(abs_bind + 16 * b, abs_inv + 16 * b);
  for (int i = 0; i < 16; i++)
    if (!isfinite(base[i]) || !isfinite(abs_bind[16 * b + i]) || !isfinite(abs_inv[16 * b + i]))
      return FAIL(where, "bone \"%s\" (node %d) gets a non-finite bind matrix", bl->names[b], bl->node[b]);
  double *trs = st->an->rest + b * SK_ANIM_TRS;
  int rc = node_rest_trs(st->g, (size_t)bl->node[b], trs, err);
  if (rc)
    return rc;
  sk_bone_desc *d = &st->descs[b];
  d->name = bl->names[b];
  d->parent = pb >= 0 ? bl->names[pb] : NULL;
  sk_mat_compose(trs + 7, trs + 3, trs, d->local);
  d->bind = base;
  d->has_index = true;
  d->index = bl->index[b];
  return 0;
}

/* Every local transform finite (a node's TRS can overflow float). */
static int check_locals(const skin_load *st, sk_error *err) {
  ptr_t p;
  for (size_t b = 0; b < st->bl.count; b++)
    for (int i = 0; i < 16; i++)
      if (!isfinite(st->descs[b].local[i]))
        return FAIL(sk_gltf__mkptr(&p, "nodes", (size_t)st->bl.node[b], NULL, -1), "the node's transform overflows float");
  return 0;
}

/* Every animation of the file as a clip of this skin's bones. */
static int load_clips(skin_load *st, sk_error *err) {
  ptr_t p;
  const json_t *anims = json_object_get(st->g->root, "animations");
  if (anims != NULL && !json_is_array(anims))
    return FAIL("/animations", "expected an array");
  size_t na = json_array_size(anims);
  sk_anim *an = st->an;
  an->clips = calloc(na ? na : 1, sizeof *an->clips);
  if (an->clips == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  int rc = 0;
  for (size_t a = 0; a < na && !rc; a++) {
    const json_t *aj = json_array_get(anims, a);
    an->clip_count = a + 1;
    if (!json_is_object(aj))
      rc = FAIL(sk_gltf__mkptr(&p, "animations", a, NULL, -1), "expected an object");
    else
      rc = load_clip(st->g, a, aj, &st->bl, &an->clips[a], err);
  }
  return rc;
}

int sk_gltf_load_skin(sk_gltf *g, size_t skin, size_t max_bones, sk_skeleton **skeleton, sk_anim **anim_out,
                      sk_error *err) {
  *skeleton = NULL;
  *anim_out = NULL;
  if (max_bones == 0 || max_bones > SK_SKELETON_MAX_BONES)
    max_bones = SK_SKELETON_MAX_BONES;
  g->budget = SK_GLTF_READ_BUDGET;
  skin_load st = {.g = g, .skin = skin};
  int rc = sk_gltf__get_item(g, "skins", skin, "/skins", &st.sk, err);
  if (rc)
    return rc;
  if (!(rc = build_bones(g, skin, st.sk, max_bones, &st.bl, err)) && !(rc = skin_alloc(&st, err)))
    rc = read_ibms(&st, err);
  for (size_t b = 0; !rc && b < st.bl.count; b++)
    rc = bind_bone(&st, b, err);
  /* sk_skeleton_create keeps bones[] in the order given (parents first). */
  if (!rc && !(rc = check_locals(&st, err)) && !(rc = sk_skeleton_create(st.descs, st.bl.count, st.sbase, skeleton, err)))
    rc = load_clips(&st, err);
  if (!rc && sk_gltf__scene_nodes(g, st.bl.node, st.bl.count, &st.an->nodes) != 0)
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  if (rc) {
    sk_skeleton_destroy(*skeleton);
    *skeleton = NULL;
    sk_anim_destroy(st.an);
  } else {
    *anim_out = st.an;
  }
  bone_list_free(&st.bl);
  free(st.descs);
  free(st.binds);
  free(st.abs_bind);
  free(st.abs_inv);
  free(st.ibm);
  return rc;
}

