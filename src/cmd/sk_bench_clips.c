/* `skinner bench --clips`: the clip pipeline's rates on real clips, in
 * bone matrices per CPU-second (per core):
 *   sample   sk_sample alone (TRS of every bone, doubles)
 *   exact    sk_sample + the exact scalar core (Babylon's bits)
 *   kernel   sk_sample straight into the batch kernel's TRS rows + the kernel
 *   route    the daemon's pose route without HTTP: a 1024-frame range
 *            parsed and sampled into poses, answered in binary (sk_frames)
 *   ceiling  the most exact sampling + the exact kernel can make here:
 *            1 / (sines per bone-frame x one sin + the kernel alone), the
 *            sine timed with sk_vsin on the clip's own slerp arguments
 * on Fox's Walk (24 bones), mannequiny's walk (45) and rig65's Wave (65
 * bones, tests/data/gltf/make_rig65.py),
 * and `skinner frames` writing the same frames to a file (page cache) over
 * computing them in memory. Frames k/fps of the clip, looping, in chunks
 * of 256 as `skinner frames` runs them. make bench-clips adds Babylon.js's
 * rate on the same clips (tests/oracle/bench_clips.mjs) and the ratios. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sk_anim_memo.h"
#include "sk_bench_ops.h"
#include "sk_clips.h"
#include "sk_fdlibm.h"
#include "sk_frames.h"
#include "sk_shot.h"
#include "sk_vsin.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_bench_time.h"

#include "sk_bench.h"

#define BC_CHUNK 256
#define BC_TARGET 100e6 /* bone matrices per second per core (issue 12) */

typedef struct bc_asset {
  const char *file, *clip;
  char path[4096];
  sk_skeleton *s;
  sk_anim *an;
  sk_sampler *sp;
  sk_rig *rig;
  size_t clip_index;
  double times[BC_CHUNK];
} bc_asset;

static int import_file(const char *path, sk_skeleton **s, sk_anim **an, sk_error *err) {
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return sk_error_set(err, SK_ENOTFOUND, "", "cannot open %s (give --data DIR)", path);
  sk_strbuf d = {0};
  char buf[65536];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0)
    sk_strbuf_append(&d, buf, got);
  fclose(f);
  int rc = d.failed ? SK_ENOMEM : sk_gltf_import(d.data, d.len, NULL, 0, s, an, err);
  sk_strbuf_free(&d);
  return rc;
}

static int load(bc_asset *a, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, a->file);
  snprintf(a->path, sizeof a->path, "%s", path);
  sk_error err;
  sk_error_clear(&err);
  int rc = import_file(path, &a->s, &a->an, &err);
  if (!rc && sk_anim_find_clip(a->an, a->clip, &a->clip_index) != 0)
    rc = SK_ENOTFOUND;
  if (!rc)
    rc = sk_sampler_create(a->an, &a->sp);
  if (!rc)
    rc = sk_rig_create(a->s, &a->rig);
  if (rc)
    fprintf(stderr, "skinner bench --clips: %s: %s %s\n", path, sk_strerror(rc), err.text);
  return rc ? 2 : 0;
}

static void unload(bc_asset *a) {
  sk_rig_destroy(a->rig);
  sk_sampler_destroy(a->sp);
  sk_anim_destroy(a->an);
  sk_skeleton_destroy(a->s);
}

enum { BC_SAMPLE, BC_EXACT, BC_KERNEL, BC_BLEND, BC_ROUTE, BC_CEILING, BC_ROWS };
static const char *const k_row[BC_ROWS] = {"sample", "exact", "kernel", "blend", "route", "ceiling"};
/* The blend row: the clip and itself BC_BLEND_OFFSET s later, half each
 * (two phases of a cycle, as a walk/run blend has), through the kernel. */
#define BC_BLEND_OFFSET 0.37

/* ---- the ceiling of exact sampling ---------------------------------------
 * Babylon's bits need V8's sin (sk_fdlibm_sin, computed in SIMD lanes by
 * sk_vsin with the same bits): two per LINEAR rotation channel and frame
 * (the slerp's sin((1-t)θ) and sin(tθ); acos and 1/sin θ are per key
 * interval). The ceiling row is 1 / (s * t_sin + t_kernel): s sines per
 * bone-frame of the clip, t_sin one sine of sk_vsin on the clip's own slerp
 * arguments, t_kernel the exact kernel's time per bone matrix on rows
 * already sampled, all measured in this run. */

#define BC_SIN_ARGS 4096

/* The clip's slerp arguments at the bench's frames (60 fps, looping), in
 * sampling order: (1 - t)θ and tθ of every LINEAR rotation channel whose
 * keys are not nearly equal (Babylon's slerp has no sine there). */
