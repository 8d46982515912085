/* Agreement with Babylon.js on the committed conformance cases
 * (tests/conformance/cases.jsonl, answers produced by tests/oracle with
 * real Babylon Skeleton/Bone objects). Every number must be within
 * 1e-5 x max(1, largest |entry| of its expected matrix); we also count the
 * cases that agree bit for bit in float32 (the sign of zero included), and
 * require it of all of them:
 * the scalar core follows Babylon's float storage, double temporaries and
 * operation order. */
#include "sk_eval.h"
#include "sk_json.h"
#include "sk_jsonl.h"
#include "sk_testutil.h"

static int compare_array(const json_t *got, const json_t *want, bool *exact, char *why, size_t cap) {
  if (!json_is_array(got) || !json_is_array(want) || json_array_size(got) != json_array_size(want)) {
    snprintf(why, cap, "array sizes differ");
    return 0;
  }
  size_t n = json_array_size(want);
  for (size_t m = 0; m < n; m += 16) {
    float g[16] = {0}, w[16] = {0};
    size_t k = n - m < 16 ? n - m : 16;
    for (size_t i = 0; i < k; i++) {
      g[i] = (float)json_number_value(json_array_get(got, m + i));
      w[i] = (float)json_number_value(json_array_get(want, m + i));
      if (memcmp(&g[i], &w[i], sizeof g[i]) != 0) /* the sign of zero too: the oracle writes -0.0 */
        *exact = false;
    }
    if (!sk_test_mat_close(g, w, 1e-5)) {
      snprintf(why, cap, "matrix at %zu differs: got %.9g %.9g %.9g %.9g ... %.9g %.9g %.9g, want %.9g %.9g %.9g %.9g ... %.9g %.9g %.9g", m / 16,
               g[0], g[1], g[2], g[3], g[12], g[13], g[14], w[0], w[1], w[2], w[3], w[12], w[13], w[14]);
      return 0;
    }
  }
  return 1;
}

/* Runs every line of one .jsonl file; returns the number of cases. A line
 * with "reject": {"code", "pointer"} is a deliberate divergence: Babylon
 * accepts the input, skinnerd must refuse it with that error. */
static int run_file(const char *rel, int min_cases) {
  sk_jsonl in;
  sk_jsonl_open(&in, rel);
  int cases = 0, exact_cases = 0, failed = 0;
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    const char *name = json_string_value(json_object_get(rec, "name"));
    sk_strbuf out = {0};
    sk_error e;
    sk_error_clear(&e);
    int rc = sk_eval_case(json_object_get(rec, "case"), &out, &e);
    cases++;
    char why[1024] = "";
    bool exact = true;
    const json_t *reject = json_object_get(rec, "reject");
    if (reject != NULL) {
      const char *code = json_string_value(json_object_get(reject, "code"));
      const char *ptr = json_string_value(json_object_get(reject, "pointer"));
      if (rc == 0 || code == NULL || ptr == NULL || strcmp(sk_errname(rc), code) != 0 || strcmp(e.pointer, ptr) != 0)
        snprintf(why, sizeof why, "expected rejection %s at %s, got %s at %s", code ? code : "?", ptr ? ptr : "?",
                 sk_errname(rc), e.pointer);
    } else if (rc != 0) {
      snprintf(why, sizeof why, "eval failed: %s at %s: %s", sk_errname(rc), e.pointer, e.text);
    } else {
      json_t *got = json_loadb(out.data, out.len, JSON_DECODE_INT_AS_REAL, NULL); /* "-0" keeps its sign */
      const json_t *want = json_object_get(rec, "expected");
      if (!json_equal(json_object_get(got, "order"), json_object_get(want, "order")))
        snprintf(why, sizeof why, "order differs");
      const json_t *gr = json_object_get(got, "results"), *wr = json_object_get(want, "results");
      if (!why[0] && json_array_size(gr) != json_array_size(wr))
        snprintf(why, sizeof why, "%zu results, want %zu", json_array_size(gr), json_array_size(wr));
      for (size_t i = 0; !why[0] && i < json_array_size(wr); i++) {
        const char *key;
        json_t *val;
        if (json_object_size(json_array_get(gr, i)) != json_object_size(json_array_get(wr, i)))
          snprintf(why, sizeof why, "result %zu has other outputs", i);
        json_object_foreach(json_array_get(wr, i), key, val) {
          if (!why[0] && !compare_array(json_object_get(json_array_get(gr, i), key), val, &exact, why, sizeof why)) {
            char tmp[1024];
            snprintf(tmp, sizeof tmp, "result %zu %s: %s", i, key, why);
            snprintf(why, sizeof why, "%s", tmp);
          }
        }
      }
      json_decref(got);
    }
    if (why[0]) {
      failed++;
      if (failed <= 10)
        fprintf(stderr, "FAIL %s: %s\n", name ? name : "?", why);
    } else if (exact) {
      exact_cases++;
    } else if (cases - exact_cases - failed <= 5) {
      fprintf(stderr, "within tolerance, not bit-exact: %s\n", name ? name : "?");
    }
    sk_strbuf_free(&out);
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  printf("%s: %d passed, %d failed (%d bit-exact)\n", rel, cases - failed, failed, exact_cases);
  ck_assert_int_ge(cases, min_cases);
  ck_assert_int_eq(failed, 0);
  ck_assert_msg(exact_cases == cases, "%d of %d cases are not bit-exact", cases - exact_cases, cases);
  return cases;
}

START_TEST(every_generated_case_agrees_with_babylon) { run_file("conformance/cases.jsonl", 300); }
END_TEST

START_TEST(every_handwritten_case_agrees_with_babylon) { run_file("conformance/handwritten.jsonl", 11); }
END_TEST

int main(void) {
  Suite *s = suite_create("sk_conformance");
  TCase *tc = tcase_create("babylon");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, every_handwritten_case_agrees_with_babylon);
  tcase_add_test(tc, every_generated_case_agrees_with_babylon);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
