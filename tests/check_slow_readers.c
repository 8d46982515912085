/* Slow readers of streamed answers cannot starve other clients of the
 * memory budget (issue 31). A slow reader holds its stream's buffers, its
 * parsed poses and its skeleton for as long as it reads; 8 of them held
 * all of --memory-mb 64 and every other client's streamed batch got 503.
 * With --stream-mb-per-ip (default a quarter of the budget) the streams
 * to one address hold at most that much: past it a new stream to that
 * address is 503 at its start, and a client from another address still
 * gets its streamed batch (200).
 *
 * The slow readers connect from 127.0.0.2 (all of 127/8 is loopback on
 * Linux), the other client from 127.0.0.1. Each test prints one line
 * ("slow readers: ..."): run with SKINNERD=<an older skinnerd> to measure
 * it (the assertions then fail, the figures are still printed). */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_testskel.h"
#include "sk_testutil.h"

static sk_daemon D;

static double metric(const char *name) {
  sk_httpc_resp r;
  sk_fixture_request(&D, "GET", "/metrics", NULL, NULL, 0, &r);
  char key[128];
  snprintf(key, sizeof key, "\n%s ", name);
  const char *p = r.body ? strstr(r.body, key) : NULL;
  double v = p ? strtod(p + strlen(key), NULL) : -1;
  sk_httpc_free(&r);
  return v;
}

/* POSTs `body` from 127.0.0.2 with a small receive buffer and reads only
 * the answer's head: a reader that then stops reading. Returns the socket
 * and the status in *status (0: none within 10 s). */
static int slow_reader(const char *path, const char *body, int *status) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ck_assert_int_ge(fd, 0);
  int rcv = 16384;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
  struct sockaddr_in a = {.sin_family = AF_INET};
  inet_pton(AF_INET, "127.0.0.2", &a.sin_addr);
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  a.sin_port = htons((unsigned short)D.port);
  inet_pton(AF_INET, D.host, &a.sin_addr);
  ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  char head[512];
  size_t blen = strlen(body);
  int n = snprintf(head, sizeof head,
                   "POST %s HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n"
                   "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                   path, blen);
  ck_assert_int_eq(sk_httpc_send_all(fd, head, (size_t)n), 0);
  sk_httpc_send_all(fd, body, blen); /* may fail when answered early: fine */
  char got[4096];
  size_t len = 0;
  double until = sk_test_now() + 10;
  *status = 0;
  while (len + 1 < sizeof got) {
    struct pollfd p = {fd, POLLIN, 0};
    int left = (int)((until - sk_test_now()) * 1e3);
    if (left <= 0 || poll(&p, 1, left) <= 0 || recv(fd, got + len, 1, 0) != 1)
      break;
    got[++len] = 0;
    if (len >= 4 && memcmp(got + len - 4, "\r\n\r\n", 4) == 0) {
      sscanf(got, "HTTP/1.%*d %d", status);
      break;
    }
  }
  return fd;
}

/* `n` slow readers of a ~900 MB streamed answer each (1600 bones: ~9 MB
 * of buffers, poses and skeleton a stream, so 8 of them would hold all of
 * the 64 MB), then another client's streamed batch (~3 MB): its status,
 * printed with the figures. */
static int starve(int n) {
  const char *const args[] = {"--memory-mb", "64", "--max-answer-mb", "4096", "--max-work", "1000000000",
                              "--max-per-ip", "0", "--max-bones", "2048", NULL};
  sk_fixture_start(&D, args);
  char *skel = sk_test_tree_skeleton(1600);
  sk_fixture_put_json(&D, "big", skel);
  free(skel);
  char *slow = sk_fixture_repeat_poses("{\"output\":[\"final\",\"absolute\",\"local\"]}", 1024);
  int *fd = calloc((size_t)n, sizeof *fd), ok = 0, busy = 0, other = 0;
  ck_assert_ptr_nonnull(fd);
  double t0 = sk_test_now();
  for (int i = 0; i < n; i++) {
    int st;
    fd[i] = slow_reader("/v1/skeletons/big/poses", slow, &st);
    ok += st == 200;
    busy += st == 503;
    other += st != 200 && st != 503;
  }
  double used = metric("skinnerd_memory_used_bytes");
  /* another client, from 127.0.0.1: a streamed batch read to its end */
  char *mine = sk_fixture_repeat_poses("{\"output\":[\"final\"]}", 16);
  sk_httpc_resp r;
  sk_fixture_request(&D, "POST", "/v1/skeletons/big/poses", "Content-Type: application/json\r\n", mine, strlen(mine),
                     &r);
  int status = r.status;
  size_t len = r.len;
  fprintf(stderr,
          "slow readers: %d slow readers from 127.0.0.2 (%d x 200, %d x 503, %d other in %.1f s) held %.1f MB of "
          "the 64 MB budget; another client's streamed batch: %d (%zu bytes)%s%.200s\n",
          n, ok, busy, other, sk_test_now() - t0, used / (1 << 20), status, len, status == 200 ? "" : ": ",
          status == 200 ? "" : (r.body ? r.body : ""));
  ck_assert_int_eq(other, 0);
  ck_assert_int_gt(ok, 0); /* the cap leaves slow readers their share */
  ck_assert_msg(status == 200, "the other client's streamed batch got %d: %.300s", status, r.body ? r.body : "");
  ck_assert_uint_gt(len, 1u << 20);
  sk_httpc_free(&r);
  for (int i = 0; i < n; i++)
    close(fd[i]);
  free(fd);
  free(slow);
  free(mine);
  sk_fixture_stop(&D);
  return status;
}

START_TEST(eight_slow_readers_leave_another_client_its_streamed_batch) { starve(8); }
END_TEST

START_TEST(two_hundred_slow_readers_leave_another_client_its_streamed_batch) { starve(200); }
END_TEST

static Suite *slow_readers_suite(void) {
  Suite *s = suite_create("slow_readers");
  TCase *t = tcase_create("fairness");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, eight_slow_readers_leave_another_client_its_streamed_batch);
  tcase_add_test(t, two_hundred_slow_readers_leave_another_client_its_streamed_batch);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(slow_readers_suite()); }
