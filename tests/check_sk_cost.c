/* sk_cost: every limit refused at its field with its flag named, the
 * counts it computes from a request's JSON, and sk_gltf_estimate on files
 * whose accessors claim more than they carry. */
#include "sk_cost.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_testutil.h"

/* sk_cost reads the bone count and the clips' names and channel counts only. */
static sk_skeleton g_skel;
static sk_anim_clip g_clips[2];
static sk_anim g_anim;

static void setup(void) {
  memset(&g_skel, 0, sizeof g_skel);
  g_skel.count = 10;
  memset(g_clips, 0, sizeof g_clips);
  g_clips[0].name = "walk";
  g_clips[0].named = true;
  g_clips[0].channel_count = 30;
  g_clips[1].name = "huge";
  g_clips[1].named = true;
  g_clips[1].channel_count = 60000;
  memset(&g_anim, 0, sizeof g_anim);
  g_anim.bone_count = 10;
  g_anim.clip_count = 2;
  g_anim.clips = g_clips;
}

static sk_cost_limits limits(void) {
  sk_cost_limits l;
  memset(&l, 0, sizeof l);
  sk_cost_limits_fill(&l);
  return l;
}

/* Costs one pose object given as text; returns the rc, fills c and err. */
static int cost_of(const char *text, const sk_cost_limits *l, int fmt, sk_cost *c, sk_error *err) {
  json_t *j = json_loads(text, 0, NULL);
  ck_assert_ptr_nonnull(j);
  memset(c, 0, sizeof *c);
  sk_error_clear(err);
  int rc = sk_cost_add_pose_json(c, l, &g_skel, &g_anim, j, "", fmt, err);
  json_decref(j);
  return rc;
}

#define EXPECT_REFUSED(body_, ptr_, flag_)                                                                       \
  do {                                                                                                           \
    sk_cost c_;                                                                                                  \
    sk_error e_;                                                                                                 \
    ck_assert_int_eq(cost_of(body_, &l, SK_FMT_JSON, &c_, &e_), SK_ETOOBIG);                                    \
    ck_assert_str_eq(e_.pointer, ptr_);                                                                          \
    ck_assert_msg(strstr(e_.text, flag_) != NULL, "\"%s\" does not name %s", e_.text, flag_);                  \
  } while (0)

START_TEST(defaults_fill_zeroed_fields_only) {
  sk_cost_limits l;
  memset(&l, 0, sizeof l);
  l.max_frames = 7;
  sk_cost_limits_fill(&l);
  ck_assert_uint_eq(l.max_frames, 7);
  ck_assert_uint_eq(l.max_layers, SK_COST_MAX_LAYERS);
  ck_assert_uint_eq(l.max_poses, 1024);
  ck_assert_uint_eq(l.max_work, SK_COST_MAX_WORK);
  ck_assert_uint_eq(l.max_answer, SK_COST_MAX_ANSWER);
  ck_assert_uint_eq(l.loop_work, SK_COST_LOOP_WORK);
}
END_TEST

START_TEST(counts_of_a_plain_pose) {
  sk_cost_limits l = limits();
  sk_cost c;
  sk_error e;
  ck_assert_int_eq(cost_of("{}", &l, SK_FMT_JSON, &c, &e), 0);
  ck_assert_uint_eq(c.poses, 1);
  ck_assert_uint_eq(c.sample, 0);
  /* 11 matrices evaluated, 11 written as JSON at 4 units each */
  ck_assert_uint_eq(c.eval, 11 + 4 * 11);
  ck_assert_uint_eq(c.answer, 11 * 16 * (SK_NUMFMT_F32_MAX + 1) + 40);
  ck_assert(sk_cost_inline(&c, &l));
  /* binary: exact sizes, final matrices only whatever "output" says */
  ck_assert_int_eq(cost_of("{\"output\":[\"final\",\"local\"]}", &l, SK_FMT_F32, &c, &e), 0);
  ck_assert_uint_eq(c.answer, 11 * 64);
  ck_assert_uint_eq(c.eval, 11);
  ck_assert_int_eq(cost_of("{}", &l, SK_FMT_MAT3X4, &c, &e), 0);
  ck_assert_uint_eq(c.answer, 11 * 48);
  /* all three outputs as JSON: 11 + 10 + 10 matrices written */
  ck_assert_int_eq(cost_of("{\"output\":[\"final\",\"absolute\",\"local\"]}", &l, SK_FMT_JSON, &c, &e), 0);
  ck_assert_uint_eq(c.eval, 11 + 4 * 31);
  ck_assert_uint_eq(c.answer, 31 * 16 * (SK_NUMFMT_F32_MAX + 1) + 40);
}
END_TEST

