#include "sk_meshout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_answer.h"
#include "sk_numfmt.h"
#include "sk_ray.h"
#include "sk_skin.h"
#include "sk_skinv.h"

const sk_mesh_hook sk_mesh_hook_json = {
    .write_json = sk_meshout_write_json, .write_f32 = sk_meshout_write_f32, .write_hits = sk_meshout_write_hits};

static bool all_finite(const float *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i]))
      return false;
  return true;
}

/* The job on the threads a primitive of its size takes (sk_mesh_hook):
 * the caller's and the spare ones `threads` lends it while it runs. */
static void run_job(sk_skin_job *job, sk_threads *threads) {
  sk_skinv_run(job, NULL, threads, job->prim->count >= SK_MESH_THREADS_MIN ? SK_SKINV_MAX_THREADS : 1);
}

static int append_str(sk_strbuf *out, const char *s) { return sk_strbuf_append(out, s, strlen(s)) ? SK_ENOMEM : 0; }

static int append_prim(sk_strbuf *out, const sk_geom_prim *p) {
  char b[96];
  int n = snprintf(b, sizeof b, "{\"primitive\":\"/meshes/%u/primitives/%u\"", p->mesh, p->prim);
  return n < 0 || (size_t)n >= sizeof b ? SK_ENOMEM : (sk_strbuf_append(out, b, (size_t)n) ? SK_ENOMEM : 0);
}

static int append_array(sk_strbuf *out, const char *key, const float *v, size_t n) {
  return append_str(out, key) || sk_strbuf_append_f32_array(out, v, n) ? SK_ENOMEM : 0;
}

/* One primitive posed into pos/nrm (scratch of count x 3 each), its items
 * appended to `verts` and `box`. */
/* The primitive's conservative box item into `cons`. */
static int write_conservative(const sk_geom_prim *p, const float *final, size_t slots, const double *infl, float *pos,
                              bool sep, sk_strbuf *cons) {
  float min[3], max[3];
  sk_skin_bounds_conservative(p, final, slots, infl, pos, min, max);
  if (!all_finite(min, 3) || !all_finite(max, 3))
    return SK_ENOTFINITE;
  return (sep && append_str(cons, ",")) || append_prim(cons, p) || append_array(cons, ",\"min\":", min, 3) ||
                 append_array(cons, ",\"max\":", max, 3) || append_str(cons, "}")
             ? SK_ENOMEM
             : 0;
}

/* "morphWeights" items: each mesh with targets once, its influences. */
/* The pose's layers as sk_skin takes them. */
typedef struct {
  long clip[SK_MESH_LAYERS_MAX];
  double frame[SK_MESH_LAYERS_MAX], weight[SK_MESH_LAYERS_MAX];
  size_t n;
  bool blend;
} mesh_clock;

static void influences(const sk_geom *geom, const sk_geom_prim *p, const mesh_clock *c, double *infl) {
  sk_skin_influences_layers(geom, p->mesh, p->ntargets, c->clip, c->frame, c->weight, c->n, c->blend, p->influence,
                            infl);
}

static int write_weights(const sk_geom *geom, const mesh_clock *c, double *infl, sk_strbuf *out) {
  bool sep = false;
  for (uint32_t i = 0; i < geom->nprims; i++) {
    const sk_geom_prim *p = &geom->prims[i];
    if (p->ntargets == 0 || (i > 0 && geom->prims[i - 1].mesh == p->mesh))
      continue;
    influences(geom, p, c, infl);
    char b[64];
    int n = snprintf(b, sizeof b, "%s{\"mesh\":\"/meshes/%u\",\"weights\":[", sep ? "," : "", p->mesh);
    if (n < 0 || (size_t)n >= sizeof b || sk_strbuf_append(out, b, (size_t)n))
      return SK_ENOMEM;
    for (uint32_t t = 0; t < p->ntargets; t++) {
      char num[32];
      size_t len = sk_numfmt_f64(infl[t], num);
      if ((t > 0 && append_str(out, ",")) || sk_strbuf_append(out, num, len))
        return SK_ENOMEM;
    }
    if (append_str(out, "]}"))
      return SK_ENOMEM;
    sep = true;
  }
  return 0;
}

