/* sk_rootmotion: RootMotionClip's analysis (Babylon.js 9.34,
 * Animations/rootMotion.js), operation for operation: vectors are doubles
 * as Babylon's Vector3, matrices and the tracks float as its Float32Arrays,
 * Math.sin/cos/atan2 as V8 rounds them (sk_fdlibm). */
#include "sk_rootmotion.h"
#include "sk_rootmotion_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_anim_math.h"
#include "sk_fdlibm.h"
#include "sk_mat.h"

#define RM_PI 3.141592653589793
#define CONTACT_HEIGHT_BAND 0.1
#define PLANTED_HEIGHT_BAND 0.05
#define MINIMUM_STRAIGHTNESS 0.8

enum { HAS_T = 1, HAS_R = 2, HAS_S = 4 };

void sk_rootmotion_opts_default(sk_rootmotion_opts *o) {
  memset(o, 0, sizeof *o);
  o->source = -1;
  o->extract_rotation = -1;
  o->samples_per_second = 60;
  o->minimum_travel = 0.1;
  o->minimum_turn = RM_PI / 18;
  o->up[1] = 1;
  o->root_node = -1;
}

const char *sk_rootmotion_source_name(int source) {
  return source == SK_RM_ROOT ? "root" : source == SK_RM_FOOT_CONTACT ? "footContact" : "none";
}


static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static double len3(const double v[3]) { return sqrt(dot3(v, v)); }
static void normalize3(double v[3]) {
  double l = len3(v);
  if (l == 0 || l == 1.0)
    return;
  double inv = 1.0 / l;
  v[0] *= inv, v[1] *= inv, v[2] *= inv;
}
double sk_rootmotion__wrap_angle(double angle) {
  return angle - 2 * RM_PI * floor((angle + RM_PI) / (2 * RM_PI));
}

void sk_rootmotion__horizontal(const rm_ctx *x, const double v[3], double r[3]) {
  const double *up = x->rm->up;
  double h = dot3(v, up);
  r[0] = v[0] - up[0] * h, r[1] = v[1] - up[1] * h, r[2] = v[2] - up[2] * h;
}

void sk_rootmotion__project(const rm_ctx *x, const double v[3], double r[3]) {
  sk_rootmotion__horizontal(x, v, r);
  if (!x->o->extract_lateral_motion) {
    const double *d = x->rm->travel_direction;
    double k = dot3(r, d);
    r[0] = d[0] * k, r[1] = d[1] * k, r[2] = d[2] * k;
  }
}

/* Matrix.FromQuaternionToRef, stored as float. */
void sk_rootmotion__mat_from_quat(const double q[4], float m[16]) {
  double xx = q[0] * q[0], yy = q[1] * q[1], zz = q[2] * q[2];
  double xy = q[0] * q[1], zw = q[2] * q[3], zx = q[2] * q[0];
  double yw = q[1] * q[3], yz = q[1] * q[2], xw = q[0] * q[3];
  memset(m, 0, 16 * sizeof *m);
  m[0] = (float)(1.0 - 2.0 * (yy + zz));
  m[1] = (float)(2.0 * (xy + zw));
  m[2] = (float)(2.0 * (zx - yw));
  m[4] = (float)(2.0 * (xy - zw));
  m[5] = (float)(1.0 - 2.0 * (zz + xx));
  m[6] = (float)(2.0 * (yz + xw));
  m[8] = (float)(2.0 * (zx + yw));
  m[9] = (float)(2.0 * (yz - xw));
  m[10] = (float)(1.0 - 2.0 * (yy + xx));
  m[15] = 1;
}

static void transform_normal(const double v[3], const float m[16], double r[3]) {
  double a = v[0] * m[0] + v[1] * m[4] + v[2] * m[8];
  double b = v[0] * m[1] + v[1] * m[5] + v[2] * m[9];
  double c = v[0] * m[2] + v[1] * m[6] + v[2] * m[10];
  r[0] = a, r[1] = b, r[2] = c;
}

void sk_rootmotion__rotate_about_up(const rm_ctx *x, const double v[3], double angle, double r[3]) {
  if (angle == 0) {
    memmove(r, v, 3 * sizeof *r);
    return;
  }
  const double *up = x->rm->up;
  double q[4];
  q[3] = sk_fdlibm_cos(angle / 2);
  double k = sk_fdlibm_sin(angle / 2) / len3(up);
  q[0] = up[0] * k, q[1] = up[1] * k, q[2] = up[2] * k;
  float m[16];
  sk_rootmotion__mat_from_quat(q, m);
  transform_normal(v, m, r);
}

/* The local TRS and matrices of every bone at `frame`: the channels'
 * Animation.evaluate, the rest TRS elsewhere. */
