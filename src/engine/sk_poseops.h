/* sk_poseops: Babylon's Bone API ops (sk_ops) on the daemon's pose
 * requests, and the "world"/"positions" outputs.
 *
 * A pose object (the /pose body, a /poses item, a frame range) may carry,
 * next to what sk_pose_parse_anim takes:
 *   "ops": [...]   sk_ops JSON, applied in order after the pose's "bones"
 *                  overrides or clip sample (every frame of a range), on a
 *                  scratch copy of the stored skeleton: nothing stays;
 *   "mesh": node | null   the default tNode of those ops and of the world
 *                  outputs (absent: the stored skeleton's default mesh);
 *   "output": [..., "world", "positions"]   absolute x mesh world (16
 *                  floats a bone) and its translation (3 floats a bone),
 *                  for every bone, slot or not, in `order`;
 *   "output": [..., "vertices", "normals", "bounds"]   the skinned mesh
 *                  (SK_OUTPUT_MESH: the model's geometry written by its
 *                  sk_mesh_hook, JSON or float32 after the matrices;
 *                  "normals" goes with
 *                  "vertices"). A model without geometry refuses them;
 *   "rays": [...]  with "output": [..., "hits"]: the closest skinned
 *                  triangle per ray (sk_geom_parse_rays, sk_ray.h), each
 *                  needing the other.
 *   "rootMotion": {options}   the clip played in place, with the motion
 *                  in each result (sk_rootframes.h);
 *   "events": true  the clip's events each pose fires (sk_eventframes.h);
 * Query results come back in the pose's result object as "queries": [...]
 * (sk_ops' {"query", "bone", "value"} objects, in op order).
 *
 * The scratch copy starts as a freshly built Babylon skeleton does: zero
 * lazy absolute matrices (sk_bone.h). The bytes of a result are those of a
 * `skinner eval` "pose" op with the same fields on the same skeleton.
 *
 * sk_poseops_sample parses the extras once per pose object and hands the
 * rest to the clip sampler; every pose it gives borrows one sk_poseops
 * (sk_pose.ops) owned by a list the caller frees after the poses. Poses
 * without extras stay plain (ops NULL) and take every fast path. */
#ifndef SK_POSEOPS_H
#define SK_POSEOPS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "sk_model.h"
#include "sk_pose.h"
#include "sk_ops.h"

typedef struct sk_poseops {
  sk_op *ops; /* owned */
  size_t nops;
  bool has_mesh; /* mesh applies (request's, or the stored default) */
  sk_mesh mesh;
  bool world, positions;
  size_t nqueries;
  /* The MESH outputs asked (SK_OUT_* bits; 0: none), of the model's
   * geometry (borrowed: the model outlives the poses) by its writer. */
  unsigned mesh_out;
  /* The pose's "rays" for the "hits" output (owned by the owner of a
   * block: copies share them), and the ray-triangle tests they make. */
  sk_geom_ray *rays;
  size_t nrays;
  uint64_t ray_tests;
  const sk_geom *geom;
  const sk_mesh_hook *mesh_hook;
  /* The clip frames of this pose for animated morph weights (none: the
   * file's weights; with "layers", one a layer, blended). A pose object with mesh outputs whose poses sample clip times
   * gives each pose its own copy (one block, `block` of them at the
   * owner's address; only the owner is on the list). */
  sk_mesh_layer mesh_layers[SK_MESH_LAYERS_MAX];
  size_t mesh_nlayers;
  bool mesh_blend;
  size_t block;
  struct sk_poseops *next; /* the owner list */
  /* Appended: "rootMotion" (sk_rootframes.h): the clip's analysis (the
   * model's, or owned by the owner on the list when `rootframes_owned`;
   * borrowed by the rest of its block), and this pose's motion (offset,
   * turn, delta offset, delta turn). */
  struct sk_rootframes *rootframes;
  bool rootframes_owned;
  double root_motion[8];
  /* Appended: "events" (sk_eventframes.h): the clip's table (borrowed
   * from the model), this pose's fired events ev_idx[0..ev_n), which
   * point into ev_owned of the block's owner. */
  bool events;
  long ev_clip;
  const sk_events *ev_table;
  const uint32_t *ev_idx;
  size_t ev_n;
  uint32_t *ev_owned;
} sk_poseops;

/* The clip sampler's signature (sk_frames_sample_fn). */
typedef int (*sk_poseops_sample_fn)(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr,
                                    const char *const *extra_keys, sk_pose **poses, size_t *count, sk_error *err);

/* Parses pose object `j` (at `ptr`) of entry `e` answered in `fmt`
 * (SK_FMT_JSON, _F32, _MAT3X4): its "ops", "mesh" and world outputs
 * first (all validated before any sampling), then `sample` on the rest.
 * The poses and their count are what `sample` gives; with extras each pose's `ops` points at a new
 * sk_poseops pushed on *owner (free with sk_poseops_free once the poses
 * are gone). Errors as sk_ops_parse, except: an unknown bone in an op is
 * SK_EUNKNOWN (422, a field of the body, not the resource); a "query" op
 * in a binary answer is SK_ERANGE at the op (binary carries no queries). */
