#!/usr/bin/env bash
# The NVIDIA GPU check (on the GPU machine, after scripts/gpu/prepare.sh
# here): builds the LLVM-free plan runner, runs the micro step's functions on
# the GPU and compares every result with the CPU's. Needs CMake, a C++
# compiler, the NVIDIA driver and NumPy; no LLVM.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S runtime/cuda -B /tmp/mxfp4-build-cuda -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build /tmp/mxfp4-build-cuda > /dev/null
cd gpu-check
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
for function in loss_and_grads train_step; do
  read -r results args < "$function.args"
  outputs=""
  for i in $(seq 0 $((results - 1))); do outputs+=" --output=@$function.gpu$i.npy"; done
  /tmp/mxfp4-build-cuda/mxfp4-cuda-run plan.txt kernels.cubin --function=$function $args $outputs
done
python3 ../scripts/gpu/compare.py
