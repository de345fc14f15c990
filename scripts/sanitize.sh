#!/usr/bin/env bash
# Builds the LLVM-free runtimes (runtime/: plan replay, the training loop,
# checkpoints, the CUDA and HIP drivers, and lib/Formats) under
# AddressSanitizer and UndefinedBehaviorSanitizer in build-sanitize/, and
# runs the lit tests that exercise them (the mxfp4-cuda-run tests on the
# fake libcuda, the mxfp4-hip-run tests and the training loop on the gfx950
# emulator) with those tools in place of build/'s (lit --param
# runtime_tools). Any sanitizer report fails its test. Needs scripts/build.sh
# first (the compiler and the emulator the tests use).
# Usage: scripts/sanitize.sh [LIT_FILTER]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MXFP4_BUILD_DIR:-$root/build}"
san="${MXFP4_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
filter="${1:-Tools/mxfp4-cuda-run|Tools/mxfp4-hip-run|Integration/gfx950-emulator}"

mkdir -p "$san"
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
cmake -S "$root/runtime" -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_RUNTIME_OUTPUT_DIRECTORY="$san/bin" > "$san/configure.log" 2>&1 \
  && cmake --build "$san" > "$san/build.log" 2>&1 \
  || { tail -30 "$san/configure.log" "$san/build.log"; echo "FAIL: sanitized runtimes do not build"; exit 1; }

# The emulated HIP library and libLLVM are not instrumented: their
# allocations at exit are not the runtime's leaks.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
/usr/lib/llvm-22/bin/lit -v "$build/test" --filter "$filter" \
  --param runtime_tools="$san/bin" 2>&1 | tee "$san/lit.log"
status=${PIPESTATUS[0]}
exit $status
