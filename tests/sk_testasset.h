/* The unit suites' asset loader: a glTF test asset imported whole, failing
 * the test with the importer's error when it does not load. The bytes come
 * from sk_testutil.h's sk_test_read_asset (tests/data or tests/data/gltf). */
#ifndef SK_TESTASSET_H
#define SK_TESTASSET_H

#include "sk_gltf.h"
#include "sk_testutil.h"

/* Imports `asset` (skin `skin`, NULL: the first) into *s and *an (new). */
static inline void sk_test_import_asset(const char *asset, const char *skin, sk_skeleton **s, sk_anim **an) {
  size_t len;
  unsigned char *d = sk_test_read_asset(asset, &len);
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_gltf_import(d, len, skin, 0, s, an, &err) == 0, "%s: %s at %s", asset, err.text, err.pointer);
  free(d);
}

#endif
