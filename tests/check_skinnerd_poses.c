/* End to end: the real skinnerd on 127.0.0.1 and a free port, driven over
 * HTTP: its pose answers against skinner eval on the conformance cases, in
 * JSON, float32 and mat3x4, alone and in batches inline or on the pool,
 * and under sixteen clients at once (lifecycle, skeleton routes and errors
 * are check_skinnerd.c). Test names are sentences of behaviour. Every test
 * starts its own daemon and stops it (kill + waitpid); PR_SET_PDEATHSIG
 * takes it down if the test process dies first. */
#include <pthread.h>

#include "sk_eval.h"
#include "sk_json.h"
#include "sk_casecheck.h"
#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_jsonl.h"
#include "sk_testskel.h"
#include "sk_testutil.h"

static sk_daemon D;

static void start(const char *const *extra) { sk_fixture_start(&D, extra); }

static void stop(void) { sk_fixture_stop(&D); }

/* One request with an optional JSON body. */
static void req(const char *method, const char *path, const char *hdrs, const char *body, sk_httpc_resp *r) {
  sk_fixture_json_request(&D, method, path, hdrs, body, r);
}

static json_t *body_json(const sk_httpc_resp *r) { return sk_fixture_body_json(r); }

/* A pose overriding a few bones, varied by `k`, its initial skin matrix too. */
static char *make_pose(int k, int nbones) { return sk_test_tree_pose(k, nbones, false); }

/* An animation frame: a rotation on every bone, a position on every third,
 * one initial skin for all (the kernel's TRS mode). */
static char *make_full_frame(int k, int nbones) {
  sk_strbuf b = {0};
  const char *head = "{\"initialSkinMatrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0.5,0,0,1],\"bones\":{";
  sk_strbuf_append(&b, head, strlen(head));
  for (int i = 0; i < nbones; i++) {
    char one[256];
    double a = 0.01 * (k + 1) * (i % 7 - 3);
    int n = snprintf(one, sizeof one, "%s\"bone%d\":{\"rotationQuaternion\":[%.6f,%.6f,0,%.6f]%s}", i ? "," : "", i,
                     sin(a) * 0.6, sin(a) * 0.8, cos(a), i % 3 == 0 ? ",\"position\":[0,0.25,0]" : "");
    sk_strbuf_append(&b, one, (size_t)n);
  }
  sk_strbuf_append(&b, "}}", 2);
  return b.data;
}

static void put_skeleton(const char *id, const char *body) { sk_fixture_put_json(&D, id, body); }

/* ---- conformance ----------------------------------------------------------- */

/* The result object `skinner eval` prints for a case with this one op. */

static void compare_close(const json_t *got, const json_t *want, const char *what) {
  ck_assert_msg(json_array_size(got) == json_array_size(want), "%s: %zu numbers, want %zu", what,
                json_array_size(got), json_array_size(want));
  for (size_t m = 0; m < json_array_size(want); m += 16) {
    float g[16], w[16];
    for (int i = 0; i < 16; i++) {
      g[i] = (float)json_number_value(json_array_get(got, m + (size_t)i));
      w[i] = (float)json_number_value(json_array_get(want, m + (size_t)i));
    }
    SK_ASSERT_MAT_CLOSE(g, w, 1e-5);
  }
}

START_TEST(pose_answers_equal_skinner_eval_on_the_conformance_cases) {
  start(NULL);
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/cases.jsonl");
  int cases = 0, poses = 0;
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    const json_t *c = json_object_get(rec, "case");
    const json_t *ops = json_object_get(c, "ops");
    bool only_poses = json_array_size(ops) > 0 && json_object_get(rec, "reject") == NULL;
    for (size_t i = 0; i < json_array_size(ops); i++) {
      const char *op = json_string_value(json_object_get(json_array_get(ops, i), "op"));
      only_poses &= strcmp(op, "pose") == 0 || strcmp(op, "evaluate") == 0;
    }
    if (!only_poses) {
      json_decref(rec);
      continue;
    }
    char id[32], url[64];
    snprintf(id, sizeof id, "case%d", cases++);
    char *skel = json_dumps(json_object_get(c, "skeleton"), JSON_COMPACT);
    put_skeleton(id, skel);
    free(skel);
    snprintf(url, sizeof url, "/v1/skeletons/%s/pose", id);
    const json_t *expected = json_object_get(json_object_get(rec, "expected"), "results");
    for (size_t i = 0; i < json_array_size(ops); i++) {
      json_t *op = json_deep_copy(json_array_get(ops, i));
      char *want = sk_casecheck_eval_one(json_object_get(c, "skeleton"), op);
      json_object_del(op, "op");
      char *body = json_dumps(op, JSON_COMPACT);
      sk_httpc_resp r;
      req("POST", url, NULL, body, &r);
      ck_assert_msg(r.status == 200, "%s op %zu: %d %s", id, i, r.status, r.body);
      ck_assert_msg(strcmp(r.body, want) == 0, "%s op %zu: differs from skinner eval:\n got %.200s\nwant %.200s", id, i,
                    r.body, want);
      json_t *got = body_json(&r);
      const json_t *exp = json_array_get(expected, i);
      const char *key;
      json_t *val;
      json_object_foreach((json_t *)exp, key, val) compare_close(json_object_get(got, key), val, key);
      json_decref(got);
      sk_httpc_free(&r);
      free(body);
      free(want);
      json_decref(op);
      poses++;
    }
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  ck_assert_int_ge(cases, 20);
  stop();
}
END_TEST

