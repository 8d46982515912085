/* sin and cos exactly as V8 computes JavaScript's Math.sin and Math.cos
 * (its port of fdlibm 5.3, src/base/ieee754.cc), so that doubles Babylon.js
 * derives from them (quaternions from Euler angles or an axis and angle)
 * come out bit for bit. glibc's sin/cos round about one argument in a few
 * thousand the other way in the last place.
 *
 * Exact for |x| <= 2^19 * pi/2 (about 823550); beyond, where V8 runs
 * fdlibm's multi-precision reduction, these fall back to the C library
 * (no bone angle is that large). NaN and +-inf give NaN. */
#ifndef SK_FDLIBM_H
#define SK_FDLIBM_H

/* sin(x) as V8's Math.sin. */
double sk_fdlibm_sin(double x);

/* cos(x) as V8's Math.cos. */
double sk_fdlibm_cos(double x);

#endif
