/* sk_skin: the vertex job on hand-built primitives whose answers are exact
 * in any arithmetic (so the expected numbers are written out), and the
 * float32 steps where float32 and double answers part (so the job is seen
 * to round where Babylon's Float32Array stores round). The whole-asset
 * comparison with Babylon is tests/check_mesh_outputs.c. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "sk_skin.h"
#include "sk_testutil.h"

static const float k_translate[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 2, 3, 1};
static const float k_scale2[16] = {2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1};

/*   slot 0: translate (1, 2, 3)        vertex (1, 1, 1), weights 0.5 / 0.5
 *   slot 1: scale 2                    -> 0.5 (2, 3, 4) + 0.5 (2, 2, 2) = (2, 2.5, 3) */
START_TEST(two_influences_blend_the_matrices) {
  float final[32], pos[3] = {1, 1, 1}, nrm[3] = {0, 0, 1}, out[3], nout[3];
  memcpy(final, k_translate, sizeof k_translate);
  memcpy(final + 16, k_scale2, sizeof k_scale2);
  uint32_t joints[4] = {0, 1, 0, 0};
  float weights[4] = {0.5f, 0.5f, 0, 0};
  sk_geom_prim p = {.count = 1, .influences = 4, .pos = pos, .nrm = nrm, .joints = joints, .weights = weights};
  sk_skin_job job = {.prim = &p, .final = final, .slots = 2, .pos = out, .nrm = nout, .bounds = true};
  ck_assert(sk_skin_validate(&job));
  sk_skin_run(&job);
  ck_assert(out[0] == 2 && out[1] == 2.5f && out[2] == 3);
  /* the normal takes the 3 x 3 part: 0.5 + 1 = 1.5, not renormalised */
  ck_assert(nout[0] == 0 && nout[1] == 0 && nout[2] == 1.5f);
  ck_assert(job.min[0] == 2 && job.max[2] == 3);
}
END_TEST

/* The divide by w: a projective row scales the point by 1 / w. */
START_TEST(transform_divides_by_w) {
  float final[16], pos[3] = {2, 4, 6}, out[3];
  memcpy(final, k_scale2, sizeof k_scale2);
  final[15] = 4; /* w = 4 */
  uint32_t joints[4] = {0};
  float weights[4] = {1, 0, 0, 0};
  sk_geom_prim p = {.count = 1, .influences = 4, .pos = pos, .joints = joints, .weights = weights};
  sk_skin_job job = {.prim = &p, .final = final, .slots = 1, .pos = out};
  sk_skin_run(&job);
  ck_assert(out[0] == 1 && out[1] == 2 && out[2] == 3);
}
END_TEST

/* Weights <= 0 are skipped, their joint never read (slot 9 does not exist). */
START_TEST(zero_and_negative_weights_are_skipped) {
  float final[16], pos[3] = {1, 1, 1}, out[3];
  memcpy(final, k_translate, sizeof k_translate);
  uint32_t joints[8] = {0, 9, 9, 9, 9, 9, 9, 0};
  float weights[8] = {0.5f, 0, -1, 0, 0, -0.0f, 0, 0.5f};
  sk_geom_prim p = {.count = 1, .influences = 8, .pos = pos, .joints = joints, .weights = weights};
  sk_skin_job job = {.prim = &p, .final = final, .slots = 1, .pos = out};
  sk_skin_run(&job);
  ck_assert(out[0] == 2 && out[1] == 3 && out[2] == 4);
}
END_TEST

/* Morph before skin: (target - base) x influence summed in doubles, stored
 * once; influence 0 leaves the base bits alone. */
