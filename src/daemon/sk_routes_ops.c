/* sk_routes_ops: POST /v1/skeletons/{id}/ops, Babylon's Bone API (sk_ops)
 * applied to the stored skeleton.
 *
 * {"ops": [...], "mesh"?: node | null} (absent mesh: the stored default)
 * is parsed and validated whole, applied in order to a copy of the stored
 * version, and the copy is published (written through to the data
 * directory like a PATCH) only when every op went through: any error
 * leaves the stored version as it was. The answer is
 * {"id", "version", "queries": [...]}, the query ops' results in op order.
 * Babylon's lazy absolute matrices are not stored: the next request starts
 * from a freshly built skeleton's state, as a reloaded Babylon scene would.
 * Bodies of pool_upload bytes and more, and op lists over the loop's work
 * bound (sk_cost loop_work), are parsed and applied on the pool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_json.h"
#include "sk_poseops.h"
#include "sk_problem.h"
#include "sk_routes_int.h"

typedef struct ops_job {
  sk_routes *routes;
  sk_cache_entry *entry; /* a reference, or NULL: 404 after the 400 */
  json_t *json;          /* owned: a body parsed on the loop, or NULL */
  const char *data;      /* borrowed from the request: a body to parse on the pool */
  size_t len;
  char id[SK_CACHE_ID_MAX + 1];
  sk_skeleton *copy;     /* the changed copy to publish */
  sk_strbuf queries;
  size_t nq;
  sk_error err;
  int rc;
} ops_job;

static void job_free(ops_job *jb) {
  sk_cache_entry_unref(jb->entry);
  json_decref(jb->json);
  sk_skeleton_destroy(jb->copy);
  sk_strbuf_free(&jb->queries);
  free(jb);
}

/* SK_ETOOBIG when the ops of `j` are over the work limit; *work (units of
 * sk_cost) either way. Lenient on shape: the parser judges it. */
static int ops_cost(const sk_routes *r, const sk_skeleton *s, const json_t *j, uint64_t *work, sk_error *err) {
  uint64_t n = json_array_size(json_object_get(j, "ops"));
  *work = n * 2 * ((uint64_t)s->count + 1);
  if (*work > r->cfg.cost.max_work)
    return sk_error_set(err, SK_ETOOBIG, "/ops", "%llu ops on %zu bones are over the work limit",
                        (unsigned long long)n, s->count);
  return 0;
}

static void apply(ops_job *jb) {
  jb->rc = sk_poseops_apply_body(jb->entry->model->skel, jb->entry->model->has_mesh ? &jb->entry->model->mesh : NULL,
                                 jb->json, &jb->copy, &jb->queries, &jb->nq, &jb->err);
}

/* Publishes the copy and answers, or answers the job's problem. Frees jb. */
static void finish(sk_http_req *req, ops_job *jb) {
  if (jb->rc) {
    sk_problem_err(req, &jb->err, jb->rc);
    job_free(jb);
    return;
  }
  sk_routes *r = jb->routes;
  if (sk_routes__precondition_failed(r, req)) { /* If-Match against the version published now (412) */
    job_free(jb);
    return;
  }
  sk_cache_entry *e = NULL;
  sk_anim *anim = sk_anim_ref(jb->entry->model->anim);
  sk_skeleton *copy = jb->copy;
  jb->copy = NULL;
  int rc = sk_cache_put_full(r->cache, jb->entry->id, copy, anim, NULL, NULL, &e);
  if (rc) {
    sk_problem(req, rc, "", "%s",
               rc == SK_ENOSPACE ? "the data directory is full or read-only: nothing was changed"
               : rc == SK_EIO    ? "cannot write the skeleton to the data directory: nothing was changed"
                                 : "cannot store the skeleton");
    job_free(jb);
    return;
  }
  sk_strbuf b = {0};
  char num[32];
  snprintf(num, sizeof num, "%llu", (unsigned long long)e->version);
  sk_strbuf_append(&b, "{\"id\":", 6);
  sk_json_write_string(&b, e->id);
  sk_strbuf_append(&b, ",\"version\":", 11);
  sk_strbuf_append(&b, num, strlen(num));
  sk_strbuf_append(&b, ",\"queries\":[", 12);
  if (jb->queries.len > 0)
    sk_strbuf_append(&b, jb->queries.data, jb->queries.len);
  sk_strbuf_append(&b, "]}", 2);
  sk_cache_entry_unref(e);
  job_free(jb);
  sk_routes__respond_json(req, 200, &b, NULL);
}

