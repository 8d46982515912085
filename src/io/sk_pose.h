/* sk_pose: a pose request of one skeleton (overrides on top of its current
 * locals, an initial skin matrix, the outputs asked), parsed from JSON
 * (sk_pose.c; clips, layers and frame ranges in sk_pose_anim.c), evaluated
 * by the exact scalar core and written as one result object. The daemon's
 * routes, sk_frames and `skinner eval` (sk_eval) all take these values. */
#ifndef SK_POSE_H
#define SK_POSE_H

#include <jansson.h>
#include <stdbool.h>

#include "sk_anim.h"
#include "sk_error.h"
#include "sk_numfmt.h"
#include "sk_skeleton.h"

struct sk_pose_range;

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
  /* borrowed: Bone-API ops, mesh and world outputs of the daemon's pose
   * requests (sk_poseops); NULL for a plain pose */
  const struct sk_poseops *ops;
  /* Range form (sk_pose_parse_range): frame `frame` of `range`, whose
   * clip TRS stands for one override per bone (overrides NULL, count 0);
   * the pose holds one reference (sk_pose_close drops it). Code that reads
   * `overrides` takes sk_pose_materialize's view first. NULL otherwise. */
  struct sk_pose_range *range;
  size_t frame;
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
 *   or "frames": [start, end], "fps"   (frame k at k/fps for k in
 *             [start, end): the form to split, sk_pose_frames.h)
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
 * 1, or one per frame for "times", "from"-"to"-"fps" or "frames". Release with
 * sk_pose_array_free(). Errors carry pointers below `ptr`: unknown clip
 * SK_ENOTFOUND, bad types SK_ETYPE, bad numbers SK_ERANGE/SK_ENOTFINITE,
 * too many frames SK_ETOOBIG. */
int sk_pose_parse_anim(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr,
                       const char *const *extra_keys, sk_pose **poses, size_t *count, sk_error *err);
/* Which clip and times the poses of pose object `j` sample (what the mesh
 * outputs need for animated morph weights): after sk_pose_parse_anim
 * accepted `j`. clip -1 without "animation"; `layers` true with "layers"
 * (clip -1 then, the layers in `layer`); times[0..n) one per pose (new;
 * free), or NULL with n 1 and `time`. 0 or SK_ENOMEM. */
typedef struct sk_pose_clock {
  long clip;
  bool loop, layers;
  double time;
  double *times;
  size_t n;
  /* with "layers": each layer as parsed (new; free; time = the layer's
   * "time", an offset in a range), and whether one is additive, masked or
   * blended in ("blendIn") */
  sk_anim_layer *layer;
  size_t nlayers;
  bool additive;
  /* Appended: each layer's "speedRatio" (0: none), in layer's allocation
   * (freeing layer frees it). */
  double *speed;
} sk_pose_clock;
int sk_pose_anim_clock(const sk_anim *anim, const json_t *j, sk_pose_clock *out);

/* Closes and frees an array from sk_pose_parse_anim. NULL is a no-op. */
void sk_pose_array_free(sk_pose *poses, size_t count);

/* sk_pose_parse_anim, except that a frame range sk_sample takes (plain
 * glTF layers, at least 4 frames; "bones" on top without a "matrix") gives its poses
 * in range form (sk_pose.range, sk_pose_range.h): one shared sampler
 * context instead of B overrides a frame, sampled by sk_frames straight
 * into the kernel's rows. The daemon's sample step (sk_frames_sample_range);
 * consumers of `overrides` call sk_pose_materialize. Same errors. */
int sk_pose_parse_range(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr,
                        const char *const *extra_keys, sk_pose **poses, size_t *count, sk_error *err);
/* *view = *pose, with `overrides` built into scratch[0..B) when the pose
 * is in range form (the bytes sk_pose_parse_anim gives that frame). The
 * view borrows `scratch` and never owns anything: do not close it.
 * Samples through the range's context (one thread at a time). */
void sk_pose_materialize(const sk_pose *pose, sk_override *scratch, sk_pose *view);
/* Bytes `pose` holds for budgets: its override array as the parsers may
 * have grown it, or its share of its range (the shares of a range's frames
 * add up to at least what the range holds). */
size_t sk_pose_held_bytes(const sk_pose *pose);

/* Scratch and output buffers sized for one skeleton; owned by the caller,
 * reusable across poses of skeletons up to `bones` bones. */
typedef struct sk_pose_buffers {
  size_t bones;
  float *locals, *scratch, *final, *absolute, *local;
} sk_pose_buffers;
int sk_pose_buffers_init(sk_pose_buffers *b, size_t bones);
void sk_pose_buffers_close(sk_pose_buffers *b);

/* Evaluates `pose` on `s` without changing it, into `buf` (final always;
 * absolute and local when the pose asks). */
void sk_pose_evaluate(const sk_skeleton *s, const sk_pose *pose, sk_pose_buffers *buf);
/* Appends the JSON result object of the last sk_pose_evaluate(). final_ref
 * (may be NULL): the text of matrices the final ones often equal (the
 * stored pose's), copied instead of printed where they do. */
int sk_pose_write_json(const sk_skeleton *s, const sk_pose *pose, const sk_pose_buffers *buf,
                       const sk_f32_text *final_ref, sk_strbuf *out);

#endif
