/* sk_frames: evaluate parsed poses of one stored skeleton version and write
 * the answers. No HTTP here: skinnerd's pose routes, a whole-buffer answer,
 * a streamed answer and a FILE* all go through these calls.
 *
 * Which engine answers (one plan per batch):
 *   - a single pose, or poses the batch kernel does not take (absolute or
 *     local matrices asked, differing initial skin matrices): the exact
 *     scalar core, incrementally (only the subtrees of the bones a pose
 *     sets) when the pose wants final matrices without an initial skin;
 *   - two or more poses wanting final matrices: the batch kernel
 *     (sk_kernel), bones no pose sets CONST, bones every pose sets by
 *     position/rotation/scaling TRS64 (composed from the parsed doubles, as
 *     the core does), the rest MATRIX (each lane the core's own local).
 * The kernel is exact (sk_kernel.h), so every path gives the core's bits:
 * a frame answers the same bytes alone, in a /poses batch of any size, in a
 * frame range, streamed or whole (tests/check_sk_frames.c,
 * tests/check_frames_identity.c). The one exception is opt-in:
 * SK_FRAMES_FAST (library callers only: skinnerd never sets it) runs binary batch answers (two
 * or more poses) through the kernel's float32 precision, within
 * 1e-5 x max(1, |largest entry|) of the exact answer (8.3e-6 on Fox's
 * clips, sk_kernel.h); single poses and JSON answers stay exact.
 *
 * Answer formats: SK_FMT_JSON ("results" entries, comma-separated, each
 * sk_json_write_result's object), SK_FMT_F32 ((B+1) x 16 float32 per
 * pose, little-endian as in memory), SK_FMT_MAT3X4 ((B+1) x 12 per
 * pose, sk_frames_mat3x4 of every matrix). */
#ifndef SK_FRAMES_H
#define SK_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sk_model.h"
#include "sk_answer.h"
#include "sk_cost.h"
#include "sk_pose.h"
#include "sk_poseops.h"
#include "sk_clips.h"
#include "sk_sample.h"
#include "sk_buf.h"

enum { SK_FRAMES_EXACT = 0, SK_FRAMES_FAST = 1 };

/* The clip sampling step: turns one pose request (a JSON pose object that
 * may name clips, layers or a frame range) into parsed poses, sampling the
 * clips (*poses new, *count of them; pointers in errors below `ptr`). The
 * pose routes call it through this type, so a faster sampler (key cursors
 * carried from frame to frame, SoA tracks) plugs in without touching them;
 * sk_frames_sample_default is sk_pose_parse_anim, which samples frame
 * ranges of plain glTF layers with sk_sample's cursors (Babylon's bits;
 * additive/masked layers and Babylon-format clips frame by frame). */
typedef int (*sk_frames_sample_fn)(const sk_skeleton *s, const sk_anim *anim, const json_t *j, const char *ptr,
                                   const char *const *extra_keys, sk_pose **poses, size_t *count, sk_error *err);
extern const sk_frames_sample_fn sk_frames_sample_default;
/* The daemon's sample step: sk_pose_parse_range, which gives plain glTF
 * ranges (with no "matrix" in "bones") in range form (sk_pose_range.h): sk_frames
 * samples them straight into the kernel's rows, the same bytes as the
 * overrides sk_frames_sample_default writes, without writing them. Its
 * poses are for sk_frames (which materialises a frame where it needs
 * overrides) and sk_pose_close only. */
extern const sk_frames_sample_fn sk_frames_sample_range;

/* Grow-only buffers one thread reuses across calls (zero-initialise; close
 * with sk_frames_scratch_close). Never shared between threads. */
