//===- ElementType.h - element types at the runtime boundary ----*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The element types a function may exchange with the host, and the NumPy
// dtype each one travels as (docs/Semantics.md section 2.5): f4E2M1FN codes
// one per uint8 (sign in bit 3), f8E8M0FNU scale bytes as uint8, bf16 as
// uint16 bit patterns.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_ELEMENTTYPE_H
#define MXFP4_RUNTIME_ELEMENTTYPE_H

#include "mxfp4/Runtime/HostArray.h"

namespace mlir::mxfp4 {

/// An element type of a tensor or a scalar at the runtime boundary.
enum class ElementType {
  F32,
  F64,
  BF16,
  I8,
  I32,
  I64,
  Index,
  F4E2M1FN,
  F8E8M0FNU
};

/// Returns the dtype that holds elements of `type` in a HostArray.
DType getStorageDType(ElementType type);

/// Returns the MLIR spelling of `type` ("f32", "f4E2M1FN", ...).
llvm::StringRef getElementTypeName(ElementType type);

/// Returns the value of the E2M1 code in the low four bits of `code`.
float decodeE2M1(uint8_t code);

/// Returns the f32 value of the bf16 bit pattern `bits`.
float decodeBF16(uint16_t bits);

} // namespace mlir::mxfp4

#endif // MXFP4_RUNTIME_ELEMENTTYPE_H
