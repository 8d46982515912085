/* End to end: POST /v1/skeletons/{id}/animations with "retarget" (sk_retarget
 * over HTTP). The stored clip is sk_retarget's (proven bit for bit against
 * Babylon by check_sk_retarget): its poses over /pose are the clip's TRS
 * composed as the library composes them; bad input names the field. Test
 * names are sentences. */
#include <stdbool.h>

#include <jansson.h>

#include "sk_anim.h"
#include "sk_fixture.h"
#include "sk_gltf.h"
#include "sk_gltf_mesh.h"
#include "sk_httpc.h"
#include "sk_mat.h"
#include "sk_retarget.h"
#include "sk_retarget_json.h"
#include "sk_testutil.h"

static sk_daemon D;

static void start(const char *const *extra) { sk_fixture_start(&D, extra); }
static void stop(void) { sk_fixture_stop(&D); }

static char *answer(const char *method, const char *path, const char *body, int status) {
  sk_httpc_resp r;
  sk_fixture_json_request(&D, method, path, NULL, body, &r);
  ck_assert_msg(r.status == status, "%s %s: %d, want %d: %.300s", method, path, r.status, status, r.body);
  char *out = strndup(r.body ? r.body : "", r.len);
  sk_httpc_free(&r);
  return out;
}

/* A problem answer with this status, kind and pointer. */
static void expect_problem(const char *path, const char *body, int status, const char *kind, const char *pointer) {
  char *got = answer("POST", path, body, status);
  json_t *j = json_loads(got, 0, NULL);
  ck_assert_ptr_nonnull(j);
  char type[256];
  snprintf(type, sizeof type, "https://skinnerd.dev/problems/%s", kind);
  ck_assert_msg(strcmp(json_string_value(json_object_get(j, "type")), type) == 0, "%s: %s", body, got);
  ck_assert_msg(strcmp(json_string_value(json_object_get(j, "pointer")), pointer) == 0, "%s: %s", body, got);
  json_decref(j);
  free(got);
}

static const char k_map[] =
    "{\"Body\":\"pelvis\",\"Abdomen\":\"spine_01\",\"Torso\":\"spine_02\",\"Neck\":\"neck_01\",\"Head\":\"head\","
    "\"Shoulder.L\":\"clavicle.l\",\"UpperArm.L\":\"upperarm.l\",\"LowerArm.L\":\"lowerarm.l\",\"Palm2.L\":\"hand.l\","
    "\"Shoulder.R\":\"clavicle.r\",\"UpperArm.R\":\"upperarm.r\",\"LowerArm.R\":\"lowerarm.r\",\"Palm2.R\":\"hand.r\","
    "\"UpperLeg.L\":\"thigh.l\",\"LowerLeg.L\":\"calf.l\",\"Foot.L\":\"foot.l\",\"UpperLeg.R\":\"thigh.r\","
    "\"LowerLeg.R\":\"calf.r\",\"Foot.R\":\"foot.r\"}";

typedef struct local_side {
  sk_skeleton *s;
  sk_anim *a;
  double *above;
  size_t n;
} local_side;

/* A Babylon-format skeleton: one bone with a _matrix animation in range "Wave". */
static const char k_babylon[] =
    "{\"bones\":[{\"name\":\"pelvis\",\"parentBoneIndex\":-1,\"index\":0,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],"
    "\"animation\":{\"name\":\"m\",\"property\":\"_matrix\",\"framePerSecond\":30,\"dataType\":3,\"loopBehavior\":1,"
    "\"keys\":[{\"frame\":0,\"values\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]},"
    "{\"frame\":20,\"values\":[1,0,0,0,0,1,0,0,0,0,1,0,0,2,0,1]}]}}],"
    "\"ranges\":[{\"name\":\"Wave\",\"from\":0,\"to\":20}]}";

static void load(const char *rel, local_side *sd) {
  size_t len, est;
  unsigned char *d = sk_test_read_file(rel, &len);
  ck_assert_ptr_nonnull(d);
  sk_gltf_extra x;
  memset(&x, 0, sizeof x);
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_gltf_import_extra(d, len, NULL, 0, 0, &est, false, &sd->s, &sd->a, &x, &err), 0);
  ck_assert_int_eq(sk_gltf_mesh_chain_above(x.mesh_json, true, &sd->above, &sd->n), 0);
  sk_gltf_extra_clear(&x);
  free(d);
}

