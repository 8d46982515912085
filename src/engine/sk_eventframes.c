/* sk_eventframes: the steps of a pose object's range as a Babylon
 * playback of its clip, and the events each one fires (sk_events). */
#include "sk_eventframes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sk_json.h"
#include "sk_numfmt.h"
#include "sk_pose.h"
#include "sk_pose_frames.h"

/* The clip of `j`'s "animation" (a name or an index), or -1. */
static long clip_of(const sk_anim *anim, const json_t *a) {
  size_t clip = 0;
  if (anim == NULL || a == NULL)
    return -1;
  if (json_is_integer(a))
    return json_integer_value(a) >= 0 && (size_t)json_integer_value(a) < anim->clip_count ? (long)json_integer_value(a)
                                                                                            : -1;
  return json_is_string(a) && sk_anim_find_clip(anim, json_string_value(a), &clip) == 0 ? (long)clip : -1;
}

/* Refuses a clip whose events Babylon would fire over another range:
 * animate() plays each runtime animation inside its own keys, so an
 * animation with events that ends before its range does, or a glTF clip
 * whose keys all start after 0 (the group starts there), would not step
 * through the frames the clip's do. */
static int check_range(const sk_anim_clip *c, const char *p, sk_error *err) {
  for (size_t k = 0; c->fps > 0 && k < c->events.count; k++) {
    const uint32_t g = c->events.ev[k].group;
    const sk_anim_channel *ch = g < c->channel_count ? &c->channels[g] : NULL;
    if (ch != NULL && ch->count > 0 && ch->frames[ch->count - 1] < c->to_frame)
      return sk_error_set(err, SK_EUNSUPPORTED, p,
                          "events play on animations that hold keys over the whole range; the animation of "
                          "bone %d ends before the range does",
                          (int)ch->bone);
  }
  double first = c->channel_count > 0 ? INFINITY : 0;
  for (size_t k = 0; c->fps == 0 && k < c->channel_count; k++)
    if (c->channels[k].count > 0 && c->channels[k].frames[0] < first)
      first = c->channels[k].frames[0];
  if (c->fps == 0 && c->events.count > 0 && first > 0)
    return sk_error_set(err, SK_EUNSUPPORTED, p, "events play on glTF clips whose keys start at 0");
  return 0;
}

int sk_eventframes_parse(const sk_anim *anim, const json_t *j, const char *ptr, long *clip, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sk_pointer_child(p, sizeof p, ptr, "events");
  *clip = -1;
  const json_t *v = json_object_get(j, "events");
  if (!json_is_boolean(v))
    return sk_error_set(err, SK_ETYPE, p, "events is true (answer the clip's events fired per pose) or false");
  if (!json_is_true(v))
    return 0;
  if (json_object_get(j, "layers") != NULL || json_object_get(j, "animation") == NULL)
    return sk_error_set(err, SK_ERANGE, p, "events go with \"animation\" (one clip, no \"layers\")");
  *clip = clip_of(anim, json_object_get(j, "animation"));
  return *clip >= 0 ? check_range(&anim->clips[*clip], p, err) : 0;
}

/* The frame Babylon's runtime animation is at `t` seconds into a
 * playback at speed 1: animate()'s own operations (its end, without loop,
 * where the playback stops). */
static double step_frame(const sk_anim_clip *c, double t, bool loop) { return sk_anim__layer_frame(c, t, loop, 1); }

/* Whether a playback without loop has reached its end at `t` (animate()
 * returns false: the animatable stops, and no later step fires). */
static bool ends_at(const sk_anim_clip *c, double t) {
  const double fps = c->fps > 0 ? c->fps : SK_ANIM_FPS, range = c->fps > 0 ? c->to_frame - c->from_frame : c->end_frame;
  return (t * 1000 * (fps * 1)) / 1000 >= range;
}

