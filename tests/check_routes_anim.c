/* End to end: clips over HTTP (sk_routes_anim). Babylon-format clips uploaded
 * in a skeleton's JSON, posed over /pose and /poses byte for byte as
 * `skinner eval` poses them (the conformance cases of tests/conformance/
 * anim.jsonl, proven bit for bit against Babylon by check_sk_banim), kept
 * across a restart with --data-dir, and one clip's detail at
 * /v1/skeletons/{id}/animations/{clip}. Test names are sentences. */
#include <math.h>
#include <stdbool.h>

#include <jansson.h>

#include "sk_eval.h"
#include "sk_fixture.h"
#include "sk_casecheck.h"
#include "sk_httpc.h"
#include "sk_jsonl.h"
#include "sk_testutil.h"

static sk_daemon D;

static void start(const char *const *extra) { sk_fixture_start(&D, extra); }

static void stop(void) { sk_fixture_stop(&D); }

static void req(const char *method, const char *path, const char *body, sk_httpc_resp *r) {
  sk_fixture_json_request(&D, method, path, NULL, body, r);
}

/* The answer's body, which must be `status`; new (free()). */
static char *answer(const char *method, const char *path, const char *body, int status) {
  sk_httpc_resp r;
  req(method, path, body, &r);
  ck_assert_msg(r.status == status, "%s %s: %d, want %d: %.300s", method, path, r.status, status, r.body);
  char *out = strndup(r.body ? r.body : "", r.len);
  sk_httpc_free(&r);
  return out;
}

static void expect_problem(const char *method, const char *path, const char *body, int status, const char *kind) {
  sk_httpc_resp r;
  req(method, path, body, &r);
  char ct[128];
  ck_assert_msg(r.status == status, "%s %s: %d, want %d: %.300s", method, path, r.status, status, r.body);
  ck_assert(sk_httpc_header(&r, "Content-Type", ct, sizeof ct) && strcmp(ct, "application/problem+json") == 0);
  json_t *j = json_loadb(r.body, r.len, 0, NULL);
  ck_assert_ptr_nonnull(j);
  char type[256];
  snprintf(type, sizeof type, "https://skinnerd.dev/problems/%s", kind);
  ck_assert_str_eq(json_string_value(json_object_get(j, "type")), type);
  json_decref(j);
  sk_httpc_free(&r);
}

static char *eval_one(const json_t *skeleton, const json_t *op) { return sk_casecheck_eval_one(skeleton, op); }

static bool is_range(const json_t *op) {
  return json_object_get(op, "from") != NULL || json_object_get(op, "times") != NULL;
}

/* A small Babylon skeleton: two bones, a position animation on the child
 * (Hermite keys) and a _matrix one on the root, two ranges. */
static const char k_small[] =
    "{\"bones\":[{\"name\":\"root\",\"parentBoneIndex\":-1,\"index\":0,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],"
    "\"animation\":{\"name\":\"m\",\"property\":\"_matrix\",\"framePerSecond\":30,\"dataType\":3,\"loopBehavior\":1,"
    "\"keys\":[{\"frame\":0,\"values\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]},"
    "{\"frame\":20,\"values\":[1,0,0,0,0,1,0,0,0,0,1,0,0,2,0,1]}]}},"
    "{\"name\":\"arm\",\"parentBoneIndex\":0,\"index\":1,\"length\":1.5,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1],"
    "\"animation\":{\"name\":\"p\",\"property\":\"position\",\"framePerSecond\":30,\"dataType\":1,\"loopBehavior\":1,"
    "\"keys\":[{\"frame\":0,\"values\":[0,1,0]},{\"frame\":10,\"values\":[0,1.5,0.25]},{\"frame\":30,"
    "\"values\":[1,1,0]}]}}],"
    "\"ranges\":[{\"name\":\"Wave\",\"from\":0,\"to\":10},{\"name\":\"Rise\",\"from\":10,\"to\":30}]}";

/* The same bones without animations, as a retarget target. */
static const char k_bare[] =
    "{\"bones\":[{\"name\":\"root\",\"parentBoneIndex\":-1,\"index\":0,\"length\":2,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]},"
    "{\"name\":\"arm\",\"parentBoneIndex\":0,\"index\":1,\"length\":3,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,2,0,1]}]}";

/* A retarget source: _matrix keys on both bones (what copyAnimationRange copies). */
static const char k_src[] =
    "{\"bones\":[{\"name\":\"root\",\"parentBoneIndex\":-1,\"index\":0,\"length\":1,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],"
    "\"animation\":{\"name\":\"m\",\"property\":\"_matrix\",\"framePerSecond\":30,\"dataType\":3,\"loopBehavior\":1,"
    "\"ranges\":[{\"name\":\"Rise\",\"from\":10,\"to\":30}],\"keys\":[{\"frame\":0,\"values\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]},"
    "{\"frame\":20,\"values\":[0,1,0,0,-1,0,0,0,0,0,1,0,0,2,0,1]}]}},"
    "{\"name\":\"arm\",\"parentBoneIndex\":0,\"index\":1,\"length\":1.5,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1],"
    "\"animation\":{\"name\":\"a\",\"property\":\"_matrix\",\"framePerSecond\":30,\"dataType\":3,\"loopBehavior\":1,"
    "\"ranges\":[{\"name\":\"Rise\",\"from\":10,\"to\":30}],\"keys\":[{\"frame\":0,\"values\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1]},"
    "{\"frame\":15,\"values\":[1,0,0,0,0,1,0,0,0,0,1,0,0.5,1.5,0,1]},"
    "{\"frame\":30,\"values\":[1,0,0,0,0,0,1,0,0,-1,0,0,0,1,1,1]}]}}],"
    "\"ranges\":[{\"name\":\"Rise\",\"from\":10,\"to\":30}]}";

/* ---- poses ------------------------------------------------------------------ */

