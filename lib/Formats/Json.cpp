//===- Json.cpp - JSON values and records, without LLVM -------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Formats/Json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace mlir::mxfp4 {

const JsonValue *JsonValue::get(const std::string &key) const {
  for (const auto &[name, value] : members)
    if (name == key)
      return &value;
  return nullptr;
}

std::optional<double> JsonValue::getNumber(const std::string &key) const {
  const JsonValue *v = get(key);
  if (!v || v->kind != Number)
    return std::nullopt;
  return v->number;
}

std::optional<int64_t> JsonValue::getInteger(const std::string &key) const {
  if (const JsonValue *exact = get(key); exact && exact->integer)
    return exact->integer;
  std::optional<double> v = getNumber(key);
  if (!v || std::trunc(*v) != *v || std::fabs(*v) > 9.0e15)
    return std::nullopt;
  return static_cast<int64_t>(*v);
}

std::optional<std::string> JsonValue::getString(const std::string &key) const {
  const JsonValue *v = get(key);
  if (!v || v->kind != String)
    return std::nullopt;
  return v->string;
}

namespace {

/// A recursive-descent parser of one JSON text.
class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  bool parse(JsonValue &value, std::string &error) {
    if (!parseValue(value, 0) || (skipSpace(), at != text.size())) {
      error = (problem.empty() ? "unexpected text" : problem) + " at offset " +
              std::to_string(at);
      return false;
    }
    return true;
  }

private:
  void skipSpace() {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t' ||
                                text[at] == '\n' || text[at] == '\r'))
      ++at;
  }

  bool consume(char c) {
    skipSpace();
    if (at < text.size() && text[at] == c) {
      ++at;
      return true;
    }
    return false;
  }

  bool literal(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (text.compare(at, n, word) != 0)
      return false;
    at += n;
    return true;
  }

  /// Four hex digits of a \\u escape.
  bool parseHex(uint32_t &code) {
    if (at + 4 > text.size())
      return problem = "truncated \\u escape", false;
    std::from_chars_result r =
        std::from_chars(text.data() + at, text.data() + at + 4, code, 16);
    if (r.ptr != text.data() + at + 4)
      return problem = "bad \\u escape", false;
    at += 4;
    return true;
  }

  static void appendUTF8(std::string &out, uint32_t code) {
    if (code < 0x80) {
      out += char(code);
    } else if (code < 0x800) {
      out += char(0xc0 | (code >> 6));
      out += char(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      out += char(0xe0 | (code >> 12));
      out += char(0x80 | ((code >> 6) & 0x3f));
      out += char(0x80 | (code & 0x3f));
    } else {
      out += char(0xf0 | (code >> 18));
      out += char(0x80 | ((code >> 12) & 0x3f));
      out += char(0x80 | ((code >> 6) & 0x3f));
      out += char(0x80 | (code & 0x3f));
    }
  }

  bool parseString(std::string &out) {
    if (!consume('"'))
      return problem = "expected a string", false;
    while (at < text.size() && text[at] != '"') {
      char c = text[at++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at >= text.size())
        break;
      char e = text[at++];
      switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        uint32_t code = 0;
        if (!parseHex(code))
          return false;
        // A surrogate pair is one character beyond the BMP.
        if (code >= 0xd800 && code < 0xdc00 &&
            text.compare(at, 2, "\\u") == 0) {
          at += 2;
          uint32_t low = 0;
          if (!parseHex(low))
            return false;
          if (low < 0xdc00 || low >= 0xe000)
            return problem = "unpaired surrogate", false;
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        } else if (code >= 0xd800 && code < 0xe000) {
          return problem = "unpaired surrogate", false;
        }
        appendUTF8(out, code);
        break;
      }
      default:
        out += e;
      }
    }
    if (at >= text.size())
      return problem = "unterminated string", false;
    ++at;
    return true;
  }

  bool parseValue(JsonValue &v, int depth) {
    if (depth > 64)
      return problem = "nested too deeply", false;
    skipSpace();
    if (at >= text.size())
      return problem = "unexpected end", false;
    char c = text[at];
    if (c == '{') {
      ++at;
      v.kind = JsonValue::Object;
      if (consume('}'))
        return true;
      // A repeated key would mean whichever copy a reader looks at, and
      // writers that sort keys could swap the copies: refused.
      std::set<std::string> keys;
      do {
        std::string key;
        JsonValue member;
        if (!parseString(key) || !consume(':'))
          return problem.empty() ? (problem = "expected ':'", false) : false;
        if (!keys.insert(key).second)
          return problem = "duplicate key " + jsonString(key), false;
        if (!parseValue(member, depth + 1))
          return false;
        v.members.push_back({std::move(key), std::move(member)});
      } while (consume(','));
      return consume('}') || (problem = "expected ',' or '}'", false);
    }
    if (c == '[') {
      ++at;
      v.kind = JsonValue::Array;
      if (consume(']'))
        return true;
      do {
        v.elements.emplace_back();
        if (!parseValue(v.elements.back(), depth + 1))
          return false;
      } while (consume(','));
      return consume(']') || (problem = "expected ',' or ']'", false);
    }
    if (c == '"') {
      v.kind = JsonValue::String;
      return parseString(v.string);
    }
    if (literal("null"))
      return true;
    if (literal("true") || literal("false")) {
      v.kind = JsonValue::Bool;
      v.boolean = c == 't';
      return true;
    }
    const char *start = text.c_str() + at;
    char *end = nullptr;
    v.number = std::strtod(start, &end);
    if (end == start || !(c == '-' || (c >= '0' && c <= '9')))
      return problem = "unexpected character", false;
    v.kind = JsonValue::Number;
    // An integer literal keeps its exact value too.
    int64_t exact = 0;
    std::from_chars_result r = std::from_chars(start, end, exact);
    if (r.ptr == end && r.ec == std::errc())
      v.integer = exact;
    at += end - start;
    return true;
  }

  const std::string &text;
  size_t at = 0;
  std::string problem;
};

} // namespace

