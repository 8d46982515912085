#include "sk_record.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sk_error.h"
#include "sk_hash.h"

/* Version 2 (proto/record.md has the same table):
 *   record:   magic "SKREC\0" (6) | version u16 | flags u32 (bit 0: with a mesh part; bit 1: the
 *             source is Babylon skeleton JSON text, not glTF) | skin length u32 | glTF length u64 |
 *             skin | glTF | skeleton part | [mesh part: length u32 | the default mesh's JSON text] |
 *             CRC-32 u32 of all before it
 *   skeleton: bone count u32 | names size u32 | bone size u32 (556) | names | bones
 *   bone:     name offset u32 | parent i32 | index i32 | input position i32 |
 *             flags u32 (bit 0 has length, bit 1 TRS cache stale) | length f64 |
 *             local f32[16] | scaling f64[3] | rotation f64[4] | position f64[3] |
 *             bind, rest, abs bind, abs inverse bind, absolute, world f32[16] each */
static const char k_magic[6] = {'S', 'K', 'R', 'E', 'C', '\0'};
enum { SKEL_HEADER = 12, FLAG_HAS_LENGTH = 1u << 0, FLAG_NEED_DECOMPOSE = 1u << 1 };
/* Record header flags: bit 0, a mesh part follows the skeleton part. */
enum { FLAG_RECORD_MESH = 1u << 0 };

/* ---- little-endian fields ------------------------------------------------------------ */

static void le_put(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t le_get(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* Floats travel as their bit patterns: -0, NaN payloads and all. */
static void put_f32s(unsigned char *p, const float *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &v[i], 4);
    le_put(p + 4 * i, u, 4);
  }
}

static void put_f64s(unsigned char *p, const double *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t u;
    memcpy(&u, &v[i], 8);
    le_put(p + 8 * i, u, 8);
  }
}

static void get_f32s(const unsigned char *p, float *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t u = (uint32_t)le_get(p + 4 * i, 4);
    memcpy(&v[i], &u, 4);
  }
}

static void get_f64s(const unsigned char *p, double *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t u = le_get(p + 8 * i, 8);
    memcpy(&v[i], &u, 8);
  }
}

/* ---- version 2 ------------------------------------------------------------------------ */

static void encode_bone(const sk_bone *b, uint32_t name_off, unsigned char *p) {
  le_put(p + 0, name_off, 4);
  le_put(p + 4, (uint32_t)b->parent, 4);
  le_put(p + 8, (uint32_t)b->index, 4);
  le_put(p + 12, (uint32_t)b->input_pos, 4);
  le_put(p + 16, (b->has_length ? FLAG_HAS_LENGTH : 0u) | (b->local.need_decompose ? FLAG_NEED_DECOMPOSE : 0u), 4);
  put_f64s(p + 20, &b->length, 1);
  put_f32s(p + 28, b->local.matrix, 16);
  put_f64s(p + 92, b->local.scaling, 3);
  put_f64s(p + 116, b->local.rotation, 4);
  put_f64s(p + 148, b->local.position, 3);
  const float *m[6] = {b->bind, b->rest, b->abs_bind, b->abs_inv_bind, b->absolute, b->world};
  for (int k = 0; k < 6; k++)
    put_f32s(p + 172 + 64 * k, m[k], 16);
}

/* The invariants the skeleton builder establishes on every value it takes
 * (sk_skeleton_build refuses a non-finite local matrix, bind, rest or
 * length): a record that breaks them was not written by a build, whatever
 * its checksum says, and would put NaN into every answer. 1 when broken. */
static int bone_not_finite(const sk_bone *b) {
  for (int i = 0; i < 16; i++)
    if (!isfinite(b->local.matrix[i]) || !isfinite(b->bind[i]) || !isfinite(b->rest[i]))
      return 1;
  return b->has_length && !isfinite(b->length);
}

