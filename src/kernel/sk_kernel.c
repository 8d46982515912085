#include "sk_kernel.h"

#include "sk_kernel_impl.h"
#include "sk_kernel_store.h"
#include "sk_cpu.h"
#include "sk_mat.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* ---- rig ------------------------------------------------------------------ */

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* Bytes of the per-core L2 cache as sysfs reports it (sysconf as the
 * fallback: under a hypervisor it can describe the host, e.g. a 384 MB L3
 * for a VM's 32 MB). */
static size_t l2_size(void) {
  for (int i = 0; i < 8; i++) {
    char path[96], buf[32];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE *f = fopen(path, "r");
    if (f == NULL)
      break;
    char *ok = fgets(buf, sizeof buf, f);
    fclose(f);
    if (ok == NULL || atoi(buf) != 2)
      continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if ((f = fopen(path, "r")) == NULL)
      break;
    ok = fgets(buf, sizeof buf, f);
    fclose(f);
    if (ok == NULL)
      break;
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    v <<= *end == 'K' ? 10 : *end == 'M' ? 20 : 0;
    if (v > 0)
      return (size_t)v;
  }
#ifdef _SC_LEVEL2_CACHE_SIZE
  const long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (v > 0)
    return (size_t)v;
#endif
  return (size_t)1 << 20;
}

/* sk_rig_create's working arrays, freed before it returns: keep flags,
 * subtree sizes, the children lists (CSR), the DFS stack, the processing
 * order. */
typedef struct rig_plan {
  const sk_skeleton *s;
  size_t nb, nsteps, unused;
  size_t *size, *first;
  uint32_t *child, *stack, *order, *last_child;
  int32_t *slot_of;
  bool *keep, *used;
} rig_plan;

static int plan_alloc(rig_plan *p) {
  const size_t nb = p->nb;
  p->size = calloc(nb + 1, sizeof *p->size);
  p->first = calloc(nb + 2, sizeof *p->first);
  p->child = malloc((nb + 1) * sizeof *p->child);
  p->stack = malloc((nb + 1) * sizeof *p->stack);
  p->order = malloc((nb + 1) * sizeof *p->order);
  p->slot_of = malloc((nb + 1) * sizeof *p->slot_of);
  p->last_child = malloc((nb + 1) * sizeof *p->last_child);
  p->keep = calloc(nb + 1, sizeof *p->keep);
  p->used = calloc(nb + 1, sizeof *p->used);
  return p->size && p->first && p->child && p->stack && p->order && p->slot_of && p->last_child && p->keep && p->used
             ? 0
             : SK_ENOMEM;
}

static void plan_free(rig_plan *p) {
  free(p->size);
  free(p->first);
  free(p->child);
  free(p->stack);
  free(p->order);
  free(p->slot_of);
  free(p->last_child);
  free(p->keep);
  free(p->used);
}

/* Bones that write a slot, and their ancestors (the rest never matter),
 * with the kept size of each subtree; the slots written, and how many are
 * not. */
static void mark_kept(rig_plan *p) {
  for (size_t i = p->nb; i-- > 0;) {
    const sk_bone *b = &p->s->bones[i];
    if (b->index >= 0) {
      p->keep[i] = true;
      p->used[b->index] = true;
    }
    p->size[i] += p->keep[i];
    if (p->keep[i] && b->parent >= 0) {
      p->keep[b->parent] = true;
      p->size[b->parent] += p->size[i];
    }
  }
  for (size_t i = 0; i < p->nb; i++)
    p->unused += !p->used[i];
}

/* Children of each kept bone, CSR (parents come first in bones[]), each
 * list sorted lightest subtree first. Insertion sort per child list:
 * lists are short, and it is one-off work at upload. */
static int link_children(rig_plan *p) {
  const sk_skeleton *s = p->s;
  for (size_t i = 0; i < p->nb; i++)
    if (p->keep[i] && s->bones[i].parent >= 0)
      p->first[s->bones[i].parent + 1]++;
  for (size_t i = 0; i < p->nb; i++)
    p->first[i + 1] += p->first[i];
  size_t *fill = calloc(p->nb + 1, sizeof *fill);
  if (fill == NULL)
    return SK_ENOMEM;
  for (size_t i = 0; i < p->nb; i++)
    if (p->keep[i] && s->bones[i].parent >= 0) {
      const size_t par = (size_t)s->bones[i].parent;
      p->child[p->first[par] + fill[par]++] = (uint32_t)i;
    }
  free(fill);
  for (size_t par = 0; par < p->nb; par++)
    for (size_t a = p->first[par] + 1; a < p->first[par + 1]; a++)
      for (size_t c = a; c > p->first[par] && p->size[p->child[c - 1]] > p->size[p->child[c]]; c--) {
        const uint32_t t = p->child[c];
        p->child[c] = p->child[c - 1];
        p->child[c - 1] = t;
      }
  return 0;
}

/* The processing order: depth-first, heaviest child last (pushing children
 * heaviest first puts the lightest on top of the stack), and each bone's
 * last child: a world slot is live from its bone's step to that child's. */
static void order_depth_first(rig_plan *p) {
  const sk_skeleton *s = p->s;
  size_t top = 0;
  for (size_t i = p->nb; i-- > 0;)
    if (p->keep[i] && s->bones[i].parent < 0)
      p->stack[top++] = (uint32_t)i;
  while (top > 0) {
    const uint32_t b = p->stack[--top];
    p->order[p->nsteps++] = b;
    for (size_t c = p->first[b + 1]; c-- > p->first[b];)
      p->stack[top++] = p->child[c];
  }
  for (size_t k = 0; k < p->nsteps; k++) {
    const uint32_t b = p->order[k];
    if (s->bones[b].parent >= 0)
      p->last_child[s->bones[b].parent] = b;
  }
}

/* The rig in one aligned block: header, steps, inverse binds as floats and
 * doubles, the unused slots (filled here). NULL when out of memory. */
static sk_rig *rig_alloc(const rig_plan *p) {
  const size_t off_step = align64(sizeof(sk_rig));
  const size_t off_ib = off_step + align64(p->nsteps * sizeof(sk_rig_step));
  const size_t off_ib64 = off_ib + align64(p->nsteps * 16 * sizeof(float));
  const size_t off_unused = off_ib64 + align64(p->nsteps * 16 * sizeof(double));
  const size_t total = align64(off_unused + p->unused * sizeof(uint32_t));
  unsigned char *mem = aligned_alloc(64, total);
  if (mem == NULL)
    return NULL;
  memset(mem, 0, total);
  sk_rig *r = (sk_rig *)mem;
  r->bones = p->nb;
  r->steps = p->nsteps;
  r->unused = p->unused;
  r->step = (sk_rig_step *)(mem + off_step);
  r->inv_bind = (float *)(mem + off_ib);
  r->inv_bind64 = (double *)(mem + off_ib64);
  uint32_t *us = (uint32_t *)(mem + off_unused);
  r->unused_slot = us;
  for (size_t i = 0, k = 0; i < p->nb; i++)
    if (!p->used[i])
      us[k++] = (uint32_t)i;
  return r;
}

/* Each step's bone, output, parent slot, inverse bind, and a world slot
 * for bones with children: the lowest free one, freed again at the
 * parent's last child. Sets r->live. */
static int assign_slots(rig_plan *p, sk_rig *r) {
  /* The rig's arrays are const to its readers; they are ours until returned. */
  sk_rig_step *step = (sk_rig_step *)r->step;
  float *ib = (float *)r->inv_bind;
  double *ib64 = (double *)r->inv_bind64;
  bool busy[SK_RIG_MAX_LIVE] = {false};
  size_t live = 0;
  for (size_t k = 0; k < p->nsteps; k++) {
    const uint32_t b = p->order[k];
    const sk_bone *bone = &p->s->bones[b];
    sk_rig_step *st = &step[k];
    st->bone = b;
    st->out = bone->index;
    st->parent_slot = bone->parent >= 0 ? p->slot_of[bone->parent] : -1;
    /* The kernel reads the parent's slot into registers before it stores
     * this bone's world, so the last child may reuse its parent's slot. */
    if (bone->parent >= 0 && p->last_child[bone->parent] == b)
      busy[st->parent_slot] = false;
    st->slot = -1;
    if (p->first[b + 1] > p->first[b]) {
      int32_t f = 0;
      while (f < SK_RIG_MAX_LIVE && busy[f])
        f++;
      if (f == SK_RIG_MAX_LIVE) /* cannot happen below 2^22 bones; see SK_RIG_MAX_LIVE */
        return SK_ETOOBIG;
      busy[f] = true;
      st->slot = f;
      if ((size_t)f + 1 > live)
        live = (size_t)f + 1;
    }
    p->slot_of[b] = st->slot;
    memcpy(ib + 16 * k, bone->abs_inv_bind, 16 * sizeof(float));
    for (int e = 0; e < 16; e++)
      ib64[16 * k + e] = bone->abs_inv_bind[e];
    st->inv_bind_affine = is_affine(bone->abs_inv_bind);
    const float *m = bone->abs_inv_bind;
    uint32_t m15;
    memcpy(&m15, &m[15], sizeof m15);
    st->inv_bind_one = m15 == 0x3F800000u;
    /* The products' own sum on column (+0, +0, +0, 1), in Babylon's order:
     * the signs of the zeros decide the sign of a zero result. */
    for (int i = 0; i < 4; i++)
      st->final_col3[i] = (float)((((double)m[4 * i] * 0.0 + (double)m[4 * i + 1] * 0.0) + (double)m[4 * i + 2] * 0.0) +
                                  (double)m[4 * i + 3] * 1.0);
  }
  r->live = live;
  return 0;
}

int sk_rig_create(const sk_skeleton *s, sk_rig **out) {
  if (s == NULL || out == NULL)
    return SK_EINVAL;
  *out = NULL;
  rig_plan p = {.s = s, .nb = s->count};
  sk_rig *r = NULL;
  int rc = plan_alloc(&p);
  if (!rc) {
    mark_kept(&p);
    rc = link_children(&p);
  }
  if (!rc) {
    order_depth_first(&p);
    rc = (r = rig_alloc(&p)) != NULL ? 0 : SK_ENOMEM;
  }
  if (!rc)
    rc = assign_slots(&p, r);
  plan_free(&p);
  if (rc) {
    free(r);
    return rc;
  }
  r->stream_bytes = l2_size();
  *out = r;
  return 0;
}

void sk_rig_destroy(sk_rig *r) { free(r); }

size_t sk_rig_bones(const sk_rig *r) { return r->bones; }


/* ---- the paths -------------------------------------------------------------
 * Each path instantiates sk_kernel_lanes.h with its vector type. Target
 * attributes (not per-file flags) keep one object that runs everywhere:
 * nothing outside a path's functions uses its instructions. */

/* scalar: one lane, double arithmetic; also the reference on non-x86. With
 * -ffp-contract=off, VFMA is a separate multiply and add: the same bits as
 * a fused one where the kernel uses it (sk_kernel_lanes.h). */
static inline uint64_t bits_of(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}
/* (double)(float)v, kept: GCC 12 at -O2 dropped the plain cast here once
 * the products were inlined (the float32 rounding of a world matrix
 * vanished and finals came out 1 ulp off); the empty asm makes the float
 * opaque so the rounding must happen. The cause is GCC 12.2's SLP
 * vectorizer (configure.ac's probe, tests/check_toolchain.c), which the
 * build now turns off with that compiler; the asm stays for others. */
static inline double round_f32(double v) {
  float f = (float)v;
  __asm__("" : "+x"(f));
  return (double)f;
}
#define SKK(name) name##_scalar
#define SKK_ATTR
#define SKK_N 1
#define SKK_FUSE 0
#define SKK_TAIL(job, p, end, stream) ((void)0) /* never: one lane */
#define SKK_PREFETCH SK_KERNEL_PREFETCH
#define V double
#define VLOAD(p) ((double)*(p))
#define VLOADN(p, n) ((double)*(p))
#define VLOAD64(p) (*(p))
#define VSET1(x) ((double)(x))
#define VZERO() 0.0
#define VADD(a, b) ((a) + (b))
#define VSUB(a, b) ((a) - (b))
#define VMUL(a, b) ((a) * (b))
#define VFMA(a, b, c) ((a) * (b) + (c))
#define VFNMA(a, b, c) ((c) - (a) * (b))
#define VROUND(v) round_f32(v)
#define VALL_BITS(v, bits) (bits_of(v) == (uint64_t)(bits))
typedef struct sk_kernel_f2 {
  float lo, hi;
} sk_kernel_f2;
#define VZ sk_kernel_f2
#define VPACK2(lo, hi) ((sk_kernel_f2){(float)(lo), (float)(hi)})
#define VPACK2F(lo, hi) ((sk_kernel_f2){(lo), (hi)})
static inline void store_packed_scalar(float *dst, size_t stride, const sk_kernel_f2 *z, size_t n, bool stream) {
  (void)stride, (void)n, (void)stream;
  for (int k = 0; k < 8; k++) {
    dst[k] = z[k].lo;
    dst[k + 8] = z[k].hi;
  }
}
#define SKK_STORE_CONST sk_kernel__store_const_scalar
#include "sk_kernel_lanes.h"

#ifdef SK_KERNEL_X86
/* sse2: 2 lanes, baseline x86-64; no FMA instruction (multiply then add,
 * the same bits). */
#define SKK(name) name##_sse2
#define SKK_ATTR __attribute__((target("sse2")))
#define SKK_N 2
#define SKK_FUSE 0
#define SKK_TAIL run_scalar
#define SKK_PREFETCH SK_KERNEL_PREFETCH
#define V __m128d
#define VLOAD(p) _mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(const void *)(p))))
#define VLOADN(p, n) _mm_cvtps_pd(_mm_load_ss(p))
#define VLOAD64(p) _mm_loadu_pd(p)
#define VSET1(x) _mm_set1_pd((double)(x))
#define VZERO() _mm_setzero_pd()
#define VADD(a, b) _mm_add_pd((a), (b))
#define VSUB(a, b) _mm_sub_pd((a), (b))
#define VMUL(a, b) _mm_mul_pd((a), (b))
#define VFMA(a, b, c) _mm_add_pd(_mm_mul_pd((a), (b)), (c))
#define VFNMA(a, b, c) _mm_sub_pd((c), _mm_mul_pd((a), (b)))
#define VROUND(v) _mm_cvtps_pd(_mm_cvtpd_ps(v))
#define VALL_BITS(v, bits) \
  (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_castpd_si128(v), _mm_set1_epi64x((long long)(bits)))) == 0xFFFF)
