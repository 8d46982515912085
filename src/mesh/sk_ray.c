#include "sk_ray.h"

#include <float.h>
#include <math.h>
#include <string.h>

bool sk_ray_intersect(const double o[3], const double d[3], const float *a, const float *b, const float *c,
                      double *t, double *u, double *v) {
  const double a0 = a[0], a1 = a[1], a2 = a[2];
  const double e10 = (double)b[0] - a0, e11 = (double)b[1] - a1, e12 = (double)b[2] - a2;
  const double e20 = (double)c[0] - a0, e21 = (double)c[1] - a1, e22 = (double)c[2] - a2;
  const double p0 = d[1] * e22 - d[2] * e21, p1 = d[2] * e20 - d[0] * e22, p2 = d[0] * e21 - d[1] * e20;
  const double det = e10 * p0 + e11 * p1 + e12 * p2;
  if (fabs(det) < 1e-12 || !(det == det))
    return false;
  const double inv = 1 / det;
  const double s0 = o[0] - a0, s1 = o[1] - a1, s2 = o[2] - a2;
  const double uu = (s0 * p0 + s1 * p1 + s2 * p2) * inv;
  if (uu < 0 || uu > 1 || !(uu == uu))
    return false;
  const double q0 = s1 * e12 - s2 * e11, q1 = s2 * e10 - s0 * e12, q2 = s0 * e11 - s1 * e10;
  const double vv = (d[0] * q0 + d[1] * q1 + d[2] * q2) * inv;
  if (vv < 0 || uu + vv > 1 || !(vv == vv))
    return false;
  const double tt = (e20 * q0 + e21 * q1 + e22 * q2) * inv;
  if (!(tt > 0))
    return false;
  *t = tt;
  *u = uu;
  *v = vv;
  return true;
}

void sk_ray_clear(sk_ray_hit *hits, size_t n) {
  for (size_t i = 0; i < n; i++)
    hits[i] = (sk_ray_hit){.prim = -1, .t = INFINITY, .distance = INFINITY};
}

bool sk_ray_wants(const sk_geom_ray *rays, size_t n, uint32_t index) {
  for (size_t i = 0; i < n; i++)
    if (rays[i].prim < 0 || rays[i].prim == (int64_t)index)
      return true;
  return false;
}

void sk_ray_prim(const sk_geom_prim *p, uint32_t index, const float *pos, const sk_geom_ray *rays, size_t n,
                 sk_ray_hit *hits) {
  for (size_t r = 0; r < n; r++) {
    const sk_geom_ray *ray = &rays[r];
    if (ray->prim >= 0 && ray->prim != (int64_t)index)
      continue;
    const double len = sqrt(ray->dir[0] * ray->dir[0] + ray->dir[1] * ray->dir[1] + ray->dir[2] * ray->dir[2]);
    sk_ray_hit *h = &hits[r];
    for (uint32_t k = 0; k < p->ntris; k++) {
      const size_t i0 = p->tris ? p->tris[3 * (size_t)k] : 3 * (size_t)k;
      const size_t i1 = p->tris ? p->tris[3 * (size_t)k + 1] : 3 * (size_t)k + 1;
      const size_t i2 = p->tris ? p->tris[3 * (size_t)k + 2] : 3 * (size_t)k + 2;
      double t, u, v;
      if (!sk_ray_intersect(ray->origin, ray->dir, pos + 3 * i0, pos + 3 * i1, pos + 3 * i2, &t, &u, &v) ||
          !(t < h->t))
        continue;
      const double dist = t * len;
      if (!(dist <= ray->max_distance) || !isfinite(dist) || !isfinite(t))
        continue;
      *h = (sk_ray_hit){.prim = index, .tri = k, .t = t, .distance = dist, .u = u, .v = v};
    }
  }
}

/* ---- the fast path ------------------------------------------------------------------- */

/* Triangles in blocks of four, nine arrays of lanes: ax ay az, e1 xyz, e2
 * xyz. Padding lanes are all zero: det 0, a miss. */
#define LANES 4
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));

