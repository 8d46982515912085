#include "sk_problem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "sk_json.h"

int sk_problem_write(sk_strbuf *b, int status, const char *kind, const char *title, const char *detail,
                     const char *pointer, int line, int column) {
  char num[48], type[128];
  snprintf(type, sizeof type, SK_PROBLEM_BASE "%s", kind);
  sk_strbuf_append(b, "{\"type\":", 8);
  sk_json_write_string(b, type);
  sk_strbuf_append(b, ",\"title\":", 9);
  sk_json_write_string(b, title);
  int n = snprintf(num, sizeof num, ",\"status\":%d", status);
  sk_strbuf_append(b, num, (size_t)n);
  sk_strbuf_append(b, ",\"detail\":", 10);
  sk_json_write_string(b, detail != NULL ? detail : title);
  sk_strbuf_append(b, ",\"pointer\":", 11);
  sk_json_write_string(b, pointer != NULL ? pointer : "");
  if (line > 0) {
    n = snprintf(num, sizeof num, ",\"line\":%d,\"column\":%d", line, column);
    sk_strbuf_append(b, num, (size_t)n);
  }
  sk_strbuf_append(b, "}", 1);
  return b->failed ? SK_ENOMEM : 0;
}

int sk_problem_status(int code) {
  int status = sk_error_http_status(code);
  if (status >= 500 && code != SK_ENOMEM && code != SK_EBUSY && code != SK_ENOSPACE)
    status = 500;
  return status;
}

void sk_problem_send(sk_http_req *req, int status, const char *kind, const char *title, const char *detail,
                     const char *pointer, int line, int column, const char *const *headers) {
  sk_strbuf b = {0};
  if (sk_problem_write(&b, status, kind, title, detail, pointer, line, column) != 0) {
    sk_strbuf_free(&b);
    sk_http_respond(req, 503, "text/plain", (void *)"out of memory\n", 14, false, NULL);
    return;
  }
  sk_http_respond(req, status, SK_PROBLEM_TYPE, b.data, b.len, true, headers);
}

void sk_problem_err(sk_http_req *req, const sk_error *err, int fallback) {
  static const char *const retry[] = {"Retry-After", "1", NULL};
  int code = err->code ? err->code : fallback;
  int status = sk_problem_status(code);
  sk_problem_send(req, status, sk_error_kind(code), sk_strerror(code), err->text[0] ? err->text : sk_strerror(code),
                  err->pointer, code == SK_ESYNTAX ? err->line : 0, err->column, status == 503 ? retry : NULL);
}

void sk_problem(sk_http_req *req, int code, const char *pointer, const char *fmt, ...) {
  sk_error e;
  sk_error_clear(&e);
  e.code = code;
  snprintf(e.pointer, sizeof e.pointer, "%s", pointer ? pointer : "");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e.text, sizeof e.text, fmt, ap);
  va_end(ap);
  sk_problem_err(req, &e, code);
}
