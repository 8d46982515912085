/* sk_anim: clips sampled at the times in tests/gltf/expected/ (before the
 * first key, the start, on a key, between keys, the end, past the end) give
 * Babylon.js's matrices (goToFrame + Skeleton.prepare(true) after its glTF
 * loader), every float bit for bit, the sign of zero included;
 * plus clip look-up, looping, layers and the JSON listing. */
#include "sk_anim.h"
#include "sk_eval.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_mat.h"
#include "sk_testutil.h"

static const char *const k_expected[] = {"Fox",
                                         "CesiumMan",
                                         "RiggedSimple",
                                         "RiggedFigure",
                                         "SimpleSkin",
                                         "SimpleSkin-multi-target",
                                         "RobotExpressive",
                                         "mannequiny-0.3.0",
                                         "no_ibm",
                                         "nonjoint_between",
                                         "above_root",
                                         "mesh_transform",
                                         "cubic_step",
                                         "scales",
                                         "accessors",
                                         NULL};

/* Finals of clip `clip` at `time` the way a pose request computes them. */
static void pose_at(const sk_skeleton *s, const sk_anim *an, size_t clip, double time, bool loop, float *final) {
  double *trs = malloc(an->bone_count * SK_ANIM_TRS * sizeof *trs);
  sk_override *o = malloc(an->bone_count * sizeof *o);
  float *locals = malloc(16 * s->count * sizeof *locals), *scratch = malloc(16 * s->count * sizeof *scratch);
  sk_anim_sample(an, clip, time, loop, trs);
  sk_anim_to_overrides(an, trs, o);
  sk_skeleton_pose_locals(s, o, an->bone_count, locals);
  sk_skeleton_evaluate(s, locals, NULL, scratch, final, NULL, NULL);
  free(trs);
  free(o);
  free(locals);
  free(scratch);
}

