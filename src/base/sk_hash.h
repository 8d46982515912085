/* sk_hash: checksums and hashes with no state, for any wing. */
#ifndef SK_HASH_H
#define SK_HASH_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32 (IEEE 802.3, reflected polynomial 0xedb88320) of data[0..len). */
uint32_t sk_hash_crc32(const void *data, size_t len);

#endif
