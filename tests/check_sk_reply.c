/* sk_answer_cost: each bound is never under the bytes its writer writes
 * (on a real asset and on a clip name that escapes to six bytes a byte), and the
 * check names --max-answer-mb. Sending is tested end to end in
 * check_limits.c (the clip-detail flood and refusal). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sk_reply.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_testutil.h"

static void import_fox(sk_skeleton **s, sk_anim **a) {
  size_t len;
  unsigned char *d = sk_test_read_asset("Fox.glb", &len);
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_gltf_import(d, len, NULL, 1024, s, a, &err), 0);
  free(d);
  ck_assert_ptr_nonnull(*a);
  ck_assert_uint_gt((*a)->clip_count, 0);
}

START_TEST(the_clip_bound_covers_every_clip_of_fox) {
  sk_skeleton *s;
  sk_anim *a;
  import_fox(&s, &a);
  for (size_t c = 0; c < a->clip_count; c++) {
    sk_strbuf b = {0};
    ck_assert_int_eq(sk_anim_write_clip_json(a, s, c, &b), 0);
    size_t bound = sk_reply_cost_clip(a, s, c);
    ck_assert_uint_ge(bound, b.len);
    ck_assert_uint_lt(bound, 4 * b.len + 4096); /* a bound, not a guess at random */
    sk_strbuf_free(&b);
  }
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_anim_write_clips_json(a, &b), 0);
  ck_assert_uint_ge(sk_reply_cost_clips(a), b.len);
  sk_strbuf_free(&b);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(a_name_that_escapes_is_counted_at_six_bytes_a_byte) {
  sk_skeleton *s;
  sk_anim *a;
  import_fox(&s, &a);
  char *name = malloc(201);
  memset(name, 1, 200); /* \u0001 each */
  name[200] = 0;
  free(a->clips[0].name);
  a->clips[0].name = name;
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_anim_write_clip_json(a, s, 0, &b), 0);
  ck_assert_uint_ge(sk_reply_cost_clip(a, s, 0), b.len);
  sk_strbuf_free(&b);
  ck_assert_int_eq(sk_anim_write_clips_json(a, &b), 0);
  ck_assert_uint_ge(sk_reply_cost_clips(a), b.len);
  sk_strbuf_free(&b);
  ck_assert_uint_eq(sk_reply_cost_string(name), 1202);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(the_check_names_max_answer_mb) {
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_reply_cost_check(100, 100, &err), 0);
  ck_assert_int_eq(sk_reply_cost_check(100, 0, &err), 0);
  ck_assert_int_eq(sk_reply_cost_check(101, 100, &err), SK_ETOOBIG);
  ck_assert_str_eq(err.text, "the answer would take up to 101 bytes; the limit is 100 (--max-answer-mb)");
}
END_TEST

static Suite *answer_cost_suite(void) {
  Suite *s = suite_create("sk_answer_cost");
  TCase *t = tcase_create("golden");
  tcase_add_test(t, the_clip_bound_covers_every_clip_of_fox);
  tcase_add_test(t, a_name_that_escapes_is_counted_at_six_bytes_a_byte);
  suite_add_tcase(s, t);
  t = tcase_create("errors");
  tcase_add_test(t, the_check_names_max_answer_mb);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(answer_cost_suite()); }
