#include "sk_store.h"

#include "sk_hash.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* File layout: magic (8) | payload length (u64 LE) | CRC-32 of payload (u32 LE) | payload. */
static const char k_magic[8] = {'S', 'K', 'S', 'T', 'O', 'R', '1', '\n'};
enum { HEADER = 8 + 8 + 4 };
static const char k_suffix[] = ".rec";
/* '~' is outside the id set: no record is ever named like a temporary file
 * (".tmp-" was, so an id ".tmp-a" was deleted at start-up as a leftover,
 * and PUT a wrote its temporary file over the record of ".tmp-a"). */
static const char k_tmp_prefix[] = "~tmp-";
static const char k_lock_name[] = "skinnerd.lock";

struct sk_store {
  char *dir;
  int dirfd;
  int lockfd; /* holds the flock for the store's lifetime */
  int full;   /* the last failed put ran out of room; cleared by a put */
  atomic_uint_fast64_t next_tmp; /* staged files' names, unique while the process lives */
};

int sk_store_id_valid(const char *id, size_t len) {
  if (len == 0 || len > 128 || (len == 1 && id[0] == '.') || (len == 2 && id[0] == '.' && id[1] == '.'))
    return 0;
  for (size_t i = 0; i < len; i++) {
    char c = id[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
          c == '-'))
      return 0;
  }
  return 1;
}

int sk_store_key_valid(const char *key) { return sk_store_id_valid(key, strlen(key)); }

/* ENOSPC and friends are the operator's to fix (room, quota, a size limit, a
 * read-only mount) and change nothing: they get their own code (507). */
static bool no_room(int e) { return e == ENOSPC || e == EDQUOT || e == EFBIG || e == EROFS; }

static int io_error(sk_store *s, int e) {
  if (no_room(e)) {
    s->full = 1;
    return SK_ENOSPACE;
  }
  return SK_EIO;
}

int sk_store_full(const sk_store *s) { return s->full; }

/* Takes the directory's lock: flock, so it goes with the process however it
 * ends (kill -9 included) and a second open in this process conflicts too
 * (a new open file description). The holder's pid is in the file for the
 * message; it is informative only, the flock is what counts. The lock is
 * held through a read-only descriptor, so the daemon keeps nothing open for
 * writing between puts: the file system can still be remounted read-only
 * under it (then puts answer 507). On a file system that is read-only from
 * the start and has no lock file, the directory itself is locked. */
