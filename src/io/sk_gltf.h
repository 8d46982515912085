/* sk_gltf: glTF 2.0 import (GLB or JSON with data: URIs) into an
 * sk_skeleton and its sk_anim clips, as Babylon.js's glTF loader
 * (@babylonjs/loaders 9.28) builds them.
 *
 * Input is hostile: the container, every index, offset, length, stride and
 * count is checked against what it points into before any byte is read, and
 * every failure is SK_EFORMAT (HTTP 422) with a JSON pointer into the glTF
 * JSON ("/accessors/7/byteOffset", "/skins/0/joints/3"), or "" for the GLB
 * container itself. Sizes beyond SK_GLTF_MAX_FLOATS are SK_ETOOBIG.
 *
 * Skeleton (Babylon's _loadBones/_loadBone/_updateBoneMatrices):
 *  - the skeleton root is skin.skeleton, else the joints' nearest common
 *    ancestor; for each joint in skin.joints order, its ancestors up to that
 *    root become bones first (root first), then the joint. Non-joint nodes on
 *    those paths are bones with index -1; nodes above the root are not bones.
 *    Bone index = position in skin.joints.
 *  - bind = inverse(IBM[index]) (identity without IBMs or for index -1),
 *    times the parent's absolute inverse bind, so absolute inverse bind =
 *    IBM up to float rounding.
 *  - local = Compose(node scale, rotation, translation): the bone is linked
 *    to its node and Skeleton.prepare() copies the node's TRS into it; a
 *    node "matrix" is decomposed (Matrix.decompose) as the loader's
 *    TransformNode does. The skinned mesh node's transform and the nodes
 *    above the root are not part of the matrices (Babylon applies them
 *    through the mesh's world matrix).
 *  - names: node.name, or "joint<node index>" without one (Babylon's
 *    names); a name already taken by an earlier bone gets "#<node index>"
 *    appended (then "'" until unique), so names stay unique and stable. */
#ifndef SK_GLTF_H
#define SK_GLTF_H

#include <jansson.h>
#include <stddef.h>

#include "sk_anim.h"
#include "sk_error.h"
#include "sk_skeleton.h"

/* Bound on the floats one accessor may expand to (64 MiB of floats); an
 * accessor without a bufferView could otherwise claim any count. */
#define SK_GLTF_MAX_FLOATS (1u << 24)
/* Bound on the values all accessor reads of one file may produce, so that
 * thousands of channels sharing one large sampler cannot multiply the work. */
#define SK_GLTF_READ_BUDGET (1u << 26)

typedef struct sk_gltf sk_gltf;

/* Parses a GLB (by its "glTF" magic) or a glTF JSON document. `data` is
 * only read during the call. On success *out is new (sk_gltf_destroy). */
int sk_gltf_parse(const void *data, size_t len, sk_gltf **out, sk_error *err);
void sk_gltf_destroy(sk_gltf *g);
/* Upper bound, in bytes, of what sk_gltf_parse(data, len) allocates: the
 * JSON tree of the document or of the GLB JSON chunk (sk_json_tree_bound),
 * every data: URI decoded, the BIN chunk's copies and the node table.
 * Reads the bytes only; what a memory budget reserves before the parse. */
size_t sk_gltf_parse_bound(const void *data, size_t len);

/* The document's JSON (borrowed, valid while `g` lives). */
const json_t *sk_gltf_json(const sk_gltf *g);

/* Number of skins in the file. */
size_t sk_gltf_skin_count(const sk_gltf *g);

/* Resolves a skin selector: NULL or "" = skin 0; a decimal index; or a skin
 * name (names win over indices). SK_ENOTFOUND (pointer "/skins") if none. */
int sk_gltf_find_skin(const sk_gltf *g, const char *selector, size_t *skin, sk_error *err);

/* Reads accessor `index` as floats: normalized integers mapped per the
 * glTF spec, byteStride honoured, sparse substitution applied, absent
 * bufferView = zeros. *out is new (free()), *count elements of *ncomp
 * components (MAT4: 16). */
int sk_gltf_read_accessor(sk_gltf *g, size_t index, float **out, size_t *count, size_t *ncomp, sk_error *err);

/* Builds the skeleton of skin `skin` and every animation of the file as
 * clips on it. `max_bones` bounds the bone count (0: SK_SKELETON_MAX_BONES;
 * more is SK_ETOOBIG). On success *skeleton and *anim are new. */
int sk_gltf_load_skin(sk_gltf *g, size_t skin, size_t max_bones, sk_skeleton **skeleton, sk_anim **anim, sk_error *err);

/* parse + find_skin + load_skin in one call: what PUT/POST
 * model/gltf-binary and model/gltf+json bodies need (`skin_selector` is the
 * ?skin= value or NULL). */
int sk_gltf_import(const void *data, size_t len, const char *skin_selector, size_t max_bones, sk_skeleton **skeleton,
                   sk_anim **anim, sk_error *err);

/* Default bound on what one glTF upload may build in memory (skeleton,
 * clips and the load's transient buffers), from sk_gltf_estimate. */
#define SK_GLTF_MAX_SKELETON_BYTES (64u << 20)

/* Upper bound, in bytes, of what sk_gltf_load_skin(g, skin) allocates,
 * computed from the file's counts alone (nodes, accessor counts x
 * components, channels, keys) before anything is allocated: an accessor
 * without a bufferView counts its `count` like any other. With `limit` > 0,
 * stops with SK_ETOOBIG (413) and a pointer to the field that took the
 * total over it ("/accessors/3/count", "/animations/0/channels", "/nodes"),
 * *bytes then holding the total so far. Never allocates. */
int sk_gltf_estimate(const sk_gltf *g, size_t skin, size_t limit, size_t *bytes, sk_error *err);
/* The same without a limit, for a memory budget: SIZE_MAX if unreadable. */
size_t sk_gltf_estimate_bytes(const sk_gltf *g, size_t skin);

/* sk_gltf_import that refuses, before building anything, a skin whose
 * estimate is over `max_bytes` (0: no bound). *estimate receives the
 * estimate (0 when parsing failed before it). */
int sk_gltf_import_bounded(const void *data, size_t len, const char *skin_selector, size_t max_bones,
                           size_t max_bytes, size_t *estimate, sk_skeleton **skeleton, sk_anim **anim,
                           sk_error *err);

#endif
