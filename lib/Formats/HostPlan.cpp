//===- HostPlan.cpp - the host function as a replayable plan --------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Formats/HostPlan.h"

#include "Words.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

using namespace mlir::mxfp4;
using namespace mlir::mxfp4::detail;

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// Appends `bits` in lower-case hex, zero-padded to `digits` digits (more if
/// it needs them).
static void appendHex(std::string &text, uint64_t bits, size_t digits) {
  static const char kDigits[] = "0123456789abcdef";
  char buffer[16];
  size_t count = 0;
  do {
    buffer[count++] = kDigits[bits & 0xf];
    bits >>= 4;
  } while (bits);
  if (digits > count)
    text.append(digits - count, '0');
  while (count)
    text += buffer[--count];
}

/// Appends " TYPE DIMS...".
static void appendType(std::string &text, const HostValue &value) {
  text += " " + value.elementType;
  for (int64_t d : value.shape)
    text += " " + std::to_string(d);
}

std::string mlir::mxfp4::formatHostPlan(const std::vector<HostFunction> &plan) {
  std::string text = "# mxfp4 host plan v1\n";
  auto number = [&](int64_t value) { text += " " + std::to_string(value); };
  for (const HostFunction &function : plan) {
    text += "function " + function.name;
    number(function.arguments.size());
    number(function.results.size());
    text += "\n";
    for (size_t i = 0; i < function.arguments.size(); ++i) {
      const HostValue &arg = function.arguments[i];
      text += "arg " + std::to_string(i) +
              (arg.buffer ? " buffer " : " scalar ") + std::to_string(arg.id);
      number(arg.bytes);
      if (arg.buffer)
        appendType(text, arg);
      text += "\n";
    }
    for (const HostStep &step : function.steps) {
      switch (step.kind) {
      case HostStep::Kind::Alloc:
        text += "alloc";
        number(step.id);
        number(step.bytes);
        break;
      case HostStep::Kind::Free:
        text += "free";
        number(step.id);
        break;
      case HostStep::Kind::View:
        text += "view";
        number(step.id);
        number(step.source);
        break;
      case HostStep::Kind::Const:
        text += "const";
        number(step.id);
        number(step.bytes);
        text += " ";
        appendHex(text, step.bits, 2 * step.bytes);
        break;
      case HostStep::Kind::Global:
        text += "global";
        number(step.id);
        number(step.bytes);
        text += " ";
        for (char c : step.data)
          appendHex(text, static_cast<uint8_t>(c), 2);
        break;
      case HostStep::Kind::TensorMap: {
        const HostTensorMap &map = step.map;
        text += "tensormap";
        number(step.id);
        number(step.source);
        text += " " + map.elementType;
        auto list = [&](const char *key, const std::vector<int64_t> &values) {
          text += std::string(" ") + key + "=";
          for (size_t i = 0; i < values.size(); ++i)
            text += (i ? "," : "") + std::to_string(values[i]);
        };
        list("dims", map.dims);
        list("strides", map.strides);
        list("box", map.box);
        text += " offset=" + std::to_string(map.offset) +
                " swizzle=" + std::to_string(map.swizzle) +
                " l2=" + std::to_string(map.l2Promotion);
        break;
      }
      case HostStep::Kind::Launch:
        text += "launch " + step.kernel;
        for (int64_t size : step.grid)
          number(size);
        for (int64_t size : step.block)
          number(size);
        if (step.sharedBytes)
          text += " shared=" + std::to_string(step.sharedBytes);
        for (auto [buffer, id] : step.params)
          text += (buffer ? " b" : " s") + std::to_string(id);
        break;
      }
      text += "\n";
    }
    for (size_t i = 0; i < function.results.size(); ++i) {
      const HostValue &result = function.results[i];
      text += "result " + std::to_string(i);
      number(result.id);
      number(result.bytes);
      appendType(text, result);
      text += "\n";
    }
    text += "end\n";
  }
  return text;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {

/// Parses the records of a plan, one line at a time.
class PlanParser {
public:
  PlanParser(std::string_view text, const std::string &name)
      : lines(text), name(name) {}

  /// Parses the whole plan; returns what is wrong, located, or "".
  std::string parse(std::vector<HostFunction> &plan);

private:
  /// `message` at the current line.
  std::string located(const std::string &message) const {
    return name + ":" + std::to_string(lines.number()) + ": " + message;
  }

  /// Parses the record `words` of `function`; false if it is malformed,
  /// with `error` saying how where the usage would not.
  bool parseRecord(const std::vector<std::string_view> &words,
                   HostFunction &function);

  LineReader lines;
  std::string error;
  const std::string &name;
};

} // namespace

/// Parses `word` as a size or an id: a non-negative decimal.
static bool parseCount(std::string_view word, int64_t &value) {
  return parseInteger(word, value) && value >= 0;
}

/// Parses "TYPE DIMS..." from `words[first]` on into `value`.
static bool parseType(const std::vector<std::string_view> &words, size_t first,
                      HostValue &value) {
  if (words.size() <= first)
    return false;
  value.elementType = std::string(words[first]);
  for (size_t i = first + 1; i < words.size(); ++i)
    if (!parseCount(words[i], value.shape.emplace_back()))
      return false;
  return true;
}

/// Parses "KEY=V" (a count) from `word`.
static bool parseKeyed(std::string_view word, std::string_view key,
                       int64_t &value) {
  return word.size() > key.size() && word.substr(0, key.size()) == key &&
         word[key.size()] == '=' &&
         parseCount(word.substr(key.size() + 1), value);
}

/// Parses "KEY=V,V,..." (counts) from `word`; an empty list is "KEY=".
static bool parseKeyedList(std::string_view word, std::string_view key,
                           std::vector<int64_t> &values) {
  if (word.size() <= key.size() || word.substr(0, key.size()) != key ||
      word[key.size()] != '=')
    return false;
  std::string_view rest = word.substr(key.size() + 1);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    if (!parseCount(rest.substr(0, comma), values.emplace_back()))
      return false;
    if (comma == std::string_view::npos)
      break;
    rest = rest.substr(comma + 1);
    if (rest.empty())
      return false;
  }
  return true;
}

