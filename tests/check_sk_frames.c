/* sk_frames called directly, without HTTP: every path (a pose alone, in
 * batches of every size 1..67, in slices, to a FILE*) gives the same bytes
 * for the same frame of Fox's clips; the fast precision stays within its
 * documented error. */
#include <float.h>
#include <math.h>

#include "sk_frames.h"

#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_testasset.h"
#include "sk_testutil.h"

typedef sk_test_entry fixture;

/* Parses one pose body (may be a frame range) for the fixture's skeleton. */
static sk_pose *parse(const fixture *f, const char *text, size_t *n) {
  json_error_t je;
  json_t *j = json_loads(text, 0, &je);
  ck_assert_msg(j != NULL, "%s: %s", text, je.text);
  sk_pose *poses;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_pose_parse_anim(f->e->model->skel, f->e->model->anim, j, "", NULL, &poses, n, &err) == 0,
                "%s: %s at %s", text, err.text, err.pointer);
  json_decref(j);
  return poses;
}

/* Answers of poses[0..n) sent in batches of `k` (k = 1: singles), joined
 * as one /poses answer would join them. */
static void answer_in_batches(const fixture *f, const sk_pose *poses, size_t n, size_t k, int fmt, sk_strbuf *out) {
  sk_frames_scratch sc = {0};
  const sk_frames_opts o = {.fmt = fmt};
  for (size_t i = 0; i < n; i += k) {
    if (i > 0 && fmt == SK_FMT_JSON)
      ck_assert_int_eq(sk_strbuf_append(out, ",", 1), 0);
    ck_assert_int_eq(sk_frames_eval(f->e->model, poses + i, n - i < k ? n - i : k, &o, &sc, out), 0);
  }
  sk_frames_scratch_close(&sc);
}

static void assert_same(const sk_strbuf *a, const sk_strbuf *b, const char *what, size_t k) {
  ck_assert_msg(a->len == b->len && memcmp(a->data, b->data, a->len) == 0, "%s, batches of %zu: %zu vs %zu bytes",
                what, k, a->len, b->len);
}

/* Frame ranges of every Fox clip, plus poses mixing clip frames with bone
 * overrides (TRS on some bones, a matrix on another): the kernel gets
 * CONST, TRS64 and MATRIX bones. */
static const char *const k_bodies[] = {
    "{\"animation\": \"Survey\", \"from\": 0, \"to\": 3.4, \"fps\": 30}",
    "{\"animation\": \"Walk\", \"from\": 0, \"to\": 0.7, \"fps\": 60}",
    "{\"animation\": \"Run\", \"times\": [0, 0.1, 0.2333, 0.35, 0.5, 0.7333]}",
    "{\"animation\": \"Survey\", \"times\": [0.7333, 1.5], \"bones\": {\"b_Spine01_02\": {\"rotation\": [0.1, 0.2, 0.3]},"
    " \"b_Neck_04\": {\"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,5,0,1]}}}",
    "{\"bones\": {\"b_Spine01_02\": {\"position\": [0.5, 10.25, -3]}, \"b_Head_05\": {\"scaling\": [1.5, 1, 1]}}}",
};

static sk_pose *all_frames(const fixture *f, size_t *n) {
  sk_pose *all = NULL;
  *n = 0;
  for (size_t b = 0; b < sizeof k_bodies / sizeof *k_bodies; b++) {
    size_t m;
    sk_pose *p = parse(f, k_bodies[b], &m);
    all = realloc(all, (*n + m) * sizeof *all);
    ck_assert_ptr_nonnull(all);
    memcpy(all + *n, p, m * sizeof *p);
    *n += m;
    free(p); /* the poses moved into `all` */
  }
  return all;
}

