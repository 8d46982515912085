/* sk_pose_frames: the frame times of a pose request that asks for a frame
 * range, in one of three forms:
 *   "times": [seconds, ...]                    frame k at times[k]
 *   "from": S, "to": E, "fps": F               frame k at S + k / F, E included
 *   "frames": [start, end], "fps": F           frame k at k / F, k in [start, end)
 * The index form is what splits well: frame k's time is one double
 * division whatever chunk, resume or machine asks for it, so any split of
 * [0, N) gives the bytes of one whole bake and of the single pose at
 * "time": k / F. S + j / F with S = k0 / F is not always k / F (a 10 000-frame
 * Fox bake in from/to chunks differed on 39 frames), so from/to keeps its
 * meaning for whole ranges and "frames" is the form to chunk. */
#ifndef SK_POSE_FRAMES_H
#define SK_POSE_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sk_error.h"

/* A frame index past this is not exact as a double. */
#define SK_POSE_FRAMES_MAX_INDEX (INT64_C(1) << 53)

/* The frames pose object `j` asks for, as sk_pose_frames_parse gives them:
 * 1 unless "times", a valid "from"/"to"/"fps" or a valid "frames"/"fps"
 * is given (anything the parser refuses counts 1: it refuses it first).
 * Sets *key to the field a limit's error names. For costing before any
 * parse. */
uint64_t sk_pose_frames_count(const json_t *j, const char **key);

/* The frame times pose object `j` asks for: *times new (n of them) for a
 * range, NULL with *n = 1 when it names none. `has_time`: the pose gives
 * a single "time" (refused with a range). Errors name the field under
 * `ptr`: SK_ETYPE (a wrong type, two forms at once), SK_EMISSING,
 * SK_ERANGE (fps not positive, to before from, a negative or reversed
 * "frames"), SK_ETOOBIG (over SK_POSE_MAX_FRAMES), SK_ENOMEM. */
int sk_pose_frames_parse(const json_t *j, const char *ptr, bool has_time, double **times, size_t *n, sk_error *err);

#endif
