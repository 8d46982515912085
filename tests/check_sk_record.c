/* sk_record: the stored skeleton format, both versions.
 *
 * TCases: "previous" (the version-1 records committed in
 * tests/data/records-v1 decode to exactly what version 1's own reader
 * restored, kept there as .expect), "golden" (the version-2 bytes at the
 * offsets proto/record.md gives), "round_trip" (encode then decode keeps
 * every bit), "validity" (each damaged or inconsistent record is
 * SK_EFORMAT, never a crash or a half-built skeleton). */
#include <stdint.h>

#include "sk_anim.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_record.h"
#include "sk_skeldump.h"
#include "sk_hash.h"
#include "sk_store.h"
#include "sk_testutil.h"

/* ---- helpers ------------------------------------------------------------------------ */

/* The payload of a store file (magic "SKSTOR1\n", u64 length, u32 CRC),
 * checked; a new buffer. */
static unsigned char *store_payload(const char *rel, size_t *len) {
  size_t n;
  unsigned char *f = sk_test_read_file(rel, &n);
  ck_assert_msg(f != NULL, "%s missing", rel);
  ck_assert_uint_ge(n, 20);
  ck_assert_mem_eq(f, "SKSTOR1\n", 8);
  uint64_t plen = 0;
  uint32_t crc = 0;
  for (int i = 0; i < 8; i++)
    plen |= (uint64_t)f[8 + i] << (8 * i);
  for (int i = 0; i < 4; i++)
    crc |= (uint32_t)f[16 + i] << (8 * i);
  ck_assert_uint_eq(plen, n - 20);
  ck_assert_uint_eq(crc, sk_hash_crc32(f + 20, n - 20));
  memmove(f, f + 20, n - 20);
  *len = n - 20;
  return f;
}

static void expect_dump(const sk_skeleton *s, const char *expect_rel) {
  size_t n;
  unsigned char *want = sk_test_read_file(expect_rel, &n);
  ck_assert_msg(want != NULL, "%s missing", expect_rel);
  sk_strbuf got = {0};
  sk_dump_skeleton(s, &got);
  ck_assert(!got.failed);
  ck_assert_uint_eq(got.len, n);
  ck_assert_msg(memcmp(got.data, want, n) == 0, "%s: a field differs", expect_rel);
  sk_strbuf_free(&got);
  free(want);
}

static sk_skeleton *json_skeleton(const char *text) {
  json_t *j;
  sk_skeleton *s;
  ck_assert_int_eq(sk_json_load(text, strlen(text), &j, NULL), 0);
  ck_assert_int_eq(sk_json_parse_skeleton(j, "", 0, &s, NULL), 0);
  json_decref(j);
  return s;
}

static void expect_same(const sk_skeleton *a, const sk_skeleton *b) {
  sk_strbuf da = {0}, db = {0};
  sk_dump_skeleton(a, &da);
  sk_dump_skeleton(b, &db);
  ck_assert_uint_eq(da.len, db.len);
  ck_assert(memcmp(da.data, db.data, da.len) == 0);
  sk_strbuf_free(&da);
  sk_strbuf_free(&db);
}

static const char *k_skel = "{\"bones\":[{\"name\":\"hips\"},{\"name\":\"spine\",\"parent\":\"hips\",\"position\":[0,1,0],"
                            "\"length\":1.5},{\"name\":\"nub\",\"parent\":\"spine\",\"index\":-1,"
                            "\"rotation\":[0.1,0.2,0.3],\"scaling\":[1,2,3]}]}";

/* ---- previous ----------------------------------------------------------------------- */

static const struct {
  const char *id, *skin;
  size_t bones;
  bool gltf;
} k_v1[] = {
    {"plain_json", NULL, 3, false},
    {"json-alpha", NULL, 4, false},
    {"simple.skin", NULL, 2, true},
    {"rigged_patched", "0", 2, true},
};