static size_t clip_sin_args(const bc_asset *a, double *arg) {
  const sk_anim_clip *c = &a->an->clips[a->clip_index];
  size_t n = 0;
  for (size_t f = 0; f < 100000 && n + 2 <= BC_SIN_ARGS; f++) {
    const double frame = c->end_frame > 0 ? fmod((double)f, c->end_frame) : 0;
    for (size_t i = 0; i < c->channel_count && n + 2 <= BC_SIN_ARGS; i++) {
      const sk_anim_channel *ch = &c->channels[i];
      if (ch->path != SK_ANIM_ROTATION || ch->interp != SK_ANIM_LINEAR || ch->count < 2)
        continue;
      size_t k = 0;
      while (k + 2 < ch->count && ch->frames[k + 1] <= frame)
        k++;
      const double t = frame <= ch->frames[k] ? 0 : frame >= ch->frames[k + 1] ? 1 :
                       (frame - ch->frames[k]) / (ch->frames[k + 1] - ch->frames[k]);
      const float *q0 = ch->values + 4 * k, *q1 = q0 + 4;
      double dot = fabs((double)q0[0] * q1[0] + (double)q0[1] * q1[1] + (double)q0[2] * q1[2] + (double)q0[3] * q1[3]);
      if (dot > 0.999999)
        continue;
      const double theta = sk_fdlibm_acos(dot);
      arg[n++] = (1 - t) * theta;
      arg[n++] = t * theta;
    }
  }
  return n;
}

/* Seconds per sine of sk_vsin over the clip's slerp arguments, best of
 * reps (0 when the clip has none). */
static double time_sin(const bc_asset *a, int reps) {
  static double arg[BC_SIN_ARGS], out[BC_SIN_ARGS];
  const size_t n = clip_sin_args(a, arg);
  if (n == 0)
    return 0;
  double best = 1, acc = 0;
  for (int k = 0; k < reps; k++) {
    double t0 = sk_bench_cpu_s();
    for (int r = 0; r < 1000; r++) {
      sk_vsin(arg, out, n);
      acc += out[r % n];
    }
    double dt = (sk_bench_cpu_s() - t0) / (1000.0 * (double)n);
    best = dt < best ? dt : best;
  }
  return acc == 12345.0 ? best * 2 : best; /* keeps acc alive */
}

/* Sines per bone-frame: the LINEAR rotation channels that win (a later one
 * on the same bone and path overrides), two sines each. */
static double sines_per_bone(const bc_asset *a) {
  const sk_anim_clip *c = &a->an->clips[a->clip_index];
  size_t rot = 0;
  for (size_t i = 0; i < c->channel_count; i++) {
    const sk_anim_channel *ch = &c->channels[i];
    bool shadowed = false;
    for (size_t j = i + 1; j < c->channel_count; j++)
      shadowed |= c->channels[j].bone == ch->bone && c->channels[j].path == ch->path;
    rot += !shadowed && ch->path == SK_ANIM_ROTATION && ch->interp == SK_ANIM_LINEAR && ch->count > 1;
  }
  return 2.0 * (double)rot / (double)(a->s->count ? a->s->count : 1);
}

/* Seconds per bone matrix of the exact kernel alone (TRS64 rows sampled
 * once), median of reps: slices of frames as sk_clips_finals runs it. */
static double time_kernel(bc_asset *a, int reps, double budget) {
  sk_anim_layer l = {.clip = a->clip_index, .weight = 1, .loop = true};
  sk_sample_ctx *c = NULL;
  sk_clips_runner r;
  memset(&r, 0, sizeof r);
  const size_t nb = a->s->count;
  float *fin = aligned_alloc(64, (BC_CHUNK * (nb + 1) * 16 * sizeof(float) + 63) / 64 * 64);
  double per[31] = {0};
  if (fin != NULL && sk_sample_ctx_create(a->sp, &l, 1, &c) == 0 &&
      sk_clips_runner_init(&r, a->s, a->rig, SK_CLIPS_KERNEL, BC_CHUNK) == 0) {
    for (size_t i = 0; i < BC_CHUNK; i++)
      a->times[i] = (double)i / 60.0;
    sk_clips_finals(&r, c, a->times, BC_CHUNK, NULL, fin);
    sk_kernel_job job; /* the modes sk_clips_finals planned for this clip */
    sk_clips_kernel_job(&r, NULL, fin, &job);
    for (int k = 0; k < reps && sk_kernel_validate(&job, NULL) == 0; k++) {
      size_t runs = 0;
      double t0 = sk_bench_cpu_s(), t = 0;
      do {
        sk_kernel_run(&job, 0, r.slice);
        runs++;
      } while ((t = sk_bench_cpu_s() - t0) < budget);
      per[k] = t / ((double)runs * (double)r.slice * (double)nb);
    }
    qsort(per, (size_t)reps, sizeof *per, sk_bench_cmp_double);
  }
  free(fin);
  sk_sample_ctx_destroy(c);
  sk_clips_runner_close(&r);
  return per[reps / 2];
}

