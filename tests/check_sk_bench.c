/* `skinner bench` is not a test, but its machine-readable last line is a
 * contract (scripts check the figures from it): a quick run must produce
 * one JSON object with every row's fields, issue 12's four kernel targets
 * and the two proposed against the instruction-mix bound; `skinner bench
 * --clips` one array of rows. */
#include <stdbool.h>
#include <unistd.h>

#include <jansson.h>

#include "sk_bench_mix.h"
#include "sk_testutil.h"

int sk_bench_main(int argc, char **argv);
int sk_bench_clips_main(int argc, char **argv);

/* The last line `main(argc, argv)` prints, parsed; its status must be 0. */
static json_t *last_json_line(int (*main_fn)(int, char **), int argc, char **argv) {
  char path[] = "/tmp/sk_bench_test.XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  ck_assert_int_eq(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
  int rc = main_fn(argc, argv);
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  ck_assert_int_eq(rc, 0);
  FILE *f = fdopen(fd, "r");
  rewind(f);
  char *line = NULL, *last = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    free(last);
    last = strdup(line);
  }
  free(line);
  fclose(f);
  unlink(path);
  ck_assert_ptr_nonnull(last);
  json_error_t je;
  json_t *j = json_loads(last, 0, &je);
  ck_assert_msg(j != NULL, "last line is not JSON: %s", je.text);
  free(last);
  return j;
}

