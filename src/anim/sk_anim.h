/* sk_anim: animation clips of one skeleton, sampled as Babylon.js samples
 * the animation groups its glTF loader builds.
 *
 * A clip holds translation/rotation/scale channels on bones (glTF channels
 * on joint nodes, and on the non-joint nodes that became bones). Babylon's
 * loader turns keyframe times into frames (time * 60), pads every channel
 * of a clip to [frame 0, clip end] with copies of its first and last keys
 * (AnimationGroup.normalize(0)), and AnimationGroup.goToFrame clamps each
 * channel to its keys; the clip keeps the keys in that form and samples
 * them with Babylon's Animation._interpolate: STEP holds the key before,
 * LINEAR lerps vectors and slerps quaternions along the shortest arc,
 * CUBICSPLINE evaluates the Hermite spline with tangents scaled by the key
 * interval (quaternions normalised). Like Babylon, a LINEAR slerp result is
 * not re-normalised: it is unit for unit keys, and keys that are not unit
 * (written with too few digits) scale the bone as they do in Babylon.
 *
 * Sampling yields, for every bone, the TRS Babylon's Skeleton.prepare()
 * copies from the bone's linked node: the node's rest TRS where no channel
 * of the clip drives it. sk_anim_to_overrides() turns those into
 * sk_override entries (position + rotationQuaternion + scaling) that
 * sk_skeleton applies with Babylon's setters. */
#ifndef SK_ANIM_H
#define SK_ANIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_error.h"
#include "sk_events.h"
#include "sk_buf.h"
#include "sk_skeleton.h"

/* Babylon's glTF loader default (GLTFFileLoader.targetFps). */
#define SK_ANIM_FPS 60.0

enum { SK_ANIM_TRANSLATION = 0, SK_ANIM_ROTATION = 1, SK_ANIM_SCALE = 2 };
enum { SK_ANIM_LINEAR = 0, SK_ANIM_STEP = 1, SK_ANIM_CUBICSPLINE = 2 };
/* Babylon-format clips only (sk_banim): a "_matrix" channel, 16 floats per
 * key in `values`, held at the key before the frame (Babylon's default
 * Animation.AllowMatricesInterpolation = false). sk_anim_sample() skips
 * these channels; sk_anim_sample_overrides() applies them. */
#define SK_ANIM_MATRIX 3
/* key_flags bits of a Babylon-format key. */
enum { SK_ANIM_KEY_STEP = 1u << 0, SK_ANIM_KEY_IN = 1u << 1, SK_ANIM_KEY_OUT = 1u << 2 };

/* Doubles per bone in a TRS array: position[3], rotation quaternion
 * [x, y, z, w], scaling[3]. */
#define SK_ANIM_TRS 10
/* Entries sk_anim_memo keeps per clips. */
#define SK_ANIM_MEMO_SLOTS 16

typedef struct sk_anim_channel {
  int32_t bone;   /* position in sk_skeleton.bones */
  int path;       /* SK_ANIM_TRANSLATION.. */
  int interp;     /* SK_ANIM_LINEAR.. */
  size_t count;   /* keys, padding included; >= 1 */
  double *frames; /* owned; count, non-decreasing (time * SK_ANIM_FPS) */
  float *values;  /* owned; count * width, or count * 3 * width for
                     CUBICSPLINE (in-tangent, value, out-tangent); for
                     SK_ANIM_MATRIX count * 16; NULL for Babylon TRS keys */
  /* Appended for Babylon-format clips (sk_banim); NULL/false for glTF. */
  double *values64;   /* owned; count * 3 * width doubles: value, in-tangent,
                         out-tangent per key (Babylon keeps keys as doubles) */
  uint8_t *key_flags; /* owned; count SK_ANIM_KEY_* bits, or NULL */
  bool relative;      /* loopBehavior RELATIVE: Babylon adds a zero offset */
  /* Appended: SK_ANIM_PAD_* for the keys AnimationGroup.normalize added
   * (they share the value object of their neighbour, which matters to
   * MakeAnimationAdditive). Set by sk_gltf; 0 elsewhere. */
  uint8_t pads;
} sk_anim_channel;
enum { SK_ANIM_PAD_START = 1u << 0, SK_ANIM_PAD_END = 1u << 1 };
/* pads bits of a Babylon-format channel (sk_banim), which keeps only the
 * keys its range reaches: what MakeAnimationAdditive reads of the others.
 * FIRST: key 0 is the animation's key 0 (frame 0); PAD0: keys 0 and 1 are
 * RuntimeAnimation's frame-0 key and the key it copies (one value object);
 * PAD1: key 0 is that copied key, its frame-0 twin cut away; EXTRA: not
 * the bone's first animation (Babylon puts ranges on that one only). */
