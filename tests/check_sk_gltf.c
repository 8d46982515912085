/* sk_gltf: import of real and hand-made glTF files against Babylon.js's own
 * glTF loader (answers in tests/gltf/expected/, made by
 * tests/oracle/babylon_gltf.mjs), each malformed field -> its error and
 * JSON pointer, and a mutation fuzz over the real files.
 *
 * Agreement: every number of the rest-pose skinning matrices bit for bit
 * as float32, the sign of zero included. The animated
 * samples of the same files are checked by check_sk_anim. */
#include <stdint.h>

#include "sk_anim.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_testutil.h"

static const char *const k_expected[] = {"Fox",
                                         "CesiumMan",
                                         "RiggedSimple",
                                         "RiggedFigure",
                                         "SimpleSkin",
                                         "SimpleSkin-multi-target",
                                         "RobotExpressive",
                                         "mannequiny-0.3.0",
                                         "RecursiveSkeletons",
                                         "no_ibm",
                                         "nonjoint_between",
                                         "above_root",
                                         "mesh_transform",
                                         "cubic_step",
                                         "scales",
                                         "accessors",
                                         NULL};

static json_t *read_expected(const char *name) {
  char rel[512], path[1024];
  snprintf(rel, sizeof rel, "gltf/expected/%s.json", name);
  json_error_t je;
  json_t *j = json_load_file(sk_test_path(rel, path, sizeof path), 0, &je);
  ck_assert_msg(j != NULL, "%s: %s", path, je.text);
  return j;
}

static bool names_unique(const json_t *names) {
  for (size_t i = 0; i < json_array_size(names); i++)
    for (size_t k = 0; k < i; k++)
      if (strcmp(json_string_value(json_array_get(names, i)), json_string_value(json_array_get(names, k))) == 0)
        return false;
  return true;
}

/* ---- Babylon agreement: skeleton structure and rest pose ------------------- */

START_TEST(test_rest_pose_matches_babylon) {
  const char *name = k_expected[_i];
  json_t *exp = read_expected(name);
  size_t len;
  unsigned char *data = sk_test_read_asset(json_string_value(json_object_get(exp, "asset")), &len);
  sk_gltf *g;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_gltf_parse(data, len, &g, &err) == 0, "%s: %s at %s", name, err.text, err.pointer);
  const json_t *skins = json_object_get(exp, "skins");
  ck_assert_uint_gt(json_array_size(skins), 0);
  for (size_t k = 0; k < json_array_size(skins); k++) {
    const json_t *sk = json_array_get(skins, k);
    size_t skin = (size_t)json_integer_value(json_object_get(sk, "skin"));
    sk_skeleton *s;
    sk_anim *an;
    ck_assert_msg(sk_gltf_load_skin(g, skin, 0, &s, &an, &err) == 0, "%s skin %zu: %s at %s", name, skin, err.text,
                  err.pointer);
    const json_t *bones = json_object_get(sk, "bones"), *index = json_object_get(sk, "index");
    ck_assert_uint_eq(s->count, json_array_size(bones));
    bool unique = names_unique(bones);
    for (size_t b = 0; b < s->count; b++) {
      if (unique)
        ck_assert_str_eq(s->bones[b].name, json_string_value(json_array_get(bones, b)));
      ck_assert_int_eq(s->bones[b].index, json_integer_value(json_array_get(index, b)));
    }
    float *final = malloc(16 * (s->count + 1) * sizeof *final);
    sk_skeleton_compute_transforms(s, NULL, final);
    const json_t *want = json_object_get(sk, "rest");
    size_t n = 16 * (s->count + 1), bad = sk_test_final_mismatch(final, want, n);
    ck_assert_msg(bad == n, "%s skin %zu rest pose: float %zu is %.9g, Babylon %.9g", name, skin, bad,
                  bad < n ? (double)final[bad] : 0, json_number_value(json_array_get(want, bad)));
    /* Every clip Babylon built exists with Babylon's duration, to the bit. */
    const json_t *anims = json_object_get(sk, "animations");
    for (size_t a = 0; a < json_array_size(anims); a++) {
      const json_t *aj = json_array_get(anims, a);
      size_t clip;
      ck_assert_int_eq(sk_anim_find_clip(an, json_string_value(json_object_get(aj, "name")), &clip), 0);
      ck_assert_uint_eq(clip, (size_t)json_integer_value(json_object_get(aj, "animation")));
      const double end = json_number_value(json_object_get(aj, "end")), dur = sk_anim_clip_duration(an, clip);
      ck_assert_msg(dur == end, "%s clip %zu: duration %.17g, Babylon %.17g", name, clip, dur, end);
    }
    free(final);
    sk_skeleton_destroy(s);
    sk_anim_destroy(an);
  }
  printf("gltf rest %-24s skins %zu bit for bit\n", name, json_array_size(skins));
  sk_gltf_destroy(g);
  free(data);
  json_decref(exp);
}
END_TEST

