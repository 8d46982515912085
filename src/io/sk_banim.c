#include "sk_banim.h"
#include "sk_events_json.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_json.h"

/* Babylon's Animation constants (animation.pure.js, 9.34.0). */
enum { BT_VECTOR3 = 1, BT_QUATERNION = 2, BT_MATRIX = 3 };
enum { BL_RELATIVE = 0, BL_CYCLE = 1, BL_CONSTANT = 2, BL_YOYO = 4, BL_RELATIVE_FROM_CURRENT = 5 };

/* A JSON pointer under construction (push, use, pop). */
typedef struct {
  char buf[SK_ERROR_POINTER_MAX];
} ptrbuf;

static size_t push(ptrbuf *p, const char *tok) { return sk_pointer_push(p->buf, sizeof p->buf, tok); }
static size_t push_i(ptrbuf *p, size_t i) { return sk_pointer_push_index(p->buf, sizeof p->buf, i); }
static void pop(ptrbuf *p, size_t at) { p->buf[at] = '\0'; }

/* One parsed Animation, before it is cut into clips. */
typedef struct {
  int32_t bone;
  int path;
  size_t count;
  double *frames;
  float *matrices; /* count * 16, "_matrix" */
  double *values;  /* count * 3 * width, the others */
  uint8_t *flags;
  bool relative;
  double fps;
  bool pad;   /* key 0 is RuntimeAnimation's frame-0 copy of key 1 (same value object) */
  bool extra; /* not the bone's first animation: Babylon gives it no ranges */
  sk_events events; /* the Animation's "events" (owned) */
} banim_track;

static void track_free(banim_track *t) {
  free(t->frames);
  free(t->matrices);
  free(t->values);
  free(t->flags);
  sk_events_free(&t->events);
}

static int check_keys(const json_t *obj, const char *const *allowed, ptrbuf *p, sk_error *err) {
  return sk_json_check_keys(obj, p->buf, allowed, NULL, err);
}

/* A finite number (float range, as everywhere in skinnerd). */
static int number_at(const json_t *v, ptrbuf *p, double *out, sk_error *err) {
  if (!json_is_number(v))
    return sk_error_set(err, SK_ETYPE, p->buf, "expected a number");
  double x = json_number_value(v);
  if (!isfinite(x) || fabs(x) > FLT_MAX)
    return sk_error_set(err, SK_ENOTFINITE, p->buf, "%g is not a finite float32", x);
  *out = x;
  return 0;
}

/* values[from..from+n) as numbers into dest. */
static int numbers_at(const json_t *arr, size_t from, size_t n, ptrbuf *p, double *dest, sk_error *err) {
  for (size_t i = 0; i < n; i++) {
    size_t at = push_i(p, from + i);
    int rc = number_at(json_array_get(arr, from + i), p, &dest[i], err);
    pop(p, at);
    if (rc)
      return rc;
  }
  return 0;
}

/* Vector3 key values: [x, y, z, inTangent?, outTangent?, interpolation?]
 * (AnimationParse: a tangent or interpolation counts when truthy; null,
 * false and 0 do not). */
static int vec3_key(const json_t *vals, ptrbuf *p, double *v, uint8_t *flags, sk_error *err) {
  size_t n = json_array_size(vals);
  if (n < 3 || n > 6)
    return sk_error_set(err, SK_ELENGTH, p->buf, "expected [x, y, z, inTangent?, outTangent?, interpolation?], got %zu values", n);
  int rc = numbers_at(vals, 0, 3, p, v, err);
  for (size_t t = 3; t < 5 && t < n && !rc; t++) {
    const json_t *tj = json_array_get(vals, t);
    if (json_is_null(tj) || json_is_false(tj) || (json_is_number(tj) && json_number_value(tj) == 0))
      continue;
    size_t at = push_i(p, t);
    if (!json_is_array(tj) || json_array_size(tj) != 3)
      rc = sk_error_set(err, SK_ETYPE, p->buf, "expected a tangent [x, y, z] or null");
    else
      rc = numbers_at(tj, 0, 3, p, v + 3 * (t - 2), err);
    pop(p, at);
    *flags |= t == 3 ? SK_ANIM_KEY_IN : SK_ANIM_KEY_OUT;
  }
  if (!rc && n == 6) {
    const json_t *ij = json_array_get(vals, 5);
    size_t at = push_i(p, 5);
    if (!json_is_null(ij) && !json_is_number(ij))
      rc = sk_error_set(err, SK_ETYPE, p->buf, "expected an interpolation number or null");
    else if (json_is_number(ij) && json_number_value(ij) == 1)
      *flags |= SK_ANIM_KEY_STEP;
    pop(p, at);
  }
  return rc;
}

/* Quaternion key values: [x, y, z, w], or flat [q(4), inTangent(4),
 * outTangent(4)?, interpolation?] (a zero tangent counts as none). What
 * Animation.serialize() writes for tangents is nested ([x, y, z, w, [in],
 * [out]], under 8 entries), which AnimationParse ignores beyond the value:
 * so do we. */
