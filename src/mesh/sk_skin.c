#include "sk_skin.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "sk_anim.h"
#include "sk_anim_math.h"
#include "sk_skinv.h"

bool sk_skin_validate(const sk_skin_job *job) {
  if (job == NULL || job->prim == NULL || job->final == NULL || (job->pos == NULL && job->nrm == NULL))
    return false;
  return !job->bounds || job->pos != NULL;
}

bool sk_skin__morphs(const sk_geom_prim *p, const double *influence, int which) {
  for (uint32_t t = 0; t < p->ntargets; t++)
    if (influence[t] != 0 && (which == 0 ? p->targets[t].pos : p->targets[t].nrm) != NULL)
      return true;
  return false;
}

/* Step 1, floats [3 v0, 3 v1) (`which` 0 positions, 1 normals). */
void sk_skin__morph(const sk_geom_prim *p, const double *influence, int which, size_t v0, size_t v1, float *dest) {
  const float *base = which == 0 ? p->pos : p->nrm;
  for (size_t i = 3 * v0; i < 3 * v1; i++) {
    double value = base[i];
    for (uint32_t t = 0; t < p->ntargets; t++) {
      const float *td = which == 0 ? p->targets[t].pos : p->targets[t].nrm;
      if (influence[t] != 0 && td != NULL)
        value += ((double)td[i] - (double)base[i]) * influence[t];
    }
    dest[i] = (float)value;
  }
}

/* Step 2: the weighted sum of vertex v's skin matrices, in float32. */
static void blend(const sk_geom_prim *p, const float *final, size_t v, float m[16]) {
  memset(m, 0, 16 * sizeof *m);
  const unsigned k = p->influences;
  const uint32_t *j = p->joints + v * k;
  const float *w = p->weights + v * k;
  for (unsigned i = 0; i < k; i++) {
    if (!(w[i] > 0))
      continue;
    const float *b = final + 16 * (size_t)j[i];
    for (int c = 0; c < 16; c++) {
      const float scaled = b[c] * w[i]; /* FromFloat32ArrayToRefScaled: one float32 rounding */
      m[c] = m[c] + scaled;             /* addToSelf: one float32 rounding */
    }
  }
}

/* Step 3 from s[0..3) to d[0..3) (s == d allowed). */
static void transform_point(const float m[16], const float *s, float *d) {
  const double x = s[0], y = s[1], z = s[2];
  const double rx = x * m[0] + y * m[4] + z * m[8] + m[12];
  const double ry = x * m[1] + y * m[5] + z * m[9] + m[13];
  const double rz = x * m[2] + y * m[6] + z * m[10] + m[14];
  const double rw = 1 / (x * m[3] + y * m[7] + z * m[11] + m[15]);
  d[0] = (float)(rx * rw);
  d[1] = (float)(ry * rw);
  d[2] = (float)(rz * rw);
}

static void transform_normal(const float m[16], const float *s, float *d) {
  const double x = s[0], y = s[1], z = s[2];
  d[0] = (float)(x * m[0] + y * m[4] + z * m[8]);
  d[1] = (float)(x * m[1] + y * m[5] + z * m[9]);
  d[2] = (float)(x * m[2] + y * m[6] + z * m[10]);
}

void sk_skin__scalar(const sk_geom_prim *p, const float *final, size_t v0, size_t v1, const float *sp, float *dp,
                     const float *sn, float *dn) {
  float m[16];
  for (size_t v = v0; v < v1; v++) {
    blend(p, final, v, m);
    if (dp != NULL)
      transform_point(m, sp + 3 * v, dp + 3 * v);
    if (dn != NULL)
      transform_normal(m, sn + 3 * v, dn + 3 * v);
  }
}

void sk_skin_run(sk_skin_job *job) { sk_skinv_run(job, NULL, NULL, 1); }

