#include "sk_clipbounds.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sk_frames.h"
#include "sk_json.h"
#include "sk_numfmt.h"
#include "sk_poseops.h"

/* The poses sampled for the range and the run's scratch, per frame and bone. */
#define HELD_PER_BONE 96

static uint64_t frames_at_most(const sk_model *e, size_t clip, double fps) {
  const double d = sk_anim_clip_duration(e->anim, clip) * fps;
  return d >= 0 && d < 1e15 ? (uint64_t)floor(d) + 2 : UINT64_MAX;
}

int sk_clipbounds_check(const sk_model *e, size_t clip, double fps, const sk_cost_limits *l, size_t *bound,
                        sk_error *err) {
  *bound = 0;
  if (e->geom == NULL || e->geom->nprims == 0)
    return sk_error_set(err, SK_ERANGE, "",
                        "this skeleton has no skinned mesh: upload its glTF file, whose nodes with this skin have "
                        "meshes, to ask for a clip's bounds");
  if (!(fps > 0 && fps <= SK_CLIPBOUNDS_FPS_MAX))
    return sk_error_set(err, SK_ERANGE, "fps", "fps must be a number in (0, %g]", SK_CLIPBOUNDS_FPS_MAX);
  for (uint32_t k = 0; k < e->geom->nprims; k++)
    if (e->geom->prims[k].unweighted >= 0)
      return sk_error_set(err, SK_ERANGE, "",
                          "vertex %lld of /meshes/%u/primitives/%u has no weight above 0: Babylon skins it to NaN",
                          (long long)e->geom->prims[k].unweighted, e->geom->prims[k].mesh, e->geom->prims[k].prim);
  const uint64_t frames = frames_at_most(e, clip, fps);
  if (frames > l->max_frames)
    return sk_error_set(err, SK_ETOOBIG, "fps",
                        "the clip at %g fps has up to %llu frames; the limit is %llu (--max-frames): lower fps", fps,
                        (unsigned long long)frames, (unsigned long long)l->max_frames);
  /* as sk_poseops_work prices a pose asking for "bounds" */
  const uint64_t per = (e->skel->count + 1) + e->geom->vertices * (1 + e->geom->max_targets / 4) + e->geom->nprims;
  if (l->max_work > 0 && per > 0 && frames > l->max_work / per)
    return sk_error_set(err, SK_ETOOBIG, "fps",
                        "%llu frames x %llu vertices of work is over the limit of %llu units (--max-work): lower fps",
                        (unsigned long long)frames, (unsigned long long)e->geom->vertices,
                        (unsigned long long)l->max_work);
  const size_t answer = 256 + (size_t)e->geom->nprims * (64 + 6 * (SK_NUMFMT_F32_MAX + 1)) +
                        6 * strlen(e->anim->clips[clip].name) + 2;
  *bound = answer + (size_t)frames * (e->skel->count + 1) * HELD_PER_BONE + sk_frames_run_bytes(e, true) +
           sk_frames_run_bytes(e, false);
  return 0;
}

static void grow(float *min, float *max, const float *bmin, const float *bmax) {
  for (int a = 0; a < 3; a++) {
    min[a] = fminf(min[a], bmin[a]);
    max[a] = fmaxf(max[a], bmax[a]);
  }
}

static int append_box(sk_strbuf *out, const float *min, const float *max) {
  return sk_strbuf_append(out, "\"min\":", 6) || sk_strbuf_append_f32_array(out, min, 3) ||
                 sk_strbuf_append(out, ",\"max\":", 7) || sk_strbuf_append_f32_array(out, max, 3)
             ? SK_ENOMEM
             : 0;
}

