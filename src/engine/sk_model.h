/* sk_model: the published skeleton version the pipeline computes with.
 *
 * A model is a skeleton and what is derived from it once, when it is
 * published (an upload, a PATCH, a record read back), so that no request
 * derives it again: the batch kernel's rig, the stored pose evaluated
 * (world and final matrices, and the finals' JSON text), the glTF or
 * Babylon-format clips with their shared sampler, the default mesh and the
 * glTF skins list. It is one allocation, built once by sk_model_create and
 * immutable after: any number of threads read it at once. It is
 * reference-counted (atomically: the daemon's pool threads read models),
 * so whoever holds a reference (the daemon's cache entry, `skinner eval`,
 * a bench) never sees it freed under it.
 *
 * The fields are a macro, in the spirit of libuv's UV_HANDLE_FIELDS, so
 * that the published members read as one list that other wings' members
 * (the mesh wing's) join. */
#ifndef SK_MODEL_H
#define SK_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_anim.h"
#include "sk_bone.h"
#include "sk_buf.h"
#include "sk_geom.h"
#include "sk_kernel.h"
#include "sk_numfmt.h"
#include "sk_skeleton.h"
#include "sk_threads.h"

/* How the pipeline (engine/) reaches the mesh wing's writers, which live
 * above it (mesh/): whoever publishes a model fills one in (the daemon's
 * cache, the tools), so a new output kind of the SK_OUTPUT_MESH family is
 * its SK_OUTPUT_MAP row plus its writer here. */
/* A pose's clip frames for the morph weights: one per layer, or one with
 * weight 1 for a single "animation" (`blend` false); none: the file's. */
#define SK_MESH_LAYERS_MAX 16
typedef struct sk_mesh_layer {
  long clip;
  double frame;
  double weight;
} sk_mesh_layer;

typedef struct sk_mesh_hook {
  /* Appends the JSON members of the MESH outputs in `outputs` (SK_OUT_*
   * bits) of `geom` posed by the skin matrices `final` (`slots` x 16
   * floats, slot order, as sk_pose_evaluate leaves them) with the morph
   * weights of `layers[0..n)` (blended as weighted layers when `blend`;
   * n 0: the file's), each member preceded by a comma unless `first`. 0,
   * SK_ENOMEM, or SK_ENOTFINITE (nothing appended) when a number would not
   * be finite. `threads` (borrowed; NULL: the caller's only) lends the
   * spare threads a primitive of SK_MESH_THREADS_MIN vertices and more may
   * be skinned on besides the caller's, taken while it runs: the daemon's
   * one count for the process (--threads), handed down only to pool
   * threads. The bytes are the same for every count. */
  int (*write_json)(const sk_geom *geom, unsigned outputs, const float *final, size_t slots,
                    const sk_mesh_layer *layers, size_t n, bool blend, bool first, sk_threads *threads, sk_strbuf *out);
  /* The same outputs as little-endian float32 (proto/mesh.md), appended
   * raw; exactly sk_geom_f32_floats(geom, outputs) floats. Same codes. */
  int (*write_f32)(const sk_geom *geom, unsigned outputs, const float *final, size_t slots,
                   const sk_mesh_layer *layers, size_t n, bool blend, sk_threads *threads, sk_strbuf *out);
  /* The "hits" output of rays[0..nrays) in `fmt` (JSON: the member, a
   * comma first unless `first`; binary: SK_GEOM_HIT_WORDS words a ray).
   * Same codes; NULL: no ray hits. */
  int (*write_hits)(const sk_geom *geom, const sk_geom_ray *rays, size_t nrays, const float *final, size_t slots,
                    const sk_mesh_layer *layers, size_t n, bool blend, int fmt, bool first, sk_threads *threads,
                    sk_strbuf *out);
} sk_mesh_hook;
/* Vertices from which a primitive is split over the hook's threads
 * (handing a part to a waiting thread costs some microseconds). */
#define SK_MESH_THREADS_MIN 65536u

