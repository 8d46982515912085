#include "sk_fastpose.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sk_error.h"
#include "sk_json.h"
#include "sk_mat.h"

typedef struct cursor {
  const char *p, *end;
} cursor;

static void skip_ws(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
}

static bool eat(cursor *c, char ch) {
  skip_ws(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return true;
  }
  return false;
}

static bool eat_word(cursor *c, const char *w) {
  skip_ws(c);
  size_t n = strlen(w);
  if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
    c->p += n;
    return true;
  }
  return false;
}

/* A string of printable ASCII without escapes (anything else declines:
 * jansson then decodes and validates it). */
static bool read_string(cursor *c, const char **s, size_t *n) {
  skip_ws(c);
  if (c->p >= c->end || *c->p != '"')
    return false;
  const char *start = ++c->p;
  while (c->p < c->end) {
    unsigned char ch = (unsigned char)*c->p;
    if (ch == '"')
      break;
    if (ch == '\\' || ch < 0x20 || ch >= 0x80)
      return false;
    c->p++;
  }
  if (c->p >= c->end)
    return false;
  *s = start;
  *n = (size_t)(c->p - start);
  c->p++;
  return true;
}

static bool key_is(const char *s, size_t n, const char *k) { return strlen(k) == n && memcmp(s, k, n) == 0; }

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* Exact powers of ten as doubles (10^22 is the largest). */
static const double k_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A JSON number with jansson's value: an integer token is read as a long
 * long then converted (so "-0" is +0.0, as jansson gives), a real token is
 * the correctly rounded double (Clinger's exact fast path when the digits
 * fit 2^53 and the power of ten is exact, else strtod like jansson). */
static bool read_number(cursor *c, double *out) {
  skip_ws(c);
  const char *p = c->p, *start = p, *end = c->end;
  bool neg = false, real = false;
  if (p < end && *p == '-') {
    neg = true;
    p++;
  }
  if (p >= end)
    return false;
  uint64_t m = 0;
  int sig = 0, e10 = 0;
  bool exact = true;
  if (*p == '0') {
    p++;
  } else if (*p >= '1' && *p <= '9') {
    while (p < end && is_digit(*p)) {
      if (sig < 19) {
        m = m * 10 + (uint64_t)(*p - '0');
        sig++;
      } else {
        exact = false;
        e10++;
      }
      p++;
    }
  } else {
    return false;
  }
  if (p < end && *p == '.') {
    real = true;
    p++;
    if (p >= end || !is_digit(*p))
      return false;
    while (p < end && is_digit(*p)) {
      if (m == 0 && *p == '0') {
        e10--; /* leading zeros of the fraction */
      } else if (sig < 19) {
        m = m * 10 + (uint64_t)(*p - '0');
        sig++;
        e10--;
      } else {
        exact = false;
      }
      p++;
    }
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    real = true;
    p++;
    bool eneg = false;
    if (p < end && (*p == '+' || *p == '-'))
      eneg = *p++ == '-';
    if (p >= end || !is_digit(*p))
      return false;
    int ev = 0;
    while (p < end && is_digit(*p)) {
      if (ev < 100000)
        ev = ev * 10 + (*p - '0');
      p++;
    }
    e10 += eneg ? -ev : ev;
  }
  size_t len = (size_t)(p - start);
  if (!real) {
    if (len - (neg ? 1 : 0) > 18)
      return false; /* near long long range: let jansson decide */
    int64_t iv = (int64_t)m;
    *out = (double)(neg ? -iv : iv); /* integer negation: "-0" is +0.0 */
    c->p = p;
    return true;
  }
  if (exact && m < (UINT64_C(1) << 53) && e10 >= -22 && e10 <= 22) {
    double d = (double)m;
    d = e10 < 0 ? d / k_pow10[-e10] : d * k_pow10[e10];
    *out = neg ? -d : d;
  } else {
    char buf[128];
    if (len >= sizeof buf)
      return false;
    memcpy(buf, start, len);
    buf[len] = '\0';
    double d = strtod(buf, NULL);
    if (isinf(d))
      return false; /* jansson: "real number overflow" */
    *out = d;
  }
  c->p = p;
  return true;
}

/* Exactly n numbers within float range (sk_json_floats/doubles accept
 * nothing else). */
static bool read_array(cursor *c, size_t n, double *dd, float *ff) {
  if (!eat(c, '['))
    return false;
  for (size_t i = 0; i < n; i++) {
    double x;
    if ((i > 0 && !eat(c, ',')) || !read_number(c, &x) || !(fabs(x) <= FLT_MAX))
      return false;
    if (dd != NULL)
      dd[i] = x;
    if (ff != NULL)
      ff[i] = (float)x;
  }
  return eat(c, ']');
}

