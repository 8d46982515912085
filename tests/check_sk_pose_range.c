/* sk_pose_range: frame ranges parsed into range form (sk_pose_parse_range,
 * the daemon's sample step) answer the bytes of the same ranges parsed into
 * overrides (sk_pose_parse_anim) on every path of sk_frames: sampled
 * straight into the kernel's rows, materialised for the core, for ops, for
 * the fast precision, in mixed batches, streamed, on two threads. */
#include "sk_banim.h"
#include "sk_banim_add.h"
#include "sk_frames.h"
#include "sk_json.h"
#include "sk_jsonl.h"
#include "sk_pose_range.h"
#include "sk_poseops.h"

#include "sk_testasset.h"
#include "sk_testutil.h"

typedef sk_test_entry fixture;

/* `text` parsed by `fn` (sk_frames_sample_range or _default), through
 * sk_poseops_sample as the routes parse it; *owner holds any ops. */
static sk_pose *parse(const fixture *f, sk_frames_sample_fn fn, const char *text, int fmt, sk_poseops **owner,
                      size_t *n) {
  json_error_t je;
  json_t *j = json_loads(text, 0, &je);
  ck_assert_msg(j != NULL, "%s: %s", text, je.text);
  sk_pose *poses;
  sk_error err;
  sk_error_clear(&err);
  *owner = NULL;
  ck_assert_msg(sk_poseops_sample(fn, f->e->model, j, "", fmt, owner, &poses, n, &err) == 0, "%s: %s at %s", text,
                err.text, err.pointer);
  json_decref(j);
  if (fmt != SK_FMT_JSON)
    for (size_t i = 0; i < *n; i++)
      poses[i].output = SK_OUT_FINAL; /* what the routes do for binary answers */
  return poses;
}

/* poses[0..n) answered in batches of `k`, joined as one answer. */
static void answer(const fixture *f, const sk_pose *poses, size_t n, size_t k, const sk_frames_opts *o,
                   sk_strbuf *out) {
  sk_frames_scratch sc = {0};
  for (size_t i = 0; i < n; i += k) {
    if (i > 0 && o->fmt == SK_FMT_JSON)
      ck_assert_int_eq(sk_strbuf_append(out, ",", 1), 0);
    ck_assert_int_eq(sk_frames_eval(f->e->model, poses + i, n - i < k ? n - i : k, o, &sc, out), 0);
  }
  sk_frames_scratch_close(&sc);
}

static void assert_same(const sk_strbuf *a, const sk_strbuf *b, const char *what, const char *body, int fmt,
                        size_t k) {
  size_t at = 0;
  while (at < a->len && at < b->len && a->data[at] == b->data[at])
    at++;
  ck_assert_msg(a->len == b->len && at == a->len, "%s: %s, fmt %d, batches of %zu: %zu vs %zu bytes, first difference at %zu",
                what, body, fmt, k, a->len, b->len, at);
}

/* Range form and override form of `body` give the same bytes whole, in
 * batches of `k`, streamed in slices, on two threads, in every format.
 * `want_range` 1 or 0: whether the range form must take it; -1: either.
 * Returns whether it did. */
static bool compare_body(const fixture *f, const char *body, int want_range, const size_t *ks, size_t nk) {
  bool took = false;
  for (int fmt = SK_FMT_JSON; fmt <= SK_FMT_MAT3X4; fmt++) {
    sk_poseops *ol, *oe;
    size_t nl, ne;
    sk_pose *lazy = parse(f, sk_frames_sample_range, body, fmt, &ol, &nl);
    sk_pose *eager = parse(f, sk_frames_sample_default, body, fmt, &oe, &ne);
    ck_assert_uint_eq(nl, ne);
    took = lazy[0].range != NULL;
    ck_assert_msg(want_range < 0 || took == (want_range == 1), "%s: range form %d", body, took);
    ck_assert_ptr_null(eager[0].range);
    for (int prec = SK_FRAMES_EXACT; prec <= SK_FRAMES_FAST; prec++) {
      const sk_frames_opts o = {.fmt = fmt, .precision = prec};
      sk_strbuf ref = {0};
      answer(f, eager, ne, ne, &o, &ref);
      for (size_t i = 0; i < nk; i++) {
        /* the fast precision differs between the kernel and the core (a
         * batch of 1), so it is compared at the same batch sizes */
        sk_strbuf got = {0}, same = {0};
        answer(f, lazy, nl, ks[i], &o, &got);
        if (prec == SK_FRAMES_FAST)
          answer(f, eager, ne, ks[i], &o, &same);
        assert_same(prec == SK_FRAMES_FAST ? &same : &ref, &got, prec ? "fast" : "exact", body, fmt, ks[i]);
        sk_strbuf_free(&got);
        sk_strbuf_free(&same);
      }
      if (prec == SK_FRAMES_EXACT) {
        sk_strbuf th = {0};
        sk_frames_scratch sc = {0};
        const sk_frames_opts o2 = {.fmt = fmt, .threads = 2};
        ck_assert_int_eq(sk_frames_eval(f->e->model, lazy, nl, &o2, &sc, &th), 0);
        sk_frames_scratch_close(&sc);
        assert_same(&ref, &th, "two threads", body, fmt, nl);
        sk_strbuf_free(&th);
        /* streamed in slices (16 poses at a time), as the routes pull them */
        sk_frames_run run;
        ck_assert_int_eq(sk_frames_run_init(&run, f->e->model, lazy, nl, &o), 0);
        sk_strbuf sl = {0};
        while (!sk_frames_run_done(&run))
          ck_assert_int_eq(sk_frames_run_next(&run, &sl, 1000), 0);
        sk_frames_run_close(&run);
        assert_same(&ref, &sl, "slices", body, fmt, 16);
        sk_strbuf_free(&sl);
      }
      sk_strbuf_free(&ref);
    }
    sk_pose_array_free(lazy, nl);
    sk_pose_array_free(eager, ne);
    sk_poseops_free(ol);
    sk_poseops_free(oe);
  }
  return took;
}

static const size_t k_sizes[] = {1, 2, 3, 15, 16, 17, 67, 1000};

