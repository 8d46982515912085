/* sk_blendin: a glTF layer blended in from a pose snapshot as Babylon's
 * enableBlending / blendingSpeed blend it, and a Babylon-format layer as
 * a skeleton's animations blend in (sk_banim_blend_in). The conformance
 * TCase replays tests/conformance/layers_blendin.jsonl
 * (tests/oracle/babylon_blendin.mjs: Fox, CesiumMan, RobotExpressive; from
 * another clip's pose or the rest pose, looping and not, "times",
 * from/to/fps and "frames"; alone and among weighted layers) and
 * tests/conformance/banim_blendin.jsonl (gen_banim_blendin.py through
 * babylon_eval.mjs: generated Babylon-format skeletons and the
 * Babylon-format Fox) through skinner
 * eval and over /pose as JSON and float32, every float bit for bit; the
 * others check the factor's double sums, the blend by hand, chunks of
 * "frames" against the whole, and each refusal (code + JSON pointer). */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "sk_anim.h"
#include "sk_blendin.h"
#include "sk_finalcases.h"

static const char *const k_cases[] = {"conformance/layers_blendin.jsonl", "conformance/banim_blendin.jsonl"};

/* ---- conformance ---------------------------------------------------------- */

START_TEST(blended_in_layers_agree_with_babylon_bit_for_bit) {
  int poses = 0;
  ck_assert_int_ge(sk_finalcases_eval(k_cases[0], &poses), 19);
  ck_assert_int_ge(poses, 512);
}
END_TEST

START_TEST(blended_in_babylon_format_layers_agree_with_babylon_bit_for_bit) {
  int poses = 0;
  ck_assert_int_ge(sk_finalcases_eval(k_cases[1], &poses), 25);
  ck_assert_int_ge(poses, 1800);
}
END_TEST

START_TEST(blended_in_layers_answer_babylon_bits_over_http_as_json_and_binary) {
  ck_assert_int_ge(sk_finalcases_http(k_cases, 2), 44);
}
END_TEST

/* The results of case `json` through skinner eval (new). */
static json_t *eval(const char *json) {
  char base[1024];
  sk_test_path("", base, sizeof base);
  json_t *c = json_loads(json, 0, NULL);
  ck_assert_ptr_nonnull(c);
  sk_strbuf out = {0};
  sk_error e;
  sk_error_clear(&e);
  int rc = sk_eval_case_at(c, base, &out, &e);
  ck_assert_msg(rc == 0, "%s at %s: %s", sk_errname(rc), e.pointer, e.text);
  json_t *got = json_loadb(out.data, out.len, JSON_DECODE_INT_AS_REAL, NULL);
  sk_strbuf_free(&out);
  json_decref(c);
  json_t *r = json_incref(json_object_get(got, "results"));
  json_decref(got);
  return r;
}

#define FOX_BLEND(frames)                                                                                             \
  "{\"skeleton\":{\"gltf\":\"data/Fox.glb\"},\"ops\":[{\"op\":\"pose\",\"layers\":[{\"animation\":\"Run\","          \
  "\"time\":0,\"loop\":true,\"blendIn\":{\"speed\":0.05,\"from\":{\"animation\":\"Walk\",\"time\":0.4}}}],"           \
  "\"fps\":30,\"frames\":" frames "}]}"

#define FOX_BLEND_LAYERS(frames)                                                                                      \
  "{\"skeleton\":{\"gltf\":\"data/Fox.glb\"},\"ops\":[{\"op\":\"pose\",\"layers\":[{\"animation\":\"Walk\","         \
  "\"time\":0.2,\"loop\":true,\"weight\":0.3},{\"animation\":\"Run\",\"time\":0,\"loop\":true,\"weight\":0.7,"        \
  "\"blendIn\":{\"speed\":0.05,\"from\":{\"animation\":\"Survey\",\"time\":0.4}}}],\"fps\":30,\"frames\":" frames "}]}"

/* Frames [0, 60) of `form` (a FOX_BLEND* format) cut at `cuts`: each
 * chunk's frames are the whole range's. */
