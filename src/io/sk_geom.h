/* sk_geom: the skinned primitives of a glTF skin, kept at upload for the
 * mesh wing (vertices, normals, bounds), as @babylonjs/loaders 9.28 loads
 * them into vertex buffers.
 *
 * Which primitives: every primitive of every mesh that a node with
 * `"skin": <the selected skin>` uses, nodes in index order, each mesh
 * once (a second node with the same mesh and skin skins the same data).
 * Per primitive, as Babylon's vertex buffers hold them (Float32Array):
 *  - POSITION (required, VEC3) and NORMAL (optional, VEC3);
 *  - JOINTS_0/WEIGHTS_0 (VEC4), and JOINTS_1/WEIGHTS_1 when both are
 *    present (Babylon's numBoneInfluencers = 8); normalized integer weights
 *    are v / 255 or v / 65535 rounded once to float32 (GetFloatValue);
 *    without JOINTS_0 or WEIGHTS_0 the primitive is not skinned and its
 *    positions are answered as loaded (Babylon's _getData skips the
 *    skeleton); weights that do not sum to 1 are used as they are (Babylon
 *    does not normalize them);
 *  - morph targets: each target's POSITION and NORMAL stored as Babylon's
 *    loader stores them, base + delta rounded to float32 (so the delta
 *    applied later is (target - base) x influence in doubles, as
 *    ApplyMorph does); the default influences are node.weights, else
 *    mesh.weights, else 0, of the first node that uses the mesh.
 * Refused with SK_EFORMAT (422) naming the field by JSON pointer: a
 * non-finite value ("/accessors/N"), a count other than POSITION's
 * ("/accessors/N/count"), a wrong type ("/accessors/N/type"), a joint that
 * is not an integer, or is not below the skin's joint count where its
 * weight is > 0 ("/accessors/N"; Babylon would read past its matrices:
 * NaN), primitives of one mesh with different target counts
 * ("/meshes/M/primitives/P/targets", Babylon's loader throws), a vertex
 * without any weight above 0 ("/accessors/N" of WEIGHTS_0: Babylon skins
 * it to NaN), an indices accessor that is not SCALAR unsigned byte, short
 * or int ("/accessors/N/type", "/accessors/N/componentType") or holds a
 * vertex index not below POSITION's count ("/accessors/N").
 *
 * Immutable after sk_geom_build; reference counted (atomically): a PATCH
 * publishes a new skeleton version sharing the same geometry. */
#ifndef SK_GEOM_H
#define SK_GEOM_H

#include <stddef.h>
#include <stdint.h>

#include "sk_error.h"
#include "sk_gltf.h"

/* Most primitives one skin's geometry keeps; past it SK_ETOOBIG. */
#define SK_GEOM_MAX_PRIMS 4096
/* Most morph targets per primitive (Babylon's texture path has no bound;
 * this keeps the per-vertex loop's cost known). */
#define SK_GEOM_MAX_TARGETS 256
/* The vertex kernel's runs (sk_geom_prim.order): blocks of this many
 * vertices, and the classes of a vertex (0..8, see there). */
#define SK_GEOM_RUN_BLOCK 256
#define SK_GEOM_RUN_CLASSES 9

typedef struct sk_geom_target {
  float *pos; /* owned, count x 3, base + delta; NULL: the target moves no position */
  float *nrm; /* owned, count x 3, or NULL */
} sk_geom_target;

typedef struct sk_geom_prim {
  uint32_t mesh, prim; /* glTF indices: "/meshes/<mesh>/primitives/<prim>" */
  uint32_t count;      /* vertices */
  unsigned influences; /* 0 (not skinned), 4 or 8 */
  float *pos;          /* owned, count x 3 */
  float *nrm;          /* owned, count x 3, or NULL without NORMAL */
  uint32_t *joints;    /* owned, count x influences (0 where the weight is <= 0) */
  float *weights;      /* owned, count x influences */
  uint32_t ntargets;
  sk_geom_target *targets; /* owned, ntargets */
  double *influence;       /* owned, ntargets default influences */
  /* The first vertex with no weight above 0, or -1: Babylon skins it by a
   * zero matrix, 0 x (1 / 0), NaN. sk_geom_build refuses such a
   * primitive; sk_poseops still checks, for geometry built elsewhere. */
  int64_t unweighted;
  uint32_t weights_accessor; /* WEIGHTS_0's index, for that refusal */
  /* Per-joint boxes for the conservative bounds: for each of the `nboxes`
   * joints that influence a vertex (weight > 0), the box of those
   * vertices' positions (min xyz, max xyz) and per morph target the box of
   * their deltas (target - base, in doubles as ApplyMorph takes them). A
   * primitive without influences has one box (joint 0) of all vertices. */
  uint32_t nboxes;
  uint32_t *box_joint; /* owned, nboxes */
  double *boxes;       /* owned, nboxes x 6 */
  double *dboxes;      /* owned, nboxes x ntargets x 6, or NULL without targets */
  /* The triangles ray hits test (sk_ray.h): `ntris` of them, vertex
   * indices `tris` (owned, ntris x 3) from the primitive's indices
   * accessor (trailing indices short of a triangle ignored, as a draw
   * call does), or NULL without one (triangle k is vertices 3k, 3k+1,
   * 3k+2). A primitive whose mode is not TRIANGLES (4, the default) has
   * none: points, lines, strips and fans are never hit. */
  uint32_t ntris;
  uint32_t *tris;
  uint32_t indices_accessor; /* the indices accessor, or UINT32_MAX */
  /* Runs for the vertex kernel (sk_skinv), so that it skins each vertex
   * with a loop of exactly its influence count, unmasked and without a
   * branch per vertex. A vertex's class is c in 1..8 when its weights > 0
   * are exactly its first c slots (what exporters write), else 0 (any
   * other pattern: the kernel masks). The vertices go in blocks of
   * SK_GEOM_RUN_BLOCK; `order` (owned, count) holds each block's indices
   * within the block sorted stably by class, `runs` (owned, nblocks x
   * SK_GEOM_RUN_CLASSES) the length of each class's run in that order.
   * Both NULL without influences or in geometry built by hand (the kernel
   * then masks every vertex); sk_geom_prim_runs builds them. */
  uint8_t *order;
  uint16_t *runs;
} sk_geom_prim;