/* z[k] = (entry k of poses 0, 1, entry k+8 of poses 0, 1). Two 4x4
 * transposes: of z[0..3] (rows: pose 0 entries 0-3, pose 1 entries 0-3,
 * pose 0 entries 8-11, pose 1 entries 8-11) and of z[4..7] (entries 4-7,
 * 12-15). Each pose's 64 bytes are then written back to back, so a streamed
 * line is complete in the write-combining buffer before the next starts. */
#define VZ __m128
#define VPACK2(lo, hi) _mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi))
#define VPACK2F(lo, hi) _mm_setr_ps((lo), (lo), (hi), (hi))
static SKK_ATTR inline __attribute__((always_inline)) void store_packed_sse2(float *dst, size_t stride, const __m128 *z, size_t n, bool stream) {
  __m128 a0 = z[0], a1 = z[1], a2 = z[2], a3 = z[3], b0 = z[4], b1 = z[5], b2 = z[6], b3 = z[7];
  _MM_TRANSPOSE4_PS(a0, a1, a2, a3);
  _MM_TRANSPOSE4_PS(b0, b1, b2, b3);
  const __m128 o[2][4] = {{a0, b0, a2, b2}, {a1, b1, a3, b3}};
  for (size_t i = 0; i < n; i++)
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++) {
      if (stream)
        _mm_stream_ps(dst + i * stride + 4 * g, o[i][g]);
      else
        _mm_storeu_ps(dst + i * stride + 4 * g, o[i][g]);
    }
}
#define SKK_STORE_CONST sk_kernel__store_const_sse2
#include "sk_kernel_lanes.h"

