/* End to end: the "hits" output of a pose's "rays" through the real
 * skinnerd on 127.0.0.1 and a port it picks. On Fox, CesiumMan,
 * skin_mirror and skin_morph, at several clip times, each answer's hits are
 * checked against a brute-force reference written here in doubles in
 * another form (the plane's t, then barycentrics from the Gram matrix),
 * on that same answer's "vertices" and the file's indices; every pose form
 * (/pose, /poses, "times", "from"/"to"/"fps", with "ops") answers the same hits; the
 * binary words carry the JSON numbers; the work limit refuses at /rays.
 * Bit-identity with Babylon's positions is tests/oracle/conformance_rays.sh. */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>

#include <jansson.h>

#include "sk_fixture.h"
#include "sk_geom.h"
#include "sk_gltf.h"
#include "sk_httpc.h"
#include "sk_testutil.h"

static sk_daemon D;

static void start_with(const char *max_work) {
  const char *const args[] = {"--max-answer-mb", "512", "--max-body", "8388608", "--max-work", max_work, NULL};
  sk_fixture_start(&D, args);
}

static void setup(void) { start_with("16777216"); }

static void teardown(void) {
  if (D.pid > 0)
    sk_fixture_stop(&D);
}

static char *post(const char *path, const char *body, const char *accept, int status, size_t *n) {
  char h[256];
  snprintf(h, sizeof h, "Content-Type: application/json\r\n%s%s%s", accept ? "Accept: " : "", accept ? accept : "",
           accept ? "\r\n" : "");
  sk_httpc_resp r;
  sk_fixture_request(&D, "POST", path, h, body, strlen(body), &r);
  ck_assert_msg(r.status == status, "POST %s: %d, want %d: %.400s", path, r.status, status, r.body);
  char *t = malloc(r.len + 1);
  memcpy(t, r.body, r.len);
  t[r.len] = 0;
  if (n != NULL)
    *n = r.len;
  sk_httpc_free(&r);
  return t;
}

static json_t *post_json(const char *path, const char *body, int status) {
  char *t = post(path, body, NULL, status, NULL);
  json_t *j = json_loads(t, 0, NULL);
  ck_assert_msg(j != NULL, "not JSON: %.200s", t);
  free(t);
  return j;
}

/* The file's primitives as the daemon keeps them (their indices). */
static sk_geom *geom_of(const char *asset) {
  size_t len;
  unsigned char *d = sk_test_read_asset(asset, &len);
  sk_gltf *g;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_gltf_parse(d, len, &g, &err), 0);
  sk_geom *geom = NULL;
  ck_assert_int_eq(sk_geom_build(g, 0, &geom, &err), 0);
  sk_gltf_destroy(g);
  free(d);
  ck_assert_ptr_nonnull(geom);
  return geom;
}

/* ---- the reference -------------------------------------------------------------------- */

typedef struct {
  double o[3], d[3], max;
  long prim; /* -1: all */
} ray;

typedef struct {
  long prim;
  long tri;
  double dist, u, v;
  bool edge;      /* within 1e-7 of an edge: a float32 neighbour may win instead */
  double second;  /* the next closest distance over other triangles */
} ref_hit;

static double dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void tri_of(const sk_geom_prim *p, const float *pos, uint32_t k, double v[3][3]) {
  for (int c = 0; c < 3; c++) {
    const size_t i = p->tris ? p->tris[3 * (size_t)k + c] : 3 * (size_t)k + c;
    for (int a = 0; a < 3; a++)
      v[c][a] = pos[3 * i + a];
  }
}

/* Every triangle of every primitive (posed positions pos[i]), both faces:
 * the plane's t, the point's barycentrics from the Gram matrix. */
