/* sk_ws: RFC 6455 framing (sk_ws.h). */
#include "sk_ws.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdlib.h>
#include <string.h>

#include "sk_base64.h"

/* A key is base64 of 16 bytes: 22 characters of the alphabet and "==";
 * the last one carries 2 bits, so only every 16th letter is canonical, and
 * browsers send canonical keys. */
static bool key_ok(const char *key) {
  uint8_t raw[16];
  return strlen(key) == 24 && key[22] == '=' && key[23] == '=' &&
         sk_base64_decode(key, 22, SK_BASE64_STRICT, raw, sizeof raw) == 16;
}

int sk_ws_accept(const char *key, char out[SK_WS_ACCEPT_LEN + 1]) {
  static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  if (key == NULL || !key_ok(key))
    return -1;
  char cat[24 + sizeof guid];
  memcpy(cat, key, 24);
  memcpy(cat + 24, guid, sizeof guid);
  uint8_t sha[20];
  if (gnutls_hash_fast(GNUTLS_DIG_SHA1, cat, 24 + sizeof guid - 1, sha) != 0)
    return -1;
  sk_base64_encode(sha, sizeof sha, out);
  return 0;
}

size_t sk_ws_frame_header(uint8_t out[SK_WS_HEADER_MAX], bool fin, unsigned opcode, uint64_t len,
                          const uint8_t mask[4]) {
  size_t n = 0;
  out[n++] = (uint8_t)((fin ? 0x80 : 0) | (opcode & 0x0f));
  uint8_t m = mask ? 0x80 : 0;
  if (len < 126) {
    out[n++] = (uint8_t)(m | len);
  } else if (len <= 0xffff) {
    out[n++] = m | 126;
    out[n++] = (uint8_t)(len >> 8);
    out[n++] = (uint8_t)len;
  } else {
    out[n++] = m | 127;
    for (int s = 56; s >= 0; s -= 8)
      out[n++] = (uint8_t)(len >> s);
  }
  if (mask) {
    memcpy(out + n, mask, 4);
    n += 4;
  }
  return n;
}

void sk_ws_mask(uint8_t *p, size_t n, const uint8_t mask[4], uint64_t at) {
  for (size_t i = 0; i < n; i++)
    p[i] ^= mask[(at + i) & 3];
}

