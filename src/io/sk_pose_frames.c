/* sk_pose_frames: the frame times of a pose request's range (sk_pose_frames.h). */
#include "sk_pose_frames.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sk_json.h"
#include "sk_pose.h"

/* "frames": [start, end] with "fps": the bounds, checked. Each error
 * names its field; `err` may be NULL (sk_pose_frames_count). */
static int index_bounds(const json_t *j, const char *ptr, int64_t *start, int64_t *end, double *fps, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  const json_t *fr = json_object_get(j, "frames"), *r = json_object_get(j, "fps");
  sk_pointer_child(p, sizeof p, ptr, "frames");
  if (json_object_get(j, "times") != NULL)
    return sk_error_set(err, SK_ETYPE, p, "give \"frames\" or \"times\", not both");
  if (json_object_get(j, "from") != NULL || json_object_get(j, "to") != NULL)
    return sk_error_set(err, SK_ETYPE, p, "give \"frames\" or \"from\"/\"to\", not both (\"frames\" takes \"fps\")");
  if (!json_is_array(fr) || json_array_size(fr) != 2)
    return sk_error_set(err, SK_ETYPE, p, "expected [start, end]: two integer frame indices, end excluded");
  int64_t v[2];
  for (size_t k = 0; k < 2; k++) {
    const json_t *e = json_array_get(fr, k);
    char q[SK_ERROR_POINTER_MAX];
    snprintf(q, sizeof q, "%s", p);
    sk_pointer_push_index(q, sizeof q, k);
    if (!json_is_integer(e))
      return sk_error_set(err, SK_ETYPE, q, "expected an integer frame index (frame k is at k / fps)");
    v[k] = json_integer_value(e);
    if (v[k] < 0 || v[k] > SK_POSE_FRAMES_MAX_INDEX)
      return sk_error_set(err, SK_ERANGE, q, "frame indices run from 0 to 2^53 (exact as doubles)");
  }
  if (v[1] <= v[0]) {
    sk_pointer_push_index(p, sizeof p, 1);
    return sk_error_set(err, SK_ERANGE, p, "the end (excluded) must be after the start: [%lld, %lld) holds no frame",
                        (long long)v[0], (long long)v[1]);
  }
  if (r == NULL) {
    sk_pointer_child(p, sizeof p, ptr, "fps");
    return sk_error_set(err, SK_EMISSING, p, "\"frames\" needs \"fps\": frame k is at k / fps");
  }
  int rc = sk_json_member_number(r, ptr, "fps", fps, err);
  if (rc)
    return rc;
  if (!(*fps > 0)) {
    sk_pointer_child(p, sizeof p, ptr, "fps");
    return sk_error_set(err, SK_ERANGE, p, "fps must be positive");
  }
  *start = v[0];
  *end = v[1];
  return 0;
}

/* "frames": [start, end) at "fps": frame k at k / fps, one double
 * division, so a frame's time does not depend on the chunk that asks. */
