#!/usr/bin/env bash
# The NVIDIA GPU check (on the GPU machine, after scripts/gpu/prepare.sh
# here): builds the LLVM-free plan runner, runs every case of
# gpu-check/cases.txt on the GPU and compares its results with the CPU's.
# Needs CMake, a C++ compiler, the NVIDIA driver and NumPy; no LLVM.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S runtime/cuda -B /tmp/mxfp4-build-cuda -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build /tmp/mxfp4-build-cuda > /dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
while read -r name function results tolerance args; do
  if [ "$function" = train ]; then
    (cd "gpu-check/$name" && /tmp/mxfp4-build-cuda/mxfp4-cuda-run plan.txt \
       kernels.cubin --train=run --out=. | tail -2)
    continue
  fi
  outputs=""
  for i in $(seq 0 $((results - 1))); do outputs+=" --output=@gpu$i.npy"; done
  (cd "gpu-check/$name" &&
   /tmp/mxfp4-build-cuda/mxfp4-cuda-run plan.txt kernels.cubin \
     --function="$function" --repeat=0 $args $outputs)
done < gpu-check/cases.txt
python3 scripts/gpu/compare.py gpu-check
