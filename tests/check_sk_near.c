/* sk_near: edit distances and which offers count as "did you mean". */
#include "sk_near.h"
#include "sk_testutil.h"

START_TEST(distances_count_edits_and_ignore_case) {
  ck_assert_uint_eq(sk_near_distance("", ""), 0);
  ck_assert_uint_eq(sk_near_distance("rotation", "rotation"), 0);
  ck_assert_uint_eq(sk_near_distance("Walk", "walk"), 0); /* case only: free */
  ck_assert_uint_eq(sk_near_distance("rotaton", "rotation"), 1);
  ck_assert_uint_eq(sk_near_distance("scalling", "scaling"), 1);
  ck_assert_uint_eq(sk_near_distance("kitten", "sitting"), 3);
  ck_assert_uint_eq(sk_near_distance("", "abc"), 3);
  char longname[SK_NEAR_MAX + 2];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = 0;
  ck_assert_uint_eq(sk_near_distance(longname, "a"), SIZE_MAX);
}
END_TEST

START_TEST(the_closest_close_offer_wins) {
  static const char *const keys[] = {"matrix", "position", "rotation", "rotationQuaternion", "scaling", NULL};
  ck_assert_str_eq(sk_near_list("rotaton", keys), "rotation");
  ck_assert_str_eq(sk_near_list("Position", keys), "position");
  ck_assert_str_eq(sk_near_list("scalng", keys), "scaling");
  ck_assert_ptr_null(sk_near_list("scale", keys)); /* 3 edits: more than a third of 7 */
  ck_assert_ptr_null(sk_near_list("frames", keys));       /* nothing near */
  ck_assert_ptr_null(sk_near_list("rotation", keys));     /* an exact name is no suggestion */
  ck_assert_ptr_null(sk_near_list("x", keys));
  static const char *const short_keys[] = {"to", "fps", NULL};
  ck_assert_str_eq(sk_near_list("tp", short_keys), "to"); /* at least 1 edit allowed */
  ck_assert_ptr_null(sk_near_list("ab", short_keys));
  static const char *const letters[] = {"a", "b", NULL};
  ck_assert_ptr_null(sk_near_list("c", letters)); /* one letter for another is no misspelling */
  ck_assert_str_eq(sk_near_list("A", letters), "a");
  sk_near n;
  sk_near_init(&n, "b_Head_5");
  sk_near_offer(&n, "b_Neck_04");
  sk_near_offer(&n, "b_Head_05");
  sk_near_offer(&n, "b_Head_06");
  ck_assert_str_eq(n.best, "b_Head_05"); /* the first of equally close offers */
  ck_assert_uint_eq(n.best_distance, 1);
  ck_assert_ptr_null(sk_near_list("anything", NULL));
}
END_TEST

static Suite *near_suite(void) {
  Suite *s = suite_create("sk_near");
  TCase *t = tcase_create("golden");
  tcase_add_test(t, distances_count_edits_and_ignore_case);
  tcase_add_test(t, the_closest_close_offer_wins);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(near_suite()); }
