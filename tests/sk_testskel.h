/* A deterministic skeleton for the end-to-end suites, shared so that
 * every suite talks about the same tree. */
#ifndef SK_TESTSKEL_H
#define SK_TESTSKEL_H

#include <jansson.h>
#include <stdio.h>

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

#endif
