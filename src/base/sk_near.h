/* sk_near: the "did you mean" of error messages. The caller offers every
 * valid name in turn; the closest one to what the user wrote is kept when
 * it is close enough to be the name meant: an edit distance (insertions,
 * deletions, substitutions, case-only changes free) of at most a third of
 * the longer name (at least 1), and less than the shorter name's length
 * (so one letter is never a misspelling of another). No allocation: two rows of
 * SK_NEAR_MAX + 1 counters on the stack; names longer than SK_NEAR_MAX
 * bytes get no suggestion. */
#ifndef SK_NEAR_H
#define SK_NEAR_H

#include <stddef.h>

#define SK_NEAR_MAX 64

typedef struct sk_near {
  const char *name; /* borrowed: what the user wrote */
  const char *best; /* borrowed from the offers, or NULL */
  size_t best_distance;
} sk_near;

/* Starts a search for names close to `name` (borrowed for the search). */
void sk_near_init(sk_near *n, const char *name);
/* Offers `candidate` (borrowed; kept in n->best while it is the closest
 * acceptable one; the first of equally close offers wins). */
void sk_near_offer(sk_near *n, const char *candidate);
/* The best offer of a NULL-terminated list, or NULL. */
const char *sk_near_list(const char *name, const char *const *list);
/* Levenshtein distance of a and b with case-only differences free; SIZE_MAX
 * when either is longer than SK_NEAR_MAX. Public for tests. */
size_t sk_near_distance(const char *a, const char *b);

#endif