/* avx2: 4 lanes with FMA. */
#define SKK(name) name##_avx2
#define SKK_ATTR __attribute__((target("avx2,fma")))
#define SKK_N 4
#define SKK_FUSE 0
#define SKK_TAIL run_sse2
#define SKK_PREFETCH SK_KERNEL_PREFETCH
#define V __m256d
#define VLOAD(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
#define VLOADN(p, n) _mm256_cvtps_pd(_mm_maskload_ps((p), _mm_loadu_si128((const __m128i *)(sk_kernel_mask4 + 4 - (n)))))
#define VLOAD64(p) _mm256_loadu_pd(p)
#define VSET1(x) _mm256_set1_pd((double)(x))
#define VZERO() _mm256_setzero_pd()
#define VADD(a, b) _mm256_add_pd((a), (b))
#define VSUB(a, b) _mm256_sub_pd((a), (b))
#define VMUL(a, b) _mm256_mul_pd((a), (b))
#define VFMA(a, b, c) _mm256_fmadd_pd((a), (b), (c))
#define VFNMA(a, b, c) _mm256_fnmadd_pd((a), (b), (c))
#define VROUND(v) _mm256_cvtps_pd(_mm256_cvtpd_ps(v))
#define VALL_BITS(v, bits) \
  (_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_castpd_si256(v), _mm256_set1_epi64x((long long)(bits))))) == 0xF)
