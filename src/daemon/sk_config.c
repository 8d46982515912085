#include "sk_config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "sk_cost.h"
#include "sk_gltf.h"
#include "sk_http.h"
#include "sk_skeleton.h"

/* OPT_LIST: a repeated flag adds to the comma-separated list (the
 * environment variable gives the whole list; the command line, if it has
 * the flag, replaces it). */
typedef enum { OPT_UINT, OPT_ADDR, OPT_PATH, OPT_LEVEL, OPT_SWITCH, OPT_LIST } opt_type;

/* One option. `field` is where its value goes in sk_config (for OPT_ADDR
 * the host; the port follows at `field2`). Numbers are checked against
 * [min, max]; `def` is the default (OPT_UINT, OPT_LEVEL), `def_text` what
 * --help says about it. */
typedef struct option {
  const char *flag, *arg, *env;
  opt_type type;
  size_t field, field2;
  unsigned long long def, min, max;
  const char *def_text;
  const char *help; /* lines separated by '\n'; --help appends "(ENV) [def_text]" */
} option;

#define F(name) offsetof(sk_config, name)
#define NO 0

static const option k_options[] = {
    {"listen", "ADDR:PORT", "SKINNERD_LISTEN", OPT_ADDR, F(host), F(port), NO, NO, NO, "127.0.0.1:8080",
     "address to serve on; port 0 picks a free port; the first line on\n"
     "stdout is always \"listening on ADDR:PORT\""},
    {"threads", "N", "SKINNERD_THREADS", OPT_UINT, F(threads), NO, NO /* CPUs */, 1, 1024, "CPUs",
     "thread-pool size for large batches"},
    {"max-body", "BYTES", "SKINNERD_MAX_BODY", OPT_UINT, F(max_body), NO, SK_HTTP_MAX_BODY_DEFAULT, 1, SIZE_MAX / 2, NULL,
     "largest request body"},
    {"max-bones", "N", "SKINNERD_MAX_BONES", OPT_UINT, F(max_bones), NO, 1024, 1, SK_SKELETON_MAX_BONES, NULL,
     "largest skeleton"},
    {"max-batch", "N", "SKINNERD_MAX_BATCH", OPT_UINT, F(max_batch), NO, 1024, 1, 10000000, NULL,
     "most poses per batch request"},
    {"cache-mb", "N", "SKINNERD_CACHE_MB", OPT_UINT, F(cache_mb), NO, 256, 0, 1u << 20, "256; 0 = unlimited",
     "skeleton cache size, least recently used evicted"},
    {"inline-limit", "US", "SKINNERD_INLINE_LIMIT", OPT_UINT, F(inline_limit), NO, 250, 0, SIZE_MAX / 2, NULL,
     "batches estimated to take up to US microseconds are evaluated on\n"
     "the I/O thread, larger ones on the pool; 0 sends every batch to the pool"},
    {"fast-binary", NULL, "SKINNERD_FAST_BINARY", OPT_SWITCH, F(fast_binary), NO, 0, 0, 1, "off",
     "deprecated, no effect (a warning at start): every answer is exact,\n"
     "and the float32 kernel measured no faster"},
    {"data-dir", "DIR", "SKINNERD_DATA_DIR", OPT_PATH, F(data_dir), sizeof(((sk_config *)0)->data_dir), NO, NO, NO,
     "memory only",
     "keep every skeleton on disk (durable before the 2xx) and reload\n"
     "them at start; evicted ones reload on demand; one daemon per DIR\n"
     "(DIR/skinnerd.lock); a full disk is a 507 and /readyz 503"},
    {"max-connections", "N", "SKINNERD_MAX_CONNECTIONS", OPT_UINT, F(max_conns), NO, 1024, 1, 1000000, NULL,
     "simultaneous connections"},
    {"conn-memory", "BYTES", "SKINNERD_CONN_MEMORY", OPT_UINT, F(conn_memory), NO, 16384, 4096, 16u << 20, NULL,
     "per-connection buffer for a request's headers and body chunks;\n"
     "headers of about its size get a 431"},
    {"header-timeout", "S", "SKINNERD_HEADER_TIMEOUT", OPT_UINT, F(header_timeout), NO, 10, 1, 86400, NULL,
     "a request's headers must arrive within S seconds of the\n"
     "connection (or its previous answer)"},
    {"body-timeout", "S", "SKINNERD_BODY_TIMEOUT", OPT_UINT, F(body_timeout), NO, 60, 1, 86400, NULL,
     "and its body within S seconds of the headers"},
    {"log-level", "LEVEL", "SKINNERD_LOG_LEVEL", OPT_LEVEL, F(log_level), NO, 1, NO, NO, "warn",
     "error, warn, info or debug"},
    /* An eighth of --max-connections: one address cannot take the whole
     * daemon, yet it is above wrk's and a proxy pool's usual 64. */
    {"max-per-ip", "N", "SKINNERD_MAX_PER_IP", OPT_UINT, F(max_per_ip), NO, 128, 0, 1000000,
     "128; 0 = no cap; raise it behind a reverse proxy",
     "simultaneous connections from one client address; more are\n"
     "closed right after accept"},
    {"idle-timeout", "S", "SKINNERD_IDLE_TIMEOUT", OPT_UINT, F(idle_timeout), NO, 5, 1, 86400, NULL,
     "a connection that sent no byte since it opened or since its\n"
     "previous answer is closed after S seconds"},
    {"stall-timeout", "S", "SKINNERD_STALL_TIMEOUT", OPT_UINT, F(stall_timeout), NO, 10, 1, 86400, NULL,
     "an event stream whose reader took no byte for S seconds while\n"
     "a frame waited for it is cut"},
    {"admin-listen", "ADDR:PORT", "SKINNERD_ADMIN_LISTEN", OPT_ADDR, F(admin_host), F(admin_port), NO, NO, NO, "off",
     "a second listener serving only /healthz, /readyz and /metrics,\n"
     "with its own 64 connections; /metrics then leaves the public port;\n"
     "its address is the second stdout line, \"admin listening on ADDR:PORT\""},
    {"memory-mb", "N", "SKINNERD_MEMORY_MB", OPT_UINT, F(memory_mb), NO, SK_CONFIG_AUTO, 0, 1ull << 30,
     "a quarter of RAM or of the cgroup's memory.max, 64..16384; 0 = unlimited",
     "one memory budget for the cache, request bodies being received\n"
     "and answers being sent; past it a request gets 503 with Retry-After;\n"
     "--cache-mb defaults to the smaller of 256 and half of it; a larger\n"
     "--cache-mb (or 0) is lowered to it"},
    {"stream-mb-per-ip", "N", "SKINNERD_STREAM_MB_PER_IP", OPT_UINT, F(stream_mb_per_ip), NO, SK_CONFIG_AUTO, 0,
     1ull << 30, "a quarter of --memory-mb; 0 = no cap",
     "the share of the memory budget kept for other clients: the streamed\n"
     "answers to one client address (a slow reader holds its stream's\n"
     "buffers while it reads) may hold more than N MiB only while N MiB\n"
     "of the budget stay free; past that a new stream to that address\n"
     "gets 503 with Retry-After"},
    {"tokens", "FILE", "SKINNERD_TOKENS", OPT_PATH, F(tokens), sizeof(((sk_config *)0)->tokens), NO, NO, NO,
     "none: no authentication",
     "bearer tokens, one \"TOKEN SCOPE\" a line, scope read, write or admin"},
    {"tls-cert", "FILE", "SKINNERD_TLS_CERT", OPT_PATH, F(tls_cert), sizeof(((sk_config *)0)->tls_cert), NO, NO, NO,
     "plain HTTP", "serve HTTPS with this PEM certificate chain (and --tls-key)"},
    {"tls-key", "FILE", "SKINNERD_TLS_KEY", OPT_PATH, F(tls_key), sizeof(((sk_config *)0)->tls_key), NO, NO, NO,
     "plain HTTP", "the PEM key of --tls-cert; both or neither"},
    {"tls-priorities", "STRING", "SKINNERD_TLS_PRIORITIES", OPT_PATH, F(tls_priorities),
     sizeof(((sk_config *)0)->tls_priorities), NO, NO, NO, "TLS 1.2 and 1.3, forward-secret AEAD ciphers only",
     "the GnuTLS priority string of HTTPS (docs/security.md), checked\n"
     "at start"},
    {"allowed-hosts", "LIST", "SKINNERD_ALLOWED_HOSTS", OPT_PATH, F(allowed_hosts),
     sizeof(((sk_config *)0)->allowed_hosts), NO, NO, NO, "loopback names on a loopback listener, else any",
     "Host header values accepted, comma separated, port optional;\n"
     "* accepts any"},
    {"max-frames", "N", "SKINNERD_MAX_FRAMES", OPT_UINT, F(max_frames), NO, SK_COST_MAX_FRAMES, 1, 10000000, NULL,
     "frames one \"times\" or \"from\"/\"to\"/\"fps\" may give; more is 413\n"
     "before any sampling"},
    {"max-layers", "N", "SKINNERD_MAX_LAYERS", OPT_UINT, F(max_layers), NO, SK_COST_MAX_LAYERS, 1, 1000000, NULL,
     "layers of one pose"},
    {"max-work", "N", "SKINNERD_MAX_WORK", OPT_UINT, F(max_work), NO, SK_COST_MAX_WORK, 1, 1ull << 50, NULL,
     "work units of one pose request, ~1 bone matrix each (sampling,\n"
     "evaluation, JSON encoding), checked before any work"},
    {"max-answer-mb", "N", "SKINNERD_MAX_ANSWER_MB", OPT_UINT, F(max_answer_mb), NO, SK_COST_MAX_ANSWER >> 20, 1,
     1u << 20, NULL, "largest pose answer, JSON counted at its bound of 25 bytes a float"},
    {"max-skeleton-mb", "N", "SKINNERD_MAX_SKELETON_MB", OPT_UINT, F(max_skeleton_mb), NO,
     SK_GLTF_MAX_SKELETON_BYTES >> 20, 1, 1u << 20, NULL,
     "what one glTF upload may build in memory, estimated from its\n"
     "counts before building"},
    {"cors-origin", "ORIGIN", "SKINNERD_CORS_ORIGIN", OPT_LIST, F(cors_origins),
     sizeof(((sk_config *)0)->cors_origins), NO, NO, NO, "none",
     "a web origin (scheme://host[:port]) whose pages may call the API\n"
     "from a browser (CORS); repeat it or separate with commas; * allows\n"
     "any origin and needs --tokens"},
};
#define NOPTIONS (sizeof k_options / sizeof k_options[0])

