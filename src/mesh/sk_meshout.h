/* sk_meshout: the MESH output kinds of a pose's JSON result, the mesh
 * wing's writer that sk_model's hook points at.
 *
 *   "vertices": [{"primitive": "/meshes/M/primitives/P",
 *                 "positions": [x, y, z, ...], "normals": [...]}, ...]
 *   "bounds":   [{"primitive": ..., "min": [x, y, z], "max": [x, y, z]}, ...]
 *
 * in sk_geom's primitive order, positions in accessor order in the mesh's
 * own space (sk_skin: getPositionData(true, true)); "normals" in each item
 * when the output also names "normals" and the primitive has NORMAL
 * (getNormalsData(true, true)); "bounds" the box of the posed positions
 * (refreshBoundingInfo(true, true)). Numbers are float32 printed shortest
 * round trip, as every float of the daemon's answers.
 *
 *   "hits": [{"primitive": ..., "triangle": k, "distance": d,
 *             "barycentric": [u, v]} | null, ...]
 *
 * one per ray of the pose, in ray order (sk_ray.h); numbers doubles
 * printed shortest round trip. */
#ifndef SK_MESHOUT_H
#define SK_MESHOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "sk_buf.h"
#include "sk_geom.h"
#include "sk_model.h"

/* The hook the publishers (daemon, tools) give their models. */
extern const sk_mesh_hook sk_mesh_hook_json;

/* sk_mesh_hook.write_json. */
int sk_meshout_write_json(const sk_geom *geom, unsigned outputs, const float *final, size_t slots,
                          const sk_mesh_layer *layers, size_t n, bool blend, bool first, sk_threads *threads,
                          sk_strbuf *out);

/* sk_mesh_hook.write_f32: the binary layout of proto/mesh.md. */
int sk_meshout_write_f32(const sk_geom *geom, unsigned outputs, const float *final, size_t slots,
                         const sk_mesh_layer *layers, size_t n, bool blend, sk_threads *threads, sk_strbuf *out);

/* sk_mesh_hook.write_hits: JSON ("hits": [...], a comma first unless
 * `first`) or binary (proto/mesh.md: SK_GEOM_HIT_WORDS little-endian
 * words a ray: uint32 primitive index and triangle, 0xffffffff both
 * without a hit, then float32 distance, u, v, 0 without a hit). */
int sk_meshout_write_hits(const sk_geom *geom, const sk_geom_ray *rays, size_t nrays, const float *final, size_t slots,
                          const sk_mesh_layer *layers, size_t n, bool blend, int fmt, bool first, sk_threads *threads,
                          sk_strbuf *out);

#endif
