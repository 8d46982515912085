/* sk_ctrl: Babylon's BoneIKController, one update() of a fresh controller.
 *
 *   root (0,3,0)
 *    └ upper (0,0.1,0)   <- bone1, turns in world space
 *       └ lower (0,1,0)  <- bone2 ("bone" of the op), bends about bendAxis
 *          └ foot (0,1,0)
 *
 * Babylon's controller aims a bone's +Y at its child (a chain built along
 * -Y is solved mirrored through bone1, as Babylon itself does).
 *
 * Bit-exactness against Babylon is tests/check_sk_ops (generated "ik" ops);
 * here: a reachable target is reached, an unreachable one gives a straight
 * chain pointing at it, the chains Babylon cannot solve are refused, and
 * a leaf of length 0 (Babylon's controller does nothing) is left alone. */
#include <math.h>

#include "sk_ctrl.h"
#include "sk_json.h"
#include "sk_testutil.h"

static sk_skeleton *leg(void) {
  json_t *j = json_loads("{\"bones\":[{\"name\":\"root\",\"position\":[0,3,0]},"
                         "{\"name\":\"upper\",\"parent\":\"root\",\"position\":[0,0.1,0]},"
                         "{\"name\":\"lower\",\"parent\":\"upper\",\"position\":[0,1,0],\"rotation\":[0.2,0,0]},"
                         "{\"name\":\"foot\",\"parent\":\"lower\",\"position\":[0,1,0]}]}",
                         0, NULL);
  sk_skeleton *s;
  ck_assert_int_eq(sk_json_parse_skeleton(j, "/skeleton", 0, &s, NULL), 0);
  json_decref(j);
  return s;
}

static double dist(const double a[3], const double b[3]) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

START_TEST(a_reachable_target_is_reached) {
  sk_skeleton *s = leg();
  sk_bones b;
  ck_assert_int_eq(sk_bones_init(&b, s), 0);
  sk_ik_options o = {.target = {0.5, 4.4, 0.6}, .pole_target_bone = -1, .pole_target_local_offset = {0, 0, 1}};
  const char *why;
  ck_assert_int_eq(sk_ctrl_ik_check(s, 2, &o, &why), 0);
  sk_ctrl_ik(&b, 2, NULL, &o);
  double foot[3];
  sk_bone_get_position(&b, 3, SK_SPACE_WORLD, NULL, foot);
  ck_assert_msg(dist(foot, o.target) < 1e-5, "foot at %g %g %g", foot[0], foot[1], foot[2]);
  sk_bones_close(&b);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(an_unreachable_target_straightens_the_chain_towards_it) {
  sk_skeleton *s = leg();
  sk_bones b;
  ck_assert_int_eq(sk_bones_init(&b, s), 0);
  sk_ik_options o = {.target = {0, 20, 0.5}, .pole_target_bone = -1, .pole_target_local_offset = {0, 0, 1}};
  sk_ctrl_ik(&b, 2, NULL, &o);
  double hip[3], foot[3];
  sk_bone_get_position(&b, 1, SK_SPACE_WORLD, NULL, hip);
  sk_bone_get_position(&b, 3, SK_SPACE_WORLD, NULL, foot);
  /* Both lengths are 1: the straight chain ends 2 from the hip. */
  ck_assert_msg(fabs(dist(hip, foot) - 2) < 1e-5, "chain length %g", dist(hip, foot));
  sk_bones_close(&b);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(chains_babylon_cannot_solve_are_refused) {
  sk_skeleton *s = leg();
  sk_ik_options o = {.pole_target_bone = -1};
  const char *why = NULL;
  ck_assert_int_eq(sk_ctrl_ik_check(s, 0, &o, &why), SK_ERANGE); /* no parent */
  ck_assert_ptr_nonnull(why);
  ck_assert_int_eq(sk_ctrl_ik_check(s, 1, &o, &why), SK_ERANGE); /* no grandparent, no pole */
  o.has_pole_target = true;
  ck_assert_int_eq(sk_ctrl_ik_check(s, 1, &o, &why), 0);
  sk_skeleton_destroy(s);
}
END_TEST

/* A leaf of length 0: Babylon's constructor sets _notEnoughInformation
 * and update() returns at once, so the op is taken (was refused with 422
 * until Babylon's answer was checked) and changes nothing, bit for bit. */
START_TEST(ik_on_a_leaf_of_length_0_is_taken_and_changes_nothing) {
  sk_skeleton *s = leg();
  sk_bones b;
  ck_assert_int_eq(sk_bones_init(&b, s), 0);
  sk_ik_options o = {.target = {0.5, 4.4, 0.6}, .has_pole_target = true, .pole_target = {0, 0, 3}};
  const char *why = NULL;
  ck_assert_int_eq(sk_ctrl_ik_check(s, 3, &o, &why), 0);
  o.has_pole_target = false;
  o.pole_target_bone = -1;
  ck_assert_int_eq(sk_ctrl_ik_check(s, 3, &o, &why), 0); /* the pole is never read */
  float before[4][16], abs_before[4][16];
  for (int k = 0; k < 4; k++) {
    memcpy(before[k], s->bones[k].local.matrix, sizeof before[k]);
    memcpy(abs_before[k], sk_bones_absolute(&b, k), sizeof abs_before[k]);
  }
  sk_ctrl_ik(&b, 3, NULL, &o);
  for (int k = 0; k < 4; k++) {
    ck_assert(memcmp(before[k], s->bones[k].local.matrix, sizeof before[k]) == 0);
    ck_assert(memcmp(abs_before[k], sk_bones_absolute(&b, k), sizeof abs_before[k]) == 0);
  }
  sk_bones_close(&b);
  sk_skeleton_destroy(s);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_ctrl");
  TCase *tc = tcase_create("golden");
  tcase_add_test(tc, a_reachable_target_is_reached);
  tcase_add_test(tc, an_unreachable_target_straightens_the_chain_towards_it);
  suite_add_tcase(s, tc);
  tc = tcase_create("validity");
  tcase_add_test(tc, chains_babylon_cannot_solve_are_refused);
  tcase_add_test(tc, ik_on_a_leaf_of_length_0_is_taken_and_changes_nothing);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
