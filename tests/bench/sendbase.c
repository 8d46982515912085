/* sendbase: the bare cost of sending an answer over loopback, the baseline
 * `make bench-clips` sets skinnerd's HTTP row against (docs/clips.md, "The
 * HTTP row against the bare transfer").
 *
 *   sendbase BYTES
 *
 * Listens on 127.0.0.1 (a free port), prints "listening on 127.0.0.1:PORT"
 * first, and serves connections one after another, HTTP/1.1 keep-alive:
 * every request (headers, then a Content-Length body, read and dropped)
 * answers 200 with BYTES bytes of application/octet-stream from one buffer
 * filled at start. It computes nothing, so its CPU time per answer is what
 * the kernel charges for the transfer alone. The body goes out in 128 KiB
 * send() calls, the size of the blocks libmicrohttpd hands the kernel for
 * skinnerd's streamed answers, so both make the same syscalls. Exits 0 on
 * SIGTERM or SIGINT. Plain POSIX: nothing to link. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define SENDBASE_PIECE (128u << 10)
#define SENDBASE_MAX_BYTES (1ull << 30)
/* A request's headers must fit here; anything longer is not ours. */
#define SENDBASE_HEAD_MAX (16u << 10)

/* One connection's unread bytes: the rest of a request, or the start of
 * the next one when the client pipelines. */
typedef struct conn_buf {
  char data[SENDBASE_HEAD_MAX];
  size_t len;
} conn_buf;

/* The handler ends the process at once: waking a blocked accept() or
 * recv() through a flag would race with the call being entered. */
static void on_term(int sig) {
  (void)sig;
  _exit(0);
}

static int send_all(int fd, const char *p, size_t n, int flags) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, flags | MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Reads more of the connection into b; 0 on data, -1 on EOF or error. */
static int fill(int fd, conn_buf *b) {
  for (;;) {
    ssize_t r = recv(fd, b->data + b->len, sizeof b->data - b->len, 0);
    if (r > 0) {
      b->len += (size_t)r;
      return 0;
    }
    if (r < 0 && errno == EINTR)
      continue;
    return -1;
  }
}

/* The value of header `name` in head[0..len) as an unsigned number; 0 when
 * absent, -1 when malformed. */
static long long header_number(const char *head, size_t len, const char *name) {
  size_t nlen = strlen(name);
  for (const char *p = head; p < head + len;) {
    const char *eol = memchr(p, '\n', (size_t)(head + len - p));
    if (eol == NULL)
      break;
    if ((size_t)(eol - p) > nlen && p[nlen] == ':' && strncasecmp(p, name, nlen) == 0) {
      char *end;
      errno = 0;
      unsigned long long v = strtoull(p + nlen + 1, &end, 10);
      if (errno != 0 || end == p + nlen + 1 || v > (unsigned long long)SENDBASE_MAX_BYTES)
        return -1;
      return (long long)v;
    }
    p = eol + 1;
  }
  return 0;
}

static bool header_has(const char *head, size_t len, const char *text) {
  size_t tlen = strlen(text);
  for (size_t i = 0; i + tlen <= len; i++)
    if (strncasecmp(head + i, text, tlen) == 0)
      return true;
  return false;
}

/* Serves one connection until the client closes it, asks to, or sends
 * something that is not a request we can frame. */
static void serve(int fd, const char *body, size_t bytes, conn_buf *b) {
  char head[160];
  int hlen = snprintf(head, sizeof head,
                      "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %zu\r\n\r\n",
                      bytes);
  if (hlen < 0 || (size_t)hlen >= sizeof head)
    return;
  b->len = 0;
  for (;;) {
    char *end;
    while ((end = memmem(b->data, b->len, "\r\n\r\n", 4)) == NULL) {
      if (b->len == sizeof b->data || fill(fd, b) != 0)
        return;
    }
    size_t used = (size_t)(end + 4 - b->data);
    long long rest = header_number(b->data, used, "Content-Length");
    bool close_after = header_has(b->data, used, "\nConnection: close");
    if (rest < 0)
      return;
    /* Drop the body: first what is already buffered, then the rest as it
     * arrives, reusing the buffer (its size bounds what we hold). */
    size_t have = b->len - used;
    size_t take = have < (size_t)rest ? have : (size_t)rest;
    used += take;
    rest -= (long long)take;
    memmove(b->data, b->data + used, b->len - used);
    b->len -= used;
    while (rest > 0) {
      if (fill(fd, b) != 0)
        return;
      take = b->len < (size_t)rest ? b->len : (size_t)rest;
      rest -= (long long)take;
      memmove(b->data, b->data + take, b->len - take);
      b->len -= take;
    }
    if (send_all(fd, head, (size_t)hlen, MSG_MORE) != 0)
      return;
    for (size_t off = 0; off < bytes; off += SENDBASE_PIECE) {
      size_t n = bytes - off < SENDBASE_PIECE ? bytes - off : SENDBASE_PIECE;
      if (send_all(fd, body + off, n, 0) != 0)
        return;
    }
    if (close_after)
      return;
  }
}

static int listen_loopback(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 16) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
    close(fd);
    return -1;
  }
  printf("listening on 127.0.0.1:%u\n", (unsigned)ntohs(a.sin_port));
  if (fflush(stdout) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int main(int argc, char **argv) {
  char *end;
  errno = 0;
  unsigned long long bytes = argc == 2 ? strtoull(argv[1], &end, 10) : 0;
  if (argc != 2 || errno != 0 || end == argv[1] || *end != '\0' || argv[1][0] == '-' ||
      bytes > SENDBASE_MAX_BYTES) {
    fprintf(stderr, "usage: sendbase BYTES (at most %llu)\n", SENDBASE_MAX_BYTES);
    return 2;
  }
  char *body = malloc(bytes ? (size_t)bytes : 1);
  conn_buf *b = malloc(sizeof *b);
  if (body == NULL || b == NULL) {
    fprintf(stderr, "sendbase: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < bytes; i++)
    body[i] = (char)('a' + i % 26);
  struct sigaction sa = {.sa_handler = on_term};
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0) {
    perror("sendbase: sigaction");
    return 1;
  }
  int lfd = listen_loopback();
  if (lfd < 0) {
    perror("sendbase: listen on 127.0.0.1");
    return 1;
  }
  for (;;) {
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      perror("sendbase: accept");
      return 1;
    }
    serve(fd, body, (size_t)bytes, b);
    close(fd);
  }
}