/// The value of the hex digit `c`, or -1.
static int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// Parses the pairs of hex digits `hex` into at most `bytes` bytes.
static bool parseHexData(std::string_view hex, int64_t bytes,
                         std::vector<char> &data) {
  if (hex.size() % 2 || static_cast<int64_t>(hex.size() / 2) > bytes)
    return false;
  data.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int high = hexDigit(hex[i]), low = hexDigit(hex[i + 1]);
    if (high < 0 || low < 0)
      return false;
    data.push_back(static_cast<char>(high << 4 | low));
  }
  return true;
}

bool PlanParser::parseRecord(const std::vector<std::string_view> &words,
                             HostFunction &function) {
  std::string_view kind = words[0];
  size_t n = words.size();
  if (kind == "arg" || kind == "result") {
    HostValue value;
    int64_t index;
    bool isArg = kind == "arg";
    std::vector<HostValue> &values =
        isArg ? function.arguments : function.results;
    if (n < 4 || !parseCount(words[1], index) ||
        index != static_cast<int64_t>(values.size()))
      return false;
    if (isArg) {
      value.buffer = words[2] == "buffer";
      if ((!value.buffer && words[2] != "scalar") || n < 5 ||
          !parseCount(words[3], value.id) ||
          !parseCount(words[4], value.bytes) ||
          (value.buffer ? !parseType(words, 5, value) : n != 5))
        return false;
    } else if (!parseCount(words[2], value.id) ||
               !parseCount(words[3], value.bytes) ||
               !parseType(words, 4, value)) {
      return false;
    }
    values.push_back(std::move(value));
    return true;
  }

  HostStep step;
  if (kind == "alloc") {
    step.kind = HostStep::Kind::Alloc;
    if (n != 3 || !parseCount(words[1], step.id) ||
        !parseCount(words[2], step.bytes))
      return false;
  } else if (kind == "free") {
    step.kind = HostStep::Kind::Free;
    if (n != 2 || !parseCount(words[1], step.id))
      return false;
  } else if (kind == "view") {
    step.kind = HostStep::Kind::View;
    if (n != 3 || !parseCount(words[1], step.id) ||
        !parseCount(words[2], step.source))
      return false;
  } else if (kind == "const") {
    step.kind = HostStep::Kind::Const;
    // A scalar: at most the 8 bytes of `bits` (a larger count made the
    // writer pad the hex to it, fuzz/regressions/host-plan).
    if (n != 4 || !parseCount(words[1], step.id) ||
        !parseCount(words[2], step.bytes) || step.bytes < 1 ||
        step.bytes > 8 || !parseInteger(words[3], step.bits, 16))
      return false;
  } else if (kind == "global") {
    step.kind = HostStep::Kind::Global;
    // An empty global has no data word.
    if ((n != 3 && n != 4) || !parseCount(words[1], step.id) ||
        !parseCount(words[2], step.bytes) ||
        !parseHexData(n == 4 ? words[3] : "", step.bytes, step.data))
      return false;
  } else if (kind == "tensormap") {
    step.kind = HostStep::Kind::TensorMap;
    HostTensorMap &map = step.map;
    if (n != 10 || !parseCount(words[1], step.id) ||
        !parseCount(words[2], step.source) ||
        !parseKeyedList(words[4], "dims", map.dims) ||
        !parseKeyedList(words[5], "strides", map.strides) ||
        !parseKeyedList(words[6], "box", map.box) ||
        !parseKeyed(words[7], "offset", map.offset) ||
        !parseKeyed(words[8], "swizzle", map.swizzle) ||
        !parseKeyed(words[9], "l2", map.l2Promotion))
      return false;
    map.elementType = std::string(words[3]);
    // Checked here, so that a runtime's error is a located one.
    std::string problem = checkTensorMap(map);
    if (!problem.empty()) {
      error = "tensormap " + std::to_string(step.id) + ": " + problem;
      return false;
    }
  } else {
    step.kind = HostStep::Kind::Launch;
    if (n < 8)
      return false;
    step.kernel = std::string(words[1]);
    for (int i = 0; i < 3; ++i)
      if (!parseCount(words[2 + i], step.grid[i]) ||
          !parseCount(words[5 + i], step.block[i]))
        return false;
    size_t first = 8;
    if (n > 8 && words[8].substr(0, 7) == "shared=") {
      if (!parseKeyed(words[8], "shared", step.sharedBytes))
        return false;
      first = 9;
    }
    for (size_t i = first; i < n; ++i) {
      std::string_view param = words[i];
      int64_t id;
      if (param.empty() || (param[0] != 'b' && param[0] != 's') ||
          !parseCount(param.substr(1), id))
        return false;
      step.params.push_back({param[0] == 'b', id});
    }
  }
  function.steps.push_back(std::move(step));
  return true;
}

