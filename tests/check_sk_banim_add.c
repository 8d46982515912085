/* sk_banim_add: additive layers of Babylon-format clips. The conformance
 * TCase runs tests/conformance/banim_additive.jsonl (tests/oracle/
 * gen_banim_additive.py, answered by Babylon: Skeleton.MakeAnimationAdditive,
 * isAdditive animatables, the late animation bindings) through `skinner
 * eval` and requires every number bit for bit; golden cases hold two
 * Babylon quirks with the numbers Babylon answered (babylon_eval.mjs on the
 * same JSON); validity checks each refusal (code + pointer). */
#include "sk_anim.h"
#include "sk_banim_add.h"
#include "sk_banim_blend.h"
#include "sk_eval.h"
#include "sk_evalcases.h"
#include "sk_json.h"
#include "sk_jsonl.h"
#include "sk_testutil.h"

START_TEST(every_additive_babylon_layer_case_agrees_bit_for_bit) {
  sk_evalcases_run("conformance/banim_additive.jsonl", 120, 800);
}
END_TEST

/* ---- a case: b0 animated by `anim`, b1 still; skeleton ranges `ranges` --- */

static json_t *case_json(const char *anim, const char *ranges, const char *ops) {
  static char text[1 << 16];
  snprintf(text, sizeof text,
           "{\"skeleton\":{\"bones\":[{\"name\":\"b0\",\"parentBoneIndex\":-1,"
           "\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],%s},"
           "{\"name\":\"b1\",\"parentBoneIndex\":0,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1]}],"
           "\"ranges\":%s},\"ops\":%s}",
           anim, ranges, ops);
  json_t *j = json_loads(text, 0, NULL);
  ck_assert_msg(j != NULL, "bad test JSON: %s", text);
  return j;
}

#define POS(keys)                                                                                                      \
  "\"animation\":{\"name\":\"p\",\"property\":\"position\",\"framePerSecond\":30,\"dataType\":1,"                  \
  "\"loopBehavior\":1,\"keys\":" keys "}"

/* The x translation of b0's local matrix in each result of `c`. */
static void local_x(json_t *c, double *x, size_t n) {
  sk_strbuf out = {0};
  sk_error e;
  sk_error_clear(&e);
  int rc = sk_eval_case(c, &out, &e);
  ck_assert_msg(rc == 0, "%s at %s: %s", sk_errname(rc), e.pointer, e.text);
  json_t *got = json_loadb(out.data, out.len, 0, NULL);
  const json_t *r = json_object_get(got, "results");
  ck_assert_uint_eq(json_array_size(r), n);
  for (size_t i = 0; i < n; i++)
    x[i] = json_number_value(json_array_get(json_object_get(json_array_get(r, i), "local"), 12));
  json_decref(got);
  sk_strbuf_free(&out);
  json_decref(c);
}

/* RuntimeAnimation's frame-0 key shares the value of the key at frame 10:
 * a range starting at 10 leaves that key as it was (Babylon skips keys
 * sharing key 0's value), so the additive value at frame 10 is (1, 0, 0)
 * absolute; frame 20 is 3 - 1. Babylon answers 1, 2, 1.3. */
START_TEST(the_key_the_frame_zero_key_copies_stays_absolute) {
  double x[3];
  local_x(case_json(POS("[{\"frame\":10,\"values\":[1,0,0]},{\"frame\":20,\"values\":[3,0,0]}]"),
                    "[{\"name\":\"Walk\",\"from\":10,\"to\":20}]",
                    "[{\"op\":\"pose\",\"layers\":[{\"animation\":\"Walk\",\"additive\":true}],\"output\":[\"local\"]},"
                    "{\"op\":\"pose\",\"layers\":[{\"animation\":\"Walk\",\"additive\":true,\"time\":0.3333333333333333}],"
                    "\"output\":[\"local\"]},"
                    "{\"op\":\"pose\",\"layers\":[{\"animation\":\"Walk\",\"additive\":true,\"time\":0.1}],"
                    "\"output\":[\"local\"]}]"),
          x, 3);
  ck_assert_float_eq((float)x[0], 1.0f);
  ck_assert_float_eq((float)x[1], 2.0f);
  ck_assert_float_eq((float)x[2], 1.2999999523162842f);
}
END_TEST

/* A Hermite segment 0..20 cut by a range starting at 5: the key inserted at
 * 5 has no tangents (the rest of the range is linear), and the range ends on
 * the last key, which Babylon's end index (counted before the insertion)
 * leaves as it was. Babylon answers 1.5 and 3. */
