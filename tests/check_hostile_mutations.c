/* Thousands of randomly mutated valid requests against the real skinnerd
 * (issue 7; the other hostile clients are in check_hostile.c): every
 * answer is a 2xx or a problem+json 4xx, and a control skeleton no
 * mutation targets answers the same bytes afterwards. The test starts its
 * own daemon on 127.0.0.1 and a free port and stops it with SIGTERM,
 * expecting exit 0 (a sanitized daemon exits non-zero on a leak, so that
 * is checked too).
 *
 * Environment: SK_HOSTILE_SEED (mutation seed, default 7),
 * SK_HOSTILE_MUTATIONS (how many, default 10000). */
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "sk_fixture.h"
#include "sk_httpc.h"
#include "sk_testskel.h"
#include "sk_testutil.h"

static sk_daemon D;

static void start(const char *const *extra) { sk_fixture_start(&D, extra); }

static void stop(void) { sk_fixture_stop(&D); }

/* One request; `ct`/`accept` NULL: header left out. Returns rc of sk_httpc_request. */
static int send_req(const char *method, const char *path, const char *ct, const char *accept, const void *body,
                    size_t blen, sk_httpc_resp *r) {
  return sk_fixture_send(&D, method, path, ct, accept, body, blen, r);
}

/* A request that must get an answer; returns its status. */
static int must(const char *method, const char *path, const char *body, const char *accept, sk_httpc_resp *r) {
  return sk_fixture_must(&D, method, path, body, accept, r);
}

static void put_skeleton(const char *id, const char *body) { sk_fixture_put_json(&D, id, body); }

static void expect_healthy(void) { sk_fixture_expect_healthy(&D); }

typedef struct rng {
  uint64_t s;
} rng;

static uint64_t rnd(rng *r) { /* xorshift64* */
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 2685821657736338717ull;
}

static size_t below(rng *r, size_t n) { return n ? (size_t)(rnd(r) % n) : 0; }

typedef struct seed {
  const char *method;
  const char *path; /* may hold %d: a scratch id m0..m7 */
  char *body;       /* NULL: none */
  const char *accept;
} seed;

/* Replaces a random JSON value (deep in the tree) by something hostile, swaps
 * two siblings' values, or drops a member. */
static void mutate_tree(rng *g, json_t *j) {
  /* clang-format off */
  static const char *const tokens[] = {
      "\"1\"", "\"NaN\"", "1e39", "-1e39", "1e400", "1e-400", "123456789012345678901234567890", "-0", "true", "null",
      "[]", "{}", "[1,2]", "\"\"", "0.1", "-2147483649", "18446744073709551616", "\"\\u0000\"",
      "[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]", "\"bone1\"", "\"bone1 \"", "3"};
  /* clang-format on */
  json_t *node = j, *parent = NULL;
  const char *key = NULL;
  size_t index = 0;
  for (int depth = 0; depth < 8; depth++) {
    size_t n = json_is_object(node) ? json_object_size(node) : json_is_array(node) ? json_array_size(node) : 0;
    if (n == 0 || below(g, 4) == 0)
      break;
    parent = node;
    if (json_is_object(node)) {
      size_t pick = below(g, n), k = 0;
      const char *kk;
      json_t *v;
      json_object_foreach(node, kk, v) {
        if (k++ == pick) {
          key = kk;
          node = v;
          break;
        }
      }
    } else {
      index = below(g, n);
      key = NULL;
      node = json_array_get(node, index);
    }
  }
  if (parent == NULL)
    return;
  int what = (int)below(g, 4);
  json_t *repl = NULL;
  if (what <= 1) {
    repl = json_loads(tokens[below(g, sizeof tokens / sizeof tokens[0])], JSON_DECODE_ANY, NULL);
    if (repl == NULL) /* 1e400 and friends: jansson refuses them; keep a huge double */
      repl = json_real(3.4e38 * 10);
  } else if (what == 2) {
    /* swap with a sibling */
    json_t *other = NULL;
    if (json_is_object(parent)) {
      const char *kk;
      json_t *v;
      json_object_foreach(parent, kk, v) {
        if (below(g, 2) == 0) {
          other = v;
          break;
        }
      }
    } else {
      other = json_array_get(parent, below(g, json_array_size(parent)));
    }
    repl = other ? json_deep_copy(other) : json_null();
  } else {
    if (key != NULL)
      json_object_del(parent, key);
    else
      json_array_remove(parent, index);
    return;
  }
  if (key != NULL)
    json_object_set_new(parent, key, repl);
  else
    json_array_set_new(parent, index, repl);
}