/* The daemon's pose route without HTTP: one frame range of BC_ROUTE_FRAMES
 * frames parsed and sampled (sk_frames_sample_range, the routes' sample
 * step) and answered in binary float32 (sk_frames_eval), on a model
 * as an upload builds it (sk_model_create). */
#define BC_ROUTE_FRAMES 1024

/* The rate of `fn` (a routes' sample step) and sk_frames_eval on the pose
 * request `body` to the model `e`: median of `reps`, each about
 * `budget` s. */
static double time_route_body(const sk_model *e, const char *body, sk_frames_sample_fn fn, int reps,
                              double budget) {
  json_t *j = json_loads(body, 0, NULL);
  sk_frames_scratch sc = {0};
  sk_strbuf out = {0};
  const sk_frames_opts o = {.fmt = SK_FMT_F32};
  double rates[31] = {0};
  for (int k = 0; k < reps && j != NULL; k++) {
    size_t frames = 0;
    double t0 = sk_bench_cpu_s(), t = 0;
    do {
      sk_pose *poses;
      size_t n;
      if (fn(e->skel, e->anim, j, "", NULL, &poses, &n, NULL) != 0)
        break;
      out.len = 0;
      sk_frames_eval(e, poses, n, &o, &sc, &out);
      sk_pose_array_free(poses, n);
      frames += n;
    } while ((t = sk_bench_cpu_s() - t0) < budget);
    rates[k] = t > 0 ? (double)frames * (double)e->skel->count / t : 0;
  }
  qsort(rates, (size_t)reps, sizeof *rates, sk_bench_cmp_double);
  json_decref(j);
  sk_strbuf_free(&out);
  sk_frames_scratch_close(&sc);
  return rates[reps / 2];
}

/* The same for BC_ROUTE_FRAMES frames of clip `clip` (looping, 60 fps);
 * `blend`: two layers, the clip and itself BC_BLEND_OFFSET s later, half
 * each (weights 1 and 1, normalised). */
static double time_route_entry(const sk_model *e, size_t clip, bool blend, sk_frames_sample_fn fn, int reps,
                               double budget) {
  char body[512];
  const double to = (BC_ROUTE_FRAMES - 1) / 60.0;
  if (blend)
    snprintf(body, sizeof body,
             "{\"layers\": [{\"animation\": %zu, \"weight\": 1, \"loop\": true}, {\"animation\": %zu, "
             "\"time\": %.17g, \"weight\": 1, \"loop\": true}], \"from\": 0, \"to\": %.17g, \"fps\": 60}",
             clip, clip, BC_BLEND_OFFSET, to);
  else
    snprintf(body, sizeof body, "{\"animation\": %zu, \"from\": 0, \"to\": %.17g, \"fps\": 60, \"loop\": true}", clip,
             to);
  return time_route_body(e, body, fn, reps, budget);
}

static double time_route(const bc_asset *a, int reps, double budget) {
  sk_skeleton *s;
  sk_anim *an;
  sk_model *model = NULL;
  if (import_file(a->path, &s, &an, NULL) != 0)
    return 0;
  sk_sampler_share(an, SK_SAMPLER_SHARE_MAX); /* as an upload's pool job builds it */
  if (sk_model_create(s, an, NULL, NULL, -1, &model) != 0)
    return 0;
  const sk_model *e = model;
  const double rate = time_route_entry(e, a->clip_index, false, sk_frames_sample_range, reps, budget);
  sk_model_unref(model);
  return rate;
}

/* ---- glTF layers with a bone mask or an additive layer ---------------------
 * Fox's Walk with Survey over it, masked to the upper body (the subtree of
 * b_Spine01_02) or added (reference 0, weight 0.5), through the daemon's
 * sample step and answer (sk_layers' runs), against the plain two-layer blend of Walk and Run that
 * sk_sample's blocks take, in the same run. Then one pose of each, the
 * per-call cost of a single pose (the frame path: what a request pays
 * besides the frame, such as making an additive layer's keys): the
 * additive one against the plain one, in the same run, at reference 0
 * (its keys made once at upload, sk_anim_additive_share), at 0.01 s with
 * the clips' memo off (made per call, what every reference other than 0
 * cost before sk_anim_memo) and at 0.01 s kept at first use (sk_anim_memo). */
