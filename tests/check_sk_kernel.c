/* The batch kernel against the scalar core: every SIMD path this CPU has,
 * random skeletons and poses, byte for byte (sk_kernel.h: the kernel is
 * exact, not close). The blocked layout and TRS64 inputs are
 * check_sk_kernel_inputs.c. */
#include <stdint.h>

#include "sk_kernelbatch.h"

/* Pose q's locals in bones[] order, as the scalar core takes them. */
static void pose_locals(const batch *b, size_t q, float *locals) {
  const size_t st = b->job.pose_stride;
  for (size_t i = 0; i < b->nb; i++) {
    const float *in = b->input + b->offset[i];
    float *l = locals + 16 * i;
    if (b->mode[i] == SK_KERNEL_CONST)
      memcpy(l, in, 16 * sizeof *l);
    else if (b->mode[i] == SK_KERNEL_MATRIX)
      for (int r = 0; r < 16; r++)
        l[r] = in[r * st + q];
    else {
      const double t[3] = {in[q], in[st + q], in[2 * st + q]};
      const double qu[4] = {in[3 * st + q], in[4 * st + q], in[5 * st + q], in[6 * st + q]};
      const double sc[3] = {in[7 * st + q], in[8 * st + q], in[9 * st + q]};
      sk_mat_compose(sc, qu, t, l);
    }
  }
}

/* Every pose's final (and absolute) against sk_skeleton_evaluate. */
static void check_batch(const batch *b, const char *what) {
  const size_t nb = b->nb;
  float *locals = malloc(16 * nb * sizeof *locals), *scratch = malloc(16 * nb * sizeof *scratch);
  float *fin = malloc(16 * (nb + 1) * sizeof *fin), *abs_ = malloc(16 * nb * sizeof *abs_);
  for (size_t q = 0; q < b->p; q++) {
    pose_locals(b, q, locals);
    sk_skeleton_evaluate(b->s, locals, b->job.initial_skin, scratch, fin, abs_, NULL);
    for (size_t k = 0; k <= nb; k++) {
      const float *got = b->final + (q * (nb + 1) + k) * 16;
      ASSERT_MAT_BITS(got, fin + 16 * k, "%s: final pose %zu slot %zu of %zu (P=%zu)", what, q, k, nb, b->p);
    }
    if (b->absolute != NULL)
      for (size_t k = 0; k < nb; k++)
        ASSERT_MAT_BITS(b->absolute + (q * nb + k) * 16, abs_ + 16 * k, "%s: absolute pose %zu slot %zu (P=%zu)", what,
                        q, k, b->p);
  }
  free(locals);
  free(scratch);
  free(fin);
  free(abs_);
}

/* The float32 kernel's documented tolerance, for precision FAST only. */
#define FAST_TOL 1e-5

/* Every pose's final (and absolute) within FAST_TOL of sk_skeleton_evaluate. */
static void check_batch_close(const batch *b, const char *what) {
  const size_t nb = b->nb;
  float *locals = malloc(16 * nb * sizeof *locals), *scratch = malloc(16 * nb * sizeof *scratch);
  float *fin = malloc(16 * (nb + 1) * sizeof *fin), *abs_ = malloc(16 * nb * sizeof *abs_);
  for (size_t q = 0; q < b->p; q++) {
    pose_locals(b, q, locals);
    sk_skeleton_evaluate(b->s, locals, b->job.initial_skin, scratch, fin, abs_, NULL);
    for (size_t k = 0; k <= nb; k++)
      ck_assert_msg(sk_test_mat_close(b->final + (q * (nb + 1) + k) * 16, fin + 16 * k, FAST_TOL),
                    "%s fast: final pose %zu slot %zu (P=%zu)", what, q, k, b->p);
    if (b->absolute != NULL)
      for (size_t k = 0; k < nb; k++)
        ck_assert_msg(sk_test_mat_close(b->absolute + (q * nb + k) * 16, abs_ + 16 * k, FAST_TOL),
                      "%s fast: absolute pose %zu slot %zu (P=%zu)", what, q, k, b->p);
  }
  free(locals);
  free(scratch);
  free(fin);
  free(abs_);
}

/* ---- validity --------------------------------------------------------------- */

