#include "sk_store.h"

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

/* The reflected CRC-32 table of polynomial 0xedb88320, entry i being the
 * CRC of byte i (tests/check_sk_store checks it against the bitwise
 * definition). A byte a step instead of a bit a step: start-up reads every
 * record and checks two CRCs over it (the file's and the record's), which
 * bit by bit was most of the start-up time. */
static const uint32_t k_crc_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu,
    0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u,
    0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
    0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
    0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u,
    0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
    0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
    0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
    0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u,
    0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u,
    0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du,
    0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
    0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
    0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u,
    0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
    0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau,
    0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
    0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au,
    0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u,
    0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu,
    0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu,
    0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
    0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u,
    0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
    0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u,
    0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
    0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
    0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u,
    0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u,
    0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u,
    0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
    0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
    0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u,
    0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

uint32_t sk_store_crc32(const void *data, size_t len) {
  const unsigned char *p = data;
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < len; i++)
    crc = (crc >> 8) ^ k_crc_table[(crc ^ p[i]) & 0xffu];
  return ~crc;
}

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
  uint32_t crc = sk_store_crc32(data, len);
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
  if (sk_store_crc32(buf, (size_t)n) != crc) {
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
