/* sk_base64: RFC 4648 base64 and base64url. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "sk_base64.h"
#include "sk_testutil.h"

/* RFC 4648 section 10, padded and as the same text with its '=' dropped. */
static const char *const k_plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
static const char *const k_coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};

/* Decodes s (NUL terminated) with flags into a 64-byte buffer. */
static long dec(const char *s, unsigned flags, uint8_t out[64]) {
  return sk_base64_decode(s, strlen(s), flags, out, 64);
}

START_TEST(rfc4648_vectors_encode) {
  for (size_t i = 0; i < sizeof k_plain / sizeof *k_plain; i++) {
    char out[16];
    size_t n = strlen(k_plain[i]);
    ck_assert_uint_eq(sk_base64_encode((const uint8_t *)k_plain[i], n, out), strlen(k_coded[i]));
    ck_assert_uint_eq(sk_base64_encoded_len(n), strlen(k_coded[i]));
    ck_assert_str_eq(out, k_coded[i]);
  }
}
END_TEST

START_TEST(rfc4648_vectors_decode_padded_and_unpadded) {
  for (size_t i = 0; i < sizeof k_plain / sizeof *k_plain; i++) {
    uint8_t out[64];
    size_t n = strlen(k_plain[i]);
    char bare[16];
    strcpy(bare, k_coded[i]);
    bare[strcspn(bare, "=")] = '\0';
    ck_assert_int_eq(dec(k_coded[i], SK_BASE64_PAD_TRIM, out), (long)n);
    ck_assert_mem_eq(out, k_plain[i], n);
    ck_assert_int_eq(dec(k_coded[i], SK_BASE64_PAD_TRIM | SK_BASE64_STRICT, out), (long)n);
    ck_assert_int_eq(dec(bare, 0, out), (long)n);
    ck_assert_mem_eq(out, k_plain[i], n);
    ck_assert_int_eq(dec(bare, SK_BASE64_URL | SK_BASE64_STRICT, out), (long)n);
    ck_assert_mem_eq(out, k_plain[i], n);
    ck_assert_uint_ge(sk_base64_decoded_max(strlen(bare)), n);
    ck_assert_uint_ge(sk_base64_decoded_max(strlen(k_coded[i])), n);
  }
}
END_TEST

/* Every byte value, every length to 300, through encode and back. */
START_TEST(round_trip_every_length) {
  static uint8_t in[300], back[300];
  static char text[404];
  for (size_t i = 0; i < sizeof in; i++)
    in[i] = (uint8_t)(i * 167u + 13u);
  for (size_t n = 0; n <= sizeof in; n++) {
    size_t t = sk_base64_encode(in, n, text);
    ck_assert_uint_eq(t, sk_base64_encoded_len(n));
    ck_assert_int_eq(sk_base64_decode(text, t, SK_BASE64_PAD_TRIM | SK_BASE64_STRICT, back, n), (long)n);
    ck_assert_mem_eq(back, in, n);
    size_t bare = t;
    while (bare > 0 && text[bare - 1] == '=')
      bare--;
    ck_assert_uint_eq(sk_base64_decoded_max(bare), n); /* exact on unpadded text */
  }
}
END_TEST

/* 0xfb 0xff 0xbf is "+/+/" in the standard alphabet and "-_-_" in the url one. */
START_TEST(url_alphabet) {
  uint8_t out[64];
  static const uint8_t want[] = {0xfb, 0xff, 0xbf};
  ck_assert_int_eq(dec("-_-_", SK_BASE64_URL, out), 3);
  ck_assert_mem_eq(out, want, 3);
  ck_assert_int_eq(dec("+/+/", 0, out), 3);
  ck_assert_mem_eq(out, want, 3);
  ck_assert_int_eq(dec("+/+/", SK_BASE64_URL, out), -1);
  ck_assert_int_eq(dec("-_-_", 0, out), -1);
}
END_TEST

START_TEST(bad_characters_are_refused) {
  uint8_t out[64];
  static const char *const bad[] = {"Zm9v!", "Zm 9v", "Zm9v\n", "Z.==", "Zm9v\x80", "=Zm9v", "Zm=v"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    for (unsigned f = 0; f < 8; f++)
      ck_assert_msg(dec(bad[i], f, out) == -1, "\"%s\" with flags %u", bad[i], f);
  /* '=' is a character outside the alphabet unless trailing padding is trimmed. */
  ck_assert_int_eq(dec("Zg==", 0, out), -1);
  ck_assert_int_eq(dec("Zg==", SK_BASE64_URL | SK_BASE64_STRICT, out), -1);
  /* An embedded NUL is a bad character, not the end. */
  ck_assert_int_eq(sk_base64_decode("Zm\0v", 4, 0, out, 64), -1);
}
END_TEST

/* STRICT refuses a length of 4k+1 and stray bits; without it the leftover
 * bits are dropped, and trimming takes any number of '='. */
START_TEST(strict_and_lenient) {
  uint8_t out[64];
  ck_assert_int_eq(dec("Zm9vY", SK_BASE64_STRICT, out), -1);
  ck_assert_int_eq(dec("Zm9vY", 0, out), 3);
  ck_assert_int_eq(dec("Z", 0, out), 0);
  ck_assert_int_eq(dec("Zh", SK_BASE64_STRICT, out), -1); /* 'h' leaves 0001 below the byte */
  ck_assert_int_eq(dec("Zh", 0, out), 1);
  ck_assert_uint_eq(out[0], 'f');
  ck_assert_int_eq(dec("Zm9=", SK_BASE64_STRICT | SK_BASE64_PAD_TRIM, out), -1);
  ck_assert_int_eq(dec("Zm8=", SK_BASE64_STRICT | SK_BASE64_PAD_TRIM, out), 2);
  ck_assert_int_eq(dec("Zg=====", SK_BASE64_PAD_TRIM, out), 1);
  ck_assert_int_eq(dec("====", SK_BASE64_PAD_TRIM, out), 0);
}
END_TEST

START_TEST(cap_is_kept) {
  uint8_t out[8];
  memset(out, 0xaa, sizeof out);
  ck_assert_int_eq(sk_base64_decode("Zm9vYmFy", 8, 0, out, 5), -1);
  ck_assert_uint_eq(out[5], 0xaa);
  ck_assert_int_eq(sk_base64_decode("Zm9vYmFy", 8, 0, out, 6), 6);
  ck_assert_int_eq(sk_base64_decode("", 0, 0, NULL, 0), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_base64");
  TCase *golden = tcase_create("golden");
  tcase_add_test(golden, rfc4648_vectors_encode);
  tcase_add_test(golden, rfc4648_vectors_decode_padded_and_unpadded);
  tcase_add_test(golden, round_trip_every_length);
  tcase_add_test(golden, url_alphabet);
  suite_add_tcase(s, golden);
  TCase *validity = tcase_create("validity");
  tcase_add_test(validity, bad_characters_are_refused);
  tcase_add_test(validity, strict_and_lenient);
  tcase_add_test(validity, cap_is_kept);
  suite_add_tcase(s, validity);
  return sk_test_run(s);
}
