//===- Sm90a.h - compile for NVIDIA Hopper (sm_90a) -------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `mxfp4-run compile --target=sm_90a`: a program's generic GPU kernels for
// an H100/H200 as PTX and a cubin, with the host plan, and the host
// functions compiled ahead of time.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_SM90A_H
#define MXFP4_API_SM90A_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::mxfp4 {

struct Sm90aArtifact {
  /// The host plan and the kernels in upstream dialects, as text.
  std::string kernelIR;
  std::string ptx;
  std::vector<uint8_t> cubin;
  /// The host functions as a plan for runtime/ (HostPlan.h).
  std::string plan;
  /// The same functions as machine code for this host, with the cubin and
  /// the plan inside: an object for linkHostLibrary (HostLibrary.h).
  std::string hostObject;
  int64_t kernels = 0;
  double compileSeconds = 0;
};

/// Compiles `source` (after `recipe`, if any) for sm_90a. The CUDA toolkit
/// (ptxas, libdevice) is found in $MXFP4_CUDA_PATH or /usr/local/cuda.
/// `gemmPrecision`: "bf16" puts high-precision GEMMs on bf16 tensor cores
/// (PyTorch autocast numerics), "f32" keeps the CPU path's f32.
llvm::Expected<Sm90aArtifact>
compileForSm90a(llvm::StringRef source, llvm::StringRef name,
                llvm::StringRef recipe = "",
                llvm::StringRef gemmPrecision = "bf16");

} // namespace mlir::mxfp4

#endif // MXFP4_API_SM90A_H