START_TEST(validate_rejects_each_bad_field) {
  rng_seed(1);
  batch b;
  batch_init(&b, rand_skeleton(5, SHAPE_RANDOM, false), 3, false, false, false);
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_kernel_validate(&b.job, &e), 0);
  ck_assert_int_eq(sk_kernel_validate(NULL, NULL), SK_EINVAL);

  sk_kernel_job j = b.job;
  j.rig = NULL;
  EXPECT(SK_EINVAL, "/rig");
  j.poses = 0;
  EXPECT(SK_EINVAL, "/poses");
  j.pose_stride = 2;
  EXPECT(SK_EINVAL, "/pose_stride");
  j.mode = NULL;
  EXPECT(SK_EINVAL, "/mode");
  j.offset = NULL;
  EXPECT(SK_EINVAL, "/offset");
  j.input = NULL;
  EXPECT(SK_EINVAL, "/input");
  j.final = NULL;
  EXPECT(SK_EINVAL, "/final");
  j.path = "neon";
  EXPECT(SK_EINVAL, "/path");
  j.stream = 7;
  EXPECT(SK_EINVAL, "/stream");
  j.precision = 2;
  EXPECT(SK_EINVAL, "/precision");
  j.input_floats = b.job.input_floats - 1;
  EXPECT(SK_EINVAL, "/offset/4");
  j.poses = SIZE_MAX / 2;
  j.pose_stride = SIZE_MAX / 2;
  EXPECT(SK_ETOOBIG, "/poses");
  uint8_t bad[5];
  memcpy(bad, b.mode, 5);
  bad[3] = 5; /* 3 is SK_KERNEL_TRS64 now; 4 and up are unknown */
  j.mode = bad;
  EXPECT(SK_EINVAL, "/mode/3");
  ck_assert_str_eq(e.text, "unknown mode 5 for bone 3");
  batch_close(&b);
}
END_TEST

START_TEST(path_names) {
  ck_assert_int_eq(sk_kernel_single_on("neon", NULL, NULL, NULL, NULL, NULL), SK_EINVAL);
  ck_assert_int_eq(sk_kernel_path_check("scalar"), 0);
  ck_assert_int_eq(sk_kernel_path_check("neon"), SK_EINVAL);
  ck_assert_int_eq(sk_kernel_path_check(NULL), SK_EINVAL);
  ck_assert_int_eq(sk_kernel_path_check(sk_kernel_path()), 0);
  for (size_t i = 0; i < 4; i++) {
    const int rc = sk_kernel_path_check(all_paths[i]);
    ck_assert(rc == 0 || rc == SK_EUNSUPPORTED);
  }
}
END_TEST

/* ---- simd_vs_ref ------------------------------------------------------------ */

/* P = 1..67 on every path, the three modes mixed per bone, slots permuted
 * with some -1, half the batches with an initial skin and/or absolute. */
START_TEST(random_batches_every_path) {
  for (size_t pi = 0; pi < 4; pi++) {
    if (sk_kernel_path_check(all_paths[pi]) != 0)
      continue;
    rng_seed(100 + pi);
    for (size_t p = 1; p <= 67; p++) {
      batch b;
      const size_t nb = 1 + rng_below(40);
      batch_init(&b, rand_skeleton(nb, SHAPE_RANDOM, rng_u64() % 3 != 0), p, false, rng_u64() % 2, rng_u64() % 2);
      b.job.path = all_paths[pi];
      b.job.stream = (int)(rng_u64() % 3);
      ck_assert_int_eq(sk_kernel_validate(&b.job, NULL), 0);
      sk_kernel_run(&b.job, 0, p);
      check_batch(&b, all_paths[pi]);
      batch_close(&b);
    }
  }
}
END_TEST

/* Inverse binds whose column 3 carries signed zeros (as inversion leaves
 * them), a projective column 3 with entry 15 = 1, or entry 15 != 1: the
 * kernel's fast final takes column 3 of the final from a per-bone constant
 * when entry 15 is 1. Rows with three negative entries and a -0 give a -0
 * there, which the constant must keep. Every path, every pattern, against
 * the core. */