START_TEST(a_frame_answers_the_same_bytes_alone_and_in_batches_of_1_to_67) {
  fixture f;
  sk_test_entry_open(&f, "Fox.glb");
  size_t n;
  sk_pose *poses = all_frames(&f, &n);
  ck_assert_uint_gt(n, 140);
  ck_assert(sk_frames_uses_kernel(f.e->model, poses, 2, &(sk_frames_opts){0}));
  for (int fmt = SK_FMT_JSON; fmt <= SK_FMT_MAT3X4; fmt++) {
    sk_strbuf singles = {0};
    answer_in_batches(&f, poses, n, 1, fmt, &singles);
    for (size_t k = 2; k <= 67; k++) {
      sk_strbuf got = {0};
      answer_in_batches(&f, poses, n, k, fmt, &got);
      assert_same(&singles, &got, fmt == SK_FMT_JSON ? "json" : "binary", k);
      sk_strbuf_free(&got);
    }
    sk_strbuf_free(&singles);
  }
  sk_pose_array_free(poses, n);
  sk_test_entry_close(&f);
}
END_TEST

START_TEST(slices_a_file_and_threads_give_the_whole_answers_bytes) {
  fixture f;
  sk_test_entry_open(&f, "Fox.glb");
  size_t n;
  sk_pose *poses = all_frames(&f, &n);
  for (int fmt = SK_FMT_JSON; fmt <= SK_FMT_MAT3X4; fmt++) {
    const sk_frames_opts o = {.fmt = fmt};
    sk_strbuf whole = {0};
    if (fmt == SK_FMT_JSON)
      sk_strbuf_append(&whole, "{\"results\":[", 12);
    answer_in_batches(&f, poses, n, n, fmt, &whole);
    if (fmt == SK_FMT_JSON)
      sk_strbuf_append(&whole, "]}", 2);
    /* through a strbuf sink */
    sk_strbuf sunk = {0};
    ck_assert_int_eq(sk_frames_write(f.e->model, poses, n, &o, sk_frames_sink_strbuf(&sunk)), 0);
    assert_same(&whole, &sunk, "strbuf sink", n);
    /* through a FILE* */
    FILE *t = tmpfile();
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(sk_frames_write(f.e->model, poses, n, &o, sk_frames_sink_file(t)), 0);
    ck_assert_int_eq((long)ftell(t), (long)whole.len);
    rewind(t);
    char *back = malloc(whole.len);
    ck_assert_uint_eq(fread(back, 1, whole.len, t), whole.len);
    ck_assert(memcmp(back, whole.data, whole.len) == 0);
    free(back);
    fclose(t);
    /* in small slices, as a streamed answer pulls them */
    sk_frames_run run;
    ck_assert_int_eq(sk_frames_run_init(&run, f.e->model, poses, n, &o), 0);
    ck_assert(run.kernel);
    sk_strbuf sl = {0};
    if (fmt == SK_FMT_JSON)
      sk_strbuf_append(&sl, "{\"results\":[", 12);
    while (!sk_frames_run_done(&run))
      ck_assert_int_eq(sk_frames_run_next(&run, &sl, 1000), 0);
    if (fmt == SK_FMT_JSON)
      sk_strbuf_append(&sl, "]}", 2);
    sk_frames_run_close(&run);
    assert_same(&whole, &sl, "slices", n);
    /* split across two kernel threads */
    sk_strbuf th = {0};
    sk_frames_scratch sc = {0};
    if (fmt == SK_FMT_JSON)
      sk_strbuf_append(&th, "{\"results\":[", 12);
    ck_assert_int_eq(sk_frames_eval(f.e->model, poses, n, &(sk_frames_opts){.fmt = fmt, .threads = 2}, &sc, &th), 0);
    if (fmt == SK_FMT_JSON)
      sk_strbuf_append(&th, "]}", 2);
    sk_frames_scratch_close(&sc);
    assert_same(&whole, &th, "two threads", n);
    sk_strbuf_free(&th);
    sk_strbuf_free(&sl);
    sk_strbuf_free(&sunk);
    sk_strbuf_free(&whole);
  }
  sk_pose_array_free(poses, n);
  sk_test_entry_close(&f);
}
END_TEST

/* Drains `run` into `out` through sk_frames_run_next_raw with `cap`-byte
 * buffers at `misalign` bytes past an aligned start; with `mix`, every
 * other call is sk_frames_run_next instead (a streamed answer's first
 * slice, then the raw blocks). */