START_TEST(a_range_answers_the_same_bytes_in_range_form_and_as_overrides) {
  static const struct {
    const char *asset, *body;
  } cases[] = {
      {"Fox.glb", "{\"animation\": \"Walk\", \"from\": 0, \"to\": 1.5, \"fps\": 60, \"loop\": true}"},
      {"Fox.glb", "{\"animation\": \"Survey\", \"times\": [0.7333, 0.1, 3.2, 0.5, 0.5, 0], \"loop\": true}"},
      {"Fox.glb", "{\"layers\": [{\"animation\": \"Walk\", \"weight\": 0.3}, {\"animation\": \"Run\", \"weight\": "
                  "0.7, \"time\": 0.1, \"loop\": true}], \"from\": 0.25, \"to\": 1, \"fps\": 30}"},
      {"Fox.glb", "{\"animation\": \"Run\", \"from\": 0, \"to\": 1, \"fps\": 24, \"initialSkinMatrix\": [2, 0, 0, 0, "
                  "0, 2, 0, 0, 0, 0, 2, 0, 1, 2, 3, 1]}"},
      {"mannequiny-0.3.0.glb", "{\"animation\": \"walk\", \"from\": 0, \"to\": 1, \"fps\": 50, \"loop\": true}"},
      {"gltf/rig65.gltf", "{\"animation\": \"Wave\", \"from\": 0, \"to\": 0.5, \"fps\": 64}"},
      /* layers with a bone mask or an additive layer: sk_layers' range form */
      {"Fox.glb", "{\"layers\": [{\"animation\": \"Walk\", \"loop\": true}, {\"animation\": \"Survey\", \"weight\": "
                  "0.6, \"time\": 0.2, \"mask\": {\"bone\": \"b_Spine01_02\", \"subtree\": true, \"default\": 0.25}}], "
                  "\"from\": -0.1, \"to\": 1.4, \"fps\": 47}"},
      {"Fox.glb", "{\"layers\": [{\"animation\": \"Run\", \"weight\": 0.8, \"loop\": true}, {\"animation\": "
                  "\"Survey\", \"additive\": true, \"reference\": 0.3, \"weight\": 0.5, \"loop\": true}], \"times\": "
                  "[0.5, 0.1, 3.2, 0.1, 0, 9], \"bones\": {\"b_Head_05\": {\"rotation\": [0, 0.6, 0]}}}"},
      {"mannequiny-0.3.0.glb", "{\"layers\": [{\"animation\": \"walk\", \"additive\": true, \"loop\": true}], "
                               "\"from\": 0, \"to\": 1, \"fps\": 30}"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    fixture f;
    sk_test_entry_open(&f, cases[c].asset);
    compare_body(&f, cases[c].body, true, k_sizes, sizeof k_sizes / sizeof k_sizes[0]);
    sk_test_entry_close(&f);
  }
}
END_TEST

/* Outputs the kernel does not give and Bone-API ops send every frame
 * through the core on a materialised copy: still the override form's bytes. */
START_TEST(outputs_and_ops_that_need_overrides_get_the_same_bytes) {
  static const char *const bodies[] = {
      "{\"animation\": \"Walk\", \"from\": 0, \"to\": 0.5, \"fps\": 30, \"output\": [\"final\", \"absolute\", "
      "\"local\"]}",
      "{\"animation\": \"Walk\", \"from\": 0, \"to\": 0.5, \"fps\": 30, \"ops\": []}",
      "{\"animation\": \"Walk\", \"from\": 0, \"to\": 0.5, \"fps\": 30, \"ops\": [{\"op\": \"ik\", \"bone\": "
      "\"b_LeftLeg02_016\", \"target\": [-4, 30, -50]}], \"output\": [\"final\", \"world\", \"positions\"]}",
  };
  const size_t ks[] = {1, 7, 100};
  fixture f;
  sk_test_entry_open(&f, "Fox.glb");
  for (size_t c = 0; c < sizeof bodies / sizeof bodies[0]; c++) {
    /* binary answers refuse absolute/local outputs: JSON only for the first */
    if (c == 0) {
      sk_poseops *ol, *oe;
      size_t nl, ne;
      sk_pose *lazy = parse(&f, sk_frames_sample_range, bodies[c], SK_FMT_JSON, &ol, &nl);
      sk_pose *eager = parse(&f, sk_frames_sample_default, bodies[c], SK_FMT_JSON, &oe, &ne);
      ck_assert_ptr_nonnull(lazy[0].range);
      const sk_frames_opts o = {.fmt = SK_FMT_JSON};
      ck_assert(!sk_frames_uses_kernel(f.e->model, lazy, nl, &o));
      sk_strbuf a = {0}, b = {0};
      answer(&f, eager, ne, ne, &o, &a);
      for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        b.len = 0;
        answer(&f, lazy, nl, ks[i], &o, &b);
        assert_same(&a, &b, "absolute and local", bodies[c], SK_FMT_JSON, ks[i]);
      }
      ck_assert_ptr_nonnull(strstr(a.data, "\"absolute\":"));
      sk_strbuf_free(&a);
      sk_strbuf_free(&b);
      sk_pose_array_free(lazy, nl);
      sk_pose_array_free(eager, ne);
      continue;
    }
    compare_body(&f, bodies[c], true, ks, sizeof ks / sizeof ks[0]);
  }
  sk_test_entry_close(&f);
}
END_TEST

/* "bones" on top of the clip keep the override form (merged per frame),
 * exact as before; ranges the sampler does not take too. */
/* "bones" on top of a range: fields (position, rotation, scaling, a
 * rotation given as Euler angles, a bone the clip drives and one it does
 * not) keep the range form, written over the sampled rows; a matrix keeps
 * the override form; both give the override form's bytes. */
START_TEST(user_overrides_on_a_range_give_the_override_forms_bytes) {
  static const struct {
    const char *body;
    bool range;
  } cases[] = {
      {"{\"animation\": \"Walk\", \"from\": 0, \"to\": 0.5, \"fps\": 30, \"bones\": {\"b_Spine01_02\": "
       "{\"rotation\": [0.1, 0.2, 0.3]}, \"b_Head_05\": {\"scaling\": [1, 2, 1]}}}",
       true},
      {"{\"animation\": \"Walk\", \"from\": 0.1, \"to\": 1.3, \"fps\": 47, \"loop\": true, \"bones\": "
       "{\"b_Root_00\": {\"position\": [1.5, -2, 0.25], \"rotationQuaternion\": [0, 0.6, 0, 0.8], \"scaling\": "
       "[1, 1, 3]}, \"b_Tail01_012\": {\"position\": [0, 3, 0]}}}",
       true},
      /* a matrix on top: that bone's lanes are MATRIX, its local the matrix in every frame */
      {"{\"animation\": \"Walk\", \"from\": 0, \"to\": 0.5, \"fps\": 30, \"bones\": {\"b_Neck_04\": {\"matrix\": "
       "[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 10, 0, 1]}}}",
       true},
      /* a matrix on a bone the clip drives, one on a bone it leaves at rest, fields on a third */
      {"{\"animation\": \"Run\", \"from\": 0.05, \"to\": 1.2, \"fps\": 41, \"loop\": true, \"bones\": "
       "{\"b_Head_05\": {\"matrix\": [0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 2, 0, 3, -4, 5, 1]}, \"_rootJoint\": "
       "{\"matrix\": [1, 0, 0, 0, 0, 0.6, 0.8, 0, 0, -0.8, 0.6, 0, -0, 7.25, 0, 1]}, \"b_Tail01_012\": "
       "{\"rotation\": [0, 0.4, 0]}}}",
       true},
      /* the same over glTF layers with a mask, and with an additive layer (sk_layers' range form) */
      {"{\"layers\": [{\"animation\": \"Walk\", \"loop\": true}, {\"animation\": \"Survey\", \"weight\": 0.6, "
       "\"mask\": {\"bone\": \"b_Spine01_02\", \"subtree\": true}}], \"from\": 0, \"to\": 0.6, \"fps\": 30, "
       "\"bones\": {\"b_Head_05\": {\"matrix\": [0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 2, 0, 3, -4, 5, 1]}}}",
       true},
      {"{\"layers\": [{\"animation\": \"Run\", \"loop\": true}, {\"animation\": \"Survey\", \"additive\": true, "
       "\"weight\": 0.5}], \"times\": [0.1, 0.2, 0.3, 0.5, 0.8, 1.3], \"bones\": {\"b_Spine01_02\": {\"matrix\": "
       "[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 10, 0, 1]}}}",
       true},
      {"{\"animation\": \"Walk\", \"times\": [0.1, 0.2]}", false}, /* under 4 frames: sampled frame by frame */
      {"{\"animation\": \"Walk\", \"time\": 0.3}", false},
  };
  const size_t ks[] = {1, 5, 16, 100};
  fixture f;
  sk_test_entry_open(&f, "Fox.glb");
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    compare_body(&f, cases[c].body, cases[c].range, ks, sizeof ks / sizeof ks[0]);
  sk_test_entry_close(&f);
}
END_TEST

