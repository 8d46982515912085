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
  sk_fixture_stop(&g_d);
}
END_TEST

int main(void) {
  Suite *s = suite_create("eval_identity");
  TCase *t = tcase_create("identity");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, skinner_eval_and_skinnerd_answer_a_range_with_the_same_bytes);
  suite_add_tcase(s, t);
  return sk_test_run(s);
}