static ref_hit reference(const sk_geom *geom, float *const *pos, const ray *r) {
  ref_hit best = {.prim = -1, .dist = INFINITY, .second = INFINITY};
  const double len = sqrt(dot(r->d, r->d));
  for (uint32_t pi = 0; pi < geom->nprims; pi++) {
    const sk_geom_prim *p = &geom->prims[pi];
    if (r->prim >= 0 && r->prim != (long)pi)
      continue;
    for (uint32_t k = 0; k < p->ntris; k++) {
      double v[3][3], e1[3], e2[3], n[3], ao[3];
      tri_of(p, pos[pi], k, v);
      for (int a = 0; a < 3; a++) {
        e1[a] = v[1][a] - v[0][a];
        e2[a] = v[2][a] - v[0][a];
        ao[a] = v[0][a] - r->o[a];
      }
      n[0] = e1[1] * e2[2] - e1[2] * e2[1];
      n[1] = e1[2] * e2[0] - e1[0] * e2[2];
      n[2] = e1[0] * e2[1] - e1[1] * e2[0];
      const double den = dot(n, r->d);
      if (fabs(den) <= 1e-9 * sqrt(dot(n, n)) * len)
        continue; /* (near) parallel */
      const double t = dot(n, ao) / den;
      if (!(t > 0))
        continue;
      double q[3];
      for (int a = 0; a < 3; a++)
        q[a] = r->o[a] + t * r->d[a] - v[0][a];
      const double d00 = dot(e1, e1), d01 = dot(e1, e2), d11 = dot(e2, e2), d20 = dot(q, e1), d21 = dot(q, e2);
      const double g = d00 * d11 - d01 * d01;
      const double u = (d11 * d20 - d01 * d21) / g, w = (d00 * d21 - d01 * d20) / g;
      const double tol = 1e-7;
      if (u < -tol || w < -tol || u + w > 1 + tol)
        continue;
      const bool edge = u < tol || w < tol || u + w > 1 - tol;
      const double dist = t * len;
      if (dist > r->max * (1 + 1e-12))
        continue;
      if (dist < best.dist) {
        best.second = best.dist;
        best = (ref_hit){.prim = pi, .tri = k, .dist = dist, .u = u, .v = w, .edge = edge, .second = best.second};
      } else if (dist < best.second) {
        best.second = dist;
      }
    }
  }
  return best;
}

/* ---- rays on a posed mesh ------------------------------------------------------------- */

static uint64_t g_seed = 88172645463325252ull;
static double rnd(void) { /* xorshift64, [0, 1) */
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 7;
  g_seed ^= g_seed << 17;
  return (double)(g_seed >> 11) / 9007199254740992.0;
}

#define NRAYS 40

/* Rays aimed at points inside random triangles from far outside, at
 * edges and vertices, misses aimed away, short ones (maxDistance) and
 * one-primitive ones. */
static void make_rays(const sk_geom *geom, float *const *pos, ray *rays) {
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (uint32_t pi = 0; pi < geom->nprims; pi++)
    for (size_t i = 0; i < (size_t)geom->prims[pi].count * 3; i++) {
      lo[i % 3] = fmin(lo[i % 3], pos[pi][i]);
      hi[i % 3] = fmax(hi[i % 3], pos[pi][i]);
    }
  double c[3], diag = 0;
  for (int a = 0; a < 3; a++) {
    c[a] = (lo[a] + hi[a]) / 2;
    diag += (hi[a] - lo[a]) * (hi[a] - lo[a]);
  }
  diag = sqrt(diag);
  for (int r = 0; r < NRAYS; r++) {
    double u[3], s = 0;
    for (int a = 0; a < 3; a++) {
      u[a] = rnd() * 2 - 1;
      s += u[a] * u[a];
    }
    s = sqrt(s) + 1e-9;
    uint32_t pi = (uint32_t)(rnd() * geom->nprims);
    while (geom->prims[pi].ntris == 0)
      pi = (pi + 1) % geom->nprims;
    const sk_geom_prim *p = &geom->prims[pi];
    double v[3][3], target[3];
    tri_of(p, pos[pi], (uint32_t)(rnd() * p->ntris), v);
    double w1 = 0.1 + 0.5 * rnd(), w2 = 0.1 + 0.3 * rnd();
    if (r % 8 == 3) /* an edge's middle, a vertex: neighbours tie */
      w1 = w2 = 0.5;
    if (r % 8 == 4)
      w1 = w2 = 0;
    ray *y = &rays[r];
    y->max = INFINITY;
    y->prim = -1;
    for (int a = 0; a < 3; a++) {
      target[a] = (1 - w1 - w2) * v[0][a] + w1 * v[1][a] + w2 * v[2][a];
      y->o[a] = target[a] + 1.5 * diag * u[a] / s;
    }
    const double scale = 0.25 + 2 * rnd();
    for (int a = 0; a < 3; a++)
      y->d[a] = (r % 8 == 5 ? y->o[a] - c[a] : target[a] - y->o[a]) * scale; /* every 8th away: a miss */
    if (r % 8 == 6)
      y->max = 1.5 * diag * (0.2 + rnd()) * scale / scale; /* maybe short of the target */
    if (r % 8 == 7)
      y->prim = (long)pi;
  }
}

