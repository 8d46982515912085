/* sk_pose: one pose request (overrides on the stored locals, an initial
 * skin, the outputs asked) parsed from JSON, evaluated by the exact core,
 * written as a result object. Poses naming clips are sk_pose_anim.c's. */
#include "sk_pose.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "sk_json.h"
#include "sk_pose_int.h"
#include "sk_pose_range.h"

void sk_pose_close(sk_pose *pose) {
  if (!pose->overrides_shared)
    free(pose->overrides);
  sk_pose_range_unref(pose->range);
  memset(pose, 0, sizeof *pose);
}

int sk_pose_parse(const sk_skeleton *s, const json_t *j, const char *ptr, const char *const *extra_keys, sk_pose *pose,
                  sk_error *err) {
  static const char *const own[] = {"bones", "initialSkinMatrix", "output", NULL};
  char p[SK_ERROR_POINTER_MAX];
  memset(pose, 0, sizeof *pose);
  pose->output = SK_OUT_FINAL;
  if (!json_is_object(j))
    return sk_error_set(err, SK_ETYPE, ptr, "expected a pose object");
  int rc = sk_json_check_keys(j, ptr, own, extra_keys, err);
  if (rc)
    return rc;
  const json_t *bones = json_object_get(j, "bones");
  if (bones != NULL) {
    sk_pointer_child(p, sizeof p, ptr, "bones");
    if ((rc = sk_json_parse_overrides(s, bones, p, &pose->overrides, &pose->count, err)))
      return rc;
  }
  const json_t *ism = json_object_get(j, "initialSkinMatrix");
  if (ism != NULL && !json_is_null(ism)) {
    sk_pointer_child(p, sizeof p, ptr, "initialSkinMatrix");
    if ((rc = sk_json_floats(ism, 16, p, pose->initial_skin, err))) {
      sk_pose_close(pose);
      return rc;
    }
    pose->has_initial_skin = true;
  }
  sk_pointer_child(p, sizeof p, ptr, "output");
  if ((rc = sk_json_parse_output(json_object_get(j, "output"), p, &pose->output, err))) {
    sk_pose_close(pose);
    return rc;
  }
  return 0;
}


int sk_pose_buffers_init(sk_pose_buffers *b, size_t bones) {
  memset(b, 0, sizeof *b);
  size_t m = 16 * (bones + 1);
  b->bones = bones;
  b->locals = malloc(m * sizeof(float));
  b->scratch = malloc(m * sizeof(float));
  b->final = malloc(m * sizeof(float));
  b->absolute = malloc(m * sizeof(float));
  b->local = malloc(m * sizeof(float));
  if (!b->locals || !b->scratch || !b->final || !b->absolute || !b->local) {
    sk_pose_buffers_close(b);
    return SK_ENOMEM;
  }
  return 0;
}

void sk_pose_buffers_close(sk_pose_buffers *b) {
  free(b->locals);
  free(b->scratch);
  free(b->final);
  free(b->absolute);
  free(b->local);
  memset(b, 0, sizeof *b);
}

void sk_pose_evaluate(const sk_skeleton *s, const sk_pose *pose, sk_pose_buffers *buf) {
  assert(pose->range == NULL); /* range form: sk_pose_materialize first */
  const float *locals = NULL;
  if (pose->count > 0) {
    sk_skeleton_pose_locals(s, pose->overrides, pose->count, buf->locals);
    locals = buf->locals;
  }
  sk_skeleton_evaluate(s, locals, pose->has_initial_skin ? pose->initial_skin : NULL, buf->scratch,
                       (pose->output & SK_OUT_FINAL) ? buf->final : NULL,
                       (pose->output & SK_OUT_ABSOLUTE) ? buf->absolute : NULL,
                       (pose->output & SK_OUT_LOCAL) ? buf->local : NULL);
}

int sk_pose_write_json(const sk_skeleton *s, const sk_pose *pose, const sk_pose_buffers *buf,
                       const sk_f32_text *final_ref, sk_strbuf *out) {
  return sk_json_write_result_ref(out, s->count, (pose->output & SK_OUT_FINAL) ? buf->final : NULL, final_ref,
                                  (pose->output & SK_OUT_ABSOLUTE) ? buf->absolute : NULL,
                                  (pose->output & SK_OUT_LOCAL) ? buf->local : NULL);
}
