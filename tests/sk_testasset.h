/* The unit suites' asset loader: a glTF test asset imported whole, failing
 * the test with the importer's error when it does not load. The bytes come
 * from sk_testutil.h's sk_test_read_asset (tests/data or tests/data/gltf). */
#ifndef SK_TESTASSET_H
#define SK_TESTASSET_H

#include "sk_cache.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_testutil.h"

/* A chain of `n` bones, each one unit above its parent (new). */
static inline sk_skeleton *sk_test_chain(int n) {
  json_t *bones = json_array();
  for (int i = 0; i < n; i++) {
    char name[16], parent[16];
    snprintf(name, sizeof name, "b%d", i);
    snprintf(parent, sizeof parent, "b%d", i - 1);
    json_array_append_new(bones, i ? json_pack("{s:s,s:s,s:[f,f,f]}", "name", name, "parent", parent, "position", 0.0,
                                               1.0, 0.0)
                                   : json_pack("{s:s}", "name", name));
  }
  json_t *j = json_pack("{s:o}", "bones", bones);
  sk_skeleton *s;
  ck_assert_int_eq(sk_json_parse_skeleton(j, "", 0, &s, NULL), 0);
  json_decref(j);
  return s;
}

/* Imports `asset` (skin `skin`, NULL: the first) into *s and *an (new). */
static inline void sk_test_import_asset(const char *asset, const char *skin, sk_skeleton **s, sk_anim **an) {
  size_t len;
  unsigned char *d = sk_test_read_asset(asset, &len);
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_gltf_import(d, len, skin, 0, s, an, &err) == 0, "%s: %s at %s", asset, err.text, err.pointer);
  free(d);
}

/* An asset stored in a cache of its own, its entry built as an upload
 * builds it (rig included): what sk_frames answers from. */
typedef struct sk_test_entry {
  sk_cache *cache;
  sk_cache_entry *e;
} sk_test_entry;

static inline void sk_test_entry_open(sk_test_entry *f, const char *asset) {
  sk_skeleton *s;
  sk_anim *an;
  sk_test_import_asset(asset, NULL, &s, &an);
  ck_assert_int_eq(sk_cache_create(0, &f->cache), 0);
  bool replaced;
  ck_assert_int_eq(sk_cache_put_full(f->cache, "a", s, an, NULL, &replaced, &f->e), 0);
  ck_assert_ptr_nonnull(f->e->model->rig);
}

static inline void sk_test_entry_close(sk_test_entry *f) {
  sk_cache_entry_unref(f->e);
  sk_cache_destroy(f->cache);
}

#endif
