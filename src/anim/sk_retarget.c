#include "sk_retarget.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sk_mat.h"

void sk_retarget_opts_default(sk_retarget_opts *o) {
  memset(o, 0, sizeof *o);
  o->retarget_animation_keys = true;
  o->fix_root_position = true;
  o->ground_reference_vertical_axis = -1;
}

/* Everything one retargeting reads: both sides' local and world matrices
 * in the state Babylon puts them in first (target at rest, source as
 * loaded), and the target name each source bone maps to. */
typedef struct rt_ctx {
  const sk_retarget_side *src, *dst;
  const sk_anim_clip *clip;
  const sk_retarget_opts *o;
  const char **mapped; /* per source bone: its name in the target's naming */
  double *dst_trs;     /* the target's TRS after Skeleton.returnToRest() */
  float *src_world, *dst_world;
  float src_top[16], dst_top[16]; /* world of above[0]: the root bones' parent */
  bool src_has_top, dst_has_top;
  double *pose;   /* scratch: one side's TRS at a frame */
  float *scratch; /* scratch: one side's world matrices */
} rt_ctx;

static int path_width(int path) { return path == SK_ANIM_ROTATION ? 4 : 3; }

/* World of above[0]: the chain composed from `__root__` down, as
 * computeWorldMatrix(true) recurses (a parentless node copies its local). */
static bool top_world(const sk_retarget_side *sd, float out[16]) {
  if (sd->above_count == 0)
    return false;
  for (size_t k = sd->above_count; k-- > 0;) {
    const double *t = sd->above + k * SK_ANIM_TRS;
    float l[16];
    sk_mat_compose(t + 7, t + 3, t, l);
    if (k + 1 == sd->above_count)
      memcpy(out, l, sizeof l);
    else
      sk_mat_mul(l, out, out);
  }
  return true;
}

/* local · parent world for every bone (bones[] is parent-first). */
static void worlds(const sk_skeleton *s, const double *trs, const float *top, float *world) {
  for (size_t b = 0; b < s->count; b++) {
    const double *t = trs + b * SK_ANIM_TRS;
    float l[16];
    sk_mat_compose(t + 7, t + 3, t, l);
    const int32_t p = s->bones[b].parent;
    if (p >= 0)
      sk_mat_mul(l, world + (size_t)p * 16, world + b * 16);
    else if (top != NULL)
      sk_mat_mul(l, top, world + b * 16);
    else
      memcpy(world + b * 16, l, sizeof l);
  }
}

/* The world matrix of one bone with the TRS `trs` (every bone's world
 * into `scratch`: the bone's own is its chain's product either way). */
static void world_of(const sk_skeleton *s, const double *trs, const float *top, int32_t bone, float *scratch,
                     float out[16]) {
  worlds(s, trs, top, scratch);
  memcpy(out, scratch + (size_t)bone * 16, 16 * sizeof *out);
}

/* A key's value (doubles) of a glTF or values64 channel. */
static double key_value(const sk_anim_channel *ch, size_t k, int i) {
  const size_t w = (size_t)path_width(ch->path);
  if (ch->values64 != NULL)
    return ch->values64[k * 3 * w + (size_t)i];
  const size_t stride = ch->interp == SK_ANIM_CUBICSPLINE ? 3 * w : w;
  const size_t vo = ch->interp == SK_ANIM_CUBICSPLINE ? w : 0;
  return ch->values[k * stride + vo + (size_t)i];
}

/* A channel's value at `frame` as goToFrame evaluates it. */
static void sample(const sk_anim_channel *ch, double frame, double *out) {
  if (ch->values64 != NULL)
    sk_anim__sample_babylon(ch, frame, out);
  else
    sk_anim__sample_values(ch, NULL, frame, out);
}

/* One side posed at `frame`: `base` TRS, then the channels in order. */
static void pose_at(double *pose, const double *base, size_t bones, const sk_anim_channel *chs, size_t n,
                    double frame) {
  static const int offset[3] = {0, 3, 7};
  memcpy(pose, base, bones * SK_ANIM_TRS * sizeof *pose);
  for (size_t k = 0; k < n; k++)
    if (chs[k].path <= SK_ANIM_SCALE)
      sample(&chs[k], frame, pose + (size_t)chs[k].bone * SK_ANIM_TRS + offset[chs[k].path]);
}

static void transform_normal(const double v[3], const float m[16], double r[3]) {
  const double x = v[0] * m[0] + v[1] * m[4] + v[2] * m[8];
  const double y = v[0] * m[1] + v[1] * m[5] + v[2] * m[9];
  const double z = v[0] * m[2] + v[1] * m[6] + v[2] * m[10];
  r[0] = x, r[1] = y, r[2] = z;
}

static const float *parent_world(const sk_skeleton *s, const float *world, const float *top, int32_t b) {
  const int32_t p = s->bones[b].parent;
  return p >= 0 ? world + (size_t)p * 16 : top;
}

