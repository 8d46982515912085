#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "sk_mat.h"
#include "sk_skeleton.h"
#include "sk_testutil.h"

#define DEG (3.14159265358979323846 / 180.0)

static void trs(float m[16], double rz_deg, double tx, double ty) {
  double q[4];
  const double one[3] = {1, 1, 1}, t[3] = {tx, ty, 0};
  sk_quat_from_yaw_pitch_roll(0, 0, rz_deg * DEG, q);
  sk_mat_compose(one, q, t, m);
}

/* The "Bone class internals" page's character:
 *
 *        body (origin)
 *        /          \
 *   armLeft        armRight
 *   at (1,2,0)     at (-1,2,0)
 *   bind +30 deg Z bind -30 deg Z
 */
static sk_skeleton *page_character(void) {
  static float body[16], left[16], right[16];
  sk_mat_identity(body);
  trs(left, 30, 1, 2);
  trs(right, -30, -1, 2);
  sk_bone_desc d[3] = {
      {.name = "body"},
      {.name = "armLeft", .parent = "body"},
      {.name = "armRight", .parent = "body"},
  };
  memcpy(d[0].local, body, sizeof body);
  memcpy(d[1].local, left, sizeof left);
  memcpy(d[2].local, right, sizeof right);
  sk_skeleton *s;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_skeleton_create(d, 3, "/bones", &s, &e), 0);
  return s;
}

