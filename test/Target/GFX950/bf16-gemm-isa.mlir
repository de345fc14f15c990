// The bf16 GEMM of convert-linalg-matmul-to-amdgpu at the ISA level: the LM
// head's Fprop shape with 512 tokens (8 tiles of 128 x 128, K = 512 in 8
// steps of 64, split in 2 along K, then the reduction launch). Direct-to-LDS
// buffer loads, the wait for them once at the loop's top, 16-byte LDS
// fragment reads, 32 v_mfma_f32_16x16x32_bf16 a K step, 64 KiB of LDS, and
// no spills or scratch.
// RUN: mxfp4-run compile %s --target=gfx950 --gemm-precision=bf16 --assembly=%t.s
// RUN: FileCheck %s < %t.s
// RUN: FileCheck %s --check-prefix=LOOP < %t.s
// RUN: mxfp4-run compile %s --target=gfx950 --gemm-precision=f32 --assembly=%t.f32.s
// RUN: FileCheck %s --check-prefix=F32 < %t.f32.s

// CHECK-LABEL: kernel_0:
// CHECK: buffer_load_dwordx4 v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen lds
// CHECK: s_waitcnt vmcnt(0)
// CHECK-NEXT: s_barrier
// CHECK-NEXT: ds_read_b128
// CHECK-NOT: scratch_
// CHECK: s_endpgm
// CHECK: .amdhsa_group_segment_fixed_size 65536
// CHECK: .amdhsa_private_segment_fixed_size 0
// CHECK: amdhsa.kernels:
// CHECK: .group_segment_fixed_size: 65536
// CHECK: .name: kernel_0
// CHECK: .private_segment_fixed_size: 0
// CHECK: .sgpr_spill_count: 0
// CHECK: .vgpr_spill_count: 0
// CHECK: .name: kernel_1
// CHECK: amdhsa.target: amdgcn-amd-amdhsa--gfx950

// The K loop (rotated: its MFMA block, then the wait, the fragment reads
// and the next step's copies): 32 bf16 MFMAs a step, no other MFMA.
// LOOP-LABEL: kernel_0:
// LOOP-NOT: v_mfma
// LOOP: s_branch [[HEADER:\.LBB[0-9_]+]]
// LOOP-NEXT: [[BODY:\.LBB[0-9_]+]]:
// LOOP-COUNT-32: v_mfma_f32_16x16x32_bf16 v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}]
// LOOP-NOT: v_mfma
// LOOP: [[HEADER]]:
// LOOP-NOT: v_mfma
// LOOP: s_cbranch_scc1 [[BODY]]
// LOOP-NOT: v_mfma
// LOOP: s_endpgm

// --gemm-precision=f32 keeps the generic f32 kernel: no MFMA.
// F32-NOT: v_mfma
// F32: s_endpgm
func.func @lm_head(%x: tensor<512x512xbf16>, %w: tensor<256x512xbf16>) -> tensor<512x256xf32> {
  %e = tensor.empty() : tensor<512x256xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<512x256xf32>) -> tensor<512x256xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<512x512xbf16>, tensor<256x512xbf16>) outs(%z : tensor<512x256xf32>) -> tensor<512x256xf32>
  return %y : tensor<512x256xf32>
}
