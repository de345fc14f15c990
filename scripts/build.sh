#!/usr/bin/env bash
# Configures (once) and builds mxfp4 in ./build with clang-22, lld and Ninja.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MXFP4_BUILD_DIR:-$root/build}"

bash "$root/scripts/setup.sh"

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_ENABLE_LLD=ON \
    -DPython3_EXECUTABLE=/usr/bin/python3
fi
cmake --build "$build"
