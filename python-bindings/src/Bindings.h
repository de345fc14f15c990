//===- Bindings.h - shared pieces of the mxfp4 Python module ----*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_PYTHON_BINDINGS_H
#define MXFP4_PYTHON_BINDINGS_H

#include "llvm/Support/Error.h"

#include <pybind11/pybind11.h>

#include <stdexcept>

namespace mlir::mxfp4 {

/// Raised for parse, verification, lowering, call and training errors; the
/// module registers it as `mxfp4.Mxfp4Error` (a ValueError).
struct Mxfp4Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Returns the value or raises Mxfp4Error with the located messages.
template <typename T> T unwrap(llvm::Expected<T> value) {
  if (!value)
    throw Mxfp4Error(llvm::toString(value.takeError()));
  return std::move(*value);
}

/// Adds llama_config, llama_step_source, train and study.
void bindTraining(pybind11::module_ &m);

} // namespace mlir::mxfp4

#endif // MXFP4_PYTHON_BINDINGS_H
