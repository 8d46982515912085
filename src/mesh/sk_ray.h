/* sk_ray: ray hits on a pose's skinned triangles (the "hits" output), for
 * hit registration.
 *
 * The triangles are exactly the "vertices" output's: the float32 posed
 * positions of each primitive (sk_skin) with its indices (sk_geom_prim's
 * tris), in the mesh's own space; rays are in that space too. Per ray the
 * closest hit over every triangle of every primitive (or of the ray's one
 * primitive), both faces, by Möller–Trumbore in doubles on the float32
 * vertices, written as tests/oracle/ray_reference.mjs writes it, step by
 * step (no fused multiply-add: the build's -ffp-contract=off):
 *   e1 = B - A, e2 = C - A, p = d x e2, det = e1 . p; |det| < 1e-12: miss;
 *   inv = 1 / det, s = o - A, u = (s . p) inv, outside [0, 1]: miss;
 *   q = s x e1, v = (d . q) inv, v < 0 or u + v > 1: miss;
 *   t = (e2 . q) inv, a hit when t > 0;
 * dot products summed left to right. The point is (1 - u - v) A + u B +
 * v C = o + t d; its distance t |d| (|d| = sqrt(dx dx + dy dy + dz dz))
 * must be at most the ray's maxDistance. The smallest t wins; ties keep
 * the lowest primitive, then the lowest triangle (a strict < in that
 * order). A hit whose t, u, v or distance is not finite is no hit. */
#ifndef SK_RAY_H
#define SK_RAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_geom.h"

typedef struct sk_ray_hit {
  int64_t prim; /* index into the geometry's primitives; -1: no hit */
  uint32_t tri;
  double t, distance, u, v;
} sk_ray_hit;

/* Möller–Trumbore as above on triangle (a, b, c): true and t, u, v for a
 * hit with t > 0. */
bool sk_ray_intersect(const double o[3], const double d[3], const float *a, const float *b, const float *c,
                      double *t, double *u, double *v);

/* Every hits[i] to no hit. */
void sk_ray_clear(sk_ray_hit *hits, size_t n);

/* Tests rays[0..n) against primitive `index` of the geometry (`p`, posed
 * positions `pos`, p->count x 3 floats), keeping in hits[] each ray's
 * closest so far: call once per primitive in order, after sk_ray_clear.
 * One triangle, one ray at a time: the brute force the fast path is
 * checked and measured against. */
void sk_ray_prim(const sk_geom_prim *p, uint32_t index, const float *pos, const sk_geom_ray *rays, size_t n,
                 sk_ray_hit *hits);

/* The same hits, bit for bit, faster: the pose's triangles are set up once
 * (A and the edges B - A, C - A in doubles, as each ray would compute
 * them), 4096 at a time, in `scratch` (sk_ray_scratch_doubles(p)
 * doubles, at most 288 KiB), then each ray
 * runs over them four triangles a step in double lanes (avx2 or the
 * baseline's, picked at run time), every lane the scalar steps; the
 * closest of a step is then taken lane by lane in triangle order, with
 * the scalar path's strict < . */
void sk_ray_prim_fast(const sk_geom_prim *p, uint32_t index, const float *pos, const sk_geom_ray *rays, size_t n,
                      double *scratch, sk_ray_hit *hits);
/* Doubles of the scratch sk_ray_prim_fast takes for `p`. */
size_t sk_ray_scratch_doubles(const sk_geom_prim *p);

/* The early-out, in two steps. A primitive no ray comes near is not
 * skinned at all: its vertices lie in the hull of its joints' posed
 * boxes (sk_skin_joint_boxes: `jbox`, the conservative bounds' boxes), so
 * a ray missing that hull (padded by 2^-10 of its largest coordinate,
 * far past the float32 roundings of the exact path and Möller–Trumbore's
 * double ones) hits none of its triangles. Then, on the posed primitive,
 * each ray skips the groups of SK_RAY_GROUP consecutive triangles (whole
 * lane blocks, a divisor of the set-up chunk) whose box, that of their
 * posed vertices padded alike, it misses: tighter than the joint boxes'
 * hull over the same group (callgrind: CesiumMan 0.86x of the fast path's
 * instructions against 1.04x, mannequiny 0.21x against 0.40x). Both keep
 * the hits bit for bit (tests/check_sk_ray.c: every frame of every clip
 * of the test assets). */
#define SK_RAY_GROUP 64u
size_t sk_ray_groups(const sk_geom_prim *p);

/* Whether any of rays[0..n) testing primitive `index` meets the padded
 * hull of its posed joint boxes `jbox` (p->nboxes x 6; true also where
 * the hull is not far inside float32's range, so that a skipped
 * primitive's skinning could never have overflowed). */
bool sk_ray_meets_any(const sk_geom_prim *p, uint32_t index, const double *jbox, const sk_geom_ray *rays,
                      size_t n);

/* The groups' padded boxes from the posed positions `pos` (p->count x
 * 3): sk_ray_groups(p) x 6 doubles into dest (min xyz, max xyz; a group
 * with a non-finite coordinate is infinite: never skipped). */
void sk_ray_group_boxes(const sk_geom_prim *p, const float *pos, double *dest);

/* sk_ray_prim_fast skipping, ray by ray, the groups whose box (`groups`:
 * sk_ray_group_boxes; NULL: none skipped) the ray misses: the same hits,
 * bit for bit. */
void sk_ray_prim_boxed(const sk_geom_prim *p, uint32_t index, const float *pos, const sk_geom_ray *rays, size_t n,
                       const double *groups, double *scratch, sk_ray_hit *hits);

/* Whether any of rays[0..n) tests primitive `index`. */
bool sk_ray_wants(const sk_geom_ray *rays, size_t n, uint32_t index);

#endif