static int quat_key(const json_t *vals, ptrbuf *p, double *v, uint8_t *flags, sk_error *err) {
  size_t n = json_array_size(vals);
  if (n < 4 || n > 13)
    return sk_error_set(err, SK_ELENGTH, p->buf, "expected 4 to 13 values, got %zu", n);
  int rc = numbers_at(vals, 0, 4, p, v, err);
  if (rc || n < 8)
    return rc;
  size_t flat = n >= 12 ? 12 : 8;
  if ((rc = numbers_at(vals, 4, flat - 4, p, v + 4, err)))
    return rc;
  for (int t = 0; t < (flat == 12 ? 2 : 1); t++) {
    const double *q = v + 4 + 4 * t;
    if (q[0] != 0 || q[1] != 0 || q[2] != 0 || q[3] != 0)
      *flags |= t == 0 ? SK_ANIM_KEY_IN : SK_ANIM_KEY_OUT;
  }
  if (n == 13) {
    double interp;
    size_t at = push_i(p, 12);
    rc = number_at(json_array_get(vals, 12), p, &interp, err);
    pop(p, at);
    if (!rc && interp == 1)
      *flags |= SK_ANIM_KEY_STEP;
  }
  return rc;
}

/* Matrix key values: 16 numbers (a 17th is an interpolation, moot for a
 * held matrix), or the object JSON.stringify makes of a Float32Array. */
static int matrix_key(const json_t *vals, ptrbuf *p, float *m, sk_error *err) {
  if (json_is_array(vals) && json_array_size(vals) == 17) {
    double ignored;
    size_t at = push_i(p, 16);
    int rc = number_at(json_array_get(vals, 16), p, &ignored, err);
    pop(p, at);
    if (rc)
      return rc;
    json_t *first = json_array();
    if (first == NULL)
      return sk_error_set(err, SK_ENOMEM, p->buf, "out of memory");
    for (size_t i = 0; i < 16; i++)
      json_array_append(first, json_array_get(vals, i));
    rc = sk_json_babylon_matrix(first, p->buf, m, err);
    json_decref(first);
    return rc;
  }
  return sk_json_babylon_matrix(vals, p->buf, m, err);
}

static const char *const k_anim_keys[] = {"name",  "property",       "framePerSecond", "dataType",
                                          "loopBehavior", "keys", "ranges", "enableBlending",
                                          "blendingSpeed", "events", NULL};
static const char *const k_key_keys[] = {"frame", "values", NULL};

/* The property, dataType and loop mode of one Animation. */
static int anim_header(const json_t *a, ptrbuf *p, banim_track *t, sk_error *err) {
  const json_t *prop = json_object_get(a, "property"), *dt = json_object_get(a, "dataType");
  size_t at;
  int rc = 0;
  if (!json_is_string(prop)) {
    at = push(p, "property");
    rc = sk_error_set(err, prop == NULL ? SK_EMISSING : SK_ETYPE, p->buf,
                      "expected \"_matrix\", \"position\", \"rotationQuaternion\" or \"scaling\"");
    pop(p, at);
    return rc;
  }
  const char *ps = json_string_value(prop);
  int want;
  if (strcmp(ps, "_matrix") == 0)
    t->path = SK_ANIM_MATRIX, want = BT_MATRIX;
  else if (strcmp(ps, "position") == 0)
    t->path = SK_ANIM_TRANSLATION, want = BT_VECTOR3;
  else if (strcmp(ps, "rotationQuaternion") == 0)
    t->path = SK_ANIM_ROTATION, want = BT_QUATERNION;
  else if (strcmp(ps, "scaling") == 0)
    t->path = SK_ANIM_SCALE, want = BT_VECTOR3;
  else {
    at = push(p, "property");
    rc = sk_error_set(err, SK_EUNSUPPORTED, p->buf,
                      "bone property \"%s\" is not played; use \"_matrix\", \"position\", \"rotationQuaternion\" or "
                      "\"scaling\"",
                      ps);
    pop(p, at);
    return rc;
  }
  at = push(p, "dataType");
  if (!json_is_integer(dt) || json_integer_value(dt) != want)
    rc = sk_error_set(err, dt == NULL ? SK_EMISSING : SK_ERANGE, p->buf,
                      "property \"%s\" needs dataType %d (%s)", ps, want,
                      want == BT_MATRIX ? "matrix" : want == BT_QUATERNION ? "quaternion" : "vector3");
  pop(p, at);
  if (rc)
    return rc;
  const json_t *fps = json_object_get(a, "framePerSecond");
  at = push(p, "framePerSecond");
  if (fps == NULL)
    rc = sk_error_set(err, SK_EMISSING, p->buf, "an animation needs \"framePerSecond\"");
  else if (!(rc = number_at(fps, p, &t->fps, err)) && !(t->fps > 0))
    rc = sk_error_set(err, SK_ERANGE, p->buf, "framePerSecond must be positive");
  pop(p, at);
  if (rc)
    return rc;
  const json_t *lb = json_object_get(a, "loopBehavior");
  if (lb != NULL && !json_is_null(lb)) {
    at = push(p, "loopBehavior");
    json_int_t m = json_is_integer(lb) ? json_integer_value(lb) : -1;
    if (!json_is_integer(lb))
      rc = sk_error_set(err, SK_ETYPE, p->buf, "expected an integer loop mode");
    else if (m == BL_RELATIVE_FROM_CURRENT)
      rc = sk_error_set(err, SK_EUNSUPPORTED, p->buf,
                        "loopBehavior 5 (RELATIVE_FROM_CURRENT) adds the bone's value at the start of playback, "
                        "which a stateless pose does not have");
    else if (m != BL_RELATIVE && m != BL_CYCLE && m != BL_CONSTANT && m != BL_YOYO)
      rc = sk_error_set(err, SK_ERANGE, p->buf, "loopBehavior must be 0, 1, 2 or 4");
    pop(p, at);
    t->relative = m == BL_RELATIVE;
  }
  return rc;
}

