#!/bin/sh
# Builds the libFuzzer targets with clang (ASan + UBSan) straight from the
# sources and runs each for a bounded time.
#
#   tests/fuzz/run.sh [target ...]        (default: skeleton pose eval gltf snapshot banim tokens access cost ws)
#
# Environment:
#   FUZZ_SECONDS  seconds per target (default 60)
#   FUZZ_BUILD    build and corpus directory (default ./fuzz-build); the
#                 corpus kept there grows across runs
#   FUZZ_SRCDIR   source tree (default: two levels above this script)
#   CLANG         compiler (default clang; clang-14 is what we test with)
#   FUZZ_PARALLEL targets run at once (default: cores, at most 2)
#   FUZZ_ARGS     extra libFuzzer flags
#
# Prints one line per target: executions, new coverage, and the crash
# artifacts written (under $FUZZ_BUILD/artifacts/<target>/). Exits 1 if any
# target found a crash: replay it with `$FUZZ_BUILD/fuzz_<target> FILE`,
# then add FILE to tests/fuzz/regressions/<target>/ once fixed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=${FUZZ_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${FUZZ_BUILD:-./fuzz-build}
seconds=${FUZZ_SECONDS:-60}
cc=${CLANG:-clang}
targets=${*:-skeleton pose eval gltf snapshot banim tokens access cost ws}

command -v "$cc" >/dev/null 2>&1 || { echo "run.sh: $cc not found (apt-get install clang libclang-rt-14-dev)"; exit 2; }
mkdir -p "$build/obj"
build=$(cd "$build" && pwd)

# ---- build -------------------------------------------------------------------
# Objects are rebuilt when their source or any header is newer; the targets
# link against the system jansson (uninstrumented: its own bugs are not ours
# to find, and our code's coverage is what guides the fuzzer).
deps_cflags=$(pkg-config --cflags jansson cglm libuv gnutls)
deps_libs=$(pkg-config --libs jansson cglm libuv gnutls)
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# Every wing's folder on the include path, bottom first (src/*/README.md).
wing_includes=""
for w in base babylon kernel anim io engine mesh daemon cmd; do wing_includes="$wing_includes -I$src/src/$w"; done
cflags="-std=c11 -g -O1 -ffp-contract=off -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE$wing_includes -I$here $deps_cflags"
# Every module of the core wings, and what the targets call above them.
modules=$(cd "$src/src" && ls base/*.c babylon/*.c kernel/*.c anim/*.c io/*.c engine/*.c mesh/*.c 2>/dev/null |
  sed 's|.*/||; s|\.c$||' | tr '\n' ' ')
modules="$modules sk_eval sk_store sk_auth sk_access sk_ws"
# Targets run FUZZ_PARALLEL at a time (default: the core count, at most
# 2), one core each, so CI's two cores halve the wall time. The build
# compiles and links that many at a time too, the two kernel files first.
# Those two are built without UBSan's pointer-overflow check: clang 14
# spends most of their compile time on it (sk_kernel.c at -O1 took 452 s
# with it and 82 s without, on a loaded 2-core VM; the rest of the build
# takes about a minute). ASan still checks every access they make, and
# the sanitizer step's GCC build (./setup sanitize) runs them with every
# UBSan check under the whole test suite.
parallel=${FUZZ_PARALLEL:-$(n=$(nproc 2>/dev/null || echo 1); [ "$n" -gt 2 ] && n=2; echo "$n")}
export FUZZ_CC="$cc" FUZZ_CFLAGS="$cflags $san" FUZZ_LIBS="$deps_libs"
# Runs the command $2 (sh, reading $1 and writing "$2.tmp") on each pair
# "input output" of $3, $parallel at a time; each output is renamed into
# place only once whole, so a build cut short leaves nothing that looks up
# to date. Stops the run (exit 2) saying "$1" if any fails.
build_pairs() {
  # shellcheck disable=SC2086
  printf '%s\n' $3 | xargs -r -n 2 -P "$parallel" sh -c "$2"' && mv "$2.tmp" "$2"' sh ||
    { echo "run.sh: $1"; exit 2; }
}
newest_header=$(ls -t "$src"/src/*/*.h "$here"/*.h "$here"/*.inc | head -1)
objs=""
stale=""
for m in $modules; do
  o="$build/obj/$m.o"
  objs="$objs $o"
  c=$(ls "$src"/src/*/"$m.c")
  if [ ! -f "$o" ] || [ "$c" -nt "$o" ] || [ "$newest_header" -nt "$o" ]; then
    echo "  CC       $m.c"
    case $m in
      sk_kernel*) stale="$c $o $stale" ;;
      *) stale="$stale $c $o" ;;
    esac
  fi
