#include "sk_budget.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sk_error.h"

void sk_budget_init(sk_budget *b, size_t limit) {
  memset(b, 0, sizeof *b);
  b->limit = limit;
}

static void note_high(sk_budget *b, size_t now) {
  size_t high = __atomic_load_n(&b->high, __ATOMIC_RELAXED);
  while (now > high && !__atomic_compare_exchange_n(&b->high, &high, now, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    ;
}

int sk_budget_reserve(sk_budget *b, size_t n) {
  if (b == NULL)
    return 0;
  size_t used = __atomic_load_n(&b->used, __ATOMIC_RELAXED);
  for (;;) {
    /* A compare-and-swap, not add-then-check: two threads near the limit
     * must not both get in and push `used` past it. */
    if (b->limit != 0 && (n > b->limit || used > b->limit - n)) {
      __atomic_add_fetch(&b->refused, 1, __ATOMIC_RELAXED);
      return SK_EBUSY;
    }
    if (__atomic_compare_exchange_n(&b->used, &used, used + n, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      break;
  }
  note_high(b, used + n);
  return 0;
}

void sk_budget_charge(sk_budget *b, size_t n) {
  if (b == NULL)
    return;
  note_high(b, __atomic_add_fetch(&b->used, n, __ATOMIC_RELAXED));
}

void sk_budget_release(sk_budget *b, size_t n) {
  if (b == NULL || n == 0)
    return;
  __atomic_sub_fetch(&b->used, n, __ATOMIC_RELAXED);
}

void sk_budget_get_stats(const sk_budget *b, sk_budget_stats *st) {
  memset(st, 0, sizeof *st);
  if (b == NULL)
    return;
  st->limit = b->limit;
  st->used = __atomic_load_n(&b->used, __ATOMIC_RELAXED);
  st->high = __atomic_load_n(&b->high, __ATOMIC_RELAXED);
  st->refused = __atomic_load_n(&b->refused, __ATOMIC_RELAXED);
}

size_t sk_budget_default_for(uint64_t physical, uint64_t cgroup_max) {
  uint64_t base = physical;
  if (cgroup_max != 0 && (base == 0 || cgroup_max < base))
    base = cgroup_max;
  /* A quarter: the rest is for the code, the allocator's slack and
   * fragmentation, libmicrohttpd's per-connection pools (--conn-memory x
   * --max-connections, outside the budget) and the machine's other tenants. */
  uint64_t v = base / 4;
  const uint64_t lo = 64ull << 20, hi = 16ull << 30;
  if (v < lo)
    v = lo;
  if (v > hi)
    v = hi;
  return v > SIZE_MAX ? SIZE_MAX : (size_t)v;
}

/* The cgroup v2 memory.max of this process, 0 when none or unknown. */
static uint64_t cgroup_memory_max(void) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (f == NULL)
    return 0;
  char line[4096], path[4200];
  uint64_t v = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "0::", 3) != 0) /* the v2 unified hierarchy only */
      continue;
    line[strcspn(line, "\n")] = '\0';
    int n = snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", line + 3);
    if (n < 0 || (size_t)n >= sizeof path)
      break;
    FILE *m = fopen(path, "r");
    if (m == NULL)
      break;
    char t[64];
    if (fgets(t, sizeof t, m) != NULL && strncmp(t, "max", 3) != 0)
      v = strtoull(t, NULL, 10);
    fclose(m);
    break;
  }
  fclose(f);
  return v;
}

/* The machine's memory as /proc/meminfo's MemTotal gives it (what
 * uv_get_total_memory reads), without libuv below the daemon. */
static uint64_t total_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

size_t sk_budget_default(void) { return sk_budget_default_for(total_memory(), cgroup_memory_max()); }
