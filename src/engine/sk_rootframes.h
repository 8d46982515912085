/* sk_rootframes: root motion per frame on the pose forms (issue 34).
 *
 * A pose object with "animation" may carry "rootMotion": {options}, the
 * options of GET .../animations/{clip}/rootMotion as JSON members under
 * Babylon's names (source, extractRotation, samplesPerSecond,
 * minimumTravel, minimumTurn, directionSnapAngle, extractLateralMotion,
 * rootNode, contactNodes). Every pose of the object then plays the clip
 * as Babylon 9.34's RootMotionClip.animationGroup plays it, in place (the
 * root's channels rewritten by _buildInPlaceGroup), and its answer carries
 * the character's motion in character space: the offset and turn since
 * the clip's start (progress 0) and since the frame before, as
 * RootMotionClip._motionBetween gives them to RootMotionController,
 * accumulated across loop cycles (proto/rootmotion.md). */
#ifndef SK_ROOTFRAMES_H
#define SK_ROOTFRAMES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "sk_model.h"
#include "sk_pose.h"
#include "sk_rootmotion.h"

#define SK_ROOTFRAMES_CONTACTS_MAX 64
/* Doubles of one pose's motion: offset[3], turn, delta offset[3], delta turn. */
#define SK_ROOTFRAMES_VALUES 8

typedef struct sk_rootframes {
  size_t clip;
  sk_rootmotion rm; /* owned: the analysis with its in-place channels */
  /* What it was asked with (the memo's key): the options, their contacts
   * (o.contact_nodes points here), and the bytes it holds. */
  sk_rootmotion_opts o;
  int32_t contacts[SK_ROOTFRAMES_CONTACTS_MAX];
  size_t bytes;
} sk_rootframes;


/* Parses the "rootMotion" member of pose object `j` (at `ptr`) of model
 * `e` and gives the clip's analysis for those options: the one `e` keeps
 * (*owned false: borrowed, the model outlives its poses), else made now
 * and kept when the model has a free slot of its SK_MODEL_ROOTFRAMES and
 * its budget has room, else *owned true (sk_rootframes_free). *out NULL
 * when the clip is unknown (the sampler refuses it). Errors name the
 * member below <ptr>/rootMotion (422), or the pose's fields it does not go
 * with ("layers", "bones", a Babylon-format clip). Any thread. */
int sk_rootframes_parse(const sk_model *e, const json_t *j, const char *ptr, sk_rootframes **out, bool *owned,
                        sk_error *err);
/* The analysis of clip `clip` with options `o` (contacts copied): the one
 * `e` keeps (an in-place one also answers `o` without in_place), else
 * made now and kept as above (*owned true when not). Errors are
 * sk_rootmotion_analyze's (pointers from the root: "/samplesPerSecond").
 * Any thread. */
int sk_rootframes_get(const sk_model *e, size_t clip, const sk_rootmotion_opts *o, sk_rootframes **out, bool *owned,
                      sk_error *err);
/* The kept analysis sk_rootframes_get would give, or NULL (borrowed). */
sk_rootframes *sk_rootframes_find(const sk_model *e, size_t clip, const sk_rootmotion_opts *o);
void sk_rootframes_free(sk_rootframes *rf);
/* Frees what sk_model `m` keeps of sk_rootframes_parse (its last reference). */
void sk_rootframes_memo_release(sk_model *m);
/* Analyses `m` keeps now (tests, metrics). */
size_t sk_rootframes_memo_count(const sk_model *m);

/* Work units the "rootMotion" of pose object `j` adds (its analysis), or
 * 0 without one. */
uint64_t sk_rootframes_cost(const sk_skeleton *s, const sk_anim *anim, const json_t *j);

/* The in-place poses: poses[0..n) of pose object `j` (sampled by
 * sk_pose_parse_anim, one override per bone) get the in-place root, and
 * values[i * SK_ROOTFRAMES_VALUES ..] each pose's motion. 0, SK_ENOMEM. */
int sk_rootframes_apply(const sk_rootframes *rf, const sk_anim *anim, const json_t *j, sk_pose *poses, size_t n,
                        double *values);

/* One pose's motion as the JSON member "rootMotion":{...} (appended). */
int sk_rootframes_write_json(const double *v, sk_strbuf *out);

#endif