static void chunks_are_the_whole(const char *form) {
  char buf[1024];
  snprintf(buf, sizeof buf, form, "[0, 60]");
  json_t *whole = eval(buf);
  ck_assert_uint_eq(json_array_size(whole), 60);
  static const int cuts[] = {0, 1, 7, 19, 20, 21, 44, 60};
  for (size_t c = 0; c + 1 < sizeof cuts / sizeof cuts[0]; c++) {
    char fr[32];
    snprintf(fr, sizeof fr, "[%d, %d]", cuts[c], cuts[c + 1]);
    snprintf(buf, sizeof buf, form, fr);
    json_t *part = eval(buf);
    ck_assert_uint_eq(json_array_size(part), (size_t)(cuts[c + 1] - cuts[c]));
    for (size_t i = 0; i < json_array_size(part); i++)
      ck_assert_msg(json_equal(json_array_get(part, i), json_array_get(whole, (size_t)cuts[c] + i)), "frame %zu of %s",
                    (size_t)cuts[c] + i, fr);
    json_decref(part);
  }
  json_decref(whole);
}

/* A case of one pose op `{"op": "pose", <members>}` on the Babylon-format
 * Fox (tests/data/fox-walk-babylon.json), as text (new, free()). */
static char *babylon_fox_case(const char *members) {
  size_t len;
  unsigned char *text = sk_test_read_asset("fox-walk-babylon.json", &len);
  json_t *sk = json_loadb((const char *)text, len, 0, NULL);
  free(text);
  char buf[1024];
  snprintf(buf, sizeof buf, "{\"op\":\"pose\",%s}", members);
  json_t *op = json_loads(buf, 0, NULL);
  ck_assert_ptr_nonnull(sk);
  ck_assert_ptr_nonnull(op);
  json_t *c = json_pack("{s:o, s:[o]}", "skeleton", sk, "ops", op);
  char *out = json_dumps(c, JSON_COMPACT);
  json_decref(c);
  return out;
}

#define BFOX_BLEND                                                                                                    \
  "\"layers\":[{\"animation\":\"Walk\",\"time\":0.2,\"loop\":true,\"weight\":0.4},{\"animation\":\"Walk\","       \
  "\"time\":0,\"loop\":true,\"weight\":0.6,\"blendIn\":{\"speed\":0.05,\"from\":{\"animation\":\"Walk\","          \
  "\"time\":0.9}}}],\"fps\":30,\"frames\":"

START_TEST(frames_chunks_of_a_babylon_format_crossfade_are_the_bytes_of_the_whole) {
  char *text = babylon_fox_case(BFOX_BLEND "[0, 60]");
  json_t *whole = eval(text);
  free(text);
  ck_assert_uint_eq(json_array_size(whole), 60);
  static const int cuts[] = {0, 1, 7, 19, 20, 21, 44, 60};
  for (size_t c = 0; c + 1 < sizeof cuts / sizeof cuts[0]; c++) {
    char fr[256];
    snprintf(fr, sizeof fr, BFOX_BLEND "[%d, %d]", cuts[c], cuts[c + 1]);
    text = babylon_fox_case(fr);
    json_t *part = eval(text);
    free(text);
    ck_assert_uint_eq(json_array_size(part), (size_t)(cuts[c + 1] - cuts[c]));
    for (size_t i = 0; i < json_array_size(part); i++)
      ck_assert_msg(json_equal(json_array_get(part, i), json_array_get(whole, (size_t)cuts[c] + i)), "frame %zu of %s",
                    (size_t)cuts[c] + i, fr);
    json_decref(part);
  }
  /* the blend shows: frame 0 is not frame 30's pose of the same layers without it */
  ck_assert(!json_equal(json_array_get(whole, 0), json_array_get(whole, 30)));
  json_decref(whole);
}
END_TEST

START_TEST(frames_chunks_of_a_crossfade_among_layers_are_the_bytes_of_the_whole) {
  chunks_are_the_whole(FOX_BLEND_LAYERS("%s"));
}
END_TEST

