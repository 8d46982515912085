/* sk_clipbounds: the exact box over every frame of one clip at `fps`
 * frames a second (GET /v1/skeletons/{id}/animations/{clip}/bounds), per
 * primitive and overall:
 *
 *   {"animation": name, "fps": F, "frames": N,
 *    "min": [x, y, z], "max": [x, y, z],
 *    "bounds": [{"primitive": "/meshes/M/primitives/P", "min", "max"}]}
 *
 * The frames are those of the pose range {"animation", "from": 0, "to":
 * duration, "fps"}, posed by the same pipeline (sk_poseops, sk_frames), so
 * each box is the union of that range answer's "bounds". The model is
 * immutable: any thread. */
#ifndef SK_CLIPBOUNDS_H
#define SK_CLIPBOUNDS_H

#include <stddef.h>
#include <stdint.h>

#include "sk_buf.h"
#include "sk_cost.h"
#include "sk_error.h"
#include "sk_model.h"

/* Highest fps taken: a frame a millisecond. */
#define SK_CLIPBOUNDS_FPS_MAX 1000.0

/* Checks what a request for clip `clip` of `e` at `fps` costs before any
 * work: frames (at most floor(duration x fps) + 2) against l->max_frames,
 * frames x (bones + vertices) against l->max_work (SK_ETOOBIG, err naming
 * the limit); a model without geometry, or fps not in (0, 1000]: SK_ERANGE
 * at "fps" or "". *bound gets the bytes the answer and the work hold. */
int sk_clipbounds_check(const sk_model *e, size_t clip, double fps, const sk_cost_limits *l, size_t *bound,
                        sk_error *err);

/* Poses every frame and appends the answer object to `out`. 0, SK_ENOMEM,
 * SK_ENOTFINITE (a frame's box would not be finite), or the pipeline's
 * errors (err set). */
int sk_clipbounds_write(const sk_model *e, size_t clip, double fps, sk_strbuf *out, sk_error *err);

#endif
