/* sk_list: the intrusive list's links, order and element recovery. */
#include <check.h>
#include <stddef.h>

#include "sk_list.h"
#include "sk_testutil.h"

typedef struct item {
  int value;
  sk_list node;
} item;

/* The values of `head`'s elements, first to last, as digits. */
static int values(const sk_list *head) {
  int v = 0;
  const sk_list *q;
  sk_list_foreach(q, head)
    v = v * 10 + sk_list_data(q, const item, node)->value;
  return v;
}

static int values_reverse(const sk_list *head) {
  int v = 0;
  const sk_list *q;
  sk_list_foreach_reverse(q, head)
    v = v * 10 + sk_list_data(q, const item, node)->value;
  return v;
}

START_TEST(an_initialised_list_is_empty) {
  sk_list head;
  sk_list_init(&head);
  ck_assert(sk_list_empty(&head));
  ck_assert_ptr_eq(sk_list_head(&head), &head);
  ck_assert_ptr_eq(sk_list_tail(&head), &head);
  ck_assert_int_eq(values(&head), 0);
}
END_TEST

START_TEST(insert_head_and_tail_keep_their_order) {
  sk_list head;
  item a = {1, {0}}, b = {2, {0}}, c = {3, {0}};
  sk_list_init(&head);
  sk_list_insert_tail(&head, &b.node);
  sk_list_insert_head(&head, &a.node);
  sk_list_insert_tail(&head, &c.node);
  ck_assert(!sk_list_empty(&head));
  ck_assert_int_eq(values(&head), 123);
  ck_assert_int_eq(values_reverse(&head), 321);
  ck_assert_ptr_eq(sk_list_data(sk_list_head(&head), item, node), &a);
  ck_assert_ptr_eq(sk_list_data(sk_list_tail(&head), item, node), &c);
}
END_TEST

/* Removing the first, a middle and the last node; a removed node is
 * unlinked and removing it again changes nothing. */
START_TEST(remove_unlinks_from_any_position) {
  sk_list head;
  item it[4] = {{1, {0}}, {2, {0}}, {3, {0}}, {4, {0}}};
  sk_list_init(&head);
  for (int i = 0; i < 4; i++) {
    sk_list_init(&it[i].node);
    ck_assert(!sk_list_linked(&it[i].node));
    sk_list_insert_tail(&head, &it[i].node);
    ck_assert(sk_list_linked(&it[i].node));
  }
  sk_list_remove(&it[1].node);
  ck_assert_int_eq(values(&head), 134);
  ck_assert(!sk_list_linked(&it[1].node));
  sk_list_remove(&it[1].node);
  ck_assert_int_eq(values(&head), 134);
  sk_list_remove(&it[0].node);
  ck_assert_int_eq(values(&head), 34);
  sk_list_remove(&it[3].node);
  ck_assert_int_eq(values(&head), 3);
  ck_assert_int_eq(values_reverse(&head), 3);
  sk_list_remove(&it[2].node);
  ck_assert(sk_list_empty(&head));
}
END_TEST

/* The LRU move: a node taken out and put first again. */
START_TEST(a_removed_node_can_be_inserted_again) {
  sk_list head;
  item a = {1, {0}}, b = {2, {0}}, c = {3, {0}};
  sk_list_init(&head);
  sk_list_insert_head(&head, &a.node);
  sk_list_insert_head(&head, &b.node);
  sk_list_insert_head(&head, &c.node);
  ck_assert_int_eq(values(&head), 321);
  sk_list_remove(&a.node);
  sk_list_insert_head(&head, &a.node);
  ck_assert_int_eq(values(&head), 132);
  ck_assert_int_eq(values_reverse(&head), 231);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_list");
  TCase *tc = tcase_create("lifecycle");
  tcase_add_test(tc, an_initialised_list_is_empty);
  tcase_add_test(tc, insert_head_and_tail_keep_their_order);
  tcase_add_test(tc, remove_unlinks_from_any_position);
  tcase_add_test(tc, a_removed_node_can_be_inserted_again);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
