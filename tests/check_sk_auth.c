/* sk_auth (token file, scopes, constant-time lookup) and sk_access (the
 * framing / Host / token gate), as units. */
#include <unistd.h>

#include "sk_access.h"
#include "sk_auth.h"
#include "sk_metrics.h"
#include "sk_testutil.h"

#define TR "reader-0123456789abcdef"
#define TW "writer-0123456789abcdef"
#define TA "admin-0123456789abcdef/+="

static const char good[] = "# skinnerd tokens\n"
                           "\n"
                           TR " read\n"
                           "  " TW "\twrite   \r\n"
                           "   # indented comment\n"
                           TA " admin";

static sk_auth *parse_ok(const char *text) {
  sk_auth *a = NULL;
  sk_error e;
  sk_error_clear(&e);
  int rc = sk_auth_parse("tokens", text, strlen(text), &a, &e);
  ck_assert_msg(rc == 0, "parse failed: %s", e.text);
  return a;
}

/* Each bad file fails with exactly this "FILE:LINE: why". */
static void expect_bad(const char *text, int line, const char *msg) {
  sk_auth *a = (sk_auth *)1;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_auth_parse("tok.txt", text, strlen(text), &a, &e), SK_EFORMAT);
  ck_assert_ptr_null(a);
  ck_assert_int_eq(e.line, line);
  char want[256];
  snprintf(want, sizeof want, "tok.txt:%d: %s", line, msg);
  ck_assert_str_eq(e.text, want);
}

START_TEST(each_bad_line_is_named_with_file_line_and_why) {
  expect_bad("short read\n", 1, "the token is shorter than 16 characters");
  expect_bad("# ok\n" TR "\n", 2, "no scope after the token (read, write or admin)");
  expect_bad(TR " reader\n", 1, "unknown scope (read, write or admin)");
  expect_bad(TR " READ\n", 1, "unknown scope (read, write or admin)");
  expect_bad(TR " read extra\n", 1, "text after the scope (one `TOKEN SCOPE` per line)");
  expect_bad("\n\n" TR " read\n" TR " write\n", 4, "the token is listed twice");
  expect_bad("bad\"token-0123456789 read\n", 1, "the token has a character outside [A-Za-z0-9._~+/=-]");
  expect_bad("tøken-0123456789abcdef read\n", 1, "the token has a character outside [A-Za-z0-9._~+/=-]");
  char longtok[400];
  memset(longtok, 'a', 257);
  snprintf(longtok + 257, sizeof longtok - 257, " read\n");
  expect_bad(longtok, 1, "the token is longer than 256 characters");
  static const char nul[] = TR " read\n" TR "\0x write\n";
  sk_auth *a = NULL;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_auth_parse("f", nul, sizeof nul - 1, &a, &e), SK_EFORMAT);
  ck_assert_str_eq(e.text, "f:2: a NUL byte");
}
END_TEST

START_TEST(comments_blank_lines_and_crlf_are_accepted) {
  sk_auth *a = parse_ok(good);
  ck_assert_uint_eq(sk_auth_count(a), 3);
  sk_auth_destroy(a);
  a = parse_ok("");
  ck_assert_uint_eq(sk_auth_count(a), 0);
  sk_auth_destroy(a);
  sk_auth_destroy(NULL);
}
END_TEST

