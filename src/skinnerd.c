/* skinnerd: the skinning daemon. Parses flags and environment, wires the
 * cache, metrics, routes and HTTP adapter to one libuv loop, and turns
 * SIGINT/SIGTERM into a graceful stop. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <uv.h>

#include "config.h"
#include "sk_budget.h"
#include "sk_access.h"
#include "sk_auth.h"
#include "sk_cache.h"
#include "sk_error.h"
#include "sk_http.h"
#include "sk_metrics.h"
#include "sk_routes.h"
#include "sk_store.h"
#include "sk_systemd.h"
#include "sk_tls.h"

typedef struct options {
  char host[64];
  unsigned port;
  unsigned long threads;
  unsigned long long max_body, max_bones, max_batch, cache_mb, inline_limit;
  int log_level;
  int fast_binary;
  char data_dir[4096];
  unsigned long long max_conns, header_timeout, body_timeout, conn_memory;
  unsigned long long max_per_ip, idle_timeout;
  char admin_host[64]; /* empty: no admin listener */
  unsigned admin_port;
  unsigned long long memory_mb; /* ULLONG_MAX until set: the default is the machine's */
  bool cache_set;               /* --cache-mb given: never lowered silently */
  char tokens[4096], tls_cert[4096], tls_key[4096], allowed_hosts[4096]; /* "" when not given */
  unsigned long long max_frames, max_layers, max_work, max_answer_mb, max_skeleton_mb;
} options;

