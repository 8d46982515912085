/* sk_access: what a request must pass before routing, decided from its
 * headers alone (so before any byte of the body is read):
 *   1. framing: one Content-Length at most, a plain decimal, no
 *      Transfer-Encoding beside it, and no coding but a single "chunked";
 *   2. Host: HTTP/1.1 needs exactly one, and it must be in the allowed list
 *      (the DNS-rebinding guard);
 *   3. bearer token: when a token table is set, the route's scope; the
 *      token comes from Authorization: Bearer, or on the WebSocket route
 *      from the subprotocol SK_ACCESS_WS_TOKEN_PREFIX + base64url(token)
 *      (browsers cannot set headers on a WebSocket), never both.
 * The first failing check gives the verdict; the routes layer turns it
 * into problem+json. Runs on the loop thread; the token table is swapped
 * on SIGHUP by sk_access_set_tokens(). */
#ifndef SK_ACCESS_H
#define SK_ACCESS_H

#include <stdbool.h>
#include <stddef.h>

#include "sk_auth.h"
#include "sk_error.h"

typedef struct sk_access sk_access;

/* The Sec-WebSocket-Protocol entry that carries a token: this prefix, then
 * the token in base64url without padding (a subprotocol is an HTTP token,
 * which '/', '+' and '=' are not). */
#define SK_ACCESS_WS_TOKEN_PREFIX "base64url.bearer.skinner."

/* `allowed_hosts`: NULL for the default, "*" to accept any Host, or a comma
 * separated list of host names or addresses, each with an optional port
 * ("example.org", "example.org:8443", "[::1]", "10.0.0.5:80"); an entry
 * without a port accepts any port. The default is the loopback names
 * (localhost, 127.0.0.1, [::1]) when `loopback_listener`, else any Host.
 * *out is new. Errors: SK_EINVAL with err naming the bad entry. */
int sk_access_create(const char *allowed_hosts, bool loopback_listener, sk_access **out, sk_error *err);

/* Frees the gate and its token table. NULL is fine. */
void sk_access_destroy(sk_access *a);

/* Installs `tokens` (stolen; NULL: no authentication) and frees the old
 * table. */
void sk_access_set_tokens(sk_access *a, sk_auth *tokens);

/* True when a token table is installed. */
bool sk_access_has_tokens(const sk_access *a);

/* The scope a request needs: SK_SCOPE_NONE for /healthz and /readyz,
 * ADMIN for /metrics, READ for reads and the evaluation POSTs (pose,
 * poses), WRITE for whatever changes skeletons. `route` is SK_ROUTE_*,
 * `method` SK_METHOD_* (sk_metrics.h). */
int sk_access_scope(int route, int method);

/* The request as the gate sees it. Header counts are of the raw header
 * lines; values are the first line's (NULL when absent). */
typedef struct sk_access_request {
  const char *version;                /* "HTTP/1.1", "HTTP/1.0" */
  const char *host;
  unsigned host_count;
  const char *content_length;
  unsigned content_length_count;
  const char *transfer_encoding;
  unsigned transfer_encoding_count;
  const char *authorization;
  bool websocket;                     /* the route takes the token subprotocol */
  const char *ws_protocol;            /* Sec-WebSocket-Protocol (websocket routes) */
  unsigned ws_protocol_count;
  int scope;                          /* sk_access_scope() */
} sk_access_request;

typedef struct sk_access_verdict {
  int status;          /* 0: pass; else 400, 401, 403 or 421 */
  const char *kind;    /* problem type suffix: "bad-framing", "bad-host", "bad-credentials", "misdirected-request",
                          "unauthorized", "forbidden" */
  const char *title;
  char detail[200];
  char www_authenticate[128]; /* "" or the WWW-Authenticate value (401, 403) */
  bool close;          /* close the connection after the answer: the body (if
                          any) is not read, or its framing cannot be trusted */
} sk_access_verdict;

/* Fills *v for `rq`. `a` may be NULL: framing and the Host presence rule
 * only. */
void sk_access_check(const sk_access *a, const sk_access_request *rq, sk_access_verdict *v);

#endif