static void drain_raw(sk_frames_run *run, size_t cap, size_t misalign, bool mix, sk_strbuf *out) {
  char *buf = malloc(cap + misalign + 64);
  ck_assert_ptr_nonnull(buf);
  for (int call = 0; !sk_frames_run_done(run); call++) {
    if (mix && call % 2 == 0) {
      ck_assert_int_eq(sk_frames_run_next(run, out, 1000), 0);
      continue;
    }
    size_t w = 12345;
    ck_assert_int_eq(sk_frames_run_next_raw(run, buf + misalign, cap, &w), 0);
    ck_assert_uint_le(w, cap);
    ck_assert_uint_gt(w, 0);
    ck_assert_int_eq(sk_strbuf_append(out, buf + misalign, w), 0);
  }
  size_t w = 12345;
  ck_assert_int_eq(sk_frames_run_next_raw(run, buf + misalign, cap, &w), 0);
  ck_assert_uint_eq(w, 0); /* done: nothing more */
  free(buf);
}

/* sk_frames_run_next_raw writes the bytes of the answer built whole into
 * buffers of any size from one pose up, aligned or not, alone or between
 * sk_frames_run_next calls, in both binary formats and both precisions;
 * it declines (SK_EINVAL, nothing written) JSON, the core and a buffer
 * under one pose. */
START_TEST(raw_slices_give_the_whole_answers_bytes_in_any_buffer) {
  fixture f;
  sk_test_entry_open(&f, "Fox.glb");
  size_t nr, nf;
  sk_pose *range = parse(&f, "{\"animation\": \"Walk\", \"from\": 0, \"to\": 5, \"fps\": 60, \"loop\": true}", &nr);
  sk_pose *mixed = all_frames(&f, &nf); /* CONST, TRS64 and MATRIX bones */
  const size_t mats = f.e->model->skel->count + 1;
  const struct {
    sk_pose *poses;
    size_t n;
  } sets[] = {{range, nr}, {mixed, nf}};
  const sk_frames_opts opts[] = {{.fmt = SK_FMT_F32}, {.fmt = SK_FMT_MAT3X4},
                                 {.fmt = SK_FMT_F32, .precision = SK_FRAMES_FAST}};
  for (size_t set = 0; set < 2; set++)
    for (size_t k = 0; k < sizeof opts / sizeof *opts; k++) {
      const size_t pb = mats * (opts[k].fmt == SK_FMT_F32 ? 64 : 48);
      sk_strbuf whole = {0};
      sk_frames_scratch sc = {0};
      ck_assert_int_eq(sk_frames_eval(f.e->model, sets[set].poses, sets[set].n, &opts[k], &sc, &whole), 0);
      sk_frames_scratch_close(&sc);
      const size_t caps[] = {pb, pb + 1, 7 * pb / 2, 64u << 10, 128u << 10, whole.len + 1000};
      for (size_t c = 0; c < sizeof caps / sizeof *caps; c++)
        for (int variant = 0; variant < 4; variant++) { /* aligned; 4, 2 bytes off; mixed with run_next */
          sk_frames_run run;
          ck_assert_int_eq(sk_frames_run_init(&run, f.e->model, sets[set].poses, sets[set].n, &opts[k]), 0);
          ck_assert(run.kernel);
          sk_strbuf got = {0};
          drain_raw(&run, caps[c], variant == 1 ? 4 : variant == 2 ? 2 : 0, variant == 3, &got);
          sk_frames_run_close(&run);
          ck_assert_msg(got.len == whole.len && memcmp(got.data, whole.data, whole.len) == 0,
                        "set %zu, format %d, precision %d, cap %zu, variant %d: %zu vs %zu bytes", set,
                        opts[k].fmt, opts[k].precision, caps[c], variant, got.len, whole.len);
          sk_strbuf_free(&got);
        }
      /* a buffer under one pose: declined, nothing written */
      sk_frames_run run;
      ck_assert_int_eq(sk_frames_run_init(&run, f.e->model, sets[set].poses, sets[set].n, &opts[k]), 0);
      char small[64];
      size_t w = 1;
      ck_assert_int_eq(sk_frames_run_next_raw(&run, small, sizeof small, &w), SK_EINVAL);
      ck_assert_uint_eq(w, 0);
      ck_assert_uint_eq(run.next, 0);
      sk_frames_run_close(&run);
      sk_strbuf_free(&whole);
    }
  /* JSON, and one pose (the core's): declined */
  char *buf = malloc(1u << 20);
  ck_assert_ptr_nonnull(buf);
  sk_frames_run run;
  size_t w = 1;
  ck_assert_int_eq(sk_frames_run_init(&run, f.e->model, range, nr, &(sk_frames_opts){.fmt = SK_FMT_JSON}), 0);
  ck_assert_int_eq(sk_frames_run_next_raw(&run, buf, 1u << 20, &w), SK_EINVAL);
  ck_assert_uint_eq(w, 0);
  sk_frames_run_close(&run);
  ck_assert_int_eq(sk_frames_run_init(&run, f.e->model, range, 1, &(sk_frames_opts){.fmt = SK_FMT_F32}), 0);
  ck_assert(!run.kernel);
  ck_assert_int_eq(sk_frames_run_next_raw(&run, buf, 1u << 20, &w), SK_EINVAL);
  sk_frames_run_close(&run);
  /* what a raw run holds covers the 16-pose run and grows with its buffer */
  ck_assert_uint_ge(sk_frames_run_raw_bytes(f.e->model, SK_FMT_F32, 0), sk_frames_run_bytes(f.e->model, true));
  ck_assert_uint_ge(sk_frames_run_raw_bytes(f.e->model, SK_FMT_MAT3X4, 1u << 20),
                    SK_FRAMES_RAW_POSES * mats * 16 * (sizeof(float) + sizeof(double)));
  free(buf);
  sk_pose_array_free(range, nr);
  sk_pose_array_free(mixed, nf);
  sk_test_entry_close(&f);
}
END_TEST

