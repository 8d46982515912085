/* The time controls of a clip pose's layers (sk_pose's, as sk_pose_anim.c
 * parses the rest): "speedRatio" (sk_anim__layer_frame) and "blendIn"
 * (sk_blendin; sk_banim_blend_in for Babylon-format clips), each refused
 * where Babylon would play it otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_json.h"
#include "sk_pose_int.h"

/* A layer's "speedRatio": positive and finite (Babylon's backwards play
 * swaps the range ends; not taken), on clips that loop by CYCLE (a
 * RELATIVE loop adds offsets per cycle under animate, not goToFrame). */
int sk_pose__layer_speed(const sk_anim *anim, const json_t *o, const char *ptr, const sk_anim_layer *l, double *speed,
                         sk_error *err) {
  const json_t *v = json_object_get(o, "speedRatio");
  *speed = 0;
  if (v == NULL)
    return 0;
  char p[SK_ERROR_POINTER_MAX];
  sk_pointer_child(p, sizeof p, ptr, "speedRatio");
  int rc = sk_json_member_number(v, ptr, "speedRatio", speed, err);
  if (rc)
    return rc;
  if (!(*speed > 0) || !isfinite(*speed) || *speed > 1e6)
    return sk_error_set(err, SK_ERANGE, p, "\"speedRatio\" must be above 0 and at most 1e6");
  const sk_anim_clip *c = &anim->clips[l->clip];
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    if (ch->relative)
      return sk_error_set(err, SK_EUNSUPPORTED, p,
                          "\"speedRatio\" plays clips that loop by CYCLE; this one has a RELATIVE loopBehavior");
    /* animate wraps each animation in its own keys' range where the clip's
     * is not inside it: one frame per layer no longer holds */
    const double first = ch->frames[(ch->pads & SK_ANIM_BPAD_PAD0) && ch->count > 1 ? 1 : 0]; /* its own first key */
    const bool short_end = c->fps > 0 && ch->frames[ch->count - 1] < c->to_frame;
    if (short_end || (c->fps > 0 ? first > c->from_frame : ch->frames[0] > 0))
      return sk_error_set(err, SK_EUNSUPPORTED, p,
                          "\"speedRatio\" plays clips whose every animation holds keys over the whole clip; "
                          "the animation of bone %d %s",
                          (int)ch->bone, short_end ? "ends before the clip does" : "starts after the clip does");
  }
  return 0;
}

/* With other layers every layer is a plain weighted group (what the late
 * animation bindings mix with the blended values): refused otherwise, at
 * the other layer's field. */
static int check_others(const sk_pose_spec *sp, const char *ptr, sk_error *err) {
  for (size_t i = 0; sp->nl > 1 && i < sp->nl; i++) {
    char p[SK_ERROR_POINTER_MAX];
    snprintf(p, sizeof p, "%s", ptr);
    sk_pointer_push(p, sizeof p, "layers");
    sk_pointer_push_index(p, sizeof p, i);
    const char *field = sp->lx[i].additive                ? "additive"
                        : sp->lx[i].bone_weights != NULL ? "mask"
                        : sp->lx[i].speed != 0           ? "speedRatio"
                        : !(sp->l[i].weight > 0)         ? "weight"
                                                         : NULL;
    if (field != NULL) {
      sk_pointer_push(p, sizeof p, field);
      return sk_error_set(err, SK_ETYPE, p,
                          "\"blendIn\" with other layers blends plain weighted layers (weight above 0; no "
                          "\"additive\", \"mask\" or \"speedRatio\")");
    }
  }
  return 0;
}

/* A Babylon-format blend's snapshot: the skeleton `s` as the "from" clip
 * (NULL: none) leaves it after skeleton.beginAnimation(range) and
 * goToFrame (its overrides kept for the frames' bones it alone drives). */
static int babylon_snapshot(const sk_skeleton *s, const sk_anim *anim, const sk_anim_layer *from, sk_pose_blendin *b,
                            const char *ptr, sk_error *err) {
  const size_t nb = anim->bone_count;
  double *trs = malloc((nb ? nb : 1) * SK_ANIM_TRS * sizeof *trs);
  b->bfrom = calloc(nb ? nb : 1, sizeof *b->bfrom);
  int rc = trs == NULL || b->bfrom == NULL || sk_skeleton_clone(s, &b->bsnap) != 0 ? SK_ENOMEM : 0;
  if (!rc && from != NULL) {
    sk_anim_sample_overrides_at(anim, from->clip, from->time, from->loop, trs, b->bfrom, NULL);
    sk_skeleton_apply(b->bsnap, b->bfrom, nb);
  }
  free(trs);
  return rc ? sk_error_set(err, SK_ENOMEM, ptr, "out of memory") : 0;
}

