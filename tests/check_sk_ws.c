/* sk_ws: RFC 6455's examples (1.3 handshake, 5.7 frames), fragmentation,
 * control frames between fragments, byte-by-byte feeding, the size limit
 * and the protocol errors a server closes with. */
#include "sk_ws.h"

#include "sk_testutil.h"

static const uint8_t k_mask[4] = {0x37, 0xfa, 0x21, 0x3d};

START_TEST(the_handshake_answers_rfc_6455s_example) {
  char a[SK_WS_ACCEPT_LEN + 1];
  ck_assert_int_eq(sk_ws_accept("dGhlIHNhbXBsZSBub25jZQ==", a), 0);
  ck_assert_str_eq(a, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  ck_assert_int_eq(sk_ws_accept("dGhlIHNhbXBsZSBub25jZQ=", a), -1);  /* 23 characters */
  ck_assert_int_eq(sk_ws_accept("dGhlIHNhbXBsZSBub25jZR==", a), -1); /* not canonical */
  ck_assert_int_eq(sk_ws_accept("dGhlIHNhbXBsZSBub25j!Q==", a), -1);
  ck_assert_int_eq(sk_ws_accept("", a), -1);
  ck_assert_int_eq(sk_ws_accept(NULL, a), -1);
}
END_TEST

START_TEST(headers_are_rfc_6455s_examples) {
  uint8_t h[SK_WS_HEADER_MAX];
  ck_assert_uint_eq(sk_ws_frame_header(h, true, SK_WS_TEXT, 5, NULL), 2);
  ck_assert_uint_eq(h[0], 0x81);
  ck_assert_uint_eq(h[1], 0x05);
  ck_assert_uint_eq(sk_ws_frame_header(h, true, SK_WS_TEXT, 5, k_mask), 6);
  ck_assert_uint_eq(h[1], 0x85);
  ck_assert_int_eq(memcmp(h + 2, k_mask, 4), 0);
  static const uint8_t b256[] = {0x82, 0x7e, 0x01, 0x00};
  ck_assert_uint_eq(sk_ws_frame_header(h, true, SK_WS_BINARY, 256, NULL), 4);
  ck_assert_int_eq(memcmp(h, b256, 4), 0);
  static const uint8_t b64k[] = {0x82, 0x7f, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00};
  ck_assert_uint_eq(sk_ws_frame_header(h, true, SK_WS_BINARY, 65536, NULL), 10);
  ck_assert_int_eq(memcmp(h, b64k, 10), 0);
  ck_assert_uint_eq(sk_ws_frame_header(h, false, SK_WS_CONT, 125, NULL), 2);
  ck_assert_uint_eq(h[0], 0x00);
  ck_assert_uint_eq(h[1], 125);
}
END_TEST

static sk_ws_reader reader(bool mask, size_t max) {
  sk_ws_reader r;
  memset(&r, 0, sizeof r);
  r.require_mask = mask;
  r.max_message = max;
  return r;
}

START_TEST(the_readers_examples_are_rfc_6455s) {
  static const uint8_t plain[] = {0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f};
  static const uint8_t masked[] = {0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58};
  static const uint8_t frags[] = {0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f};
  static const uint8_t ping[] = {0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f};
  static const uint8_t pong[] = {0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58};
  struct {
    const uint8_t *b;
    size_t n;
    int type;
  } cases[] = {{plain, sizeof plain, SK_WS_EV_MESSAGE},
               {masked, sizeof masked, SK_WS_EV_MESSAGE},
               {frags, sizeof frags, SK_WS_EV_MESSAGE},
               {ping, sizeof ping, SK_WS_EV_PING},
               {pong, sizeof pong, SK_WS_EV_PONG}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    for (int bytewise = 0; bytewise < 2; bytewise++) {
      sk_ws_reader r = reader(false, 64);
      sk_ws_event ev;
      size_t at = 0, used;
      int t = SK_WS_EV_NONE;
      while (at < cases[c].n && t == SK_WS_EV_NONE) {
        size_t n = bytewise ? 1 : cases[c].n - at;
        t = sk_ws_reader_feed(&r, cases[c].b + at, n, &used, &ev);
        at += used;
      }
      ck_assert_int_eq(t, cases[c].type);
      ck_assert_uint_eq(at, cases[c].n);
      ck_assert_uint_eq(ev.len, 5);
      ck_assert_int_eq(memcmp(ev.data, "Hello", 5), 0);
      if (t == SK_WS_EV_MESSAGE)
        ck_assert_uint_eq(ev.opcode, SK_WS_TEXT);
      sk_ws_reader_free(&r);
    }
  }
}
END_TEST

/* A client's frame of `n` bytes, masked, appended at out[*at]. */
static void put(uint8_t *out, size_t *at, bool fin, unsigned op, const void *p, size_t n) {
  *at += sk_ws_frame_header(out + *at, fin, op, n, k_mask);
  memcpy(out + *at, p, n);
  sk_ws_mask(out + *at, n, k_mask, 0);
  *at += n;
}

START_TEST(control_frames_come_between_fragments_and_messages_follow) {
  uint8_t buf[512];
  size_t n = 0, used, at = 0;
  put(buf, &n, false, SK_WS_TEXT, "{\"a\":", 5);
  put(buf, &n, true, SK_WS_PING, "p", 1);
  put(buf, &n, true, SK_WS_CONT, "1}", 2);
  put(buf, &n, true, SK_WS_BINARY, "\x00\x01", 2);
  put(buf, &n, true, SK_WS_CLOSE, "\x03\xe8ok", 4);
  sk_ws_reader r = reader(true, 64);
  sk_ws_event ev;
  ck_assert_int_eq(sk_ws_reader_feed(&r, buf, n, &used, &ev), SK_WS_EV_PING);
  ck_assert_uint_eq(ev.len, 1);
  at += used;
  ck_assert_int_eq(sk_ws_reader_feed(&r, buf + at, n - at, &used, &ev), SK_WS_EV_MESSAGE);
  ck_assert_uint_eq(ev.len, 7);
  ck_assert_int_eq(memcmp(ev.data, "{\"a\":1}", 7), 0);
  at += used;
  ck_assert_int_eq(sk_ws_reader_feed(&r, buf + at, n - at, &used, &ev), SK_WS_EV_MESSAGE);
  ck_assert_uint_eq(ev.opcode, SK_WS_BINARY);
  ck_assert_uint_eq(ev.len, 2);
  at += used;
  ck_assert_int_eq(sk_ws_reader_feed(&r, buf + at, n - at, &used, &ev), SK_WS_EV_CLOSE);
  ck_assert_uint_eq(ev.code, 1000);
  at += used;
  ck_assert_uint_eq(at, n);
  sk_ws_reader_free(&r);
}
END_TEST

static int first_error(const uint8_t *b, size_t n, bool mask, size_t max) {
  sk_ws_reader r = reader(mask, max);
  sk_ws_event ev;
  size_t at = 0, used;
  int t = SK_WS_EV_NONE;
  while (at < n) {
    t = sk_ws_reader_feed(&r, b + at, n - at, &used, &ev);
    at += used;
    if (t == SK_WS_EV_ERROR || (t == SK_WS_EV_NONE && used == 0))
      break;
  }
  sk_ws_reader_free(&r);
  return t == SK_WS_EV_ERROR ? ev.code : 0;
}

START_TEST(protocol_errors_name_their_close_code) {
  uint8_t b[256];
  size_t n = 0;
  static const uint8_t unmasked[] = {0x81, 0x01, 'x'};
  ck_assert_int_eq(first_error(unmasked, sizeof unmasked, true, 64), SK_WS_PROTOCOL);
  ck_assert_int_eq(first_error(unmasked, sizeof unmasked, false, 64), 0);
  static const uint8_t rsv[] = {0xc1, 0x80, 0, 0, 0, 0};
  ck_assert_int_eq(first_error(rsv, sizeof rsv, true, 64), SK_WS_PROTOCOL);
  static const uint8_t op3[] = {0x83, 0x80, 0, 0, 0, 0};
  ck_assert_int_eq(first_error(op3, sizeof op3, true, 64), SK_WS_PROTOCOL);
  static const uint8_t cont[] = {0x80, 0x80, 0, 0, 0, 0};
  ck_assert_int_eq(first_error(cont, sizeof cont, true, 64), SK_WS_PROTOCOL);
  static const uint8_t big_ping[] = {0x89, 0xfe, 0, 126, 0, 0, 0, 0};
  ck_assert_int_eq(first_error(big_ping, sizeof big_ping, true, 1024), SK_WS_PROTOCOL);
  static const uint8_t frag_ping[] = {0x09, 0x80, 0, 0, 0, 0};
  ck_assert_int_eq(first_error(frag_ping, sizeof frag_ping, true, 64), SK_WS_PROTOCOL);
  static const uint8_t huge[] = {0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  ck_assert_int_eq(first_error(huge, sizeof huge, true, 64), SK_WS_PROTOCOL);
  static const uint8_t over[] = {0x82, 0xfe, 0x01, 0x00, 0, 0, 0, 0};
  ck_assert_int_eq(first_error(over, sizeof over, true, 255), SK_WS_TOO_BIG);
  n = 0; /* fragments that add up past the limit */
  put(b, &n, false, SK_WS_TEXT, "0123456789", 10);
  put(b, &n, true, SK_WS_CONT, "0123456789", 10);
  ck_assert_int_eq(first_error(b, n, true, 19), SK_WS_TOO_BIG);
  ck_assert_int_eq(first_error(b, n, true, 20), 0);
  n = 0; /* a text message in two frames, the second before the first ended */
  put(b, &n, false, SK_WS_TEXT, "a", 1);
  put(b, &n, true, SK_WS_TEXT, "b", 1);
  ck_assert_int_eq(first_error(b, n, true, 64), SK_WS_PROTOCOL);
  n = 0;
  put(b, &n, true, SK_WS_TEXT, "\xc0\xaf", 2); /* overlong '/' */
  ck_assert_int_eq(first_error(b, n, true, 64), SK_WS_BAD_DATA);
  n = 0;
  put(b, &n, true, SK_WS_BINARY, "\xc0\xaf", 2); /* binary is not checked */
  ck_assert_int_eq(first_error(b, n, true, 64), 0);
  n = 0;
  put(b, &n, true, SK_WS_CLOSE, "\x03", 1);
  ck_assert_int_eq(first_error(b, n, true, 64), SK_WS_PROTOCOL);
  n = 0;
  put(b, &n, true, SK_WS_CLOSE, "\x03\xed", 2); /* 1005 is never sent */
  ck_assert_int_eq(first_error(b, n, true, 64), SK_WS_PROTOCOL);
}
END_TEST

START_TEST(utf8_is_checked_strictly) {
  ck_assert(sk_ws_utf8_ok((const uint8_t *)"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80", 15));
  ck_assert(!sk_ws_utf8_ok((const uint8_t *)"\xed\xa0\x80", 3));     /* a surrogate */
  ck_assert(!sk_ws_utf8_ok((const uint8_t *)"\xf4\x90\x80\x80", 4)); /* past U+10FFFF */
  ck_assert(!sk_ws_utf8_ok((const uint8_t *)"\xe2\x82", 2));         /* cut short */
  ck_assert(!sk_ws_utf8_ok((const uint8_t *)"\xff", 1));
}
END_TEST

START_TEST(a_close_payload_is_the_code_then_the_reason) {
  uint8_t p[SK_WS_CONTROL_MAX];
  ck_assert_uint_eq(sk_ws_close_payload(p, SK_WS_GOING_AWAY, "shutting down"), 15);
  ck_assert_uint_eq(p[0], 0x03);
  ck_assert_uint_eq(p[1], 0xe9);
  char longer[300];
  memset(longer, 'x', sizeof longer - 1);
  longer[sizeof longer - 1] = 0;
  ck_assert_uint_eq(sk_ws_close_payload(p, SK_WS_NORMAL, longer), SK_WS_CONTROL_MAX);
}
END_TEST

START_TEST(a_reader_reuses_its_buffer_and_bounds_it) {
  uint8_t b[128];
  sk_ws_reader r = reader(true, 100);
  for (int i = 0; i < 1000; i++) {
    size_t n = 0, used;
    sk_ws_event ev;
    put(b, &n, true, SK_WS_TEXT, "0123456789012345678901234567890123456789", 40);
    ck_assert_int_eq(sk_ws_reader_feed(&r, b, n, &used, &ev), SK_WS_EV_MESSAGE);
    ck_assert_uint_eq(used, n);
    ck_assert_uint_le(sk_ws_reader_held(&r), 256);
  }
  sk_ws_reader_free(&r);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_ws");
  TCase *t = tcase_create("codec");
  tcase_add_test(t, the_handshake_answers_rfc_6455s_example);
  tcase_add_test(t, headers_are_rfc_6455s_examples);
  tcase_add_test(t, the_readers_examples_are_rfc_6455s);
  tcase_add_test(t, control_frames_come_between_fragments_and_messages_follow);
  tcase_add_test(t, protocol_errors_name_their_close_code);
  tcase_add_test(t, utf8_is_checked_strictly);
  tcase_add_test(t, a_close_payload_is_the_code_then_the_reason);
  tcase_add_test(t, a_reader_reuses_its_buffer_and_bounds_it);
  suite_add_tcase(s, t);
  return sk_test_run(s);
}
