/* sk_clips and sk_shot: the exact engine gives sk_pose_evaluate's bytes
 * for the poses sk_pose_parse_anim makes, and so does the kernel engine
 * (the exact kernel's TRS64 rows; CONST for bones no channel drives);
 * sk_clips_sample_job fills a job the kernel
 * validates; sk_shot_write's file reads back as proto/frames.md says. */
#include "sk_clips.h"
#include "sk_eval.h"
#include "sk_mat.h"
#include "sk_shot.h"
#include "sk_gltf.h"
#include "sk_routes.h"
#include "sk_testutil.h"

static void load(const char *asset, sk_skeleton **s, sk_anim **an) {
  size_t len;
  unsigned char *d = sk_test_read_asset(asset, &len);
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_gltf_import(d, len, NULL, 0, s, an, &err) == 0, "%s: %s", asset, err.text);
  free(d);
}

/* Finals of `n` frames the way a pose request computes them. */
static float *reference(const sk_skeleton *s, const sk_anim *an, const char *pose_json, size_t *n) {
  json_error_t je;
  json_t *j = json_loads(pose_json, 0, &je);
  ck_assert_ptr_nonnull(j);
  sk_pose *poses;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_pose_parse_anim(s, an, j, "", NULL, &poses, n, &err) == 0, "%s", err.text);
  json_decref(j);
  sk_pose_buffers buf;
  ck_assert_int_eq(sk_pose_buffers_init(&buf, s->count), 0);
  const size_t per = 16 * (s->count + 1);
  float *out = malloc(*n * per * sizeof *out);
  for (size_t i = 0; i < *n; i++) {
    sk_pose_evaluate(s, &poses[i], &buf);
    memcpy(out + i * per, buf.final, per * sizeof *out);
  }
  sk_pose_buffers_close(&buf);
  sk_pose_array_free(poses, *n);
  return out;
}

