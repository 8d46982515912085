/* Replays the fuzz targets' saved inputs through the same functions
 * libFuzzer runs (tests/fuzz/fuzz_*.c built with SK_FUZZ_REPLAY), so every
 * input that once broke a promise stays in `make check` -- and under
 * `./configure --enable-sanitizers`, where a memory error aborts the test.
 *
 *   tests/fuzz/regressions/<target>/  inputs that crashed or broke an
 *                                     invariant, kept after the fix
 *   tests/fuzz/seeds/<target>/        the hand-made edge cases
 *
 * A target's invariant failure calls abort(): Check reports the test as
 * failed by a signal; SK_FUZZ_VERBOSE=1 names each file as it replays. */
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fuzz/sk_fuzz.h"
#include "sk_testutil.h"

typedef int (*fuzz_fn)(const uint8_t *data, size_t size);

/* Replays every regular file of tests/fuzz/<kind>/<target>/ in name order;
 * returns how many. A missing directory replays nothing. */
static size_t replay_dir(const char *kind, const char *target, fuzz_fn fn) {
  char rel[256], dir[4096];
  snprintf(rel, sizeof rel, "fuzz/%s/%s", kind, target);
  sk_test_path(rel, dir, sizeof dir);
  struct dirent **names;
  int n = scandir(dir, &names, NULL, alphasort);
  if (n < 0)
    return 0;
  size_t replayed = 0;
  for (int i = 0; i < n; i++) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
    struct stat st;
    if (names[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      FILE *f = fopen(path, "rb");
      ck_assert_msg(f != NULL, "cannot open %s", path);
      uint8_t *data = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
      ck_assert(data != NULL);
      size_t len = fread(data, 1, (size_t)st.st_size, f);
      fclose(f);
      ck_assert_uint_eq(len, (size_t)st.st_size);
      /* Set SK_FUZZ_VERBOSE to see which file an abort came from. */
      if (getenv("SK_FUZZ_VERBOSE") != NULL)
        fprintf(stderr, "replay %s\n", path);
      fn(data, len);
      free(data);
      replayed++;
    }
    free(names[i]);
  }
  free(names);
  return replayed;
}

static void replay(const char *target, fuzz_fn fn) {
  size_t r = replay_dir("regressions", target, fn), n = replay_dir("seeds", target, fn);
  printf("fuzz replay %-8s %zu regressions, %zu seeds\n", target, r, n);
  /* Every target ships hand-made seeds: none found means a wrong path. */
  ck_assert_msg(n > 0, "no seeds found for %s under SK_TEST_DATA/fuzz", target);
}

START_TEST(skeleton_inputs_keep_their_promises) { replay("skeleton", sk_fuzz_skeleton); }
END_TEST

START_TEST(pose_inputs_keep_their_promises) { replay("pose", sk_fuzz_pose); }
END_TEST

START_TEST(eval_inputs_keep_their_promises) { replay("eval", sk_fuzz_eval); }
END_TEST

START_TEST(gltf_inputs_keep_their_promises) { replay("gltf", sk_fuzz_gltf); }
END_TEST

/* The harnesses must also survive the degenerate inputs libFuzzer starts
 * with (empty, one byte), which no file above holds. */
START_TEST(empty_and_tiny_inputs) {
  static const uint8_t one[] = {'{'};
  fuzz_fn fns[] = {sk_fuzz_skeleton, sk_fuzz_pose, sk_fuzz_eval, sk_fuzz_gltf};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    fns[i](one, 0);
    fns[i](one, 1);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_fuzz_regressions");
  struct {
    const char *name;
    const TTest *test;
  } cases[] = {
      {"skeleton", skeleton_inputs_keep_their_promises},
      {"pose", pose_inputs_keep_their_promises},
      {"eval", eval_inputs_keep_their_promises},
      {"gltf", gltf_inputs_keep_their_promises},
      {"degenerate", empty_and_tiny_inputs},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    TCase *tc = tcase_create(cases[i].name);
    tcase_add_test(tc, cases[i].test);
    suite_add_tcase(s, tc);
  }
  return sk_test_run(s);
}
