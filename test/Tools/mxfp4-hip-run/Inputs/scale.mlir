// Two kernels for the emulated HIP runtime: out[i] = in[i] * s + n over 128
// elements in two workgroups, and a store past the end of a memref.

module attributes {gpu.container_module} {
  gpu.module @mxfp4_kernels {
    gpu.func @scale(%in: memref<128xf32>, %out: memref<128xf32>, %s: f32,
                    %n: i64) kernel {
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %c64 = arith.constant 64 : index
      %base = arith.muli %bid, %c64 : index
      %i = arith.addi %base, %tid : index
      %v = memref.load %in[%i] : memref<128xf32>
      %m = arith.mulf %v, %s : f32
      %nf = arith.sitofp %n : i64 to f32
      %r = arith.addf %m, %nf : f32
      memref.store %r, %out[%i] : memref<128xf32>
      gpu.return
    }
    gpu.func @oob(%out: memref<16xi32>) kernel {
      %tid = gpu.thread_id x
      %c = arith.constant 7 : i32
      memref.store %c, %out[%tid] : memref<16xi32>
      gpu.return
    }
  }
}