/* Matrix.multiplyToRef, with IdentityReadOnly (NULL) taking the shortcut. */
static void mul_or_copy(const float *a, const float *b, float *dest) {
  if (a == NULL)
    memcpy(dest, b, 16 * sizeof *dest);
  else if (b == NULL)
    memcpy(dest, a, 16 * sizeof *dest);
  else
    sk_mat_mul(a, b, dest);
}

/* _retargetAnimationKeys for one channel, in place on `out`'s values64. */
static void retarget_keys(const rt_ctx *x, int32_t sb, int32_t tb, sk_anim_channel *out) {
  const sk_skeleton *ss = x->src->s, *ds = x->dst->s;
  const float *wt = x->dst_world + (size_t)tb * 16;
  const float *pt = parent_world(ds, x->dst_world, x->dst_has_top ? x->dst_top : NULL, tb);
  const float *ps = parent_world(ss, x->src_world, x->src_has_top ? x->src_top : NULL, sb);
  float inv_pt[16], inv_ws[16];
  if (pt != NULL)
    sk_mat_invert(pt, inv_pt);
  sk_mat_invert(x->src_world + (size_t)sb * 16, inv_ws);
  const double *rest = x->src->a->rest + (size_t)sb * SK_ANIM_TRS;
  const size_t w = (size_t)path_width(out->path);
  for (size_t k = 0; k < out->count; k++) {
    double *v = out->values64 + k * 3 * w;
    double t[3], q[4], s[3];
    memcpy(t, rest, sizeof t), memcpy(q, rest + 3, sizeof q), memcpy(s, rest + 7, sizeof s);
    memcpy(out->path == SK_ANIM_TRANSLATION ? t : out->path == SK_ANIM_ROTATION ? q : s, v, w * sizeof *v);
    float m[16];
    sk_mat_compose(s, q, t, m);
    sk_mat_mul(inv_ws, m, m);
    mul_or_copy(m, ps, m);
    sk_mat_mul(wt, m, m);
    mul_or_copy(m, pt != NULL ? inv_pt : NULL, m);
    sk_mat_decompose(m, s, q, t);
    memcpy(v, out->path == SK_ANIM_TRANSLATION ? t : out->path == SK_ANIM_ROTATION ? q : s, w * sizeof *v);
  }
}

/* The source channel's keys as a values64 channel on target bone `tb`:
 * value, in-tangent, out-tangent (the loader's tangents times 1/fps). */
static int copy_channel(const sk_anim_channel *ch, int32_t tb, sk_anim_channel *out) {
  const size_t w = (size_t)path_width(ch->path), n = ch->count;
  memset(out, 0, sizeof *out);
  out->bone = tb, out->path = ch->path, out->interp = ch->interp, out->count = n;
  out->frames = malloc(n * sizeof *out->frames);
  out->values64 = calloc(n * 3 * w, sizeof *out->values64);
  const bool flags = ch->key_flags != NULL || ch->interp != SK_ANIM_LINEAR;
  out->key_flags = flags ? calloc(n, 1) : NULL;
  if (out->frames == NULL || out->values64 == NULL || (flags && out->key_flags == NULL))
    return SK_ENOMEM;
  memcpy(out->frames, ch->frames, n * sizeof *out->frames);
  if (ch->values64 != NULL) {
    memcpy(out->values64, ch->values64, n * 3 * w * sizeof *out->values64);
    if (ch->key_flags != NULL)
      memcpy(out->key_flags, ch->key_flags, n);
    return 0;
  }
  const double invfps = 1 / SK_ANIM_FPS;
  for (size_t k = 0; k < n; k++) {
    double *v = out->values64 + k * 3 * w;
    for (size_t i = 0; i < w; i++) {
      v[i] = key_value(ch, k, (int)i);
      if (ch->interp == SK_ANIM_CUBICSPLINE) {
        v[w + i] = ch->values[k * 3 * w + i] * invfps;
        v[2 * w + i] = ch->values[k * 3 * w + 2 * w + i] * invfps;
      }
    }
    if (ch->interp == SK_ANIM_STEP)
      out->key_flags[k] = SK_ANIM_KEY_STEP;
    else if (ch->interp == SK_ANIM_CUBICSPLINE)
      out->key_flags[k] = SK_ANIM_KEY_IN | SK_ANIM_KEY_OUT;
  }
  return 0;
}

/* The source bone of the last channel mapped onto `name`
 * (sourceTransformNodeNameToNode), or -1. */
static int32_t source_node(const rt_ctx *x, const char *name) {
  int32_t found = -1;
  for (size_t k = 0; k < x->clip->channel_count; k++) {
    const int32_t b = x->clip->channels[k].bone;
    if (x->clip->channels[k].path <= SK_ANIM_SCALE && strcmp(x->mapped[b], name) == 0)
      found = b;
  }
  return found;
}

/* A source node for _checkParentHierarchy: bones, then the nodes above
 * (index count + k); -1 past `__root__`. */