/* ---- validity: each malformed field -> its pointer ------------------------- */

/* Sets the value at JSON pointer `ptr` (tokens are keys or array indices). */
static void patch(json_t *doc, const char *ptr, json_t *value) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", ptr);
  json_t *cur = doc;
  char *save, *tok = strtok_r(buf + 1, "/", &save);
  while (tok != NULL) {
    char *next = strtok_r(NULL, "/", &save);
    if (next == NULL) {
      if (json_is_array(cur))
        ck_assert_int_eq(json_array_set_new(cur, (size_t)atoi(tok), value), 0);
      else
        ck_assert_int_eq(json_object_set_new(cur, tok, value), 0);
      return;
    }
    cur = json_is_array(cur) ? json_array_get(cur, (size_t)atoi(tok)) : json_object_get(cur, tok);
    ck_assert_ptr_nonnull(cur);
    tok = next;
  }
}

static int import_json(const json_t *doc, const char *skin, sk_error *err) {
  char *text = json_dumps(doc, JSON_COMPACT);
  sk_skeleton *s;
  sk_anim *an;
  sk_error_clear(err);
  int rc = sk_gltf_import(text, strlen(text), skin, 0, &s, &an, err);
  free(text);
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
  return rc;
}

static json_t *load_doc(const char *rel) {
  char path[1024];
  json_error_t je;
  json_t *j = json_load_file(sk_test_path(rel, path, sizeof path), 0, &je);
  ck_assert_msg(j != NULL, "%s: %s", path, je.text);
  return j;
}

