/* The batch kernel's other inputs: the blocked layout against the row
 * layout, and TRS64 (double TRS composed in the kernel) against the scalar
 * core, on every SIMD path this CPU has, byte for byte. The row layout
 * against the core, validation and lifecycle are check_sk_kernel.c. */
#include <stdint.h>

#include "sk_kernelbatch.h"

/* ---- TRS64 ------------------------------------------------------------------ */

/* TRS64: double TRS (not float32 values) composed in the kernel give the
 * core's compose of the same doubles, mixed with the other modes, in both
 * layouts, with initial skins and absolute outputs. */
START_TEST(trs64_every_path) {
  for (size_t pi = 0; pi < 4; pi++) {
    if (sk_kernel_path_check(all_paths[pi]) != 0)
      continue;
    rng_seed(950 + pi);
    for (size_t p = 1; p <= 67; p += 2) {
      sk_skeleton *s = rand_skeleton(1 + rng_below(30), SHAPE_RANDOM, rng_u64() % 2);
      const size_t nb = s->count;
      sk_rig *rig;
      ck_assert_int_eq(sk_rig_create(s, &rig), 0);
      uint8_t *mode = malloc(nb);
      size_t *off = malloc(nb * sizeof *off), ps, bs;
      for (size_t b = 0; b < nb; b++)
        mode[b] = rng_u64() % 4 == 0 ? (uint8_t)(rng_u64() % 3) : SK_KERNEL_TRS64;
      const bool blocked = rng_u64() % 2;
      size_t elems;
      if (blocked)
        elems = sk_kernel_blocked_layout(mode, nb, p, off, &ps, &bs);
      else {
        ps = p + rng_below(3), bs = 0, elems = 0;
        for (size_t b = 0; b < nb; b++) {
          off[b] = elems;
          elems += mode[b] == SK_KERNEL_CONST ? 16 : mode[b] == SK_KERNEL_MATRIX ? 16 * ps : 10 * ps;
        }
      }
      float *in = calloc(elems, sizeof *in);
      double *in64 = calloc(elems, sizeof *in64);
      float *locals = malloc(p * 16 * nb * sizeof *locals);
      for (size_t b = 0; b < nb; b++)
        for (size_t q = 0; q < p; q++) {
          double sc[3], qu[4], tr[3];
          rand_trs(sc, qu, tr, 0.7, 1.3, 1, 0.05);
          const double v[10] = {tr[0], tr[1], tr[2], qu[0], qu[1], qu[2], qu[3], sc[0], sc[1], sc[2]};
          float m[16], *l = locals + (q * nb + b) * 16;
          sk_mat_compose(sc, qu, tr, m);
          const size_t at = off[b] + (bs != 0 ? q / 16 * bs + q % 16 : q);
          if (mode[b] == SK_KERNEL_CONST) {
            if (q == 0)
              memcpy(in + off[b], m, sizeof m);
            memcpy(l, in + off[b], sizeof m);
          } else if (mode[b] == SK_KERNEL_MATRIX) {
            for (int r = 0; r < 16; r++)
              in[at + r * ps] = m[r];
            memcpy(l, m, sizeof m);
          } else if (mode[b] == SK_KERNEL_TRS) {
            for (int r = 0; r < 10; r++)
              in[at + r * ps] = (float)v[r];
            const double t32[3] = {in[at], in[at + ps], in[at + 2 * ps]};
            const double q32[4] = {in[at + 3 * ps], in[at + 4 * ps], in[at + 5 * ps], in[at + 6 * ps]};
            const double s32[3] = {in[at + 7 * ps], in[at + 8 * ps], in[at + 9 * ps]};
            sk_mat_compose(s32, q32, t32, l);
          } else {
            for (int r = 0; r < 10; r++)
              in64[at + r * ps] = v[r];
            memcpy(l, m, sizeof m);
          }
        }
      float init[16];
      rand_matrix(init, 0.8, 1.2, 0.5, 0.02);
      const bool with_init = rng_u64() % 2, with_abs = rng_u64() % 2;
      float *fin = aligned_alloc(64, (p * 16 * (nb + 1) * sizeof(float) + 63) / 64 * 64);
      float *abs_ = aligned_alloc(64, (p * 16 * nb * sizeof(float) + 63) / 64 * 64);
      sk_kernel_job j = {.rig = rig, .poses = p, .pose_stride = ps, .block_stride = bs, .mode = mode, .offset = off,
                         .input = in, .input_floats = elems, .input64 = in64, .input64_doubles = elems,
                         .initial_skin = with_init ? init : NULL, .final = fin, .absolute = with_abs ? abs_ : NULL,
                         .path = all_paths[pi]};
      ck_assert_int_eq(sk_kernel_validate(&j, NULL), 0);
      sk_kernel_run(&j, 0, p);
      float *scratch = malloc(16 * nb * sizeof *scratch), *wf = malloc(16 * (nb + 1) * sizeof *wf);
      float *wa = malloc(16 * nb * sizeof *wa);
      for (size_t q = 0; q < p; q++) {
        sk_skeleton_evaluate(s, locals + q * nb * 16, j.initial_skin, scratch, wf, wa, NULL);
        for (size_t k = 0; k <= nb; k++)
          ASSERT_MAT_BITS(fin + (q * (nb + 1) + k) * 16, wf + 16 * k, "%s TRS64: final pose %zu slot %zu (P=%zu)",
                          all_paths[pi], q, k, p);
        for (size_t k = 0; with_abs && k < nb; k++)
          ASSERT_MAT_BITS(abs_ + (q * nb + k) * 16, wa + 16 * k, "%s TRS64: absolute pose %zu slot %zu", all_paths[pi],
                          q, k);
      }
      /* TRS64 needs input64 and exact precision. */
      sk_error e;
      sk_error_clear(&e);
      sk_kernel_job bad = j;
      bad.input64 = NULL;
      const bool any64 = memchr(mode, SK_KERNEL_TRS64, nb) != NULL;
      ck_assert_int_eq(sk_kernel_validate(&bad, &e), any64 ? SK_EINVAL : 0);
      if (any64)
        ck_assert_str_eq(e.pointer, "/input64");
      bad = j;
      bad.precision = SK_KERNEL_PRECISION_FAST;
      if (any64) {
        sk_error_clear(&e);
        ck_assert_int_eq(sk_kernel_validate(&bad, &e), SK_EINVAL);
        ck_assert_str_eq(e.pointer, "/precision");
      }
      free(scratch);
      free(wf);
      free(wa);
      free(fin);
      free(abs_);
      free(in);
      free(in64);
      free(locals);
      free(mode);
      free(off);
      sk_rig_destroy(rig);
      sk_skeleton_destroy(s);
    }
  }
}
END_TEST

