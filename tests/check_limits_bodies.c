/* Requests whose cost is not in their size (issue 11), against the real
 * skinnerd on 127.0.0.1: a small batch asking for a gigabyte answer,
 * multi-megabyte bodies (parsed on the pool, their parse tree reserved in
 * the memory budget first), and the flags and environment that set every
 * limit. Each attack is answered within a bound, before its work, while a
 * second thread keeps asking /healthz (p99 under 50 ms) and the daemon's
 * peak RSS (VmHWM) stays bounded. The clip and glTF attacks are
 * check_limits.c (the fixture: sk_limitsprobe.h).
 *
 * Each test prints one line per attack ("limits: ...") with its status,
 * time and the daemon's VmHWM: run with SKINNERD=<an older skinnerd> to
 * measure the attacks against it (the assertions then fail, the figures
 * are still printed). */
#include "sk_limitsprobe.h"
#include "sk_testskel.h"

/* ---- tests ---------------------------------------------------------------------- */

START_TEST(a_41_kb_batch_asking_for_a_gigabyte_answer_is_refused_before_evaluating) {
  start(k_args);
  char *skel = sk_test_tree_skeleton(1024);
  put_body("big", "application/json", skel, strlen(skel));
  free(skel);
  probe_start();
  sk_strbuf b = {0};
  sk_strbuf_append(&b, "{\"poses\":[", 10);
  static const char pose[] = "{\"output\":[\"final\",\"absolute\",\"local\"]}";
  for (int i = 0; i < 1024; i++) {
    if (i > 0)
      sk_strbuf_append(&b, ",", 1);
    sk_strbuf_append(&b, pose, sizeof pose - 1);
  }
  sk_strbuf_append(&b, "]}", 2);
  ck_assert(!b.failed);
  ck_assert_uint_lt(b.len, 42 * 1024);
  sk_httpc_resp r;
  long before = status_kb("VmHWM");
  double ms = attack("1024 poses x 3 outputs x 1024 bones", "/v1/skeletons/big/poses", b.data, b.len, &r);
  ck_assert_msg(r.status == 413, "%d", r.status);
  ck_assert_msg(strstr(r.body, "--max-answer-mb") != NULL, "%.300s", r.body);
  ck_assert_msg(strstr(r.body, "\"pointer\":\"/poses") != NULL, "%.300s", r.body);
  sk_httpc_free(&r);
  ck_assert_msg(ms < 1000, "413 after %.0f ms", ms);
  expect_hwm(status_kb("VmHWM") - before, 16 * 1024, "VmHWM growth");
  sk_strbuf_free(&b);
  probe_stop("the gigabyte answer was refused");
  stop();
}
END_TEST

/* "[<item>,<item>,...]" of n items inside prefix and suffix. */
static char *repeated(const char *prefix, const char *item, size_t n, const char *suffix, size_t *len) {
  sk_strbuf b = {0};
  sk_strbuf_append(&b, prefix, strlen(prefix));
  for (size_t i = 0; i < n; i++) {
    if (i > 0)
      sk_strbuf_append(&b, ",", 1);
    sk_strbuf_append(&b, item, strlen(item));
  }
  sk_strbuf_append(&b, suffix, strlen(suffix));
  ck_assert(!b.failed);
  *len = b.len;
  return b.data;
}

/* 4 MB of "{}" builds a ~300 MB jansson tree: its bound is reserved in the
 * memory budget before the parse, so under a small budget the body gets a
 * 503 instead of the tree (and a body that fits is parsed as before). */
START_TEST(a_body_whose_parse_tree_does_not_fit_the_budget_gets_503_before_parsing) {
  static const char *const args[] = {"--memory-mb", "64", "--max-body", "8388608", NULL};
  start(args);
  put_asset("fox", "Fox.glb");
  size_t len;
  char *body = repeated("{\"poses\":[", "{}", 1300000, "]}", &len);
  long before = status_kb("VmHWM");
  sk_httpc_resp r;
  double ms = timed("POST", "/v1/skeletons/fox/poses", "application/json", body, len, &r);
  long after = status_kb("VmHWM");
  free(body);
  fprintf(stderr, "limits: %zu bytes of {} under --memory-mb 64: %d in %.0f ms, VmHWM %ld -> %ld MB\n", len, r.status, ms,
          before >> 10, after >> 10);
  ck_assert_msg(r.status == 503, "status %d: %.300s", r.status, r.body ? r.body : "");
  ck_assert_ptr_nonnull(strstr(r.body, "--memory-mb"));
  ck_assert_ptr_nonnull(strstr(r.head, "\r\nRetry-After: 1\r\n"));
  sk_httpc_free(&r);
  expect_hwm(after - before, 48 * 1024, "VmHWM growth");
  /* a large body whose tree fits is parsed and answered as before */
  body = repeated("{\"poses\":[", "{\"bones\":{\"b_Head_05\":{\"rotation\":[0,0.5,0]}}}", 600, "]}", &len);
  timed("POST", "/v1/skeletons/fox/poses", "application/json", body, len, &r);
  free(body);
  ck_assert_msg(r.status == 200, "status %d: %.300s", r.status, r.body ? r.body : "");
  sk_httpc_free(&r);
  stop();
}
END_TEST

