/* sk_loopstat: how long each iteration of a libuv loop keeps its thread
 * from serving anyone else, counted into sk_metrics' loop histograms.
 *
 * Every request, /healthz and the systemd watchdog wait while one callback
 * of the loop thread runs, so the loop's iterations are the daemon's
 * responsiveness, measured where it is made: the wall clock between two
 * passes before the poll, minus the time the poll waited for I/O
 * (uv_metrics_idle_time), and the thread's CPU time over the same span.
 * The two differ when the loop blocks in a system call (a disk) or the
 * machine takes its core away; CPU time alone is the daemon's own work. */
#ifndef SK_LOOPSTAT_H
#define SK_LOOPSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "sk_metrics.h"

typedef struct sk_loopstat {
  uv_prepare_t prepare; /* embedded: closed by sk_loopstat_stop before the owner frees it */
  sk_metrics *metrics;  /* borrowed */
  uint64_t wall_ns, idle_ns, cpu_ns; /* at the last pass */
  bool primed;          /* a first pass has set the three above */
} sk_loopstat;

/* Starts counting on `loop` (loop thread, before uv_run) into `metrics`
 * (borrowed; outlives the loop). The handle does not keep the loop alive.
 * 0, or a negative libuv error. */
int sk_loopstat_start(uv_loop_t *loop, sk_metrics *metrics, sk_loopstat *ls);
/* Stops and closes the handle; `ls` may be freed after the loop has run
 * the close (uv_run). Idempotent. */
void sk_loopstat_stop(sk_loopstat *ls);

#endif
