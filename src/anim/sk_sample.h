/* sk_sample: clips sampled frame after frame for frame ranges, the way
 * ozz-animation's SamplingJob does it, with Babylon's bits.
 *
 * sk_anim_sample() looks every key up by binary search and recomputes the
 * slerp's acos and sine of the key pair at every call. Consecutive frames
 * of a range almost always fall in the same key interval or the next, so:
 *  - a sampler, built once per sk_anim (immutable, shareable across
 *    threads), keeps only the channel that wins on each (bone, path),
 *    the keys as doubles, and per LINEAR rotation interval the values the
 *    slerp derives from the two keys alone (|dot|, sign, acos, 1/sin);
 *  - a context, one per request (or per thread), carries a key cursor per
 *    channel and layer from frame to frame (a step forward, no search) and
 *    a TRS buffer per layer in which undriven bones keep their rest TRS;
 *  - sk_sample_run() writes frames [begin, end) straight into the batch
 *    kernel's TRS rows (row or blocked layout, doubles for the exact
 *    kernel's TRS64 mode or floats for TRS) or into plain TRS arrays.
 * Every value is bit for bit what sk_anim_sample / sk_anim_sample_layers
 * give for the same clip, time and loop flag: same operations in the same
 * order, in doubles (tests/check_sk_sample.c compares with memcmp).
 *
 * Babylon-format clips (sk_banim) are built when each channel takes one
 * kind of interval throughout: every interval lerps or slerps, every one
 * steps (its start key's STEP), or every one is Hermite (the start key's
 * out-tangent, the end key's in-tangent), and no "_matrix" keys or
 * RELATIVE loop. Their value is then sample_babylon's on the keys' doubles
 * (a LINEAR, STEP or CUBICSPLINE group; a Babylon tangent is scaled by the
 * key interval alone, a glTF one by 1/fps first), at the frame the clip's
 * range plays. Other Babylon-format clips
 * are left unbuilt (a context naming one is SK_ERANGE), and no sampler
 * blends Babylon-format layers (Babylon's weighted blend differs:
 * sk_banim_blend). */
#ifndef SK_SAMPLE_H
#define SK_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_anim.h"

typedef struct sk_sampler sk_sampler;
typedef struct sk_sample_ctx sk_sample_ctx;

/* Builds the sampler of every clip of `a`; it takes a reference on `a`
 * (sk_anim_ref) and drops it in sk_sampler_destroy. On success *out is
 * new. Errors: SK_EINVAL (NULL), SK_ENOMEM. */
int sk_sampler_create(const sk_anim *a, sk_sampler **out);
/* The same for only the clips that `layers[0..count)` name (a request's
 * sampler: building every clip's keys and slerp constants would cost more
 * than a short range saves). A context naming another clip is SK_ERANGE.
 * layers NULL and count 0: every clip, as sk_sampler_create. */
int sk_sampler_create_clips(const sk_anim *a, const sk_anim_layer *layers, size_t count, sk_sampler **out);
/* NULL is a no-op. On a sampler from sk_sampler_hold_shared: drops the
 * reference to its anim that the hold took. */
void sk_sampler_destroy(sk_sampler *s);
/* Builds the sampler of every clip of `a` and keeps it with `a` (freed
 * with its last reference), unless one is there or `a` has no clip (a
 * Babylon skeleton uploaded without animations). Any thread: the
 * first to publish wins. A sampler holding more than `max_bytes` (the
 * daemon gives SK_SAMPLER_SHARE_MAX) is not kept (SK_ETOOBIG): its clips
 * are large, and a range's own sampler of only the clips it names costs
 * little beside its frames. 0,
 * SK_ETOOBIG or SK_ENOMEM (then `a` has none; ranges build their own).
 * Its time grows with the clips' keys: callers that must not stall (the
 * daemon's loop) call it where they parse the clips. */
#define SK_SAMPLER_SHARE_MAX (8u << 20)
int sk_sampler_share(sk_anim *a, size_t max_bytes);
/* The sampler sk_sampler_share keeps with `a`, held: a reference to `a`
 * is taken, and sk_sampler_destroy drops it. NULL when `a` has none. The
 * sampler is read-only, so any number of threads may hold it at once. */
sk_sampler *sk_sampler_hold_shared(const sk_anim *a);
/* Whether `s` is an anim's shared sampler (its memory is counted with the
 * anim's, not by whoever holds it). */
bool sk_sampler_is_shared(const sk_sampler *s);
/* The clips it samples (borrowed). */
const sk_anim *sk_sampler_anim(const sk_sampler *s);
/* Bytes the sampler holds beyond its sk_anim (for cache accounting); 0 for
 * NULL. */
size_t sk_sampler_memory(const sk_sampler *s);

/* The time a layer samples at frame time `t`: its own "time" is an offset
 * added to the frame time (an offset of exactly 0 leaves `t` as it is, so
 * a one-clip range samples at its frame times bit for bit). The pose
 * parser uses the same rule, so both paths agree by construction. */
static inline double sk_sample_layer_time(double offset, double t) { return offset == 0 ? t : offset + t; }