static const struct bad_field {
  const char *ptr;   /* field to patch in tests/data/gltf/accessors.gltf */
  const char *value; /* JSON text of the new value */
  int code;
  const char *want; /* expected error pointer */
} k_bad[] = {
    {"/accessors/0/count", "100", SK_EFORMAT, "/accessors/0/count"},
    {"/accessors/0/count", "0", SK_EFORMAT, "/accessors/0/count"},
    {"/accessors/0/count", "-3", SK_EFORMAT, "/accessors/0/count"},
    {"/accessors/0/count", "2000000000", SK_EFORMAT, "/accessors/0/count"},
    {"/accessors/0/byteOffset", "1000", SK_EFORMAT, "/accessors/0/byteOffset"},
    {"/accessors/0/byteOffset", "4", SK_EFORMAT, "/accessors/0/count"},
    {"/accessors/0/componentType", "5127", SK_EFORMAT, "/accessors/0/componentType"},
    {"/accessors/0/type", "\"MAT5\"", SK_EFORMAT, "/accessors/0/type"},
    {"/accessors/0/type", "\"VEC3\"", SK_EFORMAT, "/skins/0/inverseBindMatrices"},
    {"/accessors/0/normalized", "true", SK_EFORMAT, "/accessors/0/normalized"},
    {"/accessors/0/bufferView", "99", SK_EFORMAT, "/accessors/0/bufferView"},
    {"/bufferViews/0/byteLength", "100000", SK_EFORMAT, "/bufferViews/0/byteLength"},
    {"/bufferViews/0/byteOffset", "100000", SK_EFORMAT, "/bufferViews/0/byteOffset"},
    {"/bufferViews/0/byteOffset", "600", SK_EFORMAT, "/bufferViews/0/byteLength"},
    {"/bufferViews/0/buffer", "5", SK_EFORMAT, "/bufferViews/0/buffer"},
    {"/bufferViews/8/byteStride", "2", SK_EFORMAT, "/bufferViews/8/byteStride"},
    {"/bufferViews/8/byteStride", "4", SK_EFORMAT, "/bufferViews/8/byteStride"},
    {"/bufferViews/8/byteStride", "16", SK_EFORMAT, "/accessors/8/count"},
    {"/buffers/0/byteLength", "100000", SK_EFORMAT, "/buffers/0/byteLength"},
    {"/buffers/0/uri", "\"model.bin\"", SK_EFORMAT, "/buffers/0/uri"},
    {"/buffers/0/uri", "\"data:application/octet-stream;base64,@@@@\"", SK_EFORMAT, "/buffers/0/uri"},
    {"/buffers/0/uri", "\"data:application/octet-stream,abc\"", SK_EFORMAT, "/buffers/0/uri"},
    {"/skins/0/joints/1", "99", SK_EFORMAT, "/skins/0/joints/1"},
    {"/skins/0/joints/1", "0", SK_EFORMAT, "/skins/0/joints/1"},
    {"/skins/0/joints/1", "\"b\"", SK_EFORMAT, "/skins/0/joints/1"},
    {"/skins/0/joints", "[]", SK_EFORMAT, "/skins/0/joints"},
    {"/skins/0/skeleton", "42", SK_EFORMAT, "/skins/0/skeleton"},
    {"/skins/0/inverseBindMatrices", "42", SK_EFORMAT, "/skins/0/inverseBindMatrices"},
    {"/skins/0/inverseBindMatrices", "1", SK_EFORMAT, "/skins/0/inverseBindMatrices"},
    {"/accessors/10/sparse/count", "9", SK_EFORMAT, "/accessors/10/sparse/count"},
    {"/accessors/10/sparse/indices/componentType", "5123", SK_EFORMAT, "/accessors/10/sparse/indices"},
    {"/accessors/10/sparse/indices/componentType", "5126", SK_EFORMAT, "/accessors/10/sparse/indices/componentType"},
    {"/accessors/10/sparse/values/byteOffset", "8", SK_EFORMAT, "/accessors/10/sparse/count"},
    {"/accessors/10/sparse/indices/bufferView", "77", SK_EFORMAT, "/accessors/10/sparse/indices/bufferView"},
    {"/animations/0/samplers/0/output", "11", SK_EFORMAT, "/animations/0/samplers/0/output"},
    {"/animations/0/samplers/0/output", "9", SK_EFORMAT, "/animations/0/samplers/0/output"},
    {"/animations/0/samplers/0/input", "10", SK_EFORMAT, "/animations/0/samplers/0/input"},
    {"/animations/0/samplers/0/input", "99", SK_EFORMAT, "/animations/0/samplers/0/input"},
    {"/animations/0/samplers/0/interpolation", "\"SMOOTH\"", SK_EFORMAT, "/animations/0/samplers/0/interpolation"},
    {"/animations/0/samplers/0/interpolation", "\"CUBICSPLINE\"", SK_EFORMAT, "/animations/0/samplers/0/output"},
    {"/animations/0/channels/0/target/node", "77", SK_EFORMAT, "/animations/0/channels/0/target/node"},
    {"/animations/0/channels/0/sampler", "5", SK_EFORMAT, "/animations/0/channels/0/sampler"},
    {"/animations/0/channels/0/target", "3", SK_EFORMAT, "/animations/0/channels/0/target"},
    {"/nodes/1/rotation", "[0, 0, \"x\", 1]", SK_EFORMAT, "/nodes/1/rotation/2"},
    {"/nodes/1/translation", "[0, 1]", SK_EFORMAT, "/nodes/1/translation"},
    {"/nodes/1/scale", "[1e39, 1, 1]", SK_EFORMAT, "/nodes/1/scale/0"},
    {"/nodes/2/children", "[2]", SK_EFORMAT, "/nodes/2/children/0"},
    {"/nodes/2/children", "[9]", SK_EFORMAT, "/nodes/2/children/0"},
    {"/nodes/3/children", "[1]", SK_EFORMAT, "/nodes/3/children/0"},
    {"/nodes/2/children", "[0]", SK_EFORMAT, "/nodes/0/children"},
    {"/asset/version", "\"1.0\"", SK_EFORMAT, "/asset/version"},
};