/* sk_kernel_mask4 + 4 - n: n lanes of -1 (load) then zeros. */
static const int32_t sk_kernel_mask4[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
/* z[k] = [entry k of poses 0-3 | entry k+8 of poses 0-3]. The in-lane 4x4
 * transpose of z[0..3] gives r[i] = [pose i entries 0-3 | entries 8-11], of
 * z[4..7] s[i] = [entries 4-7 | 12-15]; permute2f128 joins them into pose
 * i's two 32-byte halves, written back to back (a whole line per pose). */
#define VZ __m256
#define VPACK2(lo, hi) _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1)
#define VPACK2F(lo, hi) _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_set1_ps(lo)), _mm_set1_ps(hi), 1)
static SKK_ATTR inline __attribute__((always_inline)) void transpose4_avx2(const __m256 *z, __m256 *r) {
  const __m256 t0 = _mm256_unpacklo_ps(z[0], z[1]), t1 = _mm256_unpackhi_ps(z[0], z[1]);
  const __m256 t2 = _mm256_unpacklo_ps(z[2], z[3]), t3 = _mm256_unpackhi_ps(z[2], z[3]);
  r[0] = _mm256_shuffle_ps(t0, t2, 0x44);
  r[1] = _mm256_shuffle_ps(t0, t2, 0xEE);
  r[2] = _mm256_shuffle_ps(t1, t3, 0x44);
  r[3] = _mm256_shuffle_ps(t1, t3, 0xEE);
}
static SKK_ATTR inline __attribute__((always_inline)) void store_packed_avx2(float *dst, size_t stride, const __m256 *z, size_t n, bool stream) {
  __m256 r[4], q[4];
  transpose4_avx2(z, r);
  transpose4_avx2(z + 4, q);
  for (size_t i = 0; i < n; i++) {
    const __m256 lo = _mm256_permute2f128_ps(r[i], q[i], 0x20), hi = _mm256_permute2f128_ps(r[i], q[i], 0x31);
    if (stream) {
      _mm256_stream_ps(dst + i * stride, lo);
      _mm256_stream_ps(dst + i * stride + 8, hi);
    } else {
      _mm256_storeu_ps(dst + i * stride, lo);
      _mm256_storeu_ps(dst + i * stride + 8, hi);
    }
  }
}
#define SKK_STORE_CONST sk_kernel__store_const_avx2
#include "sk_kernel_lanes.h"

/* avx512: 8 lanes with FMA; the tail uses masked loads. */
#define SKK(name) name##_avx512
#define SKK_ATTR __attribute__((target("avx512f,avx2,fma")))
#define SKK_N 8
#define SKK_FUSE 1
#define SKK_TAIL run_avx2
#define SKK_PREFETCH SK_KERNEL_PREFETCH
#define V __m512d
#define VLOAD(p) _mm512_cvtps_pd(_mm256_loadu_ps(p))
#define VLOADN(p, n) _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps((__mmask16)((1u << (n)) - 1u), (p))))
#define VLOAD64(p) _mm512_loadu_pd(p)
#define VSET1(x) _mm512_set1_pd((double)(x))
#define VZERO() _mm512_setzero_pd()
#define VADD(a, b) _mm512_add_pd((a), (b))
#define VSUB(a, b) _mm512_sub_pd((a), (b))
#define VMUL(a, b) _mm512_mul_pd((a), (b))
#define VFMA(a, b, c) _mm512_fmadd_pd((a), (b), (c))
#define VFNMA(a, b, c) _mm512_fnmadd_pd((a), (b), (c))
#define VROUND(v) _mm512_cvtps_pd(_mm512_cvtpd_ps(v))
#define VALL_BITS(v, bits) \
  (_mm512_cmpeq_epi64_mask(_mm512_castpd_si512(v), _mm512_set1_epi64((long long)(bits))) == 0xFF)
/* 16 entries x 8 poses to 8 poses x 16 floats. Each entry rounded to 8
 * floats, entry k paired with entry k+8 in one register (z[k], VPACK2), then the
 * 8x8 transpose of the AVX2 float kernel runs in both 256-bit halves at once:
 *   unpack ps, unpack pd   u[e] 128-bit lane L = entries 0-3 (L=0,1) or 8-11
 *                          (L=2,3) of pose e (L even) or 4+e (L odd);
 *                          u[4+e] the same for entries 4-7 and 12-15
 *   permutex2var           pose e = u[e].L0 u[4+e].L0 u[e].L2 u[4+e].L2
 * 32 shuffles per 8 matrices; one full 64-byte line per pose. */
static const int32_t sk_kernel_perm_even[16] __attribute__((aligned(64))) = {0, 1, 2, 3, 16, 17, 18, 19,
                                                                             8, 9, 10, 11, 24, 25, 26, 27};
static const int32_t sk_kernel_perm_odd[16] __attribute__((aligned(64))) = {4, 5, 6, 7, 20, 21, 22, 23,
                                                                            12, 13, 14, 15, 28, 29, 30, 31};
#define VZ __m512
#define VPACK2(lo, hi)                                                                                     \
  _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm512_cvtpd_ps(lo))), \
                                      _mm256_castps_pd(_mm512_cvtpd_ps(hi)), 1))