/* Triangles set up at once: the scratch stays 288 KiB however large the
 * primitive (chunks in triangle order keep the ties' lowest index). */
#define CHUNK 4096u

size_t sk_ray_scratch_doubles(const sk_geom_prim *p) {
  const size_t n = p->ntris < CHUNK ? p->ntris : CHUNK;
  return (n + LANES - 1) / LANES * LANES * 9 + LANES;
}

/* Triangles [k0, k1) into s, block by block. */
static void setup(const sk_geom_prim *p, const float *pos, uint32_t k0, uint32_t k1, double *s) {
  const size_t blocks = ((size_t)(k1 - k0) + LANES - 1) / LANES;
  memset(s, 0, blocks * LANES * 9 * sizeof *s);
  for (uint32_t k = k0; k < k1; k++) {
    const size_t i0 = p->tris ? p->tris[3 * (size_t)k] : 3 * (size_t)k;
    const size_t i1 = p->tris ? p->tris[3 * (size_t)k + 1] : 3 * (size_t)k + 1;
    const size_t i2 = p->tris ? p->tris[3 * (size_t)k + 2] : 3 * (size_t)k + 2;
    double *b = s + (size_t)((k - k0) / LANES) * LANES * 9 + (k - k0) % LANES;
    for (int a = 0; a < 3; a++) {
      const double av = pos[3 * i0 + a];
      b[LANES * a] = av;
      b[LANES * (3 + a)] = (double)pos[3 * i1 + a] - av; /* as sk_ray_intersect's e1, e2 */
      b[LANES * (6 + a)] = (double)pos[3 * i2 + a] - av;
    }
  }
}

/* One ray over the blocks; the same operations as sk_ray_intersect, lane
 * by lane (-ffp-contract=off: no fused multiply-add in either). */
#define RAY_BODY                                                                                                   \
  const double len = sqrt(ray->dir[0] * ray->dir[0] + ray->dir[1] * ray->dir[1] + ray->dir[2] * ray->dir[2]);     \
  const v4d z = {0, 0, 0, 0};                                                                                      \
  const v4d d0 = z + ray->dir[0], d1 = z + ray->dir[1], d2 = z + ray->dir[2];                                      \
  const v4d o0 = z + ray->origin[0], o1 = z + ray->origin[1], o2 = z + ray->origin[2];                             \
  const v4d eps = z + 1e-12, one = z + 1;                                                                          \
  for (size_t b = 0; b < blocks; b++) {                                                                            \
    const double *q = s + b * LANES * 9;                                                                           \
    v4d a0, a1, a2, e10, e11, e12, e20, e21, e22;                                                                  \
    memcpy(&a0, q, sizeof a0);                                                                                     \
    memcpy(&a1, q + 4, sizeof a0);                                                                                 \
    memcpy(&a2, q + 8, sizeof a0);                                                                                 \
    memcpy(&e10, q + 12, sizeof a0);                                                                               \
    memcpy(&e11, q + 16, sizeof a0);                                                                               \
    memcpy(&e12, q + 20, sizeof a0);                                                                               \
    memcpy(&e20, q + 24, sizeof a0);                                                                               \
    memcpy(&e21, q + 28, sizeof a0);                                                                               \
    memcpy(&e22, q + 32, sizeof a0);                                                                               \
    const v4d p0 = d1 * e22 - d2 * e21, p1 = d2 * e20 - d0 * e22, p2 = d0 * e21 - d1 * e20;                        \
    const v4d det = e10 * p0 + e11 * p1 + e12 * p2;                                                                \
    const v4d inv = one / det;                                                                                     \
    const v4d s0 = o0 - a0, s1 = o1 - a1, s2 = o2 - a2;                                                            \
    const v4d u = (s0 * p0 + s1 * p1 + s2 * p2) * inv;                                                             \
    const v4d q0 = s1 * e12 - s2 * e11, q1 = s2 * e10 - s0 * e12, q2 = s0 * e11 - s1 * e10;                        \
    const v4d v = (d0 * q0 + d1 * q1 + d2 * q2) * inv;                                                             \
    const v4d t = (e20 * q0 + e21 * q1 + e22 * q2) * inv;                                                          \
    const v4l ok = ((det >= eps) | (det <= -eps)) & (u >= z) & (u <= one) & (v >= z) & (u + v <= one) & (t > z) &      \
                   (t < z + h->t);                                                                                 \
    if (!(ok[0] | ok[1] | ok[2] | ok[3]))                                                                          \
      continue;                                                                                                    \
    for (int l = 0; l < LANES; l++) {                                                                              \
      if (!ok[l] || !(t[l] < h->t))                                                                                \
        continue;                                                                                                  \
      const double dist = t[l] * len;                                                                              \
      if (!(dist <= ray->max_distance) || !isfinite(dist) || !isfinite(t[l]))                                      \
        continue;                                                                                                  \
      *h = (sk_ray_hit){.prim = index, .tri = first + (uint32_t)(b * LANES + (size_t)l), .t = t[l], .distance = dist,      \
                        .u = u[l], .v = v[l]};                                                                     \
    }                                                                                                              \
  }

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static void ray_avx2(const double *s, size_t blocks, uint32_t first,
                                                     uint32_t index, const sk_geom_ray *ray, sk_ray_hit *h) {
  RAY_BODY
}
#endif
static void ray_base(const double *s, size_t blocks, uint32_t first, uint32_t index, const sk_geom_ray *ray,
                     sk_ray_hit *h) {
  RAY_BODY
}