/// How each record is written, for the message about a malformed one.
static const char *getUsage(std::string_view kind) {
  if (kind == "function")
    return "function NAME ARGS RESULTS";
  if (kind == "arg")
    return "arg I buffer ID BYTES TYPE DIMS... or arg I scalar ID BYTES, "
           "numbered from 0";
  if (kind == "alloc")
    return "alloc ID BYTES";
  if (kind == "free")
    return "free ID";
  if (kind == "view")
    return "view ID SOURCE";
  if (kind == "const")
    return "const ID BYTES HEXBITS";
  if (kind == "global")
    return "global ID BYTES HEXDATA, at most BYTES bytes";
  if (kind == "tensormap")
    return "tensormap ID SOURCE TYPE dims=D,... strides=S,... box=B,... "
           "offset=BYTES swizzle=BYTES l2=BYTES";
  if (kind == "launch")
    return "launch KERNEL GX GY GZ BX BY BZ [shared=BYTES] ARG... with ARG "
           "bID or sID";
  if (kind == "result")
    return "result I ID BYTES TYPE DIMS..., numbered from 0";
  if (kind == "end")
    return "end";
  return nullptr;
}

std::string PlanParser::parse(std::vector<HostFunction> &plan) {
  plan.clear();
  std::set<std::string> names;
  // The function being read, with its declared counts and its line.
  HostFunction *function = nullptr;
  int64_t arguments = 0, results = 0;
  size_t functionLine = 0;
  for (std::string_view line; lines.next(line);) {
    std::vector<std::string_view> words = splitWords(line);
    if (words.empty() || words[0][0] == '#')
      continue;
    std::string_view kind = words[0];
    const char *usage = getUsage(kind);
    if (!usage)
      return located("unknown plan record '" + std::string(kind) + "'");
    std::string bad = "bad '" + std::string(kind) + "' record (" + usage + ")";
    if (kind == "function") {
      if (function)
        return located("function '" + function->name + "' has no 'end'");
      if (words.size() != 4 || !parseCount(words[2], arguments) ||
          !parseCount(words[3], results))
        return located(bad);
      std::string functionName(words[1]);
      if (!names.insert(functionName).second)
        return located("a second function '" + functionName + "'");
      function = &plan.emplace_back();
      function->name = functionName;
      functionLine = lines.number();
      continue;
    }
    if (!function)
      return located("'" + std::string(kind) + "' outside a function");
    if (kind == "end") {
      if (words.size() != 1)
        return located(bad);
      if (static_cast<int64_t>(function->arguments.size()) != arguments ||
          static_cast<int64_t>(function->results.size()) != results)
        return located("function '" + function->name + "' declares " +
                       std::to_string(arguments) + " arguments and " +
                       std::to_string(results) + " results but has " +
                       std::to_string(function->arguments.size()) + " and " +
                       std::to_string(function->results.size()));
      function = nullptr;
      continue;
    }
    if (!parseRecord(words, *function))
      return located(error.empty() ? bad : error);
  }
  if (function)
    return name + ":" + std::to_string(functionLine) + ": function '" +
           function->name + "' has no 'end'";
  return "";
}

