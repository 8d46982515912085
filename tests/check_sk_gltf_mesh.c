/* sk_gltf_mesh: a glTF skin's default mesh against Babylon's loader, and
 * the skins list. tests/gltf/mesh/expected.json is written by
 * tests/oracle/babylon_gltf_mesh.mjs --regenerate: for every skeleton
 * Babylon's loader makes of every test asset, the TransformNode chain above
 * its first mesh (exact doubles) and that mesh's world matrix (float32). */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sk_eval.h"
#include "sk_gltf_mesh.h"
#include "sk_ops.h"
#include "sk_testutil.h"

/* Same shape, keys and numbers by value (JSON cannot carry -0: 0 == -0). */
static int json_same(const json_t *a, const json_t *b, char *why, size_t cap) {
  if (json_is_number(a) && json_is_number(b)) {
    if (json_number_value(a) == json_number_value(b))
      return 1;
    snprintf(why, cap, "%.17g != %.17g", json_number_value(a), json_number_value(b));
    return 0;
  }
  if (json_typeof(a) != json_typeof(b)) {
    snprintf(why, cap, "types differ");
    return 0;
  }
  if (json_is_array(a)) {
    if (json_array_size(a) != json_array_size(b)) {
      snprintf(why, cap, "array sizes differ");
      return 0;
    }
    for (size_t i = 0; i < json_array_size(a); i++)
      if (!json_same(json_array_get(a, i), json_array_get(b, i), why, cap))
        return 0;
    return 1;
  }
  if (json_is_object(a)) {
    if (json_object_size(a) != json_object_size(b)) {
      snprintf(why, cap, "key sets differ");
      return 0;
    }
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)a, k, v) {
      const json_t *w = json_object_get(b, k);
      if (w == NULL) {
        snprintf(why, cap, "no \"%s\"", k);
        return 0;
      }
      if (!json_same(v, w, why, cap))
        return 0;
    }
    return 1;
  }
  return json_equal(a, b);
}

static sk_gltf *parse_asset(const char *asset) {
  size_t len;
  unsigned char *d = sk_test_read_asset(asset, &len);
  sk_gltf *g = NULL;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_gltf_parse(d, len, &g, &err) == 0, "%s: %s", asset, err.text);
  free(d);
  return g;
}

static json_t *load_expected(void) {
  char path[1024];
  json_error_t je;
  json_t *all = json_load_file(sk_test_path("gltf/mesh/expected.json", path, sizeof path), 0, &je);
  ck_assert_msg(all != NULL, "expected.json: %s", je.text);
  ck_assert_uint_gt(json_array_size(all), 0);
  return all;
}

/* Every skin of every asset: the chain equals Babylon's node for node, and
 * the composed world matrix equals Babylon's mesh.computeWorldMatrix()
 * float for float. Chains past SK_MESH_MAX_DEPTH nodes give no default
 * mesh (there are none in the assets). */
START_TEST(chains_equal_babylons_loader) {
  json_t *all = load_expected();
  size_t i, checked = 0;
  json_t *e;
  const char *cur = NULL;
  sk_gltf *g = NULL;
  json_array_foreach(all, i, e) {
    const char *asset = json_string_value(json_object_get(e, "asset"));
    size_t skin = (size_t)json_integer_value(json_object_get(e, "skin"));
    if (cur == NULL || strcmp(cur, asset) != 0) {
      sk_gltf_destroy(g);
      g = parse_asset(asset);
      cur = asset;
    }
    json_t *got = NULL;
    ck_assert_int_eq(sk_gltf_default_mesh(g, skin, &got), 0);
    const json_t *want = json_object_get(e, "mesh");
    if (json_is_null(want)) {
      ck_assert_msg(got == NULL, "%s skin %zu: Babylon has no mesh for it", asset, skin);
      continue;
    }
    ck_assert_msg(got != NULL, "%s skin %zu: no default mesh", asset, skin);
    char why[256] = "";
    ck_assert_msg(json_same(got, want, why, sizeof why), "%s skin %zu: chain differs: %s", asset, skin, why);
    bool has = false;
    sk_mesh m;
    sk_error err;
    sk_error_clear(&err);
    ck_assert_int_eq(sk_ops_parse_mesh(got, "/mesh", &has, &m, &err), 0);
    ck_assert(has);
    const json_t *w = json_object_get(e, "world");
    for (size_t k = 0; k < 16; k++)
      ck_assert_msg(m.world[k] == (float)json_number_value(json_array_get(w, k)), "%s skin %zu: world[%zu] %.9g != %.9g",
                    asset, skin, k, (double)m.world[k], json_number_value(json_array_get(w, k)));
    json_decref(got);
    checked++;
  }
  sk_gltf_destroy(g);
  json_decref(all);
  ck_assert_uint_ge(checked, 99);
}
END_TEST

/* CesiumMan stands up and Fox is not mirrored once the chain is applied:
 * the handedness root and the Z-up node above CesiumMan's mesh are there. */