START_TEST(test_engines_match_pose_requests) {
  static const char *const assets[] = {"Fox.glb", "RobotExpressive.glb", "mannequiny-0.3.0.glb"};
  sk_skeleton *s;
  sk_anim *an;
  load(assets[_i], &s, &an);
  size_t n;
  float *want = reference(s, an,
                          "{\"layers\": [{\"animation\": 0, \"time\": 0.1, \"weight\": 2, \"loop\": true},"
                          " {\"animation\": 0, \"time\": 0.7, \"weight\": 1}], \"from\": -0.2, \"to\": 2.5, \"fps\": 29}",
                          &n);
  sk_anim_layer l[2] = {{.clip = 0, .time = 0.1, .weight = 2, .loop = true}, {.clip = 0, .time = 0.7, .weight = 1}};
  double *times = malloc(n * sizeof *times);
  for (size_t i = 0; i < n; i++)
    times[i] = -0.2 + (double)i / 29;
  sk_sampler *sp;
  sk_rig *rig;
  ck_assert_int_eq(sk_sampler_create(an, &sp), 0);
  ck_assert_int_eq(sk_rig_create(s, &rig), 0);
  const size_t per = 16 * (s->count + 1), chunk = 40;
  float *got = aligned_alloc(64, (n * per * sizeof(float) + 63) / 64 * 64);
  for (int engine = SK_CLIPS_EXACT; engine <= SK_CLIPS_KERNEL; engine++) {
    sk_sample_ctx *c;
    ck_assert_int_eq(sk_sample_ctx_create(sp, l, 2, &c), 0);
    sk_clips_runner r;
    ck_assert_int_eq(sk_clips_runner_init(&r, s, rig, engine, chunk), 0);
    for (size_t f0 = 0; f0 < n; f0 += chunk) {
      size_t k = n - f0 < chunk ? n - f0 : chunk;
      /* Each chunk's output at a 64-byte aligned place. */
      float *dst = aligned_alloc(64, (k * per * sizeof(float) + 63) / 64 * 64);
      ck_assert_int_eq(sk_clips_finals(&r, c, times + f0, k, NULL, dst), 0);
      memcpy(got + f0 * per, dst, k * per * sizeof *dst);
      free(dst);
    }
    ck_assert_int_eq(sk_clips_finals(&r, c, times, chunk + 1, NULL, got), SK_EINVAL);
    ck_assert_msg(memcmp(got, want, n * per * sizeof *got) == 0, "%s engine %d: not byte-identical", assets[_i],
                  engine);
    sk_clips_runner_close(&r);
    sk_sample_ctx_destroy(c);
  }
  free(got);
  free(want);
  free(times);
  sk_rig_destroy(rig);
  sk_sampler_destroy(sp);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST

/* Finals of times[0..n) through a runner that has seen nothing yet. */
static void fresh_finals(const sk_skeleton *s, const sk_rig *rig, sk_sample_ctx *c, const double *times, size_t n,
                         size_t chunk, float *out) {
  sk_clips_runner r;
  ck_assert_int_eq(sk_clips_runner_init(&r, s, rig, SK_CLIPS_KERNEL, chunk), 0);
  ck_assert_int_eq(sk_clips_finals(&r, c, times, n, NULL, out), 0);
  sk_clips_runner_close(&r);
}

/* A runner keeps the rest rows between chunks (sk_sample_out.rest_kept)
 * only while they are what the next context would write: one runner fed
 * contexts of clips with other undriven parts, a blend (its constant rows)
 * again and again, and short chunks before long ones gives, call after
 * call, a fresh runner's bytes. */
START_TEST(test_runner_rest_rows_kept) {
  sk_skeleton *s;
  sk_anim *an;
  load("RobotExpressive.glb", &s, &an);
  ck_assert_uint_ge(an->clip_count, 3);
  sk_sampler *sp;
  sk_rig *rig;
  ck_assert_int_eq(sk_sampler_create(an, &sp), 0);
  ck_assert_int_eq(sk_rig_create(s, &rig), 0);
  sk_sample_ctx *ctx[4];
  sk_anim_layer one[3] = {{.clip = 0, .weight = 1, .loop = true},
                          {.clip = 1, .weight = 1, .loop = true},
                          {.clip = 2, .weight = 1, .loop = true}};
  sk_anim_layer two[2] = {{.clip = 1, .weight = 1, .loop = true}, {.clip = 2, .time = 0.3, .weight = 3}};
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(sk_sample_ctx_create(sp, &one[i], 1, &ctx[i]), 0);
  ck_assert_int_eq(sk_sample_ctx_create(sp, two, 2, &ctx[3]), 0);
  /* The clips leave different parts to the rest (or the test proves nothing). */
  sk_sample_rest *a = malloc(s->count * SK_ANIM_TRS * sizeof *a), *b = malloc(s->count * SK_ANIM_TRS * sizeof *b);
  size_t na = sk_sample_ctx_rest(ctx[0], a, s->count * SK_ANIM_TRS);
  size_t nb = sk_sample_ctx_rest(ctx[1], b, s->count * SK_ANIM_TRS);
  ck_assert_uint_gt(na, 0);
  ck_assert(na != nb || memcmp(a, b, na * sizeof *a) != 0);
  /* the blend has constant rows, other than clip 0's (it follows clip 0
   * in the sequence below) */
  sk_sample_rest *c3 = malloc(s->count * SK_ANIM_TRS * sizeof *c3);
  size_t n3 = sk_sample_ctx_rest(ctx[3], c3, s->count * SK_ANIM_TRS);
  ck_assert_uint_gt(n3, 0);
  ck_assert(n3 != na || memcmp(a, c3, n3 * sizeof *a) != 0);
  free(c3);
  free(a);
  free(b);
  const size_t chunk = 80, per = 16 * (s->count + 1);
  double times[80];
  for (size_t i = 0; i < chunk; i++)
    times[i] = 0.05 + (double)i / 37;
  static const struct {
    int ctx;
    size_t n;
  } seq[] = {{0, 20}, {0, 80}, {0, 80}, {1, 33}, {0, 80}, {3, 80}, {3, 80}, {3, 33}, {0, 47},
             {0, 80}, {2, 80}, {2, 16}, {1, 80}, {1, 80}, {3, 16}, {3, 80}};
  float *got = aligned_alloc(64, chunk * per * sizeof(float)), *want = aligned_alloc(64, chunk * per * sizeof(float));
  sk_clips_runner r;
  ck_assert_int_eq(sk_clips_runner_init(&r, s, rig, SK_CLIPS_KERNEL, chunk), 0);
  for (size_t k = 0; k < sizeof seq / sizeof seq[0]; k++) {
    sk_sample_ctx *c = ctx[seq[k].ctx];
    memset(got, 0, chunk * per * sizeof(float));
    ck_assert_int_eq(sk_clips_finals(&r, c, times, seq[k].n, NULL, got), 0);
    fresh_finals(s, rig, c, times, seq[k].n, chunk, want);
    ck_assert_msg(memcmp(got, want, seq[k].n * per * sizeof(float)) == 0, "call %zu (context %d, %zu frames)", k,
                  seq[k].ctx, seq[k].n);
  }
  sk_clips_runner_close(&r);
  free(got);
  free(want);
  for (int i = 0; i < 4; i++)
    sk_sample_ctx_destroy(ctx[i]);
  sk_rig_destroy(rig);
  sk_sampler_destroy(sp);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST

/* The kernel engine composes a bone once when its clips leave all ten of
 * its components at rest (Fox's root joints and two leaves): exactly those
 * bones are CONST, with sk_mat_compose's local of the rest values; the
 * bytes are held to the core's by test_engines_match_pose_requests. */
START_TEST(test_const_bones) {
  sk_skeleton *s;
  sk_anim *an;
  load("Fox.glb", &s, &an);
  sk_sampler *sp;
  sk_rig *rig;
  ck_assert_int_eq(sk_sampler_create(an, &sp), 0);
  ck_assert_int_eq(sk_rig_create(s, &rig), 0);
  size_t walk;
  ck_assert_int_eq(sk_anim_find_clip(an, "Walk", &walk), 0);
  sk_anim_layer l = {.clip = walk, .weight = 1, .loop = true};
  sk_sample_ctx *c;
  ck_assert_int_eq(sk_sample_ctx_create(sp, &l, 1, &c), 0);
  const size_t nb = s->count;
  sk_sample_rest *rows = malloc(nb * SK_ANIM_TRS * sizeof *rows);
  const size_t nr = sk_sample_ctx_rest(c, rows, nb * SK_ANIM_TRS);
  size_t *at_rest = calloc(nb, sizeof *at_rest), want = 0;
  for (size_t i = 0; i < nr; i++)
    at_rest[rows[i].bone]++;
  sk_clips_runner r;
  ck_assert_int_eq(sk_clips_runner_init(&r, s, rig, SK_CLIPS_KERNEL, 16), 0);
  double times[16] = {0};
  float *fin = aligned_alloc(64, 16 * 16 * (nb + 1) * sizeof(float));
  ck_assert_int_eq(sk_clips_finals(&r, c, times, 16, NULL, fin), 0);
  for (size_t b = 0; b < nb; b++) {
    const bool fixed = at_rest[b] == SK_ANIM_TRS;
    want += fixed;
    ck_assert_msg((r.plan.mode[b] == SK_KERNEL_CONST) == fixed, "bone %zu: mode %u, %zu components at rest", b,
                  (unsigned)r.plan.mode[b], at_rest[b]);
    if (!fixed)
      continue;
    const double *v = an->rest + b * SK_ANIM_TRS;
    float local[16];
    sk_mat_compose(v + 7, v + 3, v, local);
    ck_assert_mem_eq(r.plan.consts + r.plan.offset[b], local, sizeof local);
  }
  ck_assert_uint_eq(want, 4);
  /* A memo that holds no rows makes no bone CONST. */
  sk_sample_rest_memo none = {.count = SIZE_MAX};
  ck_assert_uint_eq(sk_clips_plan_consts(&r.plan, &none, nb, r.mode, r.offset), 0);
  for (size_t b = 0; b < nb; b++)
    ck_assert_uint_eq(r.plan.mode[b], r.mode[b]);
  free(fin);
  free(at_rest);
  free(rows);
  sk_clips_runner_close(&r);
  sk_sample_ctx_destroy(c);
  sk_rig_destroy(rig);
  sk_sampler_destroy(sp);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(test_runner_errors) {
  sk_skeleton *s;
  sk_anim *an;
  load("Fox.glb", &s, &an);
  sk_clips_runner r;
  ck_assert_int_eq(sk_clips_runner_init(&r, NULL, NULL, SK_CLIPS_EXACT, 8), SK_EINVAL);
  sk_clips_runner_close(&r);
  ck_assert_int_eq(sk_clips_runner_init(&r, s, NULL, SK_CLIPS_EXACT, 0), SK_EINVAL);
  sk_clips_runner_close(&r);
  ck_assert_int_eq(sk_clips_runner_init(&r, s, NULL, SK_CLIPS_KERNEL, 8), SK_EINVAL);
  sk_clips_runner_close(&r);
  ck_assert_int_eq(sk_clips_runner_init(&r, s, NULL, 7, 8), SK_EINVAL);
  sk_clips_runner_close(&r);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Two characters of 3x4 matrices with the header: every value is where
 * proto/frames.md puts it. */
START_TEST(test_frames_file_layout) {
  sk_skeleton *s;
  sk_anim *an;
  load("Fox.glb", &s, &an);
  sk_sampler *sp;
  ck_assert_int_eq(sk_sampler_create(an, &sp), 0);
  sk_shot sh;
  memset(&sh, 0, sizeof sh);
  sh.skel = s;
  sh.sampler = sp;
  sh.layers[0] = (sk_anim_layer){.clip = 2, .weight = 1, .loop = true};
  sh.layer_count = 1;
  sh.from = 0.5;
  sh.fps = 24;
  sh.frames = 300; /* more than one chunk */
  sh.characters = 2;
  sh.stagger = 0.25;
  sh.floats_per_matrix = 12;
  sh.header = true;
  sh.engine = SK_CLIPS_EXACT;
  FILE *f = tmpfile();
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(sk_shot_write(&sh, f), 0);
  const size_t mats = s->count + 1, row = mats * 12;
  ck_assert_int_eq(ftell(f), (long)(32 + 300 * 2 * row * 4));
  rewind(f);
  unsigned char h[32];
  ck_assert_uint_eq(fread(h, 1, 32, f), 32);
  ck_assert(memcmp(h, "SKFRAME1", 8) == 0);
  ck_assert_uint_eq(le32(h + 8), 12);
  ck_assert_uint_eq(le32(h + 12), mats);
  ck_assert_uint_eq(le32(h + 16), 2);
  ck_assert_uint_eq(le32(h + 20), 300);
  ck_assert_uint_eq(le32(h + 28), 0);
  float *body = malloc(300 * 2 * row * sizeof *body);
  ck_assert_uint_eq(fread(body, sizeof *body, 300 * 2 * row, f), 300 * 2 * row);
  fclose(f);
  float *final = malloc(16 * mats * sizeof *final), m12[12];
  sk_pose_buffers buf;
  ck_assert_int_eq(sk_pose_buffers_init(&buf, s->count), 0);
  sk_override *o = malloc(s->count * sizeof *o);
  double *trs = malloc(s->count * SK_ANIM_TRS * sizeof *trs);
  for (size_t fr = 0; fr < 300; fr += 37)
    for (size_t c = 0; c < 2; c++) {
      double t = 0.5 + (double)fr / 24;
      sk_anim_sample(an, 2, c ? 0.25 + t : t, true, trs);
      sk_anim_to_overrides(an, trs, o);
      sk_skeleton_pose_locals(s, o, s->count, buf.locals);
      sk_skeleton_evaluate(s, buf.locals, NULL, buf.scratch, final, NULL, NULL);
      for (size_t m = 0; m < mats; m++) {
        sk_routes_mat3x4(final + 16 * m, m12);
        ck_assert(memcmp(body + (fr * 2 + c) * row + 12 * m, m12, sizeof m12) == 0);
      }
    }
  sk_pose_buffers_close(&buf);
  free(o);
  free(trs);
  free(final);
  free(body);
  /* Bad shots are refused before anything is written. */
  sh.characters = 0;
  ck_assert_int_eq(sk_shot_write(&sh, NULL), SK_EINVAL);
  sh.characters = 1;
  sh.floats_per_matrix = 9;
  ck_assert_int_eq(sk_shot_write(&sh, NULL), SK_EINVAL);
  sh.floats_per_matrix = 16;
  sh.fps = 0;
  ck_assert_int_eq(sk_shot_write(&sh, NULL), SK_EINVAL);
  sk_sampler_destroy(sp);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST

static Suite *clips_suite(void) {
  Suite *su = suite_create("sk_clips");
  TCase *tc = tcase_create("golden");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_engines_match_pose_requests, 0, 3);
  tcase_add_test(tc, test_frames_file_layout);
  tcase_add_test(tc, test_runner_rest_rows_kept);
  tcase_add_test(tc, test_const_bones);
  suite_add_tcase(su, tc);
  TCase *te = tcase_create("errors");
  tcase_add_test(te, test_runner_errors);
  suite_add_tcase(su, te);
  return su;
}

int main(void) {
  SRunner *sr = srunner_create(clips_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
