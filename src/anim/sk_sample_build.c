/* sk_sample's build: a sampler's clips from an sk_anim (the channels that
 * win on each bone and path, their keys as doubles, slerp constants,
 * timelines, channel groups in lane-major layout, the rest parts), in time
 * linear in the clip's channels. */
#include "sk_sample_int.h"

#include "sk_anim_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- build -------------------------------------------------------------- */

static void chan_free(samp_chan *c) {
  free(c->keys);
  free(c->slerp);
}

/* The channel's keys as doubles: a glTF channel's floats widened, or a
 * Babylon-format channel's values, each key's value, in-tangent,
 * out-tangent triple taken as `interp` (babylon_interp) reads it: the
 * value alone, or for Hermite keys reordered as glTF's in-tangent, value,
 * out-tangent, the tangents stored unscaled (sample_babylon scales them by
 * the key interval only). */
static int chan_build(const sk_anim_channel *src, int interp, samp_chan *c) {
  static const int comp[3] = {0, 3, 7};
  memset(c, 0, sizeof *c);
  c->bone = src->bone;
  c->comp = comp[src->path];
  c->width = src->path == SK_ANIM_ROTATION ? 4 : 3;
  c->interp = src->values64 != NULL ? interp : src->interp;
  c->tscale = src->values64 != NULL ? 1.0 : 1 / SK_ANIM_FPS;
  c->count = src->count;
  c->frames = src->frames;
  const size_t w = (size_t)c->width, per = w * (c->interp == SK_ANIM_CUBICSPLINE ? 3 : 1);
  if ((c->keys = malloc(src->count * per * sizeof *c->keys)) == NULL)
    return SK_ENOMEM;
  for (size_t i = 0; src->values64 == NULL && i < src->count * per; i++)
    c->keys[i] = src->values[i];
  for (size_t k = 0; src->values64 != NULL && k < src->count; k++) {
    const double *v = src->values64 + k * 3 * w;
    double *d = c->keys + k * per;
    if (c->interp != SK_ANIM_CUBICSPLINE) {
      memcpy(d, v, w * sizeof *d);
      continue;
    }
    memcpy(d, v + w, w * sizeof *d); /* in-tangent */
    memcpy(d + w, v, w * sizeof *d); /* value */
    memcpy(d + 2 * w, v + 2 * w, w * sizeof *d);
  }
  if (src->path == SK_ANIM_ROTATION && c->interp == SK_ANIM_LINEAR && src->count > 1) {
    if ((c->slerp = malloc((src->count - 1) * 4 * sizeof *c->slerp)) == NULL)
      return SK_ENOMEM;
    for (size_t k = 0; k + 1 < src->count; k++)
      sk_anim__slerp_prep(c->keys + 4 * k, c->keys + 4 * (k + 1), c->slerp + 4 * k);
  }
  return 0;
}

static int group_kind(const samp_chan *ch) {
  if (ch->slerp != NULL)
    return GROUP_ROT;
  if (ch->count == 1 || ch->interp == SK_ANIM_STEP)
    return ch->width == 4 ? GROUP_STEP4 : GROUP_STEP3;
  if (ch->interp == SK_ANIM_CUBICSPLINE)
    return ch->width == 4 ? GROUP_CUB4 : GROUP_CUB3;
  return GROUP_VEC3; /* LINEAR translations and scales (LINEAR rotations have slerp) */
}

/* Lane j's vectors of key k (samp_group): d points at lane j of the key's
 * first vector. */
static void group_key(const samp_group *g, const samp_chan *ch, size_t k, double *d) {
  const size_t w = (size_t)ch->width;
  const bool cub = ch->interp == SK_ANIM_CUBICSPLINE;
  const size_t stride = cub ? 3 * w : w;
  const double *v = ch->keys + k * stride + (cub ? w : 0); /* chan_value's sv */
  for (size_t i = 0; i < w; i++)
    d[i * SAMP_LANES] = v[i];
  if (g->kind == GROUP_ROT && k + 1 < g->count) {
    const double *p = ch->slerp + 4 * k; /* |dot|, flag, acos, 1/sin */
    d[4 * SAMP_LANES] = p[2];
    d[5 * SAMP_LANES] = p[3];
    d[6 * SAMP_LANES] = p[1];
    d[7 * SAMP_LANES] = p[0];
  }
  if ((g->kind == GROUP_CUB3 || g->kind == GROUP_CUB4) && k + 1 < g->count) {
    /* sk_anim's tangents for the interval, in its operation order (glTF: times 1/fps, then the interval; a
     * Babylon key's: the interval only, and x * 1 is x) */
    const double frame_delta = ch->frames[k + 1] - ch->frames[k];
    const double *out_t = ch->keys + k * stride + 2 * w, *in_t = ch->keys + (k + 1) * stride;
    for (size_t i = 0; i < w; i++) {
      d[(w + i) * SAMP_LANES] = (out_t[i] * ch->tscale) * frame_delta;
      d[(2 * w + i) * SAMP_LANES] = (in_t[i] * ch->tscale) * frame_delta;
    }
  }
}

