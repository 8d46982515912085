/* End to end: a frame of Fox's clips answers the same bytes whichever way
 * it is asked: alone (/pose with "time"), in /poses batches of every size
 * 1..67, in a frame range (/pose with "times"), streamed (an answer over
 * 1 MiB) or whole, inline or on the pool, JSON or binary. */
#include <signal.h>

#include "sk_fixture.h"
#include "sk_numfmt.h"
#include "sk_testutil.h"

static sk_daemon g_d;

static void start(const char *const *args) {
  sk_fixture_start(&g_d, args);
  sk_fixture_put_asset(&g_d, "fox", "Fox.glb");
}

static void stop(void) { sk_fixture_stop(&g_d); }

/* Every frame at 30 fps of each clip, as "animation"/"time" members. */
typedef struct frame {
  const char *clip;
  double t;
} frame;

static size_t frames(frame *f, size_t cap) {
  static const struct {
    const char *clip;
    double end;
  } clips[] = {{"Survey", 3.4166}, {"Walk", 0.7083}, {"Run", 0.6666}};
  size_t n = 0;
  for (size_t c = 0; c < 3; c++)
    for (size_t k = 0; k / 30.0 <= clips[c].end && n < cap; k++)
      f[n++] = (frame){clips[c].clip, k / 30.0};
  return n;
}

static void add_frame(sk_strbuf *b, const frame *f) {
  char t[128];
  snprintf(t, sizeof t, "{\"animation\":\"%s\",\"time\":%.17g}", f->clip, f->t);
  sk_strbuf_append(b, t, strlen(t));
}

static const char *accept_of(bool binary) {
  return binary ? "Content-Type: application/json\r\nAccept: application/octet-stream\r\n"
                : "Content-Type: application/json\r\n";
}

/* POSTs `body` to /pose (`batch` false) or /poses and appends the answer's
 * poses to `out`: the "results" entries, comma-joined, for JSON (a bare
 * single answer is one entry); the bytes for binary. */
static void ask(const char *body, size_t len, bool batch, bool binary, sk_strbuf *out) {
  sk_httpc_resp r;
  sk_fixture_request(&g_d, "POST", batch ? "/v1/skeletons/fox/poses" : "/v1/skeletons/fox/pose", accept_of(binary),
                     body, len, &r);
  ck_assert_msg(r.status == 200, "%d %.300s for %.200s", r.status, r.body, body);
  const char *p = r.body;
  size_t n = r.len;
  if (!binary && strncmp(p, "{\"results\":[", 12) == 0) {
    p += 12;
    n -= 14;
  }
  if (!binary && out->len > 0)
    sk_strbuf_append(out, ",", 1);
  sk_strbuf_append(out, p, n);
  sk_httpc_free(&r);
}

static void singles(const frame *f, size_t n, bool binary, sk_strbuf *out) {
  for (size_t i = 0; i < n; i++) {
    sk_strbuf b = {0};
    add_frame(&b, &f[i]);
    ask(b.data, b.len, false, binary, out);
    sk_strbuf_free(&b);
  }
}

static void batches(const frame *f, size_t n, size_t k, bool binary, sk_strbuf *out) {
  for (size_t i = 0; i < n; i += k) {
    sk_strbuf b = {0};
    sk_strbuf_append(&b, "{\"poses\":[", 10);
    for (size_t j = i; j < n && j < i + k; j++) {
      if (j > i)
        sk_strbuf_append(&b, ",", 1);
      add_frame(&b, &f[j]);
    }
    sk_strbuf_append(&b, "]}", 2);
    ask(b.data, b.len, true, binary, out);
    sk_strbuf_free(&b);
  }
}

/* One frame range ("times") per clip. */
static void ranges(const frame *f, size_t n, bool binary, sk_strbuf *out) {
  for (size_t i = 0; i < n;) {
    sk_strbuf b = {0};
    char t[64];
    snprintf(t, sizeof t, "{\"animation\":\"%s\",\"times\":[", f[i].clip);
    sk_strbuf_append(&b, t, strlen(t));
    size_t j = i;
    for (; j < n && strcmp(f[j].clip, f[i].clip) == 0; j++) {
      snprintf(t, sizeof t, "%s%.17g", j > i ? "," : "", f[j].t);
      sk_strbuf_append(&b, t, strlen(t));
    }
    sk_strbuf_append(&b, "]}", 2);
    ask(b.data, b.len, false, binary, out);
    sk_strbuf_free(&b);
    i = j;
  }
}