START_TEST(frames_chunks_of_a_crossfade_are_the_bytes_of_the_whole) {
  chunks_are_the_whole(FOX_BLEND("%s"));
}
END_TEST

/* ---- golden --------------------------------------------------------------- */

START_TEST(the_factor_is_a_double_sum_of_speeds_per_write) {
  sk_blendin b;
  sk_blendin_init(&b, 0.1);
  ck_assert(sk_blendin_factor(&b, 0) == 0);
  double f = 0;
  for (int k = 1; k <= 10; k++) {
    f += 0.1;
    ck_assert(sk_blendin_factor(&b, (uint64_t)k) == f);
  }
  /* ten sums of 0.1 are 0.9999999999999999: write 10 still blends, write 11 does not */
  ck_assert(sk_blendin_blending(&b, 10));
  ck_assert(!sk_blendin_blending(&b, 11));
  ck_assert(!sk_blendin_blending(&b, 1000000));
  /* going back starts over */
  ck_assert(sk_blendin_factor(&b, 3) == 0.1 + 0.1 + 0.1);
}
END_TEST

START_TEST(driven_paths_lerp_from_the_snapshot_and_the_others_take_it) {
  /* one bone, a clip driving only its translation */
  double frames[2] = {0, 60};
  float values[6] = {0, 0, 0, 2, 4, 6};
  sk_anim_channel ch = {.bone = 0, .path = SK_ANIM_TRANSLATION, .interp = SK_ANIM_LINEAR, .count = 2,
                        .frames = frames, .values = values};
  sk_anim_clip clip = {.name = "c", .end_frame = 60, .channel_count = 1, .channels = &ch};
  double rest[SK_ANIM_TRS] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1};
  sk_anim a = {.bone_count = 1, .rest = rest, .clip_count = 1, .clips = &clip};
  uint8_t drv[3];
  sk_blendin_driven(&a, 0, drv);
  ck_assert(drv[0] == 1 && drv[1] == 0 && drv[2] == 0);
  const double snap[SK_ANIM_TRS] = {1, 1, 1, 0, 0, 0.6, 0.8, 2, 2, 2};
  double trs[SK_ANIM_TRS] = {3, 5, 7, 0, 0, 0, 1, 1, 1, 1};
  sk_blendin_apply(&a, drv, snap, 0.25, trs);
  ck_assert(trs[0] == 1 + (3 - 1) * 0.25 && trs[1] == 1 + (5 - 1) * 0.25 && trs[2] == 1 + (7 - 1) * 0.25);
  for (int i = 3; i < SK_ANIM_TRS; i++) /* rotation and scaling: the snapshot's */
    ck_assert(trs[i] == snap[i]);
  double done[SK_ANIM_TRS] = {3, 5, 7, 0, 0, 0, 1, 1, 1, 1};
  sk_blendin_apply(&a, drv, snap, 1.0000000000000002, done);
  ck_assert(done[0] == 3 && done[1] == 5 && done[2] == 7 && done[9] == 2);
}
END_TEST

/* ---- validity ------------------------------------------------------------- */

#define FOX "{\"gltf\":\"data/Fox.glb\"}"

START_TEST(a_crossfade_longer_than_the_range_is_refused_naming_its_speed) {
  /* 0.1 a frame blends over 11 writes: 10 frames are too few */
  sk_finalcases_refused(FOX,
                        "\"layers\":[{\"animation\":\"Run\",\"time\":0,\"blendIn\":{\"speed\":0.1}}],"
                        "\"from\":0,\"to\":0.3,\"fps\":30",
                        SK_ERANGE, "/ops/0/layers/0/blendIn/speed");
  sk_finalcases_refused(FOX,
                        "\"layers\":[{\"animation\":\"Run\",\"time\":0,\"blendIn\":{\"speed\":0.5}}],\"times\":[0,0.1]",
                        SK_ERANGE, "/ops/0/layers/0/blendIn/speed");
}
END_TEST

