/* sk_config: defaults, environment, command line and --help from the one
 * options table. */
#include "sk_config.h"
#include "sk_testutil.h"

static const char *g_env[][2] = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}};
static const char *fake_env(const char *name) {
  for (size_t i = 0; i < 3; i++)
    if (g_env[i][0] != NULL && strcmp(g_env[i][0], name) == 0)
      return g_env[i][1];
  return NULL;
}

/* Runs parse_args on a NULL-terminated list; stderr text into err (256). */
static int args(sk_config *c, const char *const *list, char *err) {
  char *argv[32] = {"skinnerd"};
  int argc = 1;
  for (; *list != NULL; list++)
    argv[argc++] = (char *)*list;
  char *out_text = NULL, *err_text = NULL;
  size_t on, en;
  FILE *out = open_memstream(&out_text, &on), *ef = open_memstream(&err_text, &en);
  int rc = sk_config_parse_args(c, argc, argv, out, ef);
  fclose(out);
  fclose(ef);
  snprintf(err, 256, "%s", err_text);
  free(out_text);
  free(err_text);
  return rc;
}

START_TEST(defaults_come_from_the_table) {
  sk_config c;
  sk_config_defaults(&c, 6);
  ck_assert_str_eq(c.host, "127.0.0.1");
  ck_assert_uint_eq(c.port, 8080);
  ck_assert_uint_eq(c.threads, 6);
  ck_assert_uint_eq(c.max_body, 4u << 20);
  ck_assert_uint_eq(c.max_batch, 1024);
  ck_assert_uint_eq(c.cache_mb, 256);
  ck_assert_uint_eq(c.inline_limit, 250);
  ck_assert_uint_eq(c.max_conns, 1024);
  ck_assert_uint_eq(c.conn_memory, 16384);
  ck_assert_uint_eq(c.header_timeout, 10);
  ck_assert_uint_eq(c.body_timeout, 60);
  ck_assert_uint_eq(c.idle_timeout, 5);
  ck_assert_uint_eq(c.max_per_ip, 128);
  ck_assert_int_eq(c.log_level, 1);
  ck_assert_uint_eq(c.max_frames, 1024);
  ck_assert_uint_eq(c.max_layers, 64);
  ck_assert_uint_eq(c.max_work, 1u << 24);
  ck_assert_uint_eq(c.max_answer_mb, 128);
  ck_assert_uint_eq(c.max_skeleton_mb, 64);
  ck_assert(c.memory_mb == SK_CONFIG_AUTO);
  ck_assert_str_eq(c.data_dir, "");
  ck_assert(!c.cache_set);
}
END_TEST

START_TEST(the_command_line_wins_over_the_environment) {
  sk_config c;
  sk_config_defaults(&c, 2);
  g_env[0][0] = "SKINNERD_MAX_BATCH", g_env[0][1] = "7";
  g_env[1][0] = "SKINNERD_LISTEN", g_env[1][1] = "[::1]:9";
  g_env[2][0] = "SKINNERD_FAST_BINARY", g_env[2][1] = "true";
  ck_assert_int_eq(sk_config_parse_env(&c, fake_env, stderr), 0);
  ck_assert_uint_eq(c.max_batch, 7);
  ck_assert_str_eq(c.host, "::1");
  ck_assert_uint_eq(c.port, 9);
  ck_assert_int_eq(c.fast_binary, 1);
  char err[256];
  const char *const a[] = {"--max-batch", "9", "--cache-mb=0", "--log-level", "debug", "--fast-binary",
                           "--data-dir", "/tmp/x", NULL};
  ck_assert_int_eq(args(&c, a, err), 0);
  ck_assert_uint_eq(c.max_batch, 9);
  ck_assert_uint_eq(c.cache_mb, 0);
  ck_assert(c.cache_set);
  ck_assert_int_eq(c.log_level, 3);
  ck_assert_str_eq(c.data_dir, "/tmp/x");
  memset(g_env, 0, sizeof g_env);
}
END_TEST

START_TEST(a_repeated_list_flag_adds_and_replaces_the_environments_list) {
  sk_config c;
  sk_config_defaults(&c, 2);
  ck_assert_str_eq(c.cors_origins, "");
  g_env[0][0] = "SKINNERD_CORS_ORIGIN", g_env[0][1] = "http://env.example,http://env2.example";
  ck_assert_int_eq(sk_config_parse_env(&c, fake_env, stderr), 0);
  memset(g_env, 0, sizeof g_env);
  ck_assert_str_eq(c.cors_origins, "http://env.example,http://env2.example");
  char err[256];
  const char *const a[] = {"--cors-origin", "http://a.example", "--cors-origin=http://b.example:8080", NULL};
  ck_assert_int_eq(args(&c, a, err), 0);
  ck_assert_str_eq(c.cors_origins, "http://a.example,http://b.example:8080");
  const char *const empty[] = {"--cors-origin=", NULL};
  ck_assert_int_eq(args(&c, empty, err), -1);
  ck_assert_str_eq(err, "skinnerd: bad value \"\" for --cors-origin=\n");
}
END_TEST

