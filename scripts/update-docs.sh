#!/usr/bin/env bash
# Regenerates the ODS reference docs and copies them to docs/generated.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MXFP4_BUILD_DIR:-$root/build}"
cmake --build "$build" --target mlir-doc
mkdir -p "$root/docs/generated"
cp "$build"/docs/MXFP4/*.md "$root/docs/generated/"
ls "$root/docs/generated"
