/* The batch kernel against the scalar core: every SIMD path this CPU has,
 * random skeletons and poses, byte for byte (sk_kernel.h: the kernel is
 * exact, not close). */
#include <stdint.h>

#include "sk_kernel.h"
#include "sk_mat.h"
#include "sk_skeleton.h"
#include "sk_testutil.h"

/* Byte-identity of one matrix, with both printed when it fails. */
#define ASSERT_MAT_BITS(got, want, ...)                                                                 \
  do {                                                                                                   \
    const float *g_ = (got), *w_ = (want);                                                               \
    if (memcmp(g_, w_, 16 * sizeof(float)) != 0) {                                                       \
      for (int k_ = 0; k_ < 16; k_++)                                                                    \
        fprintf(stderr, "  [%2d] got %.9g (%08x) want %.9g (%08x)\n", k_, g_[k_], float_bits(g_[k_]), w_[k_], \
                float_bits(w_[k_]));                                                                     \
      ck_abort_msg(__VA_ARGS__);                                                                         \
    }                                                                                                    \
  } while (0)

static unsigned float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static const char *const all_paths[] = {"avx512", "avx2", "sse2", "scalar"};

/* xorshift64*: fixed seeds keep failures reproducible. */
static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ull + 1; }
static uint64_t rng_u64(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
static double rng_unit(void) { return (double)(rng_u64() >> 11) / 9007199254740992.0; }
static double rng_range(double lo, double hi) { return lo + (hi - lo) * rng_unit(); }
static size_t rng_below(size_t n) { return (size_t)(rng_u64() % n); }

/* A random transform: scale magnitude in [lo, hi], sign flipped on some
 * axes (negative determinants), a quaternion of norm near 1 (never
 * normalised by Babylon, so a non-unit one scales), translation in ±t. */
static void rand_trs(double s[3], double q[4], double p[3], double lo, double hi, double t, double qdev) {
  for (int k = 0; k < 3; k++) {
    s[k] = rng_range(lo, hi) * (rng_u64() % 5 == 0 ? -1 : 1);
    p[k] = rng_range(-t, t);
  }
  double n = 0;
  for (int k = 0; k < 4; k++) {
    q[k] = rng_range(-1, 1);
    n += q[k] * q[k];
  }
  n = sqrt(n) / rng_range(1 - qdev, 1 + qdev);
  for (int k = 0; k < 4; k++)
    q[k] /= n;
}

static void rand_matrix(float m[16], double lo, double hi, double t, double qdev) {
  double s[3], q[4], p[3];
  rand_trs(s, q, p, lo, hi, t, qdev);
  sk_mat_compose(s, q, p, m);
}

enum { SHAPE_RANDOM, SHAPE_CHAIN, SHAPE_BINARY };

/* A random skeleton of `n` bones: input order shuffled so sorting matters,
 * a random tree, a chain or a complete binary tree; random slots with
 * some -1 when `permute`. */
static sk_skeleton *rand_skeleton(size_t n, int shape, bool permute) {
  const bool chain = shape == SHAPE_CHAIN;
  sk_bone_desc *d = calloc(n, sizeof *d);
  char (*names)[24] = calloc(n, sizeof *names);
  float(*bind)[16] = calloc(n, sizeof *bind);
  size_t *perm = malloc(n * sizeof *perm);   /* input position of logical bone i */
  int64_t *slot = malloc(n * sizeof *slot);
  for (size_t i = 0; i < n; i++)
    perm[i] = slot[i] = (int64_t)i;
  for (size_t i = n; i > 1; i--) {
    const size_t j = rng_below(i), t = perm[i - 1];
    perm[i - 1] = perm[j];
    perm[j] = t;
  }
  if (permute) {
    for (size_t i = n; i > 1; i--) {
      const size_t j = rng_below(i);
      const int64_t t = slot[i - 1];
      slot[i - 1] = slot[j];
      slot[j] = t;
    }
    for (size_t i = 0; i < n; i++)
      if (rng_u64() % 6 == 0)
        slot[i] = -1;
  }
  for (size_t i = 0; i < n; i++)
    snprintf(names[i], sizeof names[i], "b%zu", i);
  for (size_t i = 0; i < n; i++) {
    sk_bone_desc *b = &d[perm[i]];
    b->name = names[i];
    if (shape == SHAPE_BINARY && i > 0)
      b->parent = names[(i - 1) / 2];
    else if (i > 0 && (chain || rng_u64() % 8 != 0)) /* a few extra roots */
      b->parent = names[chain ? i - 1 : rng_below(i)];
    if (chain) {
      rand_matrix(b->local, 0.99, 1.01, 0.02, 1e-3);
      rand_matrix(bind[i], 0.99, 1.01, 0.02, 1e-3);
    } else {
      rand_matrix(b->local, 0.7, 1.3, 1, 0.05);
      rand_matrix(bind[i], 0.7, 1.3, 1, 0.05);
    }
    b->bind = bind[i];
    b->has_index = permute;
    b->index = slot[perm[i]];
  }
  sk_skeleton *s = NULL;
  sk_error e = {0};
  ck_assert_int_eq(sk_skeleton_create(d, n, "/bones", &s, &e), 0);
  free(d);
  free(names);
  free(bind);
  free(perm);
  free(slot);
  return s;
}

/* One random batch for `s` and everything needed to check it. */
typedef struct batch {
  sk_skeleton *s;
  sk_rig *rig;
  sk_kernel_job job;
  uint8_t *mode;
  size_t *offset;
  float *input, *final, *absolute, initial[16];
  size_t nb, p;
} batch;

static void batch_init(batch *b, sk_skeleton *s, size_t p, bool chain, bool want_abs, bool want_init) {
  memset(b, 0, sizeof *b);
  b->s = s;
  b->nb = s->count;
  b->p = p;
  ck_assert_int_eq(sk_rig_create(s, &b->rig), 0);
  ck_assert_uint_eq(sk_rig_bones(b->rig), b->nb);
  const size_t stride = p + rng_below(3); /* strides not multiple of the lanes too */
  b->mode = malloc(b->nb);
  b->offset = malloc(b->nb * sizeof *b->offset);
  size_t total = 0;
  for (size_t i = 0; i < b->nb; i++) {
    b->mode[i] = (uint8_t)(rng_u64() % 3);
    b->offset[i] = total;
    total += b->mode[i] == SK_KERNEL_CONST ? 16 : b->mode[i] == SK_KERNEL_TRS ? 10 * stride : 16 * stride;
  }
  /* Exactly sized: a kernel that reads past a row end trips the sanitizers. */
  b->input = malloc(total * sizeof *b->input);
  for (size_t i = 0; i < b->nb; i++) {
    float *in = b->input + b->offset[i];
    for (size_t q = 0; q < stride; q++) {
      double sc[3], qu[4], tr[3];
      float m[16];
      if (chain)
        rand_trs(sc, qu, tr, 0.99, 1.01, 0.02, 1e-3);
      else
        rand_trs(sc, qu, tr, 0.7, 1.3, 1, 0.05);
      sk_mat_compose(sc, qu, tr, m);
      if (b->mode[i] == SK_KERNEL_CONST) {
        if (q == 0)
          memcpy(in, m, sizeof m);
      } else if (b->mode[i] == SK_KERNEL_TRS) {
        const double v[10] = {tr[0], tr[1], tr[2], qu[0], qu[1], qu[2], qu[3], sc[0], sc[1], sc[2]};
        for (int r = 0; r < 10; r++)
          in[r * stride + q] = (float)v[r];
      } else {
        if (!chain && rng_u64() % 4 == 0) /* a projective column: the general product */
          m[3] = (float)rng_range(-0.1, 0.1), m[7] = (float)rng_range(-0.1, 0.1);
        for (int r = 0; r < 16; r++)
          in[r * stride + q] = m[r];
      }
    }
  }
  if (want_init) {
    rand_matrix(b->initial, 0.8, 1.2, 0.5, 0.02);
    if (rng_u64() % 3 == 0)
      b->initial[11] = 0.05f; /* not affine */
  }
  b->final = aligned_alloc(64, ((p * (b->nb + 1) * 16 * sizeof(float)) + 63) / 64 * 64);
  memset(b->final, 0x7f, p * (b->nb + 1) * 16 * sizeof(float)); /* garbage the kernel must overwrite */
  if (want_abs) {
    b->absolute = aligned_alloc(64, ((p * b->nb * 16 * sizeof(float)) + 63) / 64 * 64);
    memset(b->absolute, 0x7f, p * b->nb * 16 * sizeof(float));
  }
  sk_kernel_job *j = &b->job;
  j->rig = b->rig;
  j->poses = p;
  j->pose_stride = stride;
  j->mode = b->mode;
  j->offset = b->offset;
  j->input = b->input;
  j->input_floats = total;
  j->initial_skin = want_init ? b->initial : NULL;
  j->final = b->final;
  j->absolute = b->absolute;
}

static void batch_close(batch *b) {
  sk_rig_destroy(b->rig);
  sk_skeleton_destroy(b->s);
  free(b->mode);
  free(b->offset);
  free(b->input);
  free(b->final);
  free(b->absolute);
}

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

/* In the validation tests: job j (a copy of b.job with one field broken)
 * must fail with `code` naming `ptr`; then j is reset for the next case. */
#define EXPECT(code, ptr)                                 \
  do {                                                    \
    sk_error_clear(&e);                                   \
    ck_assert_int_eq(sk_kernel_validate(&j, &e), (code)); \
    ck_assert_str_eq(e.pointer, (ptr));                   \
    j = b.job;                                            \
  } while (0)

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
  tcase_add_test(tc, blocked_layout_matches_rows);
  tcase_add_test(tc, blocked_layout_validation);
  tcase_add_test(tc, fast_precision_within_tolerance);
  tcase_add_test(tc, trs64_every_path);
  tcase_add_test(tc, inverse_bind_column3_patterns);
  suite_add_tcase(s, tc);
  tc = tcase_create("lifecycle");
  tcase_add_test(tc, rig_outlives_its_skeleton);
  tcase_add_test(tc, one_bone_and_empty_ranges);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sk_test_run(kernel_suite()); }
