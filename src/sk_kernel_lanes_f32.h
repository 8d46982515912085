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
 *   SKK(store_const)(dst, stride, m16, n, stream)    the same 16 floats to lanes 0..n-1
 *   SKK_PREFETCH  how many poses ahead to prefetch input (a multiple of 16)
 *
 * It #undefs all of these at its end, ready for the next path.
 *
 * Matrices are 16 vectors, entry-major (v[4*row + col], Babylon's m order),
 * one pose per lane. Products follow the row-vector convention of sk_mat_mul:
 * o = a · b, o[4i+j] = sum_k a[4i+k] b[4k+j]. "affine" means column 3 is
 * (0, 0, 0, 1) in both operands; then the product has it too and a quarter
 * of the work disappears. */

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
    if (n == SKK_N) {
#pragma GCC unroll 16
      for (int k = 0; k < 16; k++)
        l[k] = VLOAD(in + k * st);
    } else {
#pragma GCC unroll 16
      for (int k = 0; k < 16; k++)
        l[k] = VLOADN(in + k * st, n);
    }
    /* Matrices from Babylon's setters are affine: then the fast path
     * applies. A short group's empty lanes load 0 in l[15] and say no. */
    return VALL_EQ(l[3], 0.0f) && VALL_EQ(l[7], 0.0f) && VALL_EQ(l[11], 0.0f) && VALL_EQ(l[15], 1.0f);
  default: {
    V r[10];
    in += at;
    if (n == SKK_N) {
#pragma GCC unroll 10
      for (int k = 0; k < 10; k++)
        r[k] = VLOAD(in + k * st);
    } else {
#pragma GCC unroll 10
      for (int k = 0; k < 10; k++)
        r[k] = VLOADN(in + k * st, n);
    }
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

/* One group: poses p0..p0+n-1 (n <= SKK_N), every bone in the rig's
 * processing order. World matrices live in `wslot` only while a later bone
 * still needs them (the rig assigned the slots), so the scratch stays small
 * and in L1 whatever the bone count. */
static SKK_ATTR void SKK(group)(const sk_kernel_job *job, size_t p0, size_t n, bool stream) {
  const sk_rig *rig = job->rig;
  const size_t nb = rig->bones;
  const size_t fstride = 16 * (nb + 1), astride = 16 * nb;
  float *const fbase = job->final + p0 * fstride;
  float *const abase = job->absolute != NULL ? job->absolute + p0 * astride : NULL;
  const float *const init = job->initial_skin;
  const bool init_affine = init == NULL || (init[3] == 0 && init[7] == 0 && init[11] == 0 && init[15] == 1);
  /* Absolute matrices exclude the initial skin: with one, they are a second chain. */
  const bool two_chains = abase != NULL && init != NULL;
  V wslot[SK_RIG_MAX_LIVE][16], aslot[SK_RIG_MAX_LIVE][16];
  bool waff[SK_RIG_MAX_LIVE], aaff[SK_RIG_MAX_LIVE];

  for (size_t k = 0; k < rig->unused; k++) {
    SKK(store_const)(fbase + 16 * (size_t)rig->unused_slot[k], fstride, sk_kernel_zero16, n, stream);
    if (abase != NULL)
      SKK(store_const)(abase + 16 * (size_t)rig->unused_slot[k], astride, sk_kernel_zero16, n, stream);
  }
  SKK(store_const)(fbase + 16 * nb, fstride, sk_kernel_identity16, n, stream);

  /* The next group's input rows: one line per row per 16 poses, each row
   * its own stream (10 or 16 per bone: 650 for 65 bones), far more than the
   * hardware prefetchers follow. Without this, 65 bones x 65536 poses ran
   * 3-4x slower. The hint (prefetcht1) and distance measured alike. */
  const bool prefetch = p0 % 16 == 0 && p0 + SKK_PREFETCH < job->poses;
  const size_t st_rows = job->pose_stride;

  for (size_t s = 0; s < rig->steps; s++) {
    const sk_rig_step *st = &rig->step[s];
    V l[16], w[16], f[16];
    if (prefetch) {
      const uint8_t m = job->mode[st->bone];
      if (m != SK_KERNEL_CONST) {
        const float *in = job->input + job->offset[st->bone] + pose_at(job, p0 + SKK_PREFETCH);
        const int rows = m == SK_KERNEL_TRS ? 10 : 16;
        for (int k = 0; k < rows; k++)
          __builtin_prefetch(in + k * st_rows, 0, SK_KERNEL_PREFETCH_HINT);
      }
    }
    const bool laff = SKK(load_local)(job, st->bone, p0, n, l);
    /* The common case, specialised so column 3 is known everywhere: an
     * affine local (every TRS), affine parent world and inverse bind, and
     * absolute matrices (if wanted) equal to the worlds. */
    if (!two_chains && laff && st->inv_bind_affine && (st->parent_slot >= 0 ? waff[st->parent_slot] : init_affine)) {
      if (st->parent_slot >= 0)
        SKK(mul_vv)(l, wslot[st->parent_slot], w, true);
      else if (init != NULL)
        SKK(mul_vs)(l, init, w, true);
      else {
#pragma GCC unroll 16
        for (int k = 0; k < 16; k++)
          w[k] = l[k];
      }
      w[3] = w[7] = w[11] = VZERO();
      w[15] = VSET1(1.0f);
      if (st->slot >= 0) {
#pragma GCC unroll 16
        for (int k = 0; k < 16; k++)
          wslot[st->slot][k] = w[k];
        waff[st->slot] = true;
      }
      if (st->out >= 0) {
        SKK(mul_sv)(rig->inv_bind + 16 * s, w, f, true);
        SKK(store_mats)(fbase + 16 * (size_t)st->out, fstride, f, n, stream);
        if (abase != NULL)
          SKK(store_mats)(abase + 16 * (size_t)st->out, astride, w, n, stream);
      }
      continue;
    }
    bool aff;
    if (st->parent_slot >= 0) {
      aff = laff && waff[st->parent_slot];
      SKK(mul_vv)(l, wslot[st->parent_slot], w, aff);
    } else if (init != NULL) {
      aff = laff && init_affine;
      SKK(mul_vs)(l, init, w, aff);
    } else {
      aff = laff;
#pragma GCC unroll 16
      for (int k = 0; k < 16; k++)
        w[k] = l[k];
    }
    if (st->slot >= 0) {
#pragma GCC unroll 16
      for (int k = 0; k < 16; k++)
        wslot[st->slot][k] = w[k];
      waff[st->slot] = aff;
    }
    if (st->out >= 0) {
      SKK(mul_sv)(rig->inv_bind + 16 * s, w, f, aff && st->inv_bind_affine);
      SKK(store_mats)(fbase + 16 * (size_t)st->out, fstride, f, n, stream);
    }
    if (abase == NULL)
      continue;
    if (!two_chains) {
      if (st->out >= 0)
        SKK(store_mats)(abase + 16 * (size_t)st->out, astride, w, n, stream);
      continue;
    }
    V a[16];
    if (st->parent_slot >= 0) {
      aff = laff && aaff[st->parent_slot];
      SKK(mul_vv)(l, aslot[st->parent_slot], a, aff);
    } else {
      aff = laff;
#pragma GCC unroll 16
      for (int k = 0; k < 16; k++)
        a[k] = l[k];
    }
    if (st->slot >= 0) {
#pragma GCC unroll 16
      for (int k = 0; k < 16; k++)
        aslot[st->slot][k] = a[k];
      aaff[st->slot] = aff;
    }
    if (st->out >= 0)
      SKK(store_mats)(abase + 16 * (size_t)st->out, astride, a, n, stream);
  }
}

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
