/* skinner: the offline tool. `skinner eval` evaluates one case without a
 * server (render farms); `skinner bench` measures the kernels. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "sk_error.h"
#include "sk_eval.h"
#include "sk_frames.h"
#include "sk_outfile.h"
#include "sk_shot.h"
#include "sk_json.h"
#include "sk_numfmt.h"
#include "sk_retarget_cmd.h"

#include "sk_bench.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: skinner eval [--format json|f32|f32x12] [-o FILE] [CASE]\n"
          "                                evaluate one JSON case (stdin without CASE); json: the result object,\n"
          "                                f32/f32x12: each result's final matrices, raw, as skinnerd's binary answers\n"
          "       skinner bench [--json] [--quick] [--bones N] [--poses N] [--layout blocked|rows]\n"
          "                                benchmark the scalar core and the batch kernels\n"
          "       skinner bench --clips [--json] [--quick] [--data DIR]\n"
          "                                benchmark the clip pipeline on Fox and mannequiny\n"
          "       skinner frames FILE.glb [--clip NAME]... [--from S --to S --fps R] [--characters N]\n"
          "                      [--frames START:END] [--format f32|f32x12] [--header] [-o FILE]\n"
          "                                binary final matrices of a shot (see skinner frames --help)\n"
          "       skinner retarget SOURCE.glb TARGET.glb --clip NAME [--options JSON] [-o FILE]\n"
          "                                a clip retargeted onto another skeleton, as JSON keys\n"
          "       skinner --version | --help\n"
          "Bad input exits with status 2 and one line naming the field (JSON pointer).\n");
}

static int read_all(FILE *f, sk_strbuf *b) {
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    if (sk_strbuf_append(b, chunk, n))
      return SK_ENOMEM;
  return ferror(f) ? SK_EIO : 0;
}

/* --format's names, as skinner frames spells them (f32x12: the 3x4 rows). */
static int eval_format(const char *name) {
  if (strcmp(name, "json") == 0)
    return SK_FMT_JSON;
  if (strcmp(name, "f32") == 0)
    return SK_FMT_F32;
  return strcmp(name, "f32x12") == 0 ? SK_FMT_MAT3X4 : -1;
}

static int write_file(void *arg, const char *data, size_t len) { return fwrite(data, 1, len, arg) == len ? 0 : -1; }

typedef struct eval_args {
  const char *in, *out; /* NULL: stdin, stdout */
  int fmt;
} eval_args;

/* 0, or the exit status (-1: --help, exit 0). */
static int eval_parse_args(int argc, char **argv, eval_args *a) {
  memset(a, 0, sizeof *a);
  for (int i = 2; i < argc; i++) {
    const char *o = argv[i];
    if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
      usage(stdout);
      return -1;
    }
    if ((strcmp(o, "--format") == 0 || strcmp(o, "-o") == 0) && i + 1 >= argc)
      return fprintf(stderr, "skinner eval: %s needs a value\n", o), 2;
    if (strcmp(o, "--format") == 0) {
      if ((a->fmt = eval_format(argv[++i])) < 0)
        return fprintf(stderr, "skinner eval: --format is json, f32 or f32x12, not \"%s\"\n", argv[i]), 2;
    } else if (strcmp(o, "-o") == 0) {
      a->out = strcmp(argv[++i], "-") == 0 ? NULL : argv[i];
    } else if (o[0] == '-' && o[1] != '\0') { /* "-" is stdin; other dash words are not file names */
      return fprintf(stderr, "skinner eval: unknown option %s (see skinner --help)\n", o), 2;
    } else if (a->in != NULL) {
      usage(stderr);
      return 2;
    } else {
      a->in = strcmp(o, "-") == 0 ? NULL : o;
    }
  }
  return 0;
}

/* The case's text, and the directory its relative glTF paths start from. */
static int eval_read_case(const eval_args *a, sk_strbuf *in, char *dir, size_t dir_len) {
  FILE *f = stdin;
  if (a->in != NULL && (f = fopen(a->in, "rb")) == NULL)
    return fprintf(stderr, "skinner eval: %s: %s\n", a->in, strerror(errno)), 2;
  int rc = read_all(f, in);
  if (f != stdin)
    fclose(f);
  if (rc)
    return fprintf(stderr, "skinner eval: cannot read %s: %s\n", a->in ? a->in : "stdin", sk_strerror(rc)), 2;
  const char *slash = a->in != NULL ? strrchr(a->in, '/') : NULL;
  dir[0] = '\0';
  if (slash != NULL)
    snprintf(dir, dir_len, "%.*s", slash == a->in ? 1 : (int)(slash - a->in), a->in);
  return 0;
}

static int cmd_eval(int argc, char **argv) {
  eval_args a;
  int rc = eval_parse_args(argc, argv, &a);
  if (rc)
    return rc < 0 ? 0 : rc;
  sk_strbuf in = {0}, out = {0};
  char dir[4096];
  if ((rc = eval_read_case(&a, &in, dir, sizeof dir)) != 0) {
    sk_strbuf_free(&in);
    return rc;
  }
  sk_error err;
  sk_error_clear(&err);
  /* -o FILE appears whole or not at all, its old content kept on an error (sk_outfile) */
  sk_outfile of;
  if ((rc = sk_outfile_open(&of, a.out, &err)) != 0) {
    fprintf(stderr, "skinner eval: %s\n", err.text);
    sk_strbuf_free(&in);
    return 1;
  }
  json_t *c = NULL;
  /* The answer goes out as it is made (sk_eval_opts.flush). */
  const sk_eval_opts o = {.base_dir = dir[0] ? dir : NULL, .fmt = a.fmt, .flush = write_file, .flush_arg = of.f};
  rc = sk_json_load(in.data ? in.data : "", in.len, &c, &err);
  if (!rc)
    rc = sk_eval_case_opts(c, &o, &out, &err);
  json_decref(c);
  sk_strbuf_free(&in);
  sk_strbuf_free(&out);
  if (!rc && a.fmt == SK_FMT_JSON && fputc('\n', of.f) == EOF)
    rc = sk_error_set(&err, SK_EIO, "", "writing the output failed");
  if (!rc)
    rc = sk_outfile_commit(&of, &err);
  else
    sk_outfile_abort(&of);
  if (!rc)
    return 0;
  fprintf(stderr, "skinner eval: %s at \"%s\": %s\n", sk_strerror(err.code ? err.code : rc), err.pointer, err.text);
  return rc == SK_ENOMEM || rc == SK_EIO ? 1 : 2;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "eval") == 0)
    return cmd_eval(argc, argv);
  if (strcmp(argv[1], "frames") == 0)
    return sk_shot_main(argc - 1, argv + 1);
  if (strcmp(argv[1], "retarget") == 0)
    return sk_retarget_cmd_main(argc - 1, argv + 1);
  if (strcmp(argv[1], "bench") == 0) {
    for (int i = 2; i < argc; i++)
      if (strcmp(argv[i], "--clips") == 0)
        return sk_bench_clips_main(argc - 1, argv + 1);
    return sk_bench_main(argc - 1, argv + 1);
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("skinner %s\n", PACKAGE_VERSION);
    return 0;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(stdout);
    return 0;
  }
  usage(stderr);
  return 2;
}
