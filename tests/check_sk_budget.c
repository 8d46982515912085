/* sk_budget: reservations, the limit, the high-water mark, the default. */
#include <pthread.h>

#include "sk_budget.h"
#include "sk_error.h"
#include "sk_testutil.h"

START_TEST(reserve_up_to_the_limit_then_refuse) {
  sk_budget b;
  sk_budget_init(&b, 1000);
  ck_assert_int_eq(sk_budget_reserve(&b, 600), 0);
  ck_assert_int_eq(sk_budget_reserve(&b, 400), 0); /* exactly the limit */
  ck_assert_int_eq(sk_budget_reserve(&b, 1), SK_EBUSY);
  sk_budget_release(&b, 500);
  ck_assert_int_eq(sk_budget_reserve(&b, 501), SK_EBUSY);
  ck_assert_int_eq(sk_budget_reserve(&b, 500), 0);
  sk_budget_stats st;
  sk_budget_get_stats(&b, &st);
  ck_assert_uint_eq(st.limit, 1000);
  ck_assert_uint_eq(st.used, 1000);
  ck_assert_uint_eq(st.high, 1000);
  ck_assert_uint_eq(st.refused, 2);
}
END_TEST

START_TEST(a_reservation_larger_than_the_limit_never_wraps) {
  sk_budget b;
  sk_budget_init(&b, 1000);
  ck_assert_int_eq(sk_budget_reserve(&b, SIZE_MAX), SK_EBUSY);
  ck_assert_int_eq(sk_budget_reserve(&b, 1001), SK_EBUSY);
  ck_assert_int_eq(sk_budget_reserve(&b, 10), 0);
  ck_assert_int_eq(sk_budget_reserve(&b, SIZE_MAX - 5), SK_EBUSY);
}
END_TEST

START_TEST(charge_goes_past_the_limit_and_counts) {
  sk_budget b;
  sk_budget_init(&b, 100);
  sk_budget_charge(&b, 150); /* the cache's own cap bounds it, not the budget */
  ck_assert_int_eq(sk_budget_reserve(&b, 1), SK_EBUSY);
  sk_budget_release(&b, 150);
  ck_assert_int_eq(sk_budget_reserve(&b, 100), 0);
  sk_budget_stats st;
  sk_budget_get_stats(&b, &st);
  ck_assert_uint_eq(st.high, 150);
  ck_assert_uint_eq(st.used, 100);
}
END_TEST

START_TEST(unlimited_and_null_budgets) {
  sk_budget b;
  sk_budget_init(&b, 0);
  ck_assert_int_eq(sk_budget_reserve(&b, SIZE_MAX / 2), 0);
  sk_budget_release(&b, SIZE_MAX / 2);
  ck_assert_int_eq(sk_budget_reserve(NULL, 123), 0);
  sk_budget_charge(NULL, 1);
  sk_budget_release(NULL, 1);
  sk_budget_stats st;
  sk_budget_get_stats(NULL, &st);
  ck_assert_uint_eq(st.limit, 0);
}
END_TEST

typedef struct {
  sk_budget *b;
  int got;
} racer;

static void *race(void *arg) {
  racer *r = arg;
  for (int i = 0; i < 100000; i++) {
    if (sk_budget_reserve(r->b, 7) == 0) {
      r->got++;
      sk_budget_release(r->b, 7);
    }
  }
  return NULL;
}

/* Four threads reserve and release near a small limit: `used` never passes
 * the limit (the high-water mark shows it) and ends at zero. */
START_TEST(concurrent_reservations_never_pass_the_limit) {
  sk_budget b;
  sk_budget_init(&b, 20); /* room for two 7-byte reservations, not three */
  pthread_t t[4];
  racer r[4];
  for (int i = 0; i < 4; i++) {
    r[i] = (racer){&b, 0};
    ck_assert_int_eq(pthread_create(&t[i], NULL, race, &r[i]), 0);
  }
  for (int i = 0; i < 4; i++)
    pthread_join(t[i], NULL);
  sk_budget_stats st;
  sk_budget_get_stats(&b, &st);
  ck_assert_uint_eq(st.used, 0);
  ck_assert_uint_le(st.high, 14);
  ck_assert_uint_ge(st.high, 7);
  ck_assert_int_gt(r[0].got + r[1].got + r[2].got + r[3].got, 0);
}
END_TEST

START_TEST(default_is_a_quarter_of_the_smaller_of_ram_and_cgroup) {
  const uint64_t G = 1ull << 30, M = 1ull << 20;
  ck_assert_uint_eq(sk_budget_default_for(8 * G, 0), 2 * G);
  ck_assert_uint_eq(sk_budget_default_for(8 * G, 2 * G), 512 * M);
  ck_assert_uint_eq(sk_budget_default_for(8 * G, 64 * G), 2 * G); /* a cgroup above RAM changes nothing */
  ck_assert_uint_eq(sk_budget_default_for(128 * M, 0), 64 * M);  /* floor */
  ck_assert_uint_eq(sk_budget_default_for(1024 * G, 0), 16 * G); /* cap */
  ck_assert_uint_eq(sk_budget_default_for(0, 0), 64 * M);
  size_t d = sk_budget_default();
  ck_assert_uint_ge(d, 64 * M);
  ck_assert_uint_le(d, 16 * G);
}
END_TEST

static Suite *budget_suite(void) {
  Suite *s = suite_create("sk_budget");
  TCase *t = tcase_create("golden");
  tcase_add_test(t, reserve_up_to_the_limit_then_refuse);
  tcase_add_test(t, a_reservation_larger_than_the_limit_never_wraps);
  tcase_add_test(t, charge_goes_past_the_limit_and_counts);
  tcase_add_test(t, unlimited_and_null_budgets);
  tcase_add_test(t, default_is_a_quarter_of_the_smaller_of_ram_and_cgroup);
  suite_add_tcase(s, t);
  TCase *c = tcase_create("concurrency");
  tcase_add_test(c, concurrent_reservations_never_pass_the_limit);
  suite_add_tcase(s, c);
  return s;
}

int main(void) { return sk_test_run(budget_suite()); }