START_TEST(inverse_bind_column3_patterns) {
  static const float neg0 = -0.0f;
  for (size_t pi = 0; pi < 4; pi++) {
    if (sk_kernel_path_check(all_paths[pi]) != 0)
      continue;
    rng_seed(900 + pi);
    for (size_t it = 0; it < 12; it++) {
      sk_skeleton *s = rand_skeleton(1 + rng_below(30), SHAPE_RANDOM, rng_u64() % 2);
      for (size_t i = 0; i < s->count; i++) {
        float *m = s->bones[i].abs_inv_bind;
        switch (rng_below(5)) {
        case 0: /* bitwise affine */
          m[3] = m[7] = m[11] = 0.0f, m[15] = 1.0f;
          break;
        case 1: /* signed zeros */
          m[3] = neg0, m[7] = rng_u64() % 2 ? neg0 : 0.0f, m[11] = neg0, m[15] = 1.0f;
          break;
        case 2: /* rows summing to -0 in column 3 */
          for (int k = 0; k < 12; k++)
            if (k % 4 != 3)
              m[k] = -fabsf(m[k]) - 0.125f;
          m[3] = m[7] = m[11] = neg0, m[15] = 1.0f;
          break;
        case 3: /* projective column, entry 15 still 1 */
          m[3] = 0.25f, m[7] = neg0, m[11] = -0.125f, m[15] = 1.0f;
          break;
        default: /* entry 15 not 1: the general product */
          m[3] = neg0, m[7] = m[11] = 0.0f, m[15] = 1.5f;
          break;
        }
      }
      const size_t p = 1 + rng_below(67);
      batch b;
      batch_init(&b, s, p, false, rng_u64() % 2, rng_u64() % 2);
      b.job.path = all_paths[pi];
      ck_assert_int_eq(sk_kernel_validate(&b.job, NULL), 0);
      sk_kernel_run(&b.job, 0, p);
      check_batch(&b, all_paths[pi]);
      batch_close(&b);
    }
  }
}
END_TEST

/* precision FAST, the opt-in float32 kernel: every path within its
 * documented tolerance of the core (not exact; the default is). */
START_TEST(fast_precision_within_tolerance) {
  for (size_t pi = 0; pi < 4; pi++) {
    if (sk_kernel_path_check(all_paths[pi]) != 0)
      continue;
    rng_seed(900 + pi);
    for (size_t p = 1; p <= 67; p += 3) {
      batch b;
      batch_init(&b, rand_skeleton(1 + rng_below(40), SHAPE_RANDOM, rng_u64() % 3 != 0), p, false, rng_u64() % 2,
                 rng_u64() % 2);
      b.job.path = all_paths[pi];
      b.job.precision = SK_KERNEL_PRECISION_FAST;
      b.job.stream = (int)(rng_u64() % 3);
      ck_assert_int_eq(sk_kernel_validate(&b.job, NULL), 0);
      sk_kernel_run(&b.job, 0, p);
      check_batch_close(&b, all_paths[pi]);
      batch_close(&b);
    }
  }
}
END_TEST

/* Deep hierarchies: rounding accumulates over 300 products. */
START_TEST(chains_of_300_bones) {
  for (size_t pi = 0; pi < 4; pi++) {
    if (sk_kernel_path_check(all_paths[pi]) != 0)
      continue;
    rng_seed(200 + pi);
    batch b;
    batch_init(&b, rand_skeleton(300, SHAPE_CHAIN, true), 37, true, true, true);
    b.job.path = all_paths[pi];
    sk_kernel_run(&b.job, 0, b.p);
    check_batch(&b, all_paths[pi]);
    batch_close(&b);
  }
}
END_TEST

