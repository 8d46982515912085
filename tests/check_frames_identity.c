/* End to end: a frame of Fox's clips answers the same bytes whichever way
 * it is asked: alone (/pose with "time"), in /poses batches of every size
 * 1..67, in a frame range (/pose with "times"), streamed (an answer over
 * 1 MiB) or whole, inline or on the pool, JSON or binary. */
#include <signal.h>

#include <math.h>

#include "sk_eval.h"
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

/* POSTs `body` to /pose (`batch` false) or /poses and appends the answer's
 * poses to `out` (sk_fixture_append_poses). */
static void ask(const char *body, size_t len, bool batch, bool binary, sk_strbuf *out) {
  sk_fixture_append_poses(&g_d, batch ? "/v1/skeletons/fox/poses" : "/v1/skeletons/fox/pose", body, len, binary, out);
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

/* The loop's scratch (inline batches) and the pool's serve request after
 * request, JSON and binary, clip after clip; the scratch keeps a range's
 * rest rows while the next range's are equal (sk_frames_scratch): every
 * answer is the one the first round gave. */
static void requests_in_turn(void) {
  static const char *const bodies[] = {
      "{\"animation\":\"Walk\",\"from\":0,\"to\":2,\"fps\":60,\"loop\":true}",
      "{\"animation\":\"Survey\",\"from\":0,\"to\":0.3,\"fps\":90,\"loop\":true}",
      "{\"animation\":\"Walk\",\"from\":0.5,\"to\":0.7,\"fps\":60,\"loop\":true}",
      "{\"animation\":\"Run\",\"from\":0.5,\"to\":1,\"fps\":60,\"loop\":true}"};
  enum { N = 2 * sizeof bodies / sizeof bodies[0] };
  sk_strbuf first[N];
  memset(first, 0, sizeof first);
  for (int round = 0; round < 3; round++)
    for (int k = 0; k < N; k++) {
      sk_strbuf got = {0};
      ask(bodies[k / 2], strlen(bodies[k / 2]), false, k % 2 == 1, &got);
      if (round == 0)
        first[k] = got;
      else {
        same(&first[k], &got, k % 2 ? "binary again" : "JSON again", (size_t)round);
        sk_strbuf_free(&got);
      }
    }
  for (int k = 0; k < N; k++)
    sk_strbuf_free(&first[k]);
}

START_TEST(a_scratch_serves_request_after_request) {
  const char *const pool_args[] = {"--inline-limit", "0", "--threads", "1", NULL};
  start(NULL);
  requests_in_turn();
  stop();
  start(pool_args);
  requests_in_turn();
  stop();
}
END_TEST

/* ---- every clip of the test assets: range = singles = skinner eval ---- */

static const char *const k_assets[] = {"Fox.glb",           "CesiumMan.glb", "RiggedFigure.glb", "RiggedSimple.glb",
                                       "RobotExpressive.glb", "mannequiny-0.3.0.glb", NULL};

/* POSTs `body` to /v1/skeletons/<id>/pose; the answer's bytes. */
static char *post_pose(const char *id, const char *body, bool binary, size_t *len) {
  char path[128];
  snprintf(path, sizeof path, "/v1/skeletons/%s/pose", id);
  return sk_fixture_ask_text(&g_d, "POST", path, "application/json", binary ? "application/octet-stream" : NULL, body,
                             strlen(body), 200, len);
}

/* `skinner eval`'s answer to one pose op on the asset (in process). */
static char *eval_pose(const char *asset, const char *op) {
  char rel[256], path[1024];
  snprintf(rel, sizeof rel, "data/%s", asset);
  sk_test_path(rel, path, sizeof path);
  json_t *gltf = json_string(path);
  char *gq = json_dumps(gltf, JSON_ENCODE_ANY);
  sk_strbuf c = {0}, out = {0};
  sk_strbuf_append(&c, "{\"skeleton\":{\"gltf\":", 20);
  sk_strbuf_append(&c, gq, strlen(gq));
  sk_strbuf_append(&c, "},\"ops\":[", 9);
  sk_strbuf_append(&c, op, strlen(op));
  sk_strbuf_append(&c, "]}", 2);
  json_t *j = json_loads(c.data, 0, NULL);
  ck_assert_ptr_nonnull(j);
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_eval_case(j, &out, &err) == 0, "skinner eval %s: %s at %s", op, err.text, err.pointer);
  json_decref(j);
  json_decref(gltf);
  free(gq);
  sk_strbuf_free(&c);
  return out.data;
}

/* Every clip of every test asset, as one frame range (from/to/fps, looping
 * on odd clips; and a 2-layer blend of clips 0 and 1): the daemon's answer
 * (sampled with sk_sample's cursors) is, byte for byte, the frames asked
 * one by one ("time"), JSON and binary, and skinner eval's "results". */
