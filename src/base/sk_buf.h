/* sk_buf: the growable byte buffer every writer appends to (the way of
 * jansson's strbuffer): answers, records, JSON text. */
#ifndef SK_BUF_H
#define SK_BUF_H

#include <stddef.h>

/* Growable byte buffer. Zero-initialise for an empty buffer; the buffer owns
 * `data`, released by sk_strbuf_free(). Whenever `data` is non-NULL it is
 * NUL-terminated at `len` (the NUL is not counted), so it can be handed to
 * APIs that want a C string. After an allocation failure `failed` stays set
 * and every further append fails without touching the contents, so a writer
 * may append many pieces and check once at the end. */
typedef struct sk_strbuf {
  char *data;
  size_t len, cap;
  int failed;
} sk_strbuf;

/* Releases the storage and resets `b` to the zero (empty) state. Idempotent. */
void sk_strbuf_free(sk_strbuf *b);

/* Makes room for `extra` more bytes (plus the terminating NUL) without
 * changing `len`. Returns 0, or SK_ENOMEM (and sets `failed`) when the
 * allocation fails, the size would overflow, or `failed` was already set. */
int sk_strbuf_reserve(sk_strbuf *b, size_t extra);

/* Appends `n` bytes from `s` (which may not point into `b->data`).
 * Returns 0 or SK_ENOMEM as sk_strbuf_reserve(); on failure nothing is appended. */
int sk_strbuf_append(sk_strbuf *b, const char *s, size_t n);

#endif
