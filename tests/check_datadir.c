/* End to end: the data directory (--data-dir). The real skinnerd on
 * 127.0.0.1 and a free port, restarted on the same directory; test names
 * are sentences of behaviour. Every test makes its own directory under
 * /tmp and removes it.
 *
 * A full data directory is made for real, two ways:
 *  - RLIMIT_FSIZE set on the running daemon with prlimit(2): a write past
 *    it fails with EFBIG. Works as any user, in CI (root) and in the
 *    sanitizer build (nothing is preloaded, so ASan has nothing to clash
 *    with); skinnerd ignores SIGXFSZ so the write fails instead of the
 *    process dying.
 *  - a 256 KiB tmpfs in a private mount namespace (`unshare -m`, as root,
 *    or `unshare -rm` where user namespaces are allowed): ENOSPC from the
 *    kernel itself; and remounted read-only with nsenter: EROFS. Skipped,
 *    with a line saying so, where neither works. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <jansson.h>

#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_testutil.h"

static sk_daemon D;
static char g_dir[64];

static void setup_dir(void) {
  sk_fixture_tmpdir(g_dir, sizeof g_dir, "sk_datadir_test");
}

static void teardown_dir(void) {
  if (D.pid > 0)
    sk_daemon_stop(&D, SIGKILL);
  sk_fixture_rmdir(g_dir);
}

static void start(void) {
  const char *const args[] = {"--data-dir", g_dir, NULL};
  sk_fixture_start(&D, args);
}

static void stop(void) {
  sk_fixture_stop(&D);
}

static void restart(void) {
  stop();
  start();
}

static void req_ct(const char *method, const char *path, const char *ct, const void *body, size_t blen,
                   sk_httpc_resp *r) {
  char h[256] = "";
  if (ct != NULL)
    snprintf(h, sizeof h, "Content-Type: %s\r\n", ct);
  int rc = sk_httpc_request(D.host, D.port, method, path, h, body, blen, r);
  ck_assert_msg(rc == 0, "%s %s: no answer (%s)", method, path, r->error);
}

static void req(const char *method, const char *path, const char *body, sk_httpc_resp *r) {
  req_ct(method, path, body ? "application/json" : NULL, body, body ? strlen(body) : 0, r);
}

static int status_of(const char *method, const char *path, const char *body) {
  sk_httpc_resp r;
  req(method, path, body, &r);
  sk_httpc_free(&r);
  return r.status;
}

static void expect_problem(const sk_httpc_resp *r, int status, const char *kind) {
  char ct[128];
  ck_assert_msg(r->status == status, "status %d, want %d: %.300s", r->status, status, r->body);
  ck_assert_msg(sk_httpc_header(r, "Content-Type", ct, sizeof ct) && strcmp(ct, "application/problem+json") == 0,
                "content type %s", ct);
  json_t *j = json_loadb(r->body, r->len, 0, NULL);
  ck_assert_msg(j != NULL, "not JSON: %.200s", r->body);
  char type[256];
  snprintf(type, sizeof type, "https://skinnerd.dev/problems/%s", kind);
  ck_assert_str_eq(json_string_value(json_object_get(j, "type")), type);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "status")), status);
  json_decref(j);
}

/* A chain of `n` bones named <prefix>0..: its record grows with n. */
static char *chain(const char *prefix, int n) {
  size_t cap = 64 + (size_t)n * 96;
  char *s = malloc(cap);
  ck_assert_ptr_nonnull(s);
  size_t at = (size_t)snprintf(s, cap, "{\"bones\":[");
  for (int i = 0; i < n; i++) {
    if (i == 0)
      at += (size_t)snprintf(s + at, cap - at, "{\"name\":\"%s0\"}", prefix);
    else
      at += (size_t)snprintf(s + at, cap - at, ",{\"name\":\"%s%d\",\"parent\":\"%s%d\",\"position\":[0,1,0]}", prefix,
                             i, prefix, i - 1);
  }
  snprintf(s + at, cap - at, "]}");
  return s;
}

