/* sk_pose_anim: poses naming clips (Fox.glb's), sampled into plain poses,
 * one per frame of a range; each invalid input names its field. */
#include "sk_json.h"
#include "sk_pose.h"
#include "sk_pose_int.h"
#include "sk_testasset.h"

static sk_skeleton *g_s;
static sk_anim *g_a;

static void setup(void) { sk_test_import_asset("Fox.glb", NULL, &g_s, &g_a); }
static void teardown(void) {
  sk_skeleton_destroy(g_s);
  sk_anim_destroy(g_a);
}

/* Parses `text` at "/p" with Fox's clips (or `anim`); the code, *e. */
static int parse_with(const sk_anim *anim, const char *text, sk_pose **poses, size_t *n, sk_error *e) {
  json_t *j;
  sk_error_clear(e);
  ck_assert_int_eq(sk_json_load(text, strlen(text), &j, e), 0);
  int rc = sk_pose_parse_anim(g_s, anim, j, "/p", NULL, poses, n, e);
  json_decref(j);
  if (rc) {
    ck_assert_ptr_null(*poses);
    ck_assert_uint_eq(*n, 0);
  }
  return rc;
}

static int parse(const char *text, sk_pose **poses, size_t *n, sk_error *e) { return parse_with(g_a, text, poses, n, e); }

