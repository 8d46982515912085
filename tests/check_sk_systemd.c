#include <fcntl.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sk_error.h"
#include "sk_systemd.h"
#include "sk_testutil.h"

START_TEST(notify_sends_a_datagram_to_notify_socket) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/sk_notify.%d", (int)getpid());
  unlink(path);
  int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  setenv("NOTIFY_SOCKET", path, 1);
  ck_assert_int_eq(sk_systemd_notify("READY=1\nSTATUS=serving"), 0);
  char buf[64] = {0};
  ck_assert_int_eq((int)recv(fd, buf, sizeof buf - 1, 0), 22);
  ck_assert_str_eq(buf, "READY=1\nSTATUS=serving");
  close(fd);
  unlink(path);
  unsetenv("NOTIFY_SOCKET");
  ck_assert_int_eq(sk_systemd_notify("READY=1"), 0); /* no socket: a no-op */
  setenv("NOTIFY_SOCKET", "relative", 1);
  ck_assert_int_eq(sk_systemd_notify("READY=1"), SK_EINVAL);
  unsetenv("NOTIFY_SOCKET");
}
END_TEST

START_TEST(listen_fds_only_for_this_process) {
  char pid[32];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  setenv("LISTEN_PID", "1", 1);
  setenv("LISTEN_FDS", "1", 1);
  ck_assert_int_eq(sk_systemd_listen_fds(), 0);
  ck_assert_ptr_null(getenv("LISTEN_FDS"));
  /* fd 3 may already be open (Check's own pipe in fork mode): only
   * borrow it when it is free, and never close what is not ours. */
  bool ours = fcntl(SK_SYSTEMD_FDS_START, F_GETFD) < 0;
  if (ours) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(s, 0);
    if (s != SK_SYSTEMD_FDS_START) {
      ck_assert_int_eq(dup2(s, SK_SYSTEMD_FDS_START), SK_SYSTEMD_FDS_START);
      close(s);
    }
  }
  setenv("LISTEN_PID", pid, 1);
  setenv("LISTEN_FDS", "1", 1);
  ck_assert_int_eq(sk_systemd_listen_fds(), 1);
  if (ours)
    close(SK_SYSTEMD_FDS_START);
}
END_TEST

START_TEST(watchdog_interval) {
  unsetenv("WATCHDOG_USEC");
  ck_assert_uint_eq(sk_systemd_watchdog_usec(), 0);
  setenv("WATCHDOG_USEC", "2000000", 1);
  ck_assert_uint_eq(sk_systemd_watchdog_usec(), 2000000);
  setenv("WATCHDOG_PID", "1", 1);
  ck_assert_uint_eq(sk_systemd_watchdog_usec(), 0);
  unsetenv("WATCHDOG_PID");
  unsetenv("WATCHDOG_USEC");
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_systemd");
  TCase *tc = tcase_create("protocol");
  tcase_add_test(tc, notify_sends_a_datagram_to_notify_socket);
  tcase_add_test(tc, listen_fds_only_for_this_process);
  tcase_add_test(tc, watchdog_interval);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
