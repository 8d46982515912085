/* sk_store: a directory of records that survive kill -9 and power loss.
 *
 * A put is on disk before it returns: the record goes to a temporary file,
 * which is fsync'ed, renamed over the old one, and the directory is fsync'ed
 * so the rename itself is durable. Each file carries a magic, its length and
 * a CRC-32, so a truncated or corrupted file is recognised and skipped at
 * load, never trusted. Keys are ids (sk_store_id_valid) and name files
 * <key>.rec; temporary files start with '~', a byte no key has, so they can
 * never be taken for a record nor overwrite one. The directory is locked
 * (flock on its file "skinnerd.lock") for as long as the store is open.
 * Not thread-safe: one owner (the daemon's loop thread), except that
 * sk_store_get only reads and may run on any thread (a put replaces a
 * record by rename, so a reader sees the old file or the new one whole). */
#ifndef SK_STORE_H
#define SK_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_error.h"

typedef struct sk_store sk_store;

/* Opens (creating it if needed, mode 0700) the directory and takes its
 * lock. *out is new. SK_ELOCKED (err says by which pid, when known) while
 * another open store, in this process or another, holds the directory;
 * SK_EIO otherwise. */
int sk_store_open(const char *dir, sk_store **out, sk_error *err);
/* Closes and releases the lock. NULL is fine. */
void sk_store_close(sk_store *s);

/* The one id rule, for the cache, the routes and the store alike: `len`
 * bytes of [A-Za-z0-9._-], 1 to 128 of them, and not "." or ".." (URL
 * dot-segments, which clients rewrite). Any other byte, NUL included, makes
 * the id invalid. */
int sk_store_id_valid(const char *id, size_t len);
/* sk_store_id_valid over a NUL-terminated key. */
int sk_store_key_valid(const char *key);

/* Durably replaces the record `key` with `len` bytes of `data`. On failure
 * the old record is intact. SK_ENOSPACE when the file system is full, over
 * a quota or a file size limit, or read-only (ENOSPC, EDQUOT, EFBIG,
 * EROFS); SK_EIO for any other failure. A put that fails with SK_ENOSPACE
 * makes the store "full" (sk_store_full) until a put succeeds. */
int sk_store_put(sk_store *s, const char *key, const void *data, size_t len);
/* A record written and synced under a temporary name of its own, not yet
 * in place: the slow half of a put (the write and its fsync), which may run
 * on any thread, apart from the rename and the directory's fsync, which
 * decide the order of the records and run where the store is owned. */
typedef struct sk_store_staged {
  bool ready;    /* a temporary file is waiting for its commit or discard */
  int err;       /* the errno of a failed stage, for the commit to report */
  char tmp[200]; /* its name in the directory */
} sk_store_staged;

/* Writes `len` bytes of `data` as `key`'s next record under a temporary
 * name of its own and syncs it. Any thread: touches no state of the store
 * but a counter (the names). 0 with out->ready, or SK_EINVAL, SK_EIO or
 * SK_ENOSPACE with nothing left behind (and out->err set: the commit of
 * a failed stage reports it as sk_store_put would, "full" included). */
int sk_store_stage(sk_store *s, const char *key, const void *data, size_t len, sk_store_staged *out);
/* Puts a staged record in place of `key`'s (rename, then the directory is
 * synced): on return the temporary file is gone, either way. Returns what
 * sk_store_put returns. The owning thread, in the order records must win. */
int sk_store_commit(sk_store *s, const char *key, sk_store_staged *st);
/* Removes a staged record that will not be committed. NULL or not ready:
 * nothing to do. */
void sk_store_discard(sk_store *s, sk_store_staged *st);
/* Whether the last failed put ran out of room with no put succeeding
 * since: the daemon is not ready (/readyz) while this holds. */
int sk_store_full(const sk_store *s);
/* Durably removes the record (no error when absent). SK_ENOSPACE on a
 * read-only file system (the store is then "full" as after a put),
 * SK_EIO otherwise. A delete that succeeds does not clear "full": only a
 * put proves there is room again. */
int sk_store_delete(sk_store *s, const char *key);
/* Reads one record into a new buffer (*data, free()); SK_ENOTFOUND when
 * absent, SK_EFORMAT when damaged. */
int sk_store_get(sk_store *s, const char *key, void **data, size_t *len);

/* Calls `record` for every intact record (data borrowed for the call) and
 * `skipped` for every damaged file with the reason, and for every <key>.rec
 * that is not a regular file (FIFOs, devices, directories, symbolic links:
 * opened with O_NONBLOCK|O_NOFOLLOW, never read); leftover temporary files
 * of an interrupted put are removed. A non-zero return from `record` stops
 * the walk and is returned. */
int sk_store_load_all(sk_store *s, int (*record)(void *arg, const char *key, const void *data, size_t len),
                      void (*skipped)(void *arg, const char *file, const char *why), void *arg);


#endif
