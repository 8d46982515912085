/* sk_shot_root: `skinner frames --root-motion FILE`, a bake of one clip
 * played in place with the character's motion beside it: the frames are
 * the in-place matrices and FILE one JSON line a frame of the motion the
 * daemon answers for the same range as a pose object with "rootMotion"
 * (proto/rootmotion.md), both made by the daemon's own code
 * (sk_poseops_sample, sk_rootframes, sk_frames), so a --frames chunk
 * gives the bytes and lines of the whole bake it covers. */
#ifndef SK_SHOT_ROOT_H
#define SK_SHOT_ROOT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sk_anim.h"
#include "sk_error.h"
#include "sk_skeleton.h"

/* Frames a pose request of the bake holds: memory stays bounded whatever
 * the frame count, and each chunk is a "frames" range, so the same bytes. */
#define SK_SHOT_ROOT_CHUNK 256

typedef struct sk_shot_root {
  size_t clip;
  bool loop;
  double fps;
  uint64_t first, frames; /* frames first .. first + frames - 1, frame k at k / fps */
  int floats_per_matrix;  /* 16 or 12 (application/x-skinner-mat3x4) */
  const char *options;    /* Babylon's RootMotionClip options as a JSON object; NULL: {} */
  const char *mesh_json;  /* the file's default mesh chain (sk_gltf_extra.mesh_json), NULL: none */
} sk_shot_root;

/* Writes each frame's final matrices, in place, to `frames` (the caller
 * wrote any header) and its line {"frame":k,"rootMotion":{...}} to
 * `motion`. `s` and `anim` are borrowed (anim gains and drops a
 * reference). Errors: the pose object's (err at its field, e.g.
 * "/rootMotion/source"), SK_ENOMEM, SK_EIO. */
int sk_shot_root_write(const sk_skeleton *s, sk_anim *anim, const sk_shot_root *r, FILE *frames, FILE *motion,
                       sk_error *err);

#endif
