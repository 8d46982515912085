/* sk_reply: what a read answer (a clip's detail, a skeleton's JSON,
 * the listings) will take, computed before a byte of it is written, and
 * the one way every such route answers: refused past --max-answer-mb
 * (SK_ETOOBIG, 413), reserved in the memory budget (SK_EBUSY, 503 with
 * Retry-After, when it does not fit now), then written inline when small
 * or on the thread pool when large, and sent from the buffer written.
 *
 * Why: a clip's detail is every key time of every channel; a 160 KB glTF
 * whose channels share one long sampler yields a 30 MB answer, and writing
 * it on the loop thread took ~100 ms a request (8 clients looping on it
 * held /healthz at 0.8 s). The size of such an answer is not visible in
 * the request, so it is bounded from the stored counts first.
 *
 * The bounds are upper bounds, never under the bytes written (tested in
 * tests/check_sk_reply.c): SK_NUMFMT_F64_MAX + 1 bytes a double,
 * SK_NUMFMT_F32_MAX + 1 a float, 6 bytes a byte of a JSON string (\u00XX)
 * plus its quotes. The bound functions are pure; any thread. */
#ifndef SK_REPLY_H
#define SK_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "sk_anim.h"
#include "sk_cache.h"
#include "sk_error.h"
#include "sk_http.h"
#include "sk_skeleton.h"

/* Answers whose bound is below this are written on the loop thread: ~64 KiB
 * of JSON is ~0.5 ms of number formatting. */
#define SK_REPLY_INLINE (64u << 10)

/* Bytes of JSON string `s` as sk_json_write_string writes it, at most. */
size_t sk_reply_cost_string(const char *s);
/* sk_anim_write_clip_json of clip `clip` of `a` on `s`, at most. */
size_t sk_reply_cost_clip(const sk_anim *a, const sk_skeleton *s, size_t clip);
/* sk_anim_write_clips_json of `a` (the clip listing), at most. */
size_t sk_reply_cost_clips(const sk_anim *a);
/* GET /v1/skeletons/{id} of `e` (bones, order, slots, clip listing, mesh,
 * skins), at most. */
size_t sk_reply_cost_skeleton(const sk_cache_entry *e);

/* SK_ETOOBIG with `err` naming --max-answer-mb when `bound` is over
 * `max_answer` bytes (0: no limit); else 0. */
int sk_reply_cost_check(size_t bound, size_t max_answer, sk_error *err);

/* One read answer on its way out. `build(arg, out)` writes the JSON into
 * `out` (0, or SK_ENOMEM: answered 503); it runs on the loop thread or on
 * a pool thread, so it reads only immutable data handed to it in `arg`.
 * `release(arg)` (may be NULL) runs once on the loop thread when the
 * answer is done with or refused: it drops what `arg` holds. */
typedef struct sk_reply {
  size_t bound;        /* sk_reply_cost_* of what build() writes */
  size_t max_answer;   /* --max-answer-mb in bytes; 0: none */
  int status;          /* 200, 201 */
  bool after_write;    /* the answer of a write already published: neither
                          max_answer nor the budget refuse it (it is charged,
                          sk_http_charge), since nothing can be undone now */
  bool pooled;         /* built on the pool whatever its bound (the work is
                          the cost, not the bytes: a clip's bounds) */
  const char *what;    /* the answer's name in a problem ("the clip's detail") */
  int (*build)(void *arg, sk_strbuf *out);
  /* May be NULL: sees the built text (borrowed) on the loop thread before
   * it is sent, to keep a copy (a memo). */
  void (*keep)(void *arg, const char *text, size_t len);
  void (*release)(void *arg);
  void *arg;
} sk_reply;

/* Answers `req` with `a` (copied): 413 past max_answer, 503 (Retry-After)
 * when the bound does not fit the budget now (sk_http_reserve) or the
 * pool's jobs cap is reached, else the built JSON. The bound stays reserved
 * until the request completes. Calls release exactly once. Loop thread. */
void sk_reply_send(sk_http_req *req, const sk_reply *a);

#endif