enum { SK_ANIM_BPAD_FIRST = 1u << 2, SK_ANIM_BPAD_PAD0 = 1u << 3, SK_ANIM_BPAD_PAD1 = 1u << 4, SK_ANIM_BPAD_EXTRA = 1u << 5 };

typedef struct sk_anim_clip {
  char *name;                /* owned; the glTF name, or "animation<index>" */
  bool named;                /* false: the file gave no name */
  double end_frame;          /* last key of the clip over all its channels */
  size_t channel_count;      /* channels that drive bones of this skeleton */
  sk_anim_channel *channels; /* owned */
  size_t gltf_channels;      /* channels of the glTF animation, all targets */
  /* Appended for Babylon-format clips (sk_banim); fps == 0 for glTF clips.
   * A Babylon clip is a skeleton range [from_frame, to_frame]: time t plays
   * frame from_frame + t * fps, clamped to the range (wrapped with loop). */
  double fps;
  double from_frame, to_frame;
  /* Appended: the clip's AnimationEvents (sk_events: a Babylon
   * Animation's "events", a glTF clip's "markers"), owned; frames in the
   * clip's own frames (60 a second for glTF). */
  sk_events events;
} sk_anim_clip;

typedef struct sk_anim {
  size_t bone_count; /* = sk_skeleton.count */
  double *rest;      /* owned; bone_count * SK_ANIM_TRS, bones[] order */
  size_t clip_count;
  sk_anim_clip *clips; /* owned */
  int extra_refs;      /* atomic: holders beyond the first (sk_anim_ref) */
  /* Appended: clips from Babylon's own format (sk_banim). Only the bones a
   * clip drives are posed (Babylon leaves the others as they are), so such
   * clips are turned into poses by sk_anim_sample_overrides(). */
  bool babylon;
  /* Appended: the Babylon skeleton JSON text the clips were parsed from
   * (owned; a daemon upload keeps it to persist and retarget the clips), or
   * NULL. Counted by sk_anim_memory. */
  char *source;
  size_t source_len;
  /* Appended: something derived from the clips once and freed with them
   * by `derived_free` when the last reference goes: sk_sample's sampler of
   * every clip (sk_sampler_share), which the daemon builds at upload so a
   * request does not build one per range. Published once with an atomic
   * compare-and-swap, read with acquire loads; never changed after. */
  void *derived;
  void (*derived_free)(void *);
  /* Appended: the glTF channels' keys made additive against frame 0, the
   * additive layers' default reference (sk_anim_additive_share), built
   * once where the clips are published, as ozz-animation builds additive
   * clips offline; NULL until then. Published with a compare-and-swap,
   * read with acquire loads, never changed after. */
  struct sk_anim_additive *additive;
  /* Appended: the same for Babylon-format clips (sk_banim_add.h's
   * sk_banim_add_kept), or NULL. */
  struct sk_banim_add_kept *babylon_additive;
  /* Appended: other references' additive keys, made at first use
   * (sk_anim_memo.h): its slots, the budget they are counted in
   * (borrowed, or NULL) and its switch (atomics). */
  struct sk_anim_memo *memo[SK_ANIM_MEMO_SLOTS];
  struct sk_budget *memo_budget;
  bool memo_off;
  /* Appended: the glTF scene's nodes below `__root__` as Babylon's loader
   * makes them (owned, one block; NULL for Babylon-format clips), what
   * retargeting's checkHierarchy searches by name. */
  struct sk_anim_nodes *nodes;
} sk_anim;