/* Parses one Animation object at `p` for bone `bone` into `t` (owned). */
static int parse_animation(const json_t *a, ptrbuf *p, int32_t bone, banim_track *t, sk_error *err) {
  memset(t, 0, sizeof *t);
  t->bone = bone;
  if (!json_is_object(a))
    return sk_error_set(err, SK_ETYPE, p->buf, "expected a Babylon Animation object");
  int rc = check_keys(a, k_anim_keys, p, err);
  if (rc || (rc = anim_header(a, p, t, err)))
    return rc;
  const json_t *ev = json_object_get(a, "events");
  if (ev != NULL && !json_is_null(ev)) {
    size_t eat = push(p, "events");
    rc = sk_events_json_parse(ev, p->buf, false, &t->events, err);
    pop(p, eat);
    if (rc)
      return rc;
  }
  const json_t *keys = json_object_get(a, "keys");
  size_t kat = push(p, "keys");
  if (!json_is_array(keys) || json_array_size(keys) == 0) {
    rc = sk_error_set(err, keys == NULL ? SK_EMISSING : SK_ETYPE, p->buf, "expected a non-empty array of keys");
    pop(p, kat);
    return rc;
  }
  size_t n = json_array_size(keys);
  const json_t *k0f = json_is_object(json_array_get(keys, 0)) ? json_object_get(json_array_get(keys, 0), "frame") : NULL;
  /* RuntimeAnimation inserts a copy of the first key at frame 0. */
  size_t pad = json_is_number(k0f) && json_number_value(k0f) > 0 ? 1 : 0;
  size_t total = n + pad, w = t->path == SK_ANIM_ROTATION ? 4 : 3;
  t->pad = pad != 0;
  if (total > SIZE_MAX / (16 * sizeof(double))) {
    pop(p, kat);
    return sk_error_set(err, SK_ETOOBIG, p->buf, "too many keys");
  }
  t->count = total;
  t->frames = calloc(total, sizeof *t->frames);
  t->flags = calloc(total, 1);
  if (t->path == SK_ANIM_MATRIX)
    t->matrices = calloc(total * 16, sizeof *t->matrices);
  else
    t->values = calloc(total * 3 * w, sizeof *t->values);
  if (t->frames == NULL || t->flags == NULL || (t->matrices == NULL && t->values == NULL)) {
    pop(p, kat);
    return sk_error_set(err, SK_ENOMEM, p->buf, "out of memory for %zu keys", n);
  }
  for (size_t k = 0; k < n && !rc; k++) {
    size_t at = push_i(p, k), slot = k + pad;
    const json_t *key = json_array_get(keys, k);
    if (!json_is_object(key))
      rc = sk_error_set(err, SK_ETYPE, p->buf, "expected a key {\"frame\", \"values\"}");
    else if (!(rc = check_keys(key, k_key_keys, p, err))) {
      size_t fat = push(p, "frame");
      const json_t *fj = json_object_get(key, "frame");
      if (fj == NULL)
        rc = sk_error_set(err, SK_EMISSING, p->buf, "a key needs a \"frame\"");
      else if (!(rc = number_at(fj, p, &t->frames[slot], err))) {
        if (t->frames[slot] < 0)
          rc = sk_error_set(err, SK_ERANGE, p->buf,
                            "frames start at 0 (Babylon inserts a key at frame 0 before earlier ones, out of order)");
        else if (slot > 0 && t->frames[slot] < t->frames[slot - 1])
          rc = sk_error_set(err, SK_ERANGE, p->buf, "keys must be in frame order");
      }
      pop(p, fat);
      const json_t *vals = json_object_get(key, "values");
      size_t vat = push(p, "values");
      if (!rc && vals == NULL)
        rc = sk_error_set(err, SK_EMISSING, p->buf, "a key needs \"values\"");
      else if (!rc && t->path == SK_ANIM_MATRIX)
        rc = matrix_key(vals, p, t->matrices + 16 * slot, err);
      else if (!rc && !json_is_array(vals))
        rc = sk_error_set(err, SK_ETYPE, p->buf, "expected an array of numbers");
      else if (!rc && w == 3)
        rc = vec3_key(vals, p, t->values + 3 * w * slot, &t->flags[slot], err);
      else if (!rc)
        rc = quat_key(vals, p, t->values + 3 * w * slot, &t->flags[slot], err);
      pop(p, vat);
    }
    pop(p, at);
  }
  pop(p, kat);
  if (!rc && pad) {
    /* {frame: 0, value: keys[0].value}: no tangents, no interpolation. */
    if (t->matrices != NULL)
      memcpy(t->matrices, t->matrices + 16, 16 * sizeof *t->matrices);
    else
      memcpy(t->values, t->values + 3 * w, w * sizeof *t->values);
  }
  return rc;
}

/* The keys of `t` a range [from, to] can reach: from the last key at or
 * before `from` to the first key after `to` (strictly: at frame `to` the
 * key walk ends on the last of equal frames and still interpolates towards
 * the next key, gradient 0, which a slerp need not return bit for bit).
 * Sampling inside the range reads the same keys and clamps alike. */