/* ---- binary and batches ---------------------------------------------------------- */

static void floats_of(const json_t *a, float *dest) {
  for (size_t i = 0; i < json_array_size(a); i++)
    dest[i] = (float)json_number_value(json_array_get(a, i));
}

START_TEST(binary_answers_hold_the_json_numbers_as_float32) {
  start(NULL);
  char *skel = sk_test_tree_skeleton(65);
  put_skeleton("b", skel);
  free(skel);
  char *pose = make_pose(3, 65);
  sk_httpc_resp rj, rb, rm;
  req("POST", "/v1/skeletons/b/pose", NULL, pose, &rj);
  ck_assert_int_eq(rj.status, 200);
  json_t *j = body_json(&rj);
  const json_t *fin = json_object_get(j, "final");
  ck_assert_uint_eq(json_array_size(fin), 66 * 16);
  float want[66 * 16];
  floats_of(fin, want);
  req("POST", "/v1/skeletons/b/pose", "Accept: application/octet-stream\r\n", pose, &rb);
  ck_assert_int_eq(rb.status, 200);
  char h[64];
  ck_assert_str_eq(sk_httpc_header(&rb, "Content-Type", h, sizeof h), "application/octet-stream");
  ck_assert_str_eq(sk_httpc_header(&rb, "Skinner-Bone-Count", h, sizeof h), "65");
  ck_assert_str_eq(sk_httpc_header(&rb, "Skinner-Pose-Count", h, sizeof h), "1");
  ck_assert_str_eq(sk_httpc_header(&rb, "Skinner-Matrix-Count", h, sizeof h), "66");
  ck_assert_uint_eq(rb.len, sizeof want);
  /* == rather than memcmp: jansson reads the JSON "-0" as integer 0 */
  const float *got = (const float *)(const void *)rb.body;
  for (size_t i = 0; i < 66 * 16; i++)
    ck_assert_msg(got[i] == want[i], "float %zu: binary %.9g, JSON %.9g", i, got[i], want[i]);
  /* q-values pick the binary form; mat3x4 is the transposed first three columns */
  req("POST", "/v1/skeletons/b/pose",
      "Accept: application/json;q=0.2, application/*;q=0.1, application/x-skinner-mat3x4;q=0.9\r\n", pose, &rm);
  ck_assert_int_eq(rm.status, 200);
  ck_assert_str_eq(sk_httpc_header(&rm, "Content-Type", h, sizeof h), "application/x-skinner-mat3x4");
  ck_assert_uint_eq(rm.len, 66 * 12 * sizeof(float));
  float m34[66 * 12];
  memcpy(m34, rm.body, sizeof m34);
  for (int k = 0; k < 66; k++)
    for (int c = 0; c < 3; c++)
      for (int rr = 0; rr < 4; rr++)
        ck_assert(m34[12 * k + 4 * c + rr] == want[16 * k + 4 * rr + c]);
  sk_httpc_free(&rj);
  sk_httpc_free(&rb);
  sk_httpc_free(&rm);
  /* a wildcard Accept gives JSON */
  req("POST", "/v1/skeletons/b/pose", "Accept: */*\r\n", pose, &rj);
  ck_assert_str_eq(sk_httpc_header(&rj, "Content-Type", h, sizeof h), "application/json");
  sk_httpc_free(&rj);
  json_decref(j);
  free(pose);
  stop();
}
END_TEST

START_TEST(fast_binary_answers_are_within_1e5_of_the_exact_ones) {
  const char *const args[] = {"--fast-binary", NULL};
  start(args);
  char *skel = sk_test_tree_skeleton(65);
  put_skeleton("f", skel);
  free(skel);
  for (int k = 0; k < 10; k++) {
    char *pose = make_pose(k, 65);
    sk_httpc_resp rj, rb;
    req("POST", "/v1/skeletons/f/pose", NULL, pose, &rj);
    req("POST", "/v1/skeletons/f/pose", "Accept: application/octet-stream\r\n", pose, &rb);
    ck_assert_int_eq(rb.status, 200);
    ck_assert_uint_eq(rb.len, 66 * 16 * sizeof(float));
    json_t *j = body_json(&rj);
    float want[66 * 16];
    floats_of(json_object_get(j, "final"), want);
    for (int m = 0; m < 66; m++)
      SK_ASSERT_MAT_CLOSE((const float *)(const void *)rb.body + m * 16, want + m * 16, 1e-5);
    json_decref(j);
    sk_httpc_free(&rj);
    sk_httpc_free(&rb);
    free(pose);
  }
  stop();
}
END_TEST

