/* End to end: the mesh outputs of a glTF upload ("vertices", "normals",
 * "bounds", "morphWeights", "boundsConservative"), through the real
 * skinnerd on 127.0.0.1 and a port it picks, with a data directory under
 * /tmp (removed by the test). Their bits against Babylon are
 * tests/oracle/conformance_mesh.sh; here: the conservative box contains
 * the exact one on every 30 fps frame of every clip of every asset, the
 * pose forms agree, a record read back answers the same bytes, and each
 * refusal (no mesh, size, bad geometry) names its field; binary answers
 * carry the JSON answers' floats (proto/mesh.md). */
#define _GNU_SOURCE
#include <stdbool.h>

#include <jansson.h>

#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_testutil.h"

static sk_daemon D;
static char g_dir[64];

static void start(const char *max_answer_mb) {
  const char *const args[] = {"--data-dir", g_dir, "--max-answer-mb", max_answer_mb, "--max-body", "8388608", NULL};
  sk_fixture_start(&D, args);
}

static void setup(void) {
  sk_fixture_tmpdir(g_dir, sizeof g_dir, "sk_meshout_test");
  start("512");
}

static void teardown(void) { sk_fixture_teardown(&D, g_dir); }

static void expect_problem(const char *path, const char *body, const char *accept, int status, const char *pointer,
                           const char *detail_part) {
  char *t = sk_fixture_ask_text(&D, "POST", path, "application/json", accept, body, strlen(body), status, NULL);
  json_t *j = json_loads(t, 0, NULL);
  ck_assert_msg(j != NULL, "not JSON: %s", t);
  ck_assert_str_eq(json_string_value(json_object_get(j, "pointer")), pointer);
  const char *detail = json_string_value(json_object_get(j, "detail"));
  ck_assert_msg(detail != NULL && strstr(detail, detail_part) != NULL, "detail %s lacks %s", detail, detail_part);
  json_decref(j);
  free(t);
}

/* Every 30 fps frame of every clip, as one frame range per clip: each
 * result's conservative box holds its exact box, primitive by primitive. */
static void conservative_holds(const char *id, const char *asset, size_t *frames) {
  json_t *summary = sk_fixture_upload(&D, id, asset, NULL);
  const json_t *anims = json_object_get(summary, "animations");
  ck_assert_uint_gt(json_array_size(anims), 0);
  for (size_t a = 0; a < json_array_size(anims); a++) {
    const double dur = json_number_value(json_object_get(json_array_get(anims, a), "duration"));
    char body[256], path[128];
    snprintf(body, sizeof body,
             "{\"animation\": %zu, \"from\": 0, \"to\": %.17g, \"fps\": 30, \"output\": [\"bounds\", "
             "\"boundsConservative\"]}",
             a, dur);
    snprintf(path, sizeof path, "/v1/skeletons/%s/pose", id);
    json_t *j = sk_fixture_ask_json(&D, "POST", path, body, 200);
    const json_t *results = json_object_get(j, "results");
    ck_assert_uint_gt(json_array_size(results), 0);
    for (size_t f = 0; f < json_array_size(results); f++) {
      const json_t *r = json_array_get(results, f);
      const json_t *exact = json_object_get(r, "bounds"), *cons = json_object_get(r, "boundsConservative");
      ck_assert_uint_eq(json_array_size(exact), json_array_size(cons));
      for (size_t p = 0; p < json_array_size(exact); p++) {
        const json_t *e = json_array_get(exact, p), *c = json_array_get(cons, p);
        ck_assert_str_eq(json_string_value(json_object_get(e, "primitive")),
                         json_string_value(json_object_get(c, "primitive")));
        for (size_t k = 0; k < 3; k++) {
          const double emin = json_number_value(json_array_get(json_object_get(e, "min"), k));
          const double emax = json_number_value(json_array_get(json_object_get(e, "max"), k));
          const double cmin = json_number_value(json_array_get(json_object_get(c, "min"), k));
          const double cmax = json_number_value(json_array_get(json_object_get(c, "max"), k));
          ck_assert_msg(cmin <= emin && cmax >= emax,
                        "%s clip %zu frame %zu primitive %zu axis %zu: [%g, %g] not in [%g, %g]", asset, a, f, p, k,
                        emin, emax, cmin, cmax);
        }
      }
      (*frames)++;
    }
    json_decref(j);
  }
  json_decref(summary);
}

