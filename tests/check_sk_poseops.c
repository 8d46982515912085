/* sk_poseops: Bone-API ops on the daemon's pose requests, without HTTP.
 *
 *      hip            a chain of four bones and a second root:
 *       `- thigh        ik on "shin" bends thigh and shin toward the target
 *           `- shin
 *               `- foot
 *      prop
 */
#include "sk_poseops.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sk_cache.h"
#include "sk_eval.h"
#include "sk_frames.h"
#include "sk_json.h"
#include "sk_testutil.h"

static const char *const k_skel =
    "{\"bones\": [{\"name\": \"hip\", \"position\": [0, 1, 0], \"length\": 0.2},"
    "{\"name\": \"thigh\", \"parent\": \"hip\", \"position\": [0.1, -0.1, 0], \"rotation\": [0, 0, 0.1], \"length\": 0.45},"
    "{\"name\": \"shin\", \"parent\": \"thigh\", \"position\": [0, -0.45, 0], \"length\": 0.42},"
    "{\"name\": \"foot\", \"parent\": \"shin\", \"position\": [0, -0.42, 0], \"scaling\": [1, 1.2, 0.9]},"
    "{\"name\": \"prop\", \"position\": [0.5, 0.5, 0.5]}]}";

typedef struct fixture {
  sk_cache *cache;
  sk_cache_entry *e;
} fixture;

static void leg(fixture *f) {
  json_t *j = json_loads(k_skel, 0, NULL);
  sk_skeleton *s;
  ck_assert_int_eq(sk_json_parse_skeleton(j, "", 0, &s, NULL), 0);
  json_decref(j);
  ck_assert_int_eq(sk_cache_create(0, &f->cache), 0);
  ck_assert_int_eq(sk_cache_put(f->cache, "leg", s, NULL, &f->e), 0);
}

static void fixture_close(fixture *f) {
  sk_cache_entry_unref(f->e);
  sk_cache_destroy(f->cache);
}

/* sk_poseops_sample's error for pose `text` answered in `fmt`, with its pointer. */
static int sample_error(const fixture *f, const char *text, int fmt, sk_error *err) {
  json_t *j = json_loads(text, 0, NULL);
  ck_assert_ptr_nonnull(j);
  sk_poseops *owner = NULL;
  sk_pose *poses = NULL;
  size_t n = 0;
  sk_error_clear(err);
  int rc = sk_poseops_sample(sk_frames_sample_default, f->e->model, j, "/poses/2", fmt, &owner, &poses, &n, err);
  json_decref(j);
  ck_assert_ptr_null(owner); /* nothing kept on failure */
  sk_pose_array_free(poses, rc ? 0 : n);
  return rc;
}

START_TEST(test_errors_name_the_field) {
  fixture f;
  leg(&f);
  sk_error err;
  ck_assert_int_eq(sample_error(&f, "{\"ops\": [{\"op\": \"rotate\", \"bone\": \"knee\", \"axis\": [1, 0, 0], \"amount\": 1}]}",
                                SK_FMT_JSON, &err),
                   SK_EUNKNOWN); /* a 422: a field of the body, not a missing resource */
  ck_assert_str_eq(err.pointer, "/poses/2/ops/0/bone");
  ck_assert_int_eq(sample_error(&f, "{\"ops\": [{\"op\": \"rotate\", \"bone\": \"shin\", \"axis\": [0, 0, 0], \"amount\": 1}]}",
                                SK_FMT_JSON, &err),
                   SK_ERANGE);
  ck_assert_str_eq(err.pointer, "/poses/2/ops/0/axis");
  ck_assert_int_eq(sample_error(&f, "{\"ops\": [{\"op\": \"twist\", \"bone\": \"shin\"}]}", SK_FMT_JSON, &err), SK_ERANGE);
  ck_assert_str_eq(err.pointer, "/poses/2/ops/0/op");
  ck_assert_ptr_nonnull(strstr(err.text, "twist"));
  ck_assert_int_eq(sample_error(&f, "{\"mesh\": {\"scaling\": [1, 0, 1]}}", SK_FMT_JSON, &err), SK_ESINGULAR);
  ck_assert_str_eq(err.pointer, "/poses/2/mesh");
  ck_assert_int_eq(sample_error(&f, "{\"ops\": [{\"op\": \"ik\", \"bone\": \"hip\", \"target\": [0, 0, 0]}]}",
                                SK_FMT_JSON, &err),
                   SK_ERANGE);
  ck_assert_str_eq(err.pointer, "/poses/2/ops/0/bone");
  ck_assert_int_eq(sample_error(&f, "{\"output\": [\"world\", \"final\", \"world\"]}", SK_FMT_JSON, &err), SK_EDUPLICATE);
  ck_assert_str_eq(err.pointer, "/poses/2/output/2");
  ck_assert_int_eq(sample_error(&f, "{\"ops\": [{\"op\": \"setScale\", \"bone\": \"foot\", \"scale\": [2, 2, 2]},"
                                    "{\"op\": \"query\", \"bone\": \"foot\", \"get\": \"scale\"}]}",
                                SK_FMT_F32, &err),
                   SK_ERANGE);
  ck_assert_str_eq(err.pointer, "/poses/2/ops/1");
  /* the clip sampler still judges the rest: an unknown key after the extras are out */
  ck_assert_int_eq(sample_error(&f, "{\"ops\": [], \"bonez\": {}}", SK_FMT_JSON, &err), SK_EUNKNOWN);
  ck_assert_str_eq(err.pointer, "/poses/2/bonez");
  fixture_close(&f);
}
END_TEST