START_TEST(morph_applies_before_skinning) {
  float pos[3] = {1, 1, 1}, tpos[3] = {3, 1, 1}, tpos2[3] = {1, 5, 1}, out[3];
  sk_geom_target targets[2] = {{.pos = tpos}, {.pos = tpos2}};
  double infl[2] = {0.5, 0.25};
  sk_geom_prim p = {.count = 1, .pos = pos, .ntargets = 2, .targets = targets, .influence = infl};
  float final[16];
  memcpy(final, k_translate, sizeof k_translate);
  sk_skin_job job = {.prim = &p, .final = final, .slots = 1, .pos = out};
  sk_skin_run(&job); /* no influences: morphed, not skinned */
  ck_assert(out[0] == 2 && out[1] == 2 && out[2] == 1);
  uint32_t joints[4] = {0};
  float weights[4] = {1, 0, 0, 0};
  p.influences = 4;
  p.joints = joints;
  p.weights = weights;
  double other[2] = {0, 0};
  job.influence = other;
  sk_skin_run(&job);
  ck_assert(out[0] == 2 && out[1] == 3 && out[2] == 4);
}
END_TEST

/* Where the rounding shows: the morph's sum is one double rounded once, not
 * float32 steps; the matrix sum is float32 steps, not one double. */
START_TEST(rounds_where_babylon_stores) {
  float pos[3] = {1, 0, 0}, t1[3] = {1 + 0x1p-23f, 0, 0}, t2[3] = {1 + 0x1p-23f, 0, 0}, out[3];
  sk_geom_target targets[2] = {{.pos = t1}, {.pos = t2}};
  double infl[2] = {0.5, 0.5}; /* two half ulps: one ulp in doubles, 1 + 0 + 0 in float32 steps */
  sk_geom_prim p = {.count = 1, .pos = pos, .ntargets = 2, .targets = targets, .influence = infl};
  float final[16] = {0};
  sk_skin_job job = {.prim = &p, .final = final, .slots = 1, .pos = out};
  sk_skin_run(&job);
  ck_assert(out[0] == 1 + 0x1p-23f);
  /* matrix sum: 1 + 2^-24 + 2^-24 is 1 in float32 steps (ties to even), 1 + 2^-23 in doubles */
  float fin[32] = {0};
  fin[0] = 1;
  fin[5] = fin[10] = fin[15] = 1;
  fin[16] = 0x1p-24f;
  fin[31] = 1;
  uint32_t joints[4] = {0, 1, 1, 0};
  float weights[4] = {1, 1, 1, 0};
  float one[3] = {1, 0, 0};
  sk_geom_prim q = {.count = 1, .influences = 4, .pos = one, .joints = joints, .weights = weights};
  sk_skin_job j2 = {.prim = &q, .final = fin, .slots = 2, .pos = out};
  sk_skin_run(&j2);
  /* m[0] = 1 (float32 steps), m[15] = 3: x = 1 / 3 rounded from doubles */
  ck_assert(out[0] == (float)(1.0 / 3.0));
}
END_TEST

START_TEST(validate_needs_inputs_and_an_output) {
  float final[16] = {0}, out[3];
  sk_geom_prim p = {.count = 1};
  sk_skin_job job = {.prim = &p, .final = final, .slots = 1};
  ck_assert(!sk_skin_validate(&job));
  job.pos = out;
  ck_assert(sk_skin_validate(&job));
  job.pos = NULL;
  job.nrm = out;
  job.bounds = true;
  ck_assert(!sk_skin_validate(&job));
  ck_assert(!sk_skin_validate(NULL));
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_skin");
  TCase *golden = tcase_create("golden");
  tcase_add_test(golden, two_influences_blend_the_matrices);
  tcase_add_test(golden, transform_divides_by_w);
  tcase_add_test(golden, zero_and_negative_weights_are_skipped);
  tcase_add_test(golden, morph_applies_before_skinning);
  tcase_add_test(golden, rounds_where_babylon_stores);
  suite_add_tcase(s, golden);
  TCase *validity = tcase_create("validity");
  tcase_add_test(validity, validate_needs_inputs_and_an_output);
  suite_add_tcase(s, validity);
  return sk_test_run(s);
}
