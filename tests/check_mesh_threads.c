/* The mesh writer's threads (sk_mesh_hook, SK_MESH_THREADS_MIN): a
 * generated glTF whose one primitive has 70 144 vertices (a 256 x 274
 * grid on two joints, normals, triangles, one rotating clip) answers the
 * same bytes whatever the thread count: the hook's writers in process
 * with 1, 2, 3 and 16 threads, and the real skinnerd on 127.0.0.1 (a port
 * it picks) with --threads 1 and --threads 2 and --inline-limit 0 (the
 * pose on the pool, where the threads are used), for "vertices",
 * "normals", "bounds", "hits" in JSON and binary. */
#define _GNU_SOURCE
#include <stdbool.h>

#include <jansson.h>

#include "sk_fixture.h"
#include "sk_answer.h"
#include "sk_gltf_mesh.h"
#include "sk_httpc.h"
#include "sk_meshout.h"
#include "sk_testutil.h"

#define COLS 256u
#define ROWS 274u
#define NV (COLS * ROWS)
#define NI ((COLS - 1) * (ROWS - 1) * 6)

static void put_f32(unsigned char *b, size_t *at, float v) {
  memcpy(b + *at, &v, 4);
  *at += 4;
}

/* The GLB (new; free) of the grid, *len bytes. */
static unsigned char *grid_glb(size_t *len) {
  const size_t pos = 0, nrm = pos + NV * 12, jnt = nrm + NV * 12, wgt = jnt + NV * 8, idx = wgt + NV * 16,
               ibm = idx + (size_t)NI * 4, tin = ibm + 128, tout = tin + 8, bin = tout + 32;
  unsigned char *b = calloc(bin, 1);
  ck_assert_ptr_nonnull(b);
  size_t at = 0;
  for (uint32_t r = 0; r < ROWS; r++)
    for (uint32_t c = 0; c < COLS; c++) {
      put_f32(b, &at, (float)c * 0.01f - 1.28f);
      put_f32(b, &at, (float)r * 0.01f);
      put_f32(b, &at, (float)((c * 7 + r * 3) % 11) * 0.001f);
    }
  for (uint32_t v = 0; v < NV; v++) {
    put_f32(b, &at, 0.1f * (float)(v % 5));
    put_f32(b, &at, 0.2f);
    put_f32(b, &at, 1.0f);
  }
  for (uint32_t v = 0; v < NV; v++) {
    const uint16_t j[4] = {0, 1, 0, 0};
    memcpy(b + at, j, 8);
    at += 8;
  }
  for (uint32_t v = 0; v < NV; v++) {
    const float t = (float)(v / COLS) / (float)ROWS;
    put_f32(b, &at, 1.0f - t);
    put_f32(b, &at, t);
    put_f32(b, &at, 0);
    put_f32(b, &at, 0);
  }
  for (uint32_t r = 0; r + 1 < ROWS; r++)
    for (uint32_t c = 0; c + 1 < COLS; c++) {
      const uint32_t v = r * COLS + c, t[6] = {v, v + 1, v + COLS, v + 1, v + COLS + 1, v + COLS};
      memcpy(b + at, t, sizeof t);
      at += sizeof t;
    }
  const float m[32] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
                       1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -1, 0, 1};
  memcpy(b + at, m, sizeof m);
  at += sizeof m;
  const float keys[10] = {0, 1, 0, 0, 0, 1, 0.3826834f, 0, 0, 0.9238795f};
  memcpy(b + at, keys, sizeof keys);
  at += sizeof keys;
  ck_assert_uint_eq(at, bin);
  char *json = NULL;
  ck_assert_int_ge(
      asprintf(&json,
               "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0,2]}],"
               "\"nodes\":[{\"children\":[1]},{\"translation\":[0,1,0]},{\"mesh\":0,\"skin\":0}],"
               "\"skins\":[{\"joints\":[0,1],\"inverseBindMatrices\":5}],"
               "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0,\"NORMAL\":1,\"JOINTS_0\":2,"
               "\"WEIGHTS_0\":3},\"indices\":4}]}],"
               "\"animations\":[{\"channels\":[{\"sampler\":0,\"target\":{\"node\":1,\"path\":\"rotation\"}}],"
               "\"samplers\":[{\"input\":6,\"output\":7}]}],"
               "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":%u,\"type\":\"VEC3\"},"
               "{\"bufferView\":1,\"componentType\":5126,\"count\":%u,\"type\":\"VEC3\"},"
               "{\"bufferView\":2,\"componentType\":5123,\"count\":%u,\"type\":\"VEC4\"},"
               "{\"bufferView\":3,\"componentType\":5126,\"count\":%u,\"type\":\"VEC4\"},"
               "{\"bufferView\":4,\"componentType\":5125,\"count\":%u,\"type\":\"SCALAR\"},"
               "{\"bufferView\":5,\"componentType\":5126,\"count\":2,\"type\":\"MAT4\"},"
               "{\"bufferView\":6,\"componentType\":5126,\"count\":2,\"type\":\"SCALAR\",\"min\":[0],\"max\":[1]},"
               "{\"bufferView\":7,\"componentType\":5126,\"count\":2,\"type\":\"VEC4\"}],"
               "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu},"
               "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu},"
               "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu},"
               "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu},"
               "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu},"
               "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu},"
               "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu},"
               "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu}],\"buffers\":[{\"byteLength\":%zu}]}",
               NV, NV, NV, NV, NI, pos, nrm - pos, nrm, jnt - nrm, jnt, wgt - jnt, wgt, idx - wgt, idx, ibm - idx, ibm,
               tin - ibm, tin, tout - tin, tout, bin - tout, bin),
      0);
  const size_t jl = (strlen(json) + 3) & ~(size_t)3, total = 12 + 8 + jl + 8 + bin;
  unsigned char *g = malloc(total);
  ck_assert_ptr_nonnull(g);
  const uint32_t head[5] = {0x46546C67u, 2, (uint32_t)total, (uint32_t)jl, 0x4E4F534Au};
  memcpy(g, head, sizeof head);
  memset(g + 20, ' ', jl);
  memcpy(g + 20, json, strlen(json));
  const uint32_t bh[2] = {(uint32_t)bin, 0x004E4942u};
  memcpy(g + 20 + jl, bh, sizeof bh);
  memcpy(g + 28 + jl, b, bin);
  free(json);
  free(b);
  *len = total;
  return g;
}