START_TEST(test_bad_field) {
  const struct bad_field *c = &k_bad[_i];
  json_t *doc = load_doc("data/gltf/accessors.gltf");
  json_error_t je;
  json_t *v = json_loads(c->value, JSON_DECODE_ANY, &je);
  ck_assert_ptr_nonnull(v);
  patch(doc, c->ptr, v);
  sk_error err;
  int rc = import_json(doc, NULL, &err);
  ck_assert_msg(rc == c->code && err.code == c->code && strcmp(err.pointer, c->want) == 0,
                "%s = %s: got %s at \"%s\" (%s), want %s at \"%s\"", c->ptr, c->value, sk_errname(rc), err.pointer,
                err.text, sk_errname(c->code), c->want);
  json_decref(doc);
}
END_TEST

START_TEST(test_unmodified_document_imports) {
  json_t *doc = load_doc("data/gltf/accessors.gltf");
  sk_error err;
  ck_assert_int_eq(import_json(doc, NULL, &err), 0);
  json_decref(doc);
}
END_TEST

START_TEST(test_skin_selector) {
  json_t *doc = load_doc("data/gltf/accessors.gltf");
  char *text = json_dumps(doc, JSON_COMPACT);
  sk_skeleton *s;
  sk_anim *an;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_gltf_import(text, strlen(text), "upper", 0, &s, &an, &err), 0);
  ck_assert_uint_eq(s->count, 2); /* c's parent b is a joint of skin 1 too: b, c */
  ck_assert_str_eq(s->bones[0].name, "b");
  ck_assert_int_eq(s->bones[0].index, 1);
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
  ck_assert_int_eq(sk_gltf_import(text, strlen(text), "1", 0, &s, &an, &err), 0);
  ck_assert_uint_eq(s->count, 2);
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
  sk_error_clear(&err);
  ck_assert_int_eq(sk_gltf_import(text, strlen(text), "2", 0, &s, &an, &err), SK_ENOTFOUND);
  ck_assert_str_eq(err.pointer, "/skins");
  sk_error_clear(&err);
  ck_assert_int_eq(sk_gltf_import(text, strlen(text), "lower", 0, &s, &an, &err), SK_ENOTFOUND);
  sk_error_clear(&err);
  ck_assert_int_eq(sk_gltf_import(text, strlen(text), NULL, 2, &s, &an, &err), SK_ETOOBIG);
  ck_assert_str_eq(err.pointer, "/skins/0/joints");
  free(text);
  json_decref(doc);
}
END_TEST

