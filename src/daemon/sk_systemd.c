#include "sk_systemd.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sk_error.h"

/* Parses a whole decimal string; false on junk or overflow. */
static int parse_u64(const char *s, unsigned long long *out) {
  if (s == NULL || *s == '\0')
    return 0;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0')
    return 0;
  *out = v;
  return 1;
}

int sk_systemd_listen_fds(void) {
  unsigned long long pid, n;
  int count = 0;
  if (parse_u64(getenv("LISTEN_PID"), &pid) && pid == (unsigned long long)getpid() &&
      parse_u64(getenv("LISTEN_FDS"), &n) && n > 0 && n < 1024) {
    count = (int)n;
    for (int fd = SK_SYSTEMD_FDS_START; fd < SK_SYSTEMD_FDS_START + count; fd++) {
      int flags = fcntl(fd, F_GETFD);
      if (flags < 0) {
        count = fd - SK_SYSTEMD_FDS_START;
        break;
      }
      fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
  }
  unsetenv("LISTEN_PID");
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_FDNAMES");
  return count;
}

int sk_systemd_notify(const char *state) {
  const char *path = getenv("NOTIFY_SOCKET");
  if (path == NULL || path[0] == '\0')
    return 0;
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  size_t len = strlen(path);
  if ((path[0] != '/' && path[0] != '@') || len >= sizeof addr.sun_path)
    return SK_EINVAL;
  memcpy(addr.sun_path, path, len);
  if (path[0] == '@')
    addr.sun_path[0] = '\0'; /* abstract namespace */
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return SK_EIO;
  socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
  ssize_t sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&addr, alen);
  close(fd);
  return sent == (ssize_t)strlen(state) ? 0 : SK_EIO;
}

uint64_t sk_systemd_watchdog_usec(void) {
  unsigned long long usec, pid;
  if (!parse_u64(getenv("WATCHDOG_USEC"), &usec) || usec == 0)
    return 0;
  const char *p = getenv("WATCHDOG_PID");
  if (p != NULL && (!parse_u64(p, &pid) || pid != (unsigned long long)getpid()))
    return 0;
  return usec;
}
