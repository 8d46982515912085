/* sk_budget: the daemon's one memory budget (--memory-mb).
 *
 * Everything that can grow with what clients send is counted here: the
 * skeleton cache (charged by sk_cache, which keeps --cache-mb as its own cap
 * inside the budget), request bodies while they are received (sk_http
 * reserves by Content-Length, or per chunk for chunked bodies), and answers
 * while they are built and sent (sk_routes reserves an answer's size, or a
 * streamed answer's bounded buffer). A reservation past the limit fails and
 * the request is answered 503 with Retry-After; nothing is allocated first.
 *
 * Counters are atomics: answers are built on thread-pool workers and freed
 * on the loop thread. The struct is owned by main() and borrowed by the
 * modules; a NULL budget means "not counted" everywhere. */
#ifndef SK_BUDGET_H
#define SK_BUDGET_H

#include <stddef.h>
#include <stdint.h>

typedef struct sk_budget {
  /* Private: use the functions. */
  size_t limit;    /* bytes; 0: unlimited (counted, never refused) */
  size_t used;     /* atomic */
  size_t high;     /* atomic: the most `used` has been */
  uint64_t refused; /* atomic: reservations refused */
} sk_budget;

typedef struct sk_budget_stats {
  size_t limit, used, high;
  uint64_t refused;
} sk_budget_stats;

/* Sets up `b` in place with `limit` bytes (0: unlimited). */
void sk_budget_init(sk_budget *b, size_t limit);

/* Takes `n` bytes if they fit under the limit. 0, or SK_EBUSY (nothing
 * taken, the refusal counted). A NULL budget always succeeds. Any thread. */
int sk_budget_reserve(sk_budget *b, size_t n);

/* Takes `n` bytes even past the limit: for memory that is already bounded
 * by its own cap (the cache under --cache-mb) and must not fail. Any thread. */
void sk_budget_charge(sk_budget *b, size_t n);

/* Gives back `n` bytes taken by reserve or charge. Any thread. */
void sk_budget_release(sk_budget *b, size_t n);

/* A consistent-enough snapshot for /metrics (each field read atomically). */
void sk_budget_get_stats(const sk_budget *b, sk_budget_stats *st);

/* The default budget: a quarter of the memory this process may use, i.e.
 * of `physical` bytes or of the cgroup limit `cgroup_max` when that is set
 * and smaller (0: none), clamped to [64 MiB, 16 GiB]. Pure, for tests. */
size_t sk_budget_default_for(uint64_t physical, uint64_t cgroup_max);

/* Reads the machine's physical memory (libuv) and the cgroup v2 limit of
 * this process (/sys/fs/cgroup/<own cgroup>/memory.max, "max" = none), and
 * returns sk_budget_default_for() of them. */
size_t sk_budget_default(void);

#endif
