#!/usr/bin/env bash
# Installs, builds and runs the main job on its embedded default: the MXFP4
# quantization error of one linear layer's Fprop, Dgrad and Wgrad GEMMs under
# rotation recipes, compiled and run on the CPU.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MXFP4_BUILD_DIR:-$root/build}"

bash "$root/scripts/build.sh"
exec "$build/bin/mxfp4-run" layer-study "$@"
