/* sk_eval: the case format of `skinner eval`, on top of sk_pose (the pose
 * requests, also the daemon's: included here for the callers of both),
 * sk_frames (frame ranges and batches, as skinnerd runs them) and sk_json.
 *
 * A case is {"skeleton": {...}, "ops": [...]}; the result is
 * {"order": [names parent-first], "results": [...]}, one entry per "pose"
 * or "evaluate" op. See README.md and proto/ for the format. */
#ifndef SK_EVAL_H
#define SK_EVAL_H

#include <jansson.h>

#include "sk_pose.h"

/* Runs a whole case and appends its result JSON (no trailing newline) to
 * `out`. Errors carry a pointer into the case document. A "skeleton" of
 * the form {"gltf": "path", "skin"?: index | "name"} is imported from that
 * file (sk_gltf); its path is taken relative to the current directory. */
int sk_eval_case(const json_t *c, sk_strbuf *out, sk_error *err);
/* Same, with a relative "gltf" path taken relative to `base_dir` (NULL:
 * the current directory): `skinner eval FILE` passes FILE's directory. */
int sk_eval_case_at(const json_t *c, const char *base_dir, sk_strbuf *out, sk_error *err);

/* How sk_eval_case_opts answers. Zeroed: JSON, relative paths from the
 * current directory, everything in `out`. */
typedef struct sk_eval_opts {
  const char *base_dir; /* relative "gltf" paths are taken from here; NULL: the current directory */
  /* sk_frames.h's SK_FMT_JSON (0): the result object above. SK_FMT_F32 or
   * SK_FMT_MAT3X4: no JSON at all, only each result's final matrices, one
   * result after another, as skinnerd's application/octet-stream or
   * application/x-skinner-mat3x4 answer to the same pose carries them (the
   * same bytes). A result that would carry anything else (an "output" other
   * than "final", a "query" op) is refused at its field, as skinnerd refuses
   * it in a binary answer. */
  int fmt;
  /* May be NULL: takes out's bytes (then emptied) whenever it holds
   * SK_EVAL_FLUSH_BYTES or more after a whole result, and once at the end,
   * so that a long shot is never held whole (JSON or binary). Nonzero stops
   * the case: SK_EIO. What it took before an error stays taken. */
  int (*flush)(void *arg, const char *data, size_t len);
  void *flush_arg;
} sk_eval_opts;

#define SK_EVAL_FLUSH_BYTES ((size_t)1 << 20)

/* sk_eval_case_at with options (`o` NULL: zeroed). */
int sk_eval_case_opts(const json_t *c, const sk_eval_opts *o, sk_strbuf *out, sk_error *err);

#endif
