//===- MXFP4ToAMDGPU.h - mxfp4 to gfx950 kernels ----------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Names shared by convert-mxfp4-to-amdgpu and the runtimes that launch its
// output (the pass itself is declared in Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_CONVERSION_MXFP4TOAMDGPU_MXFP4TOAMDGPU_H
#define MXFP4_CONVERSION_MXFP4TOAMDGPU_MXFP4TOAMDGPU_H

#include "llvm/ADT/StringRef.h"

namespace mlir::mxfp4::gfx950 {

/// The gpu.module that holds every generated kernel.
constexpr llvm::StringLiteral kKernelModuleName = "mxfp4_kernels";

/// Argument and result attribute of a host function: the tensor type that a
/// flat device buffer holds (FP4 packed two to a byte, low nibble first).
constexpr llvm::StringLiteral kTensorAttrName = "mxfp4.tensor";

} // namespace mlir::mxfp4::gfx950

#endif // MXFP4_CONVERSION_MXFP4TOAMDGPU_MXFP4TOAMDGPU_H
