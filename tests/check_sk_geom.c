/* sk_geom: a glTF skin's skinned primitives as Babylon's loader keeps them,
 * and each refusal with its JSON pointer. The files are built here: two
 * joints, one skinned node, one mesh whose primitives hold float
 * attributes in one base64 buffer, so each case changes one number. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sk_geom.h"
#include "sk_gltf.h"
#include "sk_gltf_mesh.h"
#include "sk_testutil.h"

/* The attributes of the test primitive, 3 vertices (accessor order:
 * 0 POSITION, 1 NORMAL, 2 JOINTS_0, 3 WEIGHTS_0, 4 JOINTS_1, 5 WEIGHTS_1,
 * 6 target POSITION delta, 7 target NORMAL delta). */
typedef struct {
  float pos[9], nrm[9], j0[12], w0[12], j1[12], w1[12], dpos[9], dnrm[9];
  bool eight, targets;
  const char *mesh_extra; /* appended inside the mesh object, e.g. ",\"weights\":[0.5]" */
  const char *node_extra; /* appended inside the skinned node */
  unsigned second_prim_targets; /* a second primitive with this many targets (0: none) */
} spec;

static void default_spec(spec *s) {
  memset(s, 0, sizeof *s);
  const float pos[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, nrm[9] = {0, 0, 1, 0, 0, 1, 0, 0, 1};
  memcpy(s->pos, pos, sizeof pos);
  memcpy(s->nrm, nrm, sizeof nrm);
  for (int v = 0; v < 3; v++) {
    s->j0[4 * v] = 0;
    s->j0[4 * v + 1] = 1;
    s->w0[4 * v] = 0.75f;
    s->w0[4 * v + 1] = 0.25f;
  }
  for (int i = 0; i < 9; i++)
    s->dpos[i] = 0.5f;
}

static char *b64(const unsigned char *d, size_t n) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *o = malloc(4 * ((n + 2) / 3) + 1), *p = o;
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = d[i] << 16 | (i + 1 < n ? d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
    *p++ = t[v >> 18 & 63];
    *p++ = t[v >> 12 & 63];
    *p++ = i + 1 < n ? t[v >> 6 & 63] : '=';
    *p++ = i + 2 < n ? t[v & 63] : '=';
  }
  *p = 0;
  return o;
}

/* The glTF text of `s` (new; free). */
static char *build(const spec *s) {
  unsigned char buf[8 * 48];
  const float *parts[8] = {s->pos, s->nrm, s->j0, s->w0, s->j1, s->w1, s->dpos, s->dnrm};
  const size_t sizes[8] = {36, 36, 48, 48, 48, 48, 36, 36};
  size_t off[8], at = 0;
  for (int k = 0; k < 8; k++) {
    off[k] = at;
    memcpy(buf + at, parts[k], sizes[k]);
    at += sizes[k];
  }
  char *data = b64(buf, at);
  const char *types[8] = {"VEC3", "VEC3", "VEC4", "VEC4", "VEC4", "VEC4", "VEC3", "VEC3"};
  char acc[4096] = "", views[2048] = "";
  for (int k = 0; k < 8; k++) {
    char a[256], v[128];
    snprintf(a, sizeof a, "%s{\"bufferView\":%d,\"componentType\":5126,\"count\":3,\"type\":\"%s\"}", k ? "," : "", k,
             types[k]);
    snprintf(v, sizeof v, "%s{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu}", k ? "," : "", off[k], sizes[k]);
    strcat(acc, a);
    strcat(views, v);
  }
  char prim[512];
  snprintf(prim, sizeof prim,
           "{\"attributes\":{\"POSITION\":0,\"NORMAL\":1,\"JOINTS_0\":2,\"WEIGHTS_0\":3%s}%s}",
           s->eight ? ",\"JOINTS_1\":4,\"WEIGHTS_1\":5" : "",
           s->targets ? ",\"targets\":[{\"POSITION\":6,\"NORMAL\":7}]" : "");
  char second[256] = "";
  if (s->second_prim_targets > 0) {
    strcpy(second, ",{\"attributes\":{\"POSITION\":0,\"JOINTS_0\":2,\"WEIGHTS_0\":3},\"targets\":[");
    for (unsigned t = 0; t < s->second_prim_targets; t++)
      strcat(second, t ? ",{\"POSITION\":6}" : "{\"POSITION\":6}");
    strcat(second, "]}");
  }
  size_t cap = strlen(data) + 16384;
  char *out = malloc(cap);
  snprintf(out, cap,
           "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0,2]}],"
           "\"nodes\":[{\"name\":\"j0\",\"children\":[1],\"translation\":[0,1,0]},{\"name\":\"j1\",\"translation\":[0,1,0]},"
           "{\"name\":\"body\",\"mesh\":0,\"skin\":0%s}],"
           "\"skins\":[{\"joints\":[0,1]}],\"meshes\":[{\"primitives\":[%s%s]%s}],"
           "\"accessors\":[%s],\"bufferViews\":[%s],"
           "\"buffers\":[{\"byteLength\":%zu,\"uri\":\"data:application/octet-stream;base64,%s\"}]}",
           s->node_extra ? s->node_extra : "", prim, second, s->mesh_extra ? s->mesh_extra : "", acc, views, at, data);
  free(data);
  return out;
}