static void usage(FILE *f) {
  fprintf(f,
          "usage: skinnerd [options]\n"
          "  --listen ADDR:PORT   address to serve on (SKINNERD_LISTEN) [127.0.0.1:8080];\n"
          "                       port 0 picks a free port; the first line on stdout\n"
          "                       is always \"listening on ADDR:PORT\"\n"
          "  --threads N          thread-pool size for large batches (SKINNERD_THREADS) [CPUs]\n"
          "  --max-body BYTES     largest request body (SKINNERD_MAX_BODY) [4194304]\n"
          "  --max-bones N        largest skeleton (SKINNERD_MAX_BONES) [1024]\n"
          "  --max-batch N        most poses per batch request (SKINNERD_MAX_BATCH) [1024]\n"
          "  --cache-mb N         skeleton cache size, least recently used evicted\n"
          "                       (SKINNERD_CACHE_MB) [256; 0 = unlimited]\n"
          "  --inline-limit US    batches estimated to take up to US microseconds are\n"
          "                       evaluated on the I/O thread, larger ones on the pool;\n"
          "                       0 sends every batch to the pool (SKINNERD_INLINE_LIMIT) [250]\n"
          "  --fast-binary        accepted for compatibility, no effect: every answer is\n"
          "                       exact, and the float32 kernel measured no faster\n"
          "                       (SKINNERD_FAST_BINARY=1)\n"
          "  --data-dir DIR       keep every skeleton on disk (durable before the 2xx) and\n"
          "                       reload them at start; evicted ones reload on demand;\n"
          "                       one daemon per DIR (DIR/skinnerd.lock); a full disk\n"
          "                       is a 507 and /readyz 503 (SKINNERD_DATA_DIR) [memory only]\n"
          "  --max-connections N  simultaneous connections (SKINNERD_MAX_CONNECTIONS) [1024]\n"
          "  --conn-memory BYTES  per-connection buffer for a request's headers and body\n"
          "                       chunks; headers of about its size get a 431\n"
          "                       (SKINNERD_CONN_MEMORY) [16384]\n"
          "  --header-timeout S   a request's headers must arrive within S seconds of the\n"
          "                       connection (or its previous answer) (SKINNERD_HEADER_TIMEOUT) [10]\n"
          "  --body-timeout S     and its body within S seconds of the headers\n"
          "                       (SKINNERD_BODY_TIMEOUT) [60]\n"
          "  --log-level LEVEL    error, warn, info or debug (SKINNERD_LOG_LEVEL) [warn]\n"
          "  --max-per-ip N       simultaneous connections from one client address; more\n"
          "                       are closed right after accept (SKINNERD_MAX_PER_IP)\n"
          "                       [128; 0 = no cap; raise it behind a reverse proxy]\n"
          "  --idle-timeout S     a connection that sent no byte since it opened or since\n"
          "                       its previous answer is closed after S seconds\n"
          "                       (SKINNERD_IDLE_TIMEOUT) [5]\n"
          "  --admin-listen ADDR:PORT\n"
          "                       a second listener serving only /healthz, /readyz and\n"
          "                       /metrics, with its own 64 connections; /metrics then\n"
          "                       leaves the public port; its address is the second stdout\n"
          "                       line, \"admin listening on ADDR:PORT\" (SKINNERD_ADMIN_LISTEN)\n"
          "                       [off]\n"
          "  --memory-mb N        one memory budget for the cache, request bodies being\n"
          "                       received and answers being sent; past it a request gets\n"
          "                       503 with Retry-After (SKINNERD_MEMORY_MB) [a quarter of\n"
          "                       RAM or of the cgroup's memory.max, 64..16384; 0 = unlimited];\n"
          "                       --cache-mb defaults to the smaller of 256 and half of it;\n"
          "                       a larger --cache-mb (or 0) is lowered to it\n"
          "  --tokens FILE        bearer tokens, one \"TOKEN SCOPE\" a line, scope read,\n"
          "                       write or admin (SKINNERD_TOKENS) [none: no authentication]\n"
          "  --tls-cert FILE      serve HTTPS with this PEM certificate chain and\n"
          "  --tls-key FILE       this PEM key; both or neither\n"
          "                       (SKINNERD_TLS_CERT, SKINNERD_TLS_KEY) [plain HTTP]\n"
          "  --allowed-hosts LIST Host header values accepted, comma separated, port\n"
          "                       optional; * accepts any (SKINNERD_ALLOWED_HOSTS)\n"
          "                       [loopback names on a loopback listener, else any]\n"
          "  --max-frames N       frames one \"times\" or \"from\"/\"to\"/\"fps\" may give; more\n"
          "                       is 413 before any sampling (SKINNERD_MAX_FRAMES) [1024]\n"
          "  --max-layers N       layers of one pose (SKINNERD_MAX_LAYERS) [64]\n"
          "  --max-work N         work units of one pose request, ~1 bone matrix each\n"
          "                       (sampling, evaluation, JSON encoding), checked before\n"
          "                       any work (SKINNERD_MAX_WORK) [16777216]\n"
          "  --max-answer-mb N    largest pose answer, JSON counted at its bound of 25\n"
          "                       bytes a float (SKINNERD_MAX_ANSWER_MB) [128]\n"
          "  --max-skeleton-mb N  what one glTF upload may build in memory, estimated\n"
          "                       from its counts before building (SKINNERD_MAX_SKELETON_MB) [64]\n"
          "  --help, --version\n"
          "SIGINT/SIGTERM stop accepting, finish requests in flight and exit 0.\n"
          "SIGHUP reloads --tokens and --tls-cert/--tls-key (a bad file keeps the old\n"
          "ones); SIGUSR1/SIGUSR2 are logged and ignored.\n"
          "Under systemd: socket activation ($LISTEN_FDS, then --listen is ignored; a\n"
          "second socket is the admin listener), "
          "Type=notify readiness and WatchdogSec= pings.\n");
}

static int parse_level(const char *s) {
  static const char *const names[] = {"error", "warn", "info", "debug"};
  for (int i = 0; i < 4; i++)
    if (strcmp(s, names[i]) == 0)
      return i;
  return -1;
}

static int parse_ull(const char *s, unsigned long long max, unsigned long long *out) {
  if (s == NULL || *s == '\0' || *s == '-')
    return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0' || v > max)
    return -1;
  *out = v;
  return 0;
}

/* "ADDR:PORT" or "[v6]:PORT" into host (64 bytes) and *port. */
static int parse_addr(const char *s, char host_out[64], unsigned *port_out) {
  const char *colon;
  const char *host = s;
  size_t hlen;
  if (s[0] == '[') {
    const char *close = strchr(s, ']');
    if (close == NULL || close[1] != ':')
      return -1;
    host = s + 1;
    hlen = (size_t)(close - host);
    colon = close + 1;
  } else {
    colon = strrchr(s, ':');
    if (colon == NULL)
      return -1;
    hlen = (size_t)(colon - s);
  }
  unsigned long long port;
  if (hlen == 0 || hlen >= 64 || parse_ull(colon + 1, 65535, &port) != 0)
    return -1;
  memcpy(host_out, host, hlen);
  host_out[hlen] = '\0';
  *port_out = (unsigned)port;
  return 0;
}

