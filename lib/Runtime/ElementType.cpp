//===- ElementType.cpp - element types at the runtime boundary ------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Runtime/ElementType.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir::mxfp4;

DType mlir::mxfp4::getStorageDType(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return DType::Float32;
  case ElementType::F64:
    return DType::Float64;
  case ElementType::BF16:
    return DType::UInt16;
  case ElementType::I8:
  case ElementType::F4E2M1FN:
  case ElementType::F8E8M0FNU:
    return DType::UInt8;
  case ElementType::I32:
    return DType::Int32;
  case ElementType::I64:
  case ElementType::Index:
    return DType::Int64;
  }
  llvm_unreachable("unknown element type");
}

llvm::StringRef mlir::mxfp4::getElementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F64:
    return "f64";
  case ElementType::BF16:
    return "bf16";
  case ElementType::I8:
    return "i8";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  case ElementType::Index:
    return "index";
  case ElementType::F4E2M1FN:
    return "f4E2M1FN";
  case ElementType::F8E8M0FNU:
    return "f8E8M0FNU";
  }
  llvm_unreachable("unknown element type");
}

float mlir::mxfp4::decodeE2M1(uint8_t code) {
  static constexpr float kMagnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f,
                                           2.0f, 3.0f, 4.0f, 6.0f};
  float magnitude = kMagnitudes[code & 0x7];
  return (code & 0x8) ? -magnitude : magnitude;
}

float mlir::mxfp4::decodeBF16(uint16_t bits) {
  return llvm::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}
