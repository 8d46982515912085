/* sk_retarget against Babylon 9.34's AnimatorAvatar.retargetAnimationGroup,
 * bit for bit: tests/data/retarget/ (JSON) come from
 * tests/oracle/babylon_retarget.mjs (regenerate with
 * tests/oracle/gen_retarget.sh): the retargeted keys, and the target nodes'
 * TRS after goToFrame at frames across the clip. Then the refusals. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_anim.h"
#include "sk_gltf.h"
#include "sk_gltf_mesh.h"
#include "sk_json.h"
#include "sk_mat.h"
#include "sk_retarget.h"
#include "sk_retarget_json.h"
#include "sk_testutil.h"

typedef struct side {
  sk_skeleton *s;
  sk_anim *a;
  double *above;
  size_t above_count;
  sk_retarget_side rs;
} side;

static void load(const char *rel, side *sd) {
  size_t len, est;
  unsigned char *d = sk_test_read_file(rel, &len);
  ck_assert_ptr_nonnull(d);
  sk_error err;
  sk_error_clear(&err);
  sk_gltf_extra x;
  memset(&x, 0, sizeof x);
  ck_assert_msg(sk_gltf_import_extra(d, len, NULL, 0, 0, &est, false, &sd->s, &sd->a, &x, &err) == 0, "%s: %s", rel,
                err.text);
  ck_assert_int_eq(sk_gltf_mesh_chain_above(x.mesh_json, true, &sd->above, &sd->above_count), 0);
  sk_gltf_extra_clear(&x);
  free(d);
  sd->rs = (sk_retarget_side){.s = sd->s, .a = sd->a, .above = sd->above, .above_count = sd->above_count};
}

static void unload(side *sd) {
  sk_anim_destroy(sd->a);
  sk_skeleton_destroy(sd->s);
  free(sd->above);
}

static json_t *load_json(const char *rel) {
  size_t len;
  char *d = (char *)sk_test_read_file(rel, &len);
  ck_assert_ptr_nonnull(d);
  json_error_t je;
  json_t *j = json_loadb(d, len, 0, &je);
  ck_assert_msg(j != NULL, "%s: %s", rel, je.text);
  free(d);
  return j;
}

/* A skeleton in Babylon's format (Skeleton.serialize()): no clips, no
 * nodes above, bones without transform nodes. */
static void load_babylon(const char *rel, side *sd) {
  json_t *j = load_json(rel);
  sk_error err;
  sk_error_clear(&err);
  sd->a = NULL, sd->above = NULL, sd->above_count = 0;
  ck_assert_msg(sk_json_parse_skeleton_anim(j, "", 0, &sd->s, &sd->a, &err) == 0, "%s: %s", rel, err.text);
  json_decref(j);
  sd->rs = (sk_retarget_side){.s = sd->s, .a = sd->a};
}

/* The retargeted clip played on a Babylon-format target at `frame`: each
 * bone keeps its local matrix's decomposition (retargeting puts back the
 * local matrices it found) but for what its channels set (the Bone
 * setters), channels in order. */
static void babylon_pose(const sk_skeleton *s, const sk_anim_clip *c, double frame, double *trs) {
  static const int offset[3] = {0, 3, 7};
  for (size_t b = 0; b < s->count; b++) {
    double *t = trs + b * SK_ANIM_TRS;
    sk_mat_decompose(s->bones[b].local.matrix, t + 7, t + 3, t);
  }
  for (size_t k = 0; k < c->channel_count; k++)
    sk_anim__sample_babylon(&c->channels[k], frame, trs + (size_t)c->channels[k].bone * SK_ANIM_TRS + offset[c->channels[k].path]);
}

static int bad;
static size_t compared;
#define SAME(got, want, what)                                                                          \
  do {                                                                                                 \
    double g_ = (got), w_ = (want);                                                                    \
    compared++;                                                                                        \
    if (memcmp(&g_, &w_, sizeof g_) != 0 && bad++ < 20)                                                \
      fprintf(stderr, "%s: %s %.17g != %.17g\n", name, what, g_, w_);                                  \
  } while (0)