static int write_prim(const sk_geom_prim *p, unsigned outputs, const float *final, size_t slots, const double *infl,
                      float *pos, float *nrm, bool sep, sk_threads *threads, sk_strbuf *verts, sk_strbuf *box) {
  if (!(outputs & (SK_OUT_VERTICES | SK_OUT_BOUNDS))) /* normals go with vertices */
    return 0;
  const bool want_n = (outputs & SK_OUT_NORMALS) && p->nrm != NULL;
  sk_skin_job job = {.prim = p, .final = final, .slots = slots, .influence = infl, .pos = pos,
                     .nrm = want_n ? nrm : NULL, .bounds = (outputs & SK_OUT_BOUNDS) != 0};
  if (!sk_skin_validate(&job))
    return SK_ENOMEM;
  run_job(&job, threads);
  const size_t n = (size_t)p->count * 3;
  if (!all_finite(pos, n) || (want_n && !all_finite(nrm, n)))
    return SK_ENOTFINITE;
  int rc = 0;
  if (outputs & SK_OUT_VERTICES) {
    rc = (sep && append_str(verts, ",")) || append_prim(verts, p) || append_array(verts, ",\"positions\":", pos, n) ||
         (want_n && append_array(verts, ",\"normals\":", nrm, n)) || append_str(verts, "}");
  }
  if (!rc && (outputs & SK_OUT_BOUNDS)) {
    rc = (sep && append_str(box, ",")) || append_prim(box, p) || append_array(box, ",\"min\":", job.min, 3) ||
         append_array(box, ",\"max\":", job.max, 3) || append_str(box, "}");
  }
  return rc ? SK_ENOMEM : 0;
}

/* The scratch both writers pose a primitive in: positions and normals of
 * the largest primitive, one influence per target, and the pose's clock. */
typedef struct mesh_work {
  float *pos, *nrm;
  double *infl;
  mesh_clock c;
} mesh_work;

/* 0, or SK_ENOMEM; *w is to be closed either way. */
static int work_open(const sk_geom *geom, const sk_mesh_layer *layers, size_t n, bool blend, mesh_work *w) {
  size_t most = 1;
  for (uint32_t i = 0; i < geom->nprims; i++)
    if (geom->prims[i].count > most)
      most = geom->prims[i].count;
  w->pos = malloc(most * 3 * sizeof *w->pos);
  w->nrm = malloc(most * 3 * sizeof *w->nrm);
  w->infl = malloc((geom->max_targets + 1) * sizeof *w->infl);
  w->c = (mesh_clock){.n = n < SK_MESH_LAYERS_MAX ? n : SK_MESH_LAYERS_MAX, .blend = blend};
  for (size_t k = 0; k < w->c.n; k++) {
    w->c.clip[k] = layers[k].clip;
    w->c.frame[k] = layers[k].frame;
    w->c.weight[k] = layers[k].weight;
  }
  return w->pos == NULL || w->nrm == NULL || w->infl == NULL ? SK_ENOMEM : 0;
}

static void work_close(mesh_work *w) {
  free(w->pos);
  free(w->nrm);
  free(w->infl);
}

int sk_meshout_write_json(const sk_geom *geom, unsigned outputs, const float *final, size_t slots,
                          const sk_mesh_layer *layers, size_t n, bool blend, bool first, sk_threads *threads,
                          sk_strbuf *out) {
  mesh_work scratch;
  int rc = work_open(geom, layers, n, blend, &scratch);
  float *pos = scratch.pos, *nrm = scratch.nrm;
  double *infl = scratch.infl;
  const mesh_clock c = scratch.c;
  sk_strbuf verts = {0}, box = {0}, weights = {0}, cons = {0};
  for (uint32_t i = 0; !rc && i < geom->nprims; i++) {
    const sk_geom_prim *p = &geom->prims[i];
    influences(geom, p, &c, infl);
    rc = write_prim(p, outputs, final, slots, infl, pos, nrm, i > 0, threads, &verts, &box);
    if (!rc && (outputs & SK_OUT_BOUNDS_CONSERVATIVE))
      rc = write_conservative(p, final, slots, infl, pos, i > 0, &cons);
  }
  if (!rc && (outputs & SK_OUT_MORPH_WEIGHTS))
    rc = write_weights(geom, &c, infl, &weights);
  work_close(&scratch);
  /* assembled only once every primitive is finite: an SK_ENOTFINITE answer
   * appends nothing; the members in the table's order */
  const sk_strbuf *parts[4] = {&verts, &box, &weights, &cons};
  const char *names[4] = {"\"vertices\":[", "\"bounds\":[", "\"morphWeights\":[", "\"boundsConservative\":["};
  const unsigned bits[4] = {SK_OUT_VERTICES, SK_OUT_BOUNDS, SK_OUT_MORPH_WEIGHTS, SK_OUT_BOUNDS_CONSERVATIVE};
  for (int k = 0; k < 4 && !rc; k++) {
    if (!(outputs & bits[k]))
      continue;
    if ((!first && append_str(out, ",")) || append_str(out, names[k]) ||
        (parts[k]->len > 0 && sk_strbuf_append(out, parts[k]->data, parts[k]->len)) || append_str(out, "]"))
      rc = SK_ENOMEM;
    first = false;
  }
  if (!rc && (verts.failed || box.failed || weights.failed || cons.failed || out->failed))
    rc = SK_ENOMEM;
  sk_strbuf_free(&verts);
  sk_strbuf_free(&box);
  sk_strbuf_free(&weights);
  sk_strbuf_free(&cons);
  return rc;
}

