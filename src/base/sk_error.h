/* sk_error: one list of error codes for every module, and the rich error
 * that user-facing parsers fill in (it becomes the problem+json body). */
#ifndef SK_ERROR_H
#define SK_ERROR_H

#include <stddef.h>

/* X(name, value, http status, problem title, problem kind: the slug of the
 * problem+json "type" URI, https://skinnerd.dev/problems/<kind>) */
#define SK_ERRNO_MAP(X)                                                    \
  X(EINVAL, -1, 400, "Invalid argument", "invalid-request")                \
  X(ENOMEM, -2, 503, "Out of memory", "out-of-memory")                     \
  X(ESYNTAX, -3, 400, "Malformed JSON", "malformed-json")                  \
  X(ETYPE, -4, 422, "Wrong type", "wrong-type")                            \
  X(EMISSING, -5, 422, "Missing field", "missing-field")                   \
  X(ERANGE, -6, 422, "Value out of range", "out-of-range")                 \
  X(ENOTFINITE, -7, 422, "Non-finite number", "non-finite-number")         \
  X(EDUPLICATE, -8, 422, "Duplicate", "duplicate")                         \
  X(ECYCLE, -9, 422, "Cycle in bone hierarchy", "cycle")                   \
  X(EUNKNOWN, -10, 422, "Unknown reference", "unknown-reference")          \
  X(ESINGULAR, -11, 422, "Non-invertible matrix", "non-invertible-matrix") \
  X(ELENGTH, -12, 422, "Wrong array length", "wrong-array-length")         \
  X(ENOTFOUND, -13, 404, "Not found", "not-found")                         \
  X(ETOOBIG, -14, 413, "Too large", "too-large")                           \
  X(EIO, -15, 500, "I/O error", "internal")                                \
  X(EUNSUPPORTED, -16, 415, "Unsupported", "unsupported-media-type")       \
  X(EBUSY, -17, 503, "Busy", "overloaded")                                 \
  X(EFORMAT, -18, 422, "Invalid file format", "invalid-format")            \
  X(ENOSPACE, -19, 507, "Insufficient storage", "insufficient-storage")    \
  X(ELOCKED, -20, 409, "In use", "internal")

enum {
#define SK_ERR_ENUM(name, value, status, title, kind) SK_##name = value,
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
/* The problem "kind" of `code` (SK_ERRNO_MAP's last column), e.g.
 * "missing-field"; "internal" for codes the user cannot cause or fix. */
const char *sk_error_kind(int code);

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
/* `ptr` then "/token" into buf: the pointer of a member of the value at `ptr`. */
void sk_pointer_child(char *buf, size_t cap, const char *ptr, const char *token);

#endif