static void check_babylon_poses(const char *name, const json_t *exp, const sk_skeleton *s, const sk_anim_clip *c) {
  double *trs = malloc(s->count * SK_ANIM_TRS * sizeof *trs);
  size_t pi;
  const json_t *p;
  json_array_foreach(json_object_get(exp, "poses"), pi, p) {
    babylon_pose(s, c, json_number_value(json_object_get(p, "frame")), trs);
    size_t ni;
    const json_t *n;
    json_array_foreach(json_object_get(p, "nodes"), ni, n) {
      const int32_t b = sk_skeleton_find(s, json_string_value(json_object_get(n, "name")));
      ck_assert_int_ge(b, 0);
      for (size_t k = 0; k < SK_ANIM_TRS; k++)
        SAME(trs[(size_t)b * SK_ANIM_TRS + k], json_number_value(json_array_get(json_object_get(n, "trs"), k)), "pose");
    }
  }
  free(trs);
}

/* `name`: a committed case (data/retarget/NAME.json) or a generated one
 * (an absolute path). */
static int check_case(const char *name) {
  char path[512];
  json_t *exp;
  if (name[0] == '/') {
    json_error_t je;
    exp = json_load_file(name, 0, &je);
    ck_assert_msg(exp != NULL, "%s: %s", name, je.text);
  } else {
    snprintf(path, sizeof path, "data/retarget/%s.json", name);
    exp = load_json(path);
  }
  side src, dst;
  snprintf(path, sizeof path, "data/%s", json_string_value(json_object_get(exp, "source")));
  load(path, &src);
  const char *target = json_string_value(json_object_get(exp, "target"));
  const bool babylon = strlen(target) > 5 && strcmp(target + strlen(target) - 5, ".json") == 0;
  if (babylon) {
    snprintf(path, sizeof path, "data/retarget/%s", target);
    load_babylon(path, &dst);
  } else {
    snprintf(path, sizeof path, "data/%s", target);
    load(path, &dst);
  }
  sk_retarget_json rj;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_retarget_json_parse(json_object_get(exp, "options"), &rj, &err), 0);
  size_t clip;
  ck_assert_int_eq(sk_anim_find_clip(src.a, json_string_value(json_object_get(exp, "clip")), &clip), 0);
  sk_anim_clip out;
  int rc = sk_retarget_clip(&src.rs, clip, &dst.rs, &rj.o, &out, &err);
  if (rc == SK_EUNKNOWN && (strcmp(err.pointer, "/retarget/rootNodeName") == 0 ||
                            strcmp(err.pointer, "/retarget/groundReferenceNodeName") == 0)) {
    /* Refused where Babylon warns and skips the root fixing: Babylon's
     * answer must then be the clip without it. */
    fprintf(stderr, "%s: refused (%s), compared without root fixing\n", name, err.pointer);
    rj.o.ground_reference_node_name = NULL;
    sk_error_clear(&err);
    rc = sk_retarget_clip(&src.rs, clip, &dst.rs, &rj.o, &out, &err);
  }
  ck_assert_msg(rc == 0, "%s: %s at %s", name, err.text, err.pointer);
  bad = 0, compared = 0;
  ck_assert_str_eq(out.name, json_string_value(json_object_get(exp, "name")));
  SAME(out.end_frame, json_number_value(json_object_get(exp, "to")), "to");
  const json_t *anims = json_object_get(exp, "animations");
  ck_assert_uint_eq(out.channel_count, json_array_size(anims));
  static const char *const props[3] = {"position", "rotationQuaternion", "scaling"};
  /* Babylon's loader orders a group's animations as its accessors load;
   * each (node, property) appears once here, so they pair by name. */
  for (size_t k = 0; k < out.channel_count; k++) {
    const json_t *an = json_array_get(anims, k);
    const sk_anim_channel *ch = NULL;
    for (size_t c = 0; c < out.channel_count && ch == NULL; c++)
      if (strcmp(dst.s->bones[out.channels[c].bone].name, json_string_value(json_object_get(an, "target"))) == 0 &&
          strcmp(props[out.channels[c].path], json_string_value(json_object_get(an, "property"))) == 0)
        ch = &out.channels[c];
    ck_assert_msg(ch != NULL, "%s: no channel for %s", name, json_string_value(json_object_get(an, "target")));
    const json_t *frames = json_object_get(an, "frames"), *values = json_object_get(an, "values");
    ck_assert_uint_eq(ch->count, json_array_size(frames));
    const size_t w = ch->path == SK_ANIM_ROTATION ? 4 : 3;
    for (size_t i = 0; i < ch->count; i++) {
      SAME(ch->frames[i], json_number_value(json_array_get(frames, i)), "frame");
      for (size_t c = 0; c < w; c++)
        SAME(ch->values64[i * 3 * w + c], json_number_value(json_array_get(json_array_get(values, i), c)), "key");
    }
  }
  if (babylon) {
    check_babylon_poses(name, exp, dst.s, &out);
    fprintf(stderr, "%s: %zu channels, %zu numbers compared\n", name, out.channel_count, compared);
    sk_retarget_clip_free(&out);
    sk_retarget_json_free(&rj);
    unload(&src);
    unload(&dst);
    json_decref(exp);
    return bad;
  }
  /* Played on the target: the clip appended to its clips, sampled. */
  sk_anim *na;
  free(out.name);
  out.name = strdup("retargeted"); /* the target may have a clip of that name */
  ck_assert_int_eq(sk_retarget_append(dst.a, &out, &na, &err), 0);
  const size_t nc = na->clip_count - 1;
  double *trs = malloc(dst.s->count * SK_ANIM_TRS * sizeof *trs);
  size_t pi;
  const json_t *p;
  json_array_foreach(json_object_get(exp, "poses"), pi, p) {
    const double frame = json_number_value(json_object_get(p, "frame"));
    const double time = frame / SK_ANIM_FPS;
    if (time * SK_ANIM_FPS != frame)
      continue; /* a time cannot name this frame */
    sk_anim_sample(na, nc, time, false, trs);
    size_t ni;
    const json_t *n;
    json_array_foreach(json_object_get(p, "nodes"), ni, n) {
      const int32_t b = sk_skeleton_find(dst.s, json_string_value(json_object_get(n, "name")));
      ck_assert_int_ge(b, 0);
      for (size_t c = 0; c < SK_ANIM_TRS; c++)
        SAME(trs[(size_t)b * SK_ANIM_TRS + c], json_number_value(json_array_get(json_object_get(n, "trs"), c)),
             "pose");
    }
  }
  free(trs);
  fprintf(stderr, "%s: %zu channels, %zu numbers compared\n", name, na->clips[nc].channel_count, compared);
  sk_anim_destroy(na);
  sk_retarget_json_free(&rj);
  unload(&src);
  unload(&dst);
  json_decref(exp);
  return bad;
}