/* The bone count GET reports for `id`, or -status when it is not 200. */
static int bones_of(const char *id) {
  char path[256];
  snprintf(path, sizeof path, "/v1/skeletons/%s", id);
  sk_httpc_resp r;
  req("GET", path, NULL, &r);
  int n = -r.status;
  if (r.status == 200) {
    json_t *j = json_loadb(r.body, r.len, 0, NULL);
    n = (int)json_array_size(json_object_get(j, "bones"));
    json_decref(j);
  }
  sk_httpc_free(&r);
  return n;
}

static void put_chain(const char *id, int n, int want_status) {
  char path[256];
  snprintf(path, sizeof path, "/v1/skeletons/%s", id);
  char *body = chain("b", n);
  sk_httpc_resp r;
  req("PUT", path, body, &r);
  ck_assert_msg(r.status == want_status, "PUT %s: %d %.300s", id, r.status, r.body);
  sk_httpc_free(&r);
  free(body);
}

START_TEST(ids_that_look_like_temporary_files_are_kept_across_a_restart) {
  start();
  put_chain(".tmp-alpha", 2, 201);
  put_chain(".tmp-beta", 3, 201);
  put_chain("beta", 4, 201); /* once wrote its temporary file over .tmp-beta's record */
  put_chain("~x", 1, 400);   /* outside the id set: the temporary prefix can never be an id */
  restart();
  ck_assert_int_eq(bones_of(".tmp-alpha"), 2);
  ck_assert_int_eq(bones_of(".tmp-beta"), 3);
  ck_assert_int_eq(bones_of("beta"), 4);
  stop();
}
END_TEST

START_TEST(ids_with_a_nul_or_a_byte_outside_the_set_are_refused_with_and_without_a_data_dir) {
  static const char *const bad[] = {"a%00zzz", "%00", "a%00", "..", ".", "%2e%2e", "a%20b", "%ff", "a~b", "a%00.rec", "%c3%a9"};
  const char *skel = "{\"bones\":[{\"name\":\"r\"}]}";
  for (int with_dir = 0; with_dir < 2; with_dir++) {
    if (with_dir) {
      start();
    } else {
      ck_assert_int_eq(sk_daemon_start(&D, NULL), 0);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      char path[256];
      snprintf(path, sizeof path, "/v1/skeletons/%s", bad[i]);
      sk_httpc_resp r;
      req("PUT", path, skel, &r);
      expect_problem(&r, 400, "invalid-request");
      sk_httpc_free(&r);
      /* elsewhere such an id names no skeleton (the documented 404); it
       * used to be cut at the NUL and name "a" */
      req("GET", path, NULL, &r);
      expect_problem(&r, 404, "not-found");
      sk_httpc_free(&r);
      req("DELETE", path, NULL, &r);
      expect_problem(&r, 404, "not-found");
      sk_httpc_free(&r);
    }
    /* nothing was stored under the prefix before the NUL */
    ck_assert_int_eq(bones_of("a"), -404);
    put_chain("a", 2, 201); /* and "a" itself is not what a%00zzz names */
    ck_assert_int_eq(status_of("GET", "/v1/skeletons/a%00zzz", NULL), 404);
    ck_assert_int_eq(status_of("DELETE", "/v1/skeletons/a%00zzz", NULL), 404);
    ck_assert_int_eq(bones_of("a"), 2);
    ck_assert_int_eq(status_of("DELETE", "/v1/skeletons/a", NULL), 204);
    sk_httpc_resp r;
    req("GET", "/v1/skeletons", NULL, &r);
    ck_assert_str_eq(r.body, "{\"skeletons\":[]}");
    sk_httpc_free(&r);
    stop();
  }
}
END_TEST

/* Runs skinnerd on g_dir to its exit; returns the exit status and what it
 * wrote on stderr. */