START_TEST(cesiumman_and_fox_by_hand) {
  sk_gltf *g = parse_asset("CesiumMan.glb");
  json_t *got = NULL;
  ck_assert_int_eq(sk_gltf_default_mesh(g, 0, &got), 0);
  ck_assert_ptr_nonnull(got);
  size_t depth = 0;
  const json_t *top = got;
  for (const json_t *n = got; n != NULL; n = json_object_get(n, "parent")) {
    depth++;
    top = n;
  }
  ck_assert_uint_eq(depth, 4);
  json_t *flip = json_pack("[iii]", 1, 1, -1);
  char why[64];
  ck_assert(json_same(json_object_get(top, "scaling"), flip, why, sizeof why));
  json_decref(flip);
  json_decref(got);
  sk_gltf_destroy(g);
  g = parse_asset("Fox.glb");
  ck_assert_int_eq(sk_gltf_default_mesh(g, 0, &got), 0);
  bool has;
  sk_mesh m;
  ck_assert_int_eq(sk_ops_parse_mesh(got, "/mesh", &has, &m, NULL), 0);
  /* __root__ alone: a rotation by pi about Y and z flipped = x mirrored */
  const float want[16] = {-1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  for (int k = 0; k < 16; k++)
    ck_assert_float_eq(fabsf(m.world[k] - want[k]) < 1e-6f, 1);
  json_decref(got);
  sk_gltf_destroy(g);
}
END_TEST

START_TEST(skins_list) {
  sk_gltf *g = parse_asset("mesh_chain.gltf");
  json_t *list = NULL;
  ck_assert_int_eq(sk_gltf_skins_json(g, &list), 0);
  json_error_t je;
  json_t *want = json_loads("[{\"index\":0,\"name\":\"main\",\"joints\":2,\"meshes\":[\"body\"]},"
                            "{\"index\":1,\"name\":\"self\",\"joints\":1,\"meshes\":[\"selfskinned\"]},"
                            "{\"index\":2,\"name\":\"offscene\",\"joints\":1,\"meshes\":[]}]",
                            0, &je);
  ck_assert_ptr_nonnull(want);
  ck_assert_msg(json_equal(list, want), "got %s", json_dumps(list, JSON_COMPACT));
  json_t *none = (json_t *)1;
  ck_assert_int_eq(sk_gltf_default_mesh(g, 2, &none), 0); /* its mesh is not in the scene */
  ck_assert_ptr_null(none);
  json_decref(want);
  json_decref(list);
  sk_gltf_destroy(g);
  g = parse_asset("RobotExpressive.glb");
  ck_assert_int_eq(sk_gltf_skins_json(g, &list), 0);
  ck_assert_uint_eq(json_array_size(list), 2);
  json_decref(list);
  sk_gltf_destroy(g);
}
END_TEST

/* import_extra = import + the mesh text; a parse of that text composes. */
START_TEST(import_extra_keeps_the_skeleton) {
  size_t len, est;
  unsigned char *d = sk_test_read_asset("Fox.glb", &len);
  sk_skeleton *s = NULL, *s2 = NULL;
  sk_anim *a = NULL, *a2 = NULL;
  sk_gltf_extra x;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_gltf_import_extra(d, len, NULL, 0, 0, &est, true, &s, &a, &x, &err), 0);
  ck_assert_int_eq(sk_gltf_import(d, len, NULL, 0, &s2, &a2, &err), 0);
  ck_assert_uint_eq(s->count, s2->count);
  ck_assert_ptr_nonnull(x.mesh_json);
  ck_assert_ptr_nonnull(x.skins_json);
  ck_assert_uint_eq(x.skin, 0);
  ck_assert_ptr_nonnull(strstr(x.skins_json, "\"joints\":24"));
  sk_gltf_extra_clear(&x);
  ck_assert_ptr_null(x.mesh_json);
  sk_skeleton_destroy(s2);
  sk_anim_destroy(a2);
  /* a skin that does not exist: nothing built, extra cleared */
  ck_assert_int_eq(sk_gltf_import_extra(d, len, "7", 0, 0, &est, true, &s2, &a2, &x, &err), SK_ENOTFOUND);
  ck_assert_ptr_null(s2);
  ck_assert_ptr_null(x.mesh_json);
  sk_skeleton_destroy(s);
  sk_anim_destroy(a);
  free(d);
}
END_TEST

static sk_gltf *parse_text(const char *text) {
  sk_gltf *g = NULL;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_gltf_parse(text, strlen(text), &g, &err) == 0, "%s at %s", err.text, err.pointer);
  return g;
}

/* Hostile hierarchies: too deep, singular, and two skinned meshes each
 * parented (through its skeleton root) to the other. */
