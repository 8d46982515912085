/* The vertex kernel: sk_skin's steps 2-4 in SIMD lanes, one vertex at a
 * time, with the same bytes as the scalar job (sk_skin.c).
 *
 * Exactness, step by step.
 *  - Blend (step 2) is float32 arithmetic in Babylon too: each entry is
 *    float32(b x w) (a product of two float32 values, exact in the double
 *    Babylon computes, rounded once when stored into the Float32Array) and
 *    float32(m + that) (a sum of two float32 values rounded once). IEEE
 *    float32 lanes (mulps, addps) round each once: the same bits, 16
 *    entries in one 512-bit or two 256-bit registers. Never fused: an FMA
 *    would skip the product's rounding. A weight that is not > 0 is
 *    skipped as the scalar job skips it, by a lane mask rather than adding
 *    0 x b (which could turn an entry's -0 into +0, or 0 x inf into NaN),
 *    or, in a run of class c (sk_geom.h: weights > 0 in exactly the
 *    first c slots), by not reading the slots past c: the same adds in
 *    the same slot order, so the same bits. The runs reorder vertices
 *    only within a block; each vertex's arithmetic is its own.
 *  - Transform (step 3) is double arithmetic: rx = ((x m0 + y m4) + z m8)
 *    + m12, rw = 1 / (((x m3 + y m7) + z m11) + m15), then float32(rx x
 *    rw). The four rows are four lanes of doubles (the matrix columns
 *    m0..3, m4..7, m8..11, m12..15 widened), so each lane does its row's
 *    operations in Babylon's order. x m_k is a product of two float32
 *    values, exact in a double, so fma(y, m4, x m0) rounds once where
 *    Babylon's "x m0 + y m4" rounds once (in the add): the same bits, and
 *    the same for z m8. The + m12, the divide and the product by 1/rw stay
 *    separate operations (1/rw is not a float32 value: never fused).
 *    Four vertices at a time share one divide, lane k vertex k's 1 / rw
 *    (a lane's IEEE divide does not depend on its neighbours); where all
 *    four rw are exactly 1 (affine bones whose weights sum to exactly 1
 *    in float32: most vertices), the divide and the products are left
 *    out, since 1 / 1 = 1 and r x 1 = r exactly (a NaN rw compares
 *    unequal and takes the divide).
 *    Normals: the same three lanes without the w row.
 *  - Bounds (step 4): the strict compare per axis in vertex order, as the
 *    scalar job (the first minimum wins among equal values, so -0 and +0
 *    keep the scalar's order). Threads keep it: each range's first strict
 *    minimum, combined in range order with the same strict compare, is the
 *    whole array's first strict minimum.
 *  - Morph (step 1) is the scalar job's code on the range (it is a copy
 *    unless a target has a non-zero influence). */
#define _POSIX_C_SOURCE 200809L
#include "sk_skinv.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "sk_cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define SKV_X86 1
#include <immintrin.h>
#endif

typedef void (*skv_fn)(const sk_geom_prim *p, const float *final, size_t v0, size_t v1, const float *sp, float *dp,
                       const float *sn, float *dn);

#ifdef SKV_X86
/* Step 3 on the blended columns c0..c3 (doubles): the point s to d. */
#define SKV_POINT(c0, c1, c2, c3, s, d)                                                                           \
  do {                                                                                                            \
    const __m256d x_ = _mm256_set1_pd((s)[0]), y_ = _mm256_set1_pd((s)[1]), z_ = _mm256_set1_pd((s)[2]);      \
    /* fused: x_ c0 and y_ c1, z_ c2 are products of two float32 values (exact) */                              \
    const __m256d r_ = _mm256_add_pd(_mm256_fmadd_pd(z_, c2, _mm256_fmadd_pd(y_, c1, _mm256_mul_pd(x_, c0))), c3); \
    const __m256d inv_ = _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_permute4x64_pd(r_, 0xFF));                    \
    const __m128 f_ = _mm256_cvtpd_ps(_mm256_mul_pd(r_, inv_));                                                   \
    _mm_storel_pi((__m64 *)(d), f_);                                                                              \
    _mm_store_ss((d) + 2, _mm_movehl_ps(f_, f_));                                                                 \
  } while (0)

