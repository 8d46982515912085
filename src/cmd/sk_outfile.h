/* sk_outfile: an output file that appears whole or not at all, for the
 * offline tool's -o (a render farm must never take a cut-short shot for a
 * finished one, nor lose the previous one to a refused run).
 *
 * Writes go to a new file beside the target (PATH.tmp-PID-N, created with
 * O_EXCL and the usual 0666 & ~umask, or the permission bits of the file
 * it replaces), which sk_outfile_commit renames over PATH once everything
 * is written and closed; sk_outfile_abort, or a failed commit, removes it,
 * so PATH keeps what it held before (a killed process leaves it behind,
 * under its own name). Written in
 * place instead, as a plain fopen("wb") would: standard output ("-" or
 * NULL), a PATH that exists and is not a regular file (/dev/null, a FIFO,
 * a terminal: no rename could replace it), a symbolic link (written
 * through, as before), and a directory where no file can be created (a
 * regular file cut short in place is removed by sk_outfile_abort). */
#ifndef SK_OUTFILE_H
#define SK_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "sk_error.h"

typedef struct sk_outfile {
  FILE *f;      /* where to write; stdout for "-" */
  char *path;   /* owned: the target, NULL for stdout */
  char *tmp;    /* owned: the file written until commit, NULL when in place */
  bool regular; /* in place on a regular file (removed by abort) */
} sk_outfile;

/* Opens `path` for writing as above. Errors: SK_EIO with the path and the
 * system's reason in err (at pointer ""), SK_ENOMEM. *o is closed then. */
int sk_outfile_open(sk_outfile *o, const char *path, sk_error *err);

/* Flushes and closes, then renames the temporary file over the target.
 * Errors: SK_EIO (nothing replaced: the temporary file is removed). Either
 * way *o is closed. */
int sk_outfile_commit(sk_outfile *o, sk_error *err);

/* Closes without publishing: the temporary file (or a regular file cut
 * short in place) is removed. Safe on a closed or zeroed *o. */
void sk_outfile_abort(sk_outfile *o);

#endif