static void reach(const banim_track *t, double from, double to, size_t *lo_out, size_t *hi_out) {
  /* lo: the last key at or before `from` (0 if none); hi: the first key
   * after `to` (the last key if none). Binary searches: ranges x tracks
   * can be large. */
  size_t lo = 0, a = 0, b = t->count;
  while (b - a > 1) { /* frames[a] <= from < frames[b] once narrowed */
    size_t m = a + (b - a) / 2;
    if (t->frames[m] <= from)
      a = m;
    else
      b = m;
  }
  lo = t->frames[a] <= from ? a : 0;
  size_t hi = t->count - 1;
  a = 0, b = t->count; /* first index with frames > to, in [a, b] */
  while (a < b) {
    size_t m = a + (b - a) / 2;
    if (t->frames[m] > to)
      b = m;
    else
      a = m + 1;
  }
  if (a < t->count)
    hi = a;
  if (hi < lo)
    hi = lo;
  *lo_out = lo;
  *hi_out = hi;
}

static int cut_channel(const banim_track *t, double from, double to, sk_anim_channel *ch) {
  size_t lo, hi;
  reach(t, from, to, &lo, &hi);
  size_t n = hi - lo + 1, w = t->path == SK_ANIM_ROTATION ? 4 : 3;
  memset(ch, 0, sizeof *ch);
  ch->bone = t->bone;
  ch->path = t->path;
  ch->interp = SK_ANIM_LINEAR;
  ch->count = n;
  ch->relative = t->relative;
  /* What MakeAnimationAdditive needs of the keys cut away (sk_banim_add). */
  ch->pads = (uint8_t)((lo == 0 ? SK_ANIM_BPAD_FIRST : 0) | (lo == 0 && t->pad ? SK_ANIM_BPAD_PAD0 : 0) |
                       (lo == 1 && t->pad ? SK_ANIM_BPAD_PAD1 : 0) | (t->extra ? SK_ANIM_BPAD_EXTRA : 0));
  ch->frames = malloc(n * sizeof *ch->frames);
  ch->key_flags = malloc(n);
  if (t->matrices != NULL)
    ch->values = malloc(n * 16 * sizeof *ch->values);
  else
    ch->values64 = malloc(n * 3 * w * sizeof *ch->values64);
  if (ch->frames == NULL || ch->key_flags == NULL || (ch->values == NULL && ch->values64 == NULL))
    return SK_ENOMEM;
  memcpy(ch->frames, t->frames + lo, n * sizeof *ch->frames);
  memcpy(ch->key_flags, t->flags + lo, n);
  if (t->matrices != NULL)
    memcpy(ch->values, t->matrices + 16 * lo, n * 16 * sizeof *ch->values);
  else
    memcpy(ch->values64, t->values + 3 * w * lo, n * 3 * w * sizeof *ch->values64);
  return 0;
}

static int make_clip(const banim_track *tracks, size_t nt, const char *name, bool named, double from, double to,
                     sk_anim_clip *clip, sk_error *err) {
  clip->name = strdup(name);
  clip->named = named;
  clip->fps = tracks[0].fps;
  clip->from_frame = from;
  clip->to_frame = to;
  clip->gltf_channels = nt;
  clip->channels = calloc(nt, sizeof *clip->channels);
  if (clip->name == NULL || clip->channels == NULL)
    return SK_ENOMEM;
  for (size_t k = 0; k < nt; k++) {
    clip->channel_count = k + 1; /* owned so far, for the cleanup */
    if (cut_channel(&tracks[k], from, to, &clip->channels[k]))
      return SK_ENOMEM;
    const sk_anim_channel *ch = &clip->channels[k];
    if (ch->frames[ch->count - 1] > clip->end_frame)
      clip->end_frame = ch->frames[ch->count - 1];
  }
  /* the bones' runtime animations fire in turn: one group each */
  for (size_t k = 0; k < nt; k++)
    if (sk_events_merge(&clip->events, &tracks[k].events, (uint32_t)k, "/bones", err) != 0)
      return err != NULL && err->code != 0 ? err->code : SK_ENOMEM;
  return 0;
}

/* The bone animations of bone `i` (JSON) appended to `tracks`. */
static int bone_tracks(const json_t *bone, size_t i, const sk_skeleton *s, ptrbuf *p, banim_track **tracks, size_t *nt,
                       size_t *cap, sk_error *err) {
  const json_t *one = json_object_get(bone, "animation"), *many = json_object_get(bone, "animations");
  if ((one == NULL || json_is_null(one)) && (many == NULL || json_is_null(many)))
    return 0;
  size_t at = push_i(p, i);
  int rc = 0;
  int32_t b = sk_skeleton_find(s, json_string_value(json_object_get(bone, "name")));
  size_t count = (one != NULL && !json_is_null(one)) + (json_is_array(many) ? json_array_size(many) : 0);
  if (many != NULL && !json_is_null(many) && !json_is_array(many)) {
    size_t mat = push(p, "animations");
    rc = sk_error_set(err, SK_ETYPE, p->buf, "expected an array of Babylon Animation objects");
    pop(p, mat);
  }
  if (!rc && *nt + count > *cap) {
    size_t nc = (*nt + count) * 2;
    banim_track *g = realloc(*tracks, nc * sizeof *g);
    if (g == NULL)
      rc = sk_error_set(err, SK_ENOMEM, p->buf, "out of memory");
    else
      *tracks = g, *cap = nc;
  }
  for (size_t k = 0; k < count && !rc; k++) {
    bool single = one != NULL && !json_is_null(one) && k == 0;
    size_t kat = push(p, single ? "animation" : "animations");
    if (!single)
      push_i(p, k - (one != NULL && !json_is_null(one)));
    rc = parse_animation(single ? one : json_array_get(many, k - (one != NULL && !json_is_null(one))), p, b,
                         &(*tracks)[*nt], err);
    (*tracks)[*nt].extra = k > 0;
    (*nt)++; /* owned even when half built */
    pop(p, kat);
  }
  pop(p, at);
  return rc;
}

