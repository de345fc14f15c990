#!/usr/bin/env bash
# Prepares the NVIDIA GPU check (run it here, after scripts/build.sh): the
# micro Llama step (bf16 recipe) compiled for sm_90a — plan.txt and
# kernels.cubin — plus random inputs and the CPU path's results, in
# gpu-check/ (untracked, inside the repo so it travels to the GPU machine).
# Then, on the GPU machine: bash scripts/gpu/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=gpu-check
rm -rf "$out" && mkdir -p "$out"
build/bin/mxfp4-run compile --preset=test/Tools/mxfp4-run/Inputs/micro.json -o "$out/step.mlir"
build/bin/mxfp4-run compile "$out/step.mlir" --target=sm_90a --out-dir="$out"
/usr/bin/python3 scripts/gpu/inputs.py "$out" build/bin/mxfp4-run
echo "prepared $out: now run 'bash scripts/gpu/run.sh' on the GPU machine"
