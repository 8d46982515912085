/* sk_usda: `skinner frames --output vertices --format usda`, a point cache
 * as USD ASCII (the text form of Pixar's USD layers) for DCC tools and
 * renderers that do no skinning:
 *
 *   #usda 1.0
 *   (defaultPrim = "Skinned", startTimeCode = S, endTimeCode = E,
 *    timeCodesPerSecond = fps, framesPerSecond = fps, upAxis = "Y")
 *   def Xform "Skinned" {
 *     def Mesh "mesh<M>_primitive<P>" (customData = {string gltf = "/meshes/M/primitives/P"}) {
 *       int[] faceVertexCounts, int[] faceVertexIndices (the indices accessor: triangles)
 *       point3f[] points.timeSamples = {t: [(x, y, z), ...], ...}
 *       normal3f[] normals.timeSamples (with --normals and NORMAL; interpolation "vertex")
 *       float3[] extent.timeSamples (the exact bounds of each frame)
 *     }
 *   }
 *
 * one Mesh per skinned primitive in sk_geom order; time code t of frame k
 * is START + k with --frames START:END, k with --from (time code 0 is at
 * --from seconds). The numbers are the daemon's "vertices", "normals" and
 * "bounds" float32, printed shortest (sk_numfmt_f32): read as doubles and
 * rounded to float32, as USD reads a float3, they give back the same bits
 * (tests/bench/numfmt_f32_via_double.c samples all float32 patterns).
 * A frame's sample line is the same bytes whatever the split of the shot,
 * so chunked or resumed exports differ from the whole one only in their
 * start/endTimeCode and the lines of frames they do not hold. Each
 * primitive's frames are posed again for its points, its normals and its
 * extent (the file is written in that order, not held). */
#ifndef SK_USDA_H
#define SK_USDA_H

#include <stdio.h>

#include "sk_error.h"
#include "sk_shot.h"

/* The triangles of every primitive of a geometry, in sk_geom order. */
typedef struct sk_usda_faces {
  uint32_t n;         /* primitives */
  uint32_t **indices; /* owned, n arrays of counts[i] vertex indices (3 a triangle) */
  size_t *counts;     /* owned */
} sk_usda_faces;

/* The faces of `geom`'s primitives: the indices sk_geom kept
 * (sk_geom_prim.tris), or 0..count-1 without an indices accessor. The
 * glTF file the geometry came from (`data`, `len`) says which primitives
 * qualify: only triangles (mode 4, the default), another mode SK_EFORMAT
 * at "/meshes/M/primitives/P/mode"; an indices accessor not SCALAR or not
 * a multiple of 3 SK_EFORMAT at "/accessors/N"; a geometry whose indices
 * are not that accessor's SK_EINVAL. 0 or an error (err set); *f is to
 * be closed either way. */
int sk_usda_faces_read(const void *data, size_t len, const sk_geom *geom, sk_usda_faces *f, sk_error *err);
void sk_usda_faces_close(sk_usda_faces *f);

/* Writes the shot (output SK_SHOT_VERTICES, no header) as USD ASCII to
 * `out`. 0, SK_EINVAL, SK_ENOMEM, SK_EIO (a short write), SK_ENOTFINITE (a
 * posed number overflowed float32: nothing past it is written). */
int sk_usda_write(const sk_shot *sh, const sk_usda_faces *f, FILE *out);

#endif
