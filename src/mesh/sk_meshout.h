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
 * round trip, as every float of the daemon's answers. */
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
                          const sk_mesh_layer *layers, size_t n, bool blend, bool first, sk_strbuf *out);

/* sk_mesh_hook.write_f32: the binary layout of proto/mesh.md. */
int sk_meshout_write_f32(const sk_geom *geom, unsigned outputs, const float *final, size_t slots,
                         const sk_mesh_layer *layers, size_t n, bool blend, sk_strbuf *out);

#endif
