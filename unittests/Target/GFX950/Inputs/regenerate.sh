#!/bin/sh
# Regenerates the gfx950 assembly (format=isa) and the code object
# (format=bin) inputs of GFX950KernelReportTests and HipRuntimeTests from the
# .mlir kernels next to this script, with the pass pipeline of
# docs/gfx950.md. Needs only Debian's LLVM/MLIR 22: format=bin links with
# <toolkit>/llvm/bin/ld.lld, so a shim directory points that at ld.lld.
set -eu
cd "$(dirname "$0")"
LLVM=${LLVM:-/usr/lib/llvm-22/bin}
SHIM=$(mktemp -d)
trap 'rm -rf "$SHIM"' EXIT
mkdir -p "$SHIM/llvm/bin"
ln -s "$LLVM/ld.lld" "$SHIM/llvm/bin/ld.lld"
LOWER='convert-arith-to-amdgpu{chipset=gfx950},arith-expand{include-f8e8m0=1 include-f4e2m1=1},convert-scf-to-cf,convert-gpu-to-rocdl{chipset=gfx950 use-bare-ptr-memref-call-conv=1},convert-amdgpu-to-rocdl{chipset=gfx950},convert-vector-to-llvm,reconcile-unrealized-casts'

# Prints the decoded string attribute `$2` (assembly or bin) of the first
# #gpu.object in the MLIR file $1.
extract() {
  python3 - "$1" "$2" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
s = re.search(sys.argv[2] + r' = "((?:[^"\\]|\\.)*)"', text).group(1)
out, i = bytearray(), 0
while i < len(s):
    if s[i] == '\\':
        n = s[i + 1]
        if n in '\\"':
            out.append(ord(n)); i += 2
        elif n in 'nt':
            out.append(10 if n == 'n' else 9); i += 2
        else:
            out.append(int(s[i + 1:i + 3], 16)); i += 3
    else:
        out += s[i].encode(); i += 1
sys.stdout.buffer.write(out)
PY
}

for k in wave_tile_32x32 lds_tile_32x32 quantize_mxfp4 spill_tile; do
  "$LLVM/mlir-opt" "$k.mlir" --pass-pipeline="builtin.module(gpu.module($LOWER),gpu-module-to-binary{format=isa})" -o "$SHIM/$k.isa.mlir"
  extract "$SHIM/$k.isa.mlir" assembly > "$k.s"
done
"$LLVM/mlir-opt" wave_tile_32x32.mlir --pass-pipeline="builtin.module(gpu.module($LOWER),gpu-module-to-binary{format=bin toolkit=$SHIM})" -o "$SHIM/bin.mlir"
extract "$SHIM/bin.mlir" bin > wave_tile_32x32.hsaco
