/* End to end: a 10 000-frame Fox shot asked by frame index ("frames":
 * [start, end], frame k at k / fps) answers the same bytes however it is
 * split: one whole bake, chunks of 1, 64, 777 and 1000 frames, resumed
 * halfway, in one /poses batch of chunks, and frame by frame as single
 * poses at "time": k / fps; `skinner eval` (ops) gives the daemon's bytes;
 * every other range form (layers, additive, masked, "bones" on top, ops,
 * Babylon-format clips) splits into the same bytes too.
 * A bad "frames" is a 4xx naming its field. */
#include <math.h>

#include "sk_eval.h"
#include "sk_fixture.h"
#include "sk_frames.h"
#include "sk_testutil.h"

enum { N = 10000 };
#define FPS 30
static const char k_clip[] = "\"animation\":\"Survey\",\"loop\":true";

static sk_daemon g_d;
static const char *g_id = "fox"; /* the skeleton ask() poses */

static void start(const char *const *args) {
  sk_fixture_start(&g_d, args);
  sk_fixture_put_asset(&g_d, "fox", "Fox.glb");
}

/* POSTs `body` to /pose (or /poses) and appends the answer's poses to
 * `out` (sk_fixture_append_poses). */
static void ask(const char *body, bool batch, bool binary, sk_strbuf *out) {
  char path[128];
  snprintf(path, sizeof path, "/v1/skeletons/%s/%s", g_id, batch ? "poses" : "pose");
  sk_fixture_append_poses(&g_d, path, body, strlen(body), binary, out);
}

static void range_body(char *b, size_t cap, size_t k0, size_t k1) {
  snprintf(b, cap, "{%s,\"fps\":%d,\"frames\":[%zu,%zu]}", k_clip, FPS, k0, k1);
}

/* Frames [k0, k1) in chunks of `c` frames, one /pose each. */
static void chunks(size_t k0, size_t k1, size_t c, bool binary, sk_strbuf *out) {
  for (size_t k = k0; k < k1; k += c) {
    char b[256];
    range_body(b, sizeof b, k, k + c < k1 ? k + c : k1);
    ask(b, false, binary, out);
  }
}

/* Frames [k0, k1) one by one, each the single pose at "time": k / fps. */
static void singles(size_t k0, size_t k1, bool binary, sk_strbuf *out) {
  for (size_t k = k0; k < k1; k++) {
    char b[256];
    snprintf(b, sizeof b, "{%s,\"time\":%.17g}", k_clip, (double)k / FPS);
    ask(b, false, binary, out);
  }
}

static void same(const sk_strbuf *want, const sk_strbuf *got, const char *what, size_t k) {
  size_t at = 0;
  while (at < want->len && at < got->len && want->data[at] == got->data[at])
    at++;
  ck_assert_msg(want->len == got->len && at == want->len, "%s (%zu): %zu vs %zu bytes, first difference at %zu", what,
                k, want->len, got->len, at);
}

static const size_t k_chunks[] = {1, 64, 777, 1000};