START_TEST(test_duplicate_and_missing_names) {
  json_t *doc = load_doc("data/gltf/accessors.gltf");
  patch(doc, "/nodes/1/name", json_string("a"));
  json_object_del(json_array_get(json_object_get(doc, "nodes"), 2), "name");
  char *text = json_dumps(doc, JSON_COMPACT);
  sk_skeleton *s;
  sk_anim *an;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_gltf_import(text, strlen(text), NULL, 0, &s, &an, &err), 0);
  ck_assert_str_eq(s->bones[0].name, "a");
  ck_assert_str_eq(s->bones[1].name, "a#1");
  ck_assert_str_eq(s->bones[2].name, "joint2");
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
  free(text);
  json_decref(doc);
}
END_TEST

/* ---- GLB container ------------------------------------------------------------ */

static void put32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

static int import_bytes(const unsigned char *d, size_t n, sk_error *err) {
  sk_skeleton *s;
  sk_anim *an;
  sk_error_clear(err);
  int rc = sk_gltf_import(d, n, NULL, 0, &s, &an, err);
  if (rc == 0) {
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(an->bone_count, s->count);
  } else {
    ck_assert_ptr_null(s);
    ck_assert_ptr_null(an);
    ck_assert_int_eq(err->code, rc);
    ck_assert_int_ge(sk_error_http_status(rc), 400);
    ck_assert_int_lt(sk_error_http_status(rc), 500);
  }
  sk_skeleton_destroy(s);
  sk_anim_destroy(an);
  return rc;
}

START_TEST(test_glb_container_errors) {
  size_t len;
  unsigned char *orig = sk_test_read_file("data/RiggedSimple.glb", &len);
  ck_assert_ptr_nonnull(orig);
  unsigned char *d = malloc(len);
  sk_error err;
  ck_assert_int_eq(import_bytes(orig, len, &err), 0);
  /* Short header. */
  ck_assert_int_eq(import_bytes(orig, 11, &err), SK_EFORMAT);
  ck_assert_str_eq(err.pointer, "");
  /* Truncated body: the header's length is larger than what arrived. */
  ck_assert_int_eq(import_bytes(orig, len - 1, &err), SK_EFORMAT);
  ck_assert_msg(strstr(err.text, "truncated") != NULL, "%s", err.text);
  /* Version 1. */
  memcpy(d, orig, len);
  put32(d + 4, 1);
  ck_assert_int_eq(import_bytes(d, len, &err), SK_EFORMAT);
  /* First chunk not JSON. */
  memcpy(d, orig, len);
  put32(d + 16, 0x004E4942u);
  ck_assert_int_eq(import_bytes(d, len, &err), SK_EFORMAT);
  /* JSON chunk longer than the file. */
  memcpy(d, orig, len);
  put32(d + 12, (uint32_t)len);
  ck_assert_int_eq(import_bytes(d, len, &err), SK_EFORMAT);
  /* BIN chunk cut short, header length adjusted: its length overruns. */
  memcpy(d, orig, len);
  put32(d + 8, (uint32_t)(len - 64));
  ck_assert_int_eq(import_bytes(d, len - 64, &err), SK_EFORMAT);
  ck_assert_str_eq(err.pointer, "");
  /* BIN chunk shorter than buffers[0].byteLength. */
  memcpy(d, orig, len);
  uint32_t jlen = (uint32_t)d[12] | (uint32_t)d[13] << 8 | (uint32_t)d[14] << 16 | (uint32_t)d[15] << 24;
  size_t bin_at = 20 + jlen;
  uint32_t blen = (uint32_t)d[bin_at] | (uint32_t)d[bin_at + 1] << 8 | (uint32_t)d[bin_at + 2] << 16 |
                  (uint32_t)d[bin_at + 3] << 24;
  put32(d + bin_at, blen - 64);
  put32(d + 8, (uint32_t)(len - 64));
  ck_assert_int_eq(import_bytes(d, len - 64, &err), SK_EFORMAT);
  ck_assert_str_eq(err.pointer, "/buffers/0/byteLength");
  /* Not JSON at all. */
  ck_assert_int_eq(import_bytes((const unsigned char *)"hello", 5, &err), SK_EFORMAT);
  ck_assert_int_eq(import_bytes((const unsigned char *)"[1]", 3, &err), SK_EFORMAT);
  ck_assert_int_eq(import_bytes((const unsigned char *)"", 0, &err), SK_EFORMAT);
  free(d);
  free(orig);
}
END_TEST

