/* GET /v1/skeletons/{id}/animations/{clip}/rootMotion: a clip's root
 * motion as Babylon 9.34's RootMotionClip analyses it (sk_rootmotion), with
 * its options as query parameters under Babylon's names. The analysis is
 * costed (sk_rootmotion_cost against --max-work) before it runs, and runs
 * on the loop thread when small, on the pool past sk_cost's loop_work; each
 * skeleton version keeps what it made (sk_rootframes_get). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sk_gltf_mesh.h"
#include "sk_numfmt.h"
#include "sk_problem.h"
#include "sk_reply.h"
#include "sk_rootframes.h"
#include "sk_rootmotion.h"
#include "sk_routes_int.h"

#define RM_CONTACTS_MAX 64

typedef struct rm_answer {
  sk_cache_entry *e;
  size_t clip;
  sk_rootmotion_opts o;
  int32_t contacts[RM_CONTACTS_MAX];
  double *above; /* owned; above_count * SK_ANIM_TRS (the cost's count) */
  size_t above_count;
  sk_rootframes *rf; /* the model's analysis, or owned when `owned` */
  bool owned;
  sk_routes *r;
  int rc; /* the analysis's on the pool, with err */
  sk_error err;
} rm_answer;

static int parse_number(const char *v, const char *name, double *out, sk_error *err) {
  char *end;
  errno = 0;
  double d = strtod(v, &end);
  if (*v == 0 || *end != 0 || errno != 0 || !isfinite(d))
    return sk_error_set(err, SK_ERANGE, name, "%s is a finite number, not \"%.64s\"", name + 1, v);
  *out = d;
  return 0;
}

static int parse_bool(const char *v, const char *name, bool *out, sk_error *err) {
  if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
    return sk_error_set(err, SK_ERANGE, name, "%s is true or false, not \"%.64s\"", name + 1, v);
  *out = v[0] == 't';
  return 0;
}

/* The options from the query (Babylon's names; rootNode and contactNodes
 * by bone name, contactNodes comma-separated). */
static int parse_options(sk_http_req *req, const sk_skeleton *s, rm_answer *ra, sk_error *err) {
  sk_rootmotion_opts *o = &ra->o;
  sk_rootmotion_opts_default(o);
  const char *v;
  bool b;
  int rc = 0;
  if ((v = sk_http_query(req, "source")) != NULL) {
    if (strcmp(v, "root") == 0)
      o->source = SK_RM_ROOT;
    else if (strcmp(v, "footContact") == 0)
      o->source = SK_RM_FOOT_CONTACT;
    else
      return sk_error_set(err, SK_ERANGE, "/source", "source is \"root\" or \"footContact\", not \"%.64s\"", v);
  }
  if (!rc && (v = sk_http_query(req, "extractRotation")) != NULL && !(rc = parse_bool(v, "/extractRotation", &b, err)))
    o->extract_rotation = b;
  if (!rc && (v = sk_http_query(req, "extractLateralMotion")) != NULL)
    rc = parse_bool(v, "/extractLateralMotion", &o->extract_lateral_motion, err);
  if (!rc && (v = sk_http_query(req, "samplesPerSecond")) != NULL)
    rc = parse_number(v, "/samplesPerSecond", &o->samples_per_second, err);
  if (!rc && (v = sk_http_query(req, "minimumTravel")) != NULL)
    rc = parse_number(v, "/minimumTravel", &o->minimum_travel, err);
  if (!rc && (v = sk_http_query(req, "minimumTurn")) != NULL)
    rc = parse_number(v, "/minimumTurn", &o->minimum_turn, err);
  if (!rc && (v = sk_http_query(req, "directionSnapAngle")) != NULL) {
    rc = parse_number(v, "/directionSnapAngle", &o->direction_snap_angle, err);
    o->has_snap = true;
  }
  if (!rc && (v = sk_http_query(req, "rootNode")) != NULL && (o->root_node = sk_skeleton_find(s, v)) < 0)
    rc = sk_error_set(err, SK_EUNKNOWN, "/rootNode", "rootNode \"%.64s\" is not a bone of the skeleton", v);
  if (!rc && (v = sk_http_query(req, "contactNodes")) != NULL) {
    size_t n = 0;
    for (const char *p = v; !rc; n++) {
      size_t len = strcspn(p, ",");
      char name[256];
      if (n == RM_CONTACTS_MAX)
        return sk_error_set(err, SK_ERANGE, "/contactNodes", "at most %d contactNodes", RM_CONTACTS_MAX);
      if (len == 0 || len >= sizeof name)
        return sk_error_set(err, SK_EUNKNOWN, "/contactNodes", "contactNodes[%zu] is not a bone name", n);
      memcpy(name, p, len);
      name[len] = 0;
      if ((ra->contacts[n] = sk_skeleton_find(s, name)) < 0)
        return sk_error_set(err, SK_EUNKNOWN, "/contactNodes", "contactNodes[%zu] \"%s\" is not a bone of the skeleton",
                            n, name);
      if (p[len] == 0) {
        n++;
        break;
      }
      p += len + 1;
    }
    o->contact_nodes = ra->contacts, o->contact_count = n;
  }
  return rc;
}

