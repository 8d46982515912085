#include "sk_gltf.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_base64.h"
#include "sk_gltf_int.h"
#include "sk_json.h"
#include "sk_mat.h"

#define GLB_MAGIC 0x46546C67u /* "glTF" */
#define GLB_JSON 0x4E4F534Au
#define GLB_BIN 0x004E4942u

/* ---- errors and JSON access ----------------------------------------------- */


/* Pointer "/<a>/<i>[/<field>[/<j>]]"; field NULL stops, j < 0 skipped. */
const char *sk_gltf__mkptr(ptr_t *p, const char *a, size_t i, const char *field, long j) {
  p->buf[0] = '\0';
  sk_pointer_push(p->buf, sizeof p->buf, a);
  sk_pointer_push_index(p->buf, sizeof p->buf, i);
  if (field != NULL) {
    sk_pointer_push(p->buf, sizeof p->buf, field);
    if (j >= 0)
      sk_pointer_push_index(p->buf, sizeof p->buf, (size_t)j);
  }
  return p->buf;
}

/* dest = base + "/" + field; truncation-safe (pointers are cut, never overflow). */
void sk_gltf__joinp(char dest[SK_ERROR_POINTER_MAX], const char *base, const char *field) {
  size_t n = strnlen(base, SK_ERROR_POINTER_MAX - 1);
  memcpy(dest, base, n);
  dest[n] = '\0';
  sk_pointer_push(dest, SK_ERROR_POINTER_MAX, field);
}


/* Element `i` of top-level array `name`, which must be an object. */
int sk_gltf__get_item(const sk_gltf *g, const char *name, size_t i, const char *from_ptr, const json_t **out,
                      sk_error *err) {
  const json_t *arr = json_object_get(g->root, name);
  if (!json_is_array(arr) || i >= json_array_size(arr))
    return FAIL(from_ptr, "refers to %s %zu, but the file has %zu", name, i,
                json_is_array(arr) ? json_array_size(arr) : 0);
  const json_t *it = json_array_get(arr, i);
  if (!json_is_object(it)) {
    ptr_t p;
    return FAIL(sk_gltf__mkptr(&p, name, i, NULL, -1), "expected an object");
  }
  *out = it;
  return 0;
}

/* Optional non-negative integer field, at most `max`. */
int sk_gltf__get_uint(const json_t *obj, const char *key, const char *ptr_base, bool required, uint64_t dflt,
                      uint64_t max, uint64_t *out, bool *present, sk_error *err) {
  const json_t *v = json_object_get(obj, key);
  char p[SK_ERROR_POINTER_MAX];
  snprintf(p, sizeof p, "%s", ptr_base);
  sk_pointer_push(p, sizeof p, key);
  if (present != NULL)
    *present = v != NULL;
  if (v == NULL) {
    if (required)
      return FAIL(p, "required field \"%s\" is missing", key);
    *out = dflt;
    return 0;
  }
  if (!json_is_integer(v))
    return FAIL(p, "expected a non-negative integer");
  json_int_t x = json_integer_value(v);
  if (x < 0 || (uint64_t)x > max)
    return FAIL(p, "%lld is out of range [0, %llu]", (long long)x, (unsigned long long)max);
  *out = (uint64_t)x;
  return 0;
}

/* Reads exactly n finite numbers from obj[key] into dest (doubles). */
int sk_gltf__get_numbers(const json_t *obj, const char *key, const char *ptr_base, size_t n, double *dest, bool *present,
                         sk_error *err) {
  const json_t *v = json_object_get(obj, key);
  *present = v != NULL;
  if (v == NULL)
    return 0;
  char p[SK_ERROR_POINTER_MAX];
  snprintf(p, sizeof p, "%s", ptr_base);
  sk_pointer_push(p, sizeof p, key);
  if (!json_is_array(v) || json_array_size(v) != n)
    return FAIL(p, "expected an array of %zu numbers", n);
  for (size_t i = 0; i < n; i++) {
    const json_t *x = json_array_get(v, i);
    double d = json_number_value(x);
    if (!json_is_number(x) || !isfinite(d) || fabs(d) > 3.4028234663852886e38) {
      sk_pointer_push_index(p, sizeof p, i);
      return FAIL(p, "expected a finite number");
    }
    dest[i] = d;
  }
  return 0;
}

/* ---- container ---------------------------------------------------------- */

static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int parse_json_text(sk_gltf *g, const char *text, size_t len, sk_error *err) {
  /* Some exporters pad the JSON chunk with NULs instead of spaces. */
  while (len > 0 && (text[len - 1] == '\0' || text[len - 1] == ' '))
    len--;
  json_error_t je;
  g->root = json_loadb(text, len, 0, &je);
  if (g->root == NULL)
    return FAIL("", "glTF JSON: line %d, column %d: %s", je.line, je.column, je.text);
  if (!json_is_object(g->root))
    return FAIL("", "glTF JSON: expected an object at the top level");
  const json_t *asset = json_object_get(g->root, "asset");
  const char *ver = json_string_value(json_object_get(asset, "version"));
  if (!json_is_object(asset))
    return FAIL("/asset", "required object \"asset\" is missing");
  if (ver == NULL || strncmp(ver, "2.", 2) != 0)
    return FAIL("/asset/version", "only glTF 2.x is supported");
  return 0;
}

