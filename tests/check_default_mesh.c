/* End to end: a skeleton's default mesh and a glTF file's skins. The real
 * skinnerd on 127.0.0.1 and a port it picks, with a data directory under
 * /tmp (removed by the test) so restarts can be checked. The expected
 * chains are Babylon's (tests/gltf/mesh/expected.json, from
 * tests/oracle/babylon_gltf_mesh.mjs). */
#define _GNU_SOURCE
#include <stdbool.h>

#include <jansson.h>

#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_testutil.h"

static sk_daemon D;
static char g_dir[64];

static void start(void) {
  const char *const args[] = {"--data-dir", g_dir, NULL};
  sk_fixture_start(&D, args);
}

static void setup(void) {
  sk_fixture_tmpdir(g_dir, sizeof g_dir, "sk_mesh_test");
  start();
}

static void teardown(void) { sk_fixture_teardown(&D, g_dir); }

static void restart(void) {
  sk_fixture_stop(&D);
  start();
}

/* Numbers by value (the oracle writes 0 for 0.0), the rest exactly. */
static bool same(const json_t *a, const json_t *b) {
  if (json_is_number(a) && json_is_number(b))
    return json_number_value(a) == json_number_value(b);
  if (json_typeof(a) != json_typeof(b))
    return false;
  if (json_is_array(a)) {
    if (json_array_size(a) != json_array_size(b))
      return false;
    for (size_t i = 0; i < json_array_size(a); i++)
      if (!same(json_array_get(a, i), json_array_get(b, i)))
        return false;
    return true;
  }
  if (json_is_object(a)) {
    if (json_object_size(a) != json_object_size(b))
      return false;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v) if (!same(v, json_object_get(b, k))) return false;
    return true;
  }
  return json_equal(a, b);
}

/* Babylon's chain for skin `skin` of `asset`. */
static json_t *babylon_chain(const char *asset, int skin) {
  char path[1024];
  json_t *all = json_load_file(sk_test_path("gltf/mesh/expected.json", path, sizeof path), 0, NULL);
  ck_assert_ptr_nonnull(all);
  size_t i;
  json_t *e, *found = NULL;
  json_array_foreach(all, i, e) if (strcmp(json_string_value(json_object_get(e, "asset")), asset) == 0 &&
                                    json_integer_value(json_object_get(e, "skin")) == skin) found =
      json_incref(json_object_get(e, "mesh"));
  json_decref(all);
  ck_assert_msg(found != NULL, "%s skin %d not in expected.json", asset, skin);
  return found;
}

static void expect_problem(json_t *j, int status, const char *pointer) {
  ck_assert_int_eq(json_integer_value(json_object_get(j, "status")), status);
  ck_assert_str_eq(json_string_value(json_object_get(j, "pointer")), pointer);
}

START_TEST(a_gltf_upload_answers_and_stores_babylons_mesh_chain) {
  const char *assets[] = {"CesiumMan.glb", "Fox.glb"};
  for (int k = 0; k < 2; k++) {
    char id[32];
    snprintf(id, sizeof id, "m%d", k);
    json_t *want = babylon_chain(assets[k], 0);
    json_t *up = sk_fixture_upload(&D, id, assets[k], NULL);
    ck_assert_msg(same(json_object_get(up, "mesh"), want), "%s: upload answer mesh %s", assets[k],
                  json_dumps(json_object_get(up, "mesh"), JSON_COMPACT));
    ck_assert_int_eq(json_integer_value(json_object_get(up, "skin")), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(up, "skins")), 1);
    char path[64];
    snprintf(path, sizeof path, "/v1/skeletons/%s", id);
    json_t *got = sk_fixture_ask(&D, "GET", path, NULL, NULL, 0, 200);
    ck_assert(same(json_object_get(got, "mesh"), want));
    ck_assert(json_equal(json_object_get(got, "skins"), json_object_get(up, "skins")));
    json_decref(got);
    /* evicted records re-import the file: same chain after a restart */
    restart();
    got = sk_fixture_ask(&D, "GET", path, NULL, NULL, 0, 200);
    ck_assert_msg(same(json_object_get(got, "mesh"), want), "%s: after restart", assets[k]);
    ck_assert(json_equal(json_object_get(got, "skins"), json_object_get(up, "skins")));
    json_decref(got);
    json_decref(up);
    json_decref(want);
  }
}
END_TEST