static int put_num(sk_strbuf *b, const char *key, double v) {
  char num[SK_NUMFMT_F64_MAX + 1];
  size_t n = sk_numfmt_f64(v == 0 ? 0 : v, num);
  return sk_strbuf_append(b, key, strlen(key)) || sk_strbuf_append(b, num, n);
}

static int put_vec(sk_strbuf *b, const char *key, const double *v) {
  int rc = sk_strbuf_append(b, key, strlen(key));
  for (int i = 0; i < 3 && !rc; i++)
    rc = put_num(b, i == 0 ? "[" : ",", v[i]);
  return rc || sk_strbuf_append(b, "]", 1);
}

static int put_name(sk_strbuf *b, const char *key, const char *name) {
  int rc = sk_strbuf_append(b, key, strlen(key));
  if (name == NULL)
    return rc || sk_strbuf_append(b, "null", 4);
  json_t *j = json_string(name);
  char *s = j != NULL ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
  json_decref(j);
  if (s == NULL)
    return SK_ENOMEM;
  rc = rc || sk_strbuf_append(b, s, strlen(s));
  free(s);
  return rc;
}

static int rm_build(void *arg, sk_strbuf *out) {
  rm_answer *ra = arg;
  const sk_model *m = ra->e->model;
  const sk_rootmotion rm = ra->rf->rm;
  int rc;
  const sk_skeleton *s = m->skel;
  double dist = rm.cycle_offset[0] * rm.travel_direction[0] + rm.cycle_offset[1] * rm.travel_direction[1] +
                rm.cycle_offset[2] * rm.travel_direction[2];
  rc = put_name(out, "{\"animation\":", m->anim->clips[ra->clip].name) ||
       put_name(out, ",\"source\":", sk_rootmotion_source_name(rm.source)) ||
       put_name(out, ",\"rootNode\":", rm.root_node >= 0 ? s->bones[rm.root_node].name : NULL) ||
       sk_strbuf_append(out, ",\"contactNodes\":[", 17);
  for (size_t i = 0; i < rm.contact_count && !rc; i++)
    rc = put_name(out, i ? "," : "", s->bones[rm.contacts[i]].name);
  rc = rc || sk_strbuf_append(out, "]", 1) || put_num(out, ",\"fromFrame\":", rm.from_frame) ||
       put_num(out, ",\"toFrame\":", rm.to_frame) || put_num(out, ",\"duration\":", rm.duration) ||
       put_num(out, ",\"characterHeight\":", rm.character_height) ||
       sk_strbuf_append(out, rm.extracts_rotation ? ",\"extractsRotation\":true" : ",\"extractsRotation\":false",
                        rm.extracts_rotation ? 24 : 25) ||
       put_vec(out, ",\"travelDirection\":", rm.travel_direction) ||
       put_vec(out, ",\"cycleOffset\":", rm.cycle_offset) || put_num(out, ",\"cycleDistance\":", dist) ||
       put_num(out, ",\"cycleRotation\":", rm.cycle_rotation) ||
       put_num(out, ",\"averageSpeed\":", rm.duration > 0 ? dist / rm.duration : 0) ||
       put_num(out, ",\"samples\":", (double)rm.samples) || sk_strbuf_append(out, "}", 1);
  return rc ? SK_ENOMEM : 0;
}

