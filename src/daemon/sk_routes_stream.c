/* sk_routes_stream: GET /v1/skeletons/{id}/stream, a WebSocket session
 * (proto/stream.md). Each text message is a pose request as /pose takes
 * it (plus an optional "id"); each answer is one binary message: a small
 * header, then the bytes /pose answers with Accept:
 * application/octet-stream (or mat3x4), built by sk_routes__pose_message.
 *
 * Bounds: a message is at most pool_upload bytes (the work stays inline,
 * on the loop thread); the session's buffers are reserved in the memory
 * budget when it opens and each answer before it is built; a reader that
 * does not take its answers makes the session stop reading requests once
 * SK_STREAM_OUT_HIGH bytes wait (TCP then pushes back on the client), so
 * nothing is buffered without bound. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "sk_error.h"
#include "sk_json.h"
#include "sk_problem.h"
#include "sk_routes_int.h"
#include "sk_ws.h"

/* Answer bytes waiting for the client past which no more requests are
 * read: 200 slow readers then hold 13 MB of answers at most. */
#define SK_STREAM_OUT_HIGH ((size_t)64 * 1024)
/* A session's turn on the loop: past this much work it yields to the
 * loop's other clients (/healthz among them) and goes on in the next
 * iteration; and all sessions together do at most SK_STREAM_ITER_NS of
 * work an iteration, so 200 busy sessions cannot make one long. */
#define SK_STREAM_TURN_NS 100000u
#define SK_STREAM_ITER_NS 2000000u
/* Bytes read from the socket at a time (and held, undecoded, at most). */
#define SK_STREAM_IN 16384
/* The binary header before an answer's bytes (proto/stream.md). */
#define SK_STREAM_HDR 16
#define SK_STREAM_ID_MAX 64
/* The subprotocol a client may offer (with the token one, sk_access.h). */
#define SK_STREAM_PROTOCOL "skinner.v1"

typedef struct session {
  sk_routes *r;
  char id[SK_CACHE_ID_MAX + 1];
  int fmt;
  sk_http_upgrade *u; /* NULL once closed */
  uv_poll_t poll;
  uv_idle_t more; /* a turn ended with requests still to decode */
  uv_timer_t play; /* playback: one frame a tick */
  json_t *play_req; /* {"animation", "fps", "frames": [k, k + 1]}: the frame's /pose request */
  long long play_k, play_end;
  char play_id[SK_STREAM_ID_MAX + 1];
  int fd;
  uv_loop_t *loop;
  int closed; /* handles closed of the three */
  bool started, finishing, close_queued, eof, stopping;
  sk_ws_reader rd;
  uint8_t in[SK_STREAM_IN];
  size_t in_len, in_off;
  sk_strbuf out;
  size_t out_off;
  size_t out_reserved;  /* budget bytes of answers still in `out` */
  size_t base_reserved; /* the session itself: this struct and the reader's message buffer */
  uint32_t seq;         /* answers sent */
} session;

static size_t out_pending(const session *s) { return s->out.len - s->out_off; }

static void queue_frame(session *s, unsigned op, const void *p, size_t n) {
  uint8_t h[SK_WS_HEADER_MAX];
  size_t hn = sk_ws_frame_header(h, true, op, n, NULL);
  if (sk_strbuf_append(&s->out, (const char *)h, hn) != 0 || (n > 0 && sk_strbuf_append(&s->out, p, n) != 0))
    s->out.failed = 1;
}

static void queue_close(session *s, uint16_t code, const char *why) {
  if (s->close_queued)
    return;
  uint8_t p[SK_WS_CONTROL_MAX];
  size_t n = sk_ws_close_payload(p, code, why);
  queue_frame(s, SK_WS_CLOSE, p, n);
  s->close_queued = true;
}

/* A text message {"id": id, "problem": {...}}: the request failed, the session goes on. */
static void queue_problem(session *s, const char *idtext, const sk_error *err, int code) {
  int status = sk_problem_status(code);
  sk_strbuf b = {0};
  sk_strbuf_append(&b, "{\"id\":", 6);
  sk_strbuf_append(&b, idtext[0] ? idtext : "null", idtext[0] ? strlen(idtext) : 4);
  sk_strbuf_append(&b, ",\"problem\":", 11);
  sk_problem_write(&b, status, sk_error_kind(code), sk_strerror(code), err->text, err->pointer, err->line,
                   err->column);
  sk_strbuf_append(&b, "}", 1);
  if (b.failed)
    s->out.failed = 1;
  else
    queue_frame(s, SK_WS_TEXT, b.data, b.len);
  sk_strbuf_free(&b);
}

