/* sk_base64: RFC 4648 base64 and base64url, for any wing. */
#ifndef SK_BASE64_H
#define SK_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* How a decoder reads its text; 0 is the standard alphabet with no '='
 * and no check that the text is canonical. */
enum {
  SK_BASE64_URL = 1u << 0,      /* '-' and '_' for 62 and 63 (RFC 4648 section 5) */
  SK_BASE64_PAD_TRIM = 1u << 1, /* trailing '=' are dropped, however many; elsewhere '=' is bad */
  SK_BASE64_STRICT = 1u << 2,   /* refuse a length of 4k+1 and stray low bits in the last character */
};

/* The bytes at most that n characters decode to (sizing a dest). */
static inline size_t sk_base64_decoded_max(size_t n) { return n / 4 * 3 + (n % 4 * 3) / 4; }

/* The characters the padded encoding of n bytes takes (no NUL counted). */
static inline size_t sk_base64_encoded_len(size_t n) { return (n + 2) / 3 * 4; }

/* Decodes [s, s+n) as flags say into dest (cap bytes). Returns the byte
 * count, or -1 on a character outside the alphabet, a text STRICT refuses,
 * or more bytes than cap. dest may be written before -1 is returned. */
long sk_base64_decode(const char *s, size_t n, unsigned flags, uint8_t *dest, size_t cap);

/* Writes the padded standard base64 of in[0, n) to dest, which holds
 * sk_base64_encoded_len(n) + 1 chars (NUL terminated); returns the length. */
size_t sk_base64_encode(const uint8_t *in, size_t n, char *dest);

#endif