START_TEST(test_samples_match_babylon) {
  const char *name = k_expected[_i];
  char rel[512], path[1024];
  snprintf(rel, sizeof rel, "gltf/expected/%s.json", name);
  json_error_t je;
  json_t *exp = json_load_file(sk_test_path(rel, path, sizeof path), 0, &je);
  ck_assert_msg(exp != NULL, "%s: %s", path, je.text);
  size_t len;
  unsigned char *data = sk_test_read_asset(json_string_value(json_object_get(exp, "asset")), &len);
  sk_gltf *g;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_gltf_parse(data, len, &g, &err) == 0, "%s: %s at %s", name, err.text, err.pointer);
  const json_t *skins = json_object_get(exp, "skins");
  size_t samples = 0, bad = 0;
  for (size_t k = 0; k < json_array_size(skins); k++) {
    const json_t *sk = json_array_get(skins, k);
    size_t skin = (size_t)json_integer_value(json_object_get(sk, "skin"));
    sk_skeleton *s;
    sk_anim *an;
    ck_assert_msg(sk_gltf_load_skin(g, skin, 0, &s, &an, &err) == 0, "%s: %s at %s", name, err.text, err.pointer);
    float *final = malloc(16 * (s->count + 1) * sizeof *final);
    const json_t *anims = json_object_get(sk, "animations");
    for (size_t a = 0; a < json_array_size(anims); a++) {
      const json_t *aj = json_array_get(anims, a);
      size_t clip = (size_t)json_integer_value(json_object_get(aj, "animation"));
      const json_t *ss = json_object_get(aj, "samples");
      for (size_t i = 0; i < json_array_size(ss); i++) {
        const json_t *smp = json_array_get(ss, i);
        double t = json_number_value(json_object_get(smp, "time"));
        pose_at(s, an, clip, t, false, final);
        const json_t *want = json_object_get(smp, "final");
        size_t n = 16 * (s->count + 1), at = sk_test_final_mismatch(final, want, n);
        if (at < n && ++bad <= 8)
          fprintf(stderr, "%s skin %zu animation %zu (%s) at t=%.17g: float %zu is %.9g, Babylon %.9g\n", name, skin,
                  clip, an->clips[clip].name, t, at, (double)final[at], json_number_value(json_array_get(want, at)));
        samples++;
      }
    }
    /* Weighted layers, blended by Babylon's late animation bindings. */
    const json_t *layers = json_object_get(sk, "layers");
    for (size_t i = 0; i < json_array_size(layers); i++) {
      const json_t *lj = json_object_get(json_array_get(layers, i), "layers");
      sk_anim_layer l[8];
      size_t nl = json_array_size(lj);
      ck_assert_uint_le(nl, 8);
      for (size_t m = 0; m < nl; m++) {
        const json_t *one = json_array_get(lj, m);
        ck_assert_int_eq(sk_anim_find_clip(an, json_string_value(json_object_get(one, "animation")), &l[m].clip), 0);
        l[m].time = json_number_value(json_object_get(one, "time"));
        l[m].weight = json_number_value(json_object_get(one, "weight"));
        l[m].loop = false;
      }
      size_t nt = an->bone_count * SK_ANIM_TRS;
      double *trs = malloc(nt * sizeof *trs), *tmp = malloc(nt * sizeof *tmp);
      sk_override *o = malloc(an->bone_count * sizeof *o);
      float *locals = malloc(16 * s->count * sizeof *locals), *scratch = malloc(16 * s->count * sizeof *scratch);
      ck_assert_int_eq(sk_anim_sample_layers(an, l, nl, trs, tmp), 0);
      sk_anim_to_overrides(an, trs, o);
      sk_skeleton_pose_locals(s, o, an->bone_count, locals);
      sk_skeleton_evaluate(s, locals, NULL, scratch, final, NULL, NULL);
      const json_t *want = json_object_get(json_array_get(layers, i), "final");
      size_t n = 16 * (s->count + 1), at = sk_test_final_mismatch(final, want, n);
      if (at < n && ++bad <= 8)
        fprintf(stderr, "%s layers %zu: float %zu is %.9g, Babylon %.9g\n", name, i, at, (double)final[at],
                json_number_value(json_array_get(want, at)));
      samples++;
      free(trs);
      free(tmp);
      free(o);
      free(locals);
      free(scratch);
    }
    free(final);
    sk_skeleton_destroy(s);
    sk_anim_destroy(an);
  }
  printf("gltf anim %-24s %4zu samples, %zu not bit for bit\n", name, samples, bad);
  ck_assert_msg(bad == 0, "%s: %zu of %zu samples differ from Babylon's bits", name, bad, samples);
  sk_gltf_destroy(g);
  free(data);
  json_decref(exp);
}
END_TEST

/* ---- clips, loop, layers ------------------------------------------------------ */

static void load(const char *rel, sk_skeleton **s, sk_anim **an) {
  size_t len;
  unsigned char *d = sk_test_read_file(rel, &len);
  ck_assert_ptr_nonnull(d);
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_gltf_import(d, len, NULL, 0, s, an, &err) == 0, "%s: %s at %s", rel, err.text, err.pointer);
  free(d);
}

START_TEST(test_find_clip) {
  sk_skeleton *s;
  sk_anim *an;
  load("data/Fox.glb", &s, &an);
  size_t c = 99;
  ck_assert_int_eq(sk_anim_find_clip(an, "Walk", &c), 0);
  ck_assert_uint_eq(c, 1);
  ck_assert_int_eq(sk_anim_find_clip(an, "2", &c), 0);
  ck_assert_uint_eq(c, 2);
  ck_assert_int_eq(sk_anim_find_clip(an, "3", &c), SK_ENOTFOUND);
  ck_assert_int_eq(sk_anim_find_clip(an, "02", &c), SK_ENOTFOUND);
  ck_assert_int_eq(sk_anim_find_clip(an, "animation1", &c), SK_ENOTFOUND); /* named clips keep their names */
  ck_assert_int_eq(sk_anim_find_clip(an, "walk", &c), SK_ENOTFOUND);
  ck_assert_uint_eq(an->clips[0].channel_count, 21);
  ck_assert_uint_gt(sk_anim_memory(an), 3 * 21 * 2 * sizeof(double));
  ck_assert_uint_eq(sk_anim_memory(NULL), 0);
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
  load("data/CesiumMan.glb", &s, &an);
  ck_assert_int_eq(sk_anim_find_clip(an, "animation0", &c), 0); /* Babylon's name for an unnamed clip */
  ck_assert_uint_eq(c, 0);
  ck_assert_int_eq(sk_anim_find_clip(an, "0", &c), 0);
  ck_assert(!an->clips[0].named);
  ck_assert_uint_eq(an->clips[0].channel_count, 57);
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
}
END_TEST