static int write_answer(const sk_model *e, size_t clip, double fps, size_t frames, const float *box, sk_strbuf *out) {
  const uint32_t np = e->geom->nprims;
  float min[3] = {INFINITY, INFINITY, INFINITY}, max[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (uint32_t k = 0; k < np; k++)
    grow(min, max, box + 6 * k, box + 6 * k + 3);
  char num[40], b[96];
  size_t len = sk_numfmt_f64(fps, num);
  num[len] = 0;
  int n = snprintf(b, sizeof b, ",\"fps\":%s,\"frames\":%zu,", num, frames);
  int rc = sk_strbuf_append(out, "{\"animation\":", 13) || sk_json_write_string(out, e->anim->clips[clip].name) ||
                   n < 0 || (size_t)n >= sizeof b || sk_strbuf_append(out, b, (size_t)n) ||
                   append_box(out, min, max) || sk_strbuf_append(out, ",\"bounds\":[", 11)
               ? SK_ENOMEM
               : 0;
  for (uint32_t k = 0; !rc && k < np; k++) {
    n = snprintf(b, sizeof b, "%s{\"primitive\":\"/meshes/%u/primitives/%u\",", k ? "," : "", e->geom->prims[k].mesh,
                 e->geom->prims[k].prim);
    rc = n < 0 || (size_t)n >= sizeof b || sk_strbuf_append(out, b, (size_t)n) ||
                 append_box(out, box + 6 * k, box + 6 * k + 3) || sk_strbuf_append(out, "}", 1)
             ? SK_ENOMEM
             : 0;
  }
  if (!rc && sk_strbuf_append(out, "]}", 2))
    rc = SK_ENOMEM;
  return rc || out->failed ? SK_ENOMEM : 0;
}

/* Unions the binary answers' boxes (each pose: B+1 matrices, then 6 floats
 * a primitive) of the whole range into box[6 x nprims]. */
static int union_frames(const sk_model *e, const sk_pose *poses, size_t n, float *box, sk_error *err) {
  const sk_frames_opts o = {.fmt = SK_FMT_F32};
  sk_frames_run run;
  if (sk_frames_run_init(&run, e, poses, n, &o) != 0)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  const size_t mats = (e->skel->count + 1) * 16, per = mats + 6 * (size_t)e->geom->nprims;
  sk_strbuf buf = {0};
  int rc = 0;
  while (!rc && !sk_frames_run_done(&run)) {
    buf.len = 0;
    rc = sk_frames_run_next(&run, &buf, 64u << 10);
    if (!rc && (buf.failed || buf.len % (per * sizeof(float)) != 0))
      rc = SK_ENOMEM;
    for (size_t at = 0; !rc && at < buf.len; at += per * sizeof(float)) {
      float f[6];
      for (uint32_t k = 0; k < e->geom->nprims; k++) {
        memcpy(f, buf.data + at + (mats + 6 * (size_t)k) * sizeof(float), sizeof f);
        grow(box + 6 * k, box + 6 * k + 3, f, f + 3);
      }
    }
  }
  if (rc == SK_ENOTFINITE)
    sk_error_set(err, rc, "", "a frame of the clip poses a vertex or bone past float32's range");
  else if (rc)
    sk_error_set(err, SK_ENOMEM, "", "out of memory");
  sk_strbuf_free(&buf);
  sk_frames_run_close(&run);
  return rc;
}

int sk_clipbounds_write(const sk_model *e, size_t clip, double fps, sk_strbuf *out, sk_error *err) {
  json_t *j = json_pack("{s:I,s:i,s:f,s:f,s:[s]}", "animation", (json_int_t)clip, "from", 0, "to",
                        sk_anim_clip_duration(e->anim, clip), "fps", fps, "output", "bounds");
  float *box = malloc(6 * (size_t)e->geom->nprims * sizeof *box);
  if (j == NULL || box == NULL) {
    json_decref(j);
    free(box);
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  }
  for (uint32_t k = 0; k < e->geom->nprims; k++)
    for (int a = 0; a < 3; a++) {
      box[6 * k + a] = INFINITY;
      box[6 * k + 3 + a] = -INFINITY;
    }
  sk_poseops *owner = NULL;
  sk_pose *poses = NULL;
  size_t n = 0;
  int rc = sk_poseops_sample(sk_frames_sample_default, e, j, "", SK_FMT_F32, &owner, &poses, &n, err);
  json_decref(j);
  if (!rc)
    rc = union_frames(e, poses, n, box, err);
  if (!rc)
    rc = write_answer(e, clip, fps, n, box, out);
  sk_pose_array_free(poses, n);
  sk_poseops_free(owner);
  free(box);
  return rc;
}