/* 0, or 1 when the flags hold a bit no version-2 writer sets. */
static int decode_bone(const unsigned char *p, sk_bone *b, uint32_t *name_off) {
  memset(b, 0, sizeof *b);
  *name_off = (uint32_t)le_get(p + 0, 4);
  b->parent = (int32_t)(uint32_t)le_get(p + 4, 4);
  b->index = (int32_t)(uint32_t)le_get(p + 8, 4);
  b->input_pos = (int32_t)(uint32_t)le_get(p + 12, 4);
  uint32_t flags = (uint32_t)le_get(p + 16, 4);
  b->has_length = (flags & FLAG_HAS_LENGTH) != 0;
  b->local.need_decompose = (flags & FLAG_NEED_DECOMPOSE) != 0;
  get_f64s(p + 20, &b->length, 1);
  get_f32s(p + 28, b->local.matrix, 16);
  get_f64s(p + 92, b->local.scaling, 3);
  get_f64s(p + 116, b->local.rotation, 4);
  get_f64s(p + 148, b->local.position, 3);
  float *m[6] = {b->bind, b->rest, b->abs_bind, b->abs_inv_bind, b->absolute, b->world};
  for (int k = 0; k < 6; k++)
    get_f32s(p + 172 + 64 * k, m[k], 16);
  return (flags & ~(uint32_t)(FLAG_HAS_LENGTH | FLAG_NEED_DECOMPOSE)) != 0 || bone_not_finite(b);
}

int sk_record_skeleton_encode(const sk_skeleton *s, sk_strbuf *out) {
  if (s->count > UINT32_MAX || s->names_size > UINT32_MAX)
    return SK_EINVAL;
  unsigned char h[SKEL_HEADER];
  le_put(h, s->count, 4);
  le_put(h + 4, s->names_size, 4);
  le_put(h + 8, SK_RECORD_BONE, 4);
  if (sk_strbuf_append(out, (const char *)h, sizeof h) || sk_strbuf_append(out, s->names, s->names_size) ||
      sk_strbuf_reserve(out, s->count * SK_RECORD_BONE))
    return SK_ENOMEM;
  for (size_t i = 0; i < s->count; i++) {
    unsigned char b[SK_RECORD_BONE];
    encode_bone(&s->bones[i], (uint32_t)(s->bones[i].name - s->names), b);
    if (sk_strbuf_append(out, (const char *)b, sizeof b))
      return SK_ENOMEM;
  }
  return 0;
}

/* A decoder's bones and name offsets for `n` bones (both, or SK_ENOMEM
 * with neither). */
static int bones_alloc(size_t n, sk_bone **bones, uint32_t **off) {
  *bones = malloc((n ? n : 1) * sizeof **bones);
  *off = malloc((n ? n : 1) * sizeof **off);
  if (*bones != NULL && *off != NULL)
    return 0;
  free(*bones), free(*off);
  *bones = NULL, *off = NULL;
  return SK_ENOMEM;
}

int sk_record_skeleton_decode(const void *data, size_t len, size_t *used, sk_skeleton **out) {
  const unsigned char *p = data;
  *out = NULL;
  if (len < SKEL_HEADER)
    return SK_EFORMAT;
  uint64_t n = le_get(p, 4), names_size = le_get(p + 4, 4), bone_size = le_get(p + 8, 4);
  /* every length is checked against what is there before anything is allocated */
  if (bone_size != SK_RECORD_BONE || n > SK_SKELETON_MAX_BONES || names_size > len - SKEL_HEADER ||
      (len - SKEL_HEADER - names_size) / SK_RECORD_BONE < n)
    return SK_EFORMAT;
  const unsigned char *names = p + SKEL_HEADER, *q = names + names_size;
  sk_bone *bones;
  uint32_t *off;
  if (bones_alloc((size_t)n, &bones, &off) != 0)
    return SK_ENOMEM;
  int bad = 0;
  for (size_t i = 0; i < n; i++)
    bad |= decode_bone(q + i * SK_RECORD_BONE, &bones[i], &off[i]);
  int rc = SK_EFORMAT;
  if (bad)
    free(bones);
  else
    rc = sk_skeleton_assemble(bones, off, (size_t)n, (const char *)names, (size_t)names_size, out);
  free(off);
  if (rc == 0)
    *used = SKEL_HEADER + (size_t)names_size + (size_t)n * SK_RECORD_BONE;
  return rc;
}

int sk_record_encode(const sk_skeleton *s, const void *gltf, size_t gltf_len, const char *skin, sk_strbuf *out) {
  return sk_record_encode_full(s, gltf, gltf_len, skin, false, NULL, out);
}