static int32_t node_parent(const sk_retarget_side *sd, int32_t n) {
  const int32_t nb = (int32_t)sd->s->count;
  if (n < nb)
    return sd->s->bones[n].parent >= 0 ? sd->s->bones[n].parent : (sd->above_count > 0 ? nb : -1);
  return (size_t)(n - nb) + 1 < sd->above_count ? n + 1 : -1;
}

static const char *node_name(const rt_ctx *x, int32_t n) {
  const int32_t nb = (int32_t)x->src->s->count;
  if (n < 0)
    return NULL;
  if (n < nb)
    return x->mapped[n];
  return x->src->above_names != NULL ? x->src->above_names[n - nb] : NULL;
}

/* hierarchy_matches without the source scene's nodes (clips that did not
 * come with a glTF scene): the descendants seen are the source's bones and
 * the nodes above them but `__root__`. */
static bool hierarchy_matches_bones(const rt_ctx *x, int32_t tb) {
  const sk_skeleton *ds = x->dst->s;
  const int32_t nb = (int32_t)x->src->s->count;
  const int32_t nodes = nb + (int32_t)(x->src->above_count > 0 ? x->src->above_count - 1 : 0);
  int32_t found = -1, count = 0;
  for (int32_t n = 0; n < nodes; n++) {
    const char *name = node_name(x, n);
    if (name != NULL && strcmp(name, ds->bones[tb].name) == 0)
      found = n, count++;
  }
  if (count != 1)
    return false;
  for (int32_t b = tb, n = found; b >= 0; b = ds->bones[b].parent, n = node_parent(x->src, n)) {
    const char *name = node_name(x, n);
    if (name == NULL || strcmp(name, ds->bones[b].name) != 0)
      return false;
  }
  return true;
}

/* mapNodeNames.get(name) ?? name */
static const char *map_raw(const sk_retarget_opts *o, const char *name) {
  for (size_t i = 0; name != NULL && i < o->map_count; i++)
    if (strcmp(o->map_from[i], name) == 0)
      return o->map_to[i];
  return name;
}

/* A target bone's name as checkHierarchy reads it: its transform node's. */
static const char *target_name(const rt_ctx *x, int32_t b) {
  const sk_anim_nodes *n = x->dst->a != NULL ? x->dst->a->nodes : NULL;
  if (n != NULL && (size_t)b < n->bone_count && n->of_bone[b] >= 0 && n->names[n->of_bone[b]] != NULL)
    return n->names[n->of_bone[b]];
  return x->dst->s->bones[b].name;
}

/* _checkParentHierarchy over the source scene's nodes (sk_anim_nodes):
 * exactly one descendant of `__root__` whose mapped name is the bone's,
 * then both chains upwards by name until the bone chain ends (`__root__`
 * itself is named, nothing is above it). */
static bool hierarchy_matches(const rt_ctx *x, int32_t tb) {
  const sk_anim_nodes *n = x->src->a->nodes;
  if (n == NULL)
    return hierarchy_matches_bones(x, tb);
  const char *want = target_name(x, tb);
  int32_t found = -1;
  size_t count = 0;
  for (size_t e = 0; e < n->count; e++)
    if (n->names[e] != NULL && strcmp(map_raw(x->o, n->names[e]), want) == 0)
      found = (int32_t)e, count++;
  if (count != 1)
    return false;
  /* at: an entry, -1 `__root__`, -2 above it */
  int32_t at = found;
  for (int32_t b = tb; b >= 0; b = x->dst->s->bones[b].parent) {
    const char *name = at >= 0 ? map_raw(x->o, n->names[at]) : at == -1 ? map_raw(x->o, "__root__") : NULL;
    if (name == NULL || strcmp(name, target_name(x, b)) != 0)
      return false;
    at = at >= 0 ? n->parents[at] : -2;
  }
  return true;
}

static int set_err(sk_error *err, int code, const char *token, const char *fmt, const char *name) {
  char ptr[SK_ERROR_POINTER_MAX] = "/retarget";
  if (token != NULL)
    sk_pointer_push(ptr, sizeof ptr, token);
  return sk_error_set(err, code, ptr, fmt, name);
}

static int resolve_map(rt_ctx *x, sk_error *err) {
  const sk_retarget_opts *o = x->o;
  for (size_t b = 0; b < x->src->s->count; b++)
    x->mapped[b] = x->src->s->bones[b].name;
  for (size_t i = 0; i < o->map_count; i++) {
    char ptr[SK_ERROR_POINTER_MAX] = "/retarget/mapNodeNames";
    sk_pointer_push(ptr, sizeof ptr, o->map_from[i]);
    const int32_t sb = sk_skeleton_find(x->src->s, o->map_from[i]);
    if (sb < 0)
      return sk_error_set(err, SK_EUNKNOWN, ptr, "no bone \"%.128s\" in the source skeleton", o->map_from[i]);
    if (sk_skeleton_find(x->dst->s, o->map_to[i]) < 0)
      return sk_error_set(err, SK_EUNKNOWN, ptr, "no bone \"%.128s\" in the target skeleton", o->map_to[i]);
    x->mapped[sb] = o->map_to[i];
  }
  return 0;
}

