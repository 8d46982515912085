/* sk_ray: Möller–Trumbore on hand-built triangles whose answers are exact
 * (so the numbers are written out), the closest-hit and tie rules, the
 * early-out by joint boxes (the same hits on every frame of every clip of
 * every asset), the indices sk_geom keeps for it (and their refusals),
 * and the "rays" parser's refusals. Whole assets through the daemon against a
 * brute-force reference: tests/check_rays.c; against Babylon:
 * tests/oracle/conformance_rays.sh. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sk_anim.h"
#include "sk_answer.h"
#include "sk_geom.h"
#include "sk_gltf_mesh.h"
#include "sk_pose.h"
#include "sk_skin.h"
#include "sk_gltf.h"
#include "sk_ray.h"
#include "sk_testutil.h"

static const float k_a[3] = {0, 0, 0}, k_b[3] = {4, 0, 0}, k_c[3] = {0, 4, 0};

START_TEST(a_ray_through_a_triangle_gives_t_and_barycentrics) {
  const double o[3] = {1, 2, 5}, d[3] = {0, 0, -2};
  double t, u, v;
  ck_assert(sk_ray_intersect(o, d, k_a, k_b, k_c, &t, &u, &v));
  /* the point (1, 2, 0) = 0.25 A + 0.25 B + 0.5 C; t in units of d */
  ck_assert(t == 2.5 && u == 0.25 && v == 0.5);
  /* the back face hits too */
  const double o2[3] = {1, 2, -5}, d2[3] = {0, 0, 1};
  ck_assert(sk_ray_intersect(o2, d2, k_a, k_b, k_c, &t, &u, &v));
  ck_assert(t == 5 && u == 0.25 && v == 0.5);
}
END_TEST

START_TEST(misses_behind_beside_and_parallel) {
  double t, u, v;
  const double behind[3] = {1, 2, -5}, down[3] = {0, 0, -1};
  ck_assert(!sk_ray_intersect(behind, down, k_a, k_b, k_c, &t, &u, &v));
  const double beside[3] = {3, 3, 5};
  ck_assert(!sk_ray_intersect(beside, down, k_a, k_b, k_c, &t, &u, &v));
  const double level[3] = {1, 1, 0}, along[3] = {1, 0, 0};
  ck_assert(!sk_ray_intersect(level, along, k_a, k_b, k_c, &t, &u, &v));
  /* on the edge and at a vertex: u + v = 1 and u = 0 are inside */
  const double edge[3] = {2, 2, 1}, corner[3] = {0, 0, 1};
  ck_assert(sk_ray_intersect(edge, down, k_a, k_b, k_c, &t, &u, &v) && u + v == 1);
  ck_assert(sk_ray_intersect(corner, down, k_a, k_b, k_c, &t, &u, &v) && u == 0 && v == 0);
}
END_TEST

/* Two layers of triangles: the nearer wins; an equal distance keeps the
 * lower triangle, then the lower primitive; maxDistance and "primitive"
 * filter. */
START_TEST(the_closest_hit_wins_and_ties_keep_the_lowest_index) {
  float pos[18] = {0, 0, 1, 4, 0, 1, 0, 4, 1, /* triangle 0 at z = 1 */
                   0, 0, 3, 4, 0, 3, 0, 4, 3}; /* triangle 1 at z = 3 */
  uint32_t tris[9] = {3, 4, 5, 0, 1, 2, 0, 1, 2}; /* far, near, near again */
  sk_geom_prim p = {.count = 6, .ntris = 3, .tris = tris};
  sk_geom_ray rays[4] = {
      {.origin = {1, 1, 10}, .dir = {0, 0, -1}, .max_distance = INFINITY, .prim = -1},
      {.origin = {1, 1, -10}, .dir = {0, 0, 2}, .max_distance = INFINITY, .prim = -1},
      {.origin = {1, 1, -10}, .dir = {0, 0, 1}, .max_distance = 10.5, .prim = -1},
      {.origin = {1, 1, 10}, .dir = {0, 0, -1}, .max_distance = INFINITY, .prim = 1},
  };
  sk_ray_hit h[4];
  sk_ray_clear(h, 4);
  sk_ray_prim(&p, 0, pos, rays, 4, h);
  sk_ray_prim(&p, 1, pos, rays, 4, h); /* the same triangles again as primitive 1 */
  ck_assert_int_eq(h[0].prim, 0);
  ck_assert_uint_eq(h[0].tri, 0); /* z = 3 first from above */
  ck_assert(h[0].distance == 7 && h[0].t == 7);
  ck_assert_int_eq(h[1].prim, 0);
  ck_assert_uint_eq(h[1].tri, 1); /* from below z = 1: triangles 1 and 2 tie, 1 wins */
  ck_assert(h[1].t == 5.5 && h[1].distance == 11);
  ck_assert_int_eq(h[2].prim, -1); /* 11 > 10.5 */
  ck_assert_int_eq(h[3].prim, 1);
  ck_assert_uint_eq(h[3].tri, 0);
  ck_assert(sk_ray_wants(rays + 3, 1, 1) && !sk_ray_wants(rays + 3, 1, 0));
}
END_TEST

