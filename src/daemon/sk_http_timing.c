/* sk_http's Server-Timing header (sk_http_mark in sk_http.h): the
 * handler's marks, one clock read each, and the header's text written on
 * every answer by set_response (sk_http.c). Loop thread only. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sk_http_int.h"

void sk_http_mark(sk_http_req *req, int phase) {
  if (phase == SK_HTTP_PARSED || phase == SK_HTTP_EVALUATED)
    req->mark_ns[phase] = uv_hrtime();
}

/* Appends "name;dur=M.UUU" (ns as ms, rounded down to the microsecond)
 * at p, with ", " before it unless first; returns the new end. Digits by
 * hand: snprintf's %f costs ~0.3 us a number, a fair share of a small
 * pose's ~11 us, and this runs on every answer. The name comes with its
 * length (PHASE), and a phase under 10 ms, the usual one, takes one digit
 * without the loop. */
static char *put_phase(char *p, const char *name, size_t nlen, uint64_t ns, bool first) {
  if (!first) {
    memcpy(p, ", ", 2);
    p += 2;
  }
  memcpy(p, name, nlen);
  p += nlen;
  memcpy(p, ";dur=", 5);
  p += 5;
  uint64_t us = ns / 1000, ms = us / 1000;
  unsigned frac = (unsigned)(us - ms * 1000);
  if (ms < 10) {
    *p++ = (char)('0' + ms);
  } else {
    char digits[20];
    int n = 0;
    do
      digits[n++] = (char)('0' + ms % 10);
    while ((ms /= 10) != 0);
    while (n > 0)
      *p++ = digits[--n];
  }
  p[0] = '.';
  p[1] = (char)('0' + frac / 100);
  p[2] = (char)('0' + frac / 10 % 10);
  p[3] = (char)('0' + frac % 10);
  return p + 4;
}
#define PHASE(p, lit, ns, first) put_phase((p), lit, sizeof lit - 1, (ns), (first))

void sk_http__server_timing(const sk_http_req *req, char buf[SK_HTTP_TIMING_MAX]) {
  const uint64_t now = uv_hrtime(), t0 = req->start_ns, p = req->mark_ns[0], e = req->mark_ns[1];
  const uint64_t from = p >= t0 && p != 0 ? p : t0;
  char *w = buf;
  if (from != t0)
    w = PHASE(w, "parse", p - t0, true);
  if (e >= from && e != 0 && now >= e) {
    w = PHASE(w, "evaluate", e - from, w == buf);
    w = PHASE(w, "write", now - e, false);
  }
  w = PHASE(w, "total", now >= t0 ? now - t0 : 0, w == buf);
  *w = 0;
}