START_TEST(version_1_records_decode_to_what_version_1_restored_bit_for_bit) {
  for (size_t i = 0; i < sizeof k_v1 / sizeof k_v1[0]; i++) {
    char rel[256], expect[256];
    snprintf(rel, sizeof rel, "data/records-v1/%s.rec", k_v1[i].id);
    snprintf(expect, sizeof expect, "data/records-v1/%s.expect", k_v1[i].id);
    size_t len;
    unsigned char *p = store_payload(rel, &len);
    sk_record rec;
    ck_assert_int_eq(sk_record_decode(p, len, &rec), 0);
    ck_assert_uint_eq(rec.version, 1);
    ck_assert_uint_eq(rec.skel->count, k_v1[i].bones);
    expect_dump(rec.skel, expect);
    if (k_v1[i].skin == NULL)
      ck_assert_ptr_null(rec.skin);
    else
      ck_assert_str_eq(rec.skin, k_v1[i].skin);
    ck_assert_int_eq(rec.gltf != NULL, k_v1[i].gltf);
    if (rec.gltf != NULL) { /* the glTF file inside gives the clips back */
      sk_skeleton *fresh;
      sk_anim *anim;
      ck_assert_int_eq(sk_gltf_import(rec.gltf, rec.gltf_len, rec.skin, 0, &fresh, &anim, NULL), 0);
      ck_assert_uint_eq(fresh->count, rec.skel->count);
      ck_assert_uint_ge(anim->clip_count, 1);
      sk_skeleton_destroy(fresh);
      sk_anim_destroy(anim);
    }
    sk_record_clear(&rec);
    ck_assert_ptr_null(rec.skel);
    free(p);
  }
}
END_TEST

START_TEST(version_1_records_are_rewritten_as_version_2_with_the_same_bits) {
  for (size_t i = 0; i < sizeof k_v1 / sizeof k_v1[0]; i++) {
    char rel[256], expect[256];
    snprintf(rel, sizeof rel, "data/records-v1/%s.rec", k_v1[i].id);
    snprintf(expect, sizeof expect, "data/records-v1/%s.expect", k_v1[i].id);
    size_t len;
    unsigned char *p = store_payload(rel, &len);
    sk_record rec, again;
    ck_assert_int_eq(sk_record_decode(p, len, &rec), 0);
    sk_strbuf b = {0};
    ck_assert_int_eq(sk_record_encode(rec.skel, rec.gltf, rec.gltf_len, rec.skin, &b), 0);
    ck_assert_int_eq(sk_record_decode(b.data, b.len, &again), 0);
    ck_assert_uint_eq(again.version, 2);
    expect_dump(again.skel, expect);
    ck_assert_uint_eq(again.gltf_len, rec.gltf_len);
    if (rec.gltf != NULL)
      ck_assert_mem_eq(again.gltf, rec.gltf, rec.gltf_len);
    ck_assert_int_eq(again.skin == NULL, rec.skin == NULL);
    if (rec.skin != NULL)
      ck_assert_str_eq(again.skin, rec.skin);
    sk_record_clear(&again);
    sk_record_clear(&rec);
    sk_strbuf_free(&b);
    free(p);
  }
}
END_TEST

/* ---- golden ------------------------------------------------------------------------- */

static uint64_t le(const char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t)(unsigned char)p[i] << (8 * i);
  return v;
}

