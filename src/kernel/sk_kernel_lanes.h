/* The lane-generic body of the exact batch kernel. Not a public header:
 * sk_kernel.c includes it once per SIMD path, after defining
 *
 *   SKK(name)     the name with the path's suffix
 *   SKK_ATTR      the path's function attributes (its target ISA)
 *   SKK_N         lanes (poses per group)
 *   V             the vector type: SKK_N doubles, one lane = one pose
 *   VLOAD(p)      SKK_N floats from p, widened  VLOADN(p, n)  n < SKK_N floats, rest 0
 *   VLOAD64(p)    SKK_N doubles from p (TRS64 input)
 *   VSET1(x)      broadcast                     VZERO()
 *   VADD VSUB VMUL(a, b)   double arithmetic, one rounding each
 *   VFMA(a, b, c)  a*b + c, fused where the ISA has it; VFNMA(a, b, c) c - a*b.
 *                  Used ONLY where a and b are float32 values (see below).
 *   VROUND(v)     v rounded to float32 and widened back: a store into Babylon's Float32Array
 *   VALL_BITS(v, bits)  every lane of v has the 64-bit pattern `bits` (+0.0 and -0.0 differ)
 *   VZ            a packed pair of entries: entry k and entry k+8 of every lane, rounded to float32
 *   VPACK2(lo, hi)  packs entry k (lo) and entry k+8 (hi)
 *   VPACK2F(lo, hi) the same from two floats, each the same in every lane
 *   SKK(store_packed)(dst, stride, z[8], n, stream)  transposes z[0..7] (k = 0..7): lane l's 16 floats to dst + l*stride
 *   SKK_STORE_CONST(dst, stride, m16, n, stream)   the same 16 floats to lanes 0..n-1
 *   and the group walk's hooks (sk_kernel_group.h)
 *   SKK_PREFETCH  how many poses ahead to prefetch input (a multiple of 16)
 *
 * It #undefs all of these at its end, ready for the next path.
 *
 * Exactness. Every step is the scalar core's (sk_mat.c), operation for
 * operation: matrices are stored in float32, each formula computes in
 * double on float32 inputs in Babylon's order and rounds once to float32
 * where Babylon stores into a Matrix (compose, every product). So every
 * lane gives sk_skeleton_evaluate's bits, and every path gives the same bits.
 *
 * The FMA argument. A float32 has a 24-bit significand, so the product of
 * two float32 values needs at most 48 bits and is exact in a double (53
 * bits; no overflow or underflow either: |a*b| < 2^256 and > 2^-300). For
 * such a product p, Babylon's "t = p; s = t + c" rounds once, in the add:
 * round(p + c). fma(a, b, c) also rounds once: round(a*b + c) = round(p + c).
 * The same bits, one instruction. Every VFMA/VFNMA below multiplies two
 * float32 values (matrix entries, which are stored as float32, or a
 * quaternion component and twice another, which is a float32 scaled by 2)
 * and says so. Products of doubles that are not float32 values (the
 * "(1 - (yy + zz)) * sx" of compose) are never fused.
 *
 * Matrices are 16 vectors, entry-major (v[4*row + col], Babylon's m order),
 * one pose per lane. Products follow the row-vector convention of
 * sk_mat_mul: o = a · b, o[4i+j] = ((a[4i]b[j] + a[4i+1]b[4+j]) + a[4i+2]b[8+j])
 * + a[4i+3]b[12+j], left to right, as Babylon's multiplyToArray.
 *
 * "affine" means column 3 is bitwise (+0, +0, +0, 1) -- not merely == 0,
 * since -0 * x and +0 * x differ in sign and a sum of zeros keeps it. With
 * both operands affine and finite, column 3 of the product is bitwise
 * (+0, +0, +0, 1) (each sum ends "+ (+0)*1" or "+ 1*1" on partial sums
 * of zeros), and row 3's last term 1 * b[12+j] is exactly b[12+j]: the
 * product costs 48 operations instead of 64 with the same bits. The
 * a[4i+3]b[12+j] = (+0)*t terms of rows 0-2 stay: they turn a partial sum
 * of -0 into +0 when t >= +0, as Babylon's sum does. A non-finite entry
 * (an overflowed pose) would make Babylon's column 3 NaN where this keeps
 * (0, 0, 0, 1); the kernel's exactness is for finite matrices. */

