/* sk_events: the event table of a clip and RuntimeAnimation.animate's
 * firing rules over the steps of a range. */
#include "sk_events.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sk_events_add(sk_events *t, const char *name, double frame, bool only_once, uint32_t group, const char *ptr,
                  sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  size_t len = name != NULL ? strlen(name) : 0;
  if (len == 0 || len >= SK_EVENTS_NAME_MAX) {
    sk_pointer_child(p, sizeof p, ptr, "name");
    return sk_error_set(err, SK_ERANGE, p, "an event name is 1 to %d bytes", SK_EVENTS_NAME_MAX - 1);
  }
  if (!isfinite(frame)) {
    sk_pointer_child(p, sizeof p, ptr, "frame");
    return sk_error_set(err, SK_ENOTFINITE, p, "an event frame is a finite number");
  }
  if (t->count >= SK_EVENTS_MAX)
    return sk_error_set(err, SK_ETOOBIG, ptr, "a clip holds at most %d events", SK_EVENTS_MAX);
  sk_event *g = realloc(t->ev, (t->count + 1) * sizeof *g);
  if (g == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  t->ev = g;
  size_t at = t->count;
  while (at > 0 && (g[at - 1].group > group || (g[at - 1].group == group && g[at - 1].frame > frame)))
    at--;
  memmove(g + at + 1, g + at, (t->count - at) * sizeof *g);
  memset(&g[at], 0, sizeof g[at]);
  memcpy(g[at].name, name, len);
  g[at].frame = frame;
  g[at].only_once = only_once;
  g[at].group = group;
  t->count++;
  return 0;
}

int sk_events_merge(sk_events *dst, const sk_events *src, uint32_t group, const char *ptr, sk_error *err) {
  int rc = 0;
  for (size_t k = 0; !rc && k < src->count; k++)
    rc = sk_events_add(dst, src->ev[k].name, src->ev[k].frame, src->ev[k].only_once, group, ptr, err);
  return rc;
}

int sk_events_copy(sk_events *dst, const sk_events *src) {
  dst->count = 0;
  dst->ev = NULL;
  if (src->count == 0)
    return 0;
  if ((dst->ev = malloc(src->count * sizeof *dst->ev)) == NULL)
    return SK_ENOMEM;
  memcpy(dst->ev, src->ev, src->count * sizeof *dst->ev);
  dst->count = src->count;
  return 0;
}

void sk_events_free(sk_events *t) {
  free(t->ev);
  t->ev = NULL;
  t->count = 0;
}

size_t sk_events_memory(const sk_events *t) { return t->count * sizeof(sk_event); }

uint64_t sk_events_bound(const sk_events *t, size_t steps) { return (uint64_t)t->count * steps; }

enum { DONE = 1, GONE = 2 };

void sk_events_start(sk_events_state *st) { memset(st, 0, sizeof *st); }

size_t sk_events_step(const sk_events *t, sk_events_state *st, double from, double cur, uint32_t *out) {
  const size_t ne = t->count < SK_EVENTS_MAX ? t->count : SK_EVENTS_MAX;
  if (st->prev > cur) /* the loop wrapped: all but the onlyOnce events again */
    for (size_t k = 0; k < ne; k++)
      if (!t->ev[k].only_once)
        st->flags[k] &= (uint8_t)~DONE;
  st->prev = cur;
  size_t n = 0;
  for (size_t k = 0; k < ne; k++) {
    const double f = t->ev[k].frame;
    if (st->flags[k] != 0 || !(cur >= f && f >= from))
      continue;
    st->flags[k] = t->ev[k].only_once ? GONE : DONE;
    out[n++] = (uint32_t)k;
  }
  return n;
}

size_t sk_events_run(const sk_events *t, double from, const double *frames, size_t n, size_t skip, uint32_t *idx,
                     size_t cap, size_t *off) {
  sk_events_state st;
  sk_events_start(&st);
  uint32_t fired[SK_EVENTS_MAX];
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    const size_t m = sk_events_step(t, &st, from, frames[i], fired);
    if (i < skip)
      continue;
    off[i - skip] = used;
    for (size_t k = 0; k < m; k++, used++)
      if (used < cap)
        idx[used] = fired[k];
  }
  if (n >= skip)
    off[n - skip] = used;
  return used;
}
