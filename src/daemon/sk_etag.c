#include "sk_etag.h"

#include <string.h>

/* The bytes of "%08x-%llu" in quotes, written by hand: every answer about
 * a skeleton carries its tag, and snprintf cost ~1 200 instructions of a
 * pose request's ~63 000 under callgrind (tests/bench/http_callgrind.py). */
void sk_etag_format(uint32_t epoch, uint64_t version, char dest[SK_ETAG_MAX]) {
  static const char hex[] = "0123456789abcdef";
  char digits[20];
  size_t n = 0, k = 0;
  dest[n++] = '"';
  for (int shift = 28; shift >= 0; shift -= 4)
    dest[n++] = hex[(epoch >> shift) & 15u];
  dest[n++] = '-';
  do {
    digits[k++] = (char)('0' + version % 10);
    version /= 10;
  } while (version != 0);
  while (k > 0)
    dest[n++] = digits[--k];
  dest[n++] = '"';
  dest[n] = '\0';
}

static bool ows(char c) { return c == ' ' || c == '\t'; }

/* etagc = %x21 / %x23-7E / obs-text */
static bool etagc(unsigned char c) { return c == 0x21 || (c >= 0x23 && c != 0x7f); }

int sk_etag_match(const char *field, const char *etag, bool weak) {
  const char *p = field;
  while (ows(*p))
    p++;
  if (*p == '*') {
    const char *q = p + 1;
    while (ows(*q))
      q++;
    if (*q == '\0')
      return etag != NULL;
    return -1;
  }
  /* The current tag's opaque part (quotes included) and weakness; ours are
   * always strong, but compare as the RFC says. */
  bool cur_weak = etag != NULL && strncmp(etag, "W/", 2) == 0;
  const char *cur = etag != NULL ? etag + (cur_weak ? 2 : 0) : NULL;
  bool any = false, match = false;
  for (;;) {
    while (ows(*p) || *p == ',') /* #list: empty elements are allowed */
      p++;
    if (*p == '\0')
      break;
    bool is_weak = strncmp(p, "W/", 2) == 0;
    const char *tag = p + (is_weak ? 2 : 0);
    if (*tag != '"')
      return -1;
    const char *end = tag + 1;
    while (etagc((unsigned char)*end))
      end++;
    if (*end != '"')
      return -1;
    size_t len = (size_t)(end + 1 - tag);
    if (cur != NULL && strlen(cur) == len && memcmp(cur, tag, len) == 0 && (weak || (!is_weak && !cur_weak)))
      match = true;
    any = true;
    p = end + 1;
    while (ows(*p))
      p++;
    if (*p != ',' && *p != '\0')
      return -1;
  }
  return any ? match : -1;
}
