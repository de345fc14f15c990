//===- Contraction.h - linalg contractions as GPU GEMMs ---------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the bf16 GEMM lowerings of linalg contractions (LinalgToNVGPU on
// Hopper's warpgroup MMAs, LinalgToAMDGPU on gfx950's MFMAs) share: which
// linalg ops are one GEMM C[b, m, n] (+)= sum_k A[b, m, k] * B[b, n, k] and
// which memref dimension of each operand holds the batch, the rows and K;
// the zero fill a GEMM may overwrite instead of adding to; and the one
// work-item per element launch of their packing and split-K reductions.
// Each target then checks what its kernel covers (element types, strides,
// layouts, sizes).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_CONVERSION_GPUCOMMON_CONTRACTION_H
#define MXFP4_CONVERSION_GPUCOMMON_CONTRACTION_H

#include "mxfp4/Conversion/MXFP4ToGPUCommon/KernelBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

#include <optional>

namespace mlir::mxfp4::kernels {

/// A contraction operand: its memref and which of the memref's dimensions
/// hold the batch (-1 if unbatched), the rows (M for A and C, N for B) and
/// K (N for C).
struct ContractionOperand {
  Value memref;
  int64_t batchDim = -1, rowDim = 0, kDim = 0;

  /// The innermost memref dimension is K (N for C), not the rows.
  bool kInnermost() const {
    return kDim == cast<MemRefType>(memref.getType()).getRank() - 1;
  }
};

/// C[b, m, n] (+)= sum_k A[b, m, k] * B[b, n, k] in some layout.
struct LinalgContraction {
  ContractionOperand a, b, c;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  /// C starts as zeros: the kernel writes it rather than adding to it (the
  /// lowering decides, after matching).
  bool overwrite = false;
};

/// `op` as one GEMM, or nullopt: a linalg contraction on buffers (two
/// inputs, one init) with one M, N and K dimension, at most one batch
/// dimension and static loop ranges, whose indexing maps are projected
/// permutations of rank 2 (3 if batched) that name every dimension of their
/// operand. Matmul, batch_matmul, their transposed forms and generic
/// contractions all qualify; element types and strides are not checked.
std::optional<LinalgContraction> matchLinalgContraction(linalg::LinalgOp op);

/// True if `op` is a linalg.fill of a buffer with f32 +0.0.
bool isZeroFill(Operation *op);

/// Opens a 1-D launch of `items` work-items, `threads` a block, positions
/// the builder inside its `if (id < items)` and returns the id (and the
/// launch in `opened`).
Value openItemLaunch(KernelBuilder &kb, int64_t items, int64_t threads,
                     gpu::LaunchOp *opened = nullptr);

} // namespace mlir::mxfp4::kernels

#endif // MXFP4_CONVERSION_GPUCOMMON_CONTRACTION_H