/* A /poses batch mixing forms: a pose that sets a matrix makes that bone
 * MATRIX for every lane (the range lanes get the core's local of their
 * sampled TRS), runs of range lanes start inside a 16-lane block, two
 * ranges follow each other, frames of one range are not consecutive. */
/* The poses of items[0..ni) in one batch, parsed in range form and in
 * override form, answer the same bytes in every batch size; the range form
 * holds item 1's frames (a range of several frames) and the last item's. */
static void compare_mixed(const fixture *f, const char *const *items, size_t ni) {
  for (int fmt = SK_FMT_JSON; fmt <= SK_FMT_MAT3X4; fmt++) {
    sk_pose *all[2] = {NULL, NULL};
    size_t n[2] = {0, 0};
    sk_poseops *owner[2][8];
    ck_assert_uint_le(ni, 8);
    for (int form = 0; form < 2; form++) {
      all[form] = malloc(1000 * sizeof *all[form]);
      for (size_t i = 0; i < ni; i++) {
        size_t k;
        sk_pose *p = parse(f, form ? sk_frames_sample_range : sk_frames_sample_default, items[i], fmt,
                           &owner[form][i], &k);
        ck_assert_uint_le(n[form] + k, 1000);
        memcpy(all[form] + n[form], p, k * sizeof *p);
        n[form] += k;
        free(p); /* the poses moved into the batch */
      }
    }
    ck_assert_uint_eq(n[0], n[1]);
    ck_assert_ptr_nonnull(all[1][1].range);
    ck_assert_ptr_eq(all[1][1].range, all[1][2].range);
    ck_assert_ptr_nonnull(all[1][n[1] - 1].range);
    for (int prec = SK_FRAMES_EXACT; prec <= SK_FRAMES_FAST; prec++) {
      const sk_frames_opts o = {.fmt = fmt, .precision = prec};
      sk_strbuf ref = {0};
      answer(f, all[0], n[0], n[0], &o, &ref);
      for (size_t i = 0; i < sizeof k_sizes / sizeof k_sizes[0]; i++) {
        sk_strbuf got = {0}, same = {0};
        answer(f, all[1], n[1], k_sizes[i], &o, &got);
        if (prec == SK_FRAMES_FAST) /* as in compare_body */
          answer(f, all[0], n[0], k_sizes[i], &o, &same);
        assert_same(prec == SK_FRAMES_FAST ? &same : &ref, &got, prec ? "mixed, fast" : "mixed", items[1], fmt,
                    k_sizes[i]);
        sk_strbuf_free(&got);
        sk_strbuf_free(&same);
      }
      sk_strbuf_free(&ref);
    }
    /* the routes close a batch's poses one by one, first to last */
    for (int form = 0; form < 2; form++) {
      for (size_t i = 0; i < n[form]; i++)
        sk_pose_close(&all[form][i]);
      free(all[form]);
      for (size_t i = 0; i < ni; i++)
        sk_poseops_free(owner[form][i]);
    }
  }
}

START_TEST(mixed_batches_give_the_override_forms_bytes) {
  static const char *const items[] = {
      "{\"bones\": {\"b_Neck_04\": {\"matrix\": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 10, 0, 1]}, "
      "\"b_Spine01_02\": {\"position\": [0, 1, 0]}}}",
      "{\"animation\": \"Walk\", \"from\": 0, \"to\": 0.4, \"fps\": 30, \"loop\": true}",
      "{\"animation\": \"Survey\", \"time\": 0.5}",
      "{\"animation\": \"Run\", \"times\": [0.5, 0.4, 0.3, 0.2, 0.1]}",
      "{\"animation\": \"Run\", \"from\": 0, \"to\": 1, \"fps\": 40}",
  };
  /* the same with glTF layers with a mask and an additive layer (sk_layers'
   * range form): the matrix makes b_Neck_04 MATRIX in their lanes too */
  static const char *const layered[] = {
      items[0],
      "{\"layers\": [{\"animation\": \"Walk\", \"loop\": true}, {\"animation\": \"Survey\", \"weight\": 0.6, "
      "\"mask\": {\"bone\": \"b_Spine01_02\", \"subtree\": true}}], \"from\": 0, \"to\": 0.4, \"fps\": 30}",
      items[2],
      "{\"layers\": [{\"animation\": \"Run\", \"loop\": true}, {\"animation\": \"Survey\", \"additive\": true, "
      "\"weight\": 0.5}], \"from\": 0, \"to\": 1, \"fps\": 40}",
  };
  /* ranges with a matrix on top beside poses that set the same bones
   * otherwise (fields, another matrix, nothing) */
  static const char *const topped[] = {
      "{\"bones\": {\"b_Head_05\": {\"rotation\": [0, 0.6, 0]}}}",
      "{\"animation\": \"Walk\", \"from\": 0, \"to\": 0.4, \"fps\": 30, \"loop\": true, \"bones\": "
      "{\"b_Head_05\": {\"matrix\": [0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 2, 0, 3, -4, 5, 1]}}}",
      items[2],
      "{\"layers\": [{\"animation\": \"Run\", \"loop\": true}, {\"animation\": \"Survey\", \"additive\": true, "
      "\"weight\": 0.5}], \"from\": 0, \"to\": 0.6, \"fps\": 40, \"bones\": {\"b_Neck_04\": {\"matrix\": "
      "[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 10, 0, 1]}}}",
      "{\"animation\": \"Run\", \"from\": 0, \"to\": 1, \"fps\": 40, \"bones\": {\"b_Head_05\": {\"matrix\": "
      "[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.5, 0, 0, 1]}}}",
  };
  fixture f;
  sk_test_entry_open(&f, "Fox.glb");
  compare_mixed(&f, items, sizeof items / sizeof items[0]);
  compare_mixed(&f, layered, sizeof layered / sizeof layered[0]);
  compare_mixed(&f, topped, sizeof topped / sizeof topped[0]);
  sk_test_entry_close(&f);
}
END_TEST

/* ---- Babylon-format clips ------------------------------------------------ */

/* The skeleton (Babylon's format, with its clips) of a conformance case,
 * stored as an upload stores it. */
static void babylon_entry_open(fixture *f, const json_t *j) {
  sk_skeleton *s = NULL;
  sk_anim *a = NULL;
  ck_assert_int_eq(sk_json_parse_skeleton(j, "", 0, &s, NULL), 0);
  ck_assert_int_eq(sk_banim_parse(j, "", s, &a, NULL), 0);
  ck_assert_int_eq(sk_cache_create(0, &f->cache), 0);
  bool replaced;
  ck_assert_int_eq(sk_cache_put_full(f->cache, "a", s, a, NULL, &replaced, &f->e), 0);
}

/* A pose body (new text) from a json_pack format. */
static char *body_of(json_t *j) {
  char *t = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  return t;
}

/* sk_pose_range_babylon_fill writes, bit for bit, the fields each frame's
 * materialised overrides hold (the -0 a RELATIVE slerp turns into +0
 * included, which the final matrices may not show), and nothing else: not
 * the other fields of a driven bone, nor any row of a bone the clip leaves
 * alone. Returns whether the range had a sampler context (its frames from
 * the 16th on through sk_sample). */
