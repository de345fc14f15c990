//===- Metrics.cpp - the metrics.jsonl of a run ---------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Metrics.h"

#include "Failure.h"
#include "Npy.h"

#include "mxfp4/Formats/Metrics.h"

#include <cstdio>

namespace mlir::mxfp4::runtime {

/// The records of the metrics file `path`.
static MetricsFile parseMetricsFile(const std::string &path) {
  std::vector<char> bytes = readFile(path);
  MetricsFile file;
  std::string problem =
      parseMetrics(std::string_view(bytes.data(), bytes.size()), file,
                   /*requireStep=*/true);
  if (!problem.empty())
    fail("'" + path + "': " + problem);
  return file;
}

std::vector<MetricsRecord> readMetrics(const std::string &path) {
  std::vector<MetricsRecord> records;
  for (MetricsLine &line : parseMetricsFile(path).lines)
    records.push_back({*line.step, std::move(line.record), line.text});
  return records;
}

MetricsLog::MetricsLog(const std::string &path)
    : path(path), out(path, std::ios::trunc) {
  if (!out)
    failWrite(path);
}

MetricsLog::MetricsLog(const std::string &path, int64_t lastStep) : path(path) {
  std::string kept = formatMetricsUpToStep(parseMetricsFile(path), lastStep);
  // Written aside and renamed over the log, so a failure keeps the old one.
  std::string temp = path + ".tmp";
  writeFile(temp, kept);
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

} // namespace mlir::mxfp4::runtime
