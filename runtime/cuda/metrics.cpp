//===- metrics.cpp - the metrics.jsonl of a run ---------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "metrics.h"

#include "failure.h"
#include "npy.h"

#include <cstdio>

using namespace mlir::mxfp4;

std::vector<MetricsRecord> readMetrics(const std::string &path) {
  std::vector<char> bytes = readFile(path);
  std::string text(bytes.begin(), bytes.end());
  std::vector<MetricsRecord> records;
  size_t lineNumber = 0;
  for (size_t at = 0; at < text.size();) {
    ++lineNumber;
    size_t newline = text.find('\n', at);
    if (newline == std::string::npos)
      break; // torn: the run stopped while writing it
    std::string line = text.substr(at, newline - at);
    at = newline + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    std::string error;
    std::optional<JsonValue> value = parseJson(line, error);
    std::optional<int64_t> step;
    if (value && value->kind == JsonValue::Object)
      step = value->getInteger("step");
    else if (value)
      error = "not a JSON object";
    if (!step)
      fail("'" + path + "': line " + std::to_string(lineNumber) +
           ": invalid record: " + (error.empty() ? "no step" : error));
    records.push_back({*step, std::move(*value), line});
  }
  return records;
}

MetricsLog::MetricsLog(const std::string &path)
    : path(path), out(path, std::ios::trunc) {
  if (!out)
    fail("cannot write '" + path + "'");
}

MetricsLog::MetricsLog(const std::string &path, int64_t lastStep) : path(path) {
  std::vector<MetricsRecord> records = readMetrics(path);
  // Written aside and renamed over the log, so a failure keeps the old one.
  std::string temp = path + ".tmp";
  {
    std::ofstream kept(temp, std::ios::trunc);
    for (const MetricsRecord &r : records)
      if (r.step <= lastStep)
        kept << r.line << "\n";
    if (!kept.flush())
      fail("cannot write '" + temp + "'");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0)
    fail("cannot replace '" + path + "'");
  out.open(path, std::ios::app);
  if (!out)
    fail("cannot append to '" + path + "'");
}

void MetricsLog::append(const JsonRecord &record) {
  out << record.format() << "\n";
  if (!out.flush())
    fail("cannot append to '" + path + "'");
}