START_TEST(counts_of_clip_work) {
  sk_cost_limits l = limits();
  sk_cost c;
  sk_error e;
  /* one frame of "walk": its 30 channels and 10 bone blends */
  ck_assert_int_eq(cost_of("{\"animation\":\"walk\",\"time\":0.5}", &l, SK_FMT_JSON, &c, &e), 0);
  ck_assert_uint_eq(c.sample, 40);
  ck_assert_uint_eq(c.poses, 1);
  /* 0 to 1 s at 30 fps: 31 frames, as sk_eval expands them */
  ck_assert_int_eq(cost_of("{\"animation\":0,\"from\":0,\"to\":1,\"fps\":30}", &l, SK_FMT_JSON, &c, &e), 0);
  ck_assert_uint_eq(c.poses, 31);
  ck_assert_uint_eq(c.sample, 31 * 40);
  ck_assert_int_eq(cost_of("{\"animation\":\"walk\",\"times\":[0,0.1,0.2]}", &l, SK_FMT_JSON, &c, &e), 0);
  ck_assert_uint_eq(c.poses, 3);
  /* layers add up per frame */
  ck_assert_int_eq(cost_of("{\"layers\":[{\"animation\":\"walk\"},{\"animation\":1,\"weight\":2}]}", &l, SK_FMT_JSON,
                           &c, &e),
                   0);
  ck_assert_uint_eq(c.sample, 40 + 60010);
  /* one frame of a 60 000-channel clip is over the loop bound: the pool samples it */
  ck_assert(!sk_cost_inline(&c, &l));
  /* a blended range has as many frames as a single clip's (the fuzzer found
   * it counted as one, under every limit) */
  ck_assert_int_eq(cost_of("{\"layers\":[{\"animation\":\"walk\"},{\"animation\":\"walk\",\"time\":0.3}],"
                           "\"from\":0,\"to\":1,\"fps\":30}",
                           &l, SK_FMT_JSON, &c, &e),
                   0);
  ck_assert_uint_eq(c.poses, 31);
  ck_assert_uint_eq(c.sample, 31 * 80);
  ck_assert_int_eq(cost_of("{\"layers\":[{\"animation\":\"walk\"}],\"times\":[0,0.5]}", &l, SK_FMT_JSON, &c, &e),
                   0);
  ck_assert_uint_eq(c.poses, 2);
  /* unknown clips and malformed ranges count nothing: the parser refuses them */
  ck_assert_int_eq(cost_of("{\"animation\":\"nope\",\"from\":1,\"to\":0,\"fps\":30}", &l, SK_FMT_JSON, &c, &e), 0);
  ck_assert_uint_eq(c.poses, 1);
  ck_assert_uint_eq(c.sample, 10);
  ck_assert_int_eq(cost_of("[1,2]", &l, SK_FMT_JSON, &c, &e), 0);
  ck_assert_uint_eq(c.poses, 1);
  /* frames by index, [start, end): as many frames as from/to would give */
  ck_assert_int_eq(cost_of("{\"animation\":0,\"frames\":[30,61],\"fps\":30}", &l, SK_FMT_JSON, &c, &e), 0);
  ck_assert_uint_eq(c.poses, 31);
  ck_assert_uint_eq(c.sample, 31 * 40);
  ck_assert_int_eq(cost_of("{\"layers\":[{\"animation\":\"walk\"},{\"animation\":\"walk\",\"time\":0.3}],"
                           "\"frames\":[0,31],\"fps\":30}",
                           &l, SK_FMT_JSON, &c, &e),
                   0);
  ck_assert_uint_eq(c.sample, 31 * 80);
  /* reversed, fractional or doubled forms count one: the parser refuses them */
  static const char *const bad[] = {"{\"animation\":0,\"frames\":[5,4],\"fps\":30}",
                                    "{\"animation\":0,\"frames\":[0,1e9],\"fps\":30}",
                                    "{\"animation\":0,\"frames\":[0,2000],\"from\":0,\"to\":1,\"fps\":30}",
                                    "{\"animation\":0,\"frames\":[0,2000]}"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    ck_assert_int_eq(cost_of(bad[k], &l, SK_FMT_JSON, &c, &e), 0);
    ck_assert_uint_eq(c.poses, 1);
  }
}
END_TEST