static void put_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* The binary message: header, id padded to 4 bytes, then /pose's bytes. */
static void queue_answer(session *s, const char *idtext, uint32_t frame, size_t n, size_t mats, const sk_strbuf *b) {
  size_t idn = strlen(idtext), off = SK_STREAM_HDR + ((idn + 3) & ~(size_t)3);
  uint8_t h[SK_STREAM_HDR + SK_STREAM_ID_MAX + 4] = {0};
  put_u32(h, (uint32_t)off);
  put_u32(h + 4, frame);
  put_u32(h + 8, (uint32_t)n);
  put_u32(h + 12, (uint32_t)mats);
  memcpy(h + SK_STREAM_HDR, idtext, idn);
  uint8_t fh[SK_WS_HEADER_MAX];
  size_t fn = sk_ws_frame_header(fh, true, SK_WS_BINARY, off + b->len, NULL);
  if (sk_strbuf_append(&s->out, (const char *)fh, fn) != 0 || sk_strbuf_append(&s->out, (const char *)h, off) != 0 ||
      (b->len > 0 && sk_strbuf_append(&s->out, b->data, b->len) != 0))
    s->out.failed = 1;
}

/* The request's "id" as JSON text into idtext (removed from `j`): a string
 * or an integer, at most SK_STREAM_ID_MAX bytes as text. */