#define SKV_NORMAL(c0, c1, c2, s, d)                                                                              \
  do {                                                                                                            \
    const __m256d x_ = _mm256_set1_pd((s)[0]), y_ = _mm256_set1_pd((s)[1]), z_ = _mm256_set1_pd((s)[2]);      \
    const __m128 f_ = _mm256_cvtpd_ps(_mm256_fmadd_pd(z_, c2, _mm256_fmadd_pd(y_, c1, _mm256_mul_pd(x_, c0))));  \
    _mm_storel_pi((__m64 *)(d), f_);                                                                              \
    _mm_store_ss((d) + 2, _mm_movehl_ps(f_, f_));                                                                 \
  } while (0)

/* Whether [v0, v1) is whole run blocks of a primitive with runs (4 or 8
 * influences: the masked class 0 loops take those). */
static bool has_runs(const sk_geom_prim *p, size_t v0, size_t v1) {
  return p->order != NULL && (p->influences == 4 || p->influences == 8) && v0 % SK_GEOM_RUN_BLOCK == 0 &&
         (v1 % SK_GEOM_RUN_BLOCK == 0 || v1 == p->count);
}

/* The blend of vertex v with K influences (a constant after inlining:
 * the loop unrolls). */
#define SKV_AVX2 __attribute__((target("avx2,fma"))) static inline __attribute__((always_inline))
#define SKV_AVX512 __attribute__((target("avx512f,avx2,fma"))) static inline __attribute__((always_inline))

SKV_AVX2 void blend_avx2(const uint32_t *j, const float *w, const float *final, unsigned K, __m256 *lo, __m256 *hi) {
  const __m256 zero = _mm256_setzero_ps();
  __m256 l = zero, h = zero;
  _Pragma("GCC unroll 8") for (unsigned i = 0; i < K; i++) {
    const __m256 ws = _mm256_set1_ps(w[i]), keep = _mm256_cmp_ps(ws, zero, _CMP_GT_OQ);
    const float *b = final + 16 * (size_t)j[i];
    l = _mm256_blendv_ps(l, _mm256_add_ps(l, _mm256_mul_ps(_mm256_loadu_ps(b), ws)), keep);
    h = _mm256_blendv_ps(h, _mm256_add_ps(h, _mm256_mul_ps(_mm256_loadu_ps(b + 8), ws)), keep);
  }
  *lo = l;
  *hi = h;
}

SKV_AVX512 void blend_avx512(const uint32_t *j, const float *w, const float *final, unsigned K, __m256 *lo,
                             __m256 *hi) {
  const __m512 zero = _mm512_setzero_ps();
  __m512 m = zero;
  _Pragma("GCC unroll 8") for (unsigned i = 0; i < K; i++) {
    const __m512 ws = _mm512_set1_ps(w[i]);
    const __mmask16 keep = _mm512_cmp_ps_mask(ws, zero, _CMP_GT_OQ);
    m = _mm512_mask_add_ps(m, keep, m, _mm512_mul_ps(_mm512_loadu_ps(final + 16 * (size_t)j[i]), ws));
  }
  *lo = _mm512_castps512_ps256(m);
  *hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(m), 1));
}

/* The blend of a vertex whose first K weights are > 0 and the rest not
 * (its class, sk_geom.h): the masked blend with every lane kept, so the
 * same operations in the same order, without the compare and blend. */
SKV_AVX2 void blendu_avx2(const uint32_t *j, const float *w, const float *final, unsigned K, __m256 *lo, __m256 *hi) {
  __m256 l = _mm256_setzero_ps(), h = _mm256_setzero_ps();
  _Pragma("GCC unroll 8") for (unsigned i = 0; i < K; i++) {
    const __m256 ws = _mm256_set1_ps(w[i]);
    const float *b = final + 16 * (size_t)j[i];
    l = _mm256_add_ps(l, _mm256_mul_ps(_mm256_loadu_ps(b), ws));
    h = _mm256_add_ps(h, _mm256_mul_ps(_mm256_loadu_ps(b + 8), ws));
  }
  *lo = l;
  *hi = h;
}

