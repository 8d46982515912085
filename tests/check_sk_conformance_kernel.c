/* The exact batch kernel on real data. First the committed conformance
 * cases (tests/conformance/cases.jsonl and handwritten.jsonl, answers from
 * real Babylon.js Skeleton/Bone objects) replayed with the batch kernel
 * doing every evaluation: each "pose"/"evaluate" result is computed as a
 * batch of 11 copies of the pose (so it lands in every lane position of a
 * group, and in the scalar tail) on every path this CPU has, and every
 * final and absolute matrix must equal Babylon's float32 answer exactly.
 * The ops that change the skeleton (set, setBind, setRest, returnToRest)
 * go through sk_skeleton as in sk_eval.c; "local" outputs are the pose's
 * locals, not kernel work, and are left to check_sk_conformance. Then
 * Fox.glb's clips through every path against the core. */
#include "sk_anim.h"
#include "sk_eval.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_jsonl.h"
#include "sk_kernel.h"
#include "sk_testutil.h"

#define COPIES 11

/* Byte-identity of one matrix, with both printed when it fails. */
#define ASSERT_MAT_BITS(got, want, ...)                                                                  \
  do {                                                                                                   \
    const float *g_ = (got), *w_ = (want);                                                               \
    if (memcmp(g_, w_, 16 * sizeof(float)) != 0) {                                                       \
      for (int k_ = 0; k_ < 16; k_++)                                                                    \
        fprintf(stderr, "  [%2d] got %.9g want %.9g\n", k_, g_[k_], w_[k_]);                              \
      ck_abort_msg(__VA_ARGS__);                                                                         \
    }                                                                                                    \
  } while (0)

static const char *const all_paths[] = {"avx512", "avx2", "sse2", "scalar"};

/* Compares `n` matrices of kernel output (pose-major batch, `stride`
 * floats per pose, first pose only: every copy is checked against it
 * first) with Babylon's numbers. Returns false with `why` filled. */
static bool same_as_babylon(const float *got, const json_t *want, size_t n, char *why, size_t cap) {
  if (json_array_size(want) != 16 * n) {
    snprintf(why, cap, "%zu numbers, want %zu", 16 * n, json_array_size(want));
    return false;
  }
  for (size_t i = 0; i < 16 * n; i++) {
    const float w = (float)json_number_value(json_array_get(want, i));
    if (got[i] != w) {
      snprintf(why, cap, "matrix %zu entry %zu: got %.9g, Babylon %.9g", i / 16, i % 16, got[i], w);
      return false;
    }
  }
  return true;
}

/* One pose through the kernel on `path`; checks its outputs against
 * `want` (one result object of the case). */
static bool kernel_pose(const sk_skeleton *s, const sk_pose *pose, const char *path, const json_t *want, char *why,
                        size_t cap) {
  const size_t nb = s->count;
  sk_rig *rig;
  ck_assert_int_eq(sk_rig_create(s, &rig), 0);
  float *locals = malloc(16 * nb * sizeof *locals + 1);
  for (size_t b = 0; b < nb; b++)
    memcpy(locals + 16 * b, s->bones[b].local.matrix, 16 * sizeof *locals);
  if (pose->count > 0)
    sk_skeleton_pose_locals(s, pose->overrides, pose->count, locals);
  /* MATRIX input, row layout: every lane the same pose. */
  float *input = malloc(16 * COPIES * nb * sizeof *input + 1);
  uint8_t *mode = malloc(nb + 1);
  size_t *offset = malloc(nb * sizeof *offset + 1);
  for (size_t b = 0; b < nb; b++) {
    mode[b] = SK_KERNEL_MATRIX;
    offset[b] = 16 * COPIES * b;
    for (size_t r = 0; r < 16; r++)
      for (size_t q = 0; q < COPIES; q++)
        input[offset[b] + r * COPIES + q] = locals[16 * b + r];
  }
  const size_t fs = 16 * (nb + 1), as = 16 * nb;
  float *final = aligned_alloc(64, (COPIES * fs * sizeof(float) + 63) / 64 * 64);
  float *absolute = aligned_alloc(64, (COPIES * as * sizeof(float) + 63) / 64 * 64 + 64);
  const bool want_abs = (pose->output & SK_OUT_ABSOLUTE) != 0;
  sk_kernel_job j = {.rig = rig,
                     .poses = COPIES,
                     .pose_stride = COPIES,
                     .mode = mode,
                     .offset = offset,
                     .input = input,
                     .input_floats = 16 * COPIES * nb,
                     .initial_skin = pose->has_initial_skin ? pose->initial_skin : NULL,
                     .final = final,
                     .absolute = want_abs ? absolute : NULL,
                     .path = path};
  ck_assert_int_eq(sk_kernel_validate(&j, NULL), 0);
  sk_kernel_run(&j, 0, COPIES);
  bool ok = true;
  for (size_t q = 1; q < COPIES && ok; q++) {
    ok = memcmp(final, final + q * fs, fs * sizeof *final) == 0 &&
         (!want_abs || memcmp(absolute, absolute + q * as, as * sizeof *absolute) == 0);
    if (!ok)
      snprintf(why, cap, "lane %zu differs from lane 0", q);
  }
  const json_t *wf = json_object_get(want, "final"), *wa = json_object_get(want, "absolute");
  if (ok && (pose->output & SK_OUT_FINAL))
    ok = wf != NULL && same_as_babylon(final, wf, nb + 1, why, cap);
  if (ok && want_abs)
    ok = wa != NULL && same_as_babylon(absolute, wa, nb, why, cap);
  free(locals);
  free(input);
  free(mode);
  free(offset);
  free(final);
  free(absolute);
  sk_rig_destroy(rig);
  return ok;
}

