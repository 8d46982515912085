#include "sk_mat.h"

#include <math.h>
#include <string.h>

#include "sk_cpu.h"
#include "sk_fdlibm.h"

/* Four doubles per vector, a row of the product at a time: each lane sums
 * a[4r]*b[c] + a[4r+1]*b[4+c] + a[4r+2]*b[8+c] + a[4r+3]*b[12+c] left to
 * right with separate roundings (no FMA: -ffp-contract=off, and the AVX2
 * form's target does not enable FMA), exactly Babylon's multiplyToArray, so the
 * bits do not change; the conformance suite checks them against Babylon.
 * It is the hot loop of every exact pose (two products per bone): the AVX2
 * form takes less than half the instructions of the scalar loop. */
typedef double sk_mat_v4d __attribute__((vector_size(32)));
typedef float sk_mat_v4f __attribute__((vector_size(16)));

/* Row i of b widened to doubles, as one vector: written element by
 * element, it took the basic-block vectorizer, which the build may turn
 * off (configure.ac); the AVX2 form says vcvtps2pd itself. */
static inline void sk_mat_row(const float *b, int i, sk_mat_v4d *y) {
  sk_mat_v4f row;
  memcpy(&row, b + 4 * i, sizeof row);
  *y = __builtin_convertvector(row, sk_mat_v4d);
}

/* Read every input before the first write: dest may alias a or b. */
#define SK_MAT_MUL_V4(ROW)                                                                 \
  sk_mat_v4d y[4];                                                                         \
  _Pragma("GCC unroll 4") for (int i = 0; i < 4; i++) ROW(b, i, &y[i]);                    \
  sk_mat_v4f out[4];                                                                       \
  _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) {                                    \
    const double x0 = a[4 * r], x1 = a[4 * r + 1], x2 = a[4 * r + 2], x3 = a[4 * r + 3];   \
    const sk_mat_v4d acc = ((x0 * y[0] + x1 * y[1]) + x2 * y[2]) + x3 * y[3];             \
    out[r] = __builtin_convertvector(acc, sk_mat_v4f);                                     \
  }                                                                                        \
  memcpy(dest, out, sizeof out);

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

static void mul_v4(const float a[16], const float b[16], float dest[16]) { SK_MAT_MUL_V4(sk_mat_row) }

__attribute__((target("avx2"))) static inline void row_avx2(const float *b, int i, sk_mat_v4d *y) {
  *y = (sk_mat_v4d)_mm256_cvtps_pd(_mm_loadu_ps(b + 4 * i));
}

__attribute__((target("avx2"))) static void mul_avx2(const float a[16], const float b[16], float dest[16]) {
  SK_MAT_MUL_V4(row_avx2)
}

/* The CPU check is a load and a well-predicted branch per call; an ifunc
 * would save it but runs before the sanitizers' runtime is up. No AVX-512
 * form: two rows per register needs lane-crossing shuffles that made the
 * parent-to-child chain of products 40 % slower (16 against 11.5 ns per
 * product), while independent products gained nothing. */
void sk_mat_mul(const float a[16], const float b[16], float dest[16]) {
  if (sk_cpu_has(SK_CPU_AVX2))
    mul_avx2(a, b, dest);
  else
    mul_v4(a, b, dest);
}

int sk_mat_mul_on(const char *isa, const float a[16], const float b[16], float dest[16]) {
  const int which = sk_isa_parse(isa);
  if (which == SK_ISA_AVX2 && sk_cpu_has(SK_CPU_AVX2))
    mul_avx2(a, b, dest);
  else if (which == SK_ISA_SCALAR)
    mul_v4(a, b, dest);
  else
    return -1;
  return 0;
}
#else
void sk_mat_mul(const float a[16], const float b[16], float dest[16]) { SK_MAT_MUL_V4(sk_mat_row) }

