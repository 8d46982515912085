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

/* Lane j of v to trs[at[j] + i], for the group's lanes. */
SKL_ATTR static inline void SKL(scatter)(const samp_group *g, int i, SKL(vd) v, double *trs) {
  double d[SAMP_LANES];
  memcpy(d, &v, sizeof d);
  for (int j = 0; j < g->lanes; j++)
    trs[g->at[j] + (size_t)i] = d[j];
}

/* A group of LINEAR translations or scales: sv + (ev - sv) * gradient, or
 * the key itself past the last one. */
SKL_ATTR static void SKL(vec3)(const samp_group *g, size_t key, double grad, double *trs) {
  const double *d = g->data + key * 3 * SAMP_LANES;
  if (key + 1 > g->count - 1) {
    for (int i = 0; i < 3; i++)
      SKL(scatter)(g, i, SKL(load)(d + i * SAMP_LANES), trs);
    return;
  }
  const double *e = d + 3 * SAMP_LANES;
  for (int i = 0; i < 3; i++) {
    const SKL(vd) sv = SKL(load)(d + i * SAMP_LANES), ev = SKL(load)(e + i * SAMP_LANES);
    SKL(scatter)(g, i, sv + (ev - sv) * grad, trs);
  }
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
SKL_ATTR static void SKL(rot_finish)(const samp_group *g, size_t key, double grad, const double *sines, double *trs) {
  const double *d = g->data + key * 8 * SAMP_LANES;
  if (key + 1 > g->count - 1) {
    for (int i = 0; i < 4; i++)
      SKL(scatter)(g, i, SKL(load)(d + i * SAMP_LANES), trs);
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
  for (int i = 0; i < 4; i++) {
    const SKL(vd) l = SKL(load)(d + i * SAMP_LANES), q = SKL(load)(e + i * SAMP_LANES);
    SKL(scatter)(g, i, num3 * l + num2 * q, trs);
  }
}

static const samp_lanes SKL(lanes) = {SKL(vec3), SKL(rot_args), SKL(rot_finish)};

#undef SKL
#undef SKL_ATTR
