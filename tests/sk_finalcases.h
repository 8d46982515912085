/* Replays committed .jsonl cases of pose ops whose expected answers are
 * Babylon's "final"s ({"name", "case", "expected"} a line; written by
 * tests/oracle/babylon_speed.mjs, babylon_blendin.mjs, gen_banim_speed.py),
 * every float bit for bit as float32, the sign of zero included: through
 * skinner eval (sk_eval_case_at), and over /pose as JSON and as float32
 * (Accept: application/octet-stream), glTF assets uploaded as files,
 * Babylon skeletons as their JSON. */
#ifndef SK_FINALCASES_H
#define SK_FINALCASES_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "sk_eval.h"
#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_jsonl.h"
#include "sk_testutil.h"

/* Every float of `g` and `w` (arrays of numbers) the same float32 bits. */
static inline void sk_finalcases_same(const json_t *g, const json_t *w, const char *name, size_t r) {
  ck_assert_uint_eq(json_array_size(g), json_array_size(w));
  for (size_t i = 0; i < json_array_size(w); i++) {
    const float gf = (float)json_number_value(json_array_get(g, i));
    const float wf = (float)json_number_value(json_array_get(w, i));
    ck_assert_msg(memcmp(&gf, &wf, sizeof gf) == 0, "%s: result %zu number %zu: %.9g, Babylon %.9g", name, r, i,
                  (double)gf, (double)wf);
  }
}

/* Every case of tests/<rel> through skinner eval; returns the cases and
 * adds the poses compared to *poses. */
static inline int sk_finalcases_eval(const char *rel, int *poses) {
  char base[1024];
  sk_jsonl in;
  sk_jsonl_open(&in, rel);
  sk_test_path("", base, sizeof base);
  int cases = 0;
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    const char *name = json_string_value(json_object_get(rec, "name"));
    sk_strbuf out = {0};
    sk_error e;
    sk_error_clear(&e);
    int rc = sk_eval_case_at(json_object_get(rec, "case"), base, &out, &e);
    ck_assert_msg(rc == 0, "%s: %s at %s: %s", name, sk_errname(rc), e.pointer, e.text);
    json_t *got = json_loadb(out.data, out.len, JSON_DECODE_INT_AS_REAL, NULL); /* "-0" keeps its sign */
    const json_t *gr = json_object_get(got, "results");
    const json_t *wr = json_object_get(json_object_get(rec, "expected"), "results");
    ck_assert_uint_eq(json_array_size(gr), json_array_size(wr));
    for (size_t r = 0; r < json_array_size(wr); r++, (*poses)++)
      sk_finalcases_same(json_object_get(json_array_get(gr, r), "final"),
                         json_object_get(json_array_get(wr, r), "final"), name, r);
    cases++;
    json_decref(got);
    sk_strbuf_free(&out);
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  return cases;
}

/* One op of a case over /pose as JSON and as float32: its poses are
 * wr[*next..], Babylon's bits; *next moves past them. */
