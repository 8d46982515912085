/* Micro-benchmark: sk_frames_eval on Fox's Survey clip (63 frames of
 * 24 bones, float32 answers), one pose at a time and the 63 as one batch,
 * in the exact precision (the default) and the fast one (float32 kernel,
 * opt-in). Prints microseconds per pose. Not a test.
 *
 * Build and run (from the build directory, after make):
 *   gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Isrc/base -Isrc/babylon -Isrc/kernel -Isrc/anim -Isrc/io -Isrc/engine -I. $(pkg-config --cflags jansson libuv) \
 *       tests/bench/frames_bench.c src/.libs/libskcore.a \
 *       $(pkg-config --libs jansson libuv libmicrohttpd gnutls) -lcglm -lm -lpthread -o /tmp/frames_bench
 *   /tmp/frames_bench tests/data/Fox.glb */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sk_frames.h"
#include "sk_gltf.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: frames_bench Fox.glb\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (f == NULL || fseek(f, 0, SEEK_END) != 0)
    return 1;
  long len = ftell(f);
  rewind(f);
  unsigned char *d = malloc((size_t)len);
  if (d == NULL || fread(d, 1, (size_t)len, f) != (size_t)len)
    return 1;
  fclose(f);
  sk_skeleton *s;
  sk_anim *an;
  sk_error err;
  sk_error_clear(&err);
  sk_model *model = NULL;
  if (sk_gltf_import(d, (size_t)len, NULL, 0, &s, &an, &err) != 0 ||
      sk_model_create(s, an, NULL, NULL, -1, &model) != 0)
    return 1;
  const sk_model *e = model;
  json_t *j = json_loads("{\"animation\":\"Survey\",\"from\":0,\"to\":3.4,\"fps\":18.5}", 0, NULL);
  sk_pose *p;
  size_t n;
  if (sk_pose_parse_anim(e->skel, e->anim, j, "", NULL, &p, &n, &err) != 0)
    return 1;
  sk_frames_scratch sc = {0};
  for (int fast = 0; fast < 2; fast++)
    for (size_t k = 1; k <= n; k = k == 1 ? n : n + 1) {
      sk_frames_opts o = {.fmt = SK_FMT_F32, .precision = fast ? SK_FRAMES_FAST : SK_FRAMES_EXACT};
      sk_strbuf b = {0};
      size_t reps = 200000 / k;
      double t0 = now();
      for (size_t r = 0; r < reps; r++) {
        b.len = 0;
        sk_frames_eval(e, p, k, &o, &sc, &b);
      }
      printf("%s, %2zu pose%s a call: %.2f us/pose\n", fast ? "fast " : "exact", k, k == 1 ? " " : "s",
             (now() - t0) / (double)reps / (double)k * 1e6);
      sk_strbuf_free(&b);
    }
  sk_frames_scratch_close(&sc);
  sk_pose_array_free(p, n);
  json_decref(j);
  sk_model_unref(model);
  free(d);
  return 0;
}
