#include "sk_ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_json.h"
#include "sk_metrics.h"

#define ID_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"

static const sk_ui_file *find_in(const sk_ui_file *files, size_t count, const char *name, size_t len) {
  for (size_t i = 0; i < count; i++)
    if (strlen(files[i].name) == len && memcmp(files[i].name, name, len) == 0)
      return &files[i];
  return NULL;
}

const sk_ui_file *sk_ui_find(const char *name, size_t len) {
  if (len == 0) {
    name = "index.html";
    len = strlen(name);
  }
  return find_in(sk_ui_files, sk_ui_file_count, name, len);
}

const sk_ui_file *sk_ui_spec_find(const char *name, size_t len) {
  return find_in(sk_ui_spec_files, sk_ui_spec_file_count, name, len);
}

bool sk_ui_etag_matches(const char *inm, const char *etag) {
  if (inm == NULL)
    return false;
  size_t elen = strlen(etag);
  for (const char *p = inm; *p;) {
    p += strspn(p, " \t,");
    size_t n = strcspn(p, ",");
    size_t t = n;
    while (t > 0 && (p[t - 1] == ' ' || p[t - 1] == '\t'))
      t--;
    if (t == 1 && p[0] == '*')
      return true;
    const char *v = p;
    if (t >= 2 && v[0] == 'W' && v[1] == '/') {
      v += 2;
      t -= 2;
    }
    if (t == elen && memcmp(v, etag, elen) == 0)
      return true;
    p += n;
  }
  return false;
}

/* A problem+json answer; the text is built with the JSON string writer so
 * a hostile path cannot break out of the string. */
static void ui_problem(sk_http_req *req, int status, const char *kind, const char *title, const char *detail,
                       const char *const *headers) {
  sk_strbuf b = {0};
  sk_strbuf_append(&b, "{\"type\":", 8);
  char type[96];
  snprintf(type, sizeof type, "https://skinnerd.dev/problems/%s", kind);
  sk_json_write_string(&b, type);
  sk_strbuf_append(&b, ",\"title\":", 9);
  sk_json_write_string(&b, title);
  char num[32];
  int n = snprintf(num, sizeof num, ",\"status\":%d", status);
  sk_strbuf_append(&b, num, (size_t)n);
  sk_strbuf_append(&b, ",\"detail\":", 10);
  sk_json_write_string(&b, detail);
  sk_strbuf_append(&b, ",\"pointer\":\"\"}", 14);
  if (b.failed) {
    sk_strbuf_free(&b);
    sk_http_respond(req, 503, "text/plain", (void *)"out of memory\n", 14, false, NULL);
    return;
  }
  sk_http_respond(req, status, "application/problem+json", b.data, b.len, true, headers);
}

static void serve(sk_http_req *req, const sk_ui_file *f) {
  const char *const hdr[] = {"ETag", f->etag, "Cache-Control", "no-cache", "X-Content-Type-Options", "nosniff", NULL};
  if (sk_ui_etag_matches(sk_http_header(req, "If-None-Match"), f->etag)) {
    sk_http_respond(req, 304, NULL, (void *)"", 0, false, hdr);
    return;
  }
  sk_http_respond(req, 200, f->content_type, (void *)f->data, f->len, false, hdr);
}

void sk_ui_answer(sk_http_req *req) {
  const char *url = req->url;
  size_t plen = strcspn(url, "?#");
  if (plen < 3 || strncmp(url, "/ui", 3) != 0 || (plen > 3 && url[3] != '/')) { /* a caller's bug: stay safe */
    ui_problem(req, 404, "not-found", "Not found", "not a path of the preview page", NULL);
    return;
  }
  if (plen == 3) {
    /* Relative URLs in the page resolve against /ui/, not /. libmicrohttpd
     * hands over the path without its query, so the one argument the page
     * reads (?id=) is carried over when it is a valid skeleton id. */
    char loc[160] = "/ui/";
    const char *id = sk_http_query(req, "id");
    size_t idlen = id != NULL ? strlen(id) : 0;
    if (idlen > 0 && idlen <= 128 && strspn(id, ID_CHARS) == idlen)
      snprintf(loc, sizeof loc, "/ui/?id=%s", id);
    const char *const hdr[] = {"Location", loc, NULL};
    sk_http_respond(req, 301, "text/plain; charset=utf-8", (void *)"see /ui/\n", 9, false, hdr);
    return;
  }
  const sk_ui_file *f = sk_ui_find(url + 4, plen - 4);
  if (f == NULL) {
    char detail[192];
    snprintf(detail, sizeof detail, "the preview page has no file \"%.*s\"", (int)(plen - 4 > 128 ? 128 : plen - 4),
             url + 4);
    ui_problem(req, 404, "not-found", "Not found", detail, NULL);
    return;
  }
  serve(req, f);
}

void sk_ui_spec_answer(sk_http_req *req) {
  const char *url = req->url;
  size_t plen = strcspn(url, "?#");
  const sk_ui_file *f = plen > 1 && url[0] == '/' ? sk_ui_spec_find(url + 1, plen - 1) : NULL;
  if (f == NULL) {
    char detail[192];
    snprintf(detail, sizeof detail, "the contract has no file \"%.*s\" (see /openapi.yaml)",
             (int)(plen > 128 ? 128 : plen), url);
    ui_problem(req, 404, "not-found", "Not found", detail, NULL);
    return;
  }
  serve(req, f);
}
