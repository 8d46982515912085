/* Replays the fuzz targets' saved inputs through the same functions
 * libFuzzer runs (tests/fuzz/fuzz_*.c built with SK_FUZZ_REPLAY), so every
 * input that once broke a promise stays in `make check` -- and under
 * `./configure --enable-sanitizers`, where a memory error aborts the test.
 *
 *   tests/fuzz/regressions/<target>/  inputs that crashed or broke an
 *                                     invariant, kept after the fix
 *   tests/fuzz/seeds/<target>/        the hand-made edge cases
 *
 * The snapshot findings are also rebuilt from a version-1 snapshot made
 * field by field (TCase "snapshot"): the saved files are version-1
 * snapshots, which sk_record decodes at fixed offsets.
 *
 * A target's invariant failure calls abort(): Check reports the test as
 * failed by a signal; SK_FUZZ_VERBOSE=1 names each file as it replays. */
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fuzz/sk_fuzz.h"
#include "sk_numfmt.h"
#include "sk_record.h"
#include "sk_skeleton.h"
#include "sk_testutil.h"

typedef int (*fuzz_fn)(const uint8_t *data, size_t size);

/* Replays every regular file of tests/fuzz/<kind>/<target>/ in name order;
 * returns how many. A missing directory replays nothing. */
static size_t replay_dir(const char *kind, const char *target, fuzz_fn fn) {
  char rel[256], dir[4096];
  snprintf(rel, sizeof rel, "fuzz/%s/%s", kind, target);
  sk_test_path(rel, dir, sizeof dir);
  struct dirent **names;
  int n = scandir(dir, &names, NULL, alphasort);
  if (n < 0)
    return 0;
  size_t replayed = 0;
  for (int i = 0; i < n; i++) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
    struct stat st;
    if (names[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      FILE *f = fopen(path, "rb");
      ck_assert_msg(f != NULL, "cannot open %s", path);
      uint8_t *data = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
      ck_assert(data != NULL);
      size_t len = fread(data, 1, (size_t)st.st_size, f);
      fclose(f);
      ck_assert_uint_eq(len, (size_t)st.st_size);
      /* Set SK_FUZZ_VERBOSE to see which file an abort came from. */
      if (getenv("SK_FUZZ_VERBOSE") != NULL)
        fprintf(stderr, "replay %s\n", path);
      fn(data, len);
      free(data);
      replayed++;
    }
    free(names[i]);
  }
  free(names);
  return replayed;
}

static void replay(const char *target, fuzz_fn fn) {
  size_t r = replay_dir("regressions", target, fn), n = replay_dir("seeds", target, fn);
  printf("fuzz replay %-8s %zu regressions, %zu seeds\n", target, r, n);
  /* Every target ships hand-made seeds: none found means a wrong path. */
  ck_assert_msg(n > 0, "no seeds found for %s under SK_TEST_DATA/fuzz", target);
}

START_TEST(skeleton_inputs_keep_their_promises) { replay("skeleton", sk_fuzz_skeleton); }
END_TEST

START_TEST(pose_inputs_keep_their_promises) { replay("pose", sk_fuzz_pose); }
END_TEST

START_TEST(eval_inputs_keep_their_promises) { replay("eval", sk_fuzz_eval); }
END_TEST

START_TEST(gltf_inputs_keep_their_promises) { replay("gltf", sk_fuzz_gltf); }
END_TEST

START_TEST(snapshot_inputs_keep_their_promises) { replay("snapshot", sk_fuzz_snapshot); }
END_TEST

START_TEST(banim_inputs_keep_their_promises) { replay("banim", sk_fuzz_banim); }
END_TEST

START_TEST(tokens_inputs_keep_their_promises) { replay("tokens", sk_fuzz_tokens); }
END_TEST

START_TEST(access_inputs_keep_their_promises) { replay("access", sk_fuzz_access); }
END_TEST

START_TEST(cost_inputs_keep_their_promises) { replay("cost", sk_fuzz_cost); }
END_TEST

START_TEST(ws_inputs_keep_their_promises) { replay("ws", sk_fuzz_ws); }
END_TEST

/* The snapshot findings again, on a version-1 snapshot built here field by
 * field (no build writes version 1 any more; sk_record still reads it from
 * old records). Header: magic[8], bone_size u32 (568), local_size u32
 * (152), count u64, names_size u64; then the names, then (u64 name offset,
 * the 568-byte x86-64 image of sk_bone) per bone. */
#define SNAP_HEADER 32
#define V1_HAS_LENGTH 20      /* offsetof(sk_bone, has_length) in version 1 */
#define V1_NEED_DECOMPOSE 176 /* offsetof(sk_bone, local.need_decompose) in version 1 */

