#include "sk_eval.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_animops.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_ops.h"
#include "sk_clips.h"
#include "sk_sample.h"

void sk_pose_close(sk_pose *pose) {
  if (!pose->overrides_shared)
    free(pose->overrides);
  memset(pose, 0, sizeof *pose);
}

static bool key_allowed(const char *key, const char *const *a) {
  for (; a != NULL && *a != NULL; a++)
    if (strcmp(*a, key) == 0)
      return true;
  return false;
}

static int sub_pointer(char *buf, size_t cap, const char *ptr, const char *key) {
  snprintf(buf, cap, "%s", ptr);
  sk_pointer_push(buf, cap, key);
  return 0;
}

int sk_pose_parse(const sk_skeleton *s, const json_t *j, const char *ptr, const char *const *extra_keys, sk_pose *pose,
                  sk_error *err) {
  static const char *const own[] = {"bones", "initialSkinMatrix", "output", NULL};
  char p[SK_ERROR_POINTER_MAX];
  memset(pose, 0, sizeof *pose);
  pose->output = SK_OUT_FINAL;
  if (!json_is_object(j))
    return sk_error_set(err, SK_ETYPE, ptr, "expected a pose object");
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)j, key, val) {
    if (!key_allowed(key, own) && !key_allowed(key, extra_keys)) {
      sub_pointer(p, sizeof p, ptr, key);
      return sk_error_set(err, SK_EUNKNOWN, p, "unknown field \"%s\"", key);
    }
  }
  int rc;
  const json_t *bones = json_object_get(j, "bones");
  if (bones != NULL) {
    sub_pointer(p, sizeof p, ptr, "bones");
    if ((rc = sk_json_parse_overrides(s, bones, p, &pose->overrides, &pose->count, err)))
      return rc;
  }
  const json_t *ism = json_object_get(j, "initialSkinMatrix");
  if (ism != NULL && !json_is_null(ism)) {
    sub_pointer(p, sizeof p, ptr, "initialSkinMatrix");
    if ((rc = sk_json_floats(ism, 16, p, pose->initial_skin, err))) {
      sk_pose_close(pose);
      return rc;
    }
    pose->has_initial_skin = true;
  }
  sub_pointer(p, sizeof p, ptr, "output");
  if ((rc = sk_json_parse_output(json_object_get(j, "output"), p, &pose->output, err))) {
    sk_pose_close(pose);
    return rc;
  }
  return 0;
}

/* ---- poses that name clips ---------------------------------------------- */

static const char *const k_anim_keys[] = {"animation", "time", "loop", "layers", "times", "from", "to", "fps", NULL};

void sk_pose_array_free(sk_pose *poses, size_t count) {
  if (poses == NULL)
    return;
  for (size_t i = 0; i < count; i++)
    sk_pose_close(&poses[i]);
  free(poses);
}

/* A clip named by name (or "animation<k>", or "k") or by integer index. */
static int anim_clip(const sk_anim *anim, const json_t *v, const char *ptr, size_t *clip, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sub_pointer(p, sizeof p, ptr, "animation");
  if (json_is_integer(v)) {
    json_int_t k = json_integer_value(v);
    if (k < 0 || (size_t)k >= anim->clip_count)
      return sk_error_set(err, SK_ENOTFOUND, p, "no animation %lld (the skeleton has %zu)", (long long)k,
                          anim->clip_count);
    *clip = (size_t)k;
    return 0;
  }
  if (!json_is_string(v))
    return sk_error_set(err, SK_ETYPE, p, "expected an animation name or index");
  if (sk_anim_find_clip(anim, json_string_value(v), clip) != 0)
    return sk_error_set(err, SK_ENOTFOUND, p, "no animation named \"%s\"", json_string_value(v));
  return 0;
}

/* One layer object, or the pose itself for the single-"animation" form. */
static int anim_layer(const sk_anim *anim, const json_t *o, const char *ptr, bool is_layer, sk_anim_layer *l,
                      sk_error *err) {
  static const char *const k_layer[] = {"animation", "time", "weight", "loop", "additive", "reference", "mask", NULL};
  int rc;
  memset(l, 0, sizeof *l);
  l->weight = 1;
  if (is_layer) {
    if (!json_is_object(o))
      return sk_error_set(err, SK_ETYPE, ptr, "expected a layer object {\"animation\", \"time\", \"weight\"}");
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)o, key, val) {
      if (!key_allowed(key, k_layer)) {
        char p[SK_ERROR_POINTER_MAX];
        sub_pointer(p, sizeof p, ptr, key);
        return sk_error_set(err, SK_EUNKNOWN, p, "unknown field \"%s\"", key);
      }
    }
  }
  const json_t *a = json_object_get(o, "animation");
  if (a == NULL) {
    char p[SK_ERROR_POINTER_MAX];
    sub_pointer(p, sizeof p, ptr, "animation");
    return sk_error_set(err, SK_EMISSING, p, "a layer needs an \"animation\"");
  }
  if ((rc = anim_clip(anim, a, ptr, &l->clip, err)))
    return rc;
  const json_t *v;
  if ((v = json_object_get(o, "time")) != NULL && (rc = sk_json_member_number(v, ptr, "time", &l->time, err)))
    return rc;
  if ((v = json_object_get(o, "loop")) != NULL && (rc = sk_json_member_bool(v, ptr, "loop", &l->loop, err)))
    return rc;
  if (is_layer && (v = json_object_get(o, "weight")) != NULL) {
    if ((rc = sk_json_member_number(v, ptr, "weight", &l->weight, err)))
      return rc;
    if (l->weight < 0) {
      char p[SK_ERROR_POINTER_MAX];
      sub_pointer(p, sizeof p, ptr, "weight");
      return sk_error_set(err, SK_ERANGE, p, "weights must not be negative");
    }
  }
  return 0;
}

