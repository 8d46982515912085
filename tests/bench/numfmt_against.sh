#!/bin/sh
# Byte identity of this tree's float32 printer with an older commit's, on
# all 2^32 patterns (both halves on two cores, ~2-3 min). Not a test.
#   [STRIDE=n] tests/bench/numfmt_against.sh [COMMIT]   (default 930c12d, every pattern; from the repository root)
set -eu
commit=${1:-930c12d}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/old"
for f in sk_numfmt.c sk_numfmt_f64.c sk_numfmt.h sk_numfmt_int.h; do
  git show "$commit:src/base/$f" > "$tmp/old/$f"
done
# the AVX2 writer, in commits that have it
git show "$commit:src/base/sk_numfmt_avx2.c" > "$tmp/old/sk_numfmt_avx2.c" 2>/dev/null || : > "$tmp/old/sk_numfmt_avx2.c"
ren=""
for s in sk_numfmt_f32 sk_numfmt_f64 sk_strbuf_append_f32_array sk_strbuf_append_f32_array_on \
         sk_strbuf_append_f32_array_ref sk_f32_text_build sk_f32_text_free sk_f32_text_bytes sk_numfmt__f64_decimal \
         sk_numfmt__f32_pow10_g sk_numfmt__layout_rows sk_numfmt__put_commas_scalar sk_numfmt__put_commas_avx2; do
  ren="$ren -D$s=old_$s"
done
cc="gcc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L"
# shellcheck disable=SC2086
$cc $ren -I"$tmp/old" -Isrc/base -c "$tmp/old/sk_numfmt.c" -o "$tmp/old1.o"
# shellcheck disable=SC2086
$cc $ren -I"$tmp/old" -Isrc/base -c "$tmp/old/sk_numfmt_f64.c" -o "$tmp/old2.o"
# shellcheck disable=SC2086
$cc $ren -I"$tmp/old" -Isrc/base -c "$tmp/old/sk_numfmt_avx2.c" -o "$tmp/old3.o"
$cc -DSK_EXH_AGAINST -Isrc/base src/base/sk_numfmt.c src/base/sk_numfmt_avx2.c src/base/sk_numfmt_f64.c src/base/sk_buf.c \
  src/base/sk_cpu.c src/base/sk_error.c tests/bench/numfmt_exhaustive.c "$tmp/old1.o" "$tmp/old2.o" "$tmp/old3.o" -o "$tmp/exh"
echo "# $(grep -m1 'model name' /proc/cpuinfo); against $commit"
"$tmp/exh" 0 0x80000000 ${STRIDE:-1} > "$tmp/a" & a=$!
"$tmp/exh" 0x80000000 0x100000000 ${STRIDE:-1} > "$tmp/b" & b=$!
rc=0
wait $a || rc=1
wait $b || rc=1
cat "$tmp/a" "$tmp/b"
exit $rc