START_TEST(test_plain_poses_stay_plain) {
  fixture f;
  leg(&f);
  json_t *j = json_loads("{\"bones\": {\"shin\": {\"rotation\": [0.5, 0, 0]}}, \"output\": [\"final\", \"local\"]}", 0, NULL);
  sk_poseops *owner = NULL;
  sk_pose *poses = NULL;
  size_t n = 0;
  ck_assert_int_eq(
      sk_poseops_sample(sk_frames_sample_default, f.e->model, j, "", SK_FMT_JSON, &owner, &poses, &n, NULL), 0);
  ck_assert_ptr_null(owner);
  ck_assert_uint_eq(n, 1);
  ck_assert_ptr_null(poses[0].ops);
  sk_pose_array_free(poses, n);
  json_decref(j);
  fixture_close(&f);
}
END_TEST

/* The daemon's answer to the batch texts[0..n) (pose objects) of entry `e`
 * through sk_frames, with scratch `sc` (NULL: a fresh one). */
static void frames_batch_on(const sk_cache_entry *e, const char *const *texts, size_t n, int fmt,
                            sk_frames_scratch *sc, sk_strbuf *out) {
  sk_poseops *owner = NULL;
  sk_pose poses[4];
  ck_assert_uint_le(n, 4);
  for (size_t k = 0; k < n; k++) {
    json_t *j = json_loads(texts[k], 0, NULL);
    ck_assert_ptr_nonnull(j);
    sk_pose *one = NULL;
    size_t m = 0;
    ck_assert_int_eq(sk_poseops_sample(sk_frames_sample_default, e->model, j, "", fmt, &owner, &one, &m, NULL), 0);
    ck_assert_uint_eq(m, 1);
    poses[k] = one[0];
    free(one);
    json_decref(j);
    if (fmt != SK_FMT_JSON)
      poses[k].output = SK_OUT_FINAL; /* as sk_routes__binary_outputs does */
  }
  const sk_frames_opts fo = {.fmt = fmt};
  ck_assert(!sk_frames_uses_kernel(e->model, poses, n, &fo));
  sk_frames_scratch own = {0};
  ck_assert_int_eq(sk_frames_eval(e->model, poses, n, &fo, sc != NULL ? sc : &own, out), 0);
  sk_frames_scratch_close(&own);
  for (size_t k = 0; k < n; k++)
    sk_pose_close(&poses[k]);
  sk_poseops_free(owner);
}

/* `copies` copies of `pose` in one batch. */
static void frames_answer(const fixture *f, const char *pose, int fmt, size_t copies, sk_strbuf *out) {
  const char *texts[4] = {pose, pose, pose, pose};
  frames_batch_on(f->e, texts, copies, fmt, NULL, out);
}