std::string mlir::mxfp4::parseHostPlan(std::string_view text,
                                       const std::string &name,
                                       std::vector<HostFunction> &plan) {
  return PlanParser(text, name).parse(plan);
}

std::vector<std::string> mlir::mxfp4::listHostFunctions(std::string_view text) {
  std::vector<std::string> names;
  LineReader lines(text);
  for (std::string_view line; lines.next(line);) {
    std::vector<std::string_view> words = splitWords(line);
    if (words.size() > 1 && words[0] == "function")
      names.emplace_back(words[1]);
  }
  return names;
}

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

std::string mlir::mxfp4::checkHostLifetimes(const HostFunction &function) {
  std::map<int64_t, int64_t> root; // a view's allocation (or argument)
  std::set<int64_t> freed;
  std::string problem;
  // The allocation `id` is (a view of), unless it was freed.
  auto use = [&](int64_t id, const std::string &what) {
    auto it = root.find(id);
    int64_t base = it == root.end() ? id : it->second;
    if (freed.count(base) && problem.empty())
      problem = "the plan " + what + " buffer " + std::to_string(id) +
                " after freeing it";
    return base;
  };
  for (const HostStep &step : function.steps) {
    if (step.kind == HostStep::Kind::View)
      root[step.id] = use(step.source, "views");
    else if (step.kind == HostStep::Kind::TensorMap)
      root[step.id] = use(step.source, "maps");
    else if (step.kind == HostStep::Kind::Free)
      freed.insert(use(step.id, "frees"));
    else if (step.kind == HostStep::Kind::Launch)
      for (auto [buffer, id] : step.params)
        if (buffer)
          use(id, "passes " + step.kernel);
    if (!problem.empty())
      return problem;
  }
  for (const HostValue &result : function.results)
    use(result.id, "returns");
  return problem;
}

