#include "sk_auth.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIGEST_LEN 32 /* SHA-256 */
#define FILE_MAX (1u << 20)

typedef struct entry {
  uint8_t digest[DIGEST_LEN];
  int scope;
} entry;

struct sk_auth {
  size_t n, cap;
  entry *e; /* owned */
};

const char *sk_auth_scope_name(int scope) {
  switch (scope) {
  case SK_SCOPE_READ: return "read";
  case SK_SCOPE_WRITE: return "write";
  case SK_SCOPE_ADMIN: return "admin";
  default: return "none";
  }
}

static int token_char(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '~' || c == '+' || c == '/' || c == '=' || c == '-';
}

static int digest(const char *token, size_t len, uint8_t out[DIGEST_LEN]) {
  return gnutls_hash_fast(GNUTLS_DIG_SHA256, token, len, out) == 0 ? 0 : SK_EIO;
}

/* 0 when equal, without an early exit. */
static unsigned digest_diff(const uint8_t *a, const uint8_t *b) {
  unsigned d = 0;
  for (size_t i = 0; i < DIGEST_LEN; i++)
    d |= (unsigned)(a[i] ^ b[i]);
  return d;
}

static int line_error(sk_error *err, const char *name, int line, const char *why) {
  sk_error_set(err, SK_EFORMAT, NULL, "%s:%d: %s", name, line, why);
  if (err != NULL)
    err->line = line;
  return SK_EFORMAT;
}

static int parse_scope(const char *s, size_t n) {
  if (n == 4 && memcmp(s, "read", 4) == 0)
    return SK_SCOPE_READ;
  if (n == 5 && memcmp(s, "write", 5) == 0)
    return SK_SCOPE_WRITE;
  if (n == 5 && memcmp(s, "admin", 5) == 0)
    return SK_SCOPE_ADMIN;
  return SK_SCOPE_NONE;
}

/* One non-comment, non-blank line [p, end). */
static int parse_line(sk_auth *a, const char *name, int lineno, const char *p, const char *end, sk_error *err) {
  const char *tok = p;
  while (p < end && *p != ' ' && *p != '\t')
    p++;
  size_t tlen = (size_t)(p - tok);
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  const char *sc = p;
  while (p < end && *p != ' ' && *p != '\t')
    p++;
  size_t slen = (size_t)(p - sc);
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  for (size_t i = 0; i < tlen; i++)
    if (!token_char((unsigned char)tok[i]))
      return line_error(err, name, lineno, "the token has a character outside [A-Za-z0-9._~+/=-]");
  if (tlen < SK_AUTH_TOKEN_MIN)
    return line_error(err, name, lineno, "the token is shorter than 16 characters");
  if (tlen > SK_AUTH_TOKEN_MAX)
    return line_error(err, name, lineno, "the token is longer than 256 characters");
  if (slen == 0)
    return line_error(err, name, lineno, "no scope after the token (read, write or admin)");
  if (p != end)
    return line_error(err, name, lineno, "text after the scope (one `TOKEN SCOPE` per line)");
  int scope = parse_scope(sc, slen);
  if (scope == SK_SCOPE_NONE)
    return line_error(err, name, lineno, "unknown scope (read, write or admin)");
  if (a->n == SK_AUTH_MAX_TOKENS)
    return line_error(err, name, lineno, "more than 4096 tokens");
  entry e;
  e.scope = scope;
  if (digest(tok, tlen, e.digest) != 0)
    return sk_error_set(err, SK_EIO, NULL, "%s: SHA-256 unavailable", name);
  for (size_t i = 0; i < a->n; i++)
    if (digest_diff(a->e[i].digest, e.digest) == 0)
      return line_error(err, name, lineno, "the token is listed twice");
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 8;
    entry *ne = realloc(a->e, cap * sizeof *ne);
    if (ne == NULL)
      return sk_error_set(err, SK_ENOMEM, NULL, "out of memory");
    a->e = ne;
    a->cap = cap;
  }
  a->e[a->n++] = e;
  return 0;
}

int sk_auth_parse(const char *name, const char *text, size_t len, sk_auth **out, sk_error *err) {
  *out = NULL;
  sk_auth *a = calloc(1, sizeof *a);
  if (a == NULL)
    return sk_error_set(err, SK_ENOMEM, NULL, "out of memory");
  const char *p = text, *end = text + len;
  int lineno = 0;
  while (p < end) {
    lineno++;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl != NULL ? nl : end;
    const char *next = nl != NULL ? nl + 1 : end;
    if (le > p && le[-1] == '\r')
      le--;
    if (le > p && memchr(p, '\0', (size_t)(le - p)) != NULL) {
      sk_auth_destroy(a);
      return line_error(err, name, lineno, "a NUL byte");
    }
    const char *s = p;
    while (s < le && (*s == ' ' || *s == '\t'))
      s++;
    if (s < le && *s != '#') {
      int rc = parse_line(a, name, lineno, s, le, err);
      if (rc != 0) {
        sk_auth_destroy(a);
        return rc;
      }
    }
    p = next;
  }
  *out = a;
  return 0;
}

int sk_auth_load(const char *path, sk_auth **out, sk_error *err) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return sk_error_set(err, SK_EIO, NULL, "%s: %s", path, strerror(errno));
  char *buf = malloc(FILE_MAX + 1);
  if (buf == NULL) {
    fclose(f);
    return sk_error_set(err, SK_ENOMEM, NULL, "out of memory");
  }
  size_t n = fread(buf, 1, FILE_MAX + 1, f);
  int failed = ferror(f);
  fclose(f);
  int rc;
  if (failed)
    rc = sk_error_set(err, SK_EIO, NULL, "%s: read error", path);
  else if (n > FILE_MAX)
    rc = sk_error_set(err, SK_EFORMAT, NULL, "%s: larger than 1 MiB", path);
  else
    rc = sk_auth_parse(path, buf, n, out, err);
  /* The buffer held secrets: clear it before it goes back to the heap. */
  explicit_bzero(buf, FILE_MAX + 1);
  free(buf);
  return rc;
}

void sk_auth_destroy(sk_auth *a) {
  if (a == NULL)
    return;
  if (a->e != NULL)
    explicit_bzero(a->e, a->cap * sizeof *a->e);
  free(a->e);
  free(a);
}

size_t sk_auth_count(const sk_auth *a) { return a != NULL ? a->n : 0; }

int sk_auth_lookup(const sk_auth *a, const char *token, size_t len) {
  if (a == NULL || len == 0)
    return SK_SCOPE_NONE;
  uint8_t d[DIGEST_LEN];
  if (digest(token, len, d) != 0)
    return SK_SCOPE_NONE;
  /* Every entry is compared and folded in with a mask: no branch on a
   * secret. Tokens are unique, so at most one entry contributes. */
  unsigned scope = 0;
  for (size_t i = 0; i < a->n; i++) {
    unsigned diff = digest_diff(a->e[i].digest, d);       /* 0..255 */
    unsigned match = 0u - (((diff - 1u) >> 8) & 1u);      /* all ones when diff == 0 */
    scope |= match & (unsigned)a->e[i].scope;
  }
  explicit_bzero(d, sizeof d);
  return (int)scope;
}
