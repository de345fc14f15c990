// The split-K GEMM at the ISA level (one 128 x 128 tile, K = 8192: 32 steps
// of 256 in 8 splits of 4): the split GEMM and the add-splits kernel fit
// a CU with 64 KiB of LDS (the 128 x 128 tile's double buffer), no spills
// and no scratch; the split GEMM stages its operands with direct-to-LDS
// loads and runs the FP4 scaled MFMAs; the add-splits kernel reads its
// partial sums 16 bytes at a time.
// RUN: mxfp4-run compile %s --target=gfx950 --assembly=%t.s
// RUN: FileCheck %s < %t.s

// CHECK-LABEL: gemm_128x128x8192_t128x128_split8:
// CHECK: buffer_load_dwordx4 v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen lds
// CHECK: s_waitcnt vmcnt(0)
// CHECK-NEXT: s_barrier
// CHECK: v_mfma_scale_f32_16x16x128_f8f6f4 {{.*}} cbsz:4 blgp:4
// CHECK-NOT: scratch_
// CHECK: s_endpgm
// CHECK: amdhsa.kernels:
// CHECK: .group_segment_fixed_size: 65536
// CHECK: .name: gemm_128x128x8192_t128x128_split8
// CHECK: .private_segment_fixed_size: 0
// CHECK: .sgpr_spill_count: 0
// CHECK: .vgpr_spill_count: 0
// CHECK-LABEL: add_splits_8x128x128_f32:
// CHECK: buffer_load_dwordx4
// CHECK-NOT: scratch_
// CHECK: buffer_store_dwordx4
// CHECK: s_endpgm
// CHECK: amdhsa.kernels:
// CHECK: .group_segment_fixed_size: 0
// CHECK: .name: add_splits_8x128x128_f32
// CHECK: .private_segment_fixed_size: 0
// CHECK: .vgpr_spill_count: 0

func.func @wgrad(%a: tensor<128x8192xf4E2M1FN>, %sa: tensor<128x256xf8E8M0FNU>, %b: tensor<128x8192xf4E2M1FN>, %sb: tensor<128x256xf8E8M0FNU>) -> tensor<128x128xf32> {
  %c = mxfp4.scaled_matmul %a scale %sa, %b scale %sb : tensor<128x8192xf4E2M1FN>, tensor<128x256xf8E8M0FNU>, tensor<128x8192xf4E2M1FN>, tensor<128x256xf8E8M0FNU> -> tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}