/* The group's keys lane-major (samp_group). */
static int group_fill(const samp_clip *c, samp_group *g) {
  const size_t per = samp_group_per(g->kind) * SAMP_LANES;
  if ((g->data = calloc(g->count * per, sizeof *g->data)) == NULL)
    return SK_ENOMEM;
  for (size_t k = 0; k < g->count; k++)
    for (int j = 0; j < SAMP_LANES; j++)
      group_key(g, &c->chans[g->chan[j < g->lanes ? j : 0]], k, g->data + k * per + j);
  return 0;
}

/* Rotation groups, then the other kinds: the channels of each timeline in
 * file order, SAMP_LANES at a time (each timeline's open group is kept, so
 * this is linear in the channels: a request builds it). */
static int clip_group(samp_clip *c) {
  static const int kinds[] = {GROUP_ROT, GROUP_VEC3, GROUP_STEP3, GROUP_STEP4, GROUP_CUB3, GROUP_CUB4};
  const size_t n = c->count ? c->count : 1;
  size_t *open = malloc((c->line_count ? c->line_count : 1) * sizeof *open);
  if (open == NULL || (c->groups = calloc(n, sizeof *c->groups)) == NULL) {
    free(open);
    return SK_ENOMEM;
  }
  for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
    const int kind = kinds[ki];
    for (size_t li = 0; li < c->line_count; li++)
      open[li] = SIZE_MAX;
    for (size_t k = 0; k < c->count; k++) {
      const samp_chan *ch = &c->chans[k];
      if (group_kind(ch) != kind)
        continue;
      size_t gi = open[ch->line];
      if (gi == SIZE_MAX || c->groups[gi].lanes == SAMP_LANES) {
        gi = open[ch->line] = c->group_count++;
        c->groups[gi] = (samp_group){.line = ch->line, .kind = kind, .width = ch->width, .count = ch->count};
      }
      samp_group *g = &c->groups[gi];
      g->chan[g->lanes] = k;
      g->bone[g->lanes] = (size_t)ch->bone;
      g->comp[g->lanes] = ch->comp;
      g->at[g->lanes++] = (size_t)ch->bone * SK_ANIM_TRS + (size_t)ch->comp;
    }
    if (kind == GROUP_ROT)
      c->rot_groups = c->group_count;
  }
  free(open);
  for (size_t i = 0; i < c->group_count; i++)
    if (group_fill(c, &c->groups[i]) != 0)
      return SK_ENOMEM;
  return 0;
}

/* The (bone, T/R/S) parts no kept channel writes. */
static int clip_rest(samp_clip *c, size_t bones) {
  static const int comp[3] = {0, 3, 7}, width[3] = {3, 4, 3};
  unsigned char *driven = calloc(bones ? bones : 1, 1); /* bit p: part p */
  if (driven == NULL || (c->rest = malloc((bones > 0 ? 3 * bones : 1) * sizeof *c->rest)) == NULL) {
    free(driven);
    return SK_ENOMEM;
  }
  for (size_t k = 0; k < c->count; k++)
    driven[c->chans[k].bone] |= (unsigned char)(1u << (c->chans[k].comp == 0 ? 0 : c->chans[k].comp == 3 ? 1 : 2));
  for (size_t b = 0; b < bones; b++)
    for (int part = 0; part < 3; part++)
      if (!(driven[b] & (1u << part)))
        c->rest[c->rest_count++] = (samp_rest){.bone = b, .comp = comp[part], .width = width[part]};
  free(driven);
  return 0;
}

/* A hash of a channel's key times (their bits, mixed as splitmix64 does). */
static uint64_t frames_hash(const double *f, size_t n) {
  uint64_t h = n;
  for (size_t i = 0; i < n; i++) {
    uint64_t u;
    memcpy(&u, &f[i], sizeof u);
    h = (h ^ u) * 0x9e3779b97f4a7c15u;
    h ^= h >> 29;
  }
  return h;
}

/* The timeline with `ch`'s key times, added when new. `table` (cap a power
 * of two above twice the channels, zeroed) maps a hash to line + 1, so
 * finding it costs one hash of the times, not a search of every line. */