/* Applies one setting by its flag name; `from` names the source for errors. */
static int set_option(options *o, const char *name, const char *val, const char *from) {
  unsigned long long v;
  int bad = 0;
  if (strcmp(name, "listen") == 0)
    bad = parse_addr(val, o->host, &o->port);
  else if (strcmp(name, "threads") == 0)
    bad = parse_ull(val, 1024, &v) || v == 0 || ((o->threads = (unsigned long)v), 0);
  else if (strcmp(name, "max-body") == 0)
    bad = parse_ull(val, SIZE_MAX / 2, &o->max_body) || o->max_body == 0;
  else if (strcmp(name, "max-bones") == 0)
    bad = parse_ull(val, SK_SKELETON_MAX_BONES, &o->max_bones) || o->max_bones == 0;
  else if (strcmp(name, "max-batch") == 0)
    bad = parse_ull(val, 10000000, &o->max_batch) || o->max_batch == 0;
  else if (strcmp(name, "cache-mb") == 0)
    bad = parse_ull(val, 1u << 20, &o->cache_mb) || !(o->cache_set = true);
  else if (strcmp(name, "inline-limit") == 0)
    bad = parse_ull(val, SIZE_MAX / 2, &o->inline_limit);
  else if (strcmp(name, "fast-binary") == 0)
    bad = (o->fast_binary = strcmp(val, "1") == 0 || strcmp(val, "true") == 0) == 0 && strcmp(val, "0") != 0 &&
          strcmp(val, "false") != 0;
  else if (strcmp(name, "log-level") == 0)
    bad = (o->log_level = parse_level(val)) < 0;
  else if (strcmp(name, "max-connections") == 0)
    bad = parse_ull(val, 1000000, &o->max_conns) || o->max_conns == 0;
  else if (strcmp(name, "conn-memory") == 0)
    bad = parse_ull(val, 16u << 20, &o->conn_memory) || o->conn_memory < 4096;
  else if (strcmp(name, "header-timeout") == 0)
    bad = parse_ull(val, 86400, &o->header_timeout) || o->header_timeout == 0;
  else if (strcmp(name, "body-timeout") == 0)
    bad = parse_ull(val, 86400, &o->body_timeout) || o->body_timeout == 0;
  else if (strcmp(name, "max-per-ip") == 0)
    bad = parse_ull(val, 1000000, &o->max_per_ip);
  else if (strcmp(name, "idle-timeout") == 0)
    bad = parse_ull(val, 86400, &o->idle_timeout) || o->idle_timeout == 0;
  else if (strcmp(name, "admin-listen") == 0)
    bad = parse_addr(val, o->admin_host, &o->admin_port);
  else if (strcmp(name, "memory-mb") == 0)
    bad = parse_ull(val, 1ull << 30, &o->memory_mb);
  else if (strcmp(name, "max-frames") == 0)
    bad = parse_ull(val, 10000000, &o->max_frames) || o->max_frames == 0;
  else if (strcmp(name, "max-layers") == 0)
    bad = parse_ull(val, 1000000, &o->max_layers) || o->max_layers == 0;
  else if (strcmp(name, "max-work") == 0)
    bad = parse_ull(val, 1ull << 50, &o->max_work) || o->max_work == 0;
  else if (strcmp(name, "max-answer-mb") == 0)
    bad = parse_ull(val, 1u << 20, &o->max_answer_mb) || o->max_answer_mb == 0;
  else if (strcmp(name, "max-skeleton-mb") == 0)
    bad = parse_ull(val, 1u << 20, &o->max_skeleton_mb) || o->max_skeleton_mb == 0;
  else if (strcmp(name, "data-dir") == 0)
    bad = val[0] == '\0' || snprintf(o->data_dir, sizeof o->data_dir, "%s", val) >= (int)sizeof o->data_dir;
  else if (strcmp(name, "tokens") == 0)
    bad = val[0] == '\0' || snprintf(o->tokens, sizeof o->tokens, "%s", val) >= (int)sizeof o->tokens;
  else if (strcmp(name, "tls-cert") == 0)
    bad = val[0] == '\0' || snprintf(o->tls_cert, sizeof o->tls_cert, "%s", val) >= (int)sizeof o->tls_cert;
  else if (strcmp(name, "tls-key") == 0)
    bad = val[0] == '\0' || snprintf(o->tls_key, sizeof o->tls_key, "%s", val) >= (int)sizeof o->tls_key;
  else if (strcmp(name, "allowed-hosts") == 0)
    bad = val[0] == '\0' ||
          snprintf(o->allowed_hosts, sizeof o->allowed_hosts, "%s", val) >= (int)sizeof o->allowed_hosts;
  else {
    fprintf(stderr, "skinnerd: unknown option --%s (see --help)\n", name);
    return -1;
  }
  if (bad) {
    fprintf(stderr, "skinnerd: bad value \"%s\" for %s\n", val ? val : "", from);
    return -1;
  }
  return 0;
}

