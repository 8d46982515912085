/* A layer's "speedRatio" (sk_anim__layer_frame): the frame
 * RuntimeAnimation.animate computes for an AnimationGroup started with that
 * speed ratio. The conformance TCase replays tests/conformance/layers_speed.jsonl
 * (tests/oracle/babylon_speed.mjs: Fox, CesiumMan, RobotExpressive; one
 * and several weighted layers, looping and not, single poses, "times" and
 * "frames") through `skinner eval`, every float bit for bit, and over HTTP
 * as JSON and as float32; the others check the frame arithmetic by hand
 * and each refusal (code + JSON pointer). */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "sk_anim.h"
#include "sk_finalcases.h"

/* ---- conformance ---------------------------------------------------------- */

static const char *const k_files[] = {"conformance/layers_speed.jsonl", "conformance/banim_speed.jsonl"};

START_TEST(speed_ratio_layers_agree_with_babylon_bit_for_bit) {
  int poses = 0;
  ck_assert_int_ge(sk_finalcases_eval(k_files[0], &poses), 30);
  ck_assert_int_ge(poses, 700);
  poses = 0;
  ck_assert_int_ge(sk_finalcases_eval(k_files[1], &poses), 4);
  ck_assert_int_ge(poses, 160);
}
END_TEST

/* The same cases over /pose: glTF assets uploaded as files, Babylon
 * skeletons as their JSON. */
START_TEST(speed_ratio_layers_answer_babylon_bits_over_http_as_json_and_binary) {
  ck_assert_int_ge(sk_finalcases_http(k_files, 2), 34);
}
END_TEST

/* ---- golden: the frame arithmetic ---------------------------------------- */

START_TEST(the_frame_is_animates_elapsed_times_fps_times_ratio_over_1000) {
  /* 0.1 s at ratio 1.5 of a 60 fps clip: (100 * 90) / 1000 = 9 */
  ck_assert(sk_anim__speed_frame(60, 0, 40, 0.1, true, 1.5) == 9);
  /* looping wraps into [from, to) with JS %: 2 s * 30 fps * 1 = 60 frames, 60 % 20 = 0 */
  ck_assert(sk_anim__speed_frame(30, 10, 30, 2, true, 1) == 10);
  ck_assert(sk_anim__speed_frame(30, 10, 30, 2.1, true, 1) == 10 + fmod((2100.0 * 30) / 1000, 20));
  /* not looping: the last frame from the range's length on */
  ck_assert(sk_anim__speed_frame(30, 10, 30, 2.1, false, 1) == 30);
  ck_assert(sk_anim__speed_frame(30, 10, 30, 0.5, false, 1) == 25);
  /* the operations in Babylon's order: (ms * (fps * r)) / 1000, not t * fps * r */
  const double t = 0.7, r = 1.1, fps = 60;
  ck_assert(sk_anim__speed_frame(fps, 0, 1e9, t, false, r) == (t * 1000 * (fps * r)) / 1000);
  /* a range of no length plays its frame */
  ck_assert(sk_anim__speed_frame(30, 5, 5, 3, true, 2) == 5);
}
END_TEST

START_TEST(a_ratio_differs_from_scaling_the_time_on_some_frames) {
  /* Why the arithmetic is Babylon's and not sk_anim__clip_frame at r * t:
   * over these frames the two disagree in the last bits somewhere. */
  int differ = 0;
  for (int k = 0; k < 1000; k++) {
    const double t = k / 30.0, r = 1.3;
    differ += sk_anim__speed_frame(60, 0, 1e9, t, false, r) != (r * t) * 60;
  }
  ck_assert_int_gt(differ, 0);
}
END_TEST

/* ---- validity ------------------------------------------------------------- */

/* Two bones in Skeleton.serialize() form: the root's keys end at frame
 * 20, the arm's at 30 (loopBehavior `arm_loop`); "Wave" is frames 0-10,
 * "Rise" 10-30. */