START_TEST(deep_singular_and_cyclic_chains) {
  /* 70 nodes in a line, the skinned mesh and its joint under the last */
  char *t = malloc(1 << 16);
  size_t at = (size_t)sprintf(t, "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],\"nodes\":[");
  for (int i = 0; i < 70; i++)
    at += (size_t)sprintf(t + at, "{\"children\":[%d%s]},", i + 1, i == 69 ? ",71" : "");
  sprintf(t + at, "{\"mesh\":0,\"skin\":0},{}],\"meshes\":[{\"primitives\":[{\"attributes\":{}}]}],"
                  "\"skins\":[{\"joints\":[71]}]}");
  sk_gltf *g = parse_text(t);
  json_t *m = (json_t *)1;
  ck_assert_int_eq(sk_gltf_default_mesh(g, 0, &m), 0);
  ck_assert_ptr_null(m); /* 72 nodes: past SK_MESH_MAX_DEPTH, no default mesh */
  sk_gltf_destroy(g);
  /* a zero scale above the mesh: the chain, which does not compose */
  g = parse_text("{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],\"nodes\":["
                 "{\"scale\":[0,1,1],\"children\":[1,2]},{\"mesh\":0,\"skin\":0},{}],"
                 "\"meshes\":[{\"primitives\":[{\"attributes\":{}}]}],\"skins\":[{\"joints\":[2]}]}");
  ck_assert_int_eq(sk_gltf_default_mesh(g, 0, &m), 0);
  ck_assert_ptr_nonnull(m);
  bool has;
  sk_mesh mesh;
  ck_assert_int_eq(sk_ops_parse_mesh(m, "/mesh", &has, &mesh, NULL), SK_ESINGULAR);
  json_decref(m);
  sk_gltf_destroy(g);
  /* A (skin 0, root 3 under B) and B (skin 1, root 2 under A) */
  g = parse_text("{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],\"nodes\":["
                 "{\"mesh\":0,\"skin\":0,\"children\":[1,2]},{\"mesh\":0,\"skin\":1,\"children\":[3]},{},{}],"
                 "\"meshes\":[{\"primitives\":[{\"attributes\":{}}]}],"
                 "\"skins\":[{\"joints\":[3]},{\"joints\":[2]}]}");
  ck_assert_int_eq(sk_gltf_default_mesh(g, 0, &m), 0);
  ck_assert_ptr_null(m);
  sk_gltf_destroy(g);
  free(t);
}
END_TEST

/* skinner eval: a glTF case without "mesh" uses the file's default mesh
 * (what an upload of the file gets); "mesh": null means none. */
static char *eval_text(const char *case_json) {
  json_error_t je;
  json_t *c = json_loads(case_json, 0, &je);
  ck_assert_msg(c != NULL, "%s", je.text);
  char dir[1024];
  sk_test_path("data", dir, sizeof dir);
  sk_strbuf out = {0};
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_eval_case_at(c, dir, &out, &err) == 0, "%s at %s", err.text, err.pointer);
  json_decref(c);
  sk_strbuf_append(&out, "", 1);
  return out.data;
}

START_TEST(eval_uses_the_files_default_mesh) {
  sk_gltf *g = parse_asset("Fox.glb");
  json_t *chain = NULL;
  ck_assert_int_eq(sk_gltf_default_mesh(g, 0, &chain), 0);
  char *chain_text = json_dumps(chain, JSON_COMPACT);
  json_decref(chain);
  sk_gltf_destroy(g);
  const char *ops = "\"ops\":[{\"op\":\"evaluate\",\"output\":[\"positions\"]},"
                    "{\"op\":\"query\",\"bone\":\"b_Head_05\",\"get\":\"absolutePosition\"}]";
  char c1[256], c3[256];
  snprintf(c1, sizeof c1, "{\"skeleton\":{\"gltf\":\"Fox.glb\"},%s}", ops);
  snprintf(c3, sizeof c3, "{\"skeleton\":{\"gltf\":\"Fox.glb\"},\"mesh\":null,%s}", ops);
  size_t n2 = strlen(chain_text) + 256;
  char *c2 = malloc(n2);
  snprintf(c2, n2, "{\"skeleton\":{\"gltf\":\"Fox.glb\"},\"mesh\":%s,%s}", chain_text, ops);
  char *a = eval_text(c1), *b = eval_text(c2), *none = eval_text(c3);
  ck_assert_str_eq(a, b);
  ck_assert_str_ne(a, none); /* Fox is mirrored without its mesh */
  free(a);
  free(b);
  free(none);
  free(c2);
  free(chain_text);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sk_gltf_mesh");
  TCase *golden = tcase_create("golden");
  tcase_set_timeout(golden, 120);
  tcase_add_test(golden, chains_equal_babylons_loader);
  tcase_add_test(golden, cesiumman_and_fox_by_hand);
  suite_add_tcase(s, golden);
  TCase *skins = tcase_create("skins");
  tcase_add_test(skins, skins_list);
  tcase_add_test(skins, import_extra_keeps_the_skeleton);
  tcase_add_test(skins, eval_uses_the_files_default_mesh);
  tcase_add_test(skins, deep_singular_and_cyclic_chains);
  suite_add_tcase(s, skins);
  return s;
}

int main(void) { return sk_test_run(suite()); }