/* The nodes of a loaded glTF scene below `__root__`, in one allocation:
 * every node (named as the loader names it: "node<index>" unnamed), a
 * skinned node twice (its transform node where the node is, its mesh
 * beside the skeleton root), a mesh's primitives when it has several
 * ("<name>_primitive<k>"), cameras and punctual lights. */
typedef struct sk_anim_nodes {
  size_t count;
  const char **names; /* count, into the block */
  int32_t *parents;   /* count: an index here, or -1 for `__root__` */
  size_t bone_count;
  int32_t *of_bone; /* bone_count: the bone's transform node here, or -1 */
  size_t bytes;     /* of the block */
} sk_anim_nodes;

/* A new block for `count` nodes, `bone_count` bones and `text` bytes of
 * names (written from sk_anim_nodes_text(), NUL-terminated each): names
 * NULL, parents and of_bone -1. free() it. NULL: out of memory. */
sk_anim_nodes *sk_anim_nodes_new(size_t count, size_t bone_count, size_t text);
/* Where the names of a block from sk_anim_nodes_new go. */
char *sk_anim_nodes_text(sk_anim_nodes *n);
/* A copy of `n` (NULL: *out NULL). 0 or SK_ENOMEM. */
int sk_anim_nodes_copy(const sk_anim_nodes *n, sk_anim_nodes **out);

/* *out = new Babylon-format clips of a `bone_count`-bone skeleton with no
 * clip yet: what keeps the source text of a Babylon skeleton uploaded
 * without animations (a later copyAnimationRange needs it). SK_ENOMEM. */
int sk_anim_create_babylon_empty(size_t bone_count, sk_anim **out);

/* Makes every clip's keys additive against reference 0 (what an additive
 * layer with the default reference plays) and keeps them with the clips:
 * glTF channels' keys as sk_anim_sample_layers_ext and sk_layers read
 * them, Babylon-format clips' layers (unmasked) as sk_banim_add makes
 * them, for the clips `s` (the skeleton of `a`; names the bones of the
 * Babylon checks) can make additive. Requests then read them instead of
 * making them per call or per request. Any thread, once per `a` (a second
 * call does nothing). SK_ETOOBIG (nothing kept: layers make their keys as
 * before) past `max_bytes`; SK_ENOMEM. */
#define SK_ANIM_ADDITIVE_SHARE_MAX (8u << 20)
int sk_anim_additive_share(sk_anim *a, const sk_skeleton *s, size_t max_bytes);
/* Bytes sk_anim_additive_share keeps (0 when it did not run). */
size_t sk_anim_additive_memory(const sk_anim *a);

/* Drops a reference; the last one frees `a` and everything it owns. Clips
 * are immutable once built, so versions of a stored skeleton share them.
 * NULL is a no-op. Any thread. */
void sk_anim_destroy(sk_anim *a);
/* Adds a reference (any thread); returns `a`. NULL is fine. */
sk_anim *sk_anim_ref(sk_anim *a);

/* Duration of clip `clip` in seconds (its last key time). */
double sk_anim_clip_duration(const sk_anim *a, size_t clip);

/* Finds a clip by name; an unnamed clip k also answers to "animation<k>"
 * (Babylon's name for it), and any clip to its decimal index "k".
 * Exact names win over the other two forms. Returns 0 or SK_ENOTFOUND. */
int sk_anim_find_clip(const sk_anim *a, const char *name, size_t *clip);

/* One clip sampled at one time for blending. `weight` > 0; weights are
 * normalised over the layers. With `loop`, time wraps into [0, end). */
typedef struct sk_anim_layer {
  size_t clip;
  double time; /* seconds */
  double weight;
  bool loop;
} sk_anim_layer;