int sk_record_encode_mesh(const sk_skeleton *s, const void *gltf, size_t gltf_len, const char *skin,
                          const char *mesh_json, sk_strbuf *out) {
  return sk_record_encode_full(s, gltf, gltf_len, skin, false, mesh_json, out);
}

int sk_record_encode_src(const sk_skeleton *s, const void *gltf, size_t gltf_len, const char *skin, bool json,
                         sk_strbuf *out) {
  return sk_record_encode_full(s, gltf, gltf_len, skin, json, NULL, out);
}

int sk_record_encode_full(const sk_skeleton *s, const void *gltf, size_t gltf_len, const char *skin, bool json,
                          const char *mesh_json, sk_strbuf *out) {
  return sk_record_encode_clips(s, gltf, gltf_len, skin, json, mesh_json, NULL, 0, out);
}

int sk_record_encode_clips(const sk_skeleton *s, const void *gltf, size_t gltf_len, const char *skin, bool json,
                           const char *mesh_json, const void *clips, size_t clips_len, sk_strbuf *out) {
  if (clips == NULL)
    clips_len = 0;
  size_t skin_len = skin != NULL ? strlen(skin) : 0;
  size_t mesh_len = mesh_json != NULL ? strlen(mesh_json) : 0;
  if (skin_len > SK_RECORD_SKIN_MAX || mesh_len > SK_RECORD_MESH_MAX)
    return SK_EINVAL;
  if (gltf == NULL)
    gltf_len = 0;
  size_t start = out->len;
  unsigned char h[SK_RECORD_HEADER];
  memcpy(h, k_magic, sizeof k_magic);
  le_put(h + 6, SK_RECORD_VERSION, 2);
  le_put(h + 8,
         (mesh_json != NULL ? FLAG_RECORD_MESH : 0u) | (json && gltf_len > 0 ? SK_RECORD_FLAG_JSON : 0u) |
             (clips_len > 0 ? SK_RECORD_FLAG_CLIPS : 0u),
         4);
  le_put(h + 12, skin_len, 4);
  le_put(h + 16, gltf_len, 8);
  if (sk_strbuf_append(out, (const char *)h, sizeof h) || sk_strbuf_append(out, skin, skin_len) ||
      sk_strbuf_append(out, gltf, gltf_len))
    return SK_ENOMEM;
  int rc = sk_record_skeleton_encode(s, out);
  if (rc)
    return rc;
  if (mesh_json != NULL) {
    unsigned char ml[4];
    le_put(ml, mesh_len, 4);
    if (sk_strbuf_append(out, (const char *)ml, sizeof ml) || sk_strbuf_append(out, mesh_json, mesh_len))
      return SK_ENOMEM;
  }
  if (clips_len > 0) {
    unsigned char cl[8];
    le_put(cl, clips_len, 8);
    if (sk_strbuf_append(out, (const char *)cl, sizeof cl) || sk_strbuf_append(out, clips, clips_len))
      return SK_ENOMEM;
  }
  unsigned char crc[4];
  le_put(crc, sk_hash_crc32(out->data + start, out->len - start), 4);
  return sk_strbuf_append(out, (const char *)crc, sizeof crc) ? SK_ENOMEM : 0;
}

