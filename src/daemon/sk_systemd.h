/* sk_systemd: the systemd protocols skinnerd speaks, without libsystemd:
 * readiness and watchdog notifications (sd_notify's datagram to
 * $NOTIFY_SOCKET) and socket activation ($LISTEN_PID/$LISTEN_FDS, first fd 3).
 * Everything is a no-op when the variables are absent, so the daemon runs the
 * same outside systemd. */
#ifndef SK_SYSTEMD_H
#define SK_SYSTEMD_H

#include <stdint.h>

/* The first fd systemd passes (SD_LISTEN_FDS_START). */
#define SK_SYSTEMD_FDS_START 3

/* Number of listening sockets passed by systemd to this process (0 when not
 * socket-activated, or when $LISTEN_PID names another process). The fds are
 * SK_SYSTEMD_FDS_START ... + n - 1 and are made close-on-exec. The variables
 * are unset so children do not inherit them. */
int sk_systemd_listen_fds(void);

/* Sends `state` ("READY=1", "STOPPING=1", "WATCHDOG=1", "STATUS=...") to
 * $NOTIFY_SOCKET (a path, or '@' for the abstract namespace). Returns 0 when
 * sent or when there is no $NOTIFY_SOCKET, a negative SK_E* code otherwise. */
int sk_systemd_notify(const char *state);

/* Watchdog interval in microseconds from $WATCHDOG_USEC when $WATCHDOG_PID
 * is absent or names this process; 0 when the watchdog is off. Notify at
 * half this interval. */
uint64_t sk_systemd_watchdog_usec(void);

#endif
