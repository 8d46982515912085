/* sk_cors: which web origins may call the API from a browser
 * (--cors-origin), and the fixed parts of the answers that tell the
 * browser so (Fetch standard, "CORS protocol"). Pure: it never sees a
 * request; sk_routes asks it and adds the headers.
 *
 * No origin is allowed by default. "*" allows every origin and is refused
 * unless bearer tokens are on (--tokens): the API is then reachable only
 * with a token, which a browser never attaches by itself (no cookies, no
 * ambient credentials), so a foreign page can do nothing its user could
 * not already do with curl. Without tokens, "*" would let any page the
 * user visits read and change the daemon's skeletons. */
#ifndef SK_CORS_H
#define SK_CORS_H

#include <stdbool.h>
#include <stddef.h>

#include "sk_error.h"

#define SK_CORS_MAX_ORIGINS 32
#define SK_CORS_ORIGIN_MAX 256 /* bytes of one origin, NUL excluded */

/* Request headers a preflight may name (Access-Control-Allow-Headers). */
#define SK_CORS_ALLOW_HEADERS "Content-Type, Authorization, If-Match, If-None-Match, Accept"
/* Answer headers a page may read (Access-Control-Expose-Headers): every
 * header the daemon sets that is not CORS-safelisted. */
#define SK_CORS_EXPOSE_HEADERS                                                                          \
  "ETag, Location, Retry-After, Allow, WWW-Authenticate, Content-Length, Skinner-Skeleton-ETag, "      \
  "Skinner-Bone-Count, Skinner-Pose-Count, Skinner-Matrix-Count, Server-Timing"
/* Seconds a browser may cache a preflight's answer (Chromium caps at 7200). */
#define SK_CORS_MAX_AGE "600"

typedef struct sk_cors sk_cors;

/* Parses `list`: origins separated by commas (a repeated --cors-origin
 * gives them joined), each "scheme://host[:port]" as browsers send it
 * (lowercased here; :80 on http and :443 on https dropped, as browsers
 * do), or "*". "*" needs `have_tokens` (see above). *out is new, NULL
 * for an empty list (no CORS). Errors: SK_EINVAL with err naming the bad
 * origin and why. */
int sk_cors_create(const char *list, bool have_tokens, sk_cors **out, sk_error *err);
/* NULL is fine. */
void sk_cors_destroy(sk_cors *c);

/* The Access-Control-Allow-Origin value for a request's Origin header
 * (NULL: none): the configured origin (borrowed from c) when it equals
 * `origin`, "*" when every origin is allowed, else NULL (no CORS headers:
 * the browser then refuses the page the answer). NULL for a NULL c. */
const char *sk_cors_allow(const sk_cors *c, const char *origin);

/* Checks a preflight's Access-Control-Request-Headers value (NULL: none)
 * against SK_CORS_ALLOW_HEADERS (any case). Returns true when every name
 * is allowed; else false with the first name that is not in bad[] (cut to
 * cap bytes). */
bool sk_cors_headers_ok(const char *requested, char *bad, size_t cap);

#endif