START_TEST(a_blend_babylon_would_not_make_is_refused_naming_the_field) {
  sk_finalcases_refused(FOX, "\"layers\":[{\"animation\":\"Run\",\"time\":0,\"blendIn\":{\"speed\":0}}],\"times\":[0]",
                        SK_ERANGE, "/ops/0/layers/0/blendIn/speed");
  sk_finalcases_refused(FOX, "\"layers\":[{\"animation\":\"Run\",\"time\":0,\"blendIn\":{\"speed\":2}}],\"times\":[0]",
                        SK_ERANGE, "/ops/0/layers/0/blendIn/speed");
  sk_finalcases_refused(FOX, "\"layers\":[{\"animation\":\"Run\",\"time\":0,\"blendIn\":{}}],\"times\":[0]",
                        SK_EMISSING, "/ops/0/layers/0/blendIn/speed");
  sk_finalcases_refused(FOX,
                        "\"layers\":[{\"animation\":\"Run\",\"time\":0,\"blendIn\":{\"speed\":1,\"form\":{}}}],"
                        "\"times\":[0]",
                        SK_EUNKNOWN, "/ops/0/layers/0/blendIn/form");
  sk_finalcases_refused(FOX, "\"layers\":[{\"animation\":\"Run\",\"time\":0,\"blendIn\":{\"speed\":1}}]", SK_ETYPE,
                        "/ops/0/layers/0/blendIn");
  /* with other layers: one blended layer among plain weighted ones */
  sk_finalcases_refused(FOX,
                        "\"layers\":[{\"animation\":\"Run\",\"time\":0,\"blendIn\":{\"speed\":1}},"
                        "{\"animation\":\"Walk\",\"time\":0,\"blendIn\":{\"speed\":1}}],\"times\":[0,0.1,0.2]",
                        SK_ETYPE, "/ops/0/layers/1/blendIn");
  sk_finalcases_refused(FOX,
                        "\"layers\":[{\"animation\":\"Run\",\"time\":0,\"blendIn\":{\"speed\":1}},"
                        "{\"animation\":\"Walk\",\"time\":0,\"additive\":true}],\"times\":[0]",
                        SK_ETYPE, "/ops/0/layers/1/additive");
  sk_finalcases_refused(FOX,
                        "\"layers\":[{\"animation\":\"Walk\",\"time\":0,\"mask\":{\"bone\":\"b_Head_05\"}},"
                        "{\"animation\":\"Run\",\"time\":0,\"blendIn\":{\"speed\":1}}],\"times\":[0]",
                        SK_ETYPE, "/ops/0/layers/0/mask");
  sk_finalcases_refused(FOX,
                        "\"layers\":[{\"animation\":\"Run\",\"time\":0,\"blendIn\":{\"speed\":1}},"
                        "{\"animation\":\"Walk\",\"time\":0,\"speedRatio\":2}],\"times\":[0]",
                        SK_ETYPE, "/ops/0/layers/1/speedRatio");
  sk_finalcases_refused(FOX,
                        "\"layers\":[{\"animation\":\"Run\",\"time\":0,\"blendIn\":{\"speed\":1}},"
                        "{\"animation\":\"Walk\",\"time\":0,\"weight\":0}],\"times\":[0]",
                        SK_ETYPE, "/ops/0/layers/1/weight");
  sk_finalcases_refused(FOX,
                        "\"layers\":[{\"animation\":\"Walk\",\"time\":0},"
                        "{\"animation\":\"Run\",\"time\":0,\"blendIn\":{\"speed\":0.2}}],\"from\":0,\"to\":0.1,\"fps\":30",
                        SK_ERANGE, "/ops/0/layers/1/blendIn/speed");
  sk_finalcases_refused(FOX,
                        "\"layers\":[{\"animation\":\"Run\",\"time\":0,\"blendIn\":{\"speed\":1,"
                        "\"from\":{\"animation\":\"Nope\"}}}],\"times\":[0]",
                        SK_ENOTFOUND, "/ops/0/layers/0/blendIn/from/animation");
}
END_TEST

