#include "sk_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *sk_strerror(int code) {
  switch (code) {
  case 0:
    return "Success";
#define SK_ERR_STR(name, value, status, title, kind) \
  case value:                                  \
    return title;
    SK_ERRNO_MAP(SK_ERR_STR)
#undef SK_ERR_STR
  default:
    return "Unknown error";
  }
}

const char *sk_errname(int code) {
  switch (code) {
  case 0:
    return "OK";
#define SK_ERR_NAME(name, value, status, title, kind) \
  case value:                                   \
    return #name;
    SK_ERRNO_MAP(SK_ERR_NAME)
#undef SK_ERR_NAME
  default:
    return "EUNKNOWNCODE";
  }
}

int sk_error_http_status(int code) {
  switch (code) {
#define SK_ERR_STATUS(name, value, status, title, kind) \
  case value:                                     \
    return status;
    SK_ERRNO_MAP(SK_ERR_STATUS)
#undef SK_ERR_STATUS
  default:
    return 500;
  }
}

const char *sk_error_kind(int code) {
  switch (code) {
#define SK_ERR_KIND(name, value, status, title, kind) \
  case value:                                         \
    return kind;
    SK_ERRNO_MAP(SK_ERR_KIND)
#undef SK_ERR_KIND
  default:
    return "internal";
  }
}

void sk_error_clear(sk_error *err) {
  if (err != NULL)
    memset(err, 0, sizeof *err);
}

int sk_error_set(sk_error *err, int code, const char *pointer, const char *fmt, ...) {
  if (err == NULL || err->code != 0)
    return code;
  err->code = code;
  snprintf(err->pointer, sizeof err->pointer, "%s", pointer != NULL ? pointer : "");
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(err->text, sizeof err->text, fmt, ap);
  va_end(ap);
  if (n < 0)
    snprintf(err->text, sizeof err->text, "%s", sk_strerror(code));
  return code;
}

size_t sk_pointer_push(char *buf, size_t cap, const char *token) {
  size_t len = strnlen(buf, cap);
  size_t at = len;
  if (at + 1 < cap)
    buf[at++] = '/';
  for (const char *p = token; *p != '\0' && at + 2 < cap; p++) {
    if (*p == '~' || *p == '/') {
      buf[at++] = '~';
      buf[at++] = *p == '~' ? '0' : '1';
    } else {
      buf[at++] = *p;
    }
  }
  if (at < cap)
    buf[at] = '\0';
  else if (cap > 0)
    buf[cap - 1] = '\0';
  return len;
}

size_t sk_pointer_push_index(char *buf, size_t cap, size_t index) {
  char tok[32];
  snprintf(tok, sizeof tok, "%zu", index);
  return sk_pointer_push(buf, cap, tok);
}

void sk_pointer_child(char *buf, size_t cap, const char *ptr, const char *token) {
  snprintf(buf, cap, "%s", ptr != NULL ? ptr : "");
  sk_pointer_push(buf, cap, token);
}
