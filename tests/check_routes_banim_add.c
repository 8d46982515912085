/* End to end: additive layers of Babylon-format clips over HTTP. The cases of
 * tests/conformance/banim_additive.jsonl (Babylon's answers, held bit for bit
 * to `skinner eval` by check_sk_banim_add) uploaded and posed through /pose
 * (single times and frame ranges) and /poses batches, byte for byte as
 * `skinner eval` answers them; what Babylon cannot make additive answers a
 * problem+json naming the field. Test names are sentences. */
#include <stdbool.h>

#include <jansson.h>

#include "sk_eval.h"
#include "sk_fixture.h"
#include "sk_casecheck.h"
#include "sk_httpc.h"
#include "sk_jsonl.h"
#include "sk_testutil.h"

static sk_daemon D;

/* The answer's body, which must be `status`; new (free()). */
static char *answer(const char *method, const char *path, const char *body, int status) {
  sk_httpc_resp r;
  int rc = sk_httpc_request(D.host, D.port, method, path, "Content-Type: application/json\r\n", body, strlen(body), &r);
  ck_assert_msg(rc == 0, "%s %s: no answer (%s)", method, path, r.error);
  ck_assert_msg(r.status == status, "%s %s: %d, want %d: %.300s", method, path, r.status, status, r.body);
  char *out = strndup(r.body ? r.body : "", r.len);
  sk_httpc_free(&r);
  return out;
}

START_TEST(additive_babylon_layers_answer_what_skinner_eval_answers_in_poses_ranges_and_batches) {
  sk_fixture_start(&D, NULL);
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/banim_additive.jsonl");
  int cases = 0;
  sk_casecheck_counts n = {0};
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    const json_t *c = json_object_get(rec, "case"), *ops = json_object_get(c, "ops");
    const json_t *skel = json_object_get(c, "skeleton");
    char id[32];
    snprintf(id, sizeof id, "add%d", cases++);
    sk_casecheck_run(&D, id, skel, ops, &n);
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  ck_assert_int_ge(cases, 120);
  ck_assert_int_ge(n.ranges, 120);
  ck_assert_int_ge(n.batches, 30);
  sk_fixture_stop(&D);
}
END_TEST

/* The position animation ends at frame 20, the range "Long" at 30. */
static const char k_short[] =
    "{\"bones\":[{\"name\":\"root\",\"parentBoneIndex\":-1,\"index\":0,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],"
    "\"animation\":{\"name\":\"p\",\"property\":\"position\",\"framePerSecond\":30,\"dataType\":1,\"loopBehavior\":1,"
    "\"keys\":[{\"frame\":0,\"values\":[0,0,0]},{\"frame\":10,\"values\":[1,0,0]},{\"frame\":20,\"values\":[3,0,0]}]}}],"
    "\"ranges\":[{\"name\":\"Walk\",\"from\":0,\"to\":10},{\"name\":\"Long\",\"from\":0,\"to\":30}]}";

static void expect_problem(const char *body, int status, const char *kind, const char *pointer) {
  char *got = answer("POST", "/v1/skeletons/short/pose", body, status);
  json_t *j = json_loads(got, 0, NULL);
  ck_assert_ptr_nonnull(j);
  char type[256];
  snprintf(type, sizeof type, "https://skinnerd.dev/problems/%s", kind);
  ck_assert_str_eq(json_string_value(json_object_get(j, "type")), type);
  ck_assert_msg(strstr(got, pointer) != NULL, "%s does not name %s", got, pointer);
  json_decref(j);
  free(got);
}

START_TEST(what_babylon_cannot_make_additive_answers_a_problem_naming_the_layer) {
  sk_fixture_start(&D, NULL);
  sk_fixture_put_json(&D, "short", k_short);
  expect_problem("{\"layers\":[{\"animation\":\"Walk\"},{\"animation\":\"Long\",\"additive\":true}]}", 415,
                 "unsupported-media-type", "/layers/1/additive");
  expect_problem("{\"layers\":[{\"animation\":\"Walk\"},{\"animation\":\"Walk\",\"additive\":true,\"reference\":0.8}]}",
                 422, "out-of-range", "/layers/1/reference");
  /* and what it can is answered: Walk at frame 10 minus frame 0, on frame 0 */
  char *a = answer("POST", "/v1/skeletons/short/pose",
                   "{\"layers\":[{\"animation\":\"Walk\"},{\"animation\":\"Walk\",\"additive\":true,\"time\":1}],"
                   "\"output\":[\"local\"]}",
                   200);
  ck_assert_msg(strstr(a, "\"local\":[1,0,0,0,0,1,0,0,0,0,1,0,1,0,0,1]") != NULL, "%s", a);
  free(a);
  sk_fixture_stop(&D);
}
END_TEST

int main(void) {
  Suite *s = suite_create("routes_banim_add");
  TCase *t = tcase_create("http");
  tcase_set_timeout(t, 600);
  tcase_add_test(t, additive_babylon_layers_answer_what_skinner_eval_answers_in_poses_ranges_and_batches);
  tcase_add_test(t, what_babylon_cannot_make_additive_answers_a_problem_naming_the_layer);
  suite_add_tcase(s, t);
  return sk_test_run(s);
}
