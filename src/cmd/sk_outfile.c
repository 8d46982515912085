#include "sk_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void outfile_free(sk_outfile *o) {
  free(o->path);
  free(o->tmp);
  memset(o, 0, sizeof *o);
}

/* A new file beside `path` (O_EXCL: never another run's), or NULL with
 * errno set. Its name goes to *tmp (owned). */
static FILE *open_beside(const char *path, char **tmp) {
  const size_t cap = strlen(path) + 48;
  if ((*tmp = malloc(cap)) == NULL)
    return NULL;
  for (unsigned n = 0; n < 100; n++) {
    snprintf(*tmp, cap, "%s.tmp-%ld-%u", path, (long)getpid(), n);
    int fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST)
      continue;
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (f != NULL)
      return f;
    int e = errno;
    if (fd >= 0) {
      close(fd);
      unlink(*tmp);
    }
    errno = e;
    break;
  }
  free(*tmp);
  *tmp = NULL;
  return NULL;
}

int sk_outfile_open(sk_outfile *o, const char *path, sk_error *err) {
  memset(o, 0, sizeof *o);
  if (path == NULL || strcmp(path, "-") == 0) {
    o->f = stdout;
    return 0;
  }
  if ((o->path = strdup(path)) == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  struct stat st;
  const bool exists = lstat(path, &st) == 0;
  /* Replaced by a rename only where that is what writing it would do; a
   * file replaced keeps its permission bits, as one written in place would. */
  if (!exists || S_ISREG(st.st_mode))
    o->f = open_beside(path, &o->tmp);
  if (o->f != NULL && exists)
    fchmod(fileno(o->f), st.st_mode & 07777);
  if (o->f == NULL) {
    o->f = fopen(path, "wb");
    o->regular = o->f != NULL && fstat(fileno(o->f), &st) == 0 && S_ISREG(st.st_mode);
  }
  if (o->f == NULL) {
    int e = errno;
    outfile_free(o);
    return sk_error_set(err, SK_EIO, "", "%s: %s", path, strerror(e));
  }
  return 0;
}

int sk_outfile_commit(sk_outfile *o, sk_error *err) {
  if (o->f == stdout) {
    int rc = fflush(stdout) != 0 ? sk_error_set(err, SK_EIO, "", "writing the output failed: %s", strerror(errno)) : 0;
    outfile_free(o);
    return rc;
  }
  int e = 0;
  if (fclose(o->f) != 0)
    e = errno ? errno : EIO;
  o->f = NULL;
  if (!e && o->tmp != NULL && rename(o->tmp, o->path) != 0)
    e = errno;
  if (e) {
    sk_error_set(err, SK_EIO, "", "%s: %s", o->path, strerror(e));
    sk_outfile_abort(o);
    return SK_EIO;
  }
  outfile_free(o);
  return 0;
}

void sk_outfile_abort(sk_outfile *o) {
  if (o->f != NULL && o->f != stdout)
    fclose(o->f);
  else if (o->f == stdout)
    fflush(stdout);
  if (o->tmp != NULL)
    unlink(o->tmp);
  else if (o->regular && o->path != NULL)
    unlink(o->path);
  outfile_free(o);
}