START_TEST(a_non_indexed_primitive_takes_consecutive_triples) {
  float pos[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0};
  sk_geom_prim p = {.count = 3, .ntris = 1};
  sk_geom_ray r = {.origin = {1, 2, 5}, .dir = {0, 0, -1}, .max_distance = INFINITY, .prim = -1};
  sk_ray_hit h;
  sk_ray_clear(&h, 1);
  sk_ray_prim(&p, 0, pos, &r, 1, &h);
  ck_assert_int_eq(h.prim, 0);
  ck_assert(h.u == 0.25 && h.v == 0.5 && h.distance == 5);
}
END_TEST

/* The fast path gives the brute force's hits bit for bit: Fox's and
 * CesiumMan's triangles as loaded, rays aimed inside triangles, at their
 * vertices and edges (where neighbours tie), and random ones. */
static uint64_t g_seed = 0x9e3779b97f4a7c15ull;
static double rnd(void) {
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 7;
  g_seed ^= g_seed << 17;
  return (double)(g_seed >> 11) / 9007199254740992.0;
}

START_TEST(the_fast_path_gives_the_brute_force_hits_bit_for_bit) {
  const char *assets[] = {"Fox.glb", "CesiumMan.glb", "skin_mirror.glb"};
  size_t compared = 0, hit = 0;
  for (size_t a = 0; a < 3; a++) {
    size_t len;
    unsigned char *d = sk_test_read_asset(assets[a], &len);
    sk_gltf *g;
    sk_error err;
    sk_error_clear(&err);
    ck_assert_int_eq(sk_gltf_parse(d, len, &g, &err), 0);
    sk_geom *geom;
    ck_assert_int_eq(sk_geom_build(g, 0, &geom, &err), 0);
    sk_gltf_destroy(g);
    free(d);
    enum { N = 600 };
    sk_geom_ray *rays = calloc(N, sizeof *rays);
    for (int r = 0; r < N; r++) {
      const uint32_t pi = (uint32_t)(rnd() * geom->nprims);
      const sk_geom_prim *p = &geom->prims[pi];
      const uint32_t k = (uint32_t)(rnd() * p->ntris);
      const float *v[3];
      for (int c = 0; c < 3; c++)
        v[c] = p->pos + 3 * (p->tris ? p->tris[3 * k + c] : 3 * k + c);
      /* inside, on a vertex, on an edge's middle, anywhere */
      double w1 = 0.1 + 0.5 * rnd(), w2 = 0.1 + 0.3 * rnd();
      if (r % 4 == 1)
        w1 = w2 = 0;
      if (r % 4 == 2)
        w1 = w2 = 0.5;
      sk_geom_ray *y = &rays[r];
      for (int c = 0; c < 3; c++) {
        const double target = (1 - w1 - w2) * v[0][c] + w1 * v[1][c] + w2 * v[2][c];
        y->origin[c] = target + 300 * (rnd() * 2 - 1);
        y->dir[c] = r % 4 == 3 ? rnd() * 2 - 1 : target - y->origin[c];
      }
      y->max_distance = r % 7 == 0 ? 100 + 300 * rnd() : INFINITY;
      y->prim = r % 11 == 0 ? (int64_t)pi : -1;
    }
    sk_ray_hit *slow = malloc(N * sizeof *slow), *fast = malloc(N * sizeof *fast);
    sk_ray_clear(slow, N);
    sk_ray_clear(fast, N);
    for (uint32_t i = 0; i < geom->nprims; i++) {
      double *scratch = malloc(sk_ray_scratch_doubles(&geom->prims[i]) * sizeof *scratch);
      sk_ray_prim(&geom->prims[i], i, geom->prims[i].pos, rays, N, slow);
      sk_ray_prim_fast(&geom->prims[i], i, geom->prims[i].pos, rays, N, scratch, fast);
      free(scratch);
    }
    for (int r = 0; r < N; r++) {
      ck_assert_msg(slow[r].prim == fast[r].prim && (slow[r].prim < 0 || slow[r].tri == fast[r].tri), "%s ray %d",
                    assets[a], r);
      ck_assert(memcmp(&slow[r].t, &fast[r].t, sizeof(double)) == 0 && memcmp(&slow[r].u, &fast[r].u, 8) == 0 &&
                memcmp(&slow[r].v, &fast[r].v, 8) == 0 && memcmp(&slow[r].distance, &fast[r].distance, 8) == 0);
      hit += slow[r].prim >= 0;
      compared++;
    }
    free(slow);
    free(fast);
    free(rays);
    sk_geom_unref(geom);
  }
  ck_assert_uint_eq(compared, 1800);
  ck_assert_uint_gt(hit, 900);
}
END_TEST