/* What tools add to a layer (sk_anim_sample_layers_ext). A separate struct,
 * not new sk_anim_layer fields: callers fill sk_anim_layer field by field,
 * so fields they do not know would hold garbage. Zeroed: a plain layer. */
typedef struct sk_anim_layer_ext {
  bool additive;             /* MakeAnimationAdditive(clip, reference), played additively */
  double reference;          /* seconds: the additive reference frame (* SK_ANIM_FPS) */
  const float *bone_weights; /* borrowed; bone_count weights in [0, 1], or NULL: all 1 */
  /* Appended: an additive layer of a Babylon-format clip made once
   * (sk_banim_add_layer_make, borrowed), or NULL: made at every call. */
  const struct sk_banim_add_layer *babylon_add;
  /* Appended: 0, the clip plays at the layer's time as goToFrame(time *
   * fps) does; > 0, as Babylon's AnimationGroup.speedRatio plays it
   * (sk_anim__layer_frame). */
  double speed;
} sk_anim_layer_ext;

/* Writes the TRS of every bone (bone_count * SK_ANIM_TRS doubles into
 * `trs`) for clip `clip` at `time` seconds: rest TRS, then each channel in
 * file order (a later channel on the same bone and path wins, as in
 * Babylon). Time is clamped per channel to its keys; `loop` wraps it into
 * [0, clip end) first. Never fails; `clip` must be valid. */
void sk_anim_sample(const sk_anim *a, size_t clip, double time, bool loop, double *trs);

/* Blends `count` layers as Babylon's late animation bindings blend weighted
 * animation groups whose weights add up to 1: positions and scalings by the
 * normalised weights, rotations by cumulative slerp (q = slerp(q0, q1,
 * w1/(w0+w1)), then slerp(q, qi, wi/(w0+..+wi))) along the shortest arc (a
 * quaternion of the other sign is flipped first); a bone a clip does not
 * drive contributes its rest TRS. `scratch` holds bone_count *
 * SK_ANIM_TRS doubles. Fails with SK_ERANGE (nothing written) when a weight
 * is negative or non-finite or all are 0, or a clip index is invalid.
 *
 * sk_anim_sample_layers_ext: additive layers (after the others, in order,
 * weights not normalised):
 * the clip's keys become differences to its value at `reference` as
 * MakeAnimationAdditive makes them (vectors minus the reference, rotations
 * conjugate(normalize(reference)) * key; a key AnimationGroup.normalize
 * padded at the end shares its neighbour's value and is changed twice, as
 * in Babylon), and each path the clip drives is added as Babylon adds an
 * additive group: v += d * w, q = slerp(q, q * dq, w). With no weighted
 * layer the base is the rest TRS. `bone_weights` (masks): a weighted layer
 * contributes slerp/lerp(rest, its TRS, weight) for a bone (0: the rest,
 * like an AnimationGroupMask that drops the bone; fractions as
 * ozz-animation's per-joint weights with the rest pose filling in); an
 * additive layer adds with weight * bone weight. SK_ENOMEM when the additive
 * keys cannot be allocated. */
int sk_anim_sample_layers(const sk_anim *a, const sk_anim_layer *layers, size_t count, double *trs, double *scratch);
/* sk_anim_sample_layers with `ext[i]` for layer i (`ext` NULL: all plain). */
int sk_anim_sample_layers_ext(const sk_anim *a, const sk_anim_layer *layers, const sk_anim_layer_ext *ext, size_t count,
                              double *trs, double *scratch);

/* Turns a TRS array into bone_count overrides (position, rotation and
 * scaling set; one per bone, bones[] order) into `out`. */
void sk_anim_to_overrides(const sk_anim *a, const double *trs, sk_override *out);

