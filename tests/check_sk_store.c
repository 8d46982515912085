#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sk_store.h"
#include "sk_testutil.h"

static char g_dir[64];

static void setup_dir(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/sk_store_test.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_dir));
}

static void teardown_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  ck_assert_int_eq(system(cmd), 0);
}

typedef struct {
  int records, skipped;
  char last_key[160];
  char why[128];
} seen;

static int on_record(void *arg, const char *key, const void *data, size_t len) {
  seen *s = arg;
  (void)data;
  (void)len;
  s->records++;
  snprintf(s->last_key, sizeof s->last_key, "%s", key);
  return 0;
}

static void on_skip(void *arg, const char *file, const char *why) {
  seen *s = arg;
  (void)file;
  s->skipped++;
  snprintf(s->why, sizeof s->why, "%s", why);
}

START_TEST(put_get_replace_delete) {
  sk_store *s;
  ck_assert_int_eq(sk_store_open(g_dir, &s, NULL), 0);
  ck_assert_int_eq(sk_store_put(s, "hero.v1", "abc", 3), 0);
  ck_assert_int_eq(sk_store_put(s, "hero.v1", "abcdef", 6), 0);
  void *d;
  size_t n;
  ck_assert_int_eq(sk_store_get(s, "hero.v1", &d, &n), 0);
  ck_assert_uint_eq(n, 6);
  ck_assert_mem_eq(d, "abcdef", 6);
  free(d);
  ck_assert_int_eq(sk_store_put(s, "empty", "", 0), 0);
  ck_assert_int_eq(sk_store_get(s, "empty", &d, &n), 0);
  ck_assert_uint_eq(n, 0);
  free(d);
  ck_assert_int_eq(sk_store_delete(s, "hero.v1"), 0);
  ck_assert_int_eq(sk_store_get(s, "hero.v1", &d, &n), SK_ENOTFOUND);
  ck_assert_int_eq(sk_store_delete(s, "hero.v1"), 0);
  sk_store_close(s);
}
END_TEST

START_TEST(keys_cannot_escape_the_directory) {
  ck_assert(!sk_store_key_valid(".."));
  ck_assert(!sk_store_key_valid("."));
  ck_assert(!sk_store_key_valid("a/b"));
  ck_assert(!sk_store_key_valid(""));
  ck_assert(sk_store_key_valid("A-z_0.9"));
  char longkey[130];
  memset(longkey, 'a', 129);
  longkey[129] = 0;
  ck_assert(!sk_store_key_valid(longkey));
  sk_store *s;
  ck_assert_int_eq(sk_store_open(g_dir, &s, NULL), 0);
  ck_assert_int_eq(sk_store_put(s, "../evil", "x", 1), SK_EINVAL);
  sk_store_close(s);
}
END_TEST

START_TEST(damaged_files_are_skipped_with_a_reason) {
  sk_store *s;
  ck_assert_int_eq(sk_store_open(g_dir, &s, NULL), 0);
  ck_assert_int_eq(sk_store_put(s, "good", "0123456789", 10), 0);
  ck_assert_int_eq(sk_store_put(s, "cut", "0123456789", 10), 0);
  ck_assert_int_eq(sk_store_put(s, "flipped", "0123456789", 10), 0);
  char path[256];
  snprintf(path, sizeof path, "%s/cut.rec", g_dir);
  ck_assert_int_eq(truncate(path, 25), 0);
  snprintf(path, sizeof path, "%s/flipped.rec", g_dir);
  int fd = open(path, O_WRONLY);
  ck_assert_int_eq((int)pwrite(fd, "X", 1, 22), 1);
  close(fd);
  /* A leftover of an interrupted put is removed, not loaded (temporary
   * names start with '~', outside the id set). */
  snprintf(path, sizeof path, "%s/~tmp-good.rec", g_dir);
  fd = open(path, O_WRONLY | O_CREAT, 0600);
  ck_assert_int_eq((int)write(fd, "junk", 4), 4);
  close(fd);
  seen v = {0};
  ck_assert_int_eq(sk_store_load_all(s, on_record, on_skip, &v), 0);
  ck_assert_int_eq(v.records, 1);
  ck_assert_str_eq(v.last_key, "good");
  ck_assert_int_eq(v.skipped, 2);
  ck_assert_int_eq(access(path, F_OK), -1);
  void *d;
  size_t n;
  ck_assert_int_eq(sk_store_get(s, "flipped", &d, &n), SK_EFORMAT);
  sk_store_close(s);
}
END_TEST