static void pose_at(rm_ctx *x, double frame) {
  if (frame == x->frame)
    return;
  const sk_anim *a = x->a;
  memcpy(x->trs, a->rest, a->bone_count * SK_ANIM_TRS * sizeof *x->trs);
  static const int offset[3] = {0, 3, 7};
  for (size_t k = 0; k < x->c->channel_count; k++) {
    const sk_anim_channel *ch = &x->c->channels[k];
    if (ch->path > SK_ANIM_SCALE)
      continue;
    sk_anim__sample_values(ch, NULL, frame, x->trs + (size_t)ch->bone * SK_ANIM_TRS + offset[ch->path]);
  }
  for (size_t b = 0; b < a->bone_count; b++) {
    const double *t = x->trs + b * SK_ANIM_TRS;
    sk_mat_compose(t + 7, t + 3, t, x->local + b * 16);
  }
  x->frame = frame;
}

/* _matrixToCharacter: identity times each local from the node up, so the
 * first product is a copy (Matrix.multiplyToRef's identity shortcut). */
void sk_rootmotion__to_character(rm_ctx *x, int32_t bone, double frame, float m[16]) {
  pose_at(x, frame);
  bool first = true;
  sk_mat_identity(m);
  for (int32_t b = bone; b >= 0; b = x->s->bones[b].parent) {
    if (first)
      memcpy(m, x->local + (size_t)b * 16, 16 * sizeof *m);
    else
      sk_mat_mul(m, x->local + (size_t)b * 16, m);
    first = false;
  }
  for (size_t k = 0; k < x->above_count; k++) {
    if (first)
      memcpy(m, x->above + k * 16, 16 * sizeof *m);
    else
      sk_mat_mul(m, x->above + k * 16, m);
    first = false;
  }
}

void sk_rootmotion__position_at(rm_ctx *x, int32_t bone, double frame, double p[3]) {
  float m[16];
  sk_rootmotion__to_character(x, bone, frame, m);
  p[0] = m[12], p[1] = m[13], p[2] = m[14];
}

void sk_rootmotion__rotation_at(rm_ctx *x, int32_t bone, double frame, double q[4]) {
  float m[16];
  double s[3], t[3];
  sk_rootmotion__to_character(x, bone, frame, m);
  sk_mat_decompose(m, s, q, t);
}

double sk_rootmotion__frame_at(const rm_ctx *x, size_t i) {
  const sk_rootmotion *rm = x->rm;
  return rm->from_frame + ((rm->to_frame - rm->from_frame) * (double)i) / (double)rm->samples;
}

static bool is_descendant(const sk_skeleton *s, int32_t node, int32_t of) {
  for (int32_t b = s->bones[node].parent; b >= 0; b = s->bones[b].parent)
    if (b == of)
      return true;
  return false;
}

/* _findRootNode: the position-animated node with the most animated
 * descendants; on a tie an ancestor of the best so far wins. */
static int32_t find_root(const rm_ctx *x) {
  int32_t best = -1;
  long best_count = -1;
  for (size_t i = 0; i < x->animated; i++) {
    int32_t n = x->order[i];
    if (!(x->has[n] & HAS_T))
      continue;
    long count = 0;
    for (size_t j = 0; j < x->animated; j++)
      count += x->order[j] != n && is_descendant(x->s, x->order[j], n);
    if (count > best_count || (count == best_count && best >= 0 && is_descendant(x->s, best, n)))
      best = n, best_count = count;
  }
  return best;
}

/* _measureHeight over the base and every bone under it (the whole
 * skeleton and the nodes above it when the base is the character). */
static double measure_height(rm_ctx *x, int32_t base) {
  double lowest = INFINITY, highest = -INFINITY, p[3];
  const double *up = x->rm->up;
  if (base < 0) {
    lowest = highest = 0; /* the character node itself */
    float m[16];
    for (size_t k = 0; k < x->above_count; k++) {
      /* above[k] composed up to the character: the nodes above it. */
      memcpy(m, x->above + k * 16, sizeof m);
      for (size_t j = k + 1; j < x->above_count; j++)
        sk_mat_mul(m, x->above + j * 16, m);
      double q[3] = {m[12], m[13], m[14]}, h = dot3(q, up);
      lowest = fmin(lowest, h), highest = fmax(highest, h);
    }
  }
  for (size_t b = 0; b < x->s->count; b++) {
    if (base >= 0 && (int32_t)b != base && !is_descendant(x->s, (int32_t)b, base))
      continue;
    sk_rootmotion__position_at(x, (int32_t)b, x->rm->from_frame, p);
    double h = dot3(p, up);
    lowest = fmin(lowest, h), highest = fmax(highest, h);
  }
  return highest - lowest;
}

