/* sk_events_json: the "events" and "markers" arrays into sk_events. */
#include "sk_events_json.h"

#include <stdio.h>

#include "sk_anim.h"
#include "sk_json.h"

static const char *const k_event_keys[] = {"name", "frame", "onlyOnce", NULL};
static const char *const k_marker_keys[] = {"name", "frame", "time", NULL};

/* One event or marker {name, frame | time, onlyOnce?} into `t`. */
static int parse_event(const json_t *e, const char *ptr, bool marker, sk_events *t, sk_error *err) {
  if (!json_is_object(e))
    return sk_error_set(err, SK_ETYPE, ptr, marker ? "expected a marker {\"name\", \"frame\" or \"time\"}"
                                                  : "expected an event {\"name\", \"frame\", \"onlyOnce\"?}");
  int rc = sk_json_check_keys(e, ptr, marker ? k_marker_keys : k_event_keys, NULL, err);
  const json_t *nj = json_object_get(e, "name"), *fj = json_object_get(e, "frame");
  const json_t *tj = marker ? json_object_get(e, "time") : NULL;
  char p[SK_ERROR_POINTER_MAX];
  if (!rc && !json_is_string(nj)) {
    sk_pointer_child(p, sizeof p, ptr, "name");
    rc = sk_error_set(err, nj == NULL ? SK_EMISSING : SK_ETYPE, p, "an event needs a \"name\" string");
  }
  if (!rc && (fj == NULL) == (tj == NULL)) {
    sk_pointer_child(p, sizeof p, ptr, fj == NULL ? "frame" : "time");
    rc = sk_error_set(err, fj == NULL ? SK_EMISSING : SK_EDUPLICATE, p,
                      marker ? "a marker has a \"frame\" or a \"time\" (seconds), one of them"
                             : "an event needs a \"frame\"");
  }
  double f = 0;
  bool once = false;
  if (!rc)
    rc = sk_json_member_number(fj != NULL ? fj : tj, ptr, fj != NULL ? "frame" : "time", &f, err);
  if (!rc && tj != NULL)
    f *= SK_ANIM_FPS; /* a glTF clip's frames: 60 a second */
  const json_t *oj = marker ? NULL : json_object_get(e, "onlyOnce");
  if (!rc && oj != NULL && !json_is_null(oj))
    rc = sk_json_member_bool(oj, ptr, "onlyOnce", &once, err);
  return rc ? rc : sk_events_add(t, json_string_value(nj), f, once, 0, ptr, err);
}

int sk_events_json_parse(const json_t *arr, const char *ptr, bool markers, sk_events *out, sk_error *err) {
  if (!json_is_array(arr))
    return sk_error_set(err, SK_ETYPE, ptr, "expected an array of %s", markers ? "markers" : "events");
  if (json_array_size(arr) > SK_EVENTS_MAX)
    return sk_error_set(err, SK_ETOOBIG, ptr, "a clip holds at most %d %s", SK_EVENTS_MAX,
                        markers ? "markers" : "events");
  int rc = 0;
  for (size_t k = 0; !rc && k < json_array_size(arr); k++) {
    char p[SK_ERROR_POINTER_MAX];
    snprintf(p, sizeof p, "%s", ptr);
    sk_pointer_push_index(p, sizeof p, k);
    rc = parse_event(json_array_get(arr, k), p, markers, out, err);
  }
  return rc;
}