/* ((a0 b0 + a1 b1) + a2 b2) + a3 b3, each product of two float32 values:
 * fusing them is exact (see above). */
#define SKK_DOT4(a0, b0, a1, b1, a2, b2, a3, b3) VFMA((a3), (b3), VFMA((a2), (b2), VFMA((a1), (b1), VMUL((a0), (b0)))))
/* Row 3 of an affine product: a[15] is 1, so its term is b[12+j] itself. */
#define SKK_DOT3_1(a0, b0, a1, b1, a2, b2, b3) VADD(VFMA((a2), (b2), VFMA((a1), (b1), VMUL((a0), (b0)))), (b3))

/* The product body over operand accessors A(k) and B(k) (vectors). */
#define SKK_MUL_BODY(A, B)                                                                                          \
  if (affine) {                                                                                                     \
    _Pragma("GCC unroll 4") for (int i = 0; i < 3; i++) {                                                           \
      _Pragma("GCC unroll 4") for (int j = 0; j < 3; j++) o[4 * i + j] =                                            \
          VROUND(SKK_DOT4(A(4 * i), B(j), A(4 * i + 1), B(4 + j), A(4 * i + 2), B(8 + j), A(4 * i + 3), B(12 + j))); \
      o[4 * i + 3] = VZERO();                                                                                       \
    }                                                                                                               \
    _Pragma("GCC unroll 4") for (int j = 0; j < 3; j++) o[12 + j] =                                                 \
        VROUND(SKK_DOT3_1(A(12), B(j), A(13), B(4 + j), A(14), B(8 + j), B(12 + j)));                              \
    o[15] = VSET1(1.0);                                                                                             \
  } else {                                                                                                          \
    _Pragma("GCC unroll 4") for (int i = 0; i < 4; i++) _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)         \
        o[4 * i + j] = VROUND(                                                                                      \
            SKK_DOT4(A(4 * i), B(j), A(4 * i + 1), B(4 + j), A(4 * i + 2), B(8 + j), A(4 * i + 3), B(12 + j)));    \
  }

#define SKK_VEC_A(k) a[k]
#define SKK_VEC_B(k) b[k]
#define SKK_CONST_B(k) VSET1(b[k])

#include "sk_kernel_rows.h"

/* o = a · b, both per lane, rounded to float32 (then widened). o must not
 * alias a or b. */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(mul_vv)(const V *a, const V *b, V *o, bool affine) {
  SKK_MUL_BODY(SKK_VEC_A, SKK_VEC_B)
}

/* o = a · b with `b` one matrix for every lane (the initial skin). */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(mul_vs)(const V *a, const double *b, V *o, bool affine) {
  SKK_MUL_BODY(SKK_VEC_A, SKK_CONST_B)
}

/* Lane l's 16 entries, rounded to float32, to dst + l*stride. */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(store_mats)(float *dst, size_t stride, const V *m, size_t n, bool stream) {
  VZ z[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; k++)
    z[k] = VPACK2(m[k], m[k + 8]);
  SKK(store_packed)(dst, stride, z, n, stream);
}

/* Entry (i, j) of the final product a · b (inverse bind · world), before
 * its one rounding to float32 (the store's). */
static SKK_ATTR inline __attribute__((always_inline)) V SKK(final_entry)(const double *a, const V *b, int i, int j, bool affine) {
  if (affine && j == 3)
    return VSET1(i == 3 ? 1.0 : 0.0);
  if (affine && i == 3)
    return SKK_DOT3_1(VSET1(a[12]), b[j], VSET1(a[13]), b[4 + j], VSET1(a[14]), b[8 + j], b[12 + j]);
  return SKK_DOT4(VSET1(a[4 * i]), b[j], VSET1(a[4 * i + 1]), b[4 + j], VSET1(a[4 * i + 2]), b[8 + j],
                  VSET1(a[4 * i + 3]), b[12 + j]);
}

