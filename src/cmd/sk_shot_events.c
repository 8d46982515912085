/* sk_shot_events: a bake's events through the daemon's own pose-object
 * path, so the offline answer cannot drift from the online one. */
#include "sk_shot_events.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>

#include "sk_buf.h"
#include "sk_eventframes.h"

/* The pose object the daemon would be sent for this range. */
static json_t *pose_object(const sk_shot_events *e) {
  json_t *j =
      json_pack("{s:I, s:b, s:b, s:f}", "animation", (json_int_t)e->clip,
                "events", 1, "loop", e->loop, "fps", e->fps);
  if (j == NULL)
    return NULL;
  int rc =
      e->by_index
          ? json_object_set_new(j, "frames",
                                json_pack("[I,I]", (json_int_t)e->first,
                                          (json_int_t)(e->first + e->frames)))
          : json_object_set_new(j, "from", json_real(e->from)) |
                json_object_set_new(j, "to", json_real(e->to));
  if (rc) {
    json_decref(j);
    return NULL;
  }
  return j;
}

int sk_shot_events_write(const sk_anim *anim, const sk_shot_events *e,
                         FILE *out, sk_error *err) {
  json_t *j = pose_object(e);
  if (j == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  long clip = -1;
  int rc = sk_eventframes_parse(anim, j, "", &clip, err);
  size_t *off = rc ? NULL : calloc(e->frames + 1, sizeof *off);
  uint32_t *idx = NULL;
  if (!rc && off == NULL)
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  if (!rc && clip >= 0 &&
      sk_eventframes_apply(anim, clip, j, e->frames, &idx, off) != 0)
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  sk_strbuf line = {0};
  for (uint64_t i = 0; !rc && i < e->frames; i++) {
    char head[48];
    int hl = snprintf(head, sizeof head, "{\"frame\":%" PRIu64 ",",
                      (e->by_index ? e->first : 0) + i);
    line.len = 0;
    if (sk_strbuf_append(&line, head, (size_t)hl) ||
        sk_eventframes_write_json(&anim->clips[e->clip].events, idx + off[i],
                                  off[i + 1] - off[i], &line) ||
        sk_strbuf_append(&line, "}\n", 2))
      rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
    else if (fwrite(line.data, 1, line.len, out) != line.len)
      rc = sk_error_set(err, SK_EIO, "", "cannot write the events");
  }
  sk_strbuf_free(&line);
  free(idx);
  free(off);
  json_decref(j);
  return rc;
}
