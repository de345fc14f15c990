//===- Metrics.h - metrics.jsonl records, without LLVM ----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The metrics.jsonl of a training run in standard C++ only: the CPU trainer
// (mxfp4/Train/Metrics.h, which converts its llvm::json records and wraps
// errors in llvm::Error) and the CUDA runtime (runtime/, which cannot
// link LLVM) read, format and cut their logs through these, one
// implementation of the format.
//
// A file holds one compact JSON object a line, "step" first and the other
// keys sorted, e.g.
//
//   {"step":10,"loss":3.21,"lr":0.0015,"tokens":20480,"tokens_per_s":12345.6}
//
// Writers flush every line as they write it, so a run that crashes keeps
// every complete record and at worst a torn last line, which is no record.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_FORMATS_METRICS_H
#define MXFP4_FORMATS_METRICS_H

#include "mxfp4/Formats/Json.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlir::mxfp4 {

/// A record of a metrics file and the line it came from.
struct MetricsLine {
  /// The line's number in the file, from 1.
  size_t number = 0;
  /// The line, without its newline.
  std::string text;
  /// The record, a JSON object.
  JsonValue record;
  /// The record's "step", if it is an integer.
  std::optional<int64_t> step;
};

/// The records of a metrics file.
struct MetricsFile {
  std::vector<MetricsLine> lines;
  /// Where the text after the last record begins: the size of the file, or
  /// the start of a torn last line.
  size_t completeSize = 0;
  /// True if the last line lacks its newline but is a whole record (the
  /// newline was lost, not the record).
  bool lastLineUnterminated = false;
};

/// Parses the metrics file `text` into `file`. Blank lines are skipped, and
/// so is a last line without its newline that is not a JSON object: a write
/// cut short. Returns what is wrong with any other line that is not a JSON
/// object (or, if `requireStep`, has no integral "step"), "line 3: invalid
/// record: ...", or an empty string.
std::string parseMetrics(std::string_view text, MetricsFile &file,
                         bool requireStep = false);

/// The JSON object `record` as one metrics.jsonl line, without the newline:
/// compact, "step" first and the other keys sorted (those of nested objects
/// too), so that files do not depend on the order records were built in;
/// numbers as jsonNumber writes them (NaN and infinities as null), strings
/// as jsonString does.
std::string formatMetricsRecord(const JsonValue &record);

/// The metrics file of `file` cut after step `step`, for resuming from a
/// checkpoint of that step: the lines of the records whose "step" is at most
/// `step` and of those without one, each with its newline.
std::string formatMetricsUpToStep(const MetricsFile &file, int64_t step);

} // namespace mlir::mxfp4

#endif // MXFP4_FORMATS_METRICS_H
