#!/usr/bin/env bash
# Installs, builds and runs every test suite; ends with `N passed, N failed`.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MXFP4_BUILD_DIR:-$root/build}"

bash "$root/scripts/build.sh" || { echo "0 passed, 1 failed"; exit 1; }

log="$build/lit.log"
/usr/lib/llvm-22/bin/lit -v "$build/test" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

passed=$(grep -cE '^(PASS|XFAIL): ' "$log")
failed=$(grep -cE '^(FAIL|XPASS|UNRESOLVED|TIMEOUT): ' "$log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # lit itself failed (e.g. a broken configuration)
fi

# The readers of outside bytes under libFuzzer, ASan and UBSan: their
# regression inputs, then a fixed number of inputs each from a fixed seed,
# so that a commit passes or fails the same way every time.
fuzzlog="$build/fuzz.log"
MXFP4_FUZZ_RUNS=fixed bash "$root/scripts/fuzz.sh" 2>&1 | tee "$fuzzlog"
fuzzstatus=${PIPESTATUS[0]}
passed=$((passed + $(grep -cE '^PASS: fuzz-' "$fuzzlog")))
fuzzfailed=$(grep -cE '^FAIL: ' "$fuzzlog")
[ "$fuzzstatus" -eq 0 ] || [ "$fuzzfailed" -gt 0 ] || fuzzfailed=1
failed=$((failed + fuzzfailed))

# The LLVM-free runtimes under ASan and UBSan, through their lit tests, and
# the unit tests with the project's libraries under both (one line a binary).
sanlog="$build/sanitize.log"
bash "$root/scripts/sanitize.sh" > "$sanlog" 2>&1
sanstatus=$?
sanpassed=$(grep -cE '^(PASS|XFAIL): ' "$sanlog")
sanfailed=$(grep -cE '^(FAIL|XPASS|UNRESOLVED|TIMEOUT): ' "$sanlog")
grep -E '^(FAIL|XPASS|UNRESOLVED|TIMEOUT|PASS): ' "$sanlog" | sed 's/^\([A-Z]*\): /\1: (ASan+UBSan) /'
[ "$sanstatus" -eq 0 ] || [ "$sanfailed" -gt 0 ] || { tail -30 "$sanlog"; sanfailed=1; }
passed=$((passed + sanpassed))
failed=$((failed + sanfailed))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
