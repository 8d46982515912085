/* One path of sk_sample's channel groups, included once per ISA by
 * sk_sample.c with SKL(name) and SKL_ATTR defined. Private to sk_sample.c.
 *
 * A group is up to SAMP_LANES channels of one kind on one timeline, so one
 * key and one gradient serve them all in a frame; lane j of each vector is
 * channel j (GCC's vector extension: one zmm register with AVX-512, two ymm
 * with AVX2, pairs of xmm otherwise). Every lane runs sk_anim's expressions
 * in the same order (sk_anim__slerp_args / sk_anim__slerp_apply and the
 * lerp of chan_value), so each value has the bits the per-channel code
 * gives it. The keys are laid out lane-major per key (samp_group.data):
 * plain vector loads, no gathers. */

typedef samp_vd SKL(vd);
typedef samp_vi SKL(vi);

SKL_ATTR static inline SKL(vd) SKL(load)(const double *p) {
  SKL(vd) v;
  memcpy(&v, p, sizeof v);
  return v;
}

SKL_ATTR static inline SKL(vd) SKL(pick)(SKL(vi) m, SKL(vd) a, SKL(vd) b) {
  return (SKL(vd))((m & (SKL(vi))a) | (~m & (SKL(vi))b));
}

/* x in every lane, bits and all (0 + x would turn -0 into +0). */
SKL_ATTR static inline SKL(vd) SKL(splat)(double x) {
  int64_t u;
  memcpy(&u, &x, sizeof u);
  return (SKL(vd))((SKL(vi)){0} + u);
}

/* Lane j of x[i] to trs[at[j] + i] for i < w (3 or 4) and the group's
 * lanes: the vectors transposed to one short row per lane (shuffles), each
 * row stored whole, instead of a scalar store per value. */
SKL_ATTR static inline void SKL(scatter)(const samp_group *g, int w, const SKL(vd) *x, double *trs) {
  const SKL(vd) x3 = w == 4 ? x[3] : x[2];
  const SKL(vd) t0 = __builtin_shufflevector(x[0], x[1], 0, 8, 1, 9, 2, 10, 3, 11);
  const SKL(vd) t1 = __builtin_shufflevector(x[0], x[1], 4, 12, 5, 13, 6, 14, 7, 15);
  const SKL(vd) t2 = __builtin_shufflevector(x[2], x3, 0, 8, 1, 9, 2, 10, 3, 11);
  const SKL(vd) t3 = __builtin_shufflevector(x[2], x3, 4, 12, 5, 13, 6, 14, 7, 15);
  SKL(vd) row[4]; /* row[k]: lanes 2k and 2k + 1, four values each */
  row[0] = __builtin_shufflevector(t0, t2, 0, 1, 8, 9, 2, 3, 10, 11);
  row[1] = __builtin_shufflevector(t0, t2, 4, 5, 12, 13, 6, 7, 14, 15);
  row[2] = __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 2, 3, 10, 11);
  row[3] = __builtin_shufflevector(t1, t3, 4, 5, 12, 13, 6, 7, 14, 15);
  const double *r = (const double *)row;
  const size_t bytes = (size_t)w * sizeof(double);
  for (int j = 0; j < g->lanes; j++)
    memcpy(trs + g->at[j], r + 4 * j, bytes);
}

/* A group of LINEAR translations or scales: sv + (ev - sv) * gradient, or
 * the key itself past the last one. */
SKL_ATTR static inline void SKL(vec3_x)(const samp_group *g, size_t key, double grad, SKL(vd) *x) {
  const double *d = g->data + key * 3 * SAMP_LANES;
  for (int i = 0; i < 3; i++)
    x[i] = SKL(load)(d + i * SAMP_LANES);
  if (key + 1 <= g->count - 1) {
    const double *e = d + 3 * SAMP_LANES;
    for (int i = 0; i < 3; i++)
      x[i] = x[i] + (SKL(load)(e + i * SAMP_LANES) - x[i]) * grad;
  }
}