static void rm_release(void *arg) {
  rm_answer *ra = arg;
  sk_cache_entry_unref(ra->e);
  if (ra->owned)
    sk_rootframes_free(ra->rf);
  free(ra->above);
  free(ra);
}

static void send_answer(sk_routes *r, sk_http_req *req, rm_answer *ra) {
  const sk_model *md = ra->e->model;
  /* Names are escaped to at most 6 bytes a byte; the numbers are short. */
  size_t bound = 1024 + strlen(md->anim->clips[ra->clip].name) * 6 + md->skel->names_size * 6 + md->skel->count * 4;
  const sk_reply a = {.bound = bound, .max_answer = r->cfg.cost.max_answer, .status = 200,
                      .what = "the clip's root motion", .build = rm_build, .release = rm_release, .arg = ra};
  sk_reply_send(req, &a);
}

/* On the pool: the immutable model's analysis (kept in it when it fits). */
static void analyse_work(void *arg) {
  rm_answer *ra = arg;
  sk_error_clear(&ra->err);
  ra->rc = sk_rootframes_get(ra->e->model, ra->clip, &ra->o, &ra->rf, &ra->owned, &ra->err);
}

static void analyse_after(sk_http_req *req, void *arg, int status) {
  rm_answer *ra = arg;
  if (status == SK_EBUSY || ra->rc != 0) {
    if (status == SK_EBUSY)
      sk_problem(req, SK_EBUSY, "", "the analysis waited past its deadline; retry later");
    else
      sk_problem_err(req, &ra->err, ra->rc);
    rm_release(ra);
    return;
  }
  send_answer(ra->r, req, ra);
}

void sk_routes__root_motion(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  size_t clip;
  sk_cache_entry *e = sk_routes__clip_or_404(r, req, m, &clip);
  if (e == NULL)
    return;
  const sk_model *md = e->model;
  rm_answer *ra = calloc(1, sizeof *ra);
  if (ra == NULL) {
    sk_cache_entry_unref(e);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  ra->e = e, ra->clip = clip;
  sk_error err;
  sk_error_clear(&err);
  int rc = parse_options(req, md->skel, ra, &err);
  if (!rc && sk_gltf_mesh_chain_above(md->mesh_json, false, &ra->above, &ra->above_count) != 0)
    rc = sk_error_set(&err, SK_ENOMEM, "", "out of memory");
  /* The options' checks first, so a bad samplesPerSecond is named as such. */
  if (!rc && ra->o.samples_per_second > 0 && ra->o.samples_per_second <= SK_RM_MAX_SAMPLES_PER_SECOND) {
    size_t cost = sk_rootmotion_cost(md->skel, md->anim, clip, ra->above_count, &ra->o);
    if (cost > r->cfg.cost.max_work)
      rc = sk_error_set(&err, SK_ETOOBIG, "/samplesPerSecond",
                        "the analysis costs %zu work units, over --max-work %llu: ask fewer samplesPerSecond", cost,
                        (unsigned long long)r->cfg.cost.max_work);
  }
  /* The version's kept analysis, or one made here when it is small, on the
   * pool when it is big (past loop_work, as a pose's sampling): either
   * way before the answer is built, so that Babylon's refusals and the
   * options' are 4xx answers rather than a failed build. */
  if (!rc && (ra->rf = sk_rootframes_find(md, clip, &ra->o)) == NULL &&
      sk_rootmotion_cost(md->skel, md->anim, clip, ra->above_count, &ra->o) > r->cfg.cost.loop_work) {
    ra->r = r;
    if (sk_http_defer(req, analyse_work, analyse_after, ra) != 0) {
      sk_problem(req, SK_EBUSY, "", "too many jobs in flight; retry later");
      rm_release(ra);
    }
    return;
  }
  if (!rc && ra->rf == NULL)
    rc = sk_rootframes_get(md, clip, &ra->o, &ra->rf, &ra->owned, &err);
  if (rc != 0) {
    sk_problem_err(req, &err, rc);
    rm_release(ra);
    return;
  }
  send_answer(r, req, ra);
}