static bool assert_rows_are_the_overrides(const fixture *f, const char *body) {
  sk_poseops *o;
  size_t n;
  sk_pose *p = parse(f, sk_frames_sample_range, body, SK_FMT_F32, &o, &n);
  sk_pose_range *r = p[0].range;
  ck_assert_ptr_nonnull(r);
  ck_assert_ptr_nonnull(r->anim);
  const size_t nb = r->bones, stride = 16, block = nb * 16 * stride, blocks = (n + 15) / 16;
  size_t *offset = malloc(nb * sizeof *offset);
  double *rows64 = malloc(blocks * block * sizeof *rows64);
  float *rows = malloc(blocks * block * sizeof *rows);
  sk_override *ov = malloc(nb * sizeof *ov);
  for (size_t b = 0; b < nb; b++)
    offset[b] = b * 16 * stride;
  for (size_t i = 0; i < blocks * block; i++) {
    rows64[i] = -12345.5;
    rows[i] = -12345.5f;
  }
  sk_pose_range_babylon_fill(r, 0, rows64, rows, offset, stride, block, 0, n);
  const bool sampled = r->ctx != NULL;
  bool *seen = calloc(nb, sizeof *seen);
  static const unsigned bit[3] = {SK_OVERRIDE_POSITION, SK_OVERRIDE_ROTATION, SK_OVERRIDE_SCALING};
  static const size_t row[3] = {0, 3, 7}, width[3] = {3, 4, 3};
  for (size_t i = 0; i < n; i++) {
    const size_t m = sk_pose_range_materialize(r, i, ov);
    for (size_t b = 0; b < nb; b++)
      seen[b] = false;
    for (size_t k = 0; k < m; k++)
      seen[ov[k].bone] = true;
    for (size_t b = 0; b < nb; b++)
      for (size_t e = 0; !seen[b] && e < 16; e++) {
        const size_t at = offset[b] + i / 16 * block + i % 16 + e * stride;
        ck_assert_msg(rows64[at] == -12345.5 && rows[at] == -12345.5f, "%s: frame %zu: bone %zu, not driven, written",
                      body, i, b);
      }
    for (size_t k = 0; k < m; k++) {
      const size_t at = offset[ov[k].bone] + i / 16 * block + i % 16;
      const double *field[3] = {ov[k].position, ov[k].rotation, ov[k].scaling};
      for (size_t x = 0; x < 3; x++)
        for (size_t e = 0; e < width[x]; e++) {
          const double want = (ov[k].mask & bit[x]) ? field[x][e] : -12345.5, got = rows64[at + (row[x] + e) * stride];
          ck_assert_msg(memcmp(&want, &got, sizeof want) == 0, "%s: frame %zu bone %d field %zu.%zu: %a, want %a",
                        body, i, ov[k].bone, x, e, got, want);
        }
      for (size_t e = 0; e < 16; e++) {
        const float want = (ov[k].mask & SK_OVERRIDE_MATRIX) ? ov[k].matrix[e] : -12345.5f;
        ck_assert_msg(memcmp(&want, &rows[at + e * stride], sizeof want) == 0, "%s: frame %zu bone %d matrix %zu",
                      body, i, ov[k].bone, e);
      }
    }
  }
  free(offset);
  free(rows64);
  free(rows);
  free(ov);
  free(seen);
  sk_pose_array_free(p, n);
  sk_poseops_free(o);
  return sampled;
}

/* Every clip of every fourth skeleton of the Babylon conformance cases,
 * played as a range (clamped on both sides, looped, at an odd rate, or
 * frames out of order and repeated; with "bones" on top), answers in range form the bytes of the override form:
 * through sk_pose_range_babylon_rows into the kernel's rows (position,
 * rotation and scaling channels, partial bones, "_matrix" keys, Hermite
 * and STEP keys, RELATIVE), materialised for the core and the fast
 * precision, streamed and on two threads. */
START_TEST(babylon_ranges_give_the_override_forms_bytes) {
  static const size_t ks[] = {1, 2, 17, 1000};
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/anim.jsonl");
  json_t *rec;
  size_t clips = 0, matrix = 0, partial = 0, rec_no = 0, sampled = 0, topped = 0, pinned = 0;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    if (rec_no++ % 4 != 0) {
      json_decref(rec);
      continue;
    }
    fixture f;
    babylon_entry_open(&f, json_object_get(json_object_get(rec, "case"), "skeleton"));
    const sk_anim *a = f.e->model->anim;
    for (size_t c = 0; a != NULL && c < a->clip_count; c++) {
      const double d = sk_anim_clip_duration(a, c);
      char *body = body_of(json_pack("{s:s, s:f, s:f, s:f, s:b}", "animation", a->clips[c].name, "from", -0.05,
                                     "to", d + 0.1, "fps", 30 / (d + 0.15) + 0.37, "loop", (int)(c % 2)));
      compare_body(&f, body, true, ks, sizeof ks / sizeof ks[0]);
      sampled += assert_rows_are_the_overrides(&f, body);
      free(body);
      body = body_of(json_pack("{s:s, s:[f, f, f, f, f], s:b}", "animation", a->clips[c].name, "times", d, d / 3,
                               d / 3, 0.0, d * 0.71, "loop", 1));
      compare_body(&f, body, true, ks, sizeof ks / sizeof ks[0]);
      free(body);
      /* "bones" on top: fields on a bone the clip moves by its fields and on
       * one it leaves alone keep the range form; on a bone it holds a
       * "_matrix" for, the override form */
      const sk_skeleton *sk = f.e->model->skel;
      size_t fields = SIZE_MAX, held = SIZE_MAX, idle = SIZE_MAX;
      for (size_t k = 0; k < a->clips[c].channel_count; k++) {
        const sk_anim_channel *ch = &a->clips[c].channels[k];
        *(ch->path == SK_ANIM_MATRIX ? &held : &fields) = (size_t)ch->bone;
      }
      for (size_t b = 0; b < sk->count && idle == SIZE_MAX; b++) {
        bool driven = false;
        for (size_t k = 0; k < a->clips[c].channel_count; k++)
          driven |= (size_t)a->clips[c].channels[k].bone == b;
        idle = driven ? SIZE_MAX : b;
      }
      for (int which = 0; which < 2; which++) {
        const size_t on = which == 0 ? fields : held;
        /* a matrix on top replaces the bone's override whatever the clip
         * holds for it: the range form, on a "_matrix" bone too */
        if (on != SIZE_MAX && d > 0.05) {
          json_t *pin = json_object();
          json_object_set_new(pin, sk->bones[on].name,
                              json_pack("{s:[f,f,f,f, f,f,f,f, f,f,f,f, f,f,f,f]}", "matrix", 0.0, 1.0, 0.0, 0.0, -1.0,
                                        0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 3.0, -4.0, 5.0, 1.0));
          body = body_of(json_pack("{s:s, s:f, s:f, s:f, s:b, s:o}", "animation", a->clips[c].name, "from", 0.0, "to",
                                   d, "fps", 25 / (d + 0.1), "loop", 1, "bones", pin));
          compare_body(&f, body, true, ks, sizeof ks / sizeof ks[0]);
          pinned++;
          free(body);
        }
        if (on == SIZE_MAX || (which == 0 && idle == SIZE_MAX) || !(d > 0.05)) /* (a range of several frames) */
          continue;
        json_t *bones = json_object();
        json_object_set_new(bones, sk->bones[on].name, json_pack("{s:[f,f,f]}", "position", 0.5, -1.25, 2.0));
        if (which == 0)
          json_object_set_new(bones, sk->bones[idle].name,
                              json_pack("{s:[f,f,f], s:[f,f,f]}", "scaling", 1.0, 2.0, 1.5, "rotation", 0.1, 0.2, 0.3));
        body = body_of(json_pack("{s:s, s:f, s:f, s:f, s:b, s:o}", "animation", a->clips[c].name, "from", 0.0, "to",
                                 d, "fps", 25 / (d + 0.1), "loop", 1, "bones", bones));
        compare_body(&f, body, which == 0, ks, sizeof ks / sizeof ks[0]);
        if (which == 0) {
          sampled += assert_rows_are_the_overrides(&f, body);
          topped++;
        }
        free(body);
      }
      for (size_t k = 0; k < a->clips[c].channel_count; k++)
        matrix += a->clips[c].channels[k].path == SK_ANIM_MATRIX;
      const sk_anim_clip *cl = &a->clips[c];
      partial += cl->channel_count > 0 && cl->channels[0].path != SK_ANIM_MATRIX;
      clips++;
    }
    sk_test_entry_close(&f);
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  ck_assert_uint_ge(clips, 40);
  ck_assert_uint_ge(topped, 10);
  ck_assert_uint_ge(pinned, 20);
  ck_assert_uint_gt(matrix, 0);
  ck_assert_uint_gt(partial, 0);
  /* a real clip: Fox's Walk in Babylon's format (conformance/banim_fox.jsonl
   * holds Babylon's answers for it) */
  size_t len;
  unsigned char *text = sk_test_read_asset("fox-walk-babylon.json", &len);
  json_t *j = json_loadb((const char *)text, len, 0, NULL);
  free(text);
  ck_assert_ptr_nonnull(j);
  fixture f;
  babylon_entry_open(&f, j);
  json_decref(j);
  static const char *const fox[] = {
      "{\"animation\": \"Walk\", \"from\": 0, \"to\": 2, \"fps\": 60, \"loop\": true}",
      "{\"animation\": \"Walk\", \"from\": -0.1, \"to\": 1, \"fps\": 41}",
  };
  for (size_t i = 0; i < 2; i++) {
    compare_body(&f, fox[i], true, ks, sizeof ks / sizeof ks[0]);
    ck_assert(assert_rows_are_the_overrides(&f, fox[i])); /* its clip lerps and slerps: sk_sample's */
  }
  sk_test_entry_close(&f);
  ck_assert_uint_gt(sampled, 0);
  ck_assert_uint_lt(sampled, clips);
}
END_TEST