static void snap_direction(rm_ctx *x, double default_angle) {
  double angle = x->o->has_snap ? x->o->direction_snap_angle : default_angle;
  if (!(angle > 0))
    return;
  static const double cand[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  double *dir = x->rm->travel_direction, best[3], axis[3];
  bool found = false;
  double best_dot = sk_fdlibm_cos(angle);
  for (int c = 0; c < 3; c++) {
    if (fabs(dot3(cand[c], x->rm->up)) > 0.5)
      continue;
    sk_rootmotion__horizontal(x, cand[c], axis);
    normalize3(axis);
    for (int sgn = 1; sgn >= -1; sgn -= 2) {
      double d = sgn * dot3(axis, dir);
      if (d >= best_dot) {
        best_dot = d, found = true;
        for (int i = 0; i < 3; i++)
          best[i] = axis[i] * sgn;
      }
    }
  }
  if (found)
    memcpy(dir, best, sizeof best);
}

/* _twist: the turn about up from the reference to `q`, in (-PI, PI]. */
double sk_rootmotion__twist(const rm_ctx *x, const double q[4], const double ref_conj[4]) {
  double d[4], first[3], second[3], tf[3], ts[3];
  const double *up = x->rm->up;
  sk_anim__quat_mul(q, ref_conj, d);
  float m[16];
  sk_rootmotion__mat_from_quat(d, m);
  static const double right[3] = {1, 0, 0}, fwd[3] = {0, 0, 1};
  sk_rootmotion__horizontal(x, fabs(up[0]) < 0.9 ? right : fwd, first);
  normalize3(first);
  second[0] = first[1] * up[2] - first[2] * up[1];
  second[1] = first[2] * up[0] - first[0] * up[2];
  second[2] = first[0] * up[1] - first[1] * up[0];
  transform_normal(first, m, tf);
  transform_normal(second, m, ts);
  return sk_rootmotion__wrap_angle(
      sk_fdlibm_atan2(dot3(ts, first) - dot3(tf, second), dot3(tf, first) + dot3(ts, second)));
}

static void measure_root_yaw(rm_ctx *x, float *yaw) {
  int32_t root = x->rm->root_node;
  double ref[4], q[4], prev = 0;
  sk_rootmotion__rotation_at(x, root, x->rm->from_frame, ref);
  ref[0] = -ref[0], ref[1] = -ref[1], ref[2] = -ref[2];
  for (size_t i = 0; i <= x->rm->samples; i++) {
    sk_rootmotion__rotation_at(x, root, sk_rootmotion__frame_at(x, i), q);
    double w = sk_rootmotion__twist(x, q, ref);
    prev = i == 0 ? w : prev + sk_rootmotion__wrap_angle(w - sk_rootmotion__wrap_angle(prev));
    yaw[i] = (float)prev;
  }
}

/* _rootTravelAt. */
void sk_rootmotion__root_travel_at(rm_ctx *x, const double pos[3], const double start[3], double yaw, bool turning,
                           double r[3]) {
  if (turning) {
    double pivot[3], h[3];
    sk_rootmotion__horizontal(x, start, h);
    sk_rootmotion__rotate_about_up(x, h, yaw, pivot);
    sk_rootmotion__horizontal(x, pos, r);
    r[0] -= pivot[0], r[1] -= pivot[1], r[2] -= pivot[2];
    return;
  }
  double d[3] = {pos[0] - start[0], pos[1] - start[1], pos[2] - start[2]};
  sk_rootmotion__project(x, d, r);
}

static int measure_root_travel(rm_ctx *x, const float *yaw, double min_travel, bool forced, float *tr, bool *got) {
  sk_rootmotion *rm = x->rm;
  size_t n = rm->samples;
  double *pos = malloc((n + 1) * 3 * sizeof *pos);
  if (pos == NULL)
    return SK_ENOMEM;
  for (size_t i = 0; i <= n; i++)
    sk_rootmotion__position_at(x, rm->root_node, sk_rootmotion__frame_at(x, i), pos + i * 3);
  const double *start = pos;
  double d[3] = {pos[n * 3] - start[0], pos[n * 3 + 1] - start[1], pos[n * 3 + 2] - start[2]}, net[3];
  sk_rootmotion__horizontal(x, d, net);
  *got = false;
  if (!forced && len3(net) < min_travel) {
    free(pos);
    return 0;
  }
  if (dot3(net, net) > 0) {
    memcpy(rm->travel_direction, net, sizeof net);
    normalize3(rm->travel_direction);
  }
  if (yaw == NULL && !x->o->extract_lateral_motion) {
    snap_direction(x, 0);
    double *dir = rm->travel_direction, k = dot3(net, dir);
    sk_rootmotion__horizontal(x, net, rm->lateral_drift);
    for (int i = 0; i < 3; i++)
      rm->lateral_drift[i] -= dir[i] * k;
  }
  for (size_t i = 0; i <= n; i++) {
    double o[3];
    sk_rootmotion__root_travel_at(x, pos + i * 3, start, yaw != NULL ? yaw[i] : 0, yaw != NULL, o);
    for (int j = 0; j < 3; j++)
      tr[i * 3 + j] = (float)o[j];
  }
  free(pos);
  *got = true;
  return 0;
}

static bool has_joint_child(const sk_skeleton *s, int32_t b) {
  for (size_t j = (size_t)b + 1; j < s->count; j++)
    if (s->bones[j].parent == b)
      return true;
  return false;
}

/* base.getDescendants(false, IsJoint) that have no joint child: pre-order,
 * children in bone order. */
static size_t leaf_contacts(const sk_skeleton *s, int32_t base, int32_t *out, int32_t *stack) {
  size_t n = 0, top = 0;
  for (size_t j = s->count; j-- > 0;)
    if ((base < 0 && s->bones[j].parent < 0) || (base >= 0 && s->bones[j].parent == base))
      stack[top++] = (int32_t)j;
  while (top > 0) {
    int32_t b = stack[--top];
    if (!has_joint_child(s, b))
      out[n++] = b;
    for (size_t j = s->count; j-- > (size_t)b + 1;)
      if (s->bones[j].parent == b)
        stack[top++] = (int32_t)j;
  }
  return n;
}

typedef struct walk_state {
  double reference[3], travelled[3], heading[3], path_length;
} walk_state;

static void walk(rm_ctx *x, const float *yaw, const double *pos, const double *lowest, size_t nc, double tol,
                 bool tracking, walk_state *w, float *tr) {
  size_t n = x->rm->samples;
  const double *up = x->rm->up;
  double previous[3], sum[3] = {0, 0, 0};
  memcpy(previous, w->reference, sizeof previous);
  size_t grounded = 0;
  memset(w->travelled, 0, sizeof w->travelled);
  memset(w->heading, 0, sizeof w->heading);
  w->path_length = 0;
  for (size_t i = 1; i <= n; i++) {
    double turn = yaw != NULL ? yaw[i] : 0, best = INFINITY, chosen[3] = {0, 0, 0};
    for (size_t c = 0; c < nc; c++) {
      const double *before = pos + (c * (n + 1) + i - 1) * 3, *after = before + 3;
      if (dot3(before, up) > lowest[c] + tol || dot3(after, up) > lowest[c] + tol)
        continue;
      double step[3] = {before[0] - after[0], before[1] - after[1], before[2] - after[2]}, h[3], un[3];
      sk_rootmotion__horizontal(x, step, h);
      sk_rootmotion__rotate_about_up(x, h, -turn, un);
      double score;
      if (tracking) {
        double dx = un[0] - previous[0], dy = un[1] - previous[1], dz = un[2] - previous[2];
        score = dx * dx + dy * dy + dz * dz;
      } else {
        score = dot3(un, un);
      }
      if (score < best) {
        best = score;
        memcpy(chosen, un, sizeof chosen);
      }
    }
    if (best == INFINITY) {
      memcpy(chosen, previous, sizeof chosen);
    } else {
      for (int j = 0; j < 3; j++)
        sum[j] += chosen[j];
      grounded++;
    }
    if (tracking)
      memcpy(previous, chosen, sizeof previous);
    double turned[3];
    for (int j = 0; j < 3; j++)
      w->heading[j] += chosen[j];
    w->path_length += len3(chosen);
    sk_rootmotion__rotate_about_up(x, chosen, turn, turned);
    for (int j = 0; j < 3; j++) {
      w->travelled[j] += turned[j];
      tr[i * 3 + j] = (float)w->travelled[j];
    }
  }
  if (!tracking && grounded > 0) {
    double k = 1 / (double)grounded;
    for (int j = 0; j < 3; j++)
      w->reference[j] = sum[j] * k;
  }
}

static int measure_contact_travel(rm_ctx *x, const float *yaw, double min_travel, bool forced, float *tr, bool *got) {
  sk_rootmotion *rm = x->rm;
  const sk_skeleton *s = x->s;
  size_t n = rm->samples, nc;
  const double *up = rm->up;
  *got = false;
  int32_t *contacts = malloc((s->count + 1) * 2 * sizeof *contacts);
  if (contacts == NULL)
    return SK_ENOMEM;
  if (x->o->contact_nodes != NULL) {
    nc = x->o->contact_count;
    memcpy(contacts, x->o->contact_nodes, nc * sizeof *contacts);
  } else {
    nc = leaf_contacts(s, rm->root_node, contacts, contacts + s->count + 1);
  }
  if (nc == 0) {
    free(contacts);
    return 0;
  }
  double *pos = malloc(nc * (n + 1) * 3 * sizeof *pos), *lowest = malloc(nc * sizeof *lowest);
  if (pos == NULL || lowest == NULL) {
    free(pos), free(lowest), free(contacts);
    return SK_ENOMEM;
  }
  for (size_t c = 0; c < nc; c++)
    lowest[c] = INFINITY;
  for (size_t i = 0; i <= n; i++) {
    double f = sk_rootmotion__frame_at(x, i);
    for (size_t c = 0; c < nc; c++) {
      double *p = pos + (c * (n + 1) + i) * 3;
      sk_rootmotion__position_at(x, contacts[c], f, p);
      lowest[c] = fmin(lowest[c], dot3(p, up));
    }
  }
  if (x->o->contact_nodes == NULL) {
    double ground = INFINITY;
    for (size_t c = 0; c < nc; c++)
      ground = fmin(ground, lowest[c]);
    size_t kept = 0;
    for (size_t c = 0; c < nc; c++) {
      if (!(lowest[c] <= ground + CONTACT_HEIGHT_BAND * rm->character_height))
        continue;
      contacts[kept] = contacts[c];
      lowest[kept] = lowest[c];
      memmove(pos + kept * (n + 1) * 3, pos + c * (n + 1) * 3, (n + 1) * 3 * sizeof *pos);
      kept++;
    }
    nc = kept;
  }
  double tol = PLANTED_HEIGHT_BAND * rm->character_height;
  walk_state w;
  memset(&w, 0, sizeof w);
  memset(tr, 0, (n + 1) * 3 * sizeof *tr);
  walk(x, yaw, pos, lowest, nc, tol, false, &w, tr);
  walk(x, yaw, pos, lowest, nc, tol, true, &w, tr);
  free(pos), free(lowest);
  double straightness = w.path_length > 0 ? len3(w.heading) / w.path_length : 0;
  if (dot3(w.travelled, w.travelled) > 0) {
    memcpy(rm->travel_direction, w.travelled, sizeof w.travelled);
    normalize3(rm->travel_direction);
  }
  double distance = dot3(w.travelled, rm->travel_direction);
  if (!forced && (distance < min_travel || straightness < MINIMUM_STRAIGHTNESS)) {
    free(contacts);
    return 0;
  }
  if (yaw == NULL) {
    if (!x->o->extract_lateral_motion)
      snap_direction(x, RM_PI / 18);
    const double *dir = rm->travel_direction;
    for (size_t i = 0; i <= n; i++) {
      double st[3] = {tr[i * 3], tr[i * 3 + 1], tr[i * 3 + 2]}, k = dot3(st, dir);
      for (int j = 0; j < 3; j++)
        tr[i * 3 + j] = (float)(dir[j] * k);
    }
  }
  rm->contacts = contacts;
  rm->contact_count = nc;
  *got = true;
  return 0;
}

/* ClockChannel/ClockBeats for one bone: the channel covering the played
 * range, a position before others, the widest. Returns the channel. */
typedef struct clock_cand {
  const sk_anim_channel *ch;
  double span;
  bool covers, position;
} clock_cand;

static bool clock_beats(const clock_cand *c, const clock_cand *o) {
  if (c->covers != o->covers)
    return c->covers;
  if (c->covers && c->position != o->position)
    return c->position;
  if (c->span != o->span)
    return c->span > o->span;
  return c->position && !o->position;
}

static bool clock_channel(const rm_ctx *x, const sk_anim_channel *const *last, int32_t bone, double from, double to,
                          clock_cand *out) {
  static const int paths[3] = {SK_ANIM_TRANSLATION, SK_ANIM_ROTATION, SK_ANIM_SCALE};
  bool any = false;
  for (int p = 0; p < 3; p++) {
    const sk_anim_channel *ch = last[(size_t)bone * 3 + (size_t)paths[p]];
    if (ch == NULL)
      continue;
    double first = ch->frames[0], lastf = ch->frames[ch->count - 1];
    clock_cand c = {ch, lastf - first, lastf > first && first <= from && lastf >= to, p == 0};
    if (!any || clock_beats(&c, out))
      *out = c;
    any = true;
  }
  (void)x;
  return any;
}

static int check_opts(const sk_skeleton *s, const sk_rootmotion_opts *o, sk_error *err) {
  if (o->source != -1 && o->source != SK_RM_ROOT && o->source != SK_RM_FOOT_CONTACT)
    return sk_error_set(err, SK_ERANGE, "/source", "source must be \"root\" or \"footContact\"");
  if (!isfinite(o->samples_per_second) || !(o->samples_per_second > 0) ||
      o->samples_per_second > SK_RM_MAX_SAMPLES_PER_SECOND)
    return sk_error_set(err, SK_ERANGE, "/samplesPerSecond", "samplesPerSecond must be in (0, %g]",
                        SK_RM_MAX_SAMPLES_PER_SECOND);
  if (!isfinite(o->minimum_travel) || o->minimum_travel < 0)
    return sk_error_set(err, SK_ERANGE, "/minimumTravel", "minimumTravel must be a finite number >= 0");
  if (!isfinite(o->minimum_turn) || o->minimum_turn < 0)
    return sk_error_set(err, SK_ERANGE, "/minimumTurn", "minimumTurn must be a finite number >= 0");
  if (o->has_snap && !isfinite(o->direction_snap_angle))
    return sk_error_set(err, SK_ERANGE, "/directionSnapAngle", "directionSnapAngle must be finite");
  double l = sqrt(o->up[0] * o->up[0] + o->up[1] * o->up[1] + o->up[2] * o->up[2]);
  if (!isfinite(l) || l == 0)
    return sk_error_set(err, SK_ERANGE, "/upAxis", "upAxis must be a finite non-zero vector");
  if (o->root_node < -1 || (o->root_node >= 0 && (size_t)o->root_node >= s->count))
    return sk_error_set(err, SK_ERANGE, "/rootNode", "rootNode is not a bone of the skeleton");
  for (size_t i = 0; o->contact_nodes != NULL && i < o->contact_count; i++)
    if (o->contact_nodes[i] < 0 || (size_t)o->contact_nodes[i] >= s->count) {
      char ptr[48];
      snprintf(ptr, sizeof ptr, "/contactNodes/%zu", i);
      return sk_error_set(err, SK_ERANGE, ptr, "contactNodes[%zu] is not a bone of the skeleton", i);
    }
  return 0;
}

static size_t max_depth(const sk_skeleton *s) {
  size_t best = 0;
  for (size_t b = 0; b < s->count; b++) {
    size_t d = 1;
    for (int32_t p = s->bones[b].parent; p >= 0; p = s->bones[p].parent)
      d++;
    if (d > best)
      best = d;
  }
  return best;
}

size_t sk_rootmotion_cost(const sk_skeleton *s, const sk_anim *a, size_t clip, size_t above_count,
                          const sk_rootmotion_opts *o) {
  double dur = clip < a->clip_count ? a->clips[clip].end_frame / SK_ANIM_FPS : 0;
  double samples = fmax(2, ceil(dur * o->samples_per_second)) + 1;
  /* Every bone's chain at one frame (height) and at every sample (the
   * contacts, at most every bone), plus the root twice per sample. */
  double per = ((double)max_depth(s) + (double)above_count) * ((double)s->count + 2);
  double cost = (samples + 1) * per;
  return cost >= (double)SIZE_MAX / 2 || !isfinite(cost) ? SIZE_MAX : (size_t)cost;
}

void sk_rootmotion_free(sk_rootmotion *rm) {
  if (rm == NULL)
    return;
  free(rm->contacts);
  free(rm->track);
  for (int k = 0; k < 2; k++)
    free(rm->inplace[k].frames), free(rm->inplace[k].values), free(rm->inplace[k].tangents);
  memset(rm, 0, sizeof *rm);
}

static size_t sample_at(const sk_rootmotion *rm, double frame, double *blend) {
  double range = rm->to_frame - rm->from_frame;
  size_t n = rm->samples;
  if (range <= 0 || (rm->source == SK_RM_NONE && !rm->extracts_rotation)) {
    *blend = 0;
    return 0;
  }
  double exact = fmin((double)n, fmax(0, ((frame - rm->from_frame) / range) * (double)n));
  double index = fmin((double)n - 1, floor(exact));
  *blend = exact - index;
  return (size_t)index;
}

void sk_rootmotion_offset_at(const sk_rootmotion *rm, double frame, double out[3]) {
  double blend;
  const float *a = rm->track + sample_at(rm, frame, &blend) * 4, *b = a + 4;
  for (int i = 0; i < 3; i++)
    out[i] = (double)a[i] + ((double)b[i] - (double)a[i]) * blend;
}

double sk_rootmotion_rotation_at(const sk_rootmotion *rm, double frame) {
  double blend;
  const float *a = rm->track + sample_at(rm, frame, &blend) * 4 + 3;
  return (double)a[0] + ((double)a[4] - (double)a[0]) * blend;
}

/* The turn and the travel of the constructor, once the range is known. */
static int analyze_motion(rm_ctx *x, const sk_anim_channel *const *last, float *yaw, float *tr, sk_error *err) {
  sk_rootmotion *rm = x->rm;
  const sk_rootmotion_opts *o = x->o;
  size_t n = rm->samples;
  int32_t root = rm->root_node;
  double scale = rm->character_height > 0 ? rm->character_height : 1;
  double min_travel = o->minimum_travel * scale;
  bool root_pos = root >= 0 && last[(size_t)root * 3 + SK_ANIM_TRANSLATION] != NULL;
  bool root_rot = root >= 0 && last[(size_t)root * 3 + SK_ANIM_ROTATION] != NULL;
  const float *turn = NULL;
  if (root >= 0 && o->extract_rotation != 0 && root_rot) {
    measure_root_yaw(x, yaw);
    if (o->extract_rotation == 1 || fabs(sk_rootmotion__wrap_angle(yaw[n])) >= o->minimum_turn)
      turn = yaw;
  }
  rm->extracts_rotation = turn != NULL;
  if (o->source == SK_RM_ROOT && !root_pos)
    return sk_error_set(err, SK_ERANGE, "/source",
                        "the root node has no position animation to take the travel from; omit source or pass another rootNode");
  bool got = false;
  int rc = 0;
  if ((o->source == -1 || o->source == SK_RM_ROOT) && root_pos) {
    if ((rc = measure_root_travel(x, turn, min_travel, o->source == SK_RM_ROOT, tr, &got)) != 0)
      return rc;
    if (got)
      rm->source = SK_RM_ROOT, rm->removes_root_travel = true;
  }
  if (!got && (o->source == -1 || o->source == SK_RM_FOOT_CONTACT)) {
    if ((rc = measure_contact_travel(x, turn, min_travel, o->source == SK_RM_FOOT_CONTACT, tr, &got)) != 0)
      return rc;
    if (got)
      rm->source = SK_RM_FOOT_CONTACT;
  }
  if (!got && turn != NULL) {
    memset(tr, 0, (n + 1) * 3 * sizeof *tr);
    rm->source = SK_RM_ROOT;
    got = true;
  }
  if (got && turn != NULL && !rm->removes_root_travel) {
    double start[3], pivot[3];
    sk_rootmotion__position_at(x, root, rm->from_frame, start);
    for (size_t i = 0; i <= n; i++) {
      sk_rootmotion__root_travel_at(x, start, start, turn[i], true, pivot);
      for (int j = 0; j < 3; j++)
        tr[i * 3 + j] = (float)((double)tr[i * 3 + j] + pivot[j]);
    }
    rm->pivots = true;
  }
  if (got) {
    for (size_t i = 0; i <= n; i++) {
      memcpy(rm->track + i * 4, tr + i * 3, 3 * sizeof *tr);
      rm->track[i * 4 + 3] = turn != NULL ? turn[i] : 0;
    }
    for (int j = 0; j < 3; j++)
      rm->cycle_offset[j] = tr[n * 3 + j];
    rm->cycle_rotation = turn != NULL ? turn[n] : 0;
  } else {
    rm->extracts_rotation = false;
    rm->travel_direction[0] = rm->travel_direction[1] = 0, rm->travel_direction[2] = 1;
    memset(rm->lateral_drift, 0, sizeof rm->lateral_drift);
  }
  return 0;
}

/* The clock, the range and the sample count (the constructor's first
 * half); fills x->has / x->order. */
static int analyze_range(rm_ctx *x, const sk_anim_channel **last, sk_error *err) {
  sk_rootmotion *rm = x->rm;
  const sk_anim_clip *c = x->c;
  double from = INFINITY, to = -INFINITY;
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    if (ch->path > SK_ANIM_SCALE)
      continue;
    if (x->has[ch->bone] == 0)
      x->order[x->animated++] = ch->bone;
    x->has[ch->bone] |= (uint8_t)(1u << ch->path);
    last[(size_t)ch->bone * 3 + (size_t)ch->path] = ch;
    from = fmin(from, ch->frames[0]);
    to = fmax(to, ch->frames[ch->count - 1]);
  }
  if (x->animated == 0)
    return sk_error_set(err, SK_EFORMAT, "", "clip \"%s\" does not animate any bone", c->name);
  rm->root_node = x->o->root_node >= 0 ? x->o->root_node : find_root(x);
  int32_t anchor = rm->root_node >= 0 ? rm->root_node : x->order[0];
  clock_cand best, cand;
  bool found = clock_channel(x, last, anchor, from, to, &best) && best.span > 0;
  rm->clock_node = found ? anchor : -1;
  if (!found) {
    for (size_t i = 0; i < x->animated; i++) {
      int32_t b = x->order[i];
      if (b != anchor && !is_descendant(x->s, b, anchor))
        continue;
      if (clock_channel(x, last, b, from, to, &cand) && (rm->clock_node < 0 || clock_beats(&cand, &best)))
        best = cand, rm->clock_node = b;
    }
  }
  if (rm->clock_node < 0)
    return sk_error_set(err, SK_EFORMAT, "/rootNode", "clip \"%s\" animates neither the root node nor any node under it",
                        c->name);
  double first = best.ch->frames[0], lastk = best.ch->frames[best.ch->count - 1];
  rm->from_frame = from < first || from > lastk ? first : from;
  rm->to_frame = to < first || to > lastk ? lastk : to;
  rm->duration = (rm->to_frame - rm->from_frame) / SK_ANIM_FPS;
  double samples = fmax(2, ceil(rm->duration * x->o->samples_per_second));
  if (samples > SK_RM_MAX_SAMPLES)
    return sk_error_set(err, SK_ERANGE, "/samplesPerSecond", "the clip would take %.0f samples, more than %d", samples,
                        SK_RM_MAX_SAMPLES);
  rm->samples = (size_t)samples;
  return 0;
}