/* ---- fuzz: flipped bytes and truncations never crash ------------------------ */

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static const char *const k_fuzz_files[] = {"data/RiggedSimple.glb",
                                           "data/SimpleSkin.gltf",
                                           "data/Fox.glb",
                                           "data/RiggedFigure.glb",
                                           "data/gltf/accessors.gltf",
                                           "data/gltf/cubic_step.gltf",
                                           NULL};

START_TEST(test_fuzz_mutations) {
  const char *rel = k_fuzz_files[_i];
  size_t len;
  unsigned char *orig = sk_test_read_file(rel, &len);
  ck_assert_ptr_nonnull(orig);
  unsigned char *d = malloc(len);
  const char *it = getenv("SK_FUZZ_ITERS");
  long iters = it != NULL ? atol(it) : 1500;
  uint64_t seed = 0x9E3779B97F4A7C15ull ^ (uint64_t)_i;
  /* The structure lives in the JSON: aim half of the flips at its bytes. */
  size_t json_end = len;
  if (len > 20 && orig[0] == 'g' && orig[1] == 'l')
    json_end = 20 + ((size_t)orig[12] | (size_t)orig[13] << 8 | (size_t)orig[14] << 16);
  long ok = 0, rejected = 0;
  for (long k = 0; k < iters; k++) {
    memcpy(d, orig, len);
    size_t n = len;
    uint64_t r = rng_next(&seed);
    if (r % 8 == 0) {
      n = (size_t)(rng_next(&seed) % len); /* truncation */
    } else {
      int flips = 1 + (int)(r >> 8) % 8;
      for (int f = 0; f < flips; f++) {
        uint64_t x = rng_next(&seed);
        size_t at = (x & 1) ? (size_t)((x >> 1) % json_end) : (size_t)((x >> 1) % len);
        d[at] ^= (unsigned char)(1u << ((x >> 40) % 8));
      }
    }
    sk_skeleton *s;
    sk_anim *an;
    sk_error err;
    sk_error_clear(&err);
    int rc = sk_gltf_import(d, n, NULL, 0, &s, &an, &err);
    if (rc == 0) {
      ok++;
      /* A model that imports must also sample and evaluate. */
      double *trs = malloc(an->bone_count * SK_ANIM_TRS * sizeof *trs);
      sk_override *o = malloc((an->bone_count ? an->bone_count : 1) * sizeof *o);
      float *locals = malloc(16 * (s->count + 1) * sizeof *locals);
      float *scratch = malloc(16 * (s->count + 1) * sizeof *scratch);
      float *final = malloc(16 * (s->count + 1) * sizeof *final);
      for (size_t c = 0; c < an->clip_count; c++) {
        sk_anim_sample(an, c, 0.37, false, trs);
        sk_anim_sample(an, c, 1e9, true, trs);
        sk_anim_to_overrides(an, trs, o);
        sk_skeleton_pose_locals(s, o, an->bone_count, locals);
        sk_skeleton_evaluate(s, locals, NULL, scratch, final, NULL, NULL);
      }
      free(trs);
      free(o);
      free(locals);
      free(scratch);
      free(final);
      sk_skeleton_destroy(s);
      sk_anim_destroy(an);
    } else {
      rejected++;
      ck_assert_ptr_null(s);
      ck_assert_ptr_null(an);
      ck_assert_msg(rc == SK_EFORMAT || rc == SK_ENOTFOUND || rc == SK_ETOOBIG, "%s: unexpected %s (%s at %s)", rel,
                    sk_errname(rc), err.text, err.pointer);
      ck_assert_int_eq(err.code, rc);
      ck_assert_msg(err.text[0] != '\0', "error without a message");
    }
  }
  printf("gltf fuzz %-28s %ld mutations: %ld imported, %ld rejected\n", rel, iters, ok, rejected);
  free(d);
  free(orig);
}
END_TEST