#define SK_MODEL_FIELDS                                                                                              \
  sk_skeleton *skel; /* owned; immutable after publication */                                                      \
  sk_rig *rig;       /* owned, or NULL (the exact core answers): the batch kernel's form of `skel` */              \
  float *base_world; /* owned, or NULL: sk_skeleton_evaluate_base of `skel`; */                                    \
  float *base_final; /* base_final points into the same allocation */                                              \
  sk_f32_text base_final_text; /* owned: base_final as JSON, per matrix (empty without base_final) */             \
  sk_anim *anim;     /* owned reference; the clips, NULL for skeletons without any */                              \
  size_t bone_count; /* = skel->count */                                                                         \
  /* The skeleton's default mesh (Babylon's tNode for world-space ops and the                                     \
   * "world"/"positions" outputs when a request names none): from a glTF                                          \
   * upload, the skinned mesh's node chain as Babylon's loader builds it; from                                    \
   * JSON, the skeleton's "mesh". has_mesh false: no mesh (identity). */                                          \
  bool has_mesh;                                                                                                   \
  sk_mesh mesh;                                                                                                    \
  /* owned, or NULL: the default mesh's node chain as compact JSON                                                \
   * (sk_ops_parse_mesh's format), what GET shows; NULL iff !has_mesh, except                                     \
   * for a glTF chain that does not compose (a zero scale: has_mesh false,                                        \
   * the chain still shown). */                                                                                    \
  char *mesh_json;                                                                                                 \
  /* owned, or NULL for JSON skeletons: the glTF file's skins list                                                \
   * (sk_gltf_skins_json) and which of them this skeleton is. */                                                  \
  char *skins_json;                                                                                                \
  int32_t skin;                                                                                                    \
  /* A reference (sk_model_close drops it), or NULL: the skin's skinned                                          \
   * primitives (glTF uploads), and the mesh wing's writer of the MESH                                             \
   * outputs (borrowed, static; NULL: none), both set by the publisher                                             \
   * after sk_model_create with sk_model_set_geom. */                                                               \
  sk_geom *geom;                                                                                                   \
  const sk_mesh_hook *mesh_hook;

typedef struct sk_model {
  SK_MODEL_FIELDS
  /* Private below. */
  int refs; /* atomic */
  /* Appended: the "rootMotion" analyses made of this version (sk_rootframes:
   * at most SK_MODEL_ROOTFRAMES, each published once by compare-and-swap,
   * read with acquire loads, freed with the model) and the budget their
   * bytes are counted in (borrowed, or NULL: sk_model_set_budget). */
  struct sk_rootframes *rootframes[16];
  struct sk_budget *budget;
} sk_model;
#define SK_MODEL_ROOTFRAMES 16

/* Clips whose samplers are built by sk_model_create itself, on the thread
 * that publishes: bigger ones got theirs where they were parsed (the
 * daemon's pool) or none. */
#define SK_MODEL_SHARE_INLINE (256u << 10)

/* Builds the published form from `skel` and `anim` (both stolen, on
 * failure too; `anim` may be NULL) and copies of `mesh_json` and
 * `skins_json` (may be NULL): prepares the skeleton (sk_skeleton_prepare),
 * builds the rig, the stored pose's matrices and their text (optional:
 * left NULL/empty without memory), the default mesh from `mesh_json`, and
 * the clips' shared sampler when they are small. *out is new, with one
 * reference. 0, or SK_ENOMEM (*out NULL). */
int sk_model_create(sk_skeleton *skel, sk_anim *anim, const char *mesh_json, const char *skins_json, int32_t skin,
                    sk_model **out);
/* Gives *m a reference to `geom` (taken here; may be NULL) and the mesh
 * wing's writer `hook` (may be NULL). Before the model is published. */
void sk_model_set_geom(sk_model *m, sk_geom *geom, const sk_mesh_hook *hook);

/* Gives *m the budget (borrowed; may be NULL) that what it derives on use
 * (the rootMotion analyses, and its clips' additive keys of references
 * other than 0: sk_anim_memo) is counted in. Before the model is
 * published. */
void sk_model_set_budget(sk_model *m, struct sk_budget *budget);

/* Adds a reference (any thread). Returns `m`. */
sk_model *sk_model_ref(sk_model *m);
/* Drops a reference (any thread); the last one frees the model and what
 * it owns. NULL is fine. */
void sk_model_unref(sk_model *m);

#endif