static double mat_error(const float *a, const float *b) {
  double scale = 1, e = 0;
  for (int i = 0; i < 16; i++)
    scale = fmax(scale, fabs(b[i]));
  for (int i = 0; i < 16; i++)
    e = fmax(e, fabs((double)a[i] - (double)b[i]) / scale);
  return e;
}

START_TEST(fast_binary_is_within_1e5_and_json_stays_exact) {
  fixture f;
  sk_test_entry_open(&f, "Fox.glb");
  size_t n;
  sk_pose *poses = all_frames(&f, &n);
  const size_t mats = f.e->model->skel->count + 1;
  sk_strbuf exact = {0}, fast = {0}, one = {0};
  sk_frames_scratch sc = {0};
  ck_assert_int_eq(sk_frames_eval(f.e->model, poses, n, &(sk_frames_opts){.fmt = SK_FMT_F32}, &sc, &exact), 0);
  const sk_frames_opts fo = {.fmt = SK_FMT_F32, .precision = SK_FRAMES_FAST};
  ck_assert(!sk_frames_uses_kernel(f.e->model, poses, 1, &fo)); /* a single pose stays on the exact core */
  ck_assert_int_eq(sk_frames_eval(f.e->model, poses, n, &fo, &sc, &fast), 0);
  ck_assert_int_eq(sk_frames_eval(f.e->model, poses + 5, 1, &fo, &sc, &one), 0);
  ck_assert_uint_eq(exact.len, fast.len);
  const float *a = (const float *)(void *)exact.data, *b = (const float *)(void *)fast.data;
  /* 8.3e-6 measured on Fox's clips (sk_kernel.h) */
  for (size_t m = 0; m < n * mats; m++)
    ck_assert_msg(mat_error(b + 16 * m, a + 16 * m) <= 1e-5, "fast batch, matrix %zu: %g", m,
                  mat_error(b + 16 * m, a + 16 * m));
  ck_assert_uint_eq(one.len, mats * 16 * sizeof(float));
  ck_assert(memcmp(one.data, exact.data + 5 * mats * 16 * sizeof(float), one.len) == 0);
  /* JSON answers ignore the fast precision: their text is the exact bits' */
  sk_strbuf j1 = {0}, j2 = {0};
  ck_assert_int_eq(sk_frames_eval(f.e->model, poses, n, &(sk_frames_opts){0}, &sc, &j1), 0);
  sk_frames_run run;
  ck_assert_int_eq(sk_frames_run_init(&run, f.e->model, poses, n, &(sk_frames_opts){.precision = SK_FRAMES_FAST}), 0);
  while (!sk_frames_run_done(&run))
    ck_assert_int_eq(sk_frames_run_next(&run, &j2, 1 << 16), 0);
  sk_frames_run_close(&run);
  assert_same(&j1, &j2, "json under fast", n);
  sk_strbuf_free(&j1);
  sk_strbuf_free(&j2);
  sk_frames_scratch_close(&sc);
  sk_strbuf_free(&exact);
  sk_strbuf_free(&fast);
  sk_strbuf_free(&one);
  sk_pose_array_free(poses, n);
  sk_test_entry_close(&f);
}
END_TEST

