/* sk_httpc: a tiny blocking HTTP/1.1 client for the tests, one connection
 * per request ("Connection: close"), plus helpers that start and stop the
 * real skinnerd. Test code only: simple over fast. */
#ifndef SK_HTTPC_H
#define SK_HTTPC_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct sk_httpc_resp {
  int status;       /* 0 when the exchange failed (see `error`) */
  char head[8192];  /* status line and headers, NUL-terminated */
  char *body;       /* malloc'ed, NUL-terminated; free with sk_httpc_free */
  size_t len;
  char error[128];
} sk_httpc_resp;

static inline void sk_httpc_free(sk_httpc_resp *r) {
  free(r->body);
  r->body = NULL;
  r->len = 0;
}

/* Connects to host:port (numeric IPv4); -1 on failure. */
static inline int sk_httpc_connect(const char *host, unsigned port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  inet_pton(AF_INET, host, &a.sin_addr);
  struct timeval tv = {20, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static inline int sk_httpc_send_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return -1;
    c += k;
    n -= (size_t)k;
  }
  return 0;
}

/* Decodes a chunked body in place (RFC 9112 7.1; extensions and trailers
 * skipped); returns its length, or (size_t)-1 when it is cut short or bad. */
static inline size_t sk_httpc_dechunk(char *body, size_t len) {
  size_t r = 0, w = 0;
  for (;;) {
    char *line_end = NULL;
    for (size_t i = r; i + 1 < len && line_end == NULL; i++)
      if (body[i] == '\r' && body[i + 1] == '\n')
        line_end = body + i;
    if (line_end == NULL)
      return (size_t)-1;
    char *end;
    unsigned long long n = strtoull(body + r, &end, 16);
    if (end == body + r)
      return (size_t)-1;
    r = (size_t)(line_end - body) + 2;
    if (n == 0)
      return w;
    if (n > len - r || len - r - n < 2)
      return (size_t)-1;
    memmove(body + w, body + r, n);
    w += n;
    r += n + 2;
  }
}

/* Reads a whole "Connection: close" answer from fd into r; a chunked body
 * is decoded (r->head keeps the Transfer-Encoding header). */
static inline int sk_httpc_read_response(int fd, sk_httpc_resp *r) {
  size_t cap = 65536, len = 0;
  char *buf = malloc(cap + 1);
  if (buf == NULL)
    return -1;
  for (;;) {
    if (len == cap) {
      char *nb = realloc(buf, cap * 2 + 1);
      if (nb == NULL) {
        free(buf);
        return -1;
      }
      buf = nb;
      cap *= 2;
    }
    ssize_t k = recv(fd, buf + len, cap - len, 0);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0) {
      snprintf(r->error, sizeof r->error, "recv: %s", strerror(errno));
      /* a reset after a complete answer still counts as an answer */
      if (len == 0) {
        free(buf);
        return -1;
      }
      break;
    }
    if (k == 0)
      break;
    len += (size_t)k;
  }
  buf[len] = 0;
  /* Skip interim 1xx answers (100 Continue). */
  char *start = buf;
  for (;;) {
    char *end = strstr(start, "\r\n\r\n");
    if (end == NULL) {
      snprintf(r->error, sizeof r->error, "no header end in %zu bytes", len);
      free(buf);
      return -1;
    }
    int st = 0;
    sscanf(start, "HTTP/1.%*d %d", &st);
    if (st >= 100 && st < 200) {
      start = end + 4;
      continue;
    }
    size_t hl = (size_t)(end - start);
    if (hl >= sizeof r->head)
      hl = sizeof r->head - 1;
    memcpy(r->head, start, hl);
    r->head[hl] = 0;
    r->status = st;
    char *body = end + 4;
    r->len = len - (size_t)(body - buf);
    r->body = malloc(r->len + 1);
    if (r->body == NULL) {
      free(buf);
      return -1;
    }
    memcpy(r->body, body, r->len);
    r->body[r->len] = 0;
    free(buf);
    bool chunked = false;
    for (const char *h = strstr(r->head, "\r\n"); h != NULL && !chunked; h = strstr(h + 2, "\r\n"))
      chunked = strncasecmp(h + 2, "Transfer-Encoding: chunked", 26) == 0;
    if (chunked) {
      size_t n = sk_httpc_dechunk(r->body, r->len);
      if (n == (size_t)-1) {
        snprintf(r->error, sizeof r->error, "a chunked body cut short or malformed");
        return -1;
      }
      r->len = n;
      r->body[n] = 0;
    }
    return 0;
  }
}

/* One request. `headers` is NULL or extra header lines, each ending in
 * "\r\n". A Content-Length is sent when `body` is non-NULL. Returns 0 when
 * an answer was read (r->status set), -1 otherwise (r->error set). */
