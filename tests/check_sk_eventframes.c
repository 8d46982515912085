/* "events" on the pose forms: the committed Babylon cases
 * (tests/conformance/events.jsonl, tests/oracle/babylon_events.mjs: every
 * pose's fired events, in Babylon 9.34's order) replayed through skinner
 * eval and over /pose; the binary answer's indices against the JSON
 * names; chunks of "frames" against the whole; each refusal (code + JSON
 * pointer), at upload and per pose; a glTF clip's markers over HTTP. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "sk_eval.h"
#include "sk_fixture.h"

/* The results of case `c` through skinner eval (new), NULL with *rc. */
static json_t *eval_case(const json_t *c, int *rc, sk_error *e) {
  char base[1024];
  sk_test_path("", base, sizeof base);
  sk_strbuf out = {0};
  sk_error_clear(e);
  *rc = sk_eval_case_at(c, base, &out, e);
  json_t *got = *rc ? NULL : json_loadb(out.data, out.len, 0, NULL);
  sk_strbuf_free(&out);
  json_t *r = json_incref(json_object_get(got, "results"));
  json_decref(got);
  return r;
}

START_TEST(generated_cases_fire_the_events_babylon_fires) {
  char path[1024];
  FILE *f = fopen(sk_test_path("conformance/events.jsonl", path, sizeof path), "r");
  ck_assert_ptr_nonnull(f);
  char *line = NULL;
  size_t cap = 0, cases = 0, fired = 0;
  while (getline(&line, &cap, f) > 0) {
    json_t *c = json_loads(line, 0, NULL);
    ck_assert_ptr_nonnull(c);
    int rc;
    sk_error e;
    json_t *got = eval_case(json_object_get(c, "case"), &rc, &e);
    const char *name = json_string_value(json_object_get(c, "name"));
    ck_assert_msg(rc == 0, "%s: %s at %s: %s", name, sk_errname(rc), e.pointer, e.text);
    const json_t *want = json_object_get(c, "expected");
    ck_assert_uint_eq(json_array_size(got), json_array_size(want));
    for (size_t i = 0; i < json_array_size(want); i++) {
      const json_t *g = json_object_get(json_array_get(got, i), "events");
      ck_assert_msg(json_equal(g, json_array_get(want, i)), "%s: pose %zu differs", name, i);
      fired += json_array_size(g);
    }
    json_decref(got);
    json_decref(c);
    cases++;
  }
  free(line);
  fclose(f);
  ck_assert_uint_ge(cases, 40);
  ck_assert_uint_ge(fired, 400);
}
END_TEST

/* A Babylon skeleton of one bone whose animation has events. */
#define SKEL(events)                                                                                                 \
  "{\"name\":\"s\",\"id\":\"s\",\"bones\":[{\"parentBoneIndex\":-1,\"index\":0,\"name\":\"b0\",\"id\":\"b0\","       \
  "\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],\"animation\":{\"name\":\"a\",\"property\":\"position\","            \
  "\"framePerSecond\":30,\"dataType\":1,\"loopBehavior\":1,\"keys\":[{\"frame\":0,\"values\":[0,0,0]},"              \
  "{\"frame\":30,\"values\":[1,0,0]}],\"events\":" events "}}],\"ranges\":[{\"name\":\"r\",\"from\":0,\"to\":30}]}"
#define EVENTS "[{\"name\":\"step\",\"frame\":10},{\"name\":\"once\",\"frame\":5,\"onlyOnce\":true},{\"name\":\"start\",\"frame\":0}]"

static json_t *eval_pose(const char *skel, const char *pose, int *rc, sk_error *e) {
  static char buf[32768];
  snprintf(buf, sizeof buf, "{\"skeleton\":%s,\"ops\":[{\"op\":\"pose\",%s}]}", skel, pose);
  json_t *c = json_loads(buf, 0, NULL);
  ck_assert_ptr_nonnull(c);
  json_t *r = eval_case(c, rc, e);
  json_decref(c);
  return r;
}

