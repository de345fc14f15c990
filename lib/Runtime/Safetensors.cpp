//===- Safetensors.cpp - Hugging Face .safetensors files ------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Runtime/Safetensors.h"

#include "mxfp4/Formats/Safetensors.h"
#include "mxfp4/Runtime/AtomicFile.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::mxfp4;
using llvm::StringRef;

/// Returns an error "'name': message".
static llvm::Error stError(StringRef name, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + name + "': " + message);
}

llvm::StringRef mlir::mxfp4::getSafetensorsDTypeName(DType dtype) {
  switch (dtype) {
  case DType::Float32:
    return "F32";
  case DType::Float64:
    return "F64";
  case DType::Int32:
    return "I32";
  case DType::Int64:
    return "I64";
  case DType::UInt8:
    return "U8";
  case DType::UInt16:
    return "U16";
  }
  llvm_unreachable("unknown dtype");
}

static std::optional<DType> parseSafetensorsDType(StringRef name) {
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("F32", DType::Float32)
      .Case("F64", DType::Float64)
      .Case("I32", DType::Int32)
      .Case("I64", DType::Int64)
      .Case("U8", DType::UInt8)
      .Case("U16", DType::UInt16)
      .Default(std::nullopt);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

llvm::Error mlir::mxfp4::writeSafetensors(
    llvm::raw_ostream &os, StringRef name, llvm::ArrayRef<NamedArray> tensors,
    const std::map<std::string, std::string> &metadata) {
  std::vector<SafetensorsTensor> entries;
  uint64_t offset = 0;
  for (const NamedArray &tensor : tensors) {
    SafetensorsTensor &entry = entries.emplace_back();
    entry.name = tensor.name;
    entry.dtype = getSafetensorsDTypeName(tensor.array.dtype).str();
    entry.shape.assign(tensor.array.shape.begin(), tensor.array.shape.end());
    entry.begin = offset;
    entry.end = offset += tensor.array.bytes.size();
  }
  std::string header;
  std::string problem = formatSafetensorsHeader(entries, metadata, header);
  if (!problem.empty())
    return stError(name, problem);
  os << header;
  for (const NamedArray &tensor : tensors)
    os.write(reinterpret_cast<const char *>(tensor.array.bytes.data()),
             tensor.array.bytes.size());
  return llvm::Error::success();
}

llvm::Error mlir::mxfp4::writeSafetensors(
    StringRef path, llvm::ArrayRef<NamedArray> tensors,
    const std::map<std::string, std::string> &metadata) {
  return writeFileAtomically(path, [&](llvm::raw_ostream &os) {
    return writeSafetensors(os, path, tensors, metadata);
  });
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

llvm::Expected<std::vector<NamedArray>>
mlir::mxfp4::parseSafetensors(StringRef contents, StringRef name,
                              std::map<std::string, std::string> *metadata) {
  SafetensorsHeader header;
  std::string problem = parseSafetensorsHeader(
      std::string_view(contents.data(), contents.size()),
      {"F32", "F64", "I32", "I64", "U8", "U16"}, header);
  if (!problem.empty())
    return stError(name, problem);
  StringRef data = contents.drop_front(header.dataOffset);
  std::vector<NamedArray> tensors;
  tensors.reserve(header.tensors.size());
  for (SafetensorsTensor &entry : header.tensors) {
    NamedArray &tensor = tensors.emplace_back();
    tensor.name = std::move(entry.name);
    tensor.array.dtype = *parseSafetensorsDType(entry.dtype);
    tensor.array.shape.assign(entry.shape.begin(), entry.shape.end());
    tensor.array.bytes.assign(data.bytes_begin() + entry.begin,
                              data.bytes_begin() + entry.end);
  }
  if (metadata)
    *metadata = std::move(header.metadata);
  return tensors;
}

llvm::Expected<std::vector<NamedArray>>
mlir::mxfp4::readSafetensors(StringRef path,
                             std::map<std::string, std::string> *metadata) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (std::error_code error = file.getError())
    return stError(path, "cannot read: " + error.message());
  return parseSafetensors((*file)->getBuffer(), path, metadata);
}