START_TEST(test_cases) {
  static const char *const cases[] = {"cesium-rigged",        "cesium-rigged-ground",    "robot-mannequiny",
                                      "robot-mannequiny-root", "robot-mannequiny-ground", "robot-mannequiny-raw",
                                      "mannequiny-cesium",    "robot-mannequiny-hierarchy", "robot-mannequiny-babylon",
                                      "cesium-rigged-babylon"};
  int total = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    total += check_case(cases[i]);
  ck_assert_int_eq(total, 0);
}
END_TEST

static int refuse(const char *opts, const char *pointer, int code) {
  side src, dst;
  load("data/CesiumMan.glb", &src);
  load("data/RiggedFigure.glb", &dst);
  json_t *j = json_loads(opts, 0, NULL);
  ck_assert_ptr_nonnull(j);
  sk_retarget_json rj;
  sk_error err;
  sk_error_clear(&err);
  int rc = sk_retarget_json_parse(json_object_get(j, "retarget"), &rj, &err);
  sk_anim_clip out;
  if (rc == 0) {
    rc = sk_retarget_clip(&src.rs, 0, &dst.rs, &rj.o, &out, &err);
    if (rc == 0)
      sk_retarget_clip_free(&out);
    sk_retarget_json_free(&rj);
  }
  ck_assert_msg(rc == code, "%s: %d (%s)", opts, rc, err.text);
  ck_assert_str_eq(err.pointer, pointer);
  json_decref(j);
  unload(&src);
  unload(&dst);
  return 0;
}

