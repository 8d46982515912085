/* sk_banim: Babylon.js's own animation format as sk_anim clips.
 *
 * Babylon's Skeleton.serialize() writes each bone's first Animation under
 * "animation" (Animation.serialize(): name, property, framePerSecond,
 * dataType, loopBehavior, keys [{frame, values}], ranges) and the
 * skeleton's animation ranges under "ranges" [{name, from, to}].
 * Skeleton.Parse reads them back; skeleton.beginAnimation(range) plays the
 * frames of a range and Animatable.goToFrame(frame) samples every bone's
 * animation at one frame. This module turns that into sk_anim clips:
 *
 *  - one clip per range, named by the range (first range of a name only:
 *    a repeated name is an error); no ranges: one unnamed clip
 *    "animation0" spanning frame 0 to the last key of any bone;
 *  - a clip's time t (seconds) plays frame from + t * fps, clamped to the
 *    range (wrapped into it with loop), fps being the first animation's
 *    framePerSecond; each channel is clamped to its own keys as
 *    RuntimeAnimation.goToFrame clamps it;
 *  - keys start at frame 0: RuntimeAnimation inserts a copy of the first key
 *    at frame 0 when the first key is later, and so do we;
 *  - properties "_matrix" (dataType 3: held at the key before the frame,
 *    Babylon's default AllowMatricesInterpolation = false), "position" and
 *    "scaling" (dataType 1, Vector3: lerp, or Hermite with the keys'
 *    tangents), "rotationQuaternion" (dataType 2: slerp, or Hermite +
 *    normalize); per-key interpolation 1 (STEP) holds;
 *  - a bone additionally accepts "animations" [Animation, ...] (all of them
 *    apply, later ones win), an extension for tools that keep several;
 *  - an Animation accepts "events" (sk_events_json.h): each range's
 *    clip holds the events of every bone's animations (sk_events).
 *
 * Errors point into the skeleton JSON (/bones/3/animation/keys/7/values). */
#ifndef SK_BANIM_H
#define SK_BANIM_H

#include <jansson.h>

#include "sk_anim.h"
#include "sk_error.h"
#include "sk_skeleton.h"

/* Bound on the keys (and channels) all clips hold together: each range
 * keeps a copy of the keys it can reach, so many ranges over long
 * animations would multiply a small body. Over it: SK_ETOOBIG at /ranges. */
#define SK_BANIM_MAX_KEYS (1 << 20)

/* Builds the clips of Babylon skeleton JSON `j` (pointer `ptr`) for `s`,
 * the skeleton built from that same JSON (bones are matched by name).
 * *out is new (sk_anim_destroy), or NULL when no bone has an animation.
 * Errors: SK_ETYPE, SK_EMISSING, SK_ERANGE, SK_ENOTFINITE, SK_ELENGTH,
 * SK_EUNKNOWN, SK_EDUPLICATE, SK_EUNSUPPORTED (a property or loop mode
 * skinnerd does not play), SK_ETOOBIG, SK_ENOMEM. */
int sk_banim_parse(const json_t *j, const char *ptr, const sk_skeleton *s, sk_anim **out, sk_error *err);

/* An upper bound of sk_anim_memory() of what sk_banim_parse would build
 * from `j` for `s`, found without building it (the keys each range can
 * reach are counted, as sk_banim_parse bounds them), so a caller can
 * refuse or reserve memory first. 0 when no bone has an animation. Fails
 * as sk_banim_parse would on the bones' animations and the ranges (not on
 * SK_BANIM_MAX_KEYS). */
int sk_banim_estimate(const json_t *j, const char *ptr, const sk_skeleton *s, size_t *bytes, sk_error *err);

/* Babylon's Skeleton.copyAnimationRange(source, name, rescaleAsRequired)
 * on serialized skeletons: *out is a new copy of `dst` (a valid Babylon
 * skeleton JSON) whose bones' "animation" get the "_matrix" keys of `src`'s
 * range `name` (frames in [from, to] of the source bone's animation range,
 * shifted by dst's highest key frame + 1; a bone without an animation gets
 * a "_matrix" one at the source's framePerSecond) and whose "ranges" end
 * with the shifted range. With `rescale`, Babylon's rescaleAsRequired: a
 * child bone whose length differs from its source bone's has its key
 * translations scaled by parent.length / sourceParent.length; a root, by
 * dimensionsAtRest / source dimensionsAtRest when both are given.
 * Where Babylon would return false (copying nothing or part, silently) this
 * refuses, pointing under `src_ptr` (the op's "from") or at `name_ptr`:
 * no such range (SK_ENOTFOUND), dst already has it (SK_EDUPLICATE), other
 * bone count or a bone missing by name (SK_EUNKNOWN), a source bone without
 * a "_matrix" animation holding the range or a dst animation that is not
 * "_matrix" (SK_EUNSUPPORTED), a rescale that would write NaN because a
 * parent has no length (SK_ERANGE). `src` is validated as a skeleton. */
int sk_banim_copy_range(const json_t *dst, const json_t *src, const char *src_ptr, const char *name,
                        const char *name_ptr, bool rescale, json_t **out, sk_error *err);

#endif