/* Builds the geometry of `s`: rc, and *geom (NULL unless 0). */
static int geom_of(const spec *s, sk_geom **geom, sk_error *err) {
  char *text = build(s);
  sk_gltf *g;
  sk_error_clear(err);
  int rc = sk_gltf_parse(text, strlen(text), &g, err);
  ck_assert_msg(rc == 0, "%s at %s", err->text, err->pointer);
  rc = sk_geom_build(g, 0, geom, err);
  sk_gltf_destroy(g);
  free(text);
  return rc;
}

static void expect_error(const spec *s, int code, const char *pointer) {
  sk_geom *geom = (sk_geom *)1;
  sk_error err;
  int rc = geom_of(s, &geom, &err);
  ck_assert_msg(rc == code, "rc %d (%s at %s), want %d", rc, err.text, err.pointer, code);
  ck_assert_ptr_null(geom);
  ck_assert_str_eq(err.pointer, pointer);
}

START_TEST(keeps_the_attributes_as_the_loader_does) {
  spec s;
  default_spec(&s);
  sk_geom *geom;
  sk_error err;
  ck_assert_int_eq(geom_of(&s, &geom, &err), 0);
  ck_assert_uint_eq(geom->nprims, 1);
  ck_assert_uint_eq(geom->vertices, 3);
  const sk_geom_prim *p = &geom->prims[0];
  ck_assert_uint_eq(p->mesh, 0);
  ck_assert_uint_eq(p->prim, 0);
  ck_assert_uint_eq(p->count, 3);
  ck_assert_uint_eq(p->influences, 4);
  ck_assert_ptr_nonnull(p->nrm);
  ck_assert_uint_eq(p->joints[1], 1);
  ck_assert(p->weights[0] == 0.75f && p->weights[1] == 0.25f && p->weights[2] == 0);
  ck_assert_uint_eq(p->ntargets, 0);
  ck_assert_uint_gt(geom->bytes, 3 * 3 * sizeof(float));
  sk_geom_unref(geom);
}
END_TEST

START_TEST(eight_influences_take_joints_1_and_weights_1) {
  spec s;
  default_spec(&s);
  s.eight = true;
  s.w0[0] = 0.5f;
  s.j1[2] = 1;
  s.w1[2] = 0.25f;
  sk_geom *geom;
  sk_error err;
  ck_assert_int_eq(geom_of(&s, &geom, &err), 0);
  const sk_geom_prim *p = &geom->prims[0];
  ck_assert_uint_eq(p->influences, 8);
  ck_assert(p->weights[6] == 0.25f);
  ck_assert_uint_eq(p->joints[6], 1);
  sk_geom_unref(geom);
}
END_TEST

/* Targets are base + delta rounded to float32 (the loader's sum); the
 * default influence is node.weights, else mesh.weights, else 0. */
START_TEST(targets_are_absolute_and_weights_default_from_node_then_mesh) {
  spec s;
  default_spec(&s);
  s.targets = true;
  s.dpos[0] = 0.1f;
  s.mesh_extra = ",\"weights\":[0.25]";
  sk_geom *geom;
  sk_error err;
  ck_assert_int_eq(geom_of(&s, &geom, &err), 0);
  const sk_geom_prim *p = &geom->prims[0];
  ck_assert_uint_eq(p->ntargets, 1);
  ck_assert(p->targets[0].pos[0] == 1.0f + 0.1f);
  ck_assert_ptr_nonnull(p->targets[0].nrm);
  ck_assert(p->influence[0] == 0.25);
  sk_geom_unref(geom);
  s.node_extra = ",\"weights\":[0.125]";
  ck_assert_int_eq(geom_of(&s, &geom, &err), 0);
  ck_assert(geom->prims[0].influence[0] == 0.125);
  sk_geom_unref(geom);
  s.node_extra = s.mesh_extra = NULL;
  ck_assert_int_eq(geom_of(&s, &geom, &err), 0);
  ck_assert(geom->prims[0].influence[0] == 0);
  sk_geom_unref(geom);
}
END_TEST