START_TEST(conservative_bounds_contain_the_exact_box_on_every_frame_of_every_clip) {
  const char *assets[] = {"Fox.glb", "CesiumMan.glb", "RiggedFigure.glb", "RobotExpressive.glb",
                          "mannequiny-0.3.0.glb", "skin_morph.glb", "skin_8inf.glb", "skin_mirror.glb"};
  size_t frames = 0;
  for (size_t i = 0; i < sizeof assets / sizeof assets[0]; i++) {
    char id[16];
    snprintf(id, sizeof id, "a%zu", i);
    conservative_holds(id, assets[i], &frames);
  }
  ck_assert_uint_gt(frames, 1000);
}
END_TEST

/* A single pose, a /poses item and a one-frame range answer the same object. */
START_TEST(every_pose_form_answers_the_same_mesh) {
  json_decref(sk_fixture_upload(&D, "fox", "Fox.glb", NULL));
  const char *out = "\"output\": [\"final\", \"vertices\", \"normals\", \"bounds\", \"boundsConservative\"]";
  char one[256], many[512], range[256];
  snprintf(one, sizeof one, "{\"animation\": \"Walk\", \"time\": 0.3, %s}", out);
  snprintf(many, sizeof many, "{\"poses\": [{\"animation\": \"Walk\", \"time\": 0.1, %s}, %s]}", out, one);
  snprintf(range, sizeof range, "{\"animation\": \"Walk\", \"times\": [0.1, 0.3], %s}", out);
  json_t *a = sk_fixture_ask_json(&D, "POST", "/v1/skeletons/fox/pose", one, 200);
  json_t *b = sk_fixture_ask_json(&D, "POST", "/v1/skeletons/fox/poses", many, 200);
  json_t *c = sk_fixture_ask_json(&D, "POST", "/v1/skeletons/fox/pose", range, 200);
  ck_assert(json_equal(a, json_array_get(json_object_get(b, "results"), 1)));
  ck_assert(json_equal(a, json_array_get(json_object_get(c, "results"), 1)));
  const json_t *v = json_array_get(json_object_get(a, "vertices"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(v, "primitive")), "/meshes/0/primitives/0");
  ck_assert_uint_eq(json_array_size(json_object_get(v, "positions")), 3 * 1728);
  json_decref(a);
  json_decref(b);
  json_decref(c);
}
END_TEST

/* The record keeps the file; read back, the mesh is rebuilt from it. */
START_TEST(a_restart_answers_the_same_bytes_from_the_record) {
  json_decref(sk_fixture_upload(&D, "morph", "skin_morph.glb", NULL));
  const char *body = "{\"animation\": 0, \"time\": 0.4, \"output\": [\"vertices\", \"normals\", \"morphWeights\"]}";
  size_t n1, n2;
  char *before = sk_fixture_ask_text(&D, "POST", "/v1/skeletons/morph/pose", "application/json", NULL, body,
                                     strlen(body), 200, &n1);
  ck_assert_ptr_nonnull(strstr(before, "\"morphWeights\":[{\"mesh\":\"/meshes/0\",\"weights\":["));
  sk_fixture_stop(&D);
  start("512");
  char *after = sk_fixture_ask_text(&D, "POST", "/v1/skeletons/morph/pose", "application/json", NULL, body,
                                    strlen(body), 200, &n2);
  ck_assert_uint_eq(n1, n2);
  ck_assert_mem_eq(before, after, n1);
  free(before);
  free(after);
}
END_TEST

/* A PATCH publishes a new version with the same geometry: the mesh follows
 * the changed bone, and POST /rest brings back the first answer's bytes. */
START_TEST(a_patch_keeps_the_mesh_and_poses_it) {
  json_decref(sk_fixture_upload(&D, "fox", "Fox.glb", NULL));
  const char *body = "{\"output\": [\"bounds\"]}";
  size_t n0, n1, n2;
  char *before =
      sk_fixture_ask_text(&D, "POST", "/v1/skeletons/fox/pose", "application/json", NULL, body, strlen(body), 200, &n0);
  const char *patch = "{\"bones\": {\"b_Neck_04\": {\"rotation\": [0, 0, 1.2]}}}";
  free(sk_fixture_ask_text(&D, "PATCH", "/v1/skeletons/fox/bones", "application/json", NULL, patch, strlen(patch), 200,
                           NULL));
  char *patched =
      sk_fixture_ask_text(&D, "POST", "/v1/skeletons/fox/pose", "application/json", NULL, body, strlen(body), 200, &n1);
  ck_assert_msg(n0 != n1 || memcmp(before, patched, n0) != 0, "the bounds did not move: %s", patched);
  free(sk_fixture_ask_text(&D, "POST", "/v1/skeletons/fox/rest", NULL, NULL, "", 0, 200, NULL));
  char *rest =
      sk_fixture_ask_text(&D, "POST", "/v1/skeletons/fox/pose", "application/json", NULL, body, strlen(body), 200, &n2);
  ck_assert_uint_eq(n0, n2);
  ck_assert_mem_eq(before, rest, n0);
  free(before);
  free(patched);
  free(rest);
}
END_TEST