typedef struct sk_frames_scratch {
  sk_pose_buffers buf; /* the scalar core's */
  float *input, *final; /* kernel SoA input; output (64-byte aligned so the kernel may stream) */
  double *input64;      /* kernel TRS64 rows */
  size_t input_cap, input64_cap, final_cap;
  uint8_t *mode;
  uint8_t *changed; /* per bone: sk_skeleton_evaluate_changed's marks, or planning's matrix flags */
  size_t *offset;
  uint32_t *hits;
  size_t bones_cap;
  size_t bad_pose, bad_bone; /* after SK_ENOTFINITE: the pose, and the first bone (parent-first) that overflowed */
  sk_override *ovr; /* one frame of a range-form pose, materialised (sk_pose_materialize) */
  size_t ovr_cap;
  /* The rest rows (sk_sample_ctx_rest) that input64 holds for lanes
   * [0, rest_lanes) in the layout (rest_stride, rest_block), left by a
   * slice that was one range run: the next such slice with equal rest rows
   * skips writing them (sk_sample_out.rest_kept). */
  sk_sample_rest_memo rest;
  size_t rest_lanes, rest_stride, rest_block;
  sk_clips_plan plan; /* a one-range slice's kernel modes (bones at rest CONST) */
  sk_poseops_copy ops_copy; /* what a pose's Bone-API ops run on */
} sk_frames_scratch;

void sk_frames_scratch_close(sk_frames_scratch *sc);

/* How to answer. Zero-initialised = JSON, exact, one thread. */
typedef struct sk_frames_opts {
  int fmt;          /* SK_FMT_JSON | F32 | MAT3X4 */
  int precision;    /* SK_FRAMES_EXACT, or SK_FRAMES_FAST (binary batches only; JSON and single poses stay exact) */
  unsigned threads; /* kernel threads for large batches (0 or 1: the caller's thread only) */
  sk_threads *mesh_threads; /* borrowed: the spare threads the mesh writer may split a big primitive
                               over (sk_mesh_hook); NULL: the caller's thread only */
} sk_frames_opts;

/* The 3x4 affine of a Babylon matrix (row vectors, translation in m[12..14]):
 * its transpose's first three rows, dest[4c + r] = m[4r + c] (a GPU's
 * mat3x4 / three vec4 rows). */
void sk_frames_mat3x4(const float m[16], float dest[12]);

/* Appends `mats` final matrices (16 floats each) to `out` as fmt's binary
 * answer carries them (SK_FMT_F32 or SK_FMT_MAT3X4). SK_ENOMEM. */
int sk_frames_append_binary(sk_strbuf *out, const float *final, size_t mats, int fmt);

/* Whether matrices m[0..16 * mats) hold a non-finite float (inf or NaN). */
bool sk_frames_nonfinite(const float *m, size_t mats);

/* True when the batch kernel answers poses[0..n) (see the header comment). */
bool sk_frames_uses_kernel(const sk_model *e, const sk_pose *poses, size_t n, const sk_frames_opts *o);

/* The work poses[0..n) of `e` asks for (evaluation and an answer in
 * o->fmt) within sk_cost's limits `l`: 0, or SK_ETOOBIG with err at `ptr`
 * naming the limit. Run before any evaluation. */
int sk_frames_check_cost(const sk_model *e, const sk_pose *poses, size_t n, const sk_frames_opts *o,
                         const sk_cost_limits *l, const char *ptr, sk_error *err);

/* Estimated time to evaluate and encode poses[0..n), in microseconds: the
 * plan sk_frames_write will run, priced per matrix (see sk_frames.c). */
double sk_frames_cost_us(const sk_model *e, const sk_pose *poses, size_t n, const sk_frames_opts *o);

/* Bytes of the answer to poses[0..n) in format o->fmt (binary: exact;
 * JSON: an upper bound, ~16 bytes a float), without any "results" wrapper. */
size_t sk_frames_answer_bound(const sk_model *e, const sk_pose *poses, size_t n, int fmt);

/* Evaluates poses[0..n) of `e` and appends their answers to `out` in one
 * piece (JSON: entries comma-separated, no wrapper). Borrows everything.
 * Errors: SK_ENOMEM (out may hold part of the answer); SK_ENOTFINITE when
 * an answer would hold inf or NaN (sc->bad_pose, sc->bad_bone say where;
 * sk_frames_nonfinite_error words it). */
int sk_frames_eval(const sk_model *e, const sk_pose *poses, size_t n, const sk_frames_opts *o,
                   sk_frames_scratch *sc, sk_strbuf *out);

/* A batch answered in slices, for producers that are pulled (a streamed
 * HTTP answer) or that write as they go (a file). Planned once for the whole
 * batch; every slice gives the bytes sk_frames_eval would have. */