static int parse_glb(sk_gltf *g, const uint8_t *d, size_t len, sk_error *err) {
  if (len < 12)
    return FAIL("", "GLB: %zu bytes is shorter than the 12-byte header", len);
  uint32_t version = rd32(d + 4), total = rd32(d + 8);
  if (version != 2)
    return FAIL("", "GLB: container version %u; only 2 is supported", version);
  if (total > len)
    return FAIL("", "GLB: header says %u bytes but only %zu arrived (truncated)", total, len);
  if (total < 20)
    return FAIL("", "GLB: length %u leaves no room for the JSON chunk", total);
  size_t at = 12;
  uint32_t jlen = rd32(d + at), jtype = rd32(d + at + 4);
  if (jtype != GLB_JSON)
    return FAIL("", "GLB: the first chunk must be JSON (type 0x%08x)", jtype);
  if (jlen > total - at - 8)
    return FAIL("", "GLB: JSON chunk of %u bytes runs past the end (%u)", jlen, total);
  const uint8_t *json = d + at + 8;
  at += 8 + (size_t)jlen;
  /* Chunks are 4-byte aligned; unknown chunk types are skipped (spec). */
  at = (at + 3) & ~(size_t)3;
  while (at + 8 <= total) {
    uint32_t clen = rd32(d + at), ctype = rd32(d + at + 4);
    if (clen > total - at - 8)
      return FAIL("", "GLB: chunk at byte %zu of %u bytes runs past the end (%u)", at, clen, total);
    if (ctype == GLB_BIN && g->bin == NULL) {
      g->bin = malloc(clen ? clen : 1);
      if (g->bin == NULL)
        return sk_error_set(err, SK_ENOMEM, "", "out of memory for a %u-byte BIN chunk", clen);
      memcpy(g->bin, d + at + 8, clen);
      g->bin_len = clen;
    }
    at = (at + 8 + (size_t)clen + 3) & ~(size_t)3;
  }
  g->is_glb = true;
  return parse_json_text(g, (const char *)json, jlen, err);
}

size_t sk_gltf_parse_bound(const void *data, size_t len) {
  const uint8_t *d = data;
  const char *json = data;
  size_t jlen = len, bin = 0;
  if (len >= 20 && rd32(d) == GLB_MAGIC) {
    /* A GLB: the JSON chunk is the tree; everything after it may be a BIN
     * chunk, copied once for the container and once more for buffer 0. An
     * inconsistent header fails in parse_glb before anything is copied. */
    uint32_t j = rd32(d + 12);
    if (j <= len - 20) {
      json = (const char *)d + 20;
      jlen = j;
      bin = 2 * (len - 20 - j);
    }
  }
  /* Data URIs are strings of the JSON (their text counts in the tree), each
   * decoded to 3/4 of its length; the node table takes one slot per object. */
  size_t nodes = 0;
  for (size_t i = 0; i < jlen; i++)
    nodes += json[i] == '{';
  return sizeof(sk_gltf) + sk_json_tree_bound(json, jlen) + jlen / 4 * 3 + 3 + bin + nodes * sizeof(size_t) * 2;
}

static int decode_nodes(sk_gltf *g, sk_error *err);