/* Byte-level and textual mutations of a body (malloc'ed, length in *len). */
static char *mutate_bytes(rng *g, const char *in, size_t *len) {
  /* clang-format off */
  static const char *const ins[] = {
      "\"", "{", "}", "[", "]", ",", ":", "-", "1e999", "NaN", "Infinity", "\\u0000", "\"\\ud800\"", "\xff\xfe",
      "0x10", "\"bones\":{},", "\"poses\":[],", "\"rotation\":[1,2,3],", "\"name\":\"bone1\",",
      "\"output\":[\"final\"],"};
  /* clang-format on */
  size_t n = *len;
  char *b = malloc(n + 64);
  memcpy(b, in, n);
  switch (below(g, 5)) {
  case 0: /* flip a few bytes */
    for (size_t k = 1 + below(g, 4); k > 0 && n > 0; k--)
      b[below(g, n)] = (char)(below(g, 2) ? rnd(g) & 0xff : (unsigned char)b[below(g, n)] ^ (1u << below(g, 8)));
    break;
  case 1: /* truncate */ n = below(g, n + 1); break;
  case 2: { /* insert a token */
    const char *t = ins[below(g, sizeof ins / sizeof ins[0])];
    size_t tl = strlen(t), at = below(g, n + 1);
    memmove(b + at + tl, b + at, n - at);
    memcpy(b + at, t, tl);
    n += tl;
    break;
  }
  case 3: { /* duplicate a key: repeat the first member of a random object */
    char *open = NULL;
    for (int tries = 0; tries < 8 && open == NULL; tries++) {
      size_t from = below(g, n);
      char *c = memchr(b + from, '{', n - from);
      if (c != NULL && c < b + n - 1 && c[1] == '"')
        open = c;
    }
    if (open == NULL && n > 1 && b[0] == '{' && b[1] == '"')
      open = b;
    if (open != NULL) {
      /* the member runs to the next ',' or '}' at depth 0 */
      size_t at = (size_t)(open - b) + 1, end = at;
      int depth = 0;
      bool str = false;
      for (; end < n; end++) {
        char c = b[end];
        if (str) {
          if (c == '\\')
            end++;
          else if (c == '"')
            str = false;
        } else if (c == '"')
          str = true;
        else if (c == '{' || c == '[')
          depth++;
        else if (c == '}' || c == ']') {
          if (depth-- == 0)
            break;
        } else if (c == ',' && depth == 0)
          break;
      }
      size_t ml = end - at;
      if (ml > 0 && ml < 60) {
        memmove(b + at + ml + 1, b + at, n - at);
        b[at + ml] = ',';
        n += ml + 1;
      }
    }
    break;
  }
  default: /* cut a slice out */
    if (n > 2) {
      size_t a = below(g, n), l = 1 + below(g, n - a);
      memmove(b + a, b + a + l, n - a - l);
      n -= l;
    }
  }
  *len = n;
  return b;
}

/* Checks one answer; returns NULL or what was wrong (static text). */
static const char *bad_answer(const char *method, int rc, const sk_httpc_resp *r) {
  static char why[512];
  if (rc != 0) {
    snprintf(why, sizeof why, "no answer (%s)", r->error);
    return why;
  }
  if (r->status >= 200 && r->status < 300)
    return NULL;
  if (r->status < 400 || r->status >= 500) {
    snprintf(why, sizeof why, "status %d: %.200s", r->status, r->body);
    return why;
  }
  char ct[128];
  if (!sk_httpc_header(r, "Content-Type", ct, sizeof ct) || strcmp(ct, "application/problem+json") != 0) {
    snprintf(why, sizeof why, "status %d with content type %s", r->status,
             sk_httpc_header(r, "Content-Type", ct, sizeof ct) ? ct : "(none)");
    return why;
  }
  if (strcmp(method, "HEAD") == 0)
    return NULL; /* no body to check */
  json_t *j = json_loadb(r->body, r->len, 0, NULL);
  bool ok = j != NULL && json_integer_value(json_object_get(j, "status")) == r->status &&
            json_is_string(json_object_get(j, "title")) && json_is_string(json_object_get(j, "detail")) &&
            json_is_string(json_object_get(j, "pointer")) && json_is_string(json_object_get(j, "type"));
  json_decref(j);
  if (!ok) {
    snprintf(why, sizeof why, "status %d with a malformed problem: %.200s", r->status, r->body);
    return why;
  }
  return NULL;
}

static char *read_file_or(const char *rel, const char *fallback) {
  char path[1024];
  const char *dir = getenv("SK_TEST_DATA");
  snprintf(path, sizeof path, "%s/../%s", dir ? dir : "tests", rel);
  json_t *j = json_load_file(path, 0, NULL);
  if (j == NULL)
    return strdup(fallback);
  char *t = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  return t;
}

