/* The walk of one group of poses through the rig, shared by the exact
 * batch kernel (sk_kernel_lanes.h) and the float32 one
 * (sk_kernel_lanes_f32.h). Not a public header: each lanes template
 * includes it once per SIMD path, after its products and load_local, with
 * these defined besides its own lane macros:
 *
 *   SKK_INIT_T          the element type of mul_vs's shared operand (the
 *                       initial skin): double (exact) or float
 *   SKK_INIT_AFFINE(m)  whether the initial skin m[16] takes the affine
 *                       products (each kernel's own test)
 *   SKK(prefetch_bone)(job, bone, p)   prefetches bone's input rows of pose p
 *   SKK(fix_column3)(w)  after the affine fast path's product: column 3 as
 *                       the kernel's affine test assumes it (a no-op where
 *                       the products already write it bitwise)
 *   SKK_STEP_FAST(st)   whether step st's inverse bind allows the affine
 *                       fast path (each kernel's own rule)
 *   SKK_FUSE            1: the fast path of a step with a parent and an
 *                       output (and no absolute output) calls
 *   SKK_WORLD_FINAL(rig, s, l, pw, ws, dst, stride, n, stream)
 *                       world = l · pw into ws (if not NULL) and its
 *                       final, fused; 0: mul_vv, then final_out
 *   SKK(final_out)(rig, s, w, dst, stride, n, stream, affine)
 *                       (affine: w's column 3 is bitwise (+0, +0, +0, 1)
 *                       and SKK_STEP_FAST(step s) holds)
 *                       step s's inverse bind · w, stored to the n lanes
 *   SKK_STORE_CONST(dst, stride, m16, n, stream)  the same 16 floats to
 *                       lanes 0..n-1 (sk_kernel_store.h's, per ISA)
 *
 * It #undefs SKK_INIT_T, SKK_INIT_AFFINE and SKK_STORE_CONST at its end.
 *
 * The world of a bone the affine fast path computes goes to its slot
 * without column 3 (waff says it is (0, 0, 0, 1)); the general path writes
 * those constants first where a non-affine product will read them. */

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
  const bool init_affine = job->initial_skin == NULL || SKK_INIT_AFFINE(job->initial_skin);
  SKK_INIT_T init_ops[16]; /* converted once per group, broadcast from memory like the inverse binds */
  const SKK_INIT_T *const init = job->initial_skin != NULL ? init_ops : NULL;
  for (int k = 0; init != NULL && k < 16; k++)
    init_ops[k] = job->initial_skin[k];
  /* Absolute matrices exclude the initial skin: with one, they are a second chain. */
  const bool two_chains = abase != NULL && init != NULL;
  V wslot[SK_RIG_MAX_LIVE][16], aslot[SK_RIG_MAX_LIVE][16];
  bool waff[SK_RIG_MAX_LIVE], aaff[SK_RIG_MAX_LIVE];

  for (size_t k = 0; k < rig->unused; k++) {
    SKK_STORE_CONST(fbase + 16 * (size_t)rig->unused_slot[k], fstride, sk_kernel_zero16, n, stream);
    if (abase != NULL)
      SKK_STORE_CONST(abase + 16 * (size_t)rig->unused_slot[k], astride, sk_kernel_zero16, n, stream);
  }
  SKK_STORE_CONST(fbase + 16 * nb, fstride, sk_kernel_identity16, n, stream);

  /* The next block's input rows: one line per row per 16 poses, each row
   * its own stream (10 or 16 per bone: 650 for 65 bones), far more than the
   * hardware prefetchers follow. Without this, 65 bones x 65536 poses ran
   * 3-4x slower. Once per 16-pose block, from its first group. */
  const bool prefetch = p0 % 16 == 0 && p0 + SKK_PREFETCH < job->poses;

  for (size_t s = 0; s < rig->steps; s++) {
    const sk_rig_step *st = &rig->step[s];
    V l[16], w[16];
    if (prefetch)
      SKK(prefetch_bone)(job, st->bone, p0 + SKK_PREFETCH);
    const bool laff = SKK(load_local)(job, st->bone, p0, n, l);
    /* The common case, specialised so column 3 is known everywhere: an
     * affine local (every TRS), affine parent world, an inverse bind the
     * kernel's SKK_STEP_FAST accepts, and absolute matrices (if wanted)
     * equal to the worlds. */
    if (!two_chains && laff && SKK_STEP_FAST(st) && (st->parent_slot >= 0 ? waff[st->parent_slot] : init_affine)) {
#if SKK_FUSE
      if (st->parent_slot >= 0 && st->out >= 0 && abase == NULL) {
        SKK_WORLD_FINAL(rig, s, l, wslot[st->parent_slot], st->slot >= 0 ? wslot[st->slot] : NULL,
                        fbase + 16 * (size_t)st->out, fstride, n, stream);
        if (st->slot >= 0)
          waff[st->slot] = true;
        continue;
      }
#endif
      if (st->parent_slot >= 0)
        SKK(mul_vv)(l, wslot[st->parent_slot], w, true);
      else if (init != NULL)
        SKK(mul_vs)(l, init, w, true);
      else {
#pragma GCC unroll 16
        for (int k = 0; k < 16; k++)
          w[k] = l[k];
      }
      SKK(fix_column3)(w);
      /* Column 3 is known (waff): only the general path below reads it, and
       * it writes the constants first. */
      if (st->slot >= 0) {
#pragma GCC unroll 16
        for (int k = 0; k < 16; k++)
          if (k % 4 != 3)
            wslot[st->slot][k] = w[k];
        waff[st->slot] = true;
      }
      if (st->out >= 0) {
        SKK(final_out)(rig, s, w, fbase + 16 * (size_t)st->out, fstride, n, stream, true);
        if (abase != NULL)
          SKK(store_mats)(abase + 16 * (size_t)st->out, astride, w, n, stream);
      }
      continue;
    }
    bool aff;
    if (st->parent_slot >= 0) {
      V *pw = wslot[st->parent_slot];
      aff = laff && waff[st->parent_slot];
      if (waff[st->parent_slot] && !aff) /* the fast path left column 3 unwritten */
        pw[3] = pw[7] = pw[11] = VZERO(), pw[15] = VSET1(1);
      SKK(mul_vv)(l, pw, w, aff);
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
    if (st->out >= 0)
      SKK(final_out)(rig, s, w, fbase + 16 * (size_t)st->out, fstride, n, stream, aff && st->inv_bind_affine);
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

#undef SKK_INIT_T
#undef SKK_INIT_AFFINE
#undef SKK_WORLD_FINAL
#undef SKK_STEP_FAST
#undef SKK_FUSE
#undef SKK_STORE_CONST
