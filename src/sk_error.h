/* sk_error: one list of error codes for every module, and the rich error
 * that user-facing parsers fill in (it becomes the problem+json body). */
#ifndef SK_ERROR_H
#define SK_ERROR_H

#include <stddef.h>

/* X(name, value, http status, problem title) */
#define SK_ERRNO_MAP(X)                                                        \
  X(EINVAL, -1, 400, "Invalid argument")                                      \
  X(ENOMEM, -2, 503, "Out of memory")                                         \
  X(ESYNTAX, -3, 400, "Malformed JSON")                                       \
  X(ETYPE, -4, 422, "Wrong type")                                             \
  X(EMISSING, -5, 422, "Missing field")                                       \
  X(ERANGE, -6, 422, "Value out of range")                                    \
  X(ENOTFINITE, -7, 422, "Non-finite number")                                 \
  X(EDUPLICATE, -8, 422, "Duplicate")                                         \
  X(ECYCLE, -9, 422, "Cycle in bone hierarchy")                               \
  X(EUNKNOWN, -10, 422, "Unknown reference")                                  \
  X(ESINGULAR, -11, 422, "Non-invertible matrix")                             \
  X(ELENGTH, -12, 422, "Wrong array length")                                  \
  X(ENOTFOUND, -13, 404, "Not found")                                         \
  X(ETOOBIG, -14, 413, "Too large")                                           \
  X(EIO, -15, 500, "I/O error")                                               \
  X(EUNSUPPORTED, -16, 415, "Unsupported")                                    \
  X(EBUSY, -17, 503, "Busy")                                                  \
  X(EFORMAT, -18, 422, "Invalid file format")                                 \
  X(ENOSPACE, -19, 507, "Insufficient storage")                               \
  X(ELOCKED, -20, 409, "In use")

enum {
#define SK_ERR_ENUM(name, value, status, title) SK_##name = value,
  SK_ERRNO_MAP(SK_ERR_ENUM)
#undef SK_ERR_ENUM
};

#define SK_ERROR_POINTER_MAX 256
#define SK_ERROR_TEXT_MAX 256

/* The first error wins: sk_error_set() does nothing when `err->code` is
 * already set, so the deepest, most specific failure is what users see. */
typedef struct sk_error {
  int code;                           /* 0 or SK_E* */
  int line, column;                   /* JSON syntax errors: 1-based; else 0 */
  char pointer[SK_ERROR_POINTER_MAX]; /* RFC 6901 pointer to the field */
  char text[SK_ERROR_TEXT_MAX];       /* one line, no trailing period */
} sk_error;

/* Static string naming `code` ("SK_ECYCLE" -> "Cycle in bone hierarchy"). */
const char *sk_strerror(int code);
/* Symbolic name of `code` without the prefix, e.g. "ECYCLE"; "OK" for 0. */
const char *sk_errname(int code);
/* HTTP status a client-caused error maps to (400..415, 422); 500 for EIO,
 * 507 for ENOSPACE (the data directory is out of storage). */
int sk_error_http_status(int code);

/* Clears `err` (NULL is fine). */
void sk_error_clear(sk_error *err);
/* Records the first error; returns `code` so callers can `return sk_error_set(...)`.
 * `err` may be NULL. `pointer` may be NULL (empty pointer = the whole document). */
int sk_error_set(sk_error *err, int code, const char *pointer, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Appends "/token" to a JSON pointer held in `buf` (capacity `cap`), escaping
 * '~' and '/' per RFC 6901. Returns the previous length so the caller can
 * truncate back with buf[len] = 0. Overlong pointers are cut, never overflow. */
size_t sk_pointer_push(char *buf, size_t cap, const char *token);
/* Same with an array index. */
size_t sk_pointer_push_index(char *buf, size_t cap, size_t index);

#endif