START_TEST(each_limit_names_its_field_and_flag) {
  sk_cost_limits l = limits();
  /* the 100-second frame range of issue 11 */
  EXPECT_REFUSED("{\"animation\":\"huge\",\"from\":0,\"to\":100,\"fps\":60}", "/fps", "--max-frames");
  EXPECT_REFUSED("{\"animation\":\"walk\",\"from\":0,\"to\":1e300,\"fps\":1e300}", "/fps", "--max-frames");
  EXPECT_REFUSED("{\"layers\":[{\"animation\":\"walk\"}],\"from\":0,\"to\":100,\"fps\":60}", "/fps", "--max-frames");
  EXPECT_REFUSED("{\"animation\":\"walk\",\"frames\":[0,1025],\"fps\":30}", "/frames", "--max-frames");
  EXPECT_REFUSED("{\"animation\":\"walk\",\"frames\":[9007199254739000,9007199254740992],\"fps\":30}", "/frames",
                 "--max-frames");
  /* within the frame limit, over the work limit, blended: 601 frames x (60 010 + 40) */
  EXPECT_REFUSED("{\"layers\":[{\"animation\":\"huge\"},{\"animation\":\"walk\"}],\"from\":0,\"to\":10,\"fps\":60}",
                 "", "--max-work");
  /* 1025 explicit times */
  {
    json_t *ts = json_array();
    for (int i = 0; i < 1025; i++)
      json_array_append_new(ts, json_real(i * 0.01));
    json_t *j = json_pack("{s:s,s:o}", "animation", "walk", "times", ts);
    char *text = json_dumps(j, JSON_COMPACT);
    EXPECT_REFUSED(text, "/times", "--max-frames");
    free(text);
    json_decref(j);
  }
  /* 2000 layers */
  {
    json_t *ls = json_array();
    for (int i = 0; i < 2000; i++)
      json_array_append_new(ls, json_pack("{s:i}", "animation", 1));
    json_t *j = json_pack("{s:o}", "layers", ls);
    char *text = json_dumps(j, JSON_COMPACT);
    EXPECT_REFUSED(text, "/layers", "--max-layers");
    free(text);
    json_decref(j);
  }
  /* within the frame limit, over the work limit: 601 frames x 60 010 */
  EXPECT_REFUSED("{\"animation\":\"huge\",\"from\":0,\"to\":10,\"fps\":60}", "", "--max-work");
  /* answer bytes */
  l.max_answer = 1000;
  EXPECT_REFUSED("{}", "", "--max-answer-mb");
  l = limits();
  l.max_poses = 4;
  EXPECT_REFUSED("{\"animation\":\"walk\",\"times\":[0,1,2,3,4]}", "", "--max-batch");
}
END_TEST

