//===- plan.cpp - a function of a host plan -------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "plan.h"

#include "failure.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

static Record parseRecord(const std::string &line) {
  std::istringstream w(line);
  std::string kind;
  w >> kind;
  Record r;
  if (kind == "arg") {
    std::string what;
    r.kind = Record::Arg;
    w >> r.index >> what >> r.id >> r.bytes;
    r.buffer = what == "buffer";
  } else if (kind == "alloc") {
    r.kind = Record::Alloc;
    w >> r.id >> r.bytes;
  } else if (kind == "free") {
    r.kind = Record::Free;
    w >> r.id;
  } else if (kind == "view") {
    r.kind = Record::View;
    w >> r.id >> r.source;
  } else if (kind == "const") {
    std::string hex;
    r.kind = Record::Const;
    w >> r.id >> r.bytes >> hex;
    r.bits = std::strtoull(hex.c_str(), nullptr, 16);
  } else if (kind == "global") {
    std::string hex;
    r.kind = Record::Global;
    w >> r.id >> r.bytes >> hex;
    r.data.resize(r.bytes);
    for (size_t i = 0; i < r.bytes && 2 * i + 1 < hex.size(); ++i)
      r.data[i] = char(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  } else if (kind == "launch") {
    r.kind = Record::Launch;
    w >> r.name >> r.grid[0] >> r.grid[1] >> r.grid[2] >> r.block[0] >>
        r.block[1] >> r.block[2];
    for (std::string a; w >> a;)
      r.args.push_back({a[0] == 'b', std::stol(a.substr(1))});
  } else if (kind == "result") {
    r.kind = Record::Result;
    w >> r.index >> r.id >> r.bytes >> r.name;
    for (int64_t d; w >> d;)
      r.shape.push_back(d);
  } else {
    fail("unknown plan record '" + kind + "'");
  }
  return r;
}

std::vector<std::string> functionNames(const std::string &text) {
  std::istringstream plan(text);
  std::vector<std::string> names;
  for (std::string line; std::getline(plan, line);)
    if (line.rfind("function ", 0) == 0)
      names.push_back(line.substr(9, line.find(' ', 9) - 9));
  return names;
}

std::vector<Record> readFunction(const std::string &text,
                                 const std::string &planPath,
                                 const std::string &function) {
  std::vector<std::string> names = functionNames(text);
  if (std::find(names.begin(), names.end(), function) == names.end()) {
    std::string known;
    for (const std::string &n : names)
      known += " " + n;
    fail("no function '" + function + "' in '" + planPath +
         "' (functions:" + known + ")");
  }
  std::istringstream planFile(text);
  std::vector<Record> records;
  bool inside = false;
  for (std::string line; std::getline(planFile, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream words(line);
    std::string kind, name;
    words >> kind >> name;
    if (kind == "function")
      inside = name == function;
    else if (kind == "end")
      inside = false;
    else if (inside)
      records.push_back(parseRecord(line));
  }
  return records;
}

/// The cache below hands a freed block to a later `alloc`, so a plan that
/// touched a buffer after its `free` would read another buffer's data. The
/// compiler frees each allocation once, after its last use (LinalgToGPU's
/// freeAfterLastUse): this only refuses a broken plan, before any launch.
void checkLifetimes(const std::vector<Record> &records) {
  std::map<long, long> root; // a view's allocation (or argument)
  std::set<long> freed;
  auto use = [&](long id, const std::string &what) {
    auto it = root.find(id);
    long base = it == root.end() ? id : it->second;
    if (freed.count(base))
      fail("the plan " + what + " buffer " + std::to_string(id) +
           " after freeing it");
    return base;
  };
  for (const Record &r : records) {
    if (r.kind == Record::View)
      root[r.id] = use(r.source, "views");
    else if (r.kind == Record::Free)
      freed.insert(use(r.id, "frees"));
    else if (r.kind == Record::Result)
      use(r.id, "returns");
    else if (r.kind == Record::Launch)
      for (auto [isBuffer, id] : r.args)
        if (isBuffer)
          use(id, "passes " + r.name);
  }
}