START_TEST(test_refusals) {
  refuse("{\"retarget\": {\"mapNodeNames\": {\"nope\": \"torso_joint_1\"}}}", "/retarget/mapNodeNames/nope", SK_EUNKNOWN);
  refuse("{\"retarget\": {\"mapNodeNames\": {\"leg_joint_L_1\": \"nope\"}}}", "/retarget/mapNodeNames/leg_joint_L_1",
         SK_EUNKNOWN);
  refuse("{\"retarget\": {\"mapNodeNames\": {\"leg_joint_L_1\": 3}}}", "/retarget/mapNodeNames/leg_joint_L_1", SK_ETYPE);
  refuse("{\"retarget\": {\"fixRootPositon\": true}}", "/retarget/fixRootPositon", SK_EUNKNOWN);
  refuse("{\"retarget\": {\"groundReferenceVerticalAxis\": \"W\"}}", "/retarget/groundReferenceVerticalAxis", SK_ERANGE);
  refuse("{\"retarget\": {\"fixGroundReferenceDynamicRefNode\": true}}", "/retarget/fixGroundReferenceDynamicRefNode",
         SK_EUNSUPPORTED);
  refuse("{\"retarget\": {\"groundReferenceNodeName\": \"leg_joint_L_5\", \"rootNodeName\": \"nope\"}}",
         "/retarget/rootNodeName", SK_EUNKNOWN);
  refuse("{\"retarget\": {\"groundReferenceNodeName\": \"nope\", \"rootNodeName\": \"leg_joint_L_1\"}}",
         "/retarget/groundReferenceNodeName", SK_EUNKNOWN);
}
END_TEST

/* Root and ground fixing onto bones without transform nodes is refused
 * (Babylon reads their final matrices mid-play: not modelled). */
START_TEST(root_fixing_onto_a_babylon_format_skeleton_is_refused) {
  side src, dst;
  load("data/RobotExpressive.glb", &src);
  load_babylon("data/retarget/mannequiny-0.3.0-babylon.json", &dst);
  sk_retarget_opts o;
  sk_retarget_opts_default(&o);
  static const char *const from[] = {"Body", "Foot.L"}, *const to[] = {"pelvis", "foot.l"};
  o.map_from = from, o.map_to = to, o.map_count = 2;
  o.root_node_name = "Body", o.ground_reference_node_name = "Foot.L";
  sk_error err;
  sk_error_clear(&err);
  sk_anim_clip out;
  ck_assert_int_eq(sk_retarget_clip(&src.rs, 0, &dst.rs, &o, &out, &err), SK_EUNSUPPORTED);
  ck_assert_str_eq(err.pointer, "/retarget/groundReferenceNodeName");
  o.fix_root_position = false; /* nothing to fix: retargeted */
  ck_assert_int_eq(sk_retarget_clip(&src.rs, 0, &dst.rs, &o, &out, &err), 0);
  ck_assert_uint_gt(out.channel_count, 0);
  sk_retarget_clip_free(&out);
  unload(&src);
  unload(&dst);
}
END_TEST

START_TEST(test_no_common_bone) {
  side src, dst;
  load("data/Fox.glb", &src);
  load("data/RiggedFigure.glb", &dst);
  sk_retarget_opts o;
  sk_retarget_opts_default(&o);
  sk_error err;
  sk_error_clear(&err);
  sk_anim_clip out;
  ck_assert_int_eq(sk_retarget_clip(&src.rs, 0, &dst.rs, &o, &out, &err), SK_EUNKNOWN);
  ck_assert_str_eq(err.pointer, "/retarget");
  ck_assert_uint_gt(sk_retarget_cost(&src.rs, 0, &dst.rs, &o), 0);
  unload(&src);
  unload(&dst);
}
END_TEST