#define VPACK2F(lo, hi)                                                                                   \
  _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm256_set1_ps(lo))), \
                                      _mm256_castps_pd(_mm256_set1_ps(hi)), 1))
static SKK_ATTR inline __attribute__((always_inline)) void store_packed_avx512(float *dst, size_t stride, const __m512 *z, size_t n, bool stream) {
  __m512 t[8], u[8], o[8];
  sk_kernel__unpack512(z, t, u, 2);
  const __m512i pe = _mm512_load_si512(sk_kernel_perm_even), po = _mm512_load_si512(sk_kernel_perm_odd);
#pragma GCC unroll 4
  for (int e = 0; e < 4; e++) {
    o[e] = _mm512_permutex2var_ps(u[e], pe, u[4 + e]);
    o[4 + e] = _mm512_permutex2var_ps(u[e], po, u[4 + e]);
  }
  sk_kernel__rows512(dst, stride, o, n, 8, stream);
}
#define SKK_STORE_CONST sk_kernel__store_const_avx512
#include "sk_kernel_lanes.h"
#endif /* SK_KERNEL_X86 */

/* ---- dispatch --------------------------------------------------------------- */

typedef void (*sk_kernel_fn)(const sk_kernel_job *job, size_t begin, size_t end, bool stream);

typedef struct sk_kernel_path_desc {
  const char *name;
  sk_isa isa;
  unsigned needs; /* sk_cpu features */
  sk_kernel_fn run;
  sk_kernel_fn run_fast; /* precision FAST: the float32 path of the same ISA */
  size_t align; /* stream stores need the output aligned to this */
} sk_kernel_path_desc;