/* A context for `count` layers (as sk_anim_sample_layers takes them; each
 * layer's `time` is an offset, see sk_sample_layer_time). One layer of
 * weight > 0 is the plain sk_anim_sample case. On success *out is new
 * (sk_sample_ctx_destroy); it borrows `s`, which must outlive it.
 * Errors: SK_EINVAL (NULL, count 0), SK_ERANGE (the weights are negative,
 * non-finite or all 0, or a clip index is invalid or not in the sampler),
 * SK_ENOMEM. */
int sk_sample_ctx_create(const sk_sampler *s, const sk_anim_layer *layers, size_t count, sk_sample_ctx **out);
/* The same with each layer's speed ratio from ext[i].speed (NULL: none;
 * its other fields are not read: plain layers only). */
int sk_sample_ctx_create_ext(const sk_sampler *s, const sk_anim_layer *layers, const sk_anim_layer_ext *ext,
                             size_t count, sk_sample_ctx **out);
/* NULL is a no-op. */
void sk_sample_ctx_destroy(sk_sample_ctx *c);
/* LINEAR channels are sampled in groups, one channel per SIMD lane, on the
 * best path the CPU has; this names one ("avx512", "avx2" or "generic") so
 * tests can compare them all. Errors: SK_EINVAL (NULL, unknown name),
 * SK_EUNSUPPORTED (not on this CPU). Every path gives the same bits. */
int sk_sample_ctx_set_path(sk_sample_ctx *c, const char *path);
/* The clips the context samples (borrowed). */
const sk_anim *sk_sample_ctx_anim(const sk_sample_ctx *c);
/* Bytes the context holds (for budgets); 0 for NULL. */
size_t sk_sample_ctx_memory(const sk_sample_ctx *c);

/* A component (0..9, as in sk_sample_out) of a bone that no channel of
 * the context's clips drives: every frame gets `value` (one layer: the
 * rest TRS; a blend: the blend of every layer's rest value). No padding, so
 * arrays of them compare with memcmp. */
typedef struct sk_sample_rest {
  size_t bone;
  size_t comp;
  double value;
} sk_sample_rest;

/* The rest rows of `c` (its constant rows) into rows[0..cap) (the first
 * `cap` when there are more); returns how many there are, at most B * 10.
 * A caller that keeps its rows between runs compares these with what it
 * saw last (sk_sample_rest_memo). */
size_t sk_sample_ctx_rest(const sk_sample_ctx *c, sk_sample_rest *rows, size_t cap);

/* The rest rows a caller's kernel rows hold (for sk_sample_out.rest_kept):
 * those of the last context it sampled there. Zero-initialised = none. */
typedef struct sk_sample_rest_memo {
  sk_sample_rest *rows, *next;
  size_t cap, count; /* count SIZE_MAX: none */
} sk_sample_rest_memo;

/* Whether the context `c` of a skeleton of `bones` bones writes the rest
 * rows `m` holds (then rows that hold m's still hold c's); when not, `m`
 * holds c's from now on, and the caller's rows must be written again.
 * False for a context with no fixed rest rows, and when memory runs out
 * (m then holds none: the rows are simply written as always). */
bool sk_sample_rest_memo_same(sk_sample_rest_memo *m, const sk_sample_ctx *c, size_t bones);
/* Whether `m` holds rest rows (the last context checked had fixed ones). */
static inline bool sk_sample_rest_memo_holds(const sk_sample_rest_memo *m) { return m->count != SIZE_MAX && m->rows != NULL; }
void sk_sample_rest_memo_close(sk_sample_rest_memo *m);

/* Where sk_sample_run writes. Component k (0..9: tx ty tz qx qy qz qw sx
 * sy sz) of bone b (bones[] order) for frame p goes to:
 *   offset == NULL:     p * B * 10 + b * 10 + k            (sk_anim TRS arrays)
 *   block_stride == 0:  offset[b] + k * pose_stride + p     (kernel rows)
 *   block_stride != 0:  offset[b] + (p / 16) * block_stride
 *                       + k * pose_stride + p % 16          (kernel blocked layout)
 * in elements of `f64` (exact: sk_kernel's TRS64 rows) or, when f64 is
 * NULL, of `f32` (rounded to float: sk_kernel's TRS rows). */
typedef struct sk_sample_out {
  double *f64;
  float *f32;
  const size_t *offset; /* B entries, or NULL */
  size_t pose_stride;
  size_t block_stride;
  /* Kernel rows only. true: the caller vouches that the rows of
   * sk_sample_ctx_rest's components already hold those values for the
   * frames of this run (an earlier run of a context with equal rest rows
   * wrote them, and nothing has written there since); a one-layer run then
   * skips them. Writing them costs about a tenth of a Fox frame. */
  bool rest_kept;
  /* Kernel rows, one layer only. true: only the components a channel of
   * the clip drives are written (a Babylon-format clip leaves the others
   * as the bone has them: the caller's rows hold the stored locals). */
  bool driven_only;
} sk_sample_out;

/* Samples frames [begin, end) at times `times[begin..end)` (seconds; a
 * frame range of from/to/fps is times[k] = from + k / fps) into `out`.
 * Frame p is written at index p, so a batch can be split into ranges, each
 * with its own context. The cursors make ascending times cheapest; any
 * order gives the same bits. Never allocates, never fails. */
void sk_sample_run(sk_sample_ctx *c, const double *times, size_t begin, size_t end, const sk_sample_out *out);

#endif
