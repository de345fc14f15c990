#!/usr/bin/env bash
# Data-parallel scaling (on a machine with several GPUs, after
# `CASES=scaling bash scripts/gpu/prepare.sh` here): builds the runtime and
# runs scripts/gpu/scaling.py, which trains each prepared preset with
# --gpus=1, 2, 4, 8 (as many as there are GPUs) and prints tokens/s,
# speedup and efficiency. MXFP4_NCCL_LIBRARY defaults to PyTorch's NCCL.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S runtime -B /tmp/mxfp4-build-runtime -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build /tmp/mxfp4-build-runtime > /dev/null
export MXFP4_NCCL_LIBRARY="${MXFP4_NCCL_LIBRARY:-$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2> /dev/null || echo libnccl.so.2)}"
export NCCL_NVLS_ENABLE=0
python3 scripts/gpu/scaling.py /tmp/mxfp4-build-runtime/cuda/mxfp4-cuda-run "$@"
