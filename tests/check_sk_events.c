/* sk_events: the table's order (addEvent's stable sort, grouped), the
 * caps, and RuntimeAnimation.animate's firing rules worked by hand: the
 * inclusive comparisons, events before the range's start, loops re-arming
 * all but the onlyOnce ones, chunks equal to the whole run, and a too
 * small output asked again. (tests/oracle/conformance_events.sh checks
 * the same against Babylon 9.34.) */
#include <string.h>

#include "sk_error.h"
#include "sk_events.h"
#include "sk_testutil.h"

static void add(sk_events *t, const char *name, double frame, bool once, uint32_t group) {
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_events_add(t, name, frame, once, group, "/events/0", &err), 0);
}

START_TEST(the_table_keeps_group_then_frame_order_stably) {
  sk_events t = {0};
  add(&t, "b", 10, false, 0);
  add(&t, "a", 5, false, 0);
  add(&t, "c", 10, false, 0); /* after b: a stable sort */
  add(&t, "z", 0, false, 1);
  add(&t, "y", 1, false, 0);
  const char *want[] = {"y", "a", "b", "c", "z"};
  ck_assert_uint_eq(t.count, 5);
  for (size_t k = 0; k < 5; k++)
    ck_assert_str_eq(t.ev[k].name, want[k]);
  ck_assert_uint_eq(sk_events_memory(&t), 5 * sizeof(sk_event));
  sk_events_free(&t);
  ck_assert_uint_eq(t.count, 0);
}
END_TEST

START_TEST(names_frames_and_count_are_capped_with_the_field_named) {
  sk_events t = {0};
  sk_error err;
  char name[SK_EVENTS_NAME_MAX + 1];
  memset(name, 'x', sizeof name);
  name[SK_EVENTS_NAME_MAX] = '\0';
  sk_error_clear(&err);
  ck_assert_int_eq(sk_events_add(&t, name, 0, false, 0, "/events/3", &err), SK_ERANGE);
  ck_assert_str_eq(err.pointer, "/events/3/name");
  name[SK_EVENTS_NAME_MAX - 1] = '\0';
  add(&t, name, 0, false, 0); /* 63 bytes: the longest */
  sk_error_clear(&err);
  ck_assert_int_eq(sk_events_add(&t, "", 0, false, 0, "/events/3", &err), SK_ERANGE);
  sk_error_clear(&err);
  ck_assert_int_eq(sk_events_add(&t, "n", 1.0 / 0.0, false, 0, "/events/3", &err), SK_ENOTFINITE);
  ck_assert_str_eq(err.pointer, "/events/3/frame");
  for (int k = 1; k < SK_EVENTS_MAX; k++)
    add(&t, "n", k, false, 0);
  sk_error_clear(&err);
  ck_assert_int_eq(sk_events_add(&t, "n", 0, false, 0, "/events/300", &err), SK_ETOOBIG);
  ck_assert_str_eq(err.pointer, "/events/300");
  sk_events_free(&t);
}
END_TEST

/* The names fired at each step, "|" between steps. */
static void run(const sk_events *t, double from, const double *f, size_t n, size_t skip, char *out, size_t cap) {
  uint32_t idx[64];
  size_t off[64];
  size_t used = sk_events_run(t, from, f, n, skip, idx, 64, off);
  ck_assert_uint_le(used, 64);
  out[0] = '\0';
  for (size_t i = 0; i + skip < n; i++) {
    if (i > 0)
      strncat(out, "|", cap - strlen(out) - 1);
    for (size_t k = off[i]; k < off[i + 1]; k++)
      strncat(out, t->ev[idx[k]].name, cap - strlen(out) - 1);
  }
}

START_TEST(events_fire_when_the_frame_reaches_them_and_loops_rearm_them) {
  sk_events t = {0};
  add(&t, "s", 0, false, 0);  /* the start: fires at the first step */
  add(&t, "m", 10, false, 0); /* exactly reached: fires (>=) */
  add(&t, "o", 15, true, 0);  /* once only, even after the loop */
  add(&t, "e", 20, false, 0); /* the range's end */
  char got[256];
  const double loop[] = {0, 5, 10, 14.5, 19, 20, 3, 10, 16, 1};
  run(&t, 0, loop, 10, 0, got, sizeof got);
  ck_assert_str_eq(got, "s||m||o|e|s|m||s");
  /* an event before the range's start never fires */
  const double later[] = {5, 12, 6};
  run(&t, 5, later, 3, 0, got, sizeof got);
  ck_assert_str_eq(got, "|m|");
  sk_events_free(&t);
}
END_TEST

START_TEST(a_chunk_answers_as_the_whole_run_and_a_small_output_is_asked_again) {
  sk_events t = {0};
  add(&t, "a", 2, false, 0);
  add(&t, "b", 4, true, 0);
  add(&t, "c", 1, false, 1);
  double f[40];
  for (int i = 0; i < 40; i++)
    f[i] = (double)(i % 6);
  char whole[512], part[512];
  run(&t, 0, f, 40, 0, whole, sizeof whole);
  run(&t, 0, f, 40, 17, part, sizeof part);
  /* the whole run's steps 17.. are the chunk's */
  const char *w = whole;
  for (int i = 0; i < 17; i++)
    w = strchr(w, '|') + 1;
  ck_assert_str_eq(part, w);
  uint32_t idx[2];
  size_t off[41];
  size_t need = sk_events_run(&t, 0, f, 40, 0, idx, 2, off);
  ck_assert_uint_gt(need, 2);
  ck_assert_uint_le(need, sk_events_bound(&t, 40));
  sk_events_free(&t);
}
END_TEST

static Suite *events_suite(void) {
  Suite *s = suite_create("sk_events");
  TCase *t = tcase_create("golden");
  tcase_add_test(t, the_table_keeps_group_then_frame_order_stably);
  tcase_add_test(t, names_frames_and_count_are_capped_with_the_field_named);
  tcase_add_test(t, events_fire_when_the_frame_reaches_them_and_loops_rearm_them);
  tcase_add_test(t, a_chunk_answers_as_the_whole_run_and_a_small_output_is_asked_again);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(events_suite()); }