/* Babylon-format layers over a range: the range form (their blend
 * context's runs straight into the kernel's rows) answers the bytes of the
 * override form, on the skeletons of every third case of
 * conformance/banim_layers.jsonl and on the Fox file: two layers whose
 * weights add up to more than 1, two under 1 with a mask, an additive
 * layer, "bones" on top; and the rows it writes are its materialised
 * overrides. A "_matrix" blended on a bone that fields move keeps the
 * override form. */
START_TEST(babylon_layer_ranges_give_the_override_forms_bytes) {
  static const size_t ks[] = {1, 17, 1000};
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/banim_layers.jsonl");
  size_t len, rec_no = 0, bodies = 0, ranged = 0, additive = 0, pinned = 0;
  unsigned char *text = sk_test_read_asset("fox-walk-babylon.json", &len);
  json_t *fox = json_loadb((const char *)text, len, 0, NULL), *rec;
  free(text);
  ck_assert_ptr_nonnull(fox);
  while ((rec = sk_jsonl_next(&in)) != NULL || fox != NULL) {
    if (rec != NULL && rec_no++ % 3 != 0) {
      json_decref(rec);
      continue;
    }
    fixture f;
    babylon_entry_open(&f, rec != NULL ? json_object_get(json_object_get(rec, "case"), "skeleton") : fox);
    const sk_anim *a = f.e->model->anim;
    const sk_skeleton *sk = f.e->model->skel;
    const char *c0 = a->clips[0].name, *c1 = a->clips[a->clip_count > 1 ? 1 : 0].name;
    const double d = sk_anim_clip_duration(a, 0);
    char *body[5] = {
        body_of(json_pack("{s:[{s:s, s:f, s:b}, {s:s, s:f, s:f}], s:f, s:f, s:f}", "layers", "animation", c0, "weight",
                          0.3, "loop", 1, "animation", c1, "time", 0.1, "weight", 0.9, "from", -0.05, "to", d + 0.1,
                          "fps", 30 / (d + 0.15) + 0.37)),
        body_of(json_pack("{s:[{s:s, s:f}, {s:s, s:f, s:f, s:b, s:{s:[s]}}], s:f, s:f, s:f}", "layers", "animation", c0,
                          "weight", 0.2, "animation", c1, "time", 0.05, "weight", 0.3, "loop", 1, "mask", "exclude",
                          sk->bones[sk->count > 1 ? 1 : 0].name, "from", 0.0, "to", d, "fps", 23 / (d + 0.1))),
        NULL, NULL, NULL};
    size_t clip1 = a->clip_count > 1 ? 1 : 0;
    for (int ref = 0; ref < 2 && body[2] == NULL; ref++) /* against the clip's start, else 0.1 s into it */
      if (sk_banim_add_check(a, clip1, 0.1 * ref, sk, "", NULL) == 0) {
        body[2] = body_of(json_pack("{s:[{s:s, s:f, s:b}, {s:s, s:b, s:f, s:f}], s:f, s:f, s:f}", "layers", "animation",
                                    c0, "weight", 1.0, "loop", 1, "animation", c1, "additive", 1, "reference",
                                    0.1 * ref, "weight", 0.5, "from", 0.0, "to", d, "fps", 31 / (d + 0.1)));
        additive++;
      }
    /* fields on top of a bone the first clip moves by its fields */
    for (size_t k = 0; k < a->clips[0].channel_count && body[3] == NULL; k++) {
      const sk_anim_channel *ch = &a->clips[0].channels[k];
      if (ch->path == SK_ANIM_MATRIX)
        continue;
      json_t *bones = json_object();
      json_object_set_new(bones, sk->bones[ch->bone].name, json_pack("{s:[f,f,f]}", "position", 0.5, -1.25, 2.0));
      body[3] = body_of(json_pack("{s:[{s:s, s:f, s:b}, {s:s, s:f, s:f}], s:f, s:f, s:f, s:o}", "layers", "animation",
                                  c0, "weight", 0.6, "loop", 1, "animation", c1, "time", 0.2, "weight", 0.7, "from",
                                  0.0, "to", d, "fps", 27 / (d + 0.1), "bones", bones));
    }
    /* a matrix on top of the first bone any channel drives: it replaces
     * that bone's blend in every frame */
    if (a->clips[0].channel_count > 0) {
      json_t *pin = json_object();
      json_object_set_new(pin, sk->bones[a->clips[0].channels[0].bone].name,
                          json_pack("{s:[f,f,f,f, f,f,f,f, f,f,f,f, f,f,f,f]}", "matrix", 1.0, 0.0, 0.0, 0.0, 0.0, 0.6,
                                    0.8, 0.0, 0.0, -0.8, 0.6, 0.0, -0.0, 7.25, 0.0, 1.0));
      body[4] = body_of(json_pack("{s:[{s:s, s:f, s:b}, {s:s, s:f, s:f}], s:f, s:f, s:f, s:o}", "layers", "animation",
                                  c0, "weight", 0.6, "loop", 1, "animation", c1, "time", 0.2, "weight", 0.7, "from",
                                  0.0, "to", d, "fps", 27 / (d + 0.1), "bones", pin));
    }
    size_t here = 0, here_ranged = 0;
    for (size_t b = 0; b < 5; b++) {
      if (body[b] == NULL)
        continue;
      bodies++, here++;
      if (compare_body(&f, body[b], -1, ks, sizeof ks / sizeof ks[0])) {
        ranged++, here_ranged++;
        if (b < 4) /* the matrix's bone keeps the clip's doubles in rows the kernel does not read */
          assert_rows_are_the_overrides(&f, body[b]);
        else
          pinned++;
      }
      free(body[b]);
    }
    sk_test_entry_close(&f);
    if (rec != NULL) {
      json_decref(rec);
    } else {
      /* the Fox file's layers are all range form (its clip moves bones by
       * their fields); it has no additive body (a bone with several
       * animations, which sk_banim_add_check refuses) */
      ck_assert_uint_eq(here_ranged, here);
      ck_assert_uint_eq(here, 4);
      json_decref(fox);
      fox = NULL;
    }
  }
  sk_jsonl_close(&in);
  ck_assert_uint_ge(bodies, 60);
  ck_assert_uint_ge(ranged, bodies * 3 / 4);
  ck_assert_uint_lt(ranged, bodies); /* some blend a "_matrix" with fields */
  ck_assert_uint_ge(additive, 5);
  ck_assert_uint_ge(pinned, 10); /* a matrix on top keeps the range form */
}
END_TEST