START_TEST(a_key_inserted_at_the_range_start_cuts_a_hermite_segment) {
  double x[2];
  local_x(case_json(POS("[{\"frame\":0,\"values\":[0,0,0,null,[0,0,0]]},{\"frame\":20,\"values\":[3,0,0,[0,0,0]]}]"),
                    "[{\"name\":\"Walk\",\"from\":5,\"to\":20}]",
                    "[{\"op\":\"pose\",\"layers\":[{\"animation\":\"Walk\",\"additive\":true,\"time\":0.25}],"
                    "\"output\":[\"local\"]},"
                    "{\"op\":\"pose\",\"layers\":[{\"animation\":\"Walk\",\"additive\":true,\"time\":0.5}],"
                    "\"output\":[\"local\"]}]"),
          x, 2);
  ck_assert_double_eq(x[0], 1.5);
  ck_assert_double_eq(x[1], 3);
  /* the channel itself: keys 0, 5 (inserted, no tangents, 0.46875 - 0.46875), 20 */
  json_t *c = case_json(POS("[{\"frame\":0,\"values\":[0,0,0,null,[0,0,0]]},{\"frame\":20,\"values\":[3,0,0,[0,0,0]]}]"),
                        "[{\"name\":\"Walk\",\"from\":5,\"to\":20}]", "[]");
  sk_skeleton *s;
  sk_anim *a;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_json_parse_skeleton_anim(json_object_get(c, "skeleton"), "", 0, &s, &a, &e), 0);
  sk_anim_channel add;
  ck_assert_int_eq(sk_banim_add_channel(&a->clips[0], &a->clips[0].channels[0], 5, &add), 0);
  ck_assert_uint_eq(add.count, 3);
  ck_assert_double_eq(add.frames[1], 5);
  ck_assert_uint_eq(add.key_flags[1], 0);
  ck_assert_double_eq(add.values64[0], 0);     /* before the range: as it was */
  ck_assert_double_eq(add.values64[9], 0);     /* the inserted key minus the reference (itself) */
  ck_assert_double_eq(add.values64[18], 3);    /* the last key, left by Babylon's end index */
  ck_assert_uint_eq(add.key_flags[2], SK_ANIM_KEY_IN);
  sk_banim_add_channel_close(&add);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
  json_decref(c);
}
END_TEST

/* Keys made once (what a pose spec does) or per call (a layer past
 * SK_BANIM_ADD_KEEP_KEYS) blend to the same bits. */
START_TEST(keys_made_once_or_per_call_blend_alike) {
  json_t *c = case_json(POS("[{\"frame\":0,\"values\":[0,0,0,null,[0,0,0]]},{\"frame\":20,\"values\":[3,0,0,[0,0,0]]}]"),
                        "[{\"name\":\"Walk\",\"from\":5,\"to\":20}]", "[]");
  sk_skeleton *s;
  sk_anim *a;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_json_parse_skeleton_anim(json_object_get(c, "skeleton"), "", 0, &s, &a, &e), 0);
  sk_anim_layer l[2] = {{.clip = 0, .time = 0.1, .weight = 0.7}, {.clip = 0, .time = 0.3, .weight = 0.5}};
  sk_anim_layer_ext x[2] = {{0}, {.additive = true, .reference = 0.2}};
  sk_override per_call[2], once[2];
  size_t d1, d2;
  ck_assert_int_eq(sk_banim_blend(a, s, l, x, 2, per_call, &d1), 0);
  sk_banim_add_layer made;
  ck_assert_int_eq(sk_banim_add_layer_make(a, 0, 0.2, NULL, &made), 0);
  x[1].babylon_add = &made;
  ck_assert_int_eq(sk_banim_blend(a, s, l, x, 2, once, &d2), 0);
  ck_assert_uint_eq(d1, d2);
  ck_assert_int_eq(memcmp(per_call, once, sizeof once), 0);
  ck_assert(per_call[0].position[0] != 0); /* the additive layer did add something */
  sk_banim_add_layer_close(&made);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
  json_decref(c);
}
END_TEST

/* The skeleton and clips of case `c` (new). */
static void parse_case(const json_t *c, sk_skeleton **s, sk_anim **a) {
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_json_parse_skeleton_anim(json_object_get(c, "skeleton"), "", 0, s, a, &e), 0);
}

/* Keys kept with the clips (sk_anim_additive_share, as an upload does)
 * blend, for reference 0, to the bits of keys made per call (masks and
 * other references: tests/check_sk_anim_memo.c). */
