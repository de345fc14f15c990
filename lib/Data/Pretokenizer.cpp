//===- Pretokenizer.cpp - the cl100k / Llama 3 split regex ----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Data/Pretokenizer.h"

#include "mxfp4/Data/Unicode.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir::mxfp4;
using llvm::StringRef;

namespace {
/// The classes of the regex; every code point is in exactly one.
enum class CharClass { letter, number, space, other };

/// Scans one piece at a time.
class Scanner {
public:
  explicit Scanner(StringRef text) : text(text) {}

  /// Returns the end of the piece that starts at `start` (< text.size()).
  size_t matchPiece(size_t start) const;

private:
  struct Char {
    CharClass cls;
    unsigned length;
    bool isNewline; // \r or \n
    bool isSpace;   // exactly ' '
  };

  /// The character at `position`; a class of `other` past the end is never
  /// looked at, callers check `position < text.size()`.
  Char at(size_t position) const {
    DecodedCodePoint decoded = decodeUtf8(text, position);
    uint32_t c = decoded.codePoint;
    CharClass cls = isUnicodeLetter(c)       ? CharClass::letter
                    : isUnicodeNumber(c)     ? CharClass::number
                    : isUnicodeWhitespace(c) ? CharClass::space
                                             : CharClass::other;
    return {cls, decoded.length, c == '\r' || c == '\n', c == ' '};
  }

  /// Whether a character of class `cls` is at `position`.
  bool isAt(size_t position, CharClass cls) const {
    return position < text.size() && at(position).cls == cls;
  }

  /// Returns the end of the run of `cls` characters from `position`, taking
  /// at most `limit` of them.
  size_t skipRun(size_t position, CharClass cls,
                 size_t limit = SIZE_MAX) const {
    for (size_t n = 0; n < limit && position < text.size(); ++n) {
      Char c = at(position);
      if (c.cls != cls)
        break;
      position += c.length;
    }
    return position;
  }

  /// Returns the length of the contraction ('s 't 're 've 'm 'll 'd, in any
  /// case) at `position`, or 0.
  size_t contraction(size_t position) const {
    StringRef rest = text.substr(position);
    if (rest.size() < 2 || rest[0] != '\'')
      return 0;
    char a = llvm::toLower(rest[1]);
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
      return 2;
    if (rest.size() < 3)
      return 0;
    char b = llvm::toLower(rest[2]);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') ||
        (a == 'l' && b == 'l'))
      return 3;
    return 0;
  }

  StringRef text;
};
} // namespace

size_t Scanner::matchPiece(size_t start) const {
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
  if (size_t length = contraction(start))
    return start + length;

  Char first = at(start);
  size_t next = start + first.length;

  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (first.cls == CharClass::letter)
    return skipRun(start, CharClass::letter);
  if (first.cls != CharClass::number && !first.isNewline &&
      isAt(next, CharClass::letter))
    return skipRun(next, CharClass::letter);

  // \p{N}{1,3}
  if (first.cls == CharClass::number)
    return skipRun(start, CharClass::number, 3);

  // " ?[^\s\p{L}\p{N}]+[\r\n]*"
  size_t symbols = first.isSpace ? next : start;
  if (isAt(symbols, CharClass::other)) {
    size_t end = skipRun(symbols, CharClass::other);
    while (end < text.size() && (text[end] == '\r' || text[end] == '\n'))
      ++end;
    return end;
  }

  // What is left starts with whitespace; find its run and the start of its
  // last character.
  size_t runEnd = start, lastStart = start, lastNewlineEnd = 0;
  while (runEnd < text.size()) {
    Char c = at(runEnd);
    if (c.cls != CharClass::space)
      break;
    lastStart = runEnd;
    runEnd += c.length;
    if (c.isNewline)
      lastNewlineEnd = runEnd;
  }
  // \s*[\r\n]+ : the backtracking \s* stops right before the last newline of
  // the run, and [\r\n]+ then takes just that newline.
  if (lastNewlineEnd != 0)
    return lastNewlineEnd;
  // \s+(?!\S) : all of the run at the end of the text, else all but its last
  // character (which then starts the next piece, e.g. " word").
  if (runEnd == text.size())
    return runEnd;
  if (lastStart > start)
    return lastStart;
  // \s+ : a single whitespace character before a non-letter.
  return runEnd;
}

void mlir::mxfp4::splitCl100k(StringRef text,
                              llvm::function_ref<void(StringRef)> callback) {
  Scanner scanner(text);
  for (size_t position = 0; position < text.size();) {
    size_t end = scanner.matchPiece(position);
    callback(text.slice(position, end));
    position = end;
  }
}

std::vector<StringRef> mlir::mxfp4::splitCl100k(StringRef text) {
  std::vector<StringRef> pieces;
  splitCl100k(text, [&](StringRef piece) { pieces.push_back(piece); });
  return pieces;
}