START_TEST(page_example_bind_pose_gives_identity) {
  sk_skeleton *s = page_character();
  float out[16 * 4], id[16];
  sk_mat_identity(id);
  sk_skeleton_compute_transforms(s, NULL, out);
  for (int i = 0; i < 4; i++)
    SK_ASSERT_MAT_CLOSE(out + 16 * i, id, 1e-6);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(page_example_left_arm_at_75_is_45_about_shoulder) {
  sk_skeleton *s = page_character();
  sk_override o = {.bone = sk_skeleton_find(s, "armLeft"), .mask = SK_OVERRIDE_ROTATION};
  sk_quat_from_yaw_pitch_roll(0, 0, 75 * DEG, o.rotation);
  sk_skeleton_apply(s, &o, 1);
  float out[16 * 4];
  sk_skeleton_compute_transforms(s, NULL, out);
  /* Rotation of 45 degrees about Z around the shoulder (1,2,0):
   * p' = (p - c) R + c, so the translation is c - c R. */
  const double c = cos(45 * DEG), sn = sin(45 * DEG);
  float want[16] = {(float)c, (float)sn, 0, 0, (float)-sn, (float)c, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  want[12] = (float)(1 - (1 * c + 2 * -sn));
  want[13] = (float)(2 - (1 * sn + 2 * c));
  SK_ASSERT_MAT_CLOSE(out + 16 * 1, want, 1e-5);
  float id[16];
  sk_mat_identity(id);
  SK_ASSERT_MAT_CLOSE(out + 16 * 0, id, 1e-6);
  SK_ASSERT_MAT_CLOSE(out + 16 * 2, id, 1e-6);
  SK_ASSERT_MAT_CLOSE(out + 16 * 3, id, 0);
  /* The stateless path gives the same numbers bit for bit. */
  float fin[16 * 4], scratch[16 * 3];
  sk_skeleton_evaluate(s, NULL, NULL, scratch, fin, NULL, NULL);
  ck_assert_mem_eq(fin, out, sizeof out);
  sk_skeleton_destroy(s);
}
END_TEST

static sk_bone_desc bone(const char *name, const char *parent) {
  sk_bone_desc d = {.name = name, .parent = parent};
  sk_mat_identity(d.local);
  return d;
}

static void expect_error(sk_bone_desc *d, size_t n, int code, const char *pointer) {
  sk_skeleton *s = (void *)1;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_skeleton_create(d, n, "/skeleton/bones", &s, &e), code);
  ck_assert_ptr_null(s);
  ck_assert_str_eq(e.pointer, pointer);
  ck_assert_int_eq(e.code, code);
}

START_TEST(rejects_duplicate_names) {
  sk_bone_desc d[] = {bone("a", NULL), bone("b", "a"), bone("a", "b")};
  expect_error(d, 3, SK_EDUPLICATE, "/skeleton/bones/2/name");
}
END_TEST

START_TEST(rejects_unknown_parent) {
  sk_bone_desc d[] = {bone("a", NULL), bone("b", "nope")};
  expect_error(d, 2, SK_EUNKNOWN, "/skeleton/bones/1/parent");
}
END_TEST

START_TEST(rejects_cycles) {
  sk_bone_desc d[] = {bone("root", NULL), bone("a", "c"), bone("b", "a"), bone("c", "b")};
  expect_error(d, 4, SK_ECYCLE, "/skeleton/bones/2/parent");
  sk_bone_desc self[] = {bone("x", "x")};
  expect_error(self, 1, SK_ECYCLE, "/skeleton/bones/0/parent");
}
END_TEST

START_TEST(rejects_bad_indices) {
  sk_bone_desc d[] = {bone("a", NULL), bone("b", "a")};
  d[1].has_index = true;
  d[1].index = 2;
  expect_error(d, 2, SK_ERANGE, "/skeleton/bones/1/index");
  d[1].index = 0;
  expect_error(d, 2, SK_EDUPLICATE, "/skeleton/bones/1/index");
  d[1].index = -2;
  expect_error(d, 2, SK_ERANGE, "/skeleton/bones/1/index");
}
END_TEST

START_TEST(rejects_non_finite_and_singular) {
  sk_bone_desc d[] = {bone("a", NULL), bone("b", "a")};
  d[1].local[13] = NAN;
  d[1].local_from_matrix = true;
  expect_error(d, 2, SK_ENOTFINITE, "/skeleton/bones/1/matrix");
  sk_mat_identity(d[1].local);
  float bind[16] = {0};
  d[0].bind = bind;
  expect_error(d, 2, SK_ESINGULAR, "/skeleton/bones/0/bind");
  float inf[16];
  sk_mat_identity(inf);
  inf[0] = INFINITY;
  d[0].bind = NULL;
  d[1].rest = inf;
  expect_error(d, 2, SK_ENOTFINITE, "/skeleton/bones/1/rest");
}
END_TEST

START_TEST(sorts_parent_first_keeping_slots) {
  /* Input child-first: c -> b -> a (root). Babylon's sortBones order puts
   * ancestors first; slots stay the input positions. */
  sk_bone_desc d[] = {bone("c", "b"), bone("b", "a"), bone("a", NULL), bone("d", "a")};
  sk_skeleton *s;
  ck_assert_int_eq(sk_skeleton_create(d, 4, "", &s, NULL), 0);
  const char *want[] = {"a", "b", "c", "d"};
  const int slots[] = {2, 1, 0, 3};
  for (int i = 0; i < 4; i++) {
    ck_assert_str_eq(s->bones[i].name, want[i]);
    ck_assert_int_eq(s->bones[i].index, slots[i]);
    ck_assert_int_lt(s->bones[i].parent, i);
  }
  ck_assert_int_eq(sk_skeleton_find(s, "d"), 3);
  ck_assert_int_eq(sk_skeleton_find(s, "zz"), -1);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(long_chain_sorts_without_recursion) {
  /* 100 000 bones listed leaf first: a recursive sort would need 100 000 frames. */
  enum { N = 100000 };
  sk_bone_desc *d = calloc(N, sizeof *d);
  char(*names)[16] = malloc(N * sizeof *names);
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "b%d", i);
    d[i].name = names[i];
    sk_mat_identity(d[i].local);
    d[i].local[12] = 0.001f;
  }
  for (int i = 0; i < N - 1; i++)
    d[i].parent = names[i + 1];
  sk_skeleton *s;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_skeleton_create(d, N, "", &s, &e), 0);
  ck_assert_str_eq(s->bones[0].name, "b99999");
  ck_assert_int_eq(s->bones[N - 1].parent, N - 2);
  float *out = malloc(sizeof(float) * 16 * (N + 1));
  sk_skeleton_compute_transforms(s, NULL, out);
  float id[16];
  sk_mat_identity(id);
  SK_ASSERT_MAT_CLOSE(out, id, 1e-4);
  /* A cycle closing the chain is found without recursion too. */
  d[N - 1].parent = names[0];
  sk_skeleton *bad = NULL;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_skeleton_create(d, N, "", &bad, &e), SK_ECYCLE);
  free(out);
  sk_skeleton_destroy(s);
  free(names);
  free(d);
}
END_TEST

