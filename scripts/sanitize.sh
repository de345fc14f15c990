#!/usr/bin/env bash
# Two parts under AddressSanitizer and UndefinedBehaviorSanitizer; any
# sanitizer report fails its check.
# 1. runtimes: builds the LLVM-free runtimes (runtime/: plan replay, the
#    training loop, checkpoints, the CUDA and HIP drivers, and lib/Formats)
#    in build-sanitize/ and runs the lit tests that exercise them (the
#    mxfp4-cuda-run tests on the fake libcuda, the mxfp4-hip-run tests and the
#    training loop on the gfx950 emulator) with those tools in place of
#    build/'s (lit --param runtime_tools). Needs scripts/build.sh first (the
#    compiler and the emulator the tests use).
# 2. unit: configures the whole project in build-sanitize-unit/ with the
#    project's own code instrumented (LLVM/MLIR's shared libraries are not),
#    builds only the GoogleTest binaries of unittests/ and what they link
#    (the gfx950 layout, report and emulator libraries, lib/Runtime,
#    lib/Formats, the HIP launcher, libmxfp4-emulated-hip and the fake HIP
#    library) and runs each: "PASS: sanitized-unittest <binary> ..." or
#    "FAIL: ...". About 1.5 minutes from a clean folder on 2 cores. The default
#    set leaves out GFX950EmulatorWaveOpsTests: it links the whole compiler
#    (MXFP4Pipelines, MXFP4InitAll), about 60 more files, which takes the
#    build to 6 to 8 minutes, beyond the test command's budget; name it in
#    MXFP4_SANITIZE_UNIT_TESTS to run it.
# Usage: scripts/sanitize.sh [LIT_FILTER]
# Environment: MXFP4_SANITIZE_PART=runtimes|unit|all (default all);
# MXFP4_SANITIZE_UNIT_TESTS="BINARY..." (default: the seven unit-test
# binaries less GFX950EmulatorWaveOpsTests).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MXFP4_BUILD_DIR:-$root/build}"
san="${MXFP4_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
unit="${MXFP4_SANITIZE_UNIT_BUILD_DIR:-$root/build-sanitize-unit}"
filter="${1:-Tools/mxfp4-cuda-run|Tools/mxfp4-hip-run|Integration/gfx950-emulator}"
part="${MXFP4_SANITIZE_PART:-all}"
read -r -a unittests <<< "${MXFP4_SANITIZE_UNIT_TESTS:-GFX950LaneLayoutTests \
  GFX950KernelReportTests GFX950EmulatorTests HipRuntimeTests \
  GFX950EmulatedLaunchTests GFX950EmulatedHipTests}"
case "$part" in runtimes|unit|all) ;; *) echo "FAIL: MXFP4_SANITIZE_PART=$part (runtimes, unit or all)"; exit 2 ;; esac

# The emulated HIP library and libLLVM are not instrumented: their
# allocations at exit are not the runtime's leaks.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0

if [ "$part" != unit ]; then
  mkdir -p "$san"
  flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
  if cmake -S "$root/runtime" -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_CXX_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
      -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
      -DCMAKE_RUNTIME_OUTPUT_DIRECTORY="$san/bin" > "$san/configure.log" 2>&1 \
    && cmake --build "$san" > "$san/build.log" 2>&1; then
    /usr/lib/llvm-22/bin/lit -v "$build/test" --filter "$filter" \
      --param runtime_tools="$san/bin" 2>&1 | tee "$san/lit.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  else
    tail -n 30 "$san/configure.log" "$san/build.log"
    echo "FAIL: sanitized runtimes do not build"
    status=1
  fi
fi

if [ "$part" != runtimes ]; then
  mkdir -p "$unit"
  # scripts/build.sh's configuration, instrumented through LLVM_USE_SANITIZER
  # (-fsanitize=address -fsanitize=undefined -fno-sanitize-recover=all
  # -fno-omit-frame-pointer -gline-tables-only on every C and C++ file): set,
  # HandleLLVMOptions also drops -Wl,-z,defs, which the instrumented shared
  # libraries (libmxfp4-emulated-hip, the fake HIP) cannot pass, since the
  # executable that loads them defines the sanitizer runtime. -O1 as the
  # sanitizers advise; -O3 builds no faster.
  targets=()
  for t in "${unittests[@]}"; do targets+=("unittests/bin/$t"); done
  if cmake -S "$root" -B "$unit" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DLLVM_ENABLE_LLD=ON -DPython3_EXECUTABLE=/usr/bin/python3 \
      -DLLVM_USE_SANITIZER="Address;Undefined" \
      -DLLVM_UBSAN_FLAGS="-fsanitize=undefined -fno-sanitize-recover=all" \
      -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
      > "$unit/configure.log" 2>&1 \
    && cmake --build "$unit" --target "${targets[@]}" > "$unit/build.log" 2>&1; then
    for t in "${unittests[@]}"; do
      log="$unit/unittests/$t.log"
      # A binary still running after 5 minutes fails, so the test command ends.
      timeout 300 "$unit/unittests/bin/$t" --gtest_brief=1 > "$log" 2>&1
      rc=$?
      if [ $rc -eq 0 ]; then
        echo "PASS: sanitized-unittest $t ($(grep -o '[0-9]* tests\? from' "$log" | tail -1 | cut -d' ' -f1-2))"
      else
        status=1
        echo "FAIL: sanitized-unittest $t (exit $rc; log: $log)"
        grep -E 'ERROR: [A-Za-z]*Sanitizer|runtime error|^SUMMARY|\[  FAILED  \]' "$log" | head -8 | sed 's/^/  /'
      fi
    done
  else
    tail -n 30 "$unit/configure.log" "$unit/build.log"
    echo "FAIL: sanitized unit tests do not build"
    status=1
  fi
fi
exit $status
