/* sk_skin: one primitive's vertices posed, as Babylon.js 9.34 computes
 * them on the CPU: AbstractMesh._getData (getPositionData(true, true),
 * getNormalsData(true, true)) and Mesh.refreshBoundingInfo(true, true).
 *
 * The job, step by step, and why each step's arithmetic is what it is:
 *  1. morph (ApplyMorph): per float of the attribute, value = base in
 *     doubles, value += (target - base) x influence for every target with a
 *     non-zero influence, in target order, then stored to float32 once;
 *     `target` is the loader's base + delta already rounded to float32
 *     (sk_geom.h);
 *  2. skin (ApplySkeleton): per vertex the matrix sum of the influences
 *     with weight > 0, first the four of JOINTS_0/WEIGHTS_0 then, with 8
 *     influences, JOINTS_1/WEIGHTS_1: Babylon's Matrix is a Float32Array,
 *     so FromFloat32ArrayToRefScaled stores float32(m x w) (a product of
 *     two float32 values in doubles is exact, so this is the float32
 *     product) and addToSelf float32(sum + that) (a sum of two float32
 *     values rounded once: the float32 sum). Float32 arithmetic, as long
 *     as nothing contracts it to a fused multiply-add (the build's
 *     -ffp-contract=off);
 *  3. transform (Vector3.TransformCoordinatesFromFloatsToRef) in doubles,
 *     left to right as written, with the divide by w (rx x (1 / rw)), then
 *     stored to float32; normals by TransformNormalFromFloatsToRef (the
 *     3 x 3 part, no w, no renormalisation);
 *  4. bounds (extractMinAndMax): the first strict minimum and maximum per
 *     axis of the posed positions (no bias: glTF geometry has none).
 * A primitive without influences (sk_geom_prim.influences 0) stops after
 * the morph, as Babylon's _getData does without weights data.
 *
 * The job never allocates and never validates per vertex: sk_geom_build
 * checked the joints against the skin (so every slot read is one of
 * `slots`) and every input is finite. Outputs may still overflow float32:
 * the caller checks them. */
#ifndef SK_SKIN_H
#define SK_SKIN_H

#include <stdbool.h>
#include <stddef.h>

#include "sk_geom.h"

typedef struct sk_skin_job {
  /* in */
  const sk_geom_prim *prim;
  const float *final; /* skin matrices, `slots` x 16 floats in slot order */
  size_t slots;
  const double *influence; /* prim->ntargets influences, or NULL: the primitive's defaults */
  /* out (borrowed arrays of prim->count x 3 floats; NULL: not computed) */
  float *pos;
  float *nrm; /* ignored when the primitive has no NORMAL */
  bool bounds;       /* fill min/max (needs pos) */
  float min[3], max[3];
} sk_skin_job;

/* The influences of mesh `mesh`'s `ntargets` morph targets at `frame` of
 * clip `clip` (-1: none) into dest: `defaults` where no "weights" channel
 * of the clip drives the mesh, else the last such channel in file order
 * sampled as Babylon's Animation._interpolate samples a FLOAT animation
 * after RuntimeAnimation.goToFrame's clamp (STEP: the key before; LINEAR:
 * start + (end - start) x gradient; CUBICSPLINE: Hermite with the tangents
 * x 1/60 x the key interval). */
void sk_skin_influences(const sk_geom *geom, uint32_t mesh, uint32_t ntargets, long clip, double frame,
                        const double *defaults, double *dest);

/* A box that contains the exact bounds of primitive `p` posed by `final`
 * with morph influences `infl` (p->ntargets), from the per-joint boxes of
 * sk_geom (no vertex is touched): each joint's box of base positions plus
 * the influences times its targets' delta boxes (interval arithmetic),
 * its 8 corners through the joint's skin matrix, all unioned, padded by
 * 2^-16 of the largest coordinate for the float32 roundings of the exact
 * path. Why the union holds the skinned vertex: with affine skin matrices
 * (last column 0, 0, 0, 1) the blended matrix's w is the weight sum s, and
 * Babylon's divide by w makes the vertex the convex combination
 * sum (w_i / s) M_i p of points inside the boxes' images. A primitive
 * with a non-affine matrix among its joints, or without influences, gets
 * the exact bounds instead (computed here into the scratch `pos`, count x
 * 3 floats). */
void sk_skin_bounds_conservative(const sk_geom_prim *p, const float *final, size_t slots, const double *infl,
                                 float *pos, float min[3], float max[3]);

/* Each of p's per-joint boxes (sk_geom_prim's boxes, with the morph
 * influences `infl`) posed by its joint's skin matrix in `final`, as
 * sk_skin_bounds_conservative unions them, unpadded: min xyz, max xyz
 * into dest (p->nboxes x 6 doubles). A vertex lies in the hull of its
 * weighted joints' posed boxes (up to the float32 roundings that pad
 * covers). False, nothing written, where that does not hold: p without
 * influences, or a non-affine matrix among its joints. */
bool sk_skin_joint_boxes(const sk_geom_prim *p, const float *final, const double *infl, double *dest);

/* The influences with weighted layers (`blend`), as Babylon's late
 * animation bindings blend a float per target: of the layers whose clip
 * has a weights channel for the mesh, W = the sum of their weights in
 * layer order; W >= 1: v = v_1 x (w_1 / W) (v_1 itself when that ratio is
 * 1), then v += v_i x (w_i / W), ratios of 0 skipped; W < 1: v = default
 * x (1 - W), then v += v_i x w_i; no such layer: the defaults. Without
 * `blend`, layer 0 alone (or none: the defaults). `layers` holds clip,
 * frame and weight as sk_model's sk_mesh_layer. */
void sk_skin_influences_layers(const sk_geom *geom, uint32_t mesh, uint32_t ntargets, const long *clips,
                               const double *frames, const double *weights, size_t n, bool blend,
                               const double *defaults, double *dest);

/* Whether the job can run: prim, final and pos (or nrm) set, bounds only
 * with pos. */
bool sk_skin_validate(const sk_skin_job *job);

/* Runs the job (validated). */
void sk_skin_run(sk_skin_job *job);

#endif