size_t sk_ray_groups(const sk_geom_prim *p) { return ((size_t)p->ntris + SK_RAY_GROUP - 1) / SK_RAY_GROUP; }

/* Pads box b (a group's) past Möller–Trumbore's double roundings and the
 * float32 roundings of the exact path: 2^-10 of its largest coordinate. A
 * box with a non-finite coordinate becomes infinite (never skipped). */
static void pad_box(double *b, bool whole) {
  double big = 0;
  for (int a = 0; a < 6; a++)
    big = fmax(big, fabs(b[a]));
  const double pad = big * 0x1p-10 + FLT_MIN;
  for (int a = 0; a < 3; a++) {
    b[a] = whole || !isfinite(big) ? -INFINITY : b[a] - pad;
    b[3 + a] = whole || !isfinite(big) ? INFINITY : b[3 + a] + pad;
  }
}

void sk_ray_group_boxes(const sk_geom_prim *p, const float *pos, double *dest) {
  const size_t groups = sk_ray_groups(p);
  for (size_t g = 0; g < groups; g++) {
    double *b = dest + 6 * g;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    const size_t k1 = (g + 1) * SK_RAY_GROUP < p->ntris ? (g + 1) * SK_RAY_GROUP : p->ntris;
    for (size_t k = g * SK_RAY_GROUP; k < k1; k++)
      for (int c = 0; c < 3; c++) {
        const float *x = pos + 3 * (p->tris ? p->tris[3 * k + c] : 3 * k + c);
        for (int a = 0; a < 3; a++) {
          lo[a] = x[a] < lo[a] ? x[a] : lo[a];
          hi[a] = x[a] > hi[a] ? x[a] : hi[a];
        }
      }
    for (int a = 0; a < 3; a++) {
      b[a] = lo[a];
      b[3 + a] = hi[a];
    }
    pad_box(b, false);
  }
}

/* Whether the half-line o + t d, t >= 0, meets box b (slabs in doubles; a
 * box that is -inf..inf on an axis always meets it there). */
static bool meets(const double *o, const double *d, const double *inv, const double *b) {
  double lo = 0, hi = INFINITY;
  for (int a = 0; a < 3; a++) {
    if (d[a] == 0) {
      if (o[a] < b[a] || o[a] > b[3 + a])
        return false;
      continue;
    }
    /* times 1 / d rather than divided by d: a rounding apart, far inside
     * the pad */
    double t1 = (b[a] - o[a]) * inv[a], t2 = (b[3 + a] - o[a]) * inv[a];
    if (t1 > t2) {
      const double x = t1;
      t1 = t2;
      t2 = x;
    }
    lo = t1 > lo ? t1 : lo;
    hi = t2 < hi ? t2 : hi;
    if (!(lo <= hi)) /* a NaN slab (inf - inf) is no reason to skip */
      return !(lo == lo) || !(hi == hi);
  }
  return true;
}