static const char *const k_pose =
    "{\"bones\": {\"hip\": {\"position\": [0, 1.1, 0]}},"
    " \"ops\": [{\"op\": \"ik\", \"bone\": \"shin\", \"target\": [0.3, 0.3, 0.2], \"poleTarget\": [0, 0.6, -1]},"
    "          {\"op\": \"rotate\", \"bone\": \"prop\", \"axis\": [0, 1, 0], \"amount\": 0.7, \"space\": \"world\"},"
    "          {\"op\": \"query\", \"bone\": \"foot\", \"get\": \"absolutePosition\"}],"
    " \"mesh\": {\"position\": [1, 0, -2], \"rotation\": [0, 0.5, 0], \"scaling\": [1, 1, -1]},"
    " \"output\": [\"final\", \"absolute\", \"world\", \"positions\"]}";

START_TEST(test_json_answer_is_skinner_eval_s) {
  fixture f;
  leg(&f);
  sk_strbuf got = {0};
  frames_answer(&f, k_pose, SK_FMT_JSON, 1, &got);
  /* skinner eval: the same pose op on the same skeleton */
  char c[4096];
  ck_assert_int_lt(snprintf(c, sizeof c, "{\"skeleton\": %s, \"ops\": [%.*s, \"op\": \"pose\"}]}", k_skel,
                            (int)strlen(k_pose) - 1, k_pose),
                   (int)sizeof c);
  json_t *cj = json_loads(c, 0, NULL);
  ck_assert_ptr_nonnull(cj);
  sk_strbuf want = {0};
  ck_assert_int_eq(sk_eval_case(cj, &want, NULL), 0);
  json_decref(cj);
  const char *res = strstr(want.data, "\"results\":[") + 11;
  ck_assert_uint_eq(got.len, strlen(res) - 2);
  ck_assert_int_eq(memcmp(got.data, res, got.len), 0);
  ck_assert_ptr_nonnull(strstr(got.data, "\"queries\":[{\"query\":\"absolutePosition\",\"bone\":\"foot\""));
  /* two copies in one batch: the same object twice, comma-separated */
  sk_strbuf two = {0};
  frames_answer(&f, k_pose, SK_FMT_JSON, 2, &two);
  ck_assert_uint_eq(two.len, 2 * got.len + 1);
  ck_assert_int_eq(memcmp(two.data + got.len + 1, got.data, got.len), 0);
  sk_strbuf_free(&two);
  sk_strbuf_free(&want);
  sk_strbuf_free(&got);
  fixture_close(&f);
}
END_TEST

START_TEST(test_binary_layout) {
  fixture f;
  leg(&f);
  static const char *const pose =
      "{\"ops\": [{\"op\": \"ik\", \"bone\": \"shin\", \"target\": [0.3, 0.3, 0.2]}],"
      " \"output\": [\"final\", \"world\", \"positions\"]}";
  sk_strbuf js = {0}, f32 = {0}, m34 = {0};
  frames_answer(&f, pose, SK_FMT_JSON, 1, &js);
  frames_answer(&f, pose, SK_FMT_F32, 2, &f32);
  frames_answer(&f, pose, SK_FMT_MAT3X4, 1, &m34);
  const size_t nb = 5, per = 16 * (nb + 1) + 16 * nb + 3 * nb;
  ck_assert_uint_eq(f32.len, 2 * per * sizeof(float));
  ck_assert_uint_eq(m34.len, (12 * (nb + 1) + 12 * nb + 3 * nb) * sizeof(float));
  json_t *j = json_loads(js.data, 0, NULL);
  const float *b = (const float *)(const void *)f32.data;
  size_t k = 0;
  static const char *const parts[] = {"final", "world", "positions"};
  for (int p = 0; p < 3; p++) {
    const json_t *a = json_object_get(j, parts[p]);
    for (size_t i = 0; i < json_array_size(a); i++, k++)
      ck_assert(b[k] == (float)json_number_value(json_array_get(a, i)));
  }
  ck_assert_uint_eq(k, per);
  ck_assert_int_eq(memcmp(f32.data, f32.data + per * sizeof(float), per * sizeof(float)), 0);
  /* mat3x4: each matrix's first three columns as rows, positions as is */
  const float *m = (const float *)(const void *)m34.data;
  float d[12];
  sk_frames_mat3x4(b + 16 * (nb + 1), d); /* the first world matrix */
  ck_assert_int_eq(memcmp(m + 12 * (nb + 1), d, sizeof d), 0);
  ck_assert_int_eq(memcmp(m + 12 * (nb + 1) + 12 * nb, b + 16 * (nb + 1) + 16 * nb, 3 * nb * sizeof(float)), 0);
  json_decref(j);
  sk_strbuf_free(&js);
  sk_strbuf_free(&f32);
  sk_strbuf_free(&m34);
  fixture_close(&f);
}
END_TEST