std::optional<JsonValue> parseJson(const std::string &text,
                                   std::string &error) {
  JsonValue value;
  if (!Parser(text).parse(value, error))
    return std::nullopt;
  return value;
}

std::string jsonString(const std::string &s) {
  std::string quoted = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    // As llvm::json quotes: short escapes for the common three.
    if (c == '\t' || c == '\n' || c == '\r') {
      quoted += c == '\t' ? "\\t" : c == '\n' ? "\\n" : "\\r";
      continue;
    }
    if (uint8_t(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", c);
      quoted += escape;
      continue;
    }
    quoted += c;
  }
  return quoted + "\"";
}

std::string jsonNumber(double v) {
  if (!std::isfinite(v))
    return "null";
  char buffer[32];
  // llvm::json prints integral doubles with %.17g, others the CPU driver's
  // writeJSON prints with std::to_chars.
  if (std::trunc(v) == v && std::fabs(v) <= 9.2e18) {
    std::snprintf(buffer, sizeof(buffer), "%.17g", v);
    return buffer;
  }
  std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), v);
  return std::string(buffer, result.ptr);
}

JsonRecord &JsonRecord::add(const std::string &key, double value) {
  members.push_back({key, jsonNumber(value)});
  return *this;
}

JsonRecord &JsonRecord::add(const std::string &key, int64_t value) {
  members.push_back({key, std::to_string(value)});
  return *this;
}

JsonRecord &JsonRecord::add(const std::string &key, const std::string &value) {
  members.push_back({key, jsonString(value)});
  return *this;
}

JsonRecord &JsonRecord::add(const std::string &key, const JsonRecord &object) {
  members.push_back({key, object.format()});
  return *this;
}

std::string JsonRecord::format(bool indent) const {
  std::vector<std::pair<std::string, std::string>> sorted = members;
  std::sort(sorted.begin(), sorted.end(), [](auto &a, auto &b) {
    return std::make_pair(a.first != "step", a.first) <
           std::make_pair(b.first != "step", b.first);
  });
  // trainer_state.json sorts "step" with the others.
  if (indent)
    std::sort(sorted.begin(), sorted.end());
  std::string text = "{";
  for (size_t i = 0; i < sorted.size(); ++i)
    text += (i ? "," : "") + std::string(indent ? "\n  " : "") +
            jsonString(sorted[i].first) + (indent ? ": " : ":") +
            sorted[i].second;
  return text + (indent ? "\n}" : "}");
}

} // namespace mlir::mxfp4