START_TEST(plans_and_bounds) {
  fixture f;
  sk_test_entry_open(&f, "Fox.glb");
  size_t n;
  sk_pose *poses = parse(&f, "{\"animation\": \"Walk\", \"times\": [0, 0.1, 0.2]}", &n);
  ck_assert_uint_eq(n, 3);
  const sk_frames_opts json = {0}, f32 = {.fmt = SK_FMT_F32}, m34 = {.fmt = SK_FMT_MAT3X4};
  ck_assert(!sk_frames_uses_kernel(f.e->model, poses, 1, &json)); /* a single exact pose: the core */
  ck_assert(sk_frames_uses_kernel(f.e->model, poses, 3, &json));
  const size_t mats = f.e->model->skel->count + 1;
  ck_assert_uint_eq(sk_frames_answer_bound(f.e->model, poses, 3, SK_FMT_F32), 3 * mats * 64);
  ck_assert_uint_eq(sk_frames_answer_bound(f.e->model, poses, 3, SK_FMT_MAT3X4), 3 * mats * 48);
  ck_assert_uint_ge(sk_frames_answer_bound(f.e->model, poses, 3, SK_FMT_JSON), 3 * mats * 16 * 2);
  ck_assert(sk_frames_cost_us(f.e->model, poses, 3, &json) > sk_frames_cost_us(f.e->model, poses, 3, &f32));
  ck_assert(sk_frames_cost_us(f.e->model, poses, 1, &m34) > 0);
  sk_cost_limits l = {0};
  sk_cost_limits_fill(&l);
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_frames_check_cost(f.e->model, poses, 3, &json, &l, "/poses", &err), 0);
  l.max_answer = 3 * mats * 16; /* well under three JSON answers */
  ck_assert_int_eq(sk_frames_check_cost(f.e->model, poses, 3, &json, &l, "/poses", &err), SK_ETOOBIG);
  ck_assert_int_eq(err.code, SK_ETOOBIG);
  /* absolute matrices asked: the core answers the whole batch */
  poses[1].output |= SK_OUT_ABSOLUTE;
  ck_assert(!sk_frames_uses_kernel(f.e->model, poses, 3, &json));
  sk_strbuf out = {0};
  sk_frames_scratch sc = {0};
  ck_assert_int_eq(sk_frames_eval(f.e->model, poses, 3, &json, &sc, &out), 0);
  ck_assert_ptr_nonnull(strstr(out.data, "\"absolute\":"));
  ck_assert_uint_le(out.len, sk_frames_answer_bound(f.e->model, poses, 3, SK_FMT_JSON));
  sk_frames_scratch_close(&sc);
  sk_strbuf_free(&out);
  sk_pose_array_free(poses, n);
  sk_test_entry_close(&f);
}
END_TEST