/* Best first. */
static const sk_kernel_path_desc sk_kernel_paths[] = {
#ifdef SK_KERNEL_X86
    {"avx512", SK_ISA_AVX512, SK_CPU_AVX512F | SK_CPU_AVX2 | SK_CPU_FMA, run_avx512, sk_kernel_f32_run_avx512, 64},
    {"avx2", SK_ISA_AVX2, SK_CPU_AVX2 | SK_CPU_FMA, run_avx2, sk_kernel_f32_run_avx2, 32},
    {"sse2", SK_ISA_SSE2, SK_CPU_SSE2, run_sse2, sk_kernel_f32_run_sse2, 16},
#endif
    {"scalar", SK_ISA_SCALAR, 0, run_scalar, sk_kernel_f32_run_scalar, 0},
};
#define SK_KERNEL_NPATHS (sizeof sk_kernel_paths / sizeof sk_kernel_paths[0])

/* The row of `path` (NULL: the best this CPU runs), NULL for a name no row
 * has. */
static const sk_kernel_path_desc *path_row(const char *path) {
  const int isa = path != NULL ? sk_isa_parse(path) : -1;
  for (size_t i = 0; i < SK_KERNEL_NPATHS; i++)
    if (path != NULL ? (int)sk_kernel_paths[i].isa == isa : sk_cpu_has(sk_kernel_paths[i].needs))
      return &sk_kernel_paths[i];
  return path != NULL ? NULL : &sk_kernel_paths[SK_KERNEL_NPATHS - 1];
}

int sk_kernel_path_check(const char *path) {
  if (path == NULL || sk_isa_parse(path) < 0)
    return SK_EINVAL;
  const sk_kernel_path_desc *d = path_row(path);
  /* A known ISA this build has no code for (x86 paths elsewhere). */
  return d != NULL && sk_cpu_has(d->needs) ? 0 : SK_EUNSUPPORTED;
}

static const sk_kernel_path_desc *path_for(const char *path) {
  const sk_kernel_path_desc *d = path_row(path);
  return d != NULL ? d : &sk_kernel_paths[SK_KERNEL_NPATHS - 1];
}

const char *sk_kernel_path(void) { return path_for(NULL)->name; }

size_t sk_kernel_pose_stride(size_t poses) { return (((poses + 15) / 16) | 1) * 16; }

size_t sk_kernel_blocked_layout(const uint8_t *mode, size_t bones, size_t poses, size_t *offset, size_t *pose_stride,
                                size_t *block_stride) {
  size_t consts = 0, block = 0;
  for (size_t b = 0; b < bones; b++) {
    if (mode[b] == SK_KERNEL_CONST) {
      offset[b] = 16 * consts++;
      continue;
    }
    offset[b] = block;
    block += 16 * (mode[b] == SK_KERNEL_MATRIX ? 16 : 10);
  }
  const size_t head = 16 * consts, blocks = (poses + 15) / 16;
  for (size_t b = 0; b < bones; b++)
    if (mode[b] != SK_KERNEL_CONST)
      offset[b] += head;
  *pose_stride = 16;
  *block_stride = block != 0 ? block : 16;
  size_t total;
  if (__builtin_mul_overflow(blocks, *block_stride, &total) || __builtin_add_overflow(total, head, &total))
    return 0;
  return total;
}

/* ---- validate and run -------------------------------------------------------- */

static bool mul_ok(size_t a, size_t b, size_t *r) { return !__builtin_mul_overflow(a, b, r); }