START_TEST(version_2_bytes_sit_where_the_documentation_says) {
  sk_skeleton *s = json_skeleton(k_skel);
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_record_encode(s, "GLTF", 4, "Armature", &b), 0);
  const char *p = b.data;
  ck_assert_mem_eq(p, "SKREC\0", 6);
  ck_assert_uint_eq(le(p + 6, 2), 2);     /* version */
  ck_assert_uint_eq(le(p + 8, 4), 0);     /* flags */
  ck_assert_uint_eq(le(p + 12, 4), 8);    /* skin length, no NUL */
  ck_assert_uint_eq(le(p + 16, 8), 4);    /* glTF length */
  ck_assert_mem_eq(p + 24, "Armature", 8);
  ck_assert_mem_eq(p + 32, "GLTF", 4);
  const char *k = p + 36; /* the skeleton part */
  ck_assert_uint_eq(le(k, 4), 3);                 /* bones */
  ck_assert_uint_eq(le(k + 4, 4), s->names_size); /* names */
  ck_assert_uint_eq(le(k + 8, 4), 556);           /* bytes per bone */
  ck_assert_mem_eq(k + 12, s->names, s->names_size);
  const char *bone = k + 12 + s->names_size;
  for (size_t i = 0; i < 3; i++, bone += 556) {
    const sk_bone *x = &s->bones[i];
    ck_assert_uint_eq(le(bone, 4), (uint64_t)(x->name - s->names));
    ck_assert_int_eq((int32_t)le(bone + 4, 4), x->parent);
    ck_assert_int_eq((int32_t)le(bone + 8, 4), x->index);
    ck_assert_int_eq((int32_t)le(bone + 12, 4), x->input_pos);
    ck_assert_uint_eq(le(bone + 16, 4), (x->has_length ? 1u : 0u) | (x->local.need_decompose ? 2u : 0u));
    uint64_t u;
    memcpy(&u, &x->length, 8);
    ck_assert_uint_eq(le(bone + 20, 8), u);
    uint32_t f;
    memcpy(&f, &x->local.matrix[13], 4);
    ck_assert_uint_eq(le(bone + 28 + 4 * 13, 4), f);
    memcpy(&u, &x->local.scaling[1], 8);
    ck_assert_uint_eq(le(bone + 92 + 8, 8), u);
    memcpy(&u, &x->local.rotation[3], 8);
    ck_assert_uint_eq(le(bone + 116 + 24, 8), u);
    memcpy(&u, &x->local.position[1], 8);
    ck_assert_uint_eq(le(bone + 148 + 8, 8), u);
    const float *m[6] = {x->bind, x->rest, x->abs_bind, x->abs_inv_bind, x->absolute, x->world};
    for (int j = 0; j < 6; j++) {
      memcpy(&f, &m[j][14], 4);
      ck_assert_uint_eq(le(bone + 172 + 64 * j + 4 * 14, 4), f);
    }
  }
  ck_assert_uint_eq((size_t)(bone - p) + 4, b.len);
  ck_assert_uint_eq(le(bone, 4), sk_hash_crc32(p, b.len - 4));
  /* a JSON skeleton: no selector, no glTF */
  sk_strbuf j = {0};
  ck_assert_int_eq(sk_record_encode(s, NULL, 0, NULL, &j), 0);
  ck_assert_uint_eq(le(j.data + 12, 4), 0);
  ck_assert_uint_eq(le(j.data + 16, 8), 0);
  ck_assert_uint_eq(j.len, 24 + 12 + s->names_size + 3 * 556 + 4);
  sk_strbuf_free(&j);
  sk_strbuf_free(&b);
  sk_skeleton_destroy(s);
}
END_TEST

/* ---- round trip --------------------------------------------------------------------- */