static void same(const sk_strbuf *want, const sk_strbuf *got, const char *what, size_t k) {
  size_t at = 0;
  while (at < want->len && at < got->len && want->data[at] == got->data[at])
    at++;
  ck_assert_msg(want->len == got->len && at == want->len, "%s (%zu): %zu vs %zu bytes, first difference at %zu", what,
                k, want->len, got->len, at);
}

static void every_path_agrees(void) {
  frame f[200];
  size_t n = frames(f, 200);
  ck_assert_uint_gt(n, 120);
  for (int binary = 0; binary < 2; binary++) {
    sk_strbuf one = {0};
    singles(f, n, binary, &one);
    for (size_t k = 1; k <= 67; k++) {
      sk_strbuf got = {0};
      batches(f, n, k, binary, &got);
      same(&one, &got, binary ? "binary /poses batches of" : "JSON /poses batches of", k);
      sk_strbuf_free(&got);
    }
    sk_strbuf got = {0};
    ranges(f, n, binary, &got);
    same(&one, &got, binary ? "binary frame ranges" : "JSON frame ranges", 3);
    sk_strbuf_free(&got);
    /* Four times every frame in one batch: a JSON answer over 1 MiB, which
     * is streamed, a binary one of ~600 KB. */
    frame *f4 = malloc(4 * n * sizeof *f4);
    sk_strbuf want4 = {0};
    for (size_t c = 0; c < 4; c++) {
      memcpy(f4 + c * n, f, n * sizeof *f);
      if (c > 0 && !binary)
        sk_strbuf_append(&want4, ",", 1);
      sk_strbuf_append(&want4, one.data, one.len);
    }
    batches(f4, 4 * n, 4 * n, binary, &got);
    same(&want4, &got, binary ? "binary, one large batch" : "JSON, one streamed batch", 4 * n);
    ck_assert(binary || want4.len > (1u << 20));
    sk_strbuf_free(&got);
    sk_strbuf_free(&want4);
    free(f4);
    sk_strbuf_free(&one);
  }
}

START_TEST(a_frame_answers_the_same_bytes_alone_in_batches_of_1_to_67_and_in_ranges) {
  const char *const args[] = {"--max-batch", "4096", NULL};
  start(args);
  every_path_agrees();
  stop();
}
END_TEST

START_TEST(on_the_pool_too) {
  const char *const args[] = {"--max-batch", "4096", "--inline-limit", "0", "--threads", "2", NULL};
  start(args);
  every_path_agrees();
  stop();
}
END_TEST

/* A range's answer has one shape whatever its count: {"results": [...]},
 * also for one frame ("times": [t], or from == to); "time" alone is one
 * pose, answered bare. The frame's matrices are the same bytes each way. */
START_TEST(a_one_frame_range_answers_as_a_range) {
  start(NULL);
  static const char *const bodies[] = {"{\"animation\":\"Walk\",\"times\":[0.25]}",
                                       "{\"animation\":\"Walk\",\"from\":0.25,\"to\":0.25,\"fps\":30}",
                                       "{\"animation\":\"Walk\",\"time\":0.25}"};
  char *got[3];
  for (int i = 0; i < 3; i++) {
    sk_httpc_resp r;
    sk_fixture_request(&g_d, "POST", "/v1/skeletons/fox/pose", "Content-Type: application/json\r\n", bodies[i],
                       strlen(bodies[i]), &r);
    ck_assert_msg(r.status == 200, "%s: %d %.200s", bodies[i], r.status, r.body);
    got[i] = strdup(r.body);
    sk_httpc_free(&r);
  }
  const char *pre = "{\"results\":[";
  for (int i = 0; i < 2; i++) {
    ck_assert_msg(strncmp(got[i], pre, strlen(pre)) == 0, "%s answered %.60s", bodies[i], got[i]);
    /* the range's one result is the bare pose's object */
    size_t n = strlen(got[2]);
    ck_assert_uint_eq(strlen(got[i]), strlen(pre) + n + 2);
    ck_assert(memcmp(got[i] + strlen(pre), got[2], n) == 0);
  }
  ck_assert_msg(strncmp(got[2], "{\"final\":", 9) == 0, "time alone answered %.60s", got[2]);
  for (int i = 0; i < 3; i++)
    free(got[i]);
  stop();
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("frames_identity");
  TCase *t = tcase_create("identity");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, a_frame_answers_the_same_bytes_alone_in_batches_of_1_to_67_and_in_ranges);
  tcase_add_test(t, on_the_pool_too);
  tcase_add_test(t, a_one_frame_range_answers_as_a_range);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(suite()); }
