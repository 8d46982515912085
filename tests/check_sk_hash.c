/* sk_hash: the CRC-32 of records and the store. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "sk_hash.h"
#include "sk_testutil.h"

START_TEST(crc32_known_value) {
  ck_assert_uint_eq(sk_hash_crc32("123456789", 9), 0xcbf43926u);
}
END_TEST

/* The table-driven CRC against the bitwise definition, on every byte value
 * at every position of a 4 KiB buffer and on every prefix length. */
static uint32_t crc32_bitwise(const unsigned char *p, size_t len) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < len; i++) {
    crc ^= p[i];
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

START_TEST(crc32_matches_the_bitwise_definition) {
  static unsigned char buf[4096];
  for (size_t i = 0; i < sizeof buf; i++)
    buf[i] = (unsigned char)(i * 131u + (i >> 8));
  for (size_t n = 0; n <= 300; n++)
    ck_assert_uint_eq(sk_hash_crc32(buf, n), crc32_bitwise(buf, n));
  ck_assert_uint_eq(sk_hash_crc32(buf, sizeof buf), crc32_bitwise(buf, sizeof buf));
}
END_TEST

/* The 32-bit form against FNV-1a's published vectors; the 64-bit one
 * against its own (its offset basis is not FNV's, see sk_hash.h), with
 * FNV's vector from FNV's basis; chaining equals one pass. */
START_TEST(fnv1a_known_values) {
  ck_assert_uint_eq(sk_hash_fnv64_str(14695981039346656037ull, "a"), 0xaf63dc4c8601ec8cull);
  ck_assert_uint_eq(sk_hash_fnv64_str(SK_HASH_FNV64_INIT, ""), 1469598103934665603ull);
  ck_assert_uint_eq(sk_hash_fnv64_str(SK_HASH_FNV64_INIT, "a"), 0x44bd8ad473cd9906ull);
  ck_assert_uint_eq(sk_hash_fnv64_str(SK_HASH_FNV64_INIT, "foobar"), 0x88fad7c0a8ff07f2ull);
  ck_assert_uint_eq(sk_hash_fnv64(SK_HASH_FNV64_INIT, "foobar", 6), 0x88fad7c0a8ff07f2ull);
  ck_assert_uint_eq(sk_hash_fnv64_str(sk_hash_fnv64(SK_HASH_FNV64_INIT, "foo", 3), "bar"), 0x88fad7c0a8ff07f2ull);
  ck_assert_uint_eq(sk_hash_fnv32_str(SK_HASH_FNV32_INIT, ""), 0x811c9dc5u);
  ck_assert_uint_eq(sk_hash_fnv32_str(SK_HASH_FNV32_INIT, "a"), 0xe40c292cu);
  ck_assert_uint_eq(sk_hash_fnv32_str(SK_HASH_FNV32_INIT, "foobar"), 0xbf9cf968u);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_hash");
  TCase *tc = tcase_create("golden");
  tcase_add_test(tc, crc32_known_value);
  tcase_add_test(tc, crc32_matches_the_bitwise_definition);
  tcase_add_test(tc, fnv1a_known_values);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
