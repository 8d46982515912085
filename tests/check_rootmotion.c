/* sk_rootmotion against Babylon 9.34's RootMotionClip, bit for bit: the
 * answers in tests/data/rootmotion/ come from tests/oracle/babylon_rootmotion.mjs
 * (regenerate with tests/oracle/gen_rootmotion.sh). */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_anim.h"
#include "sk_gltf.h"
#include "sk_rootmotion.h"
#include "sk_testutil.h"

static void load(const char *rel, sk_skeleton **s, sk_anim **an) {
  size_t len;
  unsigned char *d = sk_test_read_file(rel, &len);
  ck_assert_ptr_nonnull(d);
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_gltf_import(d, len, NULL, 0, s, an, &err) == 0, "%s: %s at %s", rel, err.text, err.pointer);
  free(d);
}

static json_t *load_json(const char *rel) {
  json_error_t je;
  if (rel[0] == '/') { /* a generated case */
    json_t *j = json_load_file(rel, 0, &je);
    ck_assert_msg(j != NULL, "%s: %s", rel, je.text);
    return j;
  }
  size_t len;
  char *d = (char *)sk_test_read_file(rel, &len);
  ck_assert_ptr_nonnull(d);
  json_t *j = json_loadb(d, len, 0, &je);
  ck_assert_msg(j != NULL, "%s: %s", rel, je.text);
  free(d);
  return j;
}

static double num(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }
static double at(const json_t *o, const char *k, size_t i) { return json_number_value(json_array_get(json_object_get(o, k), i)); }

static int32_t bone_named(const sk_skeleton *s, const char *name) {
  for (size_t b = 0; b < s->count; b++)
    if (strcmp(s->bones[b].name, name) == 0)
      return (int32_t)b;
  return -1;
}

static void opts_from(const json_t *j, const sk_skeleton *s, sk_rootmotion_opts *o, int32_t *contacts) {
  sk_rootmotion_opts_default(o);
  const json_t *v;
  if ((v = json_object_get(j, "source")) != NULL)
    o->source = (int)json_integer_value(v);
  if ((v = json_object_get(j, "extractRotation")) != NULL)
    o->extract_rotation = json_is_true(v);
  if ((v = json_object_get(j, "samplesPerSecond")) != NULL)
    o->samples_per_second = json_number_value(v);
  if ((v = json_object_get(j, "minimumTravel")) != NULL)
    o->minimum_travel = json_number_value(v);
  if ((v = json_object_get(j, "minimumTurn")) != NULL)
    o->minimum_turn = json_number_value(v);
  if ((v = json_object_get(j, "directionSnapAngle")) != NULL)
    o->has_snap = true, o->direction_snap_angle = json_number_value(v);
  if ((v = json_object_get(j, "extractLateralMotion")) != NULL)
    o->extract_lateral_motion = json_is_true(v);
  if ((v = json_object_get(j, "rootNode")) != NULL)
    o->root_node = bone_named(s, json_string_value(v));
  if ((v = json_object_get(j, "contactNodes")) != NULL) {
    for (size_t i = 0; i < json_array_size(v); i++)
      contacts[i] = bone_named(s, json_string_value(json_array_get(v, i)));
    o->contact_nodes = contacts, o->contact_count = json_array_size(v);
  }
}

#define SAME(got, want, what)                                                                                     \
  do {                                                                                                            \
    double g_ = (got), w_ = (want);                                                                               \
    if (!(g_ == w_)) {                                                                                            \
      fprintf(stderr, "%s %s: %s %.17g != %.17g\n", asset, name, what, g_, w_);                                   \
      bad++;                                                                                                      \
    }                                                                                                             \
  } while (0)