START_TEST(test_loop_wraps_and_clamp_holds) {
  sk_skeleton *s;
  sk_anim *an;
  load("data/Fox.glb", &s, &an);
  size_t n = an->bone_count * SK_ANIM_TRS;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  double d = sk_anim_clip_duration(an, 1);
  ck_assert_double_eq_tol(d, 0.7083333, 1e-6);
  sk_anim_sample(an, 1, 0.3, false, a);
  sk_anim_sample(an, 1, 0.3 + 3 * d, true, b);
  for (size_t i = 0; i < n; i++)
    ck_assert_double_eq_tol(a[i], b[i], 1e-9);
  sk_anim_sample(an, 1, 0.3 - d, true, b);
  for (size_t i = 0; i < n; i++)
    ck_assert_double_eq_tol(a[i], b[i], 1e-9);
  /* Without loop, time is clamped: past the end holds the last pose. */
  sk_anim_sample(an, 1, d, false, a);
  sk_anim_sample(an, 1, d + 10, false, b);
  for (size_t i = 0; i < n; i++)
    ck_assert(a[i] == b[i]);
  sk_anim_sample(an, 1, 0, false, a);
  sk_anim_sample(an, 1, -5, false, b);
  for (size_t i = 0; i < n; i++)
    ck_assert(a[i] == b[i]);
  free(a);
  free(b);
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
}
END_TEST

START_TEST(test_layers) {
  sk_skeleton *s;
  sk_anim *an;
  load("data/Fox.glb", &s, &an);
  size_t n = an->bone_count * SK_ANIM_TRS;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *scratch = malloc(n * sizeof *scratch);
  /* One layer of any weight is that clip. */
  sk_anim_layer one = {.clip = 2, .time = 0.4, .weight = 0.3};
  ck_assert_int_eq(sk_anim_sample_layers(an, &one, 1, a, scratch), 0);
  sk_anim_sample(an, 2, 0.4, false, b);
  for (size_t i = 0; i < n; i++)
    ck_assert_double_eq_tol(a[i], b[i], 1e-12);
  /* Weights under 1 together are normalised: (0.35, 0.15) == (0.7, 0.3);
   * a zero-weight layer is ignored. Over 1 each is clamped, as Babylon's
   * Animatable.weight setter does: (7, 3) == (1, 1) == (0.5, 0.5). */
  sk_anim_layer two[3] = {{.clip = 1, .time = 0.5, .weight = 0.7},
                          {.clip = 2, .time = 0.2, .weight = 0.3},
                          {.clip = 0, .time = 1, .weight = 0}};
  ck_assert_int_eq(sk_anim_sample_layers(an, two, 3, a, scratch), 0);
  sk_anim_layer half[2] = {two[0], two[1]};
  half[0].weight = 0.35;
  half[1].weight = 0.15;
  ck_assert_int_eq(sk_anim_sample_layers(an, half, 2, b, scratch), 0);
  for (size_t i = 0; i < n; i++)
    ck_assert_double_eq_tol(a[i], b[i], 1e-12);
  double *c = malloc(n * sizeof *c);
  half[0].weight = 7;
  half[1].weight = 3;
  ck_assert_int_eq(sk_anim_sample_layers(an, half, 2, b, scratch), 0);
  half[0].weight = half[1].weight = 0.5;
  ck_assert_int_eq(sk_anim_sample_layers(an, half, 2, c, scratch), 0);
  for (size_t i = 0; i < n; i++)
    ck_assert_double_eq_tol(b[i], c[i], 1e-12);
  free(c);
  /* Positions blend linearly; rotations stay unit quaternions. */
  double *w = malloc(n * sizeof *w), *r = malloc(n * sizeof *r);
  sk_anim_sample(an, 1, 0.5, false, w);
  sk_anim_sample(an, 2, 0.2, false, r);
  for (size_t bone = 0; bone < an->bone_count; bone++) {
    const double *t = a + bone * SK_ANIM_TRS;
    for (int j = 0; j < 3; j++)
      ck_assert_double_eq_tol(t[j], 0.7 * w[bone * SK_ANIM_TRS + j] + 0.3 * r[bone * SK_ANIM_TRS + j], 1e-9);
    ck_assert_double_eq_tol(t[3] * t[3] + t[4] * t[4] + t[5] * t[5] + t[6] * t[6], 1, 1e-6);
  }
  free(w);
  free(r);
  sk_anim_layer bad = {.clip = 1, .time = 0, .weight = -1};
  ck_assert_int_eq(sk_anim_sample_layers(an, &bad, 1, a, scratch), SK_ERANGE);
  bad.weight = 0;
  ck_assert_int_eq(sk_anim_sample_layers(an, &bad, 1, a, scratch), SK_ERANGE);
  bad.weight = 1;
  bad.clip = 3;
  ck_assert_int_eq(sk_anim_sample_layers(an, &bad, 1, a, scratch), SK_ERANGE);
  free(a);
  free(b);
  free(scratch);
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
}
END_TEST