START_TEST(babylon_clip_poses_answer_exactly_what_skinner_eval_answers_on_the_conformance_cases) {
  start(NULL);
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/anim.jsonl");
  int cases = 0;
  sk_casecheck_counts n = {0};
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    const json_t *c = json_object_get(rec, "case"), *ops = json_object_get(c, "ops");
    const json_t *skel = json_object_get(c, "skeleton");
    bool only_poses = json_array_size(ops) > 0;
    for (size_t i = 0; i < json_array_size(ops); i++)
      only_poses &= strcmp(json_string_value(json_object_get(json_array_get(ops, i), "op")), "pose") == 0;
    if (!only_poses) { /* "set" and copyAnimationRange change the case's skeleton between poses */
      json_decref(rec);
      continue;
    }
    char id[32];
    snprintf(id, sizeof id, "anim%d", cases++);
    sk_casecheck_run(&D, id, skel, ops, &n);
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  ck_assert_int_ge(cases, 100);
  ck_assert_int_ge(n.ranges, 50);
  ck_assert_int_ge(n.batches, 20);
  ck_assert_int_ge(n.poses, 300);
  stop();
}
END_TEST

/* The numbers of two result arrays equal as float32 (the oracle prints
 * doubles, skinnerd float32's shortest text). */
static void expect_f32_equal(const json_t *got, const json_t *want, const char *what) {
  ck_assert_msg(json_array_size(got) == json_array_size(want), "%s: %zu results, want %zu", what,
                json_array_size(got), json_array_size(want));
  for (size_t r = 0; r < json_array_size(want); r++) {
    const char *key;
    json_t *arr;
    json_object_foreach(json_array_get(want, r), key, arr) {
      const json_t *g = json_object_get(json_array_get(got, r), key);
      ck_assert_msg(json_array_size(g) == json_array_size(arr), "%s result %zu %s: length", what, r, key);
      for (size_t i = 0; i < json_array_size(arr); i++) {
        float a = (float)json_number_value(json_array_get(g, i)), b = (float)json_number_value(json_array_get(arr, i));
        ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "%s result %zu %s[%zu]: %.9g, Babylon %.9g", what, r, key, i, a,
                      b);
      }
    }
  }
}

START_TEST(weighted_layers_of_babylon_clips_blend_as_babylon_bit_for_bit_over_http) {
  start(NULL);
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/banim_layers.jsonl");
  int cases = 0, poses = 0;
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    const json_t *c = json_object_get(rec, "case"), *ops = json_object_get(c, "ops");
    const json_t *skel = json_object_get(c, "skeleton");
    /* skinner eval against Babylon */
    sk_strbuf out = {0};
    sk_error e;
    sk_error_clear(&e);
    ck_assert_msg(sk_eval_case(c, &out, &e) == 0, "%s: %s at %s", json_string_value(json_object_get(rec, "name")),
                  e.text, e.pointer);
    json_t *got = json_loadb(out.data, out.len, JSON_DECODE_INT_AS_REAL, NULL); /* "-0" keeps its sign */
    expect_f32_equal(json_object_get(got, "results"),
                     json_object_get(json_object_get(rec, "expected"), "results"),
                     json_string_value(json_object_get(rec, "name")));
    json_decref(got);
    sk_strbuf_free(&out);
    /* the daemon against skinner eval, byte for byte */
    char id[32], url[96], *text = json_dumps(skel, JSON_COMPACT);
    snprintf(id, sizeof id, "layers%d", cases++);
    sk_fixture_put_json(&D, id, text);
    free(text);
    snprintf(url, sizeof url, "/v1/skeletons/%s/pose", id);
    for (size_t i = 0; i < json_array_size(ops); i++) {
      json_t *op = json_deep_copy(json_array_get(ops, i));
      char *want = eval_one(skel, op);
      json_object_del(op, "op");
      char *body = json_dumps(op, JSON_COMPACT), *a = answer("POST", url, body, 200);
      size_t wl = strlen(want);
      bool same = is_range(op) ? strlen(a) == wl + 14 && strncmp(a + 12, want, wl) == 0 : strcmp(a, want) == 0;
      ck_assert_msg(same, "%s op %zu: differs from skinner eval:\n got %.300s\nwant %.300s", id, i, a, want);
      free(a);
      free(body);
      free(want);
      json_decref(op);
      poses++;
    }
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  ck_assert_int_ge(cases, 60);
  ck_assert_int_ge(poses, 180);
  stop();
}
END_TEST

/* Every case of the glTF layer file `file` through /pose: the bytes of
 * skinner eval's results (the daemon running). Returns the cases. */
static int gltf_layer_cases_answer_as_skinner_eval(const char *file) {
  char base[1024];
  sk_jsonl in;
  sk_jsonl_open(&in, file);
  sk_test_path("", base, sizeof base);
  int cases = 0;
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    const json_t *c = json_object_get(rec, "case");
    const char *asset = json_string_value(json_object_get(json_object_get(c, "skeleton"), "gltf"));
    size_t n;
    unsigned char *data = sk_test_read_file(asset, &n);
    ck_assert_msg(data != NULL, "%s missing", asset);
    char id[32], url[96];
    snprintf(id, sizeof id, "gltf%d", cases++);
    size_t alen = strlen(asset);
    sk_fixture_put(&D, id, alen > 4 && strcmp(asset + alen - 4, ".glb") == 0 ? "model/gltf-binary" : "model/gltf+json",
                   data, n);
    free(data);
    snprintf(url, sizeof url, "/v1/skeletons/%s/pose", id);
    const json_t *ops = json_object_get(c, "ops");
    for (size_t i = 0; i < json_array_size(ops); i++) {
      json_t *one = json_pack("{s:O,s:[O]}", "skeleton", json_object_get(c, "skeleton"), "ops", json_array_get(ops, i));
      sk_strbuf out = {0};
      sk_error e;
      sk_error_clear(&e);
      ck_assert_int_eq(sk_eval_case_at(one, base, &out, &e), 0);
      const char *at = strstr(out.data, ",\"results\":[");
      ck_assert_ptr_nonnull(at);
      at += 12;
      char *want = strndup(at, out.len - (size_t)(at - out.data) - 2);
      if (json_object_get(json_array_get(ops, i), "times") != NULL) { /* a range: /pose answers {"results": [...]} */
        char *w = malloc(strlen(want) + 16);
        ck_assert_ptr_nonnull(w);
        sprintf(w, "{\"results\":[%s]}", want);
        free(want);
        want = w;
      }
      json_t *op = json_deep_copy(json_array_get(ops, i));
      json_object_del(op, "op");
      char *body = json_dumps(op, JSON_COMPACT), *got = answer("POST", url, body, 200);
      ck_assert_msg(strcmp(got, want) == 0, "%s: differs from skinner eval:\n got %.300s\nwant %.300s",
                    json_string_value(json_object_get(rec, "name")), got, want);
      free(got);
      free(body);
      free(want);
      json_decref(op);
      sk_strbuf_free(&out);
      json_decref(one);
    }
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  return cases;
}

