//===- Progress.h - the progress line of a training run ---------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Shows how far a run is:
//
//   step 120/300 [####......] loss 2.3456 lr 1.2e-03 12,345 tok/s ETA 1m23s
//
// On a terminal the line is redrawn in place with '\r' (at most ten times a
// second); in a log file (CI) a plain line is printed every N steps instead,
// so the log stays readable.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRAIN_PROGRESS_H
#define MXFP4_TRAIN_PROGRESS_H

#include "llvm/ADT/Twine.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::mxfp4 {

/// The progress line of a run of `totalSteps` steps.
class ProgressLine {
public:
  /// Prints to `os` (stderr if null). `interactive` says whether to redraw
  /// the line in place; by default, whether stderr is a terminal. Without a
  /// terminal a line is printed every `plainEvery` steps, on the first update
  /// and on the last step.
  explicit ProgressLine(int64_t totalSteps, int64_t plainEvery = 10,
                        llvm::raw_ostream *os = nullptr,
                        std::optional<bool> interactive = std::nullopt);
  ~ProgressLine();

  /// Reports that step `step` (counting from 1) is done with `loss`, at
  /// learning rate `lr` and `tokensPerSecond` throughput. The ETA comes from
  /// the average step time since the first update.
  void update(int64_t step, double loss, double lr, double tokensPerSecond);

  /// Prints `text` on a line of its own above the progress line (e.g. "saved
  /// checkpoint ...") without garbling either.
  void message(const llvm::Twine &text);

  /// Ends the progress line: on a terminal, moves to a new line; otherwise
  /// prints the last update if it was not printed. Called by the destructor.
  void finish();

  /// Returns the text of the line; `etaSeconds` is std::nullopt when not yet
  /// known. Exposed for tests.
  static std::string format(int64_t step, int64_t totalSteps, double loss,
                            double lr, double tokensPerSecond,
                            std::optional<double> etaSeconds,
                            unsigned barWidth = 10);

private:
  void draw();

  llvm::raw_ostream &os;
  int64_t totalSteps;
  int64_t plainEvery;
  bool interactive;
  /// The width of the terminal, or 0 if unknown.
  unsigned columns = 0;

  /// The last update, and whether it is on screen (interactive) or was
  /// printed (plain).
  std::string line;
  int64_t lastStep = -1;
  bool shown = false;
  /// The length of the line on screen, to blank what a shorter line leaves.
  size_t shownLength = 0;
  /// Whether `line` is newer than the screen: redraws are limited to ten a
  /// second, as fast steps would otherwise flood the terminal.
  bool stale = false;
  std::chrono::steady_clock::time_point lastDraw;

  std::optional<std::chrono::steady_clock::time_point> startTime;
  int64_t startStep = 0;
};

} // namespace mlir::mxfp4

#endif // MXFP4_TRAIN_PROGRESS_H
