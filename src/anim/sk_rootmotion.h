/* sk_rootmotion: the root motion of a clip as Babylon.js 9.34's
 * RootMotionClip analyses it (Animations/rootMotion.js), without playing
 * anything: where the travel comes from (the root bone's own position keys,
 * or the planted contacts of an in-place clip), how far a cycle carries the
 * character and how far it turns it, and the motion track sampled over the
 * cycle that getOffsetAtFrame / getRotationAtFrame read.
 *
 * Character space is the space of Babylon's `__root__` node: the bones'
 * local TRS composed up the parent chain, then the nodes between the
 * skeleton root and `__root__` (`above`, glTF TRS each, nearest first),
 * every product rounded to float as Babylon's Matrix does. Options keep
 * Babylon's names (IRootMotionClipOptions); rootNode and contactNodes are
 * bone positions. The analysis is made once per clip and never changes. */
#ifndef SK_ROOTMOTION_H
#define SK_ROOTMOTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_anim.h"
#include "sk_error.h"
#include "sk_skeleton.h"

enum { SK_RM_NONE = 0, SK_RM_ROOT = 1, SK_RM_FOOT_CONTACT = 2 };

/* Bounds on what an analysis may be asked to do (422 past them). */
#define SK_RM_MAX_SAMPLES_PER_SECOND 1000.0
#define SK_RM_MAX_SAMPLES 100000

typedef struct sk_rootmotion_opts {
  int source;                /* -1: try the root, then the contacts; SK_RM_ROOT / SK_RM_FOOT_CONTACT: forced */
  int extract_rotation;      /* -1: when a cycle turns >= minimum_turn; 0 / 1 */
  double samples_per_second; /* 60 */
  double minimum_travel;     /* share of the character height, 0.1 */
  double minimum_turn;       /* radians, PI / 18 */
  bool has_snap;             /* directionSnapAngle given */
  double direction_snap_angle;
  bool extract_lateral_motion;
  double up[3];              /* normalised by sk_rootmotion_analyze; (0,1,0) */
  int32_t root_node;         /* bone position, -1: Babylon's choice */
  const int32_t *contact_nodes; /* borrowed bone positions, or NULL: deduced */
  size_t contact_count;
  /* Appended: also build the in-place root channels (sk_rootmotion.inplace). */
  bool in_place;
} sk_rootmotion_opts;

/* Babylon's defaults. */
void sk_rootmotion_opts_default(sk_rootmotion_opts *o);

typedef struct sk_rootmotion {
  int source;
  int32_t root_node;  /* bone position, -1 when no bone has position keys */
  int32_t clock_node; /* the bone whose channel sets the range */
  int32_t *contacts;  /* owned; contact_count bone positions */
  size_t contact_count;
  double from_frame, to_frame, duration, character_height;
  bool extracts_rotation, pivots, removes_root_travel;
  double travel_direction[3], cycle_offset[3], cycle_rotation;
  double lateral_drift[3], up[3];
  size_t samples; /* the track holds samples + 1 rows of x, y, z, yaw */
  float *track;   /* owned */
  /* Appended, with opts.in_place: the root's channels of Babylon's in-place
   * group (_buildInPlaceGroup): the root's position keys (or, for a root
   * that only turns, keys at the track's frames) and, when the rotation is
   * extracted, its rotation keys, with the motion left out. `frames` and
   * `values` owned (doubles, as Babylon keeps the keys); count 0: the
   * source's channel plays as it is. Sampled by sk_rootmotion_inplace_at. */
  struct {
    int interp;
    size_t count;
    double *frames, *values;
    /* CUBICSPLINE: count * 2 * width, each key's in- and out-tangent in
     * Babylon's key units (per frame: the loader's tangent / 60, rewritten
     * with the curve); NULL otherwise */
    double *tangents;
  } inplace[2]; /* [0] position, [1] rotation */
} sk_rootmotion;

/* The in-place root's position (and, when rm extracts rotation, rotation)
 * at `frame` of the clip, as the in-place group's root channels evaluate
 * there; each left as it is where rm has no such channel. */
void sk_rootmotion_inplace_at(const sk_rootmotion *rm, double frame, double position[3], double rotation[4]);

/* Matrix products the analysis of clip `clip` costs with these options
 * (SIZE_MAX when it would overflow): what a caller reserves before it. */
size_t sk_rootmotion_cost(const sk_skeleton *s, const sk_anim *a, size_t clip, size_t above_count,
                          const sk_rootmotion_opts *o);

/* Analyses clip `clip` of `a` on skeleton `s` (`above`: above_count * 10
 * doubles, position, rotation quaternion, scaling per node, nearest the
 * skeleton root first). Bad options are SK_ERANGE naming the option
 * (pointer "/<option>"), a clip Babylon refuses SK_EFORMAT; SK_ENOMEM. On
 * success *out is filled (sk_rootmotion_free). */
int sk_rootmotion_analyze(const sk_skeleton *s, const sk_anim *a, size_t clip, const double *above, size_t above_count,
                          const sk_rootmotion_opts *o, sk_rootmotion *out, sk_error *err);
void sk_rootmotion_free(sk_rootmotion *rm);

/* getOffsetAtFrame / getRotationAtFrame: the travel (character space) and
 * the turn (radians) reached at `frame`, relative to the first frame. */
void sk_rootmotion_offset_at(const sk_rootmotion *rm, double frame, double out[3]);
double sk_rootmotion_rotation_at(const sk_rootmotion *rm, double frame);

/* RootMotionClip._motionBetween: the motion of a playback of [from, to]
 * between two progresses (frames since `from`, unwrapped: whole cycles
 * included, as the controller accumulates them over loops), as a turn
 * (returned, radians) and then a translation (`out`) in the character
 * space of the earlier progress. */
double sk_rootmotion_motion_between(const sk_rootmotion *rm, double from, double to, double last_progress,
                                    double progress, double out[3]);

/* "none", "root" or "footContact". */
const char *sk_rootmotion_source_name(int source);

#endif
