/* sk_hash: checksums and hashes with no state, for any wing. */
#ifndef SK_HASH_H
#define SK_HASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a, 64 and 32 bits: start from the _INIT value, chain by passing
 * the last result. For table lookups and content ids, not against an
 * adversary (the tables that take client keys bound their chains).
 * The 64-bit basis is FNV's 14695981039346656037 a digit short, as the
 * daemon has always used it: POST's content ids derive from it, so the
 * same body keeps its id across versions. */
#define SK_HASH_FNV64_INIT 1469598103934665603ull
#define SK_HASH_FNV32_INIT 2166136261u

static inline uint64_t sk_hash_fnv64(uint64_t h, const void *data, size_t len) {
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static inline uint64_t sk_hash_fnv64_str(uint64_t h, const char *s) {
  for (; *s != '\0'; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static inline uint32_t sk_hash_fnv32_str(uint32_t h, const char *s) {
  for (; *s != '\0'; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* CRC-32 (IEEE 802.3, reflected polynomial 0xedb88320) of data[0..len). */
uint32_t sk_hash_crc32(const void *data, size_t len);

#endif