START_TEST(refusals_name_the_output_or_the_limit) {
  /* a JSON skeleton has no mesh */
  const char *plain =
      "{\"bones\": [{\"name\": \"root\", \"parent\": null, \"matrix\": [1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}]}";
  char *t =
      sk_fixture_ask_text(&D, "PUT", "/v1/skeletons/plain", "application/json", NULL, plain, strlen(plain), 201, NULL);
  free(t);
  expect_problem("/v1/skeletons/plain/pose", "{\"output\": [\"final\", \"bounds\"]}", NULL, 422, "/output/1",
                 "has no skinned mesh");
  json_decref(sk_fixture_upload(&D, "fox", "Fox.glb", NULL));
  expect_problem("/v1/skeletons/fox/pose", "{\"output\": [\"normals\"]}", NULL, 422, "/output",
                 "\"normals\" comes with \"vertices\"");
  expect_problem("/v1/skeletons/fox/pose", "{\"output\": [\"bounds\", \"bounds\"]}", NULL, 422, "/output/1",
                 "output listed twice");
  /* the answer's size is costed before the work: 40 frames of Fox's
   * vertices and normals are ~13 MB against a 1 MB limit */
  sk_fixture_stop(&D);
  start("1");
  expect_problem("/v1/skeletons/fox/pose",
                 "{\"animation\": 0, \"from\": 0, \"to\": 1.3, \"fps\": 30, \"output\": [\"vertices\", \"normals\"]}",
                 NULL, 413, "", "--max-answer-mb");
}
END_TEST

/* Geometry is validated at upload: a POSITION accessor of the wrong type
 * is a 422 at its "type". */
START_TEST(a_bad_skinned_primitive_is_refused_at_upload) {
  size_t len;
  unsigned char *d = sk_test_read_asset("SimpleSkin.gltf", &len);
  json_t *g = json_loadb((const char *)d, len, 0, NULL);
  free(d);
  ck_assert_ptr_nonnull(g);
  const json_t *prim =
      json_array_get(json_object_get(json_array_get(json_object_get(g, "meshes"), 0), "primitives"), 0);
  const json_int_t acc = json_integer_value(json_object_get(json_object_get(prim, "attributes"), "POSITION"));
  json_object_set_new(json_array_get(json_object_get(g, "accessors"), (size_t)acc), "type", json_string("VEC2"));
  char *text = json_dumps(g, JSON_COMPACT);
  json_decref(g);
  char *t = sk_fixture_ask_text(&D, "PUT", "/v1/skeletons/bad", "model/gltf+json", NULL, text, strlen(text), 422, NULL);
  json_t *j = json_loads(t, 0, NULL);
  char want[64];
  snprintf(want, sizeof want, "/accessors/%lld/type", (long long)acc);
  ck_assert_str_eq(json_string_value(json_object_get(j, "pointer")), want);
  json_decref(j);
  free(t);
  free(text);
}
END_TEST

/* Consumes the floats of JSON array `a` from the binary answer at *at. */
static void same_floats(const float *bin, size_t nbin, size_t *at, const json_t *a, const char *what) {
  ck_assert_msg(*at + json_array_size(a) <= nbin, "%s: binary too short", what);
  for (size_t k = 0; k < json_array_size(a); k++, (*at)++) {
    const float want = (float)json_number_value(json_array_get(a, k));
    ck_assert_msg(memcmp(&want, &bin[*at], sizeof want) == 0, "%s float %zu: %.9g, want %.9g", what, k,
                  (double)bin[*at], (double)want);
  }
}

