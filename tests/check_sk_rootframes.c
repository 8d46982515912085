/* sk_rootframes: "rootMotion" on the pose forms (the bit-for-bit proof
 * against Babylon's controller is tests/rootframes.py). Here: the mesh
 * chain above the skeleton, the in-place root on the poses, the motion's
 * arithmetic (chunks, held ends), refusals and the cost, on the generated
 * walker (tests/data/gen/walker.glb). */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_budget.h"
#include "sk_cost.h"
#include "sk_gltf.h"
#include "sk_gltf_mesh.h"
#include "sk_model.h"
#include "sk_poseops.h"
#include "sk_rootframes.h"
#include "sk_testutil.h"

static sk_model *walker(void) {
  size_t len, est;
  unsigned char *d = sk_test_read_file("data/gen/walker.glb", &len);
  ck_assert_ptr_nonnull(d);
  sk_skeleton *s;
  sk_anim *a;
  sk_gltf_extra x = {0};
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_gltf_import_extra(d, len, NULL, 0, 0, &est, false, &s, &a, &x, &err) == 0, "%s", err.text);
  free(d);
  sk_model *m;
  ck_assert_int_eq(sk_model_create(s, a, x.mesh_json, NULL, 0, &m), 0);
  sk_gltf_extra_clear(&x);
  return m;
}

static int sample(const sk_model *m, const char *text, sk_poseops **owner, sk_pose **poses, size_t *n,
                  sk_error *err) {
  json_t *j = json_loads(text, 0, NULL);
  ck_assert_ptr_nonnull(j);
  sk_error_clear(err);
  *owner = NULL;
  int rc = sk_poseops_sample(sk_pose_parse_anim, m, j, "", SK_FMT_JSON, owner, poses, n, err);
  json_decref(j);
  return rc;
}

static const sk_override *root_of(const sk_model *m, const sk_pose *p) {
  int32_t hips = sk_skeleton_find(m->skel, "hips");
  for (size_t k = 0; k < p->count; k++)
    if (p->overrides[k].bone == hips)
      return &p->overrides[k];
  return NULL;
}

START_TEST(test_above) {
  double *a;
  size_t n;
  ck_assert_int_eq(sk_gltf_mesh_chain_above(NULL, false, &a, &n), 0);
  ck_assert_uint_eq(n, 0);
  free(a);
  const char *chain = "{\"name\":\"body\",\"position\":[0,0,0],\"rotation\":[0,0,0],\"scaling\":[1,1,1],\"parent\":"
                      "{\"name\":\"mid\",\"position\":[1,2,3],\"rotationQuaternion\":[0,0.6,0,0.8],\"scaling\":[2,2,2],"
                      "\"parent\":{\"name\":\"__root__\",\"position\":[0,0,0],\"rotationQuaternion\":[0,1,0,0],"
                      "\"scaling\":[1,1,-1]}}}";
  ck_assert_int_eq(sk_gltf_mesh_chain_above(chain, false, &a, &n), 0);
  ck_assert_uint_eq(n, 1); /* neither the mesh (Euler) nor __root__ */
  const double want[10] = {1, 2, 3, 0, 0.6, 0, 0.8, 2, 2, 2};
  for (int i = 0; i < 10; i++)
    ck_assert_double_eq(a[i], want[i]);
  free(a);
}
END_TEST

/* walk_root's hips travel 1 a cycle along +Z (the direction snapped onto
 * it): in place, the hips' Z keeps its start and the keys of "walk" (footContact) are not rewritten. */
START_TEST(test_in_place) {
  sk_model *m = walker();
  sk_poseops *owner;
  sk_pose *poses;
  size_t n;
  sk_error err;
  const char *body = "{\"animation\":\"walk_root\",\"frames\":[0,31],\"fps\":30,"
                     "\"rootMotion\":{\"directionSnapAngle\":0.1}}";
  ck_assert_int_eq(sample(m, body, &owner, &poses, &n, &err), 0);
  ck_assert_uint_eq(n, 31);
  for (size_t i = 0; i < n; i++) {
    const sk_override *o = root_of(m, &poses[i]);
    ck_assert_ptr_nonnull(o);
    ck_assert_msg(fabs(o->position[2]) < 1e-6, "frame %zu: hips z %g", i, o->position[2]);
    const double *v = poses[i].ops->root_motion;
    ck_assert_msg(fabs(v[2] - i / 30.0) < 1e-5, "frame %zu: offset z %g", i, v[2]);
    ck_assert_double_eq(v[3], 0);
  }
  ck_assert_double_eq(poses[0].ops->root_motion[6], 0); /* frame 0: no frame before */
  sk_pose_array_free(poses, n);
  sk_poseops_free(owner);
  sk_poseops *o2;
  sk_pose *p2;
  ck_assert_int_eq(sample(m, "{\"animation\":\"walk\",\"time\":0.5,\"rootMotion\":{}}", &owner, &poses, &n, &err), 0);
  ck_assert_int_eq(sample(m, "{\"animation\":\"walk\",\"time\":0.5,\"ops\":[]}", &o2, &p2, &n, &err), 0);
  ck_assert_mem_eq(root_of(m, &poses[0])->position, root_of(m, &p2[0])->position, 3 * sizeof(double));
  ck_assert_msg(fabs(poses[0].ops->root_motion[2] - 0.5) < 0.02, "walk offset %g", poses[0].ops->root_motion[2]);
  sk_pose_array_free(poses, 1);
  sk_pose_array_free(p2, 1);
  sk_poseops_free(owner);
  sk_poseops_free(o2);
  sk_model_unref(m);
}
END_TEST

