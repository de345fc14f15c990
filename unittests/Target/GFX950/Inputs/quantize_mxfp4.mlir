module attributes {gpu.container_module} {
  gpu.module @quantize [#rocdl.target<chip = "gfx950", abi = "500">] {
    // One 32-element MX block per lane: amax -> E8M0 scale -> 16 packed FP4 bytes.
    gpu.func @quantize_mxfp4(%X: memref<1048576xf32, #gpu.address_space<global>>,
                             %Q: memref<524288xi8, #gpu.address_space<global>>,
                             %S: memref<32768xi8, #gpu.address_space<global>>)
        kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %c256 = arith.constant 256 : index
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %b0 = arith.muli %bid, %c256 : index
      %blk = arith.addi %b0, %tid : index
      %xo = arith.muli %blk, %c32 : index
      %x = vector.load %X[%xo] : memref<1048576xf32, #gpu.address_space<global>>, vector<32xf32>
      %ax = math.absf %x : vector<32xf32>
      %amax = vector.reduction <maxnumf>, %ax : vector<32xf32> into f32
      // E8M0 exponent = floor(log2(amax)) - 2 (FP4 max is 6 = 1.5 * 2^2), clamped.
      %bits = arith.bitcast %amax : f32 to i32
      %c23 = arith.constant 23 : i32
      %e = arith.shrui %bits, %c23 : i32
      %c255 = arith.constant 255 : i32
      %ee = arith.andi %e, %c255 : i32
      %c2 = arith.constant 2 : i32
      %es = arith.subi %ee, %c2 : i32
      %c1 = arith.constant 1 : i32
      %c254 = arith.constant 254 : i32
      %lo = arith.maxsi %es, %c1 : i32
      %sc = arith.minsi %lo, %c254 : i32
      %sc8 = arith.trunci %sc : i32 to i8
      %scale = arith.bitcast %sc8 : i8 to f8E8M0FNU
      %sv = vector.broadcast %scale : f8E8M0FNU to vector<32xf8E8M0FNU>
      %q = arith.scaling_truncf %x, %sv : vector<32xf32>, vector<32xf8E8M0FNU> to vector<32xf4E2M1FN>
      %qb = vector.bitcast %q : vector<32xf4E2M1FN> to vector<16xi8>
      %qo = arith.muli %blk, %c16 : index
      vector.store %qb, %Q[%qo] : memref<524288xi8, #gpu.address_space<global>>, vector<16xi8>
      memref.store %sc8, %S[%blk] : memref<32768xi8, #gpu.address_space<global>>
      gpu.return
    }
  }
}
