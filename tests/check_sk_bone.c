/* sk_bone: Babylon's Bone methods on hand-built skeletons.
 *
 *        a (1,2,3)            c (5,0,0)   <- second root
 *        |
 *        b (0,1,0), scaling (2,1,1)
 *
 * Bit-exactness against Babylon itself is tests/check_sk_ops (300 generated
 * cases); here: the lazy absolute matrices, the mesh, round trips and the
 * _scalingDeterminant, each with numbers worked out by hand. */
#include <math.h>
#include <string.h>

#include "sk_bone.h"
#include "sk_json.h"
#include "sk_mat.h"
#include "sk_testutil.h"

static sk_skeleton *make(const char *text) {
  json_t *j = json_loads(text, 0, NULL);
  ck_assert_ptr_nonnull(j);
  sk_skeleton *s;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_json_parse_skeleton(j, "/skeleton", 0, &s, &e), 0);
  json_decref(j);
  return s;
}

static const char *k_abc = "{\"bones\":[{\"name\":\"a\",\"position\":[1,2,3]},"
                           "{\"name\":\"b\",\"parent\":\"a\",\"position\":[0,1,0],\"scaling\":[2,1,1]},"
                           "{\"name\":\"c\",\"position\":[5,0,0]}]}";

START_TEST(only_the_first_roots_absolutes_are_refreshed_lazily) {
  sk_skeleton *s = make(k_abc);
  sk_bones b;
  ck_assert_int_eq(sk_bones_init(&b, s), 0);
  double p[3];
  sk_bone_get_position(&b, 1, SK_SPACE_WORLD, NULL, p);
  ck_assert(p[0] == 1 && p[1] == 3 && p[2] == 3);
  /* Babylon: Skeleton.computeAbsoluteMatrices walks bones[0] only, and a
   * new Matrix is all zeros: the second root reads (0,0,0). */
  int32_t c = sk_skeleton_find(s, "c");
  sk_bone_get_position(&b, c, SK_SPACE_WORLD, NULL, p);
  ck_assert(p[0] == 0 && p[1] == 0 && p[2] == 0);
  sk_bones_refresh_all(&b);
  sk_bone_get_position(&b, c, SK_SPACE_WORLD, NULL, p);
  ck_assert(p[0] == 5 && p[1] == 0 && p[2] == 0);
  sk_bones_close(&b);
  sk_skeleton_destroy(s);
}
END_TEST

/* A solver's window (sk_bones_solve_begin/_end) trusts the setters and
 * sk_bones_touch to say what changed instead of comparing every local:
 * each read inside it must equal a read on a twin skeleton outside one. */
START_TEST(reads_inside_a_solve_follow_setters_and_touches) {
  sk_skeleton *s = make(k_abc), *t = make(k_abc);
  sk_bones b, r;
  ck_assert_int_eq(sk_bones_init(&b, s), 0);
  ck_assert_int_eq(sk_bones_init(&r, t), 0);
  sk_bones_solve_begin(&b);
  const float before = sk_bones_absolute(&b, 1)[12];
  ck_assert_mem_eq(sk_bones_absolute(&b, 1), sk_bones_absolute(&r, 1), 16 * sizeof(float));
  const double q[4] = {0, 0, sin(0.3), cos(0.3)};
  sk_bone_set_rotation_quaternion(&b, 0, q, SK_SPACE_LOCAL, NULL);
  sk_bone_set_rotation_quaternion(&r, 0, q, SK_SPACE_LOCAL, NULL);
  ck_assert_float_ne(sk_bones_absolute(&b, 1)[12], before);
  ck_assert_mem_eq(sk_bones_absolute(&b, 1), sk_bones_absolute(&r, 1), 16 * sizeof(float));
  const double v[3] = {0.5, -2, 4};
  sk_bone_set_position(&b, 1, v, SK_SPACE_LOCAL, NULL);
  sk_bone_set_position(&r, 1, v, SK_SPACE_LOCAL, NULL);
  ck_assert_mem_eq(sk_bones_absolute(&b, 1), sk_bones_absolute(&r, 1), 16 * sizeof(float));
  /* a write from outside sk_bone, announced */
  s->bones[0].local.matrix[13] += 1;
  t->bones[0].local.matrix[13] += 1;
  sk_bones_touch(&b, 0);
  ck_assert_mem_eq(sk_bones_absolute(&b, 1), sk_bones_absolute(&r, 1), 16 * sizeof(float));
  sk_bones_return_to_rest(&b, 0);
  sk_bones_return_to_rest(&r, 0);
  ck_assert_mem_eq(sk_bones_absolute(&b, 1), sk_bones_absolute(&r, 1), 16 * sizeof(float));
  sk_bones_solve_end(&b);
  /* after the window, unannounced writes are found by comparison again */
  s->bones[0].local.matrix[12] += 1;
  t->bones[0].local.matrix[12] += 1;
  ck_assert_mem_eq(sk_bones_absolute(&b, 1), sk_bones_absolute(&r, 1), 16 * sizeof(float));
  sk_bones_close(&b);
  sk_bones_close(&r);
  sk_skeleton_destroy(s);
  sk_skeleton_destroy(t);
}
END_TEST