/* A bone animated by "_matrix" and by TRS channels would depend on the
 * order Babylon's runtime animations run in; refused. */
static int check_mixed(const banim_track *t, size_t nt, const sk_skeleton *s, ptrbuf *p, sk_error *err) {
  for (size_t a = 0; a < nt; a++)
    for (size_t b = a + 1; b < nt; b++)
      if (t[a].bone == t[b].bone && (t[a].path == SK_ANIM_MATRIX) != (t[b].path == SK_ANIM_MATRIX)) {
        size_t at = push(p, "bones");
        int rc = sk_error_set(err, SK_EUNSUPPORTED, p->buf,
                              "bone \"%s\" has both \"_matrix\" and position/rotation/scaling animations",
                              s->bones[t[a].bone].name);
        pop(p, at);
        return rc;
      }
  return 0;
}

static const char *const k_range_keys[] = {"name", "from", "to", NULL};

/* Checks the skeleton's "ranges"; returns their count in *n. */
static int check_ranges(const json_t *ranges, ptrbuf *p, size_t *n, sk_error *err) {
  *n = 0;
  if (ranges == NULL || json_is_null(ranges))
    return 0;
  size_t at = push(p, "ranges");
  int rc = 0;
  if (!json_is_array(ranges))
    rc = sk_error_set(err, SK_ETYPE, p->buf, "expected an array of {\"name\", \"from\", \"to\"}");
  for (size_t i = 0; !rc && i < json_array_size(ranges); i++) {
    size_t iat = push_i(p, i);
    const json_t *r = json_array_get(ranges, i);
    double f, t;
    if (!json_is_object(r))
      rc = sk_error_set(err, SK_ETYPE, p->buf, "expected a range {\"name\", \"from\", \"to\"}");
    else if (!(rc = check_keys(r, k_range_keys, p, err))) {
      const json_t *name = json_object_get(r, "name");
      size_t fat = push(p, "name");
      if (!json_is_string(name) || json_string_value(name)[0] == '\0')
        rc = sk_error_set(err, name == NULL ? SK_EMISSING : SK_ETYPE, p->buf, "a range needs a non-empty name");
      for (size_t k = 0; !rc && k < i; k++)
        if (strcmp(json_string_value(json_object_get(json_array_get(ranges, k), "name")), json_string_value(name)) == 0)
          rc = sk_error_set(err, SK_EDUPLICATE, p->buf, "range \"%s\" is defined twice", json_string_value(name));
      pop(p, fat);
      const char *fk[2] = {"from", "to"};
      double *fv[2] = {&f, &t};
      for (int q = 0; q < 2 && !rc; q++) {
        fat = push(p, fk[q]);
        const json_t *v = json_object_get(r, fk[q]);
        if (v == NULL)
          rc = sk_error_set(err, SK_EMISSING, p->buf, "a range needs \"from\" and \"to\" frames");
        else
          rc = number_at(v, p, fv[q], err);
        pop(p, fat);
      }
      if (!rc && t < f) {
        fat = push(p, "to");
        rc = sk_error_set(err, SK_ERANGE, p->buf, "\"to\" is before \"from\"");
        pop(p, fat);
      }
    }
    pop(p, iat);
  }
  pop(p, at);
  if (!rc)
    *n = json_array_size(ranges);
  return rc;
}

/* Keys and channels all clips of `tracks` hold: every range copies the keys
 * it can reach (no ranges: one clip of every key). */
static void count_reach(const banim_track *tracks, size_t nt, const json_t *ranges, size_t nr, double *keys,
                        double *channels) {
  *keys = 0;
  *channels = (double)nt * (double)(nr ? nr : 1);
  for (size_t r = 0; r < (nr ? nr : 1); r++)
    for (size_t k = 0; k < nt; k++) {
      size_t lo = 0, hi = tracks[k].count - 1;
      if (nr)
        reach(&tracks[k], json_number_value(json_object_get(json_array_get(ranges, r), "from")),
              json_number_value(json_object_get(json_array_get(ranges, r), "to")), &lo, &hi);
      *keys += (double)(hi - lo + 1);
    }
}

/* The steps sk_banim_estimate and sk_banim_parse share: every bone's
 * tracks (*tracks new, *nt of them, even on failure: free with
 * tracks_free), checked against each other, and the ranges (*nr). */
static int collect_tracks(const json_t *j, const sk_skeleton *s, ptrbuf *p, banim_track **tracks, size_t *nt,
                          size_t *nr, sk_error *err) {
  const json_t *bones = json_object_get(j, "bones");
  size_t cap = 0;
  int rc = 0;
  *tracks = NULL;
  *nt = *nr = 0;
  size_t bat = push(p, "bones");
  for (size_t i = 0; i < json_array_size(bones) && !rc; i++)
    rc = bone_tracks(json_array_get(bones, i), i, s, p, tracks, nt, &cap, err);
  pop(p, bat);
  if (!rc)
    rc = check_mixed(*tracks, *nt, s, p, err);
  if (!rc)
    rc = check_ranges(json_object_get(j, "ranges"), p, nr, err);
  return rc;
}

static void tracks_free(banim_track *tracks, size_t nt) {
  for (size_t k = 0; k < nt; k++)
    track_free(&tracks[k]);
  free(tracks);
}