/* Frame times of a batch, or a NULL list for a single pose. */
static int anim_frames(const json_t *j, const char *ptr, bool has_time, double **times, size_t *n, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  const json_t *ts = json_object_get(j, "times");
  const json_t *from = json_object_get(j, "from"), *to = json_object_get(j, "to"), *fps = json_object_get(j, "fps");
  *times = NULL;
  *n = 1;
  bool range = from != NULL || to != NULL || fps != NULL;
  if (ts == NULL && !range)
    return 0;
  if (has_time) {
    sub_pointer(p, sizeof p, ptr, "time");
    return sk_error_set(err, SK_ETYPE, p, "give \"time\", or \"times\", or \"from\"/\"to\"/\"fps\", not several");
  }
  if (ts != NULL && range) {
    sub_pointer(p, sizeof p, ptr, "times");
    return sk_error_set(err, SK_ETYPE, p, "give \"times\" or \"from\"/\"to\"/\"fps\", not both");
  }
  int rc;
  if (ts != NULL) {
    sub_pointer(p, sizeof p, ptr, "times");
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
      sub_pointer(p, sizeof p, ptr, names[k]);
      return sk_error_set(err, SK_EMISSING, p, "a frame range needs \"from\", \"to\" and \"fps\"");
    }
    if ((rc = sk_json_member_number(vals[k], ptr, names[k], dst[k], err)))
      return rc;
  }
  if (!(r > 0)) {
    sub_pointer(p, sizeof p, ptr, "fps");
    return sk_error_set(err, SK_ERANGE, p, "fps must be positive");
  }
  if (t < f) {
    sub_pointer(p, sizeof p, ptr, "to");
    return sk_error_set(err, SK_ERANGE, p, "\"to\" is before \"from\"");
  }
  /* The small epsilon keeps `to` itself when (to - from) * fps is an
   * integer up to rounding (0.1 * 30 = 3.0000000000000004). */
  double frames = floor((t - f) * r + 1e-9) + 1;
  if (!(frames <= SK_POSE_MAX_FRAMES)) {
    sub_pointer(p, sizeof p, ptr, "fps");
    return sk_error_set(err, SK_ETOOBIG, p, "%.0f frames; the limit is %d", frames, SK_POSE_MAX_FRAMES);
  }
  *n = (size_t)frames;
  if ((*times = malloc(*n * sizeof **times)) == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  for (size_t i = 0; i < *n; i++)
    (*times)[i] = f + (double)i / r;
  return 0;
}

/* Clip TRS as one override per bone, with the user's overrides on top.
 * The bytes of sk_anim_to_overrides, written field by field: no memset of
 * the whole struct before the TRS is written over it (a range writes
 * frames x bones of them). */
_Static_assert(sizeof(sk_override) == offsetof(sk_override, scaling) + 3 * sizeof(double) &&
                   offsetof(sk_override, position) == offsetof(sk_override, matrix) + 16 * sizeof(float),
               "sk_override has padding: merge_overrides would leave bytes sk_anim_to_overrides zeroes");
static void merge_overrides(const sk_anim *anim, const double *trs, const sk_pose *user, sk_override *out) {
  static const float zero[16];
  for (size_t b = 0; b < anim->bone_count; b++) {
    const double *t = trs + b * SK_ANIM_TRS;
    sk_override *o = &out[b];
    o->bone = (int32_t)b;
    o->mask = SK_OVERRIDE_POSITION | SK_OVERRIDE_ROTATION | SK_OVERRIDE_SCALING;
    memcpy(o->matrix, zero, sizeof o->matrix);
    memcpy(o->position, t, 3 * sizeof *t);
    memcpy(o->rotation, t + 3, 4 * sizeof *t);
    memcpy(o->scaling, t + 7, 3 * sizeof *t);
  }
  for (size_t k = 0; k < user->count; k++) {
    const sk_override *o = &user->overrides[k];
    sk_override *m = &out[o->bone];
    if (o->mask & SK_OVERRIDE_MATRIX) {
      *m = *o;
      continue;
    }
    if (o->mask & SK_OVERRIDE_POSITION)
      memcpy(m->position, o->position, sizeof m->position);
    if (o->mask & SK_OVERRIDE_ROTATION)
      memcpy(m->rotation, o->rotation, sizeof m->rotation);
    if (o->mask & SK_OVERRIDE_SCALING)
      memcpy(m->scaling, o->scaling, sizeof m->scaling);
  }
}

/* Babylon-format clips: `o` holds one override per bone (mask 0 where the
 * clip drives nothing). The user's "bones" apply on top as Babylon's
 * setters would after goToFrame: a matrix replaces the bone's transform,
 * TRS fields join the clip's (sk_local_apply sets the matrix first, then
 * the TRS fields). Compacts `o` to the bones with a mask; returns the count. */
static size_t merge_babylon(sk_override *o, size_t nb, const sk_pose *user) {
  for (size_t k = 0; k < user->count; k++) {
    const sk_override *u = &user->overrides[k];
    sk_override *m = &o[u->bone];
    if (u->mask & SK_OVERRIDE_MATRIX) {
      *m = *u;
      continue;
    }
    if (u->mask & SK_OVERRIDE_POSITION)
      memcpy(m->position, u->position, sizeof m->position);
    if (u->mask & SK_OVERRIDE_ROTATION)
      memcpy(m->rotation, u->rotation, sizeof m->rotation);
    if (u->mask & SK_OVERRIDE_SCALING)
      memcpy(m->scaling, u->scaling, sizeof m->scaling);
    m->mask |= u->mask;
  }
  size_t n = 0;
  for (size_t b = 0; b < nb; b++)
    if (o[b].mask != 0)
      o[n++] = o[b];
  return n;
}

/* A pose object that may name clips, parsed but not sampled: the base pose
 * (user overrides, initial skin, outputs), and for clip poses the layers
 * and the frame times (NULL for a single time). */