/* Pose k of batch variant v: 0 varied skins (scalar core), 1 one skin
 * (kernel, MATRIX lanes), 2 full frames (kernel, TRS lanes). */
static char *variant_pose(int v, int k) {
  return v == 2 ? make_full_frame(k, 65) : sk_test_tree_pose(k, 65, v == 1);
}

typedef struct batch_of {
  int first, variant;
} batch_of;

static char *batch_pose(int i, const void *arg) {
  const batch_of *b = arg;
  return variant_pose(b->variant, b->first + i);
}

/* The batch of `n` poses as a JSON body. */
static char *make_batch(int n, int first, int variant) {
  const batch_of b = {first, variant};
  return sk_test_batch_body(n, batch_pose, &b);
}

START_TEST(batches_equal_single_poses_inline_or_on_the_pool) {
  /* daemon A evaluates small batches inline; daemon B sends every batch to
   * the thread pool: same bytes. */
  start(NULL);
  sk_daemon a = D;
  const char *const args[] = {"--inline-limit", "0", NULL};
  start(args);
  sk_daemon b = D;
  char *skel = sk_test_tree_skeleton(65);
  D = a;
  put_skeleton("k", skel);
  D = b;
  put_skeleton("k", skel);
  free(skel);
  for (int variant = 0; variant < 3; variant++) {
    char *batch = make_batch(20, 0, variant);
    sk_httpc_resp ra, rb, ba, bb;
    D = a;
    req("POST", "/v1/skeletons/k/poses", NULL, batch, &ra);
    req("POST", "/v1/skeletons/k/poses", "Accept: application/octet-stream\r\n", batch, &ba);
    D = b;
    req("POST", "/v1/skeletons/k/poses", NULL, batch, &rb);
    req("POST", "/v1/skeletons/k/poses", "Accept: application/octet-stream\r\n", batch, &bb);
    ck_assert_int_eq(ra.status, 200);
    ck_assert_int_eq(rb.status, 200);
    ck_assert_str_eq(ra.body, rb.body);
    ck_assert_uint_eq(ba.len, 20 * 66 * 16 * sizeof(float));
    ck_assert_uint_eq(ba.len, bb.len);
    ck_assert(memcmp(ba.body, bb.body, ba.len) == 0);
    char h[32];
    ck_assert_str_eq(sk_httpc_header(&bb, "Skinner-Pose-Count", h, sizeof h), "20");
    /* every batch result equals the single pose */
    json_t *jr = body_json(&ra);
    const json_t *results = json_object_get(jr, "results");
    ck_assert_uint_eq(json_array_size(results), 20);
    D = a;
    for (int i = 0; i < 20; i++) {
      char *p = variant_pose(variant, i);
      sk_httpc_resp rs;
      req("POST", "/v1/skeletons/k/pose", NULL, p, &rs);
      json_t *js = body_json(&rs);
      compare_close(json_object_get(json_array_get(results, (size_t)i), "final"), json_object_get(js, "final"),
                    "final");
      float single[66 * 16];
      floats_of(json_object_get(js, "final"), single);
      for (int m = 0; m < 66; m++)
        SK_ASSERT_MAT_CLOSE((const float *)(const void *)ba.body + (size_t)(i * 66 + m) * 16, single + m * 16, 1e-5);
      json_decref(js);
      sk_httpc_free(&rs);
      free(p);
    }
    json_decref(jr);
    sk_httpc_free(&ra);
    sk_httpc_free(&rb);
    sk_httpc_free(&ba);
    sk_httpc_free(&bb);
    free(batch);
  }
  D = b;
  stop();
  D = a;
  stop();
}
END_TEST

/* ---- concurrency ------------------------------------------------------------------- */

typedef struct {
  int thread, failures;
  char why[256];
  const sk_skeleton *ref;
} worker_arg;