static const char *const k_levels[] = {"error", "warn", "info", "debug"};

static const option *find(const char *flag, size_t len) {
  for (size_t i = 0; i < NOPTIONS; i++)
    if (strlen(k_options[i].flag) == len && strncmp(k_options[i].flag, flag, len) == 0)
      return &k_options[i];
  return NULL;
}

void sk_config_defaults(sk_config *c, unsigned cpus) {
  memset(c, 0, sizeof *c);
  for (size_t i = 0; i < NOPTIONS; i++) {
    const option *o = &k_options[i];
    char *at = (char *)c + o->field;
    if (o->type == OPT_UINT)
      *(unsigned long long *)(void *)at = o->def;
    else if (o->type == OPT_LEVEL || o->type == OPT_SWITCH)
      *(int *)(void *)at = (int)o->def;
  }
  snprintf(c->host, sizeof c->host, "127.0.0.1");
  c->port = 8080;
  c->threads = cpus > 0 ? cpus : 4;
}

static int parse_ull(const char *s, unsigned long long *out) {
  if (s == NULL || *s == '\0' || *s == '-')
    return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0')
    return -1;
  *out = v;
  return 0;
}

/* "ADDR:PORT" or "[v6]:PORT" into host (64 bytes) and *port. */
static int parse_addr(const char *s, char host_out[64], unsigned *port_out) {
  const char *colon, *host = s;
  size_t hlen;
  if (s[0] == '[') {
    const char *close = strchr(s, ']');
    if (close == NULL || close[1] != ':')
      return -1;
    host = s + 1;
    hlen = (size_t)(close - host);
    colon = close + 1;
  } else {
    if ((colon = strrchr(s, ':')) == NULL)
      return -1;
    hlen = (size_t)(colon - s);
  }
  unsigned long long port;
  if (hlen == 0 || hlen >= 64 || parse_ull(colon + 1, &port) != 0 || port > 65535)
    return -1;
  memcpy(host_out, host, hlen);
  host_out[hlen] = '\0';
  *port_out = (unsigned)port;
  return 0;
}