/* Babylon-format clips: samples clip `clip` at `time` seconds (see
 * sk_anim_clip.fps) into bone_count overrides `out` (bones[] order, one
 * per bone): the mask holds exactly the paths the clip drives on that bone
 * (SK_OVERRIDE_MATRIX for "_matrix" channels; 0 for a bone it does not
 * drive), so everything else keeps its current value as in Babylon. `trs`
 * is bone_count * SK_ANIM_TRS scratch. Returns the number of driven bones. */
size_t sk_anim_sample_overrides(const sk_anim *a, size_t clip, double time, bool loop, double *trs, sk_override *out);

/* Where a Babylon-format channel's last sample fell: the key, and the
 * slerp's key-pair constants (acos of the keys' dot and 1 / sin of it) of
 * the interval it last slerped. A caller sampling one clip's frames in
 * order keeps one per channel of the clip (zero-initialised), so a frame
 * in the same interval or the next one finds its key without a search and
 * an interval's constants are computed once: the same bits as without. */
typedef struct sk_anim_cursor {
  size_t key, prep_key;
  bool has_key, has_prep;
  double prep[4];
} sk_anim_cursor;

/* sk_anim_sample with `cur` (the clip's channel_count cursors, or NULL)
 * carried from the previous frame of the same clip: the same bits. */
void sk_anim_sample_at(const sk_anim *a, size_t clip, double time, bool loop, double *trs, sk_anim_cursor *cur);

/* sk_anim_sample_overrides with `cur` (the clip's channel_count cursors,
 * or NULL) carried from the previous frame of the same clip. */
size_t sk_anim_sample_overrides_at(const sk_anim *a, size_t clip, double time, bool loop, double *trs,
                                   sk_override *out, sk_anim_cursor *cur);

/* Appends {"name", "index", "fps"?, "from"?, "to"?, "duration", "bones": [{"bone": name, "channels":
 * [{"path": "translation"|"rotation"|"scale"|"matrix", "interpolation", "keys": n, "frames": [...]}]}]}
 * for one clip: the animated bones (names from `s`, the skeleton the clips
 * belong to) and each channel's key frames (Babylon frames: seconds * fps).
 * SK_ENOMEM on failure. */
int sk_anim_write_clip_json(const sk_anim *a, const sk_skeleton *s, size_t clip, sk_strbuf *out);

/* Internal (sk_banim_add): one Babylon-format channel at `frame` as
 * Animation._interpolate after goToFrame's clamp (TRS: width doubles into
 * `out`; "_matrix": the held key, borrowed). */
void sk_anim__sample_babylon(const sk_anim_channel *ch, double frame, double *out);
const float *sk_anim__sample_matrix(const sk_anim_channel *ch, double frame);
/* Internal (sk_pose_range, sk_banim_blend, sk_sample): the held matrix
 * with a channel's cursor (NULL: none), and the frame a Babylon-format
 * clip plays at `time` (before each channel's own clamp), as
 * sk_anim_sample_overrides_at samples them. */
const float *sk_anim__sample_matrix_at(const sk_anim_channel *ch, double frame, sk_anim_cursor *cur);
double sk_anim__clip_frame(const sk_anim_clip *clip, double time, bool loop);
/* The frame a layer of speed ratio `speed` plays at `time` seconds:
 * sk_anim__clip_frame for 0; otherwise RuntimeAnimation.animate's frame
 * for an animatable started at elapsed 0 and now `time * 1000` ms in:
 * (ms * (fps * speed)) / 1000 frames from the clip's first frame, wrapped
 * into the clip's range with `loop` (JS %), its last frame past the end
 * without. glTF clips span frames [0, end] at 60 fps. */
double sk_anim__layer_frame(const sk_anim_clip *clip, double time, bool loop, double speed);
/* The same over frames [from, to] at `fps` (sk_sample's glTF clips). */
double sk_anim__speed_frame(double fps, double from, double to, double time, bool loop, double speed);
/* Layer `l`'s clip and loop at `time` (its own time unused) and speed
 * ratio `speed`, as sk_anim_sample_at samples it (cursors `cur`, NULL:
 * none). */
