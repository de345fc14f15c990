module attributes {gpu.container_module} {
  gpu.module @spill [#rocdl.target<chip = "gfx950", abi = "500">] {
    // Eight 32x32 accumulators (128 VGPRs) under an 8-waves-per-SIMD cap
    // (64 VGPRs): the register allocator has to spill.
    gpu.func @spill_tile(%A: memref<1048576xi8, #gpu.address_space<global>>,
                         %C: memref<1048576xf32, #gpu.address_space<global>>,
                         %K: i32)
        kernel attributes {known_block_size = array<i32: 64, 1, 1>, rocdl.waves_per_eu = 8 : i32} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %c128 = arith.constant 128 : index
      %tid = gpu.thread_id x
      %Ki = arith.index_cast %K : i32 to index
      %n = arith.divui %Ki, %c128 : index
      %base = arith.muli %tid, %c16 : index
      %s = arith.constant dense<127> : vector<4xi8>
      %sc = vector.bitcast %s : vector<4xi8> to vector<4xf8E8M0FNU>
      %zero = arith.constant dense<0.0> : vector<16xf32>
      %r:8 = scf.for %i = %c0 to %n step %c1 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero, %a3 = %zero, %a4 = %zero, %a5 = %zero, %a6 = %zero, %a7 = %zero) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
        %o0 = arith.muli %i, %c128 : index
        %o = arith.addi %o0, %base : index
        %k0 = arith.constant 4096 : index
        %k1 = arith.constant 8192 : index
        %k2 = arith.constant 12288 : index
        %k3 = arith.constant 16384 : index
        %k4 = arith.constant 20480 : index
        %k5 = arith.constant 24576 : index
        %k6 = arith.constant 28672 : index
        %k7 = arith.constant 32768 : index
        %p0 = arith.addi %o, %k0 : index
        %p1 = arith.addi %o, %k1 : index
        %p2 = arith.addi %o, %k2 : index
        %p3 = arith.addi %o, %k3 : index
        %p4 = arith.addi %o, %k4 : index
        %p5 = arith.addi %o, %k5 : index
        %p6 = arith.addi %o, %k6 : index
        %p7 = arith.addi %o, %k7 : index
        %v0 = vector.load %A[%p0] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %f0 = vector.bitcast %v0 : vector<16xi8> to vector<32xf4E2M1FN>
        %v1 = vector.load %A[%p1] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %f1 = vector.bitcast %v1 : vector<16xi8> to vector<32xf4E2M1FN>
        %v2 = vector.load %A[%p2] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %f2 = vector.bitcast %v2 : vector<16xi8> to vector<32xf4E2M1FN>
        %v3 = vector.load %A[%p3] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %f3 = vector.bitcast %v3 : vector<16xi8> to vector<32xf4E2M1FN>
        %v4 = vector.load %A[%p4] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %f4 = vector.bitcast %v4 : vector<16xi8> to vector<32xf4E2M1FN>
        %v5 = vector.load %A[%p5] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %f5 = vector.bitcast %v5 : vector<16xi8> to vector<32xf4E2M1FN>
        %v6 = vector.load %A[%p6] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %f6 = vector.bitcast %v6 : vector<16xi8> to vector<32xf4E2M1FN>
        %v7 = vector.load %A[%p7] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %f7 = vector.bitcast %v7 : vector<16xi8> to vector<32xf4E2M1FN>
        %d0 = amdgpu.scaled_mfma 32x32x64 (%sc[0] * %f0) * (%sc[0] * %f1) + %a0 : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
        %d1 = amdgpu.scaled_mfma 32x32x64 (%sc[0] * %f1) * (%sc[0] * %f2) + %a1 : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
        %d2 = amdgpu.scaled_mfma 32x32x64 (%sc[0] * %f2) * (%sc[0] * %f3) + %a2 : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
        %d3 = amdgpu.scaled_mfma 32x32x64 (%sc[0] * %f3) * (%sc[0] * %f4) + %a3 : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
        %d4 = amdgpu.scaled_mfma 32x32x64 (%sc[0] * %f4) * (%sc[0] * %f5) + %a4 : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
        %d5 = amdgpu.scaled_mfma 32x32x64 (%sc[0] * %f5) * (%sc[0] * %f6) + %a5 : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
        %d6 = amdgpu.scaled_mfma 32x32x64 (%sc[0] * %f6) * (%sc[0] * %f7) + %a6 : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
        %d7 = amdgpu.scaled_mfma 32x32x64 (%sc[0] * %f7) * (%sc[0] * %f0) + %a7 : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
        scf.yield %d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
      }
      %co0 = arith.constant 0 : index
      %cc0 = arith.addi %co0, %base : index
      vector.store %r#0, %C[%cc0] : memref<1048576xf32, #gpu.address_space<global>>, vector<16xf32>
      %co1 = arith.constant 1024 : index
      %cc1 = arith.addi %co1, %base : index
      vector.store %r#1, %C[%cc1] : memref<1048576xf32, #gpu.address_space<global>>, vector<16xf32>
      %co2 = arith.constant 2048 : index
      %cc2 = arith.addi %co2, %base : index
      vector.store %r#2, %C[%cc2] : memref<1048576xf32, #gpu.address_space<global>>, vector<16xf32>
      %co3 = arith.constant 3072 : index
      %cc3 = arith.addi %co3, %base : index
      vector.store %r#3, %C[%cc3] : memref<1048576xf32, #gpu.address_space<global>>, vector<16xf32>
      %co4 = arith.constant 4096 : index
      %cc4 = arith.addi %co4, %base : index
      vector.store %r#4, %C[%cc4] : memref<1048576xf32, #gpu.address_space<global>>, vector<16xf32>
      %co5 = arith.constant 5120 : index
      %cc5 = arith.addi %co5, %base : index
      vector.store %r#5, %C[%cc5] : memref<1048576xf32, #gpu.address_space<global>>, vector<16xf32>
      %co6 = arith.constant 6144 : index
      %cc6 = arith.addi %co6, %base : index
      vector.store %r#6, %C[%cc6] : memref<1048576xf32, #gpu.address_space<global>>, vector<16xf32>
      %co7 = arith.constant 7168 : index
      %cc7 = arith.addi %co7, %base : index
      vector.store %r#7, %C[%cc7] : memref<1048576xf32, #gpu.address_space<global>>, vector<16xf32>
      gpu.return
    }
  }
}
