/* skinner retarget (sk_retarget_cmd): the clip it writes is Babylon's, number
 * for number (tests/data/retarget/ from tests/oracle/babylon_retarget.mjs),
 * and bad input exits 2 naming the field. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sk_retarget_cmd.h"
#include "sk_testutil.h"

static json_t *load_json(const char *rel) {
  size_t len;
  char *d = (char *)sk_test_read_file(rel, &len);
  ck_assert_ptr_nonnull(d);
  json_t *j = json_loadb(d, len, 0, NULL);
  ck_assert_ptr_nonnull(j);
  free(d);
  return j;
}

/* Runs skinner retarget on case `name` and compares its keys with Babylon's. */
static void check_case(const char *name) {
  char rel[256], src[1024], dst[1024], out[64];
  snprintf(rel, sizeof rel, "data/retarget/%s.json", name);
  json_t *exp = load_json(rel);
  snprintf(rel, sizeof rel, "data/%s", json_string_value(json_object_get(exp, "source")));
  sk_test_path(rel, src, sizeof src);
  snprintf(rel, sizeof rel, "data/%s", json_string_value(json_object_get(exp, "target")));
  sk_test_path(rel, dst, sizeof dst);
  char *opts = json_dumps(json_object_get(exp, "options"), JSON_COMPACT);
  snprintf(out, sizeof out, "/tmp/sk_retarget_cmd.%ld.json", (long)getpid());
  char *argv[] = {"retarget", src, dst, "--clip", (char *)json_string_value(json_object_get(exp, "clip")),
                  "--options", opts, "-o", out, NULL};
  ck_assert_int_eq(sk_retarget_cmd_main(9, argv), 0);
  json_t *got = json_load_file(out, 0, NULL);
  ck_assert_ptr_nonnull(got);
  ck_assert_str_eq(json_string_value(json_object_get(got, "name")), json_string_value(json_object_get(exp, "name")));
  const json_t *ga = json_object_get(got, "animations"), *ea = json_object_get(exp, "animations");
  ck_assert_uint_eq(json_array_size(ga), json_array_size(ea));
  size_t n = 0;
  for (size_t i = 0; i < json_array_size(ea); i++) {
    const json_t *e = json_array_get(ea, i), *g = NULL;
    for (size_t k = 0; k < json_array_size(ga) && g == NULL; k++) {
      const json_t *c = json_array_get(ga, k);
      if (json_equal(json_object_get(c, "target"), json_object_get(e, "target")) &&
          json_equal(json_object_get(c, "property"), json_object_get(e, "property")))
        g = c;
    }
    ck_assert_ptr_nonnull(g);
    /* jansson reads both texts with strtod: equal numbers are equal bits */
    ck_assert(json_equal(json_object_get(g, "frames"), json_object_get(e, "frames")));
    ck_assert_msg(json_equal(json_object_get(g, "values"), json_object_get(e, "values")), "%s: %s", name,
                  json_string_value(json_object_get(e, "target")));
    n += json_array_size(json_object_get(e, "values"));
  }
  fprintf(stderr, "%s: %zu keys equal\n", name, n);
  json_decref(got);
  json_decref(exp);
  free(opts);
  unlink(out);
}

START_TEST(skinner_retarget_writes_babylons_keys) {
  check_case("cesium-rigged");
  check_case("robot-mannequiny-root");
  check_case("cesium-rigged-ground");
}
END_TEST

START_TEST(bad_input_exits_2) {
  char src[1024], dst[1024];
  sk_test_path("data/CesiumMan.glb", src, sizeof src);
  sk_test_path("data/RiggedFigure.glb", dst, sizeof dst);
  char *a1[] = {"retarget", src, dst, "--clip", "0", "--options", "{\"mapNodeNames\":{\"x\":\"y\"}}", NULL};
  ck_assert_int_eq(sk_retarget_cmd_main(7, a1), 2);
  char *a2[] = {"retarget", src, dst, "--clip", "Nope", NULL};
  ck_assert_int_eq(sk_retarget_cmd_main(5, a2), 2);
  char *a3[] = {"retarget", src, NULL};
  ck_assert_int_eq(sk_retarget_cmd_main(2, a3), 2);
  char *a4[] = {"retarget", "/nonexistent.glb", dst, "--clip", "0", NULL};
  ck_assert_int_eq(sk_retarget_cmd_main(5, a4), 1);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sk_retarget_cmd");
  TCase *tc = tcase_create("cli");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, skinner_retarget_writes_babylons_keys);
  tcase_add_test(tc, bad_input_exits_2);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
