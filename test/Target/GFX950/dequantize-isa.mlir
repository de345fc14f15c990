// dequantize at the ISA level: 16 v_cvt_scalef32_pk_f32_fp4 per 32-element
// block, one 16-byte load of codes and one scale byte per lane.
// RUN: mxfp4-run compile %s --target=gfx950 --assembly=- | FileCheck %s
// CHECK-LABEL: dequantize_64x128_f32:
// CHECK-COUNT-16: v_cvt_scalef32_pk_f32_fp4
// CHECK-NOT: scratch_
// CHECK: s_endpgm
// CHECK: .private_segment_fixed_size: 0
// CHECK: .vgpr_spill_count: 0

func.func @dq(%v: tensor<64x128xf4E2M1FN>, %s: tensor<64x4xf8E8M0FNU>) -> tensor<64x128xf32> {
  %x = mxfp4.dequantize %v scale %s axis = 1 : tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<64x128xf32>
  return %x : tensor<64x128xf32>
}
