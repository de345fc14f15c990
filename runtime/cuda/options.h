//===- options.h - the command line -----------------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CUDA_OPTIONS_H
#define MXFP4_RUNTIME_CUDA_OPTIONS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct Options {
  std::string planPath, cubinPath, function, timeJson;
  std::string hostPath; // --host: the library instead of PLAN CUBIN
  std::string trainDir, outDir = "."; // --train: the exported run
  int64_t steps = 0;                  // --train: at most this many steps
  std::vector<std::string> inputs, outputs;
  size_t repeat = 1;
  bool profile = false; // one more call, timing each launch
};

/// Parses the command line; fails with the usage or the wrong argument.
Options parseOptions(int argc, char **argv);

#endif // MXFP4_RUNTIME_CUDA_OPTIONS_H
