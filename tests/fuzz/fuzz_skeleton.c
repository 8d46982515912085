/* Fuzz target: the skeleton JSON parser (a PUT /skeletons/{id} body, the
 * "skeleton" of an eval case, Babylon's Skeleton.serialize() output).
 *
 * sk_json_load + sk_json_parse_skeleton on the input; on success, the
 * invariants sk_skeleton_create promises (parent-first order, slots in
 * range and unique, every name found by the hash), then one evaluation,
 * a clone, and the result JSON, which must read back. */
#include <jansson.h>
#include <string.h>

#include "sk_eval.h"
#include "sk_json.h"
#include "sk_fuzz.h"

static void check_skeleton(const sk_skeleton *s) {
  SK_FUZZ_CHECK(s->count <= SK_SKELETON_MAX_BONES);
  unsigned char *slot_used = calloc(s->count ? s->count : 1, 1);
  SK_FUZZ_CHECK(slot_used != NULL);
  for (size_t i = 0; i < s->count; i++) {
    const sk_bone *b = &s->bones[i];
    SK_FUZZ_CHECK(b->parent >= -1 && b->parent < (int32_t)i);
    SK_FUZZ_CHECK(b->index >= -1 && b->index < (int32_t)s->count);
    if (b->index >= 0) {
      SK_FUZZ_CHECK(!slot_used[b->index]);
      slot_used[b->index] = 1;
    }
    SK_FUZZ_CHECK(b->name != NULL && b->name[0] != '\0');
    SK_FUZZ_CHECK(b->name >= s->names && b->name < s->names + s->names_size);
    SK_FUZZ_CHECK(sk_skeleton_find(s, b->name) == (int32_t)i);
  }
  free(slot_used);
}

/* Evaluates the bind pose with every output and checks the JSON reads back. */
static void check_evaluates(const sk_skeleton *s) {
  sk_pose_buffers buf;
  if (sk_pose_buffers_init(&buf, s->count) != 0)
    return;
  sk_pose pose = {.output = SK_OUT_FINAL | SK_OUT_ABSOLUTE | SK_OUT_LOCAL};
  sk_pose_evaluate(s, &pose, &buf);
  sk_strbuf out = {0};
  if (sk_json_write_order(s, &out) == 0 && sk_strbuf_append(&out, ",", 1) == 0 &&
      sk_pose_write_json(s, &pose, &buf, NULL, &out) == 0) {
    /* "[order],{result}" is not one document: wrap it. */
    sk_strbuf doc = {0};
    if (sk_strbuf_append(&doc, "[", 1) == 0 && sk_strbuf_append(&doc, out.data, out.len) == 0 &&
        sk_strbuf_append(&doc, "]", 1) == 0) {
      json_error_t je;
      json_t *back = json_loadb(doc.data, doc.len, JSON_DECODE_INT_AS_REAL, &je);
      if (back == NULL)
        fprintf(stderr, "result does not read back: %s at %d:%d\n", je.text, je.line, je.column);
      SK_FUZZ_CHECK(back != NULL);
      SK_FUZZ_CHECK(json_array_size(json_array_get(back, 0)) == s->count);
      json_decref(back);
    }
    sk_strbuf_free(&doc);
  }
  sk_strbuf_free(&out);
  sk_pose_buffers_close(&buf);
}

int sk_fuzz_skeleton(const uint8_t *data, size_t size) {
  if (size > SK_FUZZ_MAX_INPUT)
    return -1;
  json_t *j;
  sk_error err;
  sk_error_clear(&err);
  int rc = sk_json_load((const char *)data, size, &j, &err);
  if (rc) {
    sk_fuzz_check_error(rc, &err);
    SK_FUZZ_CHECK(rc == SK_ESYNTAX);
    return 0;
  }
  /* The daemon's body form ("" pointer) and the case form ("/skeleton");
   * a small bound so the bound check itself is exercised too. */
  sk_skeleton *s = NULL;
  rc = sk_json_parse_skeleton(j, "", 0, &s, &err);
  if (rc) {
    sk_fuzz_check_error(rc, &err);
    SK_FUZZ_CHECK(s == NULL);
  } else {
    SK_FUZZ_CHECK(s != NULL);
    check_skeleton(s);
    check_evaluates(s);
    sk_skeleton *c = NULL;
    if (sk_skeleton_clone(s, &c) == 0) {
      check_skeleton(c);
      SK_FUZZ_CHECK(c->count == s->count);
      sk_skeleton_destroy(c);
    }
    sk_skeleton_destroy(s);
  }
  sk_skeleton *small = NULL;
  sk_error_clear(&err);
  rc = sk_json_parse_skeleton(j, "/skeleton", 4, &small, &err);
  if (rc) {
    sk_fuzz_check_error(rc, &err);
    SK_FUZZ_CHECK(strncmp(err.pointer, "/skeleton", 9) == 0);
  } else {
    SK_FUZZ_CHECK(small != NULL && small->count <= 4);
    sk_skeleton_destroy(small);
  }
  json_decref(j);
  return 0;
}

#ifndef SK_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return sk_fuzz_skeleton(data, size) < 0 ? -1 : 0; }
#endif