int sk_mat_mul_on(const char *isa, const float a[16], const float b[16], float dest[16]) {
  if (sk_isa_parse(isa) != SK_ISA_SCALAR)
    return -1;
  sk_mat_mul(a, b, dest);
  return 0;
}
#endif

/* The six 2x2 minors of rows 2 and 3 that both the determinant and the
 * inverse start from, named as in Babylon's source. */
typedef struct {
  double d22_33, d21_33, d21_32, d20_33, d20_32, d20_31;
} minors23;

static minors23 lower_minors(const double *m) {
  const double m20 = m[8], m21 = m[9], m22 = m[10], m23 = m[11];
  const double m30 = m[12], m31 = m[13], m32 = m[14], m33 = m[15];
  minors23 r;
  r.d22_33 = m22 * m33 - m32 * m23;
  r.d21_33 = m21 * m33 - m31 * m23;
  r.d21_32 = m21 * m32 - m31 * m22;
  r.d20_33 = m20 * m33 - m30 * m23;
  r.d20_32 = m20 * m32 - m22 * m30;
  r.d20_31 = m20 * m31 - m30 * m21;
  return r;
}

static void widen(const float m[16], double d[16]) {
  for (int i = 0; i < 16; i++)
    d[i] = m[i];
}

double sk_mat_det(const float mf[16]) {
  double m[16];
  widen(mf, m);
  const minors23 k = lower_minors(m);
  const double m10 = m[4], m11 = m[5], m12 = m[6], m13 = m[7];
  const double c00 = +(m11 * k.d22_33 - m12 * k.d21_33 + m13 * k.d21_32);
  const double c01 = -(m10 * k.d22_33 - m12 * k.d20_33 + m13 * k.d20_32);
  const double c02 = +(m10 * k.d21_33 - m11 * k.d20_33 + m13 * k.d20_31);
  const double c03 = -(m10 * k.d21_32 - m11 * k.d20_32 + m12 * k.d20_31);
  return m[0] * c00 + m[1] * c01 + m[2] * c02 + m[3] * c03;
}