/* The final product stored straight away: rows 0 and 2, then 1 and 3, each
 * entry pair packed to float32 as soon as it exists, so 8 packed registers
 * are live at the transpose instead of 16 of doubles (the compiler keeps
 * this order: fewer spills). */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(final_store)(const double *a, const V *b, float *dst, size_t stride, size_t n, bool stream, bool affine) {
  VZ z[8];
#pragma GCC unroll 2
  for (int h = 0; h < 2; h++)
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
      z[4 * h + j] = VPACK2(SKK(final_entry)(a, b, h, j, affine), SKK(final_entry)(a, b, h + 2, j, affine));
  SKK(store_packed)(dst, stride, z, n, stream);
}

/* Column j < 3 of the final ib · w, w's column j given as c0..c3, as the
 * packed pairs z[j] = (entry j, entry 8+j) and z[4+j] = (4+j, 12+j).
 * Every entry is final_entry's sum; the inverse bind's entry 15 is
 * bitwise 1 (SKK_STEP_FAST), so row 3 ends "+ c3" (1 · c3 is c3). */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(final_column)(const double *a, V c0, V c1, V c2, V c3,
                                                                             VZ *z, int j) {
  V f[4];
#pragma GCC unroll 3
  for (int i = 0; i < 3; i++)
    f[i] = SKK_DOT4(VSET1(a[4 * i]), c0, VSET1(a[4 * i + 1]), c1, VSET1(a[4 * i + 2]), c2, VSET1(a[4 * i + 3]), c3);
  f[3] = SKK_DOT3_1(VSET1(a[12]), c0, VSET1(a[13]), c1, VSET1(a[14]), c2, c3);
  z[j] = VPACK2(f[0], f[2]);
  z[4 + j] = VPACK2(f[1], f[3]);
}

/* The final of an affine world w (column 3 bitwise (+0, +0, +0, 1)):
 * column 3 of ib · w is then the step's constant final_col3 (the same sum,
 * computed once at rig build), which also holds for inverse binds whose
 * column 3 has a -0 (computed by inversion) that the affine test rejects. */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(final_fast)(const double *a, const float *col3, const V *w,
                                                                           float *dst, size_t stride, size_t n,
                                                                           bool stream) {
  VZ z[8];
#pragma GCC unroll 3
  for (int j = 0; j < 3; j++)
    SKK(final_column)(a, w[j], w[4 + j], w[8 + j], w[12 + j], z, j);
  z[3] = VPACK2F(col3[0], col3[2]);
  z[7] = VPACK2F(col3[1], col3[3]);
  SKK(store_packed)(dst, stride, z, n, stream);
}

