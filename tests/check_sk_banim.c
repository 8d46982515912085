/* sk_banim: Babylon's own animation format (bone "animation", skeleton
 * "ranges") as clips. The conformance TCase runs tests/conformance/anim.jsonl
 * (tests/oracle/gen_banim.mjs: real Skeleton.serialize() text, played by
 * Babylon's beginAnimation + goToFrame) through `skinner eval` and requires
 * every number bit for bit; the others check each refusal (code + JSON
 * pointer), hand-computed samples, and the clip introspection JSON. */
#include "sk_anim.h"
#include "sk_banim.h"
#include "sk_eval.h"
#include "sk_evalcases.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_jsonl.h"
#include "sk_testutil.h"

#include <string.h>

/* ---- conformance ---------------------------------------------------------- */

START_TEST(every_babylon_clip_case_agrees_bit_for_bit) { sk_evalcases_run("conformance/anim.jsonl", 260, 1800); }
END_TEST

/* A real clip in Babylon's format: tests/data/fox-walk-babylon.json (Fox's
 * Walk written by tests/oracle/make_babylon_clip.mjs, a bone's channels in
 * its "animations" list), at times in and out of the range, looping, and
 * as a frame range, final and local matrices, as Babylon plays the file
 * (tests/conformance/banim_fox.jsonl). */
START_TEST(the_fox_walk_in_babylons_format_agrees_bit_for_bit) {
  sk_evalcases_run("conformance/banim_fox.jsonl", 1, 28);
}
END_TEST

/* The same clip with an in- and out-tangent on every key, and with every
 * key STEP (tests/oracle/gen_banim_fox_keys.py): Animation._interpolate's
 * Hermite and STEP branches on a real clip, through single poses and
 * ranges (sk_sample's CUBICSPLINE and STEP groups take such clips),
 * looping and clamped (tests/conformance/banim_fox_keys.jsonl). */
START_TEST(the_fox_walk_with_hermite_and_step_keys_agrees_bit_for_bit) {
  sk_evalcases_run("conformance/banim_fox_keys.jsonl", 2, 100);
}
END_TEST

/* Weighted glTF layers whose clips drive different bones and paths, weight
 * sums exactly 1, under and over 1 in doubles, masks, one pose and a
 * "times" range (tests/oracle/babylon_layers_weighted.mjs): every float of
 * every "final" bit for bit, the sign of zero included. */
START_TEST(weighted_gltf_layers_agree_with_babylon_bit_for_bit) {
  char base[1024];
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/layers_weighted.jsonl");
  sk_test_path("", base, sizeof base);
  int cases = 0;
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    const char *name = json_string_value(json_object_get(rec, "name"));
    sk_strbuf out = {0};
    sk_error e;
    sk_error_clear(&e);
    int rc = sk_eval_case_at(json_object_get(rec, "case"), base, &out, &e);
    ck_assert_msg(rc == 0, "%s: %s at %s: %s", name, sk_errname(rc), e.pointer, e.text);
    json_t *got = json_loadb(out.data, out.len, JSON_DECODE_INT_AS_REAL, NULL); /* "-0" keeps its sign */
    const json_t *gr = json_object_get(got, "results");
    const json_t *wr = json_object_get(json_object_get(rec, "expected"), "results");
    ck_assert_uint_eq(json_array_size(gr), json_array_size(wr));
    for (size_t r = 0; r < json_array_size(wr); r++) {
      const json_t *g = json_object_get(json_array_get(gr, r), "final");
      const json_t *w = json_object_get(json_array_get(wr, r), "final");
      ck_assert_uint_eq(json_array_size(g), json_array_size(w));
      for (size_t i = 0; i < json_array_size(w); i++) {
        const float gf = (float)json_number_value(json_array_get(g, i));
        const float wf = (float)json_number_value(json_array_get(w, i));
        ck_assert_msg(memcmp(&gf, &wf, sizeof gf) == 0, "%s: result %zu number %zu: %.9g, Babylon %.9g", name, r, i,
                      (double)gf, (double)wf);
      }
    }
    cases++;
    json_decref(got);
    sk_strbuf_free(&out);
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  ck_assert_int_ge(cases, 26);
}
END_TEST

/* glTF clips in additive and masked layers (tests/oracle/babylon_layers.mjs):
 * every float of every "final" bit for bit, the sign of zero included. */
