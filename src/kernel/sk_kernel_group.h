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

/* What every group of one run shares: the job's spans and strides, the
 * initial skin converted once. */
typedef struct SKK(walk) {
  const sk_kernel_job *job;
  const sk_rig *rig;
  size_t fstride, astride;
  bool stream, init_affine;
  bool two_chains; /* absolute matrices exclude the initial skin: with one, they are a second chain */
  const SKK_INIT_T *init; /* init_ops, or NULL without an initial skin */
  SKK_INIT_T init_ops[16]; /* broadcast from memory like the inverse binds */
} SKK(walk);

/* One group's state: poses p0..p0+n-1 (n <= SKK_N). World matrices live
 * in `wslot` only while a later bone still needs them (the rig assigned
 * the slots), so the scratch stays small and in L1 whatever the bone count. */
typedef struct SKK(grp) {
  float *fbase, *abase;
  size_t p0, n;
  bool prefetch;
  V *wbase, *abase_v; /* slot k's 16 vectors at base + k * vstep (SKK_WS, SKK_AS) */
  size_t vstep;
  bool waff[SK_RIG_MAX_LIVE], aaff[SK_RIG_MAX_LIVE];
} SKK(grp);
#define SKK_WS(g, k) ((g)->wbase + (size_t)(k) * (g)->vstep)
#define SKK_AS(g, k) ((g)->abase_v + (size_t)(k) * (g)->vstep)

static SKK_ATTR inline __attribute__((always_inline)) void SKK(walk_init)(SKK(walk) *wk, const sk_kernel_job *job,
                                                                          bool stream) {
  wk->job = job;
  wk->rig = job->rig;
  wk->fstride = 16 * (job->rig->bones + 1);
  wk->astride = 16 * job->rig->bones;
  wk->stream = stream;
  wk->init_affine = job->initial_skin == NULL || SKK_INIT_AFFINE(job->initial_skin);
  wk->init = job->initial_skin != NULL ? wk->init_ops : NULL;
  for (int k = 0; wk->init != NULL && k < 16; k++)
    wk->init_ops[k] = job->initial_skin[k];
  wk->two_chains = job->absolute != NULL && job->initial_skin != NULL;
}

/* The slots no bone computes (unused: zeros; the trailing identity), and
 * whether this group prefetches. */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(grp_init)(const SKK(walk) *wk, SKK(grp) *g, size_t p0,
                                                                         size_t n, V *ws, V *as, size_t vstep) {
  const sk_kernel_job *job = wk->job;
  const sk_rig *rig = wk->rig;
  const bool stream = wk->stream;
  g->p0 = p0;
  g->n = n;
  g->wbase = ws;
  g->abase_v = as;
  g->vstep = vstep;
  g->fbase = job->final + p0 * wk->fstride;
  g->abase = job->absolute != NULL ? job->absolute + p0 * wk->astride : NULL;
  for (size_t k = 0; k < rig->unused; k++) {
    SKK_STORE_CONST(g->fbase + 16 * (size_t)rig->unused_slot[k], wk->fstride, sk_kernel_zero16, n, stream);
    if (g->abase != NULL)
      SKK_STORE_CONST(g->abase + 16 * (size_t)rig->unused_slot[k], wk->astride, sk_kernel_zero16, n, stream);
  }
  SKK_STORE_CONST(g->fbase + 16 * rig->bones, wk->fstride, sk_kernel_identity16, n, stream);
  /* The next block's input rows: one line per row per 16 poses, each row
   * its own stream (10 or 16 per bone: 650 for 65 bones), far more than the
   * hardware prefetchers follow. Without this, 65 bones x 65536 poses ran
   * 3-4x slower. Once per 16-pose block, from its first group. */
  g->prefetch = p0 % 16 == 0 && p0 + SKK_PREFETCH < job->poses;
}

/* The second chain (absolute matrices without the initial skin) of step s. */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(step_abs)(const SKK(walk) *wk, SKK(grp) *g,
                                                                         const sk_rig_step *st, const V *l,
                                                                         bool laff) {
  V a[16];
  bool aff;
  if (st->parent_slot >= 0) {
    aff = laff && g->aaff[st->parent_slot];
    SKK(mul_vv)(l, SKK_AS(g, st->parent_slot), a, aff);
  } else {
    aff = laff;
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++)
      a[k] = l[k];
  }
  if (st->slot >= 0) {
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++)
      SKK_AS(g, st->slot)[k] = a[k];
    g->aaff[st->slot] = aff;
  }
  if (st->out >= 0)
    SKK(store_mats)(g->abase + 16 * (size_t)st->out, wk->astride, a, g->n, wk->stream);
}

