/* What a glTF upload pays for its default mesh and skins list
 * (sk_gltf_extra_fill) next to building the skin itself (sk_gltf_load_skin),
 * per file given. Not part of `make check`:
 *
 *   gcc -O2 $(for w in base babylon kernel anim io engine; do printf -- "-Isrc/$w "; done) tests/bench/gltf_mesh_bench.c src/.libs/libskcore.a -ljansson -lm -o /tmp/gmb
 *   /tmp/gmb tests/data/Fox.glb tests/data/RecursiveSkeletons.glb ... */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sk_gltf_mesh.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  for (int a = 1; a < argc; a++) {
    FILE *f = fopen(argv[a], "rb");
    if (f == NULL)
      return 1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *d = malloc((size_t)n);
    if (d == NULL || fread(d, 1, (size_t)n, f) != (size_t)n)
      return 1;
    fclose(f);
    sk_gltf *g;
    sk_error e;
    if (sk_gltf_parse(d, (size_t)n, &g, &e) != 0)
      return 1;
    const int extra_runs = 2000, load_runs = 20;
    double t0 = now();
    for (int i = 0; i < extra_runs; i++) {
      sk_gltf_extra x;
      sk_gltf_extra_fill(g, 0, true, &x);
      sk_gltf_extra_clear(&x);
    }
    double t1 = now();
    for (int i = 0; i < load_runs; i++) {
      sk_skeleton *s;
      sk_anim *an;
      if (sk_gltf_load_skin(g, 0, 0, &s, &an, &e) == 0) {
        sk_skeleton_destroy(s);
        sk_anim_destroy(an);
      }
    }
    double t2 = now();
    printf("%s: default mesh + skins list %.1f us; load_skin %.1f us\n", argv[a], 1e6 * (t1 - t0) / extra_runs,
           1e6 * (t2 - t1) / load_runs);
    sk_gltf_destroy(g);
    free(d);
  }
  return 0;
}
