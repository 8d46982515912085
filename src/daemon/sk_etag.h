/* sk_etag: entity tags of skeleton versions and the RFC 9110 section 13
 * field values that test them (If-Match, If-None-Match). Pure: any thread.
 *
 * A skeleton's ETag is strong: one tag names one stored version
 * (sk_cache_entry.version), whose GET answer is always the same bytes. The
 * tag also carries the daemon's boot epoch, because versions restart at 1
 * with every start (a --data-dir reload renumbers them): a tag from an
 * earlier run never matches a version of this one. */
#ifndef SK_ETAG_H
#define SK_ETAG_H

#include <stdbool.h>
#include <stdint.h>

/* Bytes a tag needs, quotes and NUL included. */
#define SK_ETAG_MAX 48

/* Writes the tag of `version` under boot `epoch` into dest, quotes
 * included: "<epoch hex>-<version>". */
void sk_etag_format(uint32_t epoch, uint64_t version, char dest[SK_ETAG_MAX]);

/* Evaluates an If-Match (`weak` false: strong comparison) or
 * If-None-Match (`weak` true: weak comparison) field value against the
 * current tag `etag` (NULL: there is no current representation). "*"
 * matches any current representation. Returns 1 when some member
 * matches, 0 when none does, -1 when the value is not "*" or a list of
 * entity tags (malformed). */
int sk_etag_match(const char *field, const char *etag, bool weak);

#endif