START_TEST(lookup_gives_each_token_its_scope_and_nothing_else) {
  sk_auth *a = parse_ok(good);
  ck_assert_int_eq(sk_auth_lookup(a, TR, strlen(TR)), SK_SCOPE_READ);
  ck_assert_int_eq(sk_auth_lookup(a, TW, strlen(TW)), SK_SCOPE_WRITE);
  ck_assert_int_eq(sk_auth_lookup(a, TA, strlen(TA)), SK_SCOPE_ADMIN);
  /* a prefix, a longer string, one changed byte, empty: unknown */
  ck_assert_int_eq(sk_auth_lookup(a, TR, strlen(TR) - 1), SK_SCOPE_NONE);
  ck_assert_int_eq(sk_auth_lookup(a, TR "x", strlen(TR) + 1), SK_SCOPE_NONE);
  char t[] = TW;
  t[3] ^= 1;
  ck_assert_int_eq(sk_auth_lookup(a, t, strlen(t)), SK_SCOPE_NONE);
  ck_assert_int_eq(sk_auth_lookup(a, "", 0), SK_SCOPE_NONE);
  ck_assert_int_eq(sk_auth_lookup(NULL, TR, strlen(TR)), SK_SCOPE_NONE);
  ck_assert_str_eq(sk_auth_scope_name(SK_SCOPE_WRITE), "write");
  sk_auth_destroy(a);
}
END_TEST

START_TEST(load_reads_a_file_and_names_unreadable_ones) {
  char path[] = "/tmp/sk_auth_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, good, strlen(good)), (ssize_t)strlen(good));
  close(fd);
  sk_auth *a = NULL;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_auth_load(path, &a, &e), 0);
  ck_assert_uint_eq(sk_auth_count(a), 3);
  sk_auth_destroy(a);
  unlink(path);
  sk_error_clear(&e);
  ck_assert_int_eq(sk_auth_load(path, &a, &e), SK_EIO);
  ck_assert_ptr_nonnull(strstr(e.text, path));
  ck_assert_ptr_nonnull(strstr(e.text, "No such file"));
}
END_TEST

/* ---- the gate ------------------------------------------------------------- */

static sk_access_request req(const char *host, const char *auth, int scope) {
  sk_access_request r = {.version = "HTTP/1.1", .host = host, .host_count = host != NULL, .authorization = auth,
                         .scope = scope};
  return r;
}

static sk_access *gate(const char *hosts, bool loopback, bool tokens) {
  sk_access *a = NULL;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_msg(sk_access_create(hosts, loopback, &a, &e) == 0, "%s", e.text);
  if (tokens)
    sk_access_set_tokens(a, parse_ok(good));
  return a;
}

START_TEST(scopes_follow_the_routes) {
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_HEALTHZ, SK_METHOD_GET), SK_SCOPE_NONE);
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_READYZ, SK_METHOD_GET), SK_SCOPE_NONE);
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_METRICS, SK_METHOD_GET), SK_SCOPE_ADMIN);
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_SKELETONS, SK_METHOD_GET), SK_SCOPE_READ);
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_SKELETONS, SK_METHOD_POST), SK_SCOPE_WRITE);
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_SKELETON, SK_METHOD_HEAD), SK_SCOPE_READ);
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_SKELETON, SK_METHOD_PUT), SK_SCOPE_WRITE);
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_SKELETON, SK_METHOD_DELETE), SK_SCOPE_WRITE);
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_BONES, SK_METHOD_PATCH), SK_SCOPE_WRITE);
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_REST, SK_METHOD_POST), SK_SCOPE_WRITE);
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_POSE, SK_METHOD_POST), SK_SCOPE_READ);
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_POSES, SK_METHOD_POST), SK_SCOPE_READ);
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_OTHER, SK_METHOD_GET), SK_SCOPE_READ);
  ck_assert_int_eq(sk_access_scope(SK_ROUTE_OTHER, SK_METHOD_OPTIONS), SK_SCOPE_WRITE);
}
END_TEST

