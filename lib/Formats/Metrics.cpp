//===- Metrics.cpp - metrics.jsonl records, without LLVM ------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Formats/Metrics.h"

#include <algorithm>
#include <tuple>

using namespace mlir::mxfp4;

std::string mlir::mxfp4::parseMetrics(std::string_view text,
                                      MetricsFile &file, bool requireStep) {
  file = MetricsFile();
  size_t lineNumber = 0;
  size_t offset = 0;
  while (offset < text.size()) {
    ++lineNumber;
    size_t newline = text.find('\n', offset);
    bool terminated = newline != std::string_view::npos;
    size_t end = terminated ? newline : text.size();
    std::string line(text.substr(offset, end - offset));
    size_t next = terminated ? end + 1 : end;

    if (line.find_first_not_of(" \t\n\v\f\r") != std::string::npos) {
      std::string problem;
      std::optional<JsonValue> record = parseJson(line, problem);
      if (record && record->kind != JsonValue::Object)
        problem = "not a JSON object";
      if (!problem.empty()) {
        // A crash while appending leaves a torn last line; it is no record.
        if (!terminated)
          return "";
        return "line " + std::to_string(lineNumber) +
               ": invalid record: " + problem;
      }
      std::optional<int64_t> step = record->getInteger("step");
      if (requireStep && !step)
        return "line " + std::to_string(lineNumber) +
               ": invalid record: no step";
      file.lines.push_back(
          {lineNumber, std::move(line), std::move(*record), step});
      file.lastLineUnterminated = !terminated;
    }
    offset = next;
    file.completeSize = offset;
  }
  return "";
}

/// `value` as formatMetricsRecord writes it; `stepFirst` puts an object's
/// "step" before its other keys.
static std::string formatValue(const JsonValue &value, bool stepFirst) {
  switch (value.kind) {
  case JsonValue::Null:
    return "null";
  case JsonValue::Bool:
    return value.boolean ? "true" : "false";
  case JsonValue::Number:
    return value.integer ? std::to_string(*value.integer)
                         : jsonNumber(value.number);
  case JsonValue::String:
    return jsonString(value.string);
  case JsonValue::Array: {
    std::string text = "[";
    for (size_t i = 0; i < value.elements.size(); ++i)
      text += (i ? "," : "") + formatValue(value.elements[i], false);
    return text + "]";
  }
  case JsonValue::Object:
    break;
  }
  std::vector<const std::pair<std::string, JsonValue> *> members;
  for (const auto &member : value.members)
    members.push_back(&member);
  // Members in file order tie-break equal keys, so the order is total.
  std::sort(members.begin(), members.end(), [&](auto *a, auto *b) {
    return std::make_tuple(!stepFirst || a->first != "step", a->first, a) <
           std::make_tuple(!stepFirst || b->first != "step", b->first, b);
  });
  std::string text = "{";
  for (size_t i = 0; i < members.size(); ++i)
    text += (i ? "," : "") + jsonString(members[i]->first) + ":" +
            formatValue(members[i]->second, false);
  return text + "}";
}

std::string mlir::mxfp4::formatMetricsRecord(const JsonValue &record) {
  // "step" first makes the file easy to scan by eye.
  return formatValue(record, /*stepFirst=*/true);
}

std::string mlir::mxfp4::formatMetricsUpToStep(const MetricsFile &file,
                                               int64_t step) {
  std::string text;
  for (const MetricsLine &line : file.lines)
    if (!line.step || *line.step <= step)
      text += line.text + "\n";
  return text;
}
