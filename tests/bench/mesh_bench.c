/* make bench-mesh: per frame, the conservative bounds (sk_skin_bounds_conservative,
 * per-joint boxes) against exact skinning with its box (sk_skin_run), on the
 * same asset, clip and frames, in one run: alternating A/B rounds, the fastest
 * round of each, the ratio with PASS/MISS against the 20x. Also the
 * exact job's vertices per second on one core (positions only, as
 * getPositionData), and with --baseline FILE (the JSON lines of
 * tests/bench/mesh_babylon.mjs --json, run by make bench-mesh just before)
 * its ratio to Babylon's getPositionData(true, true) and to three.js's
 * applyBoneTransform loop on the same asset, PASS/MISS against 30x. The
 * skin matrices of every frame are computed first and not timed.
 *
 * Per asset also the vertex kernel (sk_skinv's best path) against the
 * scalar job and against itself without the primitives' runs (every
 * vertex masked, as before sk_geom_prim.order); then a generated mesh of
 * 200k vertices (mesh_bench_large.inc):
 * 1 vs 2 threads and the kernel against its bounds; then `skinner frames
 * --output vertices` on a 110k-vertex primitive, --threads 2 vs 1, wall
 * and CPU time (mesh_bench_frames.inc).
 *
 * Per asset also ray hits (sk_ray) on the mid frame of clip 0: 1024 rays
 * aimed inside random triangles, the fast path (triangles set up once,
 * four a step in double lanes) against the brute force (one triangle, one
 * ray at a time) in alternating rounds, the same hits checked bit for bit;
 * rays/s of each and the ratio, PASS/MISS against 2x; and the fast path
 * with the joint boxes' early-out (sk_ray_prim_boxed) against it.
 *
 *   tests/bench/mesh_bench [--baseline FILE] [ASSET.glb ...]   (default: mannequiny, Fox, CesiumMan)
 *   tests/bench/mesh_bench --shot N   (the skinner frames shot once on N threads, for callgrind) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sk_anim.h"
#include "sk_answer.h"
#include "sk_gltf_mesh.h"
#include "sk_pose.h"
#include "sk_ray.h"
#include "sk_shot.h"
#include "sk_skin.h"
#include "sk_skinv.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *d = malloc(*len);
  if (d != NULL && fread(d, 1, *len, f) != *len) {
    free(d);
    d = NULL;
  }
  fclose(f);
  return d;
}

static volatile float g_sink;

/* One pass over every frame: mode 0 exact positions, 1 exact positions and
 * box, 2 the conservative box, 3 exact positions on the scalar path, 4
 * exact positions without the primitives' runs (every vertex masked). */
static double pass(const sk_geom *g, const float *finals, size_t frames, size_t slots, float *pos, int mode) {
  const bool conservative = mode == 2;
  const double t0 = now();
  for (size_t f = 0; f < frames; f++)
    for (uint32_t i = 0; i < g->nprims; i++) {
      sk_geom_prim masked = g->prims[i];
      masked.order = NULL;
      masked.runs = NULL;
      const sk_geom_prim *p = mode == 4 ? &masked : &g->prims[i];
      float min[3], max[3];
      if (conservative) {
        sk_skin_bounds_conservative(p, finals + f * slots * 16, slots, p->influence, pos, min, max);
      } else {
        sk_skin_job job = {.prim = p, .final = finals + f * slots * 16, .slots = slots, .pos = pos, .bounds = mode == 1};
        sk_skinv_run(&job, mode == 3 ? "scalar" : NULL, NULL, 1);
        min[0] = mode == 1 ? job.min[0] : pos[0];
        max[0] = mode == 1 ? job.max[0] : pos[1];
      }
      g_sink += min[0] + max[0];
    }
  return now() - t0;
}

/* The baseline's vertices/s of `asset` (its file name) from JSON lines; 0s when absent. */
static void baseline(const char *file, const char *path, double *babylon, double *three) {
  *babylon = *three = 0;
  FILE *f = file != NULL ? fopen(file, "r") : NULL;
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  char line[1024], want[300];
  snprintf(want, sizeof want, "\"asset\":\"%s\"", base);
  while (f != NULL && fgets(line, sizeof line, f) != NULL) {
    if (strstr(line, want) == NULL)
      continue;
    const char *b = strstr(line, "\"babylon_vertices_per_s\":"), *t = strstr(line, "\"three_vertices_per_s\":");
    if (b != NULL)
      *babylon = atof(strchr(b, ':') + 1);
    if (t != NULL)
      *three = atof(strchr(t, ':') + 1);
  }
  if (f != NULL)
    fclose(f);
}

