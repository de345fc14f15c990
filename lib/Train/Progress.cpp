//===- Progress.cpp - the progress line of a training run -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Train/Progress.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir::mxfp4;

static constexpr std::chrono::milliseconds kRedrawInterval(100);

/// Formats `value` rounded to an integer with thousands separators:
/// "12,345".
static std::string formatThousands(double value) {
  if (!std::isfinite(value) || std::fabs(value) >= 1e18)
    return "-";
  long long rounded = std::llround(value);
  std::string digits = std::to_string(rounded < 0 ? -rounded : rounded);
  std::string text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      text.push_back(',');
    text.push_back(digits[i]);
  }
  return rounded < 0 ? "-" + text : text;
}

/// Formats a duration as "45s", "1m23s" or "2h05m".
static std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e9)
    return "--";
  long long total = std::llround(seconds);
  std::string text;
  llvm::raw_string_ostream os(text);
  if (total < 60)
    os << total << 's';
  else if (total < 3600)
    os << total / 60 << 'm' << llvm::format("%02lld", total % 60) << 's';
  else
    os << total / 3600 << 'h' << llvm::format("%02lld", total / 60 % 60) << 'm';
  return text;
}

std::string ProgressLine::format(int64_t step, int64_t totalSteps, double loss,
                                 double lr, double tokensPerSecond,
                                 std::optional<double> etaSeconds,
                                 unsigned barWidth) {
  int64_t filled = 0;
  if (totalSteps > 0)
    filled = std::clamp<int64_t>(
        static_cast<int64_t>(static_cast<double>(step) / totalSteps * barWidth),
        0, barWidth);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "step " << step << '/' << totalSteps << " [" << std::string(filled, '#')
     << std::string(barWidth - filled, '.') << "] loss "
     << llvm::format("%.4f", loss) << " lr " << llvm::format("%.1e", lr) << ' '
     << formatThousands(tokensPerSecond) << " tok/s ETA "
     << (etaSeconds ? formatDuration(*etaSeconds) : "--");
  return text;
}

ProgressLine::ProgressLine(int64_t totalSteps, int64_t plainEvery,
                           llvm::raw_ostream *stream,
                           std::optional<bool> interactive)
    : os(stream ? *stream : llvm::errs()), totalSteps(totalSteps),
      plainEvery(std::max<int64_t>(plainEvery, 1)) {
  bool toStderr = &os == &llvm::errs();
  this->interactive = interactive.value_or(
      toStderr && llvm::sys::Process::StandardErrIsDisplayed());
  if (this->interactive && toStderr)
    columns = llvm::sys::Process::StandardErrColumns();
}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::draw() {
  std::string text = line;
  // A line that wraps cannot be redrawn with '\r'.
  if (columns > 1 && text.size() > columns - 1)
    text.resize(columns - 1);
  size_t length = text.size();
  if (length < shownLength)
    text.append(shownLength - length, ' ');
  // One write per redraw: llvm::errs() is unbuffered.
  os << ('\r' + text);
  os.flush();
  shown = true;
  stale = false;
  shownLength = length;
  lastDraw = std::chrono::steady_clock::now();
}

void ProgressLine::update(int64_t step, double loss, double lr,
                          double tokensPerSecond) {
  auto now = std::chrono::steady_clock::now();
  // The first update is the time base, so the first step's compilation and
  // warm-up do not skew the ETA (and a resumed run starts where it resumed).
  std::optional<double> eta;
  if (!startTime) {
    startTime = now;
    startStep = step;
  } else if (step > startStep) {
    double elapsed = std::chrono::duration<double>(now - *startTime).count();
    eta = elapsed / static_cast<double>(step - startStep) *
          static_cast<double>(std::max<int64_t>(totalSteps - step, 0));
  }
  bool first = lastStep < 0;
  line = format(step, totalSteps, loss, lr, tokensPerSecond, eta);
  lastStep = step;
  if (interactive) {
    stale = true;
    if (first || step == totalSteps || now - lastDraw >= kRedrawInterval)
      draw();
    return;
  }
  shown = first || step % plainEvery == 0 || step == totalSteps;
  if (shown) {
    os << line << '\n';
    os.flush();
  }
}

void ProgressLine::message(const llvm::Twine &text) {
  std::string output;
  if (interactive && shown) {
    output = '\r' + std::string(shownLength, ' ') + '\r';
    shownLength = 0;
  }
  os << output + text.str() + '\n';
  if (interactive && shown)
    draw();
  os.flush();
}

void ProgressLine::finish() {
  if (line.empty())
    return;
  if (interactive) {
    if (stale)
      draw();
    if (shown)
      os << '\n';
  } else if (!shown) {
    os << line << '\n';
  }
  os.flush();
  line.clear();
  shown = false;
  stale = false;
  shownLength = 0;
}