static int decode_v2(const unsigned char *p, size_t len, sk_record *rec) {
  if (len < SK_RECORD_HEADER + 4 ||
      (le_get(p + 8, 4) & ~(uint64_t)(FLAG_RECORD_MESH | SK_RECORD_FLAG_JSON | SK_RECORD_FLAG_CLIPS)) != 0)
    return SK_EFORMAT;
  bool has_clips = (le_get(p + 8, 4) & SK_RECORD_FLAG_CLIPS) != 0;
  bool has_mesh = (le_get(p + 8, 4) & FLAG_RECORD_MESH) != 0;
  rec->json = (le_get(p + 8, 4) & SK_RECORD_FLAG_JSON) != 0;
  if ((uint32_t)le_get(p + len - 4, 4) != sk_hash_crc32(p, len - 4))
    return SK_EFORMAT;
  size_t body = len - 4; /* the CRC is last */
  uint64_t skin_len = le_get(p + 12, 4), gltf_len = le_get(p + 16, 8);
  size_t at = SK_RECORD_HEADER;
  if (skin_len > SK_RECORD_SKIN_MAX || skin_len > body - at || gltf_len > body - at - skin_len)
    return SK_EFORMAT;
  if (skin_len > 0) {
    if (memchr(p + at, '\0', (size_t)skin_len) != NULL)
      return SK_EFORMAT;
    if ((rec->skin = malloc((size_t)skin_len + 1)) == NULL)
      return SK_ENOMEM;
    memcpy(rec->skin, p + at, (size_t)skin_len);
    rec->skin[skin_len] = '\0';
  }
  at += (size_t)skin_len;
  if (rec->json && (gltf_len == 0 || skin_len > 0))
    return SK_EFORMAT; /* the writer sets the flag only for a text, without a selector */
  rec->gltf = gltf_len ? p + at : NULL;
  rec->gltf_len = (size_t)gltf_len;
  at += (size_t)gltf_len;
  size_t used;
  int rc = sk_record_skeleton_decode(p + at, body - at, &used, &rec->skel);
  if (rc)
    return rc;
  at += used;
  if (has_mesh) {
    if (body - at < 4)
      return SK_EFORMAT;
    uint64_t ml = le_get(p + at, 4);
    at += 4;
    if (ml == 0 || ml > SK_RECORD_MESH_MAX || ml > body - at || memchr(p + at, '\0', (size_t)ml) != NULL)
      return SK_EFORMAT;
    if ((rec->mesh_json = malloc((size_t)ml + 1)) == NULL)
      return SK_ENOMEM;
    memcpy(rec->mesh_json, p + at, (size_t)ml);
    rec->mesh_json[ml] = '\0';
    at += (size_t)ml;
  }
  if (has_clips) {
    if (body - at < 8)
      return SK_EFORMAT;
    uint64_t cl = le_get(p + at, 8);
    at += 8;
    if (cl == 0 || cl > body - at)
      return SK_EFORMAT;
    rec->clips = p + at, rec->clips_len = (size_t)cl;
    at += (size_t)cl;
  }
  return at != body ? SK_EFORMAT : 0; /* bytes nobody accounts for */
}

/* ---- version 1 -------------------------------------------------------------------------
 * record:   "SKREC001" | skin length u64 (with its NUL) | skin + NUL | glTF length u64 | glTF | snapshot
 * snapshot: "SKSNAP01" | bone size u32 (568) | local size u32 (152) | count u64 | names size u64 |
 *           names | per bone: name offset u64, then the 568-byte image of sk_bone as x86-64 and
 *           aarch64 laid it out (offsets below; the name pointer and padding are ignored). */
static const char k_v1_magic[8] = {'S', 'K', 'R', 'E', 'C', '0', '0', '1'};
static const char k_v1_snap[8] = {'S', 'K', 'S', 'N', 'A', 'P', '0', '1'};
enum {
  V1_SNAP_HEADER = 32,
  V1_BONE = 568,
  V1_LOCAL = 152,
  V1_PARENT = 8, V1_INDEX = 12, V1_INPUT_POS = 16, V1_HAS_LENGTH = 20, V1_LENGTH = 24,
  V1_MATRIX = 32, V1_SCALING = 96, V1_ROTATION = 120, V1_POSITION = 152, V1_NEED_DECOMPOSE = 176,
  V1_BIND = 184, /* then rest, abs bind, abs inverse bind, absolute, world: 64 bytes apart */
};

