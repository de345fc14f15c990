//===- Email.cpp - the text of RFC-822 e-mail messages --------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Data/Email.h"

#include "mxfp4/Data/Unicode.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

#include <cerrno>
#include <optional>
#include <utility>
#include <vector>

#include <iconv.h>

using namespace mlir::mxfp4;
using llvm::StringRef;

namespace {
/// A header with its name lowercased and continuation lines unfolded.
struct Header {
  std::string name;
  std::string value;
};

/// A message or MIME part: its headers and the rest.
struct Part {
  std::vector<Header> headers;
  StringRef body;

  /// The value of the first header called `name` (lowercase).
  std::optional<StringRef> get(StringRef name) const {
    for (const Header &header : headers)
      if (header.name == name)
        return StringRef(header.value);
    return std::nullopt;
  }
};

/// The parts of a Content-Type value that matter here.
struct ContentType {
  std::string type; // "maintype/subtype", lowercase
  std::string boundary;
  std::string charset; // lowercase
};
} // namespace

/// Splits off the first line of `text` (without its line break).
static StringRef takeLine(StringRef &text) {
  size_t newline = text.find('\n');
  StringRef line = text.take_front(newline);
  text =
      newline == StringRef::npos ? StringRef() : text.drop_front(newline + 1);
  return line.rtrim('\r');
}

/// Whether `name` can be a header name (printable ASCII but ':' and ' ').
static bool isHeaderName(StringRef name) {
  return llvm::all_of(name, [](char c) { return c > ' ' && c < 0x7f; });
}

/// Parses the headers of `message`; the body starts after the first empty
/// line, or at the first line that is not a header (as Python does).
static Part parsePart(StringRef message) {
  Part part;
  StringRef rest = message;
  // An mbox "From " line ahead of the headers (Python's unixfrom).
  if (rest.starts_with("From "))
    takeLine(rest);
  while (!rest.empty()) {
    StringRef after = rest;
    StringRef line = takeLine(after);
    if (line.empty()) {
      rest = after;
      break;
    }
    if (line[0] == ' ' || line[0] == '\t') {
      if (!part.headers.empty())
        (part.headers.back().value += ' ') += line.trim().str();
      rest = after;
      continue;
    }
    size_t colon = line.find(':');
    if (colon == StringRef::npos || !isHeaderName(line.take_front(colon)))
      break;
    part.headers.push_back({line.take_front(colon).lower(),
                            line.drop_front(colon + 1).trim().str()});
    rest = after;
  }
  part.body = rest;
  return part;
}

/// Parses a Content-Type value, e.g. `multipart/mixed; boundary="b1"`. An
/// absent or malformed type is `defaultType`, as in Python's policy.default.
static ContentType parseContentType(std::optional<StringRef> value,
                                    StringRef defaultType) {
  ContentType result;
  result.type = defaultType.str();
  if (!value)
    return result;
  // Split at ';' outside quotes.
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < value->size(); ++i) {
    char c = (*value)[i];
    if (c == '"')
      quoted = !quoted;
    if (c == '\\' && quoted && i + 1 < value->size()) {
      fields.back() += (*value)[++i];
      continue;
    }
    if (c == ';' && !quoted) {
      fields.emplace_back();
      continue;
    }
    fields.back() += c;
  }
  std::string type = StringRef(fields[0]).trim().lower();
  if (type.find('/') != std::string::npos && type.front() != '/' &&
      type.back() != '/')
    result.type = type;
  for (StringRef field : llvm::ArrayRef(fields).drop_front()) {
    auto [key, val] = field.split('=');
    std::string name = key.trim().lower();
    StringRef text = val.trim();
    if (text.size() >= 2 && text.front() == '"' && text.back() == '"')
      text = text.drop_front().drop_back();
    if (name == "boundary")
      result.boundary = text.str();
    else if (name == "charset")
      result.charset = text.lower();
  }
  return result;
}