/* A joint past the skin with weight 0 is never read (Babylon skips it). */
START_TEST(zero_weight_joints_are_not_checked) {
  spec s;
  default_spec(&s);
  s.j0[3] = 200;
  sk_geom *geom;
  sk_error err;
  ck_assert_int_eq(geom_of(&s, &geom, &err), 0);
  ck_assert_uint_eq(geom->prims[0].joints[3], 0);
  sk_geom_unref(geom);
}
END_TEST

/* Babylon skins a vertex without weight to NaN: refused at WEIGHTS_0. */
START_TEST(a_vertex_without_weight_is_refused) {
  spec s;
  default_spec(&s);
  s.w0[8] = s.w0[9] = 0;
  expect_error(&s, SK_EFORMAT, "/accessors/3");
  sk_geom *geom;
  sk_error err;
  ck_assert_int_eq(geom_of(&s, &geom, &err), SK_EFORMAT);
  ck_assert_str_eq(err.text, "vertex 2 has no weight above 0: Babylon skins it by a zero matrix, to NaN");
  default_spec(&s);
  ck_assert_int_eq(geom_of(&s, &geom, &err), 0);
  ck_assert_int_eq(geom->prims[0].unweighted, -1);
  sk_geom_unref(geom);
}
END_TEST

START_TEST(refusals_name_the_accessor) {
  spec s;
  default_spec(&s);
  s.pos[4] = NAN;
  expect_error(&s, SK_EFORMAT, "/accessors/0");
  default_spec(&s);
  s.nrm[0] = INFINITY;
  expect_error(&s, SK_EFORMAT, "/accessors/1");
  default_spec(&s);
  s.j0[5] = 2; /* the skin has joints 0 and 1 */
  expect_error(&s, SK_EFORMAT, "/accessors/2");
  default_spec(&s);
  s.j0[1] = 0.5f;
  expect_error(&s, SK_EFORMAT, "/accessors/2");
  default_spec(&s);
  s.eight = true;
  s.j1[0] = 9;
  s.w1[0] = 1;
  expect_error(&s, SK_EFORMAT, "/accessors/4");
  default_spec(&s);
  s.targets = true;
  s.dpos[2] = NAN;
  expect_error(&s, SK_EFORMAT, "/accessors/6");
  default_spec(&s);
  s.targets = true;
  s.second_prim_targets = 2;
  expect_error(&s, SK_EFORMAT, "/meshes/0/primitives/1/targets");
}
END_TEST

START_TEST(refusals_say_what_is_wrong) {
  spec s;
  default_spec(&s);
  s.j0[5] = 7;
  sk_geom *geom;
  sk_error err;
  ck_assert_int_eq(geom_of(&s, &geom, &err), SK_EFORMAT);
  ck_assert_str_eq(err.text, "vertex 1: joint 7 with weight 0.25 is not one of the skin's 2 joints");
  default_spec(&s);
  s.pos[4] = NAN;
  ck_assert_int_eq(geom_of(&s, &geom, &err), SK_EFORMAT);
  ck_assert_str_eq(err.text, "element 1 holds a non-finite value");
}
END_TEST

/* Counted before it is read: the estimate covers what the build keeps, and
 * a limit below it is a 413 at the POSITION count. */
START_TEST(estimate_bounds_the_build_and_refuses_past_the_limit) {
  spec s;
  default_spec(&s);
  s.eight = true;
  s.targets = true;
  char *text = build(&s);
  sk_gltf *g;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_gltf_parse(text, strlen(text), &g, &err), 0);
  size_t bytes;
  ck_assert_int_eq(sk_geom_estimate(g, 0, 0, 0, &bytes, &err), 0);
  sk_geom *geom;
  ck_assert_int_eq(sk_geom_build(g, 0, &geom, &err), 0);
  ck_assert_uint_ge(bytes, geom->bytes);
  sk_geom_unref(geom);
  sk_error_clear(&err);
  ck_assert_int_eq(sk_geom_estimate(g, 0, 1000, 1000 + bytes - 1, &bytes, &err), SK_ETOOBIG);
  ck_assert_str_eq(err.pointer, "/accessors/0/count");
  sk_gltf_destroy(g);
  free(text);
}
END_TEST

