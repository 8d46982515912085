/* The Bone API's per-frame cost in `skinner bench --clips`: a frame range
 * of Fox's Walk evaluated as skinnerd's pose routes evaluate it (the
 * stored entry, sk_poseops_sample with the default clip sampler, then
 * sk_frames_eval), without ops and with foot IK (plus the "positions"
 * output a viewer draws), in the same run, CPU time, medians. Without ops
 * the range takes the batch kernel; with ops every frame is a scratch copy,
 * the IK update and the scalar core. */
#include "sk_bench_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sk_frames.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_poseops.h"
#include "sk_bench_time.h"

/* Median CPU microseconds per frame of pose request `body` answered in `fmt`. */
static double time_request(const sk_model *e, const char *body, int fmt, int reps, size_t *frames) {
  json_t *j = json_loads(body, 0, NULL);
  double us[31] = {0};
  sk_frames_scratch sc = {0};
  const sk_frames_opts fo = {.fmt = fmt};
  *frames = 0;
  for (int k = 0; k < reps && j != NULL; k++) {
    double t0 = sk_bench_cpu_s();
    sk_poseops *owner = NULL;
    sk_pose *poses = NULL;
    size_t n = 0;
    sk_strbuf out = {0};
    if (sk_poseops_sample(sk_frames_sample_range, e, j, "", fmt, &owner, &poses, &n, NULL) == 0) {
      if (fmt != SK_FMT_JSON)
        for (size_t i = 0; i < n; i++)
          poses[i].output = SK_OUT_FINAL;
      sk_frames_eval(e, poses, n, &fo, &sc, &out);
    }
    us[k] = (sk_bench_cpu_s() - t0) * 1e6 / (double)(n ? n : 1);
    *frames = n;
    sk_pose_array_free(poses, n);
    sk_poseops_free(owner);
    sk_strbuf_free(&out);
  }
  sk_frames_scratch_close(&sc);
  json_decref(j);
  qsort(us, (size_t)reps, sizeof *us, sk_bench_cmp_double);
  return us[reps / 2];
}

static int load_fox(const char *dir, sk_model **m) {
  char path[4096];
  snprintf(path, sizeof path, "%s/Fox.glb", dir);
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return SK_EIO;
  sk_strbuf d = {0};
  char buf[65536];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0)
    sk_strbuf_append(&d, buf, got);
  fclose(f);
  sk_skeleton *s = NULL;
  sk_anim *an = NULL;
  int rc = d.failed ? SK_ENOMEM : sk_gltf_import(d.data, d.len, NULL, 0, &s, &an, NULL);
  sk_strbuf_free(&d);
  if (!rc)
    return sk_model_create(s, an, NULL, NULL, -1, m);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
  return rc;
}

int sk_bench_ops_fox(const char *dir, bool quick, bool json, bool first) {
  sk_model *model = NULL;
  if (load_fox(dir, &model) != 0) {
    fprintf(stderr, "skinner bench --clips: cannot load %s/Fox.glb for the ops rows\n", dir);
    return 2;
  }
  const sk_model *e = model;
  /* Walk 0..0.7 s, 1024 frames; the IK target is the left foot lifted, as
   * tests/gltf/ctrl's real-asset case (Babylon's glTF answer) */
  static const char *const k_bodies[3] = {
      "{\"animation\":\"Walk\",\"from\":0,\"to\":0.7,\"fps\":1461.43}",
      "{\"animation\":\"Walk\",\"from\":0,\"to\":0.7,\"fps\":1461.43,"
      "\"ops\":[{\"op\":\"ik\",\"bone\":\"b_LeftLeg02_016\",\"target\":[-4,30,-50]}]}",
      "{\"animation\":\"Walk\",\"from\":0,\"to\":0.7,\"fps\":1461.43,\"output\":[\"final\",\"positions\"],"
      "\"ops\":[{\"op\":\"ik\",\"bone\":\"b_LeftLeg02_016\",\"target\":[-4,30,-50]}]}"};
  static const char *const k_rows[3] = {"range", "range+ik", "ik+pos"};
  const int reps = quick ? 3 : 9;
  const int fmts[2] = {SK_FMT_F32, SK_FMT_JSON};
  for (int f = 0; f < 2; f++) {
    size_t frames = 0;
    double base = 0;
    for (int r = 0; r < 3; r++) {
      double us = time_request(e, k_bodies[r], fmts[f], reps, &frames);
      if (r == 0)
        base = us;
      const char *fmt = f == 0 ? "f32" : "json";
      if (json)
        printf("%s{\"clip\":\"Fox.glb:Walk\",\"row\":\"ops-%s-%s\",\"bones\":%zu,\"frames\":%zu,\"us_per_frame\":%.4g,"
               "\"ratio\":%.4g,\"rate\":%.6g}",
               first && f == 0 && r == 0 ? "" : ",", k_rows[r], fmt, e->bone_count, frames, us, us / base,
               (double)e->bone_count * 1e6 / us);
      else
        printf("%-22s %-7s %6zu %14.2f %8s  (us per frame, %s, %zu frames through sk_frames; x%.2f the plain range)\n",
               "Fox.glb:Walk", k_rows[r], e->bone_count, us, "-", fmt, frames, us / base);
    }
  }
  sk_model_unref(model);
  return 0;
}
