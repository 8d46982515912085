/* sk_store: a directory of records that survive kill -9 and power loss.
 *
 * A put is on disk before it returns: the record goes to a temporary file,
 * which is fsync'ed, renamed over the old one, and the directory is fsync'ed
 * so the rename itself is durable. Each file carries a magic, its length and
 * a CRC-32, so a truncated or corrupted file is recognised and skipped at
 * load, never trusted. Keys are file names: [A-Za-z0-9._-]{1,128}, not "."
 * or "..". Not thread-safe: one owner (the daemon's loop thread). */
#ifndef SK_STORE_H
#define SK_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "sk_error.h"

typedef struct sk_store sk_store;

/* Opens (creating it if needed, mode 0700) the directory. *out is new. */
int sk_store_open(const char *dir, sk_store **out, sk_error *err);
void sk_store_close(sk_store *s);

/* True when `key` may name a record. */
int sk_store_key_valid(const char *key);

/* Durably replaces the record `key` with `len` bytes of `data`. */
int sk_store_put(sk_store *s, const char *key, const void *data, size_t len);
/* Durably removes the record (no error when absent). */
int sk_store_delete(sk_store *s, const char *key);
/* Reads one record into a new buffer (*data, free()); SK_ENOTFOUND when
 * absent, SK_EFORMAT when damaged. */
int sk_store_get(sk_store *s, const char *key, void **data, size_t *len);

/* Calls `record` for every intact record (data borrowed for the call) and
 * `skipped` for every damaged file with the reason; leftover temporary files
 * of an interrupted put are removed. A non-zero return from `record` stops
 * the walk and is returned. */
int sk_store_load_all(sk_store *s, int (*record)(void *arg, const char *key, const void *data, size_t len),
                      void (*skipped)(void *arg, const char *file, const char *why), void *arg);

/* CRC-32 (IEEE 802.3), exposed for tests. */
uint32_t sk_store_crc32(const void *data, size_t len);

#endif
