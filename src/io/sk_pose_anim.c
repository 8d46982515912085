/* sk_pose_anim: pose requests that name clips ("animation", "layers",
 * frame ranges): parsed into a spec, then sampled into plain sk_pose
 * values, one per frame (see sk_pose.h). */
#include "sk_pose.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_anim_memo.h"
#include "sk_animops.h"
#include "sk_banim_add.h"
#include "sk_banim_blend.h"
#include "sk_json.h"
#include "sk_layers.h"
#include "sk_near.h"
#include "sk_pose_frames.h"
#include "sk_pose_int.h"
#include "sk_pose_range.h"
#include "sk_sample.h"

static const char *const k_anim_keys[] = {"animation", "time", "loop", "layers", "times", "from", "to", "fps",
                                          "frames", NULL};

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
  sk_pointer_child(p, sizeof p, ptr, "animation");
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
  if (sk_anim_find_clip(anim, json_string_value(v), clip) != 0) {
    sk_near n;
    sk_near_init(&n, json_string_value(v));
    for (size_t k = 0; k < anim->clip_count; k++)
      sk_near_offer(&n, anim->clips[k].name);
    if (n.best != NULL)
      return sk_error_set(err, SK_ENOTFOUND, p, "no animation named \"%s\"; did you mean \"%s\"?",
                          json_string_value(v), n.best);
    return sk_error_set(err, SK_ENOTFOUND, p, "no animation named \"%s\"", json_string_value(v));
  }
  return 0;
}


int sk_pose_anim_clock(const sk_anim *anim, const json_t *j, sk_pose_clock *out) {
  memset(out, 0, sizeof *out);
  out->clip = -1;
  out->n = 1;
  const json_t *ls = json_object_get(j, "layers");
  out->layers = ls != NULL;
  const json_t *a = json_object_get(j, "animation");
  size_t clip;
  if (anim == NULL || (!out->layers && (a == NULL || anim_clip(anim, a, "", &clip, NULL) != 0)))
    return 0;
  if (out->layers) {
    const size_t n = json_array_size(ls) + 1;
    out->layer = calloc(n, sizeof *out->layer + sizeof *out->speed);
    if (out->layer == NULL)
      return SK_ENOMEM;
    out->speed = (double *)(void *)(out->layer + n);
    for (size_t i = 0; i < json_array_size(ls); i++) {
      const json_t *o = json_array_get(ls, i);
      sk_anim_layer *l = &out->layer[out->nlayers];
      if (sk_pose__anim_layer(anim, o, "", true, l, NULL) == 0 && sk_pose__layer_speed(anim, o, "", l, &out->speed[out->nlayers], NULL) == 0)
        out->nlayers++;
      /* a blend-in would blend the morph weights too: refused with these */
      out->additive = out->additive || json_is_true(json_object_get(o, "additive")) ||
                      json_object_get(o, "mask") != NULL || json_object_get(o, "blendIn") != NULL;
    }
  } else {
    out->clip = (long)clip;
    out->loop = json_is_true(json_object_get(j, "loop"));
  }
  const json_t *v = json_object_get(j, "time");
  out->time = json_is_number(v) ? json_number_value(v) : 0;
  sk_error err = {0};
  int rc = sk_pose_frames_parse(j, "", v != NULL, &out->times, &out->n, &err);
  return rc == SK_ENOMEM ? rc : 0;
}

/* One layer object, or the pose itself for the single-"animation" form. */
int sk_pose__anim_layer(const sk_anim *anim, const json_t *o, const char *ptr, bool is_layer, sk_anim_layer *l,
                        sk_error *err) {
  static const char *const k_layer[] = {"animation",  "time", "weight",  "loop", "additive", "reference",
                                       "speedRatio", "mask", "blendIn", NULL};
  int rc;
  memset(l, 0, sizeof *l);
  l->weight = 1;
  if (is_layer) {
    if (!json_is_object(o))
      return sk_error_set(err, SK_ETYPE, ptr, "expected a layer object {\"animation\", \"time\", \"weight\"}");
    if ((rc = sk_json_check_keys(o, ptr, k_layer, NULL, err)) != 0)
      return rc;
  }
  const json_t *a = json_object_get(o, "animation");
  if (a == NULL) {
    char p[SK_ERROR_POINTER_MAX];
    sk_pointer_child(p, sizeof p, ptr, "animation");
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
      sk_pointer_child(p, sizeof p, ptr, "weight");
      return sk_error_set(err, SK_ERANGE, p, "weights must not be negative");
    }
  }
  return 0;
}

/* Clip TRS as one override per bone, with the user's overrides on top.
 * The bytes of sk_anim_to_overrides, written field by field: no memset of
 * the whole struct before the TRS is written over it (a range writes
 * frames x bones of them). */
