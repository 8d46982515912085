#include "sk_animops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_banim.h"
#include "sk_json.h"

static int check_op_keys(const json_t *op, const char *ptr, const char *const *allowed, sk_error *err) {
  return sk_json_check_keys(op, ptr, allowed, NULL, err);
}

/* Names of bones (array of strings) marked in `mark`. */
static int mask_names(const sk_skeleton *s, const json_t *v, const char *ptr, const char *key, uint8_t *mark,
                      sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sk_pointer_child(p, sizeof p, ptr, key);
  if (!json_is_array(v))
    return sk_error_set(err, SK_ETYPE, p, "expected an array of bone names");
  for (size_t i = 0; i < json_array_size(v); i++) {
    const char *n = json_string_value(json_array_get(v, i));
    int32_t b = n != NULL ? sk_skeleton_find(s, n) : -1;
    if (b < 0) {
      sk_pointer_push_index(p, sizeof p, i);
      return sk_error_set(err, n == NULL ? SK_ETYPE : SK_ENOTFOUND, p, n == NULL ? "expected a bone name" : "no bone named \"%s\"", n);
    }
    mark[b] = 1;
  }
  return 0;
}

/* A layer's "mask" as one weight per bone (bones[] order) into `w`:
 * {"bone": name | "include": [names] | "exclude": [names], "subtree"?: bool,
 *  "weights"?: {name: 0..1}, "default"?: 0..1}. With "bone"/"include" the
 * others default to 0 (AnimationGroupMask's include mode), with "exclude"
 * to 1 (its exclude mode); "subtree" extends the named bones to their
 * descendants; "weights" set single bones (ozz-animation's per-joint
 * weights) after that. */
static int parse_mask(const sk_skeleton *s, const json_t *m, const char *ptr, float *w, sk_error *err) {
  static const char *const k_mask[] = {"bone", "include", "exclude", "subtree", "weights", "default", NULL};
  char p[SK_ERROR_POINTER_MAX];
  if (!json_is_object(m))
    return sk_error_set(err, SK_ETYPE, ptr, "expected a mask {\"bone\"|\"include\"|\"exclude\", \"subtree\"?, \"weights\"?}");
  int rc = check_op_keys(m, ptr, k_mask, err);
  if (rc)
    return rc;
  uint8_t *inc = calloc(s->count ? 2 * s->count : 1, 1);
  if (inc == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  uint8_t *exc = inc + s->count;
  const json_t *bone = json_object_get(m, "bone"), *include = json_object_get(m, "include");
  const json_t *exclude = json_object_get(m, "exclude"), *subtree = json_object_get(m, "subtree");
  const json_t *weights = json_object_get(m, "weights"), *dflt = json_object_get(m, "default");
  double d = bone != NULL || include != NULL ? 0 : 1;
  if (bone != NULL) {
    const char *n = json_string_value(bone);
    int32_t b = n != NULL ? sk_skeleton_find(s, n) : -1;
    sk_pointer_child(p, sizeof p, ptr, "bone");
    if (b < 0)
      rc = sk_error_set(err, n == NULL ? SK_ETYPE : SK_ENOTFOUND, p, n == NULL ? "expected a bone name" : "no bone named \"%s\"", n);
    else
      inc[b] = 1;
  }
  if (!rc && include != NULL)
    rc = mask_names(s, include, ptr, "include", inc, err);
  if (!rc && exclude != NULL)
    rc = mask_names(s, exclude, ptr, "exclude", exc, err);
  if (!rc && subtree != NULL && !json_is_boolean(subtree)) {
    sk_pointer_child(p, sizeof p, ptr, "subtree");
    rc = sk_error_set(err, SK_ETYPE, p, "expected true or false");
  }
  if (!rc && dflt != NULL && !(rc = sk_json_member_number(dflt, ptr, "default", &d, err)) && !(d >= 0 && d <= 1)) {
    sk_pointer_child(p, sizeof p, ptr, "default");
    rc = sk_error_set(err, SK_ERANGE, p, "a bone weight is between 0 and 1");
  }
  /* Bones are stored parents first: one pass carries marks down. */
  for (size_t b = 0; !rc && json_is_true(subtree) && b < s->count; b++) {
    int32_t pa = s->bones[b].parent;
    if (pa >= 0) {
      inc[b] |= inc[pa];
      exc[b] |= exc[pa];
    }
  }
  for (size_t b = 0; !rc && b < s->count; b++)
    w[b] = exc[b] ? 0.0f : inc[b] ? 1.0f : (float)d;
  if (!rc && weights != NULL) {
    sk_pointer_child(p, sizeof p, ptr, "weights");
    if (!json_is_object(weights))
      rc = sk_error_set(err, SK_ETYPE, p, "expected {\"<bone>\": weight, ...}");
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)weights, key, val) {
      if (rc)
        break;
      int32_t b = sk_skeleton_find(s, key);
      double x;
      if (b < 0) {
        sk_pointer_push(p, sizeof p, key);
        rc = sk_json_no_bone(s, key, p, err);
      } else if (!(rc = sk_json_member_number(val, p, key, &x, err)) && !(x >= 0 && x <= 1)) {
        sk_pointer_push(p, sizeof p, key);
        rc = sk_error_set(err, SK_ERANGE, p, "a bone weight is between 0 and 1");
      } else if (!rc)
        w[b] = (float)x;
    }
  }
  free(inc);
  return rc;
}