/* The ops of a pose run on a copy kept in the scratch from pose to pose,
 * and from request to request on the loop thread: each pose must start
 * from the stored skeleton with fresh lazy absolute matrices, whatever ran
 * before. The first pose below leaves every bone changed and every absolute
 * matrix computed (its world output refreshes "prop", the second root,
 * which nothing else refreshes); the second reads prop's absolute position,
 * stale unless the copy was reset (a fresh skeleton's is zero). */
START_TEST(test_every_pose_starts_from_the_stored_skeleton) {
  fixture f;
  leg(&f);
  static const char *const a =
      "{\"bones\": {\"prop\": {\"position\": [2, 3, 4]}},"
      " \"ops\": [{\"op\": \"ik\", \"bone\": \"shin\", \"target\": [0.3, 0.3, 0.2]},"
      "          {\"op\": \"setScale\", \"bone\": \"hip\", \"scale\": [2, 2, 2]},"
      "          {\"op\": \"setCurrentPoseAsRest\", \"bone\": \"thigh\"}],"
      " \"output\": [\"final\", \"world\"]}";
  static const char *const b =
      "{\"ops\": [{\"op\": \"query\", \"bone\": \"prop\", \"get\": \"absolutePosition\"},"
      "          {\"op\": \"query\", \"bone\": \"foot\", \"get\": \"absolutePosition\"}],"
      " \"output\": [\"final\", \"local\"]}";
  sk_strbuf alone_a = {0}, alone_b = {0}, both = {0};
  frames_answer(&f, a, SK_FMT_JSON, 1, &alone_a);
  frames_answer(&f, b, SK_FMT_JSON, 1, &alone_b);
  ck_assert_ptr_nonnull(strstr(alone_b.data, "{\"query\":\"absolutePosition\",\"bone\":\"prop\",\"value\":[0,0,0]}"));
  const char *ab[2] = {a, b};
  frames_batch_on(f.e, ab, 2, SK_FMT_JSON, NULL, &both);
  ck_assert_uint_eq(both.len, alone_a.len + 1 + alone_b.len);
  ck_assert_int_eq(memcmp(both.data, alone_a.data, alone_a.len), 0);
  ck_assert_int_eq(memcmp(both.data + alone_a.len + 1, alone_b.data, alone_b.len), 0);

  /* After a pose that changed locals and a rest, a pose that changes
   * nothing leaves the kept copy the stored skeleton again, byte for byte
   * (names rebased into the copy's own block). */
  static const char *const idle = "{\"ops\": [{\"op\": \"query\", \"bone\": \"foot\", \"get\": \"scale\"}]}";
  const char *a_idle[2] = {a, idle};
  sk_frames_scratch kept = {0};
  sk_strbuf ignored = {0};
  frames_batch_on(f.e, a_idle, 2, SK_FMT_JSON, &kept, &ignored);
  const sk_skeleton *st = f.e->model->skel, *cp = kept.ops_copy.c;
  ck_assert_ptr_nonnull(cp);
  for (size_t k = 0; k < st->count; k++) {
    ck_assert_str_eq(cp->bones[k].name, st->bones[k].name);
    ck_assert_int_eq(memcmp(&cp->bones[k].parent, &st->bones[k].parent, sizeof(sk_bone) - offsetof(sk_bone, parent)), 0);
  }
  sk_strbuf_free(&ignored);
  sk_frames_scratch_close(&kept);

  /* One scratch across requests on skeletons of other sizes (the copy is
   * remade), of the same bone count with other names, and back. */
  sk_skeleton *s2, *s3;
  json_t *j2 = json_loads("{\"bones\": [{\"name\": \"root\"}, {\"name\": \"arm\", \"parent\": \"root\","
                          " \"position\": [0, 1, 0]}]}", 0, NULL);
  json_t *j3 = json_loads("{\"bones\": [{\"name\": \"a\"}, {\"name\": \"b\", \"parent\": \"a\","
                          " \"position\": [0, 2, 0]}, {\"name\": \"c\", \"parent\": \"b\"},"
                          " {\"name\": \"d\", \"parent\": \"c\"}, {\"name\": \"prop\"}]}", 0, NULL);
  ck_assert_int_eq(sk_json_parse_skeleton(j2, "", 0, &s2, NULL), 0);
  ck_assert_int_eq(sk_json_parse_skeleton(j3, "", 0, &s3, NULL), 0);
  json_decref(j2);
  json_decref(j3);
  sk_cache_entry *e2, *e3;
  ck_assert_int_eq(sk_cache_put(f.cache, "arm", s2, NULL, &e2), 0);
  ck_assert_int_eq(sk_cache_put(f.cache, "abcd", s3, NULL, &e3), 0);
  static const char *const q2 = "{\"ops\": [{\"op\": \"query\", \"bone\": \"arm\", \"get\": \"absolutePosition\"}]}";
  static const char *const q3 = "{\"ops\": [{\"op\": \"query\", \"bone\": \"b\", \"get\": \"absolutePosition\"}]}";
  const sk_cache_entry *order[] = {f.e, e2, f.e, e3, f.e};
  const char *const *texts[] = {ab, &q2, ab, &q3, ab};
  const size_t counts[] = {2, 1, 2, 1, 2};
  sk_frames_scratch sc = {0};
  for (size_t k = 0; k < 5; k++) {
    sk_strbuf shared = {0}, fresh = {0};
    frames_batch_on(order[k], texts[k], counts[k], SK_FMT_JSON, &sc, &shared);
    frames_batch_on(order[k], texts[k], counts[k], SK_FMT_JSON, NULL, &fresh);
    ck_assert_uint_eq(shared.len, fresh.len);
    ck_assert_int_eq(memcmp(shared.data, fresh.data, fresh.len), 0);
    ck_assert_ptr_nonnull(strstr(shared.data, k == 1 ? "\"bone\":\"arm\"" : k == 3 ? "\"bone\":\"b\"" : "\"bone\":\"foot\""));
    sk_strbuf_free(&shared);
    sk_strbuf_free(&fresh);
  }
  sk_frames_scratch_close(&sc);
  sk_cache_entry_unref(e2);
  sk_cache_entry_unref(e3);
  sk_strbuf_free(&alone_a);
  sk_strbuf_free(&alone_b);
  sk_strbuf_free(&both);
  fixture_close(&f);
}
END_TEST