static int run_to_exit(char *err, size_t cap) {
  const char *exe = getenv("SKINNERD") ? getenv("SKINNERD") : "./skinnerd";
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(p[1], 2);
    close(p[0]);
    close(p[1]);
    execl(exe, exe, "--listen", "127.0.0.1:0", "--data-dir", g_dir, (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  size_t n = 0;
  ssize_t k;
  while (n + 1 < cap && (k = read(p[0], err + n, cap - 1 - n)) > 0)
    n += (size_t)k;
  err[n] = 0;
  close(p[0]);
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  return st;
}

START_TEST(a_second_daemon_on_the_same_directory_exits_1_with_a_clear_message) {
  start();
  put_chain("kept", 2, 201);
  char err[4096];
  int st = run_to_exit(err, sizeof err);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "second daemon: status %d, stderr: %s", st, err);
  ck_assert_msg(strstr(err, "in use by another skinnerd") != NULL && strstr(err, g_dir) != NULL, "stderr: %s", err);
  /* the first one is untouched and still writes */
  put_chain("kept2", 3, 201);
  ck_assert_int_eq(bones_of("kept"), 2);
  stop();
  /* the lock goes with the process: the next daemon starts */
  start();
  ck_assert_int_eq(bones_of("kept2"), 3);
  stop();
}
END_TEST

static int readyz(void) { return status_of("GET", "/readyz", NULL); }

static void set_fsize(pid_t pid, rlim_t bytes) {
  struct rlimit rl;
  ck_assert_int_eq(prlimit(pid, RLIMIT_FSIZE, NULL, &rl), 0);
  rl.rlim_cur = bytes;
  ck_assert_int_eq(prlimit(pid, RLIMIT_FSIZE, &rl, NULL), 0);
}

START_TEST(a_full_data_directory_answers_507_and_is_not_ready_until_a_write_succeeds) {
  start();
  put_chain("old", 2, 201);
  ck_assert_int_eq(readyz(), 200);
  set_fsize(D.pid, 16384); /* a 100-bone record is ~60 KB; a 2-bone one ~1 KB */
  sk_httpc_resp r;
  char *big = chain("b", 100);
  req("PUT", "/v1/skeletons/old", big, &r);
  expect_problem(&r, 507, "insufficient-storage");
  sk_httpc_free(&r);
  req("PUT", "/v1/skeletons/new", big, &r);
  expect_problem(&r, 507, "insufficient-storage");
  sk_httpc_free(&r);
  req("GET", "/readyz", NULL, &r);
  ck_assert_int_eq(r.status, 503);
  ck_assert_str_eq(r.body, "{\"status\":\"out-of-storage\"}");
  sk_httpc_free(&r);
  /* nothing changed: the old record answers, the new id does not exist */
  ck_assert_int_eq(bones_of("old"), 2);
  ck_assert_int_eq(bones_of("new"), -404);
  ck_assert_int_eq(readyz(), 503);
  /* a write that fits succeeds, and the daemon is ready again */
  put_chain("small", 3, 201);
  ck_assert_int_eq(readyz(), 200);
  set_fsize(D.pid, RLIM_INFINITY);
  restart();
  ck_assert_int_eq(bones_of("old"), 2);
  ck_assert_int_eq(bones_of("small"), 3);
  ck_assert_int_eq(bones_of("new"), -404);
  free(big);
  stop();
}
END_TEST

/* Whether `unshare -m` (or -rm) can mount a tmpfs here. */
static const char *unshare_flags(void) {
  static const char *const tries[] = {"-m", "-rm"};
  for (size_t i = 0; i < 2; i++) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "unshare %s sh -c 'mount -t tmpfs -o size=64k tmpfs %s' >/dev/null 2>&1", tries[i],
             g_dir);
    if (system(cmd) == 0)
      return tries[i];
  }
  return NULL;
}

/* Starts skinnerd inside a private mount namespace on a tmpfs of `size`
 * over g_dir. The wrapper execs all the way down, so the pid
 * sk_daemon_start sees is the daemon's ($0 is the directory, "$@" the
 * daemon and its arguments). False (test skipped) where no namespace can
 * mount. */