typedef struct sk_frames_run {
  const sk_model *model; /* borrowed */
  const sk_pose *poses;        /* borrowed */
  size_t n;
  sk_frames_opts opts;
  sk_frames_scratch sc; /* owned */
  bool kernel;          /* the kernel evaluates */
  size_t next;          /* next pose to encode */
  size_t evaluated;     /* kernel: poses [evaluated - 16, evaluated) are in sc.final */
} sk_frames_run;

/* Plans poses[0..n) of `e` (borrowed until sk_frames_run_close).
 * Errors: SK_ENOMEM (run is closed again). */
int sk_frames_run_init(sk_frames_run *run, const sk_model *e, const sk_pose *poses, size_t n,
                       const sk_frames_opts *o);
/* Appends the next poses' answers to `out` until it grew by at least
 * `budget` bytes or the batch is done (JSON entries comma-separated across
 * calls). Errors: SK_ENOMEM; SK_ENOTFINITE (run->sc.bad_* say where). */
int sk_frames_run_next(sk_frames_run *run, sk_strbuf *out, size_t budget);
static inline bool sk_frames_run_done(const sk_frames_run *run) { return run->next == run->n; }
/* Poses evaluated per kernel call by sk_frames_run_next_raw: 120 KiB of
 * TRS64 rows for Fox (325 KiB for 65 bones), read back from L2, and about
 * 60 us of the loop thread for a streamed Fox range; 64 measured as fast
 * as 128 and faster than 32 (docs/clips.md, "The HTTP answer path"). */
#define SK_FRAMES_RAW_POSES 64
/* Binary answers only: writes the next whole poses' answers (as many as fit
 * in `cap` bytes, at most SK_FRAMES_RAW_POSES evaluated) straight into
 * `dest`, with the kernel's output there when it is float32, and sets
 * *written (0 when the batch is done). The bytes sk_frames_run_next would
 * have appended, one copy fewer (two for a streamed answer). Calls of the
 * two may alternate. Errors: SK_EINVAL when it does not apply (the core
 * evaluates, JSON, or `cap` is under one pose: use sk_frames_run_next);
 * SK_ENOMEM; SK_ENOTFINITE (run->sc.bad_* say where). */
int sk_frames_run_next_raw(sk_frames_run *run, char *dest, size_t cap, size_t *written);
/* What a run holds while it lasts (its scratch for 16 kernel poses or the
 * core's buffers), for memory budgets. */
size_t sk_frames_run_bytes(const sk_model *e, bool kernel);
/* What a kernel run holds when sk_frames_run_next_raw is given up to
 * `cap` bytes at a time (at least sk_frames_run_bytes). */
size_t sk_frames_run_raw_bytes(const sk_model *e, int fmt, size_t cap);
void sk_frames_run_close(sk_frames_run *run);

/* The 422 of an SK_ENOTFINITE from sk_frames_eval/run_next with scratch
 * `sc`: err at /bones/<name> of the bone whose matrix overflowed (under
 * /poses/<pose> when `batch`), the detail naming the pose. Returns the code. */
int sk_frames_nonfinite_error(const sk_model *e, const sk_frames_scratch *sc, bool batch, sk_error *err);

/* Where sk_frames_write puts the answer: write() appends len bytes and
 * returns 0, or nonzero to stop (sk_frames_write then returns SK_EIO). */
typedef struct sk_frames_sink {
  int (*write)(void *ctx, const void *data, size_t len);
  void *ctx;
} sk_frames_sink;

/* A sink appending to an sk_strbuf / writing to a FILE* (both borrowed). */
sk_frames_sink sk_frames_sink_strbuf(sk_strbuf *b);
sk_frames_sink sk_frames_sink_file(FILE *f);

/* The whole answer document to `sink`, in slices of ~64 KiB: JSON as
 * {"results":[...]}, binary as the poses' matrices back to back. Memory
 * stays bounded whatever n is. Errors: SK_ENOMEM, SK_EIO (the sink refused). */
int sk_frames_write(const sk_model *e, const sk_pose *poses, size_t n, const sk_frames_opts *o,
                    sk_frames_sink sink);


#endif