/* ---- blocked layout ---------------------------------------------------------- */

/* Copies a row-layout batch into the blocked layout of
 * sk_kernel_blocked_layout, in a buffer of exactly the floats it asks for
 * (so a read past a block trips the sanitizers), and points the job at it. */
static float *to_blocked(batch *b, size_t **offset_out) {
  size_t *off = malloc(b->nb * sizeof *off), ps, bs;
  const size_t floats = sk_kernel_blocked_layout(b->mode, b->nb, b->p, off, &ps, &bs);
  ck_assert_uint_gt(floats, 0);
  ck_assert_uint_eq(ps, 16);
  float *in = malloc(floats * sizeof *in);
  const size_t st = b->job.pose_stride, lanes = (b->p + 15) / 16 * 16;
  for (size_t i = 0; i < b->nb; i++) {
    const float *src = b->input + b->offset[i];
    if (b->mode[i] == SK_KERNEL_CONST) {
      memcpy(in + off[i], src, 16 * sizeof *in);
      continue;
    }
    const size_t rows = b->mode[i] == SK_KERNEL_TRS ? 10 : 16;
    for (size_t q = 0; q < lanes; q++)
      for (size_t r = 0; r < rows; r++) {
        float *dst = in + off[i] + q / 16 * bs + r * ps + q % 16;
        ck_assert_uint_lt((size_t)(dst - in), floats);
        *dst = q < b->p ? src[r * st + q] : 0.0f; /* padding lanes never read into results */
      }
  }
  b->job.pose_stride = ps;
  b->job.block_stride = bs;
  b->job.offset = off;
  b->job.input = in;
  b->job.input_floats = floats;
  *offset_out = off;
  return in;
}

/* The same batch in both layouts gives the same bits on every path, with
 * the three modes mixed, tails of every length, absolutes and initial skins. */