START_TEST(additive_and_masked_gltf_layers_agree_with_babylon_bit_for_bit) {
  char base[1024];
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/layers.jsonl");
  sk_test_path("", base, sizeof base);
  int cases = 0;
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    const char *name = json_string_value(json_object_get(rec, "name"));
    sk_strbuf out = {0};
    sk_error e;
    sk_error_clear(&e);
    int rc = sk_eval_case_at(json_object_get(rec, "case"), base, &out, &e);
    ck_assert_msg(rc == 0, "%s: %s at %s: %s", name, sk_errname(rc), e.pointer, e.text);
    json_t *got = json_loadb(out.data, out.len, JSON_DECODE_INT_AS_REAL, NULL); /* "-0" keeps its sign */
    const json_t *g = json_object_get(json_array_get(json_object_get(got, "results"), 0), "final");
    const json_t *w = json_object_get(json_array_get(json_object_get(json_object_get(rec, "expected"), "results"), 0), "final");
    ck_assert_uint_eq(json_array_size(g), json_array_size(w));
    for (size_t i = 0; i < json_array_size(w); i++) {
      const float gf = (float)json_number_value(json_array_get(g, i));
      const float wf = (float)json_number_value(json_array_get(w, i));
      ck_assert_msg(memcmp(&gf, &wf, sizeof gf) == 0, "%s: number %zu: %.9g, Babylon %.9g", name, i, (double)gf,
                    (double)wf);
    }
    cases++;
    json_decref(got);
    sk_strbuf_free(&out);
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  printf("conformance/layers.jsonl: %d cases bit for bit\n", cases);
  ck_assert_int_ge(cases, 12);
}
END_TEST

/* ---- helpers -------------------------------------------------------------- */

/* A two-bone Babylon skeleton; `anim0` is bone b0's "animation" member text
 * (or "" for none), `extra` more skeleton members (e.g. ranges). */
static json_t *skel_json(const char *anim0, const char *extra) {
  static char text[1 << 18];
  snprintf(text, sizeof text,
           "{\"bones\":[{\"name\":\"b0\",\"parentBoneIndex\":-1,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]%s%s},"
           "{\"name\":\"b1\",\"parentBoneIndex\":0,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1]}]%s%s}",
           anim0[0] ? ",\"animation\":" : "", anim0, extra[0] ? "," : "", extra);
  json_t *j = json_loads(text, 0, NULL);
  ck_assert_msg(j != NULL, "bad test JSON: %s", text);
  return j;
}

static int parse(const char *anim0, const char *extra, sk_skeleton **s, sk_anim **a, sk_error *e) {
  json_t *j = skel_json(anim0, extra);
  sk_error_clear(e);
  int rc = sk_json_parse_skeleton_anim(j, "", 0, s, a, e);
  json_decref(j);
  return rc;
}

static void expect_error(const char *anim0, const char *extra, int code, const char *pointer) {
  sk_skeleton *s;
  sk_anim *a;
  sk_error e;
  int rc = parse(anim0, extra, &s, &a, &e);
  ck_assert_msg(rc == code, "want %s, got %s (%s at %s)", sk_errname(code), sk_errname(rc), e.text, e.pointer);
  ck_assert_str_eq(e.pointer, pointer);
  ck_assert_ptr_null(s);
  ck_assert_ptr_null(a);
}

#define POS_ANIM(keys)                                                                                                 \
  "{\"name\":\"p\",\"property\":\"position\",\"framePerSecond\":30,\"dataType\":1,\"loopBehavior\":1,\"keys\":" keys "}"

/* ---- validity ------------------------------------------------------------- */