static int take_id(json_t *j, char idtext[SK_STREAM_ID_MAX + 1], sk_error *err) {
  idtext[0] = 0;
  json_t *id = json_object_get(j, "id");
  if (id == NULL)
    return 0;
  if (!json_is_string(id) && !json_is_integer(id))
    return sk_error_set(err, SK_ETYPE, "/id", "expected a string or an integer");
  char *t = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
  if (t == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  size_t n = strlen(t);
  if (n <= SK_STREAM_ID_MAX)
    memcpy(idtext, t, n + 1);
  free(t);
  if (n > SK_STREAM_ID_MAX)
    return sk_error_set(err, SK_ETOOBIG, "/id", "at most %d bytes as JSON text", SK_STREAM_ID_MAX);
  json_object_del(j, "id");
  return 0;
}

static void arm(session *s);

static void play_stop(session *s) {
  uv_timer_stop(&s->play);
  json_decref(s->play_req);
  s->play_req = NULL;
}

/* One frame of the clip being played, unless the reader is behind: then
 * the clip pauses (the frame waits for the next tick), never skipping or
 * buffering more. */
static void on_play(uv_timer_t *t) {
  session *s = t->data;
  if (s->finishing || s->close_queued || s->stopping || s->play_req == NULL) {
    uv_timer_stop(t);
    return;
  }
  if (out_pending(s) > SK_STREAM_OUT_HIGH)
    return;
  sk_error err;
  sk_error_clear(&err);
  size_t n, reserved;
  sk_strbuf b = {0};
  sk_cache_entry *e;
  int rc = sk_routes__play_message(s->r, s->id, s->play_req, s->play_k, s->fmt, &b, &n, &reserved, &e, &err);
  if (rc) {
    queue_problem(s, s->play_id, &err, rc);
    play_stop(s);
  } else {
    queue_answer(s, s->play_id, (uint32_t)s->play_k, n, e->model->skel->count + 1, &b);
    s->out_reserved += reserved;
    if (++s->play_k == s->play_end) {
      sk_strbuf d = {0};
      char tail[64];
      int tn = snprintf(tail, sizeof tail, ",\"played\":%lld}", s->play_end);
      sk_strbuf_append(&d, "{\"id\":", 6);
      sk_strbuf_append(&d, s->play_id[0] ? s->play_id : "null", s->play_id[0] ? strlen(s->play_id) : 4);
      sk_strbuf_append(&d, tail, (size_t)tn);
      if (d.failed)
        s->out.failed = 1;
      else
        queue_frame(s, SK_WS_TEXT, d.data, d.len);
      sk_strbuf_free(&d);
      play_stop(s);
    }
  }
  sk_strbuf_free(&b);
  sk_cache_entry_unref(e);
  arm(s);
}

/* {"play": {"animation", "fps", "frames": [start, end], "speed"?, "loop"?,
 * "ops"?, "mesh"?}} starts pushing frames start..end-1, one every
 * 1 / (fps * speed) s, each the bytes of /pose's {"animation", "fps",
 * "frames": [k, k + 1]} with the ops, mesh and loop given (a page keeps
 * its edits while a clip plays); {"play": null} stops. Replaces any clip
 * being played. The copied members are checked by the first frame's
 * /pose parse, which ends the playback with its problem. */
static int play_start(session *s, const json_t *play, const char *idtext, sk_error *err) {
  play_stop(s);
  if (json_is_null(play))
    return 0;
  static const char *const k_keys[] = {"animation", "fps", "frames", "speed", "loop", "ops", "mesh", NULL};
  static const char *const k_copied[] = {"loop", "ops", "mesh"};
  const json_t *anim = json_object_get(play, "animation"), *fps = json_object_get(play, "fps"),
               *fr = json_object_get(play, "frames"), *speed = json_object_get(play, "speed");
  int rc = 0;
  if (!json_is_object(play))
    return sk_error_set(err, SK_ETYPE, "/play", "expected {\"animation\", \"fps\", \"frames\": [start, end]} or null");
  if ((rc = sk_routes__check_keys(play, k_keys, err)) != 0)
    return rc;
  if (anim == NULL || fps == NULL || fr == NULL)
    return sk_error_set(err, SK_EMISSING, "/play", "a playback needs \"animation\", \"fps\" and \"frames\"");
  double f = json_number_value(fps);
  if (!json_is_number(fps) || !(f > 0 && f <= 1000))
    return sk_error_set(err, SK_ERANGE, "/play/fps", "expected a number in (0, 1000]");
  double sp = speed != NULL ? json_number_value(speed) : 1;
  if (speed != NULL && (!json_is_number(speed) || !(sp > 0 && sp <= 16)))
    return sk_error_set(err, SK_ERANGE, "/play/speed", "expected a number in (0, 16]");
  if (f * sp > 1000)
    return sk_error_set(err, SK_ERANGE, "/play/speed", "fps × speed is at most 1000 frames a second");
  if (!json_is_array(fr) || json_array_size(fr) != 2 || !json_is_integer(json_array_get(fr, 0)) ||
      !json_is_integer(json_array_get(fr, 1)))
    return sk_error_set(err, SK_ETYPE, "/play/frames", "expected [start, end], integers");
  long long a = json_integer_value(json_array_get(fr, 0)), z = json_integer_value(json_array_get(fr, 1));
  if (a < 0 || z <= a || z - a > 10000000)
    return sk_error_set(err, SK_ERANGE, "/play/frames", "expected 0 <= start < end, at most 10^7 frames");
  json_t *req = json_pack("{s:O,s:O,s:[I,I]}", "animation", anim, "fps", fps, "frames", a, a + 1);
  for (size_t i = 0; req != NULL && i < sizeof k_copied / sizeof k_copied[0]; i++) {
    json_t *v = json_object_get(play, k_copied[i]);
    if (v != NULL && json_object_set(req, k_copied[i], v) != 0) {
      json_decref(req);
      req = NULL;
    }
  }
  if (req == NULL)
    return sk_error_set(err, SK_ENOMEM, "", "out of memory");
  s->play_req = req;
  s->play_k = a;
  s->play_end = z;
  snprintf(s->play_id, sizeof s->play_id, "%s", idtext);
  uint64_t ms = (uint64_t)(1000.0 / (f * sp));
  uv_timer_start(&s->play, on_play, 0, ms ? ms : 1);
  return 0;
}

static void on_request(session *s, const uint8_t *text, size_t len) {
  sk_routes *r = s->r;
  sk_error err;
  sk_error_clear(&err);
  char idtext[SK_STREAM_ID_MAX + 1] = "";
  json_t *j = NULL;
  size_t tree = 0, reserved = 0, n = 0;
  sk_cache_entry *e = NULL;
  sk_strbuf b = {0};
  int rc = sk_json_load_budgeted(r->cfg.budget, (const char *)text, len, &j, &tree, &err);
  if (!rc && !json_is_object(j))
    rc = sk_error_set(&err, SK_ETYPE, "", "expected a pose object");
  if (!rc)
    rc = take_id(j, idtext, &err);
  if (!rc && json_object_get(j, "play") != NULL) {
    rc = json_object_size(j) == 1 ? play_start(s, json_object_get(j, "play"), idtext, &err)
                                  : sk_error_set(&err, SK_EINVAL, "", "\"play\" takes no other member but \"id\"");
    if (rc)
      queue_problem(s, idtext, &err, rc);
    json_decref(j);
    sk_budget_release(r->cfg.budget, tree);
    return;
  }
  if (!rc && (e = sk_cache_get(r->cache, s->id)) == NULL)
    rc = sk_error_set(&err, SK_ENOTFOUND, "", "no skeleton with id \"%s\"", s->id);
  if (!rc)
    rc = sk_routes__pose_message(r, e, j, s->fmt, &b, &n, &reserved, &err);
  json_decref(j);
  sk_budget_release(r->cfg.budget, tree);
  if (rc)
    queue_problem(s, idtext, &err, rc);
  else
    queue_answer(s, idtext, s->seq++, n, e->model->skel->count + 1, &b);
  s->out_reserved += reserved;
  sk_strbuf_free(&b);
  sk_cache_entry_unref(e);
}

static void finish(session *s);

/* Decodes what was read while the client takes its answers. */
static void on_more(uv_idle_t *i);

static void process(session *s) {
  const uint64_t t0 = uv_hrtime();
  sk_routes *r = s->r;
  if (r->stream_iter != uv_now(s->loop)) {
    r->stream_iter = uv_now(s->loop);
    r->stream_spent_ns = 0;
  }
  bool yielded = r->stream_spent_ns > SK_STREAM_ITER_NS && s->in_off < s->in_len;
  while (!yielded && !s->close_queued && !s->stopping && s->in_off < s->in_len &&
         out_pending(s) <= SK_STREAM_OUT_HIGH) {
    sk_ws_event ev;
    size_t used;
    int t = sk_ws_reader_feed(&s->rd, s->in + s->in_off, s->in_len - s->in_off, &used, &ev);
    s->in_off += used;
    if (t == SK_WS_EV_MESSAGE && ev.opcode == SK_WS_TEXT)
      on_request(s, ev.data, ev.len);
    else if (t == SK_WS_EV_MESSAGE)
      queue_close(s, 1003, "requests are JSON text messages");
    else if (t == SK_WS_EV_PING)
      queue_frame(s, SK_WS_PONG, ev.data, ev.len);
    else if (t == SK_WS_EV_CLOSE)
      queue_close(s, ev.code == 1005 ? SK_WS_NORMAL : ev.code, "");
    else if (t == SK_WS_EV_ERROR)
      queue_close(s, ev.code, ev.why);
    else if (used == 0)
      break;
    if (uv_hrtime() - t0 > SK_STREAM_TURN_NS || r->stream_spent_ns + (uv_hrtime() - t0) > SK_STREAM_ITER_NS) {
      yielded = true;
      break;
    }
  }
  r->stream_spent_ns += uv_hrtime() - t0;
  if (yielded && !s->finishing)
    uv_idle_start(&s->more, on_more);
  if (s->in_off == s->in_len)
    s->in_off = s->in_len = 0;
  if (s->out.failed) {
    finish(s);
    return;
  }
  arm(s);
}

static void on_more(uv_idle_t *i) {
  uv_idle_stop(i);
  process(i->data);
}

static void on_poll(uv_poll_t *p, int status, int events) {
  session *s = p->data;
  if (status < 0) {
    finish(s);
    return;
  }
  if (events & UV_WRITABLE) {
    ssize_t w = send(s->fd, s->out.data + s->out_off, out_pending(s), MSG_NOSIGNAL);
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      finish(s);
      return;
    }
    if (w > 0)
      s->out_off += (size_t)w;
    if (out_pending(s) == 0) {
      /* every answer reserved is out: the budget gets it back */
      sk_budget_release(s->r->cfg.budget, s->out_reserved);
      s->out_reserved = 0;
      s->out.len = s->out_off = 0;
      if (s->out.cap > SK_STREAM_OUT_HIGH)
        sk_strbuf_free(&s->out); /* a burst's buffer is not kept for an idle session */
    }
  }
  if ((events & UV_READABLE) && s->in_len < sizeof s->in) {
    if (s->in_off > 0) {
      memmove(s->in, s->in + s->in_off, s->in_len - s->in_off);
      s->in_len -= s->in_off;
      s->in_off = 0;
    }
    ssize_t got = recv(s->fd, s->in + s->in_len, sizeof s->in - s->in_len, 0);
    if (got == 0)
      s->eof = true;
    else if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      finish(s);
      return;
    } else if (got > 0)
      s->in_len += (size_t)got;
  }
  process(s);
}