START_TEST(a_retargeted_clip_is_stored_on_the_target_and_poses_as_the_library_samples_it) {
  start(NULL);
  sk_fixture_put_asset(&D, "robot", "RobotExpressive.glb");
  sk_fixture_put_asset(&D, "mq", "mannequiny-0.3.0.glb");
  char body[2048];
  snprintf(body, sizeof body,
           "{\"from\":\"robot\",\"animation\":\"Walking\",\"retarget\":{\"mapNodeNames\":%s,"
           "\"animationGroupName\":\"RobotWalk\",\"rootNodeName\":\"Body\",\"groundReferenceNodeName\":\"Foot.L\"}}",
           k_map);
  char *got = answer("POST", "/v1/skeletons/mq/animations", body, 201);
  json_t *j = json_loads(got, 0, NULL);
  ck_assert_ptr_nonnull(j);
  ck_assert_str_eq(json_string_value(json_object_get(j, "name")), "RobotWalk");
  ck_assert_uint_eq(json_array_size(json_object_get(j, "bones")), 14); /* 17 channels */
  json_decref(j);
  free(got);
  /* the same clip made here */
  local_side src, dst;
  load("data/RobotExpressive.glb", &src);
  load("data/mannequiny-0.3.0.glb", &dst);
  json_t *opts = json_loads(strstr(body, "\"retarget\":") + 11, JSON_DISABLE_EOF_CHECK, NULL);
  ck_assert_ptr_nonnull(opts);
  sk_retarget_json rj;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_retarget_json_parse(opts, &rj, &err), 0);
  sk_retarget_side ss = {.s = src.s, .a = src.a, .above = src.above, .above_count = src.n};
  sk_retarget_side ds = {.s = dst.s, .a = dst.a, .above = dst.above, .above_count = dst.n};
  size_t clip;
  ck_assert_int_eq(sk_anim_find_clip(src.a, "Walking", &clip), 0);
  sk_anim_clip c;
  ck_assert_int_eq(sk_retarget_clip(&ss, clip, &ds, &rj.o, &c, &err), 0);
  sk_anim *na;
  ck_assert_int_eq(sk_retarget_append(dst.a, &c, &na, &err), 0);
  double *trs = malloc(dst.s->count * SK_ANIM_TRS * sizeof *trs);
  static const double times[] = {0, 0.25, 0.5, 0.7, 0.9583333134651184};
  for (size_t t = 0; t < sizeof times / sizeof *times; t++) {
    snprintf(body, sizeof body, "{\"animation\":\"RobotWalk\",\"time\":%.17g,\"output\":[\"local\"]}", times[t]);
    got = answer("POST", "/v1/skeletons/mq/pose", body, 200);
    json_t *p = json_loads(got, 0, NULL);
    ck_assert_ptr_nonnull(p);
    const json_t *local = json_object_get(json_array_get(json_object_get(p, "results"), 0), "local");
    if (local == NULL)
      local = json_object_get(p, "local");
    ck_assert_msg(local != NULL, "%.300s", got);
    sk_anim_sample(na, na->clip_count - 1, times[t], false, trs);
    for (size_t b = 0; b < dst.s->count; b++) {
      if (dst.s->bones[b].index < 0)
        continue;
      float m[16];
      const double *x = trs + b * SK_ANIM_TRS;
      sk_mat_compose(x + 7, x + 3, x, m);
      for (int i = 0; i < 16; i++)
        ck_assert_msg((float)json_number_value(json_array_get(local, (size_t)dst.s->bones[b].index * 16 + (size_t)i)) ==
                          m[i],
                      "t=%g bone %s [%d]", times[t], dst.s->bones[b].name, i);
    }
    json_decref(p);
    free(got);
  }
  free(trs);
  sk_anim_destroy(na);
  sk_retarget_json_free(&rj);
  json_decref(opts);
  sk_anim_destroy(src.a), sk_skeleton_destroy(src.s), free(src.above);
  sk_anim_destroy(dst.a), sk_skeleton_destroy(dst.s), free(dst.above);
  /* a pose may retarget for itself: the same bytes as the stored clip's */
  for (size_t t = 0; t < 3; t++) {
    char stored[256], once[2048];
    snprintf(stored, sizeof stored, "{\"animation\":\"RobotWalk\",\"time\":%.17g,\"output\":[\"local\",\"final\"]}",
             times[t]);
    snprintf(once, sizeof once,
             "{\"from\":\"robot\",\"animation\":\"Walking\",\"retarget\":{\"mapNodeNames\":%s,"
             "\"rootNodeName\":\"Body\",\"groundReferenceNodeName\":\"Foot.L\"},\"time\":%.17g,"
             "\"output\":[\"local\",\"final\"]}",
             k_map, times[t]);
    char *a = answer("POST", "/v1/skeletons/mq/pose", stored, 200), *b = answer("POST", "/v1/skeletons/mq/pose", once, 200);
    ck_assert_str_eq(a, b);
    free(a), free(b);
  }
  expect_problem("/v1/skeletons/mq/pose",
                 "{\"from\":\"robot\",\"animation\":\"Walking\",\"retarget\":{\"mapNodeNames\":{\"Nope\":\"x\"}},"
                 "\"time\":0}",
                 422, "unknown-reference", "/retarget/mapNodeNames/Nope");
  /* listed with the others, and a second one of that name is a duplicate */
  got = answer("GET", "/v1/skeletons/mq", NULL, 200);
  ck_assert_ptr_nonnull(strstr(got, "\"name\":\"RobotWalk\""));
  free(got);
  snprintf(body, sizeof body,
           "{\"from\":\"robot\",\"animation\":\"Walking\",\"retarget\":{\"mapNodeNames\":%s,"
           "\"animationGroupName\":\"RobotWalk\"}}",
           k_map);
  expect_problem("/v1/skeletons/mq/animations", body, 422, "duplicate", "/retarget/animationGroupName");
  stop();
}
END_TEST