START_TEST(a_round_trip_keeps_every_bit_and_the_source) {
  sk_skeleton *s = json_skeleton(k_skel);
  sk_skeleton_prepare(s);
  /* a stale TRS cache and odd bit patterns must survive too */
  s->bones[0].local.need_decompose = true;
  s->bones[1].local.matrix[3] = -0.0f;
  s->bones[2].local.rotation[0] = -0.0;
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_record_encode(s, NULL, 0, "a skin", &b), 0);
  sk_record rec;
  ck_assert_int_eq(sk_record_decode(b.data, b.len, &rec), 0);
  ck_assert_uint_eq(rec.version, 2);
  expect_same(s, rec.skel);
  ck_assert_str_eq(rec.skin, "a skin");
  ck_assert_ptr_null(rec.gltf);
  /* and it answers the same: the base evaluation is identical */
  size_t n = s->count;
  float *w1 = malloc(16 * (2 * n + 1) * sizeof *w1), *w2 = malloc(16 * (2 * n + 1) * sizeof *w2);
  sk_skeleton_evaluate_base(s, w1, w1 + 16 * n);
  sk_skeleton_evaluate_base(rec.skel, w2, w2 + 16 * n);
  ck_assert(memcmp(w1, w2, 16 * (2 * n + 1) * sizeof *w1) == 0);
  free(w1);
  free(w2);
  sk_record_clear(&rec);
  sk_strbuf_free(&b);
  sk_skeleton_destroy(s);
}
END_TEST

/* A JSON skeleton's default mesh: flags bit 0 and a mesh part; without a
 * mesh the bytes are exactly sk_record_encode's (old readers still read them). */
START_TEST(a_mesh_part_round_trips_and_without_one_nothing_changes) {
  sk_skeleton *s = json_skeleton(k_skel);
  sk_skeleton_prepare(s);
  sk_strbuf a = {0}, b = {0}, m = {0};
  ck_assert_int_eq(sk_record_encode(s, NULL, 0, NULL, &a), 0);
  ck_assert_int_eq(sk_record_encode_mesh(s, NULL, 0, NULL, NULL, &b), 0);
  ck_assert_uint_eq(a.len, b.len);
  ck_assert(memcmp(a.data, b.data, a.len) == 0);
  const char *mesh = "{\"position\":[1,2,3],\"scaling\":[1,1,-1]}";
  ck_assert_int_eq(sk_record_encode_mesh(s, NULL, 0, NULL, mesh, &m), 0);
  ck_assert_uint_eq(m.len, a.len + 4 + strlen(mesh));
  ck_assert_uint_eq((unsigned char)m.data[8], 1); /* flags */
  sk_record rec;
  ck_assert_int_eq(sk_record_decode(m.data, m.len, &rec), 0);
  ck_assert_str_eq(rec.mesh_json, mesh);
  expect_same(s, rec.skel);
  sk_record_clear(&rec);
  ck_assert_int_eq(sk_record_decode(a.data, a.len, &rec), 0);
  ck_assert_ptr_null(rec.mesh_json);
  sk_record_clear(&rec);
  /* flags that promise a mesh part the bytes do not hold: not a record */
  a.data[8] = 1;
  uint32_t crc = sk_hash_crc32((const unsigned char *)a.data, a.len - 4);
  for (int i = 0; i < 4; i++)
    a.data[a.len - 4 + (size_t)i] = (char)(crc >> (8 * i));
  ck_assert_int_eq(sk_record_decode(a.data, a.len, &rec), SK_EFORMAT);
  /* an unknown flag bit: not a record */
  m.data[8] = 1 | 4;
  ck_assert_int_eq(sk_record_decode(m.data, m.len, &rec), SK_EFORMAT);
  sk_strbuf_free(&a);
  sk_strbuf_free(&b);
  sk_strbuf_free(&m);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(a_glb_skeleton_round_trips_with_its_file) {
  size_t glen;
  unsigned char *glb = sk_test_read_asset("RiggedSimple.glb", &glen);
  sk_skeleton *s;
  sk_anim *anim;
  ck_assert_int_eq(sk_gltf_import(glb, glen, NULL, 0, &s, &anim, NULL), 0);
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_record_encode(s, glb, glen, NULL, &b), 0);
  sk_record rec;
  ck_assert_int_eq(sk_record_decode(b.data, b.len, &rec), 0);
  expect_same(s, rec.skel);
  ck_assert_uint_eq(rec.gltf_len, glen);
  ck_assert_mem_eq(rec.gltf, glb, glen);
  sk_record_clear(&rec);
  sk_strbuf_free(&b);
  sk_skeleton_destroy(s);
  sk_anim_destroy(anim);
  free(glb);
}
END_TEST