int sk_rootmotion_analyze(const sk_skeleton *s, const sk_anim *a, size_t clip, const double *above, size_t above_count,
                          const sk_rootmotion_opts *o, sk_rootmotion *out, sk_error *err) {
  memset(out, 0, sizeof *out);
  int rc = check_opts(s, o, err);
  if (rc != 0)
    return rc;
  if (clip >= a->clip_count || a->bone_count != s->count)
    return sk_error_set(err, SK_ERANGE, "", "no such clip");
  rm_ctx x = {.s = s, .a = a, .c = &a->clips[clip], .o = o, .rm = out, .above_count = above_count, .frame = NAN};
  memcpy(out->up, o->up, sizeof out->up);
  normalize3(out->up);
  out->travel_direction[2] = 1;
  size_t nb = s->count;
  const sk_anim_channel **last = calloc(nb * 3 + 1, sizeof *last);
  x.has = calloc(nb + 1, 1);
  x.order = malloc((nb + 1) * sizeof *x.order);
  x.above = malloc((above_count + 1) * 16 * sizeof *x.above);
  x.trs = malloc((nb + 1) * SK_ANIM_TRS * sizeof *x.trs);
  x.local = malloc((nb + 1) * 16 * sizeof *x.local);
  float *yaw = NULL, *tr = NULL;
  if (last == NULL || x.has == NULL || x.order == NULL || x.above == NULL || x.trs == NULL || x.local == NULL) {
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
    goto done;
  }
  for (size_t k = 0; k < above_count; k++) {
    const double *t = above + k * SK_ANIM_TRS;
    sk_mat_compose(t + 7, t + 3, t, x.above + k * 16);
  }
  if ((rc = analyze_range(&x, last, err)) != 0)
    goto done;
  size_t n = out->samples;
  yaw = malloc((n + 1) * sizeof *yaw);
  tr = calloc((n + 1) * 3, sizeof *tr);
  out->track = calloc((n + 1) * 4, sizeof *out->track);
  if (yaw == NULL || tr == NULL || out->track == NULL) {
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
    goto done;
  }
  out->character_height = measure_height(&x, out->root_node);
  rc = analyze_motion(&x, last, yaw, tr, err);
  if (rc == 0 && o->in_place)
    rc = sk_rootmotion__build_inplace(&x, last, err);
  if (rc == SK_ENOMEM)
    sk_error_set(err, SK_ENOMEM, "", "out of memory");
done:
  free(last), free(x.has), free(x.order), free(x.above), free(x.trs), free(x.local), free(yaw), free(tr);
  if (rc != 0)
    sk_rootmotion_free(out);
  return rc;
}

