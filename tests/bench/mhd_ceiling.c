/* mhd_ceiling: the fastest answer libmicrohttpd gives here, as the ceiling
 * the HTTP benchmark (tests/bench/http_bench.py) compares skinnerd with.
 *
 *   mhd_ceiling [--port N] [--first-call]
 *
 * One internal thread with epoll, listening on 127.0.0.1 only (port 0, the
 * default, picks a free port); prints "listening on 127.0.0.1:PORT" first.
 * Any request to /<bytes> answers 200 with a fixed body of that many bytes
 * (application/octet-stream), after consuming the request body: the
 * answer is queued on the final handler call, as skinnerd queues its own.
 * --first-call queues it on the first call instead (the body is then
 * discarded unread), the choice issue 4 measured at a quarter of the rate.
 * Runs until SIGINT or SIGTERM. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CEILING_MAX_BODY (64u << 20)
#define CEILING_SIZES 16

/* One prepared answer per body size asked for; built on first use and
 * queued again for every later request of that size (MHD reference-counts
 * responses, and only the one internal thread touches this table). */
typedef struct ceiling {
  bool first_call;
  size_t count;
  size_t sizes[CEILING_SIZES];
  struct MHD_Response *responses[CEILING_SIZES];
} ceiling;

static struct MHD_Response *ceiling_response(ceiling *c, size_t size) {
  for (size_t i = 0; i < c->count; i++)
    if (c->sizes[i] == size)
      return c->responses[i];
  if (c->count == CEILING_SIZES)
    return NULL;
  char *body = malloc(size ? size : 1);
  if (body == NULL)
    return NULL;
  for (size_t i = 0; i < size; i++)
    body[i] = (char)('a' + i % 26);
  struct MHD_Response *r = MHD_create_response_from_buffer(size, body, MHD_RESPMEM_MUST_FREE);
  if (r == NULL) {
    free(body);
    return NULL;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
  c->sizes[c->count] = size;
  c->responses[c->count++] = r;
  return r;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size,
                              void **con_cls) {
  (void)method;
  (void)version;
  (void)upload_data;
  ceiling *c = cls;
  static int marker; /* address only: "this connection's request has started" */
  if (*con_cls == NULL && !c->first_call) {
    *con_cls = &marker;
    return MHD_YES;
  }
  if (*upload_data_size != 0) {
    *upload_data_size = 0; /* consume */
    return MHD_YES;
  }
  char *end = NULL;
  errno = 0;
  unsigned long long size = strtoull(url + 1, &end, 10);
  struct MHD_Response *r = NULL;
  if (url[0] == '/' && end != url + 1 && *end == '\0' && errno == 0 && size <= CEILING_MAX_BODY)
    r = ceiling_response(c, (size_t)size);
  if (r == NULL) {
    static char nf[] = "no such size\n";
    struct MHD_Response *e = MHD_create_response_from_buffer(sizeof nf - 1, nf, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result rc = MHD_queue_response(conn, MHD_HTTP_NOT_FOUND, e);
    MHD_destroy_response(e);
    return rc;
  }
  return MHD_queue_response(conn, MHD_HTTP_OK, r);
}

static volatile sig_atomic_t g_stop; /* set by the signal handler only */

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

int main(int argc, char **argv) {
  ceiling c = {0};
  unsigned port = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
      port = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--first-call") == 0)
      c.first_call = true;
    else {
      fprintf(stderr, "usage: mhd_ceiling [--port N] [--first-call]\n");
      return 2;
    }
  }
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct MHD_Daemon *d =
      MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, answer, &c,
                       MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
                       MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_END);
  if (d == NULL) {
    fprintf(stderr, "mhd_ceiling: cannot start libmicrohttpd on 127.0.0.1:%u\n", port);
    return 1;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  printf("listening on 127.0.0.1:%u\n", info ? (unsigned)info->port : port);
  fflush(stdout);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  while (!g_stop)
    sleep(1); /* not pause(): a signal landing before it would be lost */
  MHD_stop_daemon(d);
  for (size_t i = 0; i < c.count; i++)
    MHD_destroy_response(c.responses[i]);
  return 0;
}
