/* sk_events: Babylon AnimationEvents of a clip, and which of them fire in
 * each frame interval of a range.
 *
 * Babylon 9.34 keeps an Animation's events sorted by frame (addEvent's
 * stable sort) and every RuntimeAnimation clones them. Each animate() step
 * computes the current frame, re-arms every event but the onlyOnce ones
 * when the frame went back (the loop wrapped), then fires, in table order,
 * each event not done yet with from <= frame <= currentFrame, marking it
 * done; an onlyOnce event is removed after it fires. A skeleton or group
 * runs its runtime animations one after the other, so a clip's table is
 * grouped: group by group (bone order), each by frame. Forward playback
 * only (frame range >= 0). Pure: no allocation but the table's. */
#ifndef SK_EVENTS_H
#define SK_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_error.h"

/* Events a clip holds, and the bytes a name holds with its NUL: what a
 * small body could make every range answer is bounded by them. */
#define SK_EVENTS_MAX 256
#define SK_EVENTS_NAME_MAX 64

typedef struct sk_event {
  char name[SK_EVENTS_NAME_MAX];
  double frame;
  bool only_once;
  uint32_t group; /* the runtime animation it belongs to (firing order) */
} sk_event;

typedef struct sk_events {
  size_t count;
  sk_event *ev; /* owned; sorted by (group, frame), stable */
} sk_events;

/* Adds an event after those of its group at or before `frame` (addEvent's
 * stable sort). Errors (pointer `ptr`): SK_ERANGE for an empty name or
 * one of SK_EVENTS_NAME_MAX bytes or more (at <ptr>/name), SK_ENOTFINITE
 * for a frame that is not finite (<ptr>/frame), SK_ETOOBIG past
 * SK_EVENTS_MAX (at ptr), SK_ENOMEM. */
int sk_events_add(sk_events *t, const char *name, double frame, bool only_once, uint32_t group, const char *ptr,
                  sk_error *err);
/* Appends all of `src` to `dst`, each in group `group` (a clip made of
 * several animations). Errors as sk_events_add, at ptr. */
int sk_events_merge(sk_events *dst, const sk_events *src, uint32_t group, const char *ptr, sk_error *err);
/* *dst = a copy of `src` (dst's old table not freed). 0 or SK_ENOMEM. */
int sk_events_copy(sk_events *dst, const sk_events *src);
void sk_events_free(sk_events *t);
size_t sk_events_memory(const sk_events *t);

/* A runtime animation's copy of the table: done and removed flags, and
 * the frame of the step before (0 before the first). */
typedef struct sk_events_state {
  double prev;
  uint8_t flags[SK_EVENTS_MAX];
} sk_events_state;

void sk_events_start(sk_events_state *st);
/* One animate() step to frame `cur` of a range starting at `from`: the
 * indices of the events it fires into out[0..) (room for t->count), in
 * firing order; returns how many. */
size_t sk_events_step(const sk_events *t, sk_events_state *st, double from, double cur, uint32_t *out);

/* Plays the steps frames[0..n) (each the current frame Babylon computes,
 * the first at the start of playback, the runtime animation's previous
 * frame 0 before it) of a range starting at frame `from`, and gives the
 * events fired at step i as idx[off[i - skip] .. off[i - skip + 1]) for
 * i >= skip (off has n - skip + 1 entries; the first `skip` steps only
 * advance the state: a chunk of a longer bake). idx holds at most `cap`
 * entries; the return value is how many it needed (call again with a
 * bigger one when over `cap`; nothing past cap is written). */
size_t sk_events_run(const sk_events *t, double from, const double *frames, size_t n, size_t skip, uint32_t *idx,
                     size_t cap, size_t *off);

/* Event firings the steps of a range can give at most: every step can
 * fire each event once (a loop re-arms them all). */
uint64_t sk_events_bound(const sk_events *t, size_t steps);

#endif