static void job_work(void *arg) {
  ops_job *jb = arg;
  size_t tree = 0;
  if (jb->json == NULL) {
    if ((jb->rc = sk_routes__load_pooled(jb->routes, jb->data, jb->len, &jb->json, &tree, &jb->err)) != 0) {
      sk_budget_release(jb->routes->cfg.budget, tree);
      return;
    }
    uint64_t work;
    if (jb->entry == NULL)
      jb->rc = sk_error_set(&jb->err, SK_ENOTFOUND, "", "no skeleton with id \"%s\"", jb->id);
    else
      jb->rc = ops_cost(jb->routes, jb->entry->model->skel, jb->json, &work, &jb->err);
  }
  if (!jb->rc)
    apply(jb);
  json_decref(jb->json);
  jb->json = NULL;
  sk_budget_release(jb->routes->cfg.budget, tree);
}

static void post_ops(sk_routes *r, sk_http_req *req, const sk_route_match *m);

static void job_after(sk_http_req *req, void *arg, int status) {
  ops_job *jb = arg;
  sk_routes *r = jb->routes;
  sk_cache_entry *now = jb->entry != NULL ? sk_cache_get(r->cache, jb->entry->id) : NULL;
  bool stale = jb->rc == 0 && now != jb->entry;
  sk_cache_entry_unref(now);
  if (status == SK_EBUSY) {
    job_free(jb);
    sk_problem(req, SK_EBUSY, "", "the request waited past its deadline; retry later");
  } else if (stale) {
    /* Another update was published meanwhile: apply the ops to that
     * version instead, here (rare; the body is still in req). */
    job_free(jb);
    post_ops(r, req, req->data);
  } else {
    finish(req, jb);
  }
}

static void defer(sk_http_req *req, ops_job *jb) {
  if (sk_http_defer(req, job_work, job_after, jb) != 0) {
    job_free(jb);
    sk_problem(req, SK_EBUSY, "", "too many jobs in flight; retry later");
  }
}

static ops_job *job_new(sk_routes *r, sk_http_req *req) {
  ops_job *jb = calloc(1, sizeof *jb);
  if (jb == NULL)
    sk_problem(req, SK_ENOMEM, "", "out of memory");
  else
    jb->routes = r;
  return jb;
}

static void post_ops(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  json_t *j;
  sk_cache_entry *e = sk_routes__body_and_entry(r, req, m, &j);
  ops_job *jb = e != NULL ? job_new(r, req) : NULL;
  if (jb == NULL) {
    sk_cache_entry_unref(e);
    json_decref(j);
    return;
  }
  jb->entry = e;
  jb->json = j;
  uint64_t work = 0;
  if ((jb->rc = ops_cost(r, e->model->skel, j, &work, &jb->err)) != 0) {
    finish(req, jb);
    return;
  }
  if (work > r->cfg.cost.loop_work) {
    defer(req, jb);
    return;
  }
  apply(jb);
  finish(req, jb);
}

void sk_routes__ops(sk_routes *r, sk_http_req *req, const sk_route_match *m) { post_ops(r, req, m); }

void sk_routes__ops_pooled(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  ops_job *jb = job_new(r, req);
  if (jb == NULL)
    return;
  jb->entry = m->id_ok ? sk_cache_get(r->cache, m->id) : NULL;
  snprintf(jb->id, sizeof jb->id, "%s", m->id_ok ? m->id : "(invalid id)");
  jb->data = req->body.data;
  jb->len = req->body.len;
  defer(req, jb);
}