SKV_AVX512 void blendu_avx512(const uint32_t *j, const float *w, const float *final, unsigned K, __m256 *lo,
                              __m256 *hi) {
  __m512 m = _mm512_setzero_ps();
  _Pragma("GCC unroll 8") for (unsigned i = 0; i < K; i++)
    m = _mm512_add_ps(m, _mm512_mul_ps(_mm512_loadu_ps(final + 16 * (size_t)j[i]), _mm512_set1_ps(w[i])));
  *lo = _mm512_castps512_ps256(m);
  *hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(m), 1));
}

/* Vertex v blended by BLEND over K slots (the stride is p->influences). */
#define SKV_VERTEX(BLEND, K, v)                                                                                   \
  do {                                                                                                            \
    __m256 lo, hi;                                                                                                \
    BLEND(p->joints + (v) * p->influences, p->weights + (v) * p->influences, final, (K), &lo, &hi);               \
    const __m256d c0 = _mm256_cvtps_pd(_mm256_castps256_ps128(lo)), c1 = _mm256_cvtps_pd(_mm256_extractf128_ps(lo, 1)); \
    const __m256d c2 = _mm256_cvtps_pd(_mm256_castps256_ps128(hi)), c3 = _mm256_cvtps_pd(_mm256_extractf128_ps(hi, 1)); \
    if (dp != NULL)                                                                                               \
      SKV_POINT(c0, c1, c2, c3, sp + 3 * (v), dp + 3 * (v));                                                      \
    if (dn != NULL)                                                                                               \
      SKV_NORMAL(c0, c1, c2, sn + 3 * (v), dn + 3 * (v));                                                         \
  } while (0)

/* Four vertices (a, b, c, e) blended by BLEND over K slots, their w rows'
 * divides in one: lane k of the divide is vertex k's 1 / rw, the same
 * IEEE double divide as SKV_POINT's (a lane's result does not depend on
 * its neighbours), so the same bits with a quarter of the divides, the
 * kernel's slowest step (the rest of each vertex waits on it). */