static void *worker(void *p) {
  worker_arg *w = p;
  sk_pose_buffers buf;
  sk_pose_buffers_init(&buf, w->ref->count);
  for (int i = 0; i < 50; i++) {
    int k = w->thread * 50 + i;
    char *pose = make_pose(k, 65);
    /* the expected answer, computed here with the same core */
    json_t *pj = json_loads(pose, 0, NULL);
    sk_pose sp;
    sk_strbuf want = {0};
    if (sk_pose_parse(w->ref, pj, "", NULL, &sp, NULL) == 0) {
      sk_pose_evaluate(w->ref, &sp, &buf);
      sk_pose_write_json(w->ref, &sp, &buf, NULL, &want);
      sk_pose_close(&sp);
    }
    json_decref(pj);
    sk_httpc_resp r;
    const char *path = (k % 3 == 2) ? "/v1/skeletons/c/poses" : "/v1/skeletons/c/pose";
    char *body = pose;
    char *wrapped = NULL;
    if (k % 3 == 2) {
      size_t n = strlen(pose) + 16;
      wrapped = malloc(n);
      snprintf(wrapped, n, "{\"poses\":[%s]}", pose);
      body = wrapped;
    }
    int rc = sk_httpc_request(D.host, D.port, "POST", path, "Content-Type: application/json\r\n", body, strlen(body),
                              &r);
    bool ok = rc == 0 && r.status == 200;
    if (ok && k % 3 != 2)
      ok = strcmp(r.body, want.data) == 0;
    else if (ok) {
      json_t *got = json_loads(r.body, 0, NULL);
      json_t *w1 = json_loads(want.data, 0, NULL);
      const json_t *gf = json_object_get(json_array_get(json_object_get(got, "results"), 0), "final");
      const json_t *wf = json_object_get(w1, "final");
      ok = json_array_size(gf) == json_array_size(wf);
      for (size_t m = 0; ok && m < json_array_size(wf); m += 16) {
        float g[16], e[16];
        for (int q = 0; q < 16; q++) {
          g[q] = (float)json_number_value(json_array_get(gf, m + (size_t)q));
          e[q] = (float)json_number_value(json_array_get(wf, m + (size_t)q));
        }
        ok = sk_test_mat_close(g, e, 1e-5);
      }
      json_decref(got);
      json_decref(w1);
    }
    if (!ok) {
      if (w->failures++ == 0)
        snprintf(w->why, sizeof w->why, "request %d: rc %d status %d %.100s", k, rc, r.status, r.body ? r.body : "");
    }
    sk_httpc_free(&r);
    sk_strbuf_free(&want);
    free(wrapped);
    free(pose);
  }
  sk_pose_buffers_close(&buf);
  return NULL;
}

START_TEST(sixteen_clients_at_once_all_get_correct_answers) {
  start(NULL);
  char *skel = sk_test_tree_skeleton(65);
  put_skeleton("c", skel);
  json_t *sj = json_loads(skel, 0, NULL);
  sk_skeleton *ref;
  ck_assert_int_eq(sk_json_parse_skeleton(sj, "", 0, &ref, NULL), 0);
  json_decref(sj);
  free(skel);
  pthread_t t[16];
  worker_arg w[16];
  for (int i = 0; i < 16; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].thread = i;
    w[i].ref = ref;
    ck_assert_int_eq(pthread_create(&t[i], NULL, worker, &w[i]), 0);
  }
  int failures = 0;
  for (int i = 0; i < 16; i++) {
    pthread_join(t[i], NULL);
    if (w[i].failures)
      fprintf(stderr, "client %d: %d failures, first: %s\n", i, w[i].failures, w[i].why);
    failures += w[i].failures;
  }
  sk_skeleton_destroy(ref);
  ck_assert_int_eq(failures, 0);
  /* metrics saw them all */
  sk_httpc_resp r;
  req("GET", "/metrics", NULL, NULL, &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_ptr_nonnull(strstr(r.body, "skinnerd_poses_evaluated_total 800\n"));
  ck_assert_ptr_nonnull(strstr(r.body, "skinnerd_bone_matrices_evaluated_total 52800\n"));
  ck_assert_ptr_nonnull(strstr(r.body, "skinnerd_cache_skeletons 1\n"));
  ck_assert_ptr_nonnull(
      strstr(r.body, "skinnerd_requests_total{route=\"/v1/skeletons/{id}/pose\",method=\"POST\",status=\"200\"} 534\n"));
  ck_assert_ptr_nonnull(strstr(r.body, "skinnerd_request_duration_seconds_count{route=\"/v1/skeletons/{id}/poses\"} 266\n"));
  sk_httpc_free(&r);
  stop();
}
END_TEST

static Suite *skinnerd_poses_suite(void) {
  Suite *s = suite_create("skinnerd_poses");
  TCase *t = tcase_create("conformance");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, pose_answers_equal_skinner_eval_on_the_conformance_cases);
  suite_add_tcase(s, t);
  t = tcase_create("poses");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, binary_answers_hold_the_json_numbers_as_float32);
  tcase_add_test(t, batches_equal_single_poses_inline_or_on_the_pool);
  tcase_add_test(t, fast_binary_answers_are_within_1e5_of_the_exact_ones);
  suite_add_tcase(s, t);
  t = tcase_create("concurrency");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, sixteen_clients_at_once_all_get_correct_answers);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(skinnerd_poses_suite()); }
