/* sk_cost: what a pose request will cost, computed before any of it is
 * done, and the limits that refuse it.
 *
 * Clip work grows with frames x layers x channels, evaluation with poses x
 * bones, and the answer with poses x matrices: none of these is visible in
 * the body's size (a 52-byte frame range on a real asset once allocated
 * 600 MB; a 3 MB glTF with 60 000 channels on one joint made one request
 * run 30 s on the loop thread). So the route asks this module first, from
 * the request as parsed by jansson and the stored skeleton's counts, and
 * refuses with SK_ETOOBIG (413) and a JSON pointer to the field before any
 * sampling, evaluation or answer allocation.
 *
 * Work is counted in units of about one bone matrix of the scalar core
 * (~150 ns on a loaded 2-core AMD EPYC):
 *   sampling   frames x sum over layers of (channels the clip drives + bones)
 *              (one channel sample, binary search and lerp/slerp, ~50-80 ns,
 *              and one bone's TRS blend and override, are each counted as one)
 *   evaluation poses x (bones + 1)
 *   encoding   4 per matrix written as JSON (~650 ns), 0 for binary
 * Answer bytes are exact for binary formats and an upper bound for JSON
 * (SK_NUMFMT_F32_MAX + 1 bytes a float).
 *
 * An additive layer also makes its clip's keys relative to its reference,
 * once per pose, unless the clips keep them (sk_anim_memo_source): kept
 * already, nothing; kept at their first use, once per request.
 *
 * No allocation; any thread; the clips' kept keys are read, never made. */
#ifndef SK_COST_H
#define SK_COST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_anim.h"
#include "sk_anim_memo.h"
#include "sk_answer.h"
#include "sk_error.h"
#include "sk_skeleton.h"

/* Zeroed fields take the defaults in brackets (sk_cost_limits_fill). */
typedef struct sk_cost_limits {
  uint64_t max_frames; /* frames one "times" or "from"/"to"/"fps" may give [1024] */
  uint64_t max_layers; /* layers of one pose [64] */
  uint64_t max_poses;  /* poses one request expands to (--max-batch) [1024] */
  uint64_t max_work;   /* work units of one request [16777216] */
  uint64_t max_answer; /* bytes of one answer [128 MiB] */
  uint64_t loop_work;  /* sampling units the loop thread may do for one
                          request; more goes to the pool [10000, ~1.5 ms] */
} sk_cost_limits;

#define SK_COST_MAX_FRAMES 1024
#define SK_COST_MAX_LAYERS 64
#define SK_COST_MAX_WORK (1u << 24)
#define SK_COST_MAX_ANSWER (128u << 20)
#define SK_COST_LOOP_WORK 10000
/* Units per matrix written as JSON. */
#define SK_COST_JSON_MATRIX 4

/* Fills zeroed fields of `l` with the defaults. */
void sk_cost_limits_fill(sk_cost_limits *l);

/* A request's cost so far; start from all zeros and add poses to it. */
typedef struct sk_cost {
  uint64_t poses;  /* poses the request expands to */
  uint64_t sample; /* sampling and blending units */
  uint64_t eval;   /* evaluation and encoding units */
  uint64_t answer; /* answer bytes (bound for JSON, exact for binary) */
  /* The additive keys this request's first use will leave kept, charged
   * at that pose only: (clip, reference) and the room they take. */
  size_t memo_n;
  struct {
    size_t clip;
    double reference;
  } memo[SK_ANIM_MEMO_SLOTS];
  sk_anim_memo_pending memo_room;
} sk_cost;

/* Answer formats: sk_answer.h's SK_FMT_*. */

/* Adds one pose object `j` (the body of /pose, or /poses/<i>, at pointer
 * `ptr`) for skeleton `s` with clips `anim` (may be NULL) answered in
 * `fmt`, and checks every limit. Lenient on shape: whatever is malformed
 * counts as the parser will take it or is left to the parser to refuse.
 * Returns 0, or SK_ETOOBIG with `err` naming the field and the flag:
 * <ptr>/times or <ptr>/fps (frames), <ptr>/layers, <ptr> (poses, work,
 * answer). `c` is updated either way. */
int sk_cost_add_pose_json(sk_cost *c, const sk_cost_limits *l, const sk_skeleton *s, const sk_anim *anim,
                          const json_t *j, const char *ptr, int fmt, sk_error *err);

/* Adds `n` poses that ask for `outputs` (SK_OUT_* mask) matrices each, with
 * no clip work, and checks the limits (SK_ETOOBIG at `ptr`). */
int sk_cost_add_poses(sk_cost *c, const sk_cost_limits *l, const sk_skeleton *s, uint64_t n, unsigned outputs, int fmt,
                      const char *ptr, sk_error *err);

/* Total work units of `c`. */
uint64_t sk_cost_work(const sk_cost *c);

/* True when the loop thread may parse the request itself: its clip
 * sampling is within loop_work. Where evaluation runs is the batch path's
 * own decision (--inline-limit, already below this bound by default). */
int sk_cost_inline(const sk_cost *c, const sk_cost_limits *l);

#endif
