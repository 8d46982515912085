/* Fuzz target: the case runner of `skinner eval` (sk_eval_case): a
 * skeleton, then "set", "pose", "evaluate", "setBind", "setRest" and
 * "returnToRest" ops in order.
 *
 * Bounded so one input cannot run for seconds: inputs over 64 KiB are
 * skipped, and so are cases whose bones x ops product exceeds a budget
 * (each op costs one pass over the bones and a result of 16 floats per
 * bone). Cases naming a glTF file are skipped: that would read arbitrary
 * paths, and the glTF reader has its own target.
 *
 * On success the result must be one JSON document with one "order" entry
 * per bone and one result per "pose"/"evaluate" op, and the case in binary
 * (--format f32) its final matrices as float32, or a refusal when a result
 * holds more than those. */
#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "sk_eval.h"
#include "sk_frames.h"
#include "sk_json.h"
#include "sk_fuzz.h"

#define EVAL_MAX_INPUT (64u * 1024u)
#define EVAL_MAX_WORK (1u << 15) /* bones x (ops + 1) */

/* Results the ops must give: one per "evaluate", "query" and "pose" op,
 * except that a pose with a frame range ("times", or "from"/"to"/"fps" on a
 * skeleton with clips) gives one per frame: *exact is false when one may. */
static size_t count_result_ops(const json_t *ops, bool *exact) {
  size_t n = 0;
  *exact = true;
  for (size_t i = 0; i < json_array_size(ops); i++) {
    const json_t *o = json_array_get(ops, i);
    const char *op = json_string_value(json_object_get(o, "op"));
    if (op == NULL)
      continue;
    bool pose = strcmp(op, "pose") == 0;
    n += pose || strcmp(op, "evaluate") == 0 || strcmp(op, "query") == 0;
    if (pose && (json_object_get(o, "times") != NULL || json_object_get(o, "from") != NULL ||
                 json_object_get(o, "to") != NULL || json_object_get(o, "layers") != NULL ||
                 json_object_get(o, "frames") != NULL))
      *exact = false;
  }
  return n;
}

/* A JSON result that binary output carries whole: its final matrices and
 * fired events, nothing else (a pose with ops but no query has "queries": []). */
static bool final_only(const json_t *r) {
  const char *key;
  const json_t *v;
  bool final = false;
  json_object_foreach((json_t *)r, key, v) {
    if (strcmp(key, "final") == 0)
      final = true;
    else if (strcmp(key, "events") == 0 && json_is_array(v))
      continue; /* "events": true answers them after the matrices */
    else if (strcmp(key, "queries") != 0 || json_array_size(v) != 0)
      return false;
  }
  return final;
}

static int take(void *arg, const char *data, size_t len) { return sk_strbuf_append(arg, data, len); }

/* The same case in binary (flushed in pieces): the JSON answer's final
 * matrices as float32, one result after another, when every result is
 * final_only; else refused (SK_ERANGE at the field). */
static void binary_matches_json(const json_t *c, const json_t *res) {
  const json_t *results = json_object_get(res, "results");
  bool plain = true;
  for (size_t i = 0; i < json_array_size(results); i++)
    plain = plain && final_only(json_array_get(results, i));
  sk_strbuf bin = {0}, rest = {0};
  sk_error err;
  sk_error_clear(&err);
  const sk_eval_opts o = {.fmt = SK_FMT_F32, .flush = take, .flush_arg = &bin};
  int rc = sk_eval_case_opts(c, &o, &rest, &err);
  if (!plain) {
    SK_FUZZ_CHECK(rc == SK_ERANGE);
    sk_fuzz_check_error(rc, &err);
  } else {
    SK_FUZZ_CHECK(rc == 0 && rest.len == 0);
    size_t at = 0;
    for (size_t i = 0; i < json_array_size(results); i++) {
      const json_t *f = json_object_get(json_array_get(results, i), "final");
      for (size_t k = 0; k < json_array_size(f); k++, at += sizeof(float)) {
        const float want = (float)json_number_value(json_array_get(f, k));
        SK_FUZZ_CHECK(at + sizeof want <= bin.len && memcmp(bin.data + at, &want, sizeof want) == 0);
      }
      /* Fired events: a u32 count, then that many u32 indices. */
      const json_t *ev = json_object_get(json_array_get(results, i), "events");
      if (ev != NULL) {
        uint32_t n;
        SK_FUZZ_CHECK(at + sizeof n <= bin.len);
        memcpy(&n, bin.data + at, sizeof n);
        SK_FUZZ_CHECK(n == json_array_size(ev));
        at += sizeof n + (size_t)n * sizeof n;
        SK_FUZZ_CHECK(at <= bin.len);
      }
    }
    SK_FUZZ_CHECK(at == bin.len);
  }
  sk_strbuf_free(&bin);
  sk_strbuf_free(&rest);
}

int sk_fuzz_eval(const uint8_t *data, size_t size) {
  if (size > EVAL_MAX_INPUT)
    return -1;
  json_t *c;
  sk_error err;
  sk_error_clear(&err);
  int rc = sk_json_load((const char *)data, size, &c, &err);
  if (rc) {
    sk_fuzz_check_error(rc, &err);
    return 0;
  }
  const json_t *skel = json_object_get(c, "skeleton");
  const json_t *ops = json_object_get(c, "ops");
  double work = (double)(json_array_size(json_object_get(skel, "bones")) + 1) * (double)(json_array_size(ops) + 1);
  if (json_object_get(skel, "gltf") != NULL || work > EVAL_MAX_WORK) {
    json_decref(c);
    return -1;
  }
  sk_strbuf out = {0};
  rc = sk_eval_case(c, &out, &err);
  if (rc) {
    sk_fuzz_check_error(rc, &err);
  } else {
    json_error_t je;
    json_t *res = json_loadb(out.data, out.len, JSON_DECODE_INT_AS_REAL, &je);
    if (res == NULL)
      fprintf(stderr, "result does not read back: %s at %d:%d\n", je.text, je.line, je.column);
    SK_FUZZ_CHECK(res != NULL);
    SK_FUZZ_CHECK(json_array_size(json_object_get(res, "order")) == json_array_size(json_object_get(skel, "bones")));
    bool exact;
    size_t want = count_result_ops(ops, &exact), got = json_array_size(json_object_get(res, "results"));
    SK_FUZZ_CHECK(exact ? got == want : got >= want);
    binary_matches_json(c, res);
    json_decref(res);
  }
  sk_strbuf_free(&out);
  json_decref(c);
  return 0;
}

#ifndef SK_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return sk_fuzz_eval(data, size) < 0 ? -1 : 0; }
#endif
