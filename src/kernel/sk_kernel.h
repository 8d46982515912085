/* sk_kernel: the batch kernel. Many poses of one skeleton at once, one SIMD
 * lane per pose, lanes of doubles (AVX-512: 8 poses, AVX2+FMA: 4, SSE2: 2,
 * scalar: 1), the path picked at run time from cpuid so one binary runs
 * everywhere.
 *
 * Exact: every output is bit for bit sk_skeleton_evaluate's (and so
 * Babylon.js's), on every path, for every batch size and split: float32
 * storage, double arithmetic in Babylon's operation order, float32
 * rounding wherever Babylon stores a Matrix; fused multiply-adds only where
 * they provably round the same (sk_kernel_lanes.h). This holds for finite
 * matrices (a pose whose matrices overflow float32 may differ in its
 * non-finite entries). The TRS mode composes from float32 inputs: it equals
 * Babylon's ComposeToRef when the TRS values are float32 (glTF keys are);
 * TRS computed in double (blended or interpolated) must be rounded by the
 * caller's own compose (MATRIX mode) to stay exact.
 *
 * precision = SK_KERNEL_PRECISION_FAST opts into the float32 kernel (float
 * arithmetic with FMA, 16 poses per AVX-512 register): about three times
 * faster, within 1e-5 x max(1, largest |entry|) of the exact answer on
 * random rigs and 8.3e-6 of the matrix scale on Fox.glb's clips from exact
 * locals (the 1.64e-5 seen before also had TRS rounded to float32 before
 * composing); never the default.
 *
 * Shape (ozz-animation's LocalToModelJob): an immutable runtime rig built
 * once per skeleton, a job of borrowed spans, sk_kernel_validate() once at
 * the boundary, then sk_kernel_run() on pose ranges; run never allocates and
 * never re-checks the hierarchy. */
#ifndef SK_KERNEL_H
#define SK_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "sk_error.h"
#include "sk_skeleton.h"

/* Immutable runtime form of a skeleton for the batch kernel: built once
 * (e.g. at upload), one aligned allocation; thread-safe to share read-only.
 * It snapshots parents, output slots and absolute inverse binds: later
 * changes to the skeleton (set_bind) need a new rig. */
typedef struct sk_rig sk_rig;

/* Builds the rig of `s`: a processing order (depth-first, lightest subtree
 * first, so a pass needs at most log2(B) + 2 live world matrices), and
 * bones that write no slot and feed none dropped. Also reads the L2 size
 * from sysfs once, here, so runs do no I/O. On success *out is new (free
 * with sk_rig_destroy). Errors: SK_EINVAL (NULL), SK_ENOMEM. */
int sk_rig_create(const sk_skeleton *s, sk_rig **out);
/* NULL is a no-op. */
void sk_rig_destroy(sk_rig *r);
/* B, the skeleton's bone count (final holds B+1 matrices per pose). */
size_t sk_rig_bones(const sk_rig *r);

/* How a bone's local transform is given for the whole batch. */
enum {
  SK_KERNEL_CONST = 0,  /* one matrix for every pose (e.g. the stored local): 16 floats */
  SK_KERNEL_TRS = 1,    /* per pose: tx ty tz qx qy qz qw sx sy sz, 10 rows of pose_stride floats (SoA);
                           composed as Babylon's Matrix.ComposeToRef, the quaternion never normalised */
  SK_KERNEL_MATRIX = 2, /* per pose: 16 rows of pose_stride floats (SoA), row r = entry r of every pose */
  SK_KERNEL_TRS64 = 3   /* per pose: the 10 TRS rows as doubles, read from `input64` (same offsets and strides,
                           in doubles): composed from the doubles as the core's sk_mat_compose does, so TRS
                           computed in double (JSON numbers, sampled or blended clips) stay exact. Exact
                           precision only. */
};

/* sk_kernel_job.precision. */
enum { SK_KERNEL_PRECISION_EXACT = 0, SK_KERNEL_PRECISION_FAST = 1 };

/* Output stores: the default (AUTO) streams past the caches only when the
 * outputs are larger than the last-level cache. */
enum { SK_KERNEL_STREAM_AUTO = 0, SK_KERNEL_STREAM_NEVER = 1, SK_KERNEL_STREAM_ALWAYS = 2 };

/* One batch. Zero-initialise, then fill; every pointer is borrowed. */
typedef struct sk_kernel_job {
  const sk_rig *rig;          /* borrowed */
  size_t poses;               /* P >= 1 */
  size_t pose_stride;         /* floats from one row of a bone's input to the next (SoA: row k = component k
                                 of every pose). Row layout (block_stride 0): >= poses, best
                                 sk_kernel_pose_stride(poses). Blocked layout: >= 16, usually 16. */
  size_t block_stride;        /* 0: row layout, each row holds the whole batch. Else the blocked layout: poses
                                 16i..16i+15 of every row start block_stride floats after poses 16(i-1).., so a
                                 block of poses reads as one sequential stream; sk_kernel_blocked_layout()
                                 lays a batch out this way. */
  const uint8_t *mode;        /* B entries, SK_KERNEL_*, bones in parent-first (sk_skeleton.bones[]) order */
  const size_t *offset;       /* B entries: where bone b's input starts in `input`, in floats (CONST: its
                                 16 floats; TRS and MATRIX: row 0 of poses 0..15, rows pose_stride apart:
                                 10 rows for TRS, 16 for MATRIX), or for TRS64 in `input64`, in doubles */
  const float *input;         /* borrowed; may be NULL when every bone is TRS64 */
  size_t input_floats;        /* length of `input` for bounds checks in validate; 0 = unknown, unchecked */
  const float *initial_skin;  /* NULL, or 16 floats applied to every pose's roots (world = local * initial) */
  float *final;               /* P*(B+1)*16 floats, pose-major: pose p at final + p*(B+1)*16, slot order,
                                 unwritten slots zero, trailing identity -- exactly sk_skeleton_evaluate's `final`.
                                 64-byte alignment lets the kernel stream its stores. */
  float *absolute;            /* NULL or P*B*16, slot order (no initial skin), like sk_skeleton_evaluate's `absolute` */
  const char *path;           /* NULL = the best path this CPU has, else "avx512", "avx2", "sse2" or "scalar" */
  int stream;                 /* SK_KERNEL_STREAM_*; 0 = AUTO */
  int precision;              /* SK_KERNEL_PRECISION_*; 0 = EXACT (Babylon's bits); FAST is float32, opt-in */
  const double *input64;      /* borrowed; the TRS64 bones' rows (NULL when there are none) */
  size_t input64_doubles;     /* length of `input64` for bounds checks; 0 = unknown, unchecked */
} sk_kernel_job;