/* A hand-made skeleton for what the generated cases rarely hit: a
 * RELATIVE rotation whose slerps give -0 (Babylon's zero offset turns it
 * into +0), rotation keys close enough to blend linearly, STEP keys, a
 * bone animated twice (the later animation wins) and "_matrix" keys. */
START_TEST(babylon_ranges_keep_relative_zeros_linear_blends_and_later_channels) {
  static const char *const skel =
      "{\"bones\": ["
      "{\"name\": \"r\", \"index\": 0, \"parentBoneIndex\": -1, \"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1],"
      " \"animation\": {\"name\": \"q\", \"property\": \"rotationQuaternion\", \"framePerSecond\": 30,"
      " \"dataType\": 2, \"loopBehavior\": 0, \"keys\": [{\"frame\": 0, \"values\": [-0.0, 0, -0.0, 1]},"
      " {\"frame\": 10, \"values\": [-0.0, 0.6, -0.0, 0.8]}, {\"frame\": 20, \"values\": [-0.0, 0.6000001, -0.0, 0.79999992]},"
      " {\"frame\": 30, \"values\": [0.5, 0.5, 0.5, 0.5]}]}},"
      "{\"name\": \"a\", \"index\": 1, \"parentBoneIndex\": 0, \"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,2,0,1],"
      " \"animations\": [{\"name\": \"p\", \"property\": \"position\", \"framePerSecond\": 30, \"dataType\": 1,"
      " \"loopBehavior\": 1, \"keys\": [{\"frame\": 0, \"values\": [0, 1, 0]}, {\"frame\": 30, \"values\": [0, 3, 0]}]},"
      " {\"name\": \"p2\", \"property\": \"position\", \"framePerSecond\": 30, \"dataType\": 1,"
      " \"loopBehavior\": 1, \"keys\": [{\"frame\": 0, \"values\": [1, 0, 0, null, null, 1]},"
      " {\"frame\": 15, \"values\": [2, 0, 0]}, {\"frame\": 30, \"values\": [3, 0, 0]}]}]},"
      "{\"name\": \"m\", \"index\": 2, \"parentBoneIndex\": 1, \"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,1,0,1],"
      " \"animation\": {\"name\": \"m\", \"property\": \"_matrix\", \"framePerSecond\": 30, \"dataType\": 3,"
      " \"loopBehavior\": 1, \"keys\": [{\"frame\": 0, \"values\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,1,0,1]},"
      " {\"frame\": 12, \"values\": [2,0,0,0, 0,2,0,0, 0,0,2,0, 0,1,0,1]}]}}],"
      " \"ranges\": [{\"name\": \"all\", \"from\": 0, \"to\": 30}]}";
  json_t *j = json_loads(skel, 0, NULL);
  ck_assert_ptr_nonnull(j);
  fixture f;
  babylon_entry_open(&f, j);
  json_decref(j);
  static const size_t ks[] = {1, 2, 16, 1000};
  compare_body(&f, "{\"animation\": \"all\", \"from\": 0, \"to\": 1, \"fps\": 90}", true, ks, 4);
  compare_body(&f, "{\"animation\": \"all\", \"from\": 0.2, \"to\": 2.5, \"fps\": 47, \"loop\": true}", true,
               ks, 4);
  assert_rows_are_the_overrides(&f, "{\"animation\": \"all\", \"from\": 0, \"to\": 1.2, \"fps\": 90, \"loop\": true}");
  /* the -0 really arises: the first frame's rotation is (+0, 0, +0, 1) */
  sk_poseops *o;
  size_t n;
  sk_pose *p = parse(&f, sk_frames_sample_range, "{\"animation\": \"all\", \"times\": [0, 0.1]}", SK_FMT_JSON, &o,
                     &n);
  sk_override ov[3];
  ck_assert_uint_eq(sk_pose_range_materialize(p[0].range, 0, ov), 3);
  ck_assert(ov[0].rotation[0] == 0 && !signbit(ov[0].rotation[0]) && !signbit(ov[0].rotation[2]));
  sk_pose_array_free(p, n);
  sk_test_entry_close(&f);
}
END_TEST

/* Babylon-format ranges in mixed batches: beside poses the clip drives
 * alone (the direct rows), and beside a pose that sets a matrix on a bone
 * the clip moves by its fields and a position on one it does not (those
 * bones' lanes then come from the materialised overrides). */