/* skin_morph.glb (tests/data/gen): its animated weights are kept and counted
 * in the estimate with the rest. */
START_TEST(weights_channels_are_kept_and_estimated) {
  size_t len, bytes;
  unsigned char *d = sk_test_read_asset("skin_morph.glb", &len);
  sk_gltf *g;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_gltf_parse(d, len, &g, &err), 0);
  ck_assert_int_eq(sk_geom_estimate(g, 0, 0, 0, &bytes, &err), 0);
  sk_geom *geom;
  ck_assert_int_eq(sk_geom_build(g, 0, &geom, &err), 0);
  ck_assert_uint_gt(geom->nweights, 0);
  ck_assert_uint_gt(geom->prims[0].ntargets, 0);
  ck_assert_uint_eq(geom->weights[0].ntargets, geom->prims[0].ntargets);
  ck_assert(geom->weights[0].frames[0] == 0); /* padded from frame 0 or keyed there */
  ck_assert_uint_ge(bytes, geom->bytes);
  sk_geom_unref(geom);
  sk_gltf_destroy(g);
  free(d);
}
END_TEST

/* The import keeps it, and a file without a skinned node keeps none. */
START_TEST(import_extra_carries_the_geometry) {
  spec s;
  default_spec(&s);
  char *text = build(&s);
  sk_skeleton *sk;
  sk_anim *an;
  sk_gltf_extra x;
  size_t est;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_gltf_import_extra(text, strlen(text), NULL, 0, 0, &est, false, &sk, &an, &x, &err), 0);
  ck_assert_ptr_nonnull(x.geom);
  ck_assert_uint_eq(x.geom->vertices, 3);
  sk_gltf_extra_clear(&x);
  sk_skeleton_destroy(sk);
  sk_anim_destroy(an);
  free(text);
  size_t len;
  unsigned char *d = sk_test_read_asset("RecursiveSkeletons.glb", &len);
  ck_assert_int_eq(sk_gltf_import_extra(d, len, NULL, 0, 0, &est, false, &sk, &an, &x, &err), 0);
  sk_gltf_extra_clear(&x);
  sk_skeleton_destroy(sk);
  sk_anim_destroy(an);
  free(d);
}
END_TEST

START_TEST(refs_share_one_geometry) {
  spec s;
  default_spec(&s);
  sk_geom *geom;
  sk_error err;
  ck_assert_int_eq(geom_of(&s, &geom, &err), 0);
  ck_assert_ptr_eq(sk_geom_ref(geom), geom);
  sk_geom_unref(geom);
  ck_assert_int_eq(geom->refs, 1);
  sk_geom_unref(geom);
  sk_geom_unref(NULL);
  ck_assert_ptr_null(sk_geom_ref(NULL));
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_geom");
  TCase *golden = tcase_create("golden");
  tcase_add_test(golden, keeps_the_attributes_as_the_loader_does);
  tcase_add_test(golden, eight_influences_take_joints_1_and_weights_1);
  tcase_add_test(golden, targets_are_absolute_and_weights_default_from_node_then_mesh);
  tcase_add_test(golden, zero_weight_joints_are_not_checked);
  tcase_add_test(golden, a_vertex_without_weight_is_refused);
  tcase_add_test(golden, import_extra_carries_the_geometry);
  tcase_add_test(golden, weights_channels_are_kept_and_estimated);
  suite_add_tcase(s, golden);
  TCase *validity = tcase_create("validity");
  tcase_add_test(validity, refusals_name_the_accessor);
  tcase_add_test(validity, refusals_say_what_is_wrong);
  tcase_add_test(validity, estimate_bounds_the_build_and_refuses_past_the_limit);
  suite_add_tcase(s, validity);
  TCase *lifecycle = tcase_create("lifecycle");
  tcase_add_test(lifecycle, refs_share_one_geometry);
  suite_add_tcase(s, lifecycle);
  return sk_test_run(s);
}
