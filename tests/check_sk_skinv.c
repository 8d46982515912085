/* sk_skinv: every path of the vertex kernel (avx512, avx2, scalar; 1, 2
 * and 3 threads) gives the scalar job's bytes: positions, normals and
 * bounds, on every asset in tests/data at several frames of every clip,
 * and on random meshes with zero and negative-zero weights, 4 and 8
 * influences, morph targets and projective (non-affine) matrices, with
 * and without the primitive's runs (sk_geom_prim.order). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sk_anim.h"
#include "sk_answer.h"
#include "sk_gltf_mesh.h"
#include "sk_pose.h"
#include "sk_skinv.h"
#include "sk_testutil.h"

static const char *k_paths[] = {"avx512", "avx2", "scalar"};

/* Jobs of up to 3 threads on 2 workers, started in the process that runs
 * the test (a forked test's child starts its own). */
static sk_threads *test_pool(void) {
  static sk_threads pool;
  static bool started;
  if (!started) {
    sk_threads_init(&pool, 3, 2);
    ck_assert_int_eq(sk_threads_start(&pool), 0);
    ck_assert_uint_eq(sk_threads_workers(&pool), 2);
    started = true;
  }
  return &pool;
}

/* The job on every path and thread count against the scalar job on one. */
static void compare_paths(const sk_geom_prim *p, const float *final, size_t slots, const double *infl,
                          const char *what) {
  const size_t n = (size_t)p->count * 3 + 1;
  float *rp = malloc(n * sizeof *rp), *rn = malloc(n * sizeof *rn), *tp = malloc(n * sizeof *tp),
        *tn = malloc(n * sizeof *tn);
  sk_skin_job ref = {.prim = p, .final = final, .slots = slots, .influence = infl, .pos = rp, .nrm = rn, .bounds = true};
  ck_assert(sk_skin_validate(&ref));
  sk_skinv_run(&ref, "scalar", NULL, 1);
  for (size_t i = 0; i < sizeof k_paths / sizeof k_paths[0]; i++) {
    if (sk_skinv_path_check(k_paths[i]) != 0)
      continue;
    for (unsigned t = 1; t <= 3; t++) {
      memset(tp, 0xA5, n * sizeof *tp);
      memset(tn, 0xA5, n * sizeof *tn);
      sk_skin_job job = ref;
      job.pos = tp;
      job.nrm = tn;
      memset(job.min, 0, sizeof job.min);
      memset(job.max, 0, sizeof job.max);
      sk_skinv_run(&job, k_paths[i], test_pool(), t);
      ck_assert_msg(memcmp(tp, rp, (n - 1) * sizeof *tp) == 0, "%s: positions differ on %s x%u", what, k_paths[i], t);
      if (p->nrm != NULL)
        ck_assert_msg(memcmp(tn, rn, (n - 1) * sizeof *tn) == 0, "%s: normals differ on %s x%u", what, k_paths[i], t);
      ck_assert_msg(memcmp(job.min, ref.min, sizeof ref.min) == 0 && memcmp(job.max, ref.max, sizeof ref.max) == 0,
                    "%s: bounds differ on %s x%u", what, k_paths[i], t);
      /* nothing written past the vertices */
      uint32_t guard;
      memcpy(&guard, tp + n - 1, sizeof guard);
      ck_assert_uint_eq(guard, 0xA5A5A5A5u);
    }
    /* positions only and normals only: the same bytes */
    sk_skin_job only = ref;
    only.pos = tp;
    only.nrm = NULL;
    only.bounds = false;
    sk_skinv_run(&only, k_paths[i], test_pool(), 2);
    ck_assert(memcmp(tp, rp, (n - 1) * sizeof *tp) == 0);
    if (p->nrm != NULL) {
      only.pos = NULL;
      only.nrm = tn;
      sk_skinv_run(&only, k_paths[i], test_pool(), 1);
      ck_assert(memcmp(tn, rn, (n - 1) * sizeof *tn) == 0);
    }
  }
  /* three ranges on the caller's and both workers, each given back */
  if (p->count >= 3 * SK_GEOM_RUN_BLOCK)
    ck_assert_uint_eq(sk_threads_high(test_pool()), 2);
  ck_assert_uint_eq(sk_threads_take(test_pool(), 2), 2);
  sk_threads_give(test_pool(), 2);
  /* sk_skin_run is one of them */
  sk_skin_job run = ref;
  run.pos = tp;
  run.nrm = tn;
  sk_skin_run(&run);
  ck_assert(memcmp(tp, rp, (n - 1) * sizeof *tp) == 0);
  free(rp);
  free(rn);
  free(tp);
  free(tn);
}

static const char *k_assets[] = {"CesiumMan.glb",      "Fox.glb",        "RecursiveSkeletons.glb",
                                 "RiggedFigure.glb",   "RiggedSimple.glb", "RobotExpressive.glb",
                                 "SimpleSkin-multi-target.gltf", "SimpleSkin.gltf", "mannequiny-0.3.0.glb",
                                 "skin_8inf.glb",      "skin_mirror.glb", "skin_morph.glb"};