/* What _findVerticalAxis finds: the source root and ground reference, the
 * root's position channel in the new clip, the target's ground bone. */
typedef struct rt_fix {
  int32_t src_root, src_ground, dst_root, dst_ground;
  sk_anim_channel *root_pos;
  int axis;
  double ratio;
} rt_fix;

static const char *map_name(const rt_ctx *x, const char *name) {
  const int32_t b = sk_skeleton_find(x->src->s, name);
  return b >= 0 ? x->mapped[b] : name;
}

/* _getRootNodeName without a name: the first parentless target bone (in
 * the loader's order) a source channel maps onto. */
static const char *default_root(const rt_ctx *x) {
  const sk_skeleton *ds = x->dst->s;
  int32_t best = -1;
  for (size_t b = 0; b < ds->count; b++)
    if (ds->bones[b].parent < 0 && source_node(x, ds->bones[b].name) >= 0 &&
        (best < 0 || ds->bones[b].input_pos < ds->bones[best].input_pos))
      best = (int32_t)b;
  return best >= 0 ? ds->bones[best].name : NULL;
}

static int find_fix(const rt_ctx *x, sk_anim_clip *out, rt_fix *f, sk_error *err) {
  const sk_retarget_opts *o = x->o;
  const char *root = o->root_node_name != NULL ? map_name(x, o->root_node_name) : default_root(x);
  const char *ground = map_name(x, o->ground_reference_node_name);
  if (root == NULL)
    return set_err(err, SK_EUNKNOWN, "rootNodeName", "no root bone of the target is animated by the clip: name %s",
                   "one");
  f->src_root = source_node(x, root);
  f->src_ground = source_node(x, ground);
  if (f->src_root < 0)
    return set_err(err, SK_EUNKNOWN, "rootNodeName", "\"%.128s\" is not animated by the source clip", root);
  if (f->src_ground < 0)
    return set_err(err, SK_EUNKNOWN, "groundReferenceNodeName", "\"%.128s\" is not animated by the source clip",
                   ground);
  f->root_pos = NULL;
  for (size_t k = 0; k < out->channel_count && f->root_pos == NULL; k++)
    if (out->channels[k].path == SK_ANIM_TRANSLATION && strcmp(x->dst->s->bones[out->channels[k].bone].name, root) == 0)
      f->root_pos = &out->channels[k];
  if (f->root_pos == NULL)
    return set_err(err, SK_EUNKNOWN, "rootNodeName", "the retargeted clip has no position keys for \"%.128s\"", root);
  f->dst_root = f->root_pos->bone;
  f->dst_ground = sk_skeleton_find(x->dst->s, ground);
  if (f->dst_ground < 0)
    return set_err(err, SK_EUNKNOWN, "groundReferenceNodeName", "no bone \"%.128s\" in the target skeleton", ground);
  const float *sr = x->src_world + (size_t)f->src_root * 16, *sg = x->src_world + (size_t)f->src_ground * 16;
  const float *tr = x->dst_world + (size_t)f->dst_root * 16, *tg = x->dst_world + (size_t)f->dst_ground * 16;
  double sd[3], td[3];
  for (int i = 0; i < 3; i++)
    sd[i] = (double)sr[12 + i] - (double)sg[12 + i], td[i] = (double)tr[12 + i] - (double)tg[12 + i];
  int axis = 0;
  if (o->ground_reference_vertical_axis >= 0) {
    axis = o->ground_reference_vertical_axis;
  } else {
    const double ax = fabs(sd[0]), ay = fabs(sd[1]), az = fabs(sd[2]);
    if (ay > ax && ay >= az)
      axis = 1;
    else if (az > ax && az > ay)
      axis = 2;
  }
  f->axis = axis;
  f->ratio = sd[axis] != 0 ? td[axis] / sd[axis] : 1.0;
  return 0;
}