enum { BENCH_RAYS = 1024 };

/* Rays aimed inside random triangles of the posed primitives pos[]. */
static void bench_rays_make(const sk_geom *g, float *const *pos, sk_geom_ray *rays) {
  uint64_t x = 0x2545f4914f6cdd1dull;
  for (int r = 0; r < BENCH_RAYS; r++) {
    double u[5];
    for (int k = 0; k < 5; k++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      u[k] = (double)(x >> 11) / 9007199254740992.0;
    }
    uint32_t pi = (uint32_t)(u[0] * g->nprims);
    while (g->prims[pi].ntris == 0)
      pi = (pi + 1) % g->nprims;
    const sk_geom_prim *p = &g->prims[pi];
    const uint32_t k = (uint32_t)(u[1] * p->ntris);
    sk_geom_ray *y = &rays[r];
    *y = (sk_geom_ray){.max_distance = 1e300, .prim = -1};
    for (int c = 0; c < 3; c++) {
      double t = 0;
      for (int v = 0; v < 3; v++)
        t += pos[pi][3 * (p->tris ? p->tris[3 * k + v] : 3 * k + v) + c] / 3;
      y->origin[c] = t + 500 * (u[2 + c] - 0.5);
      y->dir[c] = t - y->origin[c];
    }
  }
}

/* The early-out's scratch (sk_ray_group_boxes) and the pose it boxes. */
typedef struct ray_boxes {
  const float *final;
  double *jbox, *gbox;
} ray_boxes;

/* One pass of every ray over every primitive: the brute force (mode 0),
 * the fast path (1), or the fast path with the early-out (sk_ray.h: the
 * joint boxes' hull, then the posed groups' boxes), its boxes built in
 * the pass (2), as sk_meshout_write_hits runs it. */
static double bench_rays_pass(const sk_geom *g, float *const *pos, const sk_geom_ray *rays, double *scratch,
                              sk_ray_hit *hits, int mode, const ray_boxes *rb) {
  const double t0 = now();
  sk_ray_clear(hits, BENCH_RAYS);
  for (uint32_t i = 0; i < g->nprims; i++) {
    const sk_geom_prim *p = &g->prims[i];
    if (mode == 2) {
      if (sk_skin_joint_boxes(p, rb->final, p->influence, rb->jbox) && !sk_ray_meets_any(p, i, rb->jbox, rays, BENCH_RAYS))
        continue;
      sk_ray_group_boxes(p, pos[i], rb->gbox);
      sk_ray_prim_boxed(p, i, pos[i], rays, BENCH_RAYS, rb->gbox, scratch, hits);
    } else if (mode == 1) {
      sk_ray_prim_fast(p, i, pos[i], rays, BENCH_RAYS, scratch, hits);
    } else {
      sk_ray_prim(p, i, pos[i], rays, BENCH_RAYS, hits);
    }
  }
  return now() - t0;
}

static bool same_hits(const sk_ray_hit *a, const sk_ray_hit *b) {
  for (int r = 0; r < BENCH_RAYS; r++)
    if (a[r].prim != b[r].prim || a[r].tri != b[r].tri || memcmp(&a[r].t, &b[r].t, 8) ||
        memcmp(&a[r].u, &b[r].u, 8) || memcmp(&a[r].v, &b[r].v, 8) || memcmp(&a[r].distance, &b[r].distance, 8))
      return false;
  return true;
}

