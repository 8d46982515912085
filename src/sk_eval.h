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
} sk_pose;

/* Parses a pose object ({"bones"?, "initialSkinMatrix"?, "output"?}) for `s`.
 * Keys in `extra_keys` (NULL-terminated, may be NULL) are allowed and
 * ignored; any other key is an error. On success `pose` owns its overrides:
 * release with sk_pose_close(). */
int sk_pose_parse(const sk_skeleton *s, const json_t *j, const char *ptr, const char *const *extra_keys, sk_pose *pose,
                  sk_error *err);
void sk_pose_close(sk_pose *pose);

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
/* Appends the JSON result object of the last sk_pose_evaluate(). */
int sk_pose_write_json(const sk_skeleton *s, const sk_pose *pose, const sk_eval_buffers *buf, sk_strbuf *out);

/* Runs a whole case and appends its result JSON (no trailing newline) to
 * `out`. Errors carry a pointer into the case document. */
int sk_eval_case(const json_t *c, sk_strbuf *out, sk_error *err);

/* Appends ["name", ...] in bones[] order. */
int sk_eval_write_order(const sk_skeleton *s, sk_strbuf *out);

#endif
