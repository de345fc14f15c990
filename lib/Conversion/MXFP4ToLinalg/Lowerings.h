//===- Lowerings.h - the pattern groups of MXFP4ToLinalg --------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_MXFP4TOLINALG_LOWERINGS_H
#define MXFP4_LIB_CONVERSION_MXFP4TOLINALG_LOWERINGS_H

namespace mlir {
class RewritePatternSet;
class TypeConverter;
} // namespace mlir

namespace mlir::mxfp4 {

/// quantize, absorbing a rotation along its axis, to one vectorized pass
/// over memory (QuantizeToVector.cpp).
void populateQuantizeToVectorPatterns(const TypeConverter &converter,
                                      RewritePatternSet &patterns);

/// dequantize to linalg.generic (DequantizeToLinalg.cpp).
void populateDequantizeLoweringPatterns(const TypeConverter &converter,
                                        RewritePatternSet &patterns);

/// hadamard to a loop nest of in-register butterflies (HadamardToVector.cpp).
void populateHadamardLoweringPatterns(const TypeConverter &converter,
                                      RewritePatternSet &patterns);

/// scaled_matmul to exact block dot products (ScaledMatmulToLoops.cpp).
void populateScaledMatmulLoweringPatterns(const TypeConverter &converter,
                                          RewritePatternSet &patterns);

/// scaled_matmul on AVX-512 BF16 dot products (ScaledMatmulToX86Vector.cpp);
/// static shapes only, preferred over the reference loops when added.
void populateScaledMatmulToX86VectorPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns);

} // namespace mlir::mxfp4

#endif // MXFP4_LIB_CONVERSION_MXFP4TOLINALG_LOWERINGS_H
