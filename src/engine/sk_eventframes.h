/* sk_eventframes: "events" on the pose forms.
 *
 * A pose object with "animation" (one clip, no "layers") may carry
 * "events": true. Its poses are then the steps of a Babylon playback of
 * the clip from its start (sk_events: each pose's time gives the current
 * frame as RuntimeAnimation.animate computes it at speed 1; without
 * loop, the step that reaches the clip's end is the last that fires, as
 * the animatable stops there),
 * and each pose's answer lists the clip's events fired at that step, in
 * Babylon's firing order: JSON "events": [{"name", "frame"}, ...];
 * binary, after everything else, a u32 count then that many u32 indices
 * into the clip's event table (its "events" in the clip's detail), little
 * endian. "frames": [s, e] plays the steps 0 .. s - 1 first without
 * answering them, so any chunk of a bake answers as the whole bake. */
#ifndef SK_EVENTFRAMES_H
#define SK_EVENTFRAMES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_anim.h"
#include "sk_buf.h"
#include "sk_error.h"

/* Checks the "events" member of pose object `j` (at `ptr`): *clip the
 * clip's index with "events": true, -1 with false, or when the clip is
 * unknown (the sampler refuses it). Errors: SK_ETYPE (not a boolean),
 * SK_ERANGE (no "animation", or "layers"), SK_EUNSUPPORTED (Babylon would
 * step an animation with events over other frames: one that ends before
 * its range, a glTF clip whose keys start after 0), at <ptr>/events. */
int sk_eventframes_parse(const sk_anim *anim, const json_t *j, const char *ptr, long *clip, sk_error *err);

/* The events each of the n poses of `j` fires: *idx new (free), indices
 * into clip `clip`'s table, pose i's at idx[off[i] .. off[i + 1]) (off has
 * n + 1 entries, the caller's). 0 or SK_ENOMEM. */
int sk_eventframes_apply(const sk_anim *anim, long clip, const json_t *j, size_t n, uint32_t **idx, size_t *off);

/* Work units "events" adds to pose object `j` (the steps played, prefix
 * of "frames" included, times the clip's events), 0 without it. */
uint64_t sk_eventframes_cost(const sk_anim *anim, const json_t *j);

/* Bytes a pose's events add to its answer: JSON a bound, binary exact. */
size_t sk_eventframes_answer_bytes(size_t fired, bool json);

/* The member "events":[...] of one pose (appended). */
int sk_eventframes_write_json(const sk_events *t, const uint32_t *idx, size_t n, sk_strbuf *out);
/* The binary part: u32 n, then the n indices (appended). */
int sk_eventframes_write_binary(const uint32_t *idx, size_t n, sk_strbuf *out);

#endif
