/* A reader of the committed .jsonl files (one JSON record a line) for the
 * suites that replay them, so that a bad line fails naming path:line. */
#ifndef SK_JSONL_H
#define SK_JSONL_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include "sk_testutil.h"

typedef struct sk_jsonl {
  FILE *f;
  char *line; /* getline's buffer, owned */
  size_t cap;
  size_t lineno; /* of the last line read */
  char path[1024];
} sk_jsonl;

/* Opens `path` as given (e.g. a file named by the environment); fails the
 * test when it cannot. Close with sk_jsonl_close. */
static inline void sk_jsonl_open_at(sk_jsonl *r, const char *path) {
  *r = (sk_jsonl){0};
  ck_assert_msg((size_t)snprintf(r->path, sizeof r->path, "%s", path) < sizeof r->path, "path too long: %s", path);
  r->f = fopen(r->path, "rb");
  ck_assert_msg(r->f != NULL, "cannot open %s", r->path);
}

/* Opens tests/<rel> (see sk_test_path). */
static inline void sk_jsonl_open(sk_jsonl *r, const char *rel) {
  char path[1024];
  sk_jsonl_open_at(r, sk_test_path(rel, path, sizeof path));
}

/* The next record (new: json_decref), NULL at the end of the file. A line
 * that is not JSON, a blank one included (the generators write none, and a
 * file cut or merged by hand should not pass as fewer cases), fails the
 * test with path:line and jansson's message. */
static inline json_t *sk_jsonl_next(sk_jsonl *r) {
  const ssize_t len = getline(&r->line, &r->cap, r->f);
  if (len <= 0)
    return NULL;
  r->lineno++;
  json_error_t je;
  json_t *rec = json_loadb(r->line, (size_t)len, 0, &je);
  ck_assert_msg(rec != NULL, "%s:%zu: %s", r->path, r->lineno, je.text);
  return rec;
}

static inline void sk_jsonl_close(sk_jsonl *r) {
  free(r->line);
  fclose(r->f);
  *r = (sk_jsonl){0};
}

/* Whether two JSON arrays of numbers hold the same float32 values (the
 * conformance answers print each float with enough digits to round-trip). */
static inline bool sk_jsonl_same_f32(const json_t *got, const json_t *want) {
  if (!json_is_array(got) || !json_is_array(want) || json_array_size(got) != json_array_size(want))
    return false;
  for (size_t i = 0; i < json_array_size(want); i++)
    if ((float)json_number_value(json_array_get(got, i)) != (float)json_number_value(json_array_get(want, i)))
      return false;
  return true;
}

#endif