int sk_record_skeleton_decode_v1(const void *data, size_t len, size_t *used, sk_skeleton **out) {
  const unsigned char *p = data;
  *out = NULL;
  if (len < V1_SNAP_HEADER || memcmp(p, k_v1_snap, sizeof k_v1_snap) != 0 || le_get(p + 8, 4) != V1_BONE ||
      le_get(p + 12, 4) != V1_LOCAL)
    return SK_EFORMAT;
  uint64_t n = le_get(p + 16, 8), names_size = le_get(p + 24, 8);
  const size_t per = 8 + V1_BONE;
  if (n > SK_SKELETON_MAX_BONES || names_size > len - V1_SNAP_HEADER ||
      (len - V1_SNAP_HEADER - names_size) / per < n || names_size > UINT32_MAX)
    return SK_EFORMAT;
  const unsigned char *names = p + V1_SNAP_HEADER, *q = names + names_size;
  sk_bone *bones;
  uint32_t *off;
  if (bones_alloc((size_t)n, &bones, &off) != 0)
    return SK_ENOMEM;
  int bad = 0;
  for (size_t i = 0; i < n && !bad; i++, q += per) {
    uint64_t o = le_get(q, 8);
    const unsigned char *b = q + 8;
    sk_bone *x = &bones[i];
    memset(x, 0, sizeof *x);
    off[i] = o < names_size ? (uint32_t)o : UINT32_MAX; /* out of range: assemble refuses it */
    x->parent = (int32_t)(uint32_t)le_get(b + V1_PARENT, 4);
    x->index = (int32_t)(uint32_t)le_get(b + V1_INDEX, 4);
    x->input_pos = (int32_t)(uint32_t)le_get(b + V1_INPUT_POS, 4);
    /* bools were one byte, 0 or 1; anything else is not a record */
    bad |= b[V1_HAS_LENGTH] > 1 || b[V1_NEED_DECOMPOSE] > 1;
    x->has_length = b[V1_HAS_LENGTH] == 1;
    x->local.need_decompose = b[V1_NEED_DECOMPOSE] == 1;
    get_f64s(b + V1_LENGTH, &x->length, 1);
    get_f32s(b + V1_MATRIX, x->local.matrix, 16);
    get_f64s(b + V1_SCALING, x->local.scaling, 3);
    get_f64s(b + V1_ROTATION, x->local.rotation, 4);
    get_f64s(b + V1_POSITION, x->local.position, 3);
    float *m[6] = {x->bind, x->rest, x->abs_bind, x->abs_inv_bind, x->absolute, x->world};
    for (int k = 0; k < 6; k++)
      get_f32s(b + V1_BIND + 64 * k, m[k], 16);
    bad |= bone_not_finite(x);
  }
  int rc = SK_EFORMAT;
  if (bad)
    free(bones);
  else
    rc = sk_skeleton_assemble(bones, off, (size_t)n, (const char *)names, (size_t)names_size, out);
  free(off);
  if (rc == 0)
    *used = V1_SNAP_HEADER + (size_t)names_size + (size_t)n * per;
  return rc;
}

static int decode_v1(const unsigned char *p, size_t len, sk_record *rec) {
  size_t at = sizeof k_v1_magic;
  if (len < at + 16)
    return SK_EFORMAT;
  uint64_t n = le_get(p + at, 8);
  at += 8;
  if (n > len - at || n > SK_RECORD_SKIN_MAX + 1)
    return SK_EFORMAT;
  if (n > 0) { /* the writer kept the selector's NUL */
    if (p[at + n - 1] != '\0' || memchr(p + at, '\0', (size_t)n - 1) != NULL)
      return SK_EFORMAT;
    if ((rec->skin = malloc((size_t)n)) == NULL)
      return SK_ENOMEM;
    memcpy(rec->skin, p + at, (size_t)n);
  }
  at += (size_t)n;
  if (len - at < 8)
    return SK_EFORMAT;
  n = le_get(p + at, 8);
  at += 8;
  if (n > len - at)
    return SK_EFORMAT;
  rec->gltf = n ? p + at : NULL;
  rec->gltf_len = (size_t)n;
  at += (size_t)n;
  size_t used;
  int rc = sk_record_skeleton_decode_v1(p + at, len - at, &used, &rec->skel);
  if (rc == 0 && at + used != len)
    rc = SK_EFORMAT;
  return rc;
}

/* ---- either ---------------------------------------------------------------------------- */

int sk_record_decode(const void *data, size_t len, sk_record *rec) {
  const unsigned char *p = data;
  memset(rec, 0, sizeof *rec);
  int rc = SK_EFORMAT;
  if (len >= 8 && memcmp(p, k_v1_magic, sizeof k_v1_magic) == 0) {
    rec->version = 1;
    rc = decode_v1(p, len, rec);
  } else if (len >= 8 && memcmp(p, k_magic, sizeof k_magic) == 0 && le_get(p + 6, 2) == 2) {
    rec->version = 2;
    rc = decode_v2(p, len, rec);
  }
  if (rc)
    sk_record_clear(rec);
  return rc;
}

void sk_record_clear(sk_record *rec) {
  sk_skeleton_destroy(rec->skel);
  free(rec->skin);
  free(rec->mesh_json);
  memset(rec, 0, sizeof *rec);
}