START_TEST(a_batch_is_refused_at_the_pose_that_crossed) {
  sk_cost_limits l = limits();
  l.max_work = 1000;
  sk_cost c;
  memset(&c, 0, sizeof c);
  sk_error e;
  sk_error_clear(&e);
  json_t *pose = json_loads("{\"animation\":\"walk\",\"times\":[0,0.5]}", 0, NULL);
  int rc = 0;
  size_t i = 0;
  for (; i < 100 && rc == 0; i++) {
    char p[SK_ERROR_POINTER_MAX] = "/poses";
    sk_pointer_push_index(p, sizeof p, i);
    rc = sk_cost_add_pose_json(&c, &l, &g_skel, &g_anim, pose, p, SK_FMT_JSON, &e);
  }
  json_decref(pose);
  /* each pose: 2 x 40 sampling + 2 x (11 + 44) evaluation = 190 */
  ck_assert_int_eq(rc, SK_ETOOBIG);
  ck_assert_uint_eq(i, 6);
  ck_assert_str_eq(e.pointer, "/poses/5");
  /* parsed poses: the same answer bound */
  memset(&c, 0, sizeof c);
  sk_error_clear(&e);
  l = limits();
  ck_assert_int_eq(sk_cost_add_poses(&c, &l, &g_skel, 1024, SK_OUT_FINAL, SK_FMT_F32, "/poses", &e), 0);
  ck_assert_uint_eq(c.answer, 1024 * 11 * 64);
  ck_assert_uint_eq(sk_cost_work(&c), 1024 * 11);
}
END_TEST

START_TEST(counts_saturate_instead_of_wrapping) {
  sk_cost_limits l = limits();
  l.max_poses = UINT64_MAX;
  l.max_work = UINT64_MAX;
  l.max_answer = UINT64_MAX;
  sk_cost c;
  memset(&c, 0, sizeof c);
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_cost_add_poses(&c, &l, &g_skel, UINT64_MAX / 2, SK_OUT_FINAL, SK_FMT_JSON, "", &e), 0);
  ck_assert_uint_eq(c.answer, UINT64_MAX);
  ck_assert_uint_eq(c.eval, UINT64_MAX);
}
END_TEST

/* ---- glTF estimates -------------------------------------------------------- */

/* One joint; accessors without a bufferView (zero-filled per the spec), so
 * `count` alone decides their size: 364 bytes of JSON. */
static const char k_empty_accessors[] =
    "{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{}],\"skins\":[{\"joints\":[0]%s}],"
    "\"accessors\":[{\"componentType\":5126,\"count\":%d,\"type\":\"MAT4\"},"
    "{\"componentType\":5126,\"count\":%d,\"type\":\"SCALAR\"},{\"componentType\":5126,\"count\":%d,\"type\":\"VEC4\"}],"
    "\"animations\":[{\"samplers\":[{\"input\":1,\"output\":2}],\"channels\":[{\"sampler\":0,\"target\":{\"node\":0,"
    "\"path\":\"rotation\"}}]}]}";
static const char k_ibm[] = ",\"inverseBindMatrices\":0";

START_TEST(gltf_estimate_counts_accessors_without_data) {
  char text[1024];
  snprintf(text, sizeof text, k_empty_accessors, k_ibm, 1000, 4000, 4000);
  sk_gltf *g;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_gltf_parse(text, strlen(text), &g, &e), 0);
  size_t bytes;
  ck_assert_int_eq(sk_gltf_estimate(g, 0, 0, &bytes, &e), 0);
  /* IBMs 64 000 B, keys 4002 doubles, values 4024 x 4 floats, peak read 80 000 B */
  ck_assert_uint_ge(bytes, 64000 + 4002 * 8 + 16000 * 4 + 80000);
  ck_assert_uint_le(bytes, 64000 + 4002 * 8 + 16024 * 4 + 80000 + 8192);
  ck_assert_uint_eq(sk_gltf_estimate_bytes(g, 0), bytes);
  /* a limit below it names the accessor that crossed it */
  ck_assert_int_eq(sk_gltf_estimate(g, 0, 100000, &bytes, &e), SK_ETOOBIG);
  ck_assert_str_eq(e.pointer, "/accessors/2/count");
  ck_assert(strstr(e.text, "--max-skeleton-mb") != NULL);
  sk_error_clear(&e);
  ck_assert_int_eq(sk_gltf_estimate(g, 0, 50000, &bytes, &e), SK_ETOOBIG);
  ck_assert_str_eq(e.pointer, "/accessors/0/count");
  sk_gltf_destroy(g);
}
END_TEST