/* One pose's floats (`bin`, after its final matrices) against its JSON result. */
static size_t pose_matches(const float *bin, size_t nbin, const json_t *r) {
  size_t at = 0;
  const json_t *v = json_object_get(r, "vertices");
  for (size_t i = 0; i < json_array_size(v); i++) {
    same_floats(bin, nbin, &at, json_object_get(json_array_get(v, i), "positions"), "positions");
    if (json_object_get(json_array_get(v, i), "normals") != NULL)
      same_floats(bin, nbin, &at, json_object_get(json_array_get(v, i), "normals"), "normals");
  }
  const char *boxes[2] = {"bounds", "boundsConservative"};
  for (int b = 0; b < 2; b++) {
    const json_t *list = json_object_get(r, boxes[b]);
    if (b == 1) {
      const json_t *w = json_object_get(r, "morphWeights");
      for (size_t i = 0; i < json_array_size(w); i++)
        same_floats(bin, nbin, &at, json_object_get(json_array_get(w, i), "weights"), "morphWeights");
    }
    for (size_t i = 0; i < json_array_size(list); i++) {
      same_floats(bin, nbin, &at, json_object_get(json_array_get(list, i), "min"), boxes[b]);
      same_floats(bin, nbin, &at, json_object_get(json_array_get(list, i), "max"), boxes[b]);
    }
  }
  return at;
}

/* `body` to `path` as JSON and as float32: each pose's binary is its B+1
 * final matrices, then its mesh floats, equal to the JSON numbers. */
static void binary_matches_json(const char *path, const char *body, size_t bones, size_t poses) {
  json_t *j = sk_fixture_ask_json(&D, "POST", path, body, 200);
  size_t n;
  char *bin = sk_fixture_ask_text(&D, "POST", path, "application/json", "application/octet-stream", body, strlen(body),
                                  200, &n);
  const json_t *results = json_object_get(j, "results");
  ck_assert_uint_eq(results != NULL ? json_array_size(results) : 1, poses);
  ck_assert_uint_eq(n % sizeof(float), 0);
  const float *f = (const float *)(void *)bin;
  const size_t total = n / sizeof(float), mats = (bones + 1) * 16;
  size_t at = 0;
  for (size_t i = 0; i < poses; i++) {
    const json_t *r = results != NULL ? json_array_get(results, i) : j;
    const json_t *fin = json_object_get(r, "final");
    size_t k = 0;
    if (fin != NULL)
      same_floats(f + at, mats, &k, fin, "final");
    ck_assert_uint_le(at + mats, total);
    at += mats;
    at += pose_matches(f + at, total - at, r);
  }
  ck_assert_uint_eq(at, total);
  free(bin);
  json_decref(j);
}

START_TEST(binary_answers_carry_the_mesh_floats_on_every_pose_form) {
  const char *assets[] = {"Fox.glb", "skin_morph.glb"};
  for (size_t a = 0; a < 2; a++) {
    char id[8], pose[64], poses[64];
    snprintf(id, sizeof id, "m%zu", a);
    snprintf(pose, sizeof pose, "/v1/skeletons/%s/pose", id);
    snprintf(poses, sizeof poses, "/v1/skeletons/%s/poses", id);
    json_t *summary = sk_fixture_upload(&D, id, assets[a], NULL);
    const size_t bones = json_array_size(json_object_get(summary, "order"));
    json_decref(summary);
    const char *out = "\"output\": [\"final\", \"vertices\", \"normals\", \"bounds\", \"morphWeights\", "
                      "\"boundsConservative\"]";
    char one[256], many[512], range[256];
    snprintf(one, sizeof one, "{\"animation\": 0, \"time\": 0.3, %s}", out);
    snprintf(many, sizeof many, "{\"poses\": [{\"animation\": 0, \"time\": 0.1, \"output\": [\"bounds\"]}, %s]}",
             one);
    snprintf(range, sizeof range, "{\"animation\": 0, \"from\": 0, \"to\": 0.5, \"fps\": 10, %s}", out);
    binary_matches_json(pose, one, bones, 1);
    binary_matches_json(poses, many, bones, 2);
    binary_matches_json(pose, range, bones, 6);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("mesh_outputs");
  TCase *tc = tcase_create("daemon");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, conservative_bounds_contain_the_exact_box_on_every_frame_of_every_clip);
  tcase_add_test(tc, every_pose_form_answers_the_same_mesh);
  tcase_add_test(tc, a_restart_answers_the_same_bytes_from_the_record);
  tcase_add_test(tc, a_patch_keeps_the_mesh_and_poses_it);
  tcase_add_test(tc, refusals_name_the_output_or_the_limit);
  tcase_add_test(tc, a_bad_skinned_primitive_is_refused_at_upload);
  tcase_add_test(tc, binary_answers_carry_the_mesh_floats_on_every_pose_form);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