START_TEST(a_retargeting_is_refused_with_the_field_that_is_wrong) {
  const char *const args[] = {"--max-work", "20000", NULL};
  start(args);
  sk_fixture_put_asset(&D, "robot", "RobotExpressive.glb");
  sk_fixture_put_asset(&D, "mq", "mannequiny-0.3.0.glb");
  sk_fixture_put_asset(&D, "fox", "Fox.glb");
  sk_fixture_put_asset(&D, "cesium", "CesiumMan.glb");
  const char *p = "/v1/skeletons/mq/animations";
  expect_problem(p, "{\"from\":\"robot\",\"animation\":\"Walking\",\"retarget\":{\"mapNodeNames\":{\"Nope\":\"pelvis\"}}}",
                 422, "unknown-reference", "/retarget/mapNodeNames/Nope");
  expect_problem(p, "{\"from\":\"robot\",\"animation\":\"Walking\",\"retarget\":{\"mapNodeNames\":{\"Body\":\"nope\"}}}",
                 422, "unknown-reference", "/retarget/mapNodeNames/Body");
  expect_problem(p, "{\"from\":\"fox\",\"animation\":\"Walk\",\"retarget\":{}}", 422, "unknown-reference", "/retarget");
  expect_problem(p, "{\"from\":\"robot\",\"animation\":\"Nope\",\"retarget\":{}}", 404, "not-found", "/animation");
  expect_problem(p, "{\"from\":\"nobody\",\"animation\":\"Walking\",\"retarget\":{}}", 404, "not-found", "/from");
  expect_problem(p, "{\"from\":\"robot\",\"animation\":\"Walking\",\"rescale\":true,\"retarget\":{}}", 422,
                 "unknown-reference", "/rescale");
  expect_problem(p, "{\"from\":\"robot\",\"animation\":\"Walking\",\"retarget\":{\"fixRoot\":true}}", 422,
                 "unknown-reference", "/retarget/fixRoot");
  expect_problem(p, "{\"from\":\"robot\",\"animation\":\"Walking\",\"retarget\":[]}", 422, "wrong-type", "/retarget");
  char body[2048];
  snprintf(body, sizeof body,
           "{\"from\":\"robot\",\"animation\":\"Walking\",\"retarget\":{\"mapNodeNames\":%s,"
           "\"groundReferenceNodeName\":\"Foot.L\",\"rootNodeName\":\"Hips\"}}",
           k_map);
  expect_problem(p, body, 422, "unknown-reference", "/retarget/rootNodeName"); /* Hips has no position keys */
  /* Babylon-format skeletons, as target or as source: copyAnimationRange's, not retargeting's */
  sk_fixture_put_json(&D, "bab", k_babylon);
  expect_problem("/v1/skeletons/bab/animations", "{\"from\":\"robot\",\"animation\":\"Walking\",\"retarget\":{}}", 415,
                 "unsupported-media-type", "");
  expect_problem(p, "{\"from\":\"bab\",\"animation\":\"Wave\",\"retarget\":{}}", 415, "unsupported-media-type",
                 "/from");
  /* CesiumMan's clip has 57 channels of 48 keys: over --max-work 20000 */
  expect_problem("/v1/skeletons/fox/animations", "{\"from\":\"cesium\",\"animation\":0,\"retarget\":{}}", 422,
                 "wrong-type", "/animation");
  expect_problem("/v1/skeletons/fox/animations", "{\"from\":\"cesium\",\"animation\":\"0\",\"retarget\":{}}", 413,
                 "too-large", "/animation");
  stop();
}
END_TEST