void sk_anim__sample_layer_at(const sk_anim *a, const sk_anim_layer *l, double speed, double time, double *trs,
                              sk_anim_cursor *cur);
/* Internal (sk_pose_range): a TRS channel at frames[0..m) (each as
 * sk_anim__sample_babylon gives it, in that order, with the one cursor
 * `cur`) into out[0 .. m * width); a rotation channel's slerp sines
 * computed together (sk_vsin: the same bits), when m <= SK_ANIM_RUN_MAX. */
#define SK_ANIM_RUN_MAX 64
/* The values a run of frames keeps, at most (or one frame's), in the
 * contexts that sample and blend runs (sk_banim_blend_run.c, sk_layers.c):
 * 64 KiB. With 256 KiB (two 120 KiB buffers for two layers of Fox) glibc
 * gave the freed heap back at every request and the next one faulted it
 * in again: 18 % of a range's time in page faults; runs of 64 frames or
 * 16 measured the same apart from that. */
#define SK_ANIM_RUN_BYTES (64u * 1024u)
void sk_anim__sample_babylon_run(const sk_anim_channel *ch, const double *frames, size_t m, double *out,
                                 sk_anim_cursor *cur);

/* Internal (sk_banim_blend, sk_sample): Quaternion.SlerpToRef of n pairs,
 * r_k = slerp(l + k * ls, q + k * qs, amount) into r + k * rs (strides in
 * doubles; 0 repeats one quaternion; r_k may be l_k or q_k): the dots one
 * after another, their acos and the three sines of each as arrays
 * (sk_vsin_acos, sk_vsin: fdlibm's bits, several per instruction), then
 * sk_anim__slerp_apply. Each r_k is sk_anim__quat_slerp's, bit for bit. */
void sk_anim__slerp_n(const double *l, size_t ls, const double *q, size_t qs, double amount, double *r, size_t rs,
                      size_t n);

/* Internal (sk_layers): a glTF channel's keys made additive against
 * `ref_frame` as sk_anim_sample_layers_ext makes them for an additive
 * layer (*out new: doubles in ch->values' layout; 0 or SK_ENOMEM), and a
 * glTF channel's value at `frame` read from such doubles. */
int sk_anim__additive_values(const sk_anim_channel *ch, double ref_frame, double **out);
/* Channel `k` of clip `clip` made additive against frame 0 by
 * sk_anim_additive_share (borrowed, lives with `a`), or NULL: not kept. */
const double *sk_anim__additive_ref0(const sk_anim *a, size_t clip, size_t k);
void sk_anim__sample_values(const sk_anim_channel *ch, const double *dv, double frame, double *out);

/* sk_anim__sample_values at frames[0..m) into out[0 .. m * width), with
 * the channel's cursor `cur` (zeroed for its first run): a LINEAR
 * rotation's keys found from the cursor and its slerp sines computed
 * together (sk_vsin), the same bits, when m <= SK_ANIM_RUN_MAX. */
void sk_anim__sample_values_run(const sk_anim_channel *ch, const double *dv, const double *frames, size_t m,
                                double *out, sk_anim_cursor *cur);

/* An additive layer's reference frame: options.referenceFrame when it is
 * >= 0, else 0 (NaN too). */
static inline double sk_anim__reference_frame(const sk_anim_layer_ext *x) {
  const double ref = x->reference * SK_ANIM_FPS;
  return ref >= 0 ? ref : 0;
}

/* An additive layer's weight on channel bone `bone`: its weight times the
 * bone's mask weight. */
static inline double sk_anim__additive_weight(const sk_anim_layer *l, const sk_anim_layer_ext *x, int32_t bone) {
  return l->weight * (x->bone_weights != NULL ? (double)x->bone_weights[bone] : 1.0);
}

/* Internal (sk_layers): the weighted blend's vector parts over n TRS
 * (positions and scalings; sk_anim_sample_layers_ext's loops): the first
 * layer's scaled by its weight, t *= w; a next layer's added, t += s * w. */
