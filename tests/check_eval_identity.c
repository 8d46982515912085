/* End to end: `skinner eval` (sk_eval_case_at, the CLI's call) and skinnerd
 * answer the same frame range of Fox.glb with the same bytes: a plain
 * range (eval: sk_clips' sampler into the kernel; the daemon: sk_frames),
 * a range with "bones" overrides and one with layers (both through
 * sk_frames' batch kernel), and a range asking absolute matrices too (the
 * exact core through sk_frames). */
#include "sk_eval.h"
#include "sk_fixture.h"
#include "sk_json.h"

static sk_daemon g_d;

/* The "results" array's inside of one JSON answer (borrowed from `text`). */
static void results_of(const char *text, size_t len, const char **at, size_t *n) {
  const char *p = strstr(text, "\"results\":[");
  ck_assert_msg(p != NULL, "no results in %.200s", text);
  p += strlen("\"results\":[");
  ck_assert_msg(len >= 2 && strcmp(text + len - 2, "]}") == 0, "answer ends %.20s", text + (len > 20 ? len - 20 : 0));
  *at = p;
  *n = (size_t)(text + len - 2 - p);
}

/* Collects what sk_eval_opts.flush hands over, counting the calls. */
typedef struct sink {
  sk_strbuf b;
  size_t calls;
} sink;

static int sink_take(void *arg, const char *data, size_t len) {
  sink *k = arg;
  k->calls++;
  ck_assert_uint_gt(len, 0);
  return sk_strbuf_append(&k->b, data, len);
}

static void same_bytes(const char *pose) {
  /* the daemon's answer */
  sk_httpc_resp r;
  sk_fixture_request(&g_d, "POST", "/v1/skeletons/fox/pose", "Content-Type: application/json\r\n", pose, strlen(pose),
                     &r);
  ck_assert_msg(r.status == 200, "%s: %d %.300s", pose, r.status, r.body);
  /* skinner eval's, on a case naming the same file */
  char dir[1024], text[4096];
  sk_test_path("data", dir, sizeof dir);
  snprintf(text, sizeof text, "{\"skeleton\": {\"gltf\": \"Fox.glb\"}, \"ops\": [{\"op\": \"pose\", %s]}", pose + 1);
  json_t *c;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_json_load(text, strlen(text), &c, &e), 0);
  sk_strbuf out = {0};
  ck_assert_msg(sk_eval_case_at(c, dir, &out, &e) == 0, "%s: %s at %s", text, e.text, e.pointer);
  /* flushed in pieces (skinner eval's way): the same text */
  sink pieces = {0};
  sk_strbuf rest = {0};
  const sk_eval_opts flushed = {.base_dir = dir, .flush = sink_take, .flush_arg = &pieces};
  ck_assert_msg(sk_eval_case_opts(c, &flushed, &rest, &e) == 0, "%s: %s at %s", text, e.text, e.pointer);
  ck_assert_uint_eq(rest.len, 0);
  ck_assert_msg(pieces.b.len == out.len && memcmp(pieces.b.data, out.data, out.len) == 0, "%s: flushed JSON differs",
                text);
  ck_assert_uint_ge(pieces.calls, 1 + out.len / (4 * SK_EVAL_FLUSH_BYTES)); /* in pieces, not whole at the end */
  sk_strbuf_free(&pieces.b);
  sk_strbuf_free(&rest);
  json_decref(c);
  const char *a, *b;
  size_t na, nb;
  results_of(r.body, r.len, &a, &na);
  results_of(out.data, out.len, &b, &nb);
  size_t at = 0;
  while (at < na && at < nb && a[at] == b[at])
    at++;
  ck_assert_msg(na == nb && at == na, "%s: daemon %zu bytes, eval %zu, first difference at %zu", pose, na, nb, at);
  ck_assert_uint_gt(na, 1000);
  sk_strbuf_free(&out);
  sk_httpc_free(&r);
}

