/* Fuzz target: the WebSocket reader of streaming sessions (sk_ws).
 *
 * Input: two bytes choosing the message size limit (1 .. 4096 bytes, so
 * the limit is hit), one byte seeding how the rest is cut into reads, then
 * the bytes a client sends after the 101. The reader is fed those pieces
 * as the session's socket would hand them over, and the promises checked
 * are the ones sk_routes_stream relies on:
 * - a read is consumed in full unless an event stops it, and never past
 *   its end; an event consumes at least one byte;
 * - a message is a text or binary one, within the limit, UTF-8 when text;
 *   a control payload is at most 125 bytes; a close's code is 1005 or one
 *   RFC 6455 allows;
 * - an error gives a close code and a reason, and the reader stays failed;
 * - the reader never holds more than the limit;
 * - the events do not depend on how the bytes were cut: the same stream
 *   fed in one read gives the same events, payloads included;
 * - a message framed again by sk_ws_frame_header (masked, in one frame)
 *   reads back as the same message. */
#include <string.h>

#include "sk_hash.h"
#include "sk_ws.h"
#include "sk_fuzz.h"

#define WS_MAX_EVENTS 4096

typedef struct ws_seen {
  int type;
  unsigned opcode;
  size_t len;
  uint16_t code;
  uint64_t hash;
} ws_seen;

typedef struct ws_run {
  ws_seen ev[WS_MAX_EVENTS];
  size_t n;
  bool failed;
} ws_run;

static bool close_code_sent_ok(unsigned c) {
  return c == 1005 || (c >= 1000 && c <= 1003) || (c >= 1007 && c <= 1011) || (c >= 3000 && c <= 4999);
}

/* A message read back through a fresh reader after framing it again. */
static void check_reframed(const sk_ws_event *ev, size_t max_message) {
  uint8_t hdr[SK_WS_HEADER_MAX];
  static const uint8_t mask[4] = {0x37, 0xfa, 0x21, 0x3d};
  size_t h = sk_ws_frame_header(hdr, true, ev->opcode, ev->len, mask);
  SK_FUZZ_CHECK(h >= 6 && h <= SK_WS_HEADER_MAX);
  uint8_t *frame = malloc(h + ev->len + 1);
  SK_FUZZ_CHECK(frame != NULL);
  memcpy(frame, hdr, h);
  if (ev->len > 0)
    memcpy(frame + h, ev->data, ev->len);
  sk_ws_mask(frame + h, ev->len, mask, 0);
  sk_ws_reader r = {.max_message = max_message, .require_mask = true};
  sk_ws_event back;
  size_t used;
  int type = sk_ws_reader_feed(&r, frame, h + ev->len, &used, &back);
  SK_FUZZ_CHECK(type == SK_WS_EV_MESSAGE && used == h + ev->len);
  SK_FUZZ_CHECK(back.opcode == ev->opcode && back.len == ev->len);
  SK_FUZZ_CHECK(ev->len == 0 || memcmp(back.data, ev->data, ev->len) == 0);
  sk_ws_reader_free(&r);
  free(frame);
}

static void check_event(const sk_ws_event *ev, const sk_ws_reader *r, bool reframe) {
  switch (ev->type) {
  case SK_WS_EV_MESSAGE:
    SK_FUZZ_CHECK(ev->opcode == SK_WS_TEXT || ev->opcode == SK_WS_BINARY);
    SK_FUZZ_CHECK(ev->len <= r->max_message);
    SK_FUZZ_CHECK(ev->opcode != SK_WS_TEXT || sk_ws_utf8_ok(ev->data, ev->len));
    if (reframe)
      check_reframed(ev, r->max_message);
    break;
  case SK_WS_EV_PING:
  case SK_WS_EV_PONG:
    SK_FUZZ_CHECK(ev->len <= SK_WS_CONTROL_MAX);
    break;
  case SK_WS_EV_CLOSE:
    SK_FUZZ_CHECK(ev->len <= SK_WS_CONTROL_MAX && ev->len != 1);
    SK_FUZZ_CHECK(close_code_sent_ok(ev->code));
    break;
  case SK_WS_EV_ERROR:
    SK_FUZZ_CHECK(ev->code == SK_WS_PROTOCOL || ev->code == SK_WS_BAD_DATA || ev->code == SK_WS_TOO_BIG ||
                  ev->code == SK_WS_INTERNAL);
    SK_FUZZ_CHECK(ev->why != NULL && ev->why[0] != '\0');
    break;
  default:
    SK_FUZZ_CHECK(0);
  }
}

