//===- Plan.cpp - a function of a host plan -------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Plan.h"

#include "Failure.h"

#include "mxfp4/Formats/HostPlan.h"

namespace mlir::mxfp4::runtime {

/// The records of `function`: its arguments, steps and results.
static std::vector<Record> getRecords(const HostFunction &function) {
  std::vector<Record> records;
  for (size_t i = 0; i < function.arguments.size(); ++i) {
    const HostValue &arg = function.arguments[i];
    Record &r = records.emplace_back();
    r.kind = Record::Arg;
    r.index = i;
    r.id = arg.id;
    r.bytes = arg.bytes;
    r.buffer = arg.buffer;
    r.name = arg.elementType;
  }
  for (const HostStep &step : function.steps) {
    Record &r = records.emplace_back();
    r.id = step.id;
    r.bytes = step.bytes;
    switch (step.kind) {
    case HostStep::Kind::Alloc:
      r.kind = Record::Alloc;
      break;
    case HostStep::Kind::Free:
      r.kind = Record::Free;
      break;
    case HostStep::Kind::View:
      r.kind = Record::View;
      r.source = step.source;
      break;
    case HostStep::Kind::Const:
      r.kind = Record::Const;
      r.bits = step.bits;
      break;
    case HostStep::Kind::Global:
      r.kind = Record::Global;
      // Uploaded whole: data the plan leaves out is zero.
      r.data = step.data;
      r.data.resize(r.bytes);
      break;
    case HostStep::Kind::TensorMap:
      r.kind = Record::TensorMap;
      r.source = step.source;
      r.map = step.map;
      break;
    case HostStep::Kind::Launch:
      r.kind = Record::Launch;
      r.sharedBytes = static_cast<unsigned>(step.sharedBytes);
      r.name = step.kernel;
      for (int i = 0; i < 3; ++i) {
        r.grid[i] = static_cast<unsigned>(step.grid[i]);
        r.block[i] = static_cast<unsigned>(step.block[i]);
      }
      for (auto [buffer, id] : step.params)
        r.args.push_back({buffer, id});
      break;
    }
  }
  for (size_t i = 0; i < function.results.size(); ++i) {
    const HostValue &result = function.results[i];
    Record &r = records.emplace_back();
    r.kind = Record::Result;
    r.index = i;
    r.id = result.id;
    r.bytes = result.bytes;
    r.name = result.elementType;
    r.shape = result.shape;
  }
  return records;
}

std::vector<std::string> functionNames(const std::string &text) {
  return listHostFunctions(text);
}

std::vector<Record> readFunction(const std::string &text,
                                 const std::string &planPath,
                                 const std::string &function,
                                 HostMemory *memory) {
  std::vector<HostFunction> plan;
  std::string problem = parseHostPlan(text, planPath, plan);
  if (!problem.empty())
    fail(problem);
  std::string known;
  for (const HostFunction &f : plan) {
    if (f.name != function) {
      known += " " + f.name;
      continue;
    }
    // The memory cache hands a freed block to a later `alloc`: refuse a
    // plan that would read another buffer's data, before any launch.
    problem = checkHostLifetimes(f);
    if (!problem.empty())
      fail(problem);
    if (memory)
      *memory = measureHostMemory(f);
    return getRecords(f);
  }
  fail("no function '" + function + "' in '" + planPath +
       "' (functions:" + known + ")");
}

} // namespace mlir::mxfp4::runtime