/* The fast path's common step fused (SKK_FUSE): world = l · pw (both
 * affine; pw's column 3 is not read) and its final_fast, column by column.
 * Column j of the world needs only column j of pw, and column j of the
 * final only column j of the world, so each world column goes from its
 * four products straight into its slot (ws, unless NULL) and into the
 * final: fewer live values than the world then the final (16 + 16
 * vectors), no spill and copy of the world. Each entry is mul_vv's
 * expression, so the bits are the same; ws may be pw (a last child reuses
 * its parent's slot): column j is stored after its last read. Only the
 * AVX-512 path fuses: with 16 registers, AVX2 measured 3 % slower fused.
 * Source order is issue order here (GCC does not schedule before register
 * allocation on x86): each column's final comes after the next column's
 * world, so the roundings of one overlap the products of the other
 * (2-3 % at 65 x 64; a lag of two columns measured the same, again
 * with the broadcasts folded: the same instructions, 1-2 %, noise). */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(world_final)(const V *l, const V *pw, V *ws,
                                                                            const double *a, const float *col3,
                                                                            float *dst, size_t stride, size_t n,
                                                                            bool stream) {
  VZ z[8];
  V c[3][4];
#pragma GCC unroll 4
  for (int j = 0; j < 4; j++) {
    if (j < 3) {
      c[j][0] = VROUND(SKK_DOT4(l[0], pw[j], l[1], pw[4 + j], l[2], pw[8 + j], l[3], pw[12 + j]));
      c[j][1] = VROUND(SKK_DOT4(l[4], pw[j], l[5], pw[4 + j], l[6], pw[8 + j], l[7], pw[12 + j]));
      c[j][2] = VROUND(SKK_DOT4(l[8], pw[j], l[9], pw[4 + j], l[10], pw[8 + j], l[11], pw[12 + j]));
      c[j][3] = VROUND(SKK_DOT3_1(l[12], pw[j], l[13], pw[4 + j], l[14], pw[8 + j], pw[12 + j]));
      if (ws != NULL)
        ws[j] = c[j][0], ws[4 + j] = c[j][1], ws[8 + j] = c[j][2], ws[12 + j] = c[j][3];
    }
    if (j > 0) { /* the previous column's final, after this column's world: its roundings overlap */
      /* An empty asm that may write memory: the inverse bind's entries are
       * read again for each column, so each broadcast folds into its
       * product as a memory operand ({1to8}). Without it GCC keeps the 15
       * broadcasts in registers across the columns, runs out of the 32 and
       * spills them (and the local's entries) to the stack: 9 more 512-bit
       * stores and 5 more reloads per bone, at about two cycles a store on
       * Zen 4. */
      __asm__("" ::: "memory");
      SKK(final_column)(a, c[j - 1][0], c[j - 1][1], c[j - 1][2], c[j - 1][3], z, j - 1);
    }
  }
  z[3] = VPACK2F(col3[0], col3[2]);
  z[7] = VPACK2F(col3[1], col3[3]);
  SKK(store_packed)(dst, stride, z, n, stream);
}

/* Loads bone `bone`'s local transform for lanes p0..p0+n-1 into l[16] (as
 * float32 values in doubles); returns whether it is affine for every lane.
 * TRS composes exactly as the core's sk_mat_compose (Babylon's
 * Matrix.ComposeToRef) on the float32 inputs. */