START_TEST(babylon_ranges_in_mixed_batches_give_the_override_forms_bytes) {
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/anim.jsonl");
  json_t *rec;
  size_t done = 0;
  while (done < 12 && (rec = sk_jsonl_next(&in)) != NULL) {
    fixture f;
    babylon_entry_open(&f, json_object_get(json_object_get(rec, "case"), "skeleton"));
    const sk_anim *a = f.e->model->anim;
    const sk_skeleton *s = f.e->model->skel;
    for (size_t c = 0; a != NULL && c < a->clip_count; c++) {
      const sk_anim_clip *cl = &a->clips[c];
      size_t fields = SIZE_MAX, idle = SIZE_MAX;
      for (size_t k = 0; k < cl->channel_count; k++)
        if (cl->channels[k].path != SK_ANIM_MATRIX)
          fields = (size_t)cl->channels[k].bone;
      for (size_t b = 0; b < s->count && idle == SIZE_MAX; b++) {
        bool driven = false;
        for (size_t k = 0; k < cl->channel_count; k++)
          driven |= (size_t)cl->channels[k].bone == b;
        idle = driven ? SIZE_MAX : b;
      }
      const double d = sk_anim_clip_duration(a, c);
      if (!(d > 0.05))
        continue; /* item 1 must be a range of several frames */
      const char *name = cl->name;
      char *items[5];
      items[1] = body_of(json_pack("{s:s, s:f, s:f, s:f, s:b}", "animation", name, "from", 0.0, "to", d, "fps",
                                   20 / (d + 0.1), "loop", 1));
      items[2] = body_of(json_pack("{s:s, s:f}", "animation", name, "time", d / 2));
      items[3] = body_of(json_pack("{s:s, s:[f, f, f, f]}", "animation", name, "times", d, d / 2, 0.0, d / 3));
      items[4] = body_of(json_pack("{s:s, s:f, s:f, s:f}", "animation", name, "from", d / 4, "to", d, "fps",
                                   13 / (d + 0.1)));
      items[0] = items[2]; /* first: poses the clip drives alone */
      compare_mixed(&f, (const char *const *)items, 5);
      if (fields != SIZE_MAX && idle != SIZE_MAX) {
        json_t *bones = json_object();
        json_object_set_new(bones, s->bones[fields].name,
                            json_pack("{s:[i,i,i,i, i,i,i,i, i,i,i,i, i,i,i,i]}", "matrix", 1, 0, 0, 0, 0, 1, 0, 0,
                                      0, 0, 1, 0, 0, 2, 0, 1));
        json_object_set_new(bones, s->bones[idle].name, json_pack("{s:[i,i,i]}", "position", 0, 1, 0));
        items[0] = body_of(json_pack("{s:o}", "bones", bones));
        compare_mixed(&f, (const char *const *)items, 5);
        free(items[0]);
        done++;
      }
      for (size_t i = 1; i < 5; i++)
        free(items[i]);
    }
    sk_test_entry_close(&f);
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  ck_assert_uint_ge(done, 12);
}
END_TEST

/* One scratch answering request after request (as a pool thread does)
 * keeps the rest rows of a range between slices and requests only while
 * they are what the next slice writes: every answer is a fresh scratch's
 * bytes, across clips leaving other parts to the rest, blends, override
 * batches, the fast precision, short ranges and another skeleton. */
START_TEST(a_scratch_reused_across_requests_answers_as_a_fresh_one) {
  static const struct {
    int asset, prec;
    const char *body;
  } seq[] = {
      {0, 0, "{\"animation\": \"Walk\", \"from\": 0, \"to\": 5, \"fps\": 60, \"loop\": true}"},
      {0, 0, "{\"animation\": \"Walk\", \"from\": 1, \"to\": 2, \"fps\": 60, \"loop\": true}"},
      {0, 0, "{\"animation\": \"Survey\", \"from\": 0, \"to\": 4, \"fps\": 50}"},
      {0, 0, "{\"animation\": \"Walk\", \"from\": 0, \"to\": 5, \"fps\": 60, \"loop\": true}"},
      {0, 0, "{\"layers\": [{\"animation\": \"Walk\", \"weight\": 0.3}, {\"animation\": \"Run\", \"weight\": "
             "0.7, \"loop\": true}], \"from\": 0, \"to\": 4, \"fps\": 30}"},
      {0, 0, "{\"animation\": \"Walk\", \"from\": 0, \"to\": 5, \"fps\": 60, \"loop\": true}"},
      {0, 0, "{\"animation\": \"Walk\", \"from\": 0, \"to\": 4.25, \"fps\": 60, \"loop\": true}"},
      {0, 0, "{\"animation\": \"Walk\", \"from\": 0, \"to\": 4.25, \"fps\": 60, \"loop\": true, \"bones\": "
             "{\"b_Neck_04\": {\"scaling\": [2, 2, 2]}}}"},
      /* the same clip without "bones", in slices no longer than the last
       * one before (256 frames: two whole slices): the rest rows the
       * scaling covered must be written again */
      {0, 0, "{\"animation\": \"Walk\", \"from\": 0, \"to\": 4.25, \"fps\": 60, \"loop\": true}"},
      {0, 0, "{\"animation\": \"Walk\", \"from\": 0, \"to\": 4.25, \"fps\": 60, \"loop\": true, \"bones\": "
             "{\"b_Spine01_02\": {\"rotation\": [0.3, 0, 0]}, \"b_Neck_04\": {\"position\": [0, 9, 0]}}}"},
      {0, 0, "{\"animation\": \"Walk\", \"from\": 0, \"to\": 4.25, \"fps\": 60, \"loop\": true}"},
      {0, 1, "{\"animation\": \"Walk\", \"from\": 0, \"to\": 5, \"fps\": 60, \"loop\": true}"},
      {0, 0, "{\"animation\": \"Walk\", \"from\": 0.5, \"to\": 4, \"fps\": 60, \"loop\": true}"},
      {1, 0, "{\"animation\": \"Wave\", \"from\": 0, \"to\": 3, \"fps\": 64}"},
      {0, 0, "{\"animation\": \"Walk\", \"from\": 0, \"to\": 5, \"fps\": 60, \"loop\": true}"},
      {1, 0, "{\"animation\": \"Wave\", \"from\": 0, \"to\": 3, \"fps\": 64}"},
  };
  fixture f[2];
  sk_test_entry_open(&f[0], "Fox.glb");
  sk_test_entry_open(&f[1], "gltf/rig65.gltf");
  sk_frames_scratch shared = {0};
  for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
    const fixture *e = &f[seq[i].asset];
    const sk_frames_opts o = {.fmt = SK_FMT_F32, .precision = seq[i].prec};
    sk_poseops *owner;
    size_t n;
    sk_pose *poses = parse(e, sk_frames_sample_range, seq[i].body, o.fmt, &owner, &n);
    sk_strbuf got = {0}, want = {0};
    ck_assert_int_eq(sk_frames_eval(e->e->model, poses, n, &o, &shared, &got), 0);
    answer(e, poses, n, n, &o, &want);
    assert_same(&want, &got, "shared scratch", seq[i].body, o.fmt, n);
    sk_strbuf_free(&got);
    sk_strbuf_free(&want);
    sk_pose_array_free(poses, n);
    sk_poseops_free(owner);
  }
  /* The same clip after a rest value changed (a skeleton uploaded again
   * with another rest pose, same bones and clips): same count of rest
   * rows, one value differs, so the kept rows must be written again. One
   * slice (121 frames), so the second round would keep the first's rows. */
  const char *walk = "{\"animation\": \"Walk\", \"from\": 0, \"to\": 2, \"fps\": 60, \"loop\": true}";
  for (int round = 0; round < 2; round++) {
    const sk_frames_opts o = {.fmt = SK_FMT_F32};
    sk_poseops *owner;
    size_t n;
    sk_pose *poses = parse(&f[0], sk_frames_sample_range, walk, o.fmt, &owner, &n);
    ck_assert_ptr_nonnull(poses[0].range);
    if (round == 1) {
      sk_sample_rest row;
      ck_assert_uint_ge(sk_sample_ctx_rest(poses[0].range->ctx, &row, 1), 1);
      f[0].e->model->anim->rest[row.bone * SK_ANIM_TRS + row.comp] += 0.25;
    }
    sk_strbuf got = {0}, want = {0};
    ck_assert_int_eq(sk_frames_eval(f[0].e->model, poses, n, &o, &shared, &got), 0);
    answer(&f[0], poses, n, n, &o, &want);
    assert_same(&want, &got, "shared scratch, new rest value", walk, o.fmt, n);
    sk_strbuf_free(&got);
    sk_strbuf_free(&want);
    sk_pose_array_free(poses, n);
    sk_poseops_free(owner);
  }
  sk_frames_scratch_close(&shared);
  sk_test_entry_close(&f[0]);
  sk_test_entry_close(&f[1]);
}
END_TEST