START_TEST(test_clips_json) {
  sk_skeleton *s;
  sk_anim *an;
  load("data/Fox.glb", &s, &an);
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_anim_write_clips_json(an, &b), 0);
  json_error_t je;
  json_t *j = json_loads(b.data, 0, &je);
  ck_assert_ptr_nonnull(j);
  ck_assert_uint_eq(json_array_size(j), 3);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(j, 0), "name")), "Survey");
  ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(j, 2), "channels")), 21);
  ck_assert_double_eq_tol(json_number_value(json_object_get(json_array_get(j, 1), "duration")), 0.708333, 1e-5);
  json_decref(j);
  sk_strbuf_free(&b);
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
}
END_TEST

/* ---- pose requests naming clips (sk_pose_parse_anim, skinner eval) --------- */

/* Runs a case with "gltf" paths relative to tests/; returns rc. */
static int run_case(const char *text, json_t **result, sk_error *err) {
  json_error_t je;
  json_t *c = json_loads(text, 0, &je);
  ck_assert_msg(c != NULL, "%s", je.text);
  sk_strbuf out = {0};
  sk_error_clear(err);
  const char *dir = getenv("SK_TEST_DATA");
  int rc = sk_eval_case_at(c, dir != NULL ? dir : "tests", &out, err);
  json_decref(c);
  *result = NULL;
  if (rc == 0) {
    *result = json_loads(out.data, 0, &je);
    ck_assert_ptr_nonnull(*result);
  }
  sk_strbuf_free(&out);
  return rc;
}

static void assert_result(const json_t *res, size_t k, const float *want, size_t n) {
  const json_t *f = json_object_get(json_array_get(json_object_get(res, "results"), k), "final");
  ck_assert_uint_eq(json_array_size(f), n);
  for (size_t i = 0; i < n; i++)
    ck_assert_msg((float)json_number_value(json_array_get(f, i)) == want[i], "result %zu value %zu: %.9g != %.9g", k, i,
                  json_number_value(json_array_get(f, i)), want[i]);
}

START_TEST(test_eval_pose_with_clips) {
  sk_skeleton *s;
  sk_anim *an;
  load("data/Fox.glb", &s, &an);
  size_t n = 16 * (s->count + 1);
  float *want = malloc(n * sizeof *want);
  json_t *res;
  sk_error err;
  int rc = run_case("{\"skeleton\": {\"gltf\": \"data/Fox.glb\"}, \"ops\": ["
                    "{\"op\": \"pose\", \"animation\": \"Walk\", \"time\": 0.25},"
                    "{\"op\": \"pose\", \"animation\": 2, \"times\": [0.1, 5], \"loop\": true},"
                    "{\"op\": \"pose\", \"animation\": \"Survey\", \"from\": 1, \"to\": 1.1, \"fps\": 30},"
                    "{\"op\": \"evaluate\"}]}",
                    &res, &err);
  ck_assert_msg(rc == 0, "%s at %s", err.text, err.pointer);
  ck_assert_uint_eq(json_array_size(json_object_get(res, "results")), 1 + 2 + 4 + 1);
  pose_at(s, an, 1, 0.25, false, want);
  assert_result(res, 0, want, n);
  pose_at(s, an, 2, 0.1, true, want);
  assert_result(res, 1, want, n);
  pose_at(s, an, 2, 5, true, want);
  assert_result(res, 2, want, n);
  for (int k = 0; k < 4; k++) {
    pose_at(s, an, 0, 1 + k / 30.0, false, want);
    assert_result(res, 3 + (size_t)k, want, n);
  }
  /* The skeleton itself is the rest pose (what Babylon shows unanimated). */
  sk_skeleton_compute_transforms(s, NULL, want);
  assert_result(res, 7, want, n);
  json_decref(res);
  free(want);
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
}
END_TEST