int sk_banim_estimate(const json_t *j, const char *ptr, const sk_skeleton *s, size_t *bytes, sk_error *err) {
  *bytes = 0;
  ptrbuf p;
  snprintf(p.buf, sizeof p.buf, "%s", ptr != NULL ? ptr : "");
  banim_track *tracks;
  size_t nt, nr;
  int rc = collect_tracks(j, s, &p, &tracks, &nt, &nr, err);
  const json_t *ranges = json_object_get(j, "ranges");
  if (!rc && nt > 0) {
    double keys, channels;
    count_reach(tracks, nt, ranges, nr, &keys, &channels);
    /* per key: its frame, three values of up to 4 doubles (value and
     * tangents) or a float matrix, and its flags */
    const double per_key = sizeof(double) + 12 * sizeof(double) + 1;
    double b = keys * per_key + channels * sizeof(sk_anim_channel) + (double)(nr ? nr : 1) * sizeof(sk_anim_clip) +
               (double)s->count * SK_ANIM_TRS * sizeof(double) + sizeof(sk_anim) + sizeof "animation0";
    for (size_t r = 0; r < nr; r++)
      b += (double)strlen(json_string_value(json_object_get(json_array_get(ranges, r), "name"))) + 1;
    /* every clip holds all the animations' events */
    double ev = 0;
    for (size_t k = 0; k < nt; k++)
      ev += (double)tracks[k].events.count;
    b += (ev < SK_EVENTS_MAX ? ev : SK_EVENTS_MAX) * sizeof(sk_event) * (double)(nr ? nr : 1);
    *bytes = b < (double)SIZE_MAX / 2 ? (size_t)b : SIZE_MAX / 2;
  }
  tracks_free(tracks, nt);
  return rc;
}

int sk_banim_parse(const json_t *j, const char *ptr, const sk_skeleton *s, sk_anim **out, sk_error *err) {
  *out = NULL;
  ptrbuf p;
  snprintf(p.buf, sizeof p.buf, "%s", ptr != NULL ? ptr : "");
  banim_track *tracks;
  size_t nt, nr;
  int rc = collect_tracks(j, s, &p, &tracks, &nt, &nr, err);
  const json_t *ranges = json_object_get(j, "ranges");
  if (rc || nt == 0)
    goto done;
  {
    /* Every range copies the keys it can reach: bound what a small body
     * with many ranges could make us hold. */
    double keys, channels;
    count_reach(tracks, nt, ranges, nr, &keys, &channels);
    if (keys > SK_BANIM_MAX_KEYS || channels > SK_BANIM_MAX_KEYS) {
      rc = sk_error_set(err, SK_ETOOBIG, nr ? "/ranges" : p.buf,
                        "the ranges reach %.0f keys in %.0f channels; the limit is %d of each", keys, channels,
                        SK_BANIM_MAX_KEYS);
      goto done;
    }
  }
  sk_anim *a = calloc(1, sizeof *a);
  if (a == NULL) {
    rc = sk_error_set(err, SK_ENOMEM, p.buf, "out of memory");
    goto done;
  }
  a->babylon = true;
  a->bone_count = s->count;
  a->rest = calloc(s->count ? s->count * SK_ANIM_TRS : 1, sizeof *a->rest);
  a->clip_count = nr ? nr : 1;
  a->clips = calloc(a->clip_count, sizeof *a->clips);
  if (a->rest == NULL || a->clips == NULL)
    rc = SK_ENOMEM;
  for (size_t b = 0; !rc && b < s->count; b++) {
    a->rest[b * SK_ANIM_TRS + 6] = 1; /* identity rotation w; scaling 1 */
    for (int q = 7; q < 10; q++)
      a->rest[b * SK_ANIM_TRS + q] = 1;
  }
  if (!rc && nr == 0) {
    double last = 0;
    for (size_t k = 0; k < nt; k++)
      if (tracks[k].frames[tracks[k].count - 1] > last)
        last = tracks[k].frames[tracks[k].count - 1];
    rc = make_clip(tracks, nt, "animation0", false, 0, last, &a->clips[0], err);
  }
  for (size_t r = 0; !rc && r < nr; r++) {
    const json_t *rj = json_array_get(ranges, r);
    rc = make_clip(tracks, nt, json_string_value(json_object_get(rj, "name")), true,
                   json_number_value(json_object_get(rj, "from")), json_number_value(json_object_get(rj, "to")),
                   &a->clips[r], err);
  }
  if (rc) {
    sk_anim_destroy(a);
    rc = sk_error_set(err, SK_ENOMEM, p.buf, "out of memory for the animation clips"); /* or the events' error */
  } else
    *out = a;
done:
  tracks_free(tracks, nt);
  return rc;
}

/* ---- copyAnimationRange ---------------------------------------------------- */

/* Bone.length as Skeleton.Parse sets it: only a truthy number. */
static double bone_length(const json_t *bone) {
  const json_t *l = json_object_get(bone, "length");
  return json_is_number(l) ? json_number_value(l) : 0;
}

static const json_t *parent_of(const json_t *bones, const json_t *bone) {
  json_int_t p = json_integer_value(json_object_get(bone, "parentBoneIndex"));
  return p >= 0 ? json_array_get(bones, (size_t)p) : NULL;
}

/* The range `name` of an Animation ("ranges"; the first of a name wins, as
 * Animation.createRange keeps it). */