static size_t line_of(samp_clip *c, const sk_anim_channel *ch, size_t *table, size_t cap) {
  const size_t bytes = ch->count * sizeof *ch->frames;
  for (size_t i = frames_hash(ch->frames, ch->count) & (cap - 1);; i = (i + 1) & (cap - 1)) {
    if (table[i] == 0) {
      c->lines[c->line_count] = (samp_line){.frames = ch->frames, .count = ch->count};
      table[i] = ++c->line_count;
      return c->line_count - 1;
    }
    const samp_line *ln = &c->lines[table[i] - 1];
    if (ln->count == ch->count && memcmp(ln->frames, ch->frames, bytes) == 0)
      return table[i] - 1;
  }
}

/* The channel of each (bone, path) that wins: the last in file order (a
 * later one overwrites every component an earlier one writes, so dropping
 * those changes no bit). last[bone * 3 + path] is its index. */
static size_t *last_channels(const sk_anim_clip *src, size_t bones) {
  size_t *last = malloc((bones ? 3 * bones : 1) * sizeof *last);
  if (last == NULL)
    return NULL;
  for (size_t k = 0; k < src->channel_count; k++)
    last[(size_t)src->channels[k].bone * 3 + (size_t)src->channels[k].path] = k;
  return last;
}

/* The kind every interval of a Babylon-format channel takes in sk_anim's
 * sample_babylon, as a group samples it: SK_ANIM_STEP (the start key's
 * STEP), SK_ANIM_CUBICSPLINE (Hermite: the start key's out-tangent and the
 * end key's in-tangent) or SK_ANIM_LINEAR (a lerp or slerp); -1 when the
 * intervals differ, for a "_matrix" channel (its keys are held, never
 * sampled) or a RELATIVE one (its zero offset turns -0 into +0). */
static int babylon_interp(const sk_anim_channel *ch) {
  if (ch->path == SK_ANIM_MATRIX || ch->values64 == NULL || ch->relative)
    return -1;
  int kind = SK_ANIM_LINEAR;
  for (size_t k = 0; ch->key_flags != NULL && k + 1 < ch->count; k++) {
    const uint8_t fs = ch->key_flags[k], fe = ch->key_flags[k + 1];
    const int ik = (fs & SK_ANIM_KEY_STEP)                           ? SK_ANIM_STEP
                   : (fs & SK_ANIM_KEY_OUT) && (fe & SK_ANIM_KEY_IN) ? SK_ANIM_CUBICSPLINE
                                                                     : SK_ANIM_LINEAR;
    if (k > 0 && ik != kind)
      return -1;
    kind = ik;
  }
  return kind;
}

/* Whether the groups sample every channel of a Babylon-format clip as
 * sample_babylon does (babylon_interp), on the same doubles. */
static bool clip_babylon_uniform(const sk_anim_clip *src) {
  for (size_t k = 0; k < src->channel_count; k++)
    if (babylon_interp(&src->channels[k]) < 0)
      return false;
  return true;
}

static int clip_build(const sk_anim_clip *src, size_t bones, samp_clip *c) {
  if (src->fps > 0 && !clip_babylon_uniform(src))
    return 0; /* not built: its ranges sample channel by channel (sk_pose_range) */
  c->built = true;
  c->babylon = src->fps > 0 ? src : NULL;
  c->end_frame = src->end_frame;
  c->count = 0;
  size_t cap = 16;
  while (cap < 2 * src->channel_count)
    cap *= 2;
  size_t *table = calloc(cap, sizeof *table), *last = last_channels(src, bones);
  int rc = table != NULL && last != NULL ? 0 : SK_ENOMEM;
  if (!rc && ((c->chans = calloc(src->channel_count ? src->channel_count : 1, sizeof *c->chans)) == NULL ||
              (c->lines = calloc(src->channel_count ? src->channel_count : 1, sizeof *c->lines)) == NULL))
    rc = SK_ENOMEM;
  for (size_t k = 0; !rc && k < src->channel_count; k++) {
    const sk_anim_channel *ch = &src->channels[k];
    if (last[(size_t)ch->bone * 3 + (size_t)ch->path] != k)
      continue;
    samp_chan *sc = &c->chans[c->count++];
    if ((rc = chan_build(ch, src->fps > 0 ? babylon_interp(ch) : ch->interp, sc)) == 0)
      sc->line = line_of(c, ch, table, cap);
  }
  free(table);
  free(last);
  if (!rc)
    rc = clip_group(c);
  return rc ? rc : clip_rest(c, bones);
}

static void sampler_free(sk_sampler *s) {
  for (size_t c = 0; s->clips != NULL && c < s->clip_count; c++) {
    for (size_t k = 0; k < s->clips[c].count; k++)
      chan_free(&s->clips[c].chans[k]);
    for (size_t g = 0; g < s->clips[c].group_count; g++)
      free(s->clips[c].groups[g].data);
    free(s->clips[c].groups);
    free(s->clips[c].rest);
    free(s->clips[c].chans);
    free(s->clips[c].lines);
  }
  free(s->clips);
  if (!s->shared)
    sk_anim_destroy(s->anim);
  free(s);
}