/* ---- validity ----------------------------------------------------------------------- */

static sk_strbuf good_record(void) {
  sk_skeleton *s = json_skeleton(k_skel);
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_record_encode(s, NULL, 0, "skin", &b), 0);
  sk_skeleton_destroy(s);
  return b;
}

/* Rewrites the trailing CRC so a change reaches the field checks. */
static void fix_crc(sk_strbuf *b) {
  uint32_t c = sk_hash_crc32(b->data, b->len - 4);
  for (int i = 0; i < 4; i++)
    b->data[b->len - 4 + i] = (char)(c >> (8 * i));
}

static int decode_rc(const sk_strbuf *b, size_t len) {
  sk_record rec;
  int rc = sk_record_decode(b->data, len, &rec);
  if (rc)
    ck_assert_ptr_null(rec.skel);
  sk_record_clear(&rec);
  return rc;
}

/* Sets a u32 field at `at` and fixes the CRC. */
static int with_u32(size_t at, uint32_t v) {
  sk_strbuf b = good_record();
  for (int i = 0; i < 4; i++)
    b.data[at + i] = (char)(v >> (8 * i));
  fix_crc(&b);
  int rc = decode_rc(&b, b.len);
  sk_strbuf_free(&b);
  return rc;
}

/* A Babylon text with clips and a default mesh: both parts, both bits. */
START_TEST(a_text_source_and_a_mesh_part_round_trip_together) {
  sk_skeleton *s = json_skeleton(k_skel);
  static const char text[] = "{\"bones\":[{\"name\":\"r\",\"parentBoneIndex\":-1}]}";
  const char *mesh = "{\"position\":[1,2,3]}";
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_record_encode_full(s, text, sizeof text - 1, NULL, true, mesh, &b), 0);
  ck_assert_uint_eq((unsigned char)b.data[8], SK_RECORD_FLAG_JSON | 1u);
  sk_record rec;
  ck_assert_int_eq(sk_record_decode(b.data, b.len, &rec), 0);
  ck_assert(rec.json);
  ck_assert_mem_eq(rec.gltf, text, sizeof text - 1);
  ck_assert_str_eq(rec.mesh_json, mesh);
  expect_same(s, rec.skel);
  sk_record_clear(&rec);
  sk_strbuf_free(&b);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(a_babylon_text_source_round_trips_with_flags_bit_1) {
  sk_skeleton *s = json_skeleton(k_skel);
  static const char text[] = "{\"bones\":[{\"name\":\"r\",\"parentBoneIndex\":-1}]}";
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_record_encode_src(s, text, sizeof text - 1, NULL, true, &b), 0);
  ck_assert_uint_eq((unsigned char)b.data[8], SK_RECORD_FLAG_JSON); /* the flags word, little-endian */
  sk_record rec;
  ck_assert_int_eq(sk_record_decode(b.data, b.len, &rec), 0);
  ck_assert(rec.json);
  ck_assert_uint_eq(rec.gltf_len, sizeof text - 1);
  ck_assert_mem_eq(rec.gltf, text, sizeof text - 1);
  ck_assert_ptr_null(rec.skin);
  expect_same(s, rec.skel);
  sk_record_clear(&rec);
  /* any other flag bit is still a format error */
  b.data[8] = (char)(SK_RECORD_FLAG_JSON | 4);
  fix_crc(&b);
  ck_assert_int_eq(decode_rc(&b, b.len), SK_EFORMAT);
  sk_strbuf_free(&b);
  /* without a text the bit is not written: a plain JSON record as before */
  sk_strbuf c = {0};
  ck_assert_int_eq(sk_record_encode_src(s, NULL, 0, NULL, true, &c), 0);
  ck_assert_uint_eq((unsigned char)c.data[8], 0);
  sk_strbuf_free(&c);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(every_truncation_and_every_flipped_bit_is_a_format_error) {
  sk_strbuf b = good_record();
  ck_assert_int_eq(decode_rc(&b, b.len), 0);
  for (size_t n = 0; n < b.len; n++)
    ck_assert_int_eq(decode_rc(&b, n), SK_EFORMAT);
  for (size_t i = 0; i < b.len; i += 7) {
    b.data[i] ^= 0x10;
    ck_assert_int_eq(decode_rc(&b, b.len), SK_EFORMAT);
    b.data[i] ^= 0x10;
  }
  sk_strbuf_append(&b, "x", 1); /* a byte past the CRC */
  ck_assert_int_eq(decode_rc(&b, b.len), SK_EFORMAT);
  sk_strbuf_free(&b);
}
END_TEST

