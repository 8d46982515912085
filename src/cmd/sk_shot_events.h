/* sk_shot_events: `skinner frames --events FILE`, the clip's animation
 * events fired at each frame of a bake, as JSON lines beside the frames:
 * the same range given to the daemon as a pose object with "events": true
 * (sk_eventframes) answers the same events, and a --frames chunk gives
 * the lines of the whole bake it covers. */
#ifndef SK_SHOT_EVENTS_H
#define SK_SHOT_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sk_anim.h"
#include "sk_error.h"

typedef struct sk_shot_events {
  long clip;
  bool loop,
      by_index; /* by_index: frames first .. first + frames - 1 at k / fps */
  double from, to, fps;
  uint64_t first, frames;
} sk_shot_events;

/* Writes one line a frame: {"frame":k,"events":[{"name","frame"},...]}
 * (k the frame's index in the bake). Errors: the pose object's (err, at
 * its pointer), SK_ENOMEM, SK_EIO. */
int sk_shot_events_write(const sk_anim *anim, const sk_shot_events *e,
                         FILE *out, sk_error *err);

#endif