static int bench_rays(const char *path, const sk_geom *g, const float *final, size_t slots, int *misses) {
  float **pos = calloc(g->nprims, sizeof *pos);
  size_t most = 1;
  uint64_t tris = 0;
  for (uint32_t i = 0; i < g->nprims; i++) {
    const sk_geom_prim *p = &g->prims[i];
    pos[i] = malloc(((size_t)p->count * 3 + 1) * sizeof(float));
    sk_skin_job job = {.prim = p, .final = final, .slots = slots, .pos = pos[i]};
    sk_skin_run(&job);
    most = sk_ray_scratch_doubles(p) > most ? sk_ray_scratch_doubles(p) : most;
    tris += p->ntris;
  }
  sk_geom_ray *rays = malloc(BENCH_RAYS * sizeof *rays);
  sk_ray_hit *slow = malloc(BENCH_RAYS * sizeof *slow), *fast = malloc(BENCH_RAYS * sizeof *fast),
             *boxed = malloc(BENCH_RAYS * sizeof *boxed);
  double *scratch = malloc(most * sizeof *scratch);
  size_t nb = 1, ng = 1;
  for (uint32_t i = 0; i < g->nprims; i++) {
    nb = g->prims[i].nboxes > nb ? g->prims[i].nboxes : nb;
    ng = sk_ray_groups(&g->prims[i]) > ng ? sk_ray_groups(&g->prims[i]) : ng;
  }
  ray_boxes rb = {.final = final, .jbox = malloc(nb * 6 * sizeof(double)), .gbox = malloc(ng * 6 * sizeof(double))};
  bench_rays_make(g, pos, rays);
  double best_slow = 1e30, best_fast = 1e30, best_boxed = 1e30;
  for (int round = 0; round < 7; round++) {
    const double a = bench_rays_pass(g, pos, rays, scratch, slow, 0, &rb);
    const double b = bench_rays_pass(g, pos, rays, scratch, fast, 1, &rb);
    const double c = bench_rays_pass(g, pos, rays, scratch, boxed, 2, &rb);
    best_slow = a < best_slow ? a : best_slow;
    best_fast = b < best_fast ? b : best_fast;
    best_boxed = c < best_boxed ? c : best_boxed;
  }
  int bad = !same_hits(slow, fast) || !same_hits(slow, boxed), hit = 0;
  for (int r = 0; r < BENCH_RAYS; r++)
    hit += slow[r].prim >= 0;
  const double ratio = best_slow / best_fast;
  printf("%-28s ray hits, %llu triangles, %d rays (%d hit): fast %.3f M rays/s, brute force %.3f M rays/s: %.2fx  %s "
         "(>= 2x)%s\n",
         path, (unsigned long long)tris, BENCH_RAYS, hit, BENCH_RAYS / best_fast * 1e-6, BENCH_RAYS / best_slow * 1e-6,
         ratio, ratio >= 2 ? "PASS" : "MISS", bad ? "  DIFFERENT HITS" : "");
  *misses += ratio < 2;
  printf("%-28s early-out (joint boxes' hull, groups of %u triangles' boxes, built in the pass): %.3f M rays/s, "
         "%.2fx the fast path%s\n",
         "", SK_RAY_GROUP, BENCH_RAYS / best_boxed * 1e-6, best_fast / best_boxed, bad ? "  DIFFERENT HITS" : "");
  free(rb.jbox);
  free(rb.gbox);
  free(boxed);
  for (uint32_t i = 0; i < g->nprims; i++)
    free(pos[i]);
  free(pos);
  free(rays);
  free(slow);
  free(fast);
  free(scratch);
  return bad;
}