/* _fixRootPosition and _fixGroundReference over the root's position keys. */
static void fix_root(const rt_ctx *x, sk_anim_clip *out, const rt_fix *f, bool ground) {
  const sk_skeleton *ss = x->src->s, *ds = x->dst->s;
  const float *stop = x->src_has_top ? x->src_top : NULL, *dtop = x->dst_has_top ? x->dst_top : NULL;
  const float *pt = parent_world(ds, x->dst_world, dtop, f->dst_root);
  float inv_pt[16];
  if (pt != NULL)
    sk_mat_invert(pt, inv_pt);
  else
    sk_mat_identity(inv_pt);
  const float *swp = x->src_world + (size_t)f->src_root * 16, *twp = x->dst_world + (size_t)f->dst_root * 16;
  sk_anim_channel *rp = f->root_pos;
  for (size_t k = 0; k < rp->count; k++) {
    const double frame = rp->frames[k];
    double *v = rp->values64 + k * 9;
    float m[16];
    pose_at(x->pose, x->src->a->rest, ss->count, x->clip->channels, x->clip->channel_count, frame);
    if (!ground) {
      world_of(ss, x->pose, stop, f->src_root, x->scratch, m);
      double off[3];
      for (int i = 0; i < 3; i++) {
        off[i] = (double)m[12 + i] - (double)swp[12 + i];
        off[i] *= f->ratio;
        off[i] += (double)twp[12 + i];
      }
      transform_normal(off, inv_pt, v);
      continue;
    }
    world_of(ss, x->pose, stop, f->src_ground, x->scratch, m);
    const double sg = m[12 + f->axis];
    pose_at(x->pose, x->dst_trs, ds->count, out->channels, out->channel_count, frame);
    world_of(ds, x->pose, dtop, f->dst_ground, x->scratch, m);
    const double d[3] = {f->axis == 0 ? (double)m[12] - sg : 0, f->axis == 1 ? (double)m[13] - sg : 0,
                         f->axis == 2 ? (double)m[14] - sg : 0};
    double local[3];
    transform_normal(d, inv_pt, local);
    for (int i = 0; i < 3; i++)
      v[i] -= local[i];
  }
}

/* _fixAnimationGroup: a rotation key nearly orthogonal to the one before
 * copies it. */
static void fix_animations(sk_anim_clip *out) {
  for (size_t c = 0; c < out->channel_count; c++) {
    sk_anim_channel *ch = &out->channels[c];
    if (ch->path != SK_ANIM_ROTATION)
      continue;
    for (size_t j = 0; j + 1 < ch->count; j++) {
      double *cur = ch->values64 + j * 12, *next = cur + 12;
      if (fabs(cur[0] * next[0] + cur[1] * next[1] + cur[2] * next[2] + cur[3] * next[3]) < 0.001) {
        memcpy(next, cur, 4 * sizeof *cur);
        j += 1;
      }
    }
  }
}

size_t sk_retarget_cost(const sk_retarget_side *src, size_t clip, const sk_retarget_side *dst,
                        const sk_retarget_opts *o) {
  const sk_anim_clip *c = &src->a->clips[clip];
  size_t keys = 0, max_keys = 0;
  for (size_t k = 0; k < c->channel_count; k++) {
    keys += c->channels[k].count;
    if (c->channels[k].count > max_keys)
      max_keys = c->channels[k].count;
  }
  const size_t bones = src->s->count + dst->s->count + src->above_count + dst->above_count;
  size_t cost = 8 * keys + 2 * bones;
  if (o->ground_reference_node_name != NULL && (o->fix_root_position || o->fix_ground_reference)) {
    const size_t per = 2 * (bones + 2 * c->channel_count + 16);
    if (max_keys != 0 && per > (SIZE_MAX - cost) / max_keys)
      return SIZE_MAX;
    cost += max_keys * per;
  }
  return cost;
}

void sk_retarget_clip_free(sk_anim_clip *c) {
  if (c == NULL)
    return;
  for (size_t k = 0; k < c->channel_count; k++) {
    free(c->channels[k].frames);
    free(c->channels[k].values);
    free(c->channels[k].values64);
    free(c->channels[k].key_flags);
  }
  free(c->channels);
  free(c->name);
  memset(c, 0, sizeof *c);
}

static int build(rt_ctx *x, sk_anim_clip *out, sk_error *err) {
  const sk_retarget_opts *o = x->o;
  const sk_anim_clip *c = x->clip;
  const char *name = o->animation_group_name != NULL ? o->animation_group_name : c->name;
  out->name = strdup(name);
  out->named = true; /* Babylon names the group, "animation<k>" included */
  out->end_frame = c->end_frame;
  out->channels = calloc(c->channel_count + 1, sizeof *out->channels);
  if (out->name == NULL || out->channels == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    const int32_t tb = sk_skeleton_find(x->dst->s, x->mapped[ch->bone]);
    if (ch->path > SK_ANIM_SCALE || tb < 0 || (o->check_hierarchy && !hierarchy_matches(x, tb)))
      continue; /* Babylon removes the animation */
    sk_anim_channel *nc = &out->channels[out->channel_count++];
    if (copy_channel(ch, tb, nc) != 0)
      return sk_error_set(err, SK_ENOMEM, "", "out of memory");
    if (o->retarget_animation_keys)
      retarget_keys(x, ch->bone, tb, nc);
  }
  out->gltf_channels = out->channel_count;
  if (out->channel_count == 0)
    return set_err(err, SK_EUNKNOWN, o->map_count > 0 ? "mapNodeNames" : NULL,
                   "no bone of the %s clip maps onto a bone of the target: no common root", "source");
  if (o->fix_animations)
    fix_animations(out);
  if ((o->fix_root_position || o->fix_ground_reference) && o->ground_reference_node_name != NULL) {
    rt_fix f;
    int rc = find_fix(x, out, &f, err);
    if (rc != 0)
      return rc;
    if (o->fix_root_position)
      fix_root(x, out, &f, false);
    if (o->fix_ground_reference)
      fix_root(x, out, &f, true);
  }
  return 0;
}