/* A glTF "weights" channel on the node whose mesh the geometry keeps, as
 * Babylon's loader animates MorphTarget.influence: keys at input x 60
 * frames padded to [0, end of the animation] (AnimationGroup.normalize(0),
 * the first and last keys copied), `ntargets` floats a key (x 3 with
 * CUBICSPLINE: in-tangent, value, out-tangent, as the file has them). */
typedef struct sk_geom_weights {
  uint32_t clip; /* the glTF animation index (= the sk_anim clip) */
  uint32_t mesh; /* the glTF mesh whose primitives it drives */
  uint32_t ntargets;
  int interp;    /* SK_ANIM_LINEAR, _STEP, _CUBICSPLINE */
  size_t count;
  double *frames; /* owned */
  float *values;  /* owned */
} sk_geom_weights;

typedef struct sk_geom {
  int refs;
  uint32_t nprims;
  sk_geom_prim *prims; /* owned */
  uint32_t nweights;
  sk_geom_weights *weights; /* owned, in file order (a later channel on a mesh wins) */
  uint64_t vertices;   /* sum of the primitives' counts */
  uint32_t max_targets;
  size_t bytes;        /* what the geometry holds in memory */
} sk_geom;

/* Builds p->order and p->runs from p->weights (p->influences 1..8; for
 * other counts nothing is built). 0, or SK_ENOMEM (p unchanged). The
 * caller frees them (sk_geom_build's geometry frees its own). */
int sk_geom_prim_runs(sk_geom_prim *p);

/* Upper bound, in bytes, of what sk_geom_build(g, skin) allocates at once
 * (the kept arrays plus the largest accessor read), from the file's counts
 * alone, before anything is read. With `limit` > 0 and `base` + the bound
 * over it: SK_ETOOBIG with a pointer to the count that took it over
 * ("/accessors/N/count"). *bytes receives the bound. */
int sk_geom_estimate(const sk_gltf *g, size_t skin, size_t base, size_t limit, size_t *bytes, sk_error *err);

/* Builds the geometry of skin `skin` into *out (new, refs 1; NULL when no
 * node uses the skin with a mesh). Errors as above; SK_ENOMEM. */
int sk_geom_build(sk_gltf *g, size_t skin, sk_geom **out, sk_error *err);

/* Floats of the binary answer of the MESH outputs in `outputs` (SK_OUT_*
 * bits) for one pose (proto/mesh.md): positions (and normals where the
 * primitive has NORMAL), 6 per primitive for each box, one per morph
 * target of each mesh with targets ("hits" adds SK_GEOM_HIT_WORDS a ray,
 * not counted here: the rays are the pose's). */
#define SK_GEOM_HIT_WORDS 5
uint64_t sk_geom_f32_floats(const sk_geom *geom, unsigned outputs);

/* Ray hits (the pose field "rays", the "hits" output; sk_ray.h). */
/* Most rays a pose object takes; past it SK_ETOOBIG at "/rays". */
#define SK_GEOM_MAX_RAYS 1024
typedef struct sk_geom_ray {
  double origin[3], dir[3]; /* the mesh's own space, as "vertices"; dir non-zero */
  double max_distance;      /* hits at distance <= it count; INFINITY when absent */
  int64_t prim;             /* the one primitive (index into prims) it tests, or -1: all */
} sk_geom_ray;

/* Parses "rays" `j` (at `ptr`, e.g. "/rays") of a pose on `geom`: an
 * array of at most SK_GEOM_MAX_RAYS objects {"origin": [x, y, z],
 * "direction": [x, y, z], "maxDistance"?: d >= 0, "primitive"?:
 * "/meshes/M/primitives/P"}, numbers finite and within float32's range.
 * *out new (free; NULL for none), *n rays, *tests the ray-triangle tests
 * they make a pose. Errors name the field: SK_ETYPE, SK_ELENGTH,
 * SK_ENOTFINITE, SK_EUNKNOWN (an unknown member or primitive), SK_ERANGE
 * (a zero direction, a negative maxDistance), SK_ETOOBIG (too many). */
int sk_geom_parse_rays(const sk_geom *geom, const json_t *j, const char *ptr, sk_geom_ray **out, size_t *n,
                       uint64_t *tests, sk_error *err);

/* Reference counting; unref(NULL) is a no-op. Any thread. */
sk_geom *sk_geom_ref(sk_geom *geom);
void sk_geom_unref(sk_geom *geom);

#endif