START_TEST(tokens_401_403_and_pass_by_scope) {
  sk_access *a = gate(NULL, true, true);
  sk_access_verdict v;
  sk_access_request r = req("localhost", NULL, SK_SCOPE_READ);
  sk_access_check(a, &r, &v);
  ck_assert_int_eq(v.status, 401);
  ck_assert_str_eq(v.www_authenticate, "Bearer realm=\"skinnerd\"");
  ck_assert(!v.close);
  r.authorization = "Bearer nope-nope-nope-nope-nope";
  r.content_length = "12";
  r.content_length_count = 1;
  sk_access_check(a, &r, &v);
  ck_assert_int_eq(v.status, 401);
  ck_assert_str_eq(v.www_authenticate, "Bearer realm=\"skinnerd\", error=\"invalid_token\"");
  ck_assert(v.close); /* a body we will not read */
  r.authorization = "Basic dXNlcjpwYXNz";
  sk_access_check(a, &r, &v);
  ck_assert_int_eq(v.status, 401);
  ck_assert_str_eq(v.www_authenticate, "Bearer realm=\"skinnerd\", error=\"invalid_request\"");
  r.authorization = "bearer   " TR "  ";
  sk_access_check(a, &r, &v);
  ck_assert_int_eq(v.status, 0);
  r.scope = SK_SCOPE_WRITE;
  sk_access_check(a, &r, &v);
  ck_assert_int_eq(v.status, 403);
  ck_assert_str_eq(v.detail, "this route needs scope write; the token has scope read");
  ck_assert_str_eq(v.www_authenticate, "Bearer realm=\"skinnerd\", error=\"insufficient_scope\", scope=\"write\"");
  r.authorization = "Bearer " TA; /* admin ⊇ write */
  sk_access_check(a, &r, &v);
  ck_assert_int_eq(v.status, 0);
  r.authorization = NULL;
  r.scope = SK_SCOPE_NONE; /* healthz */
  sk_access_check(a, &r, &v);
  ck_assert_int_eq(v.status, 0);
  sk_access_set_tokens(a, NULL); /* no --tokens: open */
  r.scope = SK_SCOPE_ADMIN;
  sk_access_check(a, &r, &v);
  ck_assert_int_eq(v.status, 0);
  sk_access_destroy(a);
}
END_TEST

START_TEST(host_rules_default_list_ports_and_star) {
  sk_access *a = gate(NULL, true, false);
  sk_access_verdict v;
  static const char *const ok[] = {"localhost", "LOCALHOST:8080", "127.0.0.1", "127.0.0.1:1", "[::1]", "[::1]:443"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    sk_access_request r = req(ok[i], NULL, SK_SCOPE_READ);
    sk_access_check(a, &r, &v);
    ck_assert_msg(v.status == 0, "%s refused", ok[i]);
  }
  static const char *const bad[] = {"evil.example", "localhost.evil.example", "127.0.0.2", "localhost:", "x:99999",
                                    "[::1", "local host", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    sk_access_request r = req(bad[i], NULL, SK_SCOPE_READ);
    sk_access_check(a, &r, &v);
    ck_assert_msg(v.status == 421, "%s: %d", bad[i], v.status);
  }
  sk_access_request r = req(NULL, NULL, SK_SCOPE_READ);
  sk_access_check(a, &r, &v);
  ck_assert_int_eq(v.status, 400);
  ck_assert_str_eq(v.detail, "an HTTP/1.1 request needs a Host header");
  r.version = "HTTP/1.0"; /* HTTP/1.0 may leave it out */
  sk_access_check(a, &r, &v);
  ck_assert_int_eq(v.status, 0);
  r = req("localhost", NULL, SK_SCOPE_READ);
  r.host_count = 2;
  sk_access_check(a, &r, &v);
  ck_assert_int_eq(v.status, 400);
  sk_access_destroy(a);

  a = gate(NULL, false, false); /* public listener: any Host by default */
  r = req("anything.example", NULL, SK_SCOPE_READ);
  sk_access_check(a, &r, &v);
  ck_assert_int_eq(v.status, 0);
  sk_access_destroy(a);

  a = gate("api.example:8443, 10.0.0.5,[fe80::1]", true, false);
  static const char *const ok2[] = {"api.example:8443", "API.example:8443", "10.0.0.5:1234", "[fe80::1]:80"};
  for (size_t i = 0; i < sizeof ok2 / sizeof ok2[0]; i++) {
    r = req(ok2[i], NULL, SK_SCOPE_READ);
    sk_access_check(a, &r, &v);
    ck_assert_msg(v.status == 0, "%s refused", ok2[i]);
  }
  static const char *const bad2[] = {"api.example", "api.example:8444", "localhost"};
  for (size_t i = 0; i < sizeof bad2 / sizeof bad2[0]; i++) {
    r = req(bad2[i], NULL, SK_SCOPE_READ);
    sk_access_check(a, &r, &v);
    ck_assert_msg(v.status == 421, "%s: %d", bad2[i], v.status);
  }
  sk_access_destroy(a);

  a = gate("*", true, false);
  r = req("evil.example", NULL, SK_SCOPE_READ);
  sk_access_check(a, &r, &v);
  ck_assert_int_eq(v.status, 0);
  sk_access_destroy(a);

  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_access_create("ok.example,bad host", true, &a, &e), SK_EINVAL);
  ck_assert_str_eq(e.text, "--allowed-hosts: bad entry \"bad host\" (NAME, NAME:PORT or [IPv6]:PORT)");
  sk_error_clear(&e);
  ck_assert_int_eq(sk_access_create("a.example,", true, &a, &e), SK_EINVAL);
}
END_TEST

