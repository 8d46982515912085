/* sk_pose's private half, shared by sk_pose.c, sk_pose_anim.c and the
 * case runner (sk_eval.c), which looks at a parsed clip pose before it is
 * sampled to pick its engine. Never included by the mains or installed;
 * sk_pose__ names are internal (libuv's uv__ convention). */
#ifndef SK_POSE_INT_H
#define SK_POSE_INT_H

#include <stdio.h>
#include <string.h>

#include "sk_blendin.h"
#include "sk_pose.h"

/* True when `key` is in the NULL-terminated list `a` (NULL: empty). */
static inline bool sk_pose__key_allowed(const char *key, const char *const *a) {
  for (; a != NULL && *a != NULL; a++)
    if (strcmp(*a, key) == 0)
      return true;
  return false;
}

/* buf = ptr + "/" + key (escaped), truncated to `cap`. */
/* A pose object that may name clips, parsed but not sampled: the base pose
 * (user overrides, initial skin, outputs), and for clip poses the layers
 * and the frame times (NULL for a single time). */
typedef struct sk_pose_spec {
  sk_pose base;
  bool animated;
  sk_anim_layer *l; /* owned; nl entries */
  size_t nl;
  double *times; /* owned; NULL or nf entries */
  size_t nf;
  sk_anim_layer_ext *lx; /* owned; nl entries (additive, masks); zeroed: plain */
  float *masks;          /* owned; nl * bones weights the masks point into */
  bool plain_layers;     /* no layer is additive or masked (sk_sample's case) */
  bool layered;          /* "layers" given (Babylon-format clips then blend as weighted animations) */
  /* Appended: the "blendIn" of one layer (sk_blendin), or NULL. */
  struct sk_pose_blendin *blend;
} sk_pose_spec;

/* A layer blended in from a snapshot over the frames (sk_blendin.h). */
typedef struct sk_pose_blendin {
  double *snap;   /* owned; bone_count * SK_ANIM_TRS: the snapshot pose */
  uint8_t *drv;   /* owned; bone_count * 3: the paths the layer's clip drives */
  size_t layer;   /* the layer blended in (the others are plain weighted layers) */
  uint64_t first; /* the write index of the range's first frame ("frames": its start) */
  uint64_t k;     /* the write index of the frame sampled next */
  sk_blendin st;
  /* Babylon-format clips (snap and drv NULL): the skeleton posed as the
   * blend finds it (owned), and the "from" clip's overrides that posed it
   * (owned; bone_count of them, mask 0 where it drives nothing). */
  sk_skeleton *bsnap;
  sk_override *bfrom;
} sk_pose_blendin;

/* Parses `j` as sk_pose_parse_anim does, without sampling. On success *sp
 * owns what it holds (sk_pose__spec_close); on failure it is closed. */
int sk_pose__spec_parse(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr,
                        const char *const *extra_keys, sk_pose_spec *sp, sk_error *err);
void sk_pose__spec_close(sk_pose_spec *sp);

/* One layer object of a clip pose (is_layer), or the pose itself for the
 * single-"animation" form: its clip, "time", "loop", "weight" into *l
 * (zeroed first). 0 or an error naming the field (sk_pose_anim.c). */
int sk_pose__anim_layer(const sk_anim *anim, const json_t *o, const char *ptr, bool is_layer, sk_anim_layer *l,
                        sk_error *err);
/* Layer object o's "speedRatio" (at ptr) for its parsed layer *l into
 * *speed, 0 when absent (sk_pose_blend.c). */
int sk_pose__layer_speed(const sk_anim *anim, const json_t *o, const char *ptr, const sk_anim_layer *l, double *speed,
                         sk_error *err);
/* The "blendIn" of pose j's layer `layer` into sp->blend (owned by sp), after
 * its layers and frame times are parsed (sk_pose_blend.c). */
int sk_pose__layer_blendin(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr, size_t layer,
                           sk_pose_spec *sp, sk_error *err);

/* Clip TRS `trs` (B * SK_ANIM_TRS) as one override per bone into out[0..B),
 * with `user`'s overrides on top (sk_pose_anim.c). */
void sk_pose__merge_overrides(const sk_anim *anim, const double *trs, const sk_pose *user, sk_override *out);

#endif