static int parse_env(options *o) {
  static const char *const names[][2] = {
      {"listen", "SKINNERD_LISTEN"},       {"threads", "SKINNERD_THREADS"},     {"max-body", "SKINNERD_MAX_BODY"},
      {"max-bones", "SKINNERD_MAX_BONES"}, {"max-batch", "SKINNERD_MAX_BATCH"}, {"cache-mb", "SKINNERD_CACHE_MB"},
      {"inline-limit", "SKINNERD_INLINE_LIMIT"}, {"log-level", "SKINNERD_LOG_LEVEL"},
      {"fast-binary", "SKINNERD_FAST_BINARY"}, {"data-dir", "SKINNERD_DATA_DIR"},
      {"max-connections", "SKINNERD_MAX_CONNECTIONS"}, {"header-timeout", "SKINNERD_HEADER_TIMEOUT"},
      {"body-timeout", "SKINNERD_BODY_TIMEOUT"}, {"conn-memory", "SKINNERD_CONN_MEMORY"},
      {"max-per-ip", "SKINNERD_MAX_PER_IP"}, {"idle-timeout", "SKINNERD_IDLE_TIMEOUT"},
      {"admin-listen", "SKINNERD_ADMIN_LISTEN"},
      {"memory-mb", "SKINNERD_MEMORY_MB"},
      {"tokens", "SKINNERD_TOKENS"}, {"tls-cert", "SKINNERD_TLS_CERT"}, {"tls-key", "SKINNERD_TLS_KEY"},
      {"allowed-hosts", "SKINNERD_ALLOWED_HOSTS"},
      {"max-frames", "SKINNERD_MAX_FRAMES"}, {"max-layers", "SKINNERD_MAX_LAYERS"}, {"max-work", "SKINNERD_MAX_WORK"},
      {"max-answer-mb", "SKINNERD_MAX_ANSWER_MB"}, {"max-skeleton-mb", "SKINNERD_MAX_SKELETON_MB"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char *v = getenv(names[i][1]);
    if (v != NULL && *v != '\0' && set_option(o, names[i][0], v, names[i][1]) != 0)
      return -1;
  }
  return 0;
}

/* Returns -1 on error, 1 when --help/--version was answered, else 0. */
static int parse_args(int argc, char **argv, options *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 1;
    }
    if (strcmp(a, "--version") == 0) {
      printf("skinnerd %s\n", PACKAGE_VERSION);
      return 1;
    }
    if (strncmp(a, "--", 2) != 0) {
      fprintf(stderr, "skinnerd: unexpected argument \"%s\" (see --help)\n", a);
      return -1;
    }
    char name[32];
    const char *eq = strchr(a, '=');
    const char *val;
    size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    if (n >= sizeof name) {
      fprintf(stderr, "skinnerd: unknown option %s (see --help)\n", a);
      return -1;
    }
    memcpy(name, a + 2, n);
    name[n] = '\0';
    if (eq != NULL) {
      val = eq + 1;
    } else if (strcmp(name, "fast-binary") == 0) {
      val = "1"; /* a switch */
    } else if (i + 1 < argc) {
      val = argv[++i];
    } else {
      fprintf(stderr, "skinnerd: %s needs a value\n", a);
      return -1;
    }
    if (set_option(o, name, val, a) != 0)
      return -1;
  }
  return 0;
}

typedef struct daemon_state {
  uv_loop_t *loop;
  sk_http *http;
  sk_http *admin;    /* NULL without --admin-listen */
  int stops_pending; /* listeners not yet stopped */
  uv_signal_t sigint, sigterm;
  uv_signal_t sighup, sigusr1, sigusr2; /* reload; logged and ignored */
  const options *opt;
  sk_access *access; /* Host and token checks; its token table is swapped on SIGHUP */
  sk_tls *tls;       /* NULL without --tls-cert */
  uv_timer_t watchdog; /* systemd WatchdogSec= pings, when asked for */
  bool watchdog_on;
  int signals_seen;
} daemon_state;

