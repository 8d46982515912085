/* sk_fastpose against the slow path it shortcuts (sk_json_load +
 * sk_pose_parse): the same pose for every body it accepts, and a decline
 * (never an answer of its own) for every body jansson or the pose parser
 * would reject. */
#include "sk_fastpose.h"
#include "sk_json.h"
#include "sk_testutil.h"

static sk_skeleton *skel3(void) {
  json_t *j = json_loads("{\"bones\":[{\"name\":\"root\"},{\"name\":\"arm\",\"parent\":\"root\",\"position\":[0,1,0]},"
                         "{\"name\":\"hand\",\"parent\":\"arm\",\"matrix\":[1,0,0,0,0,2,0,0,0,0,1,0,0,1,0,1]}]}",
                         0, NULL);
  sk_skeleton *s;
  ck_assert_int_eq(sk_json_parse_skeleton(j, "", 0, &s, NULL), 0);
  json_decref(j);
  return s;
}

/* The slow path's pose, or rc != 0. */
static int slow(const sk_skeleton *s, const char *text, sk_pose *pose) {
  json_t *j;
  int rc = sk_json_load(text, strlen(text), &j, NULL);
  if (rc)
    return rc;
  rc = sk_pose_parse(s, j, "", NULL, pose, NULL);
  json_decref(j);
  return rc;
}

/* Same pose: evaluated results compared bit for bit (the override order
 * may differ only where it cannot matter: different bones). */
static void assert_same(const sk_skeleton *s, const sk_pose *a, const sk_pose *b, const char *text) {
  ck_assert_msg(a->count == b->count, "%s: %zu overrides vs %zu", text, a->count, b->count);
  ck_assert_msg(a->output == b->output, "%s: output", text);
  ck_assert_msg(a->has_initial_skin == b->has_initial_skin, "%s: initial skin", text);
  if (a->has_initial_skin)
    ck_assert(memcmp(a->initial_skin, b->initial_skin, sizeof a->initial_skin) == 0);
  for (size_t i = 0; i < a->count; i++) {
    const sk_override *x = &a->overrides[i], *y = &b->overrides[i];
    ck_assert_msg(x->bone == y->bone && x->mask == y->mask, "%s: override %zu", text, i);
    if (x->mask & SK_OVERRIDE_MATRIX)
      ck_assert(memcmp(x->matrix, y->matrix, sizeof x->matrix) == 0);
    if (x->mask & SK_OVERRIDE_POSITION)
      ck_assert_msg(memcmp(x->position, y->position, sizeof x->position) == 0, "%s: position %.17g %.17g", text,
                    x->position[0], y->position[0]);
    if (x->mask & SK_OVERRIDE_ROTATION)
      ck_assert(memcmp(x->rotation, y->rotation, sizeof x->rotation) == 0);
    if (x->mask & SK_OVERRIDE_SCALING)
      ck_assert(memcmp(x->scaling, y->scaling, sizeof x->scaling) == 0);
  }
  sk_pose_buffers ba, bb;
  sk_pose_buffers_init(&ba, s->count);
  sk_pose_buffers_init(&bb, s->count);
  sk_pose_evaluate(s, a, &ba);
  sk_pose_evaluate(s, b, &bb);
  if (a->output & SK_OUT_FINAL)
    ck_assert(memcmp(ba.final, bb.final, 16 * (s->count + 1) * sizeof(float)) == 0);
  sk_pose_buffers_close(&ba);
  sk_pose_buffers_close(&bb);
}

static void check_accepts(const sk_skeleton *s, const char *text) {
  sk_pose f, w;
  ck_assert_msg(sk_fastpose_parse(s, text, strlen(text), &f) == 0, "declined: %s", text);
  ck_assert_msg(slow(s, text, &w) == 0, "slow path refused: %s", text);
  assert_same(s, &f, &w, text);
  sk_pose_close(&f);
  sk_pose_close(&w);
}

static void check_declines(const sk_skeleton *s, const char *text) {
  sk_pose f;
  ck_assert_msg(sk_fastpose_parse(s, text, strlen(text), &f) == SK_FASTPOSE_DECLINE, "accepted: %s", text);
}

