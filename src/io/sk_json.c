#include "sk_json.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_banim.h"
#include "sk_mat.h"
#include "sk_near.h"

/* A JSON pointer under construction: push a token, recurse, pop. */
typedef struct {
  char buf[SK_ERROR_POINTER_MAX];
} ptrbuf;

static void ptr_init(ptrbuf *p, const char *base) { snprintf(p->buf, sizeof p->buf, "%s", base ? base : ""); }
static size_t ptr_push(ptrbuf *p, const char *tok) { return sk_pointer_push(p->buf, sizeof p->buf, tok); }
static size_t ptr_push_i(ptrbuf *p, size_t i) { return sk_pointer_push_index(p->buf, sizeof p->buf, i); }
static void ptr_pop(ptrbuf *p, size_t len) { p->buf[len] = '\0'; }

static const char *json_type_name(const json_t *j) {
  switch (json_typeof(j)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER:
  case JSON_REAL: return "a number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  default: return "null";
  }
}

int sk_json_load(const char *text, size_t len, json_t **out, sk_error *err) {
  json_error_t je;
  *out = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
  if (*out == NULL) {
    int code = sk_error_set(err, SK_ESYNTAX, "", "line %d, column %d: %s", je.line, je.column, je.text);
    if (err != NULL && err->code == SK_ESYNTAX) {
      err->line = je.line;
      err->column = je.column;
    }
    return code;
  }
  return 0;
}

size_t sk_json_tree_bound(const char *text, size_t len) {
  /* Measured per token (tests/check_sk_json.c holds the bound to a malloc
   * count): an object ~232 bytes, an array ~136, a number ~40 (plus its
   * array slot, up to 16 with doubling), a string ~88 plus its bytes, an
   * object member ~72 plus its key. */
  size_t objects = 0, arrays = 0, separators = 0, quotes = 0;
  for (size_t i = 0; i < len; i++) {
    switch (text[i]) {
    case '{': objects++; break;
    case '[': arrays++; break;
    case ',':
    case ':': separators++; break;
    case '"': quotes++; break;
    default: break;
    }
  }
  return 256 * objects + 160 * arrays + 64 * (separators + 1) + 48 * quotes + len;
}

int sk_json_load_budgeted(sk_budget *budget, const char *text, size_t len, json_t **out, size_t *reserved,
                          sk_error *err) {
  *out = NULL;
  *reserved = 0;
  const size_t bound = sk_json_tree_bound(text, len);
  if (sk_budget_reserve(budget, bound) != 0)
    return sk_error_set(err, SK_EBUSY, "",
                        "parsing this %zu-byte body takes up to %zu bytes, more than the memory budget "
                        "(--memory-mb) has now; retry later",
                        len, bound);
  *reserved = bound;
  return sk_json_load(text, len, out, err);
}

int sk_json_member_number(const json_t *v, const char *ptr, const char *key, double *out, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  snprintf(p, sizeof p, "%s", ptr);
  sk_pointer_push(p, sizeof p, key);
  if (!json_is_number(v))
    return sk_error_set(err, SK_ETYPE, p, "expected a number");
  *out = json_number_value(v);
  if (!isfinite(*out))
    return sk_error_set(err, SK_ENOTFINITE, p, "expected a finite number");
  return 0;
}

int sk_json_member_bool(const json_t *v, const char *ptr, const char *key, bool *out, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  snprintf(p, sizeof p, "%s", ptr);
  sk_pointer_push(p, sizeof p, key);
  if (!json_is_boolean(v))
    return sk_error_set(err, SK_ETYPE, p, "expected true or false");
  *out = json_is_true(v);
  return 0;
}