#define SMALL(arm_loop)                                                                                               \
  "{\"bones\":[{\"name\":\"root\",\"parentBoneIndex\":-1,\"index\":0,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],"         \
  "\"animation\":{\"name\":\"m\",\"property\":\"_matrix\",\"framePerSecond\":30,\"dataType\":3,\"loopBehavior\":1,"      \
  "\"keys\":[{\"frame\":0,\"values\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]},"                                             \
  "{\"frame\":20,\"values\":[1,0,0,0,0,1,0,0,0,0,1,0,0,2,0,1]}]}},"                                                    \
  "{\"name\":\"arm\",\"parentBoneIndex\":0,\"index\":1,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1],"                    \
  "\"animation\":{\"name\":\"p\",\"property\":\"position\",\"framePerSecond\":30,\"dataType\":1,\"loopBehavior\":"      \
  arm_loop ",\"keys\":[{\"frame\":0,\"values\":[0,1,0]},{\"frame\":10,\"values\":[0,1.5,0.25]},{\"frame\":30,"            \
  "\"values\":[1,1,0]}]}}],"                                                                                        \
  "\"ranges\":[{\"name\":\"Wave\",\"from\":0,\"to\":10},{\"name\":\"Rise\",\"from\":10,\"to\":30}]}"

static void expect_refusal_on(const char *skeleton, const char *layers, int code, const char *pointer) {
  char members[4096];
  snprintf(members, sizeof members, "\"layers\":%s", layers);
  sk_finalcases_refused(skeleton, members, code, pointer);
}

static void expect_refusal(const char *layers, int code, const char *pointer) {
  expect_refusal_on("{\"gltf\":\"data/Fox.glb\"}", layers, code, pointer);
}

START_TEST(a_ratio_that_is_not_positive_finite_is_refused_naming_it) {
  expect_refusal("[{\"animation\":\"Walk\",\"speedRatio\":0}]", SK_ERANGE, "/ops/0/layers/0/speedRatio");
  expect_refusal("[{\"animation\":\"Walk\",\"speedRatio\":-1}]", SK_ERANGE, "/ops/0/layers/0/speedRatio");
  expect_refusal("[{\"animation\":\"Walk\"},{\"animation\":\"Run\",\"speedRatio\":1e7}]", SK_ERANGE,
                 "/ops/0/layers/1/speedRatio");
  expect_refusal("[{\"animation\":\"Walk\",\"speedRatio\":\"fast\"}]", SK_ETYPE, "/ops/0/layers/0/speedRatio");
}
END_TEST

START_TEST(a_ratio_on_a_clip_animate_would_play_otherwise_is_refused_with_415) {
  /* RELATIVE loops add an offset per cycle under animate */
  expect_refusal_on(SMALL("0"), "[{\"animation\":\"Wave\",\"speedRatio\":2}]", SK_EUNSUPPORTED,
                    "/ops/0/layers/0/speedRatio");
  /* the root's keys end at 20, before "Rise" does: animate would wrap it in 10-20 */
  expect_refusal_on(SMALL("1"), "[{\"animation\":\"Rise\",\"speedRatio\":2}]", SK_EUNSUPPORTED,
                    "/ops/0/layers/0/speedRatio");
  /* inside every animation's keys: played */
  char base[1024];
  sk_test_path("", base, sizeof base);
  json_t *c = json_loads("{\"skeleton\":" SMALL("1") ",\"ops\":[{\"op\":\"pose\",\"layers\":"
                         "[{\"animation\":\"Wave\",\"speedRatio\":2,\"time\":0.1}]}]}",
                         0, NULL);
  ck_assert_ptr_nonnull(c);
  sk_strbuf out = {0};
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_eval_case_at(c, base, &out, &e), 0);
  sk_strbuf_free(&out);
  json_decref(c);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("layers_speed");
  TCase *conf = tcase_create("conformance");
  tcase_set_timeout(conf, 300);
  tcase_add_test(conf, speed_ratio_layers_agree_with_babylon_bit_for_bit);
  tcase_add_test(conf, speed_ratio_layers_answer_babylon_bits_over_http_as_json_and_binary);
  suite_add_tcase(s, conf);
  TCase *golden = tcase_create("golden");
  tcase_add_test(golden, the_frame_is_animates_elapsed_times_fps_times_ratio_over_1000);
  tcase_add_test(golden, a_ratio_differs_from_scaling_the_time_on_some_frames);
  suite_add_tcase(s, golden);
  TCase *validity = tcase_create("validity");
  tcase_add_test(validity, a_ratio_that_is_not_positive_finite_is_refused_naming_it);
  tcase_add_test(validity, a_ratio_on_a_clip_animate_would_play_otherwise_is_refused_with_415);
  suite_add_tcase(s, validity);
  return s;
}

int main(void) { return sk_test_run(suite()); }
