#include "sk_access.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sk_base64.h"
#include "sk_metrics.h"

#define HOSTS_MAX 64
#define HOST_NAME_MAX_ 255

typedef struct host_rule {
  char name[HOST_NAME_MAX_ + 1]; /* lowercase; IPv6 with its brackets */
  long port;                     /* -1: any */
} host_rule;

struct sk_access {
  bool any_host;
  size_t nhosts;
  host_rule hosts[HOSTS_MAX];
  sk_auth *tokens; /* owned; NULL: open */
};

/* Splits "name[:port]" or "[v6][:port]" into a lowercase name and a port
 * (-1 when none). Returns -1 when malformed. */
static int split_host(const char *s, size_t n, char *name, size_t cap, long *port) {
  size_t hlen;
  const char *rest;
  if (n > 0 && s[0] == '[') {
    const char *close = memchr(s, ']', n);
    if (close == NULL)
      return -1;
    hlen = (size_t)(close - s) + 1;
    rest = close + 1;
  } else {
    const char *colon = memchr(s, ':', n);
    hlen = colon != NULL ? (size_t)(colon - s) : n;
    rest = s + hlen;
  }
  size_t rlen = n - (size_t)(rest - s);
  if (hlen == 0 || hlen >= cap)
    return -1;
  for (size_t i = 0; i < hlen; i++) {
    unsigned char c = (unsigned char)s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
              c == '_' || ((c == ':' || c == '[' || c == ']') && s[0] == '[');
    if (!ok)
      return -1;
    name[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
  }
  name[hlen] = '\0';
  *port = -1;
  if (rlen == 0)
    return 0;
  if (rest[0] != ':' || rlen < 2 || rlen > 6)
    return -1;
  long p = 0;
  for (size_t i = 1; i < rlen; i++) {
    if (rest[i] < '0' || rest[i] > '9')
      return -1;
    p = p * 10 + (rest[i] - '0');
  }
  if (p > 65535)
    return -1;
  *port = p;
  return 0;
}

static int add_host(sk_access *a, const char *s, size_t n, sk_error *err) {
  if (a->nhosts == HOSTS_MAX)
    return sk_error_set(err, SK_EINVAL, NULL, "--allowed-hosts: more than %d entries", HOSTS_MAX);
  host_rule *r = &a->hosts[a->nhosts];
  if (split_host(s, n, r->name, sizeof r->name, &r->port) != 0)
    return sk_error_set(err, SK_EINVAL, NULL, "--allowed-hosts: bad entry \"%.*s\" (NAME, NAME:PORT or [IPv6]:PORT)",
                        (int)(n > 100 ? 100 : n), s);
  a->nhosts++;
  return 0;
}

int sk_access_create(const char *allowed_hosts, bool loopback_listener, sk_access **out, sk_error *err) {
  *out = NULL;
  sk_access *a = calloc(1, sizeof *a);
  if (a == NULL)
    return sk_error_set(err, SK_ENOMEM, NULL, "out of memory");
  int rc = 0;
  if (allowed_hosts == NULL) {
    a->any_host = !loopback_listener;
    static const char *const loop[] = {"localhost", "127.0.0.1", "[::1]"};
    for (size_t i = 0; i < 3 && rc == 0; i++)
      rc = add_host(a, loop[i], strlen(loop[i]), err);
  } else if (strcmp(allowed_hosts, "*") == 0) {
    a->any_host = true;
  } else {
    for (const char *p = allowed_hosts; rc == 0;) {
      size_t n = strcspn(p, ",");
      size_t b = 0, e = n;
      while (b < e && (p[b] == ' ' || p[b] == '\t'))
        b++;
      while (e > b && (p[e - 1] == ' ' || p[e - 1] == '\t'))
        e--;
      rc = add_host(a, p + b, e - b, err);
      if (p[n] == '\0')
        break;
      p += n + 1;
    }
  }
  if (rc != 0) {
    free(a);
    return rc;
  }
  *out = a;
  return 0;
}

void sk_access_destroy(sk_access *a) {
  if (a == NULL)
    return;
  sk_auth_destroy(a->tokens);
  free(a);
}

void sk_access_set_tokens(sk_access *a, sk_auth *tokens) {
  sk_auth_destroy(a->tokens);
  a->tokens = tokens;
}

bool sk_access_has_tokens(const sk_access *a) { return a != NULL && a->tokens != NULL; }

int sk_access_scope(int route, int method) {
  switch (route) {
  case SK_ROUTE_HEALTHZ:
  case SK_ROUTE_READYZ: return SK_SCOPE_NONE;
  case SK_ROUTE_METRICS: return SK_SCOPE_ADMIN;
  case SK_ROUTE_POSE:
  case SK_ROUTE_POSES: return SK_SCOPE_READ; /* evaluation changes nothing */
  case SK_ROUTE_BONES:
  case SK_ROUTE_REST: return SK_SCOPE_WRITE;
  default: return method == SK_METHOD_GET || method == SK_METHOD_HEAD ? SK_SCOPE_READ : SK_SCOPE_WRITE;
  }
}

static bool host_allowed(const sk_access *a, const char *host) {
  char name[HOST_NAME_MAX_ + 1];
  long port;
  if (split_host(host, strlen(host), name, sizeof name, &port) != 0)
    return false;
  for (size_t i = 0; i < a->nhosts; i++)
    if (strcmp(a->hosts[i].name, name) == 0 && (a->hosts[i].port < 0 || a->hosts[i].port == port))
      return true;
  return false;
}

static void verdict(sk_access_verdict *v, int status, const char *kind, const char *title, bool close,
                    const char *fmt, const char *arg) {
  v->status = status;
  v->kind = kind;
  v->title = title;
  v->close = close;
  snprintf(v->detail, sizeof v->detail, fmt, arg);
}

static bool plain_decimal(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 19) /* 19 digits always fit in 64 bits */
    return false;
  return strspn(s, "0123456789") == n;
}