/* A layer's "blendIn": {"speed": b, "from"?: {"animation", "time"?, "loop"?}}
 * on one layer of a frame range (alone, or among plain weighted ones): its
 * snapshot (glTF: the "from" clip's pose then, or the rest pose, and the
 * paths its clip drives; Babylon-format: the skeleton as the "from" clip
 * leaves it, or as stored), the write index of the range's first frame;
 * refused where Babylon would blend otherwise or it would not end inside
 * the range. */
int sk_pose__layer_blendin(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr, size_t layer,
                           sk_pose_spec *sp, sk_error *err) {
  const json_t *o = json_object_get(json_array_get(json_object_get(j, "layers"), layer), "blendIn");
  char p[SK_ERROR_POINTER_MAX], q[SK_ERROR_POINTER_MAX];
  snprintf(p, sizeof p, "%s", ptr);
  sk_pointer_push(p, sizeof p, "layers");
  sk_pointer_push_index(p, sizeof p, layer);
  sk_pointer_push(p, sizeof p, "blendIn");
  static const char *const k_blend[] = {"speed", "from", NULL}, *const k_from[] = {"animation", "time", "loop", NULL};
  int rc;
  if (!json_is_object(o))
    return sk_error_set(err, SK_ETYPE, p, "expected {\"speed\": blendingSpeed, \"from\"?: {\"animation\", \"time\"}}");
  if ((rc = sk_json_check_keys(o, p, k_blend, NULL, err)))
    return rc;
  if (sp->lx[layer].additive || sp->lx[layer].bone_weights != NULL)
    return sk_error_set(err, SK_ETYPE, p, "\"blendIn\" blends a plain layer in (no \"additive\", no \"mask\")");
  if ((rc = check_others(sp, ptr, err)))
    return rc;
  if (sp->times == NULL)
    return sk_error_set(err, SK_ETYPE, p, "\"blendIn\" blends over a frame range (\"times\", \"from\"/\"to\", \"frames\")");
  const json_t *v = json_object_get(o, "speed");
  double speed = 0;
  sk_pointer_child(q, sizeof q, p, "speed");
  if (v == NULL)
    return sk_error_set(err, SK_EMISSING, q, "\"blendIn\" needs a \"speed\" (Babylon's blendingSpeed, per frame)");
  if ((rc = sk_json_member_number(v, p, "speed", &speed, err)))
    return rc;
  if (!(speed >= SK_BLENDIN_MIN_SPEED) || !(speed <= 1))
    return sk_error_set(err, SK_ERANGE, q, "\"speed\" must be in [%g, 1] (a blend of at most %g frames)",
                        SK_BLENDIN_MIN_SPEED, 1 / SK_BLENDIN_MIN_SPEED);
  const size_t nb = anim->bone_count;
  sk_pose_blendin *b = calloc(1, sizeof *b);
  if (b == NULL || (!anim->babylon && ((b->snap = malloc((nb ? nb : 1) * SK_ANIM_TRS * sizeof *b->snap)) == NULL ||
                                       (b->drv = malloc(nb ? nb * 3 : 1)) == NULL))) {
    if (b != NULL)
      free(b->snap);
    free(b);
    return sk_error_set(err, SK_ENOMEM, p, "out of memory");
  }
  sp->blend = b;
  sk_blendin_init(&b->st, speed);
  const json_t *fr = json_array_get(json_object_get(j, "frames"), 0);
  b->first = json_is_number(fr) ? (uint64_t)json_number_value(fr) : 0;
  b->layer = layer;
  if (!anim->babylon)
    sk_blendin_driven(anim, sp->l[layer].clip, b->drv);
  const json_t *from = json_object_get(o, "from");
  if (from == NULL) {
    if (anim->babylon && (rc = babylon_snapshot(s, anim, NULL, b, p, err)))
      return rc;
    if (!anim->babylon)
      memcpy(b->snap, anim->rest, nb * SK_ANIM_TRS * sizeof *b->snap);
  } else {
    char f[SK_ERROR_POINTER_MAX];
    sk_pointer_child(f, sizeof f, p, "from");
    if (!json_is_object(from))
      return sk_error_set(err, SK_ETYPE, f, "expected {\"animation\", \"time\", \"loop\"?}: the pose blended from");
    if ((rc = sk_json_check_keys(from, f, k_from, NULL, err)))
      return rc;
    sk_anim_layer src;
    if ((rc = sk_pose__anim_layer(anim, from, f, false, &src, err)))
      return rc;
    if (anim->babylon && (rc = babylon_snapshot(s, anim, &src, b, f, err)))
      return rc;
    if (!anim->babylon)
      sk_anim_sample(anim, src.clip, src.time, src.loop, b->snap);
  }
  /* "frames" chunks are pieces of a longer shot: only a whole range must hold the blend */
  if (fr == NULL && sk_blendin_blending(&b->st, b->first + sp->nf - 1))
    return sk_error_set(err, SK_ERANGE, q,
                        "a crossfade longer than the range: at blendingSpeed %g it blends over more than its %zu frames",
                        speed, sp->nf);
  return 0;
}
