#define _POSIX_C_SOURCE 200809L
#include "sk_threads.h"

#include <stdlib.h>
#include <string.h>

#include "sk_error.h"

void sk_threads_init(sk_threads *t, unsigned per_job, unsigned spare) {
  memset(t, 0, sizeof *t);
  t->per_job = per_job > 0 ? per_job : 1;
  t->spare = spare;
}

/* The next part of the oldest job with one unclaimed (under mu), the job
 * unlinked with its last; NULL when there is none. */
static sk_threads_job *claim(sk_threads *t, unsigned *i) {
  sk_threads_job *j = t->head;
  if (j == NULL)
    return NULL;
  *i = j->next++;
  if (j->next == j->n && (t->head = j->link) == NULL)
    t->tail = NULL;
  return j;
}

/* A worker: runs the jobs' parts one at a time until stopped. A job is
 * touched only under mu, up to its part's `left` decrement: its caller
 * returns (and its stack goes) once `left` is 0, seen under mu. */
static void *worker_main(void *arg) {
  sk_threads *t = arg;
  pthread_mutex_lock(&t->mu);
  for (;;) {
    while (t->head == NULL && !t->stop)
      pthread_cond_wait(&t->work, &t->mu);
    unsigned i;
    sk_threads_job *j = claim(t, &i);
    if (j == NULL) /* stopping, nothing left */
      break;
    void (*fn)(void *, unsigned) = j->fn;
    void *fa = j->arg;
    pthread_mutex_unlock(&t->mu);
    fn(fa, i);
    pthread_mutex_lock(&t->mu);
    if (--j->left == 0)
      pthread_cond_broadcast(&t->done);
  }
  pthread_mutex_unlock(&t->mu);
  return NULL;
}

int sk_threads_start(sk_threads *t) {
  if (t->workers > 0 || t->spare == 0)
    return 0;
  const unsigned want = t->spare;
  t->th = calloc(want, sizeof *t->th);
  if (t->th == NULL || pthread_mutex_init(&t->mu, NULL) != 0)
    goto fail_alloc;
  if (pthread_cond_init(&t->work, NULL) != 0)
    goto fail_mu;
  if (pthread_cond_init(&t->done, NULL) != 0)
    goto fail_work;
  t->stop = false;
  t->head = t->tail = NULL;
  unsigned n = 0;
  while (n < want && pthread_create(&t->th[n], NULL, worker_main, t) == 0)
    n++;
  if (n == 0) {
    pthread_cond_destroy(&t->done);
    goto fail_work;
  }
  /* Fewer workers than spare threads: only as many may be taken, so a
   * posted part always finds a worker that is not running another's. */
  __atomic_sub_fetch(&t->spare, want - n, __ATOMIC_RELAXED);
  t->workers = n;
  return 0;
fail_work:
  pthread_cond_destroy(&t->work);
fail_mu:
  pthread_mutex_destroy(&t->mu);
fail_alloc:
  free(t->th);
  t->th = NULL;
  return SK_ENOMEM;
}

void sk_threads_stop(sk_threads *t) {
  if (t == NULL || t->workers == 0)
    return;
  pthread_mutex_lock(&t->mu);
  t->stop = true;
  pthread_cond_broadcast(&t->work);
  pthread_mutex_unlock(&t->mu);
  for (unsigned i = 0; i < t->workers; i++)
    pthread_join(t->th[i], NULL);
  pthread_cond_destroy(&t->done);
  pthread_cond_destroy(&t->work);
  pthread_mutex_destroy(&t->mu);
  free(t->th);
  t->th = NULL;
  t->workers = 0;
  __atomic_store_n(&t->spare, 0, __ATOMIC_RELAXED);
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

void sk_threads_run(sk_threads *t, unsigned n, void (*fn)(void *arg, unsigned i), void *arg) {
  if (n == 0)
    return;
  if (t == NULL || t->workers == 0 || n == 1) {
    for (unsigned i = 0; i < n; i++)
      fn(arg, i);
    return;
  }
  sk_threads_job j = {.fn = fn, .arg = arg, .n = n, .next = 1, .left = n - 1};
  pthread_mutex_lock(&t->mu);
  if (t->tail != NULL)
    t->tail->link = &j;
  else
    t->head = &j;
  t->tail = &j;
  if (n == 2)
    pthread_cond_signal(&t->work);
  else
    pthread_cond_broadcast(&t->work);
  pthread_mutex_unlock(&t->mu);
  fn(arg, 0);
  pthread_mutex_lock(&t->mu);
  /* The parts still unclaimed: here, now, rather than after a wake-up. */
  while (j.next < j.n) {
    unsigned i = j.next++;
    if (j.next == j.n) { /* unlink it: no worker may claim it any more */
      sk_threads_job **at = &t->head, *prev = NULL;
      while (*at != &j) {
        prev = *at;
        at = &(*at)->link;
      }
      *at = j.link;
      if (t->tail == &j)
        t->tail = prev;
    }
    pthread_mutex_unlock(&t->mu);
    fn(arg, i);
    pthread_mutex_lock(&t->mu);
    j.left--;
  }
  while (j.left != 0)
    pthread_cond_wait(&t->done, &t->mu);
  pthread_mutex_unlock(&t->mu);
}

unsigned sk_threads_high(const sk_threads *t) { return t != NULL ? __atomic_load_n(&t->high, __ATOMIC_RELAXED) : 0; }

unsigned sk_threads_workers(const sk_threads *t) { return t != NULL ? t->workers : 0; }