static int bench(const char *path, const char *base_file, int *misses) {
  size_t len, est;
  unsigned char *d = slurp(path, &len);
  sk_skeleton *s;
  sk_anim *an;
  sk_gltf_extra x;
  sk_error err = {0};
  if (d == NULL || sk_gltf_import_extra(d, len, NULL, 0, 0, &est, false, &s, &an, &x, &err) != 0 || x.geom == NULL ||
      an == NULL || an->clip_count == 0) {
    fprintf(stderr, "%s: cannot load (%s)\n", path, err.text);
    free(d);
    return 1;
  }
  free(d);
  sk_skeleton_prepare(s);
  const sk_geom *g = x.geom;
  const size_t slots = s->count + 1, frames = 1 + (size_t)(sk_anim_clip_duration(an, 0) * 30);
  float *finals = malloc(frames * slots * 16 * sizeof *finals);
  double *trs = malloc(s->count * SK_ANIM_TRS * sizeof *trs);
  sk_override *ovr = malloc(s->count * sizeof *ovr);
  sk_pose_buffers buf;
  sk_pose_buffers_init(&buf, s->count);
  for (size_t f = 0; f < frames; f++) {
    sk_anim_sample(an, 0, f / 30.0, false, trs);
    sk_anim_to_overrides(an, trs, ovr);
    sk_pose pose = {.overrides = ovr, .count = s->count, .output = SK_OUT_FINAL};
    sk_pose_evaluate(s, &pose, &buf);
    memcpy(finals + f * slots * 16, buf.final, slots * 16 * sizeof(float));
  }
  size_t most = 1;
  for (uint32_t i = 0; i < g->nprims; i++)
    most = g->prims[i].count > most ? g->prims[i].count : most;
  float *pos = malloc(most * 3 * sizeof *pos);
  double best_pos = 1e30, best_exact = 1e30, best_cons = 1e30, best_scalar = 1e30, best_masked = 1e30;
  for (int round = 0; round < 7; round++) { /* alternating: the noise hits all five */
    double a = pass(g, finals, frames, slots, pos, 0), b = pass(g, finals, frames, slots, pos, 1),
           c = pass(g, finals, frames, slots, pos, 2), e = pass(g, finals, frames, slots, pos, 3),
           h = pass(g, finals, frames, slots, pos, 4);
    best_pos = a < best_pos ? a : best_pos;
    best_masked = h < best_masked ? h : best_masked;
    best_scalar = e < best_scalar ? e : best_scalar;
    best_exact = b < best_exact ? b : best_exact;
    best_cons = c < best_cons ? c : best_cons;
  }
  const double ratio = best_exact / best_cons, rate = g->vertices * frames / best_pos;
  printf("%-28s %6llu vertices %3zu frames: exact %9.1f us/frame (positions %6.1f M vertices/s), conservative %7.2f "
         "us/frame, %6.1fx cheaper  %s (>= 20x)\n",
         path, (unsigned long long)g->vertices, frames, best_exact / frames * 1e6, rate * 1e-6,
         best_cons / frames * 1e6, ratio, ratio >= 20 ? "PASS" : "MISS");
  *misses += ratio < 20;
  printf("%-28s vertex kernel (%s) %.1f M vertices/s, scalar job %.1f M vertices/s: %.2fx; without runs (masked) "
         "%.1f M vertices/s: runs %.2fx\n",
         "", sk_skinv_path(), rate * 1e-6, g->vertices * frames / best_scalar * 1e-6, best_scalar / best_pos,
         g->vertices * frames / best_masked * 1e-6, best_masked / best_pos);
  double bab, thr;
  baseline(base_file, path, &bab, &thr);
  if (bab > 0 && thr > 0) {
    printf("%-28s vertex job %.1fx Babylon getPositionData(true, true) (%.1f M/s)  %s (>= 30x); "
           "%.1fx three.js applyBoneTransform (%.1f M/s)  %s (>= 30x)\n",
           "", rate / bab, bab * 1e-6, rate / bab >= 30 ? "PASS" : "MISS", rate / thr, thr * 1e-6,
           rate / thr >= 30 ? "PASS" : "MISS");
    *misses += (rate / bab < 30) + (rate / thr < 30);
  } else if (base_file != NULL) {
    printf("%-28s no baseline for this asset in %s\n", "", base_file);
  }
  const int bad = bench_rays(path, g, finals + frames / 2 * slots * 16, slots, misses);
  free(pos);
  free(finals);
  free(trs);
  free(ovr);
  sk_pose_buffers_close(&buf);
  sk_gltf_extra_clear(&x);
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
  return bad;
}

#include "mesh_bench_large.inc"
#include "mesh_bench_frames.inc"

int main(int argc, char **argv) {
  const char *defaults[] = {"tests/data/mannequiny-0.3.0.glb", "tests/data/Fox.glb", "tests/data/CesiumMan.glb"};
  int misses = 0, bad = 0, first = 1;
  const char *base_file = NULL;
  if (argc == 3 && strcmp(argv[1], "--shot") == 0)
    return bench_frames(&misses, (unsigned)atoi(argv[2])) ? 2 : 0;
  if (argc > 2 && strcmp(argv[1], "--baseline") == 0) {
    base_file = argv[2];
    first = 3;
  }
  if (argc > first)
    for (int i = first; i < argc; i++)
      bad |= bench(argv[i], base_file, &misses);
  else
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
      bad |= bench(defaults[i], base_file, &misses);
  bad |= bench_large(&misses);
  bad |= bench_frames(&misses, 0);
  printf("bench-mesh: %d MISS\n", misses);
  return bad ? 2 : 0; /* a MISS is a finding, not a failed run */
}
