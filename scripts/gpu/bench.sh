#!/usr/bin/env bash
# The NVIDIA kernel benchmarks (on the GPU machine, after
# scripts/gpu/prepare.sh here): builds the plan runner and runs
# scripts/gpu/bench.py, which measures our kernels and their PyTorch/cuBLAS
# peers in the same run. SUSTAIN=S times both sides over S seconds of
# back-to-back calls (at the power limit) instead of short bursts.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S runtime -B /tmp/mxfp4-build-runtime -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build /tmp/mxfp4-build-runtime > /dev/null
python3 scripts/gpu/bench.py /tmp/mxfp4-build-runtime/cuda/mxfp4-cuda-run "$@"