static SKK_ATTR inline __attribute__((always_inline)) bool SKK(load_local)(const sk_kernel_job *job, size_t bone, size_t p0, size_t n, V *l) {
  const float *in = job->input + job->offset[bone];
  const size_t st = job->pose_stride;
  const size_t at = pose_at(job, p0);
  switch (job->mode[bone]) {
  case SK_KERNEL_CONST:
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++)
      l[k] = VSET1((double)in[k]);
    return is_affine(in);
  case SK_KERNEL_MATRIX:
    in += at;
    SKK(load_rows)(in, st, n, 16, l);
    /* Matrices from Babylon's setters are affine: then the cheaper product
     * applies. A short group's empty lanes load 0 in l[15] and say no. */
    return VALL_BITS(l[3], 0) && VALL_BITS(l[7], 0) && VALL_BITS(l[11], 0) && VALL_BITS(l[15], SK_KERNEL_ONE_BITS);
  case SK_KERNEL_TRS64: {
    /* sk_mat_compose on doubles, step for step: these products are not of
     * float32 values, so none is fused. Groups are always full (a tail
     * runs on a narrower path), so whole vectors load. */
    const double *d = job->input64 + job->offset[bone] + at;
    V r[10];
#pragma GCC unroll 10
    for (int k = 0; k < 10; k++)
      r[k] = VLOAD64(d + k * st);
    const V x = r[3], y = r[4], z = r[5], w = r[6];
    const V x2 = VADD(x, x), y2 = VADD(y, y), z2 = VADD(z, z);
    const V xx = VMUL(x, x2), xy = VMUL(x, y2), xz = VMUL(x, z2);
    const V yy = VMUL(y, y2), yz = VMUL(y, z2), zz = VMUL(z, z2);
    const V wx = VMUL(w, x2), wy = VMUL(w, y2), wz = VMUL(w, z2);
    const V one = VSET1(1.0);
    l[0] = VROUND(VMUL(VSUB(one, VADD(yy, zz)), r[7]));
    l[1] = VROUND(VMUL(VADD(xy, wz), r[7]));
    l[2] = VROUND(VMUL(VSUB(xz, wy), r[7]));
    l[3] = VZERO();
    l[4] = VROUND(VMUL(VSUB(xy, wz), r[8]));
    l[5] = VROUND(VMUL(VSUB(one, VADD(xx, zz)), r[8]));
    l[6] = VROUND(VMUL(VADD(yz, wx), r[8]));
    l[7] = VZERO();
    l[8] = VROUND(VMUL(VADD(xz, wy), r[9]));
    l[9] = VROUND(VMUL(VSUB(yz, wx), r[9]));
    l[10] = VROUND(VMUL(VSUB(one, VADD(xx, yy)), r[9]));
    l[11] = VZERO();
    l[12] = VROUND(r[0]);
    l[13] = VROUND(r[1]);
    l[14] = VROUND(r[2]);
    l[15] = one;
    return true;
  }
  default: {
    V r[10];
    in += at;
    SKK(load_rows)(in, st, n, 10, r);
    /* sk_mat_compose, step for step. x2 = x + x is exact (a float32 times
     * 2), so xx = x * x2 etc. are products of two float32 values: exact,
     * and fusing the sums of two of them is exact too (the FMA argument). */
    const V x = r[3], y = r[4], z = r[5], w = r[6];
    const V x2 = VADD(x, x), y2 = VADD(y, y), z2 = VADD(z, z);
    const V xx = VMUL(x, x2), xy = VMUL(x, y2), xz = VMUL(x, z2);
    const V yy = VMUL(y, y2), yz = VMUL(y, z2);
    const V one = VSET1(1.0);
    const V yy_zz = VFMA(z, z2, yy), xx_zz = VFMA(z, z2, xx), xx_yy = VFMA(y, y2, xx); /* zz, yy: float32 products */
    const V xy_wz = VFMA(w, z2, xy), xy_mwz = VFNMA(w, z2, xy);                      /* wz: float32 product */
    const V xz_mwy = VFNMA(w, y2, xz), xz_wy = VFMA(w, y2, xz);                      /* wy: float32 product */
    const V yz_wx = VFMA(w, x2, yz), yz_mwx = VFNMA(w, x2, yz);                      /* wx: float32 product */
    l[0] = VROUND(VMUL(VSUB(one, yy_zz), r[7]));
    l[1] = VROUND(VMUL(xy_wz, r[7]));
    l[2] = VROUND(VMUL(xz_mwy, r[7]));
    l[3] = VZERO();
    l[4] = VROUND(VMUL(xy_mwz, r[8]));
    l[5] = VROUND(VMUL(VSUB(one, xx_zz), r[8]));
    l[6] = VROUND(VMUL(yz_wx, r[8]));
    l[7] = VZERO();
    l[8] = VROUND(VMUL(xz_wy, r[9]));
    l[9] = VROUND(VMUL(yz_mwx, r[9]));
    l[10] = VROUND(VMUL(VSUB(one, xx_yy), r[9]));
    l[11] = VZERO();
    l[12] = r[0];
    l[13] = r[1];
    l[14] = r[2];
    l[15] = one;
    return true;
  }
  }
}

/* The group walk's hooks (sk_kernel_group.h). */
#define SKK_INIT_T double
#define SKK_INIT_AFFINE(m) is_affine(m)

