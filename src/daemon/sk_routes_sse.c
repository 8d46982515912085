/* sk_routes_sse: GET /v1/skeletons/{id}/stream with Accept:
 * text/event-stream, for clients that cannot upgrade to a WebSocket
 * (proto/stream.md, "Server-Sent Events"). A playback of
 * ?animation=&fps=&frames=s,e[&speed=]: one event per frame k, "id: k"
 * and the base64 of the bytes /pose answers for {"animation", "fps",
 * "frames": [k, k + 1]}, frame k due (k - s) / (fps * speed) s after the
 * first, as the WebSocket playback paces its frames; Last-Event-ID: k
 * resumes at k + 1; "event: end" closes it.
 *
 * Bounds: the first frame is evaluated before the 200, so a bad clip is
 * problem+json; after it, each frame is evaluated when it is due and the
 * client took the previous one (loop-thread work of one /pose); between
 * frames the connection waits suspended on a loop timer
 * (sk_http_respond_paced), so a slow reader holds one event, reserved in
 * the memory budget as a streamed answer (sk_http_reserve_stream: the
 * per-address cap applies), and never more; one that takes nothing for
 * --stall-timeout while a frame waits is cut. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_base64.h"
#include "sk_error.h"
#include "sk_json.h"
#include "sk_problem.h"
#include "sk_routes_int.h"

#define SSE_MAX_FRAMES 10000000LL
/* libmicrohttpd's block: what one ask copies out at most. */
#define SSE_BLOCK 16384
/* A frame asked for this late restarts the schedule from now: a reader
 * that fell behind pauses the clip (as the WebSocket playback does)
 * rather than getting a burst to catch up; a loop that was busy for less
 * catches up, so the frames keep to k / fps. */
#define SSE_SLACK_NS 100000000u

typedef struct sse {
  sk_routes *r;
  sk_http *http;
  char id[SK_CACHE_ID_MAX + 1];
  int fmt;
  json_t *req; /* {"animation", "fps", "frames": [k, k + 1]} */
  long long k, end;
  long long first;    /* the frame due at t0 */
  uint64_t t0;        /* uv_hrtime() when the first frame was due */
  double period_ns;   /* 1 / (fps * speed) */
  bool ended;
  sk_strbuf ev; /* the event being sent */
  size_t off;
} sse;

static void append_b64(sk_strbuf *b, const uint8_t *in, size_t n) {
  if (sk_strbuf_reserve(b, sk_base64_encoded_len(n)) != 0)
    return;
  b->len += sk_base64_encode(in, n, b->data + b->len);
}

/* Frame s->k as the next event (or the problem that ends the playback). */
static int next_event(sse *s, sk_error *err) {
  size_t n, reserved;
  sk_strbuf b = {0};
  sk_cache_entry *e;
  int rc = sk_routes__play_message(s->r, s->id, s->req, s->k, s->fmt, &b, &n, &reserved, &e, err);
  sk_cache_entry_unref(e);
  s->ev.len = s->off = 0;
  if (rc == 0) {
    char head[48];
    int hn = snprintf(head, sizeof head, "id: %lld\ndata: ", s->k);
    sk_strbuf_append(&s->ev, head, (size_t)hn);
    append_b64(&s->ev, (const uint8_t *)b.data, b.len);
    sk_strbuf_append(&s->ev, "\n\n", 2);
    s->k++;
  }
  sk_strbuf_free(&b);
  sk_budget_release(s->r->cfg.budget, reserved); /* the event's copy is in the stream's reservation */
  if (rc == 0 && s->ev.failed)
    rc = sk_error_set(err, SK_ENOMEM, "", "out of memory");
  return rc;
}

static void end_event(sse *s, const sk_error *err, int rc) {
  s->ev.len = s->off = 0;
  s->ended = true;
  if (rc == 0) {
    char t[64];
    int n = snprintf(t, sizeof t, "event: end\ndata: {\"played\":%lld}\n\n", s->end);
    sk_strbuf_append(&s->ev, t, (size_t)n);
    return;
  }
  sk_strbuf_append(&s->ev, "event: problem\ndata: ", 21);
  sk_problem_write(&s->ev, sk_problem_status(rc), sk_error_kind(rc), sk_strerror(rc), err->text, err->pointer,
                   err->line, err->column);
  sk_strbuf_append(&s->ev, "\n\n", 2);
}

/* Frame k's due time, after moving the schedule when the reader is more
 * than SSE_SLACK_NS behind it. */
static uint64_t due_ns(sse *s, uint64_t now) {
  uint64_t due = s->t0 + (uint64_t)((double)(s->k - s->first) * s->period_ns);
  if (now > due + SSE_SLACK_NS) {
    s->t0 = now;
    s->first = s->k;
    due = now;
  }
  return due;
}

static long produce(void *arg, char *dest, size_t cap, uint64_t *wait_ns) {
  sse *s = arg;
  if (s->off == s->ev.len) {
    if (s->ended)
      return 0;
    sk_error err;
    sk_error_clear(&err);
    int rc = 0;
    if (s->k < s->end && sk_http_stopping(s->http)) /* the grace period is for answers, not a 10^7-frame clip */
      rc = sk_error_set(&err, SK_EBUSY, "", "the server is shutting down; reconnect with Last-Event-ID: %lld",
                        s->k - 1);
    else if (s->k < s->end) {
      uint64_t now = uv_hrtime(), due = due_ns(s, now);
      if (due > now) {
        *wait_ns = due - now;
        return 0;
      }
      rc = next_event(s, &err);
    }
    if (rc != 0 || s->ev.len == 0 || s->off == s->ev.len)
      end_event(s, &err, rc); /* past the last frame, or the problem that stops the playback */
  }
  if (s->ev.failed)
    return -1;
  size_t n = s->ev.len - s->off < cap ? s->ev.len - s->off : cap;
  memcpy(dest, s->ev.data + s->off, n);
  s->off += n;
  return (long)n;
}

