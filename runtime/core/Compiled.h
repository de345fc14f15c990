//===- Compiled.h - what `mxfp4-run compile --target=sm_90a` wrote -*- C++
//-*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The plan and the code object (a cubin, a gfx950 hsaco), from plan.txt and
// kernels.cubin or from host.so,
// which carries both and the plan's functions as machine code. Everything
// is read and checked before the driver is loaded, so a missing file, a
// library of another ABI version or an unknown function is reported without
// a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_COMPILED_H
#define MXFP4_RUNTIME_CORE_COMPILED_H

#include "HostLibrary.h"
#include "Plan.h"

#include "mxfp4/Formats/Json.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::mxfp4::runtime {

class Compiled {
public:
  /// PLAN and CUBIN files.
  Compiled(const std::string &planPath, const std::string &codeObjectPath);
  /// A host library.
  explicit Compiled(const std::string &hostPath);

  /// Whether the plan has `function`.
  bool has(const std::string &function) const;
  /// `function`'s checked records and, through a library, its code.
  Program program(const std::string &function) const;
  /// The plan's text, which identifies the compile in checkpoints.
  const std::string &planText() const { return text; }
  /// Where the plan came from, for messages.
  const std::string &planOrigin() const { return planPath; }
  /// The kernels' code object, for Device::loadModule.
  const void *codeObject() const;
  /// Where the code object came from, for messages.
  const std::string &codeObjectOrigin() const { return codeObjectPath; }
  /// compiled.json beside the plan (the compiler's commit, target, recipe
  /// and model), which every run's metrics copy; null if the folder has
  /// none (compiled before it existed).
  const mlir::mxfp4::JsonValue &provenance() const { return compiledJson; }

private:
  std::unique_ptr<HostLibrary> library;
  std::string planPath, codeObjectPath, text;
  std::vector<char> codeObjectFile;
  mlir::mxfp4::JsonValue compiledJson;
};

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_COMPILED_H