/* A Babylon-format target: bones without transform nodes. After
 * returnToRest() and prepare() a bone's local matrix is its rest matrix
 * and its final matrix rest · parent's final, in the skeleton's space
 * (no mesh: no initial skin matrix, nothing above). */
static void babylon_worlds(const sk_skeleton *s, float *world) {
  for (size_t b = 0; b < s->count; b++) {
    const int32_t p = s->bones[b].parent;
    if (p >= 0)
      sk_mat_mul(s->bones[b].rest, world + (size_t)p * 16, world + b * 16);
    else
      memcpy(world + b * 16, s->bones[b].rest, 16 * sizeof *world);
  }
}

int sk_retarget_clip(const sk_retarget_side *src, size_t clip, const sk_retarget_side *dst,
                     const sk_retarget_opts *o, sk_anim_clip *out, sk_error *err) {
  memset(out, 0, sizeof *out);
  if (src->a->babylon)
    return sk_error_set(err, SK_EUNSUPPORTED, "/from",
                        "retargeting takes glTF clips (Babylon-format clips: copyAnimationRange)");
  const bool babylon_dst = dst->a == NULL || dst->a->babylon;
  if (babylon_dst && o->ground_reference_node_name != NULL && (o->fix_root_position || o->fix_ground_reference))
    return set_err(err, SK_EUNSUPPORTED, "groundReferenceNodeName",
                   "root and ground fixing onto a Babylon-format skeleton (bones without transform nodes) is %s",
                   "not supported");
  if (o->fix_ground_reference_dynamic_ref_node)
    return set_err(err, SK_EUNSUPPORTED, "fixGroundReferenceDynamicRefNode", "%s is not supported",
                   "fixGroundReferenceDynamicRefNode");
  rt_ctx x = {.src = src, .dst = dst, .clip = &src->a->clips[clip], .o = o};
  const size_t ns = src->s->count, nd = dst->s->count, nmax = ns > nd ? ns : nd;
  x.mapped = malloc((ns + 1) * sizeof *x.mapped);
  x.dst_trs = malloc((nd + 1) * SK_ANIM_TRS * sizeof *x.dst_trs);
  x.src_world = malloc((ns + 1) * 16 * sizeof *x.src_world);
  x.dst_world = malloc((nd + 1) * 16 * sizeof *x.dst_world);
  x.pose = malloc((nmax + 1) * SK_ANIM_TRS * sizeof *x.pose);
  x.scratch = malloc((nmax + 1) * 16 * sizeof *x.scratch);
  int rc;
  if (x.mapped == NULL || x.dst_trs == NULL || x.src_world == NULL || x.dst_world == NULL || x.pose == NULL ||
      x.scratch == NULL) {
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
    goto done;
  }
  if ((rc = resolve_map(&x, err)) != 0)
    goto done;
  /* Skeleton.returnToRest(): bones with a slot take the decomposed rest
   * matrix; the others keep what they hold (the glTF TRS). */
  for (size_t b = 0; b < nd; b++) {
    double *t = x.dst_trs + b * SK_ANIM_TRS;
    if (dst->s->bones[b].index >= 0 || babylon_dst)
      sk_mat_decompose(dst->s->bones[b].rest, t + 7, t + 3, t);
    else
      memcpy(t, dst->a->rest + b * SK_ANIM_TRS, SK_ANIM_TRS * sizeof *t);
  }
  x.src_has_top = top_world(src, x.src_top);
  x.dst_has_top = top_world(dst, x.dst_top);
  worlds(src->s, src->a->rest, x.src_has_top ? x.src_top : NULL, x.src_world);
  if (babylon_dst)
    babylon_worlds(dst->s, x.dst_world);
  else
    worlds(dst->s, x.dst_trs, x.dst_has_top ? x.dst_top : NULL, x.dst_world);
  rc = build(&x, out, err);
done:
  if (rc != 0)
    sk_retarget_clip_free(out);
  free(x.mapped);
  free(x.dst_trs);
  free(x.src_world);
  free(x.dst_world);
  free(x.pose);
  free(x.scratch);
  return rc;
}