#define BC_ADDITIVE_KEPT 1.5
static int layer_rows(const char *dir, int reps, double budget, bool json) {
  char path[4096];
  snprintf(path, sizeof path, "%s/Fox.glb", dir);
  sk_skeleton *s;
  sk_anim *an;
  sk_model *model = NULL;
  if (import_file(path, &s, &an, NULL) != 0) {
    fprintf(stderr, "skinner bench --clips: %s: cannot load it\n", path);
    return 2;
  }
  sk_sampler_share(an, SK_SAMPLER_SHARE_MAX); /* as an upload's pool job builds them */
  sk_anim_additive_share(an, s, SK_ANIM_ADDITIVE_SHARE_MAX);
  if (sk_model_create(s, an, NULL, NULL, -1, &model) != 0)
    return 2;
  const sk_model *e = model;
  char body[3][512];
  const double to = (BC_ROUTE_FRAMES - 1) / 60.0;
  snprintf(body[0], sizeof body[0],
           "{\"layers\": [{\"animation\": \"Walk\", \"weight\": 1, \"loop\": true}, {\"animation\": \"Run\", "
           "\"time\": 0.3, \"weight\": 1, \"loop\": true}], \"from\": 0, \"to\": %.17g, \"fps\": 60}",
           to);
  snprintf(body[1], sizeof body[1],
           "{\"layers\": [{\"animation\": \"Walk\", \"weight\": 1, \"loop\": true}, {\"animation\": \"Survey\", "
           "\"weight\": 1, \"loop\": true, \"mask\": {\"bone\": \"b_Spine01_02\", \"subtree\": true}}], "
           "\"from\": 0, \"to\": %.17g, \"fps\": 60}",
           to);
  snprintf(body[2], sizeof body[2],
           "{\"layers\": [{\"animation\": \"Walk\", \"weight\": 1, \"loop\": true}, {\"animation\": \"Survey\", "
           "\"additive\": true, \"reference\": 0, \"weight\": 0.5, \"loop\": true}], \"from\": 0, \"to\": %.17g, "
           "\"fps\": 60}",
           to);
  static const char *const one[3] = {
      "{\"layers\": [{\"animation\": \"Walk\", \"time\": 0.3, \"weight\": 1}, {\"animation\": \"Run\", "
      "\"time\": 0.6, \"weight\": 1}]}",
      "{\"layers\": [{\"animation\": \"Walk\", \"time\": 0.3, \"weight\": 1}, {\"animation\": \"Survey\", "
      "\"time\": 0.3, \"additive\": true, \"reference\": 0, \"weight\": 0.5}]}",
      "{\"layers\": [{\"animation\": \"Walk\", \"time\": 0.3, \"weight\": 1}, {\"animation\": \"Survey\", "
      "\"time\": 0.3, \"additive\": true, \"reference\": 0.01, \"weight\": 0.5}]}"};
  static const char *const row[7] = {"layers",     "masked",      "additive",   "layers-1",
                                     "additive-1", "additive-1r", "additive-1m"};
  double rate[7];
  for (int k = 0; k < 7; k++) {
    sk_anim_memo_set_off(an, k == 5); /* additive-1r: the keys made per call */
    rate[k] = time_route_body(e, k < 3 ? body[k] : one[k == 6 ? 2 : k - 3], sk_frames_sample_range, reps, budget);
  }
  /* Keys made at upload against keys made per call, same run: the target
   * is BC_ADDITIVE_KEPT times the per-call rate. */
  const double kept = rate[5] > 0 ? rate[4] / rate[5] : 0;
  const double memo = rate[5] > 0 ? rate[6] / rate[5] : 0;
  for (int k = 0; k < 7; k++) {
    const double of = rate[k < 3 ? 0 : 3] > 0 ? rate[k] / rate[k < 3 ? 0 : 3] : 0;
    if (json && (k == 4 || k == 6))
      printf(",{\"clip\":\"Fox.glb:Walk\",\"row\":\"%s\",\"bones\":%zu,\"rate\":%.6g,\"of_one\":%.4f,"
             "\"of_per_call\":%.4f}",
             row[k], e->skel->count, rate[k], of, k == 4 ? kept : memo);
    else if (json)
      printf(",{\"clip\":\"Fox.glb:Walk\",\"row\":\"%s\",\"bones\":%zu,\"rate\":%.6g,\"%s\":%.4f}", row[k],
             e->skel->count, rate[k], k < 3 ? "of_layers" : "of_one", of);
    else
      printf("%-22s %-7s %6zu %14.2f %8s  (route; %s; %.2f of the %s row)\n", "Fox.glb:Walk", row[k],
             e->skel->count, rate[k] / 1e6,
             k != 4 && k != 6                        ? "-"
             : (k == 4 ? kept : memo) >= BC_ADDITIVE_KEPT ? "PASS"
                                                          : "MISS",
             k == 0   ? "Walk and Run 0.3 s later, half each"
             : k == 1 ? "Survey over the upper body"
             : k == 2 ? "Survey added, 0.5"
             : k == 3 ? "one pose of Walk and Run"
             : k == 4 ? "one pose, Survey added (reference 0: keys made at upload)"
             : k == 5 ? "one pose, Survey added against 0.01 s (keys made per call)"
                      : "one pose, Survey added against 0.01 s (keys kept at first use)",
             of, k < 3 ? "plain two-layer" : "one-pose plain");
  }
  if (!json)
    printf("%-22s %-7s %6s %14s %8s  (additive-1 over additive-1r: x%.2f, target >= %.1f)\n", "Fox.glb:Walk", "kept", "",
           "", kept >= BC_ADDITIVE_KEPT ? "PASS" : "MISS", kept, BC_ADDITIVE_KEPT);
  if (!json)
    printf("%-22s %-7s %6s %14s %8s  (additive-1m over additive-1r: x%.2f, target >= %.1f)\n", "Fox.glb:Walk", "memo", "",
           "", memo >= BC_ADDITIVE_KEPT ? "PASS" : "MISS", memo, BC_ADDITIVE_KEPT);
  sk_model_unref(model);
  return 0;
}

