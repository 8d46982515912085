/* sin, cos, tan, acos, asin, atan and atan2 exactly as V8 computes
 * JavaScript's Math.* (its port of fdlibm 5.3, src/base/ieee754.cc, as
 * node 20 / V8 11.3 ships it), so that doubles Babylon.js derives from them
 * (quaternions from Euler angles or an axis and angle, slerp, Euler
 * read-backs, IK and look-at angles) come out bit for bit. glibc's sin/cos round about one argument in a few
 * thousand the other way in the last place, its atan2 and acos more often.
 *
 * Exact for |x| <= 2^19 * pi/2 (about 823550); beyond, where V8 runs
 * fdlibm's multi-precision reduction, these fall back to the C library
 * (no bone angle is that large). NaN and +-inf give NaN (tan too;
 * acos and asin outside [-1, 1]). */
#ifndef SK_FDLIBM_H
#define SK_FDLIBM_H

/* sin(x) as V8's Math.sin. */
double sk_fdlibm_sin(double x);

/* cos(x) as V8's Math.cos. */
double sk_fdlibm_cos(double x);

/* acos(x) as V8's Math.acos: NaN outside [-1, 1]. */
double sk_fdlibm_acos(double x);

/* asin(x) as V8's Math.asin: NaN outside [-1, 1]. */
double sk_fdlibm_asin(double x);

/* atan(x) as V8's Math.atan. */
double sk_fdlibm_atan(double x);

/* atan2(y, x) as V8's Math.atan2, signed zeros and infinities included. */
double sk_fdlibm_atan2(double y, double x);

/* tan(x) as V8's Math.tan; same range as sin and cos. */
double sk_fdlibm_tan(double x);

/* x % y as V8 computes JavaScript's % on doubles: C's fmod, which is exact,
 * so every correct fmod gives these bits. Quotients below 2^52 with x >= 0
 * take a few operations instead of glibc's long division (a looping clip's
 * frame, once per frame and layer); the rest go to fmod. */
double sk_fdlibm_fmod(double x, double y);

#endif