void sk_sampler_destroy(sk_sampler *s) {
  if (s == NULL)
    return;
  if (s->shared)
    sk_anim_destroy(s->anim); /* the hold's reference; the anim frees the sampler */
  else
    sampler_free(s);
}

/* The sampler of `layers`' clips (all with layers NULL); `shared`: owned by
 * `a` (no reference to it, which would be a cycle). */
static int sampler_build(const sk_anim *a, const sk_anim_layer *layers, size_t count, bool shared, sk_sampler **out) {
  *out = NULL;
  sk_sampler *s = calloc(1, sizeof *s);
  if (s == NULL)
    return SK_ENOMEM;
  /* The reference is what lets `frames` be borrowed: the sampler may
   * outlive the caller's handle (cache eviction). A shared sampler lives
   * as long as `a` does, and its holders hold `a`. */
  s->shared = shared;
  s->anim = shared ? (sk_anim *)a : sk_anim_ref((sk_anim *)a);
  s->clip_count = a->clip_count;
  if ((s->clips = calloc(a->clip_count ? a->clip_count : 1, sizeof *s->clips)) == NULL) {
    sampler_free(s);
    return SK_ENOMEM;
  }
  for (size_t c = 0; c < a->clip_count; c++) {
    bool wanted = layers == NULL;
    for (size_t i = 0; i < count && !wanted; i++)
      wanted = layers[i].clip == c;
    if (wanted && clip_build(&a->clips[c], a->bone_count, &s->clips[c]) != 0) {
      sampler_free(s);
      return SK_ENOMEM;
    }
  }
  *out = s;
  return 0;
}

int sk_sampler_create(const sk_anim *a, sk_sampler **out) { return sk_sampler_create_clips(a, NULL, 0, out); }

int sk_sampler_create_clips(const sk_anim *a, const sk_anim_layer *layers, size_t count, sk_sampler **out) {
  if (a == NULL || out == NULL || (layers == NULL && count > 0))
    return SK_EINVAL;
  return sampler_build(a, layers, count, false, out);
}

static void shared_free(void *p) { sampler_free(p); }

int sk_sampler_share(sk_anim *a, size_t max_bytes) {
  if (a == NULL || a->clip_count == 0 || __atomic_load_n(&a->derived, __ATOMIC_ACQUIRE) != NULL)
    return 0;
  sk_sampler *s;
  int rc = sampler_build(a, NULL, 0, true, &s);
  if (rc)
    return rc;
  if (sk_sampler_memory(s) > max_bytes) {
    sampler_free(s);
    return SK_ETOOBIG;
  }
  /* derived_free is only ever this function; it is read after the last
   * reference goes (sk_anim_destroy's acq_rel), or with the sampler. */
  __atomic_store_n(&a->derived_free, shared_free, __ATOMIC_RELAXED);
  void *none = NULL;
  if (!__atomic_compare_exchange_n(&a->derived, &none, s, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    sampler_free(s); /* another thread published first */
  return 0;
}

sk_sampler *sk_sampler_hold_shared(const sk_anim *a) {
  if (a == NULL)
    return NULL;
  void *d = __atomic_load_n(&a->derived, __ATOMIC_ACQUIRE);
  if (d == NULL || __atomic_load_n(&a->derived_free, __ATOMIC_RELAXED) != shared_free)
    return NULL;
  sk_anim_ref((sk_anim *)a);
  return d;
}

bool sk_sampler_is_shared(const sk_sampler *s) { return s != NULL && s->shared; }

const sk_anim *sk_sampler_anim(const sk_sampler *s) { return s->anim; }

size_t sk_sampler_memory(const sk_sampler *s) {
  if (s == NULL)
    return 0;
  size_t n = sizeof *s + s->clip_count * sizeof *s->clips;
  for (size_t c = 0; c < s->clip_count; c++) {
    const samp_clip *cl = &s->clips[c];
    n += cl->count * (sizeof *cl->chans + sizeof *cl->lines + sizeof *cl->groups);
    n += cl->built ? 3 * s->anim->bone_count * sizeof *cl->rest : 0;
    for (size_t g = 0; g < cl->group_count; g++)
      n += cl->groups[g].count * samp_group_per(cl->groups[g].kind) * SAMP_LANES * sizeof(double);
    for (size_t k = 0; k < cl->count; k++) {
      const samp_chan *ch = &cl->chans[k];
      n += ch->count * (size_t)ch->width * (ch->interp == SK_ANIM_CUBICSPLINE ? 3 : 1) * sizeof(double);
      n += ch->slerp != NULL ? (ch->count - 1) * 4 * sizeof(double) : 0;
    }
  }
  return n;
}
