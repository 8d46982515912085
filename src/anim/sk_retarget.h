/* sk_retarget: a glTF clip of one skeleton retargeted onto another skeleton
 * (other bone names, counts and rest poses) as Babylon.js 9.34's
 * AnimatorAvatar.retargetAnimationGroup does it (Animations/animatorAvatar.js),
 * with the target loaded from glTF: its bones' linked TransformNodes are
 * what the new clip drives.
 *
 * What Babylon does, and so what this does:
 *  - the target's bones return to rest (bones with a slot take the
 *    decomposed rest matrix; slotless bones keep their glTF TRS), the
 *    source's nodes stay at their glTF TRS; world matrices are the local
 *    matrices composed up the parents and the nodes `above` the skeleton
 *    (up to and including `__root__`), every product rounded to float;
 *  - each channel of the source clip goes to the target bone named as the
 *    source bone, or as mapNodeNames maps it; channels without one are
 *    dropped (Babylon warns and removes them);
 *  - retargetAnimationKeys: every key becomes, for rotation, position or
 *    scaling, decompose(Wt · Ws⁻¹ · L(key) · Ps · Pt⁻¹) with L the source
 *    node's rest TRS holding the key, W the nodes' and P their parents'
 *    world matrices (row-vector order as Babylon multiplies); tangents are
 *    kept as they are;
 *  - fixAnimations: a rotation key nearly orthogonal to the one before
 *    (|dot| < 0.001) copies it, and the next key is skipped;
 *  - fixRootPosition / fixGroundReference (need groundReferenceNodeName):
 *    the root's position keys follow the source root's world travel times
 *    the ratio of the two root-to-ground heights, and the ground reference
 *    is kept at the source's height on the vertical axis, playing both
 *    clips key frame by key frame.
 * Keys keep Babylon's doubles (values64), so the clip plays as Babylon plays
 * the group it returns: frame = time * 60, each channel clamped to its keys.
 * Not modelled: morph-target ("influence") channels (glTF clips here carry
 * none) and fixGroundReferenceDynamicRefNode (refused). */
#ifndef SK_RETARGET_H
#define SK_RETARGET_H

#include <stdbool.h>
#include <stddef.h>

#include "sk_anim.h"
#include "sk_buf.h"
#include "sk_error.h"
#include "sk_skeleton.h"

/* One side: a glTF skeleton, its clips (rest TRS in a->rest, the scene's
 * nodes in a->nodes) and the nodes above its root, nearest first,
 * `__root__` last (above_count * SK_ANIM_TRS doubles: position, rotation
 * quaternion, scaling), with their names (above_names, may be NULL: only
 * read without a->nodes). A target may also be a Babylon-format skeleton
 * (a NULL or a->babylon, nothing above): bones without transform nodes,
 * found by name, their final matrices at rest the world. */
typedef struct sk_retarget_side {
  const sk_skeleton *s;
  const sk_anim *a;
  const double *above;
  const char *const *above_names;
  size_t above_count;
} sk_retarget_side;

/* IRetargetOptions, Babylon's names and defaults (sk_retarget_opts_default). */
typedef struct sk_retarget_opts {
  const char *const *map_from; /* mapNodeNames: source name -> target name */
  const char *const *map_to;
  size_t map_count;
  const char *animation_group_name; /* NULL: the source clip's name */
  bool fix_animations;              /* false */
  bool check_hierarchy;             /* false */
  bool retarget_animation_keys;     /* true */
  bool fix_root_position;           /* true */
  bool fix_ground_reference;        /* false */
  bool fix_ground_reference_dynamic_ref_node; /* false; true is refused */
  const char *root_node_name;             /* source naming; NULL: the target's root */
  const char *ground_reference_node_name; /* source naming; NULL: no root fixing */
  int ground_reference_vertical_axis;     /* -1: deduced, 0 X, 1 Y, 2 Z */
} sk_retarget_opts;

void sk_retarget_opts_default(sk_retarget_opts *o);

/* Work units (matrix products) retargeting clip `clip` costs: keys times
 * a few products, plus for root fixing each root key times both skeletons'
 * bones and channels. SIZE_MAX on overflow. */
size_t sk_retarget_cost(const sk_retarget_side *src, size_t clip, const sk_retarget_side *dst,
                        const sk_retarget_opts *o);

/* The retargeted clip into *out (owned by the caller: sk_retarget_clip_free,
 * or moved into an sk_anim by sk_retarget_append). Errors, pointers under
 * "/retarget": a mapNodeNames entry whose source name is not a source bone
 * or whose target is not a target bone (SK_EUNKNOWN,
 * /retarget/mapNodeNames/<name>); no channel reaching a target bone (no
 * common root: SK_EUNKNOWN at /retarget/mapNodeNames, or "" without a map);
 * rootNodeName / groundReferenceNodeName given but not an animated source
 * bone with a target counterpart, or a root without position keys
 * (SK_EUNKNOWN at their pointer, where Babylon skips the fixing with a
 * warning); fixGroundReferenceDynamicRefNode (SK_EUNSUPPORTED); root or
 * ground fixing onto a Babylon-format target (SK_EUNSUPPORTED at
 * /retarget/groundReferenceNodeName); Babylon-format source clips
 * (SK_EUNSUPPORTED at /from); SK_ENOMEM. */
int sk_retarget_clip(const sk_retarget_side *src, size_t clip, const sk_retarget_side *dst,
                     const sk_retarget_opts *o, sk_anim_clip *out, sk_error *err);
void sk_retarget_clip_free(sk_anim_clip *c);

/* *out = new clips: a copy of `a`'s clips with `clip` appended (moved in:
 * *clip is zeroed), without `a`'s derived data (the caller builds it as at
 * upload). SK_EDUPLICATE (nothing moved) when a clip has that name;
 * SK_ENOMEM. */
int sk_retarget_append(const sk_anim *a, sk_anim_clip *clip, sk_anim **out, sk_error *err);

/* The retargeted clips of glTF clips `a` (those with values64 keys, which
 * a glTF file never gives) in the data directory's byte form
 * (proto/record.md, "clips part"), appended to `out`; nothing when there
 * are none. 0 or SK_ENOMEM. */
int sk_retarget_clips_encode(const sk_anim *a, sk_strbuf *out);
/* *out = new clips: `a`'s with the encoded clips appended, every field
 * checked (bones of `a`, paths, key counts, finite non-decreasing frames,
 * unique names): SK_EFORMAT for anything else, SK_ENOMEM. */
int sk_retarget_clips_decode(const sk_anim *a, const void *data, size_t len, sk_anim **out);

#endif
