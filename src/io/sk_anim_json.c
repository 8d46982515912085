/* sk_anim's JSON views of clips: the listing an upload answer and GET
 * /v1/skeletons/{id} show, and one clip's detail (animated bones, each
 * channel's key times and interpolation). The sampling is in sk_anim.c. */
#include <stdio.h>
#include <string.h>

#include "sk_anim.h"
#include "sk_json.h"

static int append_str(sk_strbuf *out, const char *s) { return sk_strbuf_append(out, s, strlen(s)) ? SK_ENOMEM : 0; }

static int append_num(sk_strbuf *out, const char *key, double v) {
  char d[SK_NUMFMT_F64_MAX + 1];
  size_t dl = sk_numfmt_f64(v, d);
  if (append_str(out, key) || sk_strbuf_append(out, d, dl))
    return SK_ENOMEM;
  return 0;
}

int sk_anim_write_clips_json(const sk_anim *a, sk_strbuf *out) {
  if (sk_strbuf_append(out, "[", 1))
    return SK_ENOMEM;
  for (size_t c = 0; c < a->clip_count; c++) {
    char num[64];
    int n = snprintf(num, sizeof num, "%s{\"index\":%zu,\"name\":", c ? "," : "", c);
    if (n < 0 || (size_t)n >= sizeof num || sk_strbuf_append(out, num, (size_t)n) ||
        sk_json_write_string(out, a->clips[c].name))
      return SK_ENOMEM;
    char d[SK_NUMFMT_F64_MAX + 1];
    size_t dl = sk_numfmt_f64(sk_anim_clip_duration(a, c), d);
    size_t keys = 0; /* each channel's count is in the clip's detail */
    for (size_t k = 0; k < a->clips[c].channel_count; k++)
      keys += a->clips[c].channels[k].count;
    n = snprintf(num, sizeof num, ",\"channels\":%zu,\"keys\":%zu}", a->clips[c].channel_count, keys);
    if (sk_strbuf_append(out, ",\"duration\":", 12) || sk_strbuf_append(out, d, dl) || n < 0 ||
        (size_t)n >= sizeof num)
      return SK_ENOMEM;
    /* A Babylon-format clip is a frame range: say which, as its detail does. */
    const sk_anim_clip *bc = &a->clips[c];
    if (bc->fps > 0 && (append_num(out, ",\"fps\":", bc->fps) || append_num(out, ",\"from\":", bc->from_frame) ||
                        append_num(out, ",\"to\":", bc->to_frame)))
      return SK_ENOMEM;
    if (sk_strbuf_append(out, num, (size_t)n))
      return SK_ENOMEM;
  }
  return sk_strbuf_append(out, "]", 1) ? SK_ENOMEM : 0;
}

/* ---- introspection ------------------------------------------------------- */

static int write_channel(const sk_anim_channel *ch, sk_strbuf *out) {
  static const char *const paths[4] = {"translation", "rotation", "scale", "matrix"};
  static const char *const interps[3] = {"LINEAR", "STEP", "CUBICSPLINE"};
  const char *interp = interps[ch->interp >= 0 && ch->interp <= 2 ? ch->interp : 0];
  if (ch->path == SK_ANIM_MATRIX)
    interp = "HOLD";
  else if (ch->values64 != NULL)
    interp = "BABYLON"; /* per key: linear, step or Hermite (see "step"/"tangents") */
  char num[64];
  int n = snprintf(num, sizeof num, "\",\"keys\":%zu,\"frames\":[", ch->count);
  if (append_str(out, "{\"path\":\"") || append_str(out, paths[ch->path]) || append_str(out, "\",\"interpolation\":\"") ||
      append_str(out, interp) || n < 0 || (size_t)n >= sizeof num || sk_strbuf_append(out, num, (size_t)n))
    return SK_ENOMEM;
  for (size_t k = 0; k < ch->count; k++)
    if (append_num(out, k ? "," : "", ch->frames[k]))
      return SK_ENOMEM;
  return append_str(out, "]}");
}

int sk_anim_write_clip_json(const sk_anim *a, const sk_skeleton *s, size_t clip, sk_strbuf *out) {
  const sk_anim_clip *c = &a->clips[clip];
  char num[64];
  int n = snprintf(num, sizeof num, ",\"index\":%zu", clip);
  if (append_str(out, "{\"name\":") || sk_json_write_string(out, c->name) || n < 0 || (size_t)n >= sizeof num ||
      sk_strbuf_append(out, num, (size_t)n))
    return SK_ENOMEM;
  if (c->fps > 0 && (append_num(out, ",\"fps\":", c->fps) || append_num(out, ",\"from\":", c->from_frame) ||
                     append_num(out, ",\"to\":", c->to_frame)))
    return SK_ENOMEM;
  if (append_num(out, ",\"duration\":", sk_anim_clip_duration(a, clip)) || append_str(out, ",\"bones\":["))
    return SK_ENOMEM;
  /* Bones in bones[] order, each with its channels in clip order. */
  bool first_bone = true;
  for (size_t b = 0; b < a->bone_count; b++) {
    bool open = false;
    for (size_t k = 0; k < c->channel_count; k++) {
      const sk_anim_channel *ch = &c->channels[k];
      if ((size_t)ch->bone != b)
        continue;
      if (!open) {
        if (append_str(out, first_bone ? "{\"bone\":" : ",{\"bone\":") || sk_json_write_string(out, s->bones[b].name) ||
            append_str(out, ",\"channels\":["))
          return SK_ENOMEM;
        first_bone = false;
      } else if (append_str(out, ","))
        return SK_ENOMEM;
      open = true;
      if (write_channel(ch, out))
        return SK_ENOMEM;
    }
    if (open && append_str(out, "]}"))
      return SK_ENOMEM;
  }
  if (append_str(out, "]"))
    return SK_ENOMEM;
  /* the event table in firing order: binary "events" answers index it */
  for (size_t k = 0; k < c->events.count; k++) {
    const sk_event *e = &c->events.ev[k];
    if (append_str(out, k == 0 ? ",\"events\":[{\"name\":" : ",{\"name\":") || sk_json_write_string(out, e->name) ||
        append_num(out, ",\"frame\":", e->frame == 0 ? 0 : e->frame) ||
        append_str(out, e->only_once ? ",\"onlyOnce\":true}" : ",\"onlyOnce\":false}"))
      return SK_ENOMEM;
  }
  return append_str(out, c->events.count > 0 ? "]}" : "}");
}