START_TEST(test_eval_layers_and_bone_overrides) {
  sk_skeleton *s;
  sk_anim *an;
  load("data/Fox.glb", &s, &an);
  size_t n = 16 * (s->count + 1), nt = an->bone_count * SK_ANIM_TRS;
  float *want = malloc(n * sizeof *want), *locals = malloc(n * sizeof *locals), *scratch = malloc(n * sizeof *scratch);
  double *trs = malloc(nt * sizeof *trs), *tmp = malloc(nt * sizeof *tmp);
  sk_override *o = malloc(an->bone_count * sizeof *o);
  json_t *res;
  sk_error err;
  int rc = run_case("{\"skeleton\": {\"gltf\": \"data/Fox.glb\"}, \"ops\": [{\"op\": \"pose\", \"layers\": ["
                    "{\"animation\": \"Walk\", \"time\": 0.5, \"weight\": 0.7},"
                    "{\"animation\": \"Run\", \"time\": 0.2, \"weight\": 0.3}],"
                    "\"bones\": {\"b_Hip_01\": {\"scaling\": [2, 2, 2]}, \"b_Neck_04\": {\"matrix\": "
                    "[1,0,0,0, 0,1,0,0, 0,0,1,0, 0,5,0,1]}}}]}",
                    &res, &err);
  ck_assert_msg(rc == 0, "%s at %s", err.text, err.pointer);
  sk_anim_layer l[2] = {{.clip = 1, .time = 0.5, .weight = 0.7}, {.clip = 2, .time = 0.2, .weight = 0.3}};
  ck_assert_int_eq(sk_anim_sample_layers(an, l, 2, trs, tmp), 0);
  sk_anim_to_overrides(an, trs, o);
  int32_t hip = sk_skeleton_find(s, "b_Hip_01"), neck = sk_skeleton_find(s, "b_Neck_04");
  o[hip].scaling[0] = o[hip].scaling[1] = o[hip].scaling[2] = 2;
  memset(&o[neck], 0, sizeof o[neck]);
  o[neck].bone = neck;
  o[neck].mask = SK_OVERRIDE_MATRIX;
  sk_mat_identity(o[neck].matrix);
  o[neck].matrix[13] = 5;
  sk_skeleton_pose_locals(s, o, an->bone_count, locals);
  sk_skeleton_evaluate(s, locals, NULL, scratch, want, NULL, NULL);
  assert_result(res, 0, want, n);
  json_decref(res);
  free(want);
  free(locals);
  free(scratch);
  free(trs);
  free(tmp);
  free(o);
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
}
END_TEST

