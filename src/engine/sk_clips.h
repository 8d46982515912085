/* sk_clips: whole clips to final matrices. sk_sample's contexts feed
 * either the batch kernel (frames sampled straight into its TRS rows, one
 * kernel run per chunk) or the exact scalar core (one frame at a time,
 * Babylon's bits). The offline tool (`skinner frames`, `skinner eval`
 * frame ranges) and the benchmarks run on this; the daemon's frame-range
 * route can call sk_clips_sample_job() to fill its own kernel job. */
#ifndef SK_CLIPS_H
#define SK_CLIPS_H

#include <stddef.h>
#include <stdint.h>

#include "sk_kernel.h"
#include "sk_buf.h"
#include "sk_sample.h"
#include "sk_skeleton.h"

/* Samples frames [begin, end) of `c` at times[begin..end) into the TRS
 * rows of `job` (its offset/pose_stride/block_stride: row or blocked
 * layout; every bone sampled must have mode SK_KERNEL_TRS, or the exact
 * kernel's TRS64 mode when `input64` is given). Frame p goes to pose p of
 * the job: with begin = 0 the batch is frames [0, end). `input` is the
 * job's own input buffer (the job only holds it const); `input64` NULL,
 * or the TRS64 doubles (same offsets), which keep the sampled doubles
 * exact. `rest_kept`: as sk_sample_out's. Never allocates, never fails.
 *
 * The daemon's frame range: build one sk_sampler per stored sk_anim (at
 * upload, next to the rig), then per request sk_sample_ctx_create with the
 * request's layers, mode[] = SK_KERNEL_TRS (or TRS64) for every bone,
 * sk_kernel_blocked_layout, this call over [0, frames), sk_kernel_validate
 * and sk_kernel_run. User "bones" overrides on top of the clip are not
 * expressed here: such requests keep the sk_pose path. */
void sk_clips_sample_job(sk_sample_ctx *c, const double *times, size_t begin, size_t end, const sk_kernel_job *job,
                         float *input, double *input64, bool rest_kept);

enum {
  SK_CLIPS_EXACT = 0, /* the scalar core, one frame at a time: Babylon's bits */
  SK_CLIPS_KERNEL = 1 /* the batch kernel on chunks of frames */
};

/* The kernel's modes for one sampled context, from a layout's (every bone
 * TRS64): SK_KERNEL_CONST for each bone none of whose ten components a
 * channel drives. Such a bone holds the same local in every frame, so it is
 * composed once, not per frame: sk_mat_compose of the doubles the sampler
 * writes in its rows, which is what the kernel's TRS64 compose gives them
 * (sk_kernel.h), so the kernel's bits are the same. The rows stay where
 * they were (the sampler still writes them; the kernel no longer reads
 * them). mode/offset/consts make the job's mode, offset and input (a CONST
 * bone b at offset 16 b); restv and held are scratch. */
typedef struct sk_clips_plan {
  uint8_t *mode;
  size_t *offset;
  float *consts;  /* 16 floats a bone */
  double *restv;  /* 10 doubles a bone */
  uint16_t *held; /* a mask a bone */
} sk_clips_plan;

/* Room for `bones` bones. Errors: SK_ENOMEM (close it anyway). */
int sk_clips_plan_init(sk_clips_plan *p, size_t bones);
void sk_clips_plan_close(sk_clips_plan *p);
/* Bytes a plan of `bones` bones holds (for budgets). */
size_t sk_clips_plan_bytes(size_t bones);

/* p's modes: mode[]/offset[] (a layout of `bones` bones), with the bones a
 * context whose rest rows `m` holds (sk_sample_rest_memo_same has just
 * checked it) leaves at rest made CONST. Returns how many it made CONST.
 * Never allocates. */
size_t sk_clips_plan_consts(sk_clips_plan *p, const sk_sample_rest_memo *m, size_t bones, const uint8_t *mode,
                            const size_t *offset);

