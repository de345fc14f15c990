//===- json.h - JSON text ---------------------------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CUDA_JSON_H
#define MXFP4_RUNTIME_CUDA_JSON_H

#include <string>

/// `s` as a JSON string literal.
std::string jsonString(const std::string &s);

#endif // MXFP4_RUNTIME_CUDA_JSON_H
