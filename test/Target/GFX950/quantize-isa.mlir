// The fused Hadamard + quantize kernel at the ISA level: a bf16 source with
// its row-wise (H32, even scales) and its transposed (H16, floor scales)
// quantization in one kernel. Each lane reads its 32 bf16 values once (4
// x 16 bytes), converts each block with 16 v_cvt_scalef32_pk_fp4_f32 (two
// values each), writes 16 bytes of FP4 and one scale byte per block, and
// moves the raw block through LDS for the transposed job.
// RUN: mxfp4-run compile %s --target=gfx950 --assembly=%t.s
// RUN: FileCheck %s < %t.s
// RUN: awk '/^quantize/{q=1} q && /v_cvt_scalef32_pk_fp4_f32/{c++} q && /buffer_load/{l++} q && /buffer_store_dwordx4/{v++} q && /buffer_store_byte/{s++} q && /s_endpgm/{print c, l, v, s; exit}' %t.s | FileCheck %s --check-prefix=COUNT
// COUNT: 32 4 2 2

// CHECK-LABEL: quantize_256x512_bf16_r_h32db_evenvs_t_h16db_floorvs:
// CHECK: buffer_load_dwordx4
// CHECK-DAG: v_cvt_scalef32_pk_fp4_f32
// CHECK-DAG: ds_write_b128
// CHECK: s_barrier
// CHECK-NOT: scratch_
// CHECK: s_endpgm
// CHECK: .group_segment_fixed_size: 32768
// CHECK: .private_segment_fixed_size: 0
// CHECK: .vgpr_spill_count: 0

func.func @q(%x: tensor<256x512xbf16>) -> (tensor<256x512xf4E2M1FN>, tensor<256x16xf8E8M0FNU>, tensor<512x256xf4E2M1FN>, tensor<512x8xf8E8M0FNU>) {
  %h = mxfp4.hadamard %x axis = 1 size = 32 : tensor<256x512xbf16>
  %v, %s = mxfp4.quantize %h axis = 1 : tensor<256x512xbf16> -> tensor<256x512xf4E2M1FN>, tensor<256x16xf8E8M0FNU>
  %e = tensor.empty() : tensor<512x256xbf16>
  %t = linalg.transpose ins(%x : tensor<256x512xbf16>) outs(%e : tensor<512x256xbf16>) permutation = [1, 0]
  %ht = mxfp4.hadamard %t axis = 1 size = 16 : tensor<512x256xbf16>
  %vt, %st = mxfp4.quantize %ht axis = 1 scale_rule = floor : tensor<512x256xbf16> -> tensor<512x256xf4E2M1FN>, tensor<512x8xf8E8M0FNU>
  return %v, %s, %vt, %st : tensor<256x512xf4E2M1FN>, tensor<256x16xf8E8M0FNU>, tensor<512x256xf4E2M1FN>, tensor<512x8xf8E8M0FNU>
}
