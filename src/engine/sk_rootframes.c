/* sk_rootframes: "rootMotion" on the pose forms. The clip is analysed
 * with its in-place channels (sk_rootmotion), the poses sampled as for
 * any clip get the in-place root, and each pose's motion is the
 * controller's: _motionBetween from progress 0 and from the frame
 * before. Progress is the clock's, frames since fromFrame unwrapped
 * across loops; without loop it holds at the range's end as a playback
 * that does not loop does. */
#include "sk_rootframes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_budget.h"
#include "sk_gltf_mesh.h"
#include "sk_json.h"
#include "sk_numfmt.h"

static int bone_of(const sk_skeleton *s, const json_t *v, const char *p, int32_t *out, sk_error *err) {
  const char *name = json_string_value(v);
  if (name == NULL)
    return sk_error_set(err, SK_ETYPE, p, "a bone name");
  if ((*out = sk_skeleton_find(s, name)) < 0) {
    sk_json_no_bone(s, name, p, err);
    return err != NULL ? (err->code = SK_EUNKNOWN) : SK_EUNKNOWN;
  }
  return 0;
}

/* The options under Babylon's names into o (contacts into `contacts`). */
static int parse_opts(const sk_skeleton *s, const json_t *rj, const char *ptr, sk_rootmotion_opts *o,
                      int32_t *contacts, sk_error *err) {
  static const char *const k_keys[] = {"source",      "extractRotation",    "samplesPerSecond",     "minimumTravel",
                                       "minimumTurn", "directionSnapAngle", "extractLateralMotion", "rootNode",
                                       "contactNodes", NULL};
  char p[SK_ERROR_POINTER_MAX];
  if (!json_is_object(rj))
    return sk_error_set(err, SK_ETYPE, ptr, "rootMotion is an object of RootMotionClip options, {} for the defaults");
  int rc = sk_json_check_keys(rj, ptr, k_keys, NULL, err);
  sk_rootmotion_opts_default(o);
  o->in_place = true;
  const json_t *v;
  bool b;
  if (!rc && (v = json_object_get(rj, "source")) != NULL) {
    const char *src = json_string_value(v);
    sk_pointer_child(p, sizeof p, ptr, "source");
    if (src != NULL && strcmp(src, "root") == 0)
      o->source = SK_RM_ROOT;
    else if (src != NULL && strcmp(src, "footContact") == 0)
      o->source = SK_RM_FOOT_CONTACT;
    else
      rc = sk_error_set(err, SK_ERANGE, p, "source is \"root\" or \"footContact\"");
  }
  if (!rc && (v = json_object_get(rj, "extractRotation")) != NULL &&
      !(rc = sk_json_member_bool(v, ptr, "extractRotation", &b, err)))
    o->extract_rotation = b;
  if (!rc && (v = json_object_get(rj, "extractLateralMotion")) != NULL)
    rc = sk_json_member_bool(v, ptr, "extractLateralMotion", &o->extract_lateral_motion, err);
  if (!rc && (v = json_object_get(rj, "samplesPerSecond")) != NULL)
    rc = sk_json_member_number(v, ptr, "samplesPerSecond", &o->samples_per_second, err);
  if (!rc && (v = json_object_get(rj, "minimumTravel")) != NULL)
    rc = sk_json_member_number(v, ptr, "minimumTravel", &o->minimum_travel, err);
  if (!rc && (v = json_object_get(rj, "minimumTurn")) != NULL)
    rc = sk_json_member_number(v, ptr, "minimumTurn", &o->minimum_turn, err);
  if (!rc && (v = json_object_get(rj, "directionSnapAngle")) != NULL) {
    rc = sk_json_member_number(v, ptr, "directionSnapAngle", &o->direction_snap_angle, err);
    o->has_snap = true;
  }
  if (!rc && (v = json_object_get(rj, "rootNode")) != NULL) {
    sk_pointer_child(p, sizeof p, ptr, "rootNode");
    rc = bone_of(s, v, p, &o->root_node, err);
  }
  if (!rc && (v = json_object_get(rj, "contactNodes")) != NULL) {
    sk_pointer_child(p, sizeof p, ptr, "contactNodes");
    if (!json_is_array(v) || json_array_size(v) > SK_ROOTFRAMES_CONTACTS_MAX)
      return sk_error_set(err, SK_ETYPE, p, "contactNodes is an array of at most %d bone names",
                          SK_ROOTFRAMES_CONTACTS_MAX);
    for (size_t i = 0; !rc && i < json_array_size(v); i++) {
      char q[SK_ERROR_POINTER_MAX];
      memcpy(q, p, sizeof q);
      sk_pointer_push_index(q, sizeof q, i);
      rc = bone_of(s, json_array_get(v, i), q, &contacts[i], err);
    }
    o->contact_nodes = contacts, o->contact_count = json_array_size(v);
  }
  return rc;
}

