/* sk_ws: RFC 6455 WebSocket codec for streaming sessions. The handshake's
 * Sec-WebSocket-Accept, frame headers, masking, and a reader that turns
 * bytes into whole messages (fragments joined, control frames interleaved,
 * UTF-8 checked for text) within a message size limit. No I/O: the caller
 * moves bytes, so the codec is tested on RFC 6455's own examples. */
#ifndef SK_WS_H
#define SK_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { SK_WS_CONT = 0x0, SK_WS_TEXT = 0x1, SK_WS_BINARY = 0x2, SK_WS_CLOSE = 0x8, SK_WS_PING = 0x9, SK_WS_PONG = 0xA };

/* Close codes (RFC 6455 7.4.1) the daemon sends. */
enum {
  SK_WS_NORMAL = 1000,
  SK_WS_GOING_AWAY = 1001,
  SK_WS_PROTOCOL = 1002,
  SK_WS_BAD_DATA = 1007,
  SK_WS_POLICY = 1008,
  SK_WS_TOO_BIG = 1009,
  SK_WS_INTERNAL = 1011
};

#define SK_WS_ACCEPT_LEN 28 /* base64 of a SHA-1: 20 bytes */
#define SK_WS_HEADER_MAX 14 /* 2 + 8 (length) + 4 (mask) */
#define SK_WS_CONTROL_MAX 125

/* Sec-WebSocket-Accept for the client's Sec-WebSocket-Key into out (NUL
 * terminated). -1 when the key is not base64 of 16 bytes (a 400). */
int sk_ws_accept(const char *key, char out[SK_WS_ACCEPT_LEN + 1]);

/* A frame header of `len` payload bytes into out; mask NULL: unmasked (the
 * server's frames). Returns the header's length. */
size_t sk_ws_frame_header(uint8_t out[SK_WS_HEADER_MAX], bool fin, unsigned opcode, uint64_t len,
                          const uint8_t mask[4]);

/* XORs p[0..n) with the mask, the first byte being payload byte `at`. */
void sk_ws_mask(uint8_t *p, size_t n, const uint8_t mask[4], uint64_t at);

/* True when s[0..n) is well-formed UTF-8 (no overlongs, surrogates or
 * code points past U+10FFFF). */
bool sk_ws_utf8_ok(const uint8_t *s, size_t n);

/* What sk_ws_reader_feed found. */
enum { SK_WS_EV_NONE = 0, SK_WS_EV_MESSAGE, SK_WS_EV_PING, SK_WS_EV_PONG, SK_WS_EV_CLOSE, SK_WS_EV_ERROR };

typedef struct sk_ws_event {
  int type;
  unsigned opcode;      /* SK_WS_TEXT or SK_WS_BINARY for a message */
  const uint8_t *data;  /* message or control payload, valid until the next feed */
  size_t len;
  uint16_t code;        /* close: the peer's code (1005 when none); error: the code to close with */
  const char *why;      /* error: a short reason for the close frame */
} sk_ws_event;

/* A message reader; zero it, then set max_message (bytes of a whole
 * message, fragments joined) and require_mask (true for a server). */
typedef struct sk_ws_reader {
  size_t max_message;
  bool require_mask;
  /* the frame being read */
  uint8_t hdr[SK_WS_HEADER_MAX];
  size_t hdr_len, hdr_need;
  bool fin, masked;
  unsigned opcode;
  uint8_t mask[4];
  uint64_t len, got;
  /* the message being joined (owned; sk_ws_reader_free) */
  uint8_t *msg;
  size_t msg_len, msg_cap;
  unsigned msg_op; /* 0: none in progress */
  bool deliver;    /* a message was handed out: drop it on the next feed */
  uint8_t ctrl[SK_WS_CONTROL_MAX];
  size_t ctrl_len;
  bool failed;
} sk_ws_reader;

/* Consumes data[0..len) up to the end of the first complete message or
 * control frame, or to its end; *used says how far. Returns the event
 * (ev->type; SK_WS_EV_NONE: all consumed, nothing complete). After
 * SK_WS_EV_ERROR the reader stays failed: close with ev->code. */
int sk_ws_reader_feed(sk_ws_reader *r, const uint8_t *data, size_t len, size_t *used, sk_ws_event *ev);

/* Bytes the reader holds for a message being joined. */
size_t sk_ws_reader_held(const sk_ws_reader *r);

void sk_ws_reader_free(sk_ws_reader *r);

/* A close frame's payload (code, then reason cut to fit 123 bytes) into
 * out; returns its length. */
size_t sk_ws_close_payload(uint8_t out[SK_WS_CONTROL_MAX], uint16_t code, const char *reason);

#endif
