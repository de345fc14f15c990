// The fused attention kernels of convert-attention-to-amdgpu at the ISA
// level (seq 256, 2 KV heads of 2 query heads, head dim 128: the largest
// head dim, so the most registers and LDS): the forward and the backward's
// dq and dk/dv kernels on v_mfma_f32_16x16x32_bf16 and no other MFMA, LDS
// well within the 160 KiB of a CU (k and v^T tiles for the forward; rows
// and transposes of the walked tiles for the backward), no spills, no
// scratch. delta is a row reduction without MFMAs.
// RUN: mxfp4-run compile %S/../../Tools/mxfp4-run/Inputs/attention.mlir --target=gfx950 --gemm-precision=bf16 --assembly=%t.s
// RUN: FileCheck %s < %t.s
// RUN: grep -o 'v_mfma[a-z0-9_]*' %t.s | sort -u | FileCheck %s --check-prefix=KINDS

// CHECK-LABEL: attention_fwd_b1_s256_kv2x2_d128_hhhhf:
// CHECK-NOT: scratch_
// CHECK: v_mfma_f32_16x16x32_bf16
// CHECK-NOT: scratch_
// CHECK: s_endpgm
// CHECK: .group_segment_fixed_size: 35840
// CHECK: .name: attention_fwd_b1_s256_kv2x2_d128_hhhhf
// CHECK-NEXT: .private_segment_fixed_size: 0
// CHECK: .sgpr_spill_count: 0
// CHECK: .vgpr_spill_count: 0

// CHECK-LABEL: attention_bwd_delta_b1_s256_kv2x2_d128_hhhhfhhhh:
// CHECK-NOT: v_mfma
// CHECK: s_endpgm
// CHECK: .name: attention_bwd_delta_b1_s256_kv2x2_d128_hhhhfhhhh
// CHECK-NEXT: .private_segment_fixed_size: 0

// CHECK-LABEL: attention_bwd_dq_b1_s256_kv2x2_d128_hhhhfhhhh:
// CHECK-NOT: scratch_
// CHECK: v_mfma_f32_16x16x32_bf16
// CHECK-NOT: scratch_
// CHECK: s_endpgm
// CHECK: .group_segment_fixed_size: 53248
// CHECK: .name: attention_bwd_dq_b1_s256_kv2x2_d128_hhhhfhhhh
// CHECK-NEXT: .private_segment_fixed_size: 0
// CHECK: .sgpr_spill_count: 0
// CHECK: .vgpr_spill_count: 0

// CHECK-LABEL: attention_bwd_dkdv_b1_s256_kv2x2_d128_hhhhfhhhh:
// CHECK-NOT: scratch_
// CHECK: v_mfma_f32_16x16x32_bf16
// CHECK-NOT: scratch_
// CHECK: s_endpgm
// CHECK: .group_segment_fixed_size: 72192
// CHECK: .name: attention_bwd_dkdv_b1_s256_kv2x2_d128_hhhhfhhhh
// CHECK-NEXT: .private_segment_fixed_size: 0
// CHECK: .sgpr_spill_count: 0
// CHECK: .vgpr_spill_count: 0

// KINDS: v_mfma_f32_16x16x32_bf16
// KINDS-NOT: v_mfma
