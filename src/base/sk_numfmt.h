/* sk_numfmt: shortest round-trip decimal for float32/double, written in the
 * shape of ECMAScript Number::toString so our JSON diffs cleanly against the
 * Babylon oracle, plus a growable buffer for building large JSON replies.
 *
 * Cost, in a JSON array of matrices: 12-18 ns per float one at a time
 * (~170 instructions with its comma, callgrind), 7-12 ns with the AVX-512
 * writer (two blocks of 8 floats per step; the AVX2 one, two blocks of 4,
 * ~83 instructions a float under callgrind), against ~200 ns for
 * snprintf("%.9g") (tests/bench/numfmt_bench.c, tests/bench/json_bench.c;
 * this VM's speed drifts by a third); no allocation, no locale, no global
 * state. */
#ifndef SK_NUMFMT_H
#define SK_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

#include "sk_buf.h"

/* Longest output of sk_numfmt_f32, without the NUL: "-100000000000000000000"
 * is 22 bytes; rounded up. */
#define SK_NUMFMT_F32_MAX 24
/* Longest output of sk_numfmt_f64, without the NUL: "-0.0000012345678901234567"
 * is 25 bytes; rounded up. */
#define SK_NUMFMT_F64_MAX 32

/* Writes the shortest decimal that strtof() reads back to exactly `v`, in JSON
 * number syntax and ECMAScript layout: with k significant digits and decimal
 * exponent n (value = digits * 10^(n-k)), plain notation when -6 < n <= 21
 * ("0.000001", "123.5") but integers only up to 18 digits ("100000000000000000";
 * a 19-digit integer literal can exceed 2^63, which jansson rejects),
 * otherwise "d.ddde+N" / "de-N" ("1e-7", "1e+20", "1.2345678e+21").
 * Among equally short candidates the one
 * closest to `v` wins (ties to even digit).
 * -0.0 prints "-0". NaN and infinities have no JSON form: writes "null".
 * `dest` needs SK_NUMFMT_F32_MAX + 1 bytes; it receives the text and a NUL.
 * Returns the length without the NUL (1..SK_NUMFMT_F32_MAX). */
size_t sk_numfmt_f32(float v, char *dest);

/* Same contract for double with strtod() round trip. For a finite double the
 * text equals JavaScript's String(v) (except -0.0: "-0" here, "0" in JS, and
 * integers of 19 to 21 digits, in exponent form here); in
 * particular sk_numfmt_f64((double)f) reproduces how JS prints an element of
 * a Float32Array ("0.10000000149011612" where sk_numfmt_f32 gives "0.1").
 * `dest` needs SK_NUMFMT_F64_MAX + 1 bytes. */
size_t sk_numfmt_f64(double v, char *dest);

/* Appends `count` floats as a JSON array "[a,b,...]" ("[]" for count 0), each
 * formatted by sk_numfmt_f32 (so non-finite elements become null). Reserves
 * the worst case once up front, so the loop itself never reallocates.
 * Returns 0 or SK_ENOMEM; on failure nothing is appended. `v` may be NULL
 * when `count` is 0. */
int sk_strbuf_append_f32_array(sk_strbuf *b, const float *v, size_t count);

/* sk_strbuf_append_f32_array with one implementation: "avx512" (8 floats
 * per step; what the function above uses when the CPU has AVX-512 F, BW,
 * DQ and CD), "avx2" (4 floats per step; what it uses on other CPUs with
 * AVX2) or "generic" (one float at a time). The same bytes from each;
 * for tests and benchmarks. -1 if this CPU or build lacks it. */
int sk_strbuf_append_f32_array_on(const char *isa, sk_strbuf *b, const float *v, size_t count);

/* The JSON text of a reference array, kept per group of `group` floats
 * (a matrix: 16), so that an array equal to it in some groups copies their
 * text instead of printing it: a pose that moves a few bones answers mostly
 * the stored pose's matrices. The reference values are borrowed and must
 * outlive the text; `text` and `at` are owned (sk_f32_text_free). */
typedef struct sk_f32_text {
  const float *values; /* count floats */
  size_t count, group;
  char *text; /* group g: its floats comma-separated, text[at[g] .. at[g+1]) */
  uint32_t *at;
} sk_f32_text;

/* Prints values[0..count) into t. count must be a multiple of group > 0
 * (SK_EINVAL otherwise). Returns 0 or SK_ENOMEM; on failure t is empty. */
int sk_f32_text_build(sk_f32_text *t, const float *values, size_t count, size_t group);
void sk_f32_text_free(sk_f32_text *t);
/* Heap bytes t holds. */
size_t sk_f32_text_bytes(const sk_f32_text *t);

/* sk_strbuf_append_f32_array, with every group of v bit-identical to the
 * same group of ref->values copied from ref's text; the same bytes as
 * without ref. ref may be NULL, or for another count: then it is unused. */
int sk_strbuf_append_f32_array_ref(sk_strbuf *b, const float *v, size_t count, const sk_f32_text *ref);

#endif