bool sk_mat_invert(const float mf[16], float dest[16]) {
  double m[16];
  widen(mf, m);
  const double m00 = m[0], m01 = m[1], m02 = m[2], m03 = m[3];
  const double m10 = m[4], m11 = m[5], m12 = m[6], m13 = m[7];
  const double m20 = m[8], m21 = m[9], m22 = m[10], m23 = m[11];
  const double m30 = m[12], m31 = m[13], m32 = m[14], m33 = m[15];
  const minors23 k = lower_minors(m);
  const double c00 = +(m11 * k.d22_33 - m12 * k.d21_33 + m13 * k.d21_32);
  const double c01 = -(m10 * k.d22_33 - m12 * k.d20_33 + m13 * k.d20_32);
  const double c02 = +(m10 * k.d21_33 - m11 * k.d20_33 + m13 * k.d20_31);
  const double c03 = -(m10 * k.d21_32 - m11 * k.d20_32 + m12 * k.d20_31);
  const double det = m00 * c00 + m01 * c01 + m02 * c02 + m03 * c03;
  if (det == 0) {
    if (dest != mf)
      memcpy(dest, mf, 16 * sizeof(float));
    return false;
  }
  const double inv = 1 / det;
  const double d12_33 = m12 * m33 - m32 * m13;
  const double d11_33 = m11 * m33 - m31 * m13;
  const double d11_32 = m11 * m32 - m31 * m12;
  const double d10_33 = m10 * m33 - m30 * m13;
  const double d10_32 = m10 * m32 - m30 * m12;
  const double d10_31 = m10 * m31 - m30 * m11;
  const double d12_23 = m12 * m23 - m22 * m13;
  const double d11_23 = m11 * m23 - m21 * m13;
  const double d11_22 = m11 * m22 - m21 * m12;
  const double d10_23 = m10 * m23 - m20 * m13;
  const double d10_22 = m10 * m22 - m20 * m12;
  const double d10_21 = m10 * m21 - m20 * m11;
  const double c10 = -(m01 * k.d22_33 - m02 * k.d21_33 + m03 * k.d21_32);
  const double c11 = +(m00 * k.d22_33 - m02 * k.d20_33 + m03 * k.d20_32);
  const double c12 = -(m00 * k.d21_33 - m01 * k.d20_33 + m03 * k.d20_31);
  const double c13 = +(m00 * k.d21_32 - m01 * k.d20_32 + m02 * k.d20_31);
  const double c20 = +(m01 * d12_33 - m02 * d11_33 + m03 * d11_32);
  const double c21 = -(m00 * d12_33 - m02 * d10_33 + m03 * d10_32);
  const double c22 = +(m00 * d11_33 - m01 * d10_33 + m03 * d10_31);
  const double c23 = -(m00 * d11_32 - m01 * d10_32 + m02 * d10_31);
  const double c30 = -(m01 * d12_23 - m02 * d11_23 + m03 * d11_22);
  const double c31 = +(m00 * d12_23 - m02 * d10_23 + m03 * d10_22);
  const double c32 = -(m00 * d11_23 - m01 * d10_23 + m03 * d10_21);
  const double c33 = +(m00 * d11_22 - m01 * d10_22 + m02 * d10_21);
  dest[0] = (float)(c00 * inv);
  dest[1] = (float)(c10 * inv);
  dest[2] = (float)(c20 * inv);
  dest[3] = (float)(c30 * inv);
  dest[4] = (float)(c01 * inv);
  dest[5] = (float)(c11 * inv);
  dest[6] = (float)(c21 * inv);
  dest[7] = (float)(c31 * inv);
  dest[8] = (float)(c02 * inv);
  dest[9] = (float)(c12 * inv);
  dest[10] = (float)(c22 * inv);
  dest[11] = (float)(c32 * inv);
  dest[12] = (float)(c03 * inv);
  dest[13] = (float)(c13 * inv);
  dest[14] = (float)(c23 * inv);
  dest[15] = (float)(c33 * inv);
  return true;
}

void sk_mat_identity(float dest[16]) {
  memset(dest, 0, 16 * sizeof(float));
  dest[0] = dest[5] = dest[10] = dest[15] = 1.0f;
}

bool sk_mat_is_identity(const float m[16]) {
  for (int i = 0; i < 16; i++)
    if (m[i] != ((i % 5 == 0) ? 1.0f : 0.0f))
      return false;
  return true;
}

void sk_mat_compose(const double s[3], const double q[4], const double t[3], float m[16]) {
  const double x = q[0], y = q[1], z = q[2], w = q[3];
  const double x2 = x + x, y2 = y + y, z2 = z + z;
  const double xx = x * x2, xy = x * y2, xz = x * z2;
  const double yy = y * y2, yz = y * z2, zz = z * z2;
  const double wx = w * x2, wy = w * y2, wz = w * z2;
  const double sx = s[0], sy = s[1], sz = s[2];
  m[0] = (float)((1 - (yy + zz)) * sx);
  m[1] = (float)((xy + wz) * sx);
  m[2] = (float)((xz - wy) * sx);
  m[3] = 0;
  m[4] = (float)((xy - wz) * sy);
  m[5] = (float)((1 - (xx + zz)) * sy);
  m[6] = (float)((yz + wx) * sy);
  m[7] = 0;
  m[8] = (float)((xz + wy) * sz);
  m[9] = (float)((yz - wx) * sz);
  m[10] = (float)((1 - (xx + yy)) * sz);
  m[11] = 0;
  m[12] = (float)t[0];
  m[13] = (float)t[1];
  m[14] = (float)t[2];
  m[15] = 1;
}

