//===- Words.h - lines and words of the text formats ------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the line-based text formats of this library (HostPlan, TrainingRun)
// share to read their records: lines with their numbers, whitespace-split
// words and whole-word integers. Private to lib/Formats.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_FORMATS_WORDS_H
#define MXFP4_LIB_FORMATS_WORDS_H

#include <algorithm>
#include <charconv>
#include <string_view>
#include <vector>

namespace mlir::mxfp4::detail {

/// The lines of a text, numbered from 1; the last needs no newline.
class LineReader {
public:
  explicit LineReader(std::string_view text) : rest(text) {}

  /// The next line, without its newline, or false at the end.
  bool next(std::string_view &line) {
    if (rest.empty())
      return false;
    size_t end = rest.find('\n');
    line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view()
                                         : rest.substr(end + 1);
    ++lineNumber;
    return true;
  }

  /// The number of the line `next` returned last.
  size_t number() const { return lineNumber; }

private:
  std::string_view rest;
  size_t lineNumber = 0;
};

/// The words of `line`, split at runs of whitespace.
inline std::vector<std::string_view> splitWords(std::string_view line) {
  constexpr std::string_view space = " \t\r\v\f";
  std::vector<std::string_view> words;
  for (size_t at = line.find_first_not_of(space); at != std::string_view::npos;
       at = line.find_first_not_of(space, at)) {
    size_t end = std::min(line.find_first_of(space, at), line.size());
    words.push_back(line.substr(at, end - at));
    at = end;
  }
  return words;
}

/// Parses all of `word` as a decimal integer (or, with `base`, another).
template <typename Integer>
bool parseInteger(std::string_view word, Integer &value, int base = 10) {
  const char *end = word.data() + word.size();
  auto [ptr, ec] = std::from_chars(word.data(), end, value, base);
  return !word.empty() && ec == std::errc() && ptr == end;
}

} // namespace mlir::mxfp4::detail

#endif // MXFP4_LIB_FORMATS_WORDS_H
