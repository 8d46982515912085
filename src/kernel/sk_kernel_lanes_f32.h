/* The lane-generic body of the float32 batch kernel (precision FAST; the
 * exact kernel is sk_kernel_lanes.h). Not a public header: sk_kernel_f32.c
 * includes it once per SIMD path, after defining
 *
 *   SKK(name)     the name with the path's suffix
 *   SKK_ATTR      the path's function attributes (its target ISA)
 *   SKK_N         lanes (poses per group)
 *   V             the vector type; one lane = one pose
 *   VLOAD(p)      SKK_N floats from p          VLOADN(p, n)  n < SKK_N floats, rest 0
 *   VSET1(x)      broadcast                    VZERO()
 *   VADD VSUB VMUL(a, b)                       VFMA(a, b, c) a*b + c (fused where the ISA has it)
 *   VALL_EQ(v, x) every lane of v equals x
 *   SKK(store_mats)(dst, stride, m[16], n, stream)   transpose: lane l's 16 entries to dst + l*stride
 *   SKK_STORE_CONST(dst, stride, m16, n, stream)   the same 16 floats to lanes 0..n-1
 *   and the group walk's hooks (sk_kernel_group.h)
 *   SKK_PREFETCH  how many poses ahead to prefetch input (a multiple of 16)
 *
 * It #undefs all of these at its end, ready for the next path.
 *
 * Matrices are 16 vectors, entry-major (v[4*row + col], Babylon's m order),
 * one pose per lane. Products follow the row-vector convention of sk_mat_mul:
 * o = a · b, o[4i+j] = sum_k a[4i+k] b[4k+j]. "affine" means column 3 is
 * (0, 0, 0, 1) in both operands; then the product has it too and a quarter
 * of the work disappears. */

#include "sk_kernel_rows.h"

/* o = a · b, both per lane. o must not alias a or b. */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(mul_vv)(const V *a, const V *b, V *o, bool affine) {
  if (affine) {
#pragma GCC unroll 4
    for (int i = 0; i < 3; i++) {
#pragma GCC unroll 4
      for (int j = 0; j < 3; j++)
        o[4 * i + j] = VFMA(a[4 * i + 2], b[8 + j], VFMA(a[4 * i + 1], b[4 + j], VMUL(a[4 * i], b[j])));
      o[4 * i + 3] = VZERO();
    }
#pragma GCC unroll 4
    for (int j = 0; j < 3; j++)
      o[12 + j] = VFMA(a[14], b[8 + j], VFMA(a[13], b[4 + j], VFMA(a[12], b[j], b[12 + j])));
    o[15] = VSET1(1.0f);
  } else {
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
#pragma GCC unroll 4
      for (int j = 0; j < 4; j++)
        o[4 * i + j] = VFMA(a[4 * i + 3], b[12 + j],
                            VFMA(a[4 * i + 2], b[8 + j], VFMA(a[4 * i + 1], b[4 + j], VMUL(a[4 * i], b[j]))));
  }
}

/* o = a · b with `a` one matrix for every lane (an inverse bind). */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(mul_sv)(const float *a, const V *b, V *o, bool affine) {
  if (affine) {
#pragma GCC unroll 4
    for (int i = 0; i < 3; i++) {
#pragma GCC unroll 4
      for (int j = 0; j < 3; j++)
        o[4 * i + j] =
            VFMA(VSET1(a[4 * i + 2]), b[8 + j], VFMA(VSET1(a[4 * i + 1]), b[4 + j], VMUL(VSET1(a[4 * i]), b[j])));
      o[4 * i + 3] = VZERO();
    }
#pragma GCC unroll 4
    for (int j = 0; j < 3; j++)
      o[12 + j] = VFMA(VSET1(a[14]), b[8 + j], VFMA(VSET1(a[13]), b[4 + j], VFMA(VSET1(a[12]), b[j], b[12 + j])));
    o[15] = VSET1(1.0f);
  } else {
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
#pragma GCC unroll 4
      for (int j = 0; j < 4; j++)
        o[4 * i + j] = VFMA(VSET1(a[4 * i + 3]), b[12 + j],
                            VFMA(VSET1(a[4 * i + 2]), b[8 + j],
                                 VFMA(VSET1(a[4 * i + 1]), b[4 + j], VMUL(VSET1(a[4 * i]), b[j]))));
  }
}

/* o = a · b with `b` one matrix for every lane (the initial skin). */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(mul_vs)(const V *a, const float *b, V *o, bool affine) {
  if (affine) {
#pragma GCC unroll 4
    for (int i = 0; i < 3; i++) {
#pragma GCC unroll 4
      for (int j = 0; j < 3; j++)
        o[4 * i + j] =
            VFMA(a[4 * i + 2], VSET1(b[8 + j]), VFMA(a[4 * i + 1], VSET1(b[4 + j]), VMUL(a[4 * i], VSET1(b[j]))));
      o[4 * i + 3] = VZERO();
    }
#pragma GCC unroll 4
    for (int j = 0; j < 3; j++)
      o[12 + j] =
          VFMA(a[14], VSET1(b[8 + j]), VFMA(a[13], VSET1(b[4 + j]), VFMA(a[12], VSET1(b[j]), VSET1(b[12 + j]))));
    o[15] = VSET1(1.0f);
  } else {
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
#pragma GCC unroll 4
      for (int j = 0; j < 4; j++)
        o[4 * i + j] = VFMA(a[4 * i + 3], VSET1(b[12 + j]),
                            VFMA(a[4 * i + 2], VSET1(b[8 + j]),
                                 VFMA(a[4 * i + 1], VSET1(b[4 + j]), VMUL(a[4 * i], VSET1(b[j])))));
  }
}

