/* sk_usda and the point cache paths of sk_shot: the faces read from the
 * glTF (validity: modes other than triangles, indices that are not
 * SCALAR, each at its pointer), and the same bytes for every thread count
 * on a primitive big enough to be split (Fox's primitive repeated to 70k
 * vertices, with normals), in the raw point cache (positions with normals,
 * bounds, with the header: frames split over threads) and in USD ASCII (a
 * frame at a time: vertex ranges). tests/skinner_frames_usda.py
 * holds the numbers to skinnerd's. */
#include <jansson.h>

#include "sk_gltf_mesh.h"
#include "sk_kernel.h"
#include "sk_sample.h"
#include "sk_shot.h"
#include "sk_usda.h"

#include "sk_testutil.h"

typedef struct asset {
  sk_skeleton *s;
  sk_anim *an;
  sk_geom *geom;
} asset;

static void asset_open(const char *text, size_t len, asset *a) {
  sk_error err;
  sk_error_clear(&err);
  sk_gltf_extra x;
  size_t est;
  ck_assert_msg(sk_gltf_import_extra(text, len, NULL, 0, 0, &est, false, &a->s, &a->an, &x, &err) == 0, "%s at %s",
                err.text, err.pointer);
  a->geom = sk_geom_ref(x.geom);
  sk_gltf_extra_clear(&x);
  ck_assert_ptr_nonnull(a->geom);
}

static void asset_close(asset *a) {
  sk_geom_unref(a->geom);
  sk_anim_destroy(a->an);
  sk_skeleton_destroy(a->s);
}

/* SimpleSkin.gltf with primitive 0 changed by `edit`, through faces_read. */
static int faces_of_edited(const char *key, json_t *value, sk_error *err) {
  size_t len;
  unsigned char *d = sk_test_read_asset("SimpleSkin.gltf", &len);
  asset a;
  asset_open((const char *)d, len, &a);
  json_t *j = json_loadb((const char *)d, len, 0, NULL);
  ck_assert_ptr_nonnull(j);
  json_object_set_new(json_array_get(json_object_get(json_array_get(json_object_get(j, "meshes"), 0), "primitives"), 0),
                      key, value);
  char *text = json_dumps(j, JSON_COMPACT);
  sk_usda_faces f;
  int rc = sk_usda_faces_read(text, strlen(text), a.geom, &f, err);
  if (rc == 0)
    ck_assert_uint_eq(f.n, a.geom->nprims);
  sk_usda_faces_close(&f);
  free(text);
  json_decref(j);
  free(d);
  asset_close(&a);
  return rc;
}

START_TEST(faces_are_triangles_of_a_scalar_indices_accessor) {
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(faces_of_edited("mode", json_integer(4), &err), 0);
  ck_assert_int_eq(faces_of_edited("mode", json_integer(1), &err), SK_EFORMAT);
  ck_assert_str_eq(err.pointer, "/meshes/0/primitives/0/mode");
  ck_assert_str_eq(err.text, "USD export takes triangles (mode 4) only");
  sk_error_clear(&err);
  ck_assert_int_eq(faces_of_edited("indices", json_integer(1), &err), SK_EFORMAT); /* accessor 1: POSITION, VEC3 */
  ck_assert_str_eq(err.pointer, "/accessors/1");
  ck_assert_str_eq(err.text, "indices must be SCALAR, a multiple of 3 of them (triangles)");
  sk_error_clear(&err);
  ck_assert_int_eq(faces_of_edited("indices", json_string("0"), &err), SK_EFORMAT);
  ck_assert_str_eq(err.pointer, "/meshes/0/primitives/0/indices");
}
END_TEST

/* Fox's primitive repeated `times` over, with made-up normals and its own
 * runs: a primitive sk_shot splits over threads. Arrays owned by the
 * returned prim. */
static sk_geom_prim big_prim(const sk_geom_prim *p, uint32_t times) {
  sk_geom_prim b = *p;
  const size_t n = p->count, k = p->influences;
  b.count = (uint32_t)(n * times);
  b.pos = malloc(b.count * 3 * sizeof *b.pos);
  b.nrm = malloc(b.count * 3 * sizeof *b.nrm);
  b.joints = malloc(b.count * k * sizeof *b.joints);
  b.weights = malloc(b.count * k * sizeof *b.weights);
  ck_assert(b.pos != NULL && b.nrm != NULL && b.joints != NULL && b.weights != NULL);
  for (uint32_t t = 0; t < times; t++) {
    memcpy(b.pos + t * n * 3, p->pos, n * 3 * sizeof *b.pos);
    for (size_t i = 0; i < n * 3; i++)
      b.nrm[t * n * 3 + i] = p->pos[i] * 0.01f + (float)t;
    memcpy(b.joints + t * n * k, p->joints, n * k * sizeof *b.joints);
    memcpy(b.weights + t * n * k, p->weights, n * k * sizeof *b.weights);
  }
  b.order = NULL; /* p's runs are for p's vertices */
  b.runs = NULL;
  ck_assert_int_eq(sk_geom_prim_runs(&b), 0);
  return b;
}