START_TEST(skinner_eval_and_skinnerd_answer_a_range_with_the_same_bytes) {
  sk_fixture_start(&g_d, NULL);
  sk_fixture_put_asset(&g_d, "fox", "Fox.glb");
  same_bytes("{\"animation\": \"Walk\", \"from\": 0, \"to\": 0.7, \"fps\": 30}");
  same_bytes("{\"animation\": \"Survey\", \"times\": [0, 0.5, 1.25, 3.4], \"loop\": true}");
  same_bytes("{\"animation\": \"Walk\", \"from\": 0, \"to\": 0.7, \"fps\": 30, "
             "\"bones\": {\"b_Hip_01\": {\"position\": [0, 9, 0]}, \"b_Head_05\": {\"scaling\": [2, 2, 2]}}}");
  same_bytes("{\"layers\": [{\"animation\": \"Walk\"}, {\"animation\": \"Run\", \"weight\": 0.5, \"time\": 0.1}], "
             "\"from\": 0, \"to\": 0.5, \"fps\": 24, \"bones\": {\"b_Tail01_012\": {\"rotationQuaternion\": [0, 0, 0.6, 0.8]}}}");
  same_bytes("{\"animation\": \"Run\", \"from\": 0, \"to\": 0.3, \"fps\": 30, \"output\": [\"final\", \"absolute\"]}");
  same_bytes("{\"animation\": \"Run\", \"times\": [0.2, 0.4], \"initialSkinMatrix\": [2,0,0,0, 0,2,0,0, 0,0,2,0, 1,2,3,1]}");
  /* 1001 frames, 4 MB of JSON or more: flushed in pieces by every path (sk_clips; sk_frames; the Bone-API ops) */
  same_bytes("{\"animation\": \"Walk\", \"from\": 0, \"to\": 20, \"fps\": 50, \"loop\": true}");
  same_bytes("{\"animation\": \"Walk\", \"from\": 0, \"to\": 20, \"fps\": 50, \"loop\": true, "
             "\"bones\": {\"b_Head_05\": {\"scaling\": [2, 2, 2]}}}");
  same_bytes("{\"animation\": \"Walk\", \"from\": 0, \"to\": 20, \"fps\": 50, \"loop\": true, "
             "\"ops\": [{\"op\": \"ik\", \"bone\": \"b_LeftLeg02_016\", \"target\": [-7, 20, -40]}]}");
  sk_fixture_stop(&g_d);
}
END_TEST

/* skinner eval --format f32|f32x12 on a case of one "pose" op with the
 * body's fields, against skinnerd's binary answer to the body on skeleton
 * `id`; the case's skeleton is `skel` (the same file). Returns the answer's
 * length. */
static size_t same_binary(const char *id, const char *skel, const char *pose, int fmt) {
  static const char *const accept[] = {NULL, "Accept: application/octet-stream\r\n",
                                       "Accept: application/x-skinner-mat3x4\r\n"};
  char path[256], headers[256];
  snprintf(path, sizeof path, "/v1/skeletons/%s/pose", id);
  snprintf(headers, sizeof headers, "Content-Type: application/json\r\n%s", accept[fmt]);
  sk_httpc_resp r;
  sk_fixture_request(&g_d, "POST", path, headers, pose, strlen(pose), &r);
  ck_assert_msg(r.status == 200, "%s: %d %.300s", pose, r.status, r.body);
  char dir[1024];
  sk_test_path("data", dir, sizeof dir);
  size_t cap = strlen(skel) + strlen(pose) + 64;
  char *text = malloc(cap);
  ck_assert_ptr_nonnull(text);
  snprintf(text, cap, "{\"skeleton\": %s, \"ops\": [{\"op\": \"pose\", %s]}", skel, pose + 1);
  json_t *c;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_json_load(text, strlen(text), &c, &e), 0);
  free(text);
  /* all in `out`, and flushed in pieces: the same bytes */
  sk_strbuf out = {0};
  const sk_eval_opts whole = {.base_dir = dir, .fmt = fmt};
  ck_assert_msg(sk_eval_case_opts(c, &whole, &out, &e) == 0, "%s: %s at %s", pose, e.text, e.pointer);
  sink k = {0};
  sk_strbuf rest = {0};
  const sk_eval_opts flushed = {.base_dir = dir, .fmt = fmt, .flush = sink_take, .flush_arg = &k};
  ck_assert_msg(sk_eval_case_opts(c, &flushed, &rest, &e) == 0, "%s: %s at %s", pose, e.text, e.pointer);
  ck_assert_uint_eq(rest.len, 0);
  json_decref(c);
  size_t at = 0;
  while (at < r.len && at < out.len && r.body[at] == out.data[at])
    at++;
  ck_assert_msg(r.len == out.len && at == r.len, "%s (format %d): daemon %zu bytes, eval %zu, first difference at %zu",
                pose, fmt, r.len, out.len, at);
  ck_assert_msg(k.b.len == out.len && memcmp(k.b.data, out.data, out.len) == 0, "%s: flushed in %zu calls", pose,
                k.calls);
  ck_assert_uint_ge(k.calls, 1 + out.len / (SK_EVAL_FLUSH_BYTES + out.len / 64 + 1));
  size_t n = out.len;
  sk_strbuf_free(&out);
  sk_strbuf_free(&rest);
  sk_strbuf_free(&k.b);
  sk_httpc_free(&r);
  return n;
}