/* Buffers for one skeleton and chunks of up to `chunk` frames. */
typedef struct sk_clips_runner {
  const sk_skeleton *skel; /* borrowed */
  const sk_rig *rig;       /* borrowed; needed for SK_CLIPS_KERNEL */
  int engine;
  size_t chunk;
  /* kernel */
  uint8_t *mode;  /* every bone SK_KERNEL_TRS64: the layout of the rows the sampler fills */
  size_t *offset;
  size_t slice; /* frames the input rows hold: a chunk goes through them a slice at a time */
  size_t pose_stride, block_stride, input_floats;
  double *input64; /* the TRS64 rows */
  sk_clips_plan plan; /* the kernel's modes for the context sampled last */
  /* The rest rows the input rows hold for frames [0, rest_frames): those
   * of the last context sampled, so a chunk of a context with the same
   * rest rows skips writing them again. */
  sk_sample_rest_memo rest;
  size_t rest_frames;
  /* exact core */
  double *trs;
  float *locals, *scratch;
} sk_clips_runner;

/* Allocates the buffers. Errors: SK_EINVAL (NULL skeleton, chunk 0, or
 * the kernel engine without a rig), SK_ENOMEM. Close with
 * sk_clips_runner_close (also after a failed init). */
int sk_clips_runner_init(sk_clips_runner *r, const sk_skeleton *s, const sk_rig *rig, int engine, size_t chunk);
void sk_clips_runner_close(sk_clips_runner *r);

/* Final matrices (skeleton slot order, trailing identity: (B+1)*16 floats
 * per frame, exactly sk_skeleton_evaluate's `final`) of frames [0, n) at
 * times[0..n) into `final`, n <= chunk. `initial_skin` NULL or 16 floats.
 * `final` 64-byte aligned lets the kernel stream. Errors: SK_EINVAL
 * (n > chunk; the kernel rejecting the job), else 0. */
int sk_clips_finals(sk_clips_runner *r, sk_sample_ctx *c, const double *times, size_t n, const float *initial_skin,
                    float *final);

/* The kernel job sk_clips_finals runs on r's rows for the context it
 * planned last (slices of up to r->slice frames): for benchmarks that time
 * the kernel alone on what sk_clips_finals sampled. */
void sk_clips_kernel_job(const sk_clips_runner *r, const float *initial_skin, float *final, sk_kernel_job *job);

/* The engine of `skinner eval`'s plain frame ranges. With sk_kernel's
 * exact TRS64 mode, SK_CLIPS_KERNEL gives the exact core's bytes, Babylon's bits (a rig is built per range, after any
 * "setBind" op); tests/skinner_frames_cli.py and check_sk_clips compare
 * the two engines byte for byte. */
#ifndef SK_CLIPS_RANGE_ENGINE
#define SK_CLIPS_RANGE_ENGINE SK_CLIPS_KERNEL
#endif

/* Frames sk_clips_range_finals hands over at a time. */
#define SK_CLIPS_RANGE_CHUNK 256

/* Takes the final matrices of the next `n` frames of a range
 * (sk_clips_finals' layout); nonzero stops the range. */
typedef int (*sk_clips_put_fn)(void *arg, const float *final, size_t n);

/* `skinner eval`'s frame range of plain weighted layers (no "bones"
 * overrides): the final matrices of `layers` at times[0..nf), the bytes
 * sk_pose_evaluate gives for the same poses, handed to `put` in order,
 * SK_CLIPS_RANGE_CHUNK frames at a time (the buffer is reused after put
 * returns). `initial_skin` NULL or 16 floats. *sampler (owned by the
 * caller, NULL at first) is built from `anim` on first use and reused by
 * later ranges. Errors: SK_ENOMEM, SK_ERANGE (bad weights; the parser has
 * ruled them out), or what `put` returned. */
int sk_clips_range_finals(const sk_skeleton *s, const sk_anim *anim, sk_sampler **sampler,
                          const sk_anim_layer *layers, size_t nl, const double *times, size_t nf,
                          const float *initial_skin, sk_clips_put_fn put, void *arg);

#endif
