/* sk_pose_frames: a range's frame times in each form; "frames" by index
 * gives frame k at k / fps whatever the chunk, and each invalid input
 * names its field. */
#include "sk_json.h"
#include "sk_pose.h"
#include "sk_pose_frames.h"
#include "sk_testutil.h"

/* Parses `text` at "/p"; the code, *times (new) and *n. */
static int parse(const char *text, double **times, size_t *n, sk_error *e) {
  json_t *j;
  sk_error_clear(e);
  ck_assert_int_eq(sk_json_load(text, strlen(text), &j, e), 0);
  int rc = sk_pose_frames_parse(j, "/p", json_object_get(j, "time") != NULL, times, n, e);
  json_decref(j);
  if (rc)
    ck_assert_ptr_null(*times);
  return rc;
}

static double *index_times(long long start, long long end, double fps, size_t *n) {
  char text[160];
  snprintf(text, sizeof text, "{\"frames\": [%lld, %lld], \"fps\": %.17g}", start, end, fps);
  double *t;
  sk_error e;
  ck_assert_int_eq(parse(text, &t, n, &e), 0);
  ck_assert_uint_eq(*n, (size_t)(end - start));
  return t;
}

START_TEST(frame_k_is_at_k_over_fps_in_any_chunk) {
  enum { N = 10000 };
  static const double fps[] = {30, 24, 60, 29.97, 23.976};
  static const size_t chunks[] = {1, 64, 777, 1000};
  for (size_t f = 0; f < sizeof fps / sizeof fps[0]; f++) {
    size_t n;
    double *whole = index_times(0, N, fps[f], &n);
    for (size_t k = 0; k < N; k++) {
      const double want = (double)k / fps[f];
      ck_assert_msg(memcmp(&whole[k], &want, sizeof want) == 0, "frame %zu at %g fps", k, fps[f]);
    }
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++)
      for (size_t k0 = 0; k0 < N; k0 += chunks[c]) {
        const size_t k1 = k0 + chunks[c] < N ? k0 + chunks[c] : N;
        double *t = index_times((long long)k0, (long long)k1, fps[f], &n);
        ck_assert_msg(memcmp(t, whole + k0, n * sizeof *t) == 0, "chunk [%zu, %zu) at %g fps", k0, k1, fps[f]);
        free(t);
      }
    free(whole);
  }
}
END_TEST

/* [0, N) is the whole from/to bake from 0 (0 + k / fps is k / fps); a
 * from/to chunk starting at k0 / fps is not always at k / fps, which is
 * why the index form exists (and why from/to keeps its meaning). */
START_TEST(frames_from_zero_are_the_from_to_bake_and_from_to_chunks_are_not) {
  size_t n, m;
  double *whole = index_times(0, 10000, 30, &n);
  double *t;
  sk_error e;
  char text[160];
  snprintf(text, sizeof text, "{\"from\": 0, \"to\": %.17g, \"fps\": 30}", 9999 / 30.0);
  ck_assert_int_eq(parse(text, &t, &m, &e), 0);
  ck_assert_uint_eq(m, n);
  ck_assert(memcmp(t, whole, n * sizeof *t) == 0);
  free(t);
  size_t differ = 0;
  for (size_t k0 = 0; k0 < 10000; k0 += 777) {
    const size_t k1 = k0 + 777 < 10000 ? k0 + 777 : 10000;
    snprintf(text, sizeof text, "{\"from\": %.17g, \"to\": %.17g, \"fps\": 30}", k0 / 30.0, (k1 - 1) / 30.0);
    ck_assert_int_eq(parse(text, &t, &m, &e), 0);
    for (size_t i = 0; i < m && k0 + i < 10000; i++)
      differ += memcmp(&t[i], &whole[k0 + i], sizeof *t) != 0;
    free(t);
  }
  ck_assert_uint_gt(differ, 0);
  free(whole);
}
END_TEST

START_TEST(large_indices_and_one_frame) {
  size_t n;
  double *t = index_times(9007199254740991LL, 9007199254740992LL, 30, &n);
  ck_assert_uint_eq(n, 1);
  ck_assert(t[0] == 9007199254740991.0 / 30);
  free(t);
  t = index_times(7, 8, 24, &n);
  ck_assert(t[0] == 7 / 24.0);
  free(t);
}
END_TEST

START_TEST(no_range_is_one_frame) {
  double *t;
  size_t n;
  sk_error e;
  ck_assert_int_eq(parse("{\"time\": 0.5}", &t, &n, &e), 0);
  ck_assert_ptr_null(t);
  ck_assert_uint_eq(n, 1);
}
END_TEST