START_TEST(one_id_rule_with_lengths_so_a_nul_is_an_invalid_byte) {
  ck_assert(sk_store_id_valid("a", 1));
  ck_assert(sk_store_id_valid(".tmp-a", 6));
  ck_assert(sk_store_id_valid("...", 3));
  ck_assert(!sk_store_id_valid("a\0zzz", 5));
  ck_assert(!sk_store_id_valid("a\0", 2));
  ck_assert(!sk_store_id_valid("..", 2));
  ck_assert(!sk_store_id_valid(".", 1));
  ck_assert(!sk_store_id_valid("~tmp-a", 6));
  ck_assert(!sk_store_id_valid("a%00", 4));
  ck_assert(!sk_store_id_valid("\xc3\xa9", 2));
}
END_TEST

START_TEST(ids_named_like_temporary_files_are_records_like_any_other) {
  sk_store *s;
  ck_assert_int_eq(sk_store_open(g_dir, &s, NULL), 0);
  ck_assert_int_eq(sk_store_put(s, ".tmp-beta", "first", 5), 0);
  ck_assert_int_eq(sk_store_put(s, "beta", "second", 6), 0);
  ck_assert_int_eq(sk_store_put(s, ".tmp-alpha", "third", 5), 0);
  seen v = {0};
  ck_assert_int_eq(sk_store_load_all(s, on_record, on_skip, &v), 0);
  ck_assert_int_eq(v.records, 3);
  ck_assert_int_eq(v.skipped, 0);
  void *d;
  size_t n;
  ck_assert_int_eq(sk_store_get(s, ".tmp-beta", &d, &n), 0);
  ck_assert_uint_eq(n, 5);
  ck_assert_mem_eq(d, "first", 5);
  free(d);
  sk_store_close(s);
}
END_TEST

START_TEST(a_second_open_of_a_locked_directory_is_refused_with_the_holder_pid) {
  sk_store *a, *b = NULL;
  ck_assert_int_eq(sk_store_open(g_dir, &a, NULL), 0);
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_store_open(g_dir, &b, &err), SK_ELOCKED);
  ck_assert_ptr_null(b);
  char want[64];
  snprintf(want, sizeof want, "(pid %ld)", (long)getpid());
  ck_assert_msg(strstr(err.text, "in use by another skinnerd") && strstr(err.text, want), "%s", err.text);
  sk_store_close(a);
  ck_assert_int_eq(sk_store_open(g_dir, &b, NULL), 0);
  sk_store_close(b);
}
END_TEST

START_TEST(fifos_and_symlinks_are_never_opened_for_reading) {
  sk_store *s;
  ck_assert_int_eq(sk_store_open(g_dir, &s, NULL), 0);
  ck_assert_int_eq(sk_store_put(s, "real", "x", 1), 0);
  char path[256], target[256];
  snprintf(path, sizeof path, "%s/fifo.rec", g_dir);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  snprintf(path, sizeof path, "%s/link.rec", g_dir);
  snprintf(target, sizeof target, "%s/real.rec", g_dir);
  ck_assert_int_eq(symlink(target, path), 0);
  seen v = {0};
  ck_assert_int_eq(sk_store_load_all(s, on_record, on_skip, &v), 0); /* blocked in open() on the FIFO */
  ck_assert_int_eq(v.records, 1);
  ck_assert_int_eq(v.skipped, 2);
  void *d;
  size_t n;
  ck_assert_int_eq(sk_store_get(s, "fifo", &d, &n), SK_EFORMAT);
  ck_assert_int_eq(sk_store_get(s, "link", &d, &n), SK_EFORMAT);
  sk_store_close(s);
}
END_TEST