/* `members` on the Babylon-format Fox is refused with `code` at `pointer`. */
static void babylon_refused(const char *members, int code, const char *pointer) {
  char base[1024];
  sk_test_path("", base, sizeof base);
  char *text = babylon_fox_case(members);
  json_t *c = json_loads(text, 0, NULL);
  free(text);
  ck_assert_ptr_nonnull(c);
  sk_strbuf out = {0};
  sk_error e;
  sk_error_clear(&e);
  int rc = sk_eval_case_at(c, base, &out, &e);
  ck_assert_msg(rc == code, "%s: %s, want %s", members, sk_errname(rc), sk_errname(code));
  ck_assert_str_eq(e.pointer, pointer);
  sk_strbuf_free(&out);
  json_decref(c);
}

START_TEST(a_babylon_format_blend_babylon_would_not_make_is_refused_naming_the_field) {
  babylon_refused("\"layers\":[{\"animation\":\"Walk\",\"time\":0,\"blendIn\":{\"speed\":0.5}}]", SK_ETYPE,
                  "/ops/0/layers/0/blendIn");
  babylon_refused("\"layers\":[{\"animation\":\"Walk\",\"time\":0,\"blendIn\":{\"speed\":0.1}}],\"times\":[0,0.1]",
                  SK_ERANGE, "/ops/0/layers/0/blendIn/speed");
  babylon_refused("\"layers\":[{\"animation\":\"Walk\",\"time\":0,\"mask\":{\"bone\":\"b_Hip_01\"},"
                  "\"blendIn\":{\"speed\":1}}],\"times\":[0]",
                  SK_ETYPE, "/ops/0/layers/0/blendIn");
  babylon_refused("\"layers\":[{\"animation\":\"Walk\",\"time\":0,\"blendIn\":{\"speed\":1}},"
                  "{\"animation\":\"Walk\",\"time\":0,\"weight\":0}],\"times\":[0]",
                  SK_ETYPE, "/ops/0/layers/1/weight");
  babylon_refused("\"layers\":[{\"animation\":\"Walk\",\"time\":0,\"blendIn\":{\"speed\":1,"
                  "\"from\":{\"animation\":\"Run\"}}}],\"times\":[0]",
                  SK_ENOTFOUND, "/ops/0/layers/0/blendIn/from/animation");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sk_blendin");
  TCase *conf = tcase_create("conformance");
  tcase_set_timeout(conf, 300);
  tcase_add_test(conf, blended_in_layers_agree_with_babylon_bit_for_bit);
  tcase_add_test(conf, blended_in_babylon_format_layers_agree_with_babylon_bit_for_bit);
  tcase_add_test(conf, blended_in_layers_answer_babylon_bits_over_http_as_json_and_binary);
  tcase_add_test(conf, frames_chunks_of_a_babylon_format_crossfade_are_the_bytes_of_the_whole);
  tcase_add_test(conf, frames_chunks_of_a_crossfade_are_the_bytes_of_the_whole);
  tcase_add_test(conf, frames_chunks_of_a_crossfade_among_layers_are_the_bytes_of_the_whole);
  suite_add_tcase(s, conf);
  TCase *golden = tcase_create("golden");
  tcase_add_test(golden, the_factor_is_a_double_sum_of_speeds_per_write);
  tcase_add_test(golden, driven_paths_lerp_from_the_snapshot_and_the_others_take_it);
  suite_add_tcase(s, golden);
  TCase *validity = tcase_create("validity");
  tcase_add_test(validity, a_crossfade_longer_than_the_range_is_refused_naming_its_speed);
  tcase_add_test(validity, a_blend_babylon_would_not_make_is_refused_naming_the_field);
  tcase_add_test(validity, a_babylon_format_blend_babylon_would_not_make_is_refused_naming_the_field);
  suite_add_tcase(s, validity);
  return s;
}

int main(void) { return sk_test_run(suite()); }