bool sk_ray_meets_any(const sk_geom_prim *p, uint32_t index, const double *jbox, const sk_geom_ray *rays,
                      size_t n) {
  double u[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
  for (uint32_t k = 0; k < p->nboxes; k++)
    for (int a = 0; a < 3; a++) {
      u[a] = jbox[6 * k + a] < u[a] ? jbox[6 * k + a] : u[a];
      u[3 + a] = jbox[6 * k + 3 + a] > u[3 + a] ? jbox[6 * k + 3 + a] : u[3 + a];
    }
  pad_box(u, false);
  /* Skipping a primitive skips its skinning, and with it the check that
   * every posed coordinate is a finite float32: only for a box far inside
   * float32's range (its vertices are inside it), every other one tested. */
  for (int a = 0; a < 6; a++)
    if (!(fabs(u[a]) < 0x1p100)) /* NaN or infinite too */
      return true;
  for (size_t r = 0; r < n; r++)
    if (rays[r].prim < 0 || rays[r].prim == (int64_t)index) {
      const double inv[3] = {1 / rays[r].dir[0], 1 / rays[r].dir[1], 1 / rays[r].dir[2]};
      if (meets(rays[r].origin, rays[r].dir, inv, u))
        return true;
    }
  return false;
}

void sk_ray_prim_boxed(const sk_geom_prim *p, uint32_t index, const float *pos, const sk_geom_ray *rays, size_t n,
                       const double *groups, double *scratch, sk_ray_hit *hits) {
  if (p->ntris == 0 || !sk_ray_wants(rays, n, index))
    return;
  void (*one)(const double *, size_t, uint32_t, uint32_t, const sk_geom_ray *, sk_ray_hit *) = ray_base;
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx2"))
    one = ray_avx2;
#endif
  const size_t per = SK_RAY_GROUP / LANES; /* blocks a group */
  for (uint32_t k0 = 0; k0 < p->ntris; k0 += CHUNK) {
    const uint32_t k1 = p->ntris - k0 < CHUNK ? p->ntris : k0 + CHUNK;
    setup(p, pos, k0, k1, scratch);
    const size_t blocks = ((size_t)(k1 - k0) + LANES - 1) / LANES;
    for (size_t r = 0; r < n; r++) {
      if (rays[r].prim >= 0 && rays[r].prim != (int64_t)index)
        continue;
      if (groups == NULL) {
        one(scratch, blocks, k0, index, &rays[r], &hits[r]);
        continue;
      }
      /* runs of consecutive groups the ray meets, in triangle order (the
       * ties' lowest index): the same hits as every block */
      const double *g0 = groups + 6 * (size_t)(k0 / SK_RAY_GROUP), *o = rays[r].origin, *d = rays[r].dir;
      const double inv[3] = {1 / d[0], 1 / d[1], 1 / d[2]};
      for (size_t b = 0; b < blocks;) {
        if (!meets(o, d, inv, g0 + 6 * (b / per))) {
          b += per;
          continue;
        }
        size_t e = b + per;
        while (e < blocks && meets(o, d, inv, g0 + 6 * (e / per)))
          e += per;
        e = e < blocks ? e : blocks;
        one(scratch + b * LANES * 9, e - b, k0 + (uint32_t)(b * LANES), index, &rays[r], &hits[r]);
        b = e;
      }
    }
  }
}

void sk_ray_prim_fast(const sk_geom_prim *p, uint32_t index, const float *pos, const sk_geom_ray *rays, size_t n,
                      double *scratch, sk_ray_hit *hits) {
  sk_ray_prim_boxed(p, index, pos, rays, n, NULL, scratch, hits);
}