static int read_numbers(const json_t *j, size_t n, const char *ptr, double *dd, float *ff, sk_error *err) {
  if (!json_is_array(j))
    return sk_error_set(err, SK_ETYPE, ptr, "expected an array of %zu numbers, got %s", n, json_type_name(j));
  if (json_array_size(j) != n)
    return sk_error_set(err, SK_ELENGTH, ptr, "expected %zu numbers, got %zu", n, json_array_size(j));
  for (size_t i = 0; i < n; i++) {
    const json_t *v = json_array_get(j, i);
    if (!json_is_number(v)) {
      ptrbuf p;
      ptr_init(&p, ptr);
      ptr_push_i(&p, i);
      return sk_error_set(err, SK_ETYPE, p.buf, "expected a number, got %s", json_type_name(v));
    }
    double x = json_number_value(v);
    /* Anything beyond float range would become infinity in float storage. */
    if (!isfinite(x) || fabs(x) > FLT_MAX) {
      ptrbuf p;
      ptr_init(&p, ptr);
      ptr_push_i(&p, i);
      return sk_error_set(err, SK_ENOTFINITE, p.buf, "%g is not a finite float32", x);
    }
    if (dd != NULL)
      dd[i] = x;
    if (ff != NULL)
      ff[i] = (float)x;
  }
  return 0;
}

int sk_json_floats(const json_t *j, size_t n, const char *ptr, float *dest, sk_error *err) {
  return read_numbers(j, n, ptr, NULL, dest, err);
}

int sk_json_doubles(const json_t *j, size_t n, const char *ptr, double *dest, sk_error *err) {
  return read_numbers(j, n, ptr, dest, NULL, err);
}

static bool key_in(const char *key, const char *const *list) {
  for (; list != NULL && *list != NULL; list++)
    if (strcmp(*list, key) == 0)
      return true;
  return false;
}

int sk_json_check_keys(const json_t *obj, const char *ptr, const char *const *allowed, const char *const *also,
                       sk_error *err) {
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)obj, key, val) {
    if (!key_in(key, allowed) && !key_in(key, also)) {
      char p[SK_ERROR_POINTER_MAX];
      sk_pointer_child(p, sizeof p, ptr, key);
      sk_near n;
      sk_near_init(&n, key);
      for (const char *const *l = allowed; l != NULL && *l != NULL; l++)
        sk_near_offer(&n, *l);
      for (const char *const *l = also; l != NULL && *l != NULL; l++)
        sk_near_offer(&n, *l);
      if (n.best != NULL)
        return sk_error_set(err, SK_EUNKNOWN, p, "unknown field \"%s\"; did you mean \"%s\"?", key, n.best);
      return sk_error_set(err, SK_EUNKNOWN, p, "unknown field \"%s\"", key);
    }
  }
  return 0;
}

static int check_keys(const json_t *obj, const char *const *allowed, ptrbuf *p, sk_error *err) {
  return sk_json_check_keys(obj, p->buf, allowed, NULL, err);
}

/* ---- TRS fields shared by bone definitions and overrides ---------------- */

typedef struct {
  unsigned mask;
  float matrix[16];
  double position[3], rotation[4], scaling[3];
} trs_fields;