START_TEST(a_10000_frame_shot_in_chunks_resumed_and_alone_is_one_whole_bake) {
  const char *const args[] = {"--max-frames", "10000", "--max-batch", "10000", NULL};
  start(args);
  const size_t pose_bytes = 25 * 16 * sizeof(float);
  sk_strbuf whole = {0}, got = {0};
  char b[256];
  range_body(b, sizeof b, 0, N);
  ask(b, false, true, &whole);
  ck_assert_uint_eq(whole.len, N * pose_bytes);
  /* from 0 the from/to form is the same bake: 0 + k / fps is k / fps */
  snprintf(b, sizeof b, "{%s,\"fps\":%d,\"from\":0,\"to\":%.17g}", k_clip, FPS, (double)(N - 1) / FPS);
  ask(b, false, true, &got);
  same(&whole, &got, "from/to from 0", N);
  got.len = 0;
  for (size_t c = 0; c < sizeof k_chunks / sizeof k_chunks[0]; c++) {
    chunks(0, N, k_chunks[c], true, &got);
    same(&whole, &got, "chunks of", k_chunks[c]);
    got.len = 0;
  }
  /* resumed halfway, and at a frame no chunk size divides */
  static const size_t resume[] = {N / 2, 4321};
  for (size_t i = 0; i < 2; i++) {
    chunks(0, resume[i], resume[i], true, &got);
    chunks(resume[i], N, N - resume[i], true, &got);
    same(&whole, &got, "resumed at", resume[i]);
    got.len = 0;
  }
  /* The from/to form in the same chunks puts frame j of a chunk at
   * k0 / fps + j / fps, which is not always k / fps: the frames that
   * differ are why "frames" exists (from/to keeps its bytes). */
  size_t differ = 0;
  for (size_t k = 0; k < N; k += 777) {
    const size_t k1 = k + 777 < N ? k + 777 : N;
    snprintf(b, sizeof b, "{%s,\"fps\":%d,\"from\":%.17g,\"to\":%.17g}", k_clip, FPS, (double)k / FPS,
             (double)(k1 - 1) / FPS);
    ask(b, false, true, &got);
  }
  for (size_t k = 0; k < N && (k + 1) * pose_bytes <= got.len; k++)
    differ += memcmp(whole.data + k * pose_bytes, got.data + k * pose_bytes, pose_bytes) != 0;
  ck_assert_uint_gt(differ, 0);
  fprintf(stderr, "from/to chunks of 777: %zu of %d frames differ from the whole bake (frames: none)\n", differ, N);
  got.len = 0;
  /* one /poses batch of 777-frame chunks */
  sk_strbuf batch = {0};
  sk_strbuf_append(&batch, "{\"poses\":[", 10);
  for (size_t k = 0; k < N; k += 777) {
    range_body(b, sizeof b, k, k + 777 < N ? k + 777 : N);
    if (k > 0)
      sk_strbuf_append(&batch, ",", 1);
    sk_strbuf_append(&batch, b, strlen(b));
  }
  sk_strbuf_append(&batch, "]}", 2);
  ask(batch.data, true, true, &got);
  same(&whole, &got, "one /poses batch of chunks", 777);
  got.len = 0;
  sk_strbuf_free(&batch);
  /* every frame alone, at "time": k / fps */
  singles(0, N, true, &got);
  same(&whole, &got, "single poses at k / fps", N);
  sk_strbuf_free(&got);
  sk_strbuf_free(&whole);
  sk_fixture_stop(&g_d);
}
END_TEST

/* JSON over a window around the halfway mark: the same text however split. */
START_TEST(json_answers_agree_too) {
  start(NULL);
  sk_strbuf whole = {0}, got = {0};
  chunks(4900, 5100, 200, false, &whole);
  for (size_t c = 0; c < sizeof k_chunks / sizeof k_chunks[0]; c++) {
    chunks(4900, 5100, k_chunks[c], false, &got);
    same(&whole, &got, "JSON chunks of", k_chunks[c]);
    got.len = 0;
  }
  singles(4900, 5100, false, &got);
  same(&whole, &got, "JSON single poses at k / fps", 200);
  sk_strbuf_free(&got);
  sk_strbuf_free(&whole);
  sk_fixture_stop(&g_d);
}
END_TEST

/* `skinner eval`'s binary answer to one case of ops (in process). */
static void eval_ops(const char *ops, sk_strbuf *out) {
  char rel[] = "data/Fox.glb", path[1024];
  sk_test_path(rel, path, sizeof path);
  json_t *ops_j = json_loads(ops, 0, NULL);
  ck_assert_ptr_nonnull(ops_j);
  json_t *c = json_pack("{s:{s:s},s:o}", "skeleton", "gltf", path, "ops", ops_j);
  sk_error err;
  sk_error_clear(&err);
  const sk_eval_opts o = {.fmt = SK_FMT_F32};
  ck_assert_msg(sk_eval_case_opts(c, &o, out, &err) == 0, "skinner eval: %s at %s", err.text, err.pointer);
  json_decref(c);
}