START_TEST(bad_settings_say_what_is_wrong) {
  sk_config c;
  sk_config_defaults(&c, 2);
  char err[256];
  ck_assert_int_eq(args(&c, (const char *const[]){"--bogus", NULL}, err), -1);
  ck_assert_str_eq(err, "skinnerd: unknown option --bogus (see --help)\n");
  ck_assert_int_eq(args(&c, (const char *const[]){"--bogus=1", NULL}, err), -1);
  ck_assert_str_eq(err, "skinnerd: unknown option --bogus (see --help)\n");
  ck_assert_int_eq(args(&c, (const char *const[]){"--max-batch", NULL}, err), -1);
  ck_assert_str_eq(err, "skinnerd: --max-batch needs a value\n");
  ck_assert_int_eq(args(&c, (const char *const[]){"--max-batch", "0", NULL}, err), -1);
  ck_assert_str_eq(err, "skinnerd: bad value \"0\" for --max-batch\n");
  ck_assert_int_eq(args(&c, (const char *const[]){"--threads", "1025", NULL}, err), -1);
  ck_assert_int_eq(args(&c, (const char *const[]){"--conn-memory", "4095", NULL}, err), -1);
  ck_assert_int_eq(args(&c, (const char *const[]){"--listen", "nohost", NULL}, err), -1);
  ck_assert_int_eq(args(&c, (const char *const[]){"--listen", "1.2.3.4:65536", NULL}, err), -1);
  ck_assert_int_eq(args(&c, (const char *const[]){"--log-level", "loud", NULL}, err), -1);
  ck_assert_int_eq(args(&c, (const char *const[]){"--max-work", "-1", NULL}, err), -1);
  ck_assert_int_eq(args(&c, (const char *const[]){"plain", NULL}, err), -1);
  ck_assert_str_eq(err, "skinnerd: unexpected argument \"plain\" (see --help)\n");
  FILE *null = fopen("/dev/null", "w");
  g_env[0][0] = "SKINNERD_MAX_WORK", g_env[0][1] = "lots";
  ck_assert_int_eq(sk_config_parse_env(&c, fake_env, null), -1);
  memset(g_env, 0, sizeof g_env);
  sk_config_defaults(&c, 2);
  ck_assert_int_eq(args(&c, (const char *const[]){"--tls-cert", "a.pem", NULL}, err), 0);
  ck_assert_int_eq(sk_config_finish(&c, 1024, null, null), -1);
  fclose(null);
}
END_TEST

START_TEST(memory_and_cache_are_derived_together) {
  sk_config c;
  sk_config_defaults(&c, 2);
  FILE *null = fopen("/dev/null", "w");
  ck_assert_int_eq(sk_config_finish(&c, 300, null, null), 0);
  ck_assert_uint_eq(c.memory_mb, 300);
  ck_assert_uint_eq(c.cache_mb, 150); /* half of the budget, under the 256 default */
  sk_config_defaults(&c, 2);
  char err[256];
  ck_assert_int_eq(args(&c, (const char *const[]){"--memory-mb", "100", "--cache-mb", "0", NULL}, err), 0);
  ck_assert_int_eq(sk_config_finish(&c, 300, null, null), 0);
  ck_assert_uint_eq(c.cache_mb, 100); /* unlimited lowered to the budget */
  fclose(null);
}
END_TEST

/* --fast-binary still parses (units that pass it start) and says at start
 * that it does nothing; without it, or at log level error, nothing is said. */
START_TEST(fast_binary_is_a_deprecated_no_op_with_a_warning) {
  static const char *const cases[][3] = {{"--fast-binary", NULL, NULL},
                                         {NULL, NULL, NULL},
                                         {"--fast-binary", "--log-level", "error"}};
  static const bool warns[] = {true, false, false};
  for (size_t k = 0; k < 3; k++) {
    sk_config c;
    sk_config_defaults(&c, 2);
    char err[256];
    const char *list[4] = {cases[k][0], cases[k][1], cases[k][2], NULL};
    ck_assert_int_eq(args(&c, list, err), 0);
    char *log_text = NULL;
    size_t ln;
    FILE *log = open_memstream(&log_text, &ln);
    ck_assert_int_eq(sk_config_finish(&c, 300, log, log), 0);
    fclose(log);
    ck_assert_int_eq(strstr(log_text, "--fast-binary (SKINNERD_FAST_BINARY) is deprecated and has no effect") != NULL,
                     warns[k]);
    free(log_text);
  }
}
END_TEST

START_TEST(help_lists_every_flag_with_its_variable_and_default) {
  char *text = NULL;
  size_t n;
  FILE *f = open_memstream(&text, &n);
  sk_config_usage(f);
  fclose(f);
  static const char *const want[] = {"--listen ADDR:PORT", "(SKINNERD_LISTEN) [127.0.0.1:8080]", "--max-frames N",
                                     "SKINNERD_MAX_FRAMES", "[1024]", "--fast-binary", "SKINNERD_FAST_BINARY=1",
                                     "--max-skeleton-mb N", "[64]", "--tls-key FILE", "--help, --version"};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    ck_assert_msg(strstr(text, want[i]) != NULL, "--help lacks %s", want[i]);
  for (const char *line = text; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0))
    ck_assert_msg(strcspn(line, "\n") <= 79, "line over 79 columns: %.*s", (int)strcspn(line, "\n"), line);
  free(text);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sk_config");
  TCase *t = tcase_create("golden");
  tcase_add_test(t, defaults_come_from_the_table);
  tcase_add_test(t, the_command_line_wins_over_the_environment);
  tcase_add_test(t, memory_and_cache_are_derived_together);
  tcase_add_test(t, fast_binary_is_a_deprecated_no_op_with_a_warning);
  tcase_add_test(t, help_lists_every_flag_with_its_variable_and_default);
  tcase_add_test(t, a_repeated_list_flag_adds_and_replaces_the_environments_list);
  suite_add_tcase(s, t);
  t = tcase_create("errors");
  tcase_add_test(t, bad_settings_say_what_is_wrong);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(suite()); }