/* ---- the early-out: joint boxes over groups of triangles ------------------------------------ */

static const char *k_box_assets[] = {"CesiumMan.glb",      "Fox.glb",        "RecursiveSkeletons.glb",
                                     "RiggedFigure.glb",   "RiggedSimple.glb", "RobotExpressive.glb",
                                     "SimpleSkin-multi-target.gltf", "SimpleSkin.gltf", "mannequiny-0.3.0.glb",
                                     "skin_8inf.glb",      "skin_mirror.glb", "skin_morph.glb"};

/* Rays at the posed primitives: through random triangles, their vertices
 * and edges' middles (grazing), random directions, some kept to one
 * primitive or a maximum distance. */
static void posed_rays(const sk_geom *g, float *const *pos, sk_geom_ray *rays, int n) {
  for (int r = 0; r < n; r++) {
    uint32_t pi = (uint32_t)(rnd() * g->nprims);
    for (uint32_t k = 0; k < g->nprims && g->prims[pi].ntris == 0; k++)
      pi = (pi + 1) % g->nprims;
    const sk_geom_prim *p = &g->prims[pi];
    const uint32_t k = (uint32_t)(rnd() * p->ntris);
    const float *v[3];
    for (int c = 0; c < 3; c++)
      v[c] = pos[pi] + 3 * (p->tris ? p->tris[3 * k + c] : 3 * k + c);
    double w1 = 0.1 + 0.5 * rnd(), w2 = 0.1 + 0.3 * rnd();
    if (r % 4 == 1)
      w1 = w2 = 0;
    if (r % 4 == 2)
      w1 = w2 = 0.5;
    sk_geom_ray *y = &rays[r];
    double scale = 0;
    for (int c = 0; c < 3; c++)
      scale = fmax(scale, fabs(v[0][c]));
    for (int c = 0; c < 3; c++) {
      const double target = (1 - w1 - w2) * v[0][c] + w1 * v[1][c] + w2 * v[2][c];
      y->origin[c] = target + (scale + 1) * 3 * (rnd() * 2 - 1);
      y->dir[c] = r % 4 == 3 ? rnd() * 2 - 1 : target - y->origin[c];
    }
    if (r % 9 == 5) /* axis-aligned */
      y->dir[0] = y->dir[1] = 0;
    y->max_distance = r % 7 == 0 ? (scale + 1) * 4 * rnd() : INFINITY;
    y->prim = r % 11 == 0 ? (int64_t)pi : -1;
  }
}