START_TEST(additive_and_masked_gltf_layers_answer_what_skinner_eval_answers) {
  start(NULL);
  ck_assert_int_ge(gltf_layer_cases_answer_as_skinner_eval("conformance/layers.jsonl"), 12);
  stop();
}
END_TEST

/* Weighted glTF layers that check_sk_banim holds to Babylon bit for bit
 * (layers_weighted.jsonl): the same bytes over HTTP, "times" ranges too. */
START_TEST(weighted_gltf_layers_answer_what_skinner_eval_answers) {
  start(NULL);
  ck_assert_int_ge(gltf_layer_cases_answer_as_skinner_eval("conformance/layers_weighted.jsonl"), 38);
  stop();
}
END_TEST

START_TEST(additive_layers_and_fractional_masks_of_babylon_clips_are_refused_with_415) {
  start(NULL);
  sk_fixture_put_json(&D, "small", k_small);
  expect_problem("POST", "/v1/skeletons/small/pose",
                 "{\"layers\":[{\"animation\":\"Wave\",\"time\":0.1},{\"animation\":\"Rise\",\"additive\":true}]}", 415,
                 "unsupported-media-type");
  expect_problem("POST", "/v1/skeletons/small/pose",
                 "{\"layers\":[{\"animation\":\"Wave\",\"time\":0.1,\"mask\":{\"weights\":{\"arm\":0.5}}}]}", 415,
                 "unsupported-media-type");
  /* a 0/1 mask plays (Babylon's targetMask): the arm's animation is left out */
  char *masked = answer("POST", "/v1/skeletons/small/pose",
                        "{\"layers\":[{\"animation\":\"Wave\",\"time\":0.1,\"mask\":{\"exclude\":[\"arm\"]}}],"
                        "\"output\":[\"local\"]}",
                        200);
  ck_assert_ptr_nonnull(strstr(masked, ",1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1]}")); /* arm: its stored local */
  free(masked);
  /* plain weighted layers are answered */
  free(answer("POST", "/v1/skeletons/small/pose",
              "{\"layers\":[{\"animation\":\"Wave\",\"time\":0.1,\"weight\":0.5},{\"animation\":\"Rise\",\"weight\":0.25}]}",
              200));
  stop();
}
END_TEST

/* ---- listing and detail ------------------------------------------------------- */

START_TEST(an_upload_lists_its_babylon_clips_and_each_clip_has_a_detail) {
  start(NULL);
  char *up = answer("PUT", "/v1/skeletons/small", k_small, 201);
  ck_assert_str_eq(up, "{\"id\":\"small\",\"bones\":2,\"order\":[\"root\",\"arm\"],\"slots\":[0,1],\"mesh\":null,\"animations\":["
                       "{\"index\":0,\"name\":\"Wave\",\"duration\":0.3333333333333333,\"fps\":30,\"from\":0,\"to\":10,"
                       "\"channels\":2,\"keys\":5},"
                       "{\"index\":1,\"name\":\"Rise\",\"duration\":0.6666666666666666,\"fps\":30,\"from\":10,\"to\":30,"
                       "\"channels\":2,\"keys\":4}]}");
  free(up);
  /* GET lists the same clips */
  char *got = answer("GET", "/v1/skeletons/small", NULL, 200);
  ck_assert_ptr_nonnull(strstr(got, "\"animations\":[{\"index\":0,\"name\":\"Wave\",\"duration\":0.3333333333333333,"
                                    "\"fps\":30,\"from\":0,\"to\":10,\"channels\":2,\"keys\":5},"));
  free(got);
  got = answer("GET", "/v1/skeletons/small/animations/Rise", NULL, 200);
  ck_assert_str_eq(got, "{\"name\":\"Rise\",\"index\":1,\"fps\":30,\"from\":10,\"to\":30,"
                        "\"duration\":0.6666666666666666,\"bones\":["
                        "{\"bone\":\"root\",\"channels\":[{\"path\":\"matrix\",\"interpolation\":\"HOLD\",\"keys\":2,"
                        "\"frames\":[0,20]}]},"
                        "{\"bone\":\"arm\",\"channels\":[{\"path\":\"translation\",\"interpolation\":\"BABYLON\","
                        "\"keys\":2,\"frames\":[10,30]}]}]}");
  free(got);
  /* by index, as poses address clips */
  char *by_index = answer("GET", "/v1/skeletons/small/animations/1", NULL, 200);
  ck_assert_ptr_nonnull(strstr(by_index, "\"name\":\"Rise\""));
  free(by_index);
  expect_problem("GET", "/v1/skeletons/small/animations/Nope", NULL, 404, "not-found");
  expect_problem("GET", "/v1/skeletons/small/animations/", NULL, 404, "not-found");
  expect_problem("GET", "/v1/skeletons/small/animations/Rise/more", NULL, 404, "not-found");
  char longname[400] = "/v1/skeletons/small/animations/";
  memset(longname + strlen(longname), 'x', 300);
  longname[sizeof longname - 1] = 0;
  expect_problem("GET", longname, NULL, 404, "not-found"); /* over 255 bytes: no such clip */
  sk_httpc_resp h;
  req("HEAD", "/v1/skeletons/small/animations/Rise", NULL, &h);
  ck_assert_int_eq(h.status, 200);
  sk_httpc_free(&h);
  expect_problem("GET", "/v1/skeletons/nobody/animations/Rise", NULL, 404, "not-found");
  expect_problem("POST", "/v1/skeletons/small/animations/Rise", "{}", 405, "method-not-allowed");
  /* a JSON skeleton without animations: no clips, and its upload answer is unchanged */
  up = answer("PUT", "/v1/skeletons/plain", "{\"bones\":[{\"name\":\"a\"}]}", 201);
  ck_assert_str_eq(up, "{\"id\":\"plain\",\"bones\":1,\"order\":[\"a\"],\"slots\":[0],\"mesh\":null}");
  free(up);
  expect_problem("GET", "/v1/skeletons/plain/animations/0", NULL, 404, "not-found");
  stop();
}
END_TEST

