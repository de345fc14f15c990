//===- Json.h - JSON values and records, without LLVM -----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A small JSON reader and record writer in standard C++ only, for the
// formats the compiler and the LLVM-free runtimes share (metrics.jsonl,
// trainer_state.json, safetensors headers, compiled.json). The compiler
// itself builds JSON with llvm::json; what both sides write goes through
// JsonRecord, so their files agree byte for byte.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_FORMATS_JSON_H
#define MXFP4_FORMATS_JSON_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::mxfp4 {

/// A parsed JSON value; objects keep their members in file order.
struct JsonValue {
  enum Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Null;
  bool boolean = false;
  double number = 0;
  /// A number written as an integer that fits 64 bits, exactly (`number`
  /// rounds beyond 2^53: seeds, byte counts).
  std::optional<int64_t> integer;
  std::string string;
  std::vector<JsonValue> elements;
  std::vector<std::pair<std::string, JsonValue>> members;

  /// The member `key` of an object, or null.
  const JsonValue *get(const std::string &key) const;
  /// The member `key` if it is a number.
  std::optional<double> getNumber(const std::string &key) const;
  /// The member `key` if it is an integral number.
  std::optional<int64_t> getInteger(const std::string &key) const;
  /// The member `key` if it is a string.
  std::optional<std::string> getString(const std::string &key) const;
};

/// Parses `text`, all of it; returns nothing and sets `error` if it is not
/// JSON or an object in it repeats a key ("duplicate key \"dim\"").
std::optional<JsonValue> parseJson(const std::string &text, std::string &error);

/// `s` as a JSON string literal.
std::string jsonString(const std::string &s);

/// `v` as the CPU driver writes numbers: integral values as integers, others
/// in their shortest round-trip form, NaN and infinities as null.
std::string jsonNumber(double v);

/// A flat JSON object written as the CPU driver writes metrics records:
/// compact, "step" first, the other keys sorted.
class JsonRecord {
public:
  JsonRecord &add(const std::string &key, double value);
  JsonRecord &add(const std::string &key, int64_t value);
  JsonRecord &add(const std::string &key, const std::string &value);
  /// `object` as the member `key`, compact on the record's line.
  JsonRecord &add(const std::string &key, const JsonRecord &object);
  /// The record on one line, without the newline; with `indent`, one member
  /// a line, as the CPU driver writes trainer_state.json.
  std::string format(bool indent = false) const;

private:
  std::vector<std::pair<std::string, std::string>> members; // raw values
};

} // namespace mlir::mxfp4

#endif // MXFP4_FORMATS_JSON_H