static void on_stopped(void *arg) {
  daemon_state *d = arg;
  if (--d->stops_pending > 0)
    return;
  uv_close((uv_handle_t *)&d->sigint, NULL);
  uv_close((uv_handle_t *)&d->sigterm, NULL);
  uv_close((uv_handle_t *)&d->sighup, NULL);
  uv_close((uv_handle_t *)&d->sigusr1, NULL);
  uv_close((uv_handle_t *)&d->sigusr2, NULL);
  if (d->watchdog_on)
    uv_close((uv_handle_t *)&d->watchdog, NULL);
}

static void on_watchdog(uv_timer_t *t) {
  (void)t;
  sk_systemd_notify("WATCHDOG=1");
}

static void on_store_skip(void *arg, const char *file, const char *why) {
  (void)arg;
  fprintf(stderr, "skinnerd: skipping %s in the data directory: %s\n", file, why);
}

static void on_signal(uv_signal_t *s, int signum) {
  daemon_state *d = s->data;
  if (++d->signals_seen > 1) {
    fprintf(stderr, "skinnerd: second signal %d, exiting now\n", signum);
    _Exit(1);
  }
  sk_systemd_notify("STOPPING=1");
  /* Both at once: the admin listener stops accepting too, so a health
   * checker sees the daemon going away while the public port drains. */
  d->stops_pending = d->admin != NULL ? 2 : 1;
  sk_http_stop(d->http, on_stopped, d);
  if (d->admin != NULL)
    sk_http_stop(d->admin, on_stopped, d);
}

/* Every connection is a file descriptor: with the usual soft limit of 1024
 * the process runs out of them before --max-connections, and accept()
 * failing with EMFILE leaves clients in the backlog. The soft limit goes up
 * to the hard one, which needs no privilege. */
static void raise_nofile(unsigned long long need, int log_level) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return;
  rlim_t was = rl.rlim_cur;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
      rl.rlim_cur = was;
    else if (log_level >= 2)
      fprintf(stderr, "skinnerd: open-file limit raised from %llu to %llu\n", (unsigned long long)was,
              (unsigned long long)rl.rlim_cur);
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need && log_level >= 1)
    fprintf(stderr, "skinnerd: open-file limit %llu is below the %llu connections allowed (+64 for files); raise "
                    "LimitNOFILE= or lower --max-connections\n", (unsigned long long)rl.rlim_cur, need - 64);
}

static void print_listening(const char *what, const char *host, unsigned port) {
  if (strchr(host, ':') != NULL)
    printf("%slistening on [%s]:%u\n", what, host, port);
  else
    printf("%slistening on %s:%u\n", what, host, port);
}

/* SIGHUP: new tokens and certificate for the next requests and handshakes;
 * connections stay open. Each file is all or nothing: a bad one keeps the
 * old table or pair and says why. */
static void on_reload(uv_signal_t *s, int signum) {
  (void)signum;
  daemon_state *d = s->data;
  const options *o = d->opt;
  sk_error err;
  if (o->tokens[0] != '\0') {
    sk_auth *t = NULL;
    sk_error_clear(&err);
    if (sk_auth_load(o->tokens, &t, &err) != 0) {
      fprintf(stderr, "skinnerd: SIGHUP: keeping the previous tokens: %s\n", err.text);
    } else {
      sk_access_set_tokens(d->access, t);
      if (o->log_level >= 1)
        fprintf(stderr, "skinnerd: SIGHUP: %zu tokens loaded from %s\n", sk_auth_count(t), o->tokens);
    }
  }
  if (d->tls != NULL) {
    sk_error_clear(&err);
    if (sk_tls_reload(d->tls, &err) != 0)
      fprintf(stderr, "skinnerd: SIGHUP: keeping the previous certificate: %s\n", err.text);
    else if (o->log_level >= 1)
      fprintf(stderr, "skinnerd: SIGHUP: certificate reloaded from %s (generation %u)\n", o->tls_cert,
              sk_tls_generation(d->tls));
  }
}