START_TEST(a_gltf_clip_has_a_detail_with_its_key_times) {
  start(NULL);
  sk_fixture_put_asset(&D, "fox", "Fox.glb");
  char *got = answer("GET", "/v1/skeletons/fox/animations/Walk", NULL, 200);
  json_t *j = json_loads(got, 0, NULL);
  ck_assert_ptr_nonnull(j);
  ck_assert_str_eq(json_string_value(json_object_get(j, "name")), "Walk");
  ck_assert_ptr_null(json_object_get(j, "fps")); /* frame ranges are Babylon-format only */
  const json_t *bones = json_object_get(j, "bones");
  ck_assert_int_gt(json_array_size(bones), 10);
  const json_t *ch = json_array_get(json_object_get(json_array_get(bones, 0), "channels"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(ch, "interpolation")), "LINEAR");
  ck_assert_int_eq(json_integer_value(json_object_get(ch, "keys")), json_array_size(json_object_get(ch, "frames")));
  json_decref(j);
  free(got);
  stop();
}
END_TEST

/* GET …/rootMotion against the Babylon answers of check_rootmotion: the
 * same numbers through the default mesh chain of the upload. */
static void expect_root_motion(const char *id, const char *answers) {
  size_t len;
  char *text = (char *)sk_test_read_file(answers, &len);
  ck_assert_ptr_nonnull(text);
  json_t *exp = json_loadb(text, len, 0, NULL);
  free(text);
  ck_assert_ptr_nonnull(exp);
  size_t i;
  const json_t *c;
  json_array_foreach(json_object_get(exp, "clips"), i, c) {
    char path[256];
    snprintf(path, sizeof path, "/v1/skeletons/%s/animations/%s/rootMotion", id,
             json_string_value(json_object_get(c, "name")));
    char *got = answer("GET", path, NULL, 200);
    json_t *j = json_loads(got, 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(json_string_value(json_object_get(j, "source")), json_string_value(json_object_get(c, "source")));
    static const char *const nums[] = {"fromFrame", "toFrame", "duration", "characterHeight", "cycleDistance",
                                       "cycleRotation", "averageSpeed", "samples"};
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
      ck_assert_msg(json_number_value(json_object_get(j, nums[k])) == json_number_value(json_object_get(c, nums[k])),
                    "%s %s: %s", path, nums[k], got);
    static const char *const vecs[] = {"travelDirection", "cycleOffset"};
    for (size_t k = 0; k < 2; k++)
      for (size_t d = 0; d < 3; d++)
        ck_assert_msg(json_number_value(json_array_get(json_object_get(j, vecs[k]), d)) ==
                          json_number_value(json_array_get(json_object_get(c, vecs[k]), d)),
                      "%s %s: %s", path, vecs[k], got);
    ck_assert(json_equal(json_object_get(j, "contactNodes"), json_object_get(c, "contactNodes")));
    json_decref(j);
    free(got);
  }
  json_decref(exp);
}

START_TEST(root_motion_is_babylons_analysis_and_bad_options_name_the_field) {
  start(NULL);
  sk_fixture_put_asset(&D, "fox", "Fox.glb");
  sk_fixture_put_asset(&D, "cesium", "CesiumMan.glb");
  sk_fixture_put_asset(&D, "mq", "mannequiny-0.3.0.glb");
  expect_root_motion("fox", "data/rootmotion/Fox.json");
  expect_root_motion("cesium", "data/rootmotion/CesiumMan.json");
  expect_root_motion("mq", "data/rootmotion/mannequiny-0.3.0.json");
  char *got = answer("GET", "/v1/skeletons/fox/animations/1/rootMotion?source=root&minimumTravel=0.05&directionSnapAngle=0.3",
                     NULL, 200);
  ck_assert_ptr_nonnull(strstr(got, "\"source\":\"root\""));
  free(got);
  expect_problem("GET", "/v1/skeletons/fox/animations/Nope/rootMotion", NULL, 404, "not-found");
  expect_problem("GET", "/v1/skeletons/fox/animations/Walk/rootMotion?samplesPerSecond=abc", NULL, 422, "out-of-range");
  expect_problem("GET", "/v1/skeletons/fox/animations/Walk/rootMotion?samplesPerSecond=0", NULL, 422, "out-of-range");
  expect_problem("GET", "/v1/skeletons/fox/animations/Walk/rootMotion?source=hips", NULL, 422, "out-of-range");
  expect_problem("GET", "/v1/skeletons/fox/animations/Walk/rootMotion?rootNode=nope", NULL, 422, "unknown-reference");
  expect_problem("GET", "/v1/skeletons/fox/animations/Walk/rootMotion?contactNodes=b_Hip_01,,x", NULL, 422,
                 "unknown-reference");
  expect_problem("GET", "/v1/skeletons/fox/animations/Walk/rootMotion?extractRotation=yes", NULL, 422, "out-of-range");
  expect_problem("GET", "/v1/skeletons/fox/animations/Walk/rootMotion?speed=2", NULL, 400, "invalid-request");
  expect_problem("POST", "/v1/skeletons/fox/animations/Walk/rootMotion", "{}", 405, "method-not-allowed");
  stop();
}
END_TEST

/* The results of a whole case from `skinner eval`, without the array. */
static char *eval_case(const json_t *c) {
  sk_strbuf out = {0};
  sk_error e;
  sk_error_clear(&e);
  ck_assert_msg(sk_eval_case(c, &out, &e) == 0, "eval: %s at %s", e.text, e.pointer);
  const char *at = strstr(out.data, ",\"results\":[");
  ck_assert_ptr_nonnull(at);
  at += 12;
  char *r = strndup(at, out.len - (size_t)(at - out.data) - 2);
  sk_strbuf_free(&out);
  return r;
}

START_TEST(another_skeletons_range_poses_as_copyAnimationRange_does_at_pose_time_and_as_a_stored_copy) {
  start(NULL);
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/anim.jsonl");
  int cases = 0, rescaled = 0, at_pose_time = 0;
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    const json_t *c = json_object_get(rec, "case"), *ops = json_object_get(c, "ops");
    const json_t *op0 = json_array_get(ops, 0);
    bool copy_then_poses = strcmp(json_string_value(json_object_get(op0, "op")), "copyAnimationRange") == 0;
    for (size_t i = 1; i < json_array_size(ops); i++)
      copy_then_poses &= strcmp(json_string_value(json_object_get(json_array_get(ops, i), "op")), "pose") == 0;
    if (!copy_then_poses || json_object_get(rec, "reject") != NULL) {
      json_decref(rec);
      continue;
    }
    char dst[32], src[32], url[96], body[512], *text;
    snprintf(dst, sizeof dst, "dst%d", cases);
    snprintf(src, sizeof src, "src%d", cases++);
    text = json_dumps(json_object_get(c, "skeleton"), JSON_COMPACT);
    sk_fixture_put_json(&D, dst, text);
    free(text);
    text = json_dumps(json_object_get(op0, "from"), JSON_COMPACT);
    sk_fixture_put_json(&D, src, text);
    free(text);
    const char *name = json_string_value(json_object_get(op0, "name"));
    bool rescale = json_is_true(json_object_get(op0, "rescale"));
    rescaled += rescale;
    char *want = eval_case(c);
    /* first played at pose time ("from": the source's id), nothing stored;
     * poses whose frame range uses a numeric "from" cannot say both */
    bool skip_pose_time = false;
    for (size_t i = 1; i < json_array_size(ops); i++) {
      const json_t *a = json_object_get(json_array_get(ops, i), "animation");
      skip_pose_time |= json_object_get(json_array_get(ops, i), "from") != NULL;
      skip_pose_time |= !json_is_string(a) || strcmp(json_string_value(a), name) != 0; /* it plays another clip */
    }
    if (!skip_pose_time) {
      snprintf(url, sizeof url, "/v1/skeletons/%s/pose", dst);
      sk_strbuf got = {0};
      for (size_t i = 1; i < json_array_size(ops); i++) {
        json_t *op = json_deep_copy(json_array_get(ops, i));
        json_object_del(op, "op");
        json_object_set_new(op, "from", json_string(src));
        json_object_set_new(op, "rescale", json_boolean(rescale));
        char *pb = json_dumps(op, JSON_COMPACT), *a = answer("POST", url, pb, 200);
        size_t alen = strlen(a);
        if (i > 1)
          sk_strbuf_append(&got, ",", 1);
        if (json_object_get(op, "times") != NULL)
          sk_strbuf_append(&got, a + 12, alen - 14);
        else
          sk_strbuf_append(&got, a, alen);
        free(a);
        free(pb);
        json_decref(op);
      }
      sk_strbuf_append(&got, "", 1);
      ck_assert_msg(strcmp(got.data, want) == 0, "%s at pose time: differs from skinner eval:\n got %.300s\nwant %.300s",
                    dst, got.data, want);
      sk_strbuf_free(&got);
      at_pose_time++;
    }
    snprintf(url, sizeof url, "/v1/skeletons/%s/animations", dst);
    snprintf(body, sizeof body, "{\"from\":\"%s\",\"animation\":\"%s\",\"rescale\":%s}", src, name,
             rescale ? "true" : "false");
    char *detail = answer("POST", url, body, 201);
    ck_assert_ptr_nonnull(strstr(detail, "\"path\":\"matrix\""));
    free(detail);
    /* the poses after it, against the whole case in skinner eval */
    snprintf(url, sizeof url, "/v1/skeletons/%s/pose", dst);
    sk_strbuf got = {0};
    for (size_t i = 1; i < json_array_size(ops); i++) {
      json_t *op = json_deep_copy(json_array_get(ops, i));
      json_object_del(op, "op");
      char *pb = json_dumps(op, JSON_COMPACT), *a = answer("POST", url, pb, 200);
      size_t alen = strlen(a);
      if (i > 1)
        sk_strbuf_append(&got, ",", 1);
      if (is_range(op))
        sk_strbuf_append(&got, a + 12, alen - 14); /* {"results":[ ... ]} */
      else
        sk_strbuf_append(&got, a, alen);
      free(a);
      free(pb);
      json_decref(op);
    }
    sk_strbuf_append(&got, "", 1);
    ck_assert_msg(strcmp(got.data, want) == 0, "%s: differs from skinner eval:\n got %.300s\nwant %.300s", dst,
                  got.data, want);
    free(want);
    sk_strbuf_free(&got);
    /* a second copy of the same range is refused: the target has it now */
    snprintf(url, sizeof url, "/v1/skeletons/%s/animations", dst);
    expect_problem("POST", url, body, 422, "duplicate");
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  ck_assert_int_ge(cases, 40);
  ck_assert_int_ge(rescaled, 10);
  ck_assert_int_ge(at_pose_time, 20);
  stop();
}
END_TEST

/* A chain of `n` bones in Babylon's format; with `keys` > 0 each bone has a
 * _matrix animation of that many keys and the range "Go" over them. */
static char *chain(int n, int keys) {
  sk_strbuf b = {0};
  sk_strbuf_append(&b, "{\"bones\":[", 10);
  for (int i = 0; i < n; i++) {
    char one[256];
    int len = snprintf(one, sizeof one,
                       "%s{\"name\":\"c%d\",\"parentBoneIndex\":%d,\"index\":%d,\"length\":1,"
                       "\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,%d,0,1]",
                       i ? "," : "", i, i - 1, i, i ? 1 : 0);
    sk_strbuf_append(&b, one, (size_t)len);
    if (keys > 0) {
      len = snprintf(one, sizeof one,
                     ",\"animation\":{\"name\":\"a%d\",\"property\":\"_matrix\",\"framePerSecond\":30,\"dataType\":3,"
                     "\"loopBehavior\":1,\"ranges\":[{\"name\":\"Go\",\"from\":0,\"to\":%d}],\"keys\":[",
                     i, keys - 1);
      sk_strbuf_append(&b, one, (size_t)len);
      for (int k = 0; k < keys; k++) {
        double a = 0.02 * k + 0.1 * i, c = cos(a), sn = sin(a);
        len = snprintf(one, sizeof one, "%s{\"frame\":%d,\"values\":[%.17g,%.17g,0,0,%.17g,%.17g,0,0,0,0,1,0,0,%d,0,1]}",
                       k ? "," : "", k, c, sn, -sn, c, i ? 1 : 0);
        sk_strbuf_append(&b, one, (size_t)len);
      }
      sk_strbuf_append(&b, "]}", 2);
    }
    sk_strbuf_append(&b, "}", 1);
  }
  sk_strbuf_append(&b, "]", 1);
  if (keys > 0) {
    char r[64];
    int len = snprintf(r, sizeof r, ",\"ranges\":[{\"name\":\"Go\",\"from\":0,\"to\":%d}]", keys - 1);
    sk_strbuf_append(&b, r, (size_t)len);
  }
  sk_strbuf_append(&b, "}", 2);
  return b.data;
}

START_TEST(a_copy_between_large_skeletons_runs_on_the_pool_and_answers_as_skinner_eval) {
  start(NULL);
  char *src = chain(40, 60), *dst = chain(40, 0);
  ck_assert_uint_gt(strlen(src), 100000); /* far over the 32 KiB that moves work to the pool */
  sk_fixture_put_json(&D, "src", src);
  sk_fixture_put_json(&D, "dst", dst);
  char *detail = answer("POST", "/v1/skeletons/dst/animations", "{\"from\":\"src\",\"animation\":\"Go\"}", 201);
  ck_assert_ptr_nonnull(strstr(detail, "\"name\":\"Go\""));
  free(detail);
  char *got = answer("POST", "/v1/skeletons/dst/pose", "{\"animation\":\"Go\",\"time\":1.234}", 200);
  json_t *c = json_pack("{s:o,s:[{s:s,s:o,s:s,s:b},{s:s,s:s,s:f}]}", "skeleton", json_loads(dst, 0, NULL), "ops",
                        "op", "copyAnimationRange", "from", json_loads(src, 0, NULL), "name", "Go", "rescale", 0,
                        "op", "pose", "animation", "Go", "time", 1.234);
  char *want = eval_case(c);
  ck_assert_str_eq(got, want);
  free(want);
  free(got);
  json_decref(c);
  free(src);
  free(dst);
  stop();
}
END_TEST

START_TEST(a_copy_is_refused_with_the_field_that_is_wrong) {
  start(NULL);
  sk_fixture_put_json(&D, "small", k_small);
  sk_fixture_put_json(&D, "other", k_small);
  sk_fixture_put_json(&D, "plain", "{\"bones\":[{\"name\":\"root\"},{\"name\":\"arm\",\"parent\":\"root\"}]}");
  const char *u = "/v1/skeletons/small/animations";
  expect_problem("POST", u, "{\"from\":\"nobody\",\"animation\":\"Wave\"}", 404, "not-found");
  expect_problem("POST", u, "{\"from\":\"other\",\"animation\":\"Nope\"}", 404, "not-found");
  expect_problem("POST", u, "{\"from\":\"other\",\"animation\":\"Wave\"}", 422, "duplicate");
  expect_problem("POST", u, "{\"from\":\"plain\",\"animation\":\"Wave\"}", 415, "unsupported-media-type");
  expect_problem("POST", "/v1/skeletons/plain/animations", "{\"from\":\"small\",\"animation\":\"Wave\"}", 415,
                 "unsupported-media-type");
  expect_problem("POST", u, "{\"animation\":\"Wave\"}", 422, "missing-field");
  expect_problem("POST", u, "{\"from\":1,\"animation\":\"Wave\"}", 422, "wrong-type");
  expect_problem("POST", u, "{\"from\":\"other\",\"animation\":\"Wave\",\"rescale\":1}", 422, "wrong-type");
  expect_problem("POST", u, "{\"from\":\"other\",\"animation\":\"Wave\",\"name\":\"x\"}", 422, "unknown-reference");
  expect_problem("POST", "/v1/skeletons/nobody/animations", "{\"from\":\"other\",\"animation\":\"Wave\"}", 404,
                 "not-found");
  expect_problem("GET", u, NULL, 405, "method-not-allowed");
  /* at pose time */
  const char *p = "/v1/skeletons/small/pose";
  expect_problem("POST", p, "{\"from\":\"nobody\",\"animation\":\"Wave\"}", 404, "not-found");
  expect_problem("POST", p, "{\"from\":\"other\",\"animation\":\"Wave\"}", 422, "duplicate");
  expect_problem("POST", p, "{\"from\":\"other\",\"animation\":\"Nope\"}", 404, "not-found");
  expect_problem("POST", p, "{\"from\":\"plain\",\"animation\":\"Wave\"}", 415, "unsupported-media-type");
  expect_problem("POST", p, "{\"from\":\"other\"}", 422, "missing-field");
  /* not in a batch: there "from" starts a frame range */
  expect_problem("POST", "/v1/skeletons/small/poses", "{\"poses\":[{\"from\":\"other\",\"animation\":\"Wave\"}]}",
                 422, "wrong-type");
  expect_problem("POST", p, "{\"from\":\"other\",\"animation\":\"Wave\",\"rescale\":\"yes\"}", 422, "wrong-type");
  /* nothing changed */
  char *got = answer("GET", "/v1/skeletons/small", NULL, 200);
  ck_assert_ptr_nonnull(strstr(got, "\"animations\":[{\"index\":0,\"name\":\"Wave\""));
  ck_assert_ptr_null(strstr(got, "\"index\":2"));
  free(got);
  stop();
}
END_TEST


/* `body` and 40 000 spaces: over the 32 KiB from which a body is parsed
 * on the pool. New. */
static char *padded(const char *body) {
  size_t n = strlen(body);
  char *p = malloc(n + 40001);
  ck_assert_ptr_nonnull(p);
  memcpy(p, body, n);
  memset(p + n, ' ', 40000);
  p[n + 40000] = 0;
  return p;
}

/* A large body is parsed on the pool (its tree reserved in the budget
 * first) and answers what the same body answers inline: the errors in the
 * same order (400, 404, then the fields) and the same stored copy. */
START_TEST(a_large_copy_body_is_parsed_on_the_pool_and_answers_as_a_small_one) {
  start(NULL);
  sk_fixture_put_json(&D, "small", k_small);
  sk_fixture_put_json(&D, "other", k_small);
  static const struct {
    const char *path, *body;
    int status;
    const char *kind;
  } cases[] = {
      {"/v1/skeletons/small/animations", "{\"from\":\"nobody\",\"animation\":\"Wave\"}", 404, "not-found"},
      {"/v1/skeletons/small/animations", "{\"from\":\"other\",\"animation\":\"Nope\"}", 404, "not-found"},
      {"/v1/skeletons/small/animations", "{\"from\":1,\"animation\":\"Wave\"}", 422, "wrong-type"},
      {"/v1/skeletons/small/animations", "{\"from\":\"other\",\"animation\":\"Wave\",\"name\":\"x\"}", 422,
       "unknown-reference"},
      {"/v1/skeletons/nobody/animations", "{\"from\":\"other\",\"animation\":\"Wave\"}", 404, "not-found"},
      {"/v1/skeletons/nobody/animations", "{\"from\":", 400, "malformed-json"},
      {"/v1/skeletons/small/animations", "[1,", 400, "malformed-json"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *big = padded(cases[i].body);
    expect_problem("POST", cases[i].path, cases[i].body, cases[i].status, cases[i].kind);
    expect_problem("POST", cases[i].path, big, cases[i].status, cases[i].kind);
    free(big);
  }
  sk_fixture_put_json(&D, "bare1", k_bare);
  sk_fixture_put_json(&D, "bare2", k_bare);
  sk_fixture_put_json(&D, "src", k_src);
  static const char copy[] = "{\"from\":\"src\",\"animation\":\"Rise\",\"rescale\":true}";
  char *big = padded(copy);
  char *pooled = answer("POST", "/v1/skeletons/bare1/animations", big, 201);
  char *inline_ = answer("POST", "/v1/skeletons/bare2/animations", copy, 201);
  ck_assert_ptr_nonnull(strstr(pooled, "\"name\":\"Rise\""));
  ck_assert_str_eq(pooled, inline_);
  free(big);
  free(pooled);
  free(inline_);
  stop();
}
END_TEST

/* ---- limits ------------------------------------------------------------------- */

START_TEST(babylon_clips_over_max_skeleton_mb_are_refused_with_413) {
  const char *const args[] = {"--max-skeleton-mb", "1", NULL};
  start(args);
  /* 2000 keys and 300 ranges over all of them: each range keeps its
   * reachable keys, ~60 MB of clips from a ~100 kB body. */
  sk_strbuf b = {0};
  const char *head = "{\"bones\":[{\"name\":\"r\",\"parentBoneIndex\":-1,\"index\":0,"
                     "\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],\"animation\":{\"name\":\"p\",\"property\":"
                     "\"position\",\"framePerSecond\":30,\"dataType\":1,\"loopBehavior\":1,\"keys\":[";
  sk_strbuf_append(&b, head, strlen(head));
  for (int k = 0; k < 2000; k++) {
    char one[64];
    int n = snprintf(one, sizeof one, "%s{\"frame\":%d,\"values\":[%d,0,0]}", k ? "," : "", k, k % 7);
    sk_strbuf_append(&b, one, (size_t)n);
  }
  sk_strbuf_append(&b, "]}}],\"ranges\":[", 15);
  for (int k = 0; k < 300; k++) {
    char one[64];
    int n = snprintf(one, sizeof one, "%s{\"name\":\"r%d\",\"from\":0,\"to\":1999}", k ? "," : "", k);
    sk_strbuf_append(&b, one, (size_t)n);
  }
  sk_strbuf_append(&b, "]}", 3);
  expect_problem("PUT", "/v1/skeletons/big", b.data, 413, "too-large");
  expect_problem("GET", "/v1/skeletons/big", NULL, 404, "not-found");
  sk_strbuf_free(&b);
  stop();
}
END_TEST

/* ---- persistence -------------------------------------------------------------- */

START_TEST(babylon_clips_answer_the_same_bytes_after_a_restart_with_a_data_directory) {
  char dir[64];
  sk_fixture_tmpdir(dir, sizeof dir, "sk_routes_anim");
  const char *const args[] = {"--data-dir", dir, NULL};
  start(args);
  free(answer("PUT", "/v1/skeletons/small", k_small, 201));
  /* a PATCHed copy keeps its clips and its source */
  free(answer("PUT", "/v1/skeletons/patched", k_small, 201));
  free(answer("PATCH", "/v1/skeletons/patched/bones", "{\"bones\":{\"arm\":{\"scaling\":[2,2,2]}}}", 200));
  /* a Babylon skeleton without clips, given a stored copy of one */
  char *up = answer("PUT", "/v1/skeletons/bare", k_bare, 201);
  ck_assert_str_eq(up, "{\"id\":\"bare\",\"bones\":2,\"order\":[\"root\",\"arm\"],\"slots\":[0,1],\"mesh\":null,\"animations\":[]}");
  free(up);
  free(answer("PUT", "/v1/skeletons/src", k_src, 201));
  free(answer("POST", "/v1/skeletons/bare/animations", "{\"from\":\"src\",\"animation\":\"Rise\",\"rescale\":true}",
              201));
  static const char *const bodies[3][3] = {
      {"{\"animation\":\"Wave\",\"time\":0.1}",
       "{\"animation\":\"Rise\",\"from\":0,\"to\":0.6,\"fps\":10,\"output\":[\"final\",\"local\"]}",
       "{\"animation\":1,\"time\":0.25,\"loop\":true,\"bones\":{\"root\":{\"position\":[0,0,1]}}}"},
      {"{\"animation\":\"Wave\",\"time\":0.1}",
       "{\"animation\":\"Rise\",\"from\":0,\"to\":0.6,\"fps\":10,\"output\":[\"final\",\"local\"]}",
       "{\"animation\":1,\"time\":0.25,\"loop\":true,\"bones\":{\"root\":{\"position\":[0,0,1]}}}"},
      {"{\"animation\":\"Rise\",\"time\":0.1}", /* the copy, by name and by index */
       "{\"animation\":\"Rise\",\"from\":0,\"to\":0.6,\"fps\":10,\"output\":[\"final\",\"local\"]}",
       "{\"animation\":0,\"time\":0.25,\"loop\":true}"},
  };
  static const char *const urls[] = {"/v1/skeletons/small/pose", "/v1/skeletons/patched/pose",
                                     "/v1/skeletons/bare/pose"};
  char *before[3][3], *detail = answer("GET", "/v1/skeletons/small/animations/Wave", NULL, 200);
  char *list = answer("GET", "/v1/skeletons/patched", NULL, 200);
  char *copied = answer("GET", "/v1/skeletons/bare/animations/Rise", NULL, 200);
  for (int u = 0; u < 3; u++)
    for (int k = 0; k < 3; k++)
      before[u][k] = answer("POST", urls[u], bodies[u][k], 200);
  ck_assert_str_ne(before[0][0], before[1][0]); /* the PATCH shows */
  ck_assert_str_ne(before[0][1], before[2][1]); /* the copy was rescaled and lands on other bones */
  stop();
  start(args);
  for (int u = 0; u < 3; u++)
    for (int k = 0; k < 3; k++) {
      char *after = answer("POST", urls[u], bodies[u][k], 200);
      ck_assert_msg(strcmp(after, before[u][k]) == 0, "%s %s after a restart:\n got %.300s\nwant %.300s", urls[u],
                    bodies[u][k], after, before[u][k]);
      free(after);
      free(before[u][k]);
    }
  char *c2 = answer("GET", "/v1/skeletons/bare/animations/Rise", NULL, 200);
  ck_assert_str_eq(c2, copied);
  free(c2);
  free(copied);
  char *d2 = answer("GET", "/v1/skeletons/small/animations/Wave", NULL, 200);
  ck_assert_str_eq(d2, detail);
  char *l2 = answer("GET", "/v1/skeletons/patched", NULL, 200);
  ck_assert_str_eq(l2, list);
  free(d2);
  free(l2);
  free(detail);
  free(list);
  stop();
  sk_fixture_rmdir(dir);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("routes_anim");
  TCase *t = tcase_create("poses");
  tcase_set_timeout(t, 240);
  tcase_add_test(t, babylon_clip_poses_answer_exactly_what_skinner_eval_answers_on_the_conformance_cases);
  tcase_add_test(t, weighted_layers_of_babylon_clips_blend_as_babylon_bit_for_bit_over_http);
  tcase_add_test(t, additive_layers_and_fractional_masks_of_babylon_clips_are_refused_with_415);
  tcase_add_test(t, additive_and_masked_gltf_layers_answer_what_skinner_eval_answers);
  tcase_add_test(t, weighted_gltf_layers_answer_what_skinner_eval_answers);
  suite_add_tcase(s, t);
  t = tcase_create("retarget");
  tcase_set_timeout(t, 240);
  tcase_add_test(t, another_skeletons_range_poses_as_copyAnimationRange_does_at_pose_time_and_as_a_stored_copy);
  tcase_add_test(t, a_copy_is_refused_with_the_field_that_is_wrong);
  tcase_add_test(t, a_large_copy_body_is_parsed_on_the_pool_and_answers_as_a_small_one);
  tcase_add_test(t, a_copy_between_large_skeletons_runs_on_the_pool_and_answers_as_skinner_eval);
  suite_add_tcase(s, t);
  t = tcase_create("clips");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, an_upload_lists_its_babylon_clips_and_each_clip_has_a_detail);
  tcase_add_test(t, a_gltf_clip_has_a_detail_with_its_key_times);
  tcase_add_test(t, root_motion_is_babylons_analysis_and_bad_options_name_the_field);
  tcase_add_test(t, babylon_clips_over_max_skeleton_mb_are_refused_with_413);
  suite_add_tcase(s, t);
  t = tcase_create("persistence");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, babylon_clips_answer_the_same_bytes_after_a_restart_with_a_data_directory);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(suite()); }
