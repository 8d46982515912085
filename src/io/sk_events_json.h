/* sk_events_json: a clip's events as JSON (sk_events): a Babylon
 * Animation's "events" and a glTF clip's "markers" on upload. */
#ifndef SK_EVENTS_JSON_H
#define SK_EVENTS_JSON_H

#include <jansson.h>
#include <stdbool.h>

#include "sk_error.h"
#include "sk_events.h"

/* A Babylon Animation's "events" (markers false: [{name, frame,
 * onlyOnce?}], a skinnerd extension, since Animation.serialize() writes
 * no events: their actions are functions) or a glTF clip's "markers"
 * ([{name, frame | time}], time in seconds at 60 frames a second) at
 * `ptr` into `out` (group 0), in addEvent's order. Errors name the item's
 * field: SK_ETYPE, SK_EMISSING, SK_EDUPLICATE (frame and time),
 * SK_ENOTFINITE, SK_ERANGE (a name of 0 or 64+ bytes), SK_ETOOBIG (more
 * than SK_EVENTS_MAX), SK_ENOMEM. A clip holds the events of all the
 * bones' animations: over SK_EVENTS_MAX together, SK_ETOOBIG at /bones. */
int sk_events_json_parse(const json_t *arr, const char *ptr, bool markers, sk_events *out, sk_error *err);

#endif