static int parse_trs(const json_t *obj, ptrbuf *p, trs_fields *t, sk_error *err) {
  int rc;
  size_t at;
  t->mask = 0;
  const json_t *m = json_object_get(obj, "matrix");
  const json_t *pos = json_object_get(obj, "position");
  const json_t *rot = json_object_get(obj, "rotation");
  const json_t *quat = json_object_get(obj, "rotationQuaternion");
  const json_t *scl = json_object_get(obj, "scaling");
  if (rot != NULL && quat != NULL) {
    at = ptr_push(p, "rotation");
    rc = sk_error_set(err, SK_ETYPE, p->buf, "give \"rotation\" or \"rotationQuaternion\", not both");
    ptr_pop(p, at);
    return rc;
  }
  if (m != NULL) {
    at = ptr_push(p, "matrix");
    rc = sk_json_floats(m, 16, p->buf, t->matrix, err);
    ptr_pop(p, at);
    if (rc)
      return rc;
    t->mask |= SK_OVERRIDE_MATRIX;
  }
  if (pos != NULL) {
    at = ptr_push(p, "position");
    rc = sk_json_doubles(pos, 3, p->buf, t->position, err);
    ptr_pop(p, at);
    if (rc)
      return rc;
    t->mask |= SK_OVERRIDE_POSITION;
  }
  if (rot != NULL) {
    double e[3];
    at = ptr_push(p, "rotation");
    rc = sk_json_doubles(rot, 3, p->buf, e, err);
    ptr_pop(p, at);
    if (rc)
      return rc;
    sk_quat_from_yaw_pitch_roll(e[1], e[0], e[2], t->rotation);
    t->mask |= SK_OVERRIDE_ROTATION;
  }
  if (quat != NULL) {
    at = ptr_push(p, "rotationQuaternion");
    rc = sk_json_doubles(quat, 4, p->buf, t->rotation, err);
    ptr_pop(p, at);
    if (rc)
      return rc;
    t->mask |= SK_OVERRIDE_ROTATION;
  }
  if (scl != NULL) {
    at = ptr_push(p, "scaling");
    rc = sk_json_doubles(scl, 3, p->buf, t->scaling, err);
    ptr_pop(p, at);
    if (rc)
      return rc;
    t->mask |= SK_OVERRIDE_SCALING;
  }
  return 0;
}

/* ---- skeletons ------------------------------------------------------------ */

typedef struct {
  float bind[16], rest[16];
} bone_extra;

/* A matrix of a Babylon skeleton: an array of 16 numbers, or what
 * JSON.stringify makes of a Float32Array, an object with exactly the keys
 * "0" to "15" (Babylon 9.x's Skeleton.serialize() keeps Matrix.m as is, and
 * Skeleton.Parse reads either). Errors point at the key, as for an array. */