START_TEST(the_early_out_gives_the_same_hits_on_every_frame_of_every_clip) {
  size_t len, est;
  unsigned char *d = sk_test_read_asset(k_box_assets[_i], &len);
  sk_skeleton *s;
  sk_anim *an;
  sk_gltf_extra x;
  sk_error err = {0};
  ck_assert_msg(sk_gltf_import_extra(d, len, NULL, 0, 0, &est, false, &s, &an, &x, &err) == 0, "%s", err.text);
  free(d);
  sk_skeleton_prepare(s);
  const sk_geom *g = x.geom;
  ck_assert_ptr_nonnull(g);
  const size_t slots = s->count + 1;
  double *trs = malloc((s->count + 1) * SK_ANIM_TRS * sizeof *trs), infl[SK_GEOM_MAX_TARGETS + 1];
  sk_override *ovr = malloc((s->count + 1) * sizeof *ovr);
  sk_pose_buffers buf;
  sk_pose_buffers_init(&buf, s->count);
  enum { N = 40 };
  sk_geom_ray rays[N];
  sk_ray_hit ref[N], got[N];
  float *pos[64] = {0};
  double *scratch[64], *jbox[64], *gbox[64];
  ck_assert_uint_le(g->nprims, 64);
  for (uint32_t i = 0; i < g->nprims; i++) {
    const sk_geom_prim *p = &g->prims[i];
    pos[i] = malloc(((size_t)p->count * 3 + 1) * sizeof *pos[i]);
    scratch[i] = malloc(sk_ray_scratch_doubles(p) * sizeof *scratch[i]);
    jbox[i] = malloc(((size_t)p->nboxes + 1) * 6 * sizeof *jbox[i]);
    gbox[i] = malloc((sk_ray_groups(p) + 1) * 6 * sizeof *gbox[i]);
  }
  const size_t clips = an != NULL ? an->clip_count : 0;
  size_t frames = 0, hits = 0, boxed = 0, skipped = 0;
  for (size_t c = 0; c <= clips; c++) {
    const size_t nf = c < clips ? 1 + (size_t)(sk_anim_clip_duration(an, c) * 30) : 1;
    for (size_t f = 0; f < nf; f++, frames++) {
      sk_pose pose = {.output = SK_OUT_FINAL}; /* past the clips: the rest pose */
      const double t = f / 30.0;
      if (c < clips) {
        sk_anim_sample(an, c, t, false, trs);
        sk_anim_to_overrides(an, trs, ovr);
        pose.overrides = ovr;
        pose.count = s->count;
      }
      sk_pose_evaluate(s, &pose, &buf);
      for (uint32_t i = 0; i < g->nprims; i++) {
        const sk_geom_prim *p = &g->prims[i];
        if (c < clips)
          sk_skin_influences(g, p->mesh, p->ntargets, (long)c, sk_anim__clip_frame(&an->clips[c], t, false),
                             p->influence, infl);
        sk_skin_job job = {.prim = p, .final = buf.final, .slots = slots, .influence = c < clips ? infl : NULL,
                           .pos = pos[i]};
        ck_assert(sk_skin_validate(&job));
        sk_skin_run(&job);
      }
      posed_rays(g, pos, rays, N);
      if (f % 5 == 4) /* turned away: whole primitives skipped, their skinning too */
        for (int r = 0; r < N; r++)
          for (int k = 0; k < 3; k++)
            rays[r].dir[k] = -rays[r].dir[k];
      sk_ray_clear(ref, N);
      sk_ray_clear(got, N);
      for (uint32_t i = 0; i < g->nprims; i++) {
        const sk_geom_prim *p = &g->prims[i];
        sk_ray_prim_fast(p, i, pos[i], rays, N, scratch[i], ref); /* the brute force's hits (test above) */
        if (sk_skin_joint_boxes(p, buf.final, c < clips ? infl : p->influence, jbox[i])) {
          boxed++;
          if (!sk_ray_meets_any(p, i, jbox[i], rays, N)) {
            skipped++;
            continue;
          }
        }
        sk_ray_group_boxes(p, pos[i], gbox[i]);
        sk_ray_prim_boxed(p, i, pos[i], rays, N, gbox[i], scratch[i], got);
      }
      for (int r = 0; r < N; r++) {
        ck_assert_msg(ref[r].prim == got[r].prim && (ref[r].prim < 0 || ref[r].tri == got[r].tri),
                      "%s clip %zu frame %zu ray %d: prim %lld tri %u, early-out prim %lld tri %u", k_box_assets[_i],
                      c, f, r, (long long)ref[r].prim, ref[r].tri, (long long)got[r].prim, got[r].tri);
        ck_assert(memcmp(&ref[r].t, &got[r].t, 8) == 0 && memcmp(&ref[r].u, &got[r].u, 8) == 0 &&
                  memcmp(&ref[r].v, &got[r].v, 8) == 0 && memcmp(&ref[r].distance, &got[r].distance, 8) == 0);
        hits += ref[r].prim >= 0;
      }
    }
  }
  ck_assert_uint_gt(hits, frames * N / 5);
  ck_assert_uint_gt(boxed, 0); /* every asset here is skinned by affine matrices */
  ck_assert_uint_gt(skipped, 0);
  for (uint32_t i = 0; i < g->nprims; i++) {
    free(pos[i]);
    free(scratch[i]);
    free(jbox[i]);
    free(gbox[i]);
  }
  free(trs);
  free(ovr);
  sk_pose_buffers_close(&buf);
  sk_gltf_extra_clear(&x);
  sk_skeleton_destroy(s);
  if (an != NULL)
    sk_anim_destroy(an);
}
END_TEST

