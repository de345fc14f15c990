//===- DeviceABI.h - how mxfp4 GPU programs hold tensors ---------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Names shared by the mxfp4-to-GPU conversions (convert-mxfp4-to-amdgpu,
// convert-mxfp4-to-nvgpu) and the runtimes that launch their output.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_CONVERSION_MXFP4TOGPUCOMMON_DEVICEABI_H
#define MXFP4_CONVERSION_MXFP4TOGPUCOMMON_DEVICEABI_H

// Host functions mark each buffer with the tensor type it holds (FP4
// packed two to a byte, low nibble first) in kTensorAttrName.
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"

#include "llvm/ADT/StringRef.h"

namespace mlir::mxfp4 {

/// The gpu.module that holds every generated kernel.
constexpr llvm::StringLiteral kKernelModuleName = "mxfp4_kernels";

} // namespace mlir::mxfp4

#endif // MXFP4_CONVERSION_MXFP4TOGPUCOMMON_DEVICEABI_H