START_TEST(keys_kept_at_upload_blend_alike) {
  json_t *c = case_json(POS("[{\"frame\":0,\"values\":[0,0,0,null,[0,0,0]]},{\"frame\":20,\"values\":[3,0,0,[0,0,0]]}]"),
                        "[{\"name\":\"Walk\",\"from\":5,\"to\":20}]", "[]");
  sk_skeleton *s;
  sk_anim *a;
  parse_case(c, &s, &a);
  for (int k = 0; k < 8; k++) {
    sk_anim_layer l[2] = {{.clip = 0, .time = 0.05 * k, .weight = 0.7}, {.clip = 0, .time = 0.3 + 0.04 * k, .weight = 0.5}};
    sk_anim_layer_ext x[2] = {{0}, {.additive = true, .reference = 0}};
    sk_override per_call[2], kept[2];
    size_t d1, d2;
    ck_assert_ptr_null(sk_banim_add_kept_layer(a, 0));
    ck_assert_int_eq(sk_banim_blend(a, s, l, x, 2, per_call, &d1), 0);
    ck_assert_int_eq(sk_anim_additive_share(a, s, SK_ANIM_ADDITIVE_SHARE_MAX), 0);
    ck_assert_ptr_nonnull(sk_banim_add_kept_layer(a, 0));
    ck_assert_uint_gt(sk_anim_additive_memory(a), 0);
    ck_assert_int_eq(sk_banim_blend(a, s, l, x, 2, kept, &d2), 0);
    ck_assert_uint_eq(d1, d2);
    ck_assert_int_eq(memcmp(per_call, kept, sizeof kept), 0);
    ck_assert(per_call[0].position[0] != 0); /* the additive layer did add something */
    /* a fresh anim for the next time: the kept keys go with the clips */
    sk_anim_destroy(a);
    sk_skeleton_destroy(s);
    parse_case(c, &s, &a);
  }
  ck_assert_int_eq(sk_anim_additive_share(a, s, 16), SK_ETOOBIG); /* past the cap: nothing kept */
  ck_assert_ptr_null(sk_banim_add_kept_layer(a, 0));
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
  json_decref(c);
}
END_TEST

/* A clip that Babylon cannot make additive against reference 0 is not
 * kept: its requests are refused as before. */
START_TEST(a_clip_refused_at_reference_0_is_not_kept) {
  json_t *c = case_json(POS("[{\"frame\":0,\"values\":[0,0,0]},{\"frame\":10,\"values\":[1,0,0]}]"),
                        "[{\"name\":\"Walk\",\"from\":0,\"to\":20}]", "[]");
  sk_skeleton *s;
  sk_anim *a;
  parse_case(c, &s, &a);
  ck_assert_int_ne(sk_banim_add_check(a, 0, 0, s, "", NULL), 0); /* the animation ends before the range */
  ck_assert_int_eq(sk_anim_additive_share(a, s, SK_ANIM_ADDITIVE_SHARE_MAX), 0);
  ck_assert_ptr_null(sk_banim_add_kept_layer(a, 0));
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
  json_decref(c);
}
END_TEST

/* ---- validity ------------------------------------------------------------- */

static void expect_refusal(const char *anim, const char *ranges, const char *layer, int code, const char *pointer,
                           const char *text) {
  char ops[1024];
  snprintf(ops, sizeof ops, "[{\"op\":\"pose\",\"layers\":[{\"animation\":\"Walk\"},%s]}]", layer);
  json_t *c = case_json(anim, ranges, ops);
  sk_strbuf out = {0};
  sk_error e;
  sk_error_clear(&e);
  int rc = sk_eval_case(c, &out, &e);
  ck_assert_msg(rc == code, "want %s, got %s (%s at %s)", sk_errname(code), sk_errname(rc), e.text, e.pointer);
  ck_assert_str_eq(e.pointer, pointer);
  ck_assert_msg(strstr(e.text, text) != NULL, "\"%s\" does not say \"%s\"", e.text, text);
  sk_strbuf_free(&out);
  json_decref(c);
}