START_TEST(quick_json_run_ends_with_one_object_of_rows) {
  char *argv[] = {"bench", "--quick", "--json", NULL};
  json_t *j = last_json_line(sk_bench_main, 3, argv);
  const json_t *rows = json_object_get(j, "rows");
  ck_assert_uint_gt(json_array_size(rows), 10);
  size_t i;
  const json_t *row;
  json_array_foreach(rows, i, row) {
    static const char *const keys[] = {"bones", "poses", "path", "threads", "bone_matrices_per_s",
                                       "bandwidth_limit_per_s", "scalar_per_s", "precision", "bytes_per_s"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
      ck_assert_msg(json_object_get(row, keys[k]) != NULL, "row %zu has no %s", i, keys[k]);
    ck_assert(json_number_value(json_object_get(row, "bone_matrices_per_s")) > 0);
  }
  const json_t *targets = json_object_get(j, "targets");
  ck_assert_uint_eq(json_array_size(targets), 6);
  json_array_foreach(targets, i, row) {
    ck_assert(json_is_string(json_object_get(row, "target")));
    ck_assert(json_is_number(json_object_get(row, "goal")));
    ck_assert(json_is_boolean(json_object_get(row, "pass")));
  }
  /* Exact rows on every path, and the opt-in float32 row of the best path;
   * with AVX-512, the mix bound's rows (input "mix", never "trs": scripts
   * take the fastest TRS row as the kernel's) at every size of 8 poses up. */
  bool exact = false, fast = false;
  size_t bound = 0, sizes = 0;
  json_array_foreach(rows, i, row) {
    const char *p = json_string_value(json_object_get(row, "precision"));
    const char *path = json_string_value(json_object_get(row, "path"));
    const char *in = json_string_value(json_object_get(row, "input"));
    ck_assert(p != NULL && (strcmp(p, "exact") == 0 || strcmp(p, "fast") == 0));
    exact |= strcmp(p, "exact") == 0;
    fast |= strcmp(p, "fast") == 0;
    ck_assert(path != NULL && in != NULL);
    ck_assert((strcmp(path, "bound") == 0) == (strcmp(in, "mix") == 0));
    bound += strcmp(path, "bound") == 0;
    sizes += strcmp(path, "core") == 0 && strcmp(in, "trs") == 0 &&
             json_integer_value(json_object_get(row, "poses")) >= SK_BENCH_MIX_LANES;
  }
  ck_assert(exact && fast);
  ck_assert_uint_eq(bound, sk_bench_mix_supported() ? sizes : 0);
  json_decref(j);
}
END_TEST

/* `skinner bench --clips --json` (what `make bench-clips` reads): one
 * array of rows, each with its clip, row, bones and a positive rate; the
 * three clips' kernel rows, rig65's CUBICSPLINE and STEP copies of its
 * LINEAR clip as "interp" rows measured against it, and the route row of
 * Fox's Walk in Babylon's format beside its override form's rate, with its
 * two-layer blend row against that route row, and its Hermite and STEP
 * variants against that route row too; Fox's two-layer routes, plain,
 * masked and additive, against the plain one, and one pose of the plain
 * and the additive one at two references, the second with its keys made
 * per call and kept at first use (of_one). */
START_TEST(clips_quick_json_rows) {
  char data[1024];
  char *argv[] = {"bench", "--clips", "--quick", "--json", "--data", (char *)sk_test_path("data", data, sizeof data), NULL};
  json_t *j = last_json_line(sk_bench_clips_main, 6, argv);
  ck_assert(json_is_array(j));
  size_t i, kernel = 0, interp = 0, babylon = 0, babylon_blend = 0, babylon_keys = 0, layers = 0, one = 0;
  const json_t *row;
  json_array_foreach(j, i, row) {
    const char *clip = json_string_value(json_object_get(row, "clip"));
    const char *name = json_string_value(json_object_get(row, "row"));
    ck_assert_msg(clip != NULL && name != NULL && json_is_integer(json_object_get(row, "bones")), "row %zu", i);
    ck_assert_msg(json_number_value(json_object_get(row, "rate")) > 0, "%s %s: no rate", clip, name);
    kernel += strcmp(name, "kernel") == 0;
    if (strcmp(name, "interp") == 0) {
      ck_assert(strcmp(clip, "gltf/rig65.gltf:WaveCubic") == 0 || strcmp(clip, "gltf/rig65.gltf:WaveStep") == 0);
      ck_assert(json_number_value(json_object_get(row, "of_linear")) > 0);
      interp++;
    }
    if (json_object_get(row, "of_layers") != NULL) { /* Fox's two-layer routes: plain, masked, additive */
      ck_assert_str_eq(clip, "Fox.glb:Walk");
      ck_assert(strcmp(name, "layers") == 0 || strcmp(name, "masked") == 0 || strcmp(name, "additive") == 0);
      ck_assert(json_number_value(json_object_get(row, "of_layers")) > 0);
      layers++;
    }
    if (json_object_get(row, "of_one") != NULL) { /* one pose of them: plain, additive */
      ck_assert_str_eq(clip, "Fox.glb:Walk");
      ck_assert(strcmp(name, "layers-1") == 0 || strcmp(name, "additive-1") == 0 || strcmp(name, "additive-1r") == 0 ||
                strcmp(name, "additive-1m") == 0);
      ck_assert(json_number_value(json_object_get(row, "of_one")) > 0);
      one++;
    }
    if (strcmp(clip, "fox-walk-babylon.json:Walk") == 0 && strcmp(name, "route") == 0) {
      ck_assert(json_number_value(json_object_get(row, "overrides_rate")) > 0);
      babylon++;
    } else if (strcmp(clip, "fox-walk-babylon.json:Walk") == 0 && json_object_get(row, "of_plain") != NULL) {
      ck_assert(strcmp(name, "hermite") == 0 || strcmp(name, "step") == 0);
      ck_assert(json_number_value(json_object_get(row, "of_plain")) > 0);
      babylon_keys++;
    } else if (strcmp(clip, "fox-walk-babylon.json:Walk") == 0) {
      ck_assert_str_eq(name, "blend");
      ck_assert(json_number_value(json_object_get(row, "of_route")) > 0);
      babylon_blend++;
    }
  }
  ck_assert_uint_eq(kernel, 3);
  ck_assert_uint_eq(interp, 2);
  ck_assert_uint_eq(babylon, 1);
  ck_assert_uint_eq(babylon_blend, 1);
  ck_assert_uint_eq(babylon_keys, 2);
  ck_assert_uint_eq(layers, 3);
  ck_assert_uint_eq(one, 4);
  json_decref(j);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_bench");
  TCase *tc = tcase_create("lifecycle");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, quick_json_run_ends_with_one_object_of_rows);
  tcase_add_test(tc, clips_quick_json_rows);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