static void release(void *arg) {
  sse *s = arg;
  json_decref(s->req);
  sk_strbuf_free(&s->ev);
  free(s);
}

/* "s,e" into *a, *z: two decimal integers, 0 <= s < e. */
static bool parse_range(const char *v, long long *a, long long *z) {
  char *end;
  if (v == NULL || *v < '0' || *v > '9')
    return false;
  *a = strtoll(v, &end, 10);
  if (*end != ',' || end[1] < '0' || end[1] > '9')
    return false;
  *z = strtoll(end + 1, &end, 10);
  return *end == 0 && *a >= 0 && *z > *a && *z - *a <= SSE_MAX_FRAMES;
}

void sk_routes__stream_sse(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  const char *anim = sk_http_query(req, "animation"), *fps = sk_http_query(req, "fps"),
             *frames = sk_http_query(req, "frames"), *f = sk_http_query(req, "format"),
             *last = sk_http_header(req, "Last-Event-ID");
  int fmt = f != NULL && strcmp(f, "mat3x4") == 0 ? SK_FMT_MAT3X4 : SK_FMT_F32;
  if (f != NULL && fmt == SK_FMT_F32 && strcmp(f, "f32") != 0) {
    sk_problem(req, SK_EINVAL, "", "?format= is f32 (the default) or mat3x4, not \"%.32s\"", f);
    return;
  }
  if (anim == NULL || fps == NULL || frames == NULL || anim[0] == 0) {
    sk_problem(req, SK_EMISSING, "", "an event stream is a playback: ?animation=CLIP&fps=F&frames=START,END");
    return;
  }
  char *end;
  double fv = strtod(fps, &end);
  if (*end != 0 || end == fps || !(fv > 0 && fv <= 1000)) {
    sk_problem(req, SK_ERANGE, "", "?fps= is a number in (0, 1000]");
    return;
  }
  const char *speed = sk_http_query(req, "speed");
  double sp = 1;
  if (speed != NULL && ((sp = strtod(speed, &end)), *end != 0 || end == speed || !(sp > 0 && sp <= 16))) {
    sk_problem(req, SK_ERANGE, "", "?speed= is a number in (0, 16]");
    return;
  }
  if (fv * sp > 1000) {
    sk_problem(req, SK_ERANGE, "", "?fps= × ?speed= is at most 1000 frames a second");
    return;
  }
  long long a, z;
  if (!parse_range(frames, &a, &z)) {
    sk_problem(req, SK_ERANGE, "", "?frames= is START,END: integers, 0 <= START < END, at most 10^7 frames");
    return;
  }
  if (last != NULL) {
    long long k = strtoll(last, &end, 10);
    if (*last < '0' || *last > '9' || *end != 0 || k < a || k >= z) {
      sk_problem(req, SK_EINVAL, "", "Last-Event-ID is the index of a frame sent, in [%lld, %lld)", a, z);
      return;
    }
    a = k + 1;
  }
  sk_cache_entry *e = sk_routes__entry_or_404(r, req, m);
  if (e == NULL)
    return;
  /* the state, the event (base64 of a pose: 4/3 of its floats, twice for
   * sk_strbuf doubling) and libmicrohttpd's block */
  size_t floats = (e->model->skel->count + 1) * 16;
  size_t bytes = sizeof(sse) + 2 * (floats * sizeof(float) * 4 / 3 + 64) + SSE_BLOCK;
  sk_cache_entry_unref(e);
  size_t cap = 0;
  int rc = sk_http_reserve_stream(req, bytes, &cap);
  if (rc != 0) {
    sk_problem(req, SK_EBUSY, "",
               "an event stream (%zu bytes) does not fit in the memory budget (--memory-mb) or this address's "
               "share (--stream-mb-per-ip) now",
               bytes);
    return;
  }
  sse *s = calloc(1, sizeof *s);
  json_t *req_j = s != NULL ? json_pack("{s:s,s:f,s:[I,I]}", "animation", anim, "fps", fv, "frames", a, a + 1) : NULL;
  if (req_j == NULL) {
    free(s);
    sk_problem(req, SK_ENOMEM, "", "out of memory");
    return;
  }
  s->r = r;
  s->http = req->http;
  snprintf(s->id, sizeof s->id, "%s", m->id);
  s->fmt = fmt;
  s->req = req_j;
  s->k = s->first = a;
  s->end = z;
  s->t0 = uv_hrtime();
  s->period_ns = 1e9 / (fv * sp);
  sk_error err;
  sk_error_clear(&err);
  if (a < z && (rc = next_event(s, &err)) != 0) { /* a bad clip or too much work: problem+json, not an event */
    release(s);
    sk_problem_err(req, &err, rc);
    return;
  }
  if (a >= z)
    end_event(s, &err, 0);
  static const char *const hdr[] = {"Cache-Control", "no-store", "X-Accel-Buffering", "no", NULL};
  sk_http_respond_paced(req, 200, "text/event-stream", SSE_BLOCK, r->cfg.stall_ms, produce, s, release, hdr);
}
