#include "sk_threads.h"

#include <stdbool.h>
#include <string.h>

void sk_threads_init(sk_threads *t, unsigned per_job, unsigned spare) {
  memset(t, 0, sizeof *t);
  t->per_job = per_job > 0 ? per_job : 1;
  t->spare = spare;
}

unsigned sk_threads_take(sk_threads *t, unsigned want) {
  if (t == NULL)
    return 0;
  if (want > t->per_job - 1)
    want = t->per_job - 1;
  unsigned spare = __atomic_load_n(&t->spare, __ATOMIC_RELAXED), got;
  do { /* a compare-and-swap: two jobs must not both take the last one */
    got = want < spare ? want : spare;
    if (got == 0)
      return 0;
  } while (!__atomic_compare_exchange_n(&t->spare, &spare, spare - got, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  const unsigned now = __atomic_add_fetch(&t->taken, got, __ATOMIC_RELAXED);
  unsigned high = __atomic_load_n(&t->high, __ATOMIC_RELAXED);
  while (now > high && !__atomic_compare_exchange_n(&t->high, &high, now, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    ;
  return got;
}

void sk_threads_give(sk_threads *t, unsigned n) {
  if (t == NULL || n == 0)
    return;
  __atomic_sub_fetch(&t->taken, n, __ATOMIC_RELAXED);
  __atomic_add_fetch(&t->spare, n, __ATOMIC_RELAXED);
}

unsigned sk_threads_high(const sk_threads *t) { return t != NULL ? __atomic_load_n(&t->high, __ATOMIC_RELAXED) : 0; }