static const struct bad_pose {
  const char *op;
  int code;
  const char *ptr;
} k_bad_pose[] = {
    {"{\"op\": \"pose\", \"animation\": \"Jog\"}", SK_ENOTFOUND, "/ops/0/animation"},
    {"{\"op\": \"pose\", \"animation\": 3}", SK_ENOTFOUND, "/ops/0/animation"},
    {"{\"op\": \"pose\", \"animation\": true}", SK_ETYPE, "/ops/0/animation"},
    {"{\"op\": \"pose\", \"animation\": \"Walk\", \"time\": \"1\"}", SK_ETYPE, "/ops/0/time"},
    {"{\"op\": \"pose\", \"animation\": \"Walk\", \"loop\": 1}", SK_ETYPE, "/ops/0/loop"},
    {"{\"op\": \"pose\", \"animation\": \"Walk\", \"time\": 1, \"times\": [1]}", SK_ETYPE, "/ops/0/time"},
    {"{\"op\": \"pose\", \"animation\": \"Walk\", \"times\": []}", SK_ETYPE, "/ops/0/times"},
    {"{\"op\": \"pose\", \"animation\": \"Walk\", \"times\": [0, null]}", SK_ETYPE, "/ops/0/times/1"},
    {"{\"op\": \"pose\", \"animation\": \"Walk\", \"from\": 0, \"to\": 1}", SK_EMISSING, "/ops/0/fps"},
    {"{\"op\": \"pose\", \"animation\": \"Walk\", \"from\": 1, \"to\": 0, \"fps\": 30}", SK_ERANGE, "/ops/0/to"},
    {"{\"op\": \"pose\", \"animation\": \"Walk\", \"from\": 0, \"to\": 1, \"fps\": 0}", SK_ERANGE, "/ops/0/fps"},
    {"{\"op\": \"pose\", \"animation\": \"Walk\", \"from\": 0, \"to\": 1e6, \"fps\": 60}", SK_ETOOBIG, "/ops/0/fps"},
    {"{\"op\": \"pose\", \"animation\": \"Walk\", \"layers\": []}", SK_ETYPE, "/ops/0/layers"},
    {"{\"op\": \"pose\", \"layers\": [{\"animation\": \"Walk\"}], \"time\": 1}", SK_ETYPE, "/ops/0/time"},
    {"{\"op\": \"pose\", \"layers\": [{\"animation\": \"Walk\", \"weight\": -1}]}", SK_ERANGE,
     "/ops/0/layers/0/weight"},
    {"{\"op\": \"pose\", \"layers\": [{\"animation\": \"Walk\", \"weight\": 0}]}", SK_ERANGE, "/ops/0/layers"},
    {"{\"op\": \"pose\", \"layers\": [{\"time\": 1}]}", SK_EMISSING, "/ops/0/layers/0/animation"},
    {"{\"op\": \"pose\", \"layers\": [{\"animation\": \"Walk\", \"speed\": 2}]}", SK_EUNKNOWN, "/ops/0/layers/0/speed"},
    {"{\"op\": \"pose\", \"times\": [1]}", SK_EMISSING, "/ops/0/times"},
    {"{\"op\": \"pose\", \"animation\": \"Walk\", \"bones\": {\"nope\": {}}}", SK_ENOTFOUND, "/ops/0/bones/nope"},
    {"{\"op\": \"evaluate\", \"animation\": \"Walk\"}", SK_EUNKNOWN, "/ops/0/animation"},
};

START_TEST(test_eval_bad_pose) {
  const struct bad_pose *c = &k_bad_pose[_i];
  char text[1024];
  snprintf(text, sizeof text, "{\"skeleton\": {\"gltf\": \"data/Fox.glb\"}, \"ops\": [%s]}", c->op);
  json_t *res;
  sk_error err;
  int rc = run_case(text, &res, &err);
  ck_assert_msg(rc == c->code && strcmp(err.pointer, c->ptr) == 0, "%s: got %s at \"%s\" (%s), want %s at \"%s\"",
                c->op, sk_errname(rc), err.pointer, err.text, sk_errname(c->code), c->ptr);
  json_decref(res);
}
END_TEST

START_TEST(test_parse_anim_api) {
  sk_skeleton *s;
  sk_anim *an;
  load("data/CesiumMan.glb", &s, &an);
  json_error_t je;
  json_t *j = json_loads("{\"animation\": \"animation0\", \"from\": 0, \"to\": 2, \"fps\": 30, "
                         "\"output\": [\"final\", \"absolute\"]}",
                         0, &je);
  sk_pose *poses;
  size_t n;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_pose_parse_anim(s, an, j, "", NULL, &poses, &n, &err), 0);
  ck_assert_uint_eq(n, 61);
  for (size_t i = 0; i < n; i++) {
    ck_assert_uint_eq(poses[i].count, s->count);
    ck_assert_uint_eq(poses[i].output, SK_OUT_FINAL | SK_OUT_ABSOLUTE);
  }
  sk_pose_array_free(poses, n);
  json_decref(j);
  /* Without clip keys: one ordinary pose; with clips but no clip set: not found. */
  j = json_loads("{\"bones\": {}}", 0, &je);
  ck_assert_int_eq(sk_pose_parse_anim(s, an, j, "", NULL, &poses, &n, &err), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(poses[0].count, 0);
  sk_pose_array_free(poses, n);
  json_decref(j);
  j = json_loads("{\"animation\": 0}", 0, &je);
  sk_error_clear(&err);
  ck_assert_int_eq(sk_pose_parse_anim(s, NULL, j, "/poses/3", NULL, &poses, &n, &err), SK_ENOTFOUND);
  ck_assert_str_eq(err.pointer, "/poses/3/animation");
  ck_assert_ptr_null(poses);
  json_decref(j);
  sk_pose_array_free(NULL, 0);
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
}
END_TEST