static int check_asset(const char *glb, const char *answers) {
  sk_skeleton *s;
  sk_anim *an;
  load(glb, &s, &an);
  json_t *exp = load_json(answers);
  const char *asset = json_string_value(json_object_get(exp, "asset"));
  const json_t *above_j = json_object_get(exp, "above");
  size_t na = json_array_size(above_j);
  double *above = calloc(na + 1, SK_ANIM_TRS * sizeof *above);
  for (size_t k = 0; k < na; k++)
    for (size_t i = 0; i < SK_ANIM_TRS; i++)
      above[k * SK_ANIM_TRS + i] = at(json_array_get(above_j, k), "trs", i);
  int32_t contacts[64];
  sk_rootmotion_opts o;
  opts_from(json_object_get(exp, "options"), s, &o, contacts);
  int bad = 0;
  size_t ci;
  const json_t *c;
  json_array_foreach(json_object_get(exp, "clips"), ci, c) {
    const char *name = json_string_value(json_object_get(c, "name"));
    size_t clip;
    ck_assert_int_eq(sk_anim_find_clip(an, name, &clip), 0);
    sk_rootmotion rm;
    sk_error err;
    sk_error_clear(&err);
    int rc = sk_rootmotion_analyze(s, an, clip, above, na, &o, &rm, &err);
    if (json_object_get(c, "error") != NULL) {
      ck_assert_msg(rc != 0, "%s %s: Babylon refuses it", asset, name);
      continue;
    }
    ck_assert_msg(rc == 0, "%s %s: %s at %s", asset, name, err.text, err.pointer);
    ck_assert_str_eq(sk_rootmotion_source_name(rm.source), json_string_value(json_object_get(c, "source")));
    const char *root = json_string_value(json_object_get(c, "rootNode"));
    ck_assert_str_eq(rm.root_node >= 0 ? s->bones[rm.root_node].name : "(null)", root != NULL ? root : "(null)");
    const json_t *cn = json_object_get(c, "contactNodes");
    ck_assert_uint_eq(rm.contact_count, json_array_size(cn));
    for (size_t i = 0; i < rm.contact_count; i++)
      ck_assert_str_eq(s->bones[rm.contacts[i]].name, json_string_value(json_array_get(cn, i)));
    SAME(rm.from_frame, num(c, "fromFrame"), "fromFrame");
    SAME(rm.to_frame, num(c, "toFrame"), "toFrame");
    SAME(rm.duration, num(c, "duration"), "duration");
    SAME(rm.character_height, num(c, "characterHeight"), "characterHeight");
    SAME(rm.extracts_rotation, json_is_true(json_object_get(c, "extractsRotation")), "extractsRotation");
    for (size_t i = 0; i < 3; i++) {
      SAME(rm.travel_direction[i], at(c, "travelDirection", i), "travelDirection");
      SAME(rm.cycle_offset[i], at(c, "cycleOffset", i), "cycleOffset");
    }
    SAME(rm.cycle_rotation, num(c, "cycleRotation"), "cycleRotation");
    SAME((double)rm.samples, num(c, "samples"), "samples");
    const json_t *track = json_object_get(c, "track");
    size_t rows = json_array_size(track) / 4;
    if (rm.source != SK_RM_NONE || rm.extracts_rotation) {
      ck_assert_uint_eq(rows, rm.samples + 1);
      for (size_t i = 0; i < rows * 4 && bad < 20; i++)
        SAME(rm.track[i], json_number_value(json_array_get(track, i)), "track");
    }
    size_t fi;
    const json_t *f;
    json_array_foreach(json_object_get(c, "frames"), fi, f) {
      double off[3], frame = num(f, "frame");
      sk_rootmotion_offset_at(&rm, frame, off);
      for (size_t i = 0; i < 3; i++)
        SAME(off[i], at(f, "offset", i), "offset");
      SAME(sk_rootmotion_rotation_at(&rm, frame), num(f, "turn"), "turn");
    }
    json_array_foreach(json_object_get(c, "between"), fi, f) {
      double off[3];
      double turn = sk_rootmotion_motion_between(&rm, num(f, "from"), num(f, "to"), num(f, "last"), num(f, "progress"), off);
      for (size_t i = 0; i < 3; i++)
        SAME(off[i], at(f, "offset", i), "between offset");
      SAME(turn, num(f, "turn"), "between turn");
    }
    sk_rootmotion_free(&rm);
  }
  json_decref(exp);
  free(above);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
  return bad;
}

