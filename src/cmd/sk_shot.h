/* sk_shot: `skinner frames`, the binary offline path for render farms.
 * A shot of N characters x F frames of one glTF's clips (one clip or a
 * blend of layers) written as raw little-endian float32 matrices, with an
 * optional 32-byte header; layout in proto/frames.md. */
#ifndef SK_SHOT_H
#define SK_SHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sk_anim.h"
#include "sk_clips.h"
#include "sk_geom.h"
#include "sk_threads.h"

#define SK_FRAMES_MAGIC "SKFRAME1"
#define SK_SHOT_HEADER_BYTES 32
#define SK_FRAMES_MAX_LAYERS 16

/* One shot. Zero-initialise, then fill. */
typedef struct sk_shot {
  const sk_skeleton *skel; /* borrowed */
  const sk_sampler *sampler; /* borrowed */
  const sk_rig *rig;       /* borrowed; needed for SK_CLIPS_KERNEL */
  sk_anim_layer layers[SK_FRAMES_MAX_LAYERS]; /* time = offset in seconds (sk_sample_layer_time) */
  size_t layer_count;
  double from, fps;        /* frame k at from + k / fps, or with `by_index` */
  bool by_index;           /* frame k at (first + k) / fps, one division (--frames): any split, the same bytes */
  uint64_t first;
  size_t frames;           /* F */
  size_t characters;       /* N: character c adds c * stagger seconds to every layer's offset */
  double stagger;
  int floats_per_matrix;   /* 16 (f32) or 12 (f32x12: the daemon's application/x-skinner-mat3x4) */
  bool header;
  int engine;              /* SK_CLIPS_EXACT or SK_CLIPS_KERNEL */
  /* Appended: a point cache instead of matrices (SK_SHOT_VERTICES: per
   * frame every primitive's posed positions, count x 3 floats, in sk_geom
   * order, each followed by its normals with `normals` where it has
   * NORMAL; SK_SHOT_BOUNDS: per frame and primitive min xyz, max xyz), the
   * daemon's "vertices"/"bounds" numbers as raw float32, after the point
   * cache header of proto/mesh.md with `header` (docs/mesh.md). Needs
   * `geom` and `anim` (borrowed), one character, one layer.
   * SK_SHOT_MATRICES (0): as before. */
  int output;
  const sk_geom *geom;
  const sk_anim *anim;
  bool normals;
  /* Point cache threads (0 or 1: the caller's alone): each chunk of frames
   * split into runs of whole frames, one a thread; where a frame is too
   * big for a few a thread in 32 MB (and in sk_usda, which poses a frame
   * at a time), a primitive of SK_SHOT_THREADS_FROM vertices or more split
   * into sk_skinv_run's vertex ranges instead. The same bytes for any
   * count. */
  unsigned threads;
  /* Appended: the file's default mesh chain as JSON (borrowed; NULL:
   * none), as an upload stores it (root motion's character space). */
  const char *mesh_json;
  /* Borrowed: the threads beside the caller's, started once by main with
   * per_job `threads` (sk_threads.h). NULL: each sk_shot_write or
   * sk_usda_write with `threads` > 1 starts threads - 1 for itself. */
  sk_threads *pool;
} sk_shot;

enum { SK_SHOT_MATRICES = 0, SK_SHOT_VERTICES = 1, SK_SHOT_BOUNDS = 2 };

/* The point cache header (proto/mesh.md): SK_POINTS_HEADER_BYTES, then 16
 * bytes per primitive. */
#define SK_POINTS_MAGIC "SKPOINT1"
#define SK_POINTS_HEADER_BYTES 56
/* Where one frame's primitive is split into vertex ranges: below it the
 * hand-over to a thread (microseconds) costs more than its share saves. */
#define SK_SHOT_THREADS_FROM 65536u

/* Writes the shot to `out` (NULL: computes every frame and writes nothing,
 * to time the in-memory rate). Errors: SK_EINVAL, SK_ENOMEM, SK_EIO (a
 * short write). */
int sk_shot_write(const sk_shot *shot, FILE *out);

/* `skinner frames ...` (argv[0] = "frames"). Returns the exit status. */
int sk_shot_main(int argc, char **argv);

#endif