/* {"matrix"?, "position"?, "rotation"? | "rotationQuaternion"?, "scaling"?} */
static bool read_trs(cursor *c, sk_override *o) {
  if (!eat(c, '{'))
    return false;
  if (eat(c, '}'))
    return true;
  bool euler = false, quat = false;
  do {
    const char *k;
    size_t n;
    if (!read_string(c, &k, &n) || !eat(c, ':'))
      return false;
    unsigned bit;
    bool ok;
    if (key_is(k, n, "matrix")) {
      bit = SK_OVERRIDE_MATRIX;
      ok = !(o->mask & bit) && read_array(c, 16, NULL, o->matrix);
    } else if (key_is(k, n, "position")) {
      bit = SK_OVERRIDE_POSITION;
      ok = !(o->mask & bit) && read_array(c, 3, o->position, NULL);
    } else if (key_is(k, n, "rotation")) {
      double e[3];
      bit = SK_OVERRIDE_ROTATION;
      ok = !(o->mask & bit) && read_array(c, 3, e, NULL);
      if (ok)
        sk_quat_from_yaw_pitch_roll(e[1], e[0], e[2], o->rotation);
      euler = true;
    } else if (key_is(k, n, "rotationQuaternion")) {
      bit = SK_OVERRIDE_ROTATION;
      ok = !(o->mask & bit) && read_array(c, 4, o->rotation, NULL);
      quat = true;
    } else if (key_is(k, n, "scaling")) {
      bit = SK_OVERRIDE_SCALING;
      ok = !(o->mask & bit) && read_array(c, 3, o->scaling, NULL);
    } else {
      return false;
    }
    if (!ok || (euler && quat))
      return false;
    o->mask |= bit;
  } while (eat(c, ','));
  return eat(c, '}');
}

/* Bones seen in this pose: a bitmap on the stack for common sizes. */
typedef struct seen_set {
  uint64_t small[16];
  uint64_t *bits;
} seen_set;

static int seen_init(seen_set *s, size_t bones) {
  memset(s->small, 0, sizeof s->small);
  s->bits = s->small;
  if (bones > 64 * 16) {
    s->bits = calloc((bones + 63) / 64, sizeof(uint64_t));
    if (s->bits == NULL)
      return SK_ENOMEM;
  }
  return 0;
}

static void seen_close(seen_set *s) {
  if (s->bits != s->small)
    free(s->bits);
}

/* Returns false when `b` was already there. */
static bool seen_add(seen_set *s, size_t b) {
  uint64_t bit = UINT64_C(1) << (b % 64);
  if (s->bits[b / 64] & bit)
    return false;
  s->bits[b / 64] |= bit;
  return true;
}

/* The overrides of every pose parsed so far, in one growing block: a
 * batch's poses share it (the first owns it), so a batch of 64 one-bone
 * poses makes 3 allocations where one block a pose made 64. `limit` caps
 * the growth of a single pose's block at its skeleton's bones. */
typedef struct ovbuf {
  sk_override *v;
  size_t len, cap, limit;
} ovbuf;

static sk_override *ovbuf_push(ovbuf *b) {
  if (b->len == b->cap) {
    size_t ncap = b->cap ? b->cap * 2 : 16;
    if (b->limit != 0 && ncap > b->limit)
      ncap = b->limit;
    sk_override *no = realloc(b->v, ncap * sizeof *no);
    if (no == NULL)
      return NULL;
    b->v = no;
    b->cap = ncap;
  }
  return &b->v[b->len++];
}

/* {"<bone>": trs, ...}: appends to `ob`, counting them in pose->count. */
static int read_bones(const sk_skeleton *s, cursor *c, ovbuf *ob, sk_pose *pose) {
  if (!eat(c, '{'))
    return SK_FASTPOSE_DECLINE;
  if (eat(c, '}'))
    return 0;
  seen_set seen;
  if (seen_init(&seen, s->count))
    return SK_ENOMEM;
  int rc = 0;
  do {
    const char *k;
    size_t n;
    char name[256];
    if (!read_string(c, &k, &n) || n >= sizeof name || !eat(c, ':')) {
      rc = SK_FASTPOSE_DECLINE;
      break;
    }
    memcpy(name, k, n);
    name[n] = '\0';
    int32_t bone = sk_skeleton_find(s, name);
    if (bone < 0 || !seen_add(&seen, (size_t)bone)) {
      rc = SK_FASTPOSE_DECLINE;
      break;
    }
    sk_override *o = ovbuf_push(ob);
    if (o == NULL) {
      rc = SK_ENOMEM;
      break;
    }
    memset(o, 0, sizeof *o);
    o->bone = bone;
    if (!read_trs(c, o)) {
      rc = SK_FASTPOSE_DECLINE;
      break;
    }
    pose->count++;
  } while (eat(c, ','));
  seen_close(&seen);
  if (rc == 0 && !eat(c, '}'))
    rc = SK_FASTPOSE_DECLINE;
  return rc;
}

/* ["final" | "absolute" | "local", ...] without repeats. */
static bool read_output(cursor *c, unsigned *mask) {
  *mask = 0;
  if (!eat(c, '['))
    return false;
  if (eat(c, ']'))
    return true;
  do {
    const char *k;
    size_t n;
    if (!read_string(c, &k, &n))
      return false;
    /* the CORE kinds only: the Bone API's need the jansson path (sk_poseops) */
    unsigned bit = sk_answer_output_bit(k, n) & sk_answer_family_mask(SK_OUTPUT_CORE);
    if (bit == 0 || (*mask & bit))
      return false;
    *mask |= bit;
  } while (eat(c, ','));
  return eat(c, ']');
}