int sk_kernel_validate(const sk_kernel_job *job, sk_error *err) {
  if (job == NULL)
    return sk_error_set(err, SK_EINVAL, NULL, "job is NULL");
  if (job->rig == NULL)
    return sk_error_set(err, SK_EINVAL, "/rig", "rig is NULL");
  if (job->poses == 0)
    return sk_error_set(err, SK_EINVAL, "/poses", "a batch needs at least one pose");
  if (job->block_stride == 0 && job->pose_stride < job->poses)
    return sk_error_set(err, SK_EINVAL, "/pose_stride", "pose_stride %zu is less than poses %zu", job->pose_stride,
                        job->poses);
  if (job->block_stride != 0 && job->pose_stride < 16)
    return sk_error_set(err, SK_EINVAL, "/pose_stride", "pose_stride %zu is less than a block of 16 poses",
                        job->pose_stride);
  if (job->block_stride != 0 && job->block_stride < 16)
    return sk_error_set(err, SK_EINVAL, "/block_stride", "block_stride %zu is less than a block of 16 poses",
                        job->block_stride);
  if (job->mode == NULL)
    return sk_error_set(err, SK_EINVAL, "/mode", "mode is NULL");
  if (job->offset == NULL)
    return sk_error_set(err, SK_EINVAL, "/offset", "offset is NULL");
  bool any_float = false, any64 = false;
  for (size_t b = 0; job->rig != NULL && b < job->rig->bones; b++) {
    any64 |= job->mode[b] == SK_KERNEL_TRS64;
    any_float |= job->mode[b] != SK_KERNEL_TRS64;
  }
  if (job->input == NULL && any_float)
    return sk_error_set(err, SK_EINVAL, "/input", "input is NULL");
  if (job->input64 == NULL && any64)
    return sk_error_set(err, SK_EINVAL, "/input64", "input64 is NULL but a bone is TRS64");
  if (any64 && job->precision != SK_KERNEL_PRECISION_EXACT)
    return sk_error_set(err, SK_EINVAL, "/precision", "TRS64 input needs exact precision");
  if (job->final == NULL)
    return sk_error_set(err, SK_EINVAL, "/final", "final is NULL");
  if (job->stream < SK_KERNEL_STREAM_AUTO || job->stream > SK_KERNEL_STREAM_ALWAYS)
    return sk_error_set(err, SK_EINVAL, "/stream", "unknown stream mode %d", job->stream);
  if (job->precision != SK_KERNEL_PRECISION_EXACT && job->precision != SK_KERNEL_PRECISION_FAST)
    return sk_error_set(err, SK_EINVAL, "/precision", "unknown precision %d", job->precision);
  if (job->path != NULL) {
    const int rc = sk_kernel_path_check(job->path);
    if (rc == SK_EINVAL)
      return sk_error_set(err, rc, "/path", "unknown kernel path \"%s\"", job->path);
    if (rc != 0)
      return sk_error_set(err, rc, "/path", "this CPU cannot run the %s path", job->path);
  }
  const size_t nb = job->rig->bones;
  /* span(r): floats from a bone's offset to the end of its last block of r rows. */
  size_t fin, tmp, last_block = 0, span_trs, span_mat;
  if (job->block_stride != 0 && !mul_ok((job->poses - 1) / 16, job->block_stride, &last_block))
    return sk_error_set(err, SK_ETOOBIG, "/block_stride", "batch size overflows");
  const size_t row_len = job->block_stride != 0 ? 16 : job->pose_stride;
  if (!mul_ok(9, job->pose_stride, &span_trs) || __builtin_add_overflow(span_trs, row_len, &span_trs) ||
      !mul_ok(15, job->pose_stride, &span_mat) || __builtin_add_overflow(span_mat, row_len, &span_mat) ||
      !mul_ok(nb + 1, 16, &tmp) || !mul_ok(tmp, job->poses, &fin))
    return sk_error_set(err, SK_ETOOBIG, "/poses", "batch size overflows");
  if (__builtin_add_overflow(span_trs, last_block, &span_trs) || __builtin_add_overflow(span_mat, last_block, &span_mat))
    return sk_error_set(err, SK_ETOOBIG, "/block_stride", "batch size overflows");
  for (size_t b = 0; b < nb; b++) {
    char ptr[48];
    const uint8_t m = job->mode[b];
    if (m > SK_KERNEL_TRS64) {
      snprintf(ptr, sizeof ptr, "/mode/%zu", b);
      return sk_error_set(err, SK_EINVAL, ptr, "unknown mode %u for bone %zu", (unsigned)m, b);
    }
    const size_t len = m == SK_KERNEL_TRS64 ? job->input64_doubles : job->input_floats;
    if (len != 0) {
      const size_t span = m == SK_KERNEL_CONST ? 16 : m == SK_KERNEL_MATRIX ? span_mat : span_trs;
      if (job->offset[b] > len || span > len - job->offset[b]) {
        snprintf(ptr, sizeof ptr, "/offset/%zu", b);
        return sk_error_set(err, SK_EINVAL, ptr, "bone %zu's input runs past the end of input", b);
      }
    }
  }
  return 0;
}

/* Streams when the outputs outgrow L2. Measured on a 2-core EPYC VM (65
 * bones): at 4096 poses (17 MB, inside the 32 MB L3) normal stores ran at
 * 67 M bone matrices/s and streaming ones at 240 M/s; at 1024 poses (4 MB)
 * streaming was still no slower. The L3 is shared and a victim cache, so
 * keeping the output there saves little and costs the read-for-ownership
 * of every line. */
static bool want_stream(const sk_kernel_job *job, const sk_kernel_path_desc *d) {
  if (job->stream == SK_KERNEL_STREAM_NEVER || d->align == 0)
    return false;
  if ((uintptr_t)job->final % d->align != 0 || (job->absolute != NULL && (uintptr_t)job->absolute % d->align != 0))
    return false;
  if (job->stream == SK_KERNEL_STREAM_ALWAYS)
    return true;
  const size_t nb = job->rig->bones;
  const double bytes = 64.0 * (double)job->poses * (double)(nb + 1 + (job->absolute != NULL ? nb : 0));
  return bytes > (double)job->rig->stream_bytes;
}

void sk_kernel_run(const sk_kernel_job *job, size_t begin, size_t end) {
  if (begin >= end)
    return;
  const sk_kernel_path_desc *d = path_for(job->path);
  const bool stream = want_stream(job, d);
  (job->precision == SK_KERNEL_PRECISION_FAST ? d->run_fast : d->run)(job, begin, end, stream);
#ifdef SK_KERNEL_X86
  if (stream)
    _mm_sfence(); /* streaming stores are weakly ordered: publish before returning */
#endif
}