/* One weights channel at `frame` into out[0..ntargets). */
static void sample_weights(const sk_geom_weights *w, double frame, double *out) {
  const size_t n = w->count, nt = w->ntargets;
  const bool cubic = w->interp == SK_ANIM_CUBICSPLINE;
  const size_t stride = cubic ? 3 * nt : nt, vo = cubic ? nt : 0;
  if (frame < w->frames[0])
    frame = w->frames[0];
  else if (frame > w->frames[n - 1])
    frame = w->frames[n - 1];
  size_t lo = 0, hi = n; /* the largest key at or before the frame, as Babylon's walk ends */
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (frame >= w->frames[mid])
      lo = mid;
    else
      hi = mid;
  }
  const float *sv = w->values + lo * stride + vo;
  if (lo + 1 >= n || w->interp == SK_ANIM_STEP) {
    for (size_t i = 0; i < nt; i++)
      out[i] = sv[i];
    return;
  }
  const float *ev = w->values + (lo + 1) * stride + vo;
  const double frame_delta = w->frames[lo + 1] - w->frames[lo];
  const double gradient = (frame - w->frames[lo]) / frame_delta;
  if (!cubic) {
    for (size_t i = 0; i < nt; i++)
      out[i] = (double)sv[i] + ((double)ev[i] - (double)sv[i]) * gradient;
    return;
  }
  const float *out_t = w->values + lo * stride + 2 * nt, *in_t = w->values + (lo + 1) * stride;
  const double invfps = 1 / SK_ANIM_FPS;
  for (size_t i = 0; i < nt; i++) {
    const double v1 = sv[i], v2 = ev[i];
    const double t1 = ((double)out_t[i] * invfps) * frame_delta, t2 = ((double)in_t[i] * invfps) * frame_delta;
    sk_anim__hermite(&v1, &t1, &v2, &t2, gradient, 1, &out[i]);
  }
}

/* The channel of `clip` that drives `mesh` (the last in file order), or NULL. */
static const sk_geom_weights *channel_of(const sk_geom *geom, uint32_t mesh, uint32_t ntargets, long clip) {
  const sk_geom_weights *last = NULL;
  for (uint32_t k = 0; clip >= 0 && k < geom->nweights; k++)
    if (geom->weights[k].clip == (uint32_t)clip && geom->weights[k].mesh == mesh && geom->weights[k].ntargets == ntargets)
      last = &geom->weights[k];
  return last;
}

void sk_skin_influences_layers(const sk_geom *geom, uint32_t mesh, uint32_t ntargets, const long *clips,
                               const double *frames, const double *weights, size_t n, bool blend,
                               const double *defaults, double *dest) {
  if (!blend || n == 0) {
    if (n > 0)
      sk_skin_influences(geom, mesh, ntargets, clips[0], frames[0], defaults, dest);
    else if (ntargets > 0) /* memcpy's pointers must be valid even for 0 bytes */
      memcpy(dest, defaults, ntargets * sizeof *dest);
    return;
  }
  double total = 0;
  bool any = false;
  for (size_t i = 0; i < n; i++)
    if (channel_of(geom, mesh, ntargets, clips[i]) != NULL) {
      total += weights[i];
      any = true;
    }
  if (!any) {
    if (ntargets > 0)
      memcpy(dest, defaults, ntargets * sizeof *dest);
    return;
  }
  double v[SK_GEOM_MAX_TARGETS];
  bool started = false;
  if (total < 1) {
    for (uint32_t t = 0; t < ntargets; t++)
      dest[t] = defaults[t] * (1 - total);
    started = true;
  }
  for (size_t i = 0; i < n; i++) {
    const sk_geom_weights *w = channel_of(geom, mesh, ntargets, clips[i]);
    if (w == NULL)
      continue;
    const double r = total < 1 ? weights[i] : weights[i] / total;
    if (total >= 1 && r == 0)
      continue;
    sample_weights(w, frames[i], v);
    for (uint32_t t = 0; t < ntargets; t++)
      dest[t] = !started ? (r == 1 ? v[t] : v[t] * r) : dest[t] + v[t] * r;
    started = true;
  }
}

void sk_skin_influences(const sk_geom *geom, uint32_t mesh, uint32_t ntargets, long clip, double frame,
                        const double *defaults, double *dest) {
  const sk_geom_weights *last = channel_of(geom, mesh, ntargets, clip);
  if (last == NULL) {
    if (ntargets > 0) /* memcpy's pointers must be valid even for 0 bytes */
      memcpy(dest, defaults, ntargets * sizeof *dest);
    return;
  }
  sample_weights(last, frame, dest);
}

