#include "sk_usda.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sk_gltf.h"
#include "sk_numfmt.h"
#include "sk_shot_int.h"

/* ---- faces ------------------------------------------------------------------ */

void sk_usda_faces_close(sk_usda_faces *f) {
  for (uint32_t i = 0; f->indices != NULL && i < f->n; i++)
    free(f->indices[i]);
  free(f->indices);
  free(f->counts);
  memset(f, 0, sizeof *f);
}

/* Primitive `p`'s triangles into *idx (*n indices). The file says which
 * primitives USD takes (mode, the indices accessor's type and count); the
 * indices themselves are the ones sk_geom kept and checked at load
 * (sk_geom_prim.tris), so USD faces and ray hits share one reading. */
static int prim_faces(sk_gltf *g, const sk_geom_prim *p, uint32_t **idx, size_t *n, sk_error *err) {
  char ptr[SK_ERROR_POINTER_MAX];
  const json_t *pj = json_array_get(
      json_object_get(json_array_get(json_object_get(sk_gltf_json(g), "meshes"), p->mesh), "primitives"), p->prim);
  const json_t *mode = json_object_get(pj, "mode");
  if (mode != NULL && !(json_is_integer(mode) && json_integer_value(mode) == 4)) {
    snprintf(ptr, sizeof ptr, "/meshes/%u/primitives/%u/mode", p->mesh, p->prim);
    return sk_error_set(err, SK_EFORMAT, ptr, "USD export takes triangles (mode 4) only");
  }
  const json_t *ij = json_object_get(pj, "indices");
  if (ij == NULL) { /* non-indexed: every three vertices a triangle */
    snprintf(ptr, sizeof ptr, "/meshes/%u/primitives/%u", p->mesh, p->prim);
    if (p->count % 3 != 0)
      return sk_error_set(err, SK_EFORMAT, ptr, "%u vertices without indices are no whole triangles", p->count);
    if ((*idx = malloc(((size_t)p->count + 1) * sizeof **idx)) == NULL)
      return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
    for (uint32_t v = 0; v < p->count; v++)
      (*idx)[v] = v;
    *n = p->count;
    return 0;
  }
  if (!json_is_integer(ij) || json_integer_value(ij) < 0) {
    snprintf(ptr, sizeof ptr, "/meshes/%u/primitives/%u/indices", p->mesh, p->prim);
    return sk_error_set(err, SK_EFORMAT, ptr, "expected an accessor index");
  }
  const json_int_t acc = json_integer_value(ij);
  const json_t *aj = json_array_get(json_object_get(sk_gltf_json(g), "accessors"), (size_t)acc);
  const json_t *cj = json_object_get(aj, "count");
  const char *type = json_string_value(json_object_get(aj, "type"));
  snprintf(ptr, sizeof ptr, "/accessors/%" JSON_INTEGER_FORMAT, acc);
  if (type == NULL || strcmp(type, "SCALAR") != 0 || !json_is_integer(cj) || json_integer_value(cj) % 3 != 0)
    return sk_error_set(err, SK_EFORMAT, ptr, "indices must be SCALAR, a multiple of 3 of them (triangles)");
  if (p->tris == NULL || (json_int_t)p->indices_accessor != acc ||
      (json_int_t)p->ntris * 3 != json_integer_value(cj))
    return sk_error_set(err, SK_EINVAL, ptr, "the geometry was not loaded from this file");
  *n = (size_t)p->ntris * 3;
  if ((*idx = malloc((*n + 1) * sizeof **idx)) == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  memcpy(*idx, p->tris, *n * sizeof **idx);
  return 0;
}

int sk_usda_faces_read(const void *data, size_t len, const sk_geom *geom, sk_usda_faces *f, sk_error *err) {
  memset(f, 0, sizeof *f);
  sk_gltf *g = NULL;
  int rc = sk_gltf_parse(data, len, &g, err);
  if (rc)
    return rc;
  f->indices = calloc(geom->nprims + 1, sizeof *f->indices);
  f->counts = calloc(geom->nprims + 1, sizeof *f->counts);
  if (f->indices == NULL || f->counts == NULL)
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  else
    f->n = geom->nprims;
  for (uint32_t i = 0; !rc && i < geom->nprims; i++)
    rc = prim_faces(g, &geom->prims[i], &f->indices[i], &f->counts[i], err);
  sk_gltf_destroy(g);
  return rc;
}

/* ---- text ------------------------------------------------------------------- */

/* The text goes out in pieces of about a megabyte: a frame of a big mesh
 * is one line of several megabytes, never the whole file. */
typedef struct usda_out {
  FILE *f;
  sk_strbuf b;
  int rc;
} usda_out;

static void flush(usda_out *o, bool force) {
  if (!o->rc && o->b.failed)
    o->rc = SK_ENOMEM;
  if (o->rc || o->b.len == 0 || (!force && o->b.len < ((size_t)1 << 20)))
    return;
  if (fwrite(o->b.data, 1, o->b.len, o->f) != o->b.len)
    o->rc = SK_EIO;
  o->b.len = 0;
}

static void put(usda_out *o, const char *s) { sk_strbuf_append(&o->b, s, strlen(s)); }

static void putf(usda_out *o, const char *fmt, ...) {
  char line[160];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof line)
    o->rc = o->rc ? o->rc : SK_EINVAL;
  else
    sk_strbuf_append(&o->b, line, (size_t)n);
}