START_TEST(single_pose_path) {
  rng_seed(300);
  for (int it = 0; it < 200; it++) {
    sk_skeleton *s = rand_skeleton(1 + rng_below(60), it % 10 == 0 ? SHAPE_CHAIN : SHAPE_RANDOM, it % 2 == 0);
    sk_rig *r;
    ck_assert_int_eq(sk_rig_create(s, &r), 0);
    const size_t nb = s->count;
    float *locals = malloc(16 * nb * sizeof *locals), *scratch = malloc(16 * nb * sizeof *scratch);
    float *want = malloc(16 * (nb + 1) * sizeof *want), *want_abs = malloc(16 * nb * sizeof *want_abs);
    float *got = malloc(16 * (nb + 1) * sizeof *got), *got_abs = malloc(16 * nb * sizeof *got_abs);
    for (size_t i = 0; i < nb; i++)
      rand_matrix(locals + 16 * i, 0.7, 1.3, 1, 0.05);
    float init[16];
    rand_matrix(init, 0.8, 1.2, 0.5, 0.02);
    const float *ini = it % 3 == 0 ? init : NULL;
    sk_skeleton_evaluate(s, locals, ini, scratch, want, want_abs, NULL);
    /* Every product this CPU has (AVX-512, cglm's AVX, plain), then the
     * dispatching entry point. */
    for (size_t pi = 0; pi <= 4; pi++) {
      /* with and without absolute matrices: final-only has its own walk */
      for (int with_abs = 0; with_abs < 2; with_abs++) {
        memset(got, 0x7f, 16 * (nb + 1) * sizeof *got);
        memset(got_abs, 0x7f, 16 * nb * sizeof *got_abs);
        float *ga = with_abs ? got_abs : NULL;
        if (pi == 4)
          sk_kernel_single(r, locals, ini, got, ga);
        else if (sk_kernel_single_on(all_paths[pi], r, locals, ini, got, ga) != 0)
          continue;
        for (size_t k = 0; k <= nb; k++)
          ASSERT_MAT_BITS(got + 16 * k, want + 16 * k, "single %zu: final slot %zu", pi, k);
        for (size_t k = 0; with_abs && k < nb; k++)
          ASSERT_MAT_BITS(got_abs + 16 * k, want_abs + 16 * k, "single %zu: absolute slot %zu", pi, k);
      }
    }
    free(locals);
    free(scratch);
    free(want);
    free(want_abs);
    free(got);
    free(got_abs);
    sk_rig_destroy(r);
    sk_skeleton_destroy(s);
  }
}
END_TEST

/* A wide, deep tree: the rig's scratch slots are reused along ~11 levels
 * with 1024 leaves; every path and the single-pose path agree with the core. */
START_TEST(binary_tree_of_2047_bones) {
  for (size_t pi = 0; pi < 4; pi++) {
    if (sk_kernel_path_check(all_paths[pi]) != 0)
      continue;
    rng_seed(250 + pi);
    batch b;
    batch_init(&b, rand_skeleton(2047, SHAPE_BINARY, pi % 2 == 0), 19, false, pi >= 2, pi % 2 == 1);
    b.job.path = all_paths[pi];
    sk_kernel_run(&b.job, 0, b.p);
    check_batch(&b, all_paths[pi]);
    batch_close(&b);
  }
}
END_TEST

/* Streaming stores need aligned outputs: a misaligned buffer falls back to
 * normal stores instead of faulting. */
START_TEST(stream_with_misaligned_output) {
  rng_seed(260);
  batch b;
  batch_init(&b, rand_skeleton(9, SHAPE_RANDOM, true), 21, false, false, false);
  const size_t floats = b.p * (b.nb + 1) * 16;
  float *buf = malloc((floats + 4) * sizeof *buf), *aligned = b.final;
  b.final = buf + 1; /* 4-byte aligned only */
  b.job.final = b.final;
  b.job.stream = SK_KERNEL_STREAM_ALWAYS;
  for (size_t pi = 0; pi < 4; pi++) {
    if (sk_kernel_path_check(all_paths[pi]) != 0)
      continue;
    b.job.path = all_paths[pi];
    memset(buf, 0x7f, (floats + 4) * sizeof *buf);
    sk_kernel_run(&b.job, 0, b.p);
    check_batch(&b, all_paths[pi]);
    uint32_t before, after; /* nothing written before or after */
    memcpy(&before, &buf[0], sizeof before);
    memcpy(&after, &buf[floats + 1], sizeof after);
    ck_assert_uint_eq(before, 0x7f7f7f7fu);
    ck_assert_uint_eq(after, 0x7f7f7f7fu);
  }
  b.final = aligned;
  free(buf);
  batch_close(&b);
}
END_TEST

START_TEST(pose_stride_is_odd_lines) {
  for (size_t p = 1; p < 5000; p += 7) {
    const size_t st = sk_kernel_pose_stride(p);
    ck_assert_uint_ge(st, p);
    ck_assert_uint_eq(st % 16, 0);
    ck_assert_uint_eq((st / 16) % 2, 1);
    ck_assert_uint_le(st, p + 32);
  }
}
END_TEST