START_TEST(the_skins_of_a_file_are_listed_with_joints_and_meshes) {
  json_t *up = sk_fixture_upload(&D, "robot", "RobotExpressive.glb", "?skin=1");
  ck_assert_int_eq(json_integer_value(json_object_get(up, "skin")), 1);
  const json_t *skins = json_object_get(up, "skins");
  ck_assert_uint_eq(json_array_size(skins), 2);
  for (size_t i = 0; i < 2; i++) {
    const json_t *s = json_array_get(skins, i);
    ck_assert_int_eq(json_integer_value(json_object_get(s, "index")), (json_int_t)i);
    ck_assert_int_gt(json_integer_value(json_object_get(s, "joints")), 0);
    ck_assert_uint_ge(json_array_size(json_object_get(s, "meshes")), 1);
  }
  json_t *want = babylon_chain("RobotExpressive.glb", 1);
  ck_assert(same(json_object_get(up, "mesh"), want));
  json_decref(want);
  json_decref(up);
  /* a skin used by no mesh of the scene: listed, and no default mesh */
  up = sk_fixture_upload(&D, "chain2", "mesh_chain.gltf", "?skin=offscene");
  ck_assert(json_is_null(json_object_get(up, "mesh")));
  ck_assert_int_eq(json_integer_value(json_object_get(up, "skin")), 2);
  ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(json_object_get(up, "skins"), 2), "meshes")), 0);
  json_decref(up);
}
END_TEST

static const char *k_skel =
    "{\"bones\":[{\"name\":\"root\"},{\"name\":\"leaf\",\"parent\":\"root\",\"position\":[0,1,0]}]";
static const char *k_mesh = "{\"position\":[1,2,3],\"rotation\":[0.1,0.2,0.3],\"scaling\":[1,-2,0.5],"
                            "\"parent\":{\"rotationQuaternion\":[0,0.6,0,0.8],\"scaling\":[2,2,2]}}";

START_TEST(a_json_mesh_round_trips_through_put_get_patch_and_restart) {
  char body[1024];
  snprintf(body, sizeof body, "%s,\"mesh\":%s}", k_skel, k_mesh);
  json_t *want = json_loads(k_mesh, 0, NULL);
  json_t *up = sk_fixture_ask_json(&D, "PUT", "/v1/skeletons/j1", body, 201);
  ck_assert(same(json_object_get(up, "mesh"), want));
  ck_assert_ptr_null(json_object_get(up, "skins")); /* JSON skeletons have no skins list */
  json_decref(up);
  json_t *got = sk_fixture_ask(&D, "GET", "/v1/skeletons/j1", NULL, NULL, 0, 200);
  ck_assert(same(json_object_get(got, "mesh"), want));
  json_decref(got);
  /* a PATCH changes bones, not the mesh */
  got =
      sk_fixture_ask_json(&D, "PATCH", "/v1/skeletons/j1/bones", "{\"bones\":{\"leaf\":{\"position\":[0,2,0]}}}", 200);
  ck_assert(same(json_object_get(got, "mesh"), want));
  json_decref(got);
  restart();
  got = sk_fixture_ask(&D, "GET", "/v1/skeletons/j1", NULL, NULL, 0, 200);
  ck_assert_msg(same(json_object_get(got, "mesh"), want), "after restart: %s",
                json_dumps(json_object_get(got, "mesh"), JSON_COMPACT));
  json_decref(got);
  /* "mesh": null and no "mesh" both store none */
  snprintf(body, sizeof body, "%s,\"mesh\":null}", k_skel);
  up = sk_fixture_ask_json(&D, "PUT", "/v1/skeletons/j1", body, 200);
  ck_assert(json_is_null(json_object_get(up, "mesh")));
  json_decref(up);
  snprintf(body, sizeof body, "%s}", k_skel);
  up = sk_fixture_ask_json(&D, "PUT", "/v1/skeletons/j2", body, 201);
  ck_assert(json_is_null(json_object_get(up, "mesh")));
  json_decref(up);
  restart();
  got = sk_fixture_ask(&D, "GET", "/v1/skeletons/j1", NULL, NULL, 0, 200);
  ck_assert(json_is_null(json_object_get(got, "mesh")));
  json_decref(got);
  json_decref(want);
}
END_TEST