START_TEST(a_chunk_of_frames_fires_as_the_whole_bake) {
  int rc;
  sk_error e;
  json_t *whole = eval_pose(SKEL(EVENTS), "\"animation\":\"r\",\"loop\":true,\"events\":true,\"fps\":30,\"frames\":[0,70]",
                            &rc, &e);
  ck_assert_int_eq(rc, 0);
  const size_t starts[] = {1, 5, 6, 29, 30, 31, 64};
  for (size_t k = 0; k < sizeof starts / sizeof *starts; k++) {
    char pose[256];
    snprintf(pose, sizeof pose, "\"animation\":\"r\",\"loop\":true,\"events\":true,\"fps\":30,\"frames\":[%zu,70]",
             starts[k]);
    json_t *part = eval_pose(SKEL(EVENTS), pose, &rc, &e);
    ck_assert_int_eq(rc, 0);
    for (size_t i = 0; i < json_array_size(part); i++)
      ck_assert_msg(json_equal(json_object_get(json_array_get(part, i), "events"),
                               json_object_get(json_array_get(whole, starts[k] + i), "events")),
                    "chunk at %zu, pose %zu", starts[k], i);
    json_decref(part);
  }
  /* the once-only event fires in the first cycle only, the others every cycle */
  size_t once = 0, start = 0;
  for (size_t i = 0; i < json_array_size(whole); i++) {
    const json_t *ev = json_object_get(json_array_get(whole, i), "events");
    for (size_t k = 0; k < json_array_size(ev); k++) {
      const char *n = json_string_value(json_object_get(json_array_get(ev, k), "name"));
      once += strcmp(n, "once") == 0;
      start += strcmp(n, "start") == 0;
    }
  }
  ck_assert_uint_eq(once, 1);
  ck_assert_uint_eq(start, 3); /* frames 0, 30, 60 */
  json_decref(whole);
}
END_TEST

static void expect_refused(const char *skel, const char *pose, int code, const char *pointer) {
  int rc;
  sk_error e;
  json_t *r = eval_pose(skel, pose, &rc, &e);
  json_decref(r);
  ck_assert_msg(rc == code, "%s / %s: %s, not %s", skel, pose, sk_errname(rc), sk_errname(code));
  ck_assert_str_eq(e.pointer, pointer);
}

START_TEST(bad_events_are_refused_naming_the_field) {
  const char *ok = "\"animation\":\"r\",\"time\":0.2,\"events\":true";
  expect_refused(SKEL("[{\"name\":\"\",\"frame\":1}]"), ok, SK_ERANGE, "/skeleton/bones/0/animation/events/0/name");
  expect_refused(SKEL("[{\"name\":\"a\"}]"), ok, SK_EMISSING, "/skeleton/bones/0/animation/events/0/frame");
  expect_refused(SKEL("[{\"name\":\"a\",\"frame\":1,\"at\":2}]"), ok, SK_EUNKNOWN, "/skeleton/bones/0/animation/events/0/at");
  expect_refused(SKEL("[{\"name\":\"a\",\"frame\":\"1\"}]"), ok, SK_ETYPE, "/skeleton/bones/0/animation/events/0/frame");
  expect_refused(SKEL("[{\"name\":\"a\",\"frame\":1,\"onlyOnce\":1}]"), ok, SK_ETYPE,
                 "/skeleton/bones/0/animation/events/0/onlyOnce");
  expect_refused(SKEL("{}"), ok, SK_ETYPE, "/skeleton/bones/0/animation/events");
  char many[16384] = "[";
  for (int k = 0; k <= SK_EVENTS_MAX; k++)
    snprintf(many + strlen(many), sizeof many - strlen(many), "%s{\"name\":\"e\",\"frame\":%d}", k ? "," : "", k);
  strcat(many, "]");
  char skel[20000];
  snprintf(skel, sizeof skel, SKEL("%s"), many);
  expect_refused(skel, ok, SK_ETOOBIG, "/skeleton/bones/0/animation/events");
  expect_refused(SKEL(EVENTS), "\"animation\":\"r\",\"time\":0.2,\"events\":1", SK_ETYPE, "/ops/0/events");
  /* a range past the animation's last key: Babylon would wrap it at 30 */
  char longer[4096];
  snprintf(longer, sizeof longer, "%s", SKEL(EVENTS));
  char *to = strstr(longer, "\"to\":30}");
  ck_assert_ptr_nonnull(to);
  memcpy(to, "\"to\":40}", 8);
  expect_refused(longer, ok, SK_EUNSUPPORTED, "/ops/0/events");
  expect_refused(SKEL(EVENTS), "\"layers\":[{\"animation\":\"r\"}],\"time\":0.2,\"events\":true", SK_ERANGE,
                 "/ops/0/events");
}
END_TEST

