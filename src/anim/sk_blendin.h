/* sk_blendin: a glTF clip blended in from a pose snapshot over the frames
 * of a range, as Babylon blends an animation group started with
 * enableBlending and blendingSpeed b (RuntimeAnimation._setValue): the
 * first write of each of its animations takes the target's value then
 * (the snapshot: the pose another clip left there, or the rest pose) and
 * every write blends Lerp/Slerp(snapshot, value, factor), the factor 0 at
 * the first write and b more at each (a double sum, so per frame evaluated,
 * not per second), until it passes 1; paths the clip does not animate keep
 * the snapshot's value. */
#ifndef SK_BLENDIN_H
#define SK_BLENDIN_H

#include <stdbool.h>
#include <stdint.h>

#include "sk_anim.h"

/* Speeds below this take more than 10^4 frames to blend in: refused by
 * the parser, so finding a frame's factor (a sum of `speed`s) is bounded. */
#define SK_BLENDIN_MIN_SPEED 1e-4

typedef struct sk_blendin {
  double speed;
  /* the factor of write `j` (j sums of speed), carried from frame to frame */
  uint64_t j;
  double factor;
} sk_blendin;

/* Zeroed state at write 0 (factor 0). */
void sk_blendin_init(sk_blendin *b, double speed);
/* The factor of write k (k >= 0; earlier k than the last start over):
 * 0 + speed + speed + ... k times, as Babylon adds it, stopping once past
 * 1 (blending is then over: the value is the clip's own). */
double sk_blendin_factor(sk_blendin *b, uint64_t k);
/* Whether write k still blends (its factor is at most 1). */
bool sk_blendin_blending(sk_blendin *b, uint64_t k);
/* The paths clip `clip` drives into drv[bone * 3 + path] (1, else 0;
 * bone_count * 3 bytes): those a channel of it writes. */
void sk_blendin_driven(const sk_anim *a, size_t clip, uint8_t *drv);
/* The frame `trs` (bone_count * SK_ANIM_TRS, the clip sampled alone)
 * blended from `snap` (the same layout) with `factor`: each path the clip
 * drives (`drv`, sk_blendin_driven) becomes Vector3.Lerp /
 * Quaternion.Slerp(snap, trs, factor) while factor <= 1 and stays as it is
 * after; every other path takes the snapshot's value. */
void sk_blendin_apply(const sk_anim *a, const uint8_t *drv, const double *snap, double factor, double *trs);
/* The frame of `count` >= 2 weighted glTF layers (each weight > 0, none
 * additive, masked or with a speed ratio) whose layer `blended` blends in
 * (`drv`, `snap`, `factor` as sk_blendin_apply) into `trs`, as Babylon
 * plays them as weighted groups: every layer sampled alone, the blended
 * one's values blended from the snapshot, then the late animation
 * bindings (sk_anim__late_blend_from) with the snapshot as the targets'
 * original values (the groups started on the snapshot pose). 0 or
 * SK_ENOMEM (scratch of count frames). */
int sk_blendin_layers(const sk_anim *a, const sk_anim_layer *layers, size_t count, size_t blended, const uint8_t *drv,
                      const double *snap, double factor, double *trs);

#endif