_Static_assert(sizeof(sk_override) == offsetof(sk_override, scaling) + 3 * sizeof(double) &&
                   offsetof(sk_override, position) == offsetof(sk_override, matrix) + 16 * sizeof(float),
               "sk_override has padding: merge_overrides would leave bytes sk_anim_to_overrides zeroes");
void sk_pose__merge_overrides(const sk_anim *anim, const double *trs, const sk_pose *user, sk_override *out) {
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
    if (o->mask & SK_OVERRIDE_MATRIX)
      *m = *o;
    else
      sk_override_fields(o, m->position, m->rotation, m->scaling);
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
    sk_override_fields(u, m->position, m->rotation, m->scaling);
    m->mask |= u->mask;
  }
  size_t n = 0;
  for (size_t b = 0; b < nb; b++)
    if (o[b].mask != 0)
      o[n++] = o[b];
  return n;
}

void sk_pose__spec_close(sk_pose_spec *sp) {
  sk_pose_close(&sp->base);
  free(sp->l);
  free(sp->times);
  free(sp->lx);
  free(sp->masks);
  if (sp->blend != NULL) {
    free(sp->blend->snap);
    free(sp->blend->drv);
    sk_skeleton_destroy(sp->blend->bsnap);
    free(sp->blend->bfrom);
    free(sp->blend);
  }
  memset(sp, 0, sizeof *sp);
}

int sk_pose__spec_parse(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr,
                        const char *const *extra_keys, sk_pose_spec *sp, sk_error *err) {
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
        sk_pointer_child(p, sizeof p, ptr, *k);
        rc = sk_error_set(err, SK_EMISSING, p, "\"%s\" needs an \"animation\" or \"layers\"", *k);
      }
    goto done;
  }
  sp->animated = true;
  if (anim == NULL || anim->clip_count == 0) {
    sk_pointer_child(p, sizeof p, ptr, a != NULL ? "animation" : "layers");
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
    sk_pointer_child(p, sizeof p, ptr, "layers");
    rc = sk_error_set(err, SK_ETYPE, p, "give \"animation\" or \"layers\", not both");
    goto done;
  }
  if (layers != NULL) {
    sk_pointer_child(p, sizeof p, ptr, "layers");
    /* A frame range applies to every layer (each layer's "time" becomes an
     * offset); a pose-level "time" or "loop" would be ambiguous. */
    static const char *const single[] = {"time", "loop", NULL};
    for (const char *const *k = single; *k != NULL && !rc; k++)
      if (json_object_get(j, *k) != NULL) {
        char q[SK_ERROR_POINTER_MAX];
        sk_pointer_child(q, sizeof q, ptr, *k);
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
      rc = sk_pose__anim_layer(anim, json_array_get(layers, i), q, true, &sp->l[i], err);
      if (!rc)
        rc = sk_animops_layer_ext(s, json_array_get(layers, i), q, &sp->lx[i], sp->masks + i * s->count, err);
      if (!rc)
        rc = sk_pose__layer_speed(anim, json_array_get(layers, i), q, &sp->l[i], &sp->lx[i].speed, err);
      if (!rc && (sp->lx[i].additive || sp->lx[i].bone_weights != NULL || sp->lx[i].speed != 0))
        sp->plain_layers = false;
      total += rc ? 0 : sp->l[i].weight;
    }
    if (!rc && !(total > 0 && isfinite(total)))
      rc = sk_error_set(err, SK_ERANGE, p, "the layer weights must add up to a positive number");
    for (size_t i = 0; !rc && anim->babylon && i < sp->nl; i++) {
      /* Babylon-format clips: weighted layers, masks as targetMask (0 or 1 per bone) */
      bool fraction = false;
      for (size_t b = 0; sp->lx[i].bone_weights != NULL && b < s->count; b++)
        fraction |= sp->lx[i].bone_weights[b] != 0 && sp->lx[i].bone_weights[b] != 1;
      char q[SK_ERROR_POINTER_MAX];
      snprintf(q, sizeof q, "%s", p);
      sk_pointer_push_index(q, sizeof q, i);
      if (sp->lx[i].additive) /* MakeAnimationAdditive's limits (sk_banim_add) */
        rc = sk_banim_add_check(anim, sp->l[i].clip, sp->lx[i].reference, s, q, err);
      if (!rc && fraction) {
        sk_pointer_push(q, sizeof q, "mask");
        rc = sk_error_set(err, SK_EUNSUPPORTED, q,
                          "a mask on Babylon-format clips plays a bone or not (weights 0 or 1: "
                          "Babylon's targetMask); fractions are for glTF clips");
      }
    }
    sp->layered = true;
    if (!rc)
      rc = sk_pose_frames_parse(j, ptr, false, &sp->times, &sp->nf, err);
    for (size_t i = 0; !rc && i < sp->nl; i++)
      if (json_object_get(json_array_get(layers, i), "blendIn") != NULL) {
        char q[SK_ERROR_POINTER_MAX];
        snprintf(q, sizeof q, "%s", p);
        sk_pointer_push_index(q, sizeof q, i);
        sk_pointer_push(q, sizeof q, "blendIn");
        rc = sp->blend != NULL ? sk_error_set(err, SK_ETYPE, q, "\"blendIn\" blends one layer in: give it once")
                               : sk_pose__layer_blendin(s, anim, j, ptr, i, sp, err);
        sp->plain_layers = false;
      }
  } else {
    sp->nl = 1;
    if ((sp->l = malloc(sizeof *sp->l)) == NULL)
      rc = sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
    else
      rc = sk_pose__anim_layer(anim, j, ptr, false, sp->l, err);
    if (!rc)
      rc = sk_pose_frames_parse(j, ptr, json_object_get(j, "time") != NULL, &sp->times, &sp->nf, err);
  }
  if (!rc && (double)sp->nf * (double)(s->count ? s->count : 1) > SK_POSE_MAX_FRAME_BONES)
    rc = sk_error_set(err, SK_ETOOBIG, ptr, "%zu frames of %zu bones; at most %u bone poses per request", sp->nf,
                      s->count, SK_POSE_MAX_FRAME_BONES);