static void append_rays(char *b, size_t cap, const sk_geom *geom, const ray *rays) {
  size_t at = strlen(b);
  at += (size_t)snprintf(b + at, cap - at, "\"rays\": [");
  for (int r = 0; r < NRAYS; r++) {
    const ray *y = &rays[r];
    at += (size_t)snprintf(b + at, cap - at, "%s{\"origin\": [%.17g, %.17g, %.17g], \"direction\": [%.17g, %.17g, %.17g]",
                           r ? ", " : "", y->o[0], y->o[1], y->o[2], y->d[0], y->d[1], y->d[2]);
    if (isfinite(y->max))
      at += (size_t)snprintf(b + at, cap - at, ", \"maxDistance\": %.17g", y->max);
    if (y->prim >= 0)
      at += (size_t)snprintf(b + at, cap - at, ", \"primitive\": \"/meshes/%u/primitives/%u\"",
                             geom->prims[y->prim].mesh, geom->prims[y->prim].prim);
    at += (size_t)snprintf(b + at, cap - at, "}");
  }
  snprintf(b + at, cap - at, "]");
}

/* The answer's hits against the reference on its own vertices; counts
 * the hits compared exactly and the ambiguous ones. */
static void check_hits(const sk_geom *geom, const json_t *ans, const ray *rays, const char *what, size_t *exact,
                       size_t *grazing, size_t *hit) {
  const json_t *verts = json_object_get(ans, "vertices"), *hits = json_object_get(ans, "hits");
  ck_assert_uint_eq(json_array_size(verts), geom->nprims);
  ck_assert_uint_eq(json_array_size(hits), NRAYS);
  float *pos[64];
  ck_assert_uint_le(geom->nprims, 64);
  for (uint32_t pi = 0; pi < geom->nprims; pi++) {
    const json_t *a = json_object_get(json_array_get(verts, pi), "positions");
    ck_assert_uint_eq(json_array_size(a), (size_t)geom->prims[pi].count * 3);
    pos[pi] = malloc(json_array_size(a) * sizeof(float) + 1);
    for (size_t i = 0; i < json_array_size(a); i++)
      pos[pi][i] = (float)json_number_value(json_array_get(a, i));
  }
  for (int r = 0; r < NRAYS; r++) {
    const ref_hit want = reference(geom, pos, &rays[r]);
    const json_t *h = json_array_get(hits, r);
    const bool tie = want.prim >= 0 && want.second <= want.dist * (1 + 1e-7);
    if (json_is_null(h)) {
      ck_assert_msg(want.prim < 0 || want.edge || tie || want.dist > rays[r].max * (1 - 1e-9),
                    "%s ray %d: no hit, the reference hits triangle %ld at %.17g", what, r, want.tri, want.dist);
      (*grazing) += want.prim >= 0;
      continue;
    }
    (*hit)++;
    const double dist = json_number_value(json_object_get(h, "distance"));
    const long tri = (long)json_integer_value(json_object_get(h, "triangle"));
    const json_t *bc = json_object_get(h, "barycentric");
    const double u = json_number_value(json_array_get(bc, 0)), v = json_number_value(json_array_get(bc, 1));
    ck_assert_msg(want.prim >= 0, "%s ray %d: a hit (triangle %ld at %.17g), the reference none", what, r, tri, dist);
    ck_assert(u >= 0 && v >= 0 && u + v <= 1);
    /* never nearer than the (tolerant) reference's nearest; through an
     * edge or vertex the float32 triangles may leave a gap it falls in */
    ck_assert_msg(dist >= want.dist * (1 - 1e-6), "%s ray %d: distance %.17g, reference %.17g", what, r, dist,
                  want.dist);
    ck_assert_msg(want.edge || fabs(dist - want.dist) <= 1e-6 * want.dist, "%s ray %d: distance %.17g, reference %.17g",
                  what, r, dist, want.dist);
    if (want.edge || tie) {
      (*grazing)++;
      continue;
    }
    char name[64];
    snprintf(name, sizeof name, "/meshes/%u/primitives/%u", geom->prims[want.prim].mesh, geom->prims[want.prim].prim);
    ck_assert_str_eq(json_string_value(json_object_get(h, "primitive")), name);
    ck_assert_msg(tri == want.tri, "%s ray %d: triangle %ld, reference %ld", what, r, tri, want.tri);
    ck_assert_msg(fabs(dist - want.dist) <= 1e-9 * want.dist && fabs(u - want.u) < 1e-6 && fabs(v - want.v) < 1e-6,
                  "%s ray %d: %.17g (%.17g, %.17g), reference %.17g (%.17g, %.17g)", what, r, dist, u, v, want.dist,
                  want.u, want.v);
    (*exact)++;
  }
  for (uint32_t pi = 0; pi < geom->nprims; pi++)
    free(pos[pi]);
}