/* The case's ops in chunks of `c`; "frames" whole when c is N. */
static void eval_chunks(size_t c, bool by_time, sk_strbuf *out) {
  sk_strbuf ops = {0};
  sk_strbuf_append(&ops, "[", 1);
  for (size_t k = 0; k < N; k += c) {
    char b[256];
    if (by_time)
      snprintf(b, sizeof b, "%s{\"op\":\"pose\",%s,\"time\":%.17g}", k > 0 ? "," : "", k_clip, (double)k / FPS);
    else
      snprintf(b, sizeof b, "%s{\"op\":\"pose\",%s,\"fps\":%d,\"frames\":[%zu,%zu]}", k > 0 ? "," : "", k_clip, FPS, k,
               k + c < N ? k + c : N);
    sk_strbuf_append(&ops, b, strlen(b));
  }
  sk_strbuf_append(&ops, "]", 1);
  eval_ops(ops.data, out);
  sk_strbuf_free(&ops);
}

START_TEST(skinner_eval_ops_give_the_daemons_bytes_in_any_chunks) {
  const char *const args[] = {"--max-frames", "10000", "--max-batch", "10000", NULL};
  start(args);
  sk_strbuf whole = {0}, got = {0};
  char b[256];
  range_body(b, sizeof b, 0, N);
  ask(b, false, true, &whole);
  sk_fixture_stop(&g_d);
  eval_chunks(N, false, &got);
  same(&whole, &got, "skinner eval, whole", N);
  for (size_t c = 0; c < sizeof k_chunks / sizeof k_chunks[0]; c++) {
    got.len = 0;
    eval_chunks(k_chunks[c], false, &got);
    same(&whole, &got, "skinner eval, chunks of", k_chunks[c]);
  }
  got.len = 0;
  eval_chunks(1, true, &got);
  same(&whole, &got, "skinner eval, single poses at k / fps", N);
  sk_strbuf_free(&got);
  sk_strbuf_free(&whole);
}
END_TEST

/* Every range form by index (layers with an offset, an additive layer, a
 * masked one, "bones" on top, Bone-API ops on every frame, and Fox's Walk
 * in Babylon's format, alone and in layers): chunks of 64 and 333 frames
 * and a resume at 500 are the whole [0, 1000) range, JSON and binary. */
START_TEST(every_range_form_splits_into_the_same_bytes) {
  start(NULL);
  size_t len;
  unsigned char *babylon = sk_test_read_asset("fox-walk-babylon.json", &len);
  sk_fixture_put(&g_d, "foxb", "application/json", babylon, len);
  free(babylon);
  static const char *const forms[] = {
      "\"layers\":[{\"animation\":\"Walk\",\"weight\":0.7,\"loop\":true},"
      "{\"animation\":\"Run\",\"time\":0.2,\"weight\":0.3,\"loop\":true}]",
      "\"layers\":[{\"animation\":\"Survey\",\"loop\":true},"
      "{\"animation\":\"Walk\",\"additive\":true,\"reference\":0.1,\"loop\":true}]",
      "\"layers\":[{\"animation\":\"Survey\",\"loop\":true},"
      "{\"animation\":\"Run\",\"loop\":true,\"mask\":{\"bone\":\"b_Spine01_02\",\"subtree\":true}}]",
      "\"animation\":\"Walk\",\"loop\":true,\"bones\":{\"b_Head_05\":{\"rotationQuaternion\":[0,0.2,0,0.98]}}",
      "\"animation\":\"Run\",\"loop\":true,"
      "\"ops\":[{\"op\":\"setAxisAngle\",\"bone\":\"b_Neck_04\",\"axis\":[0,1,0],\"angle\":0.4,\"space\":\"world\"}]",
      /* from here on: the Babylon-format skeleton */
      "\"animation\":\"Walk\",\"loop\":true",
      "\"layers\":[{\"animation\":\"Walk\",\"weight\":0.6,\"loop\":true},"
      "{\"animation\":\"Walk\",\"time\":0.3,\"weight\":0.4,\"loop\":true}]"};
  enum { FIRST_BABYLON = 5 };
  static const size_t k_split[] = {64, 333};
  for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++)
    for (int binary = 0; binary < 2; binary++) {
      g_id = f < FIRST_BABYLON ? "fox" : "foxb";
      sk_strbuf whole = {0}, got = {0};
      char b[640];
      snprintf(b, sizeof b, "{%s,\"fps\":24,\"frames\":[0,1000]}", forms[f]);
      ask(b, false, binary, &whole);
      for (size_t c = 0; c < 3; c++) {
        const size_t step = c < 2 ? k_split[c] : 500;
        for (size_t k = 0; k < 1000; k += step) {
          snprintf(b, sizeof b, "{%s,\"fps\":24,\"frames\":[%zu,%zu]}", forms[f], k, k + step < 1000 ? k + step : 1000);
          ask(b, false, binary, &got);
        }
        same(&whole, &got, forms[f], step);
        got.len = 0;
      }
      sk_strbuf_free(&got);
      sk_strbuf_free(&whole);
    }
  g_id = "fox";
  sk_fixture_stop(&g_d);
}
END_TEST