/* sk_eval.c's run_op for the ops that change the skeleton. */
static void apply_op(sk_skeleton *s, const json_t *op, const char *name) {
  sk_error e;
  sk_error_clear(&e);
  if (strcmp(name, "set") == 0) {
    sk_override *o;
    size_t n;
    ck_assert_int_eq(sk_json_parse_overrides(s, json_object_get(op, "bones"), "/bones", &o, &n, &e), 0);
    sk_skeleton_apply(s, o, n);
    free(o);
    return;
  }
  const char *bn = json_string_value(json_object_get(op, "bone"));
  const int32_t bone = bn != NULL ? sk_skeleton_find(s, bn) : -1;
  if (strcmp(name, "returnToRest") == 0) {
    if (bone >= 0)
      sk_skeleton_bone_return_to_rest(s, bone);
    else
      sk_skeleton_return_to_rest(s);
    return;
  }
  float m[16];
  ck_assert_int_ge(bone, 0);
  ck_assert_int_eq(sk_json_floats(json_object_get(op, "matrix"), 16, "/matrix", m, &e), 0);
  if (strcmp(name, "setRest") == 0)
    sk_skeleton_set_rest(s, bone, m);
  else if (strcmp(name, "setBind") == 0)
    ck_assert_int_eq(sk_skeleton_set_bind(s, bone, m, json_is_true(json_object_get(op, "keepLocal"))), 0);
  else
    ck_abort_msg("unknown op %s", name);
}

/* Replays every case of one file; returns the kernel evaluations checked. */
static size_t run_file(const char *rel, size_t min_cases) {
  static const char *const k_op[] = {"op", NULL};
  sk_jsonl in;
  sk_jsonl_open(&in, rel);
  size_t cases = 0, checked = 0, failed = 0;
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    if (json_object_get(rec, "reject") != NULL) { /* a deliberate divergence: nothing to evaluate */
      json_decref(rec);
      continue;
    }
    cases++;
    const char *cname = json_string_value(json_object_get(rec, "name"));
    const json_t *c = json_object_get(rec, "case"), *ops = json_object_get(c, "ops");
    const json_t *results = json_object_get(json_object_get(rec, "expected"), "results");
    sk_skeleton *s;
    sk_error e;
    sk_error_clear(&e);
    ck_assert_msg(sk_json_parse_skeleton(json_object_get(c, "skeleton"), "/skeleton", 0, &s, &e) == 0, "%s: %s",
                  cname, e.text);
    size_t nres = 0;
    for (size_t i = 0; i < json_array_size(ops); i++) {
      const json_t *op = json_array_get(ops, i);
      const char *name = json_string_value(json_object_get(op, "op"));
      if (strcmp(name, "pose") != 0 && strcmp(name, "evaluate") != 0) {
        apply_op(s, op, name);
        continue;
      }
      sk_pose *poses;
      size_t np;
      ck_assert_msg(sk_pose_parse_anim(s, NULL, op, "/op", k_op, &poses, &np, &e) == 0, "%s: %s", cname, e.text);
      for (size_t k = 0; k < np; k++, nres++)
        for (size_t pi = 0; pi < 4; pi++) {
          if (sk_kernel_path_check(all_paths[pi]) != 0)
            continue;
          char why[256] = "";
          if (!kernel_pose(s, &poses[k], all_paths[pi], json_array_get(results, nres), why, sizeof why)) {
            if (++failed <= 10)
              fprintf(stderr, "FAIL %s op %zu on %s: %s\n", cname, i, all_paths[pi], why);
          }
          checked++;
        }
      sk_pose_array_free(poses, np);
    }
    ck_assert_uint_eq(nres, json_array_size(results));
    sk_skeleton_destroy(s);
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  printf("%s: %zu cases, %zu kernel evaluations against Babylon, %zu not bit-exact\n", rel, cases, checked, failed);
  ck_assert_uint_ge(cases, min_cases);
  ck_assert_uint_eq(failed, 0);
  return checked;
}

