#include "sk_buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sk_error.h"

void sk_strbuf_free(sk_strbuf *b) {
  free(b->data);
  b->data = NULL;
  b->len = 0;
  b->cap = 0;
  b->failed = 0;
}

int sk_strbuf_reserve(sk_strbuf *b, size_t extra) {
  if (b->failed) return SK_ENOMEM;
  /* +1 for the NUL kept behind len. */
  if (extra > SIZE_MAX - 1 - b->len) goto fail;
  const size_t need = b->len + extra + 1;
  if (need <= b->cap) return 0;
  size_t cap = b->cap < 64 ? 64 : b->cap;
  while (cap < need) {
    if (cap > SIZE_MAX / 2) {
      cap = need;
      break;
    }
    cap *= 2;
  }
  char *data = realloc(b->data, cap);
  if (data == NULL) goto fail;
  if (b->data == NULL) data[0] = '\0';
  b->data = data;
  b->cap = cap;
  return 0;
fail:
  b->failed = 1;
  return SK_ENOMEM;
}

int sk_strbuf_append(sk_strbuf *b, const char *s, size_t n) {
  const int rc = sk_strbuf_reserve(b, n);
  if (rc != 0) return rc;
  if (n > 0) memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
  return 0;
}