START_TEST(framing_refusals_close_the_connection) {
  struct {
    const char *cl;
    unsigned ncl;
    const char *te;
    unsigned nte;
    const char *why;
  } cases[] = {
      {"5", 2, NULL, 0, "more than one Content-Length header (refused even when equal)"},
      {"5", 1, "chunked", 1, "Transfer-Encoding together with Content-Length"},
      {"+5", 1, NULL, 0, "Content-Length is not a plain decimal number"},
      {"5 ", 1, NULL, 0, "Content-Length is not a plain decimal number"},
      {"0x10", 1, NULL, 0, "Content-Length is not a plain decimal number"},
      {NULL, 0, "chunked", 2, "more than one Transfer-Encoding header"},
      {NULL, 0, "gzip, chunked", 1, "the only Transfer-Encoding accepted is a single \"chunked\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sk_access_request r = req("localhost", NULL, SK_SCOPE_NONE);
    r.content_length = cases[i].cl;
    r.content_length_count = cases[i].ncl;
    r.transfer_encoding = cases[i].te;
    r.transfer_encoding_count = cases[i].nte;
    sk_access_verdict v;
    sk_access_check(NULL, &r, &v); /* framing holds even without a gate */
    ck_assert_int_eq(v.status, 400);
    ck_assert(v.close);
    char want[200];
    snprintf(want, sizeof want, "%s; the connection is closed", cases[i].why);
    ck_assert_str_eq(v.detail, want);
  }
  sk_access_request r = req("localhost", NULL, SK_SCOPE_NONE);
  r.transfer_encoding = "Chunked";
  r.transfer_encoding_count = 1;
  sk_access_verdict v;
  sk_access_check(NULL, &r, &v);
  ck_assert_int_eq(v.status, 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_auth");
  TCase *t = tcase_create("validity");
  tcase_add_test(t, each_bad_line_is_named_with_file_line_and_why);
  tcase_add_test(t, comments_blank_lines_and_crlf_are_accepted);
  tcase_add_test(t, load_reads_a_file_and_names_unreadable_ones);
  suite_add_tcase(s, t);
  t = tcase_create("lookup");
  tcase_add_test(t, lookup_gives_each_token_its_scope_and_nothing_else);
  suite_add_tcase(s, t);
  t = tcase_create("gate");
  tcase_add_test(t, scopes_follow_the_routes);
  tcase_add_test(t, tokens_401_403_and_pass_by_scope);
  tcase_add_test(t, host_rules_default_list_ports_and_star);
  tcase_add_test(t, framing_refusals_close_the_connection);
  suite_add_tcase(s, t);
  return sk_test_run(s);
}