START_TEST(multi_megabyte_pose_bodies_are_parsed_off_the_loop) {
  start(k_args);
  put_asset("mq", "mannequiny-0.3.0.glb");
  probe_start();
  size_t len;
  /* 2 M frame times: jansson alone held the loop ~200 ms for this */
  char *body = repeated("{\"animation\":\"walk\",\"times\":[", "0", 2000000, "]}", &len);
  sk_httpc_resp r;
  attack("a 4 MB list of frame times", "/v1/skeletons/mq/pose", body, len, &r);
  expect_loop_free("a 4 MB body");
  expect_problem(&r, 413, "/times", "--max-frames");
  sk_httpc_free(&r);
  free(body);
  body = repeated("{\"poses\":[", "{}", 200000, "]}", &len);
  attack("200 000 empty poses", "/v1/skeletons/mq/poses", body, len, &r);
  expect_loop_free("200 000 poses");
  expect_problem(&r, 413, "/poses", "--max-batch");
  sk_httpc_free(&r);
  free(body);
  /* a large body that is fine answers as a small one does */
  static const char item[] = "{\"animation\":\"walk\",\"time\":0.25,\"loop\":false,\"output\":[\"final\"]}";
  body = repeated("{\"poses\":[", item, 1024, "]}", &len);
  ck_assert_uint_ge(len, 64 * 1024);
  attack("1024 clip poses in a 66 KB body", "/v1/skeletons/mq/poses", body, len, &r);
  expect_loop_free("a 66 KB batch");
  ck_assert_msg(r.status == 200, "%d %.300s", r.status, r.body);
  json_t *big = json_loads(r.body, 0, NULL);
  sk_httpc_free(&r);
  free(body);
  body = repeated("{\"poses\":[", item, 16, "]}", &len);
  timed("POST", "/v1/skeletons/mq/poses", "application/json", body, len, &r);
  free(body);
  ck_assert_int_eq(r.status, 200);
  json_t *small = json_loads(r.body, 0, NULL);
  sk_httpc_free(&r);
  ck_assert_ptr_nonnull(big);
  ck_assert_ptr_nonnull(small);
  ck_assert_uint_eq(json_array_size(json_object_get(big, "results")), 1024);
  /* a full 16-pose kernel block in both (partial blocks may round differently) */
  for (size_t i = 0; i < 16; i++)
    ck_assert(json_equal(json_array_get(json_object_get(big, "results"), i),
                         json_array_get(json_object_get(small, "results"), i)));
  json_decref(big);
  json_decref(small);
  /* PATCH and /rest bodies too: parsed on the pool, refused at their field */
  body = repeated("{\"x\":[", "0", 2000000, "]}", &len);
  attack_with("PATCH", "a 4 MB PATCH body", "/v1/skeletons/mq/bones", body, len, &r);
  expect_loop_free("a 4 MB PATCH");
  expect_problem(&r, 422, "/x", "unknown field");
  sk_httpc_free(&r);
  timed("POST", "/v1/skeletons/mq/rest", "application/json", body, len, &r);
  expect_problem(&r, 422, "/x", "unknown field");
  sk_httpc_free(&r);
  body[len - 1] = ',';
  timed("PATCH", "/v1/skeletons/mq/bones", "application/json", body, len, &r);
  ck_assert_int_eq(r.status, 400);
  sk_httpc_free(&r);
  free(body);
  /* a valid PATCH padded past 32 KiB (pool) does what the same small one (loop) does */
  put_asset("mq2", "mannequiny-0.3.0.glb");
  timed("GET", "/v1/skeletons/mq", NULL, NULL, 0, &r);
  json_t *sk = json_loads(r.body, 0, NULL);
  sk_httpc_free(&r);
  ck_assert_ptr_nonnull(sk);
  char patch[256];
  int n = snprintf(patch, sizeof patch, "{\"bones\":{\"%s\":{\"position\":[0,1,0],\"rotation\":[0.1,0.2,0.3]}}}",
                   json_string_value(json_array_get(json_object_get(sk, "order"), 3)));
  json_decref(sk);
  timed("PATCH", "/v1/skeletons/mq/bones", "application/json", patch, (size_t)n, &r);
  ck_assert_int_eq(r.status, 200);
  json_t *small_patch = json_loads(r.body, 0, NULL);
  sk_httpc_free(&r);
  body = malloc(40000 + (size_t)n);
  memset(body, ' ', 40000);
  memcpy(body + 40000, patch, (size_t)n);
  timed("PATCH", "/v1/skeletons/mq2/bones", "application/json", body, 40000 + (size_t)n, &r);
  ck_assert_int_eq(r.status, 200);
  json_t *big_patch = json_loads(r.body, 0, NULL);
  sk_httpc_free(&r);
  free(body);
  ck_assert(json_equal(json_object_get(small_patch, "bones"), json_object_get(big_patch, "bones")));
  json_decref(small_patch);
  json_decref(big_patch);
  /* and a 404 still comes after the 400 for a large body */
  body = repeated("{\"poses\":[", "{}", 40000, "]}", &len);
  timed("POST", "/v1/skeletons/nope/poses", "application/json", body, len, &r);
  expect_problem(&r, 404, "", "nope");
  sk_httpc_free(&r);
  body[len - 1] = ',';
  timed("POST", "/v1/skeletons/nope/poses", "application/json", body, len, &r);
  ck_assert_int_eq(r.status, 400);
  sk_httpc_free(&r);
  free(body);
  probe_stop("multi-megabyte pose bodies were parsed");
  long hwm = status_kb("VmHWM");
  expect_hwm(hwm, 256 * 1024, "VmHWM");
  stop();
}
END_TEST

