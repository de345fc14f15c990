//===- ArrayPrinter.h - readable printing of host arrays --------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_ARRAYPRINTER_H
#define MXFP4_RUNTIME_ARRAYPRINTER_H

#include "mxfp4/Runtime/ElementType.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::mxfp4 {

/// Returns the text of element `index` (row-major) of `array`, whose
/// elements are of `type`: floats with enough digits to round-trip ("%.9g"
/// for f32 and bf16, "%.17g" for f64), f4E2M1FN codes as their value
/// ("-1.5"), f8E8M0FNU bytes as "2^k" or "NaN".
std::string formatElement(const HostArray &array, ElementType type,
                          int64_t index);

/// Prints `array` as nested rows the way NumPy's repr does, elements
/// right-aligned, one innermost row per line; an array of more than 1000
/// elements shows only the first and last 3 entries of each longer dimension,
/// with "..." between them. A 0-d array prints as its single element.
void printArray(llvm::raw_ostream &os, const HostArray &array,
                ElementType type);

} // namespace mlir::mxfp4

#endif // MXFP4_RUNTIME_ARRAYPRINTER_H