/* ---- a clip in Babylon's own format -----------------------------------------
 * tests/data/fox-walk-babylon.json: Fox's Walk as a skeleton in Babylon's
 * format with bone animations (tests/oracle/make_babylon_clip.mjs), its
 * range through the daemon's sample step (the range form: sampled straight
 * into the kernel's rows) and, as the baseline of the same run, through
 * sk_frames_sample_default (one override per driven bone and frame, what
 * the daemon did before the range form took these clips). */
#define BC_BABYLON_FILE "fox-walk-babylon.json"
/* The same clip with Hermite keys, then with STEP keys: the skeletons of
 * tests/conformance/banim_fox_keys.jsonl (tests/oracle/gen_banim_fox_keys.py),
 * found beside the data directory. */
#define BC_BABYLON_KEYS "../conformance/banim_fox_keys.jsonl"

/* The model of the Babylon-format skeleton `j` (not consumed) in *m and
 * the index of its clip "Walk"; 2 when it does not load (*m untouched). */
static int babylon_model(const json_t *j, sk_model **m, size_t *clip) {
  sk_skeleton *s = NULL;
  sk_anim *an = NULL;
  if (j == NULL || sk_json_parse_skeleton_anim(j, "", 0, &s, &an, NULL) != 0 || an == NULL ||
      sk_anim_find_clip(an, "Walk", clip) != 0) {
    sk_anim_destroy(an);
    sk_skeleton_destroy(s);
    return 2;
  }
  return sk_model_create(s, an, NULL, NULL, -1, m) != 0 ? 2 : 0;
}

/* The Hermite and STEP forms of the clip: their range form's rate over the
 * plain clip's (`plain`), in the same run. Skipped when the file is not
 * beside the data directory. */
static void babylon_keys_rows(const char *dir, double plain, int reps, double budget, bool json) {
  static const char *const kinds[] = {"hermite", "step"};
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, BC_BABYLON_KEYS);
  FILE *f = fopen(path, "r");
  json_error_t je;
  for (int k = 0; f != NULL && k < 2; k++) {
    json_t *rec = json_loadf(f, JSON_DISABLE_EOF_CHECK, &je);
    sk_model *model = NULL;
    size_t clip;
    if (babylon_model(json_object_get(json_object_get(rec, "case"), "skeleton"), &model, &clip) == 0) {
      const sk_model *e = model;
      const double rate = time_route_entry(e, clip, false, sk_frames_sample_range, reps, budget);
      const double of = plain > 0 ? rate / plain : 0;
      if (json)
        printf(",{\"clip\":\"%s:Walk\",\"row\":\"%s\",\"bones\":%zu,\"rate\":%.6g,\"of_plain\":%.4f}", BC_BABYLON_FILE,
               kinds[k], e->skel->count, rate, of);
      else
        printf("%-22s %-7s %6zu %14.2f %8s  (Babylon's format, every key %s: %.2f of the route row)\n",
               BC_BABYLON_FILE ":Walk", kinds[k], e->skel->count, rate / 1e6, "-", k == 0 ? "with tangents" : "STEP",
               of);
      sk_model_unref(model);
    }
    json_decref(rec);
    /* the reader stopped at the end of the record, before its newline */
    for (int c; f != NULL && (c = fgetc(f)) != EOF && c != '\n';)
      ;
  }
  if (f != NULL)
    fclose(f);
  else if (!json)
    printf("%-22s %-7s %6s %14s %8s  (skipped: no %s)\n", BC_BABYLON_FILE ":Walk", "hermite", "-", "-", "-", path);
}