/* "[(x, y, z), ...]" of n triples; the floats shortest (sk_numfmt_f32). */
static void put_vec3s(usda_out *o, const float *v, size_t n) {
  put(o, "[");
  for (size_t i = 0; i < n && !o->b.failed; i++) {
    char t[3 * (SK_NUMFMT_F32_MAX + 1) + 8];
    size_t len = 0;
    t[len++] = '(';
    for (int a = 0; a < 3; a++) {
      if (!isfinite(v[3 * i + a]))
        o->rc = o->rc ? o->rc : SK_ENOTFINITE;
      len += sk_numfmt_f32(v[3 * i + a], t + len);
      if (a < 2) {
        t[len++] = ',';
        t[len++] = ' ';
      }
    }
    t[len++] = ')';
    if (i + 1 < n) {
      t[len++] = ',';
      t[len++] = ' ';
    }
    sk_strbuf_append(&o->b, t, len);
  }
  put(o, "]");
}

static void put_ints(usda_out *o, const uint32_t *v, size_t n, bool threes) {
  put(o, "[");
  for (size_t i = 0; i < n && !o->b.failed; i++) {
    if (i > 0)
      put(o, ", ");
    putf(o, "%" PRIu32, threes ? 3u : v[i]);
    flush(o, false);
  }
  put(o, "]\n");
}

/* Time code of frame k of the shot. */
static uint64_t time_code(const sk_shot *sh, size_t k) { return (sh->by_index ? sh->first : 0) + k; }

static void prologue(const sk_shot *sh, usda_out *o) {
  char fps[SK_NUMFMT_F64_MAX + 1];
  sk_numfmt_f64(sh->fps, fps);
  put(o, "#usda 1.0\n(\n    defaultPrim = \"Skinned\"\n");
  putf(o, "    endTimeCode = %" PRIu64 "\n", time_code(sh, sh->frames - 1));
  putf(o, "    framesPerSecond = %s\n    metersPerUnit = 1\n", fps);
  putf(o, "    startTimeCode = %" PRIu64 "\n", time_code(sh, 0));
  putf(o, "    timeCodesPerSecond = %s\n    upAxis = \"Y\"\n)\n\ndef Xform \"Skinned\"\n{\n", fps);
}

/* One pass over the shot's frames for primitive i: `what` 'p' points (and
 * the extents into ext, 6 floats a frame), 'n' normals. */
