//===- Npy.cpp - the .npy format, without LLVM ----------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Formats/Npy.h"

#include <cctype>
#include <optional>

using namespace mlir::mxfp4;

static constexpr std::string_view kMagic("\x93NUMPY", 6);

namespace {
/// Parses the Python dict literal of a .npy header.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : rest(text) {}

  /// Parses the dict; returns what is wrong, or nothing.
  std::optional<std::string> parse(NpyHeader &header) {
    bool seenDescr = false, seenOrder = false, seenShape = false;
    if (!consume('{'))
      return std::string("the header is not a dict");
    while (!consume('}')) {
      std::string key;
      if (!parseString(key))
        return std::string("expected a quoted key in the header");
      if (!consume(':'))
        return "expected ':' after '" + key + "' in the header";
      if (key == "descr") {
        if (!parseString(header.descr))
          return std::string("'descr' is not a string");
        seenDescr = true;
      } else if (key == "fortran_order") {
        if (!parseBool(header.fortranOrder))
          return std::string("'fortran_order' is not True or False");
        seenOrder = true;
      } else if (key == "shape") {
        if (!parseShape(header.shape))
          return std::string("'shape' is not a tuple of sizes");
        seenShape = true;
      } else {
        return "unexpected key '" + key + "' in the header";
      }
      if (!consume(',') && !peek('}'))
        return std::string("expected ',' or '}' in the header");
    }
    if (!seenDescr || !seenOrder || !seenShape)
      return std::string("the header lacks 'descr', 'fortran_order' or "
                         "'shape'");
    skipSpace();
    if (!rest.empty())
      return std::string("unexpected text after the header dict");
    return std::nullopt;
  }

private:
  void skipSpace() {
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest[0])))
      rest.remove_prefix(1);
  }
  bool peek(char c) {
    skipSpace();
    return !rest.empty() && rest[0] == c;
  }
  bool consume(char c) {
    if (!peek(c))
      return false;
    rest.remove_prefix(1);
    return true;
  }
  bool consumeWord(std::string_view word) {
    if (rest.substr(0, word.size()) != word)
      return false;
    rest.remove_prefix(word.size());
    return true;
  }
  bool parseString(std::string &value) {
    skipSpace();
    if (rest.empty() || (rest[0] != '\'' && rest[0] != '"'))
      return false;
    size_t end = rest.find(rest[0], 1);
    if (end == std::string_view::npos)
      return false;
    value = std::string(rest.substr(1, end - 1));
    rest.remove_prefix(end + 1);
    return true;
  }
  bool parseBool(bool &value) {
    skipSpace();
    if (consumeWord("True"))
      value = true;
    else if (consumeWord("False"))
      value = false;
    else
      return false;
    return true;
  }
  bool parseShape(std::vector<int64_t> &shape) {
    if (!consume('('))
      return false;
    while (!consume(')')) {
      skipSpace();
      if (rest.empty() || !std::isdigit(static_cast<unsigned char>(rest[0])))
        return false;
      uint64_t size = 0;
      while (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest[0]))) {
        size = size * 10 + static_cast<uint64_t>(rest[0] - '0');
        if (size > (uint64_t(1) << 62))
          return false;
        rest.remove_prefix(1);
      }
      shape.push_back(static_cast<int64_t>(size));
      if (!consume(',') && !peek(')'))
        return false;
    }
    return true;
  }

  std::string_view rest;
};
} // namespace

/// The little-endian unsigned integer of `bytes` bytes at `at`.
static uint64_t readLittleEndian(const char *at, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i)
    value |= uint64_t(static_cast<uint8_t>(at[i])) << (8 * i);
  return value;
}

std::string mlir::mxfp4::parseNpyHeader(std::string_view bytes,
                                        NpyHeader &header) {
  if (bytes.substr(0, kMagic.size()) != kMagic)
    return "not a .npy file (bad magic)";
  if (bytes.size() < kMagic.size() + 2)
    return "truncated .npy header";
  unsigned major = static_cast<uint8_t>(bytes[6]);
  unsigned minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return "unsupported .npy format version " + std::to_string(major) + "." +
           std::to_string(minor);
  // Version 1.0 has a 16-bit header length, 2.0 and 3.0 a 32-bit one; 3.0
  // only allows UTF-8 in the header, which the dict parser passes through.
  size_t lengthSize = major == 1 ? 2 : 4;
  size_t prefix = 8 + lengthSize;
  if (bytes.size() < prefix)
    return "truncated .npy header";
  uint64_t headerLength = readLittleEndian(bytes.data() + 8, lengthSize);
  if (bytes.size() - prefix < headerLength)
    return "truncated .npy header";
  header = NpyHeader();
  if (std::optional<std::string> problem =
          HeaderParser(bytes.substr(prefix, headerLength)).parse(header))
    return *problem;
  header.dataOffset = prefix + headerLength;
  return "";
}

std::string mlir::mxfp4::formatNpyShape(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    text += ',';
  return text + ")";
}

std::string mlir::mxfp4::formatNpyHeader(const std::string &descr,
                                         const std::vector<int64_t> &shape) {
  std::string dict = "{'descr': '" + descr +
                     "', 'fortran_order': False, 'shape': " +
                     formatNpyShape(shape) + ", }";
  // Pad with spaces and a final newline so the data starts at a multiple of
  // 64 bytes; fall back to version 2.0 for headers over 64 KiB.
  size_t lengthSize = dict.size() + 1 + 10 < 65536 ? 2 : 4;
  size_t prefix = 8 + lengthSize;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string bytes(kMagic);
  bytes.push_back(static_cast<char>(lengthSize == 2 ? 1 : 2));
  bytes.push_back('\0');
  for (size_t i = 0; i < lengthSize; ++i)
    bytes.push_back(static_cast<char>((dict.size() >> (8 * i)) & 0xff));
  return bytes + dict;
}