/* The clip of pose object `j`, refusing what rootMotion does not go with. */
static int pose_clip(const sk_model *e, const json_t *j, const char *ptr, size_t *clip, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sk_pointer_child(p, sizeof p, ptr, "rootMotion");
  const json_t *a = json_object_get(j, "animation");
  if (a == NULL || e->anim == NULL)
    return sk_error_set(err, SK_ERANGE, p, "rootMotion goes with \"animation\" (one clip, no \"layers\")");
  if (json_object_get(j, "bones") != NULL)
    return sk_error_set(err, SK_ERANGE, p, "rootMotion plays the clip in place: it takes no \"bones\" on top");
  if (e->anim->babylon)
    return sk_error_set(err, SK_ERANGE, p, "rootMotion takes glTF clips; this skeleton's clips are Babylon-format");
  const char *name = json_string_value(a);
  char num[32];
  if (json_is_integer(a) && json_integer_value(a) >= 0) {
    snprintf(num, sizeof num, "%lld", (long long)json_integer_value(a));
    name = num;
  }
  /* an unknown clip is the sampler's to refuse, with its own message */
  return name == NULL || sk_anim_find_clip(e->anim, name, clip) != 0 ? 1 : 0;
}

/* Whether `rf` answers clip `clip` with options `o`: the same options, the
 * in-place channels made when `o` asks for them (an analysis with them
 * answers one without). */
static bool same_opts(const sk_rootframes *rf, size_t clip, const sk_rootmotion_opts *o) {
  const sk_rootmotion_opts *k = &rf->o;
  return rf->clip == clip && (k->in_place || !o->in_place) && k->source == o->source &&
         k->extract_rotation == o->extract_rotation &&
         memcmp(&k->samples_per_second, &o->samples_per_second, sizeof(double)) == 0 &&
         memcmp(&k->minimum_travel, &o->minimum_travel, sizeof(double)) == 0 &&
         memcmp(&k->minimum_turn, &o->minimum_turn, sizeof(double)) == 0 && k->has_snap == o->has_snap &&
         (!o->has_snap || memcmp(&k->direction_snap_angle, &o->direction_snap_angle, sizeof(double)) == 0) &&
         k->extract_lateral_motion == o->extract_lateral_motion && memcmp(k->up, o->up, sizeof k->up) == 0 &&
         k->root_node == o->root_node && (k->contact_nodes == NULL) == (o->contact_nodes == NULL) &&
         k->contact_count == o->contact_count &&
         (o->contact_count == 0 || memcmp(k->contact_nodes, o->contact_nodes, o->contact_count * sizeof(int32_t)) == 0);
}

static sk_rootframes *memo_find(const sk_model *e, size_t clip, const sk_rootmotion_opts *o) {
  for (size_t k = 0; k < SK_MODEL_ROOTFRAMES; k++) {
    sk_rootframes *rf = __atomic_load_n(&e->rootframes[k], __ATOMIC_ACQUIRE);
    if (rf == NULL)
      break; /* slots fill in order */
    if (same_opts(rf, clip, o))
      return rf;
  }
  return NULL;
}