void sk_quat_from_rotation_matrix(const float m[16], double q[4]) {
  const double m11 = m[0], m12 = m[4], m13 = m[8];
  const double m21 = m[1], m22 = m[5], m23 = m[9];
  const double m31 = m[2], m32 = m[6], m33 = m[10];
  const double trace = m11 + m22 + m33;
  double s;
  if (trace > 0) {
    s = 0.5 / sqrt(trace + 1.0);
    q[3] = 0.25 / s;
    q[0] = (m32 - m23) * s;
    q[1] = (m13 - m31) * s;
    q[2] = (m21 - m12) * s;
  } else if (m11 > m22 && m11 > m33) {
    s = 2.0 * sqrt(1.0 + m11 - m22 - m33);
    q[3] = (m32 - m23) / s;
    q[0] = 0.25 * s;
    q[1] = (m12 + m21) / s;
    q[2] = (m13 + m31) / s;
  } else if (m22 > m33) {
    s = 2.0 * sqrt(1.0 + m22 - m11 - m33);
    q[3] = (m13 - m31) / s;
    q[0] = (m12 + m21) / s;
    q[1] = 0.25 * s;
    q[2] = (m23 + m32) / s;
  } else {
    s = 2.0 * sqrt(1.0 + m33 - m11 - m22);
    q[3] = (m21 - m12) / s;
    q[0] = (m13 + m31) / s;
    q[1] = (m23 + m32) / s;
    q[2] = 0.25 * s;
  }
}

void sk_mat_decompose(const float mf[16], double s[3], double q[4], double t[3]) {
  const double m[11] = {mf[0], mf[1], mf[2], mf[3], mf[4], mf[5], mf[6], mf[7], mf[8], mf[9], mf[10]};
  t[0] = mf[12];
  t[1] = mf[13];
  t[2] = mf[14];
  s[0] = sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
  s[1] = sqrt(m[4] * m[4] + m[5] * m[5] + m[6] * m[6]);
  s[2] = sqrt(m[8] * m[8] + m[9] * m[9] + m[10] * m[10]);
  if (sk_mat_det(mf) <= 0)
    s[1] *= -1;
  if (s[0] == 0 || s[1] == 0 || s[2] == 0) {
    q[0] = q[1] = q[2] = 0;
    q[3] = 1;
    return;
  }
  const double sx = 1 / s[0], sy = 1 / s[1], sz = 1 / s[2];
  float r[16] = {0};
  r[0] = (float)(m[0] * sx);
  r[1] = (float)(m[1] * sx);
  r[2] = (float)(m[2] * sx);
  r[4] = (float)(m[4] * sy);
  r[5] = (float)(m[5] * sy);
  r[6] = (float)(m[6] * sy);
  r[8] = (float)(m[8] * sz);
  r[9] = (float)(m[9] * sz);
  r[10] = (float)(m[10] * sz);
  r[15] = 1;
  sk_quat_from_rotation_matrix(r, q);
}

/* Math.sin/Math.cos as V8 rounds them (sk_fdlibm): Babylon reads these
 * quaternions back as doubles. */
void sk_quat_from_yaw_pitch_roll(double yaw, double pitch, double roll, double q[4]) {
  const double half_roll = roll * 0.5, half_pitch = pitch * 0.5, half_yaw = yaw * 0.5;
  const double sin_roll = sk_fdlibm_sin(half_roll), cos_roll = sk_fdlibm_cos(half_roll);
  const double sin_pitch = sk_fdlibm_sin(half_pitch), cos_pitch = sk_fdlibm_cos(half_pitch);
  const double sin_yaw = sk_fdlibm_sin(half_yaw), cos_yaw = sk_fdlibm_cos(half_yaw);
  q[0] = cos_yaw * sin_pitch * cos_roll + sin_yaw * cos_pitch * sin_roll;
  q[1] = sin_yaw * cos_pitch * cos_roll - cos_yaw * sin_pitch * sin_roll;
  q[2] = cos_yaw * cos_pitch * sin_roll - sin_yaw * sin_pitch * cos_roll;
  q[3] = cos_yaw * cos_pitch * cos_roll + sin_yaw * sin_pitch * sin_roll;
}