/* Feeds data[0..n) cut as the seed says (seed 0: one read), recording each
 * event; stops at the first error, as the session closes then. */
static void run(const uint8_t *data, size_t n, size_t max_message, unsigned seed, bool reframe, ws_run *out) {
  sk_ws_reader r = {.max_message = max_message, .require_mask = true};
  uint32_t lcg = seed * 2654435761u + 1;
  size_t at = 0;
  out->n = 0;
  out->failed = false;
  while (at < n && !out->failed) {
    size_t piece = n - at;
    if (seed != 0) {
      lcg = lcg * 1664525u + 1013904223u;
      size_t want = 1 + (lcg >> 16) % 97;
      piece = want < piece ? want : piece;
    }
    size_t off = 0;
    while (off < piece) {
      sk_ws_event ev;
      size_t used = 12345;
      int type = sk_ws_reader_feed(&r, data + at + off, piece - off, &used, &ev);
      SK_FUZZ_CHECK(type == ev.type);
      SK_FUZZ_CHECK(used <= piece - off);
      SK_FUZZ_CHECK(sk_ws_reader_held(&r) <= max_message || sk_ws_reader_held(&r) <= 256);
      if (type == SK_WS_EV_NONE) {
        SK_FUZZ_CHECK(used == piece - off);
        off += used;
        break;
      }
      SK_FUZZ_CHECK(used > 0 || type == SK_WS_EV_ERROR);
      check_event(&ev, &r, reframe);
      if (out->n < WS_MAX_EVENTS) {
        ws_seen *s = &out->ev[out->n++];
        s->type = type;
        s->opcode = ev.opcode;
        s->len = ev.len;
        s->code = ev.code;
        s->hash = ev.len > 0 ? sk_hash_fnv64(SK_HASH_FNV64_INIT, ev.data, ev.len) : 0;
      }
      off += used;
      if (type == SK_WS_EV_ERROR) {
        sk_ws_event again;
        size_t used2;
        static const uint8_t one = 0x81;
        SK_FUZZ_CHECK(sk_ws_reader_feed(&r, &one, 1, &used2, &again) == SK_WS_EV_ERROR);
        out->failed = true;
        break;
      }
    }
    at += off;
  }
  sk_ws_reader_free(&r);
}

int sk_fuzz_ws(const uint8_t *data, size_t size) {
  if (size < 3 || size > SK_FUZZ_MAX_INPUT)
    return 0;
  size_t max_message = 1 + (((size_t)data[0] << 8 | data[1]) % 4096);
  unsigned seed = data[2];
  ws_run *cut = malloc(sizeof *cut), *whole = malloc(sizeof *whole);
  SK_FUZZ_CHECK(cut != NULL && whole != NULL);
  run(data + 3, size - 3, max_message, seed, true, cut);
  run(data + 3, size - 3, max_message, 0, false, whole);
  SK_FUZZ_CHECK(cut->n == whole->n && cut->failed == whole->failed);
  for (size_t i = 0; i < cut->n; i++) {
    const ws_seen *a = &cut->ev[i], *b = &whole->ev[i];
    SK_FUZZ_CHECK(a->type == b->type && a->opcode == b->opcode && a->len == b->len && a->code == b->code &&
                  a->hash == b->hash);
  }
  free(cut);
  free(whole);
  return 0;
}

#ifndef SK_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return sk_fuzz_ws(data, size); }
#endif