START_TEST(every_clip_of_every_asset_answers_the_same_bytes_as_a_range_as_singles_and_in_skinner_eval) {
  start(NULL);
  size_t frames_checked = 0;
  for (size_t a = 0; k_assets[a] != NULL; a++) {
    char id[32];
    snprintf(id, sizeof id, "asset%zu", a);
    sk_fixture_put_asset(&g_d, id, k_assets[a]);
    sk_httpc_resp r;
    char path[128];
    snprintf(path, sizeof path, "/v1/skeletons/%s", id);
    sk_fixture_request(&g_d, "GET", path, "", NULL, 0, &r);
    ck_assert_msg(r.status == 200, "GET %s: %d %.200s", path, r.status, r.body);
    json_t *list = json_loads(r.body, 0, NULL);
    sk_httpc_free(&r);
    ck_assert_ptr_nonnull(list);
    const json_t *arr = json_object_get(list, "animations");
    ck_assert_msg(json_array_size(arr) > 0, "%s: no clips", k_assets[a]);
    for (size_t k = 0; k <= json_array_size(arr); k++) {
      /* k < count: clip k alone; k == count: clips 0 and 1 blended */
      const size_t c = k < json_array_size(arr) ? k : 0;
      double dur = json_number_value(json_object_get(json_array_get(arr, c), "duration"));
      const double from = -0.1, fps = 15;
      char body[512], op[560];
      bool loop = k % 2 == 1;
      if (k < json_array_size(arr))
        snprintf(body, sizeof body, "{\"animation\":%zu,\"loop\":%s,\"from\":%.17g,\"to\":%.17g,\"fps\":%g}", k,
                 loop ? "true" : "false", from, dur + 0.1, fps);
      else
        snprintf(body, sizeof body,
                 "{\"layers\":[{\"animation\":0,\"weight\":0.6,\"loop\":true},"
                 "{\"animation\":%zu,\"time\":0.2,\"weight\":0.4}],\"from\":%.17g,\"to\":%.17g,\"fps\":%g}",
                 json_array_size(arr) > 1 ? (size_t)1 : (size_t)0, from, dur + 0.1, fps);
      size_t jl, bl;
      char *json = post_pose(id, body, false, &jl), *bin = post_pose(id, body, true, &bl);
      size_t nf = (size_t)floor((dur + 0.2) * fps + 1e-9) + 1;
      /* singles, frame by frame */
      sk_strbuf one = {0}, onebin = {0};
      for (size_t f = 0; f < nf; f++) {
        double t = from + (double)f / fps;
        char single[512];
        if (k < json_array_size(arr))
          snprintf(single, sizeof single, "{\"animation\":%zu,\"loop\":%s,\"time\":%.17g}", k, loop ? "true" : "false",
                   t);
        else
          snprintf(single, sizeof single,
                   "{\"layers\":[{\"animation\":0,\"time\":%.17g,\"weight\":0.6,\"loop\":true},"
                   "{\"animation\":%zu,\"time\":%.17g,\"weight\":0.4}]}",
                   t, json_array_size(arr) > 1 ? (size_t)1 : (size_t)0, 0.2 + t);
        size_t l1, l2;
        char *sj = post_pose(id, single, false, &l1), *sb = post_pose(id, single, true, &l2);
        if (f > 0)
          sk_strbuf_append(&one, ",", 1);
        sk_strbuf_append(&one, sj, l1);
        sk_strbuf_append(&onebin, sb, l2);
        free(sj);
        free(sb);
      }
      frames_checked += nf;
      ck_assert_msg(strncmp(json, "{\"results\":[", 12) == 0, "%s", body);
      sk_strbuf got = {0};
      sk_strbuf_append(&got, json + 12, jl - 14);
      same(&one, &got, k_assets[a], k);
      sk_strbuf_free(&got);
      sk_strbuf_append(&got, bin, bl);
      same(&onebin, &got, k_assets[a], 1000 + k);
      sk_strbuf_free(&got);
      /* skinner eval: {"order":[...],"results":[...]} */
      snprintf(op, sizeof op, "{\"op\":\"pose\",%s", body + 1);
      char *ev = eval_pose(k_assets[a], op);
      const char *res = strstr(ev, ",\"results\":[");
      ck_assert_msg(res != NULL, "%.100s", ev);
      res += 12;
      size_t rl = strlen(res);
      ck_assert(rl >= 2);
      sk_strbuf_append(&got, res, rl - 2);
      same(&one, &got, "skinner eval", k);
      sk_strbuf_free(&got);
      free(ev);
      sk_strbuf_free(&one);
      sk_strbuf_free(&onebin);
      free(json);
      free(bin);
    }
    json_decref(list);
  }
  ck_assert_uint_gt(frames_checked, 500);
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
  tcase_add_test(t, a_scratch_serves_request_after_request);
  tcase_add_test(t, every_clip_of_every_asset_answers_the_same_bytes_as_a_range_as_singles_and_in_skinner_eval);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(suite()); }