static int take_lock(const char *dir, int dirfd, int *out, sk_error *err) {
  int fd = openat(dirfd, k_lock_name, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && errno == EROFS)
    fd = openat(dirfd, k_lock_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && (errno == EROFS || errno == ENOENT))
    fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return sk_error_set(err, SK_EIO, "", "cannot open %s/%s: %s", dir, k_lock_name, strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    char pid[32] = "";
    ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
    pid[n > 0 ? n : 0] = 0;
    pid[strcspn(pid, "\n")] = 0;
    close(fd);
    if (e != EWOULDBLOCK)
      return sk_error_set(err, SK_EIO, "", "cannot lock %s/%s: %s", dir, k_lock_name, strerror(e));
    return sk_error_set(err, SK_ELOCKED, "", "%s is in use by another skinnerd (pid %s): one daemon per data directory",
                        dir, pid[0] ? pid : "unknown");
  }
  int w = openat(dirfd, k_lock_name, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
  if (w >= 0) {
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (write(w, pid, (size_t)n) != n) {
      /* the lock holds without the pid; only the message loses it */
    }
    close(w);
  }
  *out = fd;
  return 0;
}

int sk_store_open(const char *dir, sk_store **out, sk_error *err) {
  *out = NULL;
  if (mkdir(dir, 0700) != 0 && errno != EEXIST)
    return sk_error_set(err, SK_EIO, "", "cannot create %s: %s", dir, strerror(errno));
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return sk_error_set(err, SK_EIO, "", "cannot open %s: %s", dir, strerror(errno));
  int lockfd = -1;
  int rc = take_lock(dir, fd, &lockfd, err);
  if (rc) {
    close(fd);
    return rc;
  }
  sk_store *s = calloc(1, sizeof *s);
  if (s == NULL || (s->dir = strdup(dir)) == NULL) {
    free(s);
    close(lockfd);
    close(fd);
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  }
  s->dirfd = fd;
  s->lockfd = lockfd;
  *out = s;
  return 0;
}

void sk_store_close(sk_store *s) {
  if (s == NULL)
    return;
  close(s->lockfd); /* releases the flock */
  close(s->dirfd);
  free(s->dir);
  free(s);
}

static int write_all(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

int sk_store_stage(sk_store *s, const char *key, const void *data, size_t len, sk_store_staged *out) {
  out->ready = false;
  out->err = 0;
  out->tmp[0] = '\0';
  if (!sk_store_key_valid(key)) {
    out->err = EINVAL;
    return SK_EINVAL;
  }
  unsigned char hdr[HEADER];
  memcpy(hdr, k_magic, 8);
  uint64_t size = len;
  uint32_t crc = sk_hash_crc32(data, len);
  for (int i = 0; i < 8; i++)
    hdr[8 + i] = (unsigned char)(size >> (8 * i));
  for (int i = 0; i < 4; i++)
    hdr[16 + i] = (unsigned char)(crc >> (8 * i));
  /* Two puts of one key may stage at once (the pool): each has its own
   * file, and the commits' order is the records' order. The names restart
   * with the process, whose start-up removed every leftover; a name taken
   * all the same (a file put there by hand) is passed over. */
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
    unsigned long long n = (unsigned long long)atomic_fetch_add(&s->next_tmp, 1);
    snprintf(out->tmp, sizeof out->tmp, "%s%llu-%s%s", k_tmp_prefix, n, key, k_suffix);
    fd = openat(s->dirfd, out->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    out->err = errno ? errno : EIO;
    return no_room(out->err) ? SK_ENOSPACE : SK_EIO;
  }
  int e = 0;
  if (write_all(fd, hdr, sizeof hdr) || write_all(fd, data, len) || fsync(fd) != 0)
    e = errno ? errno : EIO;
  if (close(fd) != 0 && e == 0)
    e = errno;
  if (e != 0) {
    unlinkat(s->dirfd, out->tmp, 0); /* the old record was never touched */
    out->err = e;
    return no_room(e) ? SK_ENOSPACE : SK_EIO;
  }
  out->ready = true;
  return 0;
}

int sk_store_commit(sk_store *s, const char *key, sk_store_staged *st) {
  if (!st->ready)
    return st->err == EINVAL ? SK_EINVAL : io_error(s, st->err ? st->err : EIO);
  if (!sk_store_key_valid(key)) {
    sk_store_discard(s, st);
    return SK_EINVAL;
  }
  st->ready = false;
  char name[160];
  snprintf(name, sizeof name, "%s%s", key, k_suffix);
  if (renameat(s->dirfd, st->tmp, s->dirfd, name) != 0) {
    int e = errno;
    unlinkat(s->dirfd, st->tmp, 0);
    return io_error(s, e);
  }
  /* The rename is only durable once the directory entry is. */
  if (fsync(s->dirfd) != 0)
    return io_error(s, errno);
  s->full = 0;
  return 0;
}

void sk_store_discard(sk_store *s, sk_store_staged *st) {
  if (st == NULL || !st->ready)
    return;
  st->ready = false;
  unlinkat(s->dirfd, st->tmp, 0);
}

int sk_store_put(sk_store *s, const char *key, const void *data, size_t len) {
  sk_store_staged st;
  int rc = sk_store_stage(s, key, data, len, &st);
  return rc == SK_EINVAL ? rc : sk_store_commit(s, key, &st);
}

int sk_store_delete(sk_store *s, const char *key) {
  if (!sk_store_key_valid(key))
    return SK_EINVAL;
  char name[160];
  snprintf(name, sizeof name, "%s%s", key, k_suffix);
  if (unlinkat(s->dirfd, name, 0) != 0 && errno != ENOENT)
    return io_error(s, errno); /* EROFS: 507, and not ready */
  return fsync(s->dirfd) == 0 ? 0 : io_error(s, errno);
}

/* Reads and checks one file; *why says what is wrong when SK_EFORMAT. */
static int read_record(sk_store *s, const char *file, void **data, size_t *len, const char **why) {
  *data = NULL;
  *len = 0;
  /* A FIFO named x.rec blocked start-up in open(): look before opening,
   * and open so that nothing can block or lead elsewhere (the fstat after
   * the open closes the race with a file swapped in between). */
  struct stat st;
  if (fstatat(s->dirfd, file, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? SK_ENOTFOUND : SK_EIO;
  if (!S_ISREG(st.st_mode)) {
    *why = S_ISLNK(st.st_mode) ? "a symbolic link, not followed" : "not a regular file";
    return SK_EFORMAT;
  }
  int fd = openat(s->dirfd, file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ELOOP) {
      *why = "a symbolic link, not followed";
      return SK_EFORMAT;
    }
    return errno == ENOENT ? SK_ENOTFOUND : SK_EIO;
  }
  unsigned char hdr[HEADER];
  int rc = SK_EFORMAT;
  char *buf = NULL;
  if (fstat(fd, &st) != 0) {
    rc = SK_EIO;
    goto out;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = "not a regular file";
    goto out;
  }
  if (st.st_size < HEADER || pread(fd, hdr, HEADER, 0) != HEADER) {
    *why = "shorter than its header";
    goto out;
  }
  if (memcmp(hdr, k_magic, 8) != 0) {
    *why = "bad magic";
    goto out;
  }
  uint64_t n = 0;
  uint32_t crc = 0;
  for (int i = 0; i < 8; i++)
    n |= (uint64_t)hdr[8 + i] << (8 * i);
  for (int i = 0; i < 4; i++)
    crc |= (uint32_t)hdr[16 + i] << (8 * i);
  if (n != (uint64_t)st.st_size - HEADER) {
    *why = "length does not match the file (truncated?)";
    goto out;
  }
  buf = malloc(n ? (size_t)n : 1);
  if (buf == NULL) {
    rc = SK_ENOMEM;
    goto out;
  }
  if (n > 0 && pread(fd, buf, (size_t)n, HEADER) != (ssize_t)n) {
    rc = SK_EIO;
    goto out;
  }
  if (sk_hash_crc32(buf, (size_t)n) != crc) {
    *why = "checksum mismatch";
    goto out;
  }
  *data = buf;
  *len = (size_t)n;
  buf = NULL;
  rc = 0;
out:
  free(buf);
  close(fd);
  return rc;
}

int sk_store_get(sk_store *s, const char *key, void **data, size_t *len) {
  if (!sk_store_key_valid(key))
    return SK_EINVAL;
  char name[160];
  snprintf(name, sizeof name, "%s%s", key, k_suffix);
  const char *why = NULL;
  return read_record(s, name, data, len, &why);
}

int sk_store_load_all(sk_store *s, int (*record)(void *arg, const char *key, const void *data, size_t len),
                      void (*skipped)(void *arg, const char *file, const char *why), void *arg) {
  int fd = dup(s->dirfd);
  if (fd < 0)
    return SK_EIO;
  DIR *d = fdopendir(fd);
  if (d == NULL) {
    close(fd);
    return SK_EIO;
  }
  rewinddir(d);
  int rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    const char *f = e->d_name;
    if (strncmp(f, k_tmp_prefix, sizeof k_tmp_prefix - 1) == 0) {
      unlinkat(s->dirfd, f, 0); /* an interrupted put: the old record is intact */
      continue;
    }
    size_t n = strlen(f);
    if (n <= sizeof k_suffix - 1 || strcmp(f + n - (sizeof k_suffix - 1), k_suffix) != 0)
      continue;
    char key[160];
    snprintf(key, sizeof key, "%.*s", (int)(n - (sizeof k_suffix - 1)), f);
    if (!sk_store_key_valid(key))
      continue;
    void *data;
    size_t len;
    const char *why = "unreadable";
    int r = read_record(s, f, &data, &len, &why);
    if (r == 0) {
      rc = record(arg, key, data, len);
      free(data);
    } else if (skipped != NULL) {
      skipped(arg, f, r == SK_EFORMAT ? why : sk_strerror(r));
    }
  }
  closedir(d);
  return rc;
}