START_TEST(a_pose_without_clips_is_one_plain_pose) {
  sk_pose *p;
  size_t n;
  sk_error e;
  ck_assert_int_eq(parse("{\"bones\": {\"b_Hip_01\": {\"position\": [0,1,0]}}}", &p, &n, &e), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(p[0].count, 1);
  ck_assert(!p[0].frame_range);
  sk_pose_array_free(p, n);
  sk_pose_array_free(NULL, 0);
}
END_TEST

START_TEST(a_clip_at_one_time_drives_every_bone) {
  sk_pose *p;
  size_t n;
  sk_error e;
  ck_assert_int_eq(parse("{\"animation\": \"Walk\", \"time\": 0.3}", &p, &n, &e), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(p[0].count, g_s->count);
  ck_assert(!p[0].frame_range);
  sk_pose_array_free(p, n);
  /* by index too: Fox's clips are Survey, Walk, Run */
  ck_assert_int_eq(parse("{\"animation\": 1, \"time\": 0.3, \"loop\": true}", &p, &n, &e), 0);
  ck_assert_uint_eq(n, 1);
  sk_pose_array_free(p, n);
}
END_TEST

/* from 0 to 0.1 at 30 fps keeps `to` itself: 0.1 * 30 is 3 up to rounding. */
START_TEST(a_range_gives_one_pose_per_frame_each_marked_as_a_range) {
  sk_pose *p;
  size_t n;
  sk_error e;
  ck_assert_int_eq(parse("{\"animation\": \"Run\", \"from\": 0, \"to\": 0.1, \"fps\": 30}", &p, &n, &e), 0);
  ck_assert_uint_eq(n, 4);
  for (size_t i = 0; i < n; i++)
    ck_assert(p[i].frame_range);
  sk_pose_array_free(p, n);
  ck_assert_int_eq(parse("{\"animation\": \"Run\", \"times\": [0.25]}", &p, &n, &e), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert(p[0].frame_range);
  sk_pose_array_free(p, n);
}
END_TEST

START_TEST(user_bones_apply_on_top_of_the_clip) {
  sk_pose *p, *q;
  size_t n, m;
  sk_error e;
  ck_assert_int_eq(parse("{\"animation\": \"Walk\", \"time\": 0.3}", &p, &n, &e), 0);
  ck_assert_int_eq(parse("{\"animation\": \"Walk\", \"time\": 0.3, \"bones\": {\"b_Hip_01\": {\"position\": [0,9,0]}}}",
                         &q, &m, &e),
                   0);
  int32_t hip = sk_skeleton_find(g_s, "b_Hip_01");
  ck_assert_int_ge(hip, 0);
  size_t diff = 0;
  for (size_t k = 0; k < q[0].count; k++) {
    const sk_override *a = &p[0].overrides[k], *b = &q[0].overrides[k];
    ck_assert_int_eq(a->bone, b->bone);
    if (b->bone == hip) {
      ck_assert_double_eq(b->position[1], 9);
      ck_assert(memcmp(a->rotation, b->rotation, sizeof a->rotation) == 0); /* the clip's rotation stays */
    } else {
      diff += memcmp(a, b, sizeof *a) != 0;
    }
  }
  ck_assert_uint_eq(diff, 0);
  sk_pose_array_free(p, n);
  sk_pose_array_free(q, m);
}
END_TEST

START_TEST(plain_weighted_layers_are_the_samplers_and_a_range_keeps_its_times) {
  json_t *j;
  sk_error e;
  sk_error_clear(&e);
  const char *text =
      "{\"layers\": [{\"animation\": \"Walk\", \"weight\": 1}, {\"animation\": \"Run\", \"weight\": 3, \"time\": 0.1}],"
      " \"times\": [0, 0.5]}";
  ck_assert_int_eq(sk_json_load(text, strlen(text), &j, &e), 0);
  sk_pose_spec sp;
  ck_assert_int_eq(sk_pose__spec_parse(g_s, g_a, j, "/p", NULL, &sp, &e), 0);
  ck_assert(sp.animated);
  ck_assert(sp.plain_layers);
  ck_assert_uint_eq(sp.nl, 2);
  ck_assert_uint_eq(sp.nf, 2);
  ck_assert_double_eq(sp.times[1], 0.5);
  ck_assert_double_eq(sp.l[1].time, 0.1); /* an offset added to each frame time */
  sk_pose__spec_close(&sp);
  ck_assert_ptr_null(sp.l);
  json_decref(j);
}
END_TEST

START_TEST(each_invalid_input_names_its_field) {
  static const struct {
    const char *text;
    int code;
    const char *pointer;
  } bad[] = {
      {"{\"animation\": \"Fly\"}", SK_ENOTFOUND, "/p/animation"},
      {"{\"animation\": 3}", SK_ENOTFOUND, "/p/animation"},
      {"{\"animation\": true}", SK_ETYPE, "/p/animation"},
      {"{\"animation\": \"Walk\", \"time\": 0, \"times\": [1]}", SK_ETYPE, "/p/time"},
      {"{\"animation\": \"Walk\", \"times\": [1], \"fps\": 3}", SK_ETYPE, "/p/times"},
      {"{\"animation\": \"Walk\", \"times\": []}", SK_ETYPE, "/p/times"},
      {"{\"animation\": \"Walk\", \"times\": [0, \"x\"]}", SK_ETYPE, "/p/times/1"},
      {"{\"animation\": \"Walk\", \"from\": 0, \"to\": 1}", SK_EMISSING, "/p/fps"},
      {"{\"animation\": \"Walk\", \"from\": 0, \"to\": 1, \"fps\": 0}", SK_ERANGE, "/p/fps"},
      {"{\"animation\": \"Walk\", \"from\": 1, \"to\": 0, \"fps\": 30}", SK_ERANGE, "/p/to"},
      {"{\"animation\": \"Walk\", \"from\": 0, \"to\": 1e9, \"fps\": 30}", SK_ETOOBIG, "/p/fps"},
      {"{\"time\": 1}", SK_EMISSING, "/p/time"},
      {"{\"animation\": \"Walk\", \"layers\": []}", SK_ETYPE, "/p/layers"},
      {"{\"layers\": [{\"animation\": \"Walk\"}], \"time\": 1}", SK_ETYPE, "/p/time"},
      {"{\"layers\": [{\"animation\": \"Walk\", \"weight\": -1}]}", SK_ERANGE, "/p/layers/0/weight"},
      {"{\"layers\": [{\"animation\": \"Walk\", \"weight\": 0}]}", SK_ERANGE, "/p/layers"},
      {"{\"layers\": [{\"time\": 1}]}", SK_EMISSING, "/p/layers/0/animation"},
      {"{\"layers\": [{\"animation\": \"Walk\", \"speed\": 2}]}", SK_EUNKNOWN, "/p/layers/0/speed"},
      {"{\"animation\": \"Walk\", \"speed\": 2}", SK_EUNKNOWN, "/p/speed"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    sk_pose *p;
    size_t n;
    sk_error e;
    int rc = parse(bad[i].text, &p, &n, &e);
    ck_assert_msg(rc == bad[i].code, "%s: %d (%s at %s), want %d", bad[i].text, rc, e.text, e.pointer, bad[i].code);
    ck_assert_msg(strcmp(e.pointer, bad[i].pointer) == 0, "%s: pointer %s, want %s", bad[i].text, e.pointer,
                  bad[i].pointer);
  }
}
END_TEST

START_TEST(a_skeleton_without_clips_says_so) {
  sk_pose *p;
  size_t n;
  sk_error e;
  ck_assert_int_eq(parse_with(NULL, "{\"animation\": \"Walk\"}", &p, &n, &e), SK_ENOTFOUND);
  ck_assert_str_eq(e.pointer, "/p/animation");
  ck_assert_int_eq(parse_with(NULL, "{\"layers\": [{\"animation\": \"Walk\"}]}", &p, &n, &e), SK_ENOTFOUND);
  ck_assert_str_eq(e.pointer, "/p/layers");
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_pose_anim");
  TCase *g = tcase_create("golden");
  tcase_add_checked_fixture(g, setup, teardown);
  tcase_add_test(g, a_pose_without_clips_is_one_plain_pose);
  tcase_add_test(g, a_clip_at_one_time_drives_every_bone);
  tcase_add_test(g, a_range_gives_one_pose_per_frame_each_marked_as_a_range);
  tcase_add_test(g, user_bones_apply_on_top_of_the_clip);
  tcase_add_test(g, plain_weighted_layers_are_the_samplers_and_a_range_keeps_its_times);
  suite_add_tcase(s, g);
  TCase *v = tcase_create("validity");
  tcase_add_checked_fixture(v, setup, teardown);
  tcase_add_test(v, each_invalid_input_names_its_field);
  tcase_add_test(v, a_skeleton_without_clips_says_so);
  suite_add_tcase(s, v);
  return sk_test_run(s);
}
