/* Random skeletons and batches for the batch kernel's suites
 * (check_sk_kernel.c, check_sk_kernel_inputs.c): xorshift with fixed
 * seeds, skeletons of every shape, batches of the three modes mixed per
 * bone in the row layout, the byte-identity assertion and the validation
 * tests' EXPECT. Only those two suites include it, so its names stay as
 * short as they were in one file. */
#ifndef SK_KERNELBATCH_H
#define SK_KERNELBATCH_H

#include <stdbool.h>
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

static inline unsigned float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static const char *const all_paths[] = {"avx512", "avx2", "sse2", "scalar"};

/* xorshift64*: fixed seeds keep failures reproducible. */
static uint64_t rng_state;
static inline void rng_seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ull + 1; }
static inline uint64_t rng_u64(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
static inline double rng_unit(void) { return (double)(rng_u64() >> 11) / 9007199254740992.0; }
static inline double rng_range(double lo, double hi) { return lo + (hi - lo) * rng_unit(); }
static inline size_t rng_below(size_t n) { return (size_t)(rng_u64() % n); }

/* A random transform: scale magnitude in [lo, hi], sign flipped on some
 * axes (negative determinants), a quaternion of norm near 1 (never
 * normalised by Babylon, so a non-unit one scales), translation in ±t. */
static inline void rand_trs(double s[3], double q[4], double p[3], double lo, double hi, double t, double qdev) {
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

static inline void rand_matrix(float m[16], double lo, double hi, double t, double qdev) {
  double s[3], q[4], p[3];
  rand_trs(s, q, p, lo, hi, t, qdev);
  sk_mat_compose(s, q, p, m);
}

enum { SHAPE_RANDOM, SHAPE_CHAIN, SHAPE_BINARY };

/* A random skeleton of `n` bones: input order shuffled so sorting matters,
 * a random tree, a chain or a complete binary tree; random slots with
 * some -1 when `permute`. */
static inline sk_skeleton *rand_skeleton(size_t n, int shape, bool permute) {
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

static inline void batch_init(batch *b, sk_skeleton *s, size_t p, bool chain, bool want_abs, bool want_init) {
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

static inline void batch_close(batch *b) {
  sk_rig_destroy(b->rig);
  sk_skeleton_destroy(b->s);
  free(b->mode);
  free(b->offset);
  free(b->input);
  free(b->final);
  free(b->absolute);
}

/* In the validation tests: job j (a copy of b.job with one field broken)
 * must fail with `code` naming `ptr`; then j is reset for the next case. */
#define EXPECT(code, ptr)                                 \
  do {                                                    \
    sk_error_clear(&e);                                   \
    ck_assert_int_eq(sk_kernel_validate(&j, &e), (code)); \
    ck_assert_str_eq(e.pointer, (ptr));                   \
    j = b.job;                                            \
  } while (0)

#endif