static int babylon_rows(const char *dir, int reps, double budget, bool json) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, BC_BABYLON_FILE);
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  sk_model *model = NULL;
  size_t clip;
  const int rc = babylon_model(j, &model, &clip);
  json_decref(j);
  if (rc) {
    fprintf(stderr, "skinner bench --clips: %s: cannot load it\n", path);
    return rc;
  }
  const sk_model *e = model;
  const double range = time_route_entry(e, clip, false, sk_frames_sample_range, reps, budget);
  const double ovr = time_route_entry(e, clip, false, sk_frames_sample_default, reps, budget);
  const double blend = time_route_entry(e, clip, true, sk_frames_sample_range, reps, budget);
  const double of = ovr > 0 ? range / ovr : 0;
  const char *name = BC_BABYLON_FILE ":Walk";
  const double of_route = range > 0 ? blend / range : 0;
  if (json)
    printf(",{\"clip\":\"%s\",\"row\":\"route\",\"bones\":%zu,\"rate\":%.6g,\"overrides_rate\":%.6g,"
           "\"of_overrides\":%.4f},{\"clip\":\"%s\",\"row\":\"blend\",\"bones\":%zu,\"rate\":%.6g,"
           "\"of_route\":%.4f}",
           name, e->skel->count, range, ovr, of, name, e->skel->count, blend, of_route);
  else
    printf("%-22s %-7s %6zu %14.2f %8s  (Babylon's format; %.2fx the override form's %.2f M/s)\n"
           "%-22s %-7s %6zu %14.2f %8s  (Babylon's format, two layers: the clip and itself %.2f s later, half "
           "each; %.2f of the route row)\n",
           name, "route", e->skel->count, range / 1e6, "-", of, ovr / 1e6, name, "blend", e->skel->count, blend / 1e6,
           "-", BC_BLEND_OFFSET, of_route);
  sk_model_unref(model);
  babylon_keys_rows(dir, range, reps, budget, json);
  return 0;
}

/* Median over `reps` of chunks/CPU-second, each rep about `budget` s. */
static double time_row(bc_asset *a, int row, int reps, double budget) {
  sk_anim_layer l[2] = {{.clip = a->clip_index, .weight = 1, .loop = true},
                        {.clip = a->clip_index, .weight = 1, .time = BC_BLEND_OFFSET, .loop = true}};
  sk_sample_ctx *c = NULL;
  sk_clips_runner r;
  memset(&r, 0, sizeof r);
  const size_t nb = a->s->count;
  float *fin = aligned_alloc(64, (BC_CHUNK * (nb + 1) * 16 * sizeof(float) + 63) / 64 * 64);
  double *trs = malloc(BC_CHUNK * nb * SK_ANIM_TRS * sizeof *trs);
  if (fin == NULL || trs == NULL || sk_sample_ctx_create(a->sp, l, row == BC_BLEND ? 2 : 1, &c) != 0 ||
      (row != BC_SAMPLE &&
       sk_clips_runner_init(&r, a->s, a->rig, row == BC_EXACT ? SK_CLIPS_EXACT : SK_CLIPS_KERNEL, BC_CHUNK) != 0)) {
    free(fin);
    free(trs);
    sk_sample_ctx_destroy(c);
    sk_clips_runner_close(&r);
    return 0;
  }
  double rates[31];
  size_t frame = 0;
  for (int k = 0; k < reps; k++) {
    size_t chunks = 0;
    double t0 = sk_bench_cpu_s(), t;
    do {
      for (size_t i = 0; i < BC_CHUNK; i++)
        a->times[i] = (double)(frame++) / 60.0;
      if (row == BC_SAMPLE) {
        sk_sample_out o = {.f64 = trs};
        sk_sample_run(c, a->times, 0, BC_CHUNK, &o);
      } else {
        sk_clips_finals(&r, c, a->times, BC_CHUNK, NULL, fin);
      }
      chunks++;
    } while ((t = sk_bench_cpu_s() - t0) < budget);
    rates[k] = (double)chunks * BC_CHUNK * (double)nb / t;
  }
  qsort(rates, (size_t)reps, sizeof *rates, sk_bench_cmp_double);
  free(fin);
  free(trs);
  sk_sample_ctx_destroy(c);
  sk_clips_runner_close(&r);
  return rates[reps / 2];
}