mlir::mxfp4::HostMemory
mlir::mxfp4::measureHostMemory(const HostFunction &function) {
  // Sizes come from a file: sums saturate rather than overflow.
  auto add = [](int64_t a, int64_t b) {
    return b > std::numeric_limits<int64_t>::max() - a
               ? std::numeric_limits<int64_t>::max()
               : a + b;
  };
  HostMemory memory;
  for (const HostValue &argument : function.arguments)
    if (argument.buffer)
      memory.arguments = add(memory.arguments, argument.bytes);
  std::map<int64_t, int64_t> live; // allocation or global -> bytes
  std::map<int64_t, int64_t> root; // a view -> what it views
  int64_t held = 0;
  for (const HostStep &step : function.steps) {
    // A tensor map lives in the runtime's cache, outside the plan's memory.
    if (step.kind == HostStep::Kind::View ||
        step.kind == HostStep::Kind::TensorMap) {
      auto it = root.find(step.source);
      root[step.id] = it == root.end() ? step.source : it->second;
    } else if (step.kind == HostStep::Kind::Alloc ||
        step.kind == HostStep::Kind::Global) {
      live[step.id] = step.bytes;
      held = add(held, step.bytes);
      memory.peakTemporaries = std::max(memory.peakTemporaries, held);
    } else if (step.kind == HostStep::Kind::Free) {
      auto viewed = root.find(step.id);
      auto it = live.find(viewed == root.end() ? step.id : viewed->second);
      if (it != live.end()) {
        held -= it->second;
        live.erase(it);
      }
    }
  }
  return memory;
}

//===----------------------------------------------------------------------===//
// Tensor maps
//===----------------------------------------------------------------------===//

int64_t mlir::mxfp4::getTensorMapElementBytes(const std::string &elementType) {
  if (elementType == "u8")
    return 1;
  if (elementType == "f16" || elementType == "bf16")
    return 2;
  if (elementType == "f32" || elementType == "i32")
    return 4;
  if (elementType == "i64")
    return 8;
  return 0;
}

std::string mlir::mxfp4::checkTensorMap(const HostTensorMap &map) {
  int64_t element = getTensorMapElementBytes(map.elementType);
  if (!element)
    return "element type '" + map.elementType +
           "' is none of u8 f16 bf16 f32 i32 i64";
  size_t rank = map.dims.size();
  if (rank < 1 || rank > 5)
    return "rank " + std::to_string(rank) + " is not 1 to 5";
  if (map.strides.size() != rank - 1 || map.box.size() != rank)
    return "a rank-" + std::to_string(rank) + " map takes " +
           std::to_string(rank - 1) + " strides and " + std::to_string(rank) +
           " box sizes";
  for (int64_t d : map.dims)
    if (d < 1 || d > (int64_t(1) << 32))
      return "dimension " + std::to_string(d) + " is not 1 to 2^32";
  for (int64_t stride : map.strides)
    if (stride % 16 || stride >= (int64_t(1) << 40))
      return "stride " + std::to_string(stride) +
             " is not a multiple of 16 bytes below 2^40";
  for (int64_t b : map.box)
    if (b < 1 || b > 256)
      return "box size " + std::to_string(b) + " is not 1 to 256";
  if (map.offset % 16)
    return "offset " + std::to_string(map.offset) +
           " is not a multiple of 16 bytes";
  if (map.swizzle != 0 && map.swizzle != 32 && map.swizzle != 64 &&
      map.swizzle != 128)
    return "swizzle " + std::to_string(map.swizzle) + " is not 0, 32, 64 or 128";
  if (map.l2Promotion != 0 && map.l2Promotion != 64 &&
      map.l2Promotion != 128 && map.l2Promotion != 256)
    return "L2 promotion " + std::to_string(map.l2Promotion) +
           " is not 0, 64, 128 or 256";
  int64_t row = map.box.back() * element;
  if (row % 16)
    return "the box's innermost row of " + std::to_string(row) +
           " bytes is not a multiple of 16";
  if (map.swizzle && row > map.swizzle)
    return "the box's innermost row of " + std::to_string(row) +
           " bytes exceeds the " + std::to_string(map.swizzle) +
           "-byte swizzle";
  return "";
}