/* Materialised frames are the override form's bytes (memcmp), in any
 * order; the poses hold far less than the overrides, and their shares
 * never undercount the range; closing in any order frees it once. */
START_TEST(materialised_frames_memory_and_lifetime) {
  fixture f;
  sk_test_entry_open(&f, "Fox.glb");
  const char *body = "{\"animation\": \"Walk\", \"from\": 0, \"to\": 4, \"fps\": 60, \"loop\": true}";
  sk_poseops *ol, *oe;
  size_t nl, ne;
  sk_pose *lazy = parse(&f, sk_frames_sample_range, body, SK_FMT_JSON, &ol, &nl);
  sk_pose *eager = parse(&f, sk_frames_sample_default, body, SK_FMT_JSON, &oe, &ne);
  ck_assert_uint_eq(nl, 241);
  const size_t nb = f.e->model->skel->count;
  sk_override *scratch = malloc(nb * sizeof *scratch);
  size_t held_lazy = 0, held_eager = 0;
  for (size_t s = 0; s < nl; s++) {
    size_t i = (s * 97) % nl; /* out of order: the cursors step back and forth */
    ck_assert_ptr_eq(lazy[i].range, lazy[0].range);
    ck_assert_uint_eq(lazy[i].frame, i);
    ck_assert_uint_eq(lazy[i].count, 0);
    ck_assert(lazy[i].frame_range);
    sk_pose v;
    sk_pose_materialize(&lazy[i], scratch, &v);
    ck_assert_uint_eq(v.count, eager[i].count);
    ck_assert_ptr_null(v.range);
    ck_assert_msg(memcmp(v.overrides, eager[i].overrides, nb * sizeof *scratch) == 0, "frame %zu", i);
    held_lazy += sk_pose_held_bytes(&lazy[i]);
    held_eager += sk_pose_held_bytes(&eager[i]);
  }
  ck_assert_uint_ge(held_lazy, lazy[0].range->bytes);
  ck_assert_uint_ge(held_eager, nl * nb * sizeof(sk_override));
  ck_assert_uint_lt(held_lazy * 4, held_eager);
  /* a pose without range form materialises to itself */
  sk_pose v;
  sk_pose_materialize(&eager[3], scratch, &v);
  ck_assert_ptr_eq(v.overrides, eager[3].overrides);
  free(scratch);
  ck_assert_uint_eq(lazy[0].range->refs, nl);
  for (size_t i = nl; i-- > 0;) /* last to first */
    sk_pose_close(&lazy[i]);
  free(lazy);
  sk_pose_array_free(eager, ne);
  sk_poseops_free(ol);
  sk_poseops_free(oe);
  sk_test_entry_close(&f);
}
END_TEST

/* The cache entry's anim carries a sampler of every clip, built at put;
 * its ranges hold it (a reference to the anim) instead of building one,
 * count none of its memory, and answer the bytes a private sampler gives
 * (the same asset imported again, never cached: it has no shared one). */
START_TEST(ranges_hold_the_entrys_shared_sampler) {
  fixture f;
  sk_test_entry_open(&f, "Fox.glb");
  sk_sampler *shared = sk_sampler_hold_shared(f.e->model->anim);
  ck_assert_ptr_nonnull(shared);
  ck_assert(sk_sampler_is_shared(shared));
  ck_assert_uint_ge(f.e->bytes, sk_anim_memory(f.e->model->anim) + sk_sampler_memory(shared));
  fixture bare = {0};
  sk_skeleton *s;
  sk_anim *an;
  sk_test_import_asset("Fox.glb", NULL, &s, &an);
  ck_assert_ptr_null(sk_sampler_hold_shared(an));
  const char *body = "{\"layers\": [{\"animation\": \"Walk\", \"weight\": 0.7, \"loop\": true}, {\"animation\": "
                     "\"Run\", \"weight\": 0.3, \"time\": 0.1, \"loop\": true}], \"from\": 0, \"to\": 2, \"fps\": 45}";
  sk_poseops *o1, *o2;
  size_t n1, n2;
  sk_pose *p1 = parse(&f, sk_frames_sample_range, body, SK_FMT_F32, &o1, &n1);
  ck_assert_ptr_nonnull(p1[0].range);
  ck_assert_ptr_eq(p1[0].range->sampler, shared);
  ck_assert_uint_lt(p1[0].range->bytes, sk_sampler_memory(shared));
  /* the same request on an entry of the uncached copy's skeleton and anim */
  ck_assert_int_eq(sk_cache_create(0, &bare.cache), 0);
  bool replaced;
  ck_assert_int_eq(sk_cache_put_full(bare.cache, "b", s, NULL, NULL, &replaced, &bare.e), 0);
  bare.e->model->anim = an; /* an entry whose anim has no shared sampler */
  sk_pose *p2 = parse(&bare, sk_frames_sample_range, body, SK_FMT_F32, &o2, &n2);
  ck_assert_ptr_nonnull(p2[0].range);
  ck_assert(!sk_sampler_is_shared(p2[0].range->sampler));
  ck_assert_uint_eq(n1, n2);
  const sk_frames_opts fo = {.fmt = SK_FMT_F32};
  sk_strbuf a = {0}, b = {0};
  answer(&f, p1, n1, 64, &fo, &a);
  answer(&bare, p2, n2, 64, &fo, &b);
  assert_same(&a, &b, "shared vs private sampler", body, SK_FMT_F32, 64);
  sk_strbuf_free(&a);
  sk_strbuf_free(&b);
  /* the poses outlive the entry: their hold keeps the anim and sampler */
  sk_sampler_destroy(shared);
  sk_test_entry_close(&f);
  sk_strbuf c = {0};
  answer(&bare, p1, n1, 16, &fo, &c);
  sk_strbuf_free(&c);
  sk_pose_array_free(p1, n1);
  sk_pose_array_free(p2, n2);
  sk_poseops_free(o1);
  sk_poseops_free(o2);
  bare.e->model->anim = NULL;
  sk_anim_destroy(an);
  sk_test_entry_close(&bare);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sk_pose_range");
  TCase *t = tcase_create("identity");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, a_range_answers_the_same_bytes_in_range_form_and_as_overrides);
  tcase_add_test(t, outputs_and_ops_that_need_overrides_get_the_same_bytes);
  tcase_add_test(t, user_overrides_on_a_range_give_the_override_forms_bytes);
  tcase_add_test(t, mixed_batches_give_the_override_forms_bytes);
  tcase_add_test(t, babylon_ranges_give_the_override_forms_bytes);
  tcase_add_test(t, babylon_ranges_keep_relative_zeros_linear_blends_and_later_channels);
  tcase_add_test(t, babylon_ranges_in_mixed_batches_give_the_override_forms_bytes);
  tcase_add_test(t, babylon_layer_ranges_give_the_override_forms_bytes);
  suite_add_tcase(s, t);
  TCase *l = tcase_create("lifecycle");
  tcase_add_test(l, materialised_frames_memory_and_lifetime);
  tcase_add_test(l, ranges_hold_the_entrys_shared_sampler);
  tcase_add_test(t, a_scratch_reused_across_requests_answers_as_a_fresh_one);
  suite_add_tcase(s, l);
  return s;
}

int main(void) { return sk_test_run(suite()); }
