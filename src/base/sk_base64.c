/* sk_base64: RFC 4648 base64 and base64url (sk_base64.h). */
#include "sk_base64.h"

static const char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int value(unsigned char c, unsigned flags) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (flags & SK_BASE64_URL)
    return c == '-' ? 62 : c == '_' ? 63 : -1;
  return c == '+' ? 62 : c == '/' ? 63 : -1;
}

long sk_base64_decode(const char *s, size_t n, unsigned flags, uint8_t *dest, size_t cap) {
  if (flags & SK_BASE64_PAD_TRIM)
    while (n > 0 && s[n - 1] == '=')
      n--;
  if ((flags & SK_BASE64_STRICT) && n % 4 == 1)
    return -1;
  size_t o = 0;
  uint32_t acc = 0;
  unsigned bits = 0;
  for (size_t i = 0; i < n; i++) {
    int v = value((unsigned char)s[i], flags);
    if (v < 0)
      return -1;
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (o == cap)
        return -1;
      dest[o++] = (uint8_t)(acc >> bits);
    }
  }
  if ((flags & SK_BASE64_STRICT) && (acc & ((1u << bits) - 1)) != 0)
    return -1;
  return (long)o;
}

size_t sk_base64_encode(const uint8_t *in, size_t n, char *dest) {
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
    dest[o++] = k_alphabet[(v >> 18) & 63];
    dest[o++] = k_alphabet[(v >> 12) & 63];
    dest[o++] = i + 1 < n ? k_alphabet[(v >> 6) & 63] : '=';
    dest[o++] = i + 2 < n ? k_alphabet[v & 63] : '=';
  }
  dest[o] = '\0';
  return o;
}