/* _rotateAboutUp for callers without a context. */
static void rm_rotate(const sk_rootmotion *rm, const double v[3], double angle, double r[3]) {
  sk_rootmotion_opts o;
  sk_rootmotion_opts_default(&o);
  rm_ctx x = {.o = &o, .rm = (sk_rootmotion *)rm};
  sk_rootmotion__rotate_about_up(&x, v, angle, r);
}

static double motion_in_range(const sk_rootmotion *rm, double frame, double start_yaw, const double start[3],
                              double r[3]) {
  double off[3];
  sk_rootmotion_offset_at(rm, frame, off);
  for (int i = 0; i < 3; i++)
    off[i] -= start[i];
  rm_rotate(rm, off, -start_yaw, r);
  return sk_rootmotion_rotation_at(rm, frame) - start_yaw;
}

/* _cyclePower: `cycles` whole cycles of a turn and then a translation. */
static double cycle_power(const sk_rootmotion *rm, double cycles, const double step[3], double step_yaw, double r[3]) {
  double turn = sk_rootmotion__wrap_angle(step_yaw), half = sk_fdlibm_sin(turn / 2);
  double length = half == 0 ? cycles : sk_fdlibm_sin((cycles * turn) / 2) / half;
  const double *up = rm->up;
  double rise = dot3(step, up) * cycles, h[3];
  double k = dot3(step, up);
  h[0] = step[0] - up[0] * k, h[1] = step[1] - up[1] * k, h[2] = step[2] - up[2] * k;
  rm_rotate(rm, h, ((cycles - 1) * turn) / 2, r);
  for (int i = 0; i < 3; i++)
    r[i] = r[i] * length + up[i] * rise;
  return cycles * step_yaw;
}

