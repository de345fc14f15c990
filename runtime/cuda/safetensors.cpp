//===- safetensors.cpp - f32 tensors in safetensors files -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "safetensors.h"

#include "failure.h"
#include "npy.h"

#include "mxfp4/Formats/Json.h"

#include <cstring>
#include <fstream>

using namespace mlir::mxfp4;

void writeSafetensors(const std::string &path,
                      const std::vector<NamedTensor> &tensors) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  size_t offset = 0;
  for (const NamedTensor &t : tensors) {
    std::string dims;
    for (int64_t d : t.shape)
      dims += (dims.empty() ? "" : ",") + std::to_string(d);
    header += "," + jsonString(t.name) + ":{\"dtype\":\"F32\",\"shape\":[" +
              dims + "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + t.data.size()) + "]}";
    offset += t.data.size();
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary);
  uint64_t length = header.size();
  out.write(reinterpret_cast<char *>(&length), 8);
  out << header;
  for (const NamedTensor &t : tensors)
    out.write(t.data.data(), t.data.size());
  if (!out.flush())
    fail("cannot write '" + path + "'");
}

std::vector<NamedTensor> readSafetensors(const std::string &path) {
  std::vector<char> file = readFile(path);
  uint64_t length = 0;
  if (file.size() >= 8)
    std::memcpy(&length, file.data(), 8);
  if (file.size() < 8 || length > file.size() - 8)
    fail("'" + path + "' is not a safetensors file (truncated header)");
  std::string error;
  std::optional<JsonValue> header =
      parseJson(std::string(file.data() + 8, length), error);
  if (!header || header->kind != JsonValue::Object)
    fail("'" + path + "' has an invalid header: " +
         (error.empty() ? "not a JSON object" : error));
  size_t data = 8 + length;
  std::vector<NamedTensor> tensors;
  for (const auto &[name, entry] : header->members) {
    if (name == "__metadata__")
      continue;
    const JsonValue *shape = entry.get("shape");
    const JsonValue *offsets = entry.get("data_offsets");
    if (entry.getString("dtype") != std::optional<std::string>("F32") ||
        !shape || shape->kind != JsonValue::Array || !offsets ||
        offsets->elements.size() != 2)
      fail("'" + path + "': tensor '" + name +
           "' is not F32 with a shape and data offsets");
    NamedTensor t;
    t.name = name;
    size_t elements = 1;
    for (const JsonValue &d : shape->elements) {
      t.shape.push_back(static_cast<int64_t>(d.number));
      elements *= static_cast<size_t>(d.number);
    }
    double begin = offsets->elements[0].number,
           end = offsets->elements[1].number;
    if (begin < 0 || end != begin + 4.0 * elements || data + end > file.size())
      fail("'" + path + "': tensor '" + name +
           "' does not lie inside the file");
    t.data.assign(file.begin() + data + size_t(begin),
                  file.begin() + data + size_t(end));
    tensors.push_back(std::move(t));
  }
  return tensors;
}
