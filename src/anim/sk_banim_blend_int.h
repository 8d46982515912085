/* sk_banim_blend's private header: what the single blend (sk_banim_blend.c:
 * the frame-at-a-time engine and Babylon's blend rules) shares with the
 * context that blends runs of frames (sk_banim_blend_run.c). Include it
 * only from those two files. */
#ifndef SK_BANIM_BLEND_INT_H
#define SK_BANIM_BLEND_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "sk_anim.h"
#include "sk_banim_blend.h"
#include "sk_skeleton.h"

/* One layer's value of one bone: the paths its clip drives and their values. */
typedef struct blend_src {
  unsigned mask;     /* SK_OVERRIDE_* */
  const double *trs; /* SK_ANIM_TRS doubles */
  const float *matrix;
} blend_src;

/* The additive layers of one property (ProcessLateAnimationBindings adds
 * them after the weighted ones, raw weights): `v` their values, `w` their
 * weights, `n` of them. */
typedef struct sk_banim_blend__add {
  const void *const *v;
  const double *w;
  size_t n;
  double total;
} sk_banim_blend__add;

/* The frame-at-a-time blend: its scratch, a cursor per channel of each
 * layer's clip (sk_anim_cursor) and each bone's current TRS, decomposed
 * once (the stored skeleton does not change under it). sk_banim_blend
 * runs it once; a context runs it per frame only when an additive layer
 * is made per frame (sk_banim_add's key budget). */
typedef struct sk_banim_blend__once {
  const sk_anim *a;
  const sk_skeleton *s;
  const sk_anim_layer_ext *ext;
  size_t count, nb;
  double *trs;
  blend_src *src;
  const void **vals;
  double *w;
  float *mats;
  sk_anim_cursor **cur; /* count of them, NULL for an additive layer */
  double *now;          /* per bone: scaling 3, rotation 4, position 3 */
  /* A layer crossfaded in (sk_banim_blend_in): its index (count: none),
   * this frame's factor, and its blended "_matrix" values (bone_count * 16). */
  size_t blended;
  double factor;
  float *bmats;
} sk_banim_blend__once;

/* Babylon's blend rules (ProcessLateAnimationBindings), one property:
 * vectors (position, scaling) by their weights, with `orig` for a total
 * under 1; the additive layers' vectors added; matrices decomposed,
 * blended and composed. */
void sk_banim_blend__vec3(const double *orig, const double *const *v, const double *w, size_t n, double total,
                          double out[3]);
void sk_banim_blend__add_vec3(const sk_banim_blend__add *ad, double out[3]);
void sk_banim_blend__matrix(const float *orig, const float *const *m, const double *w, size_t n, double total,
                            const sk_banim_blend__add *ad, float out[16]);
/* Each bone's current scaling, rotation and position (now[10 b ..]: 3, 4
 * and 3 doubles), decomposed if stale, as Babylon's getters do. */
void sk_banim_blend__current_trs(const sk_skeleton *s, size_t nb, double *now);
/* The frame-at-a-time engine: sk_banim_blend_open's arguments; a frame
 * as sk_banim_blend gives it; NULL closes as a no-op. */
int sk_banim_blend__once_open(const sk_anim *a, const sk_skeleton *s, const sk_anim_layer *layers,
                              const sk_anim_layer_ext *ext, size_t count, sk_banim_blend__once **out);
int sk_banim_blend__once_frame(sk_banim_blend__once *c, const sk_anim_layer *layers, sk_override *out, size_t *driven);
void sk_banim_blend__once_close(sk_banim_blend__once *c);

#endif