START_TEST(a_bad_mesh_is_422_with_a_pointer_and_nothing_is_stored) {
  static const struct {
    const char *mesh, *pointer;
    int status;
  } bad[] = {
      {"{\"scaling\":[0,1,1]}", "/mesh", 422},
      {"{\"parent\":{\"scaling\":[1,0,1]}}", "/mesh", 422},
      {"{\"postion\":[0,0,0]}", "/mesh/postion", 422},
      {"{\"position\":[0,\"x\",0]}", "/mesh/position/1", 422},
      {"{\"position\":[0,0]}", "/mesh/position", 422},
      {"[1,2,3]", "/mesh", 422},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char body[512];
    snprintf(body, sizeof body, "%s,\"mesh\":%s}", k_skel, bad[i].mesh);
    json_t *p = sk_fixture_ask_json(&D, "PUT", "/v1/skeletons/bad", body, bad[i].status);
    expect_problem(p, bad[i].status, bad[i].pointer);
    json_decref(p);
    json_t *g = sk_fixture_ask(&D, "GET", "/v1/skeletons/bad", NULL, NULL, 0, 404);
    json_decref(g);
  }
}
END_TEST

/* ?dryRun=true: the same answer as the upload, 200, nothing stored. */
START_TEST(a_dry_run_lists_the_skins_and_stores_nothing) {
  size_t len;
  unsigned char *d = sk_test_read_asset("RobotExpressive.glb", &len);
  json_t *dry = sk_fixture_ask(&D, "PUT", "/v1/skeletons/robot?dryRun=true", "model/gltf-binary", d, len, 200);
  ck_assert_uint_eq(json_array_size(json_object_get(dry, "skins")), 2);
  ck_assert_str_eq(json_string_value(json_object_get(dry, "id")), "robot");
  json_t *g = sk_fixture_ask(&D, "GET", "/v1/skeletons/robot", NULL, NULL, 0, 404);
  json_decref(g);
  /* POST: the id it would get is the id a real POST gets */
  json_t *dpost = sk_fixture_ask(&D, "POST", "/v1/skeletons?skin=1&dryRun=true", "model/gltf-binary", d, len, 200);
  ck_assert_int_eq(json_integer_value(json_object_get(dpost, "skin")), 1);
  json_t *post = sk_fixture_ask(&D, "POST", "/v1/skeletons?skin=1", "model/gltf-binary", d, len, 201);
  json_object_del(post, "evicted");
  ck_assert_msg(json_equal(dpost, post), "dry %s\nreal %s", json_dumps(dpost, JSON_COMPACT),
                json_dumps(post, JSON_COMPACT));
  json_decref(post);
  json_decref(dpost);
  json_decref(dry);
  json_t *p = sk_fixture_ask(&D, "PUT", "/v1/skeletons/robot?dryRun=yes", "model/gltf-binary", d, len, 400);
  json_decref(p);
  free(d);
  /* JSON: validated (mesh included) without being stored */
  char body[512];
  snprintf(body, sizeof body, "%s,\"mesh\":%s}", k_skel, k_mesh);
  dry = sk_fixture_ask_json(&D, "PUT", "/v1/skeletons/j9?dryRun=true", body, 200);
  ck_assert_ptr_nonnull(json_object_get(json_object_get(dry, "mesh"), "parent"));
  json_decref(dry);
  g = sk_fixture_ask(&D, "GET", "/v1/skeletons/j9", NULL, NULL, 0, 404);
  json_decref(g);
  snprintf(body, sizeof body, "%s,\"mesh\":{\"scaling\":[0,0,0]}}", k_skel);
  p = sk_fixture_ask_json(&D, "PUT", "/v1/skeletons/j9?dryRun=true", body, 422);
  expect_problem(p, 422, "/mesh");
  json_decref(p);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("default_mesh");
  TCase *tc = tcase_create("e2e");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, a_gltf_upload_answers_and_stores_babylons_mesh_chain);
  tcase_add_test(tc, the_skins_of_a_file_are_listed_with_joints_and_meshes);
  tcase_add_test(tc, a_json_mesh_round_trips_through_put_get_patch_and_restart);
  tcase_add_test(tc, a_bad_mesh_is_422_with_a_pointer_and_nothing_is_stored);
  tcase_add_test(tc, a_dry_run_lists_the_skins_and_stores_nothing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sk_test_run(suite()); }