/* What a memory budget reserves before the parse: the JSON tree (of the
 * GLB JSON chunk, not of the whole container), each data: URI's string and
 * decoded bytes, the BIN chunk twice (the container's copy, buffer 0's). */
START_TEST(test_parse_bound_covers_the_tree_the_data_uris_and_the_bin_chunk) {
  const char head[] = "{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"byteLength\":3,\"uri\":"
                      "\"data:application/octet-stream;base64,";
  size_t enc = 1u << 20, len = sizeof head - 1 + enc + 4;
  char *doc = malloc(len + 1);
  memcpy(doc, head, sizeof head - 1);
  memset(doc + sizeof head - 1, 'A', enc);
  memcpy(doc + sizeof head - 1 + enc, "\"}]}", 5);
  size_t bound = sk_gltf_parse_bound(doc, len);
  ck_assert_uint_ge(bound, sk_json_tree_bound(doc, len) + enc / 4 * 3);
  /* a {}-list: ~80x its size as a tree, and the bound says so */
  size_t n = 100000, blen = 2 + 3 * n;
  char *bomb = malloc(blen + 1);
  bomb[0] = '[';
  for (size_t i = 0; i < n; i++)
    memcpy(bomb + 1 + 3 * i, i ? ",{}" : " {}", 3);
  bomb[blen - 1] = ']';
  ck_assert_uint_ge(sk_gltf_parse_bound(bomb, blen), 80 * blen);
  /* a GLB: its JSON chunk as the tree, plus twice the rest */
  size_t jlen = (len + 3) & ~(size_t)3, bin = 4096, total = 20 + jlen + 8 + bin;
  unsigned char *glb = calloc(1, total);
  const uint32_t words[5] = {0x46546C67u, 2, (uint32_t)total, (uint32_t)jlen, 0x4E4F534Au};
  for (int w = 0; w < 5; w++)
    for (int k = 0; k < 4; k++)
      glb[4 * w + k] = (unsigned char)(words[w] >> (8 * k));
  memset(glb + 20, ' ', jlen);
  memcpy(glb + 20, doc, len);
  ck_assert_uint_ge(sk_gltf_parse_bound(glb, total), bound + 2 * bin);
  ck_assert_uint_lt(sk_gltf_parse_bound(glb, total), bound + 2 * (bin + 8) + 4096);
  free(glb);
  free(bomb);
  free(doc);
}
END_TEST

static Suite *gltf_suite(void) {
  Suite *s = suite_create("sk_gltf");
  TCase *t = tcase_create("babylon");
  size_t n = 0;
  while (k_expected[n] != NULL)
    n++;
  tcase_add_loop_test(t, test_rest_pose_matches_babylon, 0, (int)n);
  suite_add_tcase(s, t);
  t = tcase_create("validity");
  tcase_add_loop_test(t, test_bad_field, 0, (int)(sizeof k_bad / sizeof k_bad[0]));
  tcase_add_test(t, test_unmodified_document_imports);
  tcase_add_test(t, test_skin_selector);
  tcase_add_test(t, test_duplicate_and_missing_names);
  tcase_add_test(t, test_glb_container_errors);
  tcase_add_test(t, test_parse_bound_covers_the_tree_the_data_uris_and_the_bin_chunk);
  suite_add_tcase(s, t);
  t = tcase_create("fuzz");
  tcase_set_timeout(t, 600);
  n = 0;
  while (k_fuzz_files[n] != NULL)
    n++;
  tcase_add_loop_test(t, test_fuzz_mutations, 0, (int)n);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(gltf_suite()); }