static void on_ignored_signal(uv_signal_t *s, int signum) {
  daemon_state *d = s->data;
  if (d->opt->log_level >= 1)
    fprintf(stderr, "skinnerd: signal %d (SIGUSR1/SIGUSR2) ignored\n", signum);
}

/* True when the listening address is loopback: the default --allowed-hosts
 * then accepts loopback names only. A socket-activated listener is asked. */
static bool listener_is_loopback(const options *o, int fd) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  if (fd > 0 && getsockname(fd, (struct sockaddr *)&ss, &len) == 0) {
    if (ss.ss_family == AF_INET)
      return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
    if (ss.ss_family == AF_INET6)
      return IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
    return false;
  }
  return strncmp(o->host, "127.", 4) == 0 || strcmp(o->host, "::1") == 0;
}

/* The Host/token gate and the TLS certificate from the options; on error
 * says why on stderr, frees what it made and returns -1. */
static int setup_access(const options *o, int listen_fd, sk_access **access, sk_tls **tls) {
  sk_error err;
  sk_error_clear(&err);
  *access = NULL;
  *tls = NULL;
  if (sk_access_create(o->allowed_hosts[0] != '\0' ? o->allowed_hosts : NULL, listener_is_loopback(o, listen_fd),
                       access, &err) != 0) {
    fprintf(stderr, "skinnerd: %s\n", err.text);
    return -1;
  }
  if (o->tokens[0] != '\0') {
    sk_auth *tokens = NULL;
    if (sk_auth_load(o->tokens, &tokens, &err) != 0) {
      fprintf(stderr, "skinnerd: --tokens: %s\n", err.text);
      goto fail;
    }
    sk_access_set_tokens(*access, tokens);
  }
  if (o->tls_cert[0] != '\0' && sk_tls_create(o->tls_cert, o->tls_key, tls, &err) != 0) {
    fprintf(stderr, "skinnerd: --tls-cert/--tls-key: %s\n", err.text);
    goto fail;
  }
  return 0;
fail:
  sk_access_destroy(*access);
  *access = NULL;
  return -1;
}