/* Watches for what the session can do next: write while answers wait;
 * read while fewer than SK_STREAM_OUT_HIGH bytes wait (backpressure) and
 * no close was queued. */
static void arm(session *s) {
  if (s->finishing)
    return;
  bool pending = out_pending(s) > 0;
  if (!pending && (s->close_queued || s->eof)) {
    finish(s);
    return;
  }
  int ev = pending ? UV_WRITABLE : 0;
  if (!s->close_queued && !s->eof && !s->stopping && out_pending(s) <= SK_STREAM_OUT_HIGH && s->in_len < sizeof s->in)
    ev |= UV_READABLE;
  if (ev == 0 && uv_is_active((uv_handle_t *)&s->more)) {
    uv_poll_stop(&s->poll); /* a full input buffer, decoded in the next turn */
    return;
  }
  if (ev == 0) {
    finish(s);
    return;
  }
  uv_poll_start(&s->poll, ev, on_poll);
}

static void session_free(session *s) {
  json_decref(s->play_req);
  sk_budget_release(s->r->cfg.budget, s->out_reserved + s->base_reserved);
  sk_ws_reader_free(&s->rd);
  sk_strbuf_free(&s->out);
  free(s);
}

static void on_closed(uv_handle_t *h) {
  session *s = h->data;
  if (++s->closed < 3)
    return;
  if (s->u != NULL)
    sk_http_upgrade_close(s->u);
  session_free(s);
}