START_TEST(well_formed_poses_equal_the_slow_path) {
  sk_skeleton *s = skel3();
  check_accepts(s, "{}");
  check_accepts(s, " \n{ } \r\n");
  check_accepts(s, "{\"bones\":{}}");
  check_accepts(s, "{\"bones\":{\"arm\":{\"position\":[1,2,3]}}}");
  check_accepts(s, "{\"bones\":{\"arm\":{\"rotation\":[0.1,-0.2,3e-1]},\"hand\":{\"scaling\":[1,2,0.5]}}}");
  check_accepts(s, "{\"bones\":{\"hand\":{\"rotationQuaternion\":[0.1,0.2,0.3,0.9],\"position\":[-0,-0.0,0]}}}");
  check_accepts(s, "{\"bones\":{\"root\":{\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,1.5,2.25,-3.125,1]}}}");
  check_accepts(s, "{\"initialSkinMatrix\":[2,0,0,0,0,2,0,0,0,0,2,0,0,0,0,1],\"output\":[\"local\",\"final\"]}");
  check_accepts(s, "{\"initialSkinMatrix\":null,\"output\":[]}");
  check_accepts(s, "{\"output\":[\"absolute\"],\"bones\":{\"arm\":{}}}");
  /* numbers: long mantissas, exponents, near float limits, integers */
  check_accepts(s, "{\"bones\":{\"arm\":{\"position\":[0.1234567890123456789012,1e-30,-2.5E+3]}}}");
  check_accepts(s, "{\"bones\":{\"arm\":{\"position\":[3.4028234e38,-3.4028234e38,1e-45]}}}");
  check_accepts(s, "{\"bones\":{\"arm\":{\"position\":[123456789012345678,-987654321,0.30000000000000004]}}}");
  check_accepts(s, "{\"bones\":{\"arm\":{\"position\":[9007199254740993.0,4.35,1e22]}}}");
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(random_numbers_read_like_jansson) {
  sk_skeleton *s = skel3();
  unsigned seed = 7;
  for (int i = 0; i < 20000; i++) {
    char text[512], num[3][64];
    for (int k = 0; k < 3; k++) {
      seed = seed * 1103515245u + 12345u;
      unsigned r = seed >> 4;
      double v = ((double)(r % 2000003) - 1000000.0) / (double)(1u << (r % 23));
      switch (r % 5) {
      case 0: snprintf(num[k], sizeof num[k], "%.17g", v); break;
      case 1: snprintf(num[k], sizeof num[k], "%.6f", v); break;
      case 2: snprintf(num[k], sizeof num[k], "%.9e", v * 1e-9); break;
      case 3: snprintf(num[k], sizeof num[k], "%d", (int)v); break;
      default: snprintf(num[k], sizeof num[k], "%.25f", v); break;
      }
    }
    snprintf(text, sizeof text, "{\"bones\":{\"arm\":{\"position\":[%s,%s,%s]}}}", num[0], num[1], num[2]);
    check_accepts(s, text);
  }
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(anything_unusual_is_declined) {
  sk_skeleton *s = skel3();
  const char *bad[] = {
      "",
      "{",
      "[]",
      "{}x",
      "{\"bones\":{\"nope\":{}}}",                               /* unknown bone: the slow path's 404 */
      "{\"bones\":{\"arm\":{},\"arm\":{}}}",                     /* duplicate key */
      "{\"bones\":{},\"bones\":{}}",
      "{\"bones\":{\"arm\":{\"position\":[1,2]}}}",              /* length */
      "{\"bones\":{\"arm\":{\"position\":[1,2,3,4]}}}",
      "{\"bones\":{\"arm\":{\"position\":[1,2,1e39]}}}",         /* beyond float */
      "{\"bones\":{\"arm\":{\"position\":[1,2,1e400]}}}",        /* jansson: overflow */
      "{\"bones\":{\"arm\":{\"position\":[01,2,3]}}}",           /* not JSON */
      "{\"bones\":{\"arm\":{\"position\":[1.,2,3]}}}",
      "{\"bones\":{\"arm\":{\"position\":[.5,2,3]}}}",
      "{\"bones\":{\"arm\":{\"position\":[1234567890123456789012,2,3]}}}", /* jansson: too big integer */
      "{\"bones\":{\"arm\":{\"position\":[\"1\",2,3]}}}",
      "{\"bones\":{\"arm\":{\"rotation\":[1,2,3],\"rotationQuaternion\":[0,0,0,1]}}}",
      "{\"bones\":{\"arm\":{\"postion\":[1,2,3]}}}",
      "{\"bones\":{\"a\\u0072m\":{}}}",                           /* escapes: jansson decodes */
      "{\"bones\":{\"arm\":{\"position\":[1,2,3],}}}",
      "{\"output\":[\"final\",\"final\"]}",
      "{\"output\":[\"everything\"]}",
      "{\"output\":null}",
      "{\"initialSkinMatrix\":[1,2,3]}",
      "{\"extra\":1}",
      "{\"bones\":null}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    check_declines(s, bad[i]);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(batches_parse_like_their_poses) {
  sk_skeleton *s = skel3();
  const char *text = " {\"poses\": [ {}, {\"bones\":{\"arm\":{\"position\":[1,2,3]}}}, {\"output\":[\"local\"]} ] } ";
  sk_pose *v;
  size_t n;
  ck_assert_int_eq(sk_fastpose_parse_batch(s, text, strlen(text), 10, &v, &n), 0);
  ck_assert_uint_eq(n, 3);
  ck_assert_uint_eq(v[1].count, 1);
  ck_assert_uint_eq(v[2].output, SK_OUT_LOCAL);
  for (size_t i = 0; i < n; i++)
    sk_pose_close(&v[i]);
  free(v);
  ck_assert_int_eq(sk_fastpose_parse_batch(s, "{\"poses\":[]}", 12, 10, &v, &n), 0);
  ck_assert_uint_eq(n, 0);
  free(v);
  /* over the limit, other keys, bad poses: declined for the slow path */
  ck_assert_int_eq(sk_fastpose_parse_batch(s, text, strlen(text), 2, &v, &n), SK_FASTPOSE_DECLINE);
  ck_assert_int_eq(sk_fastpose_parse_batch(s, "{\"poses\":[],\"x\":1}", 18, 10, &v, &n), SK_FASTPOSE_DECLINE);
  ck_assert_int_eq(sk_fastpose_parse_batch(s, "{\"poses\":[{\"y\":1}]}", 19, 10, &v, &n), SK_FASTPOSE_DECLINE);
  sk_skeleton_destroy(s);
}
END_TEST

/* The poses of a batch are those of their texts parsed alone, with their
 * overrides in one block the first pose owns, covered by the bytes the
 * budget counts for them. */
START_TEST(a_batch_shares_one_block_of_overrides) {
  sk_skeleton *s = skel3();
  static const char *const one[] = {
      "{}",
      "{\"bones\":{\"arm\":{\"position\":[1,2,3]},\"root\":{\"rotation\":[0.5,0.25,-1]}}}",
      "{\"output\":[\"local\"]}",
      "{\"bones\":{\"hand\":{\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,4,5,6,1]},\"arm\":{\"scaling\":[2,2,2]},"
      "\"root\":{\"rotationQuaternion\":[0,0,0.6,0.8]}}}",
      "{\"bones\":{}}",
      "{\"bones\":{\"hand\":{\"position\":[0.1,0.2,0.3]}}}",
  };
  enum { K = sizeof one / sizeof one[0], REPEAT = 7 }; /* 42 poses: the pose array and the block both grow */
  char text[8192];
  size_t len = (size_t)snprintf(text, sizeof text, "{\"poses\":[");
  for (size_t i = 0; i < K * REPEAT; i++)
    len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", i ? "," : "", one[i % K]);
  len += (size_t)snprintf(text + len, sizeof text - len, "]}");
  ck_assert_uint_lt(len, sizeof text);
  sk_pose *v;
  size_t n;
  ck_assert_int_eq(sk_fastpose_parse_batch(s, text, len, 1000, &v, &n), 0);
  ck_assert_uint_eq(n, K * REPEAT);
  size_t total = 0, held = 0;
  for (size_t i = 0; i < n; i++) {
    sk_pose w;
    ck_assert_int_eq(slow(s, one[i % K], &w), 0);
    assert_same(s, &v[i], &w, one[i % K]);
    sk_pose_close(&w);
    ck_assert(v[i].overrides_shared == (i > 0));
    ck_assert_ptr_eq(v[i].overrides, v[0].overrides + total);
    total += v[i].count;
    held += sk_pose_held_bytes(&v[i]);
  }
  ck_assert_uint_eq(total, 6 * REPEAT);
  ck_assert_uint_ge(held, total * sizeof(sk_override));
  for (size_t i = n; i-- > 0;) /* the owner last */
    sk_pose_close(&v[i]);
  free(v);
  sk_skeleton_destroy(s);
}
END_TEST

static Suite *fastpose_suite(void) {
  Suite *s = suite_create("sk_fastpose");
  TCase *t = tcase_create("golden");
  tcase_add_test(t, well_formed_poses_equal_the_slow_path);
  tcase_add_test(t, random_numbers_read_like_jansson);
  tcase_add_test(t, batches_parse_like_their_poses);
  tcase_add_test(t, a_batch_shares_one_block_of_overrides);
  suite_add_tcase(s, t);
  t = tcase_create("validity");
  tcase_add_test(t, anything_unusual_is_declined);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(fastpose_suite()); }