int sk_gltf_parse(const void *data, size_t len, sk_gltf **out, sk_error *err) {
  *out = NULL;
  sk_gltf *g = calloc(1, sizeof *g);
  if (g == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  g->budget = SK_GLTF_READ_BUDGET;
  const uint8_t *d = data;
  int rc;
  if (len >= 4 && rd32(d) == GLB_MAGIC)
    rc = parse_glb(g, d, len, err);
  else
    rc = parse_json_text(g, (const char *)d, len, err);
  if (!rc) {
    const json_t *buffers = json_object_get(g->root, "buffers");
    if (buffers != NULL && !json_is_array(buffers))
      rc = FAIL("/buffers", "expected an array");
    g->buffer_count = json_array_size(buffers);
    if (!rc && (g->buffers = calloc(g->buffer_count ? g->buffer_count : 1, sizeof *g->buffers)) == NULL)
      rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  }
  if (!rc)
    rc = decode_nodes(g, err);
  if (rc) {
    sk_gltf_destroy(g);
    return rc;
  }
  *out = g;
  return 0;
}

void sk_gltf_destroy(sk_gltf *g) {
  if (g == NULL)
    return;
  for (size_t i = 0; i < g->buffer_count; i++)
    free(g->buffers[i].data);
  free(g->buffers);
  free(g->bin);
  free(g->parent);
  json_decref(g->root);
  free(g);
}

const json_t *sk_gltf_json(const sk_gltf *g) { return g->root; }

size_t sk_gltf_skin_count(const sk_gltf *g) { return json_array_size(json_object_get(g->root, "skins")); }

/* ---- buffers ---------------------------------------------------------------- */

static int resolve_buffer(sk_gltf *g, size_t i, const char *from_ptr, gltf_buffer **out, sk_error *err) {
  const json_t *b;
  int rc = sk_gltf__get_item(g, "buffers", i, from_ptr, &b, err);
  if (rc)
    return rc;
  gltf_buffer *gb = &g->buffers[i];
  *out = gb;
  if (gb->resolved)
    return 0;
  ptr_t p;
  const char *base = sk_gltf__mkptr(&p, "buffers", i, NULL, -1);
  uint64_t byte_length;
  if ((rc = sk_gltf__get_uint(b, "byteLength", base, true, 0, SIZE_MAX, &byte_length, NULL, err)))
    return rc;
  const json_t *uri = json_object_get(b, "uri");
  if (uri == NULL) {
    if (i != 0 || !g->is_glb || g->bin == NULL)
      return FAIL(base, "buffer has no \"uri\" and there is no GLB BIN chunk for it");
    if (byte_length > g->bin_len)
      return FAIL(sk_gltf__mkptr(&p, "buffers", i, "byteLength", -1), "byteLength %llu exceeds the BIN chunk (%zu bytes)",
                  (unsigned long long)byte_length, g->bin_len);
    gb->data = malloc(byte_length ? byte_length : 1);
    if (gb->data == NULL)
      return sk_error_set(err, SK_ENOMEM, base, "out of memory");
    memcpy(gb->data, g->bin, byte_length);
    gb->len = byte_length;
    gb->resolved = true;
    return 0;
  }
  const char *s = json_string_value(uri);
  const char *up = sk_gltf__mkptr(&p, "buffers", i, "uri", -1);
  if (s == NULL)
    return FAIL(up, "expected a string");
  if (strncmp(s, "data:", 5) != 0)
    return FAIL(up, "external buffer URIs are not supported: embed the data as a data: URI or send a GLB");
  const char *comma = strchr(s, ',');
  if (comma == NULL || comma - s < 12 || strncmp(comma - 7, ";base64", 7) != 0)
    return FAIL(up, "only base64 data: URIs are supported");
  size_t enc = json_string_length(uri) - (size_t)(comma + 1 - s);
  const size_t cap = sk_base64_decoded_max(enc);
  uint8_t *dec = malloc(cap + 1);
  if (dec == NULL)
    return sk_error_set(err, SK_ENOMEM, up, "out of memory");
  long got = sk_base64_decode(comma + 1, enc, SK_BASE64_PAD_TRIM, dec, cap);
  if (got < 0) {
    free(dec);
    return FAIL(up, "invalid base64 data");
  }
  const size_t dlen = (size_t)got;
  if (byte_length > dlen) {
    free(dec);
    return FAIL(sk_gltf__mkptr(&p, "buffers", i, "byteLength", -1), "byteLength %llu exceeds the %zu bytes of the data: URI",
                (unsigned long long)byte_length, dlen);
  }
  gb->data = dec;
  gb->len = byte_length;
  gb->resolved = true;
  return 0;
}

/* ---- nodes --------------------------------------------------------------- */

static int decode_nodes(sk_gltf *g, sk_error *err) {
  const json_t *nodes = json_object_get(g->root, "nodes");
  if (nodes != NULL && !json_is_array(nodes))
    return FAIL("/nodes", "expected an array");
  size_t n = json_array_size(nodes);
  if (n > INT32_MAX / 2)
    return sk_error_set(err, SK_ETOOBIG, "/nodes", "%zu nodes", n);
  g->node_count = n;
  g->parent = malloc((n ? n : 1) * sizeof *g->parent);
  if (g->parent == NULL)
    return sk_error_set(err, SK_ENOMEM, "/nodes", "out of memory");
  for (size_t i = 0; i < n; i++)
    g->parent[i] = -1;
  ptr_t p;
  for (size_t i = 0; i < n; i++) {
    const json_t *node = json_array_get(nodes, i);
    if (!json_is_object(node))
      return FAIL(sk_gltf__mkptr(&p, "nodes", i, NULL, -1), "expected an object");
    const json_t *ch = json_object_get(node, "children");
    if (ch == NULL)
      continue;
    if (!json_is_array(ch))
      return FAIL(sk_gltf__mkptr(&p, "nodes", i, "children", -1), "expected an array of node indices");
    for (size_t k = 0; k < json_array_size(ch); k++) {
      const json_t *c = json_array_get(ch, k);
      json_int_t ci = json_integer_value(c);
      if (!json_is_integer(c) || ci < 0 || (size_t)ci >= n)
        return FAIL(sk_gltf__mkptr(&p, "nodes", i, "children", (long)k), "expected a node index in [0, %zu)", n);
      if ((size_t)ci == i)
        return FAIL(sk_gltf__mkptr(&p, "nodes", i, "children", (long)k), "a node cannot be its own child");
      if (g->parent[ci] >= 0)
        return FAIL(sk_gltf__mkptr(&p, "nodes", i, "children", (long)k), "node %lld already has parent %d", (long long)ci,
                    g->parent[ci]);
      g->parent[ci] = (int32_t)i;
    }
  }
  /* Every node has at most one parent, so a walk up either reaches a root
   * within n steps or loops. Marking finished nodes keeps this linear. */
  uint8_t *done = calloc(n ? n : 1, 1);
  if (done == NULL)
    return sk_error_set(err, SK_ENOMEM, "/nodes", "out of memory");
  for (size_t i = 0; i < n; i++) {
    size_t steps = 0;
    int32_t j = (int32_t)i;
    while (j >= 0 && !done[j] && steps <= n) {
      j = g->parent[j];
      steps++;
    }
    if (steps > n) {
      free(done);
      return FAIL(sk_gltf__mkptr(&p, "nodes", i, "children", -1), "the node hierarchy has a cycle through node %zu", i);
    }
    for (j = (int32_t)i; j >= 0 && !done[j]; j = g->parent[j])
      done[j] = 1;
  }
  free(done);
  return 0;
}

/* ---- accessors ----------------------------------------------------------- */

static size_t component_size(uint64_t ct) {
  switch (ct) {
  case 5120:
  case 5121: return 1;
  case 5122:
  case 5123: return 2;
  case 5125:
  case 5126: return 4;
  default: return 0;
  }
}

static size_t type_components(const char *t) {
  static const struct {
    const char *name;
    size_t n;
  } types[] = {{"SCALAR", 1}, {"VEC2", 2}, {"VEC3", 3}, {"VEC4", 4}, {"MAT2", 4}, {"MAT3", 9}, {"MAT4", 16}};
  for (size_t i = 0; t != NULL && i < sizeof types / sizeof types[0]; i++)
    if (strcmp(t, types[i].name) == 0)
      return types[i].n;
  return 0;
}

/* Bytes of one element, with the column padding the spec requires for
 * byte/short matrices; `cols`/`rows` describe the column layout. */
static void element_layout(const char *type, size_t ncomp, size_t csize, size_t *rows, size_t *cols,
                           size_t *col_stride) {
  if (type[0] == 'M') {
    *rows = ncomp == 4 ? 2 : ncomp == 9 ? 3 : 4;
    *cols = *rows;
  } else {
    *rows = ncomp;
    *cols = 1;
  }
  *col_stride = (*rows * csize + 3) & ~(size_t)3;
  if (*cols == 1)
    *col_stride = *rows * csize;
}

static float read_component(const uint8_t *p, uint64_t ct, bool normalized) {
  switch (ct) {
  case 5120: {
    int8_t v = (int8_t)p[0];
    return normalized ? fmaxf((float)v / 127.0f, -1.0f) : (float)v;
  }
  case 5121: return normalized ? (float)p[0] / 255.0f : (float)p[0];
  case 5122: {
    int16_t v = (int16_t)(uint16_t)(p[0] | p[1] << 8);
    return normalized ? fmaxf((float)v / 32767.0f, -1.0f) : (float)v;
  }
  case 5123: {
    uint16_t v = (uint16_t)(p[0] | p[1] << 8);
    return normalized ? (float)v / 65535.0f : (float)v;
  }
  case 5125: return (float)rd32(p);
  default: {
    uint32_t u = rd32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  }
}

/* Resolves bufferView `bv` (from field `from_ptr`): its bytes within its buffer. */
static int view_bytes(sk_gltf *g, uint64_t bv, const char *from_ptr, const uint8_t **data, size_t *len,
                      uint64_t *stride, char stride_ptr[SK_ERROR_POINTER_MAX], sk_error *err) {
  const json_t *v;
  int rc = sk_gltf__get_item(g, "bufferViews", (size_t)bv, from_ptr, &v, err);
  if (rc)
    return rc;
  ptr_t p;
  const char *base = sk_gltf__mkptr(&p, "bufferViews", (size_t)bv, NULL, -1);
  sk_gltf__joinp(stride_ptr, base, "byteStride");
  uint64_t buffer, off, blen;
  bool has_stride;
  if ((rc = sk_gltf__get_uint(v, "buffer", base, true, 0, SIZE_MAX, &buffer, NULL, err)) ||
      (rc = sk_gltf__get_uint(v, "byteOffset", base, false, 0, SIZE_MAX, &off, NULL, err)) ||
      (rc = sk_gltf__get_uint(v, "byteLength", base, true, 0, SIZE_MAX, &blen, NULL, err)) ||
      (rc = sk_gltf__get_uint(v, "byteStride", base, false, 0, 252, stride, &has_stride, err)))
    return rc;
  if (has_stride && (*stride < 4 || *stride % 4 != 0))
    return FAIL(sk_gltf__mkptr(&p, "bufferViews", (size_t)bv, "byteStride", -1),
                "byteStride must be a multiple of 4 in [4, 252]");
  gltf_buffer *b;
  char bp[SK_ERROR_POINTER_MAX];
  sk_gltf__joinp(bp, base, "buffer");
  if ((rc = resolve_buffer(g, (size_t)buffer, bp, &b, err)))
    return rc;
  if (off > b->len)
    return FAIL(sk_gltf__mkptr(&p, "bufferViews", (size_t)bv, "byteOffset", -1),
                "byteOffset %llu is past the end of buffer %llu (%zu bytes)", (unsigned long long)off,
                (unsigned long long)buffer, b->len);
  if (blen > b->len - off)
    return FAIL(sk_gltf__mkptr(&p, "bufferViews", (size_t)bv, "byteLength", -1),
                "byteOffset %llu + byteLength %llu is past the end of buffer %llu (%zu bytes)", (unsigned long long)off,
                (unsigned long long)blen, (unsigned long long)buffer, b->len);
  *data = b->data + off;
  *len = (size_t)blen;
  if (!has_stride)
    *stride = 0;
  return 0;
}

/* Reads `count` elements laid out from `off` in a view into dest. */
static int read_elements(const uint8_t *view, size_t view_len, uint64_t off, uint64_t stride, uint64_t count,
                         uint64_t ct, bool normalized, const char *type, size_t ncomp, float *dest, const char *off_ptr,
                         const char *count_ptr, const char *stride_ptr, sk_error *err) {
  size_t csize = component_size(ct), rows, cols, col_stride;
  element_layout(type, ncomp, csize, &rows, &cols, &col_stride);
  uint64_t elem = (uint64_t)col_stride * cols;
  if (stride == 0)
    stride = elem;
  else if (stride < elem)
    return FAIL(stride_ptr, "byteStride %llu is smaller than one element (%llu bytes)", (unsigned long long)stride,
                (unsigned long long)elem);
  if (off > view_len)
    return FAIL(off_ptr, "byteOffset %llu is past the end of its bufferView (%zu bytes)", (unsigned long long)off,
                view_len);
  /* count >= 1 and stride <= 252, count <= 2^24: no overflow in 64 bits. */
  uint64_t need = stride * (count - 1) + elem;
  if (need > view_len - off)
    return FAIL(count_ptr, "%llu elements from byteOffset %llu need %llu bytes; the bufferView has %llu",
                (unsigned long long)count, (unsigned long long)off, (unsigned long long)need,
                (unsigned long long)(view_len - off));
  for (uint64_t i = 0; i < count; i++) {
    const uint8_t *e = view + off + i * stride;
    for (size_t c = 0; c < cols; c++)
      for (size_t r = 0; r < rows; r++)
        dest[i * ncomp + c * rows + r] = read_component(e + c * col_stride + r * csize, ct, normalized);
  }
  return 0;
}

/* `from_ptr` names the field that refers to the accessor, for a bad index. */
/* An accessor's fields, checked. */
typedef struct acc_desc {
  char base[SK_ERROR_POINTER_MAX]; /* /accessors/<i> */
  uint64_t ct, count, off, bv;
  bool has_bv, normalized;
  const char *type;
  size_t ncomp;
} acc_desc;

/* Accessor `index` (referenced from `from_ptr`): its fields, checked, and
 * its values charged to the file's read budget. */
static int acc_describe(sk_gltf *g, size_t index, const char *from_ptr, const json_t **out, acc_desc *ad,
                        sk_error *err) {
  const json_t *a;
  ptr_t p, p2;
  int rc = sk_gltf__get_item(g, "accessors", index, from_ptr, &a, err);
  if (rc)
    return rc;
  *out = a;
  snprintf(ad->base, sizeof ad->base, "%s", sk_gltf__mkptr(&p, "accessors", index, NULL, -1));
  if ((rc = sk_gltf__get_uint(a, "componentType", ad->base, true, 0, 99999, &ad->ct, NULL, err)) ||
      (rc = sk_gltf__get_uint(a, "count", ad->base, true, 0, SK_GLTF_MAX_FLOATS, &ad->count, NULL, err)) ||
      (rc = sk_gltf__get_uint(a, "byteOffset", ad->base, false, 0, SIZE_MAX, &ad->off, NULL, err)) ||
      (rc = sk_gltf__get_uint(a, "bufferView", ad->base, false, 0, SIZE_MAX, &ad->bv, &ad->has_bv, err)))
    return rc;
  if (component_size(ad->ct) == 0)
    return FAIL(sk_gltf__mkptr(&p2, "accessors", index, "componentType", -1), "unknown componentType %llu",
                (unsigned long long)ad->ct);
  if (ad->count == 0)
    return FAIL(sk_gltf__mkptr(&p2, "accessors", index, "count", -1), "count must be at least 1");
  ad->type = json_string_value(json_object_get(a, "type"));
  if ((ad->ncomp = type_components(ad->type)) == 0)
    return FAIL(sk_gltf__mkptr(&p2, "accessors", index, "type", -1), "expected SCALAR, VEC2..4 or MAT2..4");
  const json_t *nj = json_object_get(a, "normalized");
  if (nj != NULL && !json_is_boolean(nj))
    return FAIL(sk_gltf__mkptr(&p2, "accessors", index, "normalized", -1), "expected true or false");
  ad->normalized = json_is_true(nj);
  if (ad->normalized && (ad->ct == 5125 || ad->ct == 5126))
    return FAIL(sk_gltf__mkptr(&p2, "accessors", index, "normalized", -1), "only byte and short components can be normalized");
  const uint64_t values = ad->count * ad->ncomp;
  if (values > SK_GLTF_MAX_FLOATS)
    return sk_error_set(err, SK_ETOOBIG, sk_gltf__mkptr(&p2, "accessors", index, "count", -1),
                        "%llu elements of %zu components exceed the limit of %u values",
                        (unsigned long long)ad->count, ad->ncomp, SK_GLTF_MAX_FLOATS);
  /* Many channels may share one huge sampler: bound the total work too. */
  if (values > g->budget)
    return sk_error_set(err, SK_ETOOBIG, ad->base, "the file's accessors expand to more than %u values in total",
                        SK_GLTF_READ_BUDGET);
  g->budget -= values;
  return 0;
}

/* The accessor's own values (zeros without a bufferView) into `dest`. */
static int acc_read_dense(sk_gltf *g, const acc_desc *ad, float *dest, sk_error *err) {
  char off_ptr[SK_ERROR_POINTER_MAX], count_ptr[SK_ERROR_POINTER_MAX];
  sk_gltf__joinp(off_ptr, ad->base, "byteOffset");
  sk_gltf__joinp(count_ptr, ad->base, "count");
  if (!ad->has_bv)
    return ad->off != 0 ? FAIL(off_ptr, "byteOffset without a bufferView") : 0;
  const uint8_t *view;
  size_t vlen;
  uint64_t stride;
  char bvp[SK_ERROR_POINTER_MAX], stp[SK_ERROR_POINTER_MAX];
  sk_gltf__joinp(bvp, ad->base, "bufferView");
  int rc = view_bytes(g, ad->bv, bvp, &view, &vlen, &stride, stp, err);
  if (!rc)
    rc = read_elements(view, vlen, ad->off, stride, ad->count, ad->ct, ad->normalized, ad->type, ad->ncomp, dest,
                       off_ptr, count_ptr, stp, err);
  return rc;
}

/* A sparse block's fields. */
typedef struct sparse_desc {
  char sp[SK_ERROR_POINTER_MAX], ip[SK_ERROR_POINTER_MAX], vp[SK_ERROR_POINTER_MAX];
  uint64_t scount, ibv, ioff, ict, vbv, voff;
} sparse_desc;

static int sparse_describe(const json_t *sparse, const acc_desc *ad, sparse_desc *sd, sk_error *err) {
  sk_gltf__joinp(sd->sp, ad->base, "sparse");
  if (!json_is_object(sparse))
    return FAIL(sd->sp, "expected an object");
  int rc = sk_gltf__get_uint(sparse, "count", sd->sp, true, 0, SK_GLTF_MAX_FLOATS, &sd->scount, NULL, err);
  if (rc)
    return rc;
  const json_t *ind = json_object_get(sparse, "indices"), *val = json_object_get(sparse, "values");
  char tmp[SK_ERROR_POINTER_MAX];
  sk_gltf__joinp(sd->ip, sd->sp, "indices");
  sk_gltf__joinp(sd->vp, sd->sp, "values");
  sk_gltf__joinp(tmp, sd->sp, "count");
  if (sd->scount == 0 || sd->scount > ad->count)
    return FAIL(tmp, "sparse count %llu must be in [1, %llu]", (unsigned long long)sd->scount,
                (unsigned long long)ad->count);
  if (!json_is_object(ind))
    return FAIL(sd->ip, "expected an object");
  if (!json_is_object(val))
    return FAIL(sd->vp, "expected an object");
  if ((rc = sk_gltf__get_uint(ind, "bufferView", sd->ip, true, 0, SIZE_MAX, &sd->ibv, NULL, err)) ||
      (rc = sk_gltf__get_uint(ind, "byteOffset", sd->ip, false, 0, SIZE_MAX, &sd->ioff, NULL, err)) ||
      (rc = sk_gltf__get_uint(ind, "componentType", sd->ip, true, 0, 99999, &sd->ict, NULL, err)) ||
      (rc = sk_gltf__get_uint(val, "bufferView", sd->vp, true, 0, SIZE_MAX, &sd->vbv, NULL, err)) ||
      (rc = sk_gltf__get_uint(val, "byteOffset", sd->vp, false, 0, SIZE_MAX, &sd->voff, NULL, err)))
    return rc;
  sk_gltf__joinp(tmp, sd->ip, "componentType");
  if (sd->ict != 5121 && sd->ict != 5123 && sd->ict != 5125)
    return FAIL(tmp, "sparse indices must be UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT");
  return 0;
}

/* Reads the sparse indices and values, then overwrites those elements. */
static int acc_apply_sparse(sk_gltf *g, const acc_desc *ad, const json_t *sparse, float *dest, sk_error *err) {
  sparse_desc sd;
  int rc = sparse_describe(sparse, ad, &sd, err);
  if (rc)
    return rc;
  const size_t ncomp = ad->ncomp;
  float *idx = malloc((size_t)sd.scount * sizeof *idx);
  float *vals = malloc((size_t)(sd.scount * ncomp) * sizeof *vals);
  if (idx == NULL || vals == NULL)
    rc = sk_error_set(err, SK_ENOMEM, sd.sp, "out of memory");
  const uint8_t *view;
  size_t vlen;
  uint64_t stride;
  char fp[SK_ERROR_POINTER_MAX], op[SK_ERROR_POINTER_MAX], cp[SK_ERROR_POINTER_MAX], stp[SK_ERROR_POINTER_MAX];
  sk_gltf__joinp(cp, sd.sp, "count");
  /* Indices are read as floats: exact below 2^24, and an index that
   * rounds is >= 2^24 >= count, so it is rejected below either way. */
  sk_gltf__joinp(fp, sd.ip, "bufferView");
  sk_gltf__joinp(op, sd.ip, "byteOffset");
  if (!rc && !(rc = view_bytes(g, sd.ibv, fp, &view, &vlen, &stride, stp, err)))
    rc = read_elements(view, vlen, sd.ioff, 0, sd.scount, sd.ict, false, "SCALAR", 1, idx, op, cp, stp, err);
  if (!rc) {
    sk_gltf__joinp(fp, sd.vp, "bufferView");
    sk_gltf__joinp(op, sd.vp, "byteOffset");
    if (!(rc = view_bytes(g, sd.vbv, fp, &view, &vlen, &stride, stp, err)))
      rc = read_elements(view, vlen, sd.voff, 0, sd.scount, ad->ct, ad->normalized, ad->type, ncomp, vals, op, cp, stp,
                         err);
  }
  for (uint64_t k = 0; !rc && k < sd.scount; k++) {
    if (!(idx[k] < (float)ad->count)) {
      rc = FAIL(sd.ip, "sparse index %.0f (entry %llu) is not below count %llu", (double)idx[k],
                (unsigned long long)k, (unsigned long long)ad->count);
      break;
    }
    memcpy(dest + (size_t)idx[k] * ncomp, vals + k * ncomp, ncomp * sizeof *dest);
  }
  free(idx);
  free(vals);
  return rc;
}

/* Accessor `index` as floats: described and checked, the dense values,
 * then the sparse overrides. *out is new (free). */
int sk_gltf__read_accessor(sk_gltf *g, size_t index, const char *from_ptr, float **out, size_t *count_out,
                           size_t *ncomp_out, sk_error *err) {
  *out = NULL;
  const json_t *a;
  acc_desc ad;
  int rc = acc_describe(g, index, from_ptr, &a, &ad, err);
  if (rc)
    return rc;
  float *dest = calloc((size_t)(ad.count * ad.ncomp), sizeof *dest);
  if (dest == NULL)
    return sk_error_set(err, SK_ENOMEM, ad.base, "out of memory");
  const json_t *sparse = json_object_get(a, "sparse");
  if ((rc = acc_read_dense(g, &ad, dest, err)) == 0 && sparse != NULL)
    rc = acc_apply_sparse(g, &ad, sparse, dest, err);
  if (rc) {
    free(dest);
    return rc;
  }
  *out = dest;
  *count_out = (size_t)ad.count;
  *ncomp_out = ad.ncomp;
  return 0;
}

int sk_gltf_read_accessor(sk_gltf *g, size_t index, float **out, size_t *count, size_t *ncomp, sk_error *err) {
  return sk_gltf__read_accessor(g, index, "/accessors", out, count, ncomp, err);
}

/* ---- skins ---------------------------------------------------------------- */

int sk_gltf_find_skin(const sk_gltf *g, const char *sel, size_t *skin, sk_error *err) {
  size_t n = sk_gltf_skin_count(g);
  const json_t *skins = json_object_get(g->root, "skins");
  if (sel == NULL || sel[0] == '\0') {
    if (n == 0)
      return sk_error_set(err, SK_ENOTFOUND, "/skins", "the file has no skins");
    *skin = 0;
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    const char *name = json_string_value(json_object_get(json_array_get(skins, i), "name"));
    if (name != NULL && strcmp(name, sel) == 0) {
      *skin = i;
      return 0;
    }
  }
  char *end;
  unsigned long long k = strtoull(sel, &end, 10);
  if (sel[0] >= '0' && sel[0] <= '9' && *end == '\0' && k < n) {
    *skin = (size_t)k;
    return 0;
  }
  return sk_error_set(err, SK_ENOTFOUND, "/skins", "no skin named or numbered \"%s\" (the file has %zu)", sel, n);
}

/* ---- memory estimate ------------------------------------------------------ */

/* Values accessor `index` expands to (count x components), from its JSON
 * alone: 0 when it cannot be read (load_skin refuses it with its own error). */
static uint64_t accessor_values(const sk_gltf *g, const json_t *idx) {
  const json_t *arr = json_object_get(g->root, "accessors");
  if (!json_is_integer(idx) || json_integer_value(idx) < 0)
    return 0;
  const json_t *a = json_array_get(arr, (size_t)json_integer_value(idx));
  const json_t *count = json_object_get(a, "count");
  if (!json_is_integer(count) || json_integer_value(count) < 0)
    return 0;
  /* a larger count is refused by read_accessor before it allocates */
  uint64_t n = (uint64_t)json_integer_value(count);
  return n > SK_GLTF_MAX_FLOATS ? 0 : n * type_components(json_string_value(json_object_get(a, "type")));
}

/* Adds `more` bytes; SK_ETOOBIG at `ptr` once the total passes `limit` (0: none). */
static int est_add(uint64_t *total, uint64_t more, size_t limit, const char *ptr, sk_error *err) {
  *total += more;
  if (limit != 0 && *total > limit)
    return sk_error_set(err, SK_ETOOBIG, ptr,
                        "the skeleton and its clips would take about %llu bytes in memory; the limit is %zu "
                        "(--max-skeleton-mb)",
                        (unsigned long long)*total, limit);
  return 0;
}

/* What load_skin holds at once, by its allocations: per node the bone list
 * and, for nodes that become bones, the bone, its descriptor, three matrix
 * scratch arrays, the rest TRS and the rig (bounded per node); the inverse
 * bind matrices read; per animation channel its structs and, for the ones
 * that drive a node, the padded key frames (doubles) and values (floats);
 * every buffer at its decoded size (resolved on first use);
 * plus the largest sampler read (input and output floats at once), the
 * transient peak. Counts come from the JSON: an accessor without a
 * bufferView (zero-filled) counts its `count` like any other. */
static int estimate(const sk_gltf *g, size_t skin, size_t limit, uint64_t *total_out, sk_error *err) {
  uint64_t peak = 0;
  uint64_t *const total = total_out;
  ptr_t p;
  int rc = 0;
  const uint64_t per_node = 64 + sizeof(sk_bone) + sizeof(sk_bone_desc) + 3 * 16 * sizeof(float) +
                            SK_ANIM_TRS * sizeof(double) + 256;
  if ((rc = est_add(total, (uint64_t)g->node_count * per_node, limit, "/nodes", err)))
    return rc;
  /* the scene's nodes as the loader makes them (a mesh's primitives each) */
  if ((rc = est_add(total, sk_gltf__scene_nodes_bytes(g), limit, "/nodes", err)))
    return rc;
  /* Buffers are resolved (a GLB chunk copied, a data: URI decoded) the
   * first time an accessor reads them: count every one at its decoded size. */
  const json_t *bufs = json_object_get(g->root, "buffers");
  for (size_t b = 0; b < json_array_size(bufs); b++) {
    const json_t *uri = json_object_get(json_array_get(bufs, b), "uri");
    const json_t *blen = json_object_get(json_array_get(bufs, b), "byteLength");
    uint64_t bytes = json_is_string(uri) ? json_string_length(uri) / 4 * 3 + 3
                     : json_is_integer(blen) && json_integer_value(blen) > 0
                         ? (uint64_t)json_integer_value(blen) < g->bin_len ? (uint64_t)json_integer_value(blen) : g->bin_len
                         : 0;
    if ((rc = est_add(total, bytes + 64, limit, sk_gltf__mkptr(&p, "buffers", b, "byteLength", -1), err)))
      return rc;
  }
  const json_t *sk = json_array_get(json_object_get(g->root, "skins"), skin);
  const json_t *ibm = json_object_get(sk, "inverseBindMatrices");
  if (ibm != NULL) {
    uint64_t v = accessor_values(g, ibm);
    char ap[SK_ERROR_POINTER_MAX];
    sk_gltf__joinp(ap, sk_gltf__mkptr(&p, "accessors", (size_t)json_integer_value(ibm), NULL, -1), "count");
    if ((rc = est_add(total, v * sizeof(float), limit, ap, err)))
      return rc;
  }
  const json_t *anims = json_object_get(g->root, "animations");
  for (size_t a = 0; a < json_array_size(anims); a++) {
    const json_t *an = json_array_get(anims, a);
    const json_t *chs = json_object_get(an, "channels"), *smps = json_object_get(an, "samplers");
    size_t nch = json_array_size(chs);
    /* the clip's markers (extras), as many as the clip may hold */
    size_t nm = json_array_size(json_object_get(json_object_get(an, "extras"), "markers"));
    nm = nm < SK_EVENTS_MAX ? nm : SK_EVENTS_MAX;
    if ((rc = est_add(total, nch * (uint64_t)(sizeof(sk_anim_channel) + 32) + 256 + nm * sizeof(sk_event), limit,
                      sk_gltf__mkptr(&p, "animations", a, "channels", -1), err)))
      return rc;
    for (size_t c = 0; c < nch; c++) {
      const json_t *ch = json_array_get(chs, c);
      const json_t *target = json_object_get(ch, "target");
      if (json_object_get(target, "node") == NULL)
        continue;
      const json_t *smp = json_array_get(smps, (size_t)json_integer_value(json_object_get(ch, "sampler")));
      const json_t *in = json_object_get(smp, "input"), *out = json_object_get(smp, "output");
      uint64_t keys = accessor_values(g, in), vals = accessor_values(g, out);
      /* the output accessor is what a hostile file inflates; name it */
      char ap[SK_ERROR_POINTER_MAX];
      const json_t *big = vals >= keys ? out : in;
      sk_gltf__joinp(ap, sk_gltf__mkptr(&p, "accessors", json_is_integer(big) ? (size_t)json_integer_value(big) : 0, NULL, -1),
            "count");
      if ((keys + vals) * sizeof(float) > peak)
        peak = (keys + vals) * sizeof(float);
      if ((rc = est_add(total, (keys + 2) * sizeof(double) + (vals + 24) * sizeof(float), limit, ap, err)))
        return rc;
    }
  }
  if ((rc = est_add(total, peak, limit, "/animations", err)))
    return rc;
  return 0;
}

int sk_gltf_estimate(const sk_gltf *g, size_t skin, size_t limit, size_t *bytes, sk_error *err) {
  uint64_t total = 0;
  int rc = estimate(g, skin, limit, &total, err);
  *bytes = total > SIZE_MAX ? SIZE_MAX : (size_t)total;
  return rc;
}

size_t sk_gltf_estimate_bytes(const sk_gltf *g, size_t skin) {
  size_t bytes = SIZE_MAX;
  if (sk_gltf_estimate(g, skin, 0, &bytes, NULL) != 0)
    return SIZE_MAX;
  return bytes;
}

int sk_gltf_import_bounded(const void *data, size_t len, const char *skin_selector, size_t max_bones,
                           size_t max_bytes, size_t *estimate, sk_skeleton **skeleton, sk_anim **anim,
                           sk_error *err) {
  *skeleton = NULL;
  *anim = NULL;
  *estimate = 0;
  sk_gltf *g;
  int rc = sk_gltf_parse(data, len, &g, err);
  if (rc)
    return rc;
  size_t skin;
  if (!(rc = sk_gltf_find_skin(g, skin_selector, &skin, err)) &&
      !(rc = sk_gltf_estimate(g, skin, max_bytes, estimate, err)))
    rc = sk_gltf_load_skin(g, skin, max_bones, skeleton, anim, err);
  sk_gltf_destroy(g);
  return rc;
}

int sk_gltf_import(const void *data, size_t len, const char *skin_selector, size_t max_bones, sk_skeleton **skeleton,
                   sk_anim **anim, sk_error *err) {
  *skeleton = NULL;
  *anim = NULL;
  sk_gltf *g;
  int rc = sk_gltf_parse(data, len, &g, err);
  if (rc)
    return rc;
  size_t skin;
  if (!(rc = sk_gltf_find_skin(g, skin_selector, &skin, err)))
    rc = sk_gltf_load_skin(g, skin, max_bones, skeleton, anim, err);
  sk_gltf_destroy(g);
  return rc;
}
