#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (the readers of lib/Formats under
# AddressSanitizer and UndefinedBehaviorSanitizer) in build-fuzz/ and runs
# them and the compiler's (build/bin/mxfp4-{ir,data}-fuzzer), each: first
# every input of fuzz/regressions/<target>/ (earlier findings, which must
# pass forever), then SECONDS (default 20) of fuzzing from a corpus seeded
# from the tests (fuzz/seeds.py). With MXFP4_FUZZ_RUNS=fixed (the test
# command's setting) each target runs a fixed number of inputs from seed 1
# instead, so that a commit's result does not depend on how far a time
# limit got; fuzz for time to look for new findings. A crash, a sanitizer report,
# a hang or a broken invariant fails the target; its input is kept in
# build-fuzz/findings/<target>/. Prints "PASS: fuzz-<target> ..." or
# "FAIL: ..." per target and ends with "fuzz targets: N of M passed".
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MXFP4_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${1:-20}"
shift || true

mkdir -p "$build"
cmake -S "$root/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-22 \
  > "$build/configure.log" 2>&1 && cmake --build "$build" > "$build/build.log" 2>&1 \
  || { cat "$build/configure.log" "$build/build.log" 2>/dev/null | tail -30
       echo "FAIL: fuzz targets do not build"; exit 1; }
rm -rf "$build/corpus" && /usr/bin/python3 "$root/fuzz/seeds.py" "$build/corpus" "$root"

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(npy safetensors json metrics training-run host-plan
  checkpoint-folder checkpoint-recovery ir data)
passed=0; failed=0
for t in "${targets[@]}"; do
  exe="$build/fuzz-$t"; findings="$build/findings/$t"; log="$build/fuzz-$t.log"
  # The compiler's targets are built with it (tools/mxfp4-{ir,data}-fuzzer).
  case "$t" in ir|data) exe="${MXFP4_BUILD_DIR:-$root/build}/bin/mxfp4-$t-fuzzer" ;; esac
  mkdir -p "$findings" "$build/corpus/$t"
  ok=1
  regressions="$root/fuzz/regressions/$t"
  if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
    "$exe" "$regressions"/* > "$log.regressions" 2>&1 || ok=0
  fi
  limit=(-max_total_time="$seconds")
  if [ "${MXFP4_FUZZ_RUNS:-}" = fixed ]; then
    case "$t" in
      npy) runs=2000000 ;; safetensors) runs=800000 ;; json|metrics|training-run) runs=400000 ;;
      host-plan) runs=300000 ;; ir) runs=3000 ;;
      # An input of these is a folder tree on disk: about 0.2 and 0.6 ms.
      checkpoint-folder) runs=80000 ;; checkpoint-recovery) runs=30000 ;;
      *) runs=100000 ;;
    esac
    limit=(-runs="$runs" -max_total_time=120)
  fi
  if [ $ok -eq 1 ]; then
    # -timeout: an input taking 10 s is a hang; the corpus grows in place.
    "$exe" "$build/corpus/$t" "${limit[@]}" -seed=1 -timeout=10 \
      -rss_limit_mb=2048 -max_len=16384 -artifact_prefix="$findings/" \
      -print_final_stats=1 > "$log" 2>&1 || ok=0
  fi
  executed=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" 2>/dev/null | grep -o '[0-9]*$')
  if [ $ok -eq 1 ]; then
    echo "PASS: fuzz-$t (${executed:-0} inputs, corpus $(ls "$build/corpus/$t" | wc -l))"
    passed=$((passed + 1))
  else
    echo "FAIL: fuzz-$t (log: $log; inputs kept in $findings)"
    grep -E 'ERROR|invariant|runtime error|SUMMARY' "$log" "$log.regressions" 2>/dev/null | head -5
    failed=$((failed + 1))
  fi
done
echo "fuzz targets: $passed of $((passed + failed)) passed"
[ $failed -eq 0 ]
