#include "sk_loopstat.h"

#include <time.h>

static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Runs once per iteration, just before the poll: the span since the last
 * pass is one whole iteration (timers, I/O callbacks, pool completions,
 * closes), of which the poll's wait is taken out. */
static void on_prepare(uv_prepare_t *p) {
  sk_loopstat *ls = p->data;
  const uint64_t wall = uv_hrtime(), idle = uv_metrics_idle_time(p->loop), cpu = thread_cpu_ns();
  if (ls->primed) {
    const uint64_t span = wall - ls->wall_ns, waited = idle - ls->idle_ns;
    const uint64_t busy = span > waited ? span - waited : 0;
    const uint64_t used = cpu > ls->cpu_ns ? cpu - ls->cpu_ns : 0;
    sk_metrics_observe_loop(ls->metrics, (double)busy * 1e-9, (double)used * 1e-9);
  }
  ls->wall_ns = wall;
  ls->idle_ns = idle;
  ls->cpu_ns = cpu;
  ls->primed = true;
}

int sk_loopstat_start(uv_loop_t *loop, sk_metrics *metrics, sk_loopstat *ls) {
  ls->metrics = metrics;
  ls->primed = false;
  int rc = uv_loop_configure(loop, UV_METRICS_IDLE_TIME);
  if (rc == 0)
    rc = uv_prepare_init(loop, &ls->prepare);
  if (rc != 0)
    return rc;
  ls->prepare.data = ls;
  rc = uv_prepare_start(&ls->prepare, on_prepare);
  uv_unref((uv_handle_t *)&ls->prepare);
  return rc;
}

void sk_loopstat_stop(sk_loopstat *ls) {
  uv_handle_t *h = (uv_handle_t *)&ls->prepare;
  if (h->loop == NULL || uv_is_closing(h))
    return;
  uv_close(h, NULL);
}