static inline void sk_finalcases_http_op(const sk_daemon *d, const char *url, const json_t *op_in, const json_t *wr,
                                         size_t *next, const char *name) {
  json_t *op = json_deep_copy(op_in);
  json_object_del(op, "op");
  char *body = json_dumps(op, JSON_COMPACT);
  sk_httpc_resp r;
  ck_assert_int_eq(sk_fixture_send(d, "POST", url, "application/json", NULL, body, strlen(body), &r), 0);
  ck_assert_msg(r.status == 200, "%s: %d %.300s", name, r.status, r.body);
  json_t *got = json_loadb(r.body, r.len, JSON_DECODE_INT_AS_REAL, NULL);
  ck_assert_ptr_nonnull(got);
  const json_t *res = json_object_get(got, "results");
  const size_t n = res != NULL ? json_array_size(res) : 1, first = *next;
  ck_assert_uint_le(first + n, json_array_size(wr));
  for (size_t i = 0; i < n; i++)
    sk_finalcases_same(json_object_get(res != NULL ? json_array_get(res, i) : got, "final"),
                       json_object_get(json_array_get(wr, first + i), "final"), name, first + i);
  json_decref(got);
  sk_httpc_free(&r);
  ck_assert_int_eq(
      sk_fixture_send(d, "POST", url, "application/json", "application/octet-stream", body, strlen(body), &r), 0);
  ck_assert_int_eq(r.status, 200);
  const size_t per = json_array_size(json_object_get(json_array_get(wr, first), "final"));
  ck_assert_uint_eq(r.len, n * per * sizeof(float));
  for (size_t i = 0; i < n; i++) {
    const json_t *w = json_object_get(json_array_get(wr, first + i), "final");
    for (size_t j = 0; j < per; j++) {
      float gf, wf = (float)json_number_value(json_array_get(w, j));
      memcpy(&gf, r.body + (i * per + j) * sizeof gf, sizeof gf);
      ck_assert_msg(memcmp(&gf, &wf, sizeof gf) == 0, "%s: binary pose %zu number %zu", name, first + i, j);
    }
  }
  *next = first + n;
  sk_httpc_free(&r);
  free(body);
  json_decref(op);
}

/* Every case of the files[0..nfiles) over /pose on a daemon this starts
 * and stops; returns the cases. */
static inline int sk_finalcases_http(const char *const *files, size_t nfiles) {
  sk_daemon d;
  sk_fixture_start(&d, NULL);
  int cases = 0;
  for (size_t f = 0; f < nfiles; f++) {
    sk_jsonl in;
    sk_jsonl_open(&in, files[f]);
    json_t *rec;
    while ((rec = sk_jsonl_next(&in)) != NULL) {
      const char *name = json_string_value(json_object_get(rec, "name"));
      const json_t *c = json_object_get(rec, "case"), *sk = json_object_get(c, "skeleton");
      char id[32], url[96];
      snprintf(id, sizeof id, "c%d", cases++);
      const char *asset = json_string_value(json_object_get(sk, "gltf"));
      if (asset != NULL) {
        sk_fixture_put_asset(&d, id, asset + strlen("data/")); /* the cases name them under tests/ */
      } else {
        char *text = json_dumps(sk, JSON_COMPACT);
        sk_fixture_put_json(&d, id, text);
        free(text);
      }
      snprintf(url, sizeof url, "/v1/skeletons/%s/pose", id);
      const json_t *ops = json_object_get(c, "ops"), *wr = json_object_get(json_object_get(rec, "expected"), "results");
      size_t next = 0;
      for (size_t i = 0; i < json_array_size(ops); i++)
        sk_finalcases_http_op(&d, url, json_array_get(ops, i), wr, &next, name);
      ck_assert_uint_eq(next, json_array_size(wr));
      json_decref(rec);
    }
    sk_jsonl_close(&in);
  }
  sk_fixture_stop(&d);
  return cases;
}

/* A pose op `{"op": "pose", <members>}` on `skeleton` through skinner
 * eval is refused with `code` at `pointer`. */
static inline void sk_finalcases_refused(const char *skeleton, const char *members, int code, const char *pointer) {
  char base[1024], buf[4096];
  sk_test_path("", base, sizeof base);
  snprintf(buf, sizeof buf, "{\"skeleton\":%s,\"ops\":[{\"op\":\"pose\",%s}]}", skeleton, members);
  json_t *c = json_loads(buf, 0, NULL);
  ck_assert_ptr_nonnull(c);
  sk_strbuf out = {0};
  sk_error e;
  sk_error_clear(&e);
  int rc = sk_eval_case_at(c, base, &out, &e);
  ck_assert_msg(rc == code, "%s: %s, want %s", members, sk_errname(rc), sk_errname(code));
  ck_assert_str_eq(e.pointer, pointer);
  sk_strbuf_free(&out);
  json_decref(c);
}

#endif
