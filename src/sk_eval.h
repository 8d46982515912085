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

/* Appends ["name", ...] in bones[] order. */
int sk_eval_write_order(const sk_skeleton *s, sk_strbuf *out);

#endif