START_TEST(fields_out_of_range_are_format_errors_even_with_a_good_crc) {
  const size_t skel = 24 + 4; /* header + "skin" */
  sk_skeleton *s = json_skeleton(k_skel);
  const size_t names = s->names_size, bone0 = skel + 12 + names, bone1 = bone0 + 556;
  sk_skeleton_destroy(s);
  ck_assert_int_eq(with_u32(6, 3), SK_EFORMAT);                 /* version 3 (flags stay 0) */
  ck_assert_int_eq(with_u32(8, 1), SK_EFORMAT);                 /* record flags */
  ck_assert_int_eq(with_u32(12, 5), SK_EFORMAT);                /* skin length off by one */
  ck_assert_int_eq(with_u32(skel, 4), SK_EFORMAT);              /* bone count */
  ck_assert_int_eq(with_u32(skel, 2000000), SK_EFORMAT);        /* bone count past the maximum */
  ck_assert_int_eq(with_u32(skel + 4, (uint32_t)names + 1), SK_EFORMAT); /* names past the end */
  ck_assert_int_eq(with_u32(skel + 8, 568), SK_EFORMAT);        /* bone size */
  ck_assert_int_eq(with_u32(bone0, (uint32_t)names), SK_EFORMAT);     /* name offset past the names */
  ck_assert_int_eq(with_u32(bone0, (uint32_t)names - 1), SK_EFORMAT); /* an empty name (the last NUL) */
  ck_assert_int_eq(with_u32(bone1, 0), SK_EFORMAT);             /* two bones named "hips" */
  ck_assert_int_eq(with_u32(bone0 + 4, 1), SK_EFORMAT);         /* a parent after its child */
  ck_assert_int_eq(with_u32(bone1 + 4, (uint32_t)-2), SK_EFORMAT); /* parent -2 */
  ck_assert_int_eq(with_u32(bone1 + 8, 0), SK_EFORMAT);         /* slot 0 twice */
  ck_assert_int_eq(with_u32(bone1 + 8, 3), SK_EFORMAT);         /* slot past the count */
  ck_assert_int_eq(with_u32(bone1 + 16, 4), SK_EFORMAT);        /* a flag bit no writer sets */
  ck_assert_int_eq(with_u32(bone1 + 16, 3), 0);                 /* both known flags: fine */
  /* a NUL inside the selector */
  sk_strbuf b = good_record();
  b.data[25] = '\0';
  fix_crc(&b);
  ck_assert_int_eq(decode_rc(&b, b.len), SK_EFORMAT);
  sk_strbuf_free(&b);
}
END_TEST

/* Issue 31: a record with a recomputed CRC and a NaN in a local matrix was
 * served. What the skeleton builder refuses on upload (a non-finite local
 * matrix, bind or rest) is refused on decode too. */