START_TEST(the_default_sampler_is_the_exact_one) {
  fixture f;
  sk_test_entry_open(&f, "Fox.glb");
  ck_assert_ptr_eq((void *)sk_frames_sample_default, (void *)sk_pose_parse_anim);
  json_t *j = json_loads("{\"animation\": \"Walk\", \"times\": [0, 0.5]}", 0, NULL);
  sk_pose *poses;
  size_t n;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_frames_sample_default(f.e->model->skel, f.e->model->anim, j, "", NULL, &poses, &n, &err), 0);
  ck_assert_uint_eq(n, 2);
  json_decref(j);
  sk_pose_array_free(poses, n);
  sk_test_entry_close(&f);
}
END_TEST

static int refuse(void *ctx, const void *data, size_t len) {
  (void)ctx, (void)data, (void)len;
  return -1;
}

START_TEST(a_sink_that_refuses_stops_the_write) {
  fixture f;
  sk_test_entry_open(&f, "Fox.glb");
  size_t n;
  sk_pose *poses = parse(&f, "{\"animation\": \"Run\", \"from\": 0, \"to\": 0.5, \"fps\": 30}", &n);
  ck_assert_int_eq(sk_frames_write(f.e->model, poses, n, &(sk_frames_opts){0}, (sk_frames_sink){refuse, NULL}), SK_EIO);
  sk_pose_array_free(poses, n);
  sk_test_entry_close(&f);
}
END_TEST

/* Finite input whose products overflow float32 (b_Spine01_02 scaled 3e38
 * under b_Root_00 scaled 3e38): every engine and format refuses it with
 * SK_ENOTFINITE at the first overflowing bone parent-first, the pose
 * counted in the answer; nothing answers inf or NaN. */
/* sk_frames_nonfinite against a float-by-float isfinite, for 0..9
 * matrices with one Inf, -Inf or NaN (quiet and signalling payloads) at
 * every position, and the largest finite values (exponent 254) nowhere
 * flagged. */
START_TEST(nonfinite_finds_every_non_finite_float) {
  float m[16 * 9] = {0};
  const uint32_t bad[4] = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u};
  for (size_t mats = 0; mats <= 9; mats++) {
    for (size_t i = 0; i < 16 * mats; i++)
      m[i] = i % 3 == 0 ? FLT_MAX : i % 3 == 1 ? -FLT_MAX : (float)i * 0.5f - 3;
    ck_assert(!sk_frames_nonfinite(m, mats));
    for (size_t i = 0; i < 16 * mats; i++)
      for (int k = 0; k < 4; k++) {
        const float keep = m[i];
        memcpy(&m[i], &bad[k], sizeof m[i]);
        ck_assert(!isfinite(m[i]));
        ck_assert_msg(sk_frames_nonfinite(m, mats), "mats %zu at %zu pattern %d", mats, i, k);
        ck_assert(!sk_frames_nonfinite(m, i / 16)); /* matrices before it only */
        m[i] = keep;
      }
  }
}
END_TEST

