//===- Unicode.h - UTF-8 decoding and character classes ---------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The little Unicode the cl100k pre-tokenizer needs: a strict UTF-8 decoder
// and the classes \p{L} (letters), \p{N} (numbers) and \s (White_Space).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DATA_UNICODE_H
#define MXFP4_DATA_UNICODE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::mxfp4 {

/// The code point given for a byte that does not start a valid UTF-8
/// sequence; it is in no class.
constexpr uint32_t kInvalidCodePoint = 0xFFFFFFFF;

/// A code point and the number of bytes it takes.
struct DecodedCodePoint {
  uint32_t codePoint;
  unsigned length;
};

/// Decodes the code point at `text[position]` (which must exist). An
/// overlong, surrogate, out-of-range or truncated sequence decodes as one
/// byte of kInvalidCodePoint, so every byte of any input is covered.
DecodedCodePoint decodeUtf8(llvm::StringRef text, size_t position);

/// Appends the UTF-8 encoding of `codePoint` (at most 0x10FFFF) to `out`.
void appendUtf8(uint32_t codePoint, std::string &out);

/// Whether `codePoint` is in the general category L (Lu, Ll, Lt, Lm, Lo).
/// Unassigned code points that lie between two letters of a script count as
/// letters too, which keeps the table small.
bool isUnicodeLetter(uint32_t codePoint);

/// Whether `codePoint` is in the general category N (Nd, Nl, No), with the
/// same treatment of unassigned code points as isUnicodeLetter.
bool isUnicodeNumber(uint32_t codePoint);

/// Whether `codePoint` has the White_Space property (what `\s` means in the
/// Rust regex crate that tiktoken uses).
bool isUnicodeWhitespace(uint32_t codePoint);

} // namespace mlir::mxfp4

#endif // MXFP4_DATA_UNICODE_H
