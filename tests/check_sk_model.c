/* sk_model: what publishing builds, and references that keep a model alive
 * for its readers after its publisher let go. */
#include <check.h>
#include <jansson.h>
#include <string.h>

#include "sk_error.h"
#include "sk_json.h"
#include "sk_model.h"
#include "sk_testasset.h"
#include "sk_testutil.h"

/* A chain of `n` bones, each one unit above its parent. */
static sk_skeleton *chain(int n) { return sk_test_chain(n); }

START_TEST(create_builds_what_requests_read) {
  sk_model *m = NULL;
  ck_assert_int_eq(sk_model_create(chain(3), NULL, NULL, NULL, -1, &m), 0);
  ck_assert_ptr_nonnull(m);
  ck_assert_uint_eq(m->bone_count, 3);
  ck_assert_ptr_nonnull(m->rig);
  ck_assert_ptr_nonnull(m->base_final);
  ck_assert_ptr_eq(m->base_final_text.values, m->base_final);
  ck_assert_ptr_null(m->anim);
  ck_assert(!m->has_mesh);
  ck_assert_ptr_null(m->mesh_json);
  ck_assert_ptr_null(m->skins_json);
  ck_assert_int_eq(m->skin, -1);
  /* b2's world is two units up: the stored pose was evaluated */
  ck_assert(m->base_world[16 * 2 + 13] == 2.0f);
  sk_model_unref(m);
  sk_model_unref(NULL);
}
END_TEST

/* The texts are copies: the caller's buffers may go at once. */
START_TEST(create_copies_the_mesh_and_skins_texts) {
  char mesh[] = "{\"position\":[0,0,1]}", skins[] = "[{\"name\":\"s\"}]";
  sk_model *m = NULL;
  ck_assert_int_eq(sk_model_create(chain(2), NULL, mesh, skins, 0, &m), 0);
  memset(mesh, 'x', sizeof mesh - 1);
  memset(skins, 'x', sizeof skins - 1);
  ck_assert_str_eq(m->mesh_json, "{\"position\":[0,0,1]}");
  ck_assert(m->has_mesh); /* parsed and composed once, here */
  ck_assert_str_eq(m->skins_json, "[{\"name\":\"s\"}]");
  ck_assert_int_eq(m->skin, 0);
  sk_model_unref(m);
}
END_TEST

/* A reader's reference outlives the publisher's: the model stays whole
 * until the last unref (run under ASan/valgrind, a use after free shows). */
START_TEST(a_reference_keeps_the_model_alive) {
  sk_model *m = NULL;
  ck_assert_int_eq(sk_model_create(chain(4), NULL, NULL, NULL, -1, &m), 0);
  const sk_model *reader = sk_model_ref(m);
  ck_assert_ptr_eq(reader, m);
  sk_model_unref(m); /* the publisher lets go */
  ck_assert_uint_eq(reader->bone_count, 4);
  ck_assert_uint_eq(reader->skel->count, 4);
  ck_assert(reader->base_world[16 * 3 + 13] == 3.0f);
  sk_model_unref((sk_model *)reader);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_model");
  TCase *tc = tcase_create("lifecycle");
  tcase_add_test(tc, create_builds_what_requests_read);
  tcase_add_test(tc, create_copies_the_mesh_and_skins_texts);
  tcase_add_test(tc, a_reference_keeps_the_model_alive);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