static bool affine(const float *m) { return m[3] == 0 && m[7] == 0 && m[11] == 0 && m[15] == 1; }

/* Joint box k of p posed by its (affine) skin matrix with the morph
 * influences: min xyz, max xyz into b, unpadded. */
static void posed_box(const sk_geom_prim *p, const float *final, const double *infl, uint32_t k, double out[6]) {
  double b[6];
  memcpy(b, p->boxes + 6 * (size_t)k, sizeof b);
  for (uint32_t t = 0; t < p->ntargets; t++) {
    if (infl[t] == 0)
      continue;
    const double *d = p->dboxes + 6 * ((size_t)k * p->ntargets + t);
    for (int a = 0; a < 3; a++) {
      const double u = d[a] * infl[t], v = d[3 + a] * infl[t];
      b[a] += u < v ? u : v;
      b[3 + a] += u < v ? v : u;
    }
  }
  /* The box's image under the affine m is the box about m c with half
   * extents |m| e (Arvo): the hull of the 8 transformed corners, for a
   * quarter of their arithmetic. Its double roundings (relative 2^-52 of
   * the terms) sit far inside the pad of the callers, which covers the
   * float32 roundings of the exact path (relative 2^-21 of the same terms). */
  const float *m = final + 16 * (size_t)p->box_joint[k];
  const double cx = (b[0] + b[3]) * 0.5, cy = (b[1] + b[4]) * 0.5, cz = (b[2] + b[5]) * 0.5;
  const double ex = (b[3] - b[0]) * 0.5, ey = (b[4] - b[1]) * 0.5, ez = (b[5] - b[2]) * 0.5;
  for (int a = 0; a < 3; a++) {
    const double c = cx * m[a] + cy * m[4 + a] + cz * m[8 + a] + m[12 + a];
    const double e = ex * fabs((double)m[a]) + ey * fabs((double)m[4 + a]) + ez * fabs((double)m[8 + a]);
    out[a] = c - e;
    out[3 + a] = c + e;
  }
}

bool sk_skin_joint_boxes(const sk_geom_prim *p, const float *final, const double *infl, double *dest) {
  if (p->influences == 0)
    return false;
  for (uint32_t k = 0; k < p->nboxes; k++)
    if (!affine(final + 16 * (size_t)p->box_joint[k]))
      return false;
  for (uint32_t k = 0; k < p->nboxes; k++)
    posed_box(p, final, infl, k, dest + 6 * (size_t)k);
  return true;
}

void sk_skin_bounds_conservative(const sk_geom_prim *p, const float *final, size_t slots, const double *infl,
                                 float *pos, float min[3], float max[3]) {
  bool exact = p->influences == 0;
  for (uint32_t k = 0; k < p->nboxes && !exact; k++)
    exact = !affine(final + 16 * (size_t)p->box_joint[k]);
  if (exact) {
    sk_skin_job job = {.prim = p, .final = final, .slots = slots, .influence = infl, .pos = pos, .bounds = true};
    sk_skin_run(&job);
    memcpy(min, job.min, sizeof job.min);
    memcpy(max, job.max, sizeof job.max);
    return;
  }
  double lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
  for (uint32_t k = 0; k < p->nboxes; k++) {
    double b[6];
    posed_box(p, final, infl, k, b);
    for (int a = 0; a < 3; a++) {
      if (b[a] < lo[a])
        lo[a] = b[a];
      if (b[3 + a] > hi[a])
        hi[a] = b[3 + a];
    }
  }
  double big = 0;
  for (int a = 0; a < 3; a++)
    big = fmax(big, fmax(fabs(lo[a]), fabs(hi[a])));
  const double pad = big * 0x1p-16 + FLT_MIN;
  for (int a = 0; a < 3; a++) {
    /* rounded outward to float32 */
    float l = (float)(lo[a] - pad), h = (float)(hi[a] + pad);
    min[a] = (double)l > lo[a] - pad ? nextafterf(l, -INFINITY) : l;
    max[a] = (double)h < hi[a] + pad ? nextafterf(h, INFINITY) : h;
  }
}