START_TEST(gltf_import_bounded_refuses_before_building) {
  /* the 369-byte file of issue 11 built a 201 MB skeleton; now it is a 413 */
  char text[1024];
  snprintf(text, sizeof text, k_empty_accessors, k_ibm, 1000000, 4000000, 4000000);
  ck_assert_uint_lt(strlen(text), 400);
  sk_skeleton *s = NULL;
  sk_anim *a = NULL;
  sk_error e;
  sk_error_clear(&e);
  size_t est = 0;
  ck_assert_int_eq(sk_gltf_import_bounded(text, strlen(text), NULL, 0, SK_GLTF_MAX_SKELETON_BYTES, &est, &s, &a, &e),
                   SK_ETOOBIG);
  ck_assert_ptr_null(s);
  ck_assert_ptr_null(a);
  ck_assert_str_eq(e.pointer, "/accessors/2/count");
  ck_assert_uint_gt(est, 0);
  /* a small one builds (without its zero, singular, inverse binds), with
   * its estimate above what it holds */
  snprintf(text, sizeof text, k_empty_accessors, "", 1, 3, 3);
  sk_error_clear(&e);
  ck_assert_int_eq(sk_gltf_import_bounded(text, strlen(text), NULL, 0, SK_GLTF_MAX_SKELETON_BYTES, &est, &s, &a, &e),
                   0);
  ck_assert_uint_ge(est, sk_anim_memory(a));
  sk_skeleton_destroy(s);
  sk_anim_destroy(a);
}
END_TEST

START_TEST(gltf_estimates_of_real_assets_are_far_below_the_default) {
  static const char *const assets[] = {"Fox.glb", "CesiumMan.glb", "mannequiny-0.3.0.glb", "RobotExpressive.glb"};
  for (size_t i = 0; i < sizeof assets / sizeof assets[0]; i++) {
    size_t len;
    unsigned char *d = sk_test_read_asset(assets[i], &len);
    ck_assert_ptr_nonnull(d);
    sk_gltf *g;
    sk_error e;
    sk_error_clear(&e);
    ck_assert_int_eq(sk_gltf_parse(d, len, &g, &e), 0);
    size_t est = sk_gltf_estimate_bytes(g, 0);
    sk_skeleton *s;
    sk_anim *a;
    ck_assert_int_eq(sk_gltf_load_skin(g, 0, 0, &s, &a, &e), 0);
    ck_assert_msg(est >= sk_anim_memory(a) && est < SK_GLTF_MAX_SKELETON_BYTES / 8, "%s: estimate %zu, clips %zu",
                  assets[i], est, sk_anim_memory(a));
    sk_skeleton_destroy(s);
    sk_anim_destroy(a);
    sk_gltf_destroy(g);
    free(d);
  }
}
END_TEST

/* ---- additive keys the clips keep ------------------------------------------ */

/* Fox's clips (a real sk_anim: its memo is what the cost reads). */
static sk_skeleton *g_fox_s;
static sk_anim *g_fox_a;

static void fox_setup(void) {
  size_t len;
  unsigned char *d = sk_test_read_asset("Fox.glb", &len);
  ck_assert_ptr_nonnull(d);
  sk_gltf *g;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_gltf_parse(d, len, &g, &e), 0);
  ck_assert_int_eq(sk_gltf_load_skin(g, 0, 0, &g_fox_s, &g_fox_a, &e), 0);
  sk_gltf_destroy(g);
  free(d);
}

static void fox_teardown(void) {
  sk_skeleton_destroy(g_fox_s);
  sk_anim_destroy(g_fox_a);
}