/* Loads bone `bone`'s local transform for lanes p0..p0+n-1 into l[16];
 * returns whether it is affine for every lane. TRS composes exactly as
 * Babylon's Matrix.ComposeToRef, in float. */
static SKK_ATTR inline __attribute__((always_inline)) bool SKK(load_local)(const sk_kernel_job *job, size_t bone, size_t p0, size_t n, V *l) {
  const float *in = job->input + job->offset[bone];
  const size_t st = job->pose_stride;
  const size_t at = pose_at(job, p0);
  switch (job->mode[bone]) {
  case SK_KERNEL_CONST:
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++)
      l[k] = VSET1(in[k]);
    return in[3] == 0 && in[7] == 0 && in[11] == 0 && in[15] == 1;
  case SK_KERNEL_MATRIX:
    in += at;
    SKK(load_rows)(in, st, n, 16, l);
    /* Matrices from Babylon's setters are affine: then the fast path
     * applies. A short group's empty lanes load 0 in l[15] and say no. */
    return VALL_EQ(l[3], 0.0f) && VALL_EQ(l[7], 0.0f) && VALL_EQ(l[11], 0.0f) && VALL_EQ(l[15], 1.0f);
  default: {
    V r[10];
    in += at;
    SKK(load_rows)(in, st, n, 10, r);
    const V x = r[3], y = r[4], z = r[5], w = r[6];
    const V x2 = VADD(x, x), y2 = VADD(y, y), z2 = VADD(z, z);
    const V xx = VMUL(x, x2), xy = VMUL(x, y2), xz = VMUL(x, z2);
    const V yy = VMUL(y, y2), yz = VMUL(y, z2), zz = VMUL(z, z2);
    const V wx = VMUL(w, x2), wy = VMUL(w, y2), wz = VMUL(w, z2);
    const V one = VSET1(1.0f);
    l[0] = VMUL(VSUB(one, VADD(yy, zz)), r[7]);
    l[1] = VMUL(VADD(xy, wz), r[7]);
    l[2] = VMUL(VSUB(xz, wy), r[7]);
    l[3] = VZERO();
    l[4] = VMUL(VSUB(xy, wz), r[8]);
    l[5] = VMUL(VSUB(one, VADD(xx, zz)), r[8]);
    l[6] = VMUL(VADD(yz, wx), r[8]);
    l[7] = VZERO();
    l[8] = VMUL(VADD(xz, wy), r[9]);
    l[9] = VMUL(VSUB(yz, wx), r[9]);
    l[10] = VMUL(VSUB(one, VADD(xx, yy)), r[9]);
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
#define SKK_INIT_T float
#define SKK_INIT_AFFINE(m) ((m)[3] == 0 && (m)[7] == 0 && (m)[11] == 0 && (m)[15] == 1)
#define SKK_STEP_FAST(st) ((st)->inv_bind_affine)
#define SKK_FUSE 0

static SKK_ATTR inline __attribute__((always_inline)) void SKK(prefetch_bone)(const sk_kernel_job *job, size_t bone, size_t p) {
  const uint8_t m = job->mode[bone];
  if (m != SK_KERNEL_CONST) {
    const float *in = job->input + job->offset[bone] + pose_at(job, p);
    const int rows = m == SK_KERNEL_TRS ? 10 : 16;
    for (int k = 0; k < rows; k++)
      __builtin_prefetch(in + k * job->pose_stride, 0, SK_KERNEL_PREFETCH_HINT);
  }
}

/* The affine test here is == (a -0 passes), so the fast path's column 3
 * is written as the constants the affine products assume. */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(fix_column3)(V *w) {
  w[3] = w[7] = w[11] = VZERO();
  w[15] = VSET1(1.0f);
}

static SKK_ATTR inline __attribute__((always_inline)) void SKK(final_out)(const sk_rig *rig, size_t s, const V *w, float *dst, size_t stride, size_t n, bool stream, bool affine) {
  V f[16];
  SKK(mul_sv)(rig->inv_bind + 16 * s, w, f, affine);
  SKK(store_mats)(dst, stride, f, n, stream);
}

#include "sk_kernel_group.h"

/* A tail of a few poses costs a whole group of lanes: below SKK_N / 4
 * poses the scalar path is faster. Only the last group of a range can be
 * short, and ranges start at multiples of 16, so splitting a batch never
 * changes which poses take it. */
static SKK_ATTR void SKK(run)(const sk_kernel_job *job, size_t begin, size_t end, bool stream) {
  for (size_t p = begin; p < end; p += SKK_N) {
    const size_t n = end - p < SKK_N ? end - p : SKK_N;
    if (4 * n < SKK_N) {
      for (size_t q = p; q < end; q++)
        group_scalar_f32(job, q, 1, false);
    } else
      SKK(group)(job, p, n, stream);
  }
}

#undef SKK
#undef SKK_ATTR
#undef SKK_N
#undef SKK_PREFETCH
#undef V
#undef VLOAD
#undef VLOADN
#undef VSET1
#undef VZERO
#undef VADD
#undef VSUB
#undef VMUL
#undef VFMA
#undef VALL_EQ
