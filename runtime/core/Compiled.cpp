//===- Compiled.cpp - what `mxfp4-run compile --target=sm_90a` wrote ------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Compiled.h"

#include "Failure.h"
#include "Npy.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace mlir::mxfp4::runtime {

/// compiled.json in the folder of `path`, if it has one.
static JsonValue readProvenance(const std::string &path) {
  std::filesystem::path file =
      std::filesystem::path(path).parent_path() / "compiled.json";
  std::ifstream in(file);
  if (!in)
    return JsonValue();
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  std::string error;
  std::optional<JsonValue> value = parseJson(text, error);
  if (!value || value->kind != JsonValue::Object)
    fail("'" + file.string() + "' is not a JSON object" +
         (value ? std::string() : ": " + error));
  return *value;
}

Compiled::Compiled(const std::string &planPath,
                   const std::string &codeObjectPath)
    : planPath(planPath), codeObjectPath(codeObjectPath) {
  std::vector<char> plan = readFile(planPath);
  text.assign(plan.begin(), plan.end());
  codeObjectFile = readFile(codeObjectPath);
  // Drivers take a code object by its address alone: a text image (the
  // emulated HIP runtime's kernels.mlir) ends at a NUL; an ELF ignores it.
  codeObjectFile.push_back('\0');
  compiledJson = readProvenance(planPath);
}

Compiled::Compiled(const std::string &hostPath)
    : library(std::make_unique<HostLibrary>(hostPath)), planPath(hostPath),
      codeObjectPath(hostPath), text(library->manifest()),
      compiledJson(readProvenance(hostPath)) {}

bool Compiled::has(const std::string &function) const {
  std::vector<std::string> names = functionNames(text);
  return std::find(names.begin(), names.end(), function) != names.end();
}

Program Compiled::program(const std::string &function) const {
  Program program;
  program.records = readFunction(text, planPath, function, &program.memory);
  if (library) {
    program.code = library->function(function);
    program.kernelNames = library->kernelNames();
  }
  return program;
}

const void *Compiled::codeObject() const {
  return library ? library->cubin() : codeObjectFile.data();
}

} // namespace mlir::mxfp4::runtime