/* Keeps `rf` in a free slot of `e` when its budget has room: true, kept. */
static bool memo_keep(const sk_model *e, sk_rootframes *rf) {
  if (sk_budget_reserve(e->budget, rf->bytes) != 0)
    return false;
  sk_model *m = (sk_model *)e; /* the memo is the one thing a published model grows */
  for (size_t k = 0; k < SK_MODEL_ROOTFRAMES; k++) {
    sk_rootframes *expected = NULL;
    if (__atomic_compare_exchange_n(&m->rootframes[k], &expected, rf, false, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
      return true;
    if (same_opts(expected, rf->clip, &rf->o) && same_opts(rf, expected->clip, &expected->o))
      break; /* another request made the same one first */
  }
  sk_budget_release(e->budget, rf->bytes);
  return false;
}

static size_t held_bytes(const sk_rootframes *rf) {
  const sk_rootmotion *rm = &rf->rm;
  size_t b = sizeof *rf + (rm->samples + 1) * 4 * sizeof(float) + rm->contact_count * sizeof(int32_t);
  for (int k = 0; k < 2; k++)
    b += rm->inplace[k].count * (k == 0 ? 4 : 5) * sizeof(double) +
         (rm->inplace[k].tangents != NULL ? rm->inplace[k].count * (k == 0 ? 6 : 8) * sizeof(double) : 0);
  return b;
}

sk_rootframes *sk_rootframes_find(const sk_model *e, size_t clip, const sk_rootmotion_opts *o) {
  return memo_find(e, clip, o);
}

int sk_rootframes_get(const sk_model *e, size_t clip, const sk_rootmotion_opts *o, sk_rootframes **out, bool *owned,
                      sk_error *err) {
  *out = NULL;
  *owned = false;
  sk_rootframes *hit = memo_find(e, clip, o);
  if (hit != NULL) {
    *out = hit;
    return 0;
  }
  if (o->contact_count > SK_ROOTFRAMES_CONTACTS_MAX)
    return sk_error_set(err, SK_ERANGE, "/contactNodes", "at most %d contactNodes", SK_ROOTFRAMES_CONTACTS_MAX);
  sk_rootframes *rf = calloc(1, sizeof *rf);
  double *above = NULL;
  size_t na = 0;
  if (rf == NULL || sk_gltf_mesh_chain_above(e->mesh_json, false, &above, &na) != 0) {
    free(rf);
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  }
  rf->clip = clip;
  rf->o = *o;
  if (o->contact_nodes != NULL) {
    memcpy(rf->contacts, o->contact_nodes, o->contact_count * sizeof *rf->contacts);
    rf->o.contact_nodes = rf->contacts;
  }
  int rc = sk_rootmotion_analyze(e->skel, e->anim, clip, above, na, &rf->o, &rf->rm, err);
  free(above);
  if (rc) {
    free(rf);
    return rc;
  }
  rf->bytes = held_bytes(rf);
  *owned = !memo_keep(e, rf);
  *out = rf;
  return 0;
}

int sk_rootframes_parse(const sk_model *e, const json_t *j, const char *ptr, sk_rootframes **out, bool *owned,
                        sk_error *err) {
  *out = NULL;
  *owned = false;
  char p[SK_ERROR_POINTER_MAX];
  sk_pointer_child(p, sizeof p, ptr, "rootMotion");
  size_t clip = 0;
  int rc = pose_clip(e, j, ptr, &clip, err);
  if (rc != 0)
    return rc < 0 ? rc : 0; /* 1: left to the sampler */
  sk_rootmotion_opts o;
  int32_t contacts[SK_ROOTFRAMES_CONTACTS_MAX];
  if ((rc = parse_opts(e->skel, json_object_get(j, "rootMotion"), p, &o, contacts, err)) != 0)
    return rc;
  sk_error inner;
  sk_error_clear(&inner);
  if ((rc = sk_rootframes_get(e, clip, &o, out, owned, &inner)) != 0) {
    /* the analysis names its options from the root: under rootMotion here */
    char q[SK_ERROR_POINTER_MAX];
    memcpy(q, p, sizeof q);
    if (strlen(p) + strlen(inner.pointer) < sizeof q)
      strcat(q, inner.pointer);
    rc = rc == SK_EFORMAT ? SK_ERANGE : rc;
    sk_error_set(err, rc, q, "%s", inner.text);
  }
  return rc;
}

void sk_rootframes_free(sk_rootframes *rf) {
  if (rf == NULL)
    return;
  sk_rootmotion_free(&rf->rm);
  free(rf);
}

void sk_rootframes_memo_release(sk_model *m) {
  for (size_t k = 0; k < SK_MODEL_ROOTFRAMES && m->rootframes[k] != NULL; k++) {
    sk_budget_release(m->budget, m->rootframes[k]->bytes);
    sk_rootframes_free(m->rootframes[k]);
    m->rootframes[k] = NULL;
  }
}

size_t sk_rootframes_memo_count(const sk_model *m) {
  size_t n = 0;
  while (n < SK_MODEL_ROOTFRAMES && __atomic_load_n(&m->rootframes[n], __ATOMIC_ACQUIRE) != NULL)
    n++;
  return n;
}

uint64_t sk_rootframes_cost(const sk_skeleton *s, const sk_anim *anim, const json_t *j) {
  const json_t *rj = json_object_get(j, "rootMotion");
  const json_t *a = json_object_get(j, "animation");
  size_t clip = 0;
  if (rj == NULL || anim == NULL || a == NULL)
    return 0;
  if (json_is_integer(a))
    clip = (size_t)json_integer_value(a);
  else if (!json_is_string(a) || sk_anim_find_clip(anim, json_string_value(a), &clip) != 0)
    return 0;
  if (clip >= anim->clip_count)
    return 0;
  sk_rootmotion_opts o;
  sk_rootmotion_opts_default(&o);
  double sps = json_number_value(json_object_get(rj, "samplesPerSecond"));
  if (sps > 0 && sps <= SK_RM_MAX_SAMPLES_PER_SECOND)
    o.samples_per_second = sps;
  /* the analysis, then the in-place keys: two chains a root key */
  size_t keys = 0;
  for (size_t k = 0; k < anim->clips[clip].channel_count; k++)
    keys += anim->clips[clip].channels[k].count;
  const size_t above = 8; /* a mesh chain's nodes above the skeleton: a bound in practice */
  uint64_t c = sk_rootmotion_cost(s, anim, clip, above, &o);
  return c == SIZE_MAX ? UINT64_MAX : c + (uint64_t)keys * 2 * (s->count + above);
}

/* The clock's progress at `t` seconds: frames since fromFrame, unwrapped
 * with loop, held within [0, range] without. */
static double progress_at(const sk_rootframes *rf, bool loop, double t) {
  const sk_rootmotion *rm = &rf->rm;
  double p = t * SK_ANIM_FPS - rm->from_frame, range = rm->to_frame - rm->from_frame;
  if (!loop)
    p = p < 0 ? 0 : p > range ? range : p;
  return p;
}

static void motion(const sk_rootframes *rf, double last, double now, double *v) {
  const sk_rootmotion *rm = &rf->rm;
  v[3] = sk_rootmotion_motion_between(rm, rm->from_frame, rm->to_frame, last, now, v);
}

int sk_rootframes_apply(const sk_rootframes *rf, const sk_anim *anim, const json_t *j, sk_pose *poses, size_t n,
                        double *values) {
  sk_pose_clock clk;
  if (sk_pose_anim_clock(anim, j, &clk) != 0)
    return SK_ENOMEM;
  const json_t *fr = json_object_get(j, "frames");
  const double fps = json_number_value(json_object_get(j, "fps"));
  const double start = json_is_array(fr) ? json_number_value(json_array_get(fr, 0)) : 0;
  const sk_anim_clip *c = &anim->clips[rf->clip];
  const int32_t root = rf->rm.root_node;
  for (size_t i = 0; i < n; i++) {
    const double t = clk.times != NULL && i < clk.n ? clk.times[i] : clk.time;
    double *v = values + i * SK_ROOTFRAMES_VALUES;
    const double now = progress_at(rf, clk.loop, t);
    motion(rf, 0, now, v);
    /* the frame before: k - 1 of "frames" (chunks of a bake answer as the
     * whole bake), the previous time of other ranges; none for the first */
    double before = now;
    if (fr != NULL && start + (double)i > 0)
      before = progress_at(rf, clk.loop, (start + (double)i - 1) / fps);
    else if (clk.times != NULL && i > 0 && i - 1 < clk.n)
      before = progress_at(rf, clk.loop, clk.times[i - 1]);
    motion(rf, before, now, v + 4);
    if (root < 0)
      continue;
    for (size_t k = 0; k < poses[i].count; k++) {
      sk_override *o = &poses[i].overrides[k];
      if (o->bone == root)
        sk_rootmotion_inplace_at(&rf->rm, sk_anim__clip_frame(c, t, clk.loop), o->position, o->rotation);
    }
  }
  free(clk.times);
  free(clk.layer);
  return 0;
}

static int put_num(sk_strbuf *b, const char *key, double v) {
  char num[SK_NUMFMT_F64_MAX + 1];
  size_t n = sk_numfmt_f64(v == 0 ? 0 : v, num);
  return sk_strbuf_append(b, key, strlen(key)) || sk_strbuf_append(b, num, n);
}

int sk_rootframes_write_json(const double *v, sk_strbuf *out) {
  int rc = 0;
  static const char *const k[8] = {"\"rootMotion\":{\"offset\":[", ",", ",", "],\"turn\":",
                                   ",\"deltaOffset\":[", ",", ",", "],\"deltaTurn\":"};
  for (int i = 0; i < 8 && !rc; i++)
    rc = put_num(out, k[i], v[i]);
  return rc || sk_strbuf_append(out, "}", 1) ? SK_ENOMEM : 0;
}