SKL_ATTR static void SKL(vec3)(const samp_group *g, size_t key, double grad, double *trs) {
  SKL(vd) x[3];
  SKL(vec3_x)(g, key, grad, x);
  SKL(scatter)(g, 3, x, trs);
}

/* A group of LINEAR rotations, first half: the slerp's two sines'
 * arguments per lane, args[0..SAMP_LANES) and [SAMP_LANES, 2x). Past the
 * last key the arguments are 0 (unused). */
SKL_ATTR static void SKL(rot_args)(const samp_group *g, size_t key, double grad, double *args) {
  const SKL(vd) th = SKL(load)(g->data + key * 8 * SAMP_LANES + 4 * SAMP_LANES);
  const SKL(vd) a0 = (1.0 - grad) * th, a1 = grad * th;
  memcpy(args, &a0, sizeof a0);
  memcpy(args + SAMP_LANES, &a1, sizeof a1);
}

/* rot_args for the SAMP_LANES frames of a block: frame f's key and gradient
 * at [f * lines + g->line] of `key` and `grad`, its arguments at args + f *
 * args_stride. One call per group and block instead of one per frame. */
SKL_ATTR static void SKL(rot_args_block)(const samp_group *g, const size_t *key, const double *grad, size_t lines,
                                         double *args, size_t args_stride) {
#pragma GCC unroll 8
  for (int f = 0; f < SAMP_LANES; f++)
    SKL(rot_args)(g, key[(size_t)f * lines + g->line], grad[(size_t)f * lines + g->line], args + (size_t)f * args_stride);
}

/* Second half, with the sines of rot_args' arguments: the weights of key
 * d's and the next key's quaternions in sk_anim__slerp_apply (d inside the
 * group's data, before its last key). */
SKL_ATTR static inline void SKL(rot_nums)(const double *d, double grad, const double *sines, SKL(vd) *num3,
                                         SKL(vd) *num2) {
  const SKL(vd) num6 = SKL(load)(d + 5 * SAMP_LANES), flag = SKL(load)(d + 6 * SAMP_LANES);
  const SKL(vd) dot = SKL(load)(d + 7 * SAMP_LANES);
  const SKL(vd) s0 = SKL(load)(sines), s1 = SKL(load)(sines + SAMP_LANES);
  const SKL(vi) lin = dot > 0.999999, neg = flag != 0;
  *num3 = SKL(pick)(lin, SKL(splat)(1 - grad), s0 * num6);
  *num2 = SKL(pick)(lin, SKL(pick)(neg, SKL(splat)(-grad), SKL(splat)(grad)), SKL(pick)(neg, -s1 * num6, s1 * num6));
}

SKL_ATTR static inline void SKL(rot_x)(const samp_group *g, size_t key, double grad, const double *sines,
                                      SKL(vd) *x) {
  const double *d = g->data + key * 8 * SAMP_LANES;
  if (key + 1 > g->count - 1) {
    for (int i = 0; i < 4; i++)
      x[i] = SKL(load)(d + i * SAMP_LANES);
    return;
  }
  const double *e = d + 8 * SAMP_LANES; /* the next key: q */
  SKL(vd) num3, num2;
  SKL(rot_nums)(d, grad, sines, &num3, &num2);
  for (int i = 0; i < 4; i++)
    x[i] = num3 * SKL(load)(d + i * SAMP_LANES) + num2 * SKL(load)(e + i * SAMP_LANES);
}

SKL_ATTR static void SKL(rot_finish)(const samp_group *g, size_t key, double grad, const double *sines, double *trs) {
  SKL(vd) x[4];
  SKL(rot_x)(g, key, grad, sines, x);
  SKL(scatter)(g, 4, x, trs);
}

/* c[k][f] = r[f][k]: eight rows of eight doubles transposed (three rounds
 * of shuffles: pairs of lanes, pairs of pairs, halves). */
