/* Cost of one bearer token lookup (SHA-256 of the presented token, then a
 * constant-time compare with every table entry), for 1, 100 and 4096
 * tokens: `make tests/bench/auth_lookup && tests/bench/auth_lookup`.
 * Not a test; the figures are in docs/history/security.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sk_auth.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(void) {
  static const int sizes[] = {1, 100, SK_AUTH_MAX_TOKENS};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    int n = sizes[k];
    char *text = malloc((size_t)n * 48 + 1);
    size_t len = 0;
    for (int i = 0; i < n; i++)
      len += (size_t)sprintf(text + len, "token-%06d-0123456789abcdef read\n", i);
    sk_auth *a = NULL;
    sk_error e;
    sk_error_clear(&e);
    if (sk_auth_parse("bench", text, len, &a, &e) != 0) {
      fprintf(stderr, "%s\n", e.text);
      return 1;
    }
    const char *hit = "token-000000-0123456789abcdef", *miss = "token-999999-0123456789abcdXX";
    int iters = n > 1000 ? 20000 : 200000, found = 0;
    double t0 = now();
    for (int i = 0; i < iters; i++)
      found += sk_auth_lookup(a, (i & 1) ? hit : miss, strlen(hit));
    double dt = now() - t0;
    printf("%5d tokens: %.2f us per lookup (%d found)\n", n, dt / iters * 1e6, found);
    sk_auth_destroy(a);
    free(text);
  }
  return 0;
}
