/* sk_problem: RFC 9457 application/problem+json answers, the one way every
 * handler reports an error. The body names the problem kind (a column of
 * SK_ERRNO_MAP), a title, a detail, the JSON pointer of the field at fault,
 * and for malformed JSON the line and column. */
#ifndef SK_PROBLEM_H
#define SK_PROBLEM_H

#include "sk_error.h"
#include "sk_http.h"
#include "sk_buf.h"

#define SK_PROBLEM_BASE "https://skinnerd.dev/problems/"
#define SK_PROBLEM_TYPE "application/problem+json"

/* Appends the problem document to `b`: {"type", "title", "status",
 * "detail" (title when NULL), "pointer" ("" when NULL), and "line" and
 * "column" when line > 0}. Errors: SK_ENOMEM (b->failed set). */
int sk_problem_write(sk_strbuf *b, int status, const char *kind, const char *title, const char *detail,
                     const char *pointer, int line, int column);

/* The HTTP status `code` is answered with: sk_error_http_status, except
 * that server-side codes other than ENOMEM, EBUSY and ENOSPACE are 500. */
int sk_problem_status(int code);

/* Answers `req` with a problem; `headers` (NULL-terminated name/value
 * pairs, borrowed) are added. Out of memory: a plain-text 503. */
void sk_problem_send(sk_http_req *req, int status, const char *kind, const char *title, const char *detail,
                     const char *pointer, int line, int column, const char *const *headers);

/* Answers `req` with `err` (its code, or `fallback` when err->code is 0):
 * kind and title from SK_ERRNO_MAP, detail err->text, pointer
 * err->pointer; a 503 carries "Retry-After: 1". */
void sk_problem_err(sk_http_req *req, const sk_error *err, int fallback);

/* sk_problem_err of an error made from `code`, `pointer` (NULL: "") and a
 * printf detail. */
__attribute__((format(printf, 4, 5))) void sk_problem(sk_http_req *req, int code, const char *pointer,
                                                      const char *fmt, ...);

#endif