/* Rays aimed on the pose's own vertices: first the vertices, then the same
 * pose with rays. */
static void rays_for_pose(const sk_geom *geom, const char *path, const char *pose, ray *rays) {
  char body[512];
  snprintf(body, sizeof body, "{%s, \"output\": [\"vertices\"]}", pose);
  json_t *j = post_json(path, body, 200);
  const json_t *verts = json_object_get(j, "vertices");
  float *pos[64];
  for (uint32_t pi = 0; pi < geom->nprims; pi++) {
    const json_t *a = json_object_get(json_array_get(verts, pi), "positions");
    pos[pi] = malloc(json_array_size(a) * sizeof(float) + 1);
    for (size_t i = 0; i < json_array_size(a); i++)
      pos[pi][i] = (float)json_number_value(json_array_get(a, i));
  }
  make_rays(geom, pos, rays);
  for (uint32_t pi = 0; pi < geom->nprims; pi++)
    free(pos[pi]);
  json_decref(j);
}

START_TEST(hits_match_a_brute_force_reference_on_every_asset_and_pose_form) {
  const char *assets[] = {"Fox.glb", "CesiumMan.glb", "skin_mirror.glb", "skin_morph.glb"};
  const double times[] = {0, 0.37, 0.81};
  size_t exact = 0, grazing = 0, hit = 0, poses = 0;
  const size_t cap = 1 << 16;
  char *body = malloc(cap), *many = malloc(4 * cap);
  for (size_t a = 0; a < sizeof assets / sizeof assets[0]; a++) {
    char id[8], path[64], batch[64];
    snprintf(id, sizeof id, "r%zu", a);
    snprintf(path, sizeof path, "/v1/skeletons/%s/pose", id);
    snprintf(batch, sizeof batch, "/v1/skeletons/%s/poses", id);
    sk_fixture_put_asset(&D, id, assets[a]);
    sk_geom *geom = geom_of(assets[a]);
    for (size_t t = 0; t < sizeof times / sizeof times[0]; t++) {
      char pose[96];
      snprintf(pose, sizeof pose, "\"animation\": 0, \"time\": %g", times[t]);
      ray rays[NRAYS];
      rays_for_pose(geom, path, pose, rays);
      snprintf(body, cap, "{%s, \"output\": [\"vertices\", \"hits\"], ", pose);
      append_rays(body, cap, geom, rays);
      strcat(body, "}");
      json_t *one = post_json(path, body, 200);
      char what[96];
      snprintf(what, sizeof what, "%s t=%g", assets[a], times[t]);
      check_hits(geom, one, rays, what, &exact, &grazing, &hit);
      poses++;
      /* the same pose as a /poses item, in a "times" range and in a
       * "from"/"to"/"fps" range of one frame: the same object */
      snprintf(many, 4 * cap, "{\"poses\": [{\"animation\": 0, \"time\": 0.5, \"output\": [\"bounds\"]}, %s]}", body);
      json_t *b = post_json(batch, many, 200);
      ck_assert(json_equal(one, json_array_get(json_object_get(b, "results"), 1)));
      const char *rest = body + strlen(pose) + 1; /* ", \"output\": ..." */
      snprintf(many, 4 * cap, "{\"animation\": 0, \"times\": [0.5, %g]%s", times[t], rest);
      json_t *c = post_json(path, many, 200);
      ck_assert(json_equal(one, json_array_get(json_object_get(c, "results"), 1)));
      snprintf(many, 4 * cap, "{\"animation\": 0, \"from\": %g, \"to\": %g, \"fps\": 10%s", times[t], times[t], rest);
      json_t *f = post_json(path, many, 200);
      ck_assert_uint_eq(json_array_size(json_object_get(f, "results")), 1);
      ck_assert(json_equal(one, json_array_get(json_object_get(f, "results"), 0)));
      /* with (empty) ops: the Bone API's scratch-copy path, the same hits */
      snprintf(many, 4 * cap, "{%s, \"ops\": []%s", pose, rest);
      json_t *o = post_json(path, many, 200);
      ck_assert(json_equal(json_object_get(one, "hits"), json_object_get(o, "hits")));
      json_decref(o);
      json_decref(one);
      json_decref(b);
      json_decref(c);
      json_decref(f);
    }
    sk_geom_unref(geom);
  }
  free(body);
  free(many);
  /* most hits are compared triangle for triangle; grazing ones by distance */
  ck_assert_uint_eq(poses, 12);
  printf("rays: %zu poses x %d rays, %zu hits: %zu compared exactly, %zu grazing or tied\n", poses, NRAYS, hit, exact,
         grazing);
  ck_assert_msg(exact >= hit / 2 && grazing >= poses && hit >= poses * NRAYS / 2, "%zu exact, %zu grazing of %zu hits", exact, grazing,
                hit);
}
END_TEST

