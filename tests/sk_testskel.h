/* A deterministic skeleton for the end-to-end suites, and poses of it,
 * shared so that every suite talks about the same tree. */
#ifndef SK_TESTSKEL_H
#define SK_TESTSKEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_numfmt.h"

/* An n-bone tree as a JSON skeleton body (new string, free()): a spine of
 * up to 9 bones, then limbs of 8, with varied positions and Euler rotations. */
static inline char *sk_test_tree_skeleton(int nbones) {
  json_t *bones = json_array();
  unsigned seed = 12345;
  for (int i = 0; i < nbones; i++) {
    json_t *b = json_object();
    char name[32], parent[32];
    snprintf(name, sizeof name, "bone%d", i);
    json_object_set_new(b, "name", json_string(name));
    if (i > 0) {
      int p = i < 9 ? i - 1 : ((i - 9) % 8 == 0 ? (i - 9) / 8 + 1 : i - 1);
      snprintf(parent, sizeof parent, "bone%d", p);
      json_object_set_new(b, "parent", json_string(parent));
    }
    double v[4];
    for (int k = 0; k < 4; k++) {
      seed = seed * 1103515245u + 12345u;
      v[k] = (double)((seed >> 8) % 2000) / 1000.0 - 1.0;
    }
    json_object_set_new(b, "position", json_pack("[f,f,f]", v[0] * 0.3, v[1] * 0.3 + 0.2, v[2] * 0.3));
    json_object_set_new(b, "rotation", json_pack("[f,f,f]", v[1], v[2], v[3]));
    json_array_append_new(bones, b);
  }
  json_t *s = json_pack("{s:o}", "bones", bones);
  char *text = json_dumps(s, JSON_COMPACT);
  json_decref(s);
  return text;
}

/* A pose of that tree, varied by `k`: a rotation on one bone and a
 * position on another; the initial skin matrix is the same for every `k`
 * when `same_skin` (the batch kernel takes one per batch), else one of
 * five (new string, free()). */
static inline char *sk_test_tree_pose(int k, int nbones, bool same_skin) {
  char buf[1024];
  int b1 = k % nbones, b2 = (k * 7 + 3) % nbones;
  if (b2 == b1)
    b2 = (b2 + 1) % nbones;
  snprintf(buf, sizeof buf,
           "{\"bones\":{\"bone%d\":{\"rotation\":[%g,%g,%g]},\"bone%d\":{\"position\":[0,%g,0]}},"
           "\"initialSkinMatrix\":[1,0,0,0,0,1,0,0,0,0,1,0,%g,0,0,1]}",
           b1, 0.01 * k, -0.02 * k, 0.5, b2, 0.001 * k, same_skin ? 0.25 : 0.1 * (k % 5));
  return strdup(buf);
}

/* {"poses": [...]} of pose(0, arg) .. pose(n - 1, arg), each a new string
 * this frees (new string, free()). */
static inline char *sk_test_batch_body(int n, char *(*pose)(int i, const void *arg), const void *arg) {
  sk_strbuf b = {0};
  sk_strbuf_append(&b, "{\"poses\":[", 10);
  for (int i = 0; i < n; i++) {
    char *p = pose(i, arg);
    if (i)
      sk_strbuf_append(&b, ",", 1);
    sk_strbuf_append(&b, p, strlen(p));
    free(p);
  }
  sk_strbuf_append(&b, "]}", 2);
  return b.data;
}

static inline char *sk_test_tree_batch_pose(int i, const void *nbones) {
  return sk_test_tree_pose(i, *(const int *)nbones, true);
}

/* {"poses": [...]} of poses 0 .. nposes-1 of that tree, one skin for all
 * (new string, free()). */
static inline char *sk_test_tree_batch(int nposes, int nbones) {
  return sk_test_batch_body(nposes, sk_test_tree_batch_pose, &nbones);
}

#endif