static int copy_clip(const sk_anim_clip *c, sk_anim_clip *d) {
  *d = *c;
  d->events = (sk_events){0, NULL}; /* copied below, never shared */
  d->name = strdup(c->name);
  d->channels = calloc(c->channel_count + 1, sizeof *d->channels);
  if (d->name == NULL || d->channels == NULL || sk_events_copy(&d->events, &c->events) != 0)
    return SK_ENOMEM;
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *s = &c->channels[k];
    sk_anim_channel *t = &d->channels[k];
    const size_t w = (size_t)(s->path == SK_ANIM_MATRIX ? 16 : path_width(s->path));
    const size_t nf = s->path == SK_ANIM_MATRIX ? 16 : w * (s->interp == SK_ANIM_CUBICSPLINE ? 3 : 1);
    *t = *s;
    t->frames = NULL, t->values = NULL, t->values64 = NULL, t->key_flags = NULL;
    t->frames = malloc(s->count * sizeof *t->frames);
    if (t->frames == NULL)
      return SK_ENOMEM;
    memcpy(t->frames, s->frames, s->count * sizeof *t->frames);
    if (s->values != NULL && (t->values = malloc(s->count * nf * sizeof *t->values)) == NULL)
      return SK_ENOMEM;
    if (s->values != NULL)
      memcpy(t->values, s->values, s->count * nf * sizeof *t->values);
    if (s->values64 != NULL && (t->values64 = malloc(s->count * 3 * w * sizeof *t->values64)) == NULL)
      return SK_ENOMEM;
    if (s->values64 != NULL)
      memcpy(t->values64, s->values64, s->count * 3 * w * sizeof *t->values64);
    if (s->key_flags != NULL && (t->key_flags = malloc(s->count)) == NULL)
      return SK_ENOMEM;
    if (s->key_flags != NULL)
      memcpy(t->key_flags, s->key_flags, s->count);
  }
  return 0;
}

int sk_retarget_append(const sk_anim *a, sk_anim_clip *clip, sk_anim **out, sk_error *err) {
  *out = NULL;
  for (size_t c = 0; c < a->clip_count; c++)
    if (strcmp(a->clips[c].name, clip->name) == 0)
      return sk_error_set(err, SK_EDUPLICATE, "/retarget/animationGroupName",
                          "the target already has a clip \"%.128s\"", clip->name);
  sk_anim *n = calloc(1, sizeof *n);
  if (n == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  n->bone_count = a->bone_count;
  n->rest = malloc((a->bone_count + 1) * SK_ANIM_TRS * sizeof *n->rest);
  n->clips = calloc(a->clip_count + 1, sizeof *n->clips);
  if (n->rest == NULL || n->clips == NULL) {
    sk_anim_destroy(n);
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  }
  memcpy(n->rest, a->rest, a->bone_count * SK_ANIM_TRS * sizeof *n->rest);
  if (sk_anim_nodes_copy(a->nodes, &n->nodes) != 0) {
    sk_anim_destroy(n);
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  }
  for (size_t c = 0; c < a->clip_count; c++) {
    n->clip_count++;
    if (copy_clip(&a->clips[c], &n->clips[c]) != 0) {
      sk_anim_destroy(n);
      return sk_error_set(err, SK_ENOMEM, "", "out of memory");
    }
  }
  n->clips[n->clip_count++] = *clip;
  memset(clip, 0, sizeof *clip);
  *out = n;
  return 0;
}

/* ---- the clips part of a record (proto/record.md) ---- */

static int put_le(sk_strbuf *b, uint64_t v, int bytes) {
  unsigned char p[8];
  for (int i = 0; i < bytes; i++)
    p[i] = (unsigned char)(v >> (8 * i));
  return sk_strbuf_append(b, (const char *)p, (size_t)bytes);
}

static int put_f64(sk_strbuf *b, double d) {
  uint64_t v;
  memcpy(&v, &d, sizeof v);
  return put_le(b, v, 8);
}

int sk_retarget_clips_encode(const sk_anim *a, sk_strbuf *out) {
  uint32_t n = 0;
  for (size_t c = 0; a != NULL && !a->babylon && c < a->clip_count; c++)
    n += a->clips[c].channel_count > 0 && a->clips[c].channels[0].values64 != NULL;
  if (n == 0)
    return 0;
  int rc = put_le(out, n, 4);
  for (size_t c = 0; !rc && c < a->clip_count; c++) {
    const sk_anim_clip *cl = &a->clips[c];
    if (cl->channel_count == 0 || cl->channels[0].values64 == NULL)
      continue;
    const size_t nl = strlen(cl->name);
    rc = put_le(out, nl, 4) || sk_strbuf_append(out, cl->name, nl) || put_le(out, cl->named, 1) ||
         put_f64(out, cl->end_frame) || put_le(out, cl->channel_count, 4);
    for (size_t k = 0; !rc && k < cl->channel_count; k++) {
      const sk_anim_channel *ch = &cl->channels[k];
      const size_t w = (size_t)path_width(ch->path);
      rc = put_le(out, (uint32_t)ch->bone, 4) || put_le(out, (uint64_t)ch->path, 1) ||
           put_le(out, (uint64_t)ch->interp, 1) || put_le(out, ch->key_flags != NULL, 1) || put_le(out, ch->count, 4);
      for (size_t i = 0; !rc && i < ch->count; i++)
        rc = put_f64(out, ch->frames[i]);
      for (size_t i = 0; !rc && i < ch->count * 3 * w; i++)
        rc = put_f64(out, ch->values64[i]);
      if (!rc && ch->key_flags != NULL)
        rc = sk_strbuf_append(out, (const char *)ch->key_flags, ch->count);
    }
  }
  return rc || out->failed ? SK_ENOMEM : 0;
}

typedef struct rd {
  const unsigned char *p;
  size_t len, at;
  bool bad;
} rd;

static uint64_t get_le(rd *r, int bytes) {
  if (r->bad || r->len - r->at < (size_t)bytes) {
    r->bad = true;
    return 0;
  }
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t)r->p[r->at + (size_t)i] << (8 * i);
  r->at += (size_t)bytes;
  return v;
}

