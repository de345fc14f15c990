// RUN: mxfp4-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(convert-linalg-matmul-to-amdgpu,cse))" | FileCheck %s

// A linear layer's Fprop (weights [out, in]) on bf16 operands: both are K
// contiguous and read in place. Zero fill dropped (the GEMM writes C); 2 x 4
// tiles of 128, K = 256 in 4 steps of 64 (no split: too few steps); every
// K step copied global -> LDS directly, 16 bytes a lane, into a double
// buffer; 2 x 16 bf16 MFMAs 16x16x32 a step (D^T = B A^T), f32 results
// stored 4 columns a lane.
// CHECK-LABEL: func.func @linear
// CHECK-NOT: linalg.fill
// CHECK: %[[X:.*]] = memref.memory_space_cast %{{.*}} : memref<76800xbf16> to memref<76800xbf16, #gpu.address_space<global>>
// CHECK: %[[W:.*]] = memref.memory_space_cast %{{.*}} : memref<131072xbf16> to memref<131072xbf16, #gpu.address_space<global>>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c12, %{{.*}} = %c1, %{{.*}} = %c1) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256,
// CHECK-SAME: workgroup(%[[LDS:.*]] : memref<32768xbf16, #gpu.address_space<workgroup>>)
// CHECK: amdgpu.fat_raw_buffer_cast %[[X]] resetOffset
// CHECK: amdgpu.fat_raw_buffer_cast %[[W]] resetOffset
// CHECK-COUNT-4: amdgpu.gather_to_lds {{.*}}, %[[LDS]][%{{.*}}] : vector<8xbf16>
// CHECK: scf.for
// CHECK: amdgpu.memory_counter_wait load(0)
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-16: vector.load %[[LDS]][%{{.*}}] : memref<32768xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: scf.if
// CHECK-COUNT-8: amdgpu.gather_to_lds
// CHECK: }
// CHECK-COUNT-32: amdgpu.mfma 16x16x32 {{.*}} : vector<8xbf16>, vector<8xbf16>, vector<4xf32>
// CHECK: scf.yield
// CHECK-NOT: vector.load {{.*}}memref<153600xf32
// CHECK: vector.store %{{.*}} : memref<153600xf32, #amdgpu.address_space<fat_raw_buffer>>, vector<4xf32>
// CHECK-NOT: linalg.matmul
func.func @linear(%x: memref<300x256xbf16>, %w: memref<512x256xbf16>, %y: memref<300x512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<300x512xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<300x256xbf16>, memref<512x256xbf16>) outs(%y : memref<300x512xf32>)
  return
}

// -----

// Wgrad (both operands with their rows contiguous, f32) accumulating into
// C: each operand is packed once into a bf16 K-major copy (ties to even, 8
// K a work-item), then the GEMM; C is read and added. 1 x 1 tile, 64 steps:
// split K in 16 of 4 steps, partial tiles to a workspace and a second
// launch adds them to C in split order.
// CHECK-LABEL: func.func @wgrad
// CHECK: memref.alloc() : memref<1x96x4096xbf16>
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<393216xf32, #amdgpu.address_space<fat_raw_buffer>>
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: vector.store %{{.*}} : memref<393216xbf16, #amdgpu.address_space<fat_raw_buffer>>, vector<8xbf16>
// CHECK: memref.alloc() : memref<1x64x4096xbf16>
// CHECK: gpu.launch
// CHECK: memref.alloc() : memref<16x1x96x64xf32>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c16)
// CHECK-COUNT-32: amdgpu.mfma 16x16x32
// CHECK: vector.store %{{.*}} : memref<98304xf32, #amdgpu.address_space<fat_raw_buffer>>, vector<4xf32>
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<6144xf32, #amdgpu.address_space<fat_raw_buffer>>
// CHECK-COUNT-16: arith.addf
// CHECK: memref.store %{{.*}} : memref<6144xf32, #amdgpu.address_space<fat_raw_buffer>>
func.func @wgrad(%dy: memref<4096x96xf32>, %x: memref<4096x64xf32>, %dw: memref<96x64xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dy, %x : memref<4096x96xf32>, memref<4096x64xf32>) outs(%dw : memref<96x64xf32>)
  return
}

// -----

// Attention's P V (batched; V's rows contiguous: packed) and Q K^T as a
// generic contraction (read in place); ragged K = 20 is padded to 24 in
// the packed copy. An operand read twice in the same orientation is packed
// once.
// CHECK-LABEL: func.func @attention
// CHECK: memref.alloc() : memref<4x64x24xbf16>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c4, %{{.*}} = %c1)
// CHECK: amdgpu.mfma 16x16x32
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c4, %{{.*}} = %c1)
// CHECK: amdgpu.mfma 16x16x32
// CHECK-NOT: memref.alloc() : memref<4x64x24xbf16>
// CHECK-NOT: linalg.
func.func @attention(%p: memref<4x128x20xbf16>, %v: memref<4x20x64xbf16>, %o: memref<4x128x64xf32>,
                     %q: memref<4x128x64xbf16>, %k: memref<4x100x64xbf16>, %s: memref<4x128x100xf32>) {
  linalg.batch_matmul ins(%p, %v : memref<4x128x20xbf16>, memref<4x20x64xbf16>) outs(%o : memref<4x128x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<4x128x64xbf16>, memref<4x100x64xbf16>) outs(%s : memref<4x128x100xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.batch_matmul ins(%p, %v : memref<4x128x20xbf16>, memref<4x20x64xbf16>) outs(%o : memref<4x128x64xf32>)
  return
}

// -----

// Not contractions this kernel covers: left for the generic lowering.
// CHECK-LABEL: func.func @unsupported
// CHECK: linalg.matmul
// CHECK-NOT: gpu.launch
func.func @unsupported(%a: memref<64x64xi32>, %b: memref<64x64xi32>, %c: memref<64x64xi32>) {
  linalg.matmul ins(%a, %b : memref<64x64xi32>, memref<64x64xi32>) outs(%c : memref<64x64xi32>)
  return
}