static SKK_ATTR inline __attribute__((always_inline)) void SKK(prefetch_bone)(const sk_kernel_job *job, size_t bone, size_t p) {
  const uint8_t m = job->mode[bone];
  const size_t st_rows = job->pose_stride;
  if (m == SK_KERNEL_TRS64) { /* rows of 16 doubles: two lines each */
    const double *in = job->input64 + job->offset[bone] + pose_at(job, p);
    for (int k = 0; k < 10; k++) {
      __builtin_prefetch(in + k * st_rows, 0, SK_KERNEL_PREFETCH_HINT);
      __builtin_prefetch(in + k * st_rows + 8, 0, SK_KERNEL_PREFETCH_HINT);
    }
  } else if (m != SK_KERNEL_CONST) {
    const float *in = job->input + job->offset[bone] + pose_at(job, p);
    if (m == SK_KERNEL_TRS) {
#pragma GCC unroll 10
      for (int k = 0; k < 10; k++)
        __builtin_prefetch(in + k * st_rows, 0, SK_KERNEL_PREFETCH_HINT);
    } else {
#pragma GCC unroll 16
      for (int k = 0; k < 16; k++)
        __builtin_prefetch(in + k * st_rows, 0, SK_KERNEL_PREFETCH_HINT);
    }
  }
}

/* The products write column 3 bitwise: nothing to fix. */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(fix_column3)(V *w) { (void)w; }

static SKK_ATTR inline __attribute__((always_inline)) void SKK(final_out)(const sk_rig *rig, size_t s, const V *w, float *dst, size_t stride, size_t n, bool stream, bool affine) {
  /* A fusing path reaches this only for roots and the absolute output's
   * steps: there the general final, which keeps its hot code smaller,
   * measured faster. */
  if (affine && !SKK_FUSE)
    SKK(final_fast)(rig->inv_bind64 + 16 * s, rig->step[s].final_col3, w, dst, stride, n, stream);
  else
    SKK(final_store)(rig->inv_bind64 + 16 * s, w, dst, stride, n, stream, affine && rig->step[s].inv_bind_affine);
}

#define SKK_WORLD_FINAL(rig, s, l, pw, ws, dst, stride, n, stream) \
  SKK(world_final)((l), (pw), (ws), (rig)->inv_bind64 + 16 * (s), (rig)->step[s].final_col3, (dst), (stride), (n), (stream))
/* The fast path needs the inverse bind's entry 15 to be 1 only: column 3 of
 * the final is then the step's constant (world_final). */
#define SKK_STEP_FAST(st) ((st)->inv_bind_one)
#include "sk_kernel_group.h"

/* Whole groups, then the tail (fewer than SKK_N poses) on the next
 * narrower path (SKK_TAIL): a half-empty group of doubles costs as much as
 * a full one, so 3 poses run faster as an AVX2 group of 4 than as an
 * AVX-512 group of 8, and 1 pose fastest on the scalar path. Every path
 * gives the same bits, so which takes a pose changes nothing; groups start
 * at multiples of their width, so none straddles a 16-pose block. */
static SKK_ATTR void SKK(run)(const sk_kernel_job *job, size_t begin, size_t end, bool stream) {
  size_t p = begin;
  for (; end - p >= SKK_N; p += SKK_N)
    SKK(group)(job, p, SKK_N, stream);
  if (p < end)
    SKK_TAIL(job, p, end, stream);
}

#undef SKK_DOT4
#undef SKK_DOT3_1
#undef SKK_MUL_BODY
#undef SKK_VEC_A
#undef SKK_VEC_B
#undef SKK_CONST_B
#undef SKK
#undef SKK_ATTR
#undef SKK_N
#undef SKK_PREFETCH
#undef SKK_TAIL
#undef V
#undef VLOAD
#undef VLOADN
#undef VLOAD64
#undef VSET1
#undef VZERO
#undef VADD
#undef VSUB
#undef VMUL
#undef VFMA
#undef VFNMA
#undef VROUND
#undef VALL_BITS
#undef VZ
#undef VPACK2
#undef VPACK2F