START_TEST(generated_cases_through_the_kernel_match_babylon_bit_for_bit) {
  ck_assert_uint_gt(run_file("conformance/cases.jsonl", 290), 800);
}
END_TEST

START_TEST(handwritten_cases_through_the_kernel_match_babylon_bit_for_bit) {
  ck_assert_uint_gt(run_file("conformance/handwritten.jsonl", 5), 20);
}
END_TEST

/* ---- real clips --------------------------------------------------------------- */

/* Fox.glb's three clips sampled at 30 fps over their whole length, plus the
 * two poses the float kernel missed by most (Survey at t = 0.7333: 1.64e-5
 * of the matrix scale; Walk: 1.15e-5): each pose's locals exactly as a
 * single pose request builds them (sampled TRS -> overrides -> the core's
 * setters), then one batch per clip on every path against the core, byte
 * for byte, in both input layouts and split across threads; and the
 * single-pose path. */
START_TEST(fox_clips_every_path) {
  size_t len;
  unsigned char *data = sk_test_read_file("data/Fox.glb", &len);
  ck_assert_ptr_nonnull(data);
  sk_skeleton *s;
  sk_anim *an;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_gltf_import(data, len, NULL, 0, &s, &an, &err) == 0, "%s", err.text);
  free(data);
  const size_t nb = s->count;
  sk_rig *rig;
  ck_assert_int_eq(sk_rig_create(s, &rig), 0);
  double *trs = malloc(nb * SK_ANIM_TRS * sizeof *trs);
  sk_override *ov = malloc(nb * sizeof *ov);
  float *scratch = malloc(16 * nb * sizeof *scratch), *want1 = malloc(16 * (nb + 1) * sizeof *want1);
  size_t checked = 0;
  for (size_t c = 0; c < an->clip_count; c++) {
    const double dur = sk_anim_clip_duration(an, c);
    const size_t frames = (size_t)(dur * 30) + 1;
    const size_t p = frames + 2;
    double *times = malloc(p * sizeof *times);
    for (size_t f = 0; f < frames; f++)
      times[f] = (double)f / 30;
    times[frames] = 0.7333;
    times[frames + 1] = dur * 0.61803;
    /* MATRIX input, row layout: row r of bone b = entry r of every pose. */
    const size_t stride = p + 3;
    float *input = malloc(16 * stride * nb * sizeof *input), *locals = malloc(16 * nb * sizeof *locals);
    double *input64 = malloc(10 * stride * nb * sizeof *input64); /* the sampled TRS, unrounded */
    float *want = malloc(p * 16 * (nb + 1) * sizeof *want);
    float *got = aligned_alloc(64, (p * 16 * (nb + 1) * sizeof *got + 63) / 64 * 64);
    uint8_t *mode = malloc(nb);
    size_t *offset = malloc(nb * sizeof *offset);
    for (size_t b = 0; b < nb; b++) {
      mode[b] = SK_KERNEL_MATRIX;
      offset[b] = 16 * stride * b;
    }
    for (size_t q = 0; q < p; q++) {
      sk_anim_sample(an, c, times[q], false, trs);
      sk_anim_to_overrides(an, trs, ov);
      sk_skeleton_pose_locals(s, ov, nb, locals);
      sk_skeleton_evaluate(s, locals, NULL, scratch, want + q * 16 * (nb + 1), NULL, NULL);
      for (size_t b = 0; b < nb; b++)
        for (size_t r = 0; r < 16; r++)
          input[offset[b] + r * stride + q] = locals[16 * b + r];
      for (size_t b = 0; b < nb; b++)
        for (size_t r = 0; r < 10; r++)
          input64[10 * stride * b + r * stride + q] = trs[b * SK_ANIM_TRS + r];
      sk_kernel_single(rig, locals, NULL, want1, NULL);
      ck_assert_msg(memcmp(want1, want + q * 16 * (nb + 1), 16 * (nb + 1) * sizeof *want1) == 0,
                    "single-pose path, clip %zu t=%g", c, times[q]);
    }
    sk_kernel_job j = {.rig = rig, .poses = p, .pose_stride = stride, .mode = mode, .offset = offset,
                       .input = input, .input_floats = 16 * stride * nb, .final = got};
    /* The sampled TRS straight into the kernel (TRS64: composed from the
     * doubles), as a frame range at kernel speed would feed it. */
    {
      uint8_t *mode64 = malloc(nb);
      size_t *off64 = malloc(nb * sizeof *off64);
      for (size_t b = 0; b < nb; b++) {
        mode64[b] = SK_KERNEL_TRS64;
        off64[b] = 10 * stride * b;
      }
      sk_kernel_job j64 = {.rig = rig, .poses = p, .pose_stride = stride, .mode = mode64, .offset = off64,
                           .input64 = input64, .input64_doubles = 10 * stride * nb, .final = got};
      for (size_t pi = 0; pi < 4; pi++) {
        if (sk_kernel_path_check(all_paths[pi]) != 0)
          continue;
        j64.path = all_paths[pi];
        ck_assert_int_eq(sk_kernel_validate(&j64, NULL), 0);
        memset(got, 0x7f, p * 16 * (nb + 1) * sizeof *got);
        sk_kernel_run(&j64, 0, p);
        for (size_t q = 0; q < p; q++)
          for (size_t k = 0; k <= nb; k++)
            ASSERT_MAT_BITS(got + (q * (nb + 1) + k) * 16, want + (q * (nb + 1) + k) * 16,
                            "%s TRS64: clip %s t=%g slot %zu", all_paths[pi], an->clips[c].name, times[q], k);
      }
      free(mode64);
      free(off64);
    }
    for (size_t pi = 0; pi < 4; pi++) {
      if (sk_kernel_path_check(all_paths[pi]) != 0)
        continue;
      j.path = all_paths[pi];
      ck_assert_int_eq(sk_kernel_validate(&j, NULL), 0);
      for (int split = 0; split < 2; split++) {
        memset(got, 0x7f, p * 16 * (nb + 1) * sizeof *got);
        if (split)
          ck_assert_int_eq(sk_kernel_run_threads(&j, 3), 0);
        else
          sk_kernel_run(&j, 0, p);
        for (size_t q = 0; q < p; q++)
          for (size_t k = 0; k <= nb; k++)
            ASSERT_MAT_BITS(got + (q * (nb + 1) + k) * 16, want + (q * (nb + 1) + k) * 16,
                            "%s: clip %s t=%g slot %zu", all_paths[pi], an->clips[c].name, times[q], k);
        checked += p;
      }
    }
    /* The opt-in float32 kernel on the same batch: its error, printed for
     * docs/kernel.md, as |got - want| / max(1, largest |entry| of want). */
    j.path = NULL;
    j.precision = SK_KERNEL_PRECISION_FAST;
    sk_kernel_run(&j, 0, p);
    double worst = 0, worst_t = 0;
    for (size_t q = 0; q < p; q++)
      for (size_t k = 0; k <= nb; k++) {
        const float *g = got + (q * (nb + 1) + k) * 16, *w = want + (q * (nb + 1) + k) * 16;
        double scale = 1;
        for (int e = 0; e < 16; e++)
          scale = fabs(w[e]) > scale ? fabs(w[e]) : scale;
        for (int e = 0; e < 16; e++)
          if (fabs(g[e] - w[e]) / scale > worst)
            worst = fabs(g[e] - w[e]) / scale, worst_t = times[q];
      }
    printf("fast precision, Fox clip %-8s %3zu poses: worst error %.3g of the matrix scale (t=%.4f)\n",
           an->clips[c].name, p, worst, worst_t);
    ck_assert(worst < 1e-4); /* float32 over Fox's 24-bone depth: near 1e-5, never near 1e-4 */
    j.precision = SK_KERNEL_PRECISION_EXACT;
    free(times);
    free(input);
    free(input64);
    free(locals);
    free(want);
    free(got);
    free(mode);
    free(offset);
  }
  ck_assert_uint_gt(checked, 100);
  free(trs);
  free(ov);
  free(scratch);
  free(want1);
  sk_rig_destroy(rig);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_conformance_kernel");
  TCase *tc = tcase_create("babylon");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, handwritten_cases_through_the_kernel_match_babylon_bit_for_bit);
  tcase_add_test(tc, generated_cases_through_the_kernel_match_babylon_bit_for_bit);
  suite_add_tcase(s, tc);
  tc = tcase_create("clips");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, fox_clips_every_path);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