/* The keys of Fox's clip `name`. */
static uint64_t fox_keys(const char *name) {
  size_t k;
  ck_assert_int_eq(sk_anim_find_clip(g_fox_a, name, &k), 0);
  uint64_t n = 0;
  for (size_t ch = 0; ch < g_fox_a->clips[k].channel_count; ch++)
    n += g_fox_a->clips[k].channels[ch].count;
  return n;
}

/* n poses of `pose` into one request's cost; the rc of the last added. */
static int fox_batch(const char *pose, size_t n, const sk_cost_limits *l, sk_cost *c, sk_error *e) {
  json_t *j = json_loads(pose, 0, NULL);
  ck_assert_ptr_nonnull(j);
  memset(c, 0, sizeof *c);
  sk_error_clear(e);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = sk_cost_add_pose_json(c, l, g_fox_s, g_fox_a, j, "/poses/0", SK_FMT_JSON, e);
  json_decref(j);
  return rc;
}

#define FOX_ADD(ref) "{\"layers\":[{\"animation\":\"Walk\"},{\"animation\":\"Run\",\"additive\":true,\"reference\":" ref "}]}"

/* A batch of 64 poses over an additive Run at 0.5 s: while every pose made
 * Run's keys (the memo off: what was charged for every request before), 64
 * times its keys cross --max-work; where the first pose's keys stay kept,
 * they are charged once, and not at all once kept. */
START_TEST(additive_keys_the_memo_keeps_are_charged_once_or_not_at_all) {
  const uint64_t keys = fox_keys("Run");
  sk_cost_limits l = limits();
  sk_cost c;
  sk_error e;
  /* the work of 64 poses without the keys, and once the keys */
  sk_anim_memo_set_off(g_fox_a, true);
  ck_assert_int_eq(fox_batch(FOX_ADD("0.5"), 1, &l, &c, &e), 0);
  const uint64_t one = sk_cost_work(&c);
  ck_assert_uint_ge(c.sample, keys);
  const uint64_t rest = one - keys;
  l.max_work = 64 * rest + keys + 8 * keys; /* room for the keys 9 times, not 64 */
  ck_assert_int_eq(fox_batch(FOX_ADD("0.5"), 64, &l, &c, &e), SK_ETOOBIG);
  ck_assert_str_eq(e.pointer, "/poses/0");
  ck_assert_ptr_nonnull(strstr(e.text, "--max-work"));
  /* the memo on and empty: the first use will keep them, charged once */
  sk_anim_memo_set_off(g_fox_a, false);
  ck_assert_uint_eq(sk_anim_memo_memory(g_fox_a), 0);
  ck_assert_int_eq(fox_batch(FOX_ADD("0.5"), 64, &l, &c, &e), 0);
  ck_assert_uint_eq(sk_cost_work(&c), 64 * rest + keys);
  ck_assert_uint_eq(sk_anim_memo_memory(g_fox_a), 0); /* costing made nothing */
  /* kept (the sampler's first use made them): not charged at all */
  size_t run;
  ck_assert_int_eq(sk_anim_find_clip(g_fox_a, "Run", &run), 0);
  ck_assert_ptr_nonnull(sk_anim_memo_gltf(g_fox_a, run, 0.5 * SK_ANIM_FPS));
  ck_assert_int_eq(fox_batch(FOX_ADD("0.5"), 64, &l, &c, &e), 0);
  ck_assert_uint_eq(sk_cost_work(&c), 64 * rest);
  /* another reference is not kept: charged once again, for its first use */
  ck_assert_int_eq(fox_batch(FOX_ADD("0.25"), 64, &l, &c, &e), 0);
  ck_assert_uint_eq(sk_cost_work(&c), 64 * rest + keys);
}
END_TEST

/* Where nothing keeps the keys, every pose is charged them, as before:
 * reference 0 before the clips' share of it is made, the memo off, and a
 * request naming more references than the memo has slots left. */
