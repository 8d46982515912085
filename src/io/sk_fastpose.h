/* sk_fastpose: a no-DOM parser for the daemon's hot request bodies (a pose,
 * a batch of poses), because building jansson objects was about 70 % of the
 * CPU of a full-frame pose request (measured with perf: malloc, strtod and
 * jansson itself).
 *
 * It accepts only the common, well-formed case and produces exactly what
 * sk_json_load + sk_pose_parse produce for it (same doubles: integers as
 * jansson reads them, reals correctly rounded; same overrides in key
 * order). Anything else -- any error, escape, non-ASCII name, duplicate
 * key, number jansson would reject, field it does not know -- makes it
 * answer SK_FASTPOSE_DECLINE and the caller parses with jansson, which
 * produces the exact error with line, column and pointer. So the fast path
 * never decides an error. */
#ifndef SK_FASTPOSE_H
#define SK_FASTPOSE_H

#include <stddef.h>

#include "sk_pose.h"
#include "sk_skeleton.h"

/* Not an error: "use the slow path". */
#define SK_FASTPOSE_DECLINE 1

/* Parses one pose object (the whole of [text, text+len), surrounding
 * whitespace allowed) for `s`. Returns 0 (`pose` filled; release with
 * sk_pose_close), SK_FASTPOSE_DECLINE (pose untouched), or SK_ENOMEM. */
int sk_fastpose_parse(const sk_skeleton *s, const char *text, size_t len, sk_pose *pose);

/* Parses {"poses": [pose, ...]} with at most `max` poses. On 0, *poses is
 * a new array of *n poses whose overrides share one block, owned by the
 * first pose (the others have overrides_shared): release each with
 * sk_pose_close, the first last or all once none is read any more, then
 * free() the array.
 * SK_FASTPOSE_DECLINE for anything else (including more than `max`). */
int sk_fastpose_parse_batch(const sk_skeleton *s, const char *text, size_t len, size_t max, sk_pose **poses,
                            size_t *n);

#endif
