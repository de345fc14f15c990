// The GEMM at the ISA level (tile 256, K = 4096: a K loop of 16 steps):
// direct-to-LDS buffer loads, 16-byte LDS fragment reads, FP4 x FP4 scaled
// MFMAs (cbsz:4 blgp:4) whose op_sel/op_sel_hi pick all four scale bytes of
// a dword for A and for B, and a code object v5 for gfx950 without spills
// or scratch.
// RUN: mxfp4-run compile %s --target=gfx950 --tile=256 --assembly=%t.s
// RUN: FileCheck %s < %t.s
// RUN: FileCheck %s --check-prefix=OPSEL < %t.s

// The double buffer works: the loop waits for the copies (issued one K
// step earlier) once, at its top, reads every fragment of the step, then
// issues the next step's copies; no wait for them inside the loop.
// CHECK-LABEL: gemm_512x256x4096_t256x256_bf16:
// CHECK: buffer_load_dwordx4 v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen lds
// CHECK: [[LOOP:\.LBB[0-9_]+]]:
// CHECK: s_waitcnt vmcnt(0)
// CHECK-NEXT: s_barrier
// CHECK-NOT: s_waitcnt vmcnt(0)
// CHECK: s_cbranch_scc{{[01]}} [[LOOP]]
// CHECK-NOT: scratch_
// CHECK: s_endpgm
// CHECK: .amdhsa_group_segment_fixed_size 131072
// CHECK: .amdhsa_private_segment_fixed_size 0
// CHECK: amdhsa.kernels:
// CHECK: .group_segment_fixed_size: 131072
// CHECK: .name: gemm_512x256x4096_t256x256_bf16
// CHECK: .private_segment_fixed_size: 0
// CHECK: .sgpr_spill_count: 0
// CHECK: .vgpr_spill_count: 0
// CHECK: amdhsa.target: amdgcn-amd-amdhsa--gfx950
// CHECK: amdhsa.version:
// CHECK-NEXT: - 1
// CHECK-NEXT: - 2

// OPSEL-DAG: v_mfma_scale_f32_16x16x128_f8f6f4 {{.*}} op_sel_hi:[0,0,0] cbsz:4 blgp:4
// OPSEL-DAG: v_mfma_scale_f32_16x16x128_f8f6f4 {{.*}} op_sel:[1,0,0] op_sel_hi:[0,0,0] cbsz:4 blgp:4
// OPSEL-DAG: v_mfma_scale_f32_16x16x128_f8f6f4 {{.*}} op_sel:[0,1,0] op_sel_hi:[0,0,0] cbsz:4 blgp:4
// OPSEL-DAG: v_mfma_scale_f32_16x16x128_f8f6f4 {{.*}} op_sel:[1,1,0] op_sel_hi:[0,0,0] cbsz:4 blgp:4
// OPSEL-DAG: v_mfma_scale_f32_16x16x128_f8f6f4 {{.*}} op_sel_hi:[1,1,0] cbsz:4 blgp:4
// OPSEL-DAG: v_mfma_scale_f32_16x16x128_f8f6f4 {{.*}} op_sel:[1,0,0] op_sel_hi:[1,1,0] cbsz:4 blgp:4
// OPSEL-DAG: v_mfma_scale_f32_16x16x128_f8f6f4 {{.*}} op_sel:[0,1,0] op_sel_hi:[1,1,0] cbsz:4 blgp:4
// OPSEL-DAG: v_mfma_scale_f32_16x16x128_f8f6f4 {{.*}} op_sel:[1,1,0] op_sel_hi:[1,1,0] cbsz:4 blgp:4

// Per K step and wave: 128 MFMAs (8 x 8 subtiles x 2 K steps of 128), 32
// fragment reads of 16 bytes, 16 direct-to-LDS copies of 16 bytes (the
// wave's share of two 256 x 128-byte tiles) and 8 scale dwords.
// RUN: awk '/^gemm/{g=1} g && /^\.LBB/{l=1} l && /v_mfma_scale/{m++} l && /ds_read_b128/{d++} l && /offen lds/{c++} l && /buffer_load_dword v/{s++} l && /s_cbranch/{print m, d, c, s; exit}' %t.s | FileCheck %s --check-prefix=COUNT
// COUNT: 128 32 16 8

func.func @gemm(%a: tensor<512x4096xf4E2M1FN>, %as: tensor<512x128xf8E8M0FNU>, %b: tensor<256x4096xf4E2M1FN>, %bs: tensor<256x128xf8E8M0FNU>) -> tensor<512x256xbf16> {
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<512x4096xf4E2M1FN>, tensor<512x128xf8E8M0FNU>, tensor<256x4096xf4E2M1FN>, tensor<256x128xf8E8M0FNU> -> tensor<512x256xbf16>
  return %c : tensor<512x256xbf16>
}