bool sk_ws_utf8_ok(const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = s[i];
    size_t k;
    uint32_t cp, min;
    if (c < 0x80) {
      i++;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      k = 1, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      k = 2, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      k = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (n - i <= k)
      return false;
    for (size_t j = 1; j <= k; j++) {
      if ((s[i + j] & 0xc0) != 0x80)
        return false;
      cp = (cp << 6) | (s[i + j] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += k + 1;
  }
  return true;
}

size_t sk_ws_close_payload(uint8_t out[SK_WS_CONTROL_MAX], uint16_t code, const char *reason) {
  out[0] = (uint8_t)(code >> 8);
  out[1] = (uint8_t)code;
  size_t n = reason ? strlen(reason) : 0;
  if (n > SK_WS_CONTROL_MAX - 2)
    n = SK_WS_CONTROL_MAX - 2;
  memcpy(out + 2, reason, n);
  return n + 2;
}

static int fail(sk_ws_reader *r, sk_ws_event *ev, uint16_t code, const char *why) {
  r->failed = true;
  ev->type = SK_WS_EV_ERROR;
  ev->code = code;
  ev->why = why;
  return ev->type;
}

static bool close_code_ok(unsigned c) {
  return (c >= 1000 && c <= 1003) || (c >= 1007 && c <= 1011) || (c >= 3000 && c <= 4999);
}

/* The header is complete: checks it and makes room for its payload. */
static int header_done(sk_ws_reader *r, sk_ws_event *ev) {
  const uint8_t *h = r->hdr;
  r->fin = h[0] & 0x80;
  r->opcode = h[0] & 0x0f;
  r->masked = h[1] & 0x80;
  unsigned l7 = h[1] & 0x7f;
  size_t at = 2;
  if (l7 == 126) {
    r->len = (uint64_t)h[2] << 8 | h[3];
    at = 4;
  } else if (l7 == 127) {
    r->len = 0;
    for (int i = 0; i < 8; i++)
      r->len = r->len << 8 | h[2 + i];
    at = 10;
  } else {
    r->len = l7;
  }
  if (r->masked)
    memcpy(r->mask, h + at, 4);
  r->got = 0;
  if (h[0] & 0x70)
    return fail(r, ev, SK_WS_PROTOCOL, "reserved bits set");
  if (l7 == 127 && (r->len >> 63))
    return fail(r, ev, SK_WS_PROTOCOL, "length over 2^63");
  if (r->require_mask && !r->masked)
    return fail(r, ev, SK_WS_PROTOCOL, "client frames must be masked");
  if (r->opcode >= 8) {
    if (r->opcode > SK_WS_PONG)
      return fail(r, ev, SK_WS_PROTOCOL, "unknown opcode");
    if (!r->fin || r->len > SK_WS_CONTROL_MAX)
      return fail(r, ev, SK_WS_PROTOCOL, "control frames are whole and at most 125 bytes");
    r->ctrl_len = 0;
    return SK_WS_EV_NONE;
  }
  if (r->opcode > SK_WS_BINARY)
    return fail(r, ev, SK_WS_PROTOCOL, "unknown opcode");
  if (r->opcode == SK_WS_CONT && r->msg_op == 0)
    return fail(r, ev, SK_WS_PROTOCOL, "continuation without a message");
  if (r->opcode != SK_WS_CONT && r->msg_op != 0)
    return fail(r, ev, SK_WS_PROTOCOL, "new message inside a fragmented one");
  if (r->len > r->max_message - r->msg_len)
    return fail(r, ev, SK_WS_TOO_BIG, "message over the size limit");
  if (r->opcode != SK_WS_CONT)
    r->msg_op = r->opcode;
  size_t need = r->msg_len + (size_t)r->len;
  if (need > r->msg_cap) {
    size_t cap = r->msg_cap ? r->msg_cap : 256;
    while (cap < need)
      cap = cap > r->max_message / 2 ? r->max_message : cap * 2;
    uint8_t *p = realloc(r->msg, cap ? cap : 1);
    if (p == NULL)
      return fail(r, ev, SK_WS_INTERNAL, "out of memory");
    r->msg = p;
    r->msg_cap = cap;
  }
  return SK_WS_EV_NONE;
}

/* The frame's payload is complete: an event, or none for a fragment. */
static int frame_done(sk_ws_reader *r, sk_ws_event *ev) {
  r->hdr_len = r->hdr_need = 0;
  if (r->opcode >= 8) {
    ev->data = r->ctrl;
    ev->len = r->ctrl_len;
    if (r->opcode == SK_WS_PING)
      return ev->type = SK_WS_EV_PING;
    if (r->opcode == SK_WS_PONG)
      return ev->type = SK_WS_EV_PONG;
    ev->code = 1005;
    if (r->ctrl_len == 1)
      return fail(r, ev, SK_WS_PROTOCOL, "close payload of one byte");
    if (r->ctrl_len >= 2) {
      ev->code = (uint16_t)(r->ctrl[0] << 8 | r->ctrl[1]);
      if (!close_code_ok(ev->code))
        return fail(r, ev, SK_WS_PROTOCOL, "invalid close code");
      if (!sk_ws_utf8_ok(r->ctrl + 2, r->ctrl_len - 2))
        return fail(r, ev, SK_WS_BAD_DATA, "close reason not UTF-8");
    }
    return ev->type = SK_WS_EV_CLOSE;
  }
  if (!r->fin)
    return SK_WS_EV_NONE;
  if (r->msg_op == SK_WS_TEXT && !sk_ws_utf8_ok(r->msg, r->msg_len))
    return fail(r, ev, SK_WS_BAD_DATA, "text message not UTF-8");
  ev->opcode = r->msg_op;
  ev->data = r->msg;
  ev->len = r->msg_len;
  r->deliver = true;
  return ev->type = SK_WS_EV_MESSAGE;
}

int sk_ws_reader_feed(sk_ws_reader *r, const uint8_t *data, size_t len, size_t *used, sk_ws_event *ev) {
  memset(ev, 0, sizeof *ev);
  size_t i = 0;
  *used = 0;
  if (r->failed)
    return fail(r, ev, SK_WS_PROTOCOL, "the session failed");
  if (r->deliver) {
    r->deliver = false;
    r->msg_len = 0;
    r->msg_op = 0;
  }
  while (i < len) {
    if (r->hdr_need == 0)
      r->hdr_need = 2;
    if (r->hdr_len < r->hdr_need) {
      while (i < len && r->hdr_len < r->hdr_need) {
        r->hdr[r->hdr_len++] = data[i++];
        if (r->hdr_len == 2) {
          unsigned l7 = r->hdr[1] & 0x7f;
          r->hdr_need = 2 + (l7 == 126 ? 2 : l7 == 127 ? 8 : 0) + (r->hdr[1] & 0x80 ? 4 : 0);
        }
      }
      if (r->hdr_len < r->hdr_need)
        break;
      if (header_done(r, ev) == SK_WS_EV_ERROR) {
        *used = i;
        return ev->type;
      }
    }
    size_t take = (size_t)(r->len - r->got) < len - i ? (size_t)(r->len - r->got) : len - i;
    if (take > 0) {
      /* Only with a payload: an empty first frame has no message buffer,
       * and NULL + 0 is undefined behaviour the sanitizer build stops on. */
      uint8_t *dst = r->opcode >= 8 ? r->ctrl + r->ctrl_len : r->msg + r->msg_len;
      memcpy(dst, data + i, take);
      if (r->masked)
        sk_ws_mask(dst, take, r->mask, r->got);
    }
    if (r->opcode >= 8)
      r->ctrl_len += take;
    else
      r->msg_len += take;
    r->got += take;
    i += take;
    if (r->got == r->len && frame_done(r, ev) != SK_WS_EV_NONE) {
      *used = i;
      return ev->type;
    }
  }
  *used = i;
  return SK_WS_EV_NONE;
}

size_t sk_ws_reader_held(const sk_ws_reader *r) { return r->msg_cap; }

void sk_ws_reader_free(sk_ws_reader *r) {
  free(r->msg);
  r->msg = NULL;
  r->msg_len = r->msg_cap = 0;
}