typedef struct anim_spec {
  sk_pose base;
  bool animated;
  sk_anim_layer *l; /* owned; nl entries */
  size_t nl;
  double *times; /* owned; NULL or nf entries */
  size_t nf;
  sk_anim_layer_ext *lx; /* owned; nl entries (additive, masks); zeroed: plain */
  float *masks;          /* owned; nl * bones weights the masks point into */
  bool plain_layers;     /* no layer is additive or masked (sk_sample's case) */
} anim_spec;

static void anim_spec_close(anim_spec *sp) {
  sk_pose_close(&sp->base);
  free(sp->l);
  free(sp->times);
  free(sp->lx);
  free(sp->masks);
  memset(sp, 0, sizeof *sp);
}

static int anim_spec_parse(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr,
                           const char *const *extra_keys, anim_spec *sp, sk_error *err) {
  memset(sp, 0, sizeof *sp);
  sp->nf = 1;
  sp->plain_layers = true;
  char p[SK_ERROR_POINTER_MAX];
  size_t ne = 0;
  while (extra_keys != NULL && extra_keys[ne] != NULL)
    ne++;
  const char **keys = malloc((ne + sizeof k_anim_keys / sizeof k_anim_keys[0]) * sizeof *keys);
  if (keys == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  if (ne > 0)
    memcpy(keys, extra_keys, ne * sizeof *keys);
  memcpy(keys + ne, k_anim_keys, sizeof k_anim_keys);
  int rc = sk_pose_parse(s, j, ptr, keys, &sp->base, err);
  free(keys);
  if (rc)
    return rc;
  const json_t *a = json_object_get(j, "animation"), *layers = json_object_get(j, "layers");
  if (a == NULL && layers == NULL) {
    for (const char *const *k = k_anim_keys; *k != NULL && !rc; k++)
      if (json_object_get(j, *k) != NULL) {
        sub_pointer(p, sizeof p, ptr, *k);
        rc = sk_error_set(err, SK_EMISSING, p, "\"%s\" needs an \"animation\" or \"layers\"", *k);
      }
    goto done;
  }
  sp->animated = true;
  if (anim == NULL || anim->clip_count == 0) {
    sub_pointer(p, sizeof p, ptr, a != NULL ? "animation" : "layers");
    rc = sk_error_set(err, SK_ENOTFOUND, p,
                      "this skeleton has no animations (glTF imports and Babylon skeletons with bone animations "
                      "carry clips)");
    goto done;
  }
  if (anim->bone_count != s->count) {
    rc = sk_error_set(err, SK_EINVAL, ptr, "the clips belong to another skeleton");
    goto done;
  }
  if (a != NULL && layers != NULL) {
    sub_pointer(p, sizeof p, ptr, "layers");
    rc = sk_error_set(err, SK_ETYPE, p, "give \"animation\" or \"layers\", not both");
    goto done;
  }
  if (layers != NULL && anim->babylon) {
    sub_pointer(p, sizeof p, ptr, "layers");
    rc = sk_error_set(err, SK_EUNSUPPORTED, p,
                      "layers of Babylon-format clips are not supported yet; use one \"animation\"");
    goto done;
  }
  if (layers != NULL) {
    sub_pointer(p, sizeof p, ptr, "layers");
    /* A frame range applies to every layer (each layer's "time" becomes an
     * offset); a pose-level "time" or "loop" would be ambiguous. */
    static const char *const single[] = {"time", "loop", NULL};
    for (const char *const *k = single; *k != NULL && !rc; k++)
      if (json_object_get(j, *k) != NULL) {
        char q[SK_ERROR_POINTER_MAX];
        sub_pointer(q, sizeof q, ptr, *k);
        rc = sk_error_set(err, SK_ETYPE, q, "with \"layers\", give \"%s\" inside each layer", *k);
      }
    if (!rc && (!json_is_array(layers) || json_array_size(layers) == 0))
      rc = sk_error_set(err, SK_ETYPE, p, "expected a non-empty array of layers");
    if (rc)
      goto done;
    sp->nl = json_array_size(layers);
    sp->lx = calloc(sp->nl, sizeof *sp->lx);
    sp->masks = malloc(sp->nl * (s->count ? s->count : 1) * sizeof *sp->masks);
    if ((sp->l = malloc(sp->nl * sizeof *sp->l)) == NULL || sp->lx == NULL || sp->masks == NULL) {
      rc = sk_error_set(err, SK_ENOMEM, p, "out of memory");
      goto done;
    }
    double total = 0;
    for (size_t i = 0; i < sp->nl && !rc; i++) {
      char q[SK_ERROR_POINTER_MAX];
      snprintf(q, sizeof q, "%s", p);
      sk_pointer_push_index(q, sizeof q, i);
      rc = anim_layer(anim, json_array_get(layers, i), q, true, &sp->l[i], err);
      if (!rc)
        rc = sk_animops_layer_ext(s, json_array_get(layers, i), q, &sp->lx[i], sp->masks + i * s->count, err);
      if (!rc && (sp->lx[i].additive || sp->lx[i].bone_weights != NULL))
        sp->plain_layers = false;
      total += rc ? 0 : sp->l[i].weight;
    }
    if (!rc && !(total > 0 && isfinite(total)))
      rc = sk_error_set(err, SK_ERANGE, p, "the layer weights must add up to a positive number");
    if (!rc)
      rc = anim_frames(j, ptr, false, &sp->times, &sp->nf, err);
  } else {
    sp->nl = 1;
    if ((sp->l = malloc(sizeof *sp->l)) == NULL)
      rc = sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
    else
      rc = anim_layer(anim, j, ptr, false, sp->l, err);
    if (!rc)
      rc = anim_frames(j, ptr, json_object_get(j, "time") != NULL, &sp->times, &sp->nf, err);
  }
  if (!rc && (double)sp->nf * (double)(s->count ? s->count : 1) > SK_POSE_MAX_FRAME_BONES)
    rc = sk_error_set(err, SK_ETOOBIG, ptr, "%zu frames of %zu bones; at most %u bone poses per request", sp->nf,
                      s->count, SK_POSE_MAX_FRAME_BONES);
done:
  if (rc)
    anim_spec_close(sp);
  return rc;
}

/* A frame range of plain glTF layers (no additive or masked layer, not
 * Babylon-format clips) is sampled by sk_sample: key cursors carried from
 * frame to frame and the slerp's per-interval constants computed once,
 * bit for bit sk_anim_sample_layers (tests/check_sk_sample.c). Below this
 * many frames building the request's sampler costs more than it saves. */
#define RANGE_SAMPLER_MIN_FRAMES 4
/* Frames sampled at once into range_sampler's buffer. */
#define RANGE_SAMPLER_CHUNK 64

typedef struct range_sampler {
  sk_sampler *sampler;
  sk_sample_ctx *ctx;
  double *trs; /* RANGE_SAMPLER_CHUNK frames of B * SK_ANIM_TRS */
  /* Every frame's B overrides in one block, until the first pose owns it:
   * one allocation instead of one per frame (a 256-frame range of Fox is
   * 1 MB; in pieces, each request faulted it in again after malloc
   * trimmed the heap: about half of the parse's time, perf). */
  sk_override *block;
} range_sampler;

static void range_sampler_close(range_sampler *rs) {
  sk_sample_ctx_destroy(rs->ctx);
  sk_sampler_destroy(rs->sampler);
  free(rs->trs);
  free(rs->block);
  memset(rs, 0, sizeof *rs);
}

/* Opens `rs` for `sp`'s layers (their times still the offsets), or leaves
 * it closed when sk_sample does not take them or cannot be built: the
 * frames are then sampled one by one, with the same bits. */
static void range_sampler_open(range_sampler *rs, const sk_anim *anim, const anim_spec *sp) {
  memset(rs, 0, sizeof *rs);
  if (sp->times == NULL || !sp->plain_layers || anim->babylon || sp->nf < RANGE_SAMPLER_MIN_FRAMES)
    return;
  const size_t nb = anim->bone_count ? anim->bone_count : 1;
  if (sk_sampler_create_clips(anim, sp->l, sp->nl, &rs->sampler) != 0 ||
      sk_sample_ctx_create(rs->sampler, sp->l, sp->nl, &rs->ctx) != 0 ||
      (rs->trs = malloc(RANGE_SAMPLER_CHUNK * nb * SK_ANIM_TRS * sizeof *rs->trs)) == NULL ||
      (rs->block = malloc(sp->nf * nb * sizeof *rs->block)) == NULL)
    range_sampler_close(rs);
}

/* Frame `k`'s TRS, sampling the chunk that starts at k when k begins one. */
static const double *range_sampler_frame(range_sampler *rs, const sk_anim *anim, const double *times, size_t nf,
                                         size_t k) {
  const size_t at = k % RANGE_SAMPLER_CHUNK;
  if (at == 0) {
    size_t n = nf - k < RANGE_SAMPLER_CHUNK ? nf - k : RANGE_SAMPLER_CHUNK;
    sk_sample_out o = {.f64 = rs->trs};
    sk_sample_run(rs->ctx, times + k, 0, n, &o);
  }
  return rs->trs + at * anim->bone_count * SK_ANIM_TRS;
}

int sk_pose_parse_anim(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr,
                       const char *const *extra_keys, sk_pose **poses, size_t *count, sk_error *err) {
  *poses = NULL;
  *count = 0;
  anim_spec sp;
  int rc = anim_spec_parse(s, anim, j, ptr, extra_keys, &sp, err);
  if (rc)
    return rc;
  sk_pose *out = NULL;
  if (!sp.animated) {
    if ((out = malloc(sizeof *out)) == NULL) {
      anim_spec_close(&sp);
      return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
    }
    *out = sp.base;
    memset(&sp.base, 0, sizeof sp.base); /* moved into *out */
    anim_spec_close(&sp);
    *poses = out;
    *count = 1;
    return 0;
  }
  const size_t nb = anim->bone_count, nl = sp.nl;
  size_t nf = sp.nf;
  sk_anim_layer *l = sp.l;
  const double *times = sp.times;
  double *trs = malloc((nb ? nb : 1) * SK_ANIM_TRS * sizeof *trs);
  double *scratch = malloc((nb ? nb : 1) * SK_ANIM_TRS * sizeof *scratch);
  /* A range samples layer i at sk_sample_layer_time(its time, frame time):
   * the rule sk_sample's contexts use, so both paths give the same bits. */
  double *offsets = malloc(nl * sizeof *offsets);
  out = calloc(nf, sizeof *out);
  if (trs == NULL || scratch == NULL || out == NULL || offsets == NULL) {
    rc = sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
    nf = 0;
  }
  for (size_t i = 0; !rc && i < nl; i++)
    offsets[i] = l[i].time;
  range_sampler rs;
  range_sampler_open(&rs, anim, &sp);
  size_t made = 0;
  for (; !rc && made < nf; made++) {
    for (size_t i = 0; times != NULL && i < nl; i++)
      l[i].time = sk_sample_layer_time(offsets[i], times[made]);
    out[made] = sp.base;
    if (rs.ctx != NULL) {
      /* frame 0 owns the block (sk_pose.overrides_shared) */
      out[made].overrides = made == 0 ? rs.block : out[0].overrides + made * nb;
      out[made].overrides_shared = made > 0;
      rs.block = NULL;
      out[made].frame_range = true;
      out[made].count = nb;
      merge_overrides(anim, range_sampler_frame(&rs, anim, times, nf, made), &sp.base, out[made].overrides);
      continue;
    }
    out[made].overrides = malloc((nb ? nb : 1) * sizeof *out[made].overrides);
    if (out[made].overrides == NULL) {
      rc = sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
      break;
    }
    out[made].frame_range = times != NULL;
    if (anim->babylon) {
      /* Only the bones the clip drives, with the driven fields only. */
      sk_anim_sample_overrides(anim, l[0].clip, l[0].time, l[0].loop, trs, out[made].overrides);
      out[made].count = merge_babylon(out[made].overrides, nb, &sp.base);
      continue;
    }
    int src = sk_anim_sample_layers_ext(anim, l, sp.lx, nl, trs, scratch);
    if (src != 0) {
      rc = sk_error_set(err, src == SK_ENOMEM ? SK_ENOMEM : SK_ERANGE, ptr,
                        src == SK_ENOMEM ? "out of memory" : "invalid layer weights");
      made++; /* its overrides are allocated: freed with the others */
      break;
    }
    out[made].count = nb;
    merge_overrides(anim, trs, &sp.base, out[made].overrides);
  }
  range_sampler_close(&rs);
  free(offsets);
  free(trs);
  free(scratch);
  anim_spec_close(&sp);
  if (rc) {
    sk_pose_array_free(out, made);
    return rc;
  }
  *poses = out;
  *count = nf;
  return 0;
}

int sk_eval_buffers_init(sk_eval_buffers *b, size_t bones) {
  memset(b, 0, sizeof *b);
  size_t m = 16 * (bones + 1);
  b->bones = bones;
  b->locals = malloc(m * sizeof(float));
  b->scratch = malloc(m * sizeof(float));
  b->final = malloc(m * sizeof(float));
  b->absolute = malloc(m * sizeof(float));
  b->local = malloc(m * sizeof(float));
  if (!b->locals || !b->scratch || !b->final || !b->absolute || !b->local) {
    sk_eval_buffers_close(b);
    return SK_ENOMEM;
  }
  return 0;
}

void sk_eval_buffers_close(sk_eval_buffers *b) {
  free(b->locals);
  free(b->scratch);
  free(b->final);
  free(b->absolute);
  free(b->local);
  memset(b, 0, sizeof *b);
}

void sk_pose_evaluate(const sk_skeleton *s, const sk_pose *pose, sk_eval_buffers *buf) {
  const float *locals = NULL;
  if (pose->count > 0) {
    sk_skeleton_pose_locals(s, pose->overrides, pose->count, buf->locals);
    locals = buf->locals;
  }
  sk_skeleton_evaluate(s, locals, pose->has_initial_skin ? pose->initial_skin : NULL, buf->scratch,
                       (pose->output & SK_OUT_FINAL) ? buf->final : NULL,
                       (pose->output & SK_OUT_ABSOLUTE) ? buf->absolute : NULL,
                       (pose->output & SK_OUT_LOCAL) ? buf->local : NULL);
}

int sk_pose_write_json(const sk_skeleton *s, const sk_pose *pose, const sk_eval_buffers *buf,
                       const sk_f32_text *final_ref, sk_strbuf *out) {
  return sk_json_write_result_ref(out, s->count, (pose->output & SK_OUT_FINAL) ? buf->final : NULL, final_ref,
                                  (pose->output & SK_OUT_ABSOLUTE) ? buf->absolute : NULL,
                                  (pose->output & SK_OUT_LOCAL) ? buf->local : NULL);
}

int sk_eval_write_order(const sk_skeleton *s, sk_strbuf *out) {
  if (sk_strbuf_append(out, "[", 1))
    return SK_ENOMEM;
  for (size_t i = 0; i < s->count; i++)
    if ((i > 0 && sk_strbuf_append(out, ",", 1)) || sk_json_write_string(out, s->bones[i].name))
      return SK_ENOMEM;
  return sk_strbuf_append(out, "]", 1) ? SK_ENOMEM : 0;
}

/* ---- ops ------------------------------------------------------------------ */

static int op_bone(const sk_skeleton *s, const json_t *op, const char *ptr, bool required, int32_t *bone,
                   sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  sub_pointer(p, sizeof p, ptr, "bone");
  const json_t *name = json_object_get(op, "bone");
  *bone = -1;
  if (name == NULL) {
    if (required)
      return sk_error_set(err, SK_EMISSING, p, "this op needs a \"bone\"");
    return 0;
  }
  if (!json_is_string(name))
    return sk_error_set(err, SK_ETYPE, p, "expected a bone name");
  *bone = sk_skeleton_find(s, json_string_value(name));
  if (*bone < 0)
    return sk_error_set(err, SK_ENOTFOUND, p, "no bone named \"%s\"", json_string_value(name));
  return 0;
}

static int check_op_keys(const json_t *op, const char *ptr, const char *const *allowed, sk_error *err) {
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)op, key, val) {
    if (!key_allowed(key, allowed)) {
      char p[SK_ERROR_POINTER_MAX];
      sub_pointer(p, sizeof p, ptr, key);
      return sk_error_set(err, SK_EUNKNOWN, p, "unknown field \"%s\"", key);
    }
  }
  return 0;
}