static bool start_on_tmpfs(const char *size, const char **flags_out) {
  const char *flags = unshare_flags();
  if (flags == NULL) {
    fprintf(stderr, "check_datadir: SKIPPED a tmpfs test: neither `unshare -m` nor `unshare -rm` can mount here\n");
    return false;
  }
  const char *exe = getenv("SKINNERD") ? getenv("SKINNERD") : "./skinnerd";
  char abs_exe[4096], wrapper[128];
  ck_assert_ptr_nonnull(realpath(exe, abs_exe));
  snprintf(wrapper, sizeof wrapper, "%s.sh", g_dir);
  FILE *f = fopen(wrapper, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f,
          "#!/bin/sh\nexec unshare %s sh -c 'mount -t tmpfs -o size=%s,mode=0700 tmpfs \"$0\" && exec \"$@\"' "
          "'%s' '%s' \"$@\"\n",
          flags, size, g_dir, abs_exe);
  ck_assert_int_eq(fclose(f), 0);
  ck_assert_int_eq(chmod(wrapper, 0700), 0);
  char *saved = getenv("SKINNERD") ? strdup(getenv("SKINNERD")) : NULL;
  setenv("SKINNERD", wrapper, 1);
  start();
  if (saved != NULL)
    setenv("SKINNERD", saved, 1);
  else
    unsetenv("SKINNERD");
  free(saved);
  unlink(wrapper);
  *flags_out = flags;
  return true;
}

START_TEST(a_tmpfs_that_fills_up_answers_507_and_recovers_after_a_delete) {
  const char *flags;
  if (!start_on_tmpfs("256k", &flags))
    return;
  char id[32];
  int stored = 0, st = 201;
  for (; stored < 200 && st == 201; stored++) {
    snprintf(id, sizeof id, "fill%d", stored);
    char path[64], *body = chain("b", 40);
    snprintf(path, sizeof path, "/v1/skeletons/%s", id);
    sk_httpc_resp r;
    req("PUT", path, body, &r);
    st = r.status;
    if (st != 201)
      expect_problem(&r, 507, "insufficient-storage");
    sk_httpc_free(&r);
    free(body);
  }
  ck_assert_msg(st == 507, "the tmpfs never filled up (%d records)", stored);
  ck_assert_int_eq(readyz(), 503);
  ck_assert_int_eq(bones_of(id), -404);
  ck_assert_int_eq(bones_of("fill0"), 40);
  /* a delete frees room; the next write succeeds and makes it ready */
  ck_assert_int_eq(status_of("DELETE", "/v1/skeletons/fill0", NULL), 204);
  ck_assert_int_eq(readyz(), 503);
  put_chain("after", 2, 201);
  ck_assert_int_eq(readyz(), 200);
  stop();
}
END_TEST

/* Remounts the daemon's tmpfs read-only or read-write from inside its
 * namespace; false when nsenter cannot. */
static bool remount(const char *flags, const char *mode) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "nsenter -t %ld %s -m mount -o remount,%s '%s' >/dev/null 2>&1", (long)D.pid,
           strcmp(flags, "-m") == 0 ? "" : "-U --preserve-credentials", mode, g_dir);
  return system(cmd) == 0;
}

START_TEST(a_data_directory_remounted_read_only_answers_507_until_it_is_writable_again) {
  const char *flags;
  if (!start_on_tmpfs("1m", &flags))
    return;
  put_chain("a", 2, 201);
  if (!remount(flags, "ro")) {
    fprintf(stderr, "check_datadir: SKIPPED the read-only test: nsenter cannot remount here\n");
    stop();
    return;
  }
  sk_httpc_resp r;
  char *body = chain("b", 3);
  req("PUT", "/v1/skeletons/a", body, &r);
  expect_problem(&r, 507, "insufficient-storage");
  sk_httpc_free(&r);
  req("DELETE", "/v1/skeletons/a", NULL, &r);
  expect_problem(&r, 507, "insufficient-storage");
  sk_httpc_free(&r);
  free(body);
  ck_assert_int_eq(readyz(), 503);
  ck_assert_int_eq(bones_of("a"), 2); /* nothing changed */
  ck_assert(remount(flags, "rw"));
  ck_assert_int_eq(readyz(), 503); /* until a write succeeds */
  put_chain("b", 1, 201);
  ck_assert_int_eq(readyz(), 200);
  ck_assert_int_eq(status_of("DELETE", "/v1/skeletons/a", NULL), 204);
  stop();
}
END_TEST