/* Stores `val` for `o`; -1 when it is not a valid value. */
static int set(sk_config *c, const option *o, const char *val) {
  char *at = (char *)c + o->field;
  unsigned long long v;
  switch (o->type) {
  case OPT_UINT:
    if (parse_ull(val, &v) != 0 || v < o->min || v > o->max)
      return -1;
    *(unsigned long long *)(void *)at = v;
    if (o->field == F(cache_mb))
      c->cache_set = true;
    return 0;
  case OPT_ADDR:
    return parse_addr(val, at, (unsigned *)(void *)((char *)c + o->field2));
  case OPT_PATH:
    return val[0] == '\0' || snprintf(at, o->field2, "%s", val) >= (int)o->field2 ? -1 : 0;
  case OPT_LIST: {
    size_t len = strlen(at);
    if (val[0] == '\0')
      return -1;
    return snprintf(at + len, o->field2 - len, "%s%s", len ? "," : "", val) >= (int)(o->field2 - len) ? -1 : 0;
  }
  case OPT_LEVEL:
    for (int i = 0; i < 4; i++)
      if (strcmp(val, k_levels[i]) == 0)
        return (*(int *)(void *)at = i), 0;
    return -1;
  case OPT_SWITCH:
    if (strcmp(val, "1") == 0 || strcmp(val, "true") == 0)
      return (*(int *)(void *)at = 1), 0;
    if (strcmp(val, "0") == 0 || strcmp(val, "false") == 0)
      return (*(int *)(void *)at = 0), 0;
    return -1;
  }
  return -1;
}

