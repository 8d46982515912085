/* GET /v1/skeletons/{id}/animations/{clip}/bounds?fps=F (sk_clipbounds)
 * through the real skinnerd on 127.0.0.1 and a port it picks: the boxes
 * are the union of the range answer's "bounds" over the same frames, bit
 * for bit, per primitive and overall; refusals name the field or limit. */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>

#include <jansson.h>

#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_testutil.h"

static sk_daemon D;
static char g_dir[64];

static void start(const char *max_work) {
  const char *const args[] = {"--data-dir", g_dir, "--max-work", max_work, "--max-body", "8388608", NULL};
  sk_fixture_start(&D, args);
}

static void setup(void) {
  sk_fixture_tmpdir(g_dir, sizeof g_dir, "sk_clipbounds_test");
  start("16777216");
}

static void teardown(void) { sk_fixture_teardown(&D, g_dir); }

static float num(const json_t *box, const char *key, size_t k) {
  return (float)json_number_value(json_array_get(json_object_get(box, key), k));
}

static void same_bits(float a, float b, const char *what) {
  ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "%s: %.9g, want %.9g", what, (double)a, (double)b);
}

/* Every clip of `asset` at `fps`: the route's boxes against the range's. */
static void matches_range(const char *id, const char *asset, double fps) {
  json_t *summary = sk_fixture_upload(&D, id, asset, NULL);
  const json_t *anims = json_object_get(summary, "animations");
  ck_assert_uint_gt(json_array_size(anims), 0);
  for (size_t a = 0; a < json_array_size(anims); a++) {
    const double dur = json_number_value(json_object_get(json_array_get(anims, a), "duration"));
    char body[256], path[160];
    snprintf(body, sizeof body,
             "{\"animation\": %zu, \"from\": 0, \"to\": %.17g, \"fps\": %.17g, \"output\": [\"bounds\"]}", a, dur, fps);
    snprintf(path, sizeof path, "/v1/skeletons/%s/pose", id);
    json_t *range = sk_fixture_ask(&D, "POST", path, "application/json", body, strlen(body), 200);
    snprintf(path, sizeof path, "/v1/skeletons/%s/animations/%zu/bounds?fps=%g", id, a, fps);
    json_t *got = sk_fixture_ask(&D, "GET", path, NULL, NULL, 0, 200);
    const json_t *results = json_object_get(range, "results");
    ck_assert_int_eq(json_integer_value(json_object_get(got, "frames")), json_array_size(results));
    ck_assert_str_eq(json_string_value(json_object_get(got, "animation")),
                     json_string_value(json_object_get(json_array_get(anims, a), "name")));
    const json_t *prims = json_object_get(got, "bounds");
    float all[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (size_t p = 0; p < json_array_size(prims); p++) {
      float want[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
      for (size_t f = 0; f < json_array_size(results); f++) {
        const json_t *b = json_array_get(json_object_get(json_array_get(results, f), "bounds"), p);
        ck_assert_str_eq(json_string_value(json_object_get(b, "primitive")),
                         json_string_value(json_object_get(json_array_get(prims, p), "primitive")));
        for (size_t k = 0; k < 3; k++) {
          want[k] = fminf(want[k], num(b, "min", k));
          want[3 + k] = fmaxf(want[3 + k], num(b, "max", k));
        }
      }
      for (size_t k = 0; k < 3; k++) {
        same_bits(num(json_array_get(prims, p), "min", k), want[k], "primitive min");
        same_bits(num(json_array_get(prims, p), "max", k), want[3 + k], "primitive max");
        all[k] = fminf(all[k], want[k]);
        all[3 + k] = fmaxf(all[3 + k], want[3 + k]);
      }
    }
    for (size_t k = 0; k < 3; k++) {
      same_bits(num(got, "min", k), all[k], "min");
      same_bits(num(got, "max", k), all[3 + k], "max");
    }
    json_decref(range);
    json_decref(got);
  }
  json_decref(summary);
}

START_TEST(the_clip_box_is_the_union_of_the_range_answer) {
  matches_range("fox", "Fox.glb", 30);
  matches_range("morph", "skin_morph.glb", 24);
  matches_range("man", "CesiumMan.glb", 29.97);
}
END_TEST

/* Kept per skeleton version: a repeat answers the same bytes, a new
 * upload under the id (a new version) its own. */
START_TEST(the_memo_follows_the_skeleton_version) {
  json_decref(sk_fixture_upload(&D, "x", "skin_morph.glb", NULL));
  const char *path = "/v1/skeletons/x/animations/0/bounds?fps=30";
  size_t n0, n1, n2;
  char *first = sk_fixture_ask_text(&D, "GET", path, NULL, NULL, NULL, 0, 200, &n0),
       *again = sk_fixture_ask_text(&D, "GET", path, NULL, NULL, NULL, 0, 200, &n1);
  ck_assert_uint_eq(n0, n1);
  ck_assert_mem_eq(first, again, n0);
  size_t len;
  unsigned char *d = sk_test_read_asset("skin_mirror.glb", &len);
  json_decref(sk_fixture_ask(&D, "PUT", "/v1/skeletons/x", "model/gltf-binary", d, len, 200));
  free(d);
  char *other = sk_fixture_ask_text(&D, "GET", path, NULL, NULL, NULL, 0, 200, &n2);
  ck_assert_msg(n0 != n2 || memcmp(first, other, n0) != 0, "the memo answered the old version: %s", other);
  free(first);
  free(again);
  free(other);
}
END_TEST

static void expect_problem(const char *path, int status, const char *pointer, const char *detail_part) {
  json_t *j = sk_fixture_ask(&D, "GET", path, NULL, NULL, 0, status);
  if (pointer != NULL)
    ck_assert_str_eq(json_string_value(json_object_get(j, "pointer")), pointer);
  const char *detail = json_string_value(json_object_get(j, "detail"));
  ck_assert_msg(detail != NULL && strstr(detail, detail_part) != NULL, "detail %s lacks %s", detail, detail_part);
  json_decref(j);
}

START_TEST(refusals_name_the_parameter_or_the_limit) {
  json_decref(sk_fixture_upload(&D, "fox", "Fox.glb", NULL));
  expect_problem("/v1/skeletons/fox/animations/Walk/bounds", 422, "fps", "required");
  expect_problem("/v1/skeletons/fox/animations/Walk/bounds?fps=abc", 422, "fps", "not a number");
  expect_problem("/v1/skeletons/fox/animations/Walk/bounds?fps=0", 422, "fps", "(0, 1000]");
  expect_problem("/v1/skeletons/fox/animations/Walk/bounds?fps=30&x=1", 400, NULL, "x");
  expect_problem("/v1/skeletons/fox/animations/Nope/bounds?fps=30", 404, NULL, "no clip");
  expect_problem("/v1/skeletons/fox/animations/Survey/bounds?fps=1000", 413, "fps", "--max-frames");
  const char *plain =
      "{\"bones\": [{\"name\": \"root\", \"parent\": null, \"matrix\": [1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}]}";
  json_decref(sk_fixture_ask(&D, "PUT", "/v1/skeletons/plain", "application/json", plain, strlen(plain), 201));
  expect_problem("/v1/skeletons/plain/animations/0/bounds?fps=30", 404, NULL, "no clip");
  /* frames x vertices before any work: 26 frames x 1728 vertices */
  sk_fixture_stop(&D);
  start("20000");
  expect_problem("/v1/skeletons/fox/animations/Walk/bounds?fps=30", 413, "fps", "--max-work");
}
END_TEST

int main(void) {
  Suite *s = suite_create("clipbounds");
  TCase *tc = tcase_create("daemon");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, the_clip_box_is_the_union_of_the_range_answer);
  tcase_add_test(tc, refusals_name_the_parameter_or_the_limit);
  tcase_add_test(tc, the_memo_follows_the_skeleton_version);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
