/* sk_threads: the threads a process lets its requests run the work they
 * split on (the mesh writer's vertex ranges, a point cache's frames),
 * counted once for the whole process, and started once.
 *
 * A job takes spare threads before it hands them work and gives them back
 * after they finished it, so any number of concurrent requests run on at
 * most `spare` threads between them, where a bound per request let N of
 * them use N x (per_job - 1). A job that finds none spare runs on its own
 * thread: the same bytes, later (every split job here gives the same
 * bytes for every thread count). Taking never blocks.
 *
 * sk_threads_start starts the `spare` workers once (a create and join
 * cost 100-150 us on a loaded VM, more than a small primitive's skinning);
 * sk_threads_run hands them a job's parts. A job holds a worker for each
 * thread it took, so a part it posts never waits for a busy worker; and
 * the caller, done with its own part, runs the parts no worker claimed
 * yet itself, so a job never waits for a worker to wake up (tens of
 * microseconds on a loaded VM: more than a small job's parts).
 *
 * Counters are atomics (taken and given on pool threads). The struct is
 * owned by main() (or a test) and borrowed by the modules; a NULL pointer
 * means "the caller's thread only", as does a struct never started
 * (sk_threads_run then runs every part on the caller's thread). */
#ifndef SK_THREADS_H
#define SK_THREADS_H

#include <pthread.h>
#include <stdbool.h>

/* A job being run (private: on its caller's stack while sk_threads_run
 * runs it). Parts are claimed in order, by a worker or by the caller. */
typedef struct sk_threads_job {
  void (*fn)(void *arg, unsigned i);
  void *arg;
  unsigned n, next, left; /* parts; the next unclaimed; claimed or not, not done */
  struct sk_threads_job *link;
} sk_threads_job;

typedef struct sk_threads {
  /* Private: use the functions. */
  unsigned per_job; /* threads one job may run on, its own included (>= 1) */
  unsigned spare;   /* atomic: threads not taken */
  unsigned taken;   /* atomic: threads taken now */
  unsigned high;    /* atomic: the most taken at once */
  /* The workers, from sk_threads_start to sk_threads_stop, and the jobs
   * with parts no one claimed yet, oldest first (under mu). */
  unsigned workers;
  bool stop;
  pthread_t *th;
  sk_threads_job *head, *tail;
  pthread_mutex_t mu;
  pthread_cond_t work, done;
} sk_threads;

/* Sets up `t` in place: jobs of up to `per_job` threads (0 counts as 1),
 * `spare` threads between all of them, none started (sk_threads_run runs
 * every part on the caller's thread until sk_threads_start). */
void sk_threads_init(sk_threads *t, unsigned per_job, unsigned spare);

/* Starts the spare threads of an initialised `t` (once; from then on
 * until sk_threads_stop). Where fewer start (the system refuses one), the
 * spare count drops to those that did. Returns 0, or SK_ENOMEM (nothing
 * started: `t` stays as sk_threads_init left it). */
int sk_threads_start(sk_threads *t);

/* Joins the workers (every job finished: no thread taken) and frees
 * what sk_threads_start allocated; `t` is then as sk_threads_init left
 * it with no thread spare. NULL or never started: nothing. */
void sk_threads_stop(sk_threads *t);

/* Takes up to min(want, per_job - 1, spare) threads for a job that runs
 * on the caller's thread and on `want` more; returns how many it got (0
 * when `t` is NULL). Any thread; never blocks. */
unsigned sk_threads_take(sk_threads *t, unsigned want);

/* Gives back `n` threads taken by sk_threads_take (NULL: nothing). */
void sk_threads_give(sk_threads *t, unsigned n);

/* Runs fn(arg, i) for i in [0, n): 0 on the caller's thread, 1..n-1 on
 * the n - 1 threads the caller took from `t` (sk_threads_take) for this
 * job, or on the caller's when it gets there first; returns when every
 * part is done. With `t` NULL or not started, the
 * caller's thread runs every part in order. A part may itself take and
 * run (each thread taken is a worker not running any other part). */
void sk_threads_run(sk_threads *t, unsigned n, void (*fn)(void *arg, unsigned i), void *arg);

/* The most threads taken at once since init (for tests and /metrics). */
unsigned sk_threads_high(const sk_threads *t);

/* The workers started (0 before sk_threads_start or after stop). */
unsigned sk_threads_workers(const sk_threads *t);

#endif
