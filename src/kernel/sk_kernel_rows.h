/* Input rows of one group, shared by both lanes templates (the exact
 * sk_kernel_lanes.h, the float32 sk_kernel_lanes_f32.h): included by each
 * once per SIMD path, with its SKK, SKK_ATTR, SKK_N, V, VLOAD and VLOADN
 * (whatever VLOAD makes of a float: widened to double, or kept). */

/* r[k] = lanes 0..n-1 of row k (k < rows) at in + k*stride; a short group
 * (n < SKK_N) loads zeros in its empty lanes. `rows` is a constant at each
 * call (10: TRS, 16: a matrix), so the loop unrolls. */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(load_rows)(const float *in, size_t stride, size_t n,
                                                                          int rows, V *r) {
  if (n == SKK_N) {
#pragma GCC unroll 16
    for (int k = 0; k < rows; k++)
      r[k] = VLOAD(in + k * stride);
  } else {
#pragma GCC unroll 16
    for (int k = 0; k < rows; k++)
      r[k] = VLOADN(in + k * stride, n);
  }
}
