/* sk_reply: read answers costed before they are written, and sent
 * by one path (see the header for the bounds and why). */
#include <stdlib.h>
#include <string.h>

#include "sk_reply.h"
#include "sk_numfmt.h"
#include "sk_problem.h"

#define F64 (SK_NUMFMT_F64_MAX + 1) /* a double and its separator */
#define F32 (SK_NUMFMT_F32_MAX + 1)
#define INT 22                      /* a size_t or int64 and its separator */

size_t sk_reply_cost_string(const char *s) { return 6 * (s ? strlen(s) : 0) + 2; }

size_t sk_reply_cost_clip(const sk_anim *a, const sk_skeleton *s, size_t clip) {
  const sk_anim_clip *c = &a->clips[clip];
  /* name, index, fps/from/to, duration, the bones' brackets */
  size_t n = 64 + sk_reply_cost_string(c->name) + 4 * (16 + F64) + 16;
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    /* the bone's header, counted for each of its channels: a bound */
    const char *bone = ch->bone >= 0 && (size_t)ch->bone < s->count ? s->bones[ch->bone].name : NULL;
    n += 32 + sk_reply_cost_string(bone);
    /* path, interpolation, key count, brackets; each key time */
    n += 96 + INT + ch->count * F64;
  }
  for (size_t k = 0; k < c->events.count; k++) /* name, frame, onlyOnce, keys */
    n += 48 + sk_reply_cost_string(c->events.ev[k].name) + F64;
  return n;
}

size_t sk_reply_cost_clips(const sk_anim *a) {
  size_t n = 2;
  for (size_t c = 0; a != NULL && c < a->clip_count; c++)
    n += 64 + sk_reply_cost_string(a->clips[c].name) + 3 * INT + 4 * (16 + F64);
  return n;
}

size_t sk_reply_cost_skeleton(const sk_cache_entry *e) {
  const sk_skeleton *s = e->model->skel;
  size_t n = 128 + sk_reply_cost_string(e->id);
  for (size_t i = 0; i < s->count; i++) {
    const sk_bone *b = &s->bones[i];
    size_t name = sk_reply_cost_string(b->name);
    size_t parent = b->parent >= 0 && (size_t)b->parent < s->count ? sk_reply_cost_string(s->bones[b->parent].name) : 4;
    /* order and slots; the bone: name, parent, index, length, 3 matrices */
    n += name + 1 + INT + 64 + name + parent + INT + F64 + 3 * (16 * F32 + 2);
  }
  n += e->model->anim != NULL ? sk_reply_cost_clips(e->model->anim) : 2;
  n += 32 + (e->model->mesh_json ? strlen(e->model->mesh_json) : 4) + INT +
       (e->model->skins_json ? strlen(e->model->skins_json) : 0);
  return n;
}

int sk_reply_cost_check(size_t bound, size_t max_answer, sk_error *err) {
  if (max_answer != 0 && bound > max_answer)
    return sk_error_set(err, SK_ETOOBIG, "", "the answer would take up to %zu bytes; the limit is %zu (--max-answer-mb)",
                        bound, max_answer);
  return 0;
}

/* ---- sending ---------------------------------------------------------------------- */

typedef struct answer_job {
  sk_reply a;
  sk_strbuf out;
  int rc;
} answer_job;

static void answer_work(void *arg) {
  answer_job *j = arg;
  j->rc = j->a.build(j->a.arg, &j->out);
  if (j->out.failed)
    j->rc = SK_ENOMEM;
}

/* Answers the built text (or why not), releases and frees `j`. Loop thread. */
static void answer_after(sk_http_req *req, void *arg, int status) {
  answer_job *j = arg;
  if (status == SK_EBUSY)
    sk_problem(req, SK_EBUSY, "", "%s waited past its deadline; retry later", j->a.what);
  else if (j->rc == SK_ENOTFINITE)
    sk_problem(req, SK_ENOTFINITE, "", "%s would hold a number past float32's range", j->a.what);
  else if (j->rc != 0 || j->out.data == NULL)
    sk_problem(req, SK_ENOMEM, "", "out of memory writing %s", j->a.what);
  else {
    if (j->a.keep != NULL)
      j->a.keep(j->a.arg, j->out.data, j->out.len);
    size_t len = j->out.len;
    void *data = j->out.data;
    memset(&j->out, 0, sizeof j->out);
    sk_http_respond(req, j->a.status, "application/json", data, len, true, NULL); /* counted against the reservation */
  }
  sk_strbuf_free(&j->out);
  if (j->a.release)
    j->a.release(j->a.arg);
  free(j);
}

void sk_reply_send(sk_http_req *req, const sk_reply *a) {
  if (a->after_write)
    sk_http_charge(req, a->bound);
  else if (sk_reply_cost_check(a->bound, a->max_answer, NULL) != 0) {
    sk_problem(req, SK_ETOOBIG, "", "%s would take up to %zu bytes; the limit is %zu (--max-answer-mb)", a->what,
               a->bound, a->max_answer);
    if (a->release)
      a->release(a->arg);
    return;
  }
  /* Reserved before a byte is written: what the building holds. */
  else if (sk_http_reserve(req, a->bound) != 0) {
    sk_problem(req, SK_EBUSY, "", "%s (up to %zu bytes) does not fit in the memory budget (--memory-mb) now; retry later",
               a->what, a->bound);
    if (a->release)
      a->release(a->arg);
    return;
  }
  answer_job *j = calloc(1, sizeof *j);
  if (j == NULL) {
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    if (a->release)
      a->release(a->arg);
    return;
  }
  j->a = *a;
  if (a->bound < SK_REPLY_INLINE && !a->pooled) {
    answer_work(j);
    answer_after(req, j, 0);
    return;
  }
  if (sk_http_defer(req, answer_work, answer_after, j) != 0) {
    sk_problem(req, SK_EBUSY, "", "too many jobs in flight for %s; retry later", a->what);
    if (a->release)
      a->release(a->arg);
    free(j);
  }
}
