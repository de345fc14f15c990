#!/usr/bin/env bash
# The pilot study on the GPU machine (after scripts/gpu/prepare_study.sh
# here): builds the plan runner and trains every recipe of
# gpu-study/recipes.txt from the same weights and batches; each run's
# metrics.jsonl and model.safetensors land in gpu-study/<recipe>/ (and in
# $OUT/<recipe>/ when $OUT is set). scripts/gpu/study_table.py makes the
# table and the plot from them. Usage: run_study.sh [RECIPE...] (default:
# all of recipes.txt; a subset lets a study span several GPU sessions).
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S runtime/cuda -B /tmp/mxfp4-build-cuda -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build /tmp/mxfp4-build-cuda > /dev/null
selected=" $* "
while read -r recipe; do
  if [ $# -gt 0 ] && [[ "$selected" != *" $recipe "* ]]; then continue; fi
  echo "== $recipe"
  (cd "gpu-study/$recipe" &&
   /tmp/mxfp4-build-cuda/mxfp4-cuda-run plan.txt kernels.cubin --train=../run --out=. \
     | grep -E "^step (1|50|[0-9]*00):|^metrics")
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT/$recipe" && cp "gpu-study/$recipe/metrics.jsonl" "$OUT/$recipe/"
  fi
done < gpu-study/recipes.txt
