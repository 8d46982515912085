/* sk_eval: the case format of `skinner eval` and the pose requests the
 * daemon answers, on top of sk_skeleton and sk_json.
 *
 * A case is {"skeleton": {...}, "ops": [...]}; the result is
 * {"order": [names parent-first], "results": [...]}, one entry per "pose"
 * or "evaluate" op. See README.md and proto/ for the format. */
#ifndef SK_EVAL_H
#define SK_EVAL_H

#include <jansson.h>
#include <stdbool.h>

#include "sk_anim.h"
#include "sk_error.h"
#include "sk_numfmt.h"
#include "sk_skeleton.h"

/* A parsed pose: overrides on top of the skeleton's current locals. */
typedef struct sk_pose {
  sk_override *overrides; /* owned */
  size_t count;
  bool has_initial_skin;
  float initial_skin[16];
  unsigned output; /* SK_OUT_* mask */
  bool frame_range; /* from "times" or "from"/"to"/"fps" (any count, 1 included): answer as a range */
  /* `overrides` points into the first pose of its frame range, which owns
   * the range's one block (sk_pose_parse_anim): sk_pose_close leaves it, so
   * close the range's first pose last or all of them together (as
   * sk_pose_array_free and the routes' batches do). */
  bool overrides_shared;
} sk_pose;

/* Parses a pose object ({"bones"?, "initialSkinMatrix"?, "output"?}) for `s`.
 * Keys in `extra_keys` (NULL-terminated, may be NULL) are allowed and
 * ignored; any other key is an error. On success `pose` owns its overrides:
 * release with sk_pose_close(). */
int sk_pose_parse(const sk_skeleton *s, const json_t *j, const char *ptr, const char *const *extra_keys, sk_pose *pose,
                  sk_error *err);
void sk_pose_close(sk_pose *pose);

/* Poses that name animation clips (skeletons imported from glTF).
 *
 * The pose object may add, next to "bones"/"initialSkinMatrix"/"output":
 *   "animation": name | index, "time"?: seconds (0), "loop"?: bool (false)
 *   "layers": [{"animation", "time"?, "weight"? (1), "loop"?}, ...]
 *             (instead of "animation"; weights normalised, see sk_anim)
 *   "times": [seconds, ...]   or   "from", "to", "fps"   (with "animation"
 *             and no "time": one pose per frame, frame k at from + k/fps,
 *             up to and including `to`; with "layers": each layer's "time"
 *             is an offset added to the frame time, sk_sample_layer_time)
 * Every pose of a range has frame_range set, also when the range holds one
 * frame ("times": [t], or from == to): callers answer it as a range
 * ({"results": [...]}) whatever its count.
 * The clip's TRS for every bone becomes one override per bone (position,
 * rotationQuaternion, scaling: what Babylon's prepare() copies from the
 * linked nodes); "bones" entries apply on top (a "matrix" entry replaces the
 * bone's clip transform, TRS fields replace the matching clip fields). The
 * resulting poses are plain sk_pose values: sk_pose_evaluate and the batch
 * kernel take them as they take any pose. */
#define SK_POSE_MAX_FRAMES 100000
/* Bound on frames x bones of one request (overrides held at once). */
#define SK_POSE_MAX_FRAME_BONES (1u << 22)

/* Parses a pose object for `s` with clips `anim` (may be NULL: then any
 * animation key is SK_ENOTFOUND). *poses is a new array of *count poses:
 * 1, or one per frame for "times"/"from"-"to"-"fps". Release with
 * sk_pose_array_free(). Errors carry pointers below `ptr`: unknown clip
 * SK_ENOTFOUND, bad types SK_ETYPE, bad numbers SK_ERANGE/SK_ENOTFINITE,
 * too many frames SK_ETOOBIG. */
int sk_pose_parse_anim(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr,
                       const char *const *extra_keys, sk_pose **poses, size_t *count, sk_error *err);
/* Closes and frees an array from sk_pose_parse_anim. NULL is a no-op. */
void sk_pose_array_free(sk_pose *poses, size_t count);

/* Scratch and output buffers sized for one skeleton; owned by the caller,
 * reusable across poses of skeletons up to `bones` bones. */
typedef struct sk_eval_buffers {
  size_t bones;
  float *locals, *scratch, *final, *absolute, *local;
} sk_eval_buffers;
int sk_eval_buffers_init(sk_eval_buffers *b, size_t bones);
void sk_eval_buffers_close(sk_eval_buffers *b);

/* Evaluates `pose` on `s` without changing it, into `buf` (final always;
 * absolute and local when the pose asks). */
void sk_pose_evaluate(const sk_skeleton *s, const sk_pose *pose, sk_eval_buffers *buf);
/* Appends the JSON result object of the last sk_pose_evaluate(). final_ref
 * (may be NULL): the text of matrices the final ones often equal (the
 * stored pose's), copied instead of printed where they do. */
int sk_pose_write_json(const sk_skeleton *s, const sk_pose *pose, const sk_eval_buffers *buf,
                       const sk_f32_text *final_ref, sk_strbuf *out);

/* Runs a whole case and appends its result JSON (no trailing newline) to
 * `out`. Errors carry a pointer into the case document. A "skeleton" of
 * the form {"gltf": "path", "skin"?: index | "name"} is imported from that
 * file (sk_gltf); its path is taken relative to the current directory. */
int sk_eval_case(const json_t *c, sk_strbuf *out, sk_error *err);
/* Same, with a relative "gltf" path taken relative to `base_dir` (NULL:
 * the current directory): `skinner eval FILE` passes FILE's directory. */
int sk_eval_case_at(const json_t *c, const char *base_dir, sk_strbuf *out, sk_error *err);

/* Appends ["name", ...] in bones[] order. */
int sk_eval_write_order(const sk_skeleton *s, sk_strbuf *out);

#endif