START_TEST(set_absolute_position_round_trips_through_a_scaled_mesh) {
  sk_skeleton *s = make(k_abc);
  sk_bones b;
  ck_assert_int_eq(sk_bones_init(&b, s), 0);
  sk_mesh_node n = {{1, 0, 0}, {0, 0, 0, 1}, {1, -2, 3}};
  sk_mesh mesh;
  ck_assert_int_eq(sk_mesh_compose(&n, 1, &mesh), 0);
  double want[3] = {0.5, -1, 2}, got[3];
  sk_bone_set_position(&b, 1, want, SK_SPACE_WORLD, &mesh);
  sk_bone_get_position(&b, 1, SK_SPACE_WORLD, &mesh, got);
  for (int i = 0; i < 3; i++)
    ck_assert_msg(fabs(got[i] - want[i]) < 1e-6, "axis %d: %.9g vs %.9g", i, got[i], want[i]);
  /* The local translation is the parent-relative one: world (0.5,-1,2) is
   * mesh-local (-0.5, 0.5, 2/3), minus a's (1,2,3). */
  sk_bone_get_position(&b, 1, SK_SPACE_LOCAL, NULL, got);
  ck_assert(fabs(got[0] + 1.5) < 1e-6 && fabs(got[1] + 1.5) < 1e-6 && fabs(got[2] - (2.0 / 3 - 3)) < 1e-6);
  sk_bones_close(&b);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(a_root_ignores_the_mesh_in_world_set_position) {
  /* Babylon's _updatePosition uses the identity for a bone without parent,
   * whatever tNode is given. */
  sk_skeleton *s = make(k_abc);
  sk_bones b;
  ck_assert_int_eq(sk_bones_init(&b, s), 0);
  sk_mesh_node n = {{10, 0, 0}, {0, 0, 0, 1}, {2, 2, 2}};
  sk_mesh mesh;
  ck_assert_int_eq(sk_mesh_compose(&n, 1, &mesh), 0);
  double p[3] = {4, 5, 6}, got[3];
  sk_bone_set_position(&b, 0, p, SK_SPACE_WORLD, &mesh);
  sk_bone_get_position(&b, 0, SK_SPACE_LOCAL, NULL, got);
  ck_assert(got[0] == 4 && got[1] == 5 && got[2] == 6);
  sk_bones_close(&b);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(world_rotation_about_y_moves_the_direction) {
  sk_skeleton *s = make(k_abc);
  sk_bones b;
  ck_assert_int_eq(sk_bones_init(&b, s), 0);
  double y[3] = {0, 1, 0}, x[3] = {1, 0, 0}, d[3];
  sk_bone_rotate(&b, 0, y, M_PI / 2, SK_SPACE_WORLD, NULL);
  sk_bone_get_direction(&b, 0, x, NULL, d);
  /* Matrix.RotationAxis(+Y, pi/2) with Babylon's row vectors: +X -> -Z. */
  ck_assert_msg(fabs(d[0]) < 1e-6 && fabs(d[1]) < 1e-6 && fabs(d[2] + 1) < 1e-6, "%g %g %g", d[0], d[1], d[2]);
  double pos[3];
  sk_bone_get_position(&b, 0, SK_SPACE_LOCAL, NULL, pos);
  ck_assert(pos[0] == 1 && pos[1] == 2 && pos[2] == 3);
  sk_bones_close(&b);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(singular_meshes_are_refused) {
  sk_mesh mesh;
  sk_mesh_node flat = {{0, 0, 0}, {0, 0, 0, 1}, {1, 0, 1}};
  ck_assert_int_eq(sk_mesh_compose(&flat, 1, &mesh), SK_ESINGULAR);
  sk_mesh_node huge[2] = {{{0, 0, 0}, {0, 0, 0, 1}, {1e30, 1, 1}}, {{0, 0, 0}, {0, 0, 0, 1}, {1e30, 1, 1}}};
  ck_assert_int_eq(sk_mesh_compose(huge, 2, &mesh), SK_ESINGULAR);
}
END_TEST

START_TEST(negative_bind_flips_the_world_rotation_read_back) {
  /* A bind with negative determinant makes _scalingDeterminant -1: the
   * world rotation read-back negates the first row before decomposing. */
  sk_skeleton *s = make("{\"bones\":[{\"name\":\"m\",\"scaling\":[-1,1,1],"
                        "\"bind\":[-1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}]}");
  sk_bones b;
  ck_assert_int_eq(sk_bones_init(&b, s), 0);
  ck_assert(sk_bones_scaling_det(&b, 0) == -1);
  double q[4];
  sk_bone_get_rotation_quaternion(&b, 0, SK_SPACE_WORLD, NULL, q);
  ck_assert(q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 1);
  sk_bones_close(&b);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(return_to_rest_after_set_current_pose_as_rest_keeps_the_trs_cache) {
  sk_skeleton *s = make(k_abc);
  sk_bones b;
  ck_assert_int_eq(sk_bones_init(&b, s), 0);
  double q[4] = {0.1, 0.2, 0.3, 0.9}, got[4];
  sk_bone_set_rotation_quaternion(&b, 1, q, SK_SPACE_LOCAL, NULL);
  sk_bone_set_current_pose_as_rest(&b, 1);
  sk_bones_return_to_rest(&b, 1);
  /* Babylon returns early (same updateFlag): the exact quaternion stays,
   * not one decomposed again from the float matrix. */
  sk_bone_get_rotation_quaternion(&b, 1, SK_SPACE_LOCAL, NULL, got);
  ck_assert(memcmp(q, got, sizeof q) == 0);
  sk_bones_close(&b);
  sk_skeleton_destroy(s);
}
END_TEST

/* sk_bones_reset is sk_bones_init again on the same skeleton: lazy
 * absolute matrices back to zero (the second root reads (0,0,0) until a
 * refresh), and no rest flagged as a copy of the local (returnToRest reads
 * the rest matrix again), compared with a fresh sk_bones on a twin. */
START_TEST(reset_is_a_fresh_init) {
  sk_skeleton *s = make(k_abc);
  sk_bones b, r;
  ck_assert_int_eq(sk_bones_init(&b, s), 0);
  const double q[4] = {0.1, 0.2, 0.3, 0.9};
  sk_bone_set_rotation_quaternion(&b, 1, q, SK_SPACE_LOCAL, NULL);
  sk_bone_set_current_pose_as_rest(&b, 1);
  sk_bones_refresh_all(&b);
  const int32_t c = sk_skeleton_find(s, "c");
  double p[3], got[4], want[4];
  sk_bones_reset(&b);
  sk_bone_get_position(&b, c, SK_SPACE_WORLD, NULL, p);
  ck_assert(p[0] == 0 && p[1] == 0 && p[2] == 0);
  sk_skeleton *t;
  ck_assert_int_eq(sk_skeleton_clone(s, &t), 0);
  ck_assert_int_eq(sk_bones_init(&r, t), 0);
  sk_bones_return_to_rest(&b, 1);
  sk_bones_return_to_rest(&r, 1);
  sk_bone_get_rotation_quaternion(&b, 1, SK_SPACE_LOCAL, NULL, got);
  sk_bone_get_rotation_quaternion(&r, 1, SK_SPACE_LOCAL, NULL, want);
  ck_assert(memcmp(got, want, sizeof got) == 0);
  ck_assert(memcmp(got, q, sizeof q) != 0); /* read again from the float rest matrix */
  sk_bones_close(&b);
  sk_bones_close(&r);
  sk_skeleton_destroy(s);
  sk_skeleton_destroy(t);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_bone");
  TCase *tc = tcase_create("golden");
  tcase_add_test(tc, only_the_first_roots_absolutes_are_refreshed_lazily);
  tcase_add_test(tc, reads_inside_a_solve_follow_setters_and_touches);
  tcase_add_test(tc, set_absolute_position_round_trips_through_a_scaled_mesh);
  tcase_add_test(tc, a_root_ignores_the_mesh_in_world_set_position);
  tcase_add_test(tc, world_rotation_about_y_moves_the_direction);
  tcase_add_test(tc, negative_bind_flips_the_world_rotation_read_back);
  tcase_add_test(tc, return_to_rest_after_set_current_pose_as_rest_keeps_the_trs_cache);
  tcase_add_test(tc, reset_is_a_fresh_init);
  suite_add_tcase(s, tc);
  tc = tcase_create("validity");
  tcase_add_test(tc, singular_meshes_are_refused);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