/* The binary answer: after the matrices, 5 words a ray, the JSON's hits. */
START_TEST(binary_hits_carry_the_json_numbers) {
  sk_fixture_put_asset(&D, "fox", "Fox.glb");
  const char *body = "{\"animation\": \"Walk\", \"time\": 0.3, \"output\": [\"bounds\", \"hits\"], \"rays\": ["
                     "{\"origin\": [0, 40, 200], \"direction\": [0, 0, -1]}, {\"origin\": [0, 40, 200], \"direction\": [0, 0, 1]},"
                     "{\"origin\": [0, 40, 200], \"direction\": [0, 0, -3], \"primitive\": \"/meshes/0/primitives/0\"}]}";
  json_t *j = post_json("/v1/skeletons/fox/pose", body, 200);
  size_t n;
  char *bin = post("/v1/skeletons/fox/pose", body, "application/octet-stream", 200, &n);
  const size_t mats = 25 * 16 * sizeof(float);
  ck_assert_uint_eq(n, mats + 6 * sizeof(float) + 3 * SK_GEOM_HIT_WORDS * 4);
  const unsigned char *h = (const unsigned char *)bin + mats + 6 * sizeof(float);
  const json_t *hits = json_object_get(j, "hits");
  for (size_t r = 0; r < 3; r++) {
    uint32_t w[2];
    float f[3];
    memcpy(w, h + 20 * r, 8);
    memcpy(f, h + 20 * r + 8, 12);
    const json_t *x = json_array_get(hits, r);
    if (json_is_null(x)) {
      ck_assert(w[0] == UINT32_MAX && w[1] == UINT32_MAX && f[0] == 0 && f[1] == 0 && f[2] == 0);
      continue;
    }
    ck_assert_uint_eq(w[0], 0);
    ck_assert_uint_eq(w[1], (uint32_t)json_integer_value(json_object_get(x, "triangle")));
    ck_assert(f[0] == (float)json_number_value(json_object_get(x, "distance")));
    ck_assert(f[1] == (float)json_number_value(json_array_get(json_object_get(x, "barycentric"), 0)));
    ck_assert(f[2] == (float)json_number_value(json_array_get(json_object_get(x, "barycentric"), 1)));
  }
  ck_assert(json_is_null(json_array_get(hits, 1)));
  /* the same line at 3x the direction: the same triangle and distance */
  ck_assert(json_equal(json_object_get(json_array_get(hits, 0), "triangle"),
                       json_object_get(json_array_get(hits, 2), "triangle")));
  ck_assert(fabs(json_number_value(json_object_get(json_array_get(hits, 0), "distance")) -
                 json_number_value(json_object_get(json_array_get(hits, 2), "distance"))) < 1e-9);
  free(bin);
  json_decref(j);
}
END_TEST