/// Returns the bodies of the parts of a multipart body: what lies between
/// lines "--boundary" up to the line "--boundary--" (or the end). The line
/// break before a delimiter belongs to the delimiter.
static std::vector<StringRef> splitMultipart(StringRef body,
                                             StringRef boundary) {
  std::vector<StringRef> parts;
  std::string delimiter = ("--" + boundary).str();
  std::optional<size_t> partStart;
  size_t position = 0;
  while (position < body.size()) {
    size_t newline = body.find('\n', position);
    size_t lineEnd = newline == StringRef::npos ? body.size() : newline;
    StringRef line = body.slice(position, lineEnd).rtrim('\r');
    if (line.starts_with(delimiter)) {
      StringRef rest = line.drop_front(delimiter.size());
      bool close = rest.consume_front("--");
      if (rest.trim(" \t").empty()) {
        if (partStart) {
          StringRef part = body.slice(*partStart, position);
          if (!part.consume_back("\r\n"))
            part.consume_back("\n");
          parts.push_back(part);
        }
        if (close)
          return parts;
        partStart = std::min(lineEnd + 1, body.size());
      }
    }
    position = lineEnd + 1;
  }
  if (partStart)
    parts.push_back(body.drop_front(*partStart));
  return parts;
}

std::string mlir::mxfp4::decodeQuotedPrintable(StringRef text) {
  // As Python's binascii.a2b_qp, which the reference used: whitespace and
  // line breaks are kept, "=\n" and "=\r\n" are soft breaks, and a final
  // "=" is dropped.
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '=') {
      out += text[i];
      continue;
    }
    StringRef rest = text.drop_front(i + 1);
    if (rest.empty())
      break;
    if (rest.starts_with("\n")) {
      i += 1;
    } else if (rest.starts_with("\r\n")) {
      i += 2;
    } else if (rest.size() >= 2 && llvm::isHexDigit(rest[0]) &&
               llvm::isHexDigit(rest[1])) {
      out += static_cast<char>(llvm::hexFromNibbles(rest[0], rest[1]));
      i += 2;
    } else {
      out += '=';
    }
  }
  return out;
}

std::string mlir::mxfp4::decodeBase64Lenient(StringRef text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t bits = 0;
  unsigned count = 0;
  for (char c : text) {
    int value;
    if (c >= 'A' && c <= 'Z')
      value = c - 'A';
    else if (c >= 'a' && c <= 'z')
      value = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      value = c - '0' + 52;
    else if (c == '+' || c == '-')
      value = 62;
    else if (c == '/' || c == '_')
      value = 63;
    else if (c == '=')
      break;
    else
      continue;
    bits = (bits << 6) | value;
    if (++count == 4) {
      out += static_cast<char>(bits >> 16);
      out += static_cast<char>(bits >> 8);
      out += static_cast<char>(bits);
      bits = 0;
      count = 0;
    }
  }
  // A final group of 2 or 3 characters holds 1 or 2 bytes.
  if (count == 2) {
    out += static_cast<char>(bits >> 4);
  } else if (count == 3) {
    out += static_cast<char>(bits >> 10);
    out += static_cast<char>(bits >> 2);
  }
  return out;
}

namespace {
/// The single-byte charsets converted exactly.
enum class SingleByteCharset { latin1, latin9, windows1252 };
} // namespace

/// Converts text in a single-byte charset to UTF-8: ISO-8859-1, ISO-8859-15
/// (which differs in eight code points, among them the euro sign) or
/// windows-1252 (0x80-0x9F are printable characters, not C1 controls).
static std::string singleByteToUtf8(StringRef bytes,
                                    SingleByteCharset charset) {
  // windows-1252 0x80-0x9F; 0 where it has no character (kept as C1).
  static constexpr uint16_t kCp1252[32] = {
      0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
      0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0,      0x017D, 0,
      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
      0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};
  // Where ISO-8859-15 differs from ISO-8859-1.
  static constexpr std::pair<uint8_t, uint16_t> kLatin9[] = {
      {0xA4, 0x20AC}, {0xA6, 0x0160}, {0xA8, 0x0161}, {0xB4, 0x017D},
      {0xB8, 0x017E}, {0xBC, 0x0152}, {0xBD, 0x0153}, {0xBE, 0x0178}};
  std::string out;
  out.reserve(bytes.size() + bytes.size() / 8);
  for (unsigned char c : bytes) {
    uint32_t codePoint = c;
    if (charset == SingleByteCharset::windows1252 && c >= 0x80 && c < 0xA0 &&
        kCp1252[c - 0x80]) {
      codePoint = kCp1252[c - 0x80];
    } else if (charset == SingleByteCharset::latin9) {
      for (auto [byte, replacement] : kLatin9)
        if (c == byte)
          codePoint = replacement;
    }
    appendUtf8(codePoint, out);
  }
  return out;
}