START_TEST(additive_keys_nothing_keeps_are_charged_for_every_pose) {
  const uint64_t keys = fox_keys("Run");
  sk_cost_limits l = limits();
  sk_cost c, one;
  sk_error e;
  ck_assert_int_eq(fox_batch(FOX_ADD("0"), 1, &l, &one, &e), 0);
  ck_assert_int_eq(fox_batch(FOX_ADD("0"), 10, &l, &c, &e), 0);
  ck_assert_uint_eq(sk_cost_work(&c), 10 * sk_cost_work(&one)); /* reference 0, not shared: made each time */
  ck_assert_int_eq(sk_anim_additive_share(g_fox_a, g_fox_s, SK_ANIM_ADDITIVE_SHARE_MAX), 0);
  ck_assert_int_eq(fox_batch(FOX_ADD("0"), 10, &l, &c, &e), 0);
  ck_assert_uint_eq(sk_cost_work(&c), 10 * (sk_cost_work(&one) - keys)); /* shared at upload: none */
  sk_anim_memo_set_off(g_fox_a, true);
  ck_assert_int_eq(fox_batch(FOX_ADD("0.5"), 10, &l, &c, &e), 0);
  ck_assert_uint_eq(sk_cost_work(&c), 10 * sk_cost_work(&one));
  sk_anim_memo_set_off(g_fox_a, false);
  /* 20 references in one request: the first SK_ANIM_MEMO_SLOTS will be kept
   * (charged once each), the others are made by each pose */
  json_t *j = json_object();
  json_t *ls = json_array();
  json_array_append_new(ls, json_pack("{s:s}", "animation", "Walk"));
  json_array_append_new(ls, json_pack("{s:s,s:b,s:f}", "animation", "Run", "additive", 1, "reference", 0.0));
  json_object_set_new(j, "layers", ls);
  memset(&c, 0, sizeof c);
  sk_error_clear(&e);
  uint64_t want = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int r = 1; r <= 20; r++) {
      json_object_set_new(json_array_get(ls, 1), "reference", json_real(r * 0.03125));
      const uint64_t before = sk_cost_work(&c);
      ck_assert_int_eq(sk_cost_add_pose_json(&c, &l, g_fox_s, g_fox_a, j, "", SK_FMT_JSON, &e), 0);
      const bool charged = r > SK_ANIM_MEMO_SLOTS || pass == 0;
      want += sk_cost_work(&one) - keys + (charged ? keys : 0);
      ck_assert_msg(sk_cost_work(&c) - before == sk_cost_work(&one) - keys + (charged ? keys : 0),
                    "pass %d, reference %d", pass, r);
    }
  ck_assert_uint_eq(sk_cost_work(&c), want);
  json_decref(j);
}
END_TEST

static Suite *cost_suite(void) {
  Suite *s = suite_create("sk_cost");
  TCase *t = tcase_create("golden");
  tcase_add_checked_fixture(t, setup, NULL);
  tcase_add_test(t, defaults_fill_zeroed_fields_only);
  tcase_add_test(t, counts_of_a_plain_pose);
  tcase_add_test(t, counts_of_clip_work);
  suite_add_tcase(s, t);
  t = tcase_create("validity");
  tcase_add_checked_fixture(t, setup, NULL);
  tcase_add_test(t, each_limit_names_its_field_and_flag);
  tcase_add_test(t, a_batch_is_refused_at_the_pose_that_crossed);
  tcase_add_test(t, counts_saturate_instead_of_wrapping);
  suite_add_tcase(s, t);
  t = tcase_create("gltf");
  tcase_add_test(t, gltf_estimate_counts_accessors_without_data);
  tcase_add_test(t, gltf_import_bounded_refuses_before_building);
  tcase_add_test(t, gltf_estimates_of_real_assets_are_far_below_the_default);
  suite_add_tcase(s, t);
  t = tcase_create("memo");
  tcase_add_checked_fixture(t, fox_setup, fox_teardown);
  tcase_add_test(t, additive_keys_the_memo_keeps_are_charged_once_or_not_at_all);
  tcase_add_test(t, additive_keys_nothing_keeps_are_charged_for_every_pose);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(cost_suite()); }