START_TEST(pose_answers_events_as_json_and_binary) {
  sk_daemon d;
  sk_fixture_start(&d, NULL);
  sk_fixture_put_json(&d, "ev", SKEL(EVENTS));
  const char *body = "{\"animation\":\"r\",\"loop\":true,\"events\":true,\"fps\":30,\"frames\":[3,64]}";
  sk_httpc_resp r;
  sk_fixture_json_request(&d, "POST", "/v1/skeletons/ev/pose", NULL, body, &r);
  ck_assert_msg(r.status == 200, "%d %.300s", r.status, r.body);
  json_t *j = sk_fixture_body_json(&r);
  sk_httpc_free(&r);
  const json_t *res = json_object_get(j, "results");
  ck_assert_uint_eq(json_array_size(res), 61);
  int rc;
  sk_error e;
  json_t *want = eval_pose(SKEL(EVENTS), "\"animation\":\"r\",\"loop\":true,\"events\":true,\"fps\":30,\"frames\":[3,64]",
                           &rc, &e);
  ck_assert_int_eq(rc, 0);
  for (size_t i = 0; i < 61; i++)
    ck_assert(json_equal(json_object_get(json_array_get(res, i), "events"),
                         json_object_get(json_array_get(want, i), "events")));
  json_decref(want);
  /* binary: 2 matrices of 16 floats a pose, then u32 count + u32 indices
   * into the clip's table (start 0, once 1, step 2: sorted by frame) */
  sk_fixture_request(&d, "POST", "/v1/skeletons/ev/pose",
                     "Content-Type: application/json\r\nAccept: application/octet-stream\r\n", body, strlen(body), &r);
  ck_assert_msg(r.status == 200, "%d %.300s", r.status, r.body);
  size_t at = 0;
  static const char *const names[] = {"start", "once", "step"};
  for (size_t i = 0; i < 61; i++) {
    at += 2 * 16 * sizeof(float);
    ck_assert_uint_le(at + 4, r.len);
    uint32_t n;
    memcpy(&n, r.body + at, 4);
    at += 4;
    const json_t *ev = json_object_get(json_array_get(res, i), "events");
    ck_assert_uint_eq(n, json_array_size(ev));
    for (uint32_t k = 0; k < n; k++, at += 4) {
      uint32_t x;
      memcpy(&x, r.body + at, 4);
      ck_assert_uint_lt(x, 3);
      ck_assert_str_eq(names[x], json_string_value(json_object_get(json_array_get(ev, k), "name")));
    }
  }
  ck_assert_uint_eq(at, r.len);
  sk_httpc_free(&r);
  json_decref(j);
  /* the steps before a far chunk are played too: costed, refused before any */
  const char *far = "{\"animation\":\"r\",\"loop\":true,\"events\":true,\"fps\":30,\"frames\":[1000000000000,1000000000001]}";
  sk_fixture_json_request(&d, "POST", "/v1/skeletons/ev/pose", NULL, far, &r);
  ck_assert_int_eq(r.status, 413);
  sk_httpc_free(&r);
  /* the upload refuses a bad event with the field named */
  const char *bad = SKEL("[{\"name\":\"a\",\"frame\":1,\"time\":2}]");
  sk_fixture_request(&d, "PUT", "/v1/skeletons/bad", "Content-Type: application/json\r\n", bad, strlen(bad), &r);
  ck_assert_int_eq(r.status, 422);
  ck_assert_msg(strstr(r.body, "/bones/0/animation/events/0/time") != NULL, "%s", r.body);
  sk_httpc_free(&r);
  sk_fixture_stop(&d);
}
END_TEST