START_TEST(bad_animations_are_refused_with_a_pointer) {
  expect_error("{\"property\":\"position\",\"framePerSecond\":30,\"dataType\":2,\"keys\":[]}", "", SK_ERANGE,
               "/bones/0/animation/dataType");
  expect_error("{\"property\":\"rotation\",\"framePerSecond\":30,\"dataType\":1,\"keys\":[]}", "", SK_EUNSUPPORTED,
               "/bones/0/animation/property");
  expect_error("{\"property\":\"position\",\"framePerSecond\":0,\"dataType\":1,\"keys\":[]}", "", SK_ERANGE,
               "/bones/0/animation/framePerSecond");
  expect_error(POS_ANIM("[]"), "", SK_ETYPE, "/bones/0/animation/keys");
  expect_error(POS_ANIM("[{\"frame\":0,\"values\":[0,0]}]"), "", SK_ELENGTH, "/bones/0/animation/keys/0/values");
  expect_error(POS_ANIM("[{\"frame\":0,\"values\":[0,0,\"x\"]}]"), "", SK_ETYPE,
               "/bones/0/animation/keys/0/values/2");
  expect_error(POS_ANIM("[{\"frame\":5,\"values\":[0,0,0]},{\"frame\":4,\"values\":[0,0,0]}]"), "", SK_ERANGE,
               "/bones/0/animation/keys/1/frame");
  expect_error(POS_ANIM("[{\"frame\":-1,\"values\":[0,0,0]}]"), "", SK_ERANGE, "/bones/0/animation/keys/0/frame");
  expect_error(POS_ANIM("[{\"frame\":0,\"values\":[0,0,0],\"easing\":1}]"), "", SK_EUNKNOWN,
               "/bones/0/animation/keys/0/easing");
  expect_error(POS_ANIM("[{\"values\":[0,0,0]}]"), "", SK_EMISSING, "/bones/0/animation/keys/0/frame");
  expect_error(POS_ANIM("[{\"frame\":0,\"values\":[0,0,0,[1,2]]}]"), "", SK_ETYPE,
               "/bones/0/animation/keys/0/values/3");
  expect_error("{\"property\":\"position\",\"framePerSecond\":30,\"dataType\":1,\"loopBehavior\":5,\"keys\":[]}", "",
               SK_EUNSUPPORTED, "/bones/0/animation/loopBehavior");
  expect_error("{\"property\":\"_matrix\",\"framePerSecond\":30,\"dataType\":3,\"keys\":[{\"frame\":0,\"values\":[1,2]}]}",
               "", SK_ELENGTH, "/bones/0/animation/keys/0/values");
  expect_error(POS_ANIM("[{\"frame\":0,\"values\":[0,0,0]}]"), "\"ranges\":[{\"name\":\"a\",\"from\":3,\"to\":1}]",
               SK_ERANGE, "/ranges/0/to");
  expect_error(POS_ANIM("[{\"frame\":0,\"values\":[0,0,0]}]"),
               "\"ranges\":[{\"name\":\"a\",\"from\":0,\"to\":1},{\"name\":\"a\",\"from\":0,\"to\":2}]", SK_EDUPLICATE,
               "/ranges/1/name");
  expect_error(POS_ANIM("[{\"frame\":0,\"values\":[0,0,0]}]"), "\"ranges\":[{\"name\":\"a\",\"from\":0}]", SK_EMISSING,
               "/ranges/0/to");
  expect_error("[]", "", SK_ETYPE, "/bones/0/animation");
}
END_TEST

/* 2000 keys reached by 600 ranges: 1.2M copied keys from a 100 kB body. */
START_TEST(many_ranges_over_long_animations_are_bounded) {
  sk_strbuf keys = {0}, ranges = {0};
  sk_strbuf_append(&keys, "[", 1);
  for (int k = 0; k < 2000; k++) {
    char one[64];
    int n = snprintf(one, sizeof one, "%s{\"frame\":%d,\"values\":[%d,0,0]}", k ? "," : "", k, k);
    sk_strbuf_append(&keys, one, (size_t)n);
  }
  sk_strbuf_append(&keys, "]", 1);
  sk_strbuf_append(&ranges, "\"ranges\":[", 10);
  for (int r = 0; r < 600; r++) {
    char one[64];
    int n = snprintf(one, sizeof one, "%s{\"name\":\"r%d\",\"from\":0,\"to\":2000}", r ? "," : "", r);
    sk_strbuf_append(&ranges, one, (size_t)n);
  }
  sk_strbuf_append(&ranges, "]", 1);
  sk_strbuf anim = {0};
  const char *head = "{\"property\":\"position\",\"framePerSecond\":30,\"dataType\":1,\"keys\":";
  sk_strbuf_append(&anim, head, strlen(head));
  sk_strbuf_append(&anim, keys.data, keys.len);
  sk_strbuf_append(&anim, "}", 2); /* with the NUL */
  sk_strbuf_append(&ranges, "", 1);
  ck_assert(!keys.failed && !ranges.failed && !anim.failed);
  sk_skeleton *s;
  sk_anim *a;
  sk_error e;
  int rc = parse(anim.data, ranges.data, &s, &a, &e);
  ck_assert_msg(rc == SK_ETOOBIG, "got %s: %s", sk_errname(rc), e.text);
  ck_assert_str_eq(e.pointer, "/ranges");
  ck_assert_ptr_null(a);
  sk_strbuf_free(&keys);
  sk_strbuf_free(&ranges);
  sk_strbuf_free(&anim);
}
END_TEST