done:
  if (rc)
    sk_pose__spec_close(sp);
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
 * frames are then sampled one by one, with the same bits. With `block`
 * false only the sampler and context are made (the range form). */
static void range_sampler_open(range_sampler *rs, const sk_anim *anim, const sk_pose_spec *sp, bool block) {
  memset(rs, 0, sizeof *rs);
  if (sp->times == NULL || !sp->plain_layers || anim->babylon || sp->nf < RANGE_SAMPLER_MIN_FRAMES)
    return;
  const size_t nb = anim->bone_count ? anim->bone_count : 1;
  /* The anim's own sampler when the daemon built one at upload (building
   * one here was half of a 16-frame range's time); else this range's. */
  rs->sampler = sk_sampler_hold_shared(anim);
  if ((rs->sampler == NULL && sk_sampler_create_clips(anim, sp->l, sp->nl, &rs->sampler) != 0) ||
      sk_sample_ctx_create(rs->sampler, sp->l, sp->nl, &rs->ctx) != 0 ||
      (block && (rs->trs = malloc(RANGE_SAMPLER_CHUNK * nb * SK_ANIM_TRS * sizeof *rs->trs)) == NULL) ||
      (block && (rs->block = malloc(sp->nf * nb * sizeof *rs->block)) == NULL))
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

/* A pose naming no clip: the parsed pose itself, moved out of `sp`. */
static int pose_unanimated(sk_pose_spec *sp, const char *ptr, sk_pose **poses, size_t *count, sk_error *err) {
  sk_pose *out = malloc(sizeof *out);
  if (out == NULL) {
    sk_pose__spec_close(sp);
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  }
  *out = sp->base;
  memset(&sp->base, 0, sizeof sp->base); /* moved into *out */
  sk_pose__spec_close(sp);
  *poses = out;
  *count = 1;
  return 0;
}

/* Additive layers of Babylon clips, masked or not: the layer kept with the
 * clips (reference 0: sk_anim_additive_share, made at upload; others:
 * sk_anim_memo, made at first use), else their keys made additive once for
 * every frame of a range, up to SK_BANIM_ADD_KEEP_KEYS keys together (a
 * layer past that makes its keys per frame, one layer at a time, so many
 * layers of a long clip cannot multiply its memory). *adds (new, NULL when
 * there is nothing to make) is closed with sk_banim_add_layers_free. */
static int babylon_adds_make(const sk_anim *anim, sk_pose_spec *sp, sk_banim_add_layer **adds, const char *ptr,
                             sk_error *err) {
  *adds = NULL;
  if (!anim->babylon || !sp->layered)
    return 0;
  if ((*adds = calloc(sp->nl, sizeof **adds)) == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  size_t kept = 0;
  for (size_t i = 0; i < sp->nl; i++) {
    if (!sp->lx[i].additive)
      continue;
    const size_t clip = sp->l[i].clip;
    const double ref = sp->lx[i].reference;
    /* made at upload (sk_anim_additive_share) or at first use (sk_anim_memo), every bone: the
     * blend applies the mask */
    sp->lx[i].babylon_add = ref == 0 ? sk_banim_add_kept_layer(anim, clip) : sk_anim_memo_babylon(anim, clip, ref);
    if (sp->lx[i].babylon_add != NULL)
      continue;
    const sk_anim_clip *c = &anim->clips[sp->l[i].clip];
    for (size_t k = 0; k < c->channel_count; k++)
      kept += c->channels[k].count;
    if (kept > SK_BANIM_ADD_KEEP_KEYS)
      continue;
    if (sk_banim_add_layer_make(anim, sp->l[i].clip, sp->lx[i].reference, sp->lx[i].bone_weights, &(*adds)[i]) != 0)
      return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
    sp->lx[i].babylon_add = &(*adds)[i];
  }
  return 0;
}

/* One frame of Babylon-format layers, one of them crossfaded in
 * (sk_banim_blend_in, from the snapshot skeleton): each bone the blend
 * drives takes the blended paths over what the "from" clip set on it (a
 * "_matrix" replaces, fields join, as Babylon's setters), the others what
 * the "from" clip set; then the user's "bones" on top. */
static int babylon_blend_in(const sk_anim *anim, const sk_pose_spec *sp, sk_pose *p, const char *ptr, sk_error *err) {
  const sk_pose_blendin *b = sp->blend;
  const size_t nb = anim->bone_count;
  size_t driven;
  if (sk_banim_blend_in(anim, b->bsnap, sp->l, sp->lx, sp->nl, b->layer, sk_blendin_factor(&sp->blend->st, b->k),
                        p->overrides, &driven) != 0)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  for (size_t i = 0; i < nb; i++) {
    sk_override *o = &p->overrides[i];
    const sk_override *f = &b->bfrom[i];
    if (f->mask == 0 || (o->mask & SK_OVERRIDE_MATRIX))
      continue;
    sk_override m = *f;
    sk_override_fields(o, m.position, m.rotation, m.scaling);
    m.mask |= o->mask;
    *o = m;
  }
  p->count = merge_babylon(p->overrides, nb, &sp->base);
  return 0;
}

/* One frame sampled on its own (the layers' times set): Babylon-format
 * clips as Babylon's runtime blends them, glTF clips with
 * sk_anim_sample_layers_ext. p->overrides is allocated here; on an error
 * after that it stays set, for the caller to free. */
static int sample_frame(const sk_skeleton *s, const sk_anim *anim, const sk_pose_spec *sp, double *trs,
                        double *scratch, sk_anim_cursor *cur, sk_banim_blend_ctx *bl, sk_pose *p, const char *ptr,
                        sk_error *err) {
  const size_t nb = anim->bone_count;
  if ((p->overrides = malloc((nb ? nb : 1) * sizeof *p->overrides)) == NULL)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  p->frame_range = sp->times != NULL;
  if (anim->babylon) {
    /* Only the bones the clips drive, with the driven fields only; layers
     * as Babylon's late animation bindings blend weighted animations. */
    size_t driven;
    const sk_anim_layer *l = sp->l;
    if (sp->blend != NULL)
      return babylon_blend_in(anim, sp, p, ptr, err);
    if (!sp->layered)
      sk_anim_sample_overrides_at(anim, l[0].clip, l[0].time, l[0].loop, trs, p->overrides, cur);
    else if ((bl != NULL ? sk_banim_blend_frame(bl, l, p->overrides, &driven)
                         : sk_banim_blend(anim, s, l, sp->lx, sp->nl, p->overrides, &driven)) != 0)
      return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
    p->count = merge_babylon(p->overrides, nb, &sp->base);
    return 0;
  }
  if (sp->blend != NULL && sp->nl > 1) { /* the blended layer among weighted groups */
    if (sk_blendin_layers(anim, sp->l, sp->nl, sp->blend->layer, sp->blend->drv, sp->blend->snap,
                          sk_blendin_factor(&sp->blend->st, sp->blend->k), trs) != 0)
      return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
    p->count = nb;
    sk_pose__merge_overrides(anim, trs, &sp->base, p->overrides);
    return 0;
  }
  int src = sk_anim_sample_layers_ext(anim, sp->l, sp->lx, sp->nl, trs, scratch);
  if (src != 0)
    return sk_error_set(err, src == SK_ENOMEM ? SK_ENOMEM : SK_ERANGE, ptr,
                        src == SK_ENOMEM ? "out of memory" : "invalid layer weights");
  if (sp->blend != NULL) /* each frame one write of the blending animations */
    sk_blendin_apply(anim, sp->blend->drv, sp->blend->snap, sk_blendin_factor(&sp->blend->st, sp->blend->k), trs);
  p->count = nb;
  sk_pose__merge_overrides(anim, trs, &sp->base, p->overrides);
  return 0;
}

/* A layered range's frames from *made on through a context's runs:
 * Babylon-format layers through `bl` (their overrides, then the "bones"
 * on top, as sample_frame merges them), glTF layers with masks or
 * additive layers through `gl` (their TRS, then sk_pose__merge_overrides,
 * as sample_frame). *made counts the poses whose overrides are allocated
 * (the caller frees them on an error). */
static int sample_runs(const sk_anim *anim, const sk_pose_spec *sp, sk_banim_blend_ctx *bl, sk_layers_ctx *gl,
                       const double *offsets, sk_pose *out, size_t *made, const char *ptr, sk_error *err) {
  const size_t nb = anim->bone_count, nb1 = nb ? nb : 1, nl = sp->nl, nf = sp->nf;
  const size_t run = bl != NULL ? sk_banim_blend_run_max(bl) : sk_layers_run_max(gl);
  double *tt = malloc(run * nl * sizeof *tt);
  sk_override **frames = malloc(run * sizeof *frames);
  size_t *driven = malloc(run * sizeof *driven);
  double *trs = gl != NULL ? malloc(run * nb1 * SK_ANIM_TRS * sizeof *trs) : NULL;
  int rc = tt == NULL || frames == NULL || driven == NULL || (gl != NULL && trs == NULL) ? SK_ENOMEM : 0;
  while (!rc && *made < nf) {
    const size_t f0 = *made, m = nf - f0 < run ? nf - f0 : run;
    sk_pose *p = out + f0;
    for (size_t f = 0; !rc && f < m; f++) {
      for (size_t i = 0; i < nl; i++)
        tt[f * nl + i] = sk_sample_layer_time(offsets[i], sp->times[f0 + f]);
      p[f] = sp->base;
      p[f].frame_range = true;
      if ((p[f].overrides = frames[f] = malloc(nb1 * sizeof *p[f].overrides)) == NULL)
        rc = SK_ENOMEM;
      else
        ++*made;
    }
    if (!rc && bl != NULL && sk_banim_blend_run(bl, sp->l, tt, m, frames, driven) != 0)
      rc = SK_ENOMEM;
    if (!rc && gl != NULL)
      sk_layers_run(gl, tt, m, trs);
    for (size_t f = 0; !rc && f < m; f++) {
      if (bl != NULL) {
        p[f].count = merge_babylon(p[f].overrides, nb, &sp->base);
      } else {
        p[f].count = nb;
        sk_pose__merge_overrides(anim, trs + f * nb * SK_ANIM_TRS, &sp->base, p[f].overrides);
      }
    }
  }
  free(tt), free(frames), free(driven), free(trs);
  return rc ? sk_error_set(err, rc, ptr, "out of memory") : 0;
}

/* The poses of range `r`'s nf frames, each a copy of sp->base without
 * overrides pointing at its frame. */
static int range_poses(sk_pose_spec *sp, sk_pose_range *r, size_t nf, sk_pose **poses, size_t *count) {
  sk_pose *out = calloc(nf, sizeof *out);
  if (out == NULL) {
    r->refs = 1; /* none of its nf references was handed out */
    sk_pose_range_unref(r);
    return SK_ENOMEM;
  }
  for (size_t k = 0; k < nf; k++) {
    out[k] = sp->base;
    out[k].overrides = NULL; /* sp->base keeps its (empty) array */
    out[k].overrides_shared = false;
    out[k].count = 0;
    out[k].frame_range = true;
    out[k].range = r;
    out[k].frame = k;
  }
  *poses = out;
  *count = nf;
  return 0;
}

/* The sampler of a range's clips: the anim's own when the daemon built
 * one at upload; else one of the clips `l` names, for ranges long enough
 * to repay building it; else NULL. */
static sk_sampler *clip_sampler(const sk_anim *anim, const sk_anim_layer *l, size_t nl, size_t nf) {
  sk_sampler *s = sk_sampler_hold_shared(anim);
  if (s == NULL && nf >= RANGE_SAMPLER_MIN_FRAMES && sk_sampler_create_clips(anim, l, nl, &s) != 0)
    s = NULL;
  return s;
}

/* The poses of Babylon-format range `r`, with the "bones" on top moved
 * out of `sp` into it. */
static int babylon_range_poses(sk_pose_spec *sp, sk_pose_range *r, size_t nf, sk_pose **poses, size_t *count,
                               const char *ptr, sk_error *err) {
  sk_pose_range_babylon_top(r, sp->base.overrides, sp->base.count); /* "bones" on top: the range's now */
  sp->base.overrides = NULL;
  sp->base.count = 0;
  if (range_poses(sp, r, nf, poses, count))
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  return 0;
}

/* Whether the range form takes the "bones" on top of a Babylon-format
 * range: a matrix (merge_babylon makes it the bone's whole override, the
 * range form writes it into the bone's MATRIX lanes), or fields on bones
 * the clip does not hold a "_matrix" for (merge_babylon then only adds
 * fields to a frame's overrides: the range form does the same). */
static bool babylon_top_fields(const sk_anim_clip *c, const sk_pose *top) {
  for (size_t k = 0; k < top->count; k++) {
    if (top->overrides[k].mask & SK_OVERRIDE_MATRIX)
      continue;
    for (size_t i = 0; i < c->channel_count; i++)
      if (c->channels[i].path == SK_ANIM_MATRIX && c->channels[i].bone == top->overrides[k].bone)
        return false;
  }
  return true;
}

/* The range form of one Babylon-format clip, with "bones" on top that set
 * fields (sk_pose_range_create_babylon): the frame times, each layer
 * offset applied as sample_frame applies it, and the "bones", moved out
 * of `sp`. 1 when it does not take the spec. */
static int poses_ranged_babylon(const sk_anim *anim, sk_pose_spec *sp, const char *ptr, sk_pose **poses,
                                size_t *count, sk_error *err) {
  if (sp->layered || sp->nl != 1 || sp->nf < 2 || !babylon_top_fields(&anim->clips[sp->l[0].clip], &sp->base))
    return 1;
  const size_t nf = sp->nf;
  for (size_t k = 0; k < nf; k++)
    sp->times[k] = sk_sample_layer_time(sp->l[0].time, sp->times[k]);
  sk_pose_range *r = NULL;
  int rc = sk_pose_range_create_babylon(anim, sp->l[0].clip, sp->l[0].loop, sp->times, nf, nf, &r);
  sp->times = NULL; /* the range's now, or freed */
  if (rc)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  sk_pose_range_babylon_sampler(r, clip_sampler(anim, sp->l, 1, nf));
  return babylon_range_poses(sp, r, nf, poses, count, ptr, err);
}

/* The range form of Babylon-format layers (sk_pose_range_create_babylon_layers):
 * their blend context, additive keys and frame times, and the "bones" on
 * top, moved out of `sp`. 1 when it does not take the spec: an additive
 * layer past the key budget (made per frame), a "_matrix" blended on a
 * bone that fields are blended or set on. A matrix on top replaces its
 * bone's blend (merge_babylon), whatever the blend drives there. */
static int poses_ranged_babylon_layers(const sk_skeleton *s, const sk_anim *anim, sk_pose_spec *sp, const char *ptr,
                                       sk_pose **poses, size_t *count, sk_error *err) {
  const size_t nf = sp->nf, nl = sp->nl, nb = anim->bone_count;
  sk_banim_add_layer *adds = NULL;
  int rc = babylon_adds_make(anim, sp, &adds, ptr, err);
  for (size_t i = 0; !rc && i < nl; i++)
    if (sp->lx[i].additive && sp->lx[i].babylon_add == NULL)
      rc = 1;
  sk_banim_blend_ctx *bl = NULL;
  if (!rc && sk_banim_blend_open_sampled(anim, s, sp->l, sp->lx, nl, clip_sampler(anim, sp->l, nl, nf), &bl) != 0)
    rc = sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  uint8_t *driven = rc ? NULL : malloc(nb ? nb : 1);
  if (!rc && driven == NULL)
    rc = sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  if (!rc && !sk_banim_blend_driven(bl, driven))
    rc = 1;
  for (size_t b = 0; !rc && b < nb; b++) /* a matrix and fields on one bone: the override form applies them */
    if ((driven[b] & SK_OVERRIDE_MATRIX) && (driven[b] & ~SK_OVERRIDE_MATRIX))
      rc = 1;
  for (size_t k = 0; !rc && k < sp->base.count; k++) /* fields on a blended "_matrix": the override form */
    if ((driven[sp->base.overrides[k].bone] & SK_OVERRIDE_MATRIX) && !(sp->base.overrides[k].mask & SK_OVERRIDE_MATRIX))
      rc = 1;
  free(driven);
  if (rc) {
    sk_banim_blend_close(bl);
    sk_banim_add_layers_free(adds, nl);
    for (size_t i = 0; i < nl; i++)
      sp->lx[i].babylon_add = NULL;
    return rc;
  }
  sk_pose_range *r = NULL;
  rc = sk_pose_range_create_babylon_layers(anim, bl, sp->l, nl, adds, sp->times, nf, nf, &r);
  sp->times = NULL; /* the range's now, or freed, with the context and the additive keys */
  if (rc)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  return babylon_range_poses(sp, r, nf, poses, count, ptr, err);
}

static int top_order(const void *a, const void *b) {
  const int32_t x = ((const sk_override *)a)->bone, y = ((const sk_override *)b)->bone;
  return (x > y) - (x < y);
}

/* The poses of glTF range `r`, as babylon_range_poses: it takes sp's
 * "bones" on top, merged into every frame (a matrix makes its bone MATRIX,
 * sk_frames__plan), sorted by bone (one override per bone, so the order
 * merges nothing differently) for sk_pose_range_matrix_top's search. */
static int gltf_range_poses(sk_pose_spec *sp, sk_pose_range *r, size_t nf, sk_pose **poses, size_t *count,
                            const char *ptr, sk_error *err) {
  if (sp->base.count > 0) {
    r->top = sp->base.overrides;
    r->ntop = sp->base.count;
    r->bytes += r->ntop * sizeof *r->top;
    qsort(r->top, r->ntop, sizeof *r->top, top_order);
    sp->base.overrides = NULL;
    sp->base.count = 0;
  }
  if (range_poses(sp, r, nf, poses, count))
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  return 0;
}

/* The range form of glTF layers with masks or additive layers
 * (sk_pose_range_create_layers): their sk_layers context, the layers and
 * masks it reads and the frame times, and the "bones" on top, moved out
 * of `sp`. 1 when it does not take the spec (the context
 * declines: a weight refused, additive keys past its budget). */
static int poses_ranged_layers(const sk_anim *anim, sk_pose_spec *sp, const char *ptr, sk_pose **poses, size_t *count,
                               sk_error *err) {
  const size_t nf = sp->nf;
  sk_layers_ctx *gl = NULL;
  int rc = sk_layers_open(anim, sp->l, sp->lx, sp->nl, clip_sampler(anim, sp->l, sp->nl, nf), &gl);
  if (rc == SK_ENOMEM)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  if (rc)
    return 1;
  sk_pose_range *r = NULL;
  rc = sk_pose_range_create_layers(anim, gl, sp->l, sp->masks, sp->nl, sp->times, nf, nf, &r);
  sp->l = NULL, sp->masks = NULL, sp->times = NULL; /* the range's now (the context reads them), or freed */
  if (rc)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  return gltf_range_poses(sp, r, nf, poses, count, ptr, err);
}

/* The range form (sk_pose_parse_range): every frame's pose points at one
 * shared range holding the sampler, its context and the times, moved out
 * of `rs` and `sp`. Returns 1 when the range does not take this spec (the
 * caller samples the frames into overrides), else 0 or SK_ENOMEM. */
static int poses_ranged(const sk_skeleton *s, const sk_anim *anim, sk_pose_spec *sp, const char *ptr, sk_pose **poses,
                        size_t *count, sk_error *err) {
  if (sp->times == NULL || sp->blend != NULL) /* blending: frame by frame, in order */
    return 1;
  if (anim->babylon && sp->layered && sp->nf >= 2)
    return poses_ranged_babylon_layers(s, anim, sp, ptr, poses, count, err);
  if (anim->babylon)
    return poses_ranged_babylon(anim, sp, ptr, poses, count, err);
  if (!sp->plain_layers && sp->nf >= 2)
    return poses_ranged_layers(anim, sp, ptr, poses, count, err);
  range_sampler rs;
  range_sampler_open(&rs, anim, sp, false);
  if (rs.ctx == NULL)
    return 1;
  const size_t nf = sp->nf;
  sk_pose_range *r = NULL;
  /* the layers' times are still their offsets, as the context wants them */
  int rc = sk_pose_range_create(rs.sampler, rs.ctx, sp->times, nf, nf, &r);
  rs.sampler = NULL;
  rs.ctx = NULL;
  sp->times = NULL; /* all three are the range's now, or freed */
  if (rc)
    return sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  return gltf_range_poses(sp, r, nf, poses, count, ptr, err);
}

static int parse_poses(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr,
                       const char *const *extra_keys, bool ranged, sk_pose **poses, size_t *count, sk_error *err) {
  *poses = NULL;
  *count = 0;
  sk_pose_spec sp;
  int rc = sk_pose__spec_parse(s, anim, j, ptr, extra_keys, &sp, err);
  if (rc)
    return rc;
  if (!sp.animated)
    return pose_unanimated(&sp, ptr, poses, count, err);
  if (ranged && (rc = poses_ranged(s, anim, &sp, ptr, poses, count, err)) <= 0) {
    sk_pose__spec_close(&sp);
    return rc;
  }
  rc = 0;
  const size_t nb = anim->bone_count, nl = sp.nl;
  size_t nf = sp.nf;
  sk_anim_layer *l = sp.l;
  const double *times = sp.times;
  double *trs = malloc((nb ? nb : 1) * SK_ANIM_TRS * sizeof *trs);
  double *scratch = malloc((nb ? nb : 1) * SK_ANIM_TRS * sizeof *scratch);
  /* A range samples layer i at sk_sample_layer_time(its time, frame time):
   * the rule sk_sample's contexts use, so both paths give the same bits. */
  double *offsets = malloc(nl * sizeof *offsets);
  sk_pose *out = calloc(nf, sizeof *out);
  if (trs == NULL || scratch == NULL || out == NULL || offsets == NULL)
    rc = sk_error_set(err, SK_ENOMEM, ptr, "out of memory");
  for (size_t i = 0; !rc && i < nl; i++)
    offsets[i] = l[i].time;
  sk_banim_add_layer *adds = NULL;
  if (!rc)
    rc = babylon_adds_make(anim, &sp, &adds, ptr, err);
  if (rc)
    nf = 0;
  range_sampler rs;
  range_sampler_open(&rs, anim, &sp, true);
  /* A Babylon-format clip's frames in order: one cursor a channel carried
   * from frame to frame (sk_anim_cursor; NULL when memory is short: the
   * same bits without). */
  sk_anim_cursor *cur = NULL;
  if (!rc && anim->babylon && !sp.layered && nf > 1)
    cur = calloc(anim->clips[l[0].clip].channel_count + 1, sizeof *cur);
  /* Their layers: one blend context for all the frames (cursors, the
   * bones' current TRS and the scratch kept; NULL when memory is short:
   * the same bits, made per frame) */
  sk_banim_blend_ctx *bl = NULL;
  if (!rc && anim->babylon && sp.layered && sp.blend == NULL && nf > 1) {
    if (sk_banim_blend_open_sampled(anim, s, l, sp.lx, nl, clip_sampler(anim, l, nl, nf), &bl) != 0)
      bl = NULL;
  }
  size_t made = 0;
  /* glTF layers with masks or additive layers: one context for all the
   * frames (their checks, weights and additive keys made once; NULL when
   * it does not take them: the same bits, frame by frame) */
  sk_layers_ctx *gl = NULL;
  if (!rc && !anim->babylon && !sp.plain_layers && sp.blend == NULL && times != NULL && nf > 1 && rs.ctx == NULL &&
      sk_layers_open(anim, l, sp.lx, nl, clip_sampler(anim, l, nl, nf), &gl) != 0)
    gl = NULL;
  if (!rc && times != NULL && ((bl != NULL && sk_banim_blend_run_max(bl) > 1) || gl != NULL))
    rc = sample_runs(anim, &sp, bl, gl, offsets, out, &made, ptr, err); /* runs of frames, the slerps together */
  for (; !rc && made < nf; made++) {
    for (size_t i = 0; times != NULL && i < nl; i++)
      l[i].time = sk_sample_layer_time(offsets[i], times[made]);
    if (sp.blend != NULL)
      sp.blend->k = sp.blend->first + made;
    out[made] = sp.base;
    if (rs.ctx != NULL) {
      /* frame 0 owns the block (sk_pose.overrides_shared) */
      out[made].overrides = made == 0 ? rs.block : out[0].overrides + made * nb;
      out[made].overrides_shared = made > 0;
      rs.block = NULL;
      out[made].frame_range = true;
      out[made].count = nb;
      sk_pose__merge_overrides(anim, range_sampler_frame(&rs, anim, times, nf, made), &sp.base, out[made].overrides);
      continue;
    }
    if ((rc = sample_frame(s, anim, &sp, trs, scratch, cur, bl, &out[made], ptr, err)) != 0) {
      if (out[made].overrides != NULL)
        made++; /* its overrides are allocated: freed with the others */
      break;
    }
  }
  sk_banim_blend_close(bl);
  sk_layers_close(gl);
  sk_banim_add_layers_free(adds, nl);
  range_sampler_close(&rs);
  free(cur);
  free(offsets);
  free(trs);
  free(scratch);
  sk_pose__spec_close(&sp);
  if (rc) {
    sk_pose_array_free(out, made);
    return rc;
  }
  *poses = out;
  *count = nf;
  return 0;
}

int sk_pose_parse_anim(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr,
                       const char *const *extra_keys, sk_pose **poses, size_t *count, sk_error *err) {
  return parse_poses(s, anim, j, ptr, extra_keys, false, poses, count, err);
}

int sk_pose_parse_range(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr,
                        const char *const *extra_keys, sk_pose **poses, size_t *count, sk_error *err) {
  return parse_poses(s, anim, j, ptr, extra_keys, true, poses, count, err);
}
