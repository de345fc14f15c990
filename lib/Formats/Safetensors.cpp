//===- Safetensors.cpp - the .safetensors format, without LLVM ------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Formats/Safetensors.h"

#include "mxfp4/Formats/Json.h"
#include "mxfp4/Formats/Npy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

using namespace mlir::mxfp4;

/// The key of the string-to-string metadata map in the header.
static constexpr std::string_view kMetadataKey = "__metadata__";

/// The Rust `safetensors` crate refuses headers over 100 MB; so do we, so a
/// garbage length fails fast instead of asking for a huge allocation.
static constexpr uint64_t kMaxHeaderSize = 100'000'000;

size_t mlir::mxfp4::getSafetensorsDTypeSize(std::string_view dtype) {
  static const std::pair<std::string_view, size_t> kSizes[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},   {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"U16", 2},  {"I16", 2}, {"F16", 2},  {"BF16", 2},    {"U32", 4},
      {"I32", 4},  {"F32", 4}, {"U64", 8},  {"I64", 8},     {"F64", 8}};
  for (const auto &[name, size] : kSizes)
    if (name == dtype)
      return size;
  return 0;
}

/// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or
/// code points past U+10FFFF), which JSON strings must be.
static bool isUTF8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    auto byte = [&](size_t at) { return static_cast<uint8_t>(text[at]); };
    uint8_t lead = byte(i);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (lead < 0xC2 || lead > 0xF4 || i + length > text.size())
      return false;
    // The second byte's range depends on the lead (Unicode, table 3-7).
    uint8_t low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
    uint8_t high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
    if (byte(i + 1) < low || byte(i + 1) > high)
      return false;
    for (size_t k = 2; k < length; ++k)
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF)
        return false;
    i += length;
  }
  return true;
}

/// The number of bytes of a tensor of `shape` and elements of `elementSize`
/// bytes, or nothing if a size is negative or the count overflows.
static std::optional<uint64_t> getNumBytes(const std::vector<int64_t> &shape,
                                           size_t elementSize) {
  uint64_t count = elementSize;
  for (int64_t size : shape) {
    if (size < 0 ||
        (size != 0 && count > uint64_t(std::numeric_limits<int64_t>::max()) /
                                  uint64_t(size)))
      return std::nullopt;
    count *= uint64_t(size);
  }
  return count;
}