/* The pose_stride to lay a batch of `poses` out with: a multiple of 16
 * floats (whole cache lines per lane group) whose count of lines is odd.
 * A power-of-two stride puts row k of every bone in the same cache set, so
 * the kernel's ~10 rows per bone evict each other; with 65 bones x 65536
 * poses that costs 40 % of the throughput. */
size_t sk_kernel_pose_stride(size_t poses);

/* Fills offset[B] and *pose_stride, *block_stride for the blocked layout
 * of a batch of `poses` with the given modes: each 16-pose block holds
 * every bone's rows back to back (TRS and TRS64 10 rows, MATRIX 16 rows of
 * 16), CONST bones' 16 floats come first. TRS64 rows live in `input64` at
 * the same element offsets (a buffer of the returned size in doubles; its
 * other positions are never read), the rest in `input`. The kernel then reads its
 * input as one forward stream instead of 10 or 16 per bone, which the
 * hardware prefetcher follows. Returns the floats `input` needs
 * (0 on overflow). The float for bone b, row k, pose p is at
 * offset[b] + (p / 16) * block_stride + k * pose_stride + p % 16. */
size_t sk_kernel_blocked_layout(const uint8_t *mode, size_t bones, size_t poses, size_t *offset, size_t *pose_stride,
                                size_t *block_stride);

/* Checks the job once, at the boundary: non-NULL rig/mode/offset/input/
 * final, P >= 1, pose_stride >= P (row layout) or >= 16 (blocked), known modes, spans inside input_floats
 * and input64_doubles (when given), input64 given for TRS64 bones and TRS64
 * only with exact precision, sizes that do not overflow, and a known path the CPU has.
 * Errors: SK_EINVAL (err->pointer names the field, e.g. "/mode/3", "/precision"),
 * SK_ETOOBIG (sizes overflow), SK_EUNSUPPORTED (path missing on this CPU). */
int sk_kernel_validate(const sk_kernel_job *job, sk_error *err);

/* Computes poses [begin, end) of a validated job (end <= P), so callers can
 * split a batch across threads. With the blocked layout ranges must start
 * at multiples of 16 (a group never straddles a block); the exact kernel's
 * results never depend on the split, the fast one's do not either when
 * ranges start at multiples of 16. Never allocates (its scratch is about
 * 50 KB of stack), never re-validates. */
void sk_kernel_run(const sk_kernel_job *job, size_t begin, size_t end);

/* Splits [0, P) across `n` threads (uv_thread_create, the caller's thread
 * takes the first range) in 16-pose-aligned ranges and runs them. n <= 1,
 * or a batch too small to split, runs inline. A thread that cannot be
 * started has its range run inline, so this always completes; returns 0.
 * Each call starts threads (tens of microseconds): worth it from a few
 * hundred thousand bone matrices up; a server would rather hand ranges of
 * sk_kernel_run to its own pool. */
int sk_kernel_run_threads(const sk_kernel_job *job, unsigned n);

/* Name of the path sk_kernel_run uses for path == NULL on this CPU:
 * "avx512", "avx2", "sse2" or "scalar". Static string. */
const char *sk_kernel_path(void);

/* 0 if `path` ("avx512"|"avx2"|"sse2"|"scalar") runs on this CPU,
 * SK_EUNSUPPORTED if the CPU lacks it, SK_EINVAL for an unknown name. */
int sk_kernel_path_check(const char *path);

/* Single pose, one bone at a time: `locals` = B*16 floats in bones[] order,
 * `initial_skin` NULL or 16 floats, `final` (B+1)*16 floats and `absolute`
 * (NULL or B*16) laid out as sk_skeleton_evaluate's. Exact: the core's own
 * product (sk_mat_mul) over the rig's order, which skips bones that write
 * nothing, so sk_skeleton_evaluate's bits. Never allocates; buffers need no
 * alignment. */
void sk_kernel_single(const sk_rig *r, const float *locals, const float *initial_skin, float *final, float *absolute);

/* sk_kernel_single after checking `path` ("avx512", "avx2", "sse2" or
 * "scalar"; every path now computes the same exact product). Kept for
 * callers and tests that name a path. Returns SK_EUNSUPPORTED if the CPU
 * lacks it, SK_EINVAL for an unknown name. */
int sk_kernel_single_on(const char *path, const sk_rig *r, const float *locals, const float *initial_skin,
                        float *final, float *absolute);

#endif
