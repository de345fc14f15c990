//===- Passes.td - mxfp4 general transform passes ---------*- tablegen -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Passes that are not specific to the mxfp4 dialect but that the project's
// pipelines need and upstream does not provide.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRANSFORMS_PASSES_TD
#define MXFP4_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DistinctResultBuffersPass
    : Pass<"mxfp4-distinct-result-buffers", "::mlir::func::FuncOp"> {
  let summary = "Give every memref result of a function its own buffer";
  let description = [{
    After bufferization, a function may return one buffer at several result
    positions (CSE merges equal computations, for example a deterministic
    Hadamard rotation and its inverse, which are the same arithmetic).
    Upstream `buffer-results-to-out-params` assumes distinct buffers: with
    `hoist-static-allocs` it replaces an allocation by the first out-parameter
    and crashes on the second. This pass copies every repeated result into a
    fresh allocation, so each out-parameter is written on its own.

    Example:

    ```mlir
    // Before
    func.func @f() -> (memref<4xf32>, memref<4xf32>) {
      %a = memref.alloc() : memref<4xf32>
      return %a, %a : memref<4xf32>, memref<4xf32>
    }
    // After
    func.func @f() -> (memref<4xf32>, memref<4xf32>) {
      %a = memref.alloc() : memref<4xf32>
      %b = memref.alloc() : memref<4xf32>
      memref.copy %a, %b : memref<4xf32> to memref<4xf32>
      return %a, %b : memref<4xf32>, memref<4xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

#endif // MXFP4_TRANSFORMS_PASSES_TD