START_TEST(an_overflow_is_refused_naming_the_bone_on_every_path) {
  fixture f;
  sk_test_entry_open(&f, "Fox.glb");
  size_t n;
  sk_pose *poses = parse(&f, "{\"animation\": \"Walk\", \"times\": [0, 0.1, 0.2], \"bones\": {"
                             "\"b_Root_00\": {\"scaling\": [3e38, 3e38, 3e38]},"
                             "\"b_Hip_01\": {\"scaling\": [3e38, 3e38, 3e38]}}}", &n);
  size_t one;
  sk_pose *fine = parse(&f, "{\"animation\": \"Walk\", \"time\": 0.3}", &one);
  /* poses: fine, then the three overflowing frames */
  sk_pose all[4] = {fine[0], poses[0], poses[1], poses[2]};
  const sk_frames_opts opts[] = {{.fmt = SK_FMT_JSON}, {.fmt = SK_FMT_F32}, {.fmt = SK_FMT_MAT3X4},
                                 {.fmt = SK_FMT_F32, .precision = SK_FRAMES_FAST}};
  for (size_t k = 0; k < sizeof opts / sizeof *opts; k++) {
    for (size_t cnt = 2; cnt <= 4; cnt += 2) { /* 2: one pose over; 4: the kernel's batch */
      sk_frames_scratch sc = {0};
      sk_strbuf out = {0};
      ck_assert_int_eq(sk_frames_eval(f.e->model, all, cnt, &opts[k], &sc, &out), SK_ENOTFINITE);
      ck_assert_uint_eq(sc.bad_pose, 1);
      ck_assert_str_eq(f.e->model->skel->bones[sc.bad_bone].name, "b_Hip_01");
      sk_error err;
      sk_error_clear(&err);
      ck_assert_int_eq(sk_frames_nonfinite_error(f.e->model, &sc, true, &err), SK_ENOTFINITE);
      ck_assert_str_eq(err.pointer, "/poses/1/bones/b_Hip_01");
      sk_strbuf_free(&out);
      sk_frames_scratch_close(&sc);
    }
    sk_strbuf sunk = {0};
    ck_assert_int_eq(sk_frames_write(f.e->model, all, 4, &opts[k], sk_frames_sink_strbuf(&sunk)), SK_ENOTFINITE);
    sk_strbuf_free(&sunk);
    /* raw slices (a streamed binary answer): in the first slice, or after
     * a slice of the fine pose alone */
    for (size_t cap = 1u << 20; opts[k].fmt != SK_FMT_JSON && cap > 0; cap = cap == 1u << 20 ? 48 * 26 * 16 : 0) {
      sk_frames_run run;
      ck_assert_int_eq(sk_frames_run_init(&run, f.e->model, all, 4, &opts[k]), 0);
      char *buf = malloc(cap);
      size_t w = 0;
      int rc = sk_frames_run_next_raw(&run, buf, cap, &w);
      if (rc == 0) { /* one pose's buffer: the fine pose first */
        ck_assert_uint_lt(cap, 2 * 64 * 26);
        rc = sk_frames_run_next_raw(&run, buf, cap, &w);
      }
      ck_assert_int_eq(rc, SK_ENOTFINITE);
      ck_assert_uint_eq(run.sc.bad_pose, 1);
      ck_assert_str_eq(f.e->model->skel->bones[run.sc.bad_bone].name, "b_Hip_01");
      free(buf);
      sk_frames_run_close(&run);
    }
  }
  /* the pose alone still answers */
  sk_frames_scratch sc = {0};
  sk_strbuf out = {0};
  ck_assert_int_eq(sk_frames_eval(f.e->model, fine, 1, &opts[0], &sc, &out), 0);
  ck_assert_ptr_null(strstr(out.data, "null"));
  sk_strbuf_free(&out);
  sk_frames_scratch_close(&sc);
  sk_pose_array_free(poses, n);
  sk_pose_array_free(fine, one);
  sk_test_entry_close(&f);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sk_frames");
  TCase *t = tcase_create("identity");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, a_frame_answers_the_same_bytes_alone_and_in_batches_of_1_to_67);
  tcase_add_test(t, slices_a_file_and_threads_give_the_whole_answers_bytes);
  tcase_add_test(t, raw_slices_give_the_whole_answers_bytes_in_any_buffer);
  suite_add_tcase(s, t);
  t = tcase_create("precision");
  tcase_add_test(t, fast_binary_is_within_1e5_and_json_stays_exact);
  suite_add_tcase(s, t);
  t = tcase_create("plan");
  tcase_add_test(t, plans_and_bounds);
  tcase_add_test(t, a_sink_that_refuses_stops_the_write);
  tcase_add_test(t, the_default_sampler_is_the_exact_one);
  suite_add_tcase(s, t);
  t = tcase_create("errors");
  tcase_add_test(t, an_overflow_is_refused_naming_the_bone_on_every_path);
  tcase_add_test(t, nonfinite_finds_every_non_finite_float);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(suite()); }