/// Converts `bytes` from `charset` to UTF-8 with the C library's iconv, with
/// U+FFFD for each byte that does not convert (Python's errors='replace');
/// std::nullopt if iconv does not know the charset.
static std::optional<std::string> convertWithIconv(StringRef bytes,
                                                   StringRef charset) {
  // Python's name of Korean mail's charset, which iconv spells otherwise.
  if (charset == "ks_c_5601-1987")
    charset = "CP949";
  iconv_t converter = iconv_open("UTF-8", charset.str().c_str());
  if (converter == reinterpret_cast<iconv_t>(-1))
    return std::nullopt;
  std::string out(bytes.size() * 2 + 16, '\0');
  char *in = const_cast<char *>(bytes.data());
  size_t inLeft = bytes.size();
  size_t used = 0;
  // Converts what it can; false on an unconvertible byte.
  auto step = [&](char **input, size_t *inputLeft) {
    while (true) {
      char *output = out.data() + used;
      size_t outLeft = out.size() - used;
      size_t rc = iconv(converter, input, inputLeft, &output, &outLeft);
      used = output - out.data();
      if (rc != static_cast<size_t>(-1))
        return true;
      if (errno != E2BIG)
        return false;
      out.resize(out.size() * 2);
    }
  };
  while (!step(&in, &inLeft)) {
    out.resize(std::max(out.size(), used + 3));
    out.replace(used, 3, "\xEF\xBF\xBD");
    used += 3;
    ++in;
    --inLeft;
  }
  // Return a stateful encoding (ISO-2022-JP) to its initial state.
  step(nullptr, nullptr);
  iconv_close(converter);
  out.resize(used);
  return out;
}

/// Converts the bytes of a text part in `charset` to UTF-8 (see Email.h).
static std::string toUtf8(StringRef bytes, StringRef charset) {
  if (charset == "utf-8" || charset == "utf8")
    return llvm::json::isUTF8(bytes) ? bytes.str() : llvm::json::fixUTF8(bytes);
  if (charset == "windows-1252" || charset == "cp1252")
    return singleByteToUtf8(bytes, SingleByteCharset::windows1252);
  if (charset == "iso-8859-15" || charset == "latin9")
    return singleByteToUtf8(bytes, SingleByteCharset::latin9);
  if (charset == "iso-8859-1" || charset == "latin1")
    return singleByteToUtf8(bytes, SingleByteCharset::latin1);
  // Other charsets (Big5, GB2312, ISO-2022-JP, KOI8-R...) go through iconv.
  // No charset, ASCII, or one iconv does not know: UTF-8 if it is valid
  // (common mislabelling), else ISO-8859-1.
  bool asciiOrUnknown = charset.empty() || charset == "us-ascii" ||
                        charset == "ascii" || charset == "default";
  if (!asciiOrUnknown)
    if (std::optional<std::string> text = convertWithIconv(bytes, charset))
      return *text;
  if (llvm::json::isUTF8(bytes))
    return bytes.str();
  return singleByteToUtf8(bytes, SingleByteCharset::latin1);
}