static void expect_problem(const char *body, int status, const char *pointer, const char *part) {
  json_t *j = post_json("/v1/skeletons/fox/pose", body, status);
  ck_assert_str_eq(json_string_value(json_object_get(j, "pointer")), pointer);
  const char *detail = json_string_value(json_object_get(j, "detail"));
  ck_assert_msg(detail != NULL && strstr(detail, part) != NULL, "detail %s lacks %s", detail, part);
  json_decref(j);
}

START_TEST(refusals_name_the_field_or_the_limit) {
  sk_fixture_put_asset(&D, "fox", "Fox.glb");
  expect_problem("{\"output\": [\"hits\"]}", 422, "/rays", "needs \"rays\"");
  expect_problem("{\"rays\": []}", 422, "/rays", "go with \"hits\"");
  expect_problem("{\"output\": [\"hits\"], \"rays\": [{\"origin\": [0, 0, 0], \"direction\": [0, 0, 0]}]}", 422,
                 "/rays/0/direction", "zero");
  expect_problem("{\"output\": [\"hits\", \"hits\"], \"rays\": []}", 422, "/output/1", "twice");
  expect_problem("{\"output\": [\"hits\"], \"rays\": [{\"origin\": [0, 0, 0], \"direction\": [1, 0, 0], "
                 "\"primitive\": \"/meshes/3/primitives/0\"}]}",
                 422, "/rays/0/primitive", "none of");
  /* a skeleton without a mesh */
  sk_fixture_put_json(&D, "plain", "{\"bones\": [{\"name\": \"a\", \"parent\": null, \"matrix\": [1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}]}");
  json_t *j = post_json("/v1/skeletons/plain/pose", "{\"output\": [\"hits\"], \"rays\": []}", 422);
  ck_assert_str_eq(json_string_value(json_object_get(j, "pointer")), "/output/0");
  json_decref(j);
  /* an empty list answers an empty list */
  j = post_json("/v1/skeletons/fox/pose", "{\"output\": [\"hits\"], \"rays\": []}", 200);
  ck_assert_uint_eq(json_array_size(json_object_get(j, "hits")), 0);
  json_decref(j);
}
END_TEST

/* rays x triangles x poses against --max-work: 1000 rays x 576 triangles x
 * 30 frames is over a limit of 1M, one frame of them is not. */
START_TEST(the_work_limit_counts_rays_times_triangles_times_poses) {
  sk_fixture_expect_healthy(&D);
  sk_fixture_stop(&D);
  start_with("1000000");
  sk_fixture_put_asset(&D, "fox", "Fox.glb");
  json_t *rays = json_array();
  for (int i = 0; i < 1000; i++)
    json_array_append_new(rays, json_pack("{s:[iii],s:[iii]}", "origin", 0, 40, 200, "direction", 0, 0, -1));
  json_t *pose = json_pack("{s:s,s:f,s:[s],s:o}", "animation", "Walk", "time", 0.3, "output", "hits", "rays", rays);
  char *one = json_dumps(pose, 0);
  json_object_del(pose, "time");
  json_object_set_new(pose, "from", json_real(0));
  json_object_set_new(pose, "to", json_real(1));
  json_object_set_new(pose, "fps", json_integer(30));
  char *range = json_dumps(pose, 0);
  json_t *ok = post_json("/v1/skeletons/fox/pose", one, 200);
  ck_assert_uint_eq(json_array_size(json_object_get(ok, "hits")), 1000);
  json_decref(ok);
  json_t *j = post_json("/v1/skeletons/fox/pose", range, 413);
  ck_assert_str_eq(json_string_value(json_object_get(j, "pointer")), "/rays");
  ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(j, "detail")), "--max-work"));
  json_decref(j);
  free(one);
  free(range);
  json_decref(pose);
}
END_TEST

int main(void) {
  Suite *s = suite_create("rays");
  TCase *tc = tcase_create("daemon");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, hits_match_a_brute_force_reference_on_every_asset_and_pose_form);
  tcase_add_test(tc, binary_hits_carry_the_json_numbers);
  tcase_add_test(tc, refusals_name_the_field_or_the_limit);
  tcase_add_test(tc, the_work_limit_counts_rays_times_triangles_times_poses);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