/* ---- indices at upload ------------------------------------------------------------------ */

/* A skinned quad (4 vertices, joint 0) whose primitive has `prim_extra`
 * (e.g. ",\"indices\":1") and whose accessor 1 is `idx_acc`, over six
 * uint16 indices `idx` (new text; free). */
static char *quad(const char *prim_extra, const char *idx_acc, const uint16_t idx[6]) {
  /* positions, joints (u8 x 4), weights (float x 4), indices (u16 x 6) */
  unsigned char buf[48 + 16 + 64 + 12];
  const float pos[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
  memcpy(buf, pos, 48);
  memset(buf + 48, 0, 16);
  for (int v = 0; v < 4; v++) {
    const float w[4] = {1, 0, 0, 0};
    memcpy(buf + 64 + 16 * v, w, 16);
  }
  memcpy(buf + 128, idx, 12);
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char data[256], *q = data;
  for (size_t i = 0; i < sizeof buf; i += 3) {
    unsigned v = buf[i] << 16 | (i + 1 < sizeof buf ? buf[i + 1] << 8 : 0) | (i + 2 < sizeof buf ? buf[i + 2] : 0);
    *q++ = t[v >> 18 & 63];
    *q++ = t[v >> 12 & 63];
    *q++ = i + 1 < sizeof buf ? t[v >> 6 & 63] : '=';
    *q++ = i + 2 < sizeof buf ? t[v & 63] : '=';
  }
  *q = 0;
  char *out = malloc(4096);
  snprintf(out, 4096,
           "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0,1]}],"
           "\"nodes\":[{\"name\":\"j0\"},{\"mesh\":0,\"skin\":0}],\"skins\":[{\"joints\":[0]}],"
           "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0,\"JOINTS_0\":2,\"WEIGHTS_0\":3}%s}]}],"
           "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":4,\"type\":\"VEC3\"},%s,"
           "{\"bufferView\":1,\"componentType\":5121,\"count\":4,\"type\":\"VEC4\"},"
           "{\"bufferView\":2,\"componentType\":5126,\"count\":4,\"type\":\"VEC4\"}],"
           "\"bufferViews\":[{\"buffer\":0,\"byteLength\":48},{\"buffer\":0,\"byteOffset\":48,\"byteLength\":16},"
           "{\"buffer\":0,\"byteOffset\":64,\"byteLength\":64},{\"buffer\":0,\"byteOffset\":128,\"byteLength\":12}],"
           "\"buffers\":[{\"byteLength\":140,\"uri\":\"data:application/octet-stream;base64,%s\"}]}",
           prim_extra, idx_acc, data);
  return out;
}

static const char *k_u16 = "{\"bufferView\":3,\"componentType\":5123,\"count\":6,\"type\":\"SCALAR\"}";
static const uint16_t k_idx[6] = {0, 1, 2, 0, 2, 3};

static int quad_geom(const char *prim_extra, const char *idx_acc, const uint16_t idx[6], sk_geom **geom,
                     sk_error *err) {
  char *text = quad(prim_extra, idx_acc, idx);
  sk_gltf *g;
  sk_error_clear(err);
  int rc = sk_gltf_parse(text, strlen(text), &g, err);
  ck_assert_msg(rc == 0, "%s at %s", err->text, err->pointer);
  *geom = NULL;
  rc = sk_geom_build(g, 0, geom, err);
  sk_gltf_destroy(g);
  free(text);
  return rc;
}

START_TEST(indices_are_kept_and_modes_other_than_triangles_have_none) {
  sk_geom *geom;
  sk_error err;
  ck_assert_int_eq(quad_geom(",\"indices\":1", k_u16, k_idx, &geom, &err), 0);
  ck_assert_uint_eq(geom->prims[0].ntris, 2);
  ck_assert_uint_eq(geom->prims[0].tris[5], 3);
  ck_assert_uint_eq(geom->prims[0].indices_accessor, 1);
  sk_geom_unref(geom);
  ck_assert_int_eq(quad_geom(",\"indices\":1,\"mode\":4", k_u16, k_idx, &geom, &err), 0);
  ck_assert_uint_eq(geom->prims[0].ntris, 2);
  sk_geom_unref(geom);
  ck_assert_int_eq(quad_geom("", k_u16, k_idx, &geom, &err), 0); /* non-indexed: 4 / 3 = 1 triangle */
  ck_assert_uint_eq(geom->prims[0].ntris, 1);
  ck_assert_ptr_null(geom->prims[0].tris);
  sk_geom_unref(geom);
  ck_assert_int_eq(quad_geom(",\"indices\":1,\"mode\":5", k_u16, k_idx, &geom, &err), 0); /* a strip */
  ck_assert_uint_eq(geom->prims[0].ntris, 0);
  sk_geom_unref(geom);
  /* 5 indices: the trailing two make no triangle */
  ck_assert_int_eq(quad_geom(",\"indices\":1", "{\"bufferView\":3,\"componentType\":5123,\"count\":5,\"type\":\"SCALAR\"}",
                             k_idx, &geom, &err),
                   0);
  ck_assert_uint_eq(geom->prims[0].ntris, 1);
  sk_geom_unref(geom);
}
END_TEST

START_TEST(bad_indices_are_refused_at_their_accessor) {
  sk_geom *geom;
  sk_error err;
  const uint16_t far[6] = {0, 1, 2, 0, 2, 4}; /* 4 vertices: 4 is out of range */
  ck_assert_int_eq(quad_geom(",\"indices\":1", k_u16, far, &geom, &err), SK_EFORMAT);
  ck_assert_str_eq(err.pointer, "/accessors/1");
  ck_assert_str_eq(err.text, "index 5 is 4, not below the primitive's 4 vertices");
  ck_assert_ptr_null(geom);
  ck_assert_int_eq(quad_geom(",\"indices\":1", "{\"bufferView\":3,\"componentType\":5123,\"count\":3,\"type\":\"VEC2\"}",
                             k_idx, &geom, &err),
                   SK_EFORMAT);
  ck_assert_str_eq(err.pointer, "/accessors/1/type");
  ck_assert_int_eq(quad_geom(",\"indices\":1", "{\"bufferView\":3,\"componentType\":5122,\"count\":6,\"type\":\"SCALAR\"}",
                             k_idx, &geom, &err),
                   SK_EFORMAT);
  ck_assert_str_eq(err.pointer, "/accessors/1/componentType");
  ck_assert_int_eq(quad_geom(",\"indices\":\"x\"", k_u16, k_idx, &geom, &err), SK_EFORMAT);
  ck_assert_str_eq(err.pointer, "/meshes/0/primitives/0/indices");
}
END_TEST

/* ---- "rays" ------------------------------------------------------------------------------- */

static void expect_rays_error(const sk_geom *geom, const char *text, int code, const char *pointer) {
  json_t *j = json_loads(text, 0, NULL);
  ck_assert_ptr_nonnull(j);
  sk_geom_ray *rays = (sk_geom_ray *)1;
  size_t n = 9;
  uint64_t tests;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_geom_parse_rays(geom, j, "/rays", &rays, &n, &tests, &err), code);
  ck_assert_str_eq(err.pointer, pointer);
  ck_assert_ptr_null(rays);
  ck_assert_uint_eq(n, 0);
  json_decref(j);
}

