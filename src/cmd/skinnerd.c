/* skinnerd: the skinning daemon. Parses flags and environment, wires the
 * cache, metrics, routes and HTTP adapter to one libuv loop, and turns
 * SIGINT/SIGTERM into a graceful stop. */
#include <limits.h>
#include <malloc.h>
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

#include "sk_budget.h"
#include "sk_access.h"
#include "sk_cors.h"
#include "sk_auth.h"
#include "sk_cache.h"
#include "sk_config.h"
#include "sk_error.h"
#include "sk_http.h"
#include "sk_loopstat.h"
#include "sk_metrics.h"
#include "sk_routes.h"
#include "sk_store.h"
#include "sk_systemd.h"
#include "sk_threads.h"
#include "sk_tls.h"

typedef struct daemon_state {
  uv_loop_t *loop;
  sk_http *http;
  sk_http *admin;    /* NULL without --admin-listen */
  int stops_pending; /* listeners not yet stopped */
  uv_signal_t sigint, sigterm;
  uv_signal_t sighup, sigusr1, sigusr2; /* reload; logged and ignored */
  const sk_config *opt;
  sk_access *access; /* Host and token checks; its token table is swapped on SIGHUP */
  sk_tls *tls;       /* NULL without --tls-cert */
  uv_timer_t watchdog; /* systemd WatchdogSec= pings, when asked for */
  bool watchdog_on;
  sk_loopstat loopstat; /* the loop's iteration times, into /metrics */
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
  sk_loopstat_stop(&d->loopstat);
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
  const sk_config *o = d->opt;
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
static bool listener_is_loopback(const sk_config *o, int fd) {
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
static int setup_access(const sk_config *o, int listen_fd, sk_access **access, sk_tls **tls) {
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
  if (o->tls_priorities[0] != '\0' && sk_tls_check_priorities(o->tls_priorities, &err) != 0) {
    fprintf(stderr, "skinnerd: --tls-priorities: %s\n", err.text);
    goto fail;
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

/* Everything main() builds, torn down in reverse by teardown(). */
typedef struct daemon {
  sk_config cfg;
  sk_budget budget;
  /* What pool batches add to skin big primitives, for the whole process:
   * --threads - 1 between them (each runs on its pool thread too), started
   * once before the listeners and joined in teardown(). */
  sk_threads mesh_threads;
  int nfds; /* sockets systemd passed (socket activation), 0 when none */
  sk_access *access;
  sk_tls *tls;
  sk_metrics *metrics;
  sk_cache *cache;
  sk_store *store;
  sk_routes *routes;
  bool want_admin; /* --admin-listen, or a second inherited socket */
  daemon_state d;
  sk_cors *cors; /* --cors-origin; NULL: none */
} daemon;

/* The settings: defaults, environment, command line, derived values.
 * Returns 0, 1 when --help/--version answered, -1 on a bad setting. */
static int load_config(sk_config *c, int argc, char **argv) {
  uv_cpu_info_t *cpus;
  int ncpu = 0;
  if (uv_cpu_info(&cpus, &ncpu) == 0 && ncpu > 0)
    uv_free_cpu_info(cpus, ncpu);
  sk_config_defaults(c, ncpu > 0 ? (unsigned)ncpu : 4);
  if (sk_config_parse_env(c, NULL, stderr) != 0)
    return -1;
  int pr = sk_config_parse_args(c, argc, argv, stdout, stderr);
  if (pr != 0)
    return pr;
  return sk_config_finish(c, sk_budget_default() >> 20, stderr, stderr);
}

/* glibc's heap thresholds, fixed where its dynamic ones would end up.
 * Dynamically, the mmap threshold rises to the largest mmapped block freed
 * so far (at most 32 MiB) and the trim threshold to twice that, so under
 * load the heap top follows the answers in flight: with 32 connections of
 * POST /poses (64 poses, 270 KB binary answers) and --conn-memory 8192, 0.4-0.8
 * brk and 34 page faults an answer as glibc gave the top back and faulted it
 * in again, 1.6x the CPU per answer (tests/bench/http_ab.py --batch 64).
 * Fixed, they stop adapting: so they start at that end, scaled to a
 * quarter of --memory-mb (trim) and an eighth (mmap) for small budgets,
 * which bounds the freed memory kept resident. Large blocks still come from
 * the heap, as the dynamic threshold gives them after the first (a low
 * fixed mmap threshold halved the frame-range rate: each answer faulted in
 * anew). An operator's GLIBC_TUNABLES for malloc wins (check_hostile sets
 * one to see RSS follow what is live). */
static void set_malloc_thresholds(unsigned long long memory_mb) {
  const char *t = getenv("GLIBC_TUNABLES");
  if (t != NULL && strstr(t, "glibc.malloc.") != NULL)
    return;
  unsigned long long trim = 64ull << 20;
  if (memory_mb != 0 && (memory_mb << 20) / 4 < trim)
    trim = (memory_mb << 20) / 4;
  if (trim < (1u << 20))
    trim = 1u << 20;
  mallopt(M_MMAP_THRESHOLD, (int)(trim / 2));
  mallopt(M_TRIM_THRESHOLD, (int)trim);
}

/* Process-wide settings that must precede any work: the pool size (libuv
 * reads it from the environment on first use), and signals that must
 * not kill the daemon: a closed client (SIGPIPE) and a write past
 * RLIMIT_FSIZE (SIGXFSZ: a 507 for that put instead). */
static void setup_process(const sk_config *c) {
  char nthreads[32];
  snprintf(nthreads, sizeof nthreads, "%llu", c->threads);
  setenv("UV_THREADPOOL_SIZE", nthreads, 1);
  /* One malloc arena for the loop and the pool: what a pool thread frees
   * (parsed batches, answers, kernel buffers) is reused by the next request
   * on any thread instead of staying resident in that thread's own arena,
   * memory the --memory-mb budget does not see. check_memory's 64
   * concurrent batches under a 32 MB budget, run beside other suites:
   * VmHWM up to 89-117 MB with glibc's default arenas, 40-57 MB with one;
   * the HTTP frame-range rate is unchanged (make bench-clips, daemon row:
   * 13.7 M/s with one arena, 11.9-12.6 the build before). A fixed mmap threshold
   * instead halved that rate (6.3 M/s): every large answer faulted in anew. */
  mallopt(M_ARENA_MAX, 1);
  set_malloc_thresholds(c->memory_mb);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGXFSZ, SIG_IGN);
}

/* Metrics, the cache in the memory budget, and the store (--data-dir)
 * with every skeleton it holds loaded. Says why on stderr when it fails. */
static int open_storage(daemon *dm) {
  const sk_config *c = &dm->cfg;
  dm->metrics = calloc(1, sizeof *dm->metrics); /* ~100 KB: not on the stack */
  if (dm->metrics == NULL || sk_cache_create((size_t)c->cache_mb << 20, &dm->cache) != 0) {
    fprintf(stderr, "skinnerd: out of memory\n");
    return -1;
  }
  sk_metrics_init(dm->metrics);
  sk_cache_set_budget(dm->cache, &dm->budget);
  if (c->data_dir[0] == '\0')
    return 0;
  sk_error serr;
  sk_error_clear(&serr);
  if (sk_store_open(c->data_dir, &dm->store, &serr) != 0) {
    fprintf(stderr, "skinnerd: --data-dir: %s\n", serr.text);
    return -1;
  }
  int loaded = sk_cache_attach_store(dm->cache, dm->store, on_store_skip, NULL);
  if (loaded < 0) {
    fprintf(stderr, "skinnerd: cannot load %s: %s\n", c->data_dir, sk_strerror(loaded));
    return -1;
  }
  if (c->log_level >= 2)
    fprintf(stderr, "skinnerd: loaded %d skeletons from %s\n", loaded, c->data_dir);
  return 0;
}

/* The API on the cache, with the request limits. */
static int make_routes(daemon *dm) {
  const sk_config *c = &dm->cfg;
  sk_routes_config rc = {
      .metrics_admin_only = dm->want_admin,
      .max_body = (size_t)c->max_body,
      .max_bones = (size_t)c->max_bones,
      .max_batch = (size_t)c->max_batch,
      .inline_limit = (size_t)c->inline_limit,
      .pool_always = c->inline_limit == 0, /* --inline-limit 0: every batch goes to the pool */
      .kernel_threads = (unsigned)c->threads,
      .mesh_threads = &dm->mesh_threads,
      .budget = &dm->budget,
      .access = dm->access,
      .cost = {.max_frames = c->max_frames, .max_layers = c->max_layers, .max_work = c->max_work,
               .max_answer = c->max_answer_mb << 20},
      .max_skeleton = (size_t)c->max_skeleton_mb << 20,
      .stall_ms = (unsigned)c->stall_timeout * 1000u,
      .cors = dm->cors,
  };
  if (sk_routes_create(&rc, dm->cache, dm->metrics, &dm->routes) != 0) {
    fprintf(stderr, "skinnerd: out of memory\n");
    return -1;
  }
  return 0;
}

/* The public listener's settings. */
static sk_http_config public_http(daemon *dm) {
  const sk_config *c = &dm->cfg;
  return (sk_http_config){.host = c->host,
                          .port = c->port,
                          .listen_fd = dm->nfds > 0 ? SK_SYSTEMD_FDS_START : 0,
                          .max_body = (size_t)c->max_body,
                          .log_level = c->log_level,
                          .conn_limit = (unsigned)c->max_conns,
                          .conn_memory = (size_t)c->conn_memory,
                          .header_timeout_ms = (unsigned)c->header_timeout * 1000u,
                          .body_timeout_ms = (unsigned)c->body_timeout * 1000u,
                          .per_ip_limit = (unsigned)c->max_per_ip,
                          .idle_timeout_ms = (unsigned)c->idle_timeout * 1000u,
                          .budget = &dm->budget,
                          .tls = dm->tls,
                          .tls_priorities = c->tls_priorities[0] != '\0' ? c->tls_priorities : NULL,
                          .stream_per_addr = c->stream_mb_per_ip == SK_CONFIG_AUTO ? 0
                                             : c->stream_mb_per_ip == 0       ? SIZE_MAX
                                                                              : (size_t)c->stream_mb_per_ip << 20};
}

/* The admin listener's own small budget: a few health checkers and a
 * scraper, short timeouts, no per-address cap (they share one address). */
static sk_http_config admin_http(const daemon *dm) {
  const sk_config *c = &dm->cfg;
  return (sk_http_config){.host = c->admin_host[0] != '\0' ? c->admin_host : "127.0.0.1",
                          .port = c->admin_port,
                          .listen_fd = dm->nfds >= 2 ? SK_SYSTEMD_FDS_START + 1 : 0,
                          .max_body = 4096,
                          .log_level = c->log_level,
                          .conn_limit = 64,
                          .conn_timeout_s = 10,
                          .max_jobs = 1,
                          .shutdown_grace_ms = 1000,
                          .header_timeout_ms = 2000,
                          .body_timeout_ms = 2000,
                          .idle_timeout_ms = 2000};
}

/* Starts the listeners and prints their addresses, the public one first
 * (tests and scripts read the first stdout line). */
static int start_listeners(daemon *dm, uv_loop_t *loop) {
  const sk_config *c = &dm->cfg;
  sk_http_config hc = public_http(dm), ac = admin_http(dm);
  raise_nofile(c->max_conns + (dm->want_admin ? ac.conn_limit : 0) + 64, c->log_level);
  sk_http_handler handler = sk_routes_handler(dm->routes), admin_handler = sk_routes_admin_handler(dm->routes);
  int err = sk_http_start(loop, &hc, &handler, &dm->d.http);
  if (err != 0) {
    fprintf(stderr, "skinnerd: cannot listen on %s:%u: %s\n", c->host, c->port,
            err == SK_EINVAL ? "bad address" : "address in use or not available");
    return -1;
  }
  sk_routes_set_listener(dm->routes, dm->d.http);
  if (dm->nfds > 0)
    printf("listening on inherited socket (fd %d), port %u\n", SK_SYSTEMD_FDS_START, sk_http_port(dm->d.http));
  else
    print_listening("", c->host, sk_http_port(dm->d.http));
  if (dm->want_admin) {
    if ((err = sk_http_start(loop, &ac, &admin_handler, &dm->d.admin)) != 0) {
      fprintf(stderr, "skinnerd: cannot listen on %s:%u (--admin-listen): %s\n", ac.host, ac.port,
              err == SK_EINVAL ? "bad address" : "address in use or not available");
      return -1;
    }
    if (ac.listen_fd > 0)
      printf("admin listening on inherited socket (fd %d), port %u\n", ac.listen_fd, sk_http_port(dm->d.admin));
    else
      print_listening("admin ", ac.host, sk_http_port(dm->d.admin));
  }
  fflush(stdout);
  return 0;
}

/* systemd's watchdog pings (when asked for), readiness, and the signals:
 * SIGINT/SIGTERM stop, SIGHUP reloads, SIGUSR1/2 are logged. */
static void start_housekeeping(daemon_state *d, uv_loop_t *loop) {
  uint64_t wd_usec = sk_systemd_watchdog_usec();
  if (wd_usec > 0) {
    uv_timer_init(loop, &d->watchdog);
    uint64_t every_ms = wd_usec / 2000 > 0 ? wd_usec / 2000 : 1; /* half the interval, as sd_watchdog_enabled advises */
    uv_timer_start(&d->watchdog, on_watchdog, every_ms, every_ms);
    d->watchdog_on = true;
  }
  sk_systemd_notify("READY=1\nSTATUS=serving");
  uv_signal_t *sigs[] = {&d->sigint, &d->sigterm, &d->sighup, &d->sigusr1, &d->sigusr2};
  const int nums[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
  const uv_signal_cb cbs[] = {on_signal, on_signal, on_reload, on_ignored_signal, on_ignored_signal};
  for (int i = 0; i < 5; i++) {
    uv_signal_init(loop, sigs[i]);
    sigs[i]->data = d;
    uv_signal_start(sigs[i], cbs[i], nums[i]);
  }
}

static void teardown(daemon *dm, uv_loop_t *loop) {
  sk_http_destroy(dm->d.http);
  sk_http_destroy(dm->d.admin);
  sk_routes_destroy(dm->routes);
  sk_cache_destroy(dm->cache);
  sk_threads_stop(&dm->mesh_threads); /* every batch is done: the loop ran out of work */
  sk_store_close(dm->store);
  sk_access_destroy(dm->access);
  sk_tls_destroy(dm->tls);
  sk_cors_destroy(dm->cors);
  free(dm->metrics);
  int rc = uv_loop_close(loop);
  if (rc != 0 && dm->cfg.log_level >= 1)
    fprintf(stderr, "skinnerd: loop closed with handles open: %s\n", uv_strerror(rc));
}

int main(int argc, char **argv) {
  /* Until the loop's handlers are in, a reload or user signal must not
   * kill us: their default action is to terminate. */
  signal(SIGHUP, SIG_IGN);
  signal(SIGUSR1, SIG_IGN);
  signal(SIGUSR2, SIG_IGN);
  static daemon dm; /* ~20 KB of paths: not on the stack */
  int pr = load_config(&dm.cfg, argc, argv);
  if (pr != 0)
    return pr > 0 ? 0 : 2;
  sk_budget_init(&dm.budget, (size_t)(dm.cfg.memory_mb << 20));
  sk_threads_init(&dm.mesh_threads, (unsigned)dm.cfg.threads, (unsigned)dm.cfg.threads - 1);
  setup_process(&dm.cfg);
  dm.nfds = sk_systemd_listen_fds(); /* socket activation: serve the sockets systemd bound */
  if (setup_access(&dm.cfg, dm.nfds > 0 ? SK_SYSTEMD_FDS_START : -1, &dm.access, &dm.tls) != 0)
    return 2;
  sk_error cerr;
  sk_error_clear(&cerr);
  if (sk_cors_create(dm.cfg.cors_origins, dm.cfg.tokens[0] != '\0', &dm.cors, &cerr) != 0) {
    fprintf(stderr, "skinnerd: %s\n", cerr.text);
    return 2;
  }
  dm.want_admin = dm.cfg.admin_host[0] != '\0' || dm.nfds >= 2; /* a second inherited socket is the admin one */
  uv_loop_t *loop = uv_default_loop();
  if (open_storage(&dm) != 0 || make_routes(&dm) != 0)
    return 1;
  dm.d.loop = loop;
  dm.d.opt = &dm.cfg;
  dm.d.access = dm.access;
  dm.d.tls = dm.tls;
  /* Started once, after setup_process, for every request's vertex ranges;
   * none started: each batch skins on its own pool thread (same bytes). */
  if (sk_threads_start(&dm.mesh_threads) != 0 && dm.cfg.log_level >= 1)
    fprintf(stderr, "skinnerd: no mesh threads started: big primitives skin on one thread each\n");
  if (start_listeners(&dm, loop) != 0)
    return 1;
  start_housekeeping(&dm.d, loop);
  if (sk_loopstat_start(loop, dm.metrics, &dm.d.loopstat) != 0 && dm.cfg.log_level >= 1)
    fprintf(stderr, "skinnerd: the loop's iteration times will not be measured\n");
  uv_run(loop, UV_RUN_DEFAULT);
  teardown(&dm, loop);
  return 0;
}