/* A chunk's first frame has the delta from the frame before it; past the
 * end of a clip that does not loop the motion holds. */
START_TEST(test_chunks_and_ends) {
  sk_model *m = walker();
  sk_poseops *ow, *oc;
  sk_pose *whole, *chunk;
  size_t n, nc;
  sk_error err;
  ck_assert_int_eq(sample(m, "{\"animation\":\"turn_walk\",\"frames\":[0,70],\"fps\":30,\"loop\":true,"
                             "\"rootMotion\":{}}", &ow, &whole, &n, &err), 0);
  ck_assert_int_eq(sample(m, "{\"animation\":\"turn_walk\",\"frames\":[33,40],\"fps\":30,\"loop\":true,"
                             "\"rootMotion\":{}}", &oc, &chunk, &nc, &err), 0);
  for (size_t i = 0; i < nc; i++)
    ck_assert_mem_eq(chunk[i].ops->root_motion, whole[33 + i].ops->root_motion, 8 * sizeof(double));
  /* two cycles and a third: the turn accumulates past a revolution's half */
  ck_assert_msg(whole[69].ops->root_motion[3] > 3.5, "turn %g", whole[69].ops->root_motion[3]);
  sk_pose_array_free(whole, n);
  sk_pose_array_free(chunk, nc);
  sk_poseops_free(ow);
  sk_poseops_free(oc);
  ck_assert_int_eq(sample(m, "{\"animation\":\"walk_root\",\"times\":[0.5,2,3],\"rootMotion\":{}}", &ow, &whole, &n,
                          &err), 0);
  ck_assert_mem_eq(whole[1].ops->root_motion, whole[2].ops->root_motion, 4 * sizeof(double));
  ck_assert_double_eq(whole[2].ops->root_motion[6], 0);
  ck_assert_double_eq(whole[2].ops->root_motion[4], 0);
  sk_pose_array_free(whole, n);
  sk_poseops_free(ow);
  sk_model_unref(m);
}
END_TEST

START_TEST(test_refusals) {
  sk_model *m = walker();
  static const struct {
    const char *body, *ptr;
    int code;
  } k[] = {
      {"{\"animation\":\"walk\",\"rootMotion\":{\"samplesPerSecond\":0}}", "/rootMotion/samplesPerSecond", SK_ERANGE},
      {"{\"animation\":\"walk\",\"rootMotion\":{\"source\":\"hips\"}}", "/rootMotion/source", SK_ERANGE},
      {"{\"animation\":\"walk\",\"rootMotion\":{\"rootNode\":\"hip\"}}", "/rootMotion/rootNode", SK_EUNKNOWN},
      {"{\"animation\":\"walk\",\"rootMotion\":{\"contactNodes\":[\"footL\",3]}}", "/rootMotion/contactNodes/1",
       SK_ETYPE},
      {"{\"animation\":\"walk\",\"rootMotion\":{\"extract\":true}}", "/rootMotion/extract", SK_EUNKNOWN},
      {"{\"animation\":\"walk\",\"rootMotion\":true}", "/rootMotion", SK_ETYPE},
      {"{\"rootMotion\":{}}", "/rootMotion", SK_ERANGE},
      {"{\"layers\":[{\"animation\":\"walk\"}],\"rootMotion\":{}}", "/rootMotion", SK_ERANGE},
      {"{\"animation\":\"walk\",\"bones\":[],\"rootMotion\":{}}", "/rootMotion", SK_ERANGE},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    sk_poseops *owner;
    sk_pose *poses;
    size_t n;
    sk_error err;
    int rc = sample(m, k[i].body, &owner, &poses, &n, &err);
    ck_assert_msg(rc == k[i].code && strcmp(err.pointer, k[i].ptr) == 0, "%s: %d %s (%s)", k[i].body, rc,
                  err.pointer, err.text);
  }
  sk_model_unref(m);
}
END_TEST