static inline int sk_httpc_request(const char *host, unsigned port, const char *method, const char *path,
                                   const char *headers, const void *body, size_t blen, sk_httpc_resp *r) {
  memset(r, 0, sizeof *r);
  int fd = sk_httpc_connect(host, port);
  if (fd < 0) {
    snprintf(r->error, sizeof r->error, "connect: %s", strerror(errno));
    return -1;
  }
  char head[4096];
  int n = snprintf(head, sizeof head, "%s %s HTTP/1.1\r\nHost: %s:%u\r\nConnection: close\r\n%s", method, path, host,
                   port, headers ? headers : "");
  if (body != NULL)
    n += snprintf(head + n, sizeof head - (size_t)n, "Content-Length: %zu\r\n", blen);
  n += snprintf(head + n, sizeof head - (size_t)n, "\r\n");
  int rc = sk_httpc_send_all(fd, head, (size_t)n);
  if (rc == 0 && body != NULL && blen > 0)
    rc = sk_httpc_send_all(fd, body, blen);
  /* Even if sending failed (the server may answer early and close), try to
   * read what it said. No half-close: libmicrohttpd takes a client EOF as
   * the client leaving. */
  (void)rc;
  rc = sk_httpc_read_response(fd, r);
  close(fd);
  return rc;
}

/* Value of header `name` in r->head, copied into buf; NULL when absent. */
static inline const char *sk_httpc_header(const sk_httpc_resp *r, const char *name, char *buf, size_t cap) {
  size_t nl = strlen(name);
  for (const char *p = strstr(r->head, "\r\n"); p != NULL; p = strstr(p + 2, "\r\n")) {
    const char *line = p + 2;
    if (strncasecmp(line, name, nl) == 0 && line[nl] == ':') {
      const char *v = line + nl + 1;
      while (*v == ' ')
        v++;
      size_t vl = strcspn(v, "\r");
      if (vl >= cap)
        vl = cap - 1;
      memcpy(buf, v, vl);
      buf[vl] = 0;
      return buf;
    }
  }
  return NULL;
}

/* ---- the daemon ------------------------------------------------------------ */

typedef struct sk_daemon {
  pid_t pid;
  char host[64];
  unsigned port;
  unsigned admin_port; /* 0: no admin listener */
} sk_daemon;

/* True when the daemon runs under AddressSanitizer: its RSS then holds
 * ASan's shadow memory and quarantine, so RSS bounds say nothing about ours
 * (the suites check the daemon's own accounting instead). */
static inline bool sk_daemon_sanitized(const sk_daemon *d) {
  char path[64], line[512];
  snprintf(path, sizeof path, "/proc/%d/maps", (int)d->pid);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return false;
  bool asan = false;
  while (!asan && fgets(line, sizeof line, f))
    asan = strstr(line, "libasan") != NULL;
  fclose(f);
  if (!asan) { /* statically linked: look for the runtime's symbol in the binary */
    const char *exe = getenv("SKINNERD") ? getenv("SKINNERD") : "./skinnerd";
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "grep -q __asan_init '%s' 2>/dev/null", exe);
    asan = system(cmd) == 0;
  }
  return asan;
}

/* One stdout line of the daemon's (no newline) into line[0..cap). */
static inline void sk_daemon__read_line(int fd, char *line, size_t cap) {
  size_t n = 0;
  while (n + 1 < cap) {
    ssize_t k = read(fd, line + n, 1);
    if (k <= 0 || line[n] == '\n')
      break;
    n++;
  }
  line[n] = 0;
}

/* Starts `exe` (SKINNERD, or "./skinnerd") with --listen 127.0.0.1:0 and the
 * extra NULL-terminated args, reads "listening on ADDR:PORT" from its
 * stdout, and with --admin-listen among the args the second line, "admin
 * listening on ADDR:PORT", into d->admin_port. Returns 0 or -1. */
static inline int sk_daemon_start(sk_daemon *d, const char *const *extra) {
  const char *exe = getenv("SKINNERD");
  if (exe == NULL)
    exe = "./skinnerd";
  int p[2];
  if (pipe(p) != 0)
    return -1;
  const char *argv[32];
  int argc = 0;
  bool admin = false;
  argv[argc++] = exe;
  argv[argc++] = "--listen";
  argv[argc++] = "127.0.0.1:0";
  for (; extra != NULL && *extra != NULL && argc < 30; extra++) {
    admin = admin || strncmp(*extra, "--admin-listen", 14) == 0;
    argv[argc++] = *extra;
  }
  argv[argc] = NULL;
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a crashed test */
    dup2(p[1], 1);
    close(p[0]);
    close(p[1]);
    execv(exe, (char *const *)argv);
    _exit(127);
  }
  close(p[1]);
  char line[256], second[256] = "";
  sk_daemon__read_line(p[0], line, sizeof line);
  if (admin)
    sk_daemon__read_line(p[0], second, sizeof second);
  close(p[0]); /* later stdout writes get EPIPE/SIGPIPE-ignored; skinnerd prints nothing more */
  d->pid = pid;
  d->admin_port = 0;
  char admin_host[64];
  if (sscanf(line, "listening on %63[0-9.]:%u", d->host, &d->port) != 2 ||
      (admin && sscanf(second, "admin listening on %63[0-9.]:%u", admin_host, &d->admin_port) != 2)) {
    fprintf(stderr, "skinnerd's stdout: \"%s\", \"%s\"\n", line, second);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    d->pid = 0;
    return -1;
  }
  return 0;
}

/* Sends `sig` and waits; returns the exit status as waitpid reports it. */
static inline int sk_daemon_stop(sk_daemon *d, int sig) {
  int status = -1;
  if (d->pid <= 0)
    return -1;
  kill(d->pid, sig);
  waitpid(d->pid, &status, 0);
  d->pid = 0;
  return status;
}

#endif
