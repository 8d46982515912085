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
  bool loop;
  sk_rootmotion rm; /* owned: the analysis with its in-place channels */
} sk_rootframes;

/* The nodes between the skeleton root and `__root__` of the default mesh
 * chain `mesh_json` (sk_model.mesh_json, may be NULL), nearest first:
 * *above new (n * SK_ANIM_TRS doubles; free), *n of them. 0, SK_ENOMEM. */
int sk_rootframes_above(const char *mesh_json, double **above, size_t *n);

/* Parses the "rootMotion" member `rj` of pose object `j` (at `ptr`) of
 * model `e` and analyses the clip: *out new (sk_rootframes_free). Errors
 * name the member below <ptr>/rootMotion (422), or the pose's fields it
 * does not go with ("layers", "bones", a Babylon-format clip). */
int sk_rootframes_parse(const sk_model *e, const json_t *j, const char *ptr, sk_rootframes **out, sk_error *err);
void sk_rootframes_free(sk_rootframes *rf);

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