/// "[begin, end]", as data_offsets are written.
static std::string formatOffsets(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// A non-negative integer that fits in int64_t.
static std::optional<int64_t> getSize(const JsonValue &value) {
  if (value.kind != JsonValue::Number || std::trunc(value.number) != value.number ||
      value.number < 0 || value.number >= 9.2233720368547758e18)
    return std::nullopt;
  return static_cast<int64_t>(value.number);
}

/// Checks the header entry `value` of the tensor `name` and returns it in
/// `tensor`; returns what is wrong, or an empty string.
static std::string parseTensor(const std::string &name, const JsonValue &value,
                               const std::vector<std::string> &dtypes,
                               uint64_t dataSize, SafetensorsTensor &tensor) {
  auto problem = [&](const std::string &message) {
    return "tensor '" + name + "': " + message;
  };
  if (value.kind != JsonValue::Object)
    return problem("the header entry is not an object");
  std::optional<std::string> dtype = value.getString("dtype");
  if (!dtype)
    return problem("missing or non-string 'dtype'");
  if (std::find(dtypes.begin(), dtypes.end(), *dtype) == dtypes.end() ||
      !getSafetensorsDTypeSize(*dtype)) {
    std::string supported;
    for (const std::string &known : dtypes)
      supported += (supported.empty() ? "" : ", ") + known;
    return problem("unsupported dtype '" + *dtype + "' (supported: " +
                   supported + ")");
  }
  const JsonValue *shape = value.get("shape");
  if (!shape || shape->kind != JsonValue::Array)
    return problem("missing or non-array 'shape'");
  const JsonValue *offsets = value.get("data_offsets");
  if (!offsets || offsets->kind != JsonValue::Array ||
      offsets->elements.size() != 2)
    return problem("'data_offsets' is not an array [begin, end]");

  tensor.name = name;
  tensor.dtype = *dtype;
  for (const JsonValue &size : shape->elements) {
    std::optional<int64_t> dim = getSize(size);
    if (!dim)
      return problem("'shape' holds something other than a non-negative "
                     "integer");
    tensor.shape.push_back(*dim);
  }
  std::optional<int64_t> begin = getSize(offsets->elements[0]);
  std::optional<int64_t> end = getSize(offsets->elements[1]);
  if (!begin || !end || *begin > *end)
    return problem("'data_offsets' is not a pair of non-negative integers "
                   "begin <= end");
  tensor.begin = static_cast<uint64_t>(*begin);
  tensor.end = static_cast<uint64_t>(*end);
  if (tensor.end > dataSize)
    return problem("'data_offsets' " + formatOffsets(tensor.begin, tensor.end) +
                   " run past the " + std::to_string(dataSize) +
                   " data bytes of the file (truncated file?)");
  std::optional<uint64_t> numBytes =
      getNumBytes(tensor.shape, getSafetensorsDTypeSize(*dtype));
  if (!numBytes || *numBytes != tensor.end - tensor.begin)
    return problem("shape " + formatNpyShape(tensor.shape) + " of " + *dtype +
                   " does not match 'data_offsets' " +
                   formatOffsets(tensor.begin, tensor.end));
  return "";
}

/// Checks that `tensors` tile the `dataSize` bytes of data exactly, as the
/// reference implementation demands: no overlaps (two tensors sharing
/// bytes), no gaps, no tail.
static std::string checkTiling(const std::vector<SafetensorsTensor> &tensors,
                               uint64_t dataSize) {
  std::vector<const SafetensorsTensor *> byOffset;
  for (const SafetensorsTensor &tensor : tensors)
    byOffset.push_back(&tensor);
  // (std::stable_sort would use the deprecated std::get_temporary_buffer; the
  // addresses make the order total instead.)
  std::sort(byOffset.begin(), byOffset.end(),
            [](const SafetensorsTensor *a, const SafetensorsTensor *b) {
              return std::make_tuple(a->begin, a->end, a) <
                     std::make_tuple(b->begin, b->end, b);
            });
  uint64_t expected = 0;
  const SafetensorsTensor *previous = nullptr;
  for (const SafetensorsTensor *tensor : byOffset) {
    if (tensor->begin < expected)
      return "tensor '" + tensor->name + "' overlaps tensor '" +
             previous->name + "' (data_offsets " +
             formatOffsets(tensor->begin, tensor->end) + ")";
    if (tensor->begin > expected)
      return "the data has a gap of " +
             std::to_string(tensor->begin - expected) +
             " bytes before tensor '" + tensor->name + "'";
    expected = tensor->end;
    previous = tensor;
  }
  if (expected != dataSize)
    return "the tensors cover " + std::to_string(expected) + " of the " +
           std::to_string(dataSize) + " data bytes";
  return "";
}

std::string mlir::mxfp4::parseSafetensorsHeader(
    std::string_view bytes, const std::vector<std::string> &dtypes,
    SafetensorsHeader &header) {
  header = SafetensorsHeader();
  if (bytes.size() < 8)
    return "not a .safetensors file: " + std::to_string(bytes.size()) +
           " bytes is too short for the 8-byte header length";
  uint64_t headerSize = 0;
  for (size_t i = 0; i < 8; ++i)
    headerSize |= uint64_t(static_cast<uint8_t>(bytes[i])) << (8 * i);
  if (headerSize > bytes.size() - 8)
    return "truncated or not a .safetensors file: the header length " +
           std::to_string(headerSize) + " exceeds the " +
           std::to_string(bytes.size() - 8) + " bytes after it";
  if (headerSize > kMaxHeaderSize)
    return "header length " + std::to_string(headerSize) +
           " is over the limit of " + std::to_string(kMaxHeaderSize) +
           " bytes";
  uint64_t dataSize = bytes.size() - 8 - headerSize;

  std::string error;
  std::optional<JsonValue> json =
      parseJson(std::string(bytes.substr(8, headerSize)), error);
  if (!json)
    return "the header is not valid JSON: " + error;
  if (json->kind != JsonValue::Object)
    return "the header is not a JSON object";
  std::set<std::string_view> seen;
  for (const auto &[key, value] : json->members)
    if (!seen.insert(key).second)
      return "duplicate tensor name '" + key + "'";

  for (const auto &[key, value] : json->members) {
    if (key == kMetadataKey) {
      if (value.kind != JsonValue::Object)
        return "'__metadata__' is not an object";
      for (const auto &[metaKey, metaValue] : value.members) {
        if (metaValue.kind != JsonValue::String)
          return "'__metadata__' entry '" + metaKey + "' is not a string";
        header.metadata.emplace(metaKey, metaValue.string);
      }
      continue;
    }
    SafetensorsTensor &tensor = header.tensors.emplace_back();
    std::string problem = parseTensor(key, value, dtypes, dataSize, tensor);
    if (!problem.empty())
      return problem;
  }
  std::string problem = checkTiling(header.tensors, dataSize);
  if (!problem.empty())
    return problem;
  header.dataOffset = 8 + headerSize;
  return "";
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

std::string mlir::mxfp4::formatSafetensorsHeader(
    const std::vector<SafetensorsTensor> &tensors,
    const std::map<std::string, std::string> &metadata, std::string &bytes) {
  // Check everything before formatting the first byte.
  std::set<std::string_view> names;
  uint64_t offset = 0;
  for (const SafetensorsTensor &tensor : tensors) {
    const std::string &name = tensor.name;
    if (name == kMetadataKey)
      return "a tensor cannot be named '__metadata__'";
    if (!isUTF8(name))
      return "tensor name '" + name + "' is not UTF-8";
    if (!names.insert(name).second)
      return "duplicate tensor name '" + name + "'";
    size_t elementSize = getSafetensorsDTypeSize(tensor.dtype);
    if (!elementSize)
      return "tensor '" + name + "' has dtype '" + tensor.dtype +
             "', which safetensors does not have";
    std::optional<uint64_t> numBytes = getNumBytes(tensor.shape, elementSize);
    if (!numBytes)
      return "tensor '" + name + "' has invalid shape " +
             formatNpyShape(tensor.shape);
    if (tensor.begin != offset || tensor.end < tensor.begin)
      return "tensor '" + name + "' has data_offsets " +
             formatOffsets(tensor.begin, tensor.end) +
             ", which do not follow the previous tensor's";
    if (*numBytes != tensor.end - tensor.begin)
      return "tensor '" + name + "' of shape " + formatNpyShape(tensor.shape) +
             " and dtype " + tensor.dtype + " needs " +
             std::to_string(*numBytes) + " bytes but has " +
             std::to_string(tensor.end - tensor.begin);
    offset = tensor.end;
  }
  for (const auto &[key, value] : metadata)
    if (!isUTF8(key) || !isUTF8(value))
      return "metadata entry '" + key + "' is not UTF-8";

  // Compact JSON, the bytes of the checkpoints written before this file.
  std::string header;
  auto member = [&](const std::string &key) {
    header += (header.empty() ? "{" : ",") + jsonString(key) + ":";
  };
  // Hugging Face writers put the metadata first.
  if (!metadata.empty()) {
    member(std::string(kMetadataKey));
    std::string entries;
    for (const auto &[key, value] : metadata)
      entries += (entries.empty() ? "" : ",") + jsonString(key) + ":" +
                 jsonString(value);
    header += "{" + entries + "}";
  }
  for (const SafetensorsTensor &tensor : tensors) {
    member(tensor.name);
    std::string dims;
    for (int64_t size : tensor.shape)
      dims += (dims.empty() ? "" : ",") + std::to_string(size);
    header += "{\"dtype\":" +
              jsonString(tensor.dtype) + ",\"shape\":[" + dims +
              "],\"data_offsets\":[" + std::to_string(tensor.begin) + "," +
              std::to_string(tensor.end) + "]}";
  }
  header += header.empty() ? "{}" : "}";
  // Padding the header to 8 bytes aligns the data for readers that map the
  // file and view it in place.
  header.append((8 - header.size() % 8) % 8, ' ');

  bytes.clear();
  for (size_t i = 0; i < 8; ++i)
    bytes.push_back(static_cast<char>((uint64_t(header.size()) >> (8 * i)) &
                                      0xff));
  bytes += header;
  return "";
}