static int babylon_matrix(const json_t *v, const char *ptr, float *dest, sk_error *err) {
  if (!json_is_object(v))
    return sk_json_floats(v, 16, ptr, dest, err);
  if (json_object_size(v) != 16)
    return sk_error_set(err, SK_ELENGTH, ptr, "expected 16 numbers keyed \"0\" to \"15\", got %zu keys",
                        json_object_size(v));
  json_t *a = json_array();
  if (a == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  int rc = 0;
  for (int i = 0; i < 16 && rc == 0; i++) {
    char key[4];
    snprintf(key, sizeof key, "%d", i);
    json_t *x = json_object_get(v, key);
    if (x == NULL)
      rc = sk_error_set(err, SK_EMISSING, ptr, "expected 16 numbers keyed \"0\" to \"15\"; \"%s\" is missing", key);
    else if (json_array_append(a, x) != 0)
      rc = sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  }
  if (rc == 0)
    rc = sk_json_floats(a, 16, ptr, dest, err);
  json_decref(a);
  return rc;
}

int sk_json_babylon_matrix(const json_t *v, const char *ptr, float *dest, sk_error *err) {
  return babylon_matrix(v, ptr, dest, err);
}

static int get_optional_matrix(const json_t *bone, const char *key, bool babylon, ptrbuf *p, float *dest, bool *has,
                               sk_error *err) {
  const json_t *v = json_object_get(bone, key);
  *has = false;
  if (v == NULL || json_is_null(v))
    return 0;
  size_t at = ptr_push(p, key);
  int rc = babylon ? babylon_matrix(v, p->buf, dest, err) : sk_json_floats(v, 16, p->buf, dest, err);
  ptr_pop(p, at);
  *has = rc == 0;
  return rc;
}

static int get_index(const json_t *bone, const char *key, ptrbuf *p, bool *has, int64_t *out, sk_error *err) {
  const json_t *v = json_object_get(bone, key);
  *has = false;
  if (v == NULL)
    return 0;
  if (!json_is_integer(v)) {
    size_t at = ptr_push(p, key);
    int rc = sk_error_set(err, SK_ETYPE, p->buf, "expected an integer, got %s", json_type_name(v));
    ptr_pop(p, at);
    return rc;
  }
  *has = true;
  *out = json_integer_value(v);
  return 0;
}

static const char *const k_bone_keys[] = {"name",  "parent", "matrix", "position", "rotation", "rotationQuaternion",
                                          "scaling", "bind",   "rest",   "length",   "index",    NULL};
static const char *const k_babylon_bone_keys[] = {"name", "parentBoneIndex", "index", "matrix", "rest", "length", "id",
                                                  "uniqueId", "linkedTransformNodeId", "linkedTransformNodeUniqueId",
                                                  "metadata", "animation", "animations", NULL};
static const char *const k_skeleton_keys[] = {"bones", "name", "id", "uniqueId", "dimensionsAtRest",
                                              "needInitialSkinMatrix", "metadata", "ranges", NULL};

static int parse_bone(const json_t *bone, size_t i, bool babylon, const json_t *bones, ptrbuf *p, sk_bone_desc *d,
                      bone_extra *x, sk_error *err) {
  int rc;
  size_t at;
  if (!json_is_object(bone))
    return sk_error_set(err, SK_ETYPE, p->buf, "expected a bone object, got %s", json_type_name(bone));
  if ((rc = check_keys(bone, babylon ? k_babylon_bone_keys : k_bone_keys, p, err)))
    return rc;
  const json_t *name = json_object_get(bone, "name");
  if (name == NULL || !json_is_string(name)) {
    at = ptr_push(p, "name");
    rc = sk_error_set(err, name == NULL ? SK_EMISSING : SK_ETYPE, p->buf, "every bone needs a string \"name\"");
    ptr_pop(p, at);
    return rc;
  }
  d->name = json_string_value(name);
  if (strlen(d->name) != json_string_length(name)) {
    at = ptr_push(p, "name");
    rc = sk_error_set(err, SK_ETYPE, p->buf, "bone names may not contain NUL characters");
    ptr_pop(p, at);
    return rc;
  }
  bool has;
  if ((rc = get_optional_matrix(bone, "bind", babylon, p, x->bind, &has, err)))
    return rc;
  d->bind = has ? x->bind : NULL;
  if ((rc = get_optional_matrix(bone, "rest", babylon, p, x->rest, &has, err)))
    return rc;
  d->rest = has ? x->rest : NULL;
  const json_t *len = json_object_get(bone, "length");
  if (len != NULL && !json_is_null(len)) {
    if (!json_is_number(len)) {
      at = ptr_push(p, "length");
      rc = sk_error_set(err, SK_ETYPE, p->buf, "expected a number, got %s", json_type_name(len));
      ptr_pop(p, at);
      return rc;
    }
    d->has_length = true;
    d->length = json_number_value(len);
  }
  if ((rc = get_index(bone, "index", p, &d->has_index, &d->index, err)))
    return rc;

  if (babylon) {
    bool hasp;
    int64_t pi = -1;
    if ((rc = get_index(bone, "parentBoneIndex", p, &hasp, &pi, err)))
      return rc;
    at = ptr_push(p, "parentBoneIndex");
    if (!hasp)
      rc = sk_error_set(err, SK_EMISSING, p->buf, "every bone of a Babylon skeleton needs \"parentBoneIndex\"");
    else if (pi < -1 || pi >= (int64_t)json_array_size(bones) || pi == (int64_t)i)
      rc = sk_error_set(err, SK_ERANGE, p->buf, "parentBoneIndex %lld is not -1 or another bone's position",
                        (long long)pi);
    ptr_pop(p, at);
    if (rc)
      return rc;
    d->parent = NULL;
    if (pi >= 0) {
      const json_t *pn = json_object_get(json_array_get(bones, (size_t)pi), "name");
      if (!json_is_string(pn)) {
        at = ptr_push(p, "parentBoneIndex");
        rc = sk_error_set(err, SK_EUNKNOWN, p->buf, "parent bone %lld has no name", (long long)pi);
        ptr_pop(p, at);
        return rc;
      }
      d->parent = json_string_value(pn);
    }
    /* Skeleton.Parse: the serialized "matrix" is both local and bind. */
    const json_t *m = json_object_get(bone, "matrix");
    at = ptr_push(p, "matrix");
    if (m == NULL)
      rc = sk_error_set(err, SK_EMISSING, p->buf, "every bone of a Babylon skeleton needs \"matrix\"");
    else
      rc = babylon_matrix(m, p->buf, d->local, err);
    ptr_pop(p, at);
    d->local_from_matrix = true;
    if (d->has_length && d->length == 0)
      d->has_length = false; /* Parse: `if (parsedBone.length)` */
    return rc;
  }

  const json_t *parent = json_object_get(bone, "parent");
  d->parent = NULL;
  if (parent != NULL && !json_is_null(parent)) {
    if (!json_is_string(parent)) {
      at = ptr_push(p, "parent");
      rc = sk_error_set(err, SK_ETYPE, p->buf, "expected a bone name or null, got %s", json_type_name(parent));
      ptr_pop(p, at);
      return rc;
    }
    d->parent = json_string_value(parent);
  }
  trs_fields t;
  if ((rc = parse_trs(bone, p, &t, err)))
    return rc;
  if ((t.mask & SK_OVERRIDE_MATRIX) && (t.mask & ~SK_OVERRIDE_MATRIX)) {
    at = ptr_push(p, "matrix");
    rc = sk_error_set(err, SK_ETYPE, p->buf, "give \"matrix\" or position/rotation/scaling, not both");
    ptr_pop(p, at);
    return rc;
  }
  if (t.mask & SK_OVERRIDE_MATRIX) {
    memcpy(d->local, t.matrix, sizeof d->local);
    d->local_from_matrix = true;
  } else {
    static const double one[3] = {1, 1, 1}, zero[3] = {0, 0, 0}, ident[4] = {0, 0, 0, 1};
    sk_mat_compose((t.mask & SK_OVERRIDE_SCALING) ? t.scaling : one, (t.mask & SK_OVERRIDE_ROTATION) ? t.rotation : ident,
                   (t.mask & SK_OVERRIDE_POSITION) ? t.position : zero, d->local);
  }
  return 0;
}

int sk_json_parse_skeleton(const json_t *j, const char *ptr, size_t max_bones, sk_skeleton **out, sk_error *err) {
  *out = NULL;
  ptrbuf p;
  ptr_init(&p, ptr);
  if (!json_is_object(j))
    return sk_error_set(err, SK_ETYPE, p.buf, "expected a skeleton object, got %s", json_type_name(j));
  int rc = check_keys(j, k_skeleton_keys, &p, err);
  if (rc)
    return rc;
  const json_t *bones = json_object_get(j, "bones");
  size_t at = ptr_push(&p, "bones");
  if (bones == NULL)
    return sk_error_set(err, SK_EMISSING, p.buf, "a skeleton needs a \"bones\" array");
  if (!json_is_array(bones))
    return sk_error_set(err, SK_ETYPE, p.buf, "expected an array of bones, got %s", json_type_name(bones));
  size_t n = json_array_size(bones);
  if (max_bones == 0 || max_bones > SK_SKELETON_MAX_BONES)
    max_bones = SK_SKELETON_MAX_BONES;
  if (n > max_bones)
    return sk_error_set(err, SK_ETOOBIG, p.buf, "%zu bones; the limit is %zu", n, max_bones);
  bool babylon = n > 0 && json_object_get(json_array_get(bones, 0), "parentBoneIndex") != NULL;
  sk_bone_desc *d = calloc(n ? n : 1, sizeof *d);
  bone_extra *x = malloc((n ? n : 1) * sizeof *x);
  if (d == NULL || x == NULL) {
    rc = sk_error_set(err, SK_ENOMEM, p.buf, "out of memory for %zu bones", n);
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    size_t bat = ptr_push_i(&p, i);
    rc = parse_bone(json_array_get(bones, i), i, babylon, bones, &p, &d[i], &x[i], err);
    ptr_pop(&p, bat);
    if (rc)
      goto done;
  }
  rc = sk_skeleton_create(d, n, p.buf, out, err);
done:
  ptr_pop(&p, at);
  free(d);
  free(x);
  return rc;
}

int sk_json_parse_skeleton_anim(const json_t *j, const char *ptr, size_t max_bones, sk_skeleton **out, sk_anim **anim,
                                sk_error *err) {
  *anim = NULL;
  int rc = sk_json_parse_skeleton(j, ptr, max_bones, out, err);
  if (rc)
    return rc;
  const json_t *bones = json_object_get(j, "bones");
  if (json_array_size(bones) == 0 || json_object_get(json_array_get(bones, 0), "parentBoneIndex") == NULL)
    return 0; /* the case format has no clips */
  if ((rc = sk_banim_parse(j, ptr, *out, anim, err))) {
    sk_skeleton_destroy(*out);
    *out = NULL;
  }
  return rc;
}

int sk_json_no_bone(const sk_skeleton *s, const char *name, const char *ptr, sk_error *err) {
  sk_near n;
  sk_near_init(&n, name);
  for (size_t i = 0; i < s->count; i++)
    sk_near_offer(&n, s->bones[i].name);
  if (n.best != NULL)
    return sk_error_set(err, SK_ENOTFOUND, ptr, "no bone named \"%s\"; did you mean \"%s\"?", name, n.best);
  return sk_error_set(err, SK_ENOTFOUND, ptr, "no bone named \"%s\"", name);
}

static const char *const k_override_keys[] = {"matrix", "position", "rotation", "rotationQuaternion", "scaling", NULL};

int sk_json_parse_overrides(const sk_skeleton *s, const json_t *j, const char *ptr, sk_override **out,
                            size_t *count, sk_error *err) {
  *out = NULL;
  *count = 0;
  ptrbuf p;
  ptr_init(&p, ptr);
  if (!json_is_object(j))
    return sk_error_set(err, SK_ETYPE, p.buf, "expected an object of bone name -> transform, got %s",
                        json_type_name(j));
  size_t n = json_object_size(j);
  sk_override *o = calloc(n ? n : 1, sizeof *o);
  if (o == NULL)
    return sk_error_set(err, SK_ENOMEM, p.buf, "out of memory");
  const char *key;
  json_t *val;
  size_t k = 0;
  int rc = 0;
  json_object_foreach((json_t *)j, key, val) {
    size_t at = ptr_push(&p, key);
    int32_t bone = sk_skeleton_find(s, key);
    if (bone < 0)
      rc = sk_json_no_bone(s, key, p.buf, err);
    else if (!json_is_object(val))
      rc = sk_error_set(err, SK_ETYPE, p.buf, "expected an object, got %s", json_type_name(val));
    else if (!(rc = check_keys(val, k_override_keys, &p, err))) {
      trs_fields t;
      rc = parse_trs(val, &p, &t, err);
      if (!rc) {
        o[k].bone = bone;
        o[k].mask = t.mask;
        memcpy(o[k].matrix, t.matrix, sizeof t.matrix);
        memcpy(o[k].position, t.position, sizeof t.position);
        memcpy(o[k].rotation, t.rotation, sizeof t.rotation);
        memcpy(o[k].scaling, t.scaling, sizeof t.scaling);
        k++;
      }
    }
    ptr_pop(&p, at);
    if (rc) {
      free(o);
      return rc;
    }
  }
  *out = o;
  *count = k;
  return 0;
}

int sk_json_parse_output(const json_t *j, const char *ptr, unsigned *mask, sk_error *err) {
  *mask = SK_OUT_FINAL;
  if (j == NULL)
    return 0;
  ptrbuf p;
  ptr_init(&p, ptr);
  char names[SK_ANSWER_NAMES_MAX];
  if (!json_is_array(j)) {
    sk_answer_output_names(names, sizeof names, ", ");
    return sk_error_set(err, SK_ETYPE, p.buf, "expected an array of %s", names);
  }
  const unsigned core = sk_answer_family_mask(SK_OUTPUT_CORE);
  *mask = 0;
  for (size_t i = 0; i < json_array_size(j); i++) {
    const json_t *v = json_array_get(j, i);
    const char *s = json_string_value(v);
    unsigned bit = s != NULL ? sk_answer_output_bit(s, strlen(s)) & core : 0;
    if (bit == 0 || (*mask & bit)) {
      ptr_push_i(&p, i);
      if (bit != 0)
        return sk_error_set(err, SK_EDUPLICATE, p.buf, "output listed twice");
      sk_answer_output_names(names, sizeof names, " or ");
      return sk_error_set(err, SK_ERANGE, p.buf, "expected %s", names);
    }
    *mask |= bit;
  }
  return 0;
}

int sk_json_write_string(sk_strbuf *b, const char *s) {
  static const char hex[] = "0123456789abcdef";
  if (sk_strbuf_append(b, "\"", 1))
    return SK_ENOMEM;
  const char *run = s;
  for (; *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (c >= 0x20 && c != '"' && c != '\\')
      continue;
    if (sk_strbuf_append(b, run, (size_t)(s - run)))
      return SK_ENOMEM;
    char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
    if (c == '"' || c == '\\') {
      esc[1] = (char)c;
      if (sk_strbuf_append(b, esc, 2))
        return SK_ENOMEM;
    } else if (sk_strbuf_append(b, esc, 6))
      return SK_ENOMEM;
    run = s + 1;
  }
  if (sk_strbuf_append(b, run, (size_t)(s - run)) || sk_strbuf_append(b, "\"", 1))
    return SK_ENOMEM;
  return 0;
}

int sk_json_write_result(sk_strbuf *b, size_t slots, const float *final, const float *absolute, const float *local) {
  return sk_json_write_result_ref(b, slots, final, NULL, absolute, local);
}

int sk_json_write_result_ref(sk_strbuf *b, size_t slots, const float *final, const sk_f32_text *final_ref,
                             const float *absolute, const float *local) {
  const char *sep = "{";
  struct {
    const char *key;
    const float *v;
    size_t n;
  } parts[3] = {{"\"final\":", final, 16 * (slots + 1)}, {"\"absolute\":", absolute, 16 * slots},
                {"\"local\":", local, 16 * slots}};
  for (int i = 0; i < 3; i++) {
    if (parts[i].v == NULL)
      continue;
    if (sk_strbuf_append(b, sep, 1) || sk_strbuf_append(b, parts[i].key, strlen(parts[i].key)) ||
        sk_strbuf_append_f32_array_ref(b, parts[i].v, parts[i].n, i == 0 ? final_ref : NULL))
      return SK_ENOMEM;
    sep = ",";
  }
  if (*sep == '{' && sk_strbuf_append(b, "{", 1))
    return SK_ENOMEM;
  return sk_strbuf_append(b, "}", 1) ? SK_ENOMEM : 0;
}

int sk_json_write_order(const sk_skeleton *s, sk_strbuf *out) {
  if (sk_strbuf_append(out, "[", 1))
    return SK_ENOMEM;
  for (size_t i = 0; i < s->count; i++)
    if ((i > 0 && sk_strbuf_append(out, ",", 1)) || sk_json_write_string(out, s->bones[i].name))
      return SK_ENOMEM;
  return sk_strbuf_append(out, "]", 1) ? SK_ENOMEM : 0;
}