std::string mlir::mxfp4::stripHtml(StringRef html) {
  // (?is)<(script|style).*?</\1>  ->  ''
  std::string lower = html.lower();
  std::string withoutScripts;
  withoutScripts.reserve(html.size());
  size_t position = 0;
  while (position < html.size()) {
    size_t open = lower.find('<', position);
    if (open == std::string::npos) {
      withoutScripts += html.drop_front(position);
      break;
    }
    withoutScripts += html.slice(position, open);
    StringRef tag = StringRef(lower).drop_front(open + 1);
    StringRef element = tag.starts_with("script")  ? "script"
                        : tag.starts_with("style") ? "style"
                                                   : "";
    size_t close = std::string::npos;
    if (!element.empty())
      close =
          lower.find(("</" + element + ">").str(), open + 1 + element.size());
    if (close == std::string::npos) {
      withoutScripts += '<';
      position = open + 1;
      continue;
    }
    position = close + element.size() + 3;
  }

  // (?s)<[^>]+>  ->  ' '
  StringRef text = withoutScripts;
  std::string out;
  out.reserve(text.size());
  position = 0;
  while (position < text.size()) {
    size_t open = text.find('<', position);
    size_t close =
        open == StringRef::npos ? StringRef::npos : text.find('>', open + 1);
    if (close == StringRef::npos) {
      // No tag can start here or later.
      out += text.drop_front(position);
      break;
    }
    out += text.slice(position, open);
    if (close == open + 1) {
      out += '<';
      position = open + 1;
      continue;
    }
    out += ' ';
    position = close + 1;
  }
  return out;
}

/// Appends the texts of `message` and its subparts to `texts`.
static void walk(StringRef message, StringRef defaultType, unsigned depth,
                 std::vector<std::string> &texts) {
  // Deeper nesting than any real mail: stop rather than risk the stack.
  if (depth > 32)
    return;
  Part part = parsePart(message);
  ContentType type = parseContentType(part.get("content-type"), defaultType);
  if (StringRef(type.type).starts_with("multipart/")) {
    if (type.boundary.empty())
      return;
    StringRef childDefault =
        type.type == "multipart/digest" ? "message/rfc822" : "text/plain";
    for (StringRef child : splitMultipart(part.body, type.boundary))
      walk(child, childDefault, depth + 1, texts);
    return;
  }
  if (type.type == "message/rfc822") {
    walk(part.body, "text/plain", depth + 1, texts);
    return;
  }
  if (type.type != "text/plain" && type.type != "text/html")
    return;
  std::string encoding =
      part.get("content-transfer-encoding").value_or("").trim().lower();
  std::string bytes = encoding == "quoted-printable"
                          ? decodeQuotedPrintable(part.body)
                      : encoding == "base64" ? decodeBase64Lenient(part.body)
                                             : part.body.str();
  std::string text = toUtf8(bytes, type.charset);
  if (type.type == "text/html")
    text = stripHtml(text);
  texts.push_back(std::move(text));
}

/// Whether `codePoint` is whitespace for Python's str.strip().
static bool isPythonSpace(uint32_t codePoint) {
  return isUnicodeWhitespace(codePoint) ||
         (codePoint >= 0x1C && codePoint <= 0x1F);
}

std::string mlir::mxfp4::extractEmailText(StringRef message) {
  std::vector<std::string> texts;
  walk(message, "text/plain", 0, texts);
  std::string joined = llvm::join(texts, "\n");
  // Strip as Python does, Unicode whitespace included.
  StringRef text = joined;
  while (!text.empty()) {
    DecodedCodePoint first = decodeUtf8(text, 0);
    if (!isPythonSpace(first.codePoint))
      break;
    text = text.drop_front(first.length);
  }
  while (!text.empty()) {
    // Step back to the start of the last character.
    size_t start = text.size() - 1;
    while (start > 0 && text.size() - start < 4 &&
           (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
      --start;
    DecodedCodePoint last = decodeUtf8(text, start);
    if (start + last.length != text.size())
      start = text.size() - 1, last = {kInvalidCodePoint, 1};
    if (!isPythonSpace(last.codePoint))
      break;
    text = text.take_front(start);
  }
  return text.str();
}
