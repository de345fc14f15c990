#!/usr/bin/env bash
# The pilot study on the GPU machine (after scripts/gpu/prepare_study.sh
# here): builds the plan runner and runs `mxfp4-cuda-run study` on the
# recipes of gpu-study/recipes.txt and the runs gpu-study/run-seed*/ there.
# Each (recipe, seed) trains into gpu-study/out/<recipe>-seed<N>/ (metrics,
# loss.svg, a checkpoint every 100 steps); a complete one is skipped and one
# cut short resumes from its checkpoint, so calling this again continues a
# study that outran one command's time. The table and plot of what is done
# are gpu-study/out/study.md and study.svg. With $OUT set, the metrics,
# plots and table are copied to $OUT (each run's metrics and plot in
# runs.tar.gz; not the checkpoints, too large to bring back); `mxfp4-cuda-run study` here, on runs whose metrics are all
# in its --out, tabulates seeds trained in different sessions without a GPU
# (docs/Study.md). Usage: run_study.sh [RECIPE...] (default: all of
# recipes.txt, the first the baseline).
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S runtime -B /tmp/mxfp4-build-runtime -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build /tmp/mxfp4-build-runtime > /dev/null
recipes=${*:-$(cat gpu-study/recipes.txt)}
runs=$(ls -d gpu-study/run-seed* | paste -sd,)
list="$(for r in $recipes; do printf 'gpu-study/%s\n' "$r"; done | paste -sd,)"
study() {
  /tmp/mxfp4-build-runtime/cuda/mxfp4-cuda-run study --recipes="$list" --runs="$1" \
    --out=gpu-study/out --checkpoint-every=100 |
    awk -F'[ :]' '!/^step [0-9]+: loss/ || $2 == 1 || $2 % 100 == 0'
}
study "$runs"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  cp gpu-study/out/study.md gpu-study/out/study.svg "$OUT/"
  # Each run keeps what produced it: the recipe's compiled.json (the
  # compiler's commit, recipe, model) and the seed's exported run.txt.
  for d in gpu-study/out/*-seed*/; do
    run=$(basename "$d")
    cp "gpu-study/${run%-seed*}/compiled.json" "$d" 2>/dev/null || true
    cp "gpu-study/run-seed${run##*-seed}/run.txt" "$d" 2>/dev/null || true
  done
  tar czf "$OUT/runs.tar.gz" -C gpu-study/out \
    $(cd gpu-study/out && echo ./*-seed*/metrics.jsonl ./*-seed*/loss.svg \
      ./*-seed*/compiled.json ./*-seed*/run.txt)
fi
