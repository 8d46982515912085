/* Fuzz target: the --tokens file parser and the token lookup.
 *
 * sk_auth_parse on the bytes. On failure the error is an SK_EFORMAT naming
 * "FILE:LINE". On success the file is read again here the simple way
 * (split on spaces and tabs) and every listed token must look up to its
 * listed scope, through sk_auth_lookup and through the access gate with an
 * "Authorization: Bearer" header; a token one byte longer than the longest
 * allowed never matches. */
#include <string.h>

#include "sk_access.h"
#include "sk_auth.h"
#include "sk_metrics.h"
#include "sk_fuzz.h"

#define TOKENS_MAX_INPUT (64u * 1024u)
#define TOKENS_MAX_CHECKED 64

static int scope_of(const char *s, size_t n) {
  if (n == 4 && memcmp(s, "read", 4) == 0)
    return SK_SCOPE_READ;
  if (n == 5 && memcmp(s, "write", 5) == 0)
    return SK_SCOPE_WRITE;
  if (n == 5 && memcmp(s, "admin", 5) == 0)
    return SK_SCOPE_ADMIN;
  return -1;
}

static const char *skip_blank(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  return p;
}

static const char *skip_word(const char *p, const char *end) {
  while (p < end && *p != ' ' && *p != '\t')
    p++;
  return p;
}

/* A token listed in the parsed file must answer its scope, alone and
 * behind "Bearer " at the gate of a route needing read. */
static void check_listed(const sk_auth *a, sk_access *gate, const char *tok, size_t n, int scope) {
  SK_FUZZ_CHECK(n >= SK_AUTH_TOKEN_MIN && n <= SK_AUTH_TOKEN_MAX);
  SK_FUZZ_CHECK(sk_auth_lookup(a, tok, n) == scope);
  char header[SK_AUTH_TOKEN_MAX + 16];
  snprintf(header, sizeof header, "Bearer %.*s", (int)n, tok);
  sk_access_request rq = {.version = "HTTP/1.1", .host = "localhost", .host_count = 1, .authorization = header,
                          .scope = SK_SCOPE_READ};
  sk_access_verdict v;
  memset(&v, 0, sizeof v);
  sk_access_check(gate, &rq, &v);
  SK_FUZZ_CHECK(v.status == 0);
  rq.scope = SK_SCOPE_ADMIN;
  sk_access_check(gate, &rq, &v);
  SK_FUZZ_CHECK(scope == SK_SCOPE_ADMIN ? v.status == 0 : v.status == 403);
}

int sk_fuzz_tokens(const uint8_t *data, size_t size) {
  if (size > TOKENS_MAX_INPUT)
    return -1;
  const char *text = (const char *)data;
  sk_auth *a = NULL;
  sk_error err;
  sk_error_clear(&err);
  int rc = sk_auth_parse("t", text, size, &a, &err);
  if (rc) {
    sk_fuzz_check_error(rc, &err);
    SK_FUZZ_CHECK(a == NULL);
    SK_FUZZ_CHECK(rc == SK_EFORMAT || rc == SK_ENOMEM || rc == SK_EIO);
    if (rc == SK_EFORMAT)
      SK_FUZZ_CHECK(strncmp(err.text, "t:", 2) == 0);
    return 0;
  }
  SK_FUZZ_CHECK(a != NULL && sk_auth_count(a) <= SK_AUTH_MAX_TOKENS);
  SK_FUZZ_CHECK(sk_auth_lookup(a, text, 0) == SK_SCOPE_NONE);
  char longest[SK_AUTH_TOKEN_MAX + 1];
  memset(longest, 'a', sizeof longest);
  SK_FUZZ_CHECK(sk_auth_lookup(a, longest, sizeof longest) == SK_SCOPE_NONE);
  sk_access *gate = NULL;
  sk_error_clear(&err);
  SK_FUZZ_CHECK(sk_access_create(NULL, true, &gate, &err) == 0);
  sk_access_set_tokens(gate, a); /* the gate owns the table now */
  const char *p = text, *end = text + size;
  size_t listed = 0, checked = 0;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl != NULL ? nl : end;
    if (le > p && le[-1] == '\r')
      le--;
    const char *t = skip_blank(p, le);
    if (t < le && *t != '#') {
      const char *te = skip_word(t, le), *sc = skip_blank(te, le), *se = skip_word(sc, le);
      int scope = scope_of(sc, (size_t)(se - sc));
      /* The parser accepted the file: every line is exactly TOKEN SCOPE. */
      SK_FUZZ_CHECK(scope > 0 && skip_blank(se, le) == le);
      listed++;
      if (checked++ < TOKENS_MAX_CHECKED)
        check_listed(a, gate, t, (size_t)(te - t), scope);
    }
    p = nl != NULL ? nl + 1 : end;
  }
  SK_FUZZ_CHECK(listed == sk_auth_count(a));
  sk_access_destroy(gate);
  return 0;
}

#ifndef SK_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return sk_fuzz_tokens(data, size) < 0 ? -1 : 0; }
#endif