START_TEST(test_eval_gltf_skeleton_errors) {
  json_t *res;
  sk_error err;
  ck_assert_int_eq(run_case("{\"skeleton\": {\"gltf\": \"data/missing.glb\"}}", &res, &err), SK_ENOTFOUND);
  ck_assert_str_eq(err.pointer, "/skeleton/gltf");
  ck_assert_int_eq(run_case("{\"skeleton\": {\"gltf\": \"data/Fox.glb\", \"skin\": 1}}", &res, &err), SK_ENOTFOUND);
  ck_assert_str_eq(err.pointer, "/skeleton/skin");
  ck_assert_int_eq(run_case("{\"skeleton\": {\"gltf\": \"data/Fox.glb\", \"skin\": -1}}", &res, &err), SK_ERANGE);
  ck_assert_int_eq(run_case("{\"skeleton\": {\"gltf\": \"data/Fox.glb\", \"bones\": []}}", &res, &err), SK_EUNKNOWN);
  ck_assert_str_eq(err.pointer, "/skeleton/bones");
  ck_assert_int_eq(run_case("{\"skeleton\": {\"gltf\": \"data/LICENSES.md\"}}", &res, &err), SK_EFORMAT);
  ck_assert_str_eq(err.pointer, "/skeleton/gltf");
  /* A JSON skeleton has no clips. */
  ck_assert_int_eq(run_case("{\"skeleton\": {\"bones\": [{\"name\": \"a\"}]}, \"ops\": [{\"op\": \"pose\", "
                            "\"animation\": \"Walk\"}]}",
                            &res, &err),
                   SK_ENOTFOUND);
  ck_assert_str_eq(err.pointer, "/ops/0/animation");
  /* Skins by name and index; RobotExpressive's two skins share all joints. */
  ck_assert_int_eq(run_case("{\"skeleton\": {\"gltf\": \"data/RobotExpressive.glb\", \"skin\": 1}, \"ops\": "
                            "[{\"op\": \"pose\", \"animation\": \"Dance\", \"time\": 0.5}]}",
                            &res, &err),
                   0);
  ck_assert_uint_eq(json_array_size(json_object_get(res, "order")), 43);
  json_decref(res);
}
END_TEST

static Suite *anim_suite(void) {
  Suite *s = suite_create("sk_anim");
  TCase *t = tcase_create("babylon");
  size_t n = 0;
  while (k_expected[n] != NULL)
    n++;
  tcase_set_timeout(t, 300);
  tcase_add_loop_test(t, test_samples_match_babylon, 0, (int)n);
  suite_add_tcase(s, t);
  t = tcase_create("clips");
  tcase_add_test(t, test_find_clip);
  tcase_add_test(t, test_loop_wraps_and_clamp_holds);
  tcase_add_test(t, test_layers);
  tcase_add_test(t, test_clips_json);
  suite_add_tcase(s, t);
  t = tcase_create("pose_requests");
  tcase_add_test(t, test_eval_pose_with_clips);
  tcase_add_test(t, test_eval_layers_and_bone_overrides);
  tcase_add_loop_test(t, test_eval_bad_pose, 0, (int)(sizeof k_bad_pose / sizeof k_bad_pose[0]));
  tcase_add_test(t, test_eval_gltf_skeleton_errors);
  tcase_add_test(t, test_parse_anim_api);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(anim_suite()); }
