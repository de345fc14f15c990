#!/usr/bin/env bash
# Prepares the pilot study on an NVIDIA GPU (run it here, after
# scripts/build.sh): the pilot model's training step compiled for sm_90a
# under each recipe (gpu-study/<recipe>/) and one seed's exported run
# (gpu-study/run-seed<N>/: the initial weights are drawn by the runtime from
# the seed; every step's batch and the held-out batches of the default
# corpus, evaluated every twentieth of the run as `mxfp4-run study` does),
# which all recipes share. Then, on the GPU machine:
#   bash scripts/gpu/run_study.sh
# Usage: [SEED=N] prepare_study.sh [STEPS] [RECIPE|NAME=RECIPE...]
# (default: seed 1, 1200 steps, the study's eleven recipes; NAME=RECIPE
# compiles a recipe string into gpu-study/NAME). Each seed is its own run;
# runs of other seeds stay. Every compiled recipe's compiled.json names the
# compiler's commit, which the runtime copies into each run's metrics.
set -euo pipefail
cd "$(dirname "$0")/../.."
steps=${1:-1200}
shift || true
recipes=${*:-bf16 fp4-fprop fp4-fprop-dgrad fp4-all fp4-all-sr fp4-all-rht16 fp4-all-dht16 \
  fp4-all-dht32 fp4-all-rht16-fixed fp4-all-dht16-wgrad-only \
  fp4-all-sr-grads=fp4-all,backward.grad.rounding=stochastic}
seed=${SEED:-1}
out=gpu-study
mkdir -p "$out"
rm -rf "$out/run-seed$seed" "$out/recipes.txt"
warmup=$(( steps / 20 < 60 ? steps / 20 : 60 ))
echo "{\"preset\": \"pilot\", \"total_steps\": $steps, \"warmup_steps\": $warmup}" > "$out/pilot.json"
build/bin/mxfp4-run train --preset="$out/pilot.json" --recipe=bf16 --seed="$seed" \
  --eval-every=$(( steps / 20 > 0 ? steps / 20 : 1 )) --export-gpu-run="$out/run-seed$seed"
for entry in $recipes; do
  name=${entry%%=*}
  recipe=${entry#*=}
  rm -rf "${out:?}/$name"
  build/bin/mxfp4-run compile --preset="$out/pilot.json" --recipe="$recipe" \
    --target=sm_90a --out-dir="$out/$name" > /dev/null
  rm -f "$out/$name/kernels.mlir" "$out/$name/kernels.ptx"
  echo "$name" >> "$out/recipes.txt"
done
du -sh "$out"
