/* Fuzz target: the request cost model (sk_cost_add_pose_json), which the
 * pose routes ask before parsing, sampling or allocating anything.
 *
 * The input is a pose body for a two-joint glTF skeleton with two clips
 * (anim_gltf.inc); {"poses": [...]} is added item by item as the batch
 * route does (pointer /poses/<i>, stopping at the first refusal). Each body
 * is costed in the three answer formats under the default limits, under
 * tight ones and under none (every limit UINT64_MAX, as an operator may
 * configure).
 *
 * Checks: the answer is 0 or SK_ETOOBIG with a pointer under the pose's;
 * every counter only grows (saturates, never wraps), the work total too;
 * and the cost is an upper bound of what the parser then builds: when a
 * single pose is accepted and sk_pose_parse_anim takes it, it expands to
 * no more poses than were counted. */
#include <jansson.h>
#include <string.h>

#include "sk_cost.h"
#include "sk_eval.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_fuzz.h"

#include "anim_gltf.inc"

#define COST_MAX_INPUT (64u * 1024u)
#define COST_MAX_BATCH 256

typedef struct {
  sk_skeleton *skel;
  sk_anim *anim;
} cost_fixture;

static const cost_fixture *get_fixture(void) {
  static cost_fixture f;
  static int ready;
  if (!ready) {
    sk_error err;
    sk_error_clear(&err);
    SK_FUZZ_CHECK(sk_gltf_import(k_anim_gltf, sizeof k_anim_gltf - 1, NULL, 0, &f.skel, &f.anim, &err) == 0);
    ready = 1;
  }
  return &f;
}

static int add_checked(sk_cost *c, const sk_cost_limits *l, const cost_fixture *f, const json_t *j, const char *ptr,
                       int fmt) {
  sk_cost before = *c;
  sk_error err;
  sk_error_clear(&err);
  int rc = sk_cost_add_pose_json(c, l, f->skel, f->anim, j, ptr, fmt, &err);
  if (rc) {
    sk_fuzz_check_error(rc, &err);
    SK_FUZZ_CHECK(rc == SK_ETOOBIG);
    SK_FUZZ_CHECK(strncmp(err.pointer, ptr, strlen(ptr)) == 0);
  }
  SK_FUZZ_CHECK(c->poses >= before.poses && c->sample >= before.sample);
  SK_FUZZ_CHECK(c->eval >= before.eval && c->answer >= before.answer);
  uint64_t w = sk_cost_work(c);
  SK_FUZZ_CHECK(w >= c->sample && w >= c->eval && w >= sk_cost_work(&before));
  return rc;
}

/* A single accepted pose: the parser may not build more than was counted. */
static void check_bound(const cost_fixture *f, const json_t *j, uint64_t counted) {
  sk_pose *poses;
  size_t n;
  sk_error err;
  sk_error_clear(&err);
  if (sk_pose_parse_anim(f->skel, f->anim, j, "", NULL, &poses, &n, &err) != 0)
    return;
  if (n > counted)
    fprintf(stderr, "cost counted %llu poses, the parser built %zu\n", (unsigned long long)counted, n);
  SK_FUZZ_CHECK(n <= counted);
  sk_pose_array_free(poses, n);
}

int sk_fuzz_cost(const uint8_t *data, size_t size) {
  if (size > COST_MAX_INPUT)
    return -1;
  const cost_fixture *f = get_fixture();
  json_t *j;
  sk_error err;
  sk_error_clear(&err);
  if (sk_json_load((const char *)data, size, &j, &err) != 0)
    return 0;
  sk_cost_limits limits[3] = {{0}, {.max_frames = 8, .max_layers = 2, .max_poses = 16, .max_work = 200,
                                    .max_answer = 4096, .loop_work = 10}};
  sk_cost_limits_fill(&limits[0]);
  sk_cost_limits_fill(&limits[1]);
  memset(&limits[2], 0xff, sizeof limits[2]);
  const json_t *poses = json_object_get(j, "poses");
  for (size_t li = 0; li < 3; li++) {
    for (int fmt = SK_FMT_JSON; fmt <= SK_FMT_MAT3X4; fmt++) {
      sk_cost c = {0};
      if (json_is_array(poses)) {
        char p[SK_ERROR_POINTER_MAX];
        for (size_t i = 0; i < json_array_size(poses) && i < COST_MAX_BATCH; i++) {
          snprintf(p, sizeof p, "/poses/%zu", i);
          if (add_checked(&c, &limits[li], f, json_array_get(poses, i), p, fmt) != 0)
            break;
        }
      } else if (add_checked(&c, &limits[li], f, j, "", fmt) == 0 && li == 0 && fmt == SK_FMT_JSON) {
        check_bound(f, j, c.poses);
      }
      (void)sk_cost_inline(&c, &limits[li]);
    }
  }
  json_decref(j);
  return 0;
}

#ifndef SK_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return sk_fuzz_cost(data, size) < 0 ? -1 : 0; }
#endif