START_TEST(every_asset_every_path) {
  size_t len, est;
  unsigned char *d = sk_test_read_asset(k_assets[_i], &len);
  sk_skeleton *s;
  sk_anim *an;
  sk_gltf_extra x;
  sk_error err = {0};
  ck_assert_msg(sk_gltf_import_extra(d, len, NULL, 0, 0, &est, false, &s, &an, &x, &err) == 0, "%s", err.text);
  free(d);
  sk_skeleton_prepare(s);
  const sk_geom *g = x.geom;
  ck_assert_msg(g != NULL, "%s keeps no geometry", k_assets[_i]);
  const size_t slots = s->count + 1;
  double *trs = malloc((s->count + 1) * SK_ANIM_TRS * sizeof *trs), infl[SK_GEOM_MAX_TARGETS];
  sk_override *ovr = malloc((s->count + 1) * sizeof *ovr);
  sk_pose_buffers buf;
  sk_pose_buffers_init(&buf, s->count);
  const size_t clips = an != NULL ? an->clip_count : 0;
  for (size_t c = 0; c <= clips; c++) {
    for (int f = 0; f < 3; f++) {
      sk_pose pose = {.output = SK_OUT_FINAL}; /* no overrides: the rest pose */
      if (c < clips) {
        const double t = sk_anim_clip_duration(an, c) * f / 2.5;
        sk_anim_sample(an, c, t, false, trs);
        sk_anim_to_overrides(an, trs, ovr);
        pose.overrides = ovr;
        pose.count = s->count;
      }
      sk_pose_evaluate(s, &pose, &buf);
      for (uint32_t i = 0; i < g->nprims; i++) {
        const sk_geom_prim *p = &g->prims[i];
        if (c < clips)
          sk_skin_influences(g, p->mesh, p->ntargets, (long)c, f * 10.0, p->influence, infl);
        char what[200];
        snprintf(what, sizeof what, "%s clip %zu frame %d prim %u", k_assets[_i], c, f, i);
        compare_paths(p, buf.final, slots, c < clips ? infl : NULL, what);
      }
      if (c == clips)
        break;
    }
  }
  free(trs);
  free(ovr);
  sk_pose_buffers_close(&buf);
  sk_gltf_extra_clear(&x);
  sk_skeleton_destroy(s);
  if (an != NULL)
    sk_anim_destroy(an);
}
END_TEST

static float rnd(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (float)((*seed >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

START_TEST(random_meshes_every_path) {
  unsigned seed = 7 + (unsigned)_i;
  const unsigned k = _i % 2 ? 8 : 4;
  const uint32_t count = 1 + (uint32_t)(_i * 977 % 5000), slots = 9, ntargets = _i % 3 == 0 ? 2 : 0;
  float *pos = malloc(count * 3 * sizeof *pos), *nrm = malloc(count * 3 * sizeof *nrm);
  float *tpos[2], *tnrm[2];
  uint32_t *joints = malloc(count * k * sizeof *joints);
  float *weights = malloc(count * k * sizeof *weights), final[9 * 16];
  for (size_t i = 0; i < count * 3; i++) {
    pos[i] = rnd(&seed) * 10;
    nrm[i] = (i % 7 == 0) ? -0.0f : rnd(&seed);
  }
  for (size_t v = 0; v < count; v++)
    for (unsigned i = 0; i < k; i++) {
      joints[v * k + i] = (uint32_t)((seed >> 4) % slots);
      const float r = rnd(&seed);
      weights[v * k + i] = i == 0 ? 0.25f + (r < 0 ? -r : r) : (r < -0.3f ? 0.0f : r < -0.2f ? -0.0f : r < 0 ? -r : r);
    }
  for (size_t i = 0; i < 9 * 16; i++)
    final[i] = (i % 16 == 3 || i % 16 == 7 || i % 16 == 11) ? 0.0f : rnd(&seed) * 3;
  for (int m = 0; m < 9; m++) {
    final[16 * m + 15] = 1;
    if (m == 8 && _i % 4 == 1) { /* a projective matrix: w is not the weight sum */
      final[16 * m + 3] = 0.125f;
      final[16 * m + 15] = 2;
    }
    if (m == 7)
      final[16 * m + 0] = -0.0f;
  }
  sk_geom_target targets[2];
  double infl[2] = {0.375, -0.6};
  for (uint32_t t = 0; t < ntargets; t++) {
    tpos[t] = malloc(count * 3 * sizeof(float));
    tnrm[t] = malloc(count * 3 * sizeof(float));
    for (size_t i = 0; i < count * 3; i++) {
      tpos[t][i] = pos[i] + rnd(&seed);
      tnrm[t][i] = nrm[i] + rnd(&seed) * 0.1f;
    }
    targets[t] = (sk_geom_target){.pos = tpos[t], .nrm = t == 1 ? NULL : tnrm[t]};
  }
  sk_geom_prim p = {.count = count, .influences = k, .pos = pos, .nrm = nrm, .joints = joints, .weights = weights,
                    .ntargets = ntargets, .targets = targets, .influence = infl};
  compare_paths(&p, final, slots, infl, "random");
  ck_assert_int_eq(sk_geom_prim_runs(&p), 0); /* every class: the same bytes run by run */
  compare_paths(&p, final, slots, infl, "random with runs");
  free(p.order);
  free(p.runs);
  p.order = NULL;
  p.runs = NULL;
  p.influences = 0; /* morphed only */
  compare_paths(&p, final, slots, infl, "random unskinned");
  for (uint32_t t = 0; t < ntargets; t++) {
    free(tpos[t]);
    free(tnrm[t]);
  }
  free(pos);
  free(nrm);
  free(joints);
  free(weights);
}
END_TEST

START_TEST(path_names) {
  ck_assert_int_eq(sk_skinv_path_check("scalar"), 0);
  ck_assert_int_eq(sk_skinv_path_check("generic"), 0);
  ck_assert_int_eq(sk_skinv_path_check("neon9"), -1);
  ck_assert_int_eq(sk_skinv_path_check(NULL), -1);
  ck_assert_int_eq(sk_skinv_path_check(sk_skinv_path()), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_skinv");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, every_asset_every_path, 0, (int)(sizeof k_assets / sizeof k_assets[0]));
  tcase_add_loop_test(tc, random_meshes_every_path, 0, 24);
  tcase_add_test(tc, path_names);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
