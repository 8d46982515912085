/* sk_config: skinnerd's settings. One table (src/sk_config.c) gives every
 * option its flag, environment variable, default, bounds and help text;
 * parsing the environment, parsing argv and printing --help all read it,
 * so a default lives in one place. Precedence: defaults, then the
 * environment, then the command line. */
#ifndef SK_CONFIG_H
#define SK_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#define SK_CONFIG_PATH_MAX 4096

typedef struct sk_config {
  char host[64];
  unsigned port;
  unsigned long long threads;
  unsigned long long max_body, max_bones, max_batch, cache_mb, inline_limit;
  int log_level; /* 0 error, 1 warn, 2 info, 3 debug */
  int fast_binary; /* deprecated: parsed for compatibility, no effect (sk_config_finish warns) */
  char data_dir[SK_CONFIG_PATH_MAX];
  unsigned long long max_conns, header_timeout, body_timeout, conn_memory;
  unsigned long long max_per_ip, idle_timeout, stall_timeout;
  char admin_host[64]; /* empty: no admin listener */
  unsigned admin_port;
  unsigned long long memory_mb; /* SK_CONFIG_AUTO until given: sk_config_finish picks the machine's */
  bool cache_set;               /* --cache-mb given: never lowered silently */
  char tokens[SK_CONFIG_PATH_MAX], tls_cert[SK_CONFIG_PATH_MAX], tls_key[SK_CONFIG_PATH_MAX];
  char allowed_hosts[SK_CONFIG_PATH_MAX]; /* "" when not given */
  char tls_priorities[SK_CONFIG_PATH_MAX]; /* "" when not given: SK_TLS_DEFAULT_PRIORITIES */
  unsigned long long max_frames, max_layers, max_work, max_answer_mb, max_skeleton_mb;
  char cors_origins[SK_CONFIG_PATH_MAX]; /* comma separated, "" when none (sk_cors) */
  unsigned long long stream_mb_per_ip;   /* SK_CONFIG_AUTO: a quarter of the budget; 0: no cap */
} sk_config;

#define SK_CONFIG_AUTO (~0ull)

/* Every option at its default; `cpus` is the --threads default. */
void sk_config_defaults(sk_config *c, unsigned cpus);

/* Applies the SKINNERD_* variables `getenv_fn` (NULL: getenv) returns.
 * Returns 0, or -1 after saying which variable is bad on `err`. */
int sk_config_parse_env(sk_config *c, const char *(*getenv_fn)(const char *name), FILE *err);

/* Applies argv[1..argc) ("--flag value", "--flag=value", switches alone).
 * Returns 0; 1 when --help or --version was answered on `out`; -1 after
 * saying on `err` what is wrong (an unknown option, a flag without its
 * value, a bad value). */
int sk_config_parse_args(sk_config *c, int argc, char **argv, FILE *out, FILE *err);

/* The checks that need every setting (--tls-cert with --tls-key), then the
 * derived ones: --memory-mb's default from the machine (`machine_mb`), and
 * --cache-mb fitted inside the budget (lowering a given one says so on
 * `log` at log level warn and up, as does the deprecated --fast-binary).
 * Returns 0, or -1 after saying why on `err`. */
int sk_config_finish(sk_config *c, unsigned long long machine_mb, FILE *log, FILE *err);

/* Prints the usage: every option from the table, with its environment
 * variable and default. */
void sk_config_usage(FILE *f);

#endif