START_TEST(rays_are_parsed_and_priced_and_refused_at_the_field) {
  sk_geom *geom;
  sk_error err;
  ck_assert_int_eq(quad_geom(",\"indices\":1", k_u16, k_idx, &geom, &err), 0);
  json_t *j = json_loads("[{\"origin\": [0, 0, 1], \"direction\": [0, 0, -1], \"maxDistance\": 2},"
                         " {\"origin\": [0, 0, 1], \"direction\": [1, 0, 0], \"primitive\": \"/meshes/0/primitives/0\"}]",
                         0, NULL);
  sk_geom_ray *rays;
  size_t n;
  uint64_t tests;
  ck_assert_int_eq(sk_geom_parse_rays(geom, j, "/rays", &rays, &n, &tests, &err), 0);
  ck_assert_uint_eq(n, 2);
  ck_assert_uint_eq(tests, 4);
  ck_assert(rays[0].max_distance == 2 && rays[0].prim == -1 && rays[0].dir[2] == -1);
  ck_assert(isinf(rays[1].max_distance) && rays[1].prim == 0);
  free(rays);
  json_decref(j);
  expect_rays_error(geom, "{}", SK_ETYPE, "/rays");
  expect_rays_error(geom, "[1]", SK_ETYPE, "/rays/0");
  expect_rays_error(geom, "[{\"direction\": [0, 0, 1]}]", SK_EMISSING, "/rays/0/origin");
  expect_rays_error(geom, "[{\"origin\": [0, 0, 0]}]", SK_EMISSING, "/rays/0/direction");
  expect_rays_error(geom, "[{\"origin\": [0, 0, 0], \"direction\": [0, 0, 1]}, {\"origin\": [0, 0, 0], \"direction\": [0, 0, 0]}]",
                    SK_ERANGE, "/rays/1/direction");
  expect_rays_error(geom, "[{\"origin\": [0, 0, 0], \"direction\": [0, 1e39, 0]}]", SK_ENOTFINITE, "/rays/0/direction/1");
  expect_rays_error(geom, "[{\"origin\": [0, 0], \"direction\": [0, 0, 1]}]", SK_ELENGTH, "/rays/0/origin");
  expect_rays_error(geom, "[{\"origin\": [0, 0, 0], \"direction\": [0, 0, 1], \"maxDistance\": -1}]", SK_ERANGE,
                    "/rays/0/maxDistance");
  expect_rays_error(geom, "[{\"origin\": [0, 0, 0], \"direction\": [0, 0, 1], \"maxDistance\": \"far\"}]", SK_ETYPE,
                    "/rays/0/maxDistance");
  expect_rays_error(geom, "[{\"origin\": [0, 0, 0], \"direction\": [0, 0, 1], \"primitive\": \"/meshes/0/primitives/1\"}]",
                    SK_EUNKNOWN, "/rays/0/primitive");
  expect_rays_error(geom, "[{\"origin\": [0, 0, 0], \"direction\": [0, 0, 1], \"primitive\": \"/meshes/00/primitives/0\"}]",
                    SK_EUNKNOWN, "/rays/0/primitive");
  expect_rays_error(geom, "[{\"origin\": [0, 0, 0], \"direction\": [0, 0, 1], \"dir\": 1}]", SK_EUNKNOWN, "/rays/0/dir");
  json_t *many = json_array();
  for (int i = 0; i <= SK_GEOM_MAX_RAYS; i++)
    json_array_append_new(many, json_pack("{s:[iii],s:[iii]}", "origin", 0, 0, 0, "direction", 0, 0, 1));
  char *text = json_dumps(many, 0);
  expect_rays_error(geom, text, SK_ETOOBIG, "/rays");
  free(text);
  json_decref(many);
  sk_geom_unref(geom);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_ray");
  TCase *tc = tcase_create("ray");
  tcase_add_test(tc, a_ray_through_a_triangle_gives_t_and_barycentrics);
  tcase_add_test(tc, misses_behind_beside_and_parallel);
  tcase_add_test(tc, the_closest_hit_wins_and_ties_keep_the_lowest_index);
  tcase_add_test(tc, a_non_indexed_primitive_takes_consecutive_triples);
  tcase_add_test(tc, the_fast_path_gives_the_brute_force_hits_bit_for_bit);
  suite_add_tcase(s, tc);
  TCase *eo = tcase_create("early_out");
  tcase_set_timeout(eo, 300);
  tcase_add_loop_test(eo, the_early_out_gives_the_same_hits_on_every_frame_of_every_clip, 0,
                      (int)(sizeof k_box_assets / sizeof k_box_assets[0]));
  suite_add_tcase(s, eo);
  TCase *up = tcase_create("upload");
  tcase_add_test(up, indices_are_kept_and_modes_other_than_triangles_have_none);
  tcase_add_test(up, bad_indices_are_refused_at_their_accessor);
  tcase_add_test(up, rays_are_parsed_and_priced_and_refused_at_the_field);
  suite_add_tcase(s, up);
  return sk_test_run(s);
}