/* The kept copy must not trust a skeleton's address from one request to
 * the next: a skeleton freed after a request and a new one of the same
 * sizes can sit at the same address, and restoring only the locals would
 * keep the old one's binds. Simulated deterministically: between two
 * requests the stored skeleton's bones become another skeleton's (same
 * names, other positions and so other binds) at the same address. */
START_TEST(test_a_new_skeleton_at_an_old_address_is_copied_whole) {
  fixture f;
  leg(&f);
  static const char *const pose = "{\"ops\": [{\"op\": \"ik\", \"bone\": \"shin\", \"target\": [0.3, 0.3, 0.2]}]}";
  json_t *j = json_loads("{\"bones\": [{\"name\": \"hip\", \"position\": [0, 2, 0]},"
                         "{\"name\": \"thigh\", \"parent\": \"hip\", \"position\": [0.1, -0.3, 0]},"
                         "{\"name\": \"shin\", \"parent\": \"thigh\", \"position\": [0, -0.5, 0]},"
                         "{\"name\": \"foot\", \"parent\": \"shin\", \"position\": [0, -0.4, 0]},"
                         "{\"name\": \"prop\", \"position\": [0.5, 0.5, 0.5]}]}",
                         0, NULL);
  sk_skeleton *other;
  ck_assert_int_eq(sk_json_parse_skeleton(j, "", 0, &other, NULL), 0);
  json_decref(j);
  sk_skeleton *st = f.e->model->skel;
  ck_assert_uint_eq(other->count, st->count);
  ck_assert_uint_eq(other->names_size, st->names_size);
  sk_frames_scratch sc = {0};
  sk_strbuf before = {0}, shared = {0}, fresh = {0};
  frames_batch_on(f.e, &pose, 1, SK_FMT_F32, &sc, &before);
  for (size_t k = 0; k < st->count; k++) { /* the new skeleton, at the old address */
    const char *name = st->bones[k].name;
    st->bones[k] = other->bones[k];
    st->bones[k].name = name;
  }
  frames_batch_on(f.e, &pose, 1, SK_FMT_F32, &sc, &shared);
  frames_batch_on(f.e, &pose, 1, SK_FMT_F32, NULL, &fresh);
  ck_assert_uint_eq(shared.len, fresh.len);
  ck_assert_int_eq(memcmp(shared.data, fresh.data, fresh.len), 0);
  ck_assert_int_ne(memcmp(before.data, fresh.data, fresh.len), 0); /* the case means something */
  sk_strbuf_free(&before);
  sk_strbuf_free(&shared);
  sk_strbuf_free(&fresh);
  sk_frames_scratch_close(&sc);
  sk_skeleton_destroy(other);
  fixture_close(&f);
}
END_TEST