static void expect_problem(const char *body, int status, const char *pointer) {
  const char *path = strncmp(body, "{\"poses\"", 8) == 0 ? "/v1/skeletons/fox/poses" : "/v1/skeletons/fox/pose";
  json_t *j = sk_fixture_ask(&g_d, "POST", path, "application/json", body, strlen(body), status);
  const char *p = json_string_value(json_object_get(j, "pointer"));
  ck_assert_msg(p != NULL && strcmp(p, pointer) == 0, "%s: pointer %s, want %s", body, p ? p : "(none)", pointer);
  json_decref(j);
}

START_TEST(a_bad_frames_is_refused_at_its_field) {
  start(NULL);
  expect_problem("{\"animation\":\"Walk\",\"fps\":30,\"frames\":[10,5]}", 422, "/frames/1");
  expect_problem("{\"animation\":\"Walk\",\"fps\":30,\"frames\":[0.5,5]}", 422, "/frames/0");
  expect_problem("{\"animation\":\"Walk\",\"fps\":30,\"frames\":[-1,5]}", 422, "/frames/0");
  expect_problem("{\"animation\":\"Walk\",\"fps\":30,\"frames\":[0,5],\"from\":0,\"to\":1}", 422, "/frames");
  expect_problem("{\"animation\":\"Walk\",\"frames\":[0,5]}", 422, "/fps");
  expect_problem("{\"animation\":\"Walk\",\"fps\":30,\"frames\":[0,1025]}", 413, "/frames");
  expect_problem("{\"poses\":[{},{\"animation\":\"Walk\",\"fps\":30,\"frames\":[7,7]}]}", 422, "/poses/1/frames/1");
  /* An empty range [k, k) holds no frame: refused, never an empty answer. */
  expect_problem("{\"animation\":\"Walk\",\"fps\":30,\"frames\":[0,0]}", 422, "/frames/1");
  expect_problem("{\"animation\":\"Walk\",\"fps\":30,\"frames\":[7,7]}", 422, "/frames/1");
  expect_problem("{\"layers\":[{\"animation\":\"Walk\"}],\"fps\":30,\"frames\":[7,7]}", 422, "/frames/1");
  expect_problem("{\"poses\":[{\"animation\":\"Walk\",\"fps\":30,\"frames\":[9,3]}]}", 422, "/poses/0/frames/1");
  expect_problem("{\"animation\":\"Walk\",\"fps\":30,\"frames\":[0,5.5]}", 422, "/frames/1");
  expect_problem("{\"animation\":\"Walk\",\"fps\":30,\"frames\":[\"0\",5]}", 422, "/frames/0");
  expect_problem("{\"poses\":[{\"animation\":\"Walk\",\"fps\":30,\"frames\":[1.0,5]}]}", 422, "/poses/0/frames/0");
  expect_problem("{\"poses\":[{\"animation\":\"Walk\",\"fps\":30,\"frames\":[-3,5]}]}", 422, "/poses/0/frames/0");
  expect_problem("{\"animation\":\"Walk\",\"fps\":30,\"frames\":[0,9007199254740993]}", 422, "/frames/1");
  expect_problem("{\"poses\":[{\"animation\":\"Walk\",\"fps\":30,\"frames\":[0,2000]}]}", 413, "/poses/0/frames");
  sk_fixture_stop(&g_d);
}
END_TEST