START_TEST(partial_set_keeps_cached_components) {
  sk_bone_desc d[] = {bone("a", NULL)};
  const double sc[3] = {2, 3, 4}, q[4] = {0, 0.6, 0, 0.8}, t[3] = {5, 6, 7};
  sk_mat_compose(sc, q, t, d[0].local);
  sk_skeleton *s;
  ck_assert_int_eq(sk_skeleton_create(d, 1, "", &s, NULL), 0);
  sk_override o = {.bone = 0, .mask = SK_OVERRIDE_POSITION, .position = {1, 1, 1}};
  sk_skeleton_apply(s, &o, 1);
  const sk_local *l = &s->bones[0].local;
  ck_assert(!l->need_decompose);
  ck_assert_double_eq_tol(l->scaling[1], 3, 1e-6);
  ck_assert_double_eq_tol(l->rotation[1], 0.6, 1e-6);
  ck_assert_float_eq(l->matrix[12], 1.0f);
  /* Replacing the matrix marks the cache stale; setBind replaces the local. */
  float m[16];
  sk_mat_identity(m);
  m[13] = 9;
  ck_assert_int_eq(sk_skeleton_set_bind(s, 0, m, false), 0);
  ck_assert(s->bones[0].local.need_decompose);
  ck_assert_float_eq(s->bones[0].local.matrix[13], 9.0f);
  ck_assert_float_eq(s->bones[0].abs_inv_bind[13], -9.0f);
  m[13] = 4;
  ck_assert_int_eq(sk_skeleton_set_bind(s, 0, m, true), 0);
  ck_assert_float_eq(s->bones[0].local.matrix[13], 9.0f);
  ck_assert_float_eq(s->bones[0].abs_inv_bind[13], -4.0f);
  float z[16] = {0};
  ck_assert_int_eq(sk_skeleton_set_bind(s, 0, z, true), SK_ESINGULAR);
  ck_assert_float_eq(s->bones[0].abs_inv_bind[13], -4.0f);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(return_to_rest_skips_unslotted_bones) {
  sk_bone_desc d[] = {bone("a", NULL), bone("b", "a")};
  d[1].has_index = true;
  d[1].index = -1;
  sk_skeleton *s;
  ck_assert_int_eq(sk_skeleton_create(d, 2, "", &s, NULL), 0);
  sk_override o[2] = {{.bone = 0, .mask = SK_OVERRIDE_POSITION, .position = {1, 0, 0}},
                      {.bone = 1, .mask = SK_OVERRIDE_POSITION, .position = {2, 0, 0}}};
  sk_skeleton_apply(s, o, 2);
  sk_skeleton_return_to_rest(s);
  ck_assert_float_eq(s->bones[0].local.matrix[12], 0.0f);
  ck_assert_float_eq(s->bones[1].local.matrix[12], 2.0f);
  sk_skeleton_bone_return_to_rest(s, 1);
  ck_assert_float_eq(s->bones[1].local.matrix[12], 0.0f);
  /* Slot 1 is written by no bone: zeros, then the identity at slot 2. */
  float out[16 * 3];
  sk_skeleton_compute_transforms(s, NULL, out);
  for (int i = 16; i < 32; i++)
    ck_assert_float_eq(out[i], 0.0f);
  ck_assert_float_eq(out[32], 1.0f);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(clone_is_deep_and_equal) {
  sk_skeleton *s = page_character(), *c;
  ck_assert_int_eq(sk_skeleton_clone(s, &c), 0);
  ck_assert_int_eq(sk_skeleton_find(c, "armRight"), 2);
  sk_override o = {.bone = 1, .mask = SK_OVERRIDE_POSITION, .position = {3, 3, 3}};
  sk_skeleton_apply(c, &o, 1);
  ck_assert_float_eq(s->bones[1].local.matrix[12], 1.0f);
  sk_skeleton_destroy(c);
  sk_skeleton_destroy(s);
  sk_skeleton_destroy(NULL);
}
END_TEST

/* clone_into: from NULL a clone; over a copy of the same sizes the same
 * storage, every byte a clone's (names rebased into its own block); over
 * one of other sizes a new clone. */
START_TEST(clone_into_reuses_a_copy_of_the_same_sizes) {
  sk_skeleton *s = page_character(), *c = NULL, *fresh;
  ck_assert_int_eq(sk_skeleton_clone_into(s, &c), 0);
  ck_assert_int_eq(sk_skeleton_clone(s, &fresh), 0);
  sk_override o = {.bone = 1, .mask = SK_OVERRIDE_POSITION, .position = {3, 3, 3}};
  sk_skeleton_apply(c, &o, 1);
  const sk_bone *bones = c->bones;
  ck_assert_int_eq(sk_skeleton_clone_into(s, &c), 0);
  ck_assert_ptr_eq(c->bones, bones);
  for (size_t k = 0; k < s->count; k++) {
    ck_assert_ptr_eq(c->bones[k].name, c->names + (fresh->bones[k].name - fresh->names));
    ck_assert_int_eq(memcmp(&c->bones[k].parent, &fresh->bones[k].parent,
                            sizeof(sk_bone) - offsetof(sk_bone, parent)), 0);
  }
  ck_assert_int_eq(memcmp(c->names, fresh->names, s->names_size), 0);
  ck_assert_int_eq(sk_skeleton_find(c, "armRight"), 2);
  sk_skeleton *other = NULL;
  ck_assert_int_eq(sk_skeleton_clone_into(c, &other), 0);
  ck_assert_int_eq(sk_skeleton_clone_into(fresh, &other), 0); /* same sizes */
  sk_skeleton_destroy(fresh);
  sk_bone_desc one = {.name = "only"};
  sk_mat_identity(one.local);
  sk_skeleton *small;
  ck_assert_int_eq(sk_skeleton_create(&one, 1, "/bones", &small, NULL), 0);
  ck_assert_int_eq(sk_skeleton_clone_into(small, &c), 0);
  ck_assert_uint_eq(c->count, 1);
  ck_assert_int_eq(sk_skeleton_find(c, "only"), 0);
  sk_skeleton_destroy(small);
  sk_skeleton_destroy(other);
  sk_skeleton_destroy(c);
  sk_skeleton_destroy(s);
}
END_TEST


/* ---- incremental evaluation ----------------------------------------------------- */

static uint64_t inc_rng = 1;
static double inc_unit(void) {
  inc_rng ^= inc_rng << 13, inc_rng ^= inc_rng >> 7, inc_rng ^= inc_rng << 17;
  return (double)(inc_rng >> 11) / 9007199254740992.0;
}

static void inc_trs(float m[16], double spread) {
  double sc[3], q[4], t[3], n = 0;
  for (int k = 0; k < 4; k++) {
    q[k] = inc_unit() * 2 - 1;
    n += q[k] * q[k];
  }
  for (int k = 0; k < 4; k++)
    q[k] /= sqrt(n);
  for (int k = 0; k < 3; k++) {
    sc[k] = 0.5 + inc_unit() * (k == 1 && inc_unit() < 0.2 ? -1.5 : 1); /* some negative scales */
    t[k] = (inc_unit() * 2 - 1) * spread;
  }
  sk_mat_compose(sc, q, t, m);
}

/* sk_skeleton_evaluate_changed against sk_skeleton_evaluate of the whole
 * pose, bit for bit: random trees (roots, chains, slots permuted, -1
 * slots, binds apart from the locals), overrides of every kind on random
 * bones (none, one, several, a bone twice, all). */
START_TEST(changed_subtrees_equal_the_full_evaluation) {
  for (int it = 0; it < 300; it++) {
    const size_t n = 1 + (size_t)(inc_unit() * 60);
    sk_bone_desc *d = calloc(n, sizeof *d);
    char(*names)[24] = calloc(n, sizeof *names);
    float(*binds)[16] = calloc(n, sizeof *binds);
    int64_t *slot = calloc(n, sizeof *slot);
    for (size_t i = 0; i < n; i++)
      slot[i] = (int64_t)i;
    for (size_t i = n; i > 1; i--) { /* permute the slots */
      const size_t j = (size_t)(inc_unit() * (double)i);
      const int64_t t = slot[i - 1];
      slot[i - 1] = slot[j];
      slot[j] = t;
    }
    for (size_t i = 0; i < n; i++) {
      snprintf(names[i], sizeof names[i], "b%zu", i);
      d[i].name = names[i];
      if (i > 0 && inc_unit() < 0.9)
        d[i].parent = names[(size_t)(inc_unit() * (double)i)];
      inc_trs(d[i].local, 2);
      inc_trs(binds[i], 2);
      d[i].bind = inc_unit() < 0.5 ? binds[i] : NULL;
      d[i].has_index = true;
      d[i].index = inc_unit() < 0.15 ? -1 : slot[i];
    }
    sk_skeleton *s = NULL;
    sk_error e = {0};
    ck_assert_int_eq(sk_skeleton_create(d, n, "/bones", &s, &e), 0);
    sk_skeleton_prepare(s);
    float *world = malloc(16 * n * sizeof *world), *base_final = malloc(16 * (n + 1) * sizeof *base_final);
    float *locals = malloc(16 * n * sizeof *locals), *scratch = malloc(16 * n * sizeof *scratch);
    float *want = malloc(16 * (n + 1) * sizeof *want), *got = malloc(16 * (n + 1) * sizeof *got);
    uint8_t *changed = malloc(n);
    sk_skeleton_evaluate_base(s, world, base_final);
    sk_skeleton_evaluate(s, NULL, NULL, scratch, want, NULL, NULL);
    ck_assert(memcmp(want, base_final, 16 * (n + 1) * sizeof *want) == 0);
    for (int pose = 0; pose < 8; pose++) {
      const size_t count = pose == 0 ? 0 : pose == 7 ? n : 1 + (size_t)(inc_unit() * 4);
      sk_override *o = calloc(count + 1, sizeof *o);
      for (size_t k = 0; k < count; k++) {
        o[k].bone = (int32_t)(pose == 7 ? k : (size_t)(inc_unit() * (double)n));
        const double u = inc_unit();
        if (u < 0.25) {
          o[k].mask = SK_OVERRIDE_MATRIX;
          inc_trs(o[k].matrix, 1);
        } else {
          o[k].mask = u < 0.5 ? SK_OVERRIDE_ROTATION : u < 0.75 ? SK_OVERRIDE_POSITION | SK_OVERRIDE_SCALING
                                                                : SK_OVERRIDE_ROTATION | SK_OVERRIDE_POSITION;
          for (int c = 0; c < 4; c++)
            o[k].rotation[c] = inc_unit() - 0.5; /* not normalised: Babylon does not either */
          for (int c = 0; c < 3; c++) {
            o[k].position[c] = inc_unit() * 3;
            o[k].scaling[c] = 0.5 + inc_unit();
          }
        }
      }
      sk_skeleton_pose_locals(s, o, count, locals);
      sk_skeleton_evaluate(s, locals, NULL, scratch, want, NULL, NULL);
      memset(changed, 0, n);
      float *mine = malloc(16 * n * sizeof *mine);
      sk_skeleton_pose_overrides(s, o, count, mine, changed);
      memset(got, 0x7f, 16 * (n + 1) * sizeof *got);
      sk_skeleton_evaluate_changed(s, mine, changed, world, base_final, scratch, got);
      ck_assert_msg(memcmp(want, got, 16 * (n + 1) * sizeof *got) == 0, "iteration %d pose %d (%zu bones)", it, pose,
                    n);
      free(mine);
      free(o);
    }
    free(world);
    free(base_final);
    free(locals);
    free(scratch);
    free(want);
    free(got);
    free(changed);
    sk_skeleton_destroy(s);
    free(d);
    free(names);
    free(binds);
    free(slot);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_skeleton");
  TCase *golden = tcase_create("golden");
  tcase_add_test(golden, page_example_bind_pose_gives_identity);
  tcase_add_test(golden, page_example_left_arm_at_75_is_45_about_shoulder);
  tcase_add_test(golden, sorts_parent_first_keeping_slots);
  tcase_add_test(golden, partial_set_keeps_cached_components);
  tcase_add_test(golden, return_to_rest_skips_unslotted_bones);
  suite_add_tcase(s, golden);
  TCase *validity = tcase_create("validity");
  tcase_add_test(validity, rejects_duplicate_names);
  tcase_add_test(validity, rejects_unknown_parent);
  tcase_add_test(validity, rejects_cycles);
  tcase_add_test(validity, rejects_bad_indices);
  tcase_add_test(validity, rejects_non_finite_and_singular);
  suite_add_tcase(s, validity);
  TCase *life = tcase_create("lifecycle");
  tcase_set_timeout(life, 60);
  tcase_add_test(life, long_chain_sorts_without_recursion);
  tcase_add_test(life, clone_is_deep_and_equal);
  tcase_add_test(life, clone_into_reuses_a_copy_of_the_same_sizes);
  tcase_add_test(life, changed_subtrees_equal_the_full_evaluation);
  suite_add_tcase(s, life);
  return sk_test_run(s);
}
