#include "sk_ray.h"

#include <math.h>

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