/* The general step: any local, parent or inverse bind. */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(step_general)(const SKK(walk) *wk, SKK(grp) *g,
                                                                             size_t s, const V *l, bool laff) {
  const sk_rig_step *st = &wk->rig->step[s];
  const size_t n = g->n;
  V w[16];
  bool aff;
  if (st->parent_slot >= 0) {
    V *pw = SKK_WS(g, st->parent_slot);
    aff = laff && g->waff[st->parent_slot];
    if (g->waff[st->parent_slot] && !aff) /* the fast path left column 3 unwritten */
      pw[3] = pw[7] = pw[11] = VZERO(), pw[15] = VSET1(1);
    SKK(mul_vv)(l, pw, w, aff);
  } else if (wk->init != NULL) {
    aff = laff && wk->init_affine;
    SKK(mul_vs)(l, wk->init, w, aff);
  } else {
    aff = laff;
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++)
      w[k] = l[k];
  }
  if (st->slot >= 0) {
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++)
      SKK_WS(g, st->slot)[k] = w[k];
    g->waff[st->slot] = aff;
  }
  if (st->out >= 0)
    SKK(final_out)(wk->rig, s, w, g->fbase + 16 * (size_t)st->out, wk->fstride, n, wk->stream,
                   aff && st->inv_bind_affine);
  if (g->abase == NULL)
    return;
  if (!wk->two_chains) {
    if (st->out >= 0)
      SKK(store_mats)(g->abase + 16 * (size_t)st->out, wk->astride, w, n, wk->stream);
    return;
  }
  SKK(step_abs)(wk, g, st, l, laff);
}

/* Step s of one group: bone st->bone's world, final and absolute. */
static SKK_ATTR inline __attribute__((always_inline)) void SKK(step)(const SKK(walk) *wk, SKK(grp) *g, size_t s) {
  const sk_kernel_job *job = wk->job;
  const sk_rig_step *st = &wk->rig->step[s];
  const size_t n = g->n;
  V l[16], w[16];
  if (g->prefetch)
    SKK(prefetch_bone)(job, st->bone, g->p0 + SKK_PREFETCH);
  const bool laff = SKK(load_local)(job, st->bone, g->p0, n, l);
  /* The common case, specialised so column 3 is known everywhere: an
   * affine local (every TRS), affine parent world, an inverse bind the
   * kernel's SKK_STEP_FAST accepts, and absolute matrices (if wanted)
   * equal to the worlds. */
  if (wk->two_chains || !laff || !SKK_STEP_FAST(st) ||
      !(st->parent_slot >= 0 ? g->waff[st->parent_slot] : wk->init_affine)) {
    SKK(step_general)(wk, g, s, l, laff);
    return;
  }
#if SKK_FUSE
  if (st->parent_slot >= 0 && st->out >= 0 && g->abase == NULL) {
    SKK_WORLD_FINAL(wk->rig, s, l, SKK_WS(g, st->parent_slot), st->slot >= 0 ? SKK_WS(g, st->slot) : NULL,
                    g->fbase + 16 * (size_t)st->out, wk->fstride, n, wk->stream);
    if (st->slot >= 0)
      g->waff[st->slot] = true;
    return;
  }
#endif
  if (st->parent_slot >= 0)
    SKK(mul_vv)(l, SKK_WS(g, st->parent_slot), w, true);
  else if (wk->init != NULL)
    SKK(mul_vs)(l, wk->init, w, true);
  else {
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++)
      w[k] = l[k];
  }
  SKK(fix_column3)(w);
  /* Column 3 is known (waff): only the general path reads it, and it
   * writes the constants first. */
  if (st->slot >= 0) {
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++)
      if (k % 4 != 3)
        SKK_WS(g, st->slot)[k] = w[k];
    g->waff[st->slot] = true;
  }
  if (st->out >= 0) {
    SKK(final_out)(wk->rig, s, w, g->fbase + 16 * (size_t)st->out, wk->fstride, n, wk->stream, true);
    if (g->abase != NULL)
      SKK(store_mats)(g->abase + 16 * (size_t)st->out, wk->astride, w, n, wk->stream);
  }
}

/* One group: poses p0..p0+n-1 (n <= SKK_N), every bone in the rig's
 * processing order. */
static SKK_ATTR void SKK(group)(const sk_kernel_job *job, size_t p0, size_t n, bool stream) {
  SKK(walk) wk;
  SKK(grp) g;
  V ws[SK_RIG_MAX_LIVE][16], as[SK_RIG_MAX_LIVE][16];
  SKK(walk_init)(&wk, job, stream);
  SKK(grp_init)(&wk, &g, p0, n, ws[0], as[0], 16);
  for (size_t s = 0; s < wk.rig->steps; s++)
    SKK(step)(&wk, &g, s);
}

#undef SKK_WS
#undef SKK_AS
#undef SKK_INIT_T
#undef SKK_INIT_AFFINE
#undef SKK_WORLD_FINAL
#undef SKK_STEP_FAST
#undef SKK_FUSE
#undef SKK_STORE_CONST
