/* sk_ui: the remote preview page (ui/), built into the binary.
 *
 * tools/embed.py turns the files of ui/ into src/sk_ui_files.c at build
 * time, so the page always matches the daemon that serves it and nothing
 * needs installing. Routes (GET and HEAD only, rows of the route table):
 *   /ui          301 to /ui/ (query kept)
 *   /ui/         index.html
 *   /ui/<file>   the file, or 404 problem+json
 * Every file carries a strong ETag (a hash of its bytes) and
 * "Cache-Control: no-cache": browsers revalidate and get 304 until the
 * daemon is rebuilt with another page. The API's contract (proto/) is
 * embedded and served the same way at /openapi.yaml and /schemas/. */
#ifndef SK_UI_H
#define SK_UI_H

#include <stdbool.h>
#include <stddef.h>

#include "sk_http.h"

typedef struct sk_ui_file {
  const char *name;         /* path under /ui/, e.g. "app.js" */
  const char *content_type;
  const unsigned char *data; /* NUL-terminated; len excludes the NUL */
  size_t len;
  const char *etag;          /* quoted, e.g. "\"0123456789abcdef\"" */
} sk_ui_file;

/* The embedded files (src/sk_ui_files.c, generated). */
extern const sk_ui_file sk_ui_files[];
extern const size_t sk_ui_file_count;

/* The API's contract, embedded the same way (src/daemon/sk_ui_spec_files.c,
 * generated from proto/): "openapi.yaml" and "schemas/<name>.json", the
 * bytes of the files, so the relative $refs of GET /openapi.yaml resolve
 * against the daemon that serves it. */
extern const sk_ui_file sk_ui_spec_files[];
extern const size_t sk_ui_spec_file_count;

/* The file at `name` (len bytes, no leading slash; "" is index.html), or
 * NULL. Borrowed, static. */
const sk_ui_file *sk_ui_find(const char *name, size_t len);

/* The contract file at `name` ("openapi.yaml", "schemas/pose.json"), or
 * NULL. Borrowed, static. */
const sk_ui_file *sk_ui_spec_find(const char *name, size_t len);

/* True when an If-None-Match header value (NULL: absent) matches `etag`:
 * "*", or one of a comma-separated list, weak "W/" prefixes ignored
 * (RFC 9110 13.1.2 uses the weak comparison for If-None-Match). */
bool sk_ui_etag_matches(const char *if_none_match, const char *etag);

/* Answers a GET or HEAD of /ui or of a path under /ui/: the route
 * table's two /ui rows (sk_routes.c) call it from their handler, so the
 * request has passed the gate every route passes first (framing, Host,
 * access, CORS) and the method check (405 with "Allow: GET, HEAD"). There
 * is deliberately no way to serve the page before that gate. */
void sk_ui_answer(sk_http_req *req);

/* Answers a GET or HEAD of /openapi.yaml or /schemas/<name>.json (the
 * route table's two spec rows, past the same gate): the embedded file with
 * its ETag, or 404 problem+json. */
void sk_ui_spec_answer(sk_http_req *req);

#endif
