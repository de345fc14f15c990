//===- compiled.cpp - what `mxfp4-run compile --target=sm_90a` wrote ------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "compiled.h"

#include "npy.h"

#include <algorithm>

Compiled::Compiled(const std::string &planPath, const std::string &cubinPath)
    : planPath(planPath), cubinPath(cubinPath) {
  std::vector<char> plan = readFile(planPath);
  text.assign(plan.begin(), plan.end());
  cubinFile = readFile(cubinPath);
}

Compiled::Compiled(const std::string &hostPath)
    : library(std::make_unique<HostLibrary>(hostPath)), planPath(hostPath),
      cubinPath(hostPath), text(library->manifest()) {}

bool Compiled::has(const std::string &function) const {
  std::vector<std::string> names = functionNames(text);
  return std::find(names.begin(), names.end(), function) != names.end();
}

Program Compiled::program(const std::string &function) const {
  Program program;
  program.records = readFunction(text, planPath, function);
  checkLifetimes(program.records);
  if (library) {
    program.code = library->function(function);
    program.kernelNames = library->kernelNames();
  }
  return program;
}

const void *Compiled::cubin() const {
  return library ? library->cubin() : cubinFile.data();
}