static int index_frames(const json_t *j, const char *ptr, bool has_time, double **times, size_t *n, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  if (has_time) {
    sk_pointer_child(p, sizeof p, ptr, "frames");
    return sk_error_set(err, SK_ETYPE, p, "give \"time\" or \"frames\", not both");
  }
  int64_t start, end;
  double fps;
  int rc = index_bounds(j, ptr, &start, &end, &fps, err);
  if (rc)
    return rc;
  if (end - start > SK_POSE_MAX_FRAMES) {
    sk_pointer_child(p, sizeof p, ptr, "frames");
    return sk_error_set(err, SK_ETOOBIG, p, "%lld frames; the limit is %d", (long long)(end - start),
                        SK_POSE_MAX_FRAMES);
  }
  *n = (size_t)(end - start);
  if ((*times = malloc(*n * sizeof **times)) == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  for (size_t i = 0; i < *n; i++)
    (*times)[i] = (double)(start + (int64_t)i) / fps;
  return 0;
}

/* "times" or "from"/"to"/"fps": frame k at times[k] or from + k / fps. */
static int time_frames(const json_t *j, const char *ptr, bool has_time, double **times, size_t *n, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  const json_t *ts = json_object_get(j, "times");
  const json_t *from = json_object_get(j, "from"), *to = json_object_get(j, "to"), *fps = json_object_get(j, "fps");
  *times = NULL;
  *n = 1;
  bool range = from != NULL || to != NULL || fps != NULL;
  if (ts == NULL && !range)
    return 0;
  if (json_is_string(from)) { /* what the daemon's /pose takes as a retargeting source */
    sk_pointer_child(p, sizeof p, ptr, "from");
    return sk_error_set(err, SK_ETYPE, p,
                        "\"from\" starts a frame range here (seconds); a skeleton id (retargeting) is taken by "
                        "a single POST .../pose body under 32 KiB only");
  }
  if (has_time) {
    sk_pointer_child(p, sizeof p, ptr, "time");
    return sk_error_set(err, SK_ETYPE, p, "give \"time\", or \"times\", or \"from\"/\"to\"/\"fps\", not several");
  }
  if (ts != NULL && range) {
    sk_pointer_child(p, sizeof p, ptr, "times");
    return sk_error_set(err, SK_ETYPE, p, "give \"times\" or \"from\"/\"to\"/\"fps\", not both");
  }
  int rc;
  if (ts != NULL) {
    sk_pointer_child(p, sizeof p, ptr, "times");
    if (!json_is_array(ts) || json_array_size(ts) == 0)
      return sk_error_set(err, SK_ETYPE, p, "expected a non-empty array of times in seconds");
    if (json_array_size(ts) > SK_POSE_MAX_FRAMES)
      return sk_error_set(err, SK_ETOOBIG, p, "%zu frames; the limit is %d", json_array_size(ts), SK_POSE_MAX_FRAMES);
    *n = json_array_size(ts);
    if ((*times = malloc(*n * sizeof **times)) == NULL)
      return sk_error_set(err, SK_ENOMEM, p, "out of memory");
    for (size_t i = 0; i < *n; i++) {
      char q[SK_ERROR_POINTER_MAX];
      snprintf(q, sizeof q, "%s", p);
      sk_pointer_push_index(q, sizeof q, i);
      const json_t *v = json_array_get(ts, i);
      if (!json_is_number(v) || !isfinite(json_number_value(v))) {
        free(*times);
        *times = NULL;
        return sk_error_set(err, SK_ETYPE, q, "expected a finite number of seconds");
      }
      (*times)[i] = json_number_value(v);
    }
    return 0;
  }
  double f, t, r;
  static const char *const names[3] = {"from", "to", "fps"};
  const json_t *vals[3] = {from, to, fps};
  double *dst[3] = {&f, &t, &r};
  for (int k = 0; k < 3; k++) {
    if (vals[k] == NULL) {
      sk_pointer_child(p, sizeof p, ptr, names[k]);
      return sk_error_set(err, SK_EMISSING, p, "a frame range needs \"from\", \"to\" and \"fps\"");
    }
    if ((rc = sk_json_member_number(vals[k], ptr, names[k], dst[k], err)))
      return rc;
  }
  if (!(r > 0)) {
    sk_pointer_child(p, sizeof p, ptr, "fps");
    return sk_error_set(err, SK_ERANGE, p, "fps must be positive");
  }
  if (t < f) {
    sk_pointer_child(p, sizeof p, ptr, "to");
    return sk_error_set(err, SK_ERANGE, p, "\"to\" is before \"from\"");
  }
  /* The small epsilon keeps `to` itself when (to - from) * fps is an
   * integer up to rounding (0.1 * 30 = 3.0000000000000004). */
  double frames = floor((t - f) * r + 1e-9) + 1;
  if (!(frames <= SK_POSE_MAX_FRAMES)) {
    sk_pointer_child(p, sizeof p, ptr, "fps");
    return sk_error_set(err, SK_ETOOBIG, p, "%.0f frames; the limit is %d", frames, SK_POSE_MAX_FRAMES);
  }
  *n = (size_t)frames;
  if ((*times = malloc(*n * sizeof **times)) == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  for (size_t i = 0; i < *n; i++)
    (*times)[i] = f + (double)i / r;
  return 0;
}

int sk_pose_frames_parse(const json_t *j, const char *ptr, bool has_time, double **times, size_t *n, sk_error *err) {
  *times = NULL;
  *n = 1;
  if (json_object_get(j, "frames") != NULL)
    return index_frames(j, ptr, has_time, times, n, err);
  return time_frames(j, ptr, has_time, times, n, err);
}

uint64_t sk_pose_frames_count(const json_t *j, const char **key) {
  if (json_object_get(j, "frames") != NULL) {
    int64_t start, end;
    double fps;
    *key = "frames";
    return index_bounds(j, "", &start, &end, &fps, NULL) == 0 ? (uint64_t)(end - start) : 1;
  }
  const json_t *ts = json_object_get(j, "times");
  *key = "times";
  if (json_is_array(ts))
    return json_array_size(ts) ? json_array_size(ts) : 1;
  const json_t *from = json_object_get(j, "from"), *to = json_object_get(j, "to"), *fps = json_object_get(j, "fps");
  *key = "fps";
  if (!json_is_number(from) || !json_is_number(to) || !json_is_number(fps))
    return 1;
  double f = json_number_value(from), t = json_number_value(to), r = json_number_value(fps);
  if (!isfinite(f) || !isfinite(t) || !isfinite(r) || !(r > 0) || t < f)
    return 1;
  double frames = floor((t - f) * r + 1e-9) + 1; /* as time_frames */
  return frames < 1.8e19 ? (uint64_t)frames : UINT64_MAX;
}