static int append_raw(sk_strbuf *out, const void *v, size_t floats) {
  return sk_strbuf_append(out, (const char *)v, floats * sizeof(float)) ? SK_ENOMEM : 0;
}

/* One primitive's binary parts: positions (and normals) into `verts`, its
 * exact box into `box`, its conservative box into `cons`. */
static int f32_prim(const sk_geom_prim *p, unsigned outputs, const float *final, size_t slots, const double *infl,
                    float *pos, float *nrm, sk_threads *threads, sk_strbuf *verts, sk_strbuf *box, sk_strbuf *cons) {
  const size_t n = (size_t)p->count * 3;
  if (outputs & (SK_OUT_VERTICES | SK_OUT_BOUNDS)) {
    const bool want_n = (outputs & SK_OUT_NORMALS) && p->nrm != NULL;
    sk_skin_job job = {.prim = p, .final = final, .slots = slots, .influence = infl, .pos = pos,
                       .nrm = want_n ? nrm : NULL, .bounds = (outputs & SK_OUT_BOUNDS) != 0};
    if (!sk_skin_validate(&job))
      return SK_ENOMEM;
    run_job(&job, threads);
    if (!all_finite(pos, n) || (want_n && !all_finite(nrm, n)))
      return SK_ENOTFINITE;
    if ((outputs & SK_OUT_VERTICES) && (append_raw(verts, pos, n) || (want_n && append_raw(verts, nrm, n))))
      return SK_ENOMEM;
    if ((outputs & SK_OUT_BOUNDS) && (append_raw(box, job.min, 3) || append_raw(box, job.max, 3)))
      return SK_ENOMEM;
  }
  if (outputs & SK_OUT_BOUNDS_CONSERVATIVE) {
    float min[3], max[3];
    sk_skin_bounds_conservative(p, final, slots, infl, pos, min, max);
    if (!all_finite(min, 3) || !all_finite(max, 3))
      return SK_ENOTFINITE;
    if (append_raw(cons, min, 3) || append_raw(cons, max, 3))
      return SK_ENOMEM;
  }
  return 0;
}

int sk_meshout_write_f32(const sk_geom *geom, unsigned outputs, const float *final, size_t slots,
                         const sk_mesh_layer *layers, size_t n, bool blend, sk_threads *threads, sk_strbuf *out) {
  mesh_work scratch;
  int rc = work_open(geom, layers, n, blend, &scratch);
  float *pos = scratch.pos, *nrm = scratch.nrm;
  double *infl = scratch.infl;
  const mesh_clock c = scratch.c;
  sk_strbuf verts = {0}, box = {0}, weights = {0}, cons = {0};
  for (uint32_t i = 0; !rc && i < geom->nprims; i++) {
    const sk_geom_prim *p = &geom->prims[i];
    influences(geom, p, &c, infl);
    rc = f32_prim(p, outputs, final, slots, infl, pos, nrm, threads, &verts, &box, &cons);
    /* the weights as float32: the JSON answer's doubles rounded once */
    const bool mesh_first = i == 0 || geom->prims[i - 1].mesh != p->mesh;
    for (uint32_t t = 0; !rc && (outputs & SK_OUT_MORPH_WEIGHTS) && mesh_first && t < p->ntargets; t++) {
      const float w = (float)infl[t];
      rc = append_raw(&weights, &w, 1);
    }
  }
  work_close(&scratch);
  /* appended only once every primitive is finite, in the table's order */
  const sk_strbuf *parts[4] = {&verts, &box, &weights, &cons};
  for (int k = 0; k < 4 && !rc; k++)
    if (parts[k]->len > 0 && sk_strbuf_append(out, parts[k]->data, parts[k]->len))
      rc = SK_ENOMEM;
  if (!rc && (verts.failed || box.failed || weights.failed || cons.failed || out->failed))
    rc = SK_ENOMEM;
  sk_strbuf_free(&verts);
  sk_strbuf_free(&box);
  sk_strbuf_free(&weights);
  sk_strbuf_free(&cons);
  return rc;
}