START_TEST(a_retargeted_clip_answers_the_same_bytes_after_a_restart_with_a_data_directory) {
  char dir[64];
  sk_fixture_tmpdir(dir, sizeof dir, "sk_routes_retarget");
  const char *const args[] = {"--data-dir", dir, NULL};
  start(args);
  sk_fixture_put_asset(&D, "robot", "RobotExpressive.glb");
  sk_fixture_put_asset(&D, "mq", "mannequiny-0.3.0.glb");
  char body[2048];
  snprintf(body, sizeof body,
           "{\"from\":\"robot\",\"animation\":\"Walking\",\"retarget\":{\"mapNodeNames\":%s,"
           "\"animationGroupName\":\"RobotWalk\"}}",
           k_map);
  free(answer("POST", "/v1/skeletons/mq/animations", body, 201));
  snprintf(body, sizeof body,
           "{\"from\":\"robot\",\"animation\":\"Running\",\"retarget\":{\"mapNodeNames\":%s,"
           "\"animationGroupName\":\"RobotRun\",\"rootNodeName\":\"Body\",\"groundReferenceNodeName\":\"Foot.R\","
           "\"fixGroundReference\":true}}",
           k_map);
  free(answer("POST", "/v1/skeletons/mq/animations", body, 201));
  static const char *const poses[] = {
      "{\"animation\":\"RobotWalk\",\"time\":0.3,\"output\":[\"final\",\"local\"]}",
      "{\"animation\":\"RobotRun\",\"time\":0.45,\"loop\":true}",
      "{\"animation\":\"walk\",\"time\":0.2}",
  };
  char *before[3], *list = answer("GET", "/v1/skeletons/mq", NULL, 200);
  char *detail = answer("GET", "/v1/skeletons/mq/animations/RobotRun", NULL, 200);
  for (int k = 0; k < 3; k++)
    before[k] = answer("POST", "/v1/skeletons/mq/pose", poses[k], 200);
  stop();
  start(args);
  for (int k = 0; k < 3; k++) {
    char *after = answer("POST", "/v1/skeletons/mq/pose", poses[k], 200);
    ck_assert_msg(strcmp(after, before[k]) == 0, "%s after a restart", poses[k]);
    free(after);
  }
  char *l2 = answer("GET", "/v1/skeletons/mq", NULL, 200), *d2 = answer("GET", "/v1/skeletons/mq/animations/RobotRun", NULL, 200);
  ck_assert_str_eq(l2, list);
  ck_assert_str_eq(d2, detail);
  /* a PATCH keeps them too */
  free(answer("PATCH", "/v1/skeletons/mq/bones", "{\"bones\":{\"head\":{\"scaling\":[2,2,2]}}}", 200));
  stop();
  start(args);
  char *after = answer("POST", "/v1/skeletons/mq/pose", poses[1], 200);
  ck_assert_str_eq(after, before[1]); /* RobotRun does not drive the head's scaling */
  free(after);
  for (int k = 0; k < 3; k++)
    free(before[k]);
  free(l2), free(d2), free(list), free(detail);
  stop();
  sk_fixture_rmdir(dir);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("routes_retarget");
  TCase *t = tcase_create("retarget");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, a_retargeted_clip_is_stored_on_the_target_and_poses_as_the_library_samples_it);
  tcase_add_test(t, a_retargeting_is_refused_with_the_field_that_is_wrong);
  tcase_add_test(t, a_retargeted_clip_answers_the_same_bytes_after_a_restart_with_a_data_directory);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