/* skinner eval's ops take "frames" as the routes do: the same refusals. */
static void expect_eval_refused(const char *op, int code, const char *pointer) {
  char rel[] = "data/Fox.glb", path[1024];
  sk_test_path(rel, path, sizeof path);
  json_t *op_j = json_loads(op, 0, NULL);
  ck_assert_ptr_nonnull(op_j);
  json_t *c = json_pack("{s:{s:s},s:[o]}", "skeleton", "gltf", path, "ops", op_j);
  sk_strbuf out = {0};
  sk_error err;
  sk_error_clear(&err);
  const sk_eval_opts o = {.fmt = SK_FMT_F32};
  ck_assert_msg(sk_eval_case_opts(c, &o, &out, &err) == code, "%s: %d at %s (%s), want %d", op, err.code, err.pointer,
                err.text, code);
  ck_assert_msg(strcmp(err.pointer, pointer) == 0, "%s: pointer %s, want %s", op, err.pointer, pointer);
  sk_strbuf_free(&out);
  json_decref(c);
}

START_TEST(a_bad_frames_in_an_op_is_refused_at_its_field) {
  expect_eval_refused("{\"op\":\"pose\",\"animation\":\"Walk\",\"fps\":30,\"frames\":[7,7]}", SK_ERANGE,
                      "/ops/0/frames/1");
  expect_eval_refused("{\"op\":\"pose\",\"animation\":\"Walk\",\"fps\":30,\"frames\":[8,7]}", SK_ERANGE,
                      "/ops/0/frames/1");
  expect_eval_refused("{\"op\":\"pose\",\"animation\":\"Walk\",\"fps\":30,\"frames\":[0.5,7]}", SK_ETYPE,
                      "/ops/0/frames/0");
  expect_eval_refused("{\"op\":\"pose\",\"animation\":\"Walk\",\"fps\":30,\"frames\":[-1,7]}", SK_ERANGE,
                      "/ops/0/frames/0");
  expect_eval_refused("{\"op\":\"pose\",\"animation\":\"Walk\",\"fps\":30,\"frames\":[0,9007199254740993]}",
                      SK_ERANGE, "/ops/0/frames/1");
  expect_eval_refused("{\"op\":\"pose\",\"animation\":\"Walk\",\"fps\":30,\"frames\":[0,100001]}", SK_ETOOBIG,
                      "/ops/0/frames");
}
END_TEST

int main(void) {
  Suite *s = suite_create("frames_index");
  TCase *t = tcase_create("identity");
  tcase_set_timeout(t, 600);
  tcase_add_test(t, a_10000_frame_shot_in_chunks_resumed_and_alone_is_one_whole_bake);
  tcase_add_test(t, json_answers_agree_too);
  tcase_add_test(t, skinner_eval_ops_give_the_daemons_bytes_in_any_chunks);
  tcase_add_test(t, every_range_form_splits_into_the_same_bytes);
  suite_add_tcase(s, t);
  TCase *v = tcase_create("validity");
  tcase_add_test(v, a_bad_frames_is_refused_at_its_field);
  tcase_add_test(v, a_bad_frames_in_an_op_is_refused_at_its_field);
  suite_add_tcase(s, v);
  return sk_test_run(s);
}