int sk_config_parse_env(sk_config *c, const char *(*getenv_fn)(const char *name), FILE *err) {
  for (size_t i = 0; i < NOPTIONS; i++) {
    const char *v = getenv_fn != NULL ? getenv_fn(k_options[i].env) : getenv(k_options[i].env);
    if (v != NULL && *v != '\0' && set(c, &k_options[i], v) != 0) {
      fprintf(err, "skinnerd: bad value \"%s\" for %s\n", v, k_options[i].env);
      return -1;
    }
  }
  return 0;
}

int sk_config_parse_args(sk_config *c, int argc, char **argv, FILE *out, FILE *err) {
  bool listed[NOPTIONS] = {false};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      sk_config_usage(out);
      return 1;
    }
    if (strcmp(a, "--version") == 0) {
      fprintf(out, "skinnerd %s\n", PACKAGE_VERSION);
      return 1;
    }
    if (strncmp(a, "--", 2) != 0) {
      fprintf(err, "skinnerd: unexpected argument \"%s\" (see --help)\n", a);
      return -1;
    }
    const char *eq = strchr(a, '=');
    const option *o = find(a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
    if (o == NULL) { /* before asking for a value: --bogus is unknown, not valueless */
      fprintf(err, "skinnerd: unknown option %.*s (see --help)\n", eq ? (int)(eq - a) : (int)strlen(a), a);
      return -1;
    }
    const char *val = eq ? eq + 1 : o->type == OPT_SWITCH ? "1" : i + 1 < argc ? argv[++i] : NULL;
    if (val == NULL) {
      fprintf(err, "skinnerd: %s needs a value\n", a);
      return -1;
    }
    if (o->type == OPT_LIST && !listed[o - k_options]) { /* the command line's list replaces the environment's */
      listed[o - k_options] = true;
      ((char *)c + o->field)[0] = '\0';
    }
    if (set(c, o, val) != 0) {
      fprintf(err, "skinnerd: bad value \"%s\" for %s\n", val, a);
      return -1;
    }
  }
  return 0;
}