START_TEST(the_clips_part_round_trips_and_damage_is_refused) {
  side src, dst;
  load("data/RobotExpressive.glb", &src);
  load("data/mannequiny-0.3.0.glb", &dst);
  sk_strbuf none = {0};
  ck_assert_int_eq(sk_retarget_clips_encode(dst.a, &none), 0);
  ck_assert_uint_eq(none.len, 0); /* a glTF file's own clips are not in it */
  sk_retarget_opts o;
  sk_retarget_opts_default(&o);
  static const char *const from[] = {"Body", "Foot.L"}, *const to[] = {"pelvis", "foot.l"};
  o.map_from = from, o.map_to = to, o.map_count = 2, o.animation_group_name = "rt";
  size_t clip;
  ck_assert_int_eq(sk_anim_find_clip(src.a, "Walking", &clip), 0);
  sk_error err;
  sk_error_clear(&err);
  sk_anim_clip c;
  ck_assert_int_eq(sk_retarget_clip(&src.rs, clip, &dst.rs, &o, &c, &err), 0);
  sk_anim *na, *back;
  ck_assert_int_eq(sk_retarget_append(dst.a, &c, &na, &err), 0);
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_retarget_clips_encode(na, &b), 0);
  ck_assert_uint_gt(b.len, 0);
  ck_assert_int_eq(sk_retarget_clips_decode(dst.a, b.data, b.len, &back), 0);
  ck_assert_uint_eq(back->clip_count, na->clip_count);
  const sk_anim_clip *x = &na->clips[na->clip_count - 1], *y = &back->clips[back->clip_count - 1];
  ck_assert_str_eq(y->name, "rt");
  ck_assert_uint_eq(y->channel_count, x->channel_count);
  for (size_t k = 0; k < x->channel_count; k++) {
    const size_t w = x->channels[k].path == SK_ANIM_ROTATION ? 4 : 3;
    ck_assert_int_eq(memcmp(x->channels[k].values64, y->channels[k].values64, x->channels[k].count * 3 * w * 8), 0);
    ck_assert_int_eq(memcmp(x->channels[k].frames, y->channels[k].frames, x->channels[k].count * 8), 0);
  }
  sk_anim *dmg;
  ck_assert_int_eq(sk_retarget_clips_decode(dst.a, b.data, b.len - 1, &dmg), SK_EFORMAT);
  ck_assert_int_eq(sk_retarget_clips_decode(na, b.data, b.len, &dmg), SK_EFORMAT); /* "rt" twice */
  b.data[4 + 4 + 2 + 1 + 8 + 4] = (char)0xff; /* the first channel's bone */
  ck_assert_int_eq(sk_retarget_clips_decode(dst.a, b.data, b.len, &dmg), SK_EFORMAT);
  sk_strbuf_free(&b);
  sk_strbuf_free(&none);
  sk_anim_destroy(back);
  sk_anim_destroy(na);
  unload(&src);
  unload(&dst);
}
END_TEST

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The scene's nodes kept with the clips, as "name<TAB>parent" lines sorted,
 * against Babylon's __root__.getDescendants() (data/retarget/scene-nodes.txt,
 * tests/oracle/babylon_scene_nodes.mjs): meshes named as joints, skinned
 * nodes twice, primitives, RecursiveSkeletons' 1008. Then a copy through
 * sk_retarget_append keeps them. */
START_TEST(the_scene_nodes_are_babylons_descendants_of_root) {
  size_t len;
  char *text = (char *)sk_test_read_file("data/retarget/scene-nodes.txt", &len);
  ck_assert_ptr_nonnull(text);
  int files = 0;
  for (char *at = text; at < text + len;) {
    char *tab = strchr(at, '\t'), *nl = strchr(at, '\n');
    ck_assert(tab != NULL && nl != NULL && tab < nl);
    *tab = *nl = '\0';
    const size_t want = strtoul(tab + 1, NULL, 10);
    char path[256];
    snprintf(path, sizeof path, "data/%s", at);
    side sd;
    load(path, &sd);
    const sk_anim_nodes *n = sd.a->nodes;
    ck_assert_ptr_nonnull(n);
    char **got = calloc(n->count + 1, sizeof *got);
    size_t k = 0;
    for (size_t e = 0; e < n->count; e++) {
      if (n->names[e] == NULL)
        continue;
      const char *parent = n->parents[e] >= 0 ? n->names[n->parents[e]] : "__root__";
      got[k] = malloc(strlen(n->names[e]) + strlen(parent) + 2);
      sprintf(got[k++], "%s\t%s", n->names[e], parent);
    }
    ck_assert_msg(k == want, "%s: %zu nodes, Babylon %zu", at, k, want);
    qsort(got, k, sizeof *got, cmp_str);
    at = nl + 1;
    for (size_t i = 0; i < k; i++) {
      nl = strchr(at, '\n');
      ck_assert_ptr_nonnull(nl);
      *nl = '\0';
      ck_assert_msg(strcmp(got[i], at) == 0, "%s: node %zu is \"%s\", Babylon \"%s\"", path, i, got[i], at);
      at = nl + 1;
      free(got[i]);
    }
    free(got);
    /* the transform node of every bone is its node, named as it */
    for (size_t b = 0; b < sd.s->count; b++)
      ck_assert_int_ge(n->of_bone[b], 0);
    sk_anim_clip none = {.name = strdup("copied")};
    sk_anim *na;
    sk_error err;
    ck_assert_int_eq(sk_retarget_append(sd.a, &none, &na, &err), 0);
    ck_assert_ptr_ne(na->nodes, n);
    ck_assert_uint_eq(na->nodes->count, n->count);
    for (size_t e = 0; e < n->count; e++) {
      ck_assert(na->nodes->parents[e] == n->parents[e]);
      ck_assert(n->names[e] == NULL ? na->nodes->names[e] == NULL : strcmp(na->nodes->names[e], n->names[e]) == 0);
      ck_assert(n->names[e] == NULL || na->nodes->names[e] != n->names[e]);
    }
    sk_anim_destroy(na);
    unload(&sd);
    files++;
  }
  ck_assert_int_ge(files, 10);
  free(text);
}
END_TEST