static double get_f64(rd *r) {
  uint64_t v = get_le(r, 8);
  double d;
  memcpy(&d, &v, sizeof d);
  return d;
}

static int decode_channel(rd *r, size_t bones, sk_anim_channel *ch) {
  ch->bone = (int32_t)(uint32_t)get_le(r, 4);
  ch->path = (int)get_le(r, 1);
  ch->interp = (int)get_le(r, 1);
  const uint64_t flags = get_le(r, 1), n = get_le(r, 4);
  if (r->bad || ch->bone < 0 || (size_t)ch->bone >= bones || ch->path > SK_ANIM_SCALE || ch->interp > 2 ||
      flags > 1 || n == 0 || n > (r->len - r->at) / 8)
    return SK_EFORMAT;
  const size_t w = (size_t)path_width(ch->path);
  ch->count = (size_t)n;
  ch->frames = malloc(ch->count * sizeof *ch->frames);
  ch->values64 = malloc(ch->count * 3 * w * sizeof *ch->values64);
  ch->key_flags = flags ? malloc(ch->count) : NULL;
  if (ch->frames == NULL || ch->values64 == NULL || (flags && ch->key_flags == NULL))
    return SK_ENOMEM;
  for (size_t i = 0; i < ch->count; i++) {
    ch->frames[i] = get_f64(r);
    if (!isfinite(ch->frames[i]) || (i > 0 && ch->frames[i] < ch->frames[i - 1]))
      return SK_EFORMAT;
  }
  for (size_t i = 0; i < ch->count * 3 * w; i++)
    ch->values64[i] = get_f64(r);
  for (size_t i = 0; flags && i < ch->count; i++)
    ch->key_flags[i] = (uint8_t)get_le(r, 1);
  return r->bad ? SK_EFORMAT : 0;
}

static int decode_clip(rd *r, size_t bones, sk_anim_clip *c) {
  const uint64_t nl = get_le(r, 4);
  if (r->bad || nl == 0 || nl > r->len - r->at || memchr(r->p + r->at, 0, (size_t)nl) != NULL)
    return SK_EFORMAT;
  if ((c->name = strndup((const char *)r->p + r->at, (size_t)nl)) == NULL)
    return SK_ENOMEM;
  r->at += (size_t)nl;
  c->named = get_le(r, 1) != 0;
  c->end_frame = get_f64(r);
  const uint64_t n = get_le(r, 4);
  if (r->bad || !isfinite(c->end_frame) || n == 0 || n > (r->len - r->at) / 11)
    return SK_EFORMAT;
  if ((c->channels = calloc((size_t)n, sizeof *c->channels)) == NULL)
    return SK_ENOMEM;
  for (size_t k = 0; k < n; k++) {
    c->channel_count++;
    int rc = decode_channel(r, bones, &c->channels[k]);
    if (rc)
      return rc;
  }
  c->gltf_channels = c->channel_count;
  return 0;
}

int sk_retarget_clips_decode(const sk_anim *a, const void *data, size_t len, sk_anim **out) {
  *out = NULL;
  rd r = {.p = data, .len = len};
  const uint64_t n = get_le(&r, 4);
  if (r.bad || n == 0 || n > len || a->babylon)
    return SK_EFORMAT;
  sk_anim *cur = (sk_anim *)a;
  sk_anim_ref(cur);
  int rc = 0;
  for (uint64_t i = 0; !rc && i < n; i++) {
    sk_anim_clip c;
    memset(&c, 0, sizeof c);
    sk_anim *next = NULL;
    if ((rc = decode_clip(&r, a->bone_count, &c)) == 0)
      rc = sk_retarget_append(cur, &c, &next, NULL) == SK_ENOMEM ? SK_ENOMEM : next == NULL ? SK_EFORMAT : 0;
    sk_retarget_clip_free(&c);
    if (!rc) {
      sk_anim_destroy(cur);
      cur = next;
    }
  }
  if (!rc && r.at != len)
    rc = SK_EFORMAT;
  if (rc) {
    sk_anim_destroy(cur);
    return rc;
  }
  *out = cur;
  return 0;
}