START_TEST(fifos_symlinks_and_directories_named_rec_are_skipped_at_start_up) {
  start();
  put_chain("good", 2, 201);
  stop();
  char p[256];
  snprintf(p, sizeof p, "%s/x.rec", g_dir);
  ck_assert_int_eq(mkfifo(p, 0600), 0);
  snprintf(p, sizeof p, "%s/link.rec", g_dir);
  char target[256];
  snprintf(target, sizeof target, "%s/good.rec", g_dir);
  ck_assert_int_eq(symlink(target, p), 0);
  snprintf(p, sizeof p, "%s/dir.rec", g_dir);
  ck_assert_int_eq(mkdir(p, 0700), 0);
  double t0 = sk_test_now();
  start(); /* hung here on the FIFO's open */
  ck_assert_msg(sk_test_now() - t0 < 10, "start-up took %.1f s", sk_test_now() - t0);
  ck_assert_int_eq(bones_of("good"), 2);
  ck_assert_int_eq(bones_of("x"), -404);
  ck_assert_int_eq(bones_of("link"), -404);
  ck_assert_int_eq(bones_of("dir"), -404);
  stop();
}
END_TEST

/* A sample's value from /metrics, -1 when absent. */
static double metric(const char *name) {
  sk_httpc_resp r;
  req("GET", "/metrics", NULL, &r);
  char key[128];
  snprintf(key, sizeof key, "\n%s ", name);
  const char *p = strstr(r.body, key);
  double v = p ? strtod(p + strlen(key), NULL) : -1;
  sk_httpc_free(&r);
  return v;
}

static bool listed(const char *id) {
  sk_httpc_resp r;
  req("GET", "/v1/skeletons", NULL, &r);
  ck_assert_int_eq(r.status, 200);
  char q[64];
  snprintf(q, sizeof q, "\"%s\"", id);
  bool found = strstr(r.body, q) != NULL;
  sk_httpc_free(&r);
  return found;
}