START_TEST(what_babylon_cannot_make_additive_is_refused_with_a_pointer) {
  /* the bone's animation ends (30) before the range (40): Babylon throws */
  expect_refusal(POS("[{\"frame\":0,\"values\":[0,0,0]},{\"frame\":30,\"values\":[3,0,0]}]"),
                 "[{\"name\":\"Walk\",\"from\":0,\"to\":40}]", "{\"animation\":\"Walk\",\"additive\":true}",
                 SK_EUNSUPPORTED, "/ops/0/layers/1/additive", "bone \"b0\" ends at frame 30");
  /* a reference past the keys the clip keeps after the range (20) */
  expect_refusal(POS("[{\"frame\":0,\"values\":[0,0,0]},{\"frame\":10,\"values\":[1,0,0]},"
                     "{\"frame\":20,\"values\":[3,0,0]}]"),
                 "[{\"name\":\"Walk\",\"from\":0,\"to\":10}]",
                 "{\"animation\":\"Walk\",\"additive\":true,\"reference\":0.8333333333333334}", SK_ERANGE,
                 "/ops/0/layers/1/reference", "after the clip's last frame 10");
  /* several keys at frame 0 and reference 0: the first of them is not kept */
  expect_refusal(POS("[{\"frame\":0,\"values\":[0,0,0]},{\"frame\":0,\"values\":[1,0,0]},"
                     "{\"frame\":10,\"values\":[3,0,0]}]"),
                 "[{\"name\":\"Walk\",\"from\":0,\"to\":10}]", "{\"animation\":\"Walk\",\"additive\":true}",
                 SK_EUNSUPPORTED, "/ops/0/layers/1/additive", "several keys at frame 0");
  /* a bone with several animations: the ranges are on the first only */
  expect_refusal("\"animations\":[{\"name\":\"p\",\"property\":\"position\",\"framePerSecond\":30,\"dataType\":1,"
                 "\"keys\":[{\"frame\":0,\"values\":[0,0,0]},{\"frame\":10,\"values\":[1,0,0]}]},"
                 "{\"name\":\"s\",\"property\":\"scaling\",\"framePerSecond\":30,\"dataType\":1,"
                 "\"keys\":[{\"frame\":0,\"values\":[1,1,1]},{\"frame\":10,\"values\":[2,2,2]}]}]",
                 "[{\"name\":\"Walk\",\"from\":0,\"to\":10}]", "{\"animation\":\"Walk\",\"additive\":true}",
                 SK_EUNSUPPORTED, "/ops/0/layers/1/additive", "several animations");
  /* the layer rules shared with glTF clips still hold */
  expect_refusal(POS("[{\"frame\":0,\"values\":[0,0,0]},{\"frame\":10,\"values\":[1,0,0]}]"),
                 "[{\"name\":\"Walk\",\"from\":0,\"to\":10}]", "{\"animation\":\"Walk\",\"reference\":0.1}", SK_ETYPE,
                 "/ops/0/layers/1/reference", "additive");
  expect_refusal(POS("[{\"frame\":0,\"values\":[0,0,0]},{\"frame\":10,\"values\":[1,0,0]}]"),
                 "[{\"name\":\"Walk\",\"from\":0,\"to\":10}]",
                 "{\"animation\":\"Walk\",\"additive\":true,\"mask\":{\"weights\":{\"b0\":0.5}}}", SK_EUNSUPPORTED,
                 "/ops/0/layers/1/mask", "fractions");
}
END_TEST

/* A reference of the clip's duration can round past the range's end
 * (0 + 0.2333.. * 30 = 7.000000000000001): it reads the last key, as
 * Babylon does, instead of being refused. */
START_TEST(a_reference_of_the_clip_duration_plays) {
  double x[1];
  local_x(case_json(POS("[{\"frame\":0,\"values\":[0,0,0]},{\"frame\":7,\"values\":[7,0,0]}]"),
                    "[{\"name\":\"Walk\",\"from\":0,\"to\":7}]",
                    "[{\"op\":\"pose\",\"layers\":[{\"animation\":\"Walk\",\"additive\":true,"
                    "\"reference\":0.23333333333333334}],\"output\":[\"local\"]}]"),
          x, 1);
  ck_assert_double_eq(x[0], -7); /* frame 0 minus the last key */
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_banim_add");
  TCase *v = tcase_create("validity");
  tcase_add_test(v, what_babylon_cannot_make_additive_is_refused_with_a_pointer);
  suite_add_tcase(s, v);
  TCase *g = tcase_create("golden");
  tcase_add_test(g, the_key_the_frame_zero_key_copies_stays_absolute);
  tcase_add_test(g, a_key_inserted_at_the_range_start_cuts_a_hermite_segment);
  tcase_add_test(g, a_reference_of_the_clip_duration_plays);
  tcase_add_test(g, keys_made_once_or_per_call_blend_alike);
  tcase_add_test(g, keys_kept_at_upload_blend_alike);
  tcase_add_test(g, a_clip_refused_at_reference_0_is_not_kept);
  suite_add_tcase(s, g);
  TCase *c = tcase_create("conformance");
  tcase_set_timeout(c, 300);
  tcase_add_test(c, every_additive_babylon_layer_case_agrees_bit_for_bit);
  suite_add_tcase(s, c);
  return sk_test_run(s);
}