double sk_rootmotion_motion_between(const sk_rootmotion *rm, double from, double to, double last_progress,
                                    double progress, double out[3]) {
  double range = to - from;
  if (range == 0 || (rm->source == SK_RM_NONE && !rm->extracts_rotation)) {
    out[0] = out[1] = out[2] = 0;
    return 0;
  }
  double last_cycle = floor(last_progress / range), cycle = floor(progress / range);
  double last_frame = from + last_progress - last_cycle * range, frame = from + progress - cycle * range;
  double cycles = cycle - last_cycle, start[3], last_off[3];
  double start_yaw = sk_rootmotion_rotation_at(rm, from);
  sk_rootmotion_offset_at(rm, from, start);
  double last_yaw = motion_in_range(rm, last_frame, start_yaw, start, last_off);
  double yaw = motion_in_range(rm, frame, start_yaw, start, out);
  if (cycles != 0) {
    double step[3], all[3];
    double step_yaw = motion_in_range(rm, to, start_yaw, start, step);
    double cycles_yaw = cycle_power(rm, cycles, step, step_yaw, all);
    rm_rotate(rm, out, cycles_yaw, out);
    for (int i = 0; i < 3; i++)
      out[i] += all[i];
    yaw += cycles_yaw;
  }
  for (int i = 0; i < 3; i++)
    out[i] -= last_off[i];
  rm_rotate(rm, out, -last_yaw, out);
  return yaw - last_yaw;
}