#define SKV_COLS(BLEND, K, v, c0, c1, c2, c3)                                                                     \
  __m256 lo##c0, hi##c0;                                                                                          \
  BLEND(p->joints + (v) * p->influences, p->weights + (v) * p->influences, final, (K), &lo##c0, &hi##c0);         \
  const __m256d c0 = _mm256_cvtps_pd(_mm256_castps256_ps128(lo##c0)),                                             \
                c1 = _mm256_cvtps_pd(_mm256_extractf128_ps(lo##c0, 1));                                           \
  const __m256d c2 = _mm256_cvtps_pd(_mm256_castps256_ps128(hi##c0)),                                             \
                c3 = _mm256_cvtps_pd(_mm256_extractf128_ps(hi##c0, 1));

/* Step 3 without the divide: the rows x, y, z, w of the point s. */
#define SKV_ROWS(c0, c1, c2, c3, s)                                                                               \
  _mm256_add_pd(_mm256_fmadd_pd(_mm256_set1_pd((s)[2]), c2,                                                       \
                                _mm256_fmadd_pd(_mm256_set1_pd((s)[1]), c1, _mm256_mul_pd(_mm256_set1_pd((s)[0]), c0))), \
                c3)

/* Rows r times the broadcast 1 / rw `inv` into d (x, y, z). */
#define SKV_STORE(r, inv, d)                                                                                      \
  do {                                                                                                            \
    const __m128 f_ = _mm256_cvtpd_ps(_mm256_mul_pd(r, inv));                                                     \
    _mm_storel_pi((__m64 *)(d), f_);                                                                              \
    _mm_store_ss((d) + 2, _mm_movehl_ps(f_, f_));                                                                 \
  } while (0)

#define SKV_STORE1(r, d)                                                                                          \
  do {                                                                                                            \
    const __m128 f_ = _mm256_cvtpd_ps(r);                                                                         \
    _mm_storel_pi((__m64 *)(d), f_);                                                                              \
    _mm_store_ss((d) + 2, _mm_movehl_ps(f_, f_));                                                                 \
  } while (0)

#define SKV_ONE4(BLEND, K, v, r)                                                                                  \
  do {                                                                                                            \
    SKV_COLS(BLEND, K, v, c0_, c1_, c2_, c3_)                                                                     \
    if (dp != NULL)                                                                                               \
      r = SKV_ROWS(c0_, c1_, c2_, c3_, sp + 3 * (v));                                                             \
    if (dn != NULL)                                                                                               \
      SKV_NORMAL(c0_, c1_, c2_, sn + 3 * (v), dn + 3 * (v));                                                      \
  } while (0)

#define SKV_VERTEX4(BLEND, K, va, vb, vc, ve)                                                                     \
  do {                                                                                                            \
    const size_t a_ = (va), b_ = (vb), c_ = (vc), e_ = (ve);                                                      \
    __m256d ra_ = _mm256_setzero_pd(), rb_ = ra_, rc_ = ra_, re_ = ra_;                                           \
    SKV_ONE4(BLEND, K, a_, ra_);                                                                                  \
    SKV_ONE4(BLEND, K, b_, rb_);                                                                                  \
    SKV_ONE4(BLEND, K, c_, rc_);                                                                                  \
    SKV_ONE4(BLEND, K, e_, re_);                                                                                  \
    if (dp != NULL) {                                                                                             \
      /* (ra[3], rb[3], rc[3], re[3]): the four w rows */                                                         \
      const __m256d w_ = _mm256_permute2f128_pd(_mm256_unpackhi_pd(ra_, rb_), _mm256_unpackhi_pd(rc_, re_), 0x31); \
      if (_mm256_movemask_pd(_mm256_cmp_pd(w_, _mm256_set1_pd(1.0), _CMP_EQ_OQ)) == 0xF) {                       \
        /* every rw is 1: 1 / rw is 1 and r x 1 is r, exactly */                                                  \
        SKV_STORE1(ra_, dp + 3 * a_);                                                                             \
        SKV_STORE1(rb_, dp + 3 * b_);                                                                             \
        SKV_STORE1(rc_, dp + 3 * c_);                                                                             \
        SKV_STORE1(re_, dp + 3 * e_);                                                                             \
      } else {                                                                                                    \
        const __m256d inv_ = _mm256_div_pd(_mm256_set1_pd(1.0), w_);                                              \
        SKV_STORE(ra_, _mm256_permute4x64_pd(inv_, 0x00), dp + 3 * a_);                                           \
        SKV_STORE(rb_, _mm256_permute4x64_pd(inv_, 0x55), dp + 3 * b_);                                           \
        SKV_STORE(rc_, _mm256_permute4x64_pd(inv_, 0xAA), dp + 3 * c_);                                           \
        SKV_STORE(re_, _mm256_permute4x64_pd(inv_, 0xFF), dp + 3 * e_);                                           \
      }                                                                                                           \
    }                                                                                                             \
  } while (0)

/* The vertex loop of one ISA (BLEND: its masked blend) for K influences. */
#define SKV_LOOP(ISA, BLEND, K)                                                                                  \
  {                                                                                                               \
    size_t v = v0;                                                                                                \
    for (; v + 4 <= v1; v += 4)                                                                                   \
      SKV_VERTEX4(BLEND, K, v, v + 1, v + 2, v + 3);                                                              \
    for (; v < v1; v++)                                                                                           \
      SKV_VERTEX(BLEND, K, v);                                                                                    \
  }

/* One class's run of the block at `base`: order[*at, *at + n). */
#define SKV_RUN(BLEND, K, n)                                                                                      \
  {                                                                                                               \
    const size_t end_ = at + (n);                                                                                 \
    for (; at + 4 <= end_; at += 4)                                                                               \
      SKV_VERTEX4(BLEND, K, base + order[at], base + order[at + 1], base + order[at + 2], base + order[at + 3]);  \
    for (; at < end_; at++)                                                                                       \
      SKV_VERTEX(BLEND, K, base + order[at]);                                                                     \
  }

/* The blocks of [v0, v1) run by run: class 0 masked, class c by the
 * unmasked blend of c slots, each a loop without a branch per vertex or
 * per influence (a branch per weight mispredicts on mixed meshes). */
#define SKV_RUNS(BLEND, BLENDU)                                                                                   \
  for (size_t base = v0; base < v1; base += SK_GEOM_RUN_BLOCK) {                                                  \
    const uint16_t *r = p->runs + base / SK_GEOM_RUN_BLOCK * SK_GEOM_RUN_CLASSES;                                 \
    const uint8_t *order = p->order + base;                                                                       \
    size_t at = 0;                                                                                                \
    if (p->influences == 4)                                                                                       \
      SKV_RUN(BLEND, 4, r[0])                                                                                     \
    else                                                                                                          \
      SKV_RUN(BLEND, 8, r[0])                                                                                     \
    SKV_RUN(BLENDU, 1, r[1])                                                                                      \
    SKV_RUN(BLENDU, 2, r[2])                                                                                      \
    SKV_RUN(BLENDU, 3, r[3])                                                                                      \
    SKV_RUN(BLENDU, 4, r[4])                                                                                      \
    SKV_RUN(BLENDU, 5, r[5])                                                                                      \
    SKV_RUN(BLENDU, 6, r[6])                                                                                      \
    SKV_RUN(BLENDU, 7, r[7])                                                                                      \
    SKV_RUN(BLENDU, 8, r[8])                                                                                      \
  }

__attribute__((target("avx2,fma"))) static void skin_avx2(const sk_geom_prim *p, const float *final, size_t v0,
                                                          size_t v1, const float *sp, float *dp, const float *sn,
                                                          float *dn) {
  if (has_runs(p, v0, v1))
    SKV_RUNS(blend_avx2, blendu_avx2)
  else if (p->influences == 4)
    SKV_LOOP(avx2, blend_avx2, 4)
  else if (p->influences == 8)
    SKV_LOOP(avx2, blend_avx2, 8)
  else /* sk_geom keeps 4 or 8; other counts (hand-built primitives) take the scalar steps */
    sk_skin__scalar(p, final, v0, v1, sp, dp, sn, dn);
}

__attribute__((target("avx512f,avx2,fma"))) static void skin_avx512(const sk_geom_prim *p, const float *final,
                                                                    size_t v0, size_t v1, const float *sp, float *dp,
                                                                    const float *sn, float *dn) {
  if (has_runs(p, v0, v1))
    SKV_RUNS(blend_avx512, blendu_avx512)
  else if (p->influences == 4)
    SKV_LOOP(avx512, blend_avx512, 4)
  else if (p->influences == 8)
    SKV_LOOP(avx512, blend_avx512, 8)
  else /* sk_geom keeps 4 or 8; other counts (hand-built primitives) take the scalar steps */
    sk_skin__scalar(p, final, v0, v1, sp, dp, sn, dn);
}
#endif

typedef struct skv_path {
  const char *name;
  sk_isa isa;
  unsigned needs;
  skv_fn skin;
} skv_path;

/* Best first. */
static const skv_path skv_paths[] = {
#ifdef SKV_X86
    {"avx512", SK_ISA_AVX512, SK_CPU_AVX512F | SK_CPU_AVX2 | SK_CPU_FMA, skin_avx512},
    {"avx2", SK_ISA_AVX2, SK_CPU_AVX2 | SK_CPU_FMA, skin_avx2},
#endif
    {"scalar", SK_ISA_SCALAR, 0, sk_skin__scalar},
};
#define SKV_NPATHS (sizeof skv_paths / sizeof skv_paths[0])

static const skv_path *path_for(const char *name) {
  const int isa = name != NULL ? sk_isa_parse(name) : -1;
  for (size_t i = 0; i < SKV_NPATHS; i++)
    if ((name == NULL || (int)skv_paths[i].isa == isa) && sk_cpu_has(skv_paths[i].needs))
      return &skv_paths[i];
  return name != NULL ? NULL : &skv_paths[SKV_NPATHS - 1];
}

const char *sk_skinv_path(void) { return path_for(NULL)->name; }

int sk_skinv_path_check(const char *path) { return path != NULL && path_for(path) != NULL ? 0 : -1; }

/* Step 4 over vertices [v0, v1), continuing lo/hi. */
static void bounds_range(const float *pos, size_t v0, size_t v1, float lo[3], float hi[3]) {
  for (size_t v = v0; v < v1; v++)
    for (int a = 0; a < 3; a++) {
      const float x = pos[3 * v + a];
      if (x < lo[a])
        lo[a] = x;
      if (x > hi[a])
        hi[a] = x;
    }
}

typedef struct skv_range {
  const sk_skin_job *job;
  const skv_path *path;
  size_t v0, v1;
  float lo[3], hi[3];
} skv_range;

/* Vertices of a block: skinned, then their bounds while still in L1
 * (whole run blocks, sk_geom.h). */
#define SKV_BLOCK (2 * SK_GEOM_RUN_BLOCK)

static void run_range(void *arg, unsigned i) {
  skv_range *r = (skv_range *)arg + i;
  const sk_skin_job *job = r->job;
  const sk_geom_prim *p = job->prim;
  const double *infl = job->influence != NULL ? job->influence : p->influence;
  float *nrm = p->nrm != NULL ? job->nrm : NULL;
  const float *sp = p->pos, *sn = p->nrm;
  for (int a = 0; a < 3; a++) {
    /* +-inf where the scalar job starts from +-DBL_MAX: both lose to every
     * finite value and give the same float32 when nothing is below them. */
    r->lo[a] = INFINITY;
    r->hi[a] = -INFINITY;
  }
  for (size_t b = r->v0; b < r->v1; b += SKV_BLOCK) {
    const size_t e = b + SKV_BLOCK < r->v1 ? b + SKV_BLOCK : r->v1;
    if (job->pos != NULL && sk_skin__morphs(p, infl, 0)) {
      sk_skin__morph(p, infl, 0, b, e, job->pos);
      sp = job->pos;
    }
    if (nrm != NULL && sk_skin__morphs(p, infl, 1)) {
      sk_skin__morph(p, infl, 1, b, e, nrm);
      sn = nrm;
    }
    if (p->influences > 0) {
      r->path->skin(p, job->final, b, e, sp, job->pos, sn, nrm);
    } else {
      if (job->pos != NULL && sp != job->pos)
        memcpy(job->pos + 3 * b, sp + 3 * b, (e - b) * 3 * sizeof(float));
      if (nrm != NULL && sn != nrm)
        memcpy(nrm + 3 * b, sn + 3 * b, (e - b) * 3 * sizeof(float));
    }
    if (job->bounds)
      bounds_range(job->pos, b, e, r->lo, r->hi);
  }
}

void sk_skinv_run(sk_skin_job *job, const char *path, sk_threads *pool, unsigned threads) {
  const skv_path *pp = path_for(path);
  if (pp == NULL)
    pp = &skv_paths[SKV_NPATHS - 1];
  const size_t count = job->prim->count;
  if (threads > SK_SKINV_MAX_THREADS)
    threads = SK_SKINV_MAX_THREADS;
  /* No more threads than ranges of a run block each. */
  const size_t blocks = (count + SK_GEOM_RUN_BLOCK - 1) / SK_GEOM_RUN_BLOCK;
  if (threads > blocks)
    threads = blocks > 0 ? (unsigned)blocks : 1;
  const unsigned more = threads > 1 ? sk_threads_take(pool, threads - 1) : 0;
  /* Ranges of whole run blocks (so also multiples of 16 vertices: no cache
   * line of the outputs is written by two threads). */
  size_t chunk = more > 0 ? (count + more) / (more + 1) : count;
  chunk = (chunk + SK_GEOM_RUN_BLOCK - 1) / SK_GEOM_RUN_BLOCK * SK_GEOM_RUN_BLOCK;
  skv_range range[SK_SKINV_MAX_THREADS];
  unsigned used = 0;
  for (size_t b = 0; used == 0 || (b < count && used < more + 1); b += chunk, used++)
    range[used] = (skv_range){.job = job, .path = pp, .v0 = b, .v1 = b + chunk < count ? b + chunk : count};
  /* Rounding the chunk up may leave fewer ranges than threads taken. */
  sk_threads_run(more > 0 ? pool : NULL, used, run_range, range);
  sk_threads_give(pool, more);
  if (!job->bounds)
    return;
  float lo[3], hi[3];
  memcpy(lo, range[0].lo, sizeof lo);
  memcpy(hi, range[0].hi, sizeof hi);
  for (unsigned i = 1; i < used; i++)
    for (int a = 0; a < 3; a++) {
      if (range[i].lo[a] < lo[a])
        lo[a] = range[i].lo[a];
      if (range[i].hi[a] > hi[a])
        hi[a] = range[i].hi[a];
    }
  memcpy(job->min, lo, sizeof lo);
  memcpy(job->max, hi, sizeof hi);
}
