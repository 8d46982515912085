/* `make bench-json`: the JSON batch answer against a copy of its bytes
 * (issue 36). Not a test.
 *
 *   tests/bench/json_bench [--reps N] [--rows batch,frames,array]
 *
 * The 65-bone skeleton of tests/bench/http_bench.py and a batch of 64 poses
 * in two shapes: each pose moving one bone (upperArm.L, as the HTTP bench's
 * batch row: 23 of the 66 matrices a pose differ from the stored pose's and
 * are printed, the rest copied from its text) and 64 animation frames (a
 * rotation on every bone: every float printed). Per row: the answer built
 * by sk_frames_eval into a fresh buffer (as the daemon does per request),
 * against memcpy of the same bytes into a fresh buffer, in alternating
 * rounds, medians; ns per float, answer MB/s, and the ratio copy/answer
 * with PASS/MISS against the goal (JSON_BENCH_GOAL below). The "array"
 * rows print the frames' floats with each writer this CPU has
 * (sk_strbuf_append_f32_array_on), no reference text.
 *
 * For instruction counts (valgrind has no AVX-512: the generic writer):
 *   valgrind --tool=callgrind --toggle-collect=answer_once tests/bench/json_bench --reps 20 --rows batch
 * then the total Ir / 20 / 2 rounds is one batch answer. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sk_frames.h"
#include "sk_json.h"
#include "sk_model.h"
#include "sk_pose.h"

#define BONES 65
#define BATCH 64
/* The goal: the answer at least this fraction of the copy's speed. */
#define JSON_BENCH_GOAL 0.25

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t rng_state = UINT64_C(0x9E3779B97F4A7C15);
static double uniform(double lo, double hi) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return lo + (hi - lo) * (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* quat_axis_angle of http_bench.py, rounded to 6 places as there. */
static void quat_text(char *dst, size_t cap, double ax, double ay, double az, double angle) {
  const double n = sqrt(ax * ax + ay * ay + az * az), s = sin(angle / 2) / n;
  snprintf(dst, cap, "[%.6f,%.6f,%.6f,%.6f]", ax * s, ay * s, az * s, cos(angle / 2));
}

static int nbones;
static char names[BONES][24];

static void add_bone(sk_strbuf *b, const char *name, int parent, double x, double y, double z) {
  char q[128], t[512];
  quat_text(q, sizeof q, 0.3, 1, 0.2, 0.1 * (nbones % 7 - 3));
  snprintf(names[nbones], sizeof names[nbones], "%s", name);
  char par[40] = "null";
  if (parent >= 0)
    snprintf(par, sizeof par, "\"%s\"", names[parent]);
  snprintf(t, sizeof t, "%s{\"name\":\"%s\",\"parent\":%s,\"position\":[%g,%g,%g],\"rotationQuaternion\":%s}",
           nbones ? "," : "", name, par, x, y, z, q);
  sk_strbuf_append(b, t, strlen(t));
  nbones++;
}

/* skeleton65() of http_bench.py. */
static void skeleton_text(sk_strbuf *b) {
  sk_strbuf_append(b, "{\"bones\":[", 10);
  add_bone(b, "hips", -1, 0, 1, 0);
  int p = 0;
  for (int i = 0; i < 4; i++) {
    char n[16];
    snprintf(n, sizeof n, "spine%d", i);
    add_bone(b, n, p, 0, 0.12, 0);
    p = nbones - 1;
  }
  const int chest = p;
  add_bone(b, "neck", chest, 0, 0.1, 0);
  add_bone(b, "head", nbones - 1, 0, 0.1, 0);
  const int head = nbones - 1;
  add_bone(b, "jaw", head, 0, -0.03, 0.05);
  add_bone(b, "headTop", head, 0, 0.12, 0);
  static const char *const fingers[] = {"thumb", "index", "middle", "ring", "little"};
  for (int side = 0; side < 2; side++) {
    const char *sd = side ? "R" : "L";
    const double sx = side ? -1 : 1;
    char n[32];
    snprintf(n, sizeof n, "shoulder.%s", sd);
    add_bone(b, n, chest, sx * 0.08, 0.05, 0);
    snprintf(n, sizeof n, "upperArm.%s", sd);
    add_bone(b, n, nbones - 1, sx * 0.1, 0, 0);
    snprintf(n, sizeof n, "lowerArm.%s", sd);
    add_bone(b, n, nbones - 1, sx * 0.28, 0, 0);
    snprintf(n, sizeof n, "hand.%s", sd);
    add_bone(b, n, nbones - 1, sx * 0.25, 0, 0);
    const int hand = nbones - 1;
    for (int f = 0; f < 5; f++) {
      int q = hand;
      for (int j = 0; j < 4; j++) {
        snprintf(n, sizeof n, "%s%d.%s", fingers[f], j, sd);
        add_bone(b, n, q, sx * 0.03, 0, 0.01 * j);
        q = nbones - 1;
      }
    }
    snprintf(n, sizeof n, "upperLeg.%s", sd);
    add_bone(b, n, 0, sx * 0.1, -0.05, 0);
    snprintf(n, sizeof n, "lowerLeg.%s", sd);
    add_bone(b, n, nbones - 1, 0, -0.42, 0);
    snprintf(n, sizeof n, "foot.%s", sd);
    add_bone(b, n, nbones - 1, 0, -0.4, 0);
    snprintf(n, sizeof n, "toe.%s", sd);
    add_bone(b, n, nbones - 1, 0, -0.05, 0.12);
  }
  sk_strbuf_append(b, "]}", 2);
}

/* One pose's JSON: upperArm.L rotated (one bone), or every bone (a frame). */
static void pose_text(sk_strbuf *b, int frame) {
  char q[128], t[256];
  b->len = 0;
  sk_strbuf_append(b, "{\"bones\":{", 10);
  for (int i = 0; i < nbones; i++) {
    if (!frame && strcmp(names[i], "upperArm.L") != 0)
      continue;
    const double ax = uniform(-1, 1), ay = uniform(-1, 1), az = uniform(-1, 1);
    quat_text(q, sizeof q, ax, ay, az, frame ? uniform(-0.6, 0.6) : uniform(-1, 1));
    snprintf(t, sizeof t, "%s\"%s\":{\"rotationQuaternion\":%s}", b->data[b->len - 1] == '{' ? "" : ",", names[i], q);
    sk_strbuf_append(b, t, strlen(t));
  }
  sk_strbuf_append(b, "}}", 2);
}

static int parse_poses(const sk_model *e, int frame, sk_pose *poses) {
  sk_strbuf t = {0};
  sk_error err;
  sk_error_clear(&err);
  for (int i = 0; i < BATCH; i++) {
    pose_text(&t, frame);
    json_t *j = json_loads(t.data, 0, NULL);
    if (j == NULL || sk_pose_parse(e->skel, j, "", NULL, &poses[i], &err) != 0) {
      fprintf(stderr, "pose %d: %s\n", i, err.text);
      return 1;
    }
    json_decref(j);
  }
  sk_strbuf_free(&t);
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One batch answer, as sk_routes_batch builds it: a fresh buffer, the
 * wrapper, sk_frames_eval. Not inlined: callgrind toggles on it. */
__attribute__((noinline)) size_t answer_once(const sk_model *e, const sk_pose *poses, sk_frames_scratch *sc);
__attribute__((noinline)) size_t answer_once(const sk_model *e, const sk_pose *poses, sk_frames_scratch *sc) {
  sk_strbuf b = {0};
  const sk_frames_opts o = {.fmt = SK_FMT_JSON};
  sk_strbuf_append(&b, "{\"results\":[", 12);
  int rc = sk_frames_eval(e, poses, BATCH, &o, sc, &b);
  if (rc == 0)
    rc = sk_strbuf_append(&b, "]}", 2);
  const size_t len = rc == 0 ? b.len : 0;
  sk_strbuf_free(&b);
  return len;
}

/* The same bytes copied into a fresh buffer. */
__attribute__((noinline)) size_t copy_once(const char *text, size_t len);
__attribute__((noinline)) size_t copy_once(const char *text, size_t len) {
  char *d = malloc(len + 1);
  if (d == NULL)
    return 0;
  memcpy(d, text, len);
  d[len] = 0;
  volatile char sink = d[len / 2];
  (void)sink;
  free(d);
  return len;
}

static int batch_row(const char *name, const sk_model *e, int frame, int reps) {
  sk_pose poses[BATCH];
  if (parse_poses(e, frame, poses))
    return 1;
  sk_frames_scratch sc = {0};
  sk_strbuf text = {0};
  const sk_frames_opts o = {.fmt = SK_FMT_JSON};
  sk_strbuf_append(&text, "{\"results\":[", 12);
  if (sk_frames_eval(e, poses, BATCH, &o, &sc, &text) != 0 || sk_strbuf_append(&text, "]}", 2))
    return 1;
  double ta[9], tc[9];
  size_t len = 0;
  for (int round = -1; round < 9; round++) { /* alternating; round -1 warms */
    double t0 = now_ns();
    for (int r = 0; r < reps; r++)
      len += answer_once(e, poses, &sc);
    double t1 = now_ns();
    for (int r = 0; r < reps; r++)
      len += copy_once(text.data, text.len);
    double t2 = now_ns();
    if (round >= 0) {
      ta[round] = (t1 - t0) / reps;
      tc[round] = (t2 - t1) / reps;
    }
  }
  qsort(ta, 9, sizeof ta[0], cmp_double);
  qsort(tc, 9, sizeof tc[0], cmp_double);
  const double floats = (double)BATCH * (BONES + 1) * 16, ratio = tc[4] / ta[4];
  printf("%-34s %8zu bytes  %8.1f us (%5.2f ns/float, %6.0f MB/s)  copy %6.1f us (%6.0f MB/s)  copy/answer %.3f "
         "(goal >= %.2f) %s\n",
         name, text.len, ta[4] / 1000, ta[4] / floats, text.len / ta[4] * 1000, tc[4] / 1000,
         text.len / tc[4] * 1000, ratio, JSON_BENCH_GOAL, ratio >= JSON_BENCH_GOAL ? "PASS" : "MISS");
  (void)len;
  sk_strbuf_free(&text);
  sk_frames_scratch_close(&sc);
  for (int i = 0; i < BATCH; i++)
    sk_pose_close(&poses[i]);
  return 0;
}

/* The frames' final matrices printed as one array by each writer. */
static int array_rows(const sk_model *e, int reps) {
  sk_pose poses[BATCH];
  if (parse_poses(e, 1, poses))
    return 1;
  sk_frames_scratch sc = {0};
  sk_strbuf bin = {0};
  const sk_frames_opts o = {.fmt = SK_FMT_F32};
  if (sk_frames_eval(e, poses, BATCH, &o, &sc, &bin) != 0)
    return 1;
  const float *v = (const float *)(const void *)bin.data;
  const size_t n = bin.len / sizeof(float);
  static const char *const isas[] = {"generic", "avx2", "avx512"};
  for (int k = 0; k < 3; k++) {
    sk_strbuf b = {0};
    if (sk_strbuf_append_f32_array_on(isas[k], &b, v, 0) != 0)
      continue;
    double t[9];
    for (int round = -1; round < 9; round++) {
      double t0 = now_ns();
      for (int r = 0; r < reps; r++) {
        b.len = 0;
        sk_strbuf_append_f32_array_on(isas[k], &b, v, n);
      }
      if (round >= 0)
        t[round] = (now_ns() - t0) / reps;
    }
    qsort(t, 9, sizeof t[0], cmp_double);
    printf("array of the frames' floats, %-7s %8zu bytes  %8.1f us (%5.2f ns/float, %6.0f MB/s)\n", isas[k], b.len,
           t[4] / 1000, t[4] / (double)n, b.len / t[4] * 1000);
    sk_strbuf_free(&b);
  }
  sk_strbuf_free(&bin);
  sk_frames_scratch_close(&sc);
  for (int i = 0; i < BATCH; i++)
    sk_pose_close(&poses[i]);
  return 0;
}

int main(int argc, char **argv) {
  int reps = 200;
  const char *rows = "batch,frames,array";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc)
      rows = argv[++i];
    else {
      fprintf(stderr, "usage: json_bench [--reps N] [--rows batch,frames,array]\n");
      return 2;
    }
  }
  char cpu[256] = "?";
  FILE *f = fopen("/proc/cpuinfo", "r");
  while (f != NULL && fgets(cpu, sizeof cpu, f) != NULL)
    if (strncmp(cpu, "model name", 10) == 0)
      break;
  if (f != NULL)
    fclose(f);
  cpu[strcspn(cpu, "\n")] = 0;
  sk_strbuf probe = {0};
  const int avx512 = sk_strbuf_append_f32_array_on("avx512", &probe, NULL, 0) == 0;
  const int avx2 = sk_strbuf_append_f32_array_on("avx2", &probe, NULL, 0) == 0;
  sk_strbuf_free(&probe);
  printf("# %s; float writer: %s; %d poses of %d bones, %d reps a round, 9 alternating rounds, medians\n",
         strchr(cpu, ':') ? strchr(cpu, ':') + 2 : cpu, avx512 ? "avx512" : avx2 ? "avx2" : "generic", BATCH, BONES,
         reps);

  sk_strbuf st = {0};
  skeleton_text(&st);
  sk_error err;
  sk_error_clear(&err);
  json_t *j = json_loads(st.data, 0, NULL);
  sk_skeleton *s = NULL;
  sk_model *model = NULL;
  if (j == NULL || sk_json_parse_skeleton(j, "", 0, &s, &err) != 0 ||
      sk_model_create(s, NULL, NULL, NULL, -1, &model) != 0) {
    fprintf(stderr, "skeleton: %s\n", err.text);
    return 1;
  }
  json_decref(j);
  sk_strbuf_free(&st);
  int rc = 0;
  if (strstr(rows, "batch"))
    rc |= batch_row("batch of 64, one bone moved", model, 0, reps);
  if (strstr(rows, "frames"))
    rc |= batch_row("batch of 64 frames, all bones", model, 1, reps);
  if (strstr(rows, "array"))
    rc |= array_rows(model, reps);
  sk_model_unref(model);
  return rc;
}
