// Only gfx950 has the MXFP4 scaled MFMAs.
// RUN: not mxfp4-opt %s --convert-mxfp4-to-amdgpu=chipset=gfx942 2>&1 | FileCheck %s
// CHECK: error: convert-mxfp4-to-amdgpu: chipset 'gfx942' has no MXFP4 scaled MFMAs; only gfx950 (MI350X/MI355X) is supported
// RUN: not mxfp4-opt %s --convert-mxfp4-to-amdgpu=tile=96 2>&1 | FileCheck %s --check-prefix=TILE
// TILE: error: convert-mxfp4-to-amdgpu: tile must be 64, 128 or 256, got 96

func.func @q(%x: tensor<64x64xf32>) -> tensor<64x2xf8E8M0FNU> {
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<64x64xf32> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
  return %s : tensor<64x2xf8E8M0FNU>
}