START_TEST(skinner_eval_binary_output_is_skinnerds_binary_answer) {
  static const char *const more_frames[] = {"--max-frames", "4096", "--max-batch", "4096", NULL};
  sk_fixture_start(&g_d, more_frames);
  sk_fixture_put_asset(&g_d, "fox", "Fox.glb");
  size_t len;
  unsigned char *babylon = sk_test_read_asset("fox-walk-babylon.json", &len);
  sk_fixture_put(&g_d, "foxb", "application/json", babylon, len);
  char *babylon_skel = malloc(len + 1);
  ck_assert_ptr_nonnull(babylon_skel);
  memcpy(babylon_skel, babylon, len);
  babylon_skel[len] = 0;
  free(babylon);
  static const char *const gltf_bodies[] = {
      "{\"animation\": \"Walk\", \"from\": 0, \"to\": 0.7, \"fps\": 30}",
      "{\"animation\": \"Walk\", \"time\": 0.25}",
      "{\"bones\": {\"b_Head_05\": {\"rotation\": [0, 0.6, 0]}}}",
      "{\"layers\": [{\"animation\": \"Walk\"}, {\"animation\": \"Survey\", \"weight\": 0.5, "
      "\"mask\": {\"bone\": \"b_Spine01_02\", \"subtree\": true}}], \"from\": 0, \"to\": 0.5, \"fps\": 30}",
      "{\"layers\": [{\"animation\": \"Walk\"}, {\"animation\": \"Survey\", \"additive\": true, \"weight\": 0.5}], "
      "\"times\": [0.1, 0.2, 1.5], \"bones\": {\"b_Hip_01\": {\"position\": [0, 9, 0]}}}",
      "{\"animation\": \"Walk\", \"from\": 0, \"to\": 0.5, \"fps\": 30, \"bones\": {\"b_Head_05\": {\"matrix\": "
      "[0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 2, 0, 3, -4, 5, 1]}}}",
      "{\"animation\": \"Walk\", \"times\": [0.1, 0.3], \"ops\": [{\"op\": \"rotate\", \"bone\": \"b_Head_05\", "
      "\"axis\": [0, 1, 0], \"amount\": 0.5, \"space\": \"world\"}, {\"op\": \"ik\", \"bone\": \"b_LeftLeg02_016\", "
      "\"target\": [-7, 20, -40]}]}",
  };
  static const char *const babylon_bodies[] = {
      "{\"animation\": \"Walk\", \"from\": 0, \"to\": 2, \"fps\": 60, \"loop\": true}",
      "{\"layers\": [{\"animation\": \"Walk\"}, {\"animation\": \"Walk\", \"time\": 0.3, \"weight\": 0.5}], "
      "\"from\": 0, \"to\": 0.5, \"fps\": 30}",
      "{\"animation\": \"Walk\", \"from\": 0, \"to\": 0.5, \"fps\": 30, \"bones\": {\"b_Head_05\": {\"matrix\": "
      "[0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 2, 0, 3, -4, 5, 1]}}}",
  };
  for (int fmt = 1; fmt <= 2; fmt++) {
    for (size_t i = 0; i < sizeof gltf_bodies / sizeof *gltf_bodies; i++)
      ck_assert_uint_gt(same_binary("fox", "{\"gltf\": \"Fox.glb\"}", gltf_bodies[i], fmt), 0);
    for (size_t i = 0; i < sizeof babylon_bodies / sizeof *babylon_bodies; i++)
      ck_assert_uint_gt(same_binary("foxb", babylon_skel, babylon_bodies[i], fmt), 0);
  }
  /* a range past the flush size: 2401 frames of 25 matrices, 3.8 MB */
  ck_assert_uint_eq(same_binary("fox", "{\"gltf\": \"Fox.glb\"}",
                                "{\"animation\": \"Run\", \"from\": 0, \"to\": 40, \"fps\": 60, \"loop\": true}", 1),
                    2401 * 25 * 64);
  free(babylon_skel);
  sk_fixture_stop(&g_d);
}
END_TEST

int main(void) {
  Suite *s = suite_create("eval_identity");
  TCase *t = tcase_create("identity");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, skinner_eval_and_skinnerd_answer_a_range_with_the_same_bytes);
  tcase_add_test(t, skinner_eval_binary_output_is_skinnerds_binary_answer);
  suite_add_tcase(s, t);
  return sk_test_run(s);
}
