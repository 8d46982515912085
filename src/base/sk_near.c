#include "sk_near.h"

#include <stdint.h>
#include <string.h>

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

size_t sk_near_distance(const char *a, const char *b) {
  const size_t la = strlen(a), lb = strlen(b);
  if (la > SK_NEAR_MAX || lb > SK_NEAR_MAX)
    return SIZE_MAX;
  size_t rows[2][SK_NEAR_MAX + 1];
  size_t *prev = rows[0], *cur = rows[1];
  for (size_t j = 0; j <= lb; j++)
    prev[j] = j;
  for (size_t i = 1; i <= la; i++) {
    cur[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t sub = prev[j - 1] + (lower((unsigned char)a[i - 1]) != lower((unsigned char)b[j - 1]));
      size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
      cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
    size_t *t = prev;
    prev = cur;
    cur = t;
  }
  return prev[lb];
}

void sk_near_init(sk_near *n, const char *name) {
  n->name = name;
  n->best = NULL;
  n->best_distance = SIZE_MAX;
}

void sk_near_offer(sk_near *n, const char *candidate) {
  if (n->name == NULL || candidate == NULL || strcmp(n->name, candidate) == 0)
    return;
  const size_t ln = strlen(n->name), lc = strlen(candidate);
  size_t limit = (ln > lc ? ln : lc) / 3;
  if (limit < 1)
    limit = 1;
  size_t d = sk_near_distance(n->name, candidate);
  const size_t shorter = ln < lc ? ln : lc;
  if (d <= limit && d < shorter && d < n->best_distance) { /* "c" is not a misspelt "a" */
    n->best = candidate;
    n->best_distance = d;
  }
}

const char *sk_near_list(const char *name, const char *const *list) {
  sk_near n;
  sk_near_init(&n, name);
  for (; list != NULL && *list != NULL; list++)
    sk_near_offer(&n, *list);
  return n.best;
}
