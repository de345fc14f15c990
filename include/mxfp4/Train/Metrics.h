//===- Metrics.h - the metrics.jsonl log of a training run ------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A training run logs one JSON object per line to `metrics.jsonl`, e.g.
//
//   {"step":10,"loss":3.21,"lr":0.0015,"tokens":20480,"tok_per_s":12345.6}
//
// Each line is flushed as it is written, so a crashed run keeps every
// completed record; a torn last line (no newline) is dropped on reopen and
// ignored by readMetrics. The lines are formatted and parsed by
// mxfp4/Formats/Metrics.h, which the CUDA runtime shares; this converts
// llvm::json records and wraps errors in llvm::Error.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRAIN_METRICS_H
#define MXFP4_TRAIN_METRICS_H

#include "mxfp4/Formats/Json.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_fd_ostream;
} // namespace llvm

namespace mlir::mxfp4 {

/// An append-only metrics.jsonl file.
class MetricsLog {
public:
  /// Opens `path` for appending, creating it if needed. A torn last line left
  /// by a crash is cut off so the next record starts on a line of its own.
  static llvm::Expected<MetricsLog> open(llvm::StringRef path);

  MetricsLog(MetricsLog &&);
  MetricsLog &operator=(MetricsLog &&);
  ~MetricsLog();

  /// Appends `record` as one line (formatMetricsRecord) and flushes it to the
  /// file.
  llvm::Error append(const llvm::json::Object &record);

  /// For resuming from a checkpoint of step `step`: atomically rewrites the
  /// file keeping only the records whose "step" is at most `step` (and the
  /// records without a "step"), then appends after them.
  llvm::Error truncateAfterStep(int64_t step);

  llvm::StringRef getPath() const { return path; }

private:
  MetricsLog(std::string path, std::unique_ptr<llvm::raw_fd_ostream> os);

  std::string path;
  std::unique_ptr<llvm::raw_fd_ostream> os;
};

/// Writes `value` to `json` as llvm::json would, except that object keys are
/// sorted and non-integral numbers are written as in metrics records
/// (jsonNumber): in their shortest round-trip form (0.9, not
/// 0.90000000000000002), NaN and infinities as null, as JSON has no notation
/// for them (llvm::json would write an unparsable `nan`). For indented files
/// such as a checkpoint's trainer_state.json.
void writeJSON(llvm::json::OStream &json, const llvm::json::Value &value);

/// `value` as the formats library's JSON value (mxfp4/Formats/Json.h), for
/// the formats the compiler and the runtimes share; integers stay exact.
JsonValue toJsonValue(const llvm::json::Value &value);

/// Formats `record` as one metrics.jsonl line (without the newline), as
/// mxfp4/Formats/Metrics.h does: compact JSON, keys sorted with "step" first.
std::string formatMetricsRecord(const llvm::json::Object &record);

/// Reads the records of the metrics.jsonl file `path`. Blank lines and a torn
/// last line are skipped; any other line that is not a JSON object is an
/// error naming the file and the line.
llvm::Expected<std::vector<llvm::json::Object>>
readMetrics(llvm::StringRef path);

} // namespace mlir::mxfp4

#endif // MXFP4_TRAIN_METRICS_H