START_TEST(test_apply_body_all_or_nothing) {
  fixture f;
  leg(&f);
  sk_skeleton *out = (sk_skeleton *)&f; /* poison: must come back NULL */
  sk_strbuf q = {0};
  size_t nq = 7;
  sk_error err;
  sk_error_clear(&err);
  json_t *bad = json_loads("{\"ops\": [{\"op\": \"setScale\", \"bone\": \"foot\", \"scale\": [2, 2, 2]},"
                           "{\"op\": \"rotate\", \"bone\": \"foot\", \"axis\": [0, 0, 0], \"amount\": 1}]}",
                           0, NULL);
  ck_assert_int_eq(sk_poseops_apply_body(f.e->model->skel, NULL, bad, &out, &q, &nq, &err), SK_ERANGE);
  ck_assert_ptr_null(out);
  ck_assert_uint_eq(nq, 0);
  ck_assert_str_eq(err.pointer, "/ops/1/axis");
  json_decref(bad);
  json_t *extra = json_loads("{\"ops\": [], \"opz\": 1}", 0, NULL);
  sk_error_clear(&err); /* the first error wins */
  ck_assert_int_eq(sk_poseops_apply_body(f.e->model->skel, NULL, extra, &out, &q, &nq, &err), SK_EUNKNOWN);
  ck_assert_str_eq(err.pointer, "/opz");
  json_decref(extra);
  float before[16];
  memcpy(before, f.e->model->skel->bones[3].local.matrix, sizeof before);
  json_t *good = json_loads("{\"ops\": [{\"op\": \"setScale\", \"bone\": \"foot\", \"scale\": [2, 2, 2]},"
                            "{\"op\": \"query\", \"bone\": \"foot\", \"get\": \"scale\"}]}",
                            0, NULL);
  ck_assert_int_eq(sk_poseops_apply_body(f.e->model->skel, NULL, good, &out, &q, &nq, NULL), 0);
  ck_assert_ptr_nonnull(out);
  ck_assert_uint_eq(nq, 1);
  ck_assert_str_eq(q.data, "{\"query\":\"scale\",\"bone\":\"foot\",\"value\":[2,2,2]}");
  ck_assert_int_eq(memcmp(before, f.e->model->skel->bones[3].local.matrix, sizeof before),
                   0); /* the stored one: untouched */
  ck_assert(out->bones[3].local.matrix[0] == 2);
  sk_skeleton_destroy(out);
  json_decref(good);
  sk_strbuf_free(&q);
  fixture_close(&f);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sk_poseops");
  TCase *v = tcase_create("validity");
  tcase_add_test(v, test_errors_name_the_field);
  tcase_add_test(v, test_plain_poses_stay_plain);
  suite_add_tcase(s, v);
  TCase *g = tcase_create("golden");
  tcase_add_test(g, test_json_answer_is_skinner_eval_s);
  tcase_add_test(g, test_binary_layout);
  suite_add_tcase(s, g);
  TCase *l = tcase_create("lifecycle");
  tcase_add_test(l, test_apply_body_all_or_nothing);
  tcase_add_test(l, test_every_pose_starts_from_the_stored_skeleton);
  tcase_add_test(l, test_a_new_skeleton_at_an_old_address_is_copied_whole);
  suite_add_tcase(s, l);
  return s;
}

int main(void) { return sk_test_run(suite()); }