SKL_ATTR static inline void SKL(transpose8)(const SKL(vd) *r, SKL(vd) *c) {
  SKL(vd) t[8], u[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; k += 2) {
    t[k] = __builtin_shufflevector(r[k], r[k + 1], 0, 8, 2, 10, 4, 12, 6, 14);
    t[k + 1] = __builtin_shufflevector(r[k], r[k + 1], 1, 9, 3, 11, 5, 13, 7, 15);
  }
#pragma GCC unroll 8
  for (int k = 0; k < 8; k += 4)
#pragma GCC unroll 8
    for (int h = 0; h < 2; h++) {
      u[k + h] = __builtin_shufflevector(t[k + h], t[k + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[k + h + 2] = __builtin_shufflevector(t[k + h], t[k + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
#pragma GCC unroll 8
  for (int k = 0; k < 4; k++) {
    c[k] = __builtin_shufflevector(u[k], u[k + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    c[k + 4] = __builtin_shufflevector(u[k], u[k + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

/* m <= SAMP_LANES frames (lanes) of v to row element `at` onward. */
SKL_ATTR static inline void SKL(put_row)(const sk_sample_out *o, size_t at, size_t m, SKL(vd) v) {
  if (o->f64 != NULL) {
    if (m == SAMP_LANES)
      memcpy(o->f64 + at, &v, sizeof v);
    else
      for (size_t f = 0; f < m; f++)
        o->f64[at + f] = v[f];
    return;
  }
  typedef float vf __attribute__((vector_size(SAMP_LANES * 4)));
  const vf w = __builtin_convertvector(v, vf);
  if (m == SAMP_LANES)
    memcpy(o->f32 + at, &w, sizeof w);
  else
    for (size_t f = 0; f < m; f++)
      o->f32[at + f] = w[f];
}

/* Where lane j of a group writes component 0 of frame p0 (in one 16-pose
 * block) in the kernel's rows. */
SKL_ATTR static inline void SKL(row_starts)(const samp_group *g, size_t p0, const sk_sample_out *o, size_t *at) {
  const size_t base = o->block_stride ? (p0 / 16) * o->block_stride + p0 % 16 : p0;
  for (int j = 0; j < g->lanes; j++)
    at[j] = o->offset[g->bone[j]] + base + (size_t)g->comp[j] * o->pose_stride;
}

/* rows_put's other cases (floats, or fewer than SAMP_LANES frames): out of
 * line, so that the common case's columns stay in registers (indexed by a
 * variable here, they would have to live in memory). */
SKL_ATTR static __attribute__((noinline)) void SKL(rows_put_slow)(int lanes, const SKL(vd) *c, const size_t *at,
                                                                  size_t step, size_t m, const sk_sample_out *o) {
  for (int j = 0; j < lanes; j++)
    SKL(put_row)(o, at[j] + step, m, c[j]);
}

/* r[f]: component `step` / pose_stride of every lane in frame f. Transposed
 * so each of the group's `lanes` channels gets its m frames as one vector,
 * stored whole. `lanes` comes in as a value: read through g it was
 * reloaded before every store, which might have changed it for all the
 * compiler knew. */
SKL_ATTR static inline __attribute__((always_inline)) void SKL(rows_put)(int lanes, const SKL(vd) *r, const size_t *at,
                                                                          size_t step, size_t m,
                                                                          const sk_sample_out *o) {
  SKL(vd) c[8];
  SKL(transpose8)(r, c);
  if (o->f64 != NULL && m == SAMP_LANES) { /* the usual case: whole rows of doubles, straight from registers */
    double *const f64 = o->f64 + step;
    if (lanes == SAMP_LANES) {
#pragma GCC unroll 8
      for (int j = 0; j < SAMP_LANES; j++)
        memcpy(f64 + at[j], &c[j], sizeof c[j]);
      return;
    }
#pragma GCC unroll 8
    for (int j = 0; j < SAMP_LANES; j++)
      if (j < lanes)
        memcpy(f64 + at[j], &c[j], sizeof c[j]);
    return;
  }
  SKL(rows_put_slow)(lanes, c, at, step, m, o);
}

/* A block of frames of a group of LINEAR translations or scales to the
 * kernel's rows, frames p0 .. p0 + m - 1 (in one 16-pose block). Frame f's
 * key and gradient are at[f * lines + g->line] of `key` and `grad` (all
 * SAMP_LANES frames valid; those past m are computed, never stored). Each
 * value is vec3_x's, one component of every frame at a time, kept in
 * registers up to the transpose. */
SKL_ATTR static void SKL(vec3_rows)(const samp_group *g, const size_t *key, const double *grad, size_t lines,
                                    size_t p0, size_t m, const sk_sample_out *o) {
  const double *d[8];
  double gf[8];
  bool lerp[8];
  for (int f = 0; f < 8; f++) {
    const size_t k = key[(size_t)f * lines + g->line];
    d[f] = g->data + k * 3 * SAMP_LANES;
    gf[f] = grad[(size_t)f * lines + g->line];
    lerp[f] = k + 1 <= g->count - 1;
  }
  size_t at[SAMP_LANES];
  SKL(row_starts)(g, p0, o, at);
  const int lanes = g->lanes;
  for (int i = 0; i < 3; i++) {
    SKL(vd) r[8];
#pragma GCC unroll 8
    for (int f = 0; f < 8; f++) {
      const SKL(vd) x = SKL(load)(d[f] + i * SAMP_LANES);
      r[f] = lerp[f] ? x + (SKL(load)(d[f] + (3 + i) * SAMP_LANES) - x) * gf[f] : x;
    }
    SKL(rows_put)(lanes, r, at, (size_t)i * o->pose_stride, m, o);
  }
}

/* The same for a group of LINEAR rotations, with frame f's sines (rot_args'
 * arguments' sines) at sines + f * sines_stride. Each value is rot_x's. */
SKL_ATTR static void SKL(rot_rows)(const samp_group *g, const size_t *key, const double *grad, size_t lines,
                                   const double *sines, size_t sines_stride, size_t p0, size_t m,
                                   const sk_sample_out *o) {
  const double *d[8];
  bool slerp[8];
  SKL(vd) num3[8], num2[8];
  for (int f = 0; f < 8; f++) {
    const size_t k = key[(size_t)f * lines + g->line];
    d[f] = g->data + k * 8 * SAMP_LANES;
    slerp[f] = k + 1 <= g->count - 1;
    if (slerp[f])
      SKL(rot_nums)(d[f], grad[(size_t)f * lines + g->line], sines + (size_t)f * sines_stride, &num3[f], &num2[f]);
  }
  size_t at[SAMP_LANES];
  SKL(row_starts)(g, p0, o, at);
  const int lanes = g->lanes;
  for (int i = 0; i < 4; i++) {
    SKL(vd) r[8];
#pragma GCC unroll 8
    for (int f = 0; f < 8; f++) {
      const SKL(vd) q0 = SKL(load)(d[f] + i * SAMP_LANES);
      r[f] = slerp[f] ? num3[f] * q0 + num2[f] * SKL(load)(d[f] + (8 + i) * SAMP_LANES) : q0;
    }
    SKL(rows_put)(lanes, r, at, (size_t)i * o->pose_stride, m, o);
  }
}

/* IEEE's correctly rounded square root of every lane, as sqrt gives it:
 * the ISA's instruction where the including file names one (SKL_SQRT). */
SKL_ATTR static inline SKL(vd) SKL(sqrt)(SKL(vd) v) {
#ifdef SKL_SQRT
  return SKL_SQRT(v);
#else
  for (int j = 0; j < SAMP_LANES; j++)
    v[j] = sqrt(v[j]);
  return v;
#endif
}

/* A STEP or CUBICSPLINE group's values in one frame, x[0..width): the
 * key's value (STEP, one key, or past the last key); else sk_anim__hermite
 * of the interval's values and scaled tangents, then for rotations
 * sk_anim__quat_normalize, each lane in sk_anim's operation order. */
SKL_ATTR static inline void SKL(other_x)(const samp_group *g, size_t key, double grad, SKL(vd) *x) {
  const int w = g->width;
  const size_t per = samp_group_per(g->kind) * SAMP_LANES;
  const double *d = g->data + key * per;
  for (int i = 0; i < w; i++)
    x[i] = SKL(load)(d + i * SAMP_LANES);
  if ((g->kind != GROUP_CUB3 && g->kind != GROUP_CUB4) || key + 1 > g->count - 1)
    return;
  const double *e = d + per; /* the next key's value */
  double part[4];
  sk_anim__hermite_parts(grad, part);
  for (int i = 0; i < w; i++)
    x[i] = x[i] * part[0] + SKL(load)(e + i * SAMP_LANES) * part[1] + SKL(load)(d + (w + i) * SAMP_LANES) * part[2] +
           SKL(load)(d + (2 * w + i) * SAMP_LANES) * part[3];
  if (w != 4)
    return;
  const SKL(vd) len = SKL(sqrt)(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]);
  const SKL(vi) keep = (len == 0) | (len == 1.0);
  const SKL(vd) inv = 1.0 / len; /* inf where len is 0: not picked */
  for (int i = 0; i < 4; i++)
    x[i] = SKL(pick)(keep, x[i], x[i] * inv);
}

SKL_ATTR static void SKL(other)(const samp_group *g, size_t key, double grad, double *trs) {
  SKL(vd) x[4];
  SKL(other_x)(g, key, grad, x);
  SKL(scatter)(g, g->width, x, trs);
}

/* A block of frames of a STEP or CUBICSPLINE group to the kernel's rows,
 * as vec3_rows: each frame's values (other_x) into a tile, then each
 * component's frames transposed and stored as rows. */
SKL_ATTR static void SKL(other_rows)(const samp_group *g, const size_t *key, const double *grad, size_t lines,
                                     size_t p0, size_t m, const sk_sample_out *o) {
  SKL(vd) tile[4][8];
  for (int f = 0; f < 8; f++) {
    SKL(vd) x[4];
    SKL(other_x)(g, key[(size_t)f * lines + g->line], grad[(size_t)f * lines + g->line], x);
    for (int i = 0; i < g->width; i++)
      tile[i][f] = x[i];
  }
  size_t at[SAMP_LANES];
  SKL(row_starts)(g, p0, o, at);
  const int lanes = g->lanes;
  for (int i = 0; i < g->width; i++)
    SKL(rows_put)(lanes, tile[i], at, (size_t)i * o->pose_stride, m, o);
}

/* Frames p0 .. p0 + m - 1 (in one 16-pose block) of the constant rows
 * rest[0..n) (a clip's rest rows, or a blend's), each component's value in
 * values[bone * SK_ANIM_TRS + comp]. */
SKL_ATTR static void SKL(rest_fill)(const samp_rest *rest, size_t n, const double *values, size_t p0, size_t m,
                                    const sk_sample_out *o) {
  const size_t base = o->block_stride ? (p0 / 16) * o->block_stride + p0 % 16 : p0;
  for (size_t r = 0; r < n; r++) {
    const samp_rest *rs = &rest[r];
    const double *x = values + rs->bone * SK_ANIM_TRS + rs->comp;
    const size_t at = o->offset[rs->bone] + base + (size_t)rs->comp * o->pose_stride;
    for (int i = 0; i < rs->width; i++)
      SKL(put_row)(o, at + (size_t)i * o->pose_stride, m, SKL(splat)(x[i]));
  }
}

/* ---- blends on blocks of rows (samp_block: bone b's component k of lane q
 * at b * SAMP_BLOCK + k * SAMP_BW + q), sk_anim_sample_layers' arithmetic in
 * each lane, in its order ------------------------------------------------ */

/* The translations and scalings some layer drives, every lane: acc = src
 * * w (the first layer, the rotations some layer drives copied) when
 * `first`, else acc = acc + src * w. ts[t] is bone * SK_ANIM_TRS + 0 or 7
 * (a translation or a scaling), rot[r] a bone. */
SKL_ATTR static void SKL(blend_ts)(double *acc, const double *src, const samp_blend *bl, double w, bool first) {
  for (size_t t = 0; t < bl->nts; t++) {
    const size_t at0 = (bl->ts[t] / SK_ANIM_TRS) * SAMP_BLOCK + (bl->ts[t] % SK_ANIM_TRS) * SAMP_BW;
    for (int k = 0; k < 3; k++) {
      const size_t at = at0 + (size_t)k * SAMP_BW;
      const SKL(vd) x = SKL(load)(src + at);
      const SKL(vd) a = first ? x * w : SKL(load)(acc + at) + x * w;
      memcpy(acc + at, &a, sizeof a);
    }
  }
  for (size_t r = 0; first && r < bl->nrot; r++)
    memcpy(acc + bl->rot[r] * SAMP_BLOCK + 3 * SAMP_BW, src + bl->rot[r] * SAMP_BLOCK + 3 * SAMP_BW,
           4 * SAMP_BW * sizeof *acc);
}

/* Quaternion.SlerpToRef's dot of every driven rotation and lane (acc's
 * rotation towards src's): its magnitude into num4[r * SAMP_BW + q], all
 * ones in neg[r * SAMP_BW + q] where it was negative. */
SKL_ATTR static void SKL(blend_dots)(const double *acc, const double *src, const samp_blend *bl, double *num4,
                                     int64_t *neg) {
  for (size_t r = 0; r < bl->nrot; r++) {
    const double *t = acc + bl->rot[r] * SAMP_BLOCK + 3 * SAMP_BW, *q = src + bl->rot[r] * SAMP_BLOCK + 3 * SAMP_BW;
    SKL(vd) d = SKL(load)(t) * SKL(load)(q) + SKL(load)(t + SAMP_BW) * SKL(load)(q + SAMP_BW) +
                SKL(load)(t + 2 * SAMP_BW) * SKL(load)(q + 2 * SAMP_BW) + SKL(load)(t + 3 * SAMP_BW) * SKL(load)(q + 3 * SAMP_BW);
    const SKL(vi) m = d < 0;
    d = SKL(pick)(m, -d, d);
    memcpy(num4 + r * SAMP_BW, &d, sizeof d);
    memcpy(neg + r * SAMP_BW, &m, sizeof m);
  }
}

/* The sines' arguments of sk_anim__slerp_prep/_args from the acos of each
 * dot (in `acos`, n = nrot * SAMP_BW): s[i] = num5, s[n + i] = (1 - amount) *
 * num5, s[2n + i] = amount * num5, num5 0 where the blend is linear. */
SKL_ATTR static void SKL(blend_args)(const double *num4, const double *acos, size_t n, double amount, double *s) {
  for (size_t i = 0; i < n; i += SAMP_LANES) {
    const SKL(vd) d = SKL(load)(num4 + i);
    const SKL(vd) num5 = SKL(pick)(d > 0.999999, (SKL(vd)){0}, SKL(load)(acos + i));
    const SKL(vd) a1 = (1.0 - amount) * num5, a2 = amount * num5;
    memcpy(s + i, &num5, sizeof num5);
    memcpy(s + n + i, &a1, sizeof a1);
    memcpy(s + 2 * n + i, &a2, sizeof a2);
  }
}

/* sk_anim__slerp_apply on every driven rotation and lane, into acc's. */
SKL_ATTR static void SKL(blend_apply)(double *acc, const double *src, const samp_blend *bl, double amount,
                                      const double *num4, const int64_t *neg, const double *s) {
  const size_t n = bl->nrot * SAMP_BW;
  for (size_t r = 0; r < bl->nrot; r++) {
    const size_t i = r * SAMP_BW;
    double *t = acc + bl->rot[r] * SAMP_BLOCK + 3 * SAMP_BW;
    const double *q = src + bl->rot[r] * SAMP_BLOCK + 3 * SAMP_BW;
    SKL(vi) m;
    memcpy(&m, neg + i, sizeof m);
    const SKL(vi) lin = SKL(load)(num4 + i) > 0.999999;
    const SKL(vd) num6 = 1.0 / SKL(load)(s + i), s1 = SKL(load)(s + n + i), s2 = SKL(load)(s + 2 * n + i);
    const SKL(vd) num3 = SKL(pick)(lin, SKL(splat)(1 - amount), s1 * num6);
    const SKL(vd) num2 = SKL(pick)(lin, SKL(pick)(m, SKL(splat)(-amount), SKL(splat)(amount)),
                                   SKL(pick)(m, -s2 * num6, s2 * num6));
    for (int k = 0; k < 4; k++) {
      const SKL(vd) x = num3 * SKL(load)(t + SAMP_BW * k) + num2 * SKL(load)(q + SAMP_BW * k);
      memcpy(t + SAMP_BW * k, &x, sizeof x);
    }
  }
}

/* Lanes [q0, q1) of `width` rows of a block from `src` to the kernel's rows
 * from element `at`, frames p0 - q0 + q. */
SKL_ATTR static inline void SKL(block_rows)(const double *src, size_t at, int width, size_t q0, size_t q1,
                                           const sk_sample_out *o) {
  for (int k = 0; k < width; k++, src += SAMP_BW, at += o->pose_stride) {
    if (o->f64 != NULL && q1 - q0 == SAMP_BW) /* the usual case: one vector */
      memcpy(o->f64 + at, src, SAMP_BW * sizeof *src);
    else if (o->f64 != NULL)
      memcpy(o->f64 + at, src + q0, (q1 - q0) * sizeof *src);
    else
      for (size_t q = q0; q < q1; q++)
        o->f32[at + q - q0] = (float)src[q];
  }
}

/* The driven components of a block, lanes [q0, q1), to the kernel's rows
 * (the others are the context's constant rows, rest_fill). */
SKL_ATTR static void SKL(block_flush)(const double *acc, const samp_blend *bl, size_t p0, size_t q0, size_t q1,
                                      const sk_sample_out *o) {
  const size_t base = o->block_stride ? (p0 / 16) * o->block_stride + p0 % 16 : p0;
  for (size_t t = 0; t < bl->nts; t++) {
    const size_t b = bl->ts[t] / SK_ANIM_TRS, k = bl->ts[t] % SK_ANIM_TRS;
    SKL(block_rows)(acc + b * SAMP_BLOCK + k * SAMP_BW, o->offset[b] + base + k * o->pose_stride, 3, q0, q1, o);
  }
  for (size_t r = 0; r < bl->nrot; r++) {
    const size_t b = bl->rot[r];
    SKL(block_rows)(acc + b * SAMP_BLOCK + 3 * SAMP_BW, o->offset[b] + base + 3 * o->pose_stride, 4, q0, q1, o);
  }
}

static const samp_lanes SKL(lanes) = {SKL(vec3),      SKL(rot_args),   SKL(rot_args_block), SKL(rot_finish),
                                      SKL(vec3_rows), SKL(rot_rows),   SKL(other),          SKL(other_rows),
                                      SKL(rest_fill),
                                      SKL(blend_ts),  SKL(blend_dots), SKL(blend_args), SKL(blend_apply),
                                      SKL(block_flush)};

#undef SKL
#undef SKL_ATTR
#undef SKL_SQRT