START_TEST(mutated_requests_get_2xx_or_problem_json_and_change_nothing_else) {
  start(NULL);
  const char *env_seed = getenv("SK_HOSTILE_SEED"), *env_n = getenv("SK_HOSTILE_MUTATIONS");
  uint64_t seed_v = env_seed ? strtoull(env_seed, NULL, 0) : 7;
  long count = env_n ? strtol(env_n, NULL, 10) : 10000;
  rng g = {seed_v * 0x9E3779B97F4A7C15ull + 1};

  /* the control skeleton: never a mutation's target */
  char *control = sk_test_tree_skeleton(20);
  put_skeleton("control", control);
  char *cpose = sk_test_tree_pose(5, 20, true);
  sk_httpc_resp before_json, before_bin, before_get, r;
  ck_assert_int_eq(must("POST", "/v1/skeletons/control/pose", cpose, NULL, &before_json), 200);
  ck_assert_int_eq(must("POST", "/v1/skeletons/control/pose", cpose, "application/octet-stream", &before_bin), 200);
  ck_assert_int_eq(must("GET", "/v1/skeletons/control", NULL, NULL, &before_get), 200);

  char *small = sk_test_tree_skeleton(12);
  for (int k = 0; k < 8; k++) {
    char id[16];
    snprintf(id, sizeof id, "m%d", k);
    put_skeleton(id, small);
  }
  seed seeds[] = {
      {"PUT", "/v1/skeletons/m%d", small, NULL},
      {"PUT", "/v1/skeletons/m%d", read_file_or("proto/examples/skeleton-babylon-serialized.json", "{\"bones\":[]}"),
       NULL},
      {"PUT", "/v1/skeletons/m%d", read_file_or("proto/examples/humanoid-fragment.json", "{\"bones\":[]}"), NULL},
      {"PUT", "/v1/skeletons/m%d",
       strdup("{\"bones\":[{\"name\":\"r\",\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1],\"bind\":[1,0,0,0,0,1,0,0,0,0,"
              "1,0,0,1,0,1],\"rest\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1],\"length\":2,\"index\":0},{\"name\":\"c\","
              "\"parent\":\"r\",\"rotationQuaternion\":[0,0,0.38268343,0.92387953],\"scaling\":[1,2,1],\"index\":1}]}"),
       NULL},
      {"POST", "/v1/skeletons", small, NULL},
      {"POST", "/v1/skeletons/m%d/pose", sk_test_tree_pose(1, 12, true), NULL},
      {"POST", "/v1/skeletons/m%d/pose", sk_test_tree_pose(2, 12, true), "application/octet-stream"},
      {"POST", "/v1/skeletons/m%d/pose",
       strdup("{\"bones\":{\"bone1\":{\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1]},\"bone2\":{\"scaling\":[1,1,2],"
              "\"rotationQuaternion\":[0,0,0,1]}},\"output\":[\"final\",\"absolute\",\"local\"]}"),
       "application/x-skinner-mat3x4"},
      {"POST", "/v1/skeletons/m%d/poses", sk_test_tree_batch(4, 12), NULL},
      {"POST", "/v1/skeletons/m%d/poses", sk_test_tree_batch(40, 12), "application/octet-stream"},
      {"PATCH", "/v1/skeletons/m%d/bones",
       strdup("{\"bones\":{\"bone2\":{\"position\":[0,0.5,0],\"bind\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1],"
              "\"keepLocal\":true},\"bone3\":{\"rest\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1]}}}"),
       NULL},
      {"POST", "/v1/skeletons/m%d/rest", strdup("{\"bones\":[\"bone2\",\"bone3\"]}"), NULL},
      {"POST", "/v1/skeletons/m%d/rest", NULL, NULL},
      {"GET", "/v1/skeletons/m%d", NULL, NULL},
      {"GET", "/v1/skeletons", NULL, NULL},
      {"DELETE", "/v1/skeletons/m%d", NULL, NULL},
      {"GET", "/metrics", NULL, NULL},
      {"GET", "/healthz", NULL, NULL},
  };
  size_t nseeds = sizeof seeds / sizeof seeds[0];
  static const char *const methods[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "FOO"};
  /* clang-format off */
  static const char *const cts[] = {
      "application/json", "application/json; charset=utf-8", "text/plain", "application/jsonx", "APPLICATION/JSON",
      "", ";;;", "application/json;charset"};
  static const char *const accepts[] = {
      "text/html", "*/*", "*/*;q=0", "application/*", "application/octet-stream;q=0.5, application/json",
      "application/json;q=0", "application/x-skinner-mat3x4;q=2", ",,,;q=", "image/*"};
  static const char *const ids[] = {
      "m1", "m9", "", "..", "%2e%2e", "a%2Fb", "%00", "m1%00x", "M1", "m1/extra",
      "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm"
      "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm", /* 140 > 128 */
      "m1?x=1", "m1#f", "%ff%fe", "~", "m1;x"};
  /* clang-format on */
  long by_class[6] = {0};
  int failures = 0;
  double t0 = sk_test_now();
  for (long it = 0; it < count; it++) {
    const seed *s = &seeds[below(&g, nseeds)];
    const char *method = s->method, *ct = s->body ? "application/json" : NULL, *accept = s->accept;
    char path[512];
    snprintf(path, sizeof path, s->path, (int)below(&g, 8));
    size_t blen = s->body ? strlen(s->body) : 0;
    char *body = NULL;
    if (s->body != NULL) {
      int kind = (int)below(&g, 3);
      if (kind == 0) { /* structural */
        json_t *j = json_loads(s->body, 0, NULL);
        for (size_t k = 1 + below(&g, 3); k > 0; k--)
          mutate_tree(&g, j);
        body = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        json_decref(j);
        if (body == NULL)
          body = strdup("");
        blen = strlen(body);
      } else {
        body = mutate_bytes(&g, s->body, &blen);
        if (kind == 2)
          for (size_t k = below(&g, 3); k > 0; k--) {
            char *b2 = mutate_bytes(&g, body, &blen);
            free(body);
            body = b2;
          }
      }
    }
    /* now and then the envelope too: method, media types, the id */
    if (below(&g, 10) == 0)
      method = methods[below(&g, sizeof methods / sizeof methods[0])];
    if (below(&g, 12) == 0)
      ct = cts[below(&g, sizeof cts / sizeof cts[0])];
    if (below(&g, 12) == 0)
      accept = accepts[below(&g, sizeof accepts / sizeof accepts[0])];
    if (below(&g, 12) == 0 && strncmp(s->path, "/v1/skeletons/m%d", 17) == 0)
      snprintf(path, sizeof path, "/v1/skeletons/%s%s", ids[below(&g, sizeof ids / sizeof ids[0])], s->path + 17);
    if (s->body == NULL && below(&g, 8) == 0) { /* a body where none belongs */
      body = strdup("{\"bones\":{}}");
      blen = strlen(body);
      ct = "application/json";
    }
    int rc = send_req(method, path, ct, accept, body, blen, &r);
    const char *why = bad_answer(method, rc, &r);
    if (why != NULL && failures++ < 10)
      fprintf(stderr, "mutation %ld (seed %llu): %s %s [%s] body %.*s\n  -> %s\n", it, (unsigned long long)seed_v,
              method, path, ct ? ct : "-", (int)(blen < 300 ? blen : 300), body ? body : "", why);
    if (rc == 0)
      by_class[r.status / 100 < 6 ? r.status / 100 : 0]++;
    sk_httpc_free(&r);
    free(body);
  }
  double secs = sk_test_now() - t0;
  fprintf(stderr, "mutations: %ld requests (seed %llu) in %.1f s: %ld 2xx, %ld 4xx, %ld 5xx, %d bad\n", count,
          (unsigned long long)seed_v, secs, by_class[2], by_class[4], by_class[5], failures);
  ck_assert_msg(failures == 0, "%d of %ld mutated requests got a bad answer (first ones above)", failures, count);

  expect_healthy();
  sk_httpc_resp after;
  ck_assert_int_eq(must("POST", "/v1/skeletons/control/pose", cpose, NULL, &after), 200);
  ck_assert_msg(after.len == before_json.len && memcmp(after.body, before_json.body, after.len) == 0,
                "the control skeleton's JSON pose changed");
  sk_httpc_free(&after);
  ck_assert_int_eq(must("POST", "/v1/skeletons/control/pose", cpose, "application/octet-stream", &after), 200);
  ck_assert_msg(after.len == before_bin.len && memcmp(after.body, before_bin.body, after.len) == 0,
                "the control skeleton's binary pose changed");
  sk_httpc_free(&after);
  ck_assert_int_eq(must("GET", "/v1/skeletons/control", NULL, NULL, &after), 200);
  ck_assert_msg(after.len == before_get.len && memcmp(after.body, before_get.body, after.len) == 0,
                "GET on the control skeleton changed");
  sk_httpc_free(&after);
  sk_httpc_free(&before_json);
  sk_httpc_free(&before_bin);
  sk_httpc_free(&before_get);
  for (size_t i = 0; i < nseeds; i++)
    if (seeds[i].body != small)
      free(seeds[i].body);
  free(small);
  free(control);
  free(cpose);
  stop();
}
END_TEST

int main(void) {
  Suite *s = suite_create("hostile_mutations");
  TCase *t = tcase_create("mutations");
  tcase_set_timeout(t, 240);
  tcase_add_test(t, mutated_requests_get_2xx_or_problem_json_and_change_nothing_else);
  suite_add_tcase(s, t);
  return sk_test_run(s);
}
