/* One-shot tool, kept as the note of how tests/data/records-v1 was made; it
 * is not built by `make` (it reads records with the version-1 code, which
 * is gone since record version 2).
 *
 * 1. At commit 063d754 (the last one writing version-1 records), skinnerd
 *    --data-dir D was sent, with curl (Content-Type as needed):
 *      PUT  /v1/skeletons/plain_json     a 3-bone JSON skeleton (position,
 *                                        Euler rotation, length)
 *      PUT  /v1/skeletons/json-alpha     a 4-bone JSON skeleton (length,
 *                                        scaling, a bone with index -1)
 *      PATCH /v1/skeletons/json-alpha/bones {"bones":{"head":
 *                                        {"rotationQuaternion":[0,0.6,0,0.8]}}}
 *      PUT  /v1/skeletons/simple.skin    tests/data/SimpleSkin.gltf
 *                                        (model/gltf+json, one clip)
 *      PUT  /v1/skeletons/rigged_patched?skin=0  tests/data/RiggedSimple.glb
 *                                        (model/gltf-binary, one clip)
 *      PATCH /v1/skeletons/rigged_patched/bones  (rotation + position on
 *                                        "Bone"; bind with keepLocal and rest
 *                                        on "Bone.001")
 *    and every D/<id>.rec copied here.
 * 2. This file, built at that commit against its library:
 *      cc -std=c11 -Isrc -Itests tests/data/records-v1/make_expect.c \
 *         src/.libs/libskinner.a -ljansson -lm -o /tmp/make_expect
 *      cd tests/data/records-v1 && for f in *.rec; do /tmp/make_expect $f; done
 *    wrote <id>.expect: every field of the skeleton the version-1 code
 *    restored (tests/sk_skeldump.h), which check_sk_record compares with
 *    what today's reader restores, byte for byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_skeldump.h"
#include "sk_store.h"

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  sk_store *st;
  sk_error err = {0};
  if (sk_store_open(".", &st, &err) != 0)
    return 1;
  char key[256];
  snprintf(key, sizeof key, "%.*s", (int)(strlen(argv[1]) - 4), argv[1]);
  void *data;
  size_t len;
  if (sk_store_get(st, key, &data, &len) != 0)
    return 1;
  /* version-1 record: "SKREC001" | u64 skin length | skin | u64 glTF length | glTF | snapshot */
  const char *p = data;
  uint64_t n;
  size_t at = 8;
  memcpy(&n, p + at, 8);
  at += 8 + (size_t)n;
  memcpy(&n, p + at, 8);
  at += 8 + (size_t)n;
  sk_skeleton *s;
  size_t used;
  if (sk_skeleton_restore(p + at, len - at, &used, &s) != 0 || at + used != len)
    return 1;
  sk_strbuf b = {0};
  sk_dump_skeleton(s, &b);
  char out[300];
  snprintf(out, sizeof out, "%s.expect", key);
  FILE *f = fopen(out, "wb");
  if (f == NULL || fwrite(b.data, 1, b.len, f) != b.len || fclose(f) != 0)
    return 1;
  printf("%s: %zu bones, %zu bytes\n", out, s->count, b.len);
  return 0;
}