/* CesiumMan.glb with `markers` (JSON text) on its clip: a new GLB. */
static unsigned char *cesium_with_markers(const char *markers, size_t *len) {
  size_t n;
  unsigned char *glb = sk_test_read_asset("CesiumMan.glb", &n);
  uint32_t jlen;
  memcpy(&jlen, glb + 12, 4);
  json_t *j = json_loadb((const char *)glb + 20, jlen, 0, NULL);
  ck_assert_ptr_nonnull(j);
  json_t *m = json_loads(markers, JSON_DECODE_ANY, NULL);
  ck_assert_ptr_nonnull(m);
  json_object_set_new(json_array_get(json_object_get(j, "animations"), 0), "extras", json_pack("{s:o}", "markers", m));
  char *text = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  size_t tl = strlen(text), padded = (tl + 3) / 4 * 4, bin = n - 20 - jlen;
  *len = 20 + padded + bin;
  unsigned char *out = malloc(*len);
  memcpy(out, glb, 20);
  memset(out + 20, ' ', padded);
  memcpy(out + 20, text, tl);
  memcpy(out + 20 + padded, glb + 20 + jlen, bin);
  uint32_t total = (uint32_t)*len, pl = (uint32_t)padded;
  memcpy(out + 8, &total, 4);
  memcpy(out + 12, &pl, 4);
  free(text);
  free(glb);
  return out;
}

START_TEST(gltf_markers_by_frame_or_time_fire_over_http) {
  sk_daemon d;
  sk_fixture_start(&d, NULL);
  size_t len;
  unsigned char *glb = cesium_with_markers("[{\"name\":\"start\",\"frame\":0},{\"name\":\"half\",\"time\":0.5}]", &len);
  sk_fixture_put(&d, "cm", "model/gltf-binary", glb, len);
  free(glb);
  sk_httpc_resp r;
  sk_fixture_request(&d, "GET", "/v1/skeletons/cm/animations/0", NULL, NULL, 0, &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_msg(strstr(r.body, "\"events\":[{\"name\":\"start\",\"frame\":0,\"onlyOnce\":false},{\"name\":\"half\","
                               "\"frame\":30,\"onlyOnce\":false}]") != NULL, "%s", r.body);
  sk_httpc_free(&r);
  const char *body = "{\"animation\":0,\"events\":true,\"fps\":30,\"frames\":[0,20]}";
  sk_fixture_json_request(&d, "POST", "/v1/skeletons/cm/pose", NULL, body, &r);
  ck_assert_msg(r.status == 200, "%d %.300s", r.status, r.body);
  json_t *j = sk_fixture_body_json(&r);
  sk_httpc_free(&r);
  const json_t *res = json_object_get(j, "results");
  ck_assert_uint_eq(json_array_size(res), 20);
  for (size_t i = 0; i < 20; i++) {
    const json_t *ev = json_object_get(json_array_get(res, i), "events");
    /* frame k at k / 30 s is clip frame 2k: "half" (30) at k = 15 */
    ck_assert_uint_eq(json_array_size(ev), i == 0 || i == 15 ? 1 : 0);
    if (i == 15)
      ck_assert_str_eq(json_string_value(json_object_get(json_array_get(ev, 0), "name")), "half");
  }
  json_decref(j);
  glb = cesium_with_markers("[{\"name\":\"a\",\"frame\":1,\"time\":2}]", &len);
  sk_fixture_request(&d, "PUT", "/v1/skeletons/cm2", "Content-Type: model/gltf-binary\r\n", glb, len, &r);
  free(glb);
  ck_assert_int_eq(r.status, 422);
  ck_assert_msg(strstr(r.body, "/animations/0/extras/markers/0/time") != NULL, "%s", r.body);
  sk_httpc_free(&r);
  sk_fixture_stop(&d);
}
END_TEST

static Suite *eventframes_suite(void) {
  Suite *s = suite_create("sk_eventframes");
  TCase *t = tcase_create("conformance");
  tcase_add_test(t, generated_cases_fire_the_events_babylon_fires);
  suite_add_tcase(s, t);
  TCase *g = tcase_create("golden");
  tcase_add_test(g, a_chunk_of_frames_fires_as_the_whole_bake);
  tcase_add_test(g, bad_events_are_refused_naming_the_field);
  tcase_add_test(g, pose_answers_events_as_json_and_binary);
  tcase_add_test(g, gltf_markers_by_frame_or_time_fire_over_http);
  suite_add_tcase(s, g);
  return s;
}

int main(void) { return sk_test_run(eventframes_suite()); }
