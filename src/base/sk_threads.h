/* sk_threads: the threads a process lets its requests start for the work
 * they split (the mesh writer's vertex ranges), counted once for the
 * whole process.
 *
 * A job takes spare threads before it starts them and gives them back
 * after joining them, so any number of concurrent requests start at most
 * `spare` threads between them, where a bound per request let N of them
 * start N x (per_job - 1). A job that finds none spare runs on its own
 * thread: the same bytes, later (every split job here gives the same
 * bytes for every thread count). Taking never blocks.
 *
 * Counters are atomics (taken and given on pool threads). The struct is
 * owned by main() (or a test) and borrowed by the modules; a NULL pointer
 * means "the caller's thread only". */
#ifndef SK_THREADS_H
#define SK_THREADS_H

typedef struct sk_threads {
  /* Private: use the functions. */
  unsigned per_job; /* threads one job may run on, its own included (>= 1) */
  unsigned spare;   /* atomic: threads not taken */
  unsigned taken;   /* atomic: threads taken now */
  unsigned high;    /* atomic: the most taken at once */
} sk_threads;

/* Sets up `t` in place: jobs of up to `per_job` threads (0 counts as 1),
 * `spare` threads to start between all of them. */
void sk_threads_init(sk_threads *t, unsigned per_job, unsigned spare);

/* Takes up to min(want, per_job - 1, spare) threads for a job that runs
 * on the caller's thread and on `want` more; returns how many it got (0
 * when `t` is NULL). Any thread; never blocks. */
unsigned sk_threads_take(sk_threads *t, unsigned want);

/* Gives back `n` threads taken by sk_threads_take (NULL: nothing). */
void sk_threads_give(sk_threads *t, unsigned n);

/* The most threads taken at once since init (for tests and /metrics). */
unsigned sk_threads_high(const sk_threads *t);

#endif