/* 0 pass, else fills v. Framing problems always close the connection. */
static int check_framing(const sk_access_request *rq, sk_access_verdict *v) {
  const char *bad = NULL;
  if (rq->content_length_count > 1)
    bad = "more than one Content-Length header (refused even when equal)";
  else if (rq->transfer_encoding_count > 1)
    bad = "more than one Transfer-Encoding header";
  else if (rq->content_length != NULL && rq->transfer_encoding != NULL)
    bad = "Transfer-Encoding together with Content-Length";
  else if (rq->content_length != NULL && !plain_decimal(rq->content_length))
    bad = "Content-Length is not a plain decimal number";
  else if (rq->transfer_encoding != NULL && strcasecmp(rq->transfer_encoding, "chunked") != 0)
    bad = "the only Transfer-Encoding accepted is a single \"chunked\"";
  if (bad == NULL)
    return 0;
  verdict(v, 400, "bad-framing", "Bad request framing", true, "%s; the connection is closed", bad);
  return -1;
}

static bool has_body(const sk_access_request *rq) {
  return rq->transfer_encoding != NULL || (rq->content_length != NULL && strcmp(rq->content_length, "0") != 0);
}

/* The token of "Bearer <token>" (scheme case-insensitive), or NULL. */
static const char *bearer(const char *h, size_t *len) {
  if (h == NULL || strncasecmp(h, "Bearer", 6) != 0 || (h[6] != ' ' && h[6] != '\t'))
    return NULL;
  const char *t = h + 6;
  while (*t == ' ' || *t == '\t')
    t++;
  size_t n = strlen(t);
  while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t'))
    n--;
  if (n == 0)
    return NULL;
  *len = n;
  return t;
}

/* The token subprotocol in a Sec-WebSocket-Protocol value (a comma
 * separated list): 0 when there is none, 1 with the decoded token in
 * tok (*len bytes), -1 when it is there but not base64url of a token. */
static int ws_token(const char *protos, char tok[SK_AUTH_TOKEN_MAX], size_t *len) {
  static const char prefix[] = SK_ACCESS_WS_TOKEN_PREFIX;
  const size_t pn = sizeof prefix - 1;
  for (const char *p = protos; p != NULL && *p;) {
    p += strspn(p, " \t,");
    size_t n = strcspn(p, " \t,");
    if (n >= pn && memcmp(p, prefix, pn) == 0) {
      long got = sk_base64_decode(p + pn, n - pn, SK_BASE64_URL | SK_BASE64_STRICT, (uint8_t *)tok, SK_AUTH_TOKEN_MAX);
      if (got < SK_AUTH_TOKEN_MIN)
        return -1;
      *len = (size_t)got;
      return 1;
    }
    p += n;
  }
  return 0;
}

/* tok: the presented token (len bytes), NULL when none was; malformed:
 * credentials were sent but are not a token. */
