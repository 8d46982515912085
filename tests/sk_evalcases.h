/* Replays a committed .jsonl of `skinner eval` cases with Babylon's
 * answers ({"name", "case", "expected"} a line, written by the oracles in
 * tests/oracle) through sk_eval_case, requiring every number bit for bit
 * as float32: the same "order", as many results, the same outputs. */
#ifndef SK_EVALCASES_H
#define SK_EVALCASES_H

#include "sk_eval.h"
#include "sk_jsonl.h"

/* Why `got` (skinner eval's answer) differs from `want`, or "" in why;
 * counts the results compared. */
static inline void sk_evalcases_compare(const json_t *got, const json_t *want, char *why, size_t cap, int *results) {
  const json_t *gr = json_object_get(got, "results"), *wr = json_object_get(want, "results");
  if (!json_equal(json_object_get(got, "order"), json_object_get(want, "order")))
    snprintf(why, cap, "order differs");
  else if (json_array_size(gr) != json_array_size(wr))
    snprintf(why, cap, "%zu results, want %zu", json_array_size(gr), json_array_size(wr));
  for (size_t i = 0; !why[0] && i < json_array_size(wr); i++) {
    const char *key;
    json_t *val;
    (*results)++;
    if (json_object_size(json_array_get(gr, i)) != json_object_size(json_array_get(wr, i)))
      snprintf(why, cap, "result %zu has other outputs", i);
    json_object_foreach(json_array_get(wr, i), key, val) {
      if (!why[0] && !sk_jsonl_same_f32(json_object_get(json_array_get(gr, i), key), val))
        snprintf(why, cap, "result %zu \"%s\" differs", i, key);
    }
  }
}

/* Every case of tests/<rel>; prints "<rel>: N cases, R results, F failed"
 * and the first ten failures, fails the test unless there are at least
 * `min_cases` cases and `min_results` results and none failed. */
static inline void sk_evalcases_run(const char *rel, int min_cases, int min_results) {
  sk_jsonl in;
  sk_jsonl_open(&in, rel);
  int cases = 0, failed = 0, results = 0;
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    cases++;
    sk_strbuf out = {0};
    sk_error e;
    sk_error_clear(&e);
    int rc = sk_eval_case(json_object_get(rec, "case"), &out, &e);
    char why[1024] = "";
    if (rc != 0) {
      snprintf(why, sizeof why, "eval failed: %s at %s: %s", sk_errname(rc), e.pointer, e.text);
    } else {
      json_t *got = json_loadb(out.data, out.len, 0, NULL);
      sk_evalcases_compare(got, json_object_get(rec, "expected"), why, sizeof why, &results);
      json_decref(got);
    }
    if (why[0] && ++failed <= 10)
      fprintf(stderr, "FAIL %s: %s\n", json_string_value(json_object_get(rec, "name")), why);
    sk_strbuf_free(&out);
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  printf("%s: %d cases, %d results, %d failed\n", rel, cases, results, failed);
  ck_assert_int_ge(cases, min_cases);
  ck_assert_int_ge(results, min_results);
  ck_assert_int_eq(failed, 0);
}

#endif
