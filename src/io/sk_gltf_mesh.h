/* sk_gltf_mesh: what a glTF file says about a skin beyond its bones: the
 * skinned mesh's default TransformNode chain (Babylon's `tNode` for
 * world-space ops and the "world"/"positions" outputs) and the list of the
 * file's skins (discovery without uploading once per skin).
 *
 * The chain is the one @babylonjs/loaders 9.28 builds in a left-handed scene
 * (its default) for the first mesh of the loaded scene (glTF "scene", else
 * scene 0) that uses the skin, in node index order (the loader's
 * `_getMeshes()` order, so what `scene.meshes.find(m => m.skeleton === sk)`
 * returns):
 *  - the skinned mesh itself: identity, Euler rotation (0,0,0): the loader
 *    ignores a skinned node's own TRS (glTF spec, skins, second
 *    implementation note); with several primitives, primitive 0's mesh,
 *    then the node's TransformNode (identity too);
 *  - its parent: the Babylon node of the skeleton root's glTF parent
 *    (skin.skeleton, else the joints' nearest common ancestor), or the
 *    skinned node's own parent when that parent is the skinned node itself,
 *    or `__root__` when the skin has no common root;
 *  - every node above: its glTF TRS (a "matrix" decomposed from float32 as
 *    Matrix.decompose does), rotationQuaternion set; a node with a camera
 *    gets scaling.x = -1 (the loader's handedness fix for cameras); a
 *    skinned node's own TRS is ignored;
 *  - last, `__root__`: rotationQuaternion (0,1,0,0), scaling (1,1,-1), the
 *    right-to-left-handed conversion.
 * As JSON it is sk_ops_parse_mesh's format ({"position", "rotation" |
 * "rotationQuaternion", "scaling", "parent"}), so a client can send it back
 * and the composed world matrix is the same bits. */
#ifndef SK_GLTF_MESH_H
#define SK_GLTF_MESH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "sk_anim.h"
#include "sk_budget.h"
#include "sk_error.h"
#include "sk_geom.h"
#include "sk_gltf.h"
#include "sk_skeleton.h"

/* Skins listed in full in a skins answer; past it only the count. */
#define SK_GLTF_SKINS_LISTED 256

/* The default mesh chain of skin `skin` as new JSON (*out; NULL when no
 * mesh of the loaded scene uses the skin, or when the chain is deeper than
 * SK_MESH_MAX_DEPTH). 0 or SK_ENOMEM. The chain may still be singular (a
 * zero scale above the mesh): sk_ops_parse_mesh says so. */
int sk_gltf_default_mesh(const sk_gltf *g, size_t skin, json_t **out);

/* The file's skins as new JSON: [{"index", "name" (null without one),
 * "joints" (count), "meshes" (names of the loaded scene's nodes whose
 * mesh uses the skin, as Babylon names them)}], at most
 * SK_GLTF_SKINS_LISTED entries. 0 or SK_ENOMEM. */
int sk_gltf_skins_json(const sk_gltf *g, json_t **out);

/* What an upload or a reload keeps of a glTF file besides the skeleton. */
typedef struct sk_gltf_extra {
  size_t skin;     /* the skin selected */
  char *mesh_json; /* new (free()), compact; NULL: no default mesh */
  char *skins_json; /* new (free()), compact skins list; NULL unless asked */
  sk_geom *geom;    /* a reference (sk_geom_unref), or NULL: the skin's skinned primitives */
} sk_gltf_extra;

void sk_gltf_extra_clear(sk_gltf_extra *x);

/* sk_gltf_import_bounded that also fills `extra` (the skins list only when
 * `want_skins`; the geometry, sk_geom_build, counted in *estimate and
 * against `max_bytes` with the skeleton, sk_geom_estimate). On failure
 * `extra` is cleared. */
int sk_gltf_import_extra(const void *data, size_t len, const char *skin_selector, size_t max_bones,
                         size_t max_bytes, size_t *estimate, bool want_skins, sk_skeleton **skeleton,
                         sk_anim **anim, sk_gltf_extra *extra, sk_error *err);

/* sk_gltf_import_extra inside a memory budget (borrowed; NULL: not
 * counted): the parse's bound (sk_gltf_parse_bound) is reserved before the
 * parse and the skin's estimate before the build, SK_EBUSY (nothing built)
 * when either does not fit now; both are given back before it returns.
 * For read-backs of stored records, where the caller counts the result. */
int sk_gltf_import_budgeted(sk_budget *budget, const void *data, size_t len, const char *skin_selector,
                            size_t max_bones, size_t max_bytes, size_t *estimate, bool want_skins,
                            sk_skeleton **skeleton, sk_anim **anim, sk_gltf_extra *extra, sk_error *err);

/* The mesh part alone for an already parsed file (the routes' import). */
int sk_gltf_extra_fill(const sk_gltf *g, size_t skin, bool want_skins, sk_gltf_extra *extra);

/* The nodes above the skeleton root from a default mesh chain's compact
 * JSON (sk_gltf_default_mesh's text; NULL: none), nearest the skeleton
 * first: every node with a rotationQuaternion (the chain's Euler-rotated
 * head is the skinned mesh, not an ancestor of the bones), `__root__` last
 * when `with_root` (retargeting plays in world space; root motion stops
 * below `__root__`, character space itself). *above is new (*n x
 * SK_ANIM_TRS doubles: translation, quaternion, scaling). 0 or SK_ENOMEM. */
int sk_gltf_mesh_chain_above(const char *mesh_json, bool with_root, double **above, size_t *n);

#endif
