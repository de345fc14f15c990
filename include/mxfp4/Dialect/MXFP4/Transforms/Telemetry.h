//===- Telemetry.h - statistics of one quantization -------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DIALECT_MXFP4_TRANSFORMS_TELEMETRY_H
#define MXFP4_DIALECT_MXFP4_TRANSFORMS_TELEMETRY_H

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"

#include "mlir/IR/Builders.h"

namespace mlir::mxfp4 {

/// The columns of a telemetry row, in order.
constexpr llvm::StringLiteral kTelemetryFields[] = {
    "elements",       // number of elements quantized
    "clipped",        // fraction with |x| above the block's 6 * 2^s
    "flushed",        // fraction of nonzero elements that became zero
    "sqnr_db",        // 10 log10(sum x^2 / sum (x - dequantized)^2)
    "scale_exp_min",  // smallest unbiased scale exponent s
    "scale_exp_max",  // largest s
    "scale_exp_mean", // mean s over blocks
    "nan_blocks",     // fraction of elements in NaN-scale blocks
};

/// Builds the statistics of `quantize` applied to `input` as a
/// tensor<8xf32> (kTelemetryFields) with upstream ops, so every target
/// computes them.
Value buildQuantizationTelemetry(OpBuilder &b, Location loc, Value input,
                                 QuantizeOp quantize);

} // namespace mlir::mxfp4

#endif // MXFP4_DIALECT_MXFP4_TRANSFORMS_TELEMETRY_H