/* With --data-dir, a large upload's record is encoded, checksummed,
 * written and synced where the upload is built (the pool), and only put in
 * place on the loop thread (a rename and the directory's fsync): those
 * 1.9 MB of mannequiny held the loop 10-25 ms of CPU in one iteration per
 * PUT before (a CRC over every byte and the write's copy), 2.5 ms at most
 * since. A new id, then the same id replaced twice. */
START_TEST(a_large_upload_to_a_data_directory_is_written_off_the_loop) {
  char dir[] = "/tmp/sk_limits_datadir_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  const char *const args[] = {"--max-body", "8388608", "--threads", "2", "--data-dir", dir, NULL};
  start(args);
  loop_hist a, b;
  for (int i = 0; i < 3; i++) {
    loop_read(&a);
    put_asset("mq", "mannequiny-0.3.0.glb");
    loop_read(&b);
    const double cpu = loop_longest(a.cpu, b.cpu), wall = loop_longest(a.wall, b.wall);
    fprintf(stderr, "limits: PUT mq with --data-dir: loop iterations <= %g ms (CPU <= %g ms)\n", wall, cpu);
    /* the sanitizers make the loop's own share (the entry, the answer) ~3 x slower */
    const double bound = sk_daemon_sanitized(&D) ? 25 : 10;
    ck_assert_msg(loop_over(a.cpu, b.cpu, bound) == 0, "a loop iteration used over %.0f ms of CPU in PUT %d", bound,
                  i);
  }
  /* every record in place, no temporary file left */
  char cmd[160];
  snprintf(cmd, sizeof cmd, "test -f '%s/mq.rec' && ! ls -A '%s' | grep -q '^~tmp-'", dir, dir);
  ck_assert_int_eq(system(cmd), 0);
  stop();
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(flags_and_environment_set_the_limits) {
  const char *exe = getenv("SKINNERD") ? getenv("SKINNERD") : "./skinnerd";
  char cmd[1200];
  static const char *const bad[] = {"--max-frames 0", "--max-layers x", "--max-work -1", "--max-answer-mb 0",
                                    "--max-skeleton-mb 2000000"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", exe, bad[i]);
    ck_assert_msg(WEXITSTATUS(system(cmd)) == 2, "%s was accepted", bad[i]);
  }
  snprintf(cmd, sizeof cmd, "SKINNERD_MAX_WORK=lots %s 2>/dev/null", exe);
  ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
  static const char *const help[] = {"--max-frames N", "SKINNERD_MAX_FRAMES", "--max-layers N", "SKINNERD_MAX_LAYERS",
                                     "--max-work N", "SKINNERD_MAX_WORK", "--max-answer-mb N", "SKINNERD_MAX_ANSWER_MB",
                                     "--max-skeleton-mb N", "SKINNERD_MAX_SKELETON_MB"};
  for (size_t i = 0; i < sizeof help / sizeof help[0]; i++) {
    snprintf(cmd, sizeof cmd, "%s --help | grep -q -- '%s'", exe, help[i]);
    ck_assert_msg(WEXITSTATUS(system(cmd)) == 0, "--help does not mention %s", help[i]);
  }

  setenv("SKINNERD_MAX_FRAMES", "5", 1);
  const char *const args[] = {"--max-layers", "2", "--max-work", "100000", "--max-skeleton-mb", "1", NULL};
  start(args);
  put_asset("fox", "Fox.glb"); /* estimated at ~110 KB */
  sk_httpc_resp r;
  size_t len;
  char *mq = (char *)sk_test_read_asset("mannequiny-0.3.0.glb", &len); /* ~1.1 MB */
  timed("PUT", "/v1/skeletons/mq", "model/gltf-binary", mq, len, &r);
  free(mq);
  ck_assert_msg(r.status == 413 && strstr(r.body, "--max-skeleton-mb"), "%d %.300s", r.status, r.body);
  sk_httpc_free(&r);
  static const char five[] = "{\"animation\":\"Walk\",\"times\":[0,0.1,0.2,0.3,0.4]}";
  timed("POST", "/v1/skeletons/fox/pose", "application/json", five, strlen(five), &r);
  ck_assert_int_eq(r.status, 200);
  sk_httpc_free(&r);
  static const char six[] = "{\"animation\":\"Walk\",\"times\":[0,0.1,0.2,0.3,0.4,0.5]}";
  timed("POST", "/v1/skeletons/fox/pose", "application/json", six, strlen(six), &r);
  expect_problem(&r, 413, "/times", "the limit is 5 (--max-frames)");
  sk_httpc_free(&r);
  char *l3 = layers_body(3);
  timed("POST", "/v1/skeletons/fox/pose", "application/json", l3, strlen(l3), &r);
  expect_problem(&r, 413, "/layers", "the limit is 2 (--max-layers)");
  sk_httpc_free(&r);
  free(l3);
  /* 1024 plain poses of 24 bones: 125 units each as JSON (25 matrices, 4 a
   * matrix to write), over 100 000 */
  char *batch = repeated("{\"poses\":[", "{}", 1024, "]}", &len);
  timed("POST", "/v1/skeletons/fox/poses", "application/json", batch, len, &r);
  expect_problem(&r, 413, "/poses", "the limit is 100000 (--max-work)");
  sk_httpc_free(&r);
  stop();
  unsetenv("SKINNERD_MAX_FRAMES");
  /* as float32 the same batch is 25 units a pose but 1.6 MB */
  const char *const args2[] = {"--max-answer-mb", "1", NULL};
  start(args2);
  put_asset("fox", "Fox.glb");
  char h[128];
  snprintf(h, sizeof h, "Content-Type: application/json\r\nAccept: application/octet-stream\r\n");
  ck_assert_int_eq(sk_httpc_request(D.host, D.port, "POST", "/v1/skeletons/fox/poses", h, batch, len, &r), 0);
  expect_problem(&r, 413, "/poses", "the limit is 1048576 (--max-answer-mb)");
  sk_httpc_free(&r);
  free(batch);
  stop();
}
END_TEST

static Suite *limits_bodies_suite(void) {
  Suite *s = suite_create("limits_bodies");
  TCase *t = tcase_create("attacks");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, a_41_kb_batch_asking_for_a_gigabyte_answer_is_refused_before_evaluating);
  tcase_add_test(t, multi_megabyte_pose_bodies_are_parsed_off_the_loop);
  tcase_add_test(t, a_body_whose_parse_tree_does_not_fit_the_budget_gets_503_before_parsing);
  tcase_add_test(t, flags_and_environment_set_the_limits);
  tcase_add_test(t, a_large_upload_to_a_data_directory_is_written_off_the_loop);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(limits_bodies_suite()); }