/* One hit (or null) as JSON. */
static int append_hit(sk_strbuf *out, const sk_geom *geom, const sk_ray_hit *h, bool sep) {
  if (sep && append_str(out, ","))
    return SK_ENOMEM;
  if (h->prim < 0)
    return append_str(out, "null");
  const sk_geom_prim *p = &geom->prims[h->prim];
  char b[224], d[32], u[32], v[32];
  d[sk_numfmt_f64(h->distance, d)] = 0;
  u[sk_numfmt_f64(h->u, u)] = 0;
  v[sk_numfmt_f64(h->v, v)] = 0;
  int n = snprintf(b, sizeof b, "{\"primitive\":\"/meshes/%u/primitives/%u\",\"triangle\":%u,\"distance\":%s,"
                   "\"barycentric\":[%s,%s]}", p->mesh, p->prim, h->tri, d, u, v);
  return n < 0 || (size_t)n >= sizeof b || sk_strbuf_append(out, b, (size_t)n) ? SK_ENOMEM : 0;
}

static int append_hit_f32(sk_strbuf *out, const sk_ray_hit *h) {
  const bool hit = h->prim >= 0;
  const uint32_t w[2] = {hit ? (uint32_t)h->prim : UINT32_MAX, hit ? h->tri : UINT32_MAX};
  const float f[3] = {hit ? (float)h->distance : 0, hit ? (float)h->u : 0, hit ? (float)h->v : 0};
  return sk_strbuf_append(out, (const char *)w, sizeof w) || sk_strbuf_append(out, (const char *)f, sizeof f)
             ? SK_ENOMEM
             : 0;
}

int sk_meshout_write_hits(const sk_geom *geom, const sk_geom_ray *rays, size_t nrays, const float *final, size_t slots,
                          const sk_mesh_layer *layers, size_t n, bool blend, int fmt, bool first, sk_threads *threads,
                          sk_strbuf *out) {
  mesh_work w;
  int rc = work_open(geom, layers, n, blend, &w);
  sk_ray_hit *hits = malloc((nrays + 1) * sizeof *hits);
  size_t most = 0;
  for (uint32_t i = 0; i < geom->nprims; i++)
    if (sk_ray_scratch_doubles(&geom->prims[i]) > most)
      most = sk_ray_scratch_doubles(&geom->prims[i]);
  double *tris = malloc(most * sizeof *tris);
  /* The early-out's scratch: posed joint boxes, the triangle groups'
   * boxes (sk_ray.h). */
  size_t nb = 1, ng = 1;
  for (uint32_t i = 0; i < geom->nprims; i++) {
    nb = geom->prims[i].nboxes > nb ? geom->prims[i].nboxes : nb;
    ng = sk_ray_groups(&geom->prims[i]) > ng ? sk_ray_groups(&geom->prims[i]) : ng;
  }
  double *jbox = malloc(nb * 6 * sizeof *jbox), *gbox = malloc(ng * 6 * sizeof *gbox);
  if (hits == NULL || tris == NULL || jbox == NULL || gbox == NULL)
    rc = SK_ENOMEM;
  else
    sk_ray_clear(hits, nrays);
  for (uint32_t i = 0; !rc && i < geom->nprims; i++) {
    const sk_geom_prim *p = &geom->prims[i];
    if (p->ntris == 0 || !sk_ray_wants(rays, nrays, i))
      continue;
    influences(geom, p, &w.c, w.infl);
    sk_skin_job job = {.prim = p, .final = final, .slots = slots, .influence = w.infl, .pos = w.pos};
    if (!sk_skin_validate(&job)) {
      rc = SK_ENOMEM;
      break;
    }
    /* The rays' early-out from the joint boxes, before any skinning: a
     * primitive no ray comes near is not posed at all. */
    if (sk_skin_joint_boxes(p, final, w.infl, jbox) && !sk_ray_meets_any(p, i, jbox, rays, nrays))
      continue;
    run_job(&job, threads); /* the "vertices" output's positions, bit for bit */
    if (!all_finite(w.pos, (size_t)p->count * 3)) {
      rc = SK_ENOTFINITE;
    } else {
      sk_ray_group_boxes(p, w.pos, gbox);
      sk_ray_prim_boxed(p, i, w.pos, rays, nrays, gbox, tris, hits);
    }
  }
  free(jbox);
  free(gbox);
  work_close(&w);
  sk_strbuf part = {0}; /* appended whole: an SK_ENOTFINITE answer appends nothing */
  if (!rc && fmt == SK_FMT_JSON && ((!first && append_str(&part, ",")) || append_str(&part, "\"hits\":[")))
    rc = SK_ENOMEM;
  for (size_t r = 0; !rc && r < nrays; r++)
    rc = fmt == SK_FMT_JSON ? append_hit(&part, geom, &hits[r], r > 0) : append_hit_f32(&part, &hits[r]);
  if (!rc && fmt == SK_FMT_JSON && append_str(&part, "]"))
    rc = SK_ENOMEM;
  if (!rc && (part.failed || (part.len > 0 && sk_strbuf_append(out, part.data, part.len)) || out->failed))
    rc = SK_ENOMEM;
  sk_strbuf_free(&part);
  free(hits);
  free(tris);
  return rc;
}
