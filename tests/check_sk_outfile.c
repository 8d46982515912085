/* sk_outfile: a committed file appears whole under its name, an aborted or
 * failed one leaves the name as it was (absent, or its old content), no
 * temporary file stays behind, and what is not a regular file (/dev/null,
 * a symbolic link) is written in place. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sk_outfile.h"

#include "sk_testutil.h"

static char g_dir[] = "/tmp/check_sk_outfile-XXXXXX";

static void setup(void) { ck_assert_ptr_nonnull(mkdtemp(g_dir)); }

static void teardown(void) {
  DIR *d = opendir(g_dir);
  struct dirent *e;
  char p[512];
  while (d != NULL && (e = readdir(d)) != NULL)
    if (e->d_name[0] != '.') {
      snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
      unlink(p);
    }
  if (d != NULL)
    closedir(d);
  rmdir(g_dir);
  strcpy(g_dir + strlen(g_dir) - 6, "XXXXXX");
}

static void path_of(const char *name, char *p, size_t cap) { snprintf(p, cap, "%s/%s", g_dir, name); }

/* The directory's entries other than . and .. */
static int entries(void) {
  DIR *d = opendir(g_dir);
  ck_assert_ptr_nonnull(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

/* The file's content (up to cap - 1 bytes, NUL-terminated), or NULL when absent. */
static char *content(const char *p, char *buf, size_t cap) {
  FILE *f = fopen(p, "rb");
  if (f == NULL)
    return NULL;
  size_t n = fread(buf, 1, cap - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

static void write_text(const char *p, const char *text) {
  FILE *f = fopen(p, "wb");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

START_TEST(a_committed_file_appears_whole_and_only_then) {
  char p[512], buf[64];
  path_of("shot.bin", p, sizeof p);
  sk_outfile o;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_outfile_open(&o, p, &e), 0);
  fputs("frames", o.f);
  fflush(o.f);
  ck_assert_ptr_null(content(p, buf, sizeof buf)); /* not under its name while written */
  ck_assert_int_eq(entries(), 1);                  /* the temporary file beside it */
  ck_assert_int_eq(sk_outfile_commit(&o, &e), 0);
  ck_assert_str_eq(content(p, buf, sizeof buf), "frames");
  ck_assert_int_eq(entries(), 1);
  /* created as fopen would create it: 0666 less the umask */
  mode_t mask = umask(0);
  umask(mask);
  struct stat st;
  ck_assert_int_eq(stat(p, &st), 0);
  ck_assert_uint_eq(st.st_mode & 0777, 0666 & ~mask);
  /* replacing it: the old content until the commit */
  ck_assert_int_eq(sk_outfile_open(&o, p, &e), 0);
  fputs("new frames", o.f);
  fflush(o.f);
  ck_assert_str_eq(content(p, buf, sizeof buf), "frames");
  ck_assert_int_eq(sk_outfile_commit(&o, &e), 0);
  ck_assert_str_eq(content(p, buf, sizeof buf), "new frames");
  ck_assert_int_eq(entries(), 1);
  /* a file replaced keeps its permission bits */
  ck_assert_int_eq(chmod(p, 0640), 0);
  ck_assert_int_eq(sk_outfile_open(&o, p, &e), 0);
  ck_assert_int_eq(sk_outfile_commit(&o, &e), 0);
  ck_assert_int_eq(stat(p, &st), 0);
  ck_assert_uint_eq(st.st_mode & 0777, 0640);
  ck_assert_str_eq(content(p, buf, sizeof buf), "");
}
END_TEST

START_TEST(an_aborted_file_leaves_the_name_as_it_was) {
  char p[512], q[512], buf[64];
  path_of("fresh.bin", p, sizeof p);
  sk_outfile o;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_outfile_open(&o, p, &e), 0);
  fputs("half a shot", o.f);
  sk_outfile_abort(&o);
  ck_assert_ptr_null(content(p, buf, sizeof buf));
  ck_assert_int_eq(entries(), 0);
  path_of("old.bin", q, sizeof q);
  write_text(q, "the last good shot");
  ck_assert_int_eq(sk_outfile_open(&o, q, &e), 0);
  fputs("half", o.f);
  sk_outfile_abort(&o);
  ck_assert_str_eq(content(q, buf, sizeof buf), "the last good shot");
  ck_assert_int_eq(entries(), 1);
  sk_outfile_abort(&o); /* a closed one: nothing */
  sk_outfile zeroed = {0};
  sk_outfile_abort(&zeroed);
}
END_TEST

START_TEST(what_no_rename_could_replace_is_written_in_place) {
  /* /dev/null: written, still the device afterwards, even after an abort */
  struct stat before, after;
  ck_assert_int_eq(stat("/dev/null", &before), 0);
  sk_outfile o;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_outfile_open(&o, "/dev/null", &e), 0);
  ck_assert_ptr_null(o.tmp);
  fputs("x", o.f);
  sk_outfile_abort(&o);
  ck_assert_int_eq(stat("/dev/null", &after), 0);
  ck_assert(S_ISCHR(after.st_mode) && after.st_rdev == before.st_rdev);
  ck_assert_int_eq(sk_outfile_open(&o, "/dev/null", &e), 0);
  ck_assert_int_eq(sk_outfile_commit(&o, &e), 0);
  /* a symbolic link is written through, and stays a link */
  char target[512], link[512], buf[64];
  path_of("target.bin", target, sizeof target);
  path_of("link.bin", link, sizeof link);
  write_text(target, "old");
  ck_assert_int_eq(symlink(target, link), 0);
  ck_assert_int_eq(sk_outfile_open(&o, link, &e), 0);
  fputs("through", o.f);
  ck_assert_int_eq(sk_outfile_commit(&o, &e), 0);
  ck_assert_str_eq(content(target, buf, sizeof buf), "through");
  struct stat st;
  ck_assert_int_eq(lstat(link, &st), 0);
  ck_assert(S_ISLNK(st.st_mode));
  /* "-" and NULL are standard output */
  ck_assert_int_eq(sk_outfile_open(&o, "-", &e), 0);
  ck_assert_ptr_eq(o.f, stdout);
  ck_assert_int_eq(sk_outfile_commit(&o, &e), 0);
  ck_assert_int_eq(sk_outfile_open(&o, NULL, &e), 0);
  ck_assert_ptr_eq(o.f, stdout);
  sk_outfile_abort(&o);
}
END_TEST

START_TEST(a_path_that_cannot_be_written_is_an_io_error_naming_it) {
  char p[512];
  path_of("no/such/dir/shot.bin", p, sizeof p);
  sk_outfile o;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_outfile_open(&o, p, &e), SK_EIO);
  ck_assert_ptr_null(o.f);
  ck_assert_ptr_nonnull(strstr(e.text, p));
  ck_assert_ptr_nonnull(strstr(e.text, "No such file or directory"));
  ck_assert_int_eq(entries(), 0);
  /* a failed write (/dev/full) is caught at the commit */
  sk_error_clear(&e);
  ck_assert_int_eq(sk_outfile_open(&o, "/dev/full", &e), 0);
  fputs("frames", o.f);
  ck_assert_int_eq(sk_outfile_commit(&o, &e), SK_EIO);
  ck_assert_ptr_nonnull(strstr(e.text, "/dev/full"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_outfile");
  TCase *t = tcase_create("outfile");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, a_committed_file_appears_whole_and_only_then);
  tcase_add_test(t, an_aborted_file_leaves_the_name_as_it_was);
  tcase_add_test(t, what_no_rename_could_replace_is_written_in_place);
  tcase_add_test(t, a_path_that_cannot_be_written_is_an_io_error_naming_it);
  suite_add_tcase(s, t);
  return sk_test_run(s);
}