START_TEST(test_fox) { ck_assert_int_eq(check_asset("data/Fox.glb", "data/rootmotion/Fox.json"), 0); }
END_TEST
START_TEST(test_fox_opts) { ck_assert_int_eq(check_asset("data/Fox.glb", "data/rootmotion/Fox-opts.json"), 0); }
END_TEST
START_TEST(test_cesiumman) { ck_assert_int_eq(check_asset("data/CesiumMan.glb", "data/rootmotion/CesiumMan.json"), 0); }
END_TEST
START_TEST(test_mannequiny) {
  ck_assert_int_eq(check_asset("data/mannequiny-0.3.0.glb", "data/rootmotion/mannequiny-0.3.0.json"), 0);
}
END_TEST
START_TEST(test_mannequiny_opts) {
  ck_assert_int_eq(check_asset("data/mannequiny-0.3.0.glb", "data/rootmotion/mannequiny-opts.json"), 0);
}
END_TEST

/* SK_RM_CASES: "GLB:ANSWERS ..." drawn by tests/oracle/conformance_rootmotion.sh
 * (answers at absolute paths or relative to tests/). */
START_TEST(test_generated_cases) {
  const char *env = getenv("SK_RM_CASES");
  if (env == NULL)
    return;
  char *list = strdup(env), *save = NULL;
  int bad = 0, n = 0;
  for (char *tok = strtok_r(list, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
    char *colon = strchr(tok, ':');
    ck_assert_ptr_nonnull(colon);
    *colon = 0;
    bad += check_asset(tok, colon + 1);
    n++;
  }
  free(list);
  printf("rootmotion: %d generated cases, %d numbers differ\n", n, bad);
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* Bad options are refused naming the option, before any work. */
START_TEST(test_bad_options) {
  sk_skeleton *s;
  sk_anim *an;
  load("data/Fox.glb", &s, &an);
  static const struct {
    const char *pointer;
    int field;
    double value;
  } cases[] = {{"/samplesPerSecond", 0, 0},      {"/samplesPerSecond", 0, 1e9}, {"/samplesPerSecond", 0, NAN},
               {"/minimumTravel", 1, -1},        {"/minimumTurn", 2, INFINITY}, {"/directionSnapAngle", 3, NAN},
               {"/upAxis", 4, 0},                {"/rootNode", 5, 1e6},         {"/source", 6, 7}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    sk_rootmotion_opts o;
    sk_rootmotion_opts_default(&o);
    switch (cases[k].field) {
    case 0: o.samples_per_second = cases[k].value; break;
    case 1: o.minimum_travel = cases[k].value; break;
    case 2: o.minimum_turn = cases[k].value; break;
    case 3: o.has_snap = true, o.direction_snap_angle = cases[k].value; break;
    case 4: o.up[1] = 0; break;
    case 5: o.root_node = (int32_t)cases[k].value; break;
    default: o.source = (int)cases[k].value; break;
    }
    sk_rootmotion rm;
    sk_error err;
    sk_error_clear(&err);
    ck_assert_int_eq(sk_rootmotion_analyze(s, an, 0, NULL, 0, &o, &rm, &err), SK_ERANGE);
    ck_assert_str_eq(err.pointer, cases[k].pointer);
  }
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST

int main(void) {
  Suite *su = suite_create("rootmotion");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_fox);
  tcase_add_test(tc, test_fox_opts);
  tcase_add_test(tc, test_cesiumman);
  tcase_add_test(tc, test_mannequiny);
  tcase_add_test(tc, test_mannequiny_opts);
  tcase_add_test(tc, test_bad_options);
  tcase_add_test(tc, test_generated_cases);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
