/* sk_auth: bearer tokens and their scopes, from a token file.
 *
 * File format (--tokens FILE): one `TOKEN SCOPE` per line, separated by
 * spaces or tabs; `#` starts a comment line; blank lines are ignored.
 * TOKEN is 16 to 256 characters of [A-Za-z0-9._~+/=-] (the RFC 6750
 * b64token set); SCOPE is read, write or admin (admin ⊇ write ⊇ read).
 * The parse is strict: any other line fails the whole file with its line
 * number and why, and a token listed twice is an error.
 *
 * Lookup compares the SHA-256 digest of the presented token with the
 * digest of every token in the table, always all of them and with a
 * constant-time compare, so the answer's timing tells nothing about how
 * much of a token was right or which entry matched. */
#ifndef SK_AUTH_H
#define SK_AUTH_H

#include <stddef.h>

#include "sk_error.h"

enum { SK_SCOPE_NONE = 0, SK_SCOPE_READ = 1, SK_SCOPE_WRITE = 2, SK_SCOPE_ADMIN = 3 };

#define SK_AUTH_TOKEN_MIN 16
#define SK_AUTH_TOKEN_MAX 256
#define SK_AUTH_MAX_TOKENS 4096

typedef struct sk_auth sk_auth;

/* Parses `text` (len bytes) as a token file; `name` is the file name used in
 * error messages. *out is new (sk_auth_destroy). Errors: SK_EFORMAT with
 * err->text "FILE:LINE: why" and err->line, SK_ENOMEM. */
int sk_auth_parse(const char *name, const char *text, size_t len, sk_auth **out, sk_error *err);

/* Reads and parses the file at `path` (at most 1 MiB). Errors as
 * sk_auth_parse, plus SK_EIO ("FILE: strerror") when it cannot be read. */
int sk_auth_load(const char *path, sk_auth **out, sk_error *err);

/* Frees the table. NULL is fine. */
void sk_auth_destroy(sk_auth *a);

/* Number of tokens in the table. */
size_t sk_auth_count(const sk_auth *a);

/* The scope of `token` (len bytes, not NUL-terminated), or SK_SCOPE_NONE
 * when it is not in the table. Runs in time independent of the token's
 * content and of which entry, if any, matches. */
int sk_auth_lookup(const sk_auth *a, const char *token, size_t len);

/* "read", "write", "admin" or "none". */
const char *sk_auth_scope_name(int scope);

#endif
