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

/* The same into a tile (samp_tile_flush): component i at tile + i * SAMP_TILE. */
SKL_ATTR static void SKL(vec3_tile)(const samp_group *g, size_t key, double grad, double *tile) {
  SKL(vd) x[3];
  SKL(vec3_x)(g, key, grad, x);
  for (int i = 0; i < 3; i++)
    memcpy(tile + i * SAMP_TILE, &x[i], sizeof x[i]);
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

/* Second half, with the sines of rot_args' arguments. */
SKL_ATTR static inline void SKL(rot_x)(const samp_group *g, size_t key, double grad, const double *sines,
                                      SKL(vd) *x) {
  const double *d = g->data + key * 8 * SAMP_LANES;
  if (key + 1 > g->count - 1) {
    for (int i = 0; i < 4; i++)
      x[i] = SKL(load)(d + i * SAMP_LANES);
    return;
  }
  const double *e = d + 8 * SAMP_LANES; /* the next key: q */
  const SKL(vd) num6 = SKL(load)(d + 5 * SAMP_LANES), flag = SKL(load)(d + 6 * SAMP_LANES);
  const SKL(vd) dot = SKL(load)(d + 7 * SAMP_LANES);
  const SKL(vd) s0 = SKL(load)(sines), s1 = SKL(load)(sines + SAMP_LANES);
  const SKL(vi) lin = dot > 0.999999, neg = flag != 0;
  const SKL(vd) num3 = SKL(pick)(lin, SKL(splat)(1 - grad), s0 * num6);
  const SKL(vd) num2 = SKL(pick)(lin, SKL(pick)(neg, SKL(splat)(-grad), SKL(splat)(grad)),
                                 SKL(pick)(neg, -s1 * num6, s1 * num6));
  for (int i = 0; i < 4; i++)
    x[i] = num3 * SKL(load)(d + i * SAMP_LANES) + num2 * SKL(load)(e + i * SAMP_LANES);
}

SKL_ATTR static void SKL(rot_finish)(const samp_group *g, size_t key, double grad, const double *sines, double *trs) {
  SKL(vd) x[4];
  SKL(rot_x)(g, key, grad, sines, x);
  SKL(scatter)(g, 4, x, trs);
}

SKL_ATTR static void SKL(rot_tile)(const samp_group *g, size_t key, double grad, const double *sines, double *tile) {
  SKL(vd) x[4];
  SKL(rot_x)(g, key, grad, sines, x);
  for (int i = 0; i < 4; i++)
    memcpy(tile + i * SAMP_TILE, &x[i], sizeof x[i]);
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

/* Frames [p0, p0 + n) (n <= 16, inside one 16-pose block) from the stage
 * (AoS, a frame of B * SK_ANIM_TRS after another) to the kernel's rows:
 * per bone, eight frames' TRS transposed into one vector per component and
 * stored whole; the rest value by value. */
SKL_ATTR static void SKL(flush)(const double *stage, size_t bones, size_t p0, size_t n, const sk_sample_out *o) {
  const size_t base = o->block_stride ? (p0 / 16) * o->block_stride + p0 % 16 : p0;
  const size_t per = bones * SK_ANIM_TRS, ps = o->pose_stride;
  for (size_t b = 0; b < bones; b++) {
    const size_t at = o->offset[b] + base;
    size_t j = 0;
    for (; j + SAMP_LANES <= n; j += SAMP_LANES) {
      SKL(vd) r[8], hi[8], c[8], d[8];
#pragma GCC unroll 8
      for (int f = 0; f < 8; f++) {
        const double *src = stage + (j + (size_t)f) * per + b * SK_ANIM_TRS;
        r[f] = SKL(load)(src);      /* components 0..7 */
        hi[f] = SKL(load)(src + 2); /* 2..9: lanes 6 and 7 are components 8 and 9 */
      }
      SKL(transpose8)(r, c);
      SKL(transpose8)(hi, d);
#pragma GCC unroll 10
      for (int k = 0; k < SK_ANIM_TRS; k++) {
        const SKL(vd) v = k < 8 ? c[k] : d[k - 2];
        if (o->f64 != NULL) {
          memcpy(o->f64 + at + (size_t)k * ps + j, &v, sizeof v);
        } else {
          typedef float vf __attribute__((vector_size(SAMP_LANES * 4)));
          const vf w = __builtin_convertvector(v, vf);
          memcpy(o->f32 + at + (size_t)k * ps + j, &w, sizeof w);
        }
      }
    }
    for (; j < n; j++) {
      const double *src = stage + j * per + b * SK_ANIM_TRS;
      for (size_t k = 0; k < SK_ANIM_TRS; k++) {
        if (o->f64 != NULL)
          o->f64[at + k * ps + j] = src[k];
        else
          o->f32[at + k * ps + j] = (float)src[k];
      }
    }
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

/* A group's tile (frame f, lane j of component i at tile + i * SAMP_TILE +
 * f * SAMP_LANES + j) to the kernel's rows, frames p0 .. p0 + m - 1 (in one
 * 16-pose block): each component's 8 x 8 block transposed so each channel
 * gets its frames as one vector, stored whole. */
SKL_ATTR static void SKL(tile_flush)(const samp_group *g, const double *tile, size_t p0, size_t m,
                                     const sk_sample_out *o) {
  const size_t base = o->block_stride ? (p0 / 16) * o->block_stride + p0 % 16 : p0;
  const int w = g->kind == GROUP_ROT ? 4 : 3;
  size_t at[SAMP_LANES]; /* lane j's component 0 */
  for (int j = 0; j < g->lanes; j++)
    at[j] = o->offset[g->bone[j]] + base + (size_t)g->comp[j] * o->pose_stride;
  for (int i = 0; i < w; i++) {
    SKL(vd) r[8], c[8];
#pragma GCC unroll 8
    for (int f = 0; f < 8; f++)
      r[f] = SKL(load)(tile + i * SAMP_TILE + f * SAMP_LANES);
    SKL(transpose8)(r, c);
    const size_t step = (size_t)i * o->pose_stride;
    if (o->f64 != NULL && m == SAMP_LANES) /* the usual case: whole rows of doubles */
      for (int j = 0; j < g->lanes; j++)
        memcpy(o->f64 + at[j] + step, &c[j], sizeof c[j]);
    else
      for (int j = 0; j < g->lanes; j++)
        SKL(put_row)(o, at[j] + step, m, c[j]);
  }
}

/* Frames p0 .. p0 + m - 1 (in one 16-pose block) of the components no
 * channel of the clip drives: the rest TRS. */
SKL_ATTR static void SKL(rest_fill)(const samp_clip *c, const double *rest, size_t p0, size_t m,
                                    const sk_sample_out *o) {
  const size_t base = o->block_stride ? (p0 / 16) * o->block_stride + p0 % 16 : p0;
  for (size_t r = 0; r < c->rest_count; r++) {
    const samp_rest *rs = &c->rest[r];
    const double *x = rest + rs->bone * SK_ANIM_TRS + rs->comp;
    const size_t at = o->offset[rs->bone] + base + (size_t)rs->comp * o->pose_stride;
    for (int i = 0; i < rs->width; i++)
      SKL(put_row)(o, at + (size_t)i * o->pose_stride, m, SKL(splat)(x[i]));
  }
}

static const samp_lanes SKL(lanes) = {SKL(vec3),      SKL(rot_args),   SKL(rot_finish), SKL(flush),
                                      SKL(vec3_tile), SKL(rot_tile),   SKL(tile_flush), SKL(rest_fill)};

#undef SKL
#undef SKL_ATTR