static void samples(const sk_shot *sh, sk_shot__state *st, uint32_t i, int what, float *nrm, float *ext,
                    usda_out *o) {
  const sk_geom_prim *p = &sh->geom->prims[i];
  for (size_t f0 = 0; !o->rc && f0 < sh->frames; f0 += st->chunk) {
    const size_t n = sh->frames - f0 < st->chunk ? sh->frames - f0 : st->chunk;
    if ((o->rc = sk_shot__finals(sh, st, f0, n)) != 0)
      break;
    for (size_t k = 0; k < n && !o->rc; k++) {
      sk_shot__skin(sh, st, k, i, NULL, what == 'n' ? nrm : NULL, what == 'p' ? ext + 6 * (f0 + k) : NULL);
      putf(o, "            %" PRIu64 ": ", time_code(sh, f0 + k));
      put_vec3s(o, what == 'n' ? nrm : st->scratch[0], p->count);
      put(o, ",\n");
      flush(o, false);
    }
  }
}

static void write_mesh(const sk_shot *sh, sk_shot__state *st, const sk_usda_faces *f, uint32_t i, float *nrm,
                       float *ext, usda_out *o) {
  const sk_geom_prim *p = &sh->geom->prims[i];
  putf(o, "    def Mesh \"mesh%u_primitive%u\" (\n        customData = {\n", p->mesh, p->prim);
  putf(o, "            string gltf = \"/meshes/%u/primitives/%u\"\n        }\n    )\n    {\n", p->mesh, p->prim);
  put(o, "        int[] faceVertexCounts = ");
  put_ints(o, f->indices[i], f->counts[i] / 3, true);
  put(o, "        int[] faceVertexIndices = ");
  put_ints(o, f->indices[i], f->counts[i], false);
  put(o, "        uniform token orientation = \"rightHanded\"\n        uniform token subdivisionScheme = \"none\"\n");
  put(o, "        point3f[] points.timeSamples = {\n");
  samples(sh, st, i, 'p', nrm, ext, o);
  put(o, "        }\n");
  if (sh->normals && p->nrm != NULL) {
    put(o, "        normal3f[] normals (\n            interpolation = \"vertex\"\n        )\n");
    put(o, "        normal3f[] normals.timeSamples = {\n");
    samples(sh, st, i, 'n', nrm, ext, o);
    put(o, "        }\n");
  }
  put(o, "        float3[] extent.timeSamples = {\n");
  for (size_t k = 0; k < sh->frames && !o->rc; k++) {
    putf(o, "            %" PRIu64 ": ", time_code(sh, k));
    put_vec3s(o, ext + 6 * k, 2);
    put(o, ",\n");
    flush(o, false);
  }
  put(o, "        }\n    }\n");
}

int sk_usda_write(const sk_shot *sh, const sk_usda_faces *f, FILE *out) {
  if (sh == NULL || f == NULL || out == NULL || sh->output != SK_SHOT_VERTICES || sh->header || sh->geom == NULL ||
      f->n != sh->geom->nprims || sh->frames == 0 || sh->frames > SIZE_MAX / 24)
    return SK_EINVAL;
  sk_shot__state st;
  usda_out o = {.f = out};
  o.rc = sk_shot__open(sh, &st);
  size_t most = 1;
  for (uint32_t i = 0; i < sh->geom->nprims; i++)
    most = sh->geom->prims[i].count > most ? sh->geom->prims[i].count : most;
  float *nrm = malloc(most * 3 * sizeof *nrm), *ext = malloc(sh->frames * 6 * sizeof *ext);
  if (!o.rc && (nrm == NULL || ext == NULL))
    o.rc = SK_ENOMEM;
  if (!o.rc)
    prologue(sh, &o);
  for (uint32_t i = 0; !o.rc && i < sh->geom->nprims; i++)
    write_mesh(sh, &st, f, i, nrm, ext, &o);
  put(&o, "}\n");
  flush(&o, true);
  free(nrm);
  free(ext);
  sk_strbuf_free(&o.b);
  sk_shot__close(&st, sh->characters);
  return o.rc;
}
