/* sk_mat: Babylon.js-exact matrix and quaternion arithmetic.
 *
 * Storage is float (Babylon keeps matrices in Float32Array); every formula
 * computes in double on float inputs and rounds once when it stores, in
 * Babylon's operation order. Build with -ffp-contract=off: a fused
 * multiply-add would round differently and break bit-exactness.
 *
 * Layout: 16 floats in Babylon `Matrix.m` order, which is glTF's
 * column-major order: row-vector convention, translation in m[12..14].
 * sk_mat_mul(a, b) is "apply a, then b". */
#ifndef SK_MAT_H
#define SK_MAT_H

#include <stdbool.h>

/* dest = a · b (MultiplyMatricesToArray). dest may alias a or b. */
void sk_mat_mul(const float a[16], const float b[16], float dest[16]);

/* sk_mat_mul with one implementation: "avx2" or "generic" (the same bits
 * from each; for tests). -1 if this CPU or build lacks it. */
int sk_mat_mul_on(const char *isa, const float a[16], const float b[16], float dest[16]);
/* Determinant by cofactors of the first row, as Matrix.determinant(). */
double sk_mat_det(const float m[16]);
/* dest = inverse of m (InvertMatrixToArray). Returns false when the
 * determinant is exactly 0; then dest is a copy of m, as Babylon does. */
bool sk_mat_invert(const float m[16], float dest[16]);
void sk_mat_identity(float dest[16]);
bool sk_mat_is_identity(const float m[16]);

/* Matrix.ComposeToRef(s, q, t): the quaternion is used as given, never
 * normalised (a non-unit q scales the matrix). */
void sk_mat_compose(const double s[3], const double q[4], const double t[3], float dest[16]);
/* Matrix.decompose(s, q, t) without a scaling node: negative determinant
 * goes to s[1]; any zero scale gives the identity rotation; shear is lost.
 * The normalised rotation rows are rounded to float before
 * FromRotationMatrixToRef, because Babylon stores them in a Matrix. */
void sk_mat_decompose(const float m[16], double s[3], double q[4], double t[3]);

/* Quaternion.RotationYawPitchRollToRef(yaw, pitch, roll). */
void sk_quat_from_yaw_pitch_roll(double yaw, double pitch, double roll, double q[4]);
/* Quaternion.FromRotationMatrixToRef on the upper 3x3 of m. */
void sk_quat_from_rotation_matrix(const float m[16], double q[4]);

#endif