/* Splitting a batch across threads or calls changes nothing, bit for bit. */
START_TEST(thread_split_is_bit_exact) {
  rng_seed(400);
  for (size_t pi = 0; pi < 4; pi++) {
    if (sk_kernel_path_check(all_paths[pi]) != 0)
      continue;
    batch b;
    batch_init(&b, rand_skeleton(33, SHAPE_RANDOM, true), 203, false, true, true);
    b.job.path = all_paths[pi];
    const size_t fbytes = b.p * (b.nb + 1) * 16 * sizeof(float), abytes = b.p * b.nb * 16 * sizeof(float);
    sk_kernel_run(&b.job, 0, b.p);
    float *f1 = malloc(fbytes), *a1 = malloc(abytes);
    memcpy(f1, b.final, fbytes);
    memcpy(a1, b.absolute, abytes);
    for (unsigned n = 2; n <= 5; n++) {
      memset(b.final, 0, fbytes);
      memset(b.absolute, 0, abytes);
      ck_assert_int_eq(sk_kernel_run_threads(&b.job, n), 0);
      ck_assert(memcmp(f1, b.final, fbytes) == 0);
      ck_assert(memcmp(a1, b.absolute, abytes) == 0);
    }
    memset(b.final, 0, fbytes);
    sk_kernel_run(&b.job, 0, 48);
    sk_kernel_run(&b.job, 48, 64);
    sk_kernel_run(&b.job, 64, b.p);
    ck_assert(memcmp(f1, b.final, fbytes) == 0);
    check_batch(&b, all_paths[pi]);
    free(f1);
    free(a1);
    batch_close(&b);
  }
}
END_TEST

/* ---- lifecycle -------------------------------------------------------------- */

START_TEST(rig_outlives_its_skeleton) {
  rng_seed(500);
  sk_skeleton *s = rand_skeleton(20, SHAPE_RANDOM, true);
  sk_skeleton *copy;
  ck_assert_int_eq(sk_skeleton_clone(s, &copy), 0);
  sk_rig *r;
  ck_assert_int_eq(sk_rig_create(s, &r), 0);
  sk_skeleton_destroy(s);
  float locals[20 * 16], scratch[20 * 16], want[21 * 16], got[21 * 16];
  for (size_t i = 0; i < 20; i++)
    memcpy(locals + 16 * i, copy->bones[i].local.matrix, sizeof copy->bones[i].local.matrix);
  sk_skeleton_evaluate(copy, locals, NULL, scratch, want, NULL, NULL);
  sk_kernel_single(r, locals, NULL, got, NULL);
  for (size_t k = 0; k <= 20; k++)
    ASSERT_MAT_BITS(got + 16 * k, want + 16 * k, "slot %zu", k);
  sk_rig_destroy(r);
  sk_rig_destroy(NULL);
  sk_skeleton_destroy(copy);
  ck_assert_int_eq(sk_rig_create(NULL, &r), SK_EINVAL);
}
END_TEST

START_TEST(one_bone_and_empty_ranges) {
  rng_seed(600);
  batch b;
  batch_init(&b, rand_skeleton(1, SHAPE_RANDOM, false), 5, false, true, false);
  sk_kernel_run(&b.job, 2, 2); /* nothing */
  sk_kernel_run_threads(&b.job, 8); /* too small to split */
  check_batch(&b, "best");
  batch_close(&b);
}
END_TEST

static Suite *kernel_suite(void) {
  Suite *s = suite_create("sk_kernel");
  TCase *tc = tcase_create("validity");
  tcase_add_test(tc, validate_rejects_each_bad_field);
  tcase_add_test(tc, path_names);
  tcase_add_test(tc, pose_stride_is_odd_lines);
  suite_add_tcase(s, tc);
  tc = tcase_create("simd_vs_ref");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, random_batches_every_path);
  tcase_add_test(tc, chains_of_300_bones);
  tcase_add_test(tc, binary_tree_of_2047_bones);
  tcase_add_test(tc, stream_with_misaligned_output);
  tcase_add_test(tc, single_pose_path);
  tcase_add_test(tc, thread_split_is_bit_exact);
  tcase_add_test(tc, fast_precision_within_tolerance);
  tcase_add_test(tc, inverse_bind_column3_patterns);
  suite_add_tcase(s, tc);
  tc = tcase_create("lifecycle");
  tcase_add_test(tc, rig_outlives_its_skeleton);
  tcase_add_test(tc, one_bone_and_empty_ranges);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sk_test_run(kernel_suite()); }