static sk_strbuf one_bone_snapshot(void) {
  static const float id[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  unsigned char h[SNAP_HEADER] = {'S', 'K', 'S', 'N', 'A', 'P', '0', '1'};
  uint32_t bone_size = 568, local_size = 152;
  uint64_t count = 1, names_size = 5, off = 0;
  memcpy(h + 8, &bone_size, 4); /* the test hosts are little-endian, as the format */
  memcpy(h + 12, &local_size, 4);
  memcpy(h + 16, &count, 8);
  memcpy(h + 24, &names_size, 8);
  unsigned char bone[568] = {0};
  int32_t parent = -1, index = 0, input_pos = 0;
  memcpy(bone + 8, &parent, 4);
  memcpy(bone + 12, &index, 4);
  memcpy(bone + 16, &input_pos, 4);
  memcpy(bone + 32, id, sizeof id);  /* local matrix */
  double scaling[3] = {1, 1, 1}, rotation[4] = {0, 0, 0, 1};
  memcpy(bone + 96, scaling, sizeof scaling);
  memcpy(bone + 120, rotation, sizeof rotation);
  for (int k = 0; k < 6; k++) /* bind, rest, abs bind, abs inverse bind, absolute, world */
    memcpy(bone + 184 + 64 * k, id, sizeof id);
  sk_strbuf snap = {0};
  sk_strbuf_append(&snap, (const char *)h, sizeof h);
  sk_strbuf_append(&snap, "root", 5);
  sk_strbuf_append(&snap, (const char *)&off, sizeof off);
  sk_strbuf_append(&snap, (const char *)bone, sizeof bone);
  ck_assert(!snap.failed);
  sk_skeleton *r;
  size_t used;
  ck_assert_int_eq(sk_record_skeleton_decode_v1(snap.data, snap.len, &used, &r), 0);
  ck_assert_uint_eq(used, snap.len);
  sk_skeleton_destroy(r);
  return snap;
}

static int restore_rc(const sk_strbuf *snap, size_t len) {
  sk_skeleton *r = NULL;
  size_t used;
  int rc = sk_record_skeleton_decode_v1(snap->data, len, &used, &r);
  sk_skeleton_destroy(r);
  return rc;
}

/* names_size was checked against the whole length, header included, so a
 * names block reaching past the end was read (heap-buffer-overflow). */
START_TEST(a_names_block_past_the_end_is_a_format_error) {
  sk_strbuf snap = one_bone_snapshot();
  uint64_t names_size = snap.len - SNAP_HEADER + 1;
  memcpy(snap.data + 24, &names_size, sizeof names_size);
  ck_assert_int_eq(restore_rc(&snap, snap.len), SK_EFORMAT);
  names_size = snap.len; /* <= len, the old bound */
  memcpy(snap.data + 24, &names_size, sizeof names_size);
  ck_assert_int_eq(restore_rc(&snap, snap.len), SK_EFORMAT);
  sk_strbuf_free(&snap);
}
END_TEST

/* A bool byte other than 0/1 was loaded as a bool later (UBSan:
 * "load of value 48, which is not a valid value for type 'bool'"). */
START_TEST(a_bool_byte_other_than_0_or_1_is_a_format_error) {
  size_t at[] = {V1_HAS_LENGTH, V1_NEED_DECOMPOSE};
  for (size_t k = 0; k < 2; k++) {
    sk_strbuf snap = one_bone_snapshot();
    uint64_t names_size;
    memcpy(&names_size, snap.data + 24, sizeof names_size);
    snap.data[SNAP_HEADER + names_size + sizeof(uint64_t) + at[k]] = 2;
    ck_assert_int_eq(restore_rc(&snap, snap.len), SK_EFORMAT);
    sk_strbuf_free(&snap);
  }
}
END_TEST

/* sk_skeleton_create never makes an empty name; restore must not either. */
START_TEST(an_empty_bone_name_is_a_format_error) {
  sk_strbuf snap = one_bone_snapshot();
  uint64_t names_size;
  memcpy(&names_size, snap.data + 24, sizeof names_size);
  uint64_t off = names_size - 1; /* the final NUL */
  memcpy(snap.data + SNAP_HEADER + names_size, &off, sizeof off);
  ck_assert_int_eq(restore_rc(&snap, snap.len), SK_EFORMAT);
  sk_strbuf_free(&snap);
}
END_TEST

/* The harnesses must also survive the degenerate inputs libFuzzer starts
 * with (empty, one byte), which no file above holds. */
START_TEST(empty_and_tiny_inputs) {
  static const uint8_t one[] = {'{'};
  fuzz_fn fns[] = {sk_fuzz_skeleton, sk_fuzz_pose,   sk_fuzz_eval,   sk_fuzz_gltf, sk_fuzz_snapshot,
                   sk_fuzz_banim,    sk_fuzz_tokens, sk_fuzz_access, sk_fuzz_cost, sk_fuzz_ws};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    fns[i](one, 0);
    fns[i](one, 1);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_fuzz_regressions");
  struct {
    const char *name;
    const TTest *test;
  } cases[] = {
      {"skeleton", skeleton_inputs_keep_their_promises},
      {"pose", pose_inputs_keep_their_promises},
      {"eval", eval_inputs_keep_their_promises},
      {"gltf", gltf_inputs_keep_their_promises},
      {"snapshot", snapshot_inputs_keep_their_promises},
      {"banim", banim_inputs_keep_their_promises},
      {"tokens", tokens_inputs_keep_their_promises},
      {"access", access_inputs_keep_their_promises},
      {"cost", cost_inputs_keep_their_promises},
      {"ws", ws_inputs_keep_their_promises},
      {"snapshot", a_names_block_past_the_end_is_a_format_error},
      {"snapshot", a_bool_byte_other_than_0_or_1_is_a_format_error},
      {"snapshot", an_empty_bone_name_is_a_format_error},
      {"degenerate", empty_and_tiny_inputs},
  };
  TCase *tc = NULL;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (tc == NULL || strcmp(cases[i].name, cases[i - 1].name) != 0) {
      tc = tcase_create(cases[i].name);
      suite_add_tcase(s, tc);
    }
    tcase_add_test(tc, cases[i].test);
  }
  return sk_test_run(s);
}