int main(int argc, char **argv) {
  /* Until the loop's handlers are in (below), a reload or user signal must
   * not kill us: their default action is to terminate. */
  signal(SIGHUP, SIG_IGN);
  signal(SIGUSR1, SIG_IGN);
  signal(SIGUSR2, SIG_IGN);
  options o;
  memset(&o, 0, sizeof o);
  snprintf(o.host, sizeof o.host, "127.0.0.1");
  o.port = 8080;
  uv_cpu_info_t *cpus;
  int ncpu = 0;
  o.threads = uv_cpu_info(&cpus, &ncpu) == 0 && ncpu > 0 ? (unsigned long)ncpu : 4;
  if (ncpu > 0)
    uv_free_cpu_info(cpus, ncpu);
  o.max_body = 4u << 20;
  o.max_bones = 1024;
  o.max_batch = 1024;
  o.cache_mb = 256;
  o.inline_limit = 250;
  /* An eighth of --max-connections: one address cannot take the whole
   * daemon, yet it is above wrk's and a proxy pool's usual 64. */
  o.max_per_ip = 128;
  o.log_level = 1;
  o.memory_mb = ULLONG_MAX;
  if (parse_env(&o) != 0)
    return 2;
  int pr = parse_args(argc, argv, &o);
  if (pr != 0)
    return pr > 0 ? 0 : 2;
  if ((o.tls_cert[0] != '\0') != (o.tls_key[0] != '\0')) {
    fprintf(stderr, "skinnerd: --tls-cert and --tls-key go together\n");
    return 2;
  }
  if (o.memory_mb == ULLONG_MAX)
    o.memory_mb = sk_budget_default() >> 20;
  /* The cache is charged to the budget without being refused (its own cap
   * bounds it), so that cap must fit inside the budget. */
  if (o.memory_mb != 0 && !o.cache_set && o.cache_mb > o.memory_mb / 2)
    o.cache_mb = o.memory_mb / 2 > 0 ? o.memory_mb / 2 : 1; /* the default leaves half for requests */
  if (o.memory_mb != 0 && (o.cache_mb == 0 || o.cache_mb > o.memory_mb)) {
    if (o.log_level >= 1)
      fprintf(stderr, "skinnerd: --cache-mb %llu lowered to --memory-mb %llu\n", o.cache_mb, o.memory_mb);
    o.cache_mb = o.memory_mb;
  }
  sk_budget budget;
  sk_budget_init(&budget, (size_t)(o.memory_mb << 20));

  /* libuv sizes its pool from the environment on first use, so this must
   * happen before anything is queued. */
  char nthreads[32];
  snprintf(nthreads, sizeof nthreads, "%lu", o.threads);
  setenv("UV_THREADPOOL_SIZE", nthreads, 1);
  signal(SIGPIPE, SIG_IGN);
  /* Past RLIMIT_FSIZE a write fails with EFBIG (a 507 for that put) instead
   * of the signal killing the daemon. */
  signal(SIGXFSZ, SIG_IGN);

  /* Socket activation: serve the socket(s) systemd bound for us. */
  int nfds = sk_systemd_listen_fds();
  sk_access *access = NULL;
  sk_tls *tls = NULL;
  if (setup_access(&o, nfds > 0 ? SK_SYSTEMD_FDS_START : -1, &access, &tls) != 0)
    return 2;

  uv_loop_t *loop = uv_default_loop();
  sk_metrics *metrics = calloc(1, sizeof *metrics); /* ~100 KB: not on the stack */
  sk_cache *cache = NULL;
  sk_routes *routes = NULL;
  if (metrics == NULL || sk_cache_create((size_t)o.cache_mb << 20, &cache) != 0) {
    fprintf(stderr, "skinnerd: out of memory\n");
    return 1;
  }
  sk_metrics_init(metrics);
  sk_cache_set_budget(cache, &budget);
  sk_store *store = NULL;
  if (o.data_dir[0] != '\0') {
    sk_error serr;
    sk_error_clear(&serr);
    if (sk_store_open(o.data_dir, &store, &serr) != 0) {
      fprintf(stderr, "skinnerd: --data-dir: %s\n", serr.text);
      return 1;
    }
    int loaded = sk_cache_attach_store(cache, store, on_store_skip, NULL);
    if (loaded < 0) {
      fprintf(stderr, "skinnerd: cannot load %s: %s\n", o.data_dir, sk_strerror(loaded));
      return 1;
    }
    if (o.log_level >= 2)
      fprintf(stderr, "skinnerd: loaded %d skeletons from %s\n", loaded, o.data_dir);
  }
  /* Under socket activation a second socket is the admin listener. */
  bool want_admin = o.admin_host[0] != '\0' || nfds >= 2;
  sk_routes_config rc;
  memset(&rc, 0, sizeof rc);
  rc.metrics_admin_only = want_admin;
  rc.max_body = (size_t)o.max_body;
  rc.max_bones = (size_t)o.max_bones;
  rc.max_batch = (size_t)o.max_batch;
  rc.inline_limit = (size_t)o.inline_limit;
  if (o.inline_limit == 0)
    rc.pool_always = 1; /* --inline-limit 0: every batch goes to the pool */
  rc.kernel_threads = (unsigned)o.threads;
  rc.budget = &budget;
  rc.access = access;
  rc.cost.max_frames = o.max_frames; /* zeros take sk_cost's defaults */
  rc.cost.max_layers = o.max_layers;
  rc.cost.max_work = o.max_work;
  rc.cost.max_answer = o.max_answer_mb << 20;
  rc.max_skeleton = (size_t)o.max_skeleton_mb << 20;
  if (sk_routes_create(&rc, cache, metrics, &routes) != 0) {
    fprintf(stderr, "skinnerd: out of memory\n");
    return 1;
  }
  sk_http_handler handler = sk_routes_handler(routes);
  sk_http_config hc;
  memset(&hc, 0, sizeof hc);
  hc.host = o.host;
  hc.port = o.port;
  hc.max_body = (size_t)o.max_body;
  hc.log_level = o.log_level;
  hc.conn_limit = (unsigned)o.max_conns;
  hc.conn_memory = (size_t)o.conn_memory;
  hc.header_timeout_ms = (unsigned)o.header_timeout * 1000u;
  hc.body_timeout_ms = (unsigned)o.body_timeout * 1000u;
  hc.per_ip_limit = (unsigned)o.max_per_ip;
  hc.idle_timeout_ms = (unsigned)o.idle_timeout * 1000u;
  hc.budget = &budget;
  hc.tls = tls;
  if (nfds > 0)
    hc.listen_fd = SK_SYSTEMD_FDS_START;
  /* The admin listener's own small budget: a few health checkers and a
   * scraper, short timeouts, no per-address cap (they share one address). */
  sk_http_config ac;
  memset(&ac, 0, sizeof ac);
  ac.host = o.admin_host[0] != '\0' ? o.admin_host : "127.0.0.1";
  ac.port = o.admin_port;
  ac.listen_fd = nfds >= 2 ? SK_SYSTEMD_FDS_START + 1 : 0;
  ac.max_body = 4096;
  ac.log_level = o.log_level;
  ac.conn_limit = 64;
  ac.conn_timeout_s = 10;
  ac.max_jobs = 1;
  ac.shutdown_grace_ms = 1000;
  ac.header_timeout_ms = 2000;
  ac.body_timeout_ms = 2000;
  ac.idle_timeout_ms = 2000;
  raise_nofile((o.max_conns ? o.max_conns : 1024) + (want_admin ? ac.conn_limit : 0) + 64, o.log_level);
  sk_http_handler admin_handler = sk_routes_admin_handler(routes);
  daemon_state d;
  memset(&d, 0, sizeof d);
  d.loop = loop;
  d.opt = &o;
  d.access = access;
  d.tls = tls;
  int err = sk_http_start(loop, &hc, &handler, &d.http);
  if (err != 0) {
    fprintf(stderr, "skinnerd: cannot listen on %s:%u: %s\n", o.host, o.port,
            err == SK_EINVAL ? "bad address" : "address in use or not available");
    return 1;
  }
  sk_routes_set_listener(routes, d.http);
  if (nfds > 0)
    printf("listening on inherited socket (fd %d), port %u\n", SK_SYSTEMD_FDS_START, sk_http_port(d.http));
  else
    print_listening("", o.host, sk_http_port(d.http));
  if (want_admin) {
    err = sk_http_start(loop, &ac, &admin_handler, &d.admin);
    if (err != 0) {
      fprintf(stderr, "skinnerd: cannot listen on %s:%u (--admin-listen): %s\n", ac.host, ac.port,
              err == SK_EINVAL ? "bad address" : "address in use or not available");
      return 1;
    }
    if (ac.listen_fd > 0)
      printf("admin listening on inherited socket (fd %d), port %u\n", ac.listen_fd, sk_http_port(d.admin));
    else
      print_listening("admin ", ac.host, sk_http_port(d.admin));
  }
  fflush(stdout);
  uint64_t wd_usec = sk_systemd_watchdog_usec();
  if (wd_usec > 0) {
    uv_timer_init(loop, &d.watchdog);
    uint64_t every_ms = wd_usec / 2000 > 0 ? wd_usec / 2000 : 1; /* half the interval, as sd_watchdog_enabled advises */
    uv_timer_start(&d.watchdog, on_watchdog, every_ms, every_ms);
    d.watchdog_on = true;
  }
  sk_systemd_notify("READY=1\nSTATUS=serving");

  uv_signal_init(loop, &d.sigint);
  uv_signal_init(loop, &d.sigterm);
  d.sigint.data = d.sigterm.data = &d;
  uv_signal_start(&d.sigint, on_signal, SIGINT);
  uv_signal_start(&d.sigterm, on_signal, SIGTERM);
  uv_signal_init(loop, &d.sighup);
  uv_signal_init(loop, &d.sigusr1);
  uv_signal_init(loop, &d.sigusr2);
  d.sighup.data = d.sigusr1.data = d.sigusr2.data = &d;
  uv_signal_start(&d.sighup, on_reload, SIGHUP);
  uv_signal_start(&d.sigusr1, on_ignored_signal, SIGUSR1);
  uv_signal_start(&d.sigusr2, on_ignored_signal, SIGUSR2);

  uv_run(loop, UV_RUN_DEFAULT);

  sk_http_destroy(d.http);
  sk_http_destroy(d.admin);
  sk_routes_destroy(routes);
  sk_cache_destroy(cache);
  sk_store_close(store);
  sk_access_destroy(access);
  sk_tls_destroy(tls);
  free(metrics);
  int rc_close = uv_loop_close(loop);
  if (rc_close != 0 && o.log_level >= 1)
    fprintf(stderr, "skinnerd: loop closed with handles open: %s\n", uv_strerror(rc_close));
  return 0;
}