int sk_animops_layer_ext(const sk_skeleton *s, const json_t *o, const char *ptr, sk_anim_layer_ext *x, float *w,
                         sk_error *err) {
  memset(x, 0, sizeof *x);
  const json_t *v;
  int rc;
  if ((v = json_object_get(o, "additive")) != NULL && (rc = sk_json_member_bool(v, ptr, "additive", &x->additive, err)))
    return rc;
  if ((v = json_object_get(o, "reference")) != NULL) {
    char p[SK_ERROR_POINTER_MAX];
    sk_pointer_child(p, sizeof p, ptr, "reference");
    if (!x->additive)
      return sk_error_set(err, SK_ETYPE, p, "\"reference\" is the frame an additive layer is relative to; add \"additive\": true");
    if ((rc = sk_json_member_number(v, ptr, "reference", &x->reference, err)))
      return rc;
    if (x->reference < 0)
      return sk_error_set(err, SK_ERANGE, p, "the reference time is not negative");
  }
  if ((v = json_object_get(o, "mask")) != NULL) {
    char p[SK_ERROR_POINTER_MAX];
    sk_pointer_child(p, sizeof p, ptr, "mask");
    if ((rc = parse_mask(s, v, p, w, err)))
      return rc;
    x->bone_weights = w;
  }
  return 0;
}

int sk_animops_copy_range(const sk_skeleton *s, json_t **cur, sk_anim **anim, const json_t *op, const char *ptr,
                          sk_error *err) {
  static const char *const k_copy[] = {"op", "from", "name", "rescale", NULL};
  int rc = check_op_keys(op, ptr, k_copy, err);
  if (rc)
    return rc;
  char pf[SK_ERROR_POINTER_MAX], pn[SK_ERROR_POINTER_MAX], pr[SK_ERROR_POINTER_MAX];
  sk_pointer_child(pf, sizeof pf, ptr, "from");
  sk_pointer_child(pn, sizeof pn, ptr, "name");
  sk_pointer_child(pr, sizeof pr, ptr, "rescale");
  if (*cur == NULL)
    return sk_error_set(err, SK_EUNSUPPORTED, ptr, "copyAnimationRange needs a skeleton in Babylon's serialize() format");
  const json_t *from = json_object_get(op, "from"), *name = json_object_get(op, "name"),
               *rescale = json_object_get(op, "rescale");
  if (from == NULL)
    return sk_error_set(err, SK_EMISSING, pf, "give the source skeleton (Babylon's serialize() format)");
  if (!json_is_string(name))
    return sk_error_set(err, name == NULL ? SK_EMISSING : SK_ETYPE, pn, "expected the name of a range of the source");
  if (rescale != NULL && !json_is_boolean(rescale))
    return sk_error_set(err, SK_ETYPE, pr, "expected true or false");
  json_t *next;
  if ((rc = sk_banim_copy_range(*cur, from, pf, json_string_value(name), pn, json_is_true(rescale), &next, err)))
    return rc;
  sk_anim *na;
  if ((rc = sk_banim_parse(next, "/skeleton", s, &na, err))) {
    json_decref(next);
    return rc;
  }
  sk_anim_destroy(*anim);
  *anim = na;
  json_decref(*cur);
  *cur = next;
  return 0;
}

