#include "sk_retarget_json.h"

#include <stdlib.h>
#include <string.h>

#include "sk_json.h"

static const char *const keys[] = {"mapNodeNames",
                                   "animationGroupName",
                                   "fixAnimations",
                                   "checkHierarchy",
                                   "retargetAnimationKeys",
                                   "fixRootPosition",
                                   "fixGroundReference",
                                   "fixGroundReferenceDynamicRefNode",
                                   "rootNodeName",
                                   "groundReferenceNodeName",
                                   "groundReferenceVerticalAxis",
                                   NULL};

static int string_member(const json_t *j, const char *key, const char **out, sk_error *err) {
  const json_t *v = json_object_get(j, key);
  if (v == NULL)
    return 0;
  char ptr[SK_ERROR_POINTER_MAX];
  sk_pointer_child(ptr, sizeof ptr, "/retarget", key);
  if (!json_is_string(v))
    return sk_error_set(err, SK_ETYPE, ptr, "\"%s\" must be a string", key);
  *out = json_string_value(v);
  return 0;
}

static int bool_member(const json_t *j, const char *key, bool *out, sk_error *err) {
  if (json_object_get(j, key) == NULL)
    return 0;
  return sk_json_member_bool(json_object_get(j, key), "/retarget", key, out, err);
}

static int parse_map(const json_t *m, sk_retarget_json *r, sk_error *err) {
  if (m == NULL)
    return 0;
  if (!json_is_object(m))
    return sk_error_set(err, SK_ETYPE, "/retarget/mapNodeNames", "\"mapNodeNames\" must be an object of names");
  const size_t n = json_object_size(m);
  r->from = calloc(n + 1, sizeof *r->from);
  r->to = calloc(n + 1, sizeof *r->to);
  if (r->from == NULL || r->to == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  const char *k;
  const json_t *v;
  size_t i = 0;
  json_object_foreach((json_t *)m, k, v) {
    if (!json_is_string(v)) {
      char ptr[SK_ERROR_POINTER_MAX];
      sk_pointer_child(ptr, sizeof ptr, "/retarget/mapNodeNames", k);
      return sk_error_set(err, SK_ETYPE, ptr, "a target bone name (string)");
    }
    r->from[i] = k, r->to[i] = json_string_value(v), i++;
  }
  r->o.map_from = r->from, r->o.map_to = r->to, r->o.map_count = i;
  return 0;
}

int sk_retarget_json_parse(const json_t *j, sk_retarget_json *out, sk_error *err) {
  memset(out, 0, sizeof *out);
  sk_retarget_opts_default(&out->o);
  if (j == NULL)
    return 0;
  int rc;
  if (!json_is_object(j))
    rc = sk_error_set(err, SK_ETYPE, "/retarget", "\"retarget\" must be an object of Babylon's retargeting options");
  else if ((rc = sk_json_check_keys(j, "/retarget", keys, NULL, err)) != 0 ||
           (rc = parse_map(json_object_get(j, "mapNodeNames"), out, err)) != 0 ||
           (rc = string_member(j, "animationGroupName", &out->o.animation_group_name, err)) != 0 ||
           (rc = string_member(j, "rootNodeName", &out->o.root_node_name, err)) != 0 ||
           (rc = string_member(j, "groundReferenceNodeName", &out->o.ground_reference_node_name, err)) != 0 ||
           (rc = bool_member(j, "fixAnimations", &out->o.fix_animations, err)) != 0 ||
           (rc = bool_member(j, "checkHierarchy", &out->o.check_hierarchy, err)) != 0 ||
           (rc = bool_member(j, "retargetAnimationKeys", &out->o.retarget_animation_keys, err)) != 0 ||
           (rc = bool_member(j, "fixRootPosition", &out->o.fix_root_position, err)) != 0 ||
           (rc = bool_member(j, "fixGroundReference", &out->o.fix_ground_reference, err)) != 0 ||
           (rc = bool_member(j, "fixGroundReferenceDynamicRefNode", &out->o.fix_ground_reference_dynamic_ref_node,
                             err)) != 0) {
  } else {
    const char *axis = NULL;
    if ((rc = string_member(j, "groundReferenceVerticalAxis", &axis, err)) == 0 && axis != NULL) {
      static const char *const names[] = {"X", "Y", "Z"};
      out->o.ground_reference_vertical_axis = -2;
      for (int i = 0; i < 3; i++)
        if (strcmp(axis, names[i]) == 0)
          out->o.ground_reference_vertical_axis = i;
      if (out->o.ground_reference_vertical_axis < 0)
        rc = sk_error_set(err, SK_ERANGE, "/retarget/groundReferenceVerticalAxis", "\"X\", \"Y\" or \"Z\"");
    }
  }
  if (rc != 0)
    sk_retarget_json_free(out);
  return rc;
}

void sk_retarget_json_free(sk_retarget_json *r) {
  free(r->from);
  free(r->to);
  r->from = r->to = NULL;
  r->o.map_from = r->o.map_to = NULL;
  r->o.map_count = 0;
}