static void expect_ready_with_warning(bool warning) {
  sk_httpc_resp r;
  req("GET", "/readyz", NULL, &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_msg((strstr(r.body, "\"warnings\":[\"") != NULL) == warning, "%s", r.body);
  ck_assert_msg(!warning || strstr(r.body, "damaged record") != NULL, "%s", r.body);
  sk_httpc_free(&r);
}

/* Issue 31: a record damaged while its skeleton was evicted answered 404
 * on GET while GET /v1/skeletons still listed it, nothing logged or
 * counted. Now it is dropped from the listing, counted and /readyz warns. */
START_TEST(a_record_damaged_while_evicted_is_dropped_from_the_listing_and_counted) {
  const char *const args[] = {"--data-dir", g_dir, "--cache-mb", "1", "--max-bones", "4096", NULL};
  sk_fixture_start(&D, args);
  ck_assert_double_eq(metric("skinnerd_store_damaged_records"), 0);
  expect_ready_with_warning(false);
  put_chain("a", 3000, 201); /* over 1 MB: the next put evicts it */
  put_chain("b", 3000, 201);
  ck_assert(listed("a"));
  char p[256];
  snprintf(p, sizeof p, "%s/a.rec", g_dir);
  FILE *f = fopen(p, "r+b");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(fseek(f, 4096, SEEK_SET), 0);
  int c = fgetc(f);
  ck_assert_int_eq(fseek(f, 4096, SEEK_SET), 0);
  fputc(c ^ 0x20, f);
  fclose(f);
  ck_assert_int_eq(bones_of("a"), -404);
  ck_assert(!listed("a"));
  ck_assert(listed("b"));
  ck_assert_double_eq(metric("skinnerd_store_damaged_records"), 1);
  expect_ready_with_warning(true);
  ck_assert_int_eq(bones_of("b"), 3000);
  /* After a restart the same file is skipped, counted, and not listed. */
  stop();
  sk_fixture_start(&D, args);
  ck_assert(!listed("a"));
  ck_assert_int_eq(bones_of("a"), -404);
  ck_assert_double_eq(metric("skinnerd_store_damaged_records"), 1);
  expect_ready_with_warning(true);
  stop();
}
END_TEST

static char *get_body(const char *path) {
  sk_httpc_resp r;
  req("GET", path, NULL, &r);
  ck_assert_msg(r.status == 200, "GET %s: %d", path, r.status);
  return r.body; /* the caller frees */
}

START_TEST(a_restart_keeps_everything_acknowledged_bit_for_bit) {
  start();
  put_chain("chain", 5, 201);
  size_t glen;
  unsigned char *glb = sk_test_read_asset("RiggedSimple.glb", &glen);
  sk_httpc_resp r;
  req_ct("PUT", "/v1/skeletons/rig?skin=0", "model/gltf-binary", glb, glen, &r);
  ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
  sk_httpc_free(&r);
  free(glb);
  req("PATCH", "/v1/skeletons/rig/bones",
      "{\"bones\":{\"Bone\":{\"rotation\":[0.1,0.2,0.3]},\"Bone.001\":{\"rest\":[1,0,0,0,0,1,0,0,0,0,1,0,0,3,0,1]}}}",
      &r);
  ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
  sk_httpc_free(&r);
  ck_assert_int_eq(status_of("DELETE", "/v1/skeletons/chain", NULL), 204);
  put_chain("chain", 6, 201);
  static const char *const paths[] = {"/v1/skeletons", "/v1/skeletons/chain", "/v1/skeletons/rig"};
  char *before[3];
  for (int i = 0; i < 3; i++)
    before[i] = get_body(paths[i]);
  /* the final matrices of a clip frame, as float32 bits */
  const char *pose = "{\"animation\":{\"clip\":0,\"time\":0.5}}";
  sk_httpc_resp pb, pa;
  req("POST", "/v1/skeletons/rig/pose", pose, &pb);
  restart();
  for (int i = 0; i < 3; i++) {
    char *after = get_body(paths[i]);
    ck_assert_str_eq(after, before[i]);
    free(after);
    free(before[i]);
  }
  req("POST", "/v1/skeletons/rig/pose", pose, &pa);
  ck_assert_int_eq(pa.status, pb.status);
  ck_assert_str_eq(pa.body, pb.body);
  sk_httpc_free(&pa);
  sk_httpc_free(&pb);
  stop();
}
END_TEST

static void copy_file(const char *from, const char *to) {
  size_t n;
  unsigned char *d = sk_test_read_file(from, &n);
  ck_assert_msg(d != NULL, "%s missing", from);
  FILE *f = fopen(to, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(d, 1, n, f), n);
  ck_assert_int_eq(fclose(f), 0);
  free(d);
}

START_TEST(records_of_the_previous_format_load_and_are_rewritten_in_the_new_one_on_change) {
  static const char *const ids[] = {"plain_json", "json-alpha", "simple.skin", "rigged_patched"};
  static const int bones[] = {3, 4, 2, 2};
  for (int i = 0; i < 4; i++) {
    char from[128], to[256];
    snprintf(from, sizeof from, "data/records-v1/%s.rec", ids[i]);
    snprintf(to, sizeof to, "%s/%s.rec", g_dir, ids[i]);
    copy_file(from, to);
  }
  start();
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(bones_of(ids[i]), bones[i]);
  /* the glTF ones kept their clips */
  char *s = get_body("/v1/skeletons/simple.skin");
  ck_assert_ptr_nonnull(strstr(s, "\"animations\":[{"));
  free(s);
  /* a change writes version 2 */
  sk_httpc_resp r;
  req("PATCH", "/v1/skeletons/json-alpha/bones", "{\"bones\":{\"hips\":{\"position\":[0,0,1]}}}", &r);
  ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
  sk_httpc_free(&r);
  char path[256];
  snprintf(path, sizeof path, "%s/json-alpha.rec", g_dir);
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  unsigned char head[32];
  ck_assert_uint_eq(fread(head, 1, sizeof head, f), sizeof head);
  fclose(f);
  /* store envelope (20 bytes), then "SKREC" NUL, version u16 LE */
  ck_assert_mem_eq(head + 20, "SKREC\0", 6);
  ck_assert_int_eq(head[26] | head[27] << 8, 2);
  restart();
  ck_assert_int_eq(bones_of("json-alpha"), 4);
  ck_assert_int_eq(bones_of("rigged_patched"), 2);
  stop();
}
END_TEST

typedef struct {
  const unsigned char *body;
  size_t len;
  int status;
} racer;

static void *race_put(void *arg) {
  racer *x = arg;
  sk_httpc_resp r;
  x->status = sk_httpc_request(D.host, D.port, "PUT", "/v1/skeletons/race", "Content-Type: model/gltf-binary\r\n",
                               x->body, x->len, &r) == 0
                  ? r.status
                  : 0;
  sk_httpc_free(&r);
  return NULL;
}

/* Two large uploads of one id at once: both are staged on the pool (each
 * record written and synced under its own temporary name), and the loop
 * puts them in place in the order it publishes them, so what a restart
 * loads is what the daemon answered last, and no temporary file stays. */
START_TEST(racing_uploads_of_one_id_end_on_disk_as_in_memory) {
  start();
  size_t flen, mlen;
  unsigned char *fox = sk_test_read_asset("Fox.glb", &flen);
  unsigned char *mq = sk_test_read_asset("mannequiny-0.3.0.glb", &mlen);
  for (int round = 0; round < 4; round++) {
    racer a = {round % 2 ? fox : mq, round % 2 ? flen : mlen, 0}, b = {round % 2 ? mq : fox, round % 2 ? mlen : flen, 0};
    pthread_t ta, tb;
    ck_assert_int_eq(pthread_create(&ta, NULL, race_put, &a), 0);
    ck_assert_int_eq(pthread_create(&tb, NULL, race_put, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    ck_assert_msg((a.status == 200 || a.status == 201) && (b.status == 200 || b.status == 201), "%d %d", a.status,
                  b.status);
    int before = bones_of("race");
    ck_assert_int_gt(before, 0);
    restart();
    ck_assert_int_eq(bones_of("race"), before);
  }
  char cmd[160];
  snprintf(cmd, sizeof cmd, "! ls -A '%s' | grep -q '^~tmp-'", g_dir);
  ck_assert_int_eq(system(cmd), 0);
  free(fox);
  free(mq);
  stop();
}
END_TEST

static Suite *datadir_suite(void) {
  Suite *s = suite_create("datadir");
  TCase *t = tcase_create("ids");
  tcase_add_checked_fixture(t, setup_dir, teardown_dir);
  tcase_set_timeout(t, 60);
  tcase_add_test(t, ids_that_look_like_temporary_files_are_kept_across_a_restart);
  tcase_add_test(t, ids_with_a_nul_or_a_byte_outside_the_set_are_refused_with_and_without_a_data_dir);
  suite_add_tcase(s, t);
  t = tcase_create("lock");
  tcase_add_checked_fixture(t, setup_dir, teardown_dir);
  tcase_set_timeout(t, 60);
  tcase_add_test(t, a_second_daemon_on_the_same_directory_exits_1_with_a_clear_message);
  suite_add_tcase(s, t);
  t = tcase_create("full");
  tcase_add_checked_fixture(t, setup_dir, teardown_dir);
  tcase_set_timeout(t, 60);
  tcase_add_test(t, a_full_data_directory_answers_507_and_is_not_ready_until_a_write_succeeds);
  tcase_add_test(t, a_tmpfs_that_fills_up_answers_507_and_recovers_after_a_delete);
  tcase_add_test(t, a_data_directory_remounted_read_only_answers_507_until_it_is_writable_again);
  suite_add_tcase(s, t);
  t = tcase_create("files");
  tcase_add_checked_fixture(t, setup_dir, teardown_dir);
  tcase_set_timeout(t, 60);
  tcase_add_test(t, fifos_symlinks_and_directories_named_rec_are_skipped_at_start_up);
  tcase_add_test(t, a_record_damaged_while_evicted_is_dropped_from_the_listing_and_counted);
  tcase_add_test(t, a_restart_keeps_everything_acknowledged_bit_for_bit);
  tcase_add_test(t, records_of_the_previous_format_load_and_are_rewritten_in_the_new_one_on_change);
  tcase_add_test(t, racing_uploads_of_one_id_end_on_disk_as_in_memory);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(datadir_suite()); }
