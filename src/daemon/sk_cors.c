#include "sk_cors.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct sk_cors {
  size_t n;
  bool any; /* "*" */
  char origins[SK_CORS_MAX_ORIGINS][SK_CORS_ORIGIN_MAX + 1];
};

/* Checks one origin and writes its serialization (lowercase, without the
 * scheme's default port) into dest. */
static int parse_origin(const char *s, size_t len, char *dest, sk_error *err) {
  char o[SK_CORS_ORIGIN_MAX + 1];
  if (len == 0 || len > SK_CORS_ORIGIN_MAX)
    return sk_error_set(err, SK_EINVAL, "", "--cors-origin: an origin has 1 to %d bytes", SK_CORS_ORIGIN_MAX);
  for (size_t i = 0; i < len; i++)
    o[i] = (char)tolower((unsigned char)s[i]);
  o[len] = 0;
  const char *sep = strstr(o, "://");
  size_t slen = sep ? (size_t)(sep - o) : 0;
  bool scheme_ok = slen > 0 && isalpha((unsigned char)o[0]);
  for (size_t i = 1; i < slen; i++)
    scheme_ok &= isalnum((unsigned char)o[i]) || o[i] == '+' || o[i] == '-' || o[i] == '.';
  if (!scheme_ok)
    return sk_error_set(err, SK_EINVAL, "", "--cors-origin \"%s\": expected scheme://host[:port], e.g. http://localhost:5173",
                        o);
  const char *host = sep + 3;
  if (*host == '\0' || *host == ':')
    return sk_error_set(err, SK_EINVAL, "", "--cors-origin \"%s\": the host is missing", o);
  if (strpbrk(host, "/?#@ \t") != NULL)
    return sk_error_set(err, SK_EINVAL, "", "--cors-origin \"%s\": an origin has no path, query or user: "
                        "scheme://host[:port] only (browsers send no trailing /)", o);
  /* A port: digits after the last ':' outside an IPv6 literal's brackets. */
  const char *close = strrchr(host, ']'), *colon = strrchr(host, ':');
  if (colon != NULL && (close == NULL || colon > close)) {
    size_t plen = strlen(colon + 1);
    if (plen == 0 || plen > 5 || strspn(colon + 1, "0123456789") != plen || atol(colon + 1) > 65535)
      return sk_error_set(err, SK_EINVAL, "", "--cors-origin \"%s\": bad port", o);
    if ((strncmp(o, "http:", 5) == 0 && strcmp(colon, ":80") == 0) ||
        (strncmp(o, "https:", 6) == 0 && strcmp(colon, ":443") == 0))
      *(char *)colon = 0; /* browsers leave the default port out of Origin */
  }
  snprintf(dest, SK_CORS_ORIGIN_MAX + 1, "%s", o);
  return 0;
}

int sk_cors_create(const char *list, bool have_tokens, sk_cors **out, sk_error *err) {
  *out = NULL;
  if (list == NULL || list[strspn(list, ", \t")] == '\0')
    return 0;
  sk_cors *c = calloc(1, sizeof *c);
  if (c == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  int rc = 0;
  for (const char *p = list; *p && rc == 0;) {
    p += strspn(p, ", \t");
    size_t n = strcspn(p, ",");
    size_t len = n;
    while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
      len--;
    if (len == 0)
      break;
    if (len == 1 && p[0] == '*') {
      if (!have_tokens)
        rc = sk_error_set(err, SK_EINVAL, "",
                          "--cors-origin \"*\" needs --tokens: without tokens any web page could read and "
                          "change the skeletons; list the origins instead");
      c->any = true;
    } else if (c->n == SK_CORS_MAX_ORIGINS) {
      rc = sk_error_set(err, SK_EINVAL, "", "--cors-origin: at most %d origins", SK_CORS_MAX_ORIGINS);
    } else if ((rc = parse_origin(p, len, c->origins[c->n], err)) == 0) {
      c->n++;
    }
    p += n;
  }
  if (rc) {
    free(c);
    return rc;
  }
  *out = c;
  return 0;
}

void sk_cors_destroy(sk_cors *c) { free(c); }

const char *sk_cors_allow(const sk_cors *c, const char *origin) {
  if (c == NULL || origin == NULL || *origin == '\0')
    return NULL;
  for (size_t i = 0; i < c->n; i++)
    if (strcmp(c->origins[i], origin) == 0) /* browsers send the serialization exactly */
      return c->origins[i];
  return c->any ? "*" : NULL;
}

bool sk_cors_headers_ok(const char *requested, char *bad, size_t cap) {
  static const char allowed[] = SK_CORS_ALLOW_HEADERS;
  if (cap > 0)
    bad[0] = 0;
  for (const char *p = requested; p != NULL && *p;) {
    p += strspn(p, ", \t");
    size_t n = strcspn(p, ", \t");
    if (n == 0)
      break;
    bool ok = false;
    for (const char *a = allowed; *a && !ok;) {
      a += strspn(a, ", ");
      size_t m = strcspn(a, ",");
      ok = m == n && strncasecmp(a, p, n) == 0;
      a += m;
    }
    if (!ok) {
      if (cap > 0)
        snprintf(bad, cap, "%.*s", (int)n, p);
      return false;
    }
    p += n;
  }
  return true;
}
