//===- PackedCall.cpp - calls through invokePacked ------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The ExecutionEngine wraps every function `g` in `_mlir_g(void **args)`,
// where args[i] points at the i-th argument of `g` and, if `g` returns a
// value, a last entry points at storage for it. For `g = _mlir_ciface_f`:
// - a tensor operand is a pointer to a memref descriptor, so its entry points
//   at a variable holding that pointer;
// - a scalar operand's entry points at the scalar;
// - one scalar result is returned by value (the last entry); two or more are
//   returned through a pointer to a struct passed before every argument.
//
//===----------------------------------------------------------------------===//

#include "PackedCall.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>

using namespace mlir;
using namespace mlir::mxfp4;

/// Returns the words of a strided memref descriptor of `array` with the
/// identity layout: allocated and aligned pointer, offset 0, sizes, strides.
static std::vector<int64_t> makeDescriptor(HostArray &array) {
  int64_t rank = array.shape.size();
  auto data = reinterpret_cast<intptr_t>(array.bytes.data());
  std::vector<int64_t> words = {data, data, /*offset=*/0};
  words.insert(words.end(), array.shape.begin(), array.shape.end());
  words.resize(3 + 2 * rank);
  int64_t stride = 1;
  for (int64_t dim = rank - 1; dim >= 0; --dim) {
    words[3 + rank + dim] = stride;
    stride *= array.shape[dim];
  }
  return words;
}

llvm::Error mlir::mxfp4::callPacked(ExecutionEngine &engine,
                                    llvm::StringRef function,
                                    llvm::ArrayRef<PackedOperand> operands,
                                    llvm::ArrayRef<HostArray *> scalarResults) {
  static_assert(sizeof(intptr_t) == sizeof(int64_t),
                "descriptors are built for 64-bit hosts");
  // Every pointer stored in `packed` must stay valid until the call returns,
  // so all storage is sized up front.
  std::vector<std::vector<int64_t>> descriptors(operands.size());
  std::vector<void *> descriptorPointers(operands.size());
  llvm::SmallVector<void *> packed;

  // Two or more scalar results: a struct with natural alignment (every field
  // here is 4 or 8 bytes).
  llvm::SmallVector<size_t> fieldOffsets;
  std::vector<uint64_t> resultStruct;
  void *resultStructPointer = nullptr;
  if (scalarResults.size() > 1) {
    size_t size = 0;
    for (HostArray *result : scalarResults) {
      size_t fieldSize = getDTypeSize(result->dtype);
      size = llvm::alignTo(size, fieldSize);
      fieldOffsets.push_back(size);
      size += fieldSize;
    }
    resultStruct.assign(llvm::divideCeil(size, 8), 0);
    resultStructPointer = resultStruct.data();
    packed.push_back(&resultStructPointer);
  }

  for (auto [i, operand] : llvm::enumerate(operands)) {
    if (!operand.isTensor) {
      packed.push_back(operand.array->bytes.data());
      continue;
    }
    descriptors[i] = makeDescriptor(*operand.array);
    descriptorPointers[i] = descriptors[i].data();
    packed.push_back(&descriptorPointers[i]);
  }
  if (scalarResults.size() == 1)
    packed.push_back(scalarResults.front()->bytes.data());

  if (llvm::Error error =
          engine.invokePacked(("_mlir_ciface_" + function).str(), packed))
    return error;

  for (auto [result, offset] : llvm::zip_equal(
           scalarResults.take_front(fieldOffsets.size()), fieldOffsets))
    std::memcpy(result->bytes.data(),
                reinterpret_cast<const char *>(resultStruct.data()) + offset,
                result->bytes.size());
  return llvm::Error::success();
}
