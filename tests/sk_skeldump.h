/* sk_skeldump: every field of a skeleton as explicit little-endian bytes,
 * so two skeletons can be compared bit for bit (floats and doubles by their
 * bit patterns, not by value: -0 and NaN payloads count) and the result can
 * be kept in a file. Test code only.
 *
 * Layout: u64 count, then per bone in bones[] order: name (u32 length +
 * bytes), parent, index, input_pos (i32), has_length (u8), length (f64),
 * local matrix (16 f32), scaling (3 f64), rotation (4 f64), position (3
 * f64), need_decompose (u8), bind, rest, abs_bind, abs_inv_bind, absolute,
 * world (16 f32 each). */
#ifndef SK_SKELDUMP_H
#define SK_SKELDUMP_H

#include <stdint.h>
#include <string.h>

#include "sk_numfmt.h"
#include "sk_skeleton.h"

static inline void sk_dump_u(sk_strbuf *b, uint64_t v, int bytes) {
  char le[8];
  for (int i = 0; i < bytes; i++)
    le[i] = (char)(v >> (8 * i));
  sk_strbuf_append(b, le, (size_t)bytes);
}

static inline void sk_dump_f32(sk_strbuf *b, const float *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &v[i], 4);
    sk_dump_u(b, u, 4);
  }
}

static inline void sk_dump_f64(sk_strbuf *b, const double *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t u;
    memcpy(&u, &v[i], 8);
    sk_dump_u(b, u, 8);
  }
}

static inline void sk_dump_skeleton(const sk_skeleton *s, sk_strbuf *b) {
  sk_dump_u(b, s->count, 8);
  for (size_t i = 0; i < s->count; i++) {
    const sk_bone *x = &s->bones[i];
    size_t n = strlen(x->name);
    sk_dump_u(b, n, 4);
    sk_strbuf_append(b, x->name, n);
    sk_dump_u(b, (uint32_t)x->parent, 4);
    sk_dump_u(b, (uint32_t)x->index, 4);
    sk_dump_u(b, (uint32_t)x->input_pos, 4);
    sk_dump_u(b, x->has_length, 1);
    sk_dump_f64(b, &x->length, 1);
    sk_dump_f32(b, x->local.matrix, 16);
    sk_dump_f64(b, x->local.scaling, 3);
    sk_dump_f64(b, x->local.rotation, 4);
    sk_dump_f64(b, x->local.position, 3);
    sk_dump_u(b, x->local.need_decompose, 1);
    sk_dump_f32(b, x->bind, 16);
    sk_dump_f32(b, x->rest, 16);
    sk_dump_f32(b, x->abs_bind, 16);
    sk_dump_f32(b, x->abs_inv_bind, 16);
    sk_dump_f32(b, x->absolute, 16);
    sk_dump_f32(b, x->world, 16);
  }
}

#endif