/* RLIMIT_FSIZE in this (forked) test process: EFBIG past 4 KiB. */
static void limit_file_size(void) {
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit rl;
  ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
  rl.rlim_cur = 4096;
  ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

START_TEST(a_put_past_the_file_size_limit_is_enospace_and_keeps_the_old_record) {
  sk_store *s;
  ck_assert_int_eq(sk_store_open(g_dir, &s, NULL), 0);
  ck_assert_int_eq(sk_store_put(s, "k", "old", 3), 0);
  limit_file_size();
  static char big[10000];
  ck_assert(!sk_store_full(s));
  ck_assert_int_eq(sk_store_put(s, "k", big, sizeof big), SK_ENOSPACE);
  ck_assert(sk_store_full(s));
  void *d;
  size_t n;
  ck_assert_int_eq(sk_store_get(s, "k", &d, &n), 0);
  ck_assert_uint_eq(n, 3);
  ck_assert_mem_eq(d, "old", 3);
  free(d);
  ck_assert_int_eq(sk_store_delete(s, "k"), 0); /* deleting proves no room */
  ck_assert(sk_store_full(s));
  ck_assert_int_eq(sk_store_put(s, "k2", "fits", 4), 0);
  ck_assert(!sk_store_full(s));
  seen v = {0};
  ck_assert_int_eq(sk_store_load_all(s, on_record, on_skip, &v), 0);
  ck_assert_int_eq(v.records, 1); /* no temporary file left behind */
  ck_assert_int_eq(v.skipped, 0);
  sk_store_close(s);
}
END_TEST

/* Files in the directory whose names start with `prefix`. */
static int count_files(const char *prefix) {
  char cmd[192];
  snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -c '^%s' > '%s.count'", g_dir, prefix, g_dir);
  ck_assert_int_ge(system(cmd), 0);
  char path[96];
  snprintf(path, sizeof path, "%s.count", g_dir);
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  int n = -1;
  ck_assert_int_eq(fscanf(f, "%d", &n), 1);
  fclose(f);
  unlink(path);
  return n;
}

/* Two puts of one key staged at once (the pool): each writes its own
 * file, and whichever is committed last is the record, in either order. */
START_TEST(staged_records_are_committed_in_the_callers_order) {
  sk_store *s;
  ck_assert_int_eq(sk_store_open(g_dir, &s, NULL), 0);
  for (int order = 0; order < 2; order++) {
    sk_store_staged a, b;
    ck_assert_int_eq(sk_store_stage(s, "k", "first", 5, &a), 0);
    ck_assert_int_eq(sk_store_stage(s, "k", "second!", 7, &b), 0);
    ck_assert(a.ready && b.ready);
    ck_assert_str_ne(a.tmp, b.tmp);
    ck_assert_int_eq(count_files("~tmp-"), 2);
    /* not in place before the commit */
    void *d;
    size_t n;
    ck_assert_int_eq(sk_store_get(s, "k", &d, &n), order == 0 ? SK_ENOTFOUND : 0);
    if (order == 1)
      free(d);
    ck_assert_int_eq(sk_store_commit(s, "k", order == 0 ? &b : &a), 0);
    ck_assert_int_eq(sk_store_commit(s, "k", order == 0 ? &a : &b), 0);
    ck_assert(!a.ready && !b.ready);
    ck_assert_int_eq(count_files("~tmp-"), 0);
    ck_assert_int_eq(sk_store_get(s, "k", &d, &n), 0);
    ck_assert_uint_eq(n, order == 0 ? 5 : 7);
    ck_assert_mem_eq(d, order == 0 ? "first" : "second!", n);
    free(d);
  }
  sk_store_close(s);
}
END_TEST

/* A staged record that is not committed leaves nothing: discarded, or
 * left by a crash (removed at the next open's load). */
START_TEST(an_uncommitted_stage_leaves_nothing_behind) {
  sk_store *s;
  ck_assert_int_eq(sk_store_open(g_dir, &s, NULL), 0);
  ck_assert_int_eq(sk_store_put(s, "k", "old", 3), 0);
  sk_store_staged a, b;
  ck_assert_int_eq(sk_store_stage(s, "k", "new", 3, &a), 0);
  sk_store_discard(s, &a);
  sk_store_discard(s, &a); /* idempotent */
  sk_store_discard(s, NULL);
  ck_assert_int_eq(count_files("~tmp-"), 0);
  ck_assert_int_eq(sk_store_stage(s, "k", "crash", 5, &b), 0);
  sk_store_close(s); /* the "crash": b never committed */
  ck_assert_int_eq(sk_store_open(g_dir, &s, NULL), 0);
  seen v = {0};
  ck_assert_int_eq(sk_store_load_all(s, on_record, on_skip, &v), 0);
  ck_assert_int_eq(v.records, 1);
  ck_assert_int_eq(count_files("~tmp-"), 0);
  void *d;
  size_t n;
  ck_assert_int_eq(sk_store_get(s, "k", &d, &n), 0);
  ck_assert_mem_eq(d, "old", 3);
  free(d);
  /* a name taken by hand is passed over */
  char path[256];
  snprintf(path, sizeof path, "%s/~tmp-0-k.rec", g_dir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  ck_assert_int_eq(sk_store_stage(s, "k", "again", 5, &a), 0);
  ck_assert_str_eq(a.tmp, "~tmp-1-k.rec");
  ck_assert_int_eq(sk_store_commit(s, "k", &a), 0);
  unlink(path);
  ck_assert_int_eq(sk_store_get(s, "k", &d, &n), 0);
  ck_assert_mem_eq(d, "again", 5);
  free(d);
  ck_assert_int_eq(sk_store_stage(s, "../k", "x", 1, &a), SK_EINVAL);
  ck_assert(!a.ready);
  ck_assert_int_eq(sk_store_commit(s, "../k", &a), SK_EINVAL);
  sk_store_close(s);
}
END_TEST

/* A stage that runs out of room reports it at the commit, as a put does:
 * SK_ENOSPACE, the store "full", the old record intact. */
START_TEST(a_stage_past_the_file_size_limit_is_enospace_at_its_commit) {
  sk_store *s;
  ck_assert_int_eq(sk_store_open(g_dir, &s, NULL), 0);
  ck_assert_int_eq(sk_store_put(s, "k", "old", 3), 0);
  limit_file_size();
  static char big[10000];
  sk_store_staged st;
  ck_assert_int_eq(sk_store_stage(s, "k", big, sizeof big, &st), SK_ENOSPACE);
  ck_assert(!st.ready);
  ck_assert(!sk_store_full(s)); /* a stage changes no state of the store */
  ck_assert_int_eq(count_files("~tmp-"), 0);
  ck_assert_int_eq(sk_store_commit(s, "k", &st), SK_ENOSPACE);
  ck_assert(sk_store_full(s));
  void *d;
  size_t n;
  ck_assert_int_eq(sk_store_get(s, "k", &d, &n), 0);
  ck_assert_mem_eq(d, "old", 3);
  free(d);
  sk_store_close(s);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_store");
  TCase *tc = tcase_create("lifecycle");
  tcase_add_checked_fixture(tc, setup_dir, teardown_dir);
  tcase_add_test(tc, put_get_replace_delete);
  tcase_add_test(tc, keys_cannot_escape_the_directory);
  tcase_add_test(tc, damaged_files_are_skipped_with_a_reason);
  tcase_add_test(tc, one_id_rule_with_lengths_so_a_nul_is_an_invalid_byte);
  tcase_add_test(tc, ids_named_like_temporary_files_are_records_like_any_other);
  tcase_add_test(tc, a_second_open_of_a_locked_directory_is_refused_with_the_holder_pid);
  tcase_add_test(tc, fifos_and_symlinks_are_never_opened_for_reading);
  tcase_add_test(tc, a_put_past_the_file_size_limit_is_enospace_and_keeps_the_old_record);
  tcase_add_test(tc, staged_records_are_committed_in_the_callers_order);
  tcase_add_test(tc, an_uncommitted_stage_leaves_nothing_behind);
  tcase_add_test(tc, a_stage_past_the_file_size_limit_is_enospace_at_its_commit);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