typedef struct sk_kernel_range {
  const sk_kernel_job *job;
  size_t begin, end;
} sk_kernel_range;

static void *run_range(void *arg) {
  const sk_kernel_range *r = arg;
  sk_kernel_run(r->job, r->begin, r->end);
  return NULL;
}

#define SK_KERNEL_MAX_THREADS 64

int sk_kernel_run_threads(const sk_kernel_job *job, unsigned n) {
  const size_t p = job->poses;
  if (n > SK_KERNEL_MAX_THREADS)
    n = SK_KERNEL_MAX_THREADS;
  /* Ranges are multiples of 16 poses so every path sees the same groups. */
  size_t chunk = n > 1 ? (p + n - 1) / n : p;
  chunk = (chunk + 15) & ~(size_t)15;
  if (n <= 1 || chunk >= p) {
    sk_kernel_run(job, 0, p);
    return 0;
  }
  pthread_t tid[SK_KERNEL_MAX_THREADS];
  bool started[SK_KERNEL_MAX_THREADS] = {false};
  sk_kernel_range range[SK_KERNEL_MAX_THREADS];
  unsigned used = 0;
  for (size_t b = 0; b < p && used < n; b += chunk, used++) {
    range[used].job = job;
    range[used].begin = b;
    range[used].end = b + chunk < p ? b + chunk : p;
  }
  for (unsigned i = 1; i < used; i++)
    started[i] = pthread_create(&tid[i], NULL, run_range, &range[i]) == 0;
  run_range(&range[0]);
  for (unsigned i = 1; i < used; i++) {
    if (started[i])
      pthread_join(tid[i], NULL);
    else
      run_range(&range[i]);
  }
  return 0;
}

/* ---- single pose ------------------------------------------------------------ */

/* The slots no bone computes: zeros for slots no bone writes, and the
 * trailing identity of `final`. */
static void single_fixed_slots(const sk_rig *r, float *final, float *absolute) {
  for (size_t k = 0; k < r->unused; k++) {
    memset(final + 16 * (size_t)r->unused_slot[k], 0, 16 * sizeof *final);
    if (absolute != NULL)
      memset(absolute + 16 * (size_t)r->unused_slot[k], 0, 16 * sizeof *absolute);
  }
  memcpy(final + 16 * r->bones, sk_kernel_identity16, sizeof sk_kernel_identity16);
}

/* The single-pose walk over the rig with the core's exact product
 * (sk_mat_mul, Babylon's multiplyToArray): the same products of the same
 * float32 inputs as sk_skeleton_evaluate, in the rig's order, so the same
 * bits. It skips the bones that write nothing and feed nothing. */
static void single_exact(const sk_rig *r, const float *locals, const float *initial_skin, float *final,
                         float *absolute) {
  float wslot[SK_RIG_MAX_LIVE][16] __attribute__((aligned(32)));
  float aslot[SK_RIG_MAX_LIVE][16] __attribute__((aligned(32)));
  const bool two_chains = absolute != NULL && initial_skin != NULL;
  single_fixed_slots(r, final, absolute);
  for (size_t s = 0; s < r->steps; s++) {
    const sk_rig_step *st = &r->step[s];
    const float *l = locals + 16 * (size_t)st->bone;
    /* Straight into the scratch slot; it may be the parent's (the last
     * child reuses it), which sk_mat_mul allows. */
    float leaf[16] __attribute__((aligned(32)));
    float *w = st->slot >= 0 ? wslot[st->slot] : leaf;
    if (st->parent_slot >= 0)
      sk_mat_mul(l, wslot[st->parent_slot], w);
    else if (initial_skin != NULL)
      sk_mat_mul(l, initial_skin, w);
    else
      memcpy(w, l, 16 * sizeof *w);
    if (st->out >= 0)
      sk_mat_mul(r->inv_bind + 16 * s, w, final + 16 * (size_t)st->out);
    if (absolute == NULL)
      continue;
    if (!two_chains) {
      if (st->out >= 0)
        memcpy(absolute + 16 * (size_t)st->out, w, 16 * sizeof *w);
      continue;
    }
    float *a = st->slot >= 0 ? aslot[st->slot] : leaf;
    if (st->parent_slot >= 0)
      sk_mat_mul(l, aslot[st->parent_slot], a);
    else
      memcpy(a, l, 16 * sizeof *a);
    if (st->out >= 0)
      memcpy(absolute + 16 * (size_t)st->out, a, 16 * sizeof *a);
  }
}

int sk_kernel_single_on(const char *path, const sk_rig *r, const float *locals, const float *initial_skin,
                        float *final, float *absolute) {
  const int rc = sk_kernel_path_check(path);
  if (rc != 0)
    return rc;
  single_exact(r, locals, initial_skin, final, absolute);
  return 0;
}

void sk_kernel_single(const sk_rig *r, const float *locals, const float *initial_skin, float *final, float *absolute) {
  single_exact(r, locals, initial_skin, final, absolute);
}