static bool anim_range(const json_t *anim, const char *name, double *from, double *to) {
  const json_t *rs = json_object_get(anim, "ranges");
  for (size_t i = 0; i < json_array_size(rs); i++) {
    const json_t *r = json_array_get(rs, i);
    const char *n = json_string_value(json_object_get(r, "name"));
    if (n != NULL && strcmp(n, name) == 0 && json_is_number(json_object_get(r, "from")) &&
        json_is_number(json_object_get(r, "to"))) {
      *from = json_number_value(json_object_get(r, "from"));
      *to = json_number_value(json_object_get(r, "to"));
      return true;
    }
  }
  return false;
}

static bool skel_range(const json_t *skel, const char *name, double *from, double *to) {
  const json_t *rs = json_object_get(skel, "ranges");
  for (size_t i = 0; i < json_array_size(rs); i++) {
    const json_t *r = json_array_get(rs, i);
    if (strcmp(json_string_value(json_object_get(r, "name")), name) == 0) {
      *from = json_number_value(json_object_get(r, "from"));
      *to = json_number_value(json_object_get(r, "to"));
      return true;
    }
  }
  return false;
}

/* dimensionsAtRest as Skeleton.Parse reads it: absent/null is none. */
static int dims_at(const json_t *skel, ptrbuf *p, bool *has, double d[3], sk_error *err) {
  const json_t *v = json_object_get(skel, "dimensionsAtRest");
  *has = v != NULL && !json_is_null(v);
  if (!*has)
    return 0;
  size_t at = push(p, "dimensionsAtRest");
  int rc = json_is_array(v) && json_array_size(v) == 3
               ? numbers_at(v, 0, 3, p, d, err)
               : sk_error_set(err, SK_ETYPE, p->buf, "expected [x, y, z] to rescale by");
  pop(p, at);
  return rc;
}

/* One dst bone: appends the source keys in [from, to] (rescaled) to its
 * "_matrix" animation, creating it if needed. */
static int copy_bone(json_t *dbone, const json_t *dbones, const json_t *sbone, const json_t *sbones, const char *name,
                     double offset, bool rescale, const double *dims_ratio, ptrbuf *p, sk_error *err) {
  const json_t *sanim = json_object_get(sbone, "animation");
  double from, to;
  if (!json_is_object(sanim) || json_integer_value(json_object_get(sanim, "dataType")) != BT_MATRIX ||
      !anim_range(sanim, name, &from, &to))
    return sk_error_set(err, SK_EUNSUPPORTED, p->buf,
                        "source bone \"%s\" has no \"_matrix\" animation with range \"%s\" (Babylon would stop copying)",
                        json_string_value(json_object_get(sbone, "name")), name);
  json_t *danim = json_object_get(dbone, "animation");
  if (danim == NULL || json_is_null(danim)) {
    danim = json_pack("{s:O,s:s,s:O,s:i,s:i,s:[],s:[]}", "name", json_object_get(dbone, "name"), "property", "_matrix",
                      "framePerSecond", json_object_get(sanim, "framePerSecond"), "dataType", BT_MATRIX,
                      "loopBehavior", 0, "keys", "ranges");
    if (danim == NULL || json_object_set_new(dbone, "animation", danim))
      return sk_error_set(err, SK_ENOMEM, p->buf, "out of memory");
  } else if (json_integer_value(json_object_get(danim, "dataType")) != BT_MATRIX) {
    return sk_error_set(err, SK_EUNSUPPORTED, "/skeleton",
                        "bone \"%s\" is animated by other than \"_matrix\"; copyAnimationRange appends matrices",
                        json_string_value(json_object_get(dbone, "name")));
  }
  json_t *dkeys = json_object_get(danim, "keys");
  const json_t *skeys = json_object_get(sanim, "keys");
  const json_t *sparent = parent_of(sbones, sbone), *dparent = parent_of(dbones, dbone);
  double slen = bone_length(sbone), dlen = bone_length(dbone);
  bool parent_scaling = rescale && sparent != NULL && slen != 0 && dlen != 0 && slen != dlen;
  double ratio = 1;
  if (parent_scaling && dparent != NULL) {
    ratio = bone_length(dparent) / bone_length(sparent);
    if (!isfinite(ratio) || bone_length(dparent) == 0)
      return sk_error_set(err, SK_ERANGE, p->buf,
                          "rescaling bone \"%s\" needs the lengths of its parent and of the source parent "
                          "(Babylon would write NaN)",
                          json_string_value(json_object_get(dbone, "name")));
  }
  bool dims_scaling = rescale && dparent == NULL && dims_ratio != NULL &&
                      (dims_ratio[0] != 1 || dims_ratio[1] != 1 || dims_ratio[2] != 1);
  for (size_t k = 0; k < json_array_size(skeys); k++) {
    const json_t *key = json_array_get(skeys, k);
    double f = json_number_value(json_object_get(key, "frame"));
    if (!(f >= from && f <= to))
      continue;
    json_t *vals = json_object_get(key, "values");
    json_t *nv = NULL;
    if (parent_scaling || dims_scaling) {
      float m[16];
      int mrc = matrix_key(vals, p, m, err);
      if (mrc)
        return mrc;
      for (int i = 0; i < 3; i++) {
        double t = m[12 + i];
        m[12 + i] = (float)(parent_scaling ? t * ratio : t * dims_ratio[i]);
      }
      nv = json_array();
      for (int i = 0; nv != NULL && i < 16; i++)
        if (json_array_append_new(nv, json_real(m[i]))) {
          json_decref(nv);
          nv = NULL;
        }
    } else {
      nv = json_deep_copy(vals);
    }
    json_t *nk = nv != NULL ? json_pack("{s:f,s:o}", "frame", f + offset, "values", nv) : NULL;
    if (nk == NULL || json_array_append_new(dkeys, nk))
      return sk_error_set(err, SK_ENOMEM, p->buf, "out of memory");
  }
  if (json_array_size(dkeys) == 0)
    return sk_error_set(err, SK_ERANGE, p->buf,
                        "range \"%s\" holds no key of bone \"%s\", which would have no animation keys (Babylon "
                        "crashes playing it)",
                        name, json_string_value(json_object_get(sbone, "name")));
  json_t *dr = json_object_get(danim, "ranges");
  if (!json_is_array(dr)) {
    dr = json_array();
    if (dr == NULL || json_object_set_new(danim, "ranges", dr))
      return sk_error_set(err, SK_ENOMEM, p->buf, "out of memory");
  }
  double have_f, have_t;
  if (!anim_range(danim, name, &have_f, &have_t) &&
      json_array_append_new(dr, json_pack("{s:s,s:f,s:f}", "name", name, "from", from + offset, "to", to + offset)))
    return sk_error_set(err, SK_ENOMEM, p->buf, "out of memory");
  return 0;
}

