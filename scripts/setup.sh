#!/usr/bin/env bash
# Installs what mxfp4 needs on Debian 12 (as root), skipping what is present.
# Only Debian's registry is used. Idempotent: a second run installs nothing.
set -euo pipefail

packages=(
  cmake ninja-build git
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  python3 python3-dev python3-numpy python3-torch pybind11-dev libopenblas-dev
  libomp-22-dev
  zlib1g-dev curl libgtest-dev
  libclang-rt-22-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