static void finish(session *s) {
  if (s->finishing)
    return;
  s->finishing = true;
  uv_close((uv_handle_t *)&s->poll, on_closed);
  uv_close((uv_handle_t *)&s->more, on_closed);
  uv_close((uv_handle_t *)&s->play, on_closed);
}

static void on_ready(void *arg, sk_http_upgrade *u, uv_loop_t *loop, int fd, const char *extra, size_t n) {
  session *s = arg;
  s->u = u;
  s->fd = fd;
  s->loop = loop;
  s->started = true;
  if (uv_poll_init_socket(loop, &s->poll, fd) != 0) {
    sk_http_upgrade_close(u);
    session_free(s);
    return;
  }
  s->poll.data = s;
  uv_idle_init(loop, &s->more);
  s->more.data = s;
  uv_timer_init(loop, &s->play);
  s->play.data = s;
  if (n > sizeof s->in)
    n = sizeof s->in; /* the client cannot have sent that much before the 101 legitimately */
  memcpy(s->in, extra, n);
  s->in_len = n;
  process(s);
}

static void on_stop(void *arg) {
  session *s = arg;
  if (s->finishing)
    return;
  s->stopping = true;
  queue_close(s, SK_WS_GOING_AWAY, "server shutting down");
  arm(s);
}

static void on_abandon(void *arg) {
  session *s = arg;
  if (!s->started) {
    session_free(s);
    return;
  }
  s->u = NULL; /* closed already by sk_http */
  if (!s->finishing) {
    s->finishing = true;
    uv_close((uv_handle_t *)&s->poll, on_closed);
    uv_close((uv_handle_t *)&s->more, on_closed);
  uv_close((uv_handle_t *)&s->play, on_closed);
  }
}

static const sk_http_upgrade_ops k_ops = {on_ready, on_stop, on_abandon};

/* True when the comma-separated header value has `token` (any case). */
static bool has_token(const char *v, const char *token) {
  size_t n = strlen(token);
  while (v != NULL && *v) {
    while (*v == ' ' || *v == '\t' || *v == ',')
      v++;
    const char *e = v;
    while (*e && *e != ',')
      e++;
    const char *t = e;
    while (t > v && (t[-1] == ' ' || t[-1] == '\t'))
      t--;
    if ((size_t)(t - v) == n && strncasecmp(v, token, n) == 0)
      return true;
    v = e;
  }
  return false;
}

/* True when the comma-separated subprotocol list has `name` exactly
 * (subprotocol names are case-sensitive, RFC 6455 4.1). */
static bool offers_protocol(const char *v, const char *name) {
  size_t n = strlen(name);
  for (const char *p = v; p != NULL && *p;) {
    p += strspn(p, " \t,");
    size_t k = strcspn(p, " \t,");
    if (k == n && memcmp(p, name, n) == 0)
      return true;
    p += k;
  }
  return false;
}

/* True when Accept names text/event-stream itself (not through a
 * wildcard: a plain GET with Accept: * / * still gets the 426). */