START_TEST(skeletons_without_animations_have_no_clips) {
  sk_skeleton *s;
  sk_anim *a;
  sk_error e;
  ck_assert_int_eq(parse("", "\"ranges\":[]", &s, &a, &e), 0);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_null(a);
  sk_skeleton_destroy(s);
}
END_TEST

/* ---- golden --------------------------------------------------------------- */

START_TEST(vector_keys_lerp_step_and_pad_to_frame_zero) {
  sk_skeleton *s;
  sk_anim *a;
  sk_error e;
  /* First key at frame 10: Babylon adds {frame 0, same value}. Key 20 is
   * STEP (interpolation 1 at values[5]). */
  ck_assert_int_eq(parse(POS_ANIM("[{\"frame\":10,\"values\":[1,2,3]},{\"frame\":20,\"values\":[3,2,1,null,null,1]},"
                                  "{\"frame\":30,\"values\":[9,9,9]}]"),
                         "\"ranges\":[{\"name\":\"Walk\",\"from\":0,\"to\":30}]", &s, &a, &e),
                   0);
  ck_assert_ptr_nonnull(a);
  ck_assert(a->babylon);
  ck_assert_uint_eq(a->clip_count, 1);
  ck_assert_str_eq(a->clips[0].name, "Walk");
  ck_assert_double_eq(sk_anim_clip_duration(a, 0), 1.0);
  ck_assert_uint_eq(a->clips[0].channels[0].count, 4);
  double trs[2 * SK_ANIM_TRS];
  sk_override o[2];
  /* t = 0.5 s: frame 15, halfway between 10 and 20. */
  ck_assert_uint_eq(sk_anim_sample_overrides(a, 0, 0.5, false, trs, o), 1);
  ck_assert_uint_eq(o[0].mask, SK_OVERRIDE_POSITION);
  ck_assert_uint_eq(o[1].mask, 0);
  ck_assert_double_eq(o[0].position[0], 2);
  ck_assert_double_eq(o[0].position[2], 2);
  /* Frame 5: between the padded key and the first, the same value. */
  sk_anim_sample_overrides(a, 0, 5.0 / 30, false, trs, o);
  ck_assert_double_eq(o[0].position[1], 2);
  /* Frame 25: STEP key holds (3, 2, 1). */
  sk_anim_sample_overrides(a, 0, 25.0 / 30, false, trs, o);
  ck_assert_double_eq(o[0].position[0], 3);
  /* Past the range: clamped to frame 30; loop wraps 1.25 s to frame 7.5. */
  sk_anim_sample_overrides(a, 0, 9, false, trs, o);
  ck_assert_double_eq(o[0].position[0], 9);
  sk_anim_sample_overrides(a, 0, 1.25, true, trs, o);
  ck_assert_double_eq(o[0].position[0], 1);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(matrix_keys_hold_and_read_float32_objects) {
  sk_skeleton *s;
  sk_anim *a;
  sk_error e;
  ck_assert_int_eq(
      parse("{\"property\":\"_matrix\",\"framePerSecond\":60,\"dataType\":3,\"keys\":["
            "{\"frame\":0,\"values\":[1,0,0,0,0,1,0,0,0,0,1,0,1,2,3,1]},"
            "{\"frame\":10,\"values\":{\"0\":1,\"1\":0,\"2\":0,\"3\":0,\"4\":0,\"5\":1,\"6\":0,\"7\":0,\"8\":0,\"9\":0,"
            "\"10\":1,\"11\":0,\"12\":0.1,\"13\":5,\"14\":6,\"15\":1}}]}",
            "", &s, &a, &e),
      0);
  ck_assert_str_eq(a->clips[0].name, "animation0");
  ck_assert(!a->clips[0].named);
  double trs[2 * SK_ANIM_TRS];
  sk_override o[2];
  sk_anim_sample_overrides(a, 0, 9.9 / 60, false, trs, o);
  ck_assert_uint_eq(o[0].mask, SK_OVERRIDE_MATRIX);
  ck_assert_float_eq(o[0].matrix[12], 1); /* held, not interpolated */
  sk_anim_sample_overrides(a, 0, 10.0 / 60, false, trs, o);
  ck_assert_float_eq(o[0].matrix[12], 0.1f); /* stored as float32, as Babylon's Matrix */
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(eval_poses_name_ranges_play_weighted_and_additive_layers) {
  json_t *skel = skel_json(POS_ANIM("[{\"frame\":0,\"values\":[0,0,0]},{\"frame\":30,\"values\":[3,0,0]}]"),
                           "\"ranges\":[{\"name\":\"Walk\",\"from\":0,\"to\":30}]");
  json_t *c = json_pack("{s:o,s:[{s:s,s:s,s:f,s:[s]}]}", "skeleton", skel, "ops", "op", "pose", "animation", "Walk",
                        "time", 0.5, "output", "local");
  sk_strbuf out = {0};
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_eval_case(c, &out, &e), 0);
  ck_assert_ptr_nonnull(strstr(out.data, "\"local\":[1,0,0,0,0,1,0,0,0,0,1,0,1.5,0,0,1,"));
  sk_strbuf_free(&out);
  json_t *op = json_array_get(json_object_get(c, "ops"), 0);
  json_object_del(op, "animation");
  json_object_del(op, "time");
  /* weighted layers play (tests/conformance/banim_layers.jsonl holds the
   * Babylon answers), and additive ones (banim_additive.jsonl): at frame 30
   * the difference to frame 0 is (3, 0, 0), added to the weighted frame 0 */
  json_object_set_new(op, "layers", json_pack("[{s:s}]", "animation", "Walk"));
  sk_error_clear(&e);
  ck_assert_int_eq(sk_eval_case(c, &out, &e), 0);
  sk_strbuf_free(&out);
  json_object_set_new(op, "layers", json_pack("[{s:s},{s:s,s:b,s:f}]", "animation", "Walk", "animation", "Walk",
                                              "additive", 1, "time", 1.0));
  sk_error_clear(&e);
  ck_assert_int_eq(sk_eval_case(c, &out, &e), 0);
  ck_assert_ptr_nonnull(strstr(out.data, "\"local\":[1,0,0,0,0,1,0,0,0,0,1,0,3,0,0,1,"));
  sk_strbuf_free(&out);
  /* a reference after the last key takes the last key (Babylon's rule):
   * the difference at frame 30 is then 0; refusals: check_sk_banim_add */
  json_object_set_new(json_array_get(json_object_get(op, "layers"), 1), "reference", json_real(2.0));
  sk_error_clear(&e);
  ck_assert_int_eq(sk_eval_case(c, &out, &e), 0);
  ck_assert_ptr_nonnull(strstr(out.data, "\"local\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1,"));
  sk_strbuf_free(&out);
  json_object_del(op, "layers");
  json_object_set_new(op, "animation", json_string("Run"));
  sk_error_clear(&e);
  ck_assert_int_eq(sk_eval_case(c, &out, &e), SK_ENOTFOUND);
  ck_assert_str_eq(e.pointer, "/ops/0/animation");
  sk_strbuf_free(&out);
  json_decref(c);
}
END_TEST

/* ---- copyAnimationRange -------------------------------------------------- */

#define MAT_ANIM(fps)                                                                                                  \
  "{\"property\":\"_matrix\",\"framePerSecond\":" #fps ",\"dataType\":3,\"keys\":["                              \
  "{\"frame\":0,\"values\":[1,0,0,0,0,1,0,0,0,0,1,0,0,2,0,1]},{\"frame\":10,\"values\":[1,0,0,0,0,1,0,0,0,0,1,0,0,4,0,1]}]," \
  "\"ranges\":[{\"name\":\"Walk\",\"from\":0,\"to\":10}]}"

/* Source: b0 (length 2) -> b1 (length 1), both keyed; target: b0 without a
 * length unless `dst_len0`, b1 of length `dst_len1`. */
static int copy_case(const char *dst_len0, const char *dst_len1, const char *name, bool rescale, sk_strbuf *out,
                     sk_error *e) {
  char text[8192];
  snprintf(text, sizeof text,
           "{\"skeleton\":{\"bones\":[{\"name\":\"b0\",\"parentBoneIndex\":-1,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]%s},"
           "{\"name\":\"b1\",\"parentBoneIndex\":0,\"length\":%s,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1]}]},"
           "\"ops\":[{\"op\":\"copyAnimationRange\",\"name\":\"%s\",\"rescale\":%s,\"from\":"
           "{\"ranges\":[{\"name\":\"Walk\",\"from\":0,\"to\":10}],\"bones\":["
           "{\"name\":\"b0\",\"parentBoneIndex\":-1,\"length\":2,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],\"animation\":" MAT_ANIM(30) "},"
           "{\"name\":\"b1\",\"parentBoneIndex\":0,\"length\":1,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1],\"animation\":" MAT_ANIM(30) "}]}},"
           "{\"op\":\"pose\",\"animation\":\"Walk\",\"time\":0.4,\"output\":[\"local\"]}]}",
           dst_len0, dst_len1, name, rescale ? "true" : "false");
  json_t *c = json_loads(text, 0, NULL);
  ck_assert_msg(c != NULL, "bad test JSON");
  sk_error_clear(e);
  int rc = sk_eval_case(c, out, e);
  json_decref(c);
  return rc;
}

START_TEST(copy_animation_range_rescales_and_refuses_what_babylon_gets_wrong) {
  sk_strbuf out = {0};
  sk_error e;
  /* Frame offset 1 (no keys yet): Walk plays frames 1..11; 0.4 s = frame 12
   * clamps to 11 = source frame 10. b1 rescaled by 4 / 2 (parents). */
  ck_assert_int_eq(copy_case(",\"length\":4", "3", "Walk", true, &out, &e), 0);
  ck_assert_ptr_nonnull(strstr(out.data, "\"local\":[1,0,0,0,0,1,0,0,0,0,1,0,0,4,0,1,1,0,0,0,0,1,0,0,0,0,1,0,0,8,0,1]"));
  sk_strbuf_free(&out);
  /* Same lengths: no rescale of b1. */
  ck_assert_int_eq(copy_case(",\"length\":4", "1", "Walk", true, &out, &e), 0);
  ck_assert_ptr_nonnull(strstr(out.data, "\"local\":[1,0,0,0,0,1,0,0,0,0,1,0,0,4,0,1,1,0,0,0,0,1,0,0,0,0,1,0,0,4,0,1]"));
  sk_strbuf_free(&out);
  /* b0 has no length: Babylon's ratio is undefined / 2 = NaN. */
  ck_assert_int_eq(copy_case("", "3", "Walk", true, &out, &e), SK_ERANGE);
  ck_assert_str_eq(e.pointer, "/ops/0/from/bones/1");
  sk_strbuf_free(&out);
  ck_assert_int_eq(copy_case("", "3", "Walk", false, &out, &e), 0);
  sk_strbuf_free(&out);
  ck_assert_int_eq(copy_case("", "3", "Run", false, &out, &e), SK_ENOTFOUND);
  ck_assert_str_eq(e.pointer, "/ops/0/name");
  sk_strbuf_free(&out);
}
END_TEST

/* ---- introspection -------------------------------------------------------- */

START_TEST(clip_json_lists_animated_bones_and_key_frames) {
  sk_skeleton *s;
  sk_anim *a;
  sk_error e;
  ck_assert_int_eq(parse(POS_ANIM("[{\"frame\":0,\"values\":[0,0,0]},{\"frame\":10,\"values\":[1,0,0]},"
                                  "{\"frame\":20,\"values\":[2,0,0]},{\"frame\":40,\"values\":[4,0,0]}]"),
                         "\"ranges\":[{\"name\":\"Walk\",\"from\":12,\"to\":20}]", &s, &a, &e),
                   0);
  sk_strbuf out = {0};
  ck_assert_int_eq(sk_anim_write_clip_json(a, s, 0, &out), 0);
  ck_assert_ptr_nonnull(out.data);
  /* The range [12, 20] reaches keys 10, 20 and, at frame 20 itself, 40. */
  ck_assert_str_eq(out.data, "{\"name\":\"Walk\",\"index\":0,\"fps\":30,\"from\":12,\"to\":20,"
                             "\"duration\":0.26666666666666666,\"bones\":[{\"bone\":\"b0\",\"channels\":["
                             "{\"path\":\"translation\",\"interpolation\":\"BABYLON\",\"keys\":3,\"frames\":[10,20,40]}]}]}");
  json_t *parsed = json_loadb(out.data, out.len, 0, NULL);
  ck_assert_ptr_nonnull(parsed);
  json_decref(parsed);
  sk_strbuf_free(&out);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

/* A glTF clip lists its animated bones with their channels' key frames
 * (seconds x 60, normalize's padding included). */
START_TEST(gltf_clip_json_lists_bones_and_frames) {
  char path[1024];
  FILE *f = fopen(sk_test_path("data/Fox.glb", path, sizeof path), "rb");
  ck_assert_ptr_nonnull(f);
  sk_strbuf data = {0};
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
    sk_strbuf_append(&data, chunk, got);
  fclose(f);
  sk_skeleton *s;
  sk_anim *a;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_gltf_import(data.data, data.len, "", 0, &s, &a, &e), 0);
  size_t walk;
  ck_assert_int_eq(sk_anim_find_clip(a, "Walk", &walk), 0);
  sk_strbuf out = {0};
  ck_assert_int_eq(sk_anim_write_clip_json(a, s, walk, &out), 0);
  json_t *j = json_loadb(out.data, out.len, 0, NULL);
  ck_assert_ptr_nonnull(j);
  ck_assert_str_eq(json_string_value(json_object_get(j, "name")), "Walk");
  ck_assert_ptr_null(json_object_get(j, "fps"));
  const json_t *bones = json_object_get(j, "bones");
  ck_assert_uint_gt(json_array_size(bones), 10);
  size_t channels = 0;
  for (size_t b = 0; b < json_array_size(bones); b++) {
    const json_t *ch = json_object_get(json_array_get(bones, b), "channels");
    for (size_t k = 0; k < json_array_size(ch); k++) {
      const json_t *c = json_array_get(ch, k);
      ck_assert_uint_eq(json_integer_value(json_object_get(c, "keys")), json_array_size(json_object_get(c, "frames")));
      ck_assert_double_eq(json_number_value(json_array_get(json_object_get(c, "frames"), 0)), 0);
      channels++;
    }
  }
  ck_assert_uint_eq(channels, a->clips[walk].channel_count);
  json_decref(j);
  sk_strbuf_free(&out);
  sk_strbuf_free(&data);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

/* Cursors carried from frame to frame (sk_anim_sample_overrides_at) give
 * the bytes of sampling each frame on its own, on every clip of every
 * conformance skeleton: frames in order (within an interval, into the
 * next, across several), looping back, clamped at both ends, repeated,
 * and in random order. */
static void sample_both(const sk_anim *a, size_t clip, double t, bool loop, sk_anim_cursor *cur, double *trs,
                        sk_override *got, sk_override *want) {
  const size_t nb = a->bone_count;
  memset(got, 0, nb * sizeof *got);
  memset(want, 0, nb * sizeof *want);
  ck_assert_uint_eq(sk_anim_sample_overrides_at(a, clip, t, loop, trs, got, cur),
                    sk_anim_sample_overrides(a, clip, t, loop, trs, want));
  ck_assert_msg(memcmp(got, want, nb * sizeof *got) == 0, "clip %zu at t = %.17g (loop %d): not the same bytes", clip,
                t, (int)loop);
}

START_TEST(cursors_give_the_bytes_of_single_frames) {
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/anim.jsonl");
  json_t *rec;
  size_t clips = 0;
  uint64_t rng = 12345;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    const json_t *j = json_object_get(json_object_get(rec, "case"), "skeleton");
    sk_skeleton *s = NULL;
    sk_anim *a = NULL;
    ck_assert_int_eq(sk_json_parse_skeleton(j, "", 0, &s, NULL), 0);
    ck_assert_int_eq(sk_banim_parse(j, "", s, &a, NULL), 0);
    for (size_t c = 0; a != NULL && c < a->clip_count; c++) {
      const size_t nb = a->bone_count ? a->bone_count : 1;
      double *trs = malloc(nb * SK_ANIM_TRS * sizeof *trs);
      sk_override *got = malloc(nb * sizeof *got), *want = malloc(nb * sizeof *want);
      const double dur = sk_anim_clip_duration(a, c);
      for (int loop = 0; loop < 2; loop++) {
        sk_anim_cursor *cur = calloc(a->clips[c].channel_count + 1, sizeof *cur);
        for (double t = -0.3; t < dur + 0.6; t += 1.0 / 97) /* past the end: clamped, or looping back */
          sample_both(a, c, t, loop, cur, trs, got, want);
        for (int k = 0; k < 3; k++) /* the same frame again */
          sample_both(a, c, dur / 3, loop, cur, trs, got, want);
        for (int k = 0; k < 200; k++) { /* anywhere, in any order */
          rng = rng * 6364136223846793005ull + 1442695040888963407ull;
          sample_both(a, c, (double)(rng >> 11) / 9007199254740992.0 * (dur + 1) - 0.5, loop, cur, trs, got, want);
        }
        free(cur);
      }
      free(trs);
      free(got);
      free(want);
      clips++;
    }
    sk_anim_destroy(a);
    sk_skeleton_destroy(s);
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  ck_assert_uint_ge(clips, 200);
}
END_TEST

/* sk_banim_estimate bounds what sk_banim_parse builds, for every skeleton of
 * the conformance cases (the daemon refuses and reserves by it). */
START_TEST(the_estimate_bounds_the_memory_of_every_conformance_skeleton) {
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/anim.jsonl");
  int n = 0;
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    const json_t *j = json_object_get(json_object_get(rec, "case"), "skeleton");
    sk_skeleton *s = NULL;
    sk_anim *a = NULL;
    size_t est = 0;
    ck_assert_int_eq(sk_json_parse_skeleton(j, "", 0, &s, NULL), 0);
    ck_assert_int_eq(sk_banim_estimate(j, "", s, &est, NULL), 0);
    ck_assert_int_eq(sk_banim_parse(j, "", s, &a, NULL), 0);
    ck_assert_msg(est >= sk_anim_memory(a), "estimate %zu under %zu", est, sk_anim_memory(a));
    ck_assert_msg(a != NULL || est == 0, "no clips, estimate %zu", est);
    ck_assert_msg(a == NULL || est <= 2 * sk_anim_memory(a) + 4096, "estimate %zu far over %zu", est,
                  sk_anim_memory(a));
    sk_anim_destroy(a);
    sk_skeleton_destroy(s);
    json_decref(rec);
    n++;
  }
  sk_jsonl_close(&in);
  ck_assert_int_ge(n, 200);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_banim");
  TCase *v = tcase_create("validity");
  tcase_add_test(v, bad_animations_are_refused_with_a_pointer);
  tcase_add_test(v, skeletons_without_animations_have_no_clips);
  tcase_add_test(v, many_ranges_over_long_animations_are_bounded);
  tcase_add_test(v, the_estimate_bounds_the_memory_of_every_conformance_skeleton);
  suite_add_tcase(s, v);
  TCase *g = tcase_create("golden");
  tcase_add_test(g, vector_keys_lerp_step_and_pad_to_frame_zero);
  tcase_add_test(g, matrix_keys_hold_and_read_float32_objects);
  tcase_add_test(g, eval_poses_name_ranges_play_weighted_and_additive_layers);
  tcase_add_test(g, clip_json_lists_animated_bones_and_key_frames);
  tcase_add_test(g, gltf_clip_json_lists_bones_and_frames);
  tcase_add_test(g, copy_animation_range_rescales_and_refuses_what_babylon_gets_wrong);
  suite_add_tcase(s, g);
  TCase *c = tcase_create("conformance");
  tcase_set_timeout(c, 300);
  tcase_add_test(c, every_babylon_clip_case_agrees_bit_for_bit);
  tcase_add_test(c, cursors_give_the_bytes_of_single_frames);
  tcase_add_test(c, the_fox_walk_in_babylons_format_agrees_bit_for_bit);
  tcase_add_test(c, the_fox_walk_with_hermite_and_step_keys_agrees_bit_for_bit);
  tcase_add_test(c, additive_and_masked_gltf_layers_agree_with_babylon_bit_for_bit);
  tcase_add_test(c, weighted_gltf_layers_agree_with_babylon_bit_for_bit);
  suite_add_tcase(s, c);
  return sk_test_run(s);
}