START_TEST(each_invalid_input_names_its_field) {
  static const struct {
    const char *text;
    int code;
    const char *pointer;
  } cases[] = {
      {"{\"frames\": [5, 4], \"fps\": 30}", SK_ERANGE, "/p/frames/1"},
      {"{\"frames\": [5, 5], \"fps\": 30}", SK_ERANGE, "/p/frames/1"},
      {"{\"frames\": [0.5, 4], \"fps\": 30}", SK_ETYPE, "/p/frames/0"},
      {"{\"frames\": [0, 4.0], \"fps\": 30}", SK_ETYPE, "/p/frames/1"},
      {"{\"frames\": [0, \"4\"], \"fps\": 30}", SK_ETYPE, "/p/frames/1"},
      {"{\"frames\": [-1, 4], \"fps\": 30}", SK_ERANGE, "/p/frames/0"},
      {"{\"frames\": [0, 9007199254740993], \"fps\": 30}", SK_ERANGE, "/p/frames/1"},
      {"{\"frames\": [0, 100001], \"fps\": 30}", SK_ETOOBIG, "/p/frames"},
      {"{\"frames\": [0], \"fps\": 30}", SK_ETYPE, "/p/frames"},
      {"{\"frames\": [0, 1, 2], \"fps\": 30}", SK_ETYPE, "/p/frames"},
      {"{\"frames\": 4, \"fps\": 30}", SK_ETYPE, "/p/frames"},
      {"{\"frames\": [0, 4]}", SK_EMISSING, "/p/fps"},
      {"{\"frames\": [0, 4], \"fps\": 0}", SK_ERANGE, "/p/fps"},
      {"{\"frames\": [0, 4], \"fps\": \"30\"}", SK_ETYPE, "/p/fps"},
      {"{\"frames\": [0, 4], \"fps\": 30, \"from\": 0}", SK_ETYPE, "/p/frames"},
      {"{\"frames\": [0, 4], \"fps\": 30, \"to\": 1}", SK_ETYPE, "/p/frames"},
      {"{\"frames\": [0, 4], \"fps\": 30, \"times\": [0]}", SK_ETYPE, "/p/frames"},
      {"{\"frames\": [0, 4], \"fps\": 30, \"time\": 0}", SK_ETYPE, "/p/frames"},
      /* the from/to form as it was */
      {"{\"from\": 1, \"to\": 0, \"fps\": 30}", SK_ERANGE, "/p/to"},
      {"{\"from\": 0, \"fps\": 30}", SK_EMISSING, "/p/to"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double *t = NULL;
    size_t n;
    sk_error e;
    ck_assert_int_eq(parse(cases[i].text, &t, &n, &e), cases[i].code);
    ck_assert_msg(strcmp(e.pointer, cases[i].pointer) == 0, "%s: %s (%s)", cases[i].text, e.pointer, e.text);
  }
}
END_TEST

START_TEST(count_is_what_the_parser_gives) {
  static const struct {
    const char *text;
    uint64_t frames;
    const char *key;
  } cases[] = {
      {"{\"frames\": [100, 1124], \"fps\": 30}", 1024, "frames"},
      {"{\"frames\": [0, 9007199254740992], \"fps\": 30}", 9007199254740992u, "frames"},
      {"{\"frames\": [4, 3], \"fps\": 30}", 1, "frames"},
      {"{\"frames\": [0, 4]}", 1, "frames"},
      {"{\"frames\": [0, 4], \"fps\": 30, \"from\": 0, \"to\": 100}", 1, "frames"},
      {"{\"from\": 0, \"to\": 1, \"fps\": 30}", 31, "fps"},
      {"{\"times\": [0, 1]}", 2, "times"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_t *j = json_loads(cases[i].text, 0, NULL);
    const char *key = NULL;
    ck_assert_uint_eq(sk_pose_frames_count(j, &key), cases[i].frames);
    ck_assert_str_eq(key, cases[i].key);
    json_decref(j);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_pose_frames");
  TCase *g = tcase_create("golden");
  tcase_set_timeout(g, 60);
  tcase_add_test(g, frame_k_is_at_k_over_fps_in_any_chunk);
  tcase_add_test(g, frames_from_zero_are_the_from_to_bake_and_from_to_chunks_are_not);
  tcase_add_test(g, large_indices_and_one_frame);
  tcase_add_test(g, no_range_is_one_frame);
  tcase_add_test(g, count_is_what_the_parser_gives);
  suite_add_tcase(s, g);
  TCase *v = tcase_create("validity");
  tcase_add_test(v, each_invalid_input_names_its_field);
  suite_add_tcase(s, v);
  return sk_test_run(s);
}
