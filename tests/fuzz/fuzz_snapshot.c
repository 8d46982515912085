/* Fuzz target: the skeleton part of a record (sk_record_skeleton_encode/
 * _decode), the binary form sk_store keeps on disk and restores at
 * start-up; input starting with "SKSNAP01" goes to the version-1 decoder
 * (sk_record_skeleton_decode_v1), which old records still reach.
 *
 * Input starting with '{': a skeleton in JSON. It is built, snapshotted
 * and restored; the restored skeleton must answer bit for bit as the
 * original (all three outputs). With SK_FUZZ_SNAPSHOT_SEEDS=<dir> set, each
 * snapshot is also written there: run.sh makes the binary seed corpus that
 * way.
 *
 * Any other input: snapshot bytes. The decoder must answer
 * SK_EFORMAT or a skeleton that keeps the invariants restore promises
 * (parent order, slots in range and unique, non-empty names each found by
 * the hash), evaluates, and snapshots and restores again. */
#include <jansson.h>
#include <string.h>

#include "sk_eval.h"
#include "sk_json.h"
#include "sk_record.h"
#include "sk_fuzz.h"

static void check_restored(const sk_skeleton *s) {
  unsigned char *slot_used = calloc(s->count ? s->count : 1, 1);
  SK_FUZZ_CHECK(slot_used != NULL);
  for (size_t i = 0; i < s->count; i++) {
    const sk_bone *b = &s->bones[i];
    SK_FUZZ_CHECK(b->parent >= -1 && b->parent < (int32_t)i);
    SK_FUZZ_CHECK(b->index >= -1 && b->index < (int32_t)s->count);
    if (b->index >= 0) {
      SK_FUZZ_CHECK(!slot_used[b->index]);
      slot_used[b->index] = 1;
    }
    SK_FUZZ_CHECK(b->name >= s->names && b->name < s->names + s->names_size);
    SK_FUZZ_CHECK(b->name[0] != '\0');
    SK_FUZZ_CHECK(sk_skeleton_find(s, b->name) == (int32_t)i);
  }
  free(slot_used);
}

/* final, absolute and local of the current locals, in one new array. */
static float *evaluate_all(const sk_skeleton *s) {
  size_t n = s->count;
  float *out = malloc((16 * (n + 1) + 32 * n + 16 * n) * sizeof *out);
  if (out == NULL)
    return NULL;
  float *scratch = out + 16 * (n + 1) + 32 * n;
  sk_skeleton_evaluate(s, NULL, NULL, scratch, out, out + 16 * (n + 1), out + 16 * (n + 1) + 16 * n);
  return out;
}

static void save_seed(const sk_strbuf *snap) {
  const char *dir = getenv("SK_FUZZ_SNAPSHOT_SEEDS");
  if (dir == NULL)
    return;
  /* FNV-1a of the bytes names the file, so reruns overwrite. */
  uint64_t h = 1469598103934665603u;
  for (size_t i = 0; i < snap->len; i++)
    h = (h ^ (unsigned char)snap->data[i]) * 1099511628211u;
  char path[4096];
  snprintf(path, sizeof path, "%s/%016llx", dir, (unsigned long long)h);
  FILE *f = fopen(path, "wb");
  if (f != NULL) {
    fwrite(snap->data, 1, snap->len, f);
    fclose(f);
  }
}

static void round_trip(const sk_skeleton *s, bool save) {
  sk_strbuf snap = {0};
  if (sk_record_skeleton_encode(s, &snap) != 0 || snap.failed) {
    sk_strbuf_free(&snap);
    return;
  }
  if (save)
    save_seed(&snap);
  sk_skeleton *r = NULL;
  size_t used = 0;
  SK_FUZZ_CHECK(sk_record_skeleton_decode(snap.data, snap.len, &used, &r) == 0);
  SK_FUZZ_CHECK(used == snap.len && r->count == s->count);
  check_restored(r);
  float *a = evaluate_all(s), *b = evaluate_all(r);
  if (a != NULL && b != NULL)
    SK_FUZZ_CHECK(memcmp(a, b, (16 * (s->count + 1) + 32 * s->count) * sizeof *a) == 0);
  free(a);
  free(b);
  sk_skeleton_destroy(r);
  sk_strbuf_free(&snap);
}

int sk_fuzz_snapshot(const uint8_t *data, size_t size) {
  if (size > SK_FUZZ_MAX_INPUT)
    return -1;
  if (size > 0 && data[0] == '{') {
    json_t *j;
    sk_skeleton *s;
    if (sk_json_load((const char *)data, size, &j, NULL) != 0)
      return 0;
    int rc = sk_json_parse_skeleton(j, "", 0, &s, NULL);
    json_decref(j);
    if (rc == 0) {
      round_trip(s, true);
      sk_skeleton_destroy(s);
    }
    return 0;
  }
  sk_skeleton *s = NULL;
  size_t used = 0;
  int rc = size >= 8 && memcmp(data, "SKSNAP01", 8) == 0 ? sk_record_skeleton_decode_v1(data, size, &used, &s)
                                                         : sk_record_skeleton_decode(data, size, &used, &s);
  if (rc) {
    SK_FUZZ_CHECK(rc == SK_EFORMAT || rc == SK_ENOMEM);
    SK_FUZZ_CHECK(s == NULL);
    return 0;
  }
  SK_FUZZ_CHECK(s != NULL && used <= size);
  check_restored(s);
  free(evaluate_all(s));
  /* What the daemon does next with a restored skeleton: partial pose
   * overrides, which read each bone's TRS cache and its flag. */
  float *locals = malloc((s->count ? s->count : 1) * 16 * sizeof *locals);
  if (locals != NULL && s->count > 0) {
    sk_override o = {.bone = (int32_t)(s->count - 1), .mask = SK_OVERRIDE_POSITION, .position = {1, 2, 3}};
    sk_skeleton_pose_locals(s, &o, 1, locals);
    volatile bool has_length = s->bones[0].has_length;
    (void)has_length;
  }
  free(locals);
  round_trip(s, false);
  sk_skeleton_destroy(s);
  return 0;
}

#ifndef SK_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return sk_fuzz_snapshot(data, size) < 0 ? -1 : 0; }
#endif