/* One pose object at the cursor, its overrides appended to `ob` (the
 * caller points pose->overrides at them once `ob` stops moving). The pose
 * owns nothing, on success or failure. */
static int read_pose(const sk_skeleton *s, cursor *c, ovbuf *ob, sk_pose *pose) {
  memset(pose, 0, sizeof *pose);
  pose->output = SK_OUT_FINAL;
  if (!eat(c, '{'))
    return SK_FASTPOSE_DECLINE;
  if (eat(c, '}'))
    return 0;
  bool has_bones = false, has_skin = false, has_output = false;
  int rc = 0;
  do {
    const char *k;
    size_t n;
    if (!read_string(c, &k, &n) || !eat(c, ':')) {
      rc = SK_FASTPOSE_DECLINE;
      break;
    }
    if (key_is(k, n, "bones") && !has_bones) {
      has_bones = true;
      rc = read_bones(s, c, ob, pose);
    } else if (key_is(k, n, "initialSkinMatrix") && !has_skin) {
      has_skin = true;
      if (!eat_word(c, "null")) {
        if (!read_array(c, 16, NULL, pose->initial_skin))
          rc = SK_FASTPOSE_DECLINE;
        pose->has_initial_skin = true;
      }
    } else if (key_is(k, n, "output") && !has_output) {
      has_output = true;
      if (!read_output(c, &pose->output))
        rc = SK_FASTPOSE_DECLINE;
    } else {
      rc = SK_FASTPOSE_DECLINE;
    }
  } while (rc == 0 && eat(c, ','));
  if (rc == 0 && !eat(c, '}'))
    rc = SK_FASTPOSE_DECLINE;
  return rc;
}

int sk_fastpose_parse(const sk_skeleton *s, const char *text, size_t len, sk_pose *pose) {
  cursor c = {text, text + len};
  ovbuf ob = {NULL, 0, 0, s->count};
  sk_pose tmp;
  int rc = read_pose(s, &c, &ob, &tmp);
  skip_ws(&c);
  if (rc == 0 && c.p != c.end)
    rc = SK_FASTPOSE_DECLINE;
  if (rc != 0) {
    free(ob.v);
    return rc;
  }
  tmp.overrides = ob.v;
  *pose = tmp;
  return 0;
}

/* Points each pose at its overrides in the shared block, which the first
 * pose owns; trims the block to what the poses hold, so that
 * sk_pose_held_bytes's per-pose count (each rounded up to a doubling from
 * 16) covers it. */
static int share_overrides(sk_pose *v, size_t n, ovbuf *ob) {
  if (ob->len < ob->cap && ob->len > 0) {
    sk_override *t = realloc(ob->v, ob->len * sizeof *t);
    if (t == NULL)
      return SK_ENOMEM;
    ob->v = t;
  }
  size_t off = 0;
  for (size_t i = 0; i < n; i++) {
    v[i].overrides = ob->len > 0 ? ob->v + off : NULL;
    v[i].overrides_shared = i > 0;
    off += v[i].count;
  }
  return 0;
}

int sk_fastpose_parse_batch(const sk_skeleton *s, const char *text, size_t len, size_t max, sk_pose **poses,
                            size_t *n) {
  cursor c = {text, text + len};
  const char *k;
  size_t kn;
  if (!eat(&c, '{') || !read_string(&c, &k, &kn) || !key_is(k, kn, "poses") || !eat(&c, ':') || !eat(&c, '['))
    return SK_FASTPOSE_DECLINE;
  sk_pose *v = NULL;
  ovbuf ob = {NULL, 0, 0, 0};
  size_t count = 0, cap = 0;
  int rc = 0;
  if (!eat(&c, ']')) {
    do {
      if (count == max) {
        rc = SK_FASTPOSE_DECLINE; /* jansson's path answers the 413 */
        break;
      }
      if (count == cap) {
        size_t ncap = cap ? cap * 2 : 16;
        if (ncap > max)
          ncap = max;
        sk_pose *nv = realloc(v, ncap * sizeof *nv);
        if (nv == NULL) {
          rc = SK_ENOMEM;
          break;
        }
        v = nv;
        cap = ncap;
      }
      if ((rc = read_pose(s, &c, &ob, &v[count])) != 0)
        break;
      count++;
    } while (eat(&c, ','));
    if (rc == 0 && !eat(&c, ']'))
      rc = SK_FASTPOSE_DECLINE;
  }
  if (rc == 0 && !eat(&c, '}'))
    rc = SK_FASTPOSE_DECLINE;
  skip_ws(&c);
  if (rc == 0 && c.p != c.end)
    rc = SK_FASTPOSE_DECLINE;
  if (rc == 0)
    rc = share_overrides(v, count, &ob);
  if (rc != 0) {
    free(ob.v); /* the poses own nothing yet */
    free(v);
    return rc;
  }
  *poses = v;
  *n = count;
  return 0;
}