int sk_banim_copy_range(const json_t *dst, const json_t *src, const char *src_ptr, const char *name,
                        const char *name_ptr, bool rescale, json_t **out, sk_error *err) {
  *out = NULL;
  ptrbuf p;
  snprintf(p.buf, sizeof p.buf, "%s", src_ptr != NULL ? src_ptr : "");
  sk_skeleton *ss;
  sk_anim *sa;
  int rc = sk_json_parse_skeleton_anim(src, p.buf, 0, &ss, &sa, err);
  if (rc)
    return rc;
  sk_anim_destroy(sa);
  const json_t *sbones = json_object_get(src, "bones"), *dbones0 = json_object_get(dst, "bones");
  double from, to, sd[3], dd[3], ratio[3];
  bool has_sd = false, has_dd = false;
  if (json_array_size(sbones) == 0 || json_object_get(json_array_get(sbones, 0), "parentBoneIndex") == NULL)
    rc = sk_error_set(err, SK_ETYPE, p.buf, "expected a Babylon skeleton (Skeleton.serialize() format)");
  else if (!skel_range(src, name, &from, &to))
    rc = sk_error_set(err, SK_ENOTFOUND, name_ptr, "the source skeleton has no range \"%s\"", name);
  else if (skel_range(dst, name, &from, &to))
    rc = sk_error_set(err, SK_EDUPLICATE, name_ptr, "this skeleton already has a range \"%s\"", name);
  else if (json_array_size(sbones) != json_array_size(dbones0))
    rc = sk_error_set(err, SK_EUNKNOWN, p.buf, "the source has %zu bones, this skeleton %zu (Babylon copies nothing)",
                      json_array_size(sbones), json_array_size(dbones0));
  if (!rc && rescale && !(rc = dims_at(src, &p, &has_sd, sd, err))) {
    ptrbuf q;
    snprintf(q.buf, sizeof q.buf, "/skeleton");
    rc = dims_at(dst, &q, &has_dd, dd, err);
  }
  for (int i = 0; i < 3 && has_sd && has_dd; i++)
    ratio[i] = dd[i] / sd[i]; /* Vector3.divide */
  json_t *d = rc ? NULL : json_deep_copy(dst);
  if (!rc && d == NULL)
    rc = sk_error_set(err, SK_ENOMEM, p.buf, "out of memory");
  double offset = 0;
  json_t *dbones = json_object_get(d, "bones");
  for (size_t i = 0; !rc && i < json_array_size(dbones); i++) {
    const json_t *keys = json_object_get(json_object_get(json_array_get(dbones, i), "animation"), "keys");
    for (size_t k = 0; k < json_array_size(keys); k++) {
      double f = json_number_value(json_object_get(json_array_get(keys, k), "frame"));
      offset = f > offset ? f : offset;
    }
  }
  offset += 1; /* _getHighestAnimationFrame() + 1 */
  size_t bat = push(&p, "bones");
  for (size_t i = 0; !rc && i < json_array_size(dbones); i++) {
    json_t *db = json_array_get(dbones, i);
    const char *bn = json_string_value(json_object_get(db, "name"));
    int32_t sb = sk_skeleton_find(ss, bn);
    if (sb < 0) {
      rc = sk_error_set(err, SK_EUNKNOWN, p.buf, "the source has no bone \"%s\" (Babylon stops copying)", bn);
      break;
    }
    size_t at = push_i(&p, (size_t)ss->bones[sb].input_pos);
    rc = copy_bone(db, dbones, json_array_get(sbones, (size_t)ss->bones[sb].input_pos), sbones, name, offset, rescale,
                   has_sd && has_dd ? ratio : NULL, &p, err);
    pop(&p, at);
  }
  pop(&p, bat);
  if (!rc) {
    json_t *rs = json_object_get(d, "ranges");
    if (!json_is_array(rs)) {
      rs = json_array();
      if (rs == NULL || json_object_set_new(d, "ranges", rs))
        rc = sk_error_set(err, SK_ENOMEM, p.buf, "out of memory");
    }
    skel_range(src, name, &from, &to);
    if (!rc &&
        json_array_append_new(rs, json_pack("{s:s,s:f,s:f}", "name", name, "from", from + offset, "to", to + offset)))
      rc = sk_error_set(err, SK_ENOMEM, p.buf, "out of memory");
  }
  sk_skeleton_destroy(ss);
  if (rc) {
    json_decref(d);
    return rc;
  }
  *out = d;
  return 0;
}