START_TEST(non_finite_values_are_format_errors_even_with_a_good_crc) {
  const size_t skel = 24 + 4;
  sk_skeleton *s = json_skeleton(k_skel);
  const size_t bone1 = skel + 12 + s->names_size + 556;
  sk_skeleton_destroy(s);
  const uint32_t nan = 0x7fc00000u, inf = 0x7f800000u, ninf = 0xff800000u;
  ck_assert_int_eq(with_u32(bone1 + 28, nan), SK_EFORMAT);           /* local matrix [0] */
  ck_assert_int_eq(with_u32(bone1 + 28 + 4 * 13, inf), SK_EFORMAT);  /* local matrix translation */
  ck_assert_int_eq(with_u32(bone1 + 172 + 4 * 5, ninf), SK_EFORMAT); /* bind */
  ck_assert_int_eq(with_u32(bone1 + 236 + 4 * 15, nan), SK_EFORMAT); /* rest */
  ck_assert_int_eq(with_u32(bone1 + 28 + 4 * 13, 0x3f800000u), 0);   /* 1.0 there: fine */
}
END_TEST

START_TEST(a_selector_too_long_to_keep_is_refused_at_encode) {
  sk_skeleton *s = json_skeleton(k_skel);
  char *skin = malloc(SK_RECORD_SKIN_MAX + 2);
  memset(skin, 'a', SK_RECORD_SKIN_MAX + 1);
  skin[SK_RECORD_SKIN_MAX + 1] = 0;
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_record_encode(s, NULL, 0, skin, &b), SK_EINVAL);
  skin[SK_RECORD_SKIN_MAX] = 0;
  ck_assert_int_eq(sk_record_encode(s, NULL, 0, skin, &b), 0);
  sk_record rec;
  ck_assert_int_eq(sk_record_decode(b.data, b.len, &rec), 0);
  ck_assert_uint_eq(strlen(rec.skin), SK_RECORD_SKIN_MAX);
  sk_record_clear(&rec);
  sk_strbuf_free(&b);
  free(skin);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(version_1_records_damaged_anywhere_are_format_errors) {
  size_t len;
  unsigned char *p = store_payload("data/records-v1/json-alpha.rec", &len);
  sk_record rec;
  for (size_t n = 0; n < len; n += 3)
    ck_assert_int_eq(sk_record_decode(p, n, &rec), SK_EFORMAT);
  p[8 + 8 + 8 + 8] ^= 1; /* the snapshot's bone size (no selector, no glTF before it) */
  ck_assert_int_eq(sk_record_decode(p, len, &rec), SK_EFORMAT);
  free(p);
}
END_TEST

static Suite *record_suite(void) {
  Suite *s = suite_create("sk_record");
  TCase *t = tcase_create("previous");
  tcase_add_test(t, version_1_records_decode_to_what_version_1_restored_bit_for_bit);
  tcase_add_test(t, version_1_records_are_rewritten_as_version_2_with_the_same_bits);
  suite_add_tcase(s, t);
  t = tcase_create("golden");
  tcase_add_test(t, version_2_bytes_sit_where_the_documentation_says);
  suite_add_tcase(s, t);
  t = tcase_create("round_trip");
  tcase_add_test(t, a_round_trip_keeps_every_bit_and_the_source);
  tcase_add_test(t, a_glb_skeleton_round_trips_with_its_file);
  tcase_add_test(t, a_mesh_part_round_trips_and_without_one_nothing_changes);
  tcase_add_test(t, a_babylon_text_source_round_trips_with_flags_bit_1);
  tcase_add_test(t, a_text_source_and_a_mesh_part_round_trip_together);
  suite_add_tcase(s, t);
  t = tcase_create("validity");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, every_truncation_and_every_flipped_bit_is_a_format_error);
  tcase_add_test(t, fields_out_of_range_are_format_errors_even_with_a_good_crc);
  tcase_add_test(t, a_selector_too_long_to_keep_is_refused_at_encode);
  tcase_add_test(t, non_finite_values_are_format_errors_even_with_a_good_crc);
  tcase_add_test(t, version_1_records_damaged_anywhere_are_format_errors);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(record_suite()); }