START_TEST(blocked_layout_matches_rows) {
  for (size_t pi = 0; pi < 4; pi++) {
    if (sk_kernel_path_check(all_paths[pi]) != 0)
      continue;
    rng_seed(700 + pi);
    for (size_t p = 1; p <= 67; p += 3) {
      batch b;
      batch_init(&b, rand_skeleton(1 + rng_below(30), SHAPE_RANDOM, rng_u64() % 2), p, false, rng_u64() % 2,
                 rng_u64() % 2);
      b.job.path = all_paths[pi];
      b.job.stream = (int)(rng_u64() % 3);
      const size_t fbytes = p * (b.nb + 1) * 16 * sizeof(float), abytes = p * b.nb * 16 * sizeof(float);
      sk_kernel_run(&b.job, 0, p);
      float *f1 = malloc(fbytes), *a1 = malloc(abytes);
      memcpy(f1, b.final, fbytes);
      if (b.absolute != NULL)
        memcpy(a1, b.absolute, abytes);
      const sk_kernel_job rows = b.job;
      size_t *off;
      float *in = to_blocked(&b, &off);
      ck_assert_int_eq(sk_kernel_validate(&b.job, NULL), 0);
      memset(b.final, 0x7f, fbytes);
      if (p > 16) { /* split at a block boundary, and across threads */
        sk_kernel_run(&b.job, 0, 16);
        sk_kernel_run(&b.job, 16, p);
      } else
        sk_kernel_run(&b.job, 0, p);
      ck_assert_msg(memcmp(f1, b.final, fbytes) == 0, "%s P=%zu", all_paths[pi], p);
      if (b.absolute != NULL)
        ck_assert(memcmp(a1, b.absolute, abytes) == 0);
      memset(b.final, 0x7f, fbytes);
      ck_assert_int_eq(sk_kernel_run_threads(&b.job, 3), 0);
      ck_assert(memcmp(f1, b.final, fbytes) == 0);
      b.job = rows;
      free(in);
      free(off);
      free(f1);
      free(a1);
      batch_close(&b);
    }
  }
}
END_TEST

START_TEST(blocked_layout_validation) {
  rng_seed(800);
  batch b;
  batch_init(&b, rand_skeleton(6, SHAPE_RANDOM, false), 35, false, false, false);
  /* New modes for the layout (validation only: the values do not matter,
   * so the input is zeros of exactly the size asked for). */
  memset(b.mode, SK_KERNEL_TRS, b.nb);
  b.mode[0] = SK_KERNEL_CONST;
  b.mode[2] = SK_KERNEL_MATRIX;
  size_t *off = malloc(b.nb * sizeof *off), ps0, bs0;
  const size_t floats = sk_kernel_blocked_layout(b.mode, b.nb, b.p, off, &ps0, &bs0);
  float *in = calloc(floats, sizeof *in);
  b.job.pose_stride = ps0;
  b.job.block_stride = bs0;
  b.job.offset = off;
  b.job.input = in;
  b.job.input_floats = floats;
  /* CONST bones first, then each block holds the others back to back. */
  ck_assert_uint_eq(off[0], 0);
  ck_assert_uint_eq(off[1], 16);
  ck_assert_uint_eq(off[2], 16 + 160);
  ck_assert_uint_eq(off[3], 16 + 160 + 256);
  ck_assert_uint_eq(b.job.block_stride, 160 * 4 + 256);
  ck_assert_uint_eq(b.job.input_floats, 16 + 3 * b.job.block_stride);
  sk_error e;
  sk_kernel_job j = b.job;
  ck_assert_int_eq(sk_kernel_validate(&j, &e), 0);
  j.pose_stride = 15;
  EXPECT(SK_EINVAL, "/pose_stride");
  j.block_stride = 15;
  EXPECT(SK_EINVAL, "/block_stride");
  j.input_floats--; /* the last bone's last block is one float short */
  EXPECT(SK_EINVAL, "/offset/5");
  j.poses = 49; /* a fourth block that is not there */
  EXPECT(SK_EINVAL, "/offset/1");
  j.block_stride = SIZE_MAX / 2;
  EXPECT(SK_ETOOBIG, "/block_stride");
  /* Overflow is reported, not wrapped. */
  size_t ps, bs;
  ck_assert_uint_eq(sk_kernel_blocked_layout(b.mode, b.nb, SIZE_MAX - 15, off, &ps, &bs), 0);
  free(in);
  free(off);
  b.job.offset = b.offset;
  batch_close(&b);
}
END_TEST

static Suite *kernel_inputs_suite(void) {
  Suite *s = suite_create("sk_kernel_inputs");
  TCase *tc = tcase_create("simd_vs_ref");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, blocked_layout_matches_rows);
  tcase_add_test(tc, blocked_layout_validation);
  tcase_add_test(tc, trs64_every_path);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sk_test_run(kernel_inputs_suite()); }