/* Seconds to write `bytes` from memory into a fresh file at `path` (page
 * cache) in fwrite calls of `chunk` bytes, as `skinner frames`' writer
 * thread does, computing nothing: the transfer alone. */
static double time_bare_write(const char *path, const float *buf, size_t chunk, size_t bytes) {
  struct timespec t0, t1;
  FILE *f = fopen(path, "wb"); /* its truncation outside the timing, as for the file row */
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (size_t at = 0; f != NULL && at < bytes; at += chunk) {
    size_t n = bytes - at < chunk ? bytes - at : chunk;
    if (fwrite(buf, 1, n, f) != n)
      break;
  }
  if (f != NULL)
    fclose(f);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}

/* `skinner frames` to a file in page cache over the same shot computed in
 * memory (out = NULL), and the bare write of its bytes (write_rate, in
 * bone matrices per second), wall clock, medians, alternated repetition by
 * repetition; the file is removed. */
static double frames_file_ratio(bc_asset *a, int reps, double *mem_rate, double *file_rate, double *write_rate) {
  sk_shot sh;
  memset(&sh, 0, sizeof sh);
  sh.skel = a->s;
  sh.sampler = a->sp;
  sh.rig = a->rig;
  sh.layers[0] = (sk_anim_layer){.clip = a->clip_index, .weight = 1, .loop = true};
  sh.layer_count = 1;
  sh.fps = 60;
  sh.frames = 16384;
  sh.characters = 1;
  sh.floats_per_matrix = 16;
  sh.engine = SK_CLIPS_KERNEL;
  char path[] = "/tmp/skinner-bench-clips-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0)
    return 0;
  close(fd);
  double mem[31] = {0}, file[31] = {0}, bare[31] = {0};
  const size_t chunk = BC_CHUNK * (a->s->count + 1) * 16 * sizeof(float);
  float *buf = calloc(1, chunk);
  struct timespec t0, t1;
  for (int k = 0; buf != NULL && k < reps; k++) {
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sk_shot_write(&sh, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    mem[k] = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    FILE *f = fopen(path, "wb");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (f != NULL) {
      sk_shot_write(&sh, f);
      fclose(f);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    file[k] = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    bare[k] = time_bare_write(path, buf, chunk, sh.frames * (a->s->count + 1) * 16 * sizeof(float));
  }
  free(buf);
  unlink(path);
  qsort(mem, (size_t)reps, sizeof *mem, sk_bench_cmp_double);
  qsort(file, (size_t)reps, sizeof *file, sk_bench_cmp_double);
  qsort(bare, (size_t)reps, sizeof *bare, sk_bench_cmp_double);
  double bm = (double)sh.frames * (double)a->s->count;
  *mem_rate = bm / mem[reps / 2];
  *file_rate = bm / file[reps / 2];
  *write_rate = bm / bare[reps / 2];
  return mem[reps / 2] / file[reps / 2];
}

/* The kernel row of the asset's other clips named in `names` (rig65's
 * CUBICSPLINE and STEP copies of its LINEAR clip: the sampler's groups of
 * those kinds), each over the LINEAR clip's kernel row `linear` of this
 * run. Not a target: it shows those kinds cost what LINEAR does. */
static void interp_rows(bc_asset *a, double linear, int reps, double budget, bool json) {
  static const char *const names[] = {"WaveCubic", "WaveStep"};
  const size_t keep = a->clip_index;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (sk_anim_find_clip(a->an, names[i], &a->clip_index) != 0)
      continue;
    const double rate = time_row(a, BC_KERNEL, reps, budget), of = linear > 0 ? rate / linear : 0;
    char name[128];
    snprintf(name, sizeof name, "%s:%s", a->file, names[i]);
    if (json)
      printf(",{\"clip\":\"%s\",\"row\":\"interp\",\"bones\":%zu,\"rate\":%.6g,\"of_linear\":%.4f}", name,
             a->s->count, rate, of);
    else
      printf("%-22s %-7s %6zu %14.2f %8s  (kernel row; %.2f of the LINEAR clip's)\n", name, "interp", a->s->count,
             rate / 1e6, "-", of);
  }
  a->clip_index = keep;
}

int sk_bench_clips_main(int argc, char **argv) {
  bool json = false, quick = false;
  const char *dir = "tests/data";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      json = true;
    else if (strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
      dir = argv[++i];
    else if (strcmp(argv[i], "--clips") != 0) {
      fprintf(stderr, "usage: skinner bench --clips [--json] [--quick] [--data DIR]\n");
      return 2;
    }
  }
  bc_asset assets[3] = {{.file = "Fox.glb", .clip = "Walk"},
                        {.file = "mannequiny-0.3.0.glb", .clip = "0"},
                        {.file = "gltf/rig65.gltf", .clip = "Wave"}};
  const int reps = quick ? 3 : 7;
  const double budget = quick ? 0.05 : 0.2;
  if (!json)
    printf("%-22s %-7s %6s %14s %8s  (bone matrices per CPU-second; target >= %.0f M)\n", "clip", "row", "bones",
           "M/s per core", "target", BC_TARGET / 1e6);
  else
    printf("[");
  int status = 0;
  for (int k = 0; k < 3; k++) {
    bc_asset *a = &assets[k];
    if (load(a, dir) != 0) {
      status = 2;
      break;
    }
    char name[128];
    snprintf(name, sizeof name, "%s:%s", a->file, a->an->clips[a->clip_index].name);
    double kernel_rate = 0;
    for (int row = 0; row < BC_ROWS; row++) {
      if (row == BC_CEILING) {
        double t_sin = time_sin(a, reps), spb = sines_per_bone(a), t_kernel = time_kernel(a, reps, budget);
        double rate = t_kernel > 0 ? 1 / (spb * t_sin + t_kernel) : 0;
        if (json)
          printf(",{\"clip\":\"%s\",\"row\":\"ceiling\",\"bones\":%zu,\"rate\":%.6g,\"sin_ns\":%.4g,"
                 "\"sines_per_bone\":%.4g,\"kernel_ns\":%.4g}",
                 name, a->s->count, rate, t_sin * 1e9, spb, t_kernel * 1e9);
        else
          printf("%-22s %-7s %6zu %14.2f %8s  (1 / (%.2f sin per bone x %.2f ns + kernel %.2f ns))\n", name, "ceiling",
                 a->s->count, rate / 1e6, "-", spb, t_sin * 1e9, t_kernel * 1e9);
        continue;
      }
      double rate = row == BC_ROUTE ? time_route(a, reps, budget) : time_row(a, row, reps, budget);
      kernel_rate = row == BC_KERNEL ? rate : kernel_rate;
      const char *verdict = row == BC_SAMPLE || row == BC_BLEND ? "-" : rate >= BC_TARGET ? "PASS" : "MISS";
      if (json)
        printf("%s{\"clip\":\"%s\",\"row\":\"%s\",\"bones\":%zu,\"rate\":%.6g}", k || row ? "," : "", name, k_row[row],
               a->s->count, rate);
      else
        printf("%-22s %-7s %6zu %14.2f %8s\n", name, k_row[row], a->s->count, rate / 1e6, verdict);
    }
    interp_rows(a, kernel_rate, reps, budget, json);
    double mem = 0, file = 0, wr = 0, ratio = frames_file_ratio(a, reps, &mem, &file, &wr);
    /* What a writer overlapping the computation on a second core could
     * reach: the slower of the two (docs/clips.md, "The file row against
     * the bare write"). */
    const double bound = mem < wr ? mem : wr, share = bound > 0 ? file / bound : 0;
    if (json)
      printf(",{\"clip\":\"%s\",\"row\":\"frames-file\",\"bones\":%zu,\"rate\":%.6g,\"mem_rate\":%.6g,\"ratio\":%.4f,"
             "\"write_rate\":%.6g,\"bound\":%.6g,\"of_bound\":%.4f}",
             name, a->s->count, file, mem, ratio, wr, bound, share);
    else
      printf("%-22s %-7s %6zu %14.2f %8s  (skinner frames to a file, wall: %.1f %% of the in-memory %.2f M/s; "
             "bare write %.2f M/s; %.2f of the slower of the two, target >= 0.9)\n",
             name, "file", a->s->count, file / 1e6, share >= 0.9 ? "PASS" : "MISS", 100 * ratio, mem / 1e6, wr / 1e6,
             share);
    unload(a);
  }
  if (status == 0)
    status = layer_rows(dir, reps, budget, json);
  if (status == 0)
    status = babylon_rows(dir, reps, budget, json);
  if (status == 0) /* the Bone API's per-frame cost (sk_bench_ops) */
    status = sk_bench_ops_fox(dir, quick, json, false);
  if (json)
    printf("]\n");
  return status;
}
