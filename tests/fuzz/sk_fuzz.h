/* sk_fuzz: what the libFuzzer targets share with the Check suite that
 * replays their regression inputs (tests/check_sk_fuzz_regressions.c).
 *
 * Each target is a plain function, sk_fuzz_<name>(data, size), that parses
 * and uses one untrusted input the way skinnerd does and checks the
 * promises the parsers make (an error always carries its code and a
 * pointer; a success builds something the evaluator can run and whose JSON
 * reads back). A broken promise calls SK_FUZZ_CHECK's abort() so libFuzzer
 * saves the input; memory errors are the sanitizers' to find.
 *
 * fuzz_<name>.c defines LLVMFuzzerTestOneInput() unless SK_FUZZ_REPLAY is
 * defined: the replay suite links all of them into one program. */
#ifndef SK_FUZZ_H
#define SK_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_error.h"

/* Inputs above this are skipped: the parsers' cost is linear, so bigger
 * inputs only make each execution slower without reaching new code. The
 * eval target has its own, tighter budget (fuzz_eval.c). */
#define SK_FUZZ_MAX_INPUT (256u * 1024u)

#define SK_FUZZ_CHECK(cond)                                                                                        \
  do {                                                                                                             \
    if (!(cond)) {                                                                                                 \
      fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond);                            \
      abort();                                                                                                     \
    }                                                                                                              \
  } while (0)

/* The promise every user-facing parser makes on failure: the same code is
 * returned and recorded, and pointer and text are NUL-terminated inside
 * their buffers (an unterminated pointer would leak stack into a
 * problem+json body). */
static inline void sk_fuzz_check_error(int rc, const sk_error *err) {
  SK_FUZZ_CHECK(rc < 0);
  SK_FUZZ_CHECK(err->code == rc);
  SK_FUZZ_CHECK(memchr(err->pointer, '\0', sizeof err->pointer) != NULL);
  SK_FUZZ_CHECK(memchr(err->text, '\0', sizeof err->text) != NULL);
  SK_FUZZ_CHECK(err->pointer[0] == '\0' || err->pointer[0] == '/');
  SK_FUZZ_CHECK(sk_error_http_status(rc) >= 400);
}

int sk_fuzz_skeleton(const uint8_t *data, size_t size);
int sk_fuzz_pose(const uint8_t *data, size_t size);
int sk_fuzz_eval(const uint8_t *data, size_t size);
int sk_fuzz_gltf(const uint8_t *data, size_t size);
int sk_fuzz_snapshot(const uint8_t *data, size_t size);
int sk_fuzz_banim(const uint8_t *data, size_t size);
int sk_fuzz_tokens(const uint8_t *data, size_t size);
int sk_fuzz_access(const uint8_t *data, size_t size);
int sk_fuzz_cost(const uint8_t *data, size_t size);
int sk_fuzz_ws(const uint8_t *data, size_t size);

#endif
