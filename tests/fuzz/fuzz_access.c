/* Fuzz target: the access gate (sk_access_create's --allowed-hosts list,
 * sk_access_check on framing, Host and Authorization header values).
 *
 * Input: a flags byte, then newline-separated fields: allowed hosts,
 * version, Host, Content-Length, Transfer-Encoding, Authorization (a field
 * past the end is an absent header; "-" as the allowed hosts is the
 * default list). Flags: bit 0 loopback listener, bits 1-2 extra Host
 * lines, bit 3 a second Content-Length, bit 4 a second Transfer-Encoding,
 * bits 5-6 the route's scope, bit 7 a token table (one "read" and one
 * "admin" token, see below) installed.
 *
 * Checks: a refused list is SK_EINVAL with a pointer-less error; a verdict
 * is 0, 400, 401, 403 or 421 with kind, title and a printable detail (it
 * is sent back in problem+json and logged); duplicated framing headers
 * and Content-Length beside Transfer-Encoding are always 400 and close the
 * connection; a 401 or 403 always says WWW-Authenticate. */
#include <string.h>

#include "sk_access.h"
#include "sk_auth.h"
#include "sk_metrics.h"
#include "sk_fuzz.h"

#define ACCESS_MAX_INPUT 4096
#define ACCESS_FIELDS 6

static const char k_tokens[] = "read-token-0123456789 read\nadmin-token-0123456789 admin\n";

static void check_verdict(const sk_access_request *rq, const sk_access_verdict *v) {
  int st = v->status;
  SK_FUZZ_CHECK(st == 0 || st == 400 || st == 401 || st == 403 || st == 421);
  SK_FUZZ_CHECK(memchr(v->detail, '\0', sizeof v->detail) != NULL);
  SK_FUZZ_CHECK(memchr(v->www_authenticate, '\0', sizeof v->www_authenticate) != NULL);
  if (st == 0) {
    SK_FUZZ_CHECK(!v->close && v->detail[0] == '\0');
    return;
  }
  SK_FUZZ_CHECK(v->kind != NULL && v->title != NULL && v->detail[0] != '\0');
  for (const char *c = v->detail; *c; c++)
    SK_FUZZ_CHECK((unsigned char)*c >= 0x20 && (unsigned char)*c <= 0x7e);
  if (rq->content_length_count > 1 || rq->transfer_encoding_count > 1 ||
      (rq->content_length != NULL && rq->transfer_encoding != NULL))
    SK_FUZZ_CHECK(st == 400 && v->close && strcmp(v->kind, "bad-framing") == 0);
  SK_FUZZ_CHECK((st == 401 || st == 403) == (v->www_authenticate[0] != '\0'));
}

int sk_fuzz_access(const uint8_t *data, size_t size) {
  if (size > ACCESS_MAX_INPUT)
    return -1;
  if (size == 0)
    return 0;
  unsigned flags = data[0];
  char *buf = malloc(size); /* the fields, NUL-terminated in place */
  if (buf == NULL)
    return 0;
  memcpy(buf, data + 1, size - 1);
  buf[size - 1] = '\0';
  const char *field[ACCESS_FIELDS] = {0};
  char *p = buf, *end = buf + size - 1;
  for (size_t i = 0; i < ACCESS_FIELDS && p <= end; i++) {
    field[i] = p;
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (nl == NULL)
      p = end + 1;
    else {
      *nl = '\0';
      p = nl + 1;
    }
  }
  const char *hosts = field[0] != NULL && strcmp(field[0], "-") == 0 ? NULL : field[0];
  sk_access *a = NULL;
  sk_error err;
  sk_error_clear(&err);
  int rc = sk_access_create(hosts, flags & 1, &a, &err);
  if (rc) {
    sk_fuzz_check_error(rc, &err);
    SK_FUZZ_CHECK(rc == SK_EINVAL && a == NULL);
  } else if (flags & 0x80) {
    sk_auth *t = NULL;
    SK_FUZZ_CHECK(sk_auth_parse("fixture", k_tokens, sizeof k_tokens - 1, &t, &err) == 0);
    sk_access_set_tokens(a, t);
    SK_FUZZ_CHECK(sk_access_has_tokens(a));
  }
  sk_access_request rq = {
      .version = field[1],
      .host = field[2],
      .host_count = (field[2] != NULL) + ((flags >> 1) & 3),
      .content_length = field[3],
      .content_length_count = (field[3] != NULL) + ((flags >> 3) & 1),
      .transfer_encoding = field[4],
      .transfer_encoding_count = (field[4] != NULL) + ((flags >> 4) & 1),
      .authorization = field[5],
      .scope = (flags >> 5) & 3,
  };
  sk_access_verdict v;
  sk_access_check(a, &rq, &v);
  check_verdict(&rq, &v);
  /* Without a gate only framing and Host presence are checked: never 401, 403, 421. */
  sk_access_check(NULL, &rq, &v);
  check_verdict(&rq, &v);
  SK_FUZZ_CHECK(v.status == 0 || v.status == 400);
  sk_access_destroy(a);
  free(buf);
  return 0;
}

#ifndef SK_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return sk_fuzz_access(data, size) < 0 ? -1 : 0; }
#endif