static bool accepts_events(const char *v) {
  static const char t[] = "text/event-stream";
  for (const char *p = v; p != NULL && *p;) {
    p += strspn(p, " \t,");
    size_t k = strcspn(p, " \t,;");
    if (k == sizeof t - 1 && strncasecmp(p, t, k) == 0)
      return true;
    p += strcspn(p, ",");
  }
  return false;
}

void sk_routes__stream(sk_routes *r, sk_http_req *req, const sk_route_match *m) {
  static const char *const k_v13[] = {"Sec-WebSocket-Version", "13", "Upgrade", "websocket", NULL};
  if (sk_http_header(req, "Upgrade") == NULL && accepts_events(sk_http_header(req, "Accept"))) {
    sk_routes__stream_sse(r, req, m); /* a client that cannot upgrade (sk_routes_sse.c) */
    return;
  }
  if (!has_token(sk_http_header(req, "Upgrade"), "websocket") ||
      !has_token(sk_http_header(req, "Connection"), "upgrade")) {
    sk_problem_send(req, 426, "upgrade-required", "Upgrade Required",
                    "this route is a WebSocket (send Upgrade: websocket and Connection: Upgrade) or, with "
                    "Accept: text/event-stream, an event stream",
                    "", 0, 0, k_v13);
    return;
  }
  const char *ver = sk_http_header(req, "Sec-WebSocket-Version");
  if (ver == NULL || strcmp(ver, "13") != 0) {
    sk_problem_send(req, 426, "upgrade-required", "Upgrade Required", "Sec-WebSocket-Version must be 13", "", 0, 0,
                    k_v13);
    return;
  }
  char accept[SK_WS_ACCEPT_LEN + 1];
  if (sk_ws_accept(sk_http_header(req, "Sec-WebSocket-Key"), accept) != 0) {
    sk_problem(req, SK_EINVAL, "", "Sec-WebSocket-Key must be base64 of 16 bytes");
    return;
  }
  /* Without the header the session has no subprotocol (clients that set
   * Authorization need none); with it, skinner.v1 is the one answered (a
   * browser fails the handshake unless one it offered is selected, and the
   * token entry is never echoed back). */
  const char *protos = sk_http_header(req, "Sec-WebSocket-Protocol");
  if (protos != NULL && !offers_protocol(protos, SK_STREAM_PROTOCOL)) {
    sk_problem(req, SK_EINVAL, "",
               "Sec-WebSocket-Protocol offers no subprotocol spoken here; offer " SK_STREAM_PROTOCOL);
    return;
  }
  const char *f = sk_http_query(req, "format");
  int fmt = SK_FMT_F32;
  if (f != NULL && strcmp(f, "mat3x4") == 0)
    fmt = SK_FMT_MAT3X4;
  else if (f != NULL && strcmp(f, "f32") != 0) {
    sk_problem(req, SK_EINVAL, "", "?format= is f32 (the default) or mat3x4, not \"%s\"", f);
    return;
  }
  sk_cache_entry *e = sk_routes__entry_or_404(r, req, m);
  if (e == NULL)
    return;
  sk_cache_entry_unref(e); /* each request reads the skeleton's version of the moment */
  /* the session, its reader's message buffer and the part of its answers'
   * buffer (up to twice the backpressure mark, sk_strbuf doubling) that
   * the answers' own reservations do not count */
  size_t base = sizeof(session) + r->cfg.pool_upload + 2 * SK_STREAM_OUT_HIGH;
  session *s = NULL;
  if (sk_budget_reserve(r->cfg.budget, base) != 0 || (s = calloc(1, sizeof *s)) == NULL) {
    if (s == NULL)
      sk_budget_release(r->cfg.budget, base);
    sk_problem(req, SK_EBUSY, "", "a session (%zu bytes) does not fit in the memory budget (--memory-mb) now", base);
    return;
  }
  s->r = r;
  s->base_reserved = base;
  snprintf(s->id, sizeof s->id, "%s", m->id);
  s->fmt = fmt;
  s->rd.require_mask = true;
  s->rd.max_message = r->cfg.pool_upload;
  /* No Connection: libmicrohttpd adds "Upgrade"; ours made it "Upgrade, Upgrade", which Node's WebSocket refuses. */
  const char *hdr[] = {"Upgrade", "websocket", "Sec-WebSocket-Accept", accept,
                       protos != NULL ? "Sec-WebSocket-Protocol" : NULL, SK_STREAM_PROTOCOL, NULL};
  sk_http_respond_upgrade(req, hdr, &k_ops, s);
}