done
# shellcheck disable=SC2016
build_pairs "a module did not compile" 'case $1 in */sk_kernel*) k=-fno-sanitize=pointer-overflow ;; *) k= ;; esac;
  $FUZZ_CC $FUZZ_CFLAGS $k -fsanitize=fuzzer-no-link -c "$1" -o "$2.tmp"' "$stale"
export FUZZ_OBJS="$objs"
stale=""
for t in $targets; do
  exe="$build/fuzz_$t"
  if [ ! -f "$exe" ] || [ "$here/fuzz_$t.c" -nt "$exe" ] || [ -n "$(find "$build/obj" -newer "$exe" -name '*.o')" ]; then
    echo "  CCLD     fuzz_$t"
    stale="$stale $here/fuzz_$t.c $exe"
  fi
done
# shellcheck disable=SC2016
build_pairs "a target did not link" '$FUZZ_CC $FUZZ_CFLAGS -fsanitize=fuzzer "$1" $FUZZ_OBJS $FUZZ_LIBS -lm -o "$2.tmp"' "$stale"

# ---- seeds -------------------------------------------------------------------
# Split from the conformance cases at run time (hundreds of files we need not
# commit), plus the glTF assets; the hand-made edge cases live in seeds/.
rm -rf "$build/seeds"
python3 "$here/make_seeds.py" "$src" "$build/seeds"
# Snapshots (the skeleton part of a record) are binary: the snapshot target writes
# one per skeleton seed it round-trips.
case " $targets " in
  *" snapshot "*)
    mkdir -p "$build/seeds/snapshot"
    SK_FUZZ_SNAPSHOT_SEEDS="$build/seeds/snapshot" "$build/fuzz_snapshot" -runs=0 \
      "$build/seeds/skeleton" "$here/seeds/skeleton" >"$build/snapshot_seeds.log" 2>&1 || {
      tail -20 "$build/snapshot_seeds.log"
      exit 1
    }
    echo "seeds: snapshot $(find "$build/seeds/snapshot" -type f | wc -l)"
    ;;
esac

# ---- run ---------------------------------------------------------------------
max_len() {
  case $1 in
    gltf) echo 262144 ;;
    pose) echo 16384 ;;
    snapshot) echo 131072 ;;
    tokens) echo 16384 ;;
    access) echo 1024 ;;
    ws) echo 16384 ;;
    cost) echo 8192 ;;
    *) echo 65536 ;;
  esac
}

# Runs one target; leaves its summary line in $build/fuzz_<t>.summary and
# exits non-zero if libFuzzer stopped on a finding.
run_one() {
  t=$1
  mkdir -p "$build/corpus/$t" "$build/artifacts/$t"
  before=$(find "$build/artifacts/$t" -type f | wc -l)
  log="$build/fuzz_$t.log"
  dirs="$build/corpus/$t"
  for d in "$build/seeds/$t" "$here/seeds/$t" "$here/regressions/$t"; do
    [ -d "$d" ] && dirs="$dirs $d"
  done
  set +e
  # shellcheck disable=SC2086
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
    "$build/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$t")" \
    -dict="$here/$t.dict" -artifact_prefix="$build/artifacts/$t/" -print_final_stats=1 ${FUZZ_ARGS:-} \
    $dirs >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -n 's/.*cov: \([0-9]*\).*ft: \([0-9]*\).*corp: \([0-9]*\).*/cov \1, ft \2, corpus \3/p')
  after=$(find "$build/artifacts/$t" -type f | wc -l)
  echo "fuzz_$t: ${execs:-?} executions in ${seconds}s (${cov:-no stats}), $((after - before)) new crash artifacts" \
    >"$build/fuzz_$t.summary"
  if [ "$rc" -ne 0 ]; then
    {
      grep -E 'ERROR|SUMMARY|invariant|runtime error|Test unit written' "$log" | head -20
      echo "fuzz_$t: exit $rc (full log: $log)"
    } >>"$build/fuzz_$t.summary"
  fi
  return "$rc"
}

echo "fuzz: $targets, ${seconds}s each, $parallel at a time"
status=0
pids=""
running=0
for t in $targets; do
  run_one "$t" &
  pids="$pids $!"
  running=$((running + 1))
  if [ "$running" -ge "$parallel" ]; then
    for p in $pids; do wait "$p" || status=1; done
    pids=""
    running=0
  fi
done
for p in $pids; do wait "$p" || status=1; done
for t in $targets; do
  cat "$build/fuzz_$t.summary"
done
exit "$status"
