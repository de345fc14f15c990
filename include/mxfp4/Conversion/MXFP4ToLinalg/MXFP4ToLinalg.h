//===- MXFP4ToLinalg.h - mxfp4 to linalg conversion -------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_CONVERSION_MXFP4TOLINALG_MXFP4TOLINALG_H
#define MXFP4_CONVERSION_MXFP4TOLINALG_MXFP4TOLINALG_H

namespace mlir {
class RewritePatternSet;
class TypeConverter;
} // namespace mlir

namespace mlir::mxfp4 {

/// Adds to `converter` the rule of the CPU data ABI: tensors of f4E2M1FN and
/// f8E8M0FNU become tensors of i8 holding one code or scale byte each.
void populateMXFP4ToLinalgTypeConversion(TypeConverter &converter);

/// Adds the patterns that expand quantize, dequantize, hadamard and
/// scaled_matmul into bit-exact linalg/vector/scf code on tensors. With
/// `x86Avx512BF16`, scaled_matmul with static shapes uses vdpbf16ps.
void populateMXFP4ToLinalgConversionPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns,
                                             bool x86Avx512BF16 = false);

} // namespace mlir::mxfp4

#endif // MXFP4_CONVERSION_MXFP4TOLINALG_MXFP4TOLINALG_H