START_TEST(test_cost) {
  sk_model *m = walker();
  json_t *plain = json_loads("{\"animation\":\"walk\"}", 0, NULL);
  json_t *rm = json_loads("{\"animation\":\"walk\",\"rootMotion\":{\"samplesPerSecond\":1000}}", 0, NULL);
  json_t *low = json_loads("{\"animation\":\"walk\",\"rootMotion\":{\"samplesPerSecond\":10}}", 0, NULL);
  ck_assert_uint_eq(sk_rootframes_cost(m->skel, m->anim, plain), 0);
  uint64_t hi = sk_rootframes_cost(m->skel, m->anim, rm), lo = sk_rootframes_cost(m->skel, m->anim, low);
  ck_assert_msg(hi > 20 * lo / 2 && lo > 0, "cost %llu vs %llu", (unsigned long long)hi, (unsigned long long)lo);
  /* in the request's cost: a pose without it samples on the loop thread,
   * one whose analysis is big goes to the pool (sk_cost_inline false) */
  sk_cost_limits l = {0};
  sk_cost_limits_fill(&l);
  sk_cost c0 = {0}, c1 = {0};
  sk_error err;
  ck_assert_int_eq(sk_cost_add_pose_json(&c0, &l, m->skel, m->anim, plain, "", SK_FMT_JSON, &err), 0);
  ck_assert_int_eq(sk_cost_add_pose_json(&c1, &l, m->skel, m->anim, rm, "", SK_FMT_JSON, &err), 0);
  ck_assert(sk_cost_inline(&c0, &l) && !sk_cost_inline(&c1, &l));
  ck_assert_uint_eq(c1.sample - c0.sample, hi);
  json_decref(plain), json_decref(rm), json_decref(low);
  sk_model_unref(m);
}
END_TEST

/* The model keeps an analysis per clip and options, 16 at most, within
 * its budget; the same options borrow the kept one. */
START_TEST(test_memo) {
  sk_model *m = walker();
  sk_budget budget;
  sk_budget_init(&budget, 0);
  sk_model_set_budget(m, &budget);
  sk_poseops *o1, *o2;
  sk_pose *p1, *p2;
  size_t n;
  sk_error err;
  const char *body = "{\"animation\":\"turn_walk\",\"time\":0.3,\"rootMotion\":{\"minimumTurn\":0.1}}";
  ck_assert_int_eq(sample(m, body, &o1, &p1, &n, &err), 0);
  ck_assert_int_eq(sample(m, body, &o2, &p2, &n, &err), 0);
  ck_assert_ptr_eq(o1->rootframes, o2->rootframes);
  ck_assert(!o1->rootframes_owned && !o2->rootframes_owned);
  ck_assert_uint_eq(sk_rootframes_memo_count(m), 1);
  sk_budget_stats st;
  sk_budget_get_stats(&budget, &st);
  ck_assert_uint_eq(st.used, o1->rootframes->bytes);
  sk_pose_array_free(p1, 1), sk_pose_array_free(p2, 1);
  sk_poseops_free(o1), sk_poseops_free(o2);
  for (int k = 0; k < 20; k++) {
    char b[160];
    snprintf(b, sizeof b, "{\"animation\":\"walk\",\"time\":0.3,\"rootMotion\":{\"samplesPerSecond\":%d}}", 10 + k);
    ck_assert_int_eq(sample(m, b, &o1, &p1, &n, &err), 0);
    ck_assert(o1->rootframes_owned == (k >= 15));
    sk_pose_array_free(p1, 1);
    sk_poseops_free(o1);
  }
  ck_assert_uint_eq(sk_rootframes_memo_count(m), 16);
  sk_model_unref(m);
  sk_budget_get_stats(&budget, &st);
  ck_assert_uint_eq(st.used, 0); /* given back with the model */
  /* a budget without room: made for the request, not kept */
  m = walker();
  sk_budget_init(&budget, 1);
  sk_model_set_budget(m, &budget);
  ck_assert_int_eq(sample(m, body, &o1, &p1, &n, &err), 0);
  ck_assert(o1->rootframes_owned);
  ck_assert_uint_eq(sk_rootframes_memo_count(m), 0);
  sk_pose_array_free(p1, 1);
  sk_poseops_free(o1);
  sk_model_unref(m);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sk_rootframes");
  TCase *g = tcase_create("golden");
  tcase_add_test(g, test_above);
  tcase_add_test(g, test_in_place);
  tcase_add_test(g, test_chunks_and_ends);
  tcase_add_test(g, test_memo);
  suite_add_tcase(s, g);
  TCase *v = tcase_create("validity");
  tcase_add_test(v, test_refusals);
  tcase_add_test(v, test_cost);
  suite_add_tcase(s, v);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