int sk_config_finish(sk_config *c, unsigned long long machine_mb, FILE *log, FILE *err) {
  if ((c->tls_cert[0] != '\0') != (c->tls_key[0] != '\0')) {
    fprintf(err, "skinnerd: --tls-cert and --tls-key go together\n");
    return -1;
  }
  if (c->memory_mb == SK_CONFIG_AUTO)
    c->memory_mb = machine_mb;
  /* The cache is charged to the budget without being refused (its own cap
   * bounds it), so that cap must fit inside the budget. */
  if (c->memory_mb != 0 && !c->cache_set && c->cache_mb > c->memory_mb / 2)
    c->cache_mb = c->memory_mb / 2 > 0 ? c->memory_mb / 2 : 1; /* the default leaves half for requests */
  if (c->memory_mb != 0 && (c->cache_mb == 0 || c->cache_mb > c->memory_mb)) {
    if (c->log_level >= 1)
      fprintf(log, "skinnerd: --cache-mb %llu lowered to --memory-mb %llu\n", c->cache_mb, c->memory_mb);
    c->cache_mb = c->memory_mb;
  }
  /* Kept so that units and scripts that still pass it start; said so that
   * their owners can drop it (it once traded exactness for speed). */
  if (c->fast_binary && c->log_level >= 1)
    fprintf(log, "skinnerd: --fast-binary (SKINNERD_FAST_BINARY) is deprecated and has no effect: every answer is "
                 "exact\n");
  return 0;
}

/* One option's help: the flag column (22 wide), then its text and
 * "(ENV) [default]", word-wrapped at 79 columns. */
static void usage_option(FILE *f, const option *o) {
  char head[64], def[32], text[640];
  snprintf(head, sizeof head, "--%s%s%s", o->flag, o->arg ? " " : "", o->arg ? o->arg : "");
  snprintf(def, sizeof def, "%llu", o->def);
  snprintf(text, sizeof text, "%s (%s%s) [%s]", o->help, o->env, o->type == OPT_SWITCH ? "=1" : "",
           o->def_text ? o->def_text : def);
  if (strlen(head) > 20)
    fprintf(f, "  %s\n%23s", head, "");
  else
    fprintf(f, "  %-20s ", head);
  size_t col = 23;
  for (const char *p = text; *p != '\0';) {
    p += strspn(p, " \n");
    size_t n = strcspn(p, " \n");
    if (n == 0)
      break;
    if (col > 23 && col + 1 + n > 79) {
      fprintf(f, "\n%23s", "");
      col = 23;
    }
    fprintf(f, "%s%.*s", col > 23 ? " " : "", (int)n, p);
    col += (col > 23 ? 1 : 0) + n;
    p += n;
  }
  fputc('\n', f);
}

void sk_config_usage(FILE *f) {
  fprintf(f, "usage: skinnerd [options]\n");
  for (size_t i = 0; i < NOPTIONS; i++)
    usage_option(f, &k_options[i]);
  fprintf(f, "  --help, --version\n"
             "SIGINT/SIGTERM stop accepting, finish requests in flight and exit 0.\n"
             "SIGHUP reloads --tokens and --tls-cert/--tls-key (a bad file keeps the old\n"
             "ones); SIGUSR1/SIGUSR2 are logged and ignored.\n"
             "Under systemd: socket activation ($LISTEN_FDS, then --listen is ignored; a\n"
             "second socket is the admin listener), Type=notify readiness and WatchdogSec=\n"
             "pings.\n");
}