/* The shot's bytes on `threads` threads (usda or raw). */
static char *shot_bytes(sk_shot *sh, unsigned threads, const sk_usda_faces *faces, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  ck_assert_ptr_nonnull(f);
  sh->threads = threads;
  ck_assert_int_eq(faces != NULL ? sk_usda_write(sh, faces, f) : sk_shot_write(sh, f), 0);
  fclose(f);
  return buf;
}

START_TEST(a_big_primitive_gives_the_same_bytes_on_any_thread_count) {
  size_t len;
  unsigned char *d = sk_test_read_asset("Fox.glb", &len);
  asset a;
  asset_open((const char *)d, len, &a);
  free(d);
  sk_geom_prim big = big_prim(&a.geom->prims[0], 41);
  ck_assert_uint_ge(big.count, SK_SHOT_THREADS_FROM);
  sk_geom g = {.refs = 1, .nprims = 1, .prims = &big, .vertices = big.count};
  sk_sampler *sp;
  sk_rig *rig;
  ck_assert_int_eq(sk_sampler_create(a.an, &sp), 0);
  ck_assert_int_eq(sk_rig_create(a.s, &rig), 0);
  sk_shot sh = {.skel = a.s, .sampler = sp, .rig = rig, .layers = {{.clip = 1, .weight = 1}}, .layer_count = 1,
                .fps = 24, .by_index = true, .first = 5, .frames = 3, .characters = 1, .floats_per_matrix = 16,
                .engine = SK_CLIPS_KERNEL, .output = SK_SHOT_VERTICES, .geom = &g, .anim = a.an, .normals = true,
                .header = true};
  uint32_t tri[3] = {0, 1, 2}, *idx[1] = {tri};
  size_t counts[1] = {3};
  const sk_usda_faces faces = {.n = 1, .indices = idx, .counts = counts};
  for (int form = 0; form < 3; form++) {
    sh.output = form == 1 ? SK_SHOT_BOUNDS : SK_SHOT_VERTICES;
    sh.normals = form != 1;
    sh.header = form != 2;
    size_t l1, ln;
    char *one = shot_bytes(&sh, 1, form == 2 ? &faces : NULL, &l1);
    if (form == 0) /* header, then 3 frames of positions and normals */
      ck_assert_uint_eq(l1, SK_POINTS_HEADER_BYTES + 16 + 3 * (size_t)big.count * 6 * 4);
    for (unsigned t = 2; t <= 3; t++) {
      char *many = shot_bytes(&sh, t, form == 2 ? &faces : NULL, &ln);
      ck_assert_uint_eq(ln, l1);
      ck_assert_msg(memcmp(one, many, l1) == 0, "form %d differs on %u threads", form, t);
      free(many);
    }
    free(one);
  }
  sk_rig_destroy(rig);
  sk_sampler_destroy(sp);
  free(big.pos);
  free(big.nrm);
  free(big.joints);
  free(big.weights);
  free(big.order);
  free(big.runs);
  asset_close(&a);
}
END_TEST

START_TEST(a_position_past_float32_is_refused_and_nothing_past_it_written) {
  size_t len;
  unsigned char *d = sk_test_read_asset("Fox.glb", &len);
  asset a;
  asset_open((const char *)d, len, &a);
  free(d);
  sk_geom_prim huge = big_prim(&a.geom->prims[0], 1);
  for (size_t i = 0; i < (size_t)huge.count * 3; i++)
    huge.pos[i] *= 3e38f; /* a skin matrix's scale or sum takes some past FLT_MAX */
  sk_geom g = {.refs = 1, .nprims = 1, .prims = &huge, .vertices = huge.count};
  sk_sampler *sp;
  ck_assert_int_eq(sk_sampler_create(a.an, &sp), 0);
  sk_shot sh = {.skel = a.s, .sampler = sp, .layers = {{.clip = 1, .weight = 1}}, .layer_count = 1, .fps = 24,
                .frames = 2, .characters = 1, .floats_per_matrix = 16, .engine = SK_CLIPS_EXACT,
                .output = SK_SHOT_VERTICES, .geom = &g, .anim = a.an};
  uint32_t tri[3] = {0, 1, 2}, *idx[1] = {tri};
  size_t counts[1] = {3};
  const sk_usda_faces faces = {.n = 1, .indices = idx, .counts = counts};
  char *buf = NULL;
  size_t blen = 0;
  FILE *f = open_memstream(&buf, &blen);
  ck_assert_int_eq(sk_usda_write(&sh, &faces, f), SK_ENOTFINITE);
  fclose(f);
  ck_assert_ptr_null(strstr(buf != NULL ? buf : "", "null")); /* no non-finite number printed */
  free(buf);
  sk_sampler_destroy(sp);
  free(huge.pos);
  free(huge.nrm);
  free(huge.joints);
  free(huge.weights);
  free(huge.order);
  free(huge.runs);
  asset_close(&a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_usda");
  TCase *v = tcase_create("validity");
  tcase_add_test(v, faces_are_triangles_of_a_scalar_indices_accessor);
  tcase_add_test(v, a_position_past_float32_is_refused_and_nothing_past_it_written);
  suite_add_tcase(s, v);
  TCase *t = tcase_create("threads");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, a_big_primitive_gives_the_same_bytes_on_any_thread_count);
  suite_add_tcase(s, t);
  return sk_test_run(s);
}