/* ---- the hook in process ---------------------------------------------------------------- */

START_TEST(the_writers_answer_the_same_bytes_on_any_thread_count) {
  size_t len;
  unsigned char *d = grid_glb(&len);
  sk_error err;
  sk_error_clear(&err);
  sk_gltf_extra x;
  size_t est;
  sk_skeleton *s = NULL;
  sk_anim *an = NULL;
  ck_assert_msg(sk_gltf_import_extra(d, len, NULL, 0, 0, &est, false, &s, &an, &x, &err) == 0, "%s at %s", err.text,
                err.pointer);
  sk_geom *geom = sk_geom_ref(x.geom);
  sk_gltf_extra_clear(&x);
  ck_assert_ptr_nonnull(geom);
  ck_assert_uint_eq(geom->prims[0].count, NV);
  ck_assert_uint_ge(geom->prims[0].count, SK_MESH_THREADS_MIN);
  /* slot 0 a bent joint, slot 1 moved: every vertex moves differently */
  float final[48] = {0.8f, 0.6f, 0, 0, -0.6f, 0.8f, 0, 0, 0, 0, 1, 0, 0.25f, -0.5f, 0.125f, 1,
                     1, 0, 0, 0, 0, 0.6f, 0.8f, 0, 0, -0.8f, 0.6f, 0, 0.5f, 1, -2, 1,
                     1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  sk_geom_ray rays[2] = {{.origin = {0, 1, 5}, .dir = {0.01, 0, -1}, .max_distance = INFINITY, .prim = -1},
                         {.origin = {-0.5, 0.2, -5}, .dir = {0, 0.05, 1}, .max_distance = INFINITY, .prim = 0}};
  const unsigned outs = SK_OUT_VERTICES | SK_OUT_NORMALS | SK_OUT_BOUNDS, counts[4] = {1, 2, 3, 16};
  sk_strbuf want[3] = {{0}, {0}, {0}};
  for (int k = 0; k < 4; k++) {
    sk_strbuf got[3] = {{0}, {0}, {0}};
    sk_threads th; /* counts[k] threads a job, the caller's and counts[k] - 1 spare */
    sk_threads_init(&th, counts[k], counts[k] - 1);
    ck_assert_int_eq(sk_threads_start(&th), 0); /* as skinnerd's main: started once */
    ck_assert_uint_eq(sk_threads_workers(&th), counts[k] - 1);
    ck_assert_int_eq(sk_meshout_write_json(geom, outs, final, 3, NULL, 0, false, true, &th, &got[0]), 0);
    ck_assert_int_eq(sk_meshout_write_f32(geom, outs, final, 3, NULL, 0, false, &th, &got[1]), 0);
    ck_assert_int_eq(sk_meshout_write_hits(geom, rays, 2, final, 3, NULL, 0, false, SK_FMT_JSON, true, &th,
                                           &got[2]),
                     0);
    ck_assert_ptr_nonnull(strstr(got[2].data, "\"triangle\":"));
    for (int w = 0; w < 3; w++) {
      if (k == 0) {
        want[w] = got[w];
        continue;
      }
      ck_assert_uint_eq(got[w].len, want[w].len);
      ck_assert_msg(memcmp(got[w].data, want[w].data, got[w].len) == 0, "writer %d, %u threads", w, counts[k]);
      sk_strbuf_free(&got[w]);
    }
    ck_assert_uint_eq(sk_threads_high(&th), counts[k] - 1); /* the writer took them all */
    sk_threads_stop(&th);
  }
  for (int w = 0; w < 3; w++)
    sk_strbuf_free(&want[w]);
  sk_geom_unref(geom);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
  free(d);
}
END_TEST

/* ---- the daemon ------------------------------------------------------------------------- */

static char *ask(sk_daemon *d, const char *body, const char *accept, size_t *n) {
  char h[256];
  snprintf(h, sizeof h, "Content-Type: application/json\r\n%s%s%s", accept ? "Accept: " : "", accept ? accept : "",
           accept ? "\r\n" : "");
  sk_httpc_resp r;
  sk_fixture_request(d, "POST", "/v1/skeletons/grid/pose", h, body, strlen(body), &r);
  ck_assert_msg(r.status == 200, "%d: %.400s", r.status, r.body);
  char *t = malloc(r.len + 1);
  memcpy(t, r.body, r.len);
  t[r.len] = 0;
  *n = r.len;
  sk_httpc_free(&r);
  return t;
}

#define NASK 3
static const char *const bodies[NASK] = {
    "{\"animation\": 0, \"time\": 0.4, \"output\": [\"final\", \"vertices\", \"normals\", \"bounds\"]}",
    "{\"animation\": 0, \"time\": 0.7, \"output\": [\"final\", \"vertices\", \"normals\", \"bounds\", \"hits\"], "
    "\"rays\": [{\"origin\": [0, 1, 5], \"direction\": [0.01, 0, -1]}, "
    "{\"origin\": [-0.5, 0.2, -5], \"direction\": [0, 0.05, 1]}]}",
    "{\"animation\": 0, \"time\": 0.9, \"output\": [\"final\", \"vertices\", \"normals\", \"bounds\", \"hits\"], "
    "\"rays\": [{\"origin\": [0, 1, 5], \"direction\": [0.01, 0, -1]}]}"};

/* The answers (new; free) of a daemon started with --threads `threads`. */
static void answers(const char *threads, const unsigned char *glb, size_t len, char **out, size_t *n) {
  const char *const args[] = {"--threads", threads, "--inline-limit", "0", "--max-body", "16777216",
                              "--max-answer-mb", "256", NULL};
  sk_daemon d;
  sk_fixture_start(&d, args);
  sk_fixture_put(&d, "grid", "model/gltf-binary", glb, len);
  for (int k = 0; k < NASK; k++) {
    out[2 * k] = ask(&d, bodies[k], NULL, &n[2 * k]);
    out[2 * k + 1] = ask(&d, bodies[k], "application/octet-stream", &n[2 * k + 1]);
  }
  sk_fixture_stop(&d);
}

START_TEST(the_daemon_answers_the_same_bytes_with_one_thread_or_two) {
  size_t len;
  unsigned char *glb = grid_glb(&len);
  char *one[2 * NASK], *two[2 * NASK];
  size_t n1[2 * NASK], n2[2 * NASK];
  answers("1", glb, len, one, n1);
  answers("2", glb, len, two, n2);
  ck_assert_ptr_nonnull(strstr(one[0], "\"normals\":["));
  ck_assert_ptr_nonnull(strstr(one[2], "\"triangle\":"));
  for (int k = 0; k < 2 * NASK; k++) {
    ck_assert_uint_gt(n1[k], (size_t)NV * 12);
    ck_assert_uint_eq(n1[k], n2[k]);
    ck_assert_msg(memcmp(one[k], two[k], n1[k]) == 0, "answer %d differs", k);
    free(one[k]);
    free(two[k]);
  }
  free(glb);
}
END_TEST

int main(void) {
  Suite *s = suite_create("mesh_threads");
  TCase *tc = tcase_create("threads");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, the_writers_answer_the_same_bytes_on_any_thread_count);
  tcase_add_test(tc, the_daemon_answers_the_same_bytes_with_one_thread_or_two);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