int sk_poseops_sample(sk_poseops_sample_fn sample, const sk_model *e, const json_t *j, const char *ptr, int fmt,
                      sk_poseops **owner, sk_pose **poses, size_t *count, sk_error *err);

/* Frees a list from sk_poseops_sample. NULL is a no-op. */
void sk_poseops_free(sk_poseops *list);

/* Work units (sk_cost's, ~one core bone matrix) of one pose with extras
 * `x` on `s`, beyond the plain pose: the scratch copy, each op, the world
 * outputs. */
uint64_t sk_poseops_work(const sk_skeleton *s, const sk_poseops *x, int fmt);
/* Bytes the extras add to one pose's answer (binary exact; JSON a bound). */
size_t sk_poseops_answer_bytes(const sk_skeleton *s, const sk_poseops *x, int fmt);

/* The world matrices and positions of cb's bones (sk_bones_world, bones[]
 * order, the mesh's world when `mesh` is given) into new arrays *w (B x
 * 16) and *p (B x 3), the caller's to free. 0 or SK_ENOMEM. */
int sk_poseops_world(sk_bones *cb, const sk_mesh *mesh, float **w, float **p);

/* The first bone of `s`, parent-first, whose part of a pose's answer would
 * hold a non-finite number: its final matrix (slot order in `buf`, as
 * sk_pose_evaluate leaves it; in JSON only when `output` asks, SK_OUT_*),
 * with a JSON answer its absolute and local ones when `output` asks, its
 * world matrix (and so its position) in `world` (sk_poseops_world's, or
 * NULL when not asked). SIZE_MAX when none. */
size_t sk_poseops_nonfinite_bone(const sk_skeleton *s, const sk_pose_buffers *buf, int fmt, unsigned output,
                                 const float *world);

/* The scratch copy sk_poseops_answer runs a pose's ops on, kept from pose
 * to pose and remade from the stored skeleton in place (a clone and seven
 * allocations a pose were a fifth of an IK frame). A pose changes only the
 * copy's locals (its overrides, the setters and solvers) and, with
 * setCurrentPoseAsRest, rest matrices: after a whole copy of `from`, the
 * next pose on the same skeleton restores only those (a whole copy was
 * 15 % of an IK frame). Zero-initialised is empty; sk_poseops_copy_close
 * frees it. */
typedef struct sk_poseops_copy {
  sk_skeleton *c; /* owned */
  sk_bones cb;    /* on c; cb.s is NULL until made */
  /* Borrowed: what c copies but for what the last pose changed (locals,
   * and rests when `rests`); NULL: nothing, a whole copy comes next. */
  const sk_skeleton *from;
  bool rests;
  /* The mesh writer's spare threads (sk_mesh_hook, borrowed): sk_frames_eval
   * sets its opts' mesh_threads, set only on the daemon's pool; NULL: the
   * caller's thread only. */
  sk_threads *mesh_threads;
} sk_poseops_copy;

/* The next pose copies its skeleton whole. Call where the skeleton of the
 * previous pose may be gone (a new request): another one could then sit at
 * its address, and `from` would prove nothing. */
void sk_poseops_copy_forget(sk_poseops_copy *x);
void sk_poseops_copy_close(sk_poseops_copy *x);

/* Evaluates `pose` (pose->ops set) on a scratch copy of `s` (in `copy`) and appends
 * its answer in `fmt` to `out`: JSON, one result object (a comma first
 * when i > 0); binary, (B+1) final matrices, then B world matrices if
 * asked, then B x 3 positions if asked (matrices as 16 floats for
 * SK_FMT_F32, 12 for SK_FMT_MAT3X4). `buf` is sized for `s`.
 * Errors: SK_ENOMEM; SK_ENOTFINITE when a number of the answer would not
 * be finite (finite inputs can overflow float32 in the products), with
 * *bad_bone the first such bone, parent-first, or SIZE_MAX when it is a
 * skinned vertex (the answer is then abandoned: at most its comma was
 * appended). */
int sk_poseops_answer(const sk_skeleton *s, const sk_pose *pose, size_t i, sk_poseops_copy *copy,
                      sk_pose_buffers *buf, int fmt, size_t *bad_bone, sk_strbuf *out);

/* The POST /v1/skeletons/{id}/ops body {"ops": [...], "mesh"?} applied to
 * a copy of `base` (default mesh `def`, may be NULL): *out is the changed
 * copy (new; NULL on failure, nothing kept), `queries` receives the query
 * results comma-separated (*nq of them). Pure: any thread. */
int sk_poseops_apply_body(const sk_skeleton *base, const sk_mesh *def, const json_t *j, sk_skeleton **out,
                          sk_strbuf *queries, size_t *nq, sk_error *err);

#endif