/* Two skinned nodes whose meshes the loader would parent under each other
 * (each skin's root is a child of the other node): a cycle, so no
 * descendant of `__root__`, dropped; and a 60 000-node chain below a joint,
 * listed in linear time. */
START_TEST(skinned_meshes_parented_in_a_cycle_are_not_below_root) {
  enum { CHAIN = 60000 };
  sk_strbuf b = {0};
  const char *head = "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0,1]}],\"nodes\":["
                       "{\"name\":\"A\",\"mesh\":0,\"skin\":0,\"children\":[2]},"
                       "{\"name\":\"B\",\"mesh\":0,\"skin\":1,\"children\":[3]},"
                       "{\"name\":\"jA\",\"children\":[4]},{\"name\":\"jB\"}";
  sk_strbuf_append(&b, head, strlen(head));
  for (int i = 0; i < CHAIN; i++) {
    char nd[64];
    if (i + 1 < CHAIN)
      snprintf(nd, sizeof nd, ",{\"children\":[%d]}", 5 + i);
    else
      snprintf(nd, sizeof nd, ",{}");
    sk_strbuf_append(&b, nd, strlen(nd));
  }
  const char *tail = "],\"skins\":[{\"joints\":[3],\"skeleton\":3},{\"joints\":[2],\"skeleton\":2}],"
                     "\"meshes\":[{\"primitives\":[{\"attributes\":{}},{\"attributes\":{}}]}]}";
  sk_strbuf_append(&b, tail, strlen(tail));
  ck_assert(!b.failed);
  sk_gltf *g;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_gltf_parse(b.data, b.len, &g, &err) == 0, "%s at %s", err.text, err.pointer);
  sk_skeleton *s;
  sk_anim *a;
  ck_assert_msg(sk_gltf_load_skin(g, 1, 0, &s, &a, &err) == 0, "%s at %s", err.text, err.pointer);
  const sk_anim_nodes *n = a->nodes;
  /* A, B (transform nodes), their meshes and 2 primitives each, jA, jB, the chain */
  ck_assert_uint_eq(n->count, 2 + 2 + 4 + 2 + CHAIN);
  size_t below = 0;
  for (size_t e = 0; e < n->count; e++)
    below += n->names[e] != NULL;
  ck_assert_uint_eq(below, 4 + CHAIN);
  ck_assert_str_eq(n->names[n->of_bone[0]], "jA");
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
  sk_gltf_destroy(g);
  sk_strbuf_free(&b);
}
END_TEST

/* SK_RT_CASES: absolute paths of cases drawn by
 * tests/oracle/conformance_retarget.sh. */
START_TEST(test_generated_cases) {
  const char *env = getenv("SK_RT_CASES");
  if (env == NULL)
    return;
  char *list = strdup(env), *save = NULL;
  int total = 0, n = 0;
  for (char *tok = strtok_r(list, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save), n++)
    total += check_case(tok);
  free(list);
  printf("retarget: %d generated cases, %d numbers differ\n", n, total);
  ck_assert_int_eq(total, 0);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sk_retarget");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_cases);
  tcase_add_test(tc, test_generated_cases);
  tcase_add_test(tc, test_refusals);
  tcase_add_test(tc, test_no_common_bone);
  tcase_add_test(tc, root_fixing_onto_a_babylon_format_skeleton_is_refused);
  tcase_add_test(tc, the_clips_part_round_trips_and_damage_is_refused);
  tcase_add_test(tc, the_scene_nodes_are_babylons_descendants_of_root);
  tcase_add_test(tc, skinned_meshes_parented_in_a_cycle_are_not_below_root);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
