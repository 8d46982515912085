/* sk_shot_root: a root-motion bake through the daemon's pose-object path
 * (a model published from the file as an upload is, then the poses of
 * each chunk sampled, played in place and answered as a binary /pose
 * answer is), so the offline bytes cannot drift from the online ones. */
#include "sk_shot_root.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "sk_answer.h"
#include "sk_buf.h"
#include "sk_frames.h"
#include "sk_model.h"
#include "sk_poseops.h"
#include "sk_rootframes.h"

/* The pose object the daemon would be sent for frames [a, b); `opts`
 * (borrowed) is its "rootMotion". */
static json_t *pose_object(const sk_shot_root *r, json_t *opts, uint64_t a, uint64_t b) {
  json_t *j = json_pack("{s:I, s:b, s:f, s:[I,I], s:O}", "animation", (json_int_t)r->clip, "loop", r->loop, "fps",
                        r->fps, "frames", (json_int_t)a, (json_int_t)b, "rootMotion", opts);
  return j;
}

/* One chunk's poses answered in binary: per pose its matrices (to
 * `frames`), then the 64 bytes of its motion, which the line gives as the
 * daemon's JSON does. */
static int write_chunk(const sk_model *m, const sk_shot_root *r, json_t *opts, uint64_t a, uint64_t b, FILE *frames,
                       FILE *motion, sk_strbuf *bin, sk_strbuf *line, sk_error *err) {
  json_t *j = pose_object(r, opts, a, b);
  if (j == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  const int fmt = r->floats_per_matrix == 12 ? SK_FMT_MAT3X4 : SK_FMT_F32;
  sk_poseops *owner = NULL;
  sk_pose *poses = NULL;
  size_t np = 0;
  int rc = sk_poseops_sample(sk_frames_sample_range, m, j, "", fmt, &owner, &poses, &np, err);
  json_decref(j);
  const sk_frames_opts o = {.fmt = fmt, .precision = SK_FRAMES_EXACT, .threads = 1};
  sk_frames_run run;
  bin->len = 0;
  if (!rc && np != (size_t)(b - a))
    rc = sk_error_set(err, SK_EINVAL, "", "the range gave %zu poses for %" PRIu64 " frames", np, b - a);
  if (!rc && (rc = sk_frames_run_init(&run, m, poses, np, &o)) == 0) {
    while (!rc && !sk_frames_run_done(&run))
      rc = sk_frames_run_next(&run, bin, SIZE_MAX);
    sk_frames_run_close(&run);
    if (rc)
      rc = sk_error_set(err, rc, "", "%s", rc == SK_ENOTFINITE ? "a posed number is not finite" : sk_strerror(rc));
  } else if (!rc) {
    rc = sk_error_set(err, rc, "", "out of memory");
  }
  const size_t stride = np > 0 ? bin->len / np : 0, mats = stride - 8 * sizeof(double);
  if (!rc && (stride * np != bin->len || stride <= 8 * sizeof(double)))
    rc = sk_error_set(err, SK_EINVAL, "", "an answer of %zu bytes for %zu poses", bin->len, np);
  for (size_t i = 0; !rc && i < np; i++) {
    char head[48];
    int hl = snprintf(head, sizeof head, "{\"frame\":%" PRIu64 ",", a + i);
    line->len = 0;
    if (fwrite(bin->data + i * stride, 1, mats, frames) != mats)
      rc = sk_error_set(err, SK_EIO, "", "cannot write the frames");
    else if (sk_strbuf_append(line, head, (size_t)hl) || sk_rootframes_write_json(poses[i].ops->root_motion, line) ||
             sk_strbuf_append(line, "}\n", 2))
      rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
    else if (fwrite(line->data, 1, line->len, motion) != line->len)
      rc = sk_error_set(err, SK_EIO, "", "cannot write the root motion");
  }
  sk_pose_array_free(poses, np);
  sk_poseops_free(owner);
  return rc;
}

int sk_shot_root_write(const sk_skeleton *s, sk_anim *anim, const sk_shot_root *r, FILE *frames, FILE *motion,
                       sk_error *err) {
  json_error_t je;
  json_t *opts = r->options != NULL ? json_loads(r->options, JSON_REJECT_DUPLICATES, &je) : json_object();
  if (opts == NULL && r->options != NULL)
    return sk_error_set(err, SK_ESYNTAX, "/rootMotion", "--root-motion-options: %s", je.text);
  if (!json_is_object(opts)) {
    json_decref(opts);
    return sk_error_set(err, SK_ETYPE, "/rootMotion", "--root-motion-options: expected a JSON object");
  }
  sk_skeleton *copy = NULL;
  sk_model *m = NULL;
  int rc = sk_skeleton_clone(s, &copy) ? SK_ENOMEM : 0;
  if (!rc) /* steals the copy and the reference, on failure too */
    rc = sk_model_create(copy, sk_anim_ref(anim), r->mesh_json, NULL, -1, &m);
  if (rc)
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  sk_strbuf bin = {0}, line = {0};
  for (uint64_t a = r->first, end = r->first + r->frames; !rc && a < end; a += SK_SHOT_ROOT_CHUNK)
    rc = write_chunk(m, r, opts, a, end - a < SK_SHOT_ROOT_CHUNK ? end : a + SK_SHOT_ROOT_CHUNK, frames, motion, &bin,
                     &line, err);
  sk_strbuf_free(&bin);
  sk_strbuf_free(&line);
  sk_model_unref(m);
  json_decref(opts);
  return rc;
}