void sk_anim__scale_vectors(double *trs, size_t n, double w);
/* Internal (sk_layers): a weighted layer's bone weights on m frames of TRS
 * (bone_count * SK_ANIM_TRS doubles each, one after another): each bone
 * lerped and slerped from its rest TRS by its weight (1: as it is; 0: the
 * rest TRS), a bone's slerps of all frames at once (sk_anim__slerp_n). */
void sk_anim__apply_bone_weights(const sk_anim *a, const float *bw, double *trs, size_t m);
void sk_anim__add_vectors(double *trs, const double *s, size_t n, double w);

/* Internal (sk_layers, sk_sample and their callers): whether the weighted
 * layers of `layers` (ext NULL: all plain) blend with the plain blend's
 * bits (every layer's weight over the total, vectors summed, a cumulative
 * slerp over all of them), so a context may blend them at once. Babylon's
 * late bindings, which sk_anim_sample_layers_ext follows, blend per bone
 * and path only the layers that drive it, mixing in the rest value when
 * their total is under 1: the same bits when every weighted layer drives
 * the same paths, the weights add up to exactly 1 (or over 1 with three
 * or more layers) and no layer has a mask (or one weighted layer), the
 * paths none drives set to their rest values after the blend. False also
 * when out of memory. */
bool sk_anim__blend_plain(const sk_anim *a, const sk_anim_layer *layers, const sk_anim_layer_ext *ext, size_t count);

/* Internal (sk_layers, sk_sample): which paths of each bone weighted
 * layer `l` drives, bits[b] |= 1 << path (a _matrix channel: all three;
 * none where `mask`, if not NULL, is 0). */
void sk_anim__layer_drives(const sk_anim *a, const sk_anim_layer *l, const float *mask, uint8_t *bits);
/* Internal (sk_layers, sk_sample): Babylon's late animation bindings over
 * nw >= 2 weighted layers, src[k] (TRS of every bone, masks applied) of
 * normalised weight w[k] driving drives[k * bone_count + b], into trs:
 * per bone and path only the layers that drive it, with their total T
 * (under 1: the rest value mixed in with 1 - T; else weights over T;
 * rotations by cumulative slerp, two of T >= 1 in one slerp, one from the
 * rest by min(1, T)); paths none drives keep the rest value. v and ws:
 * scratch of nw. */
/* A weighted layer's weight in sk_anim__late_blend, of the weighted
 * layers' total weight `total` (> 0): as given when the total is 1 or more
 * (Babylon's group weights: it normalises them target by target), else
 * normalised (weights under 1 together are scaled up, not mixed with the
 * rest pose); then at most 1, as Babylon's Animatable.weight setter clamps
 * it, so (7, 3) blends as (1, 1). */
static inline double sk_anim__late_weight(double weight, double total) {
  const double w = total >= 1.0 ? weight : weight / total;
  return w > 1.0 ? 1.0 : w;
}
void sk_anim__late_blend(const sk_anim *a, const double *const *src, const double *w, const uint8_t *drives, size_t nw,
                         const double **v, double *ws, double *trs);
/* sk_anim__late_blend with the targets' original values `orig` (bone_count
 * * SK_ANIM_TRS) in place of the rest pose: what the nodes held when the
 * groups started (a blend's snapshot). */
void sk_anim__late_blend_from(const sk_anim *a, const double *orig, const double *const *src, const double *w,
                              const uint8_t *drives, size_t nw, const double **v, double *ws, double *trs);

/* Bytes held by `a` (for cache accounting). */
size_t sk_anim_memory(const sk_anim *a);

/* Appends [{"index": k, "name": "...", "duration": s, "fps"?, "from"?, "to"?,
 * "channels": n, "keys": n}, ...] ("channels": the channels driving this
 * skeleton; "keys": their keys together, padding included; fps/from/to for
 * Babylon ranges). SK_ENOMEM on failure. */
int sk_anim_write_clips_json(const sk_anim *a, sk_strbuf *out);

#endif