/* What the Bone-API ops of a case share: Babylon's lazy absolute matrices
 * of the case's skeleton and the case's default mesh. */
typedef struct eval_ctx {
  sk_bones bones;
  bool has_mesh;
  sk_mesh mesh;
  sk_sampler *sampler; /* owned; built by the first frame range */
} eval_ctx;


/* The parts of a "pose"/"evaluate" op that sk_pose_parse does not know:
 * the "world"/"positions" outputs, a "mesh" for them and, on a pose,
 * "ops" applied after the bone overrides. */
typedef struct pose_ext {
  json_t *op; /* new: the op without them */
  bool world, positions, has_mesh;
  sk_mesh mesh;
  sk_op *ops; /* owned */
  size_t nops;
} pose_ext;

static int pose_ext_parse(const sk_skeleton *s, const eval_ctx *ctx, const json_t *op, const char *ptr, bool is_pose,
                          pose_ext *x, sk_error *err) {
  static const char *const k_outputs[] = {"final", "absolute", "local", "world", "positions"};
  char p[SK_ERROR_POINTER_MAX];
  memset(x, 0, sizeof *x);
  x->has_mesh = ctx->has_mesh;
  x->mesh = ctx->mesh;
  if ((x->op = json_copy((json_t *)op)) == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  int rc = 0;
  const json_t *out = json_object_get(op, "output");
  if (json_is_array(out)) {
    json_t *kept = json_array();
    unsigned seen = 0;
    for (size_t i = 0; kept != NULL && !rc && i < json_array_size(out); i++) {
      const char *name = json_string_value(json_array_get(out, i));
      size_t k = 0;
      while (name != NULL && k < 5 && strcmp(name, k_outputs[k]) != 0)
        k++;
      sub_pointer(p, sizeof p, ptr, "output");
      sk_pointer_push_index(p, sizeof p, i);
      if (name == NULL || k == 5)
        rc = sk_error_set(err, SK_ERANGE, p, "expected \"final\", \"absolute\", \"local\", \"world\" or \"positions\"");
      else if (seen & (1u << k))
        rc = sk_error_set(err, SK_EDUPLICATE, p, "output listed twice");
      seen |= 1u << k;
      if (!rc && k < 3)
        json_array_append_new(kept, json_string(name));
    }
    x->world = seen & (1u << 3);
    x->positions = seen & (1u << 4);
    if (kept == NULL || json_object_set_new(x->op, "output", kept) != 0)
      rc = rc ? rc : sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  }
  const json_t *mj = json_object_get(op, "mesh");
  if (!rc && mj != NULL) {
    sub_pointer(p, sizeof p, ptr, "mesh");
    rc = sk_ops_parse_mesh(mj, p, &x->has_mesh, &x->mesh, err);
    json_object_del(x->op, "mesh");
  }
  const json_t *oj = json_object_get(op, "ops");
  if (!rc && oj != NULL && is_pose) {
    sub_pointer(p, sizeof p, ptr, "ops");
    rc = sk_ops_parse(s, oj, p, x->has_mesh ? &x->mesh : NULL, &x->ops, &x->nops, err);
    json_object_del(x->op, "ops");
  }
  if (rc) {
    json_decref(x->op);
    free(x->ops);
  }
  return rc;
}

/* Removes the closing brace of the result object just written, so members
 * can follow; returns whether the object is empty. */
static bool reopen_object(sk_strbuf *out) {
  out->len--;
  return out->len > 0 && out->data[out->len - 1] == '{';
}

/* One pose with ops or world outputs: on a scratch copy (Babylon's oracle
 * replays the history on a fresh skeleton: the same state), so nothing
 * stays. Query results go in the pose's own "queries". */
static int pose_on_copy(const sk_skeleton *s, const eval_ctx *ctx, const pose_ext *x, const sk_pose *pose,
                        sk_eval_buffers *buf, sk_strbuf *out) {
  sk_skeleton *c;
  if (sk_skeleton_clone(s, &c))
    return SK_ENOMEM;
  sk_bones cb;
  int rc = sk_bones_init(&cb, c);
  if (rc) {
    sk_skeleton_destroy(c);
    return rc;
  }
  memcpy(cb.absolute, ctx->bones.absolute, 16 * s->count * sizeof *cb.absolute);
  sk_skeleton_apply(c, pose->overrides, pose->count);
  sk_strbuf q = {0};
  size_t nq = 0;
  rc = sk_ops_apply(&cb, x->ops, x->nops, &q, &nq);
  sk_pose p0 = *pose;
  p0.overrides = NULL;
  p0.count = 0;
  if (!rc) {
    sk_pose_evaluate(c, &p0, buf);
    rc = sk_pose_write_json(c, &p0, buf, NULL, out);
  }
  if (!rc) {
    bool first = reopen_object(out);
    rc = sk_ops_write_world(&cb, x->has_mesh ? &x->mesh : NULL, x->world, x->positions, first, out);
    first = first && !x->world && !x->positions;
    if (!rc && x->nops > 0 &&
        ((!first && sk_strbuf_append(out, ",", 1)) || sk_strbuf_append(out, "\"queries\":[", 11) ||
         (q.len > 0 && sk_strbuf_append(out, q.data, q.len)) || sk_strbuf_append(out, "]", 1)))
      rc = SK_ENOMEM;
    if (!rc && sk_strbuf_append(out, "}", 1))
      rc = SK_ENOMEM;
  }
  sk_strbuf_free(&q);
  sk_bones_close(&cb);
  sk_skeleton_destroy(c);
  return rc;
}

static int run_pose_op(sk_skeleton *s, const sk_anim *anim, eval_ctx *ctx, const json_t *op, const char *ptr,
                       bool is_pose, sk_eval_buffers *buf, sk_strbuf *out, size_t *nresults, sk_error *err) {
  static const char *const k_op[] = {"op", NULL};
  static const char *const k_eval[] = {"op", "initialSkinMatrix", "output", "mesh", NULL};
  sk_pose *poses;
  size_t np;
  pose_ext x;
  int rc;
  if (!is_pose && (rc = check_op_keys(op, ptr, k_eval, err)))
    return rc;
  if ((rc = pose_ext_parse(s, ctx, op, ptr, is_pose, &x, err)))
    return rc;
  bool ext = x.world || x.positions || x.nops > 0 || (is_pose && json_object_get(op, "ops") != NULL);
  if (!ext) {
    anim_spec sp;
    rc = anim_spec_parse(s, anim, x.op, ptr, k_op, &sp, err);
    if (rc) {
      json_decref(x.op);
      free(x.ops);
      return rc;
    }
    /* The sampler (sk_sample) does plain weighted glTF layers; additive or
     * masked layers and Babylon-format clips take sk_pose_parse_anim. */
    bool plain_range = sp.animated && sp.times != NULL && sp.base.count == 0 && sp.base.output == SK_OUT_FINAL &&
                       sp.plain_layers && !anim->babylon;
    if (plain_range) {
      json_decref(x.op);
      free(x.ops);
      rc = sk_clips_write_range_json(s, anim, &ctx->sampler, sp.l, sp.nl, sp.times, sp.nf, &sp.base, out, nresults);
      anim_spec_close(&sp);
      return rc ? sk_error_set(err, rc, ptr, "out of memory writing the result") : 0;
    }
    anim_spec_close(&sp);
  }
  /* A pose naming clips gives one result per frame. */
  rc = sk_pose_parse_anim(s, anim, x.op, ptr, k_op, &poses, &np, err);
  json_decref(x.op);
  if (rc) {
    free(x.ops);
    return rc;
  }
  for (size_t i = 0; i < np && !rc; i++) {
    if (*nresults > 0 && sk_strbuf_append(out, ",", 1))
      rc = SK_ENOMEM;
    if (!rc && is_pose && ext) {
      rc = pose_on_copy(s, ctx, &x, &poses[i], buf, out);
    } else if (!rc) {
      sk_pose_evaluate(s, &poses[i], buf);
      rc = sk_pose_write_json(s, &poses[i], buf, NULL, out);
      /* Babylon's "absolute" (and world) output computes every root's
       * absolute matrices: the lazy state the Bone API reads changes too. */
      if (!rc && !is_pose && (poses[i].output & SK_OUT_ABSOLUTE))
        sk_bones_refresh_all(&ctx->bones);
      if (!rc && ext) {
        bool first = reopen_object(out);
        rc = sk_ops_write_world(&ctx->bones, x.has_mesh ? &x.mesh : NULL, x.world, x.positions, first, out);
        if (!rc && sk_strbuf_append(out, "}", 1))
          rc = SK_ENOMEM;
      }
    }
    (*nresults)++;
  }
  sk_pose_array_free(poses, np);
  free(x.ops);
  return rc ? sk_error_set(err, rc, ptr, "out of memory writing the result") : 0;
}

static int run_op(sk_skeleton *s, const sk_anim *anim, eval_ctx *ctx, const json_t *op, const char *ptr,
                  sk_eval_buffers *buf, sk_strbuf *out, size_t *nresults, sk_error *err) {
  static const char *const k_set[] = {"op", "bones", NULL};
  static const char *const k_bind[] = {"op", "bone", "matrix", "keepLocal", NULL};
  static const char *const k_rest[] = {"op", "bone", "matrix", NULL};
  static const char *const k_rtr[] = {"op", "bone", NULL};
  char p[SK_ERROR_POINTER_MAX];
  int rc;
  if (!json_is_object(op))
    return sk_error_set(err, SK_ETYPE, ptr, "expected an op object");
  const char *name = json_string_value(json_object_get(op, "op"));
  sub_pointer(p, sizeof p, ptr, "op");
  if (name == NULL)
    return sk_error_set(err, SK_EMISSING, p, "every op needs an \"op\" string");

  if (strcmp(name, "set") == 0) {
    if ((rc = check_op_keys(op, ptr, k_set, err)))
      return rc;
    sk_override *o;
    size_t n;
    const json_t *bones = json_object_get(op, "bones");
    sub_pointer(p, sizeof p, ptr, "bones");
    if (bones == NULL)
      return sk_error_set(err, SK_EMISSING, p, "\"set\" needs \"bones\"");
    if ((rc = sk_json_parse_overrides(s, bones, p, &o, &n, err)))
      return rc;
    sk_skeleton_apply(s, o, n);
    for (size_t k = 0; k < n; k++)
      sk_bones_touch(&ctx->bones, o[k].bone);
    free(o);
    return 0;
  }
  if (strcmp(name, "pose") == 0 || strcmp(name, "evaluate") == 0)
    return run_pose_op(s, anim, ctx, op, ptr, name[0] == 'p', buf, out, nresults, err);
  if (sk_ops_known(name)) {
    sk_op bop;
    if ((rc = sk_ops_parse_one(s, op, ptr, ctx->has_mesh ? &ctx->mesh : NULL, &bop, err)))
      return rc;
    if (sk_ops_apply(&ctx->bones, &bop, 1, out, nresults))
      return sk_error_set(err, SK_ENOMEM, ptr, "out of memory writing the result");
    return 0;
  }
  if (strcmp(name, "setBind") == 0 || strcmp(name, "setRest") == 0) {
    bool bind = name[3] == 'B';
    if ((rc = check_op_keys(op, ptr, bind ? k_bind : k_rest, err)))
      return rc;
    int32_t bone;
    if ((rc = op_bone(s, op, ptr, true, &bone, err)))
      return rc;
    float m[16];
    sub_pointer(p, sizeof p, ptr, "matrix");
    const json_t *mj = json_object_get(op, "matrix");
    if (mj == NULL)
      return sk_error_set(err, SK_EMISSING, p, "\"%s\" needs a \"matrix\"", name);
    if ((rc = sk_json_floats(mj, 16, p, m, err)))
      return rc;
    sk_bones_touch(&ctx->bones, bone);
    if (!bind) {
      sk_skeleton_set_rest(s, bone, m);
      return 0;
    }
    const json_t *kl = json_object_get(op, "keepLocal");
    if (kl != NULL && !json_is_boolean(kl)) {
      sub_pointer(p, sizeof p, ptr, "keepLocal");
      return sk_error_set(err, SK_ETYPE, p, "expected true or false");
    }
    if (sk_skeleton_set_bind(s, bone, m, json_is_true(kl)) != 0)
      return sk_error_set(err, SK_ESINGULAR, p, "the absolute bind matrix of bone \"%s\" would not be invertible",
                          s->bones[bone].name);
    return 0;
  }
  if (strcmp(name, "returnToRest") == 0) {
    if ((rc = check_op_keys(op, ptr, k_rtr, err)))
      return rc;
    int32_t bone;
    if ((rc = op_bone(s, op, ptr, false, &bone, err)))
      return rc;
    sk_bones_return_to_rest(&ctx->bones, bone);
    return 0;
  }
  return sk_error_set(err, SK_ERANGE, p, "unknown op \"%s\"", name);
}

/* {"gltf": "path", "skin"?: index | "name"}: reads and imports the file. An
 * error inside the file keeps its code; the pointer becomes /skeleton/gltf
 * and the text names the file and the pointer into the glTF JSON. */
static int load_gltf_skeleton(const json_t *skel, const char *base_dir, sk_skeleton **s, sk_anim **anim,
                              sk_error *err) {
  static const char *const k_gltf[] = {"gltf", "skin", NULL};
  int rc = check_op_keys(skel, "/skeleton", k_gltf, err);
  if (rc)
    return rc;
  const char *rel = json_string_value(json_object_get(skel, "gltf"));
  if (rel == NULL || rel[0] == '\0')
    return sk_error_set(err, SK_ETYPE, "/skeleton/gltf", "expected the path of a .glb or .gltf file");
  char skin_sel[32] = "";
  const json_t *skin = json_object_get(skel, "skin");
  if (json_is_integer(skin) && json_integer_value(skin) >= 0)
    snprintf(skin_sel, sizeof skin_sel, "%lld", (long long)json_integer_value(skin));
  else if (json_is_integer(skin))
    return sk_error_set(err, SK_ERANGE, "/skeleton/skin", "skin indices start at 0");
  else if (skin != NULL && !json_is_string(skin))
    return sk_error_set(err, SK_ETYPE, "/skeleton/skin", "expected a skin index or name");
  char path[4096];
  int n = rel[0] == '/' || base_dir == NULL || base_dir[0] == '\0'
              ? snprintf(path, sizeof path, "%s", rel)
              : snprintf(path, sizeof path, "%s/%s", base_dir, rel);
  if (n < 0 || (size_t)n >= sizeof path)
    return sk_error_set(err, SK_ERANGE, "/skeleton/gltf", "path too long");
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return sk_error_set(err, SK_ENOTFOUND, "/skeleton/gltf", "%s: %s", path, strerror(errno));
  sk_strbuf data = {0};
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
    if (sk_strbuf_append(&data, chunk, got))
      break;
  bool bad = ferror(f) != 0;
  fclose(f);
  if (data.failed || bad) {
    sk_strbuf_free(&data);
    return sk_error_set(err, data.failed ? SK_ENOMEM : SK_EIO, "/skeleton/gltf", "cannot read %s", path);
  }
  sk_error ge;
  sk_error_clear(&ge);
  rc = sk_gltf_import(data.data != NULL ? data.data : "", data.len,
                      json_is_string(skin) ? json_string_value(skin) : skin_sel, 0, s, anim, &ge);
  sk_strbuf_free(&data);
  if (rc == 0)
    return 0;
  bool no_skin = rc == SK_ENOTFOUND && strcmp(ge.pointer, "/skins") == 0;
  return sk_error_set(err, rc, no_skin ? "/skeleton/skin" : "/skeleton/gltf", "%s at \"%s\": %s", path, ge.pointer,
                      ge.text);
}

int sk_eval_case(const json_t *c, sk_strbuf *out, sk_error *err) { return sk_eval_case_at(c, NULL, out, err); }

int sk_eval_case_at(const json_t *c, const char *base_dir, sk_strbuf *out, sk_error *err) {
  static const char *const k_case[] = {"skeleton", "ops", "mesh", NULL};
  if (!json_is_object(c))
    return sk_error_set(err, SK_ETYPE, "", "expected a case object {\"skeleton\", \"ops\"}");
  int rc = check_op_keys(c, "", k_case, err);
  if (rc)
    return rc;
  const json_t *skel = json_object_get(c, "skeleton");
  if (skel == NULL)
    return sk_error_set(err, SK_EMISSING, "/skeleton", "a case needs a \"skeleton\"");
  const json_t *ops = json_object_get(c, "ops");
  if (ops != NULL && !json_is_array(ops))
    return sk_error_set(err, SK_ETYPE, "/ops", "expected an array of ops");
  sk_skeleton *s;
  sk_anim *anim = NULL;
  if (json_is_object(skel) && json_object_get(skel, "gltf") != NULL)
    rc = load_gltf_skeleton(skel, base_dir, &s, &anim, err);
  else
    rc = sk_json_parse_skeleton_anim(skel, "/skeleton", 0, &s, &anim, err);
  if (rc)
    return rc;
  eval_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  if ((rc = sk_ops_parse_mesh(json_object_get(c, "mesh"), "/mesh", &ctx.has_mesh, &ctx.mesh, err))) {
    sk_skeleton_destroy(s);
    sk_anim_destroy(anim);
    return rc;
  }
  sk_eval_buffers buf;
  if ((rc = sk_eval_buffers_init(&buf, s->count)) || (rc = sk_bones_init(&ctx.bones, s))) {
    sk_eval_buffers_close(&buf);
    sk_skeleton_destroy(s);
    sk_anim_destroy(anim);
    return sk_error_set(err, rc, "", "out of memory");
  }
  size_t nresults = 0;
  if (sk_strbuf_append(out, "{\"order\":", 9) || sk_eval_write_order(s, out) ||
      sk_strbuf_append(out, ",\"results\":[", 12))
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  /* The Babylon-format skeleton JSON, for copyAnimationRange. */
  const json_t *b0 = json_array_get(json_object_get(skel, "bones"), 0);
  json_t *cur = json_object_get(b0, "parentBoneIndex") != NULL ? json_incref((json_t *)skel) : NULL;
  for (size_t i = 0; !rc && i < json_array_size(ops); i++) {
    char p[SK_ERROR_POINTER_MAX] = "/ops";
    sk_pointer_push_index(p, sizeof p, i);
    const json_t *op = json_array_get(ops, i);
    const char *opname = json_string_value(json_object_get(op, "op"));
    if (opname != NULL && strcmp(opname, "copyAnimationRange") == 0)
      rc = sk_animops_copy_range(s, &cur, &anim, op, p, err);
    else
      rc = run_op(s, anim, &ctx, op, p, &buf, out, &nresults, err);
  }
  json_decref(cur);
  if (!rc && sk_strbuf_append(out, "]}", 2))
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  sk_eval_buffers_close(&buf);
  sk_bones_close(&ctx.bones);
  sk_sampler_destroy(ctx.sampler);
  sk_skeleton_destroy(s);
  sk_anim_destroy(anim);
  return rc;
}