static void check_token(const sk_access *a, const sk_access_request *rq, const char *tok, size_t len,
                        bool malformed, sk_access_verdict *v) {
  bool close = has_body(rq);
  const char *need = sk_auth_scope_name(rq->scope);
  if (tok == NULL) {
    const char *how = rq->websocket ? "this route needs a token with scope %s (Authorization: Bearer TOKEN, or the "
                                      "subprotocol " SK_ACCESS_WS_TOKEN_PREFIX "BASE64URL_TOKEN)"
                                    : "this route needs a bearer token with scope %s (Authorization: Bearer TOKEN)";
    const char *bad = rq->authorization != NULL
                          ? "the Authorization header is not \"Bearer TOKEN\"; this route needs scope %s"
                          : "the " SK_ACCESS_WS_TOKEN_PREFIX " subprotocol is not base64url (no "
                            "padding) of a 16 to 256 byte token; this route needs scope %s";
    verdict(v, 401, "unauthorized", "Unauthorized", close, malformed ? bad : how, need);
    snprintf(v->www_authenticate, sizeof v->www_authenticate,
             malformed ? "Bearer realm=\"skinnerd\", error=\"invalid_request\"" : "Bearer realm=\"skinnerd\"");
    return;
  }
  int have = sk_auth_lookup(a->tokens, tok, len);
  if (have == SK_SCOPE_NONE) {
    verdict(v, 401, "unauthorized", "Unauthorized", close, "the bearer token is not known; this route needs scope %s",
            need);
    snprintf(v->www_authenticate, sizeof v->www_authenticate, "Bearer realm=\"skinnerd\", error=\"invalid_token\"");
    return;
  }
  if (have < rq->scope) {
    char detail[sizeof v->detail];
    snprintf(detail, sizeof detail, "this route needs scope %s; the token has scope %s", need,
             sk_auth_scope_name(have));
    verdict(v, 403, "forbidden", "Forbidden", close, "%s", detail);
    snprintf(v->www_authenticate, sizeof v->www_authenticate,
             "Bearer realm=\"skinnerd\", error=\"insufficient_scope\", scope=\"%s\"", need);
  }
}

/* The credentials of a request: the Authorization header, or on a
 * WebSocket route the token subprotocol (a browser's WebSocket cannot set
 * headers). Both at once is refused rather than one of them picked: a
 * proxy adding its own Authorization must not decide which one counts.
 * Returns -1 with v filled when refused. */
static int credentials(const sk_access *a, const sk_access_request *rq, sk_access_verdict *v) {
  char wsbuf[SK_AUTH_TOKEN_MAX];
  size_t len = 0;
  int ws = 0;
  if (rq->websocket && rq->ws_protocol_count > 1) {
    verdict(v, 400, "bad-credentials", "Bad credentials", has_body(rq), "%s",
            "more than one Sec-WebSocket-Protocol header; send the subprotocols in one");
    return -1;
  }
  if (rq->websocket && rq->ws_protocol != NULL)
    ws = ws_token(rq->ws_protocol, wsbuf, &len);
  if (ws != 0 && rq->authorization != NULL) {
    verdict(v, 400, "bad-credentials", "Bad credentials", has_body(rq), "%s",
            "both an Authorization header and the " SK_ACCESS_WS_TOKEN_PREFIX " subprotocol; send one");
    memset(wsbuf, 0, sizeof wsbuf);
    return -1;
  }
  if (a->tokens != NULL && rq->scope > SK_SCOPE_NONE) {
    if (ws != 0)
      check_token(a, rq, ws > 0 ? wsbuf : NULL, len, ws < 0, v);
    else {
      const char *tok = bearer(rq->authorization, &len);
      check_token(a, rq, tok, len, tok == NULL && rq->authorization != NULL, v);
    }
  }
  memset(wsbuf, 0, sizeof wsbuf); /* no copy of a token outlives the request's headers */
  return v->status != 0 ? -1 : 0;
}

void sk_access_check(const sk_access *a, const sk_access_request *rq, sk_access_verdict *v) {
  memset(v, 0, sizeof *v);
  if (check_framing(rq, v) != 0)
    return;
  bool http11 = rq->version != NULL && strcmp(rq->version, "HTTP/1.0") != 0;
  if (rq->host_count > 1) {
    verdict(v, 400, "bad-host", "Bad Host header", has_body(rq), "%s", "more than one Host header");
    return;
  }
  if (rq->host == NULL && http11) {
    verdict(v, 400, "bad-host", "Bad Host header", has_body(rq), "%s", "an HTTP/1.1 request needs a Host header");
    return;
  }
  if (a == NULL)
    return;
  if (!a->any_host && rq->host != NULL && !host_allowed(a, rq->host)) {
    char shown[64];
    snprintf(shown, sizeof shown, "%s", rq->host);
    for (char *c = shown; *c; c++) /* client bytes: printable ASCII only in the answer */
      if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e || *c == '"' || *c == '\\')
        *c = '?';
    verdict(v, 421, "misdirected-request", "Misdirected request", has_body(rq),
            "Host \"%s\" is not served here (--allowed-hosts)", shown);
    return;
  }
  credentials(a, rq, v);
}
