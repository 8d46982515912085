#include "sk_meshout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_answer.h"
#include "sk_numfmt.h"
#include "sk_skin.h"

const sk_mesh_hook sk_mesh_hook_json = {.write_json = sk_meshout_write_json};

static bool all_finite(const float *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i]))
      return false;
  return true;
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
static int write_prim(const sk_geom_prim *p, unsigned outputs, const float *final, size_t slots, const double *infl,
                      float *pos, float *nrm, bool sep, sk_strbuf *verts, sk_strbuf *box) {
  const bool want_n = (outputs & SK_OUT_NORMALS) && p->nrm != NULL;
  sk_skin_job job = {.prim = p, .final = final, .slots = slots, .influence = infl, .pos = pos,
                     .nrm = want_n ? nrm : NULL, .bounds = (outputs & SK_OUT_BOUNDS) != 0};
  if (!sk_skin_validate(&job))
    return SK_ENOMEM;
  sk_skin_run(&job);
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

int sk_meshout_write_json(const sk_geom *geom, unsigned outputs, const float *final, size_t slots, long clip,
                          double frame, bool first, sk_strbuf *out) {
  size_t most = 1;
  for (uint32_t i = 0; i < geom->nprims; i++)
    if (geom->prims[i].count > most)
      most = geom->prims[i].count;
  float *pos = malloc(most * 3 * sizeof *pos), *nrm = malloc(most * 3 * sizeof *nrm);
  double *infl = malloc((geom->max_targets + 1) * sizeof *infl);
  sk_strbuf verts = {0}, box = {0};
  int rc = pos == NULL || nrm == NULL || infl == NULL ? SK_ENOMEM : 0;
  for (uint32_t i = 0; !rc && i < geom->nprims; i++) {
    const sk_geom_prim *p = &geom->prims[i];
    sk_skin_influences(geom, p->mesh, p->ntargets, clip, frame, p->influence, infl);
    rc = write_prim(p, outputs, final, slots, infl, pos, nrm, i > 0, &verts, &box);
  }
  free(pos);
  free(nrm);
  free(infl);
  /* assembled only once every primitive is finite: an SK_ENOTFINITE answer appends nothing */
  if (!rc && (outputs & SK_OUT_VERTICES))
    rc = (!first && append_str(out, ",")) || append_str(out, "\"vertices\":[") ||
                 sk_strbuf_append(out, verts.data, verts.len) || append_str(out, "]")
             ? SK_ENOMEM
             : 0;
  first = first && !(outputs & SK_OUT_VERTICES);
  if (!rc && (outputs & SK_OUT_BOUNDS))
    rc = (!first && append_str(out, ",")) || append_str(out, "\"bounds\":[") || sk_strbuf_append(out, box.data, box.len) ||
                 append_str(out, "]")
             ? SK_ENOMEM
             : 0;
  if (!rc && (verts.failed || box.failed || out->failed))
    rc = SK_ENOMEM;
  sk_strbuf_free(&verts);
  sk_strbuf_free(&box);
  return rc;
}
