/* skinner: the offline tool. `skinner eval` evaluates one case without a
 * server (render farms); `skinner bench` measures the kernels. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "sk_error.h"
#include "sk_eval.h"
#include "sk_shot.h"
#include "sk_json.h"
#include "sk_numfmt.h"

int sk_bench_main(int argc, char **argv);
int sk_bench_clips_main(int argc, char **argv);

static void usage(FILE *f) {
  fprintf(f,
          "usage: skinner eval [FILE]      evaluate one JSON case (stdin without FILE), print the result\n"
          "       skinner bench [--json] [--quick] [--bones N] [--poses N] [--layout blocked|rows]\n"
          "                                benchmark the scalar core and the batch kernels\n"
          "       skinner bench --clips [--json] [--quick] [--data DIR]\n"
          "                                benchmark the clip pipeline on Fox and mannequiny\n"
          "       skinner frames FILE.glb [--clip NAME]... [--from S --to S --fps R] [--characters N]\n"
          "                      [--format f32|f32x12] [--header] [-o FILE]\n"
          "                                binary final matrices of a shot (see skinner frames --help)\n"
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

static int cmd_eval(int argc, char **argv) {
  if (argc > 3) {
    usage(stderr);
    return 2;
  }
  const char *path = argc == 3 ? argv[2] : NULL;
  if (path != NULL && (strcmp(path, "--help") == 0 || strcmp(path, "-h") == 0)) {
    usage(stdout);
    return 0;
  }
  /* "-" is stdin; any other dash word is an option we do not have, not a file name. */
  if (path != NULL && path[0] == '-' && path[1] != '\0') {
    fprintf(stderr, "skinner eval: unknown option %s (see skinner --help)\n", path);
    return 2;
  }
  FILE *f = stdin;
  if (path != NULL && strcmp(path, "-") != 0 && (f = fopen(path, "rb")) == NULL) {
    fprintf(stderr, "skinner eval: %s: %s\n", path, strerror(errno));
    return 2;
  }
  sk_strbuf in = {0}, out = {0};
  sk_error err;
  sk_error_clear(&err);
  int rc = read_all(f, &in);
  if (f != stdin)
    fclose(f);
  if (rc) {
    fprintf(stderr, "skinner eval: cannot read %s: %s\n", path ? path : "stdin", sk_strerror(rc));
    sk_strbuf_free(&in);
    return 2;
  }
  /* A glTF path in the case is relative to the case file's directory. */
  char dir[4096] = "";
  const char *slash = path != NULL && strcmp(path, "-") != 0 ? strrchr(path, '/') : NULL;
  if (slash != NULL)
    snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
  json_t *c = NULL;
  rc = sk_json_load(in.data ? in.data : "", in.len, &c, &err);
  if (!rc)
    rc = sk_eval_case_at(c, dir[0] ? dir : NULL, &out, &err);
  json_decref(c);
  sk_strbuf_free(&in);
  if (rc) {
    fprintf(stderr, "skinner eval: %s at \"%s\": %s\n", sk_strerror(err.code ? err.code : rc), err.pointer, err.text);
    sk_strbuf_free(&out);
    return rc == SK_ENOMEM ? 1 : 2;
  }
  fwrite(out.data, 1, out.len, stdout);
  fputc('\n', stdout);
  sk_strbuf_free(&out);
  return fflush(stdout) == 0 ? 0 : 1;
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
