/* sk_retarget_cmd: `skinner retarget`, the offline retargeting. A glTF clip
 * of one file retargeted onto the skin of another (sk_retarget, Babylon's
 * AnimatorAvatar.retargetAnimationGroup with its option names), written as
 * JSON in the shape tests/oracle/babylon_retarget.mjs prints Babylon's
 * answer, so the two compare number for number:
 *   {"name", "from", "to", "animations": [{"target", "property", "frames", "values"}]}
 * (property position|rotationQuaternion|scaling; values are Babylon's
 * doubles, shortest round trip). */
#ifndef SK_RETARGET_CMD_H
#define SK_RETARGET_CMD_H

#include "sk_anim.h"
#include "sk_buf.h"
#include "sk_skeleton.h"

/* The clip `c` (channels on bones of `s`) as JSON into `out`. SK_ENOMEM. */
int sk_retarget_cmd_write(const sk_anim_clip *c, const sk_skeleton *s, sk_strbuf *out);

/* skinner retarget SOURCE TARGET --clip NAME [--options JSON] [-o FILE]:
 * argv[0] is "retarget". Exit status: 0; 2 bad input (one line naming the
 * field: a JSON pointer into the options, or the file); 1 out of memory or
 * an I/O error. */
int sk_retarget_cmd_main(int argc, char **argv);

#endif