int sk_eventframes_apply(const sk_anim *anim, long clip, const json_t *j, size_t n, uint32_t **idx, size_t *off) {
  *idx = NULL;
  memset(off, 0, (n + 1) * sizeof *off);
  const sk_anim_clip *c = &anim->clips[clip];
  if (c->events.count == 0)
    return 0;
  sk_pose_clock clk;
  if (sk_pose_anim_clock(anim, j, &clk) != 0)
    return SK_ENOMEM;
  const json_t *fr = json_object_get(j, "frames");
  const double fps = json_number_value(json_object_get(j, "fps"));
  const double skip = json_is_array(fr) ? json_number_value(json_array_get(fr, 0)) : 0;
  const double from = c->fps > 0 ? c->from_frame : 0;
  sk_events_state st;
  sk_events_start(&st);
  uint32_t fired[SK_EVENTS_MAX];
  /* the steps before the chunk: frame k at k / fps, as the range's own */
  bool stopped = false;
  for (double k = 0; k < skip && !stopped; k++) {
    sk_events_step(&c->events, &st, from, step_frame(c, k / fps, clk.loop), fired);
    stopped = !clk.loop && ends_at(c, k / fps);
  }
  size_t used = 0, cap = 0;
  int rc = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    const double t = clk.times != NULL && i < clk.n ? clk.times[i] : clk.time;
    const size_t m = stopped ? 0 : sk_events_step(&c->events, &st, from, step_frame(c, t, clk.loop), fired);
    stopped = stopped || (!clk.loop && ends_at(c, t));
    if (used + m > cap) {
      size_t nc = (used + m) * 2 + 16;
      uint32_t *b = realloc(*idx, nc * sizeof *b);
      if (b == NULL) {
        rc = SK_ENOMEM;
        break;
      }
      *idx = b, cap = nc;
    }
    off[i] = used;
    if (m > 0)
      memcpy(*idx + used, fired, m * sizeof *fired);
    used += m;
    off[i + 1] = used;
  }
  if (rc) {
    free(*idx);
    *idx = NULL;
  }
  free(clk.times);
  free(clk.layer);
  return rc;
}

uint64_t sk_eventframes_cost(const sk_anim *anim, const json_t *j) {
  if (!json_is_true(json_object_get(j, "events")))
    return 0;
  const long clip = clip_of(anim, json_object_get(j, "animation"));
  if (clip < 0 || anim->clips[clip].events.count == 0)
    return 0; /* nothing is played */
  const json_t *fr = json_object_get(j, "frames");
  double start = json_is_array(fr) ? json_number_value(json_array_get(fr, 0)) : 0;
  const char *key = NULL;
  uint64_t steps = sk_pose_frames_count(j, &key);
  /* the steps before a chunk are played too: a far start is refused by cost */
  if (!(start < 9e18))
    return UINT64_MAX;
  if (start > 0)
    steps += (uint64_t)start;
  /* a step compares each event's frame: ~1/16 of a core matrix */
  return sk_events_bound(&anim->clips[clip].events, (size_t)steps) / 16 + steps / 16 + 1;
}

size_t sk_eventframes_answer_bytes(size_t fired, bool json) {
  /* JSON: a name of up to 63 bytes escaped x6, the frame, the keys */
  return json ? 16 + fired * (6 * (SK_EVENTS_NAME_MAX - 1) + SK_NUMFMT_F64_MAX + 24) : 4 + 4 * fired;
}

int sk_eventframes_write_json(const sk_events *t, const uint32_t *idx, size_t n, sk_strbuf *out) {
  if (sk_strbuf_append(out, "\"events\":[", 10))
    return SK_ENOMEM;
  for (size_t k = 0; k < n; k++) {
    const sk_event *e = &t->ev[idx[k]];
    char num[SK_NUMFMT_F64_MAX + 1];
    size_t nl = sk_numfmt_f64(e->frame == 0 ? 0 : e->frame, num);
    if ((k > 0 && sk_strbuf_append(out, ",", 1)) || sk_strbuf_append(out, "{\"name\":", 8) ||
        sk_json_write_string(out, e->name) || sk_strbuf_append(out, ",\"frame\":", 9) ||
        sk_strbuf_append(out, num, nl) || sk_strbuf_append(out, "}", 1))
      return SK_ENOMEM;
  }
  return sk_strbuf_append(out, "]", 1) ? SK_ENOMEM : 0;
}

int sk_eventframes_write_binary(const uint32_t *idx, size_t n, sk_strbuf *out) {
  unsigned char b[4];
  for (size_t k = 0; k <= n; k++) {
    const uint32_t v = k == 0 ? (uint32_t)n : idx[k - 1];
    for (int i = 0; i < 4; i++)
      b[i] = (unsigned char)(v >> (8 * i));
    if (sk_strbuf_append(out, (const char *)b, 4))
      return SK_ENOMEM;
  }
  return 0;
}
