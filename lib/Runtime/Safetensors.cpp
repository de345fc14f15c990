//===- Safetensors.cpp - Hugging Face .safetensors files ------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Runtime/Safetensors.h"

#include "mxfp4/Runtime/AtomicFile.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <tuple>

#ifdef LLVM_ON_UNIX
#include <fcntl.h>
#include <unistd.h>
#endif

using namespace mlir::mxfp4;
using llvm::StringRef;

/// The key of the string-to-string metadata map in the header.
static constexpr StringRef kMetadataKey = "__metadata__";

/// The Rust `safetensors` crate refuses headers over 100 MB; so do we, so a
/// garbage length fails fast instead of asking for a huge allocation.
static constexpr uint64_t kMaxHeaderSize = 100'000'000;

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
  // Check everything before writing the first byte.
  llvm::StringSet<> names;
  for (const NamedArray &tensor : tensors) {
    if (tensor.name == kMetadataKey)
      return stError(name, "a tensor cannot be named '__metadata__'");
    if (!llvm::json::isUTF8(tensor.name))
      return stError(name, "tensor name '" + tensor.name + "' is not UTF-8");
    if (!names.insert(tensor.name).second)
      return stError(name, "duplicate tensor name '" + tensor.name + "'");
    const HostArray &array = tensor.array;
    std::optional<int64_t> numElements = getNumElements(array.shape);
    int64_t numBytes;
    if (!numElements ||
        llvm::MulOverflow(*numElements, getDTypeSize(array.dtype), numBytes))
      return stError(name, "tensor '" + tensor.name + "' has invalid shape " +
                               formatShape(array.shape));
    if (static_cast<uint64_t>(numBytes) != array.bytes.size())
      return stError(name, "tensor '" + tensor.name + "' of shape " +
                               formatShape(array.shape) + " and dtype " +
                               getDTypeName(array.dtype) + " needs " +
                               llvm::Twine(numBytes) + " bytes but has " +
                               llvm::Twine(array.bytes.size()));
  }
  for (const auto &[key, value] : metadata)
    if (!llvm::json::isUTF8(key) || !llvm::json::isUTF8(value))
      return stError(name, "metadata entry '" + key + "' is not UTF-8");

  std::string header;
  {
    llvm::raw_string_ostream headerStream(header);
    llvm::json::OStream json(headerStream);
    json.object([&] {
      // Hugging Face writers put the metadata first.
      if (!metadata.empty())
        json.attributeObject(kMetadataKey, [&] {
          for (const auto &[key, value] : metadata)
            json.attribute(key, value);
        });
      uint64_t offset = 0;
      for (const NamedArray &tensor : tensors) {
        uint64_t end = offset + tensor.array.bytes.size();
        json.attributeObject(tensor.name, [&] {
          json.attribute("dtype", getSafetensorsDTypeName(tensor.array.dtype));
          json.attributeArray("shape", [&] {
            for (int64_t size : tensor.array.shape)
              json.value(size);
          });
          json.attributeArray("data_offsets", [&] {
            json.value(static_cast<int64_t>(offset));
            json.value(static_cast<int64_t>(end));
          });
        });
        offset = end;
      }
    });
  }
  // Padding the header to 8 bytes aligns the data for readers that map the
  // file and view it in place.
  header.append(llvm::alignTo(header.size(), 8) - header.size(), ' ');

  char length[8];
  llvm::support::endian::write64le(length, header.size());
  os.write(length, sizeof(length));
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

/// Returns the keys of the JSON object `text` in the order they appear, which
/// llvm::json::Object forgets; std::nullopt if `text` is not an object. Keys
/// are decoded by llvm::json so escapes match the parsed object.
static std::optional<std::vector<std::string>>
getObjectKeysInOrder(StringRef text) {
  size_t i = 0;
  auto skipSpace = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' ||
                               text[i] == '\n' || text[i] == '\r'))
      ++i;
  };
  // Moves `i` past the string that starts at `i`.
  auto skipString = [&]() -> bool {
    for (++i; i < text.size(); ++i) {
      if (text[i] == '\\')
        ++i;
      else if (text[i] == '"')
        return ++i, true;
    }
    return false;
  };

  std::vector<std::string> keys;
  skipSpace();
  if (i >= text.size() || text[i] != '{')
    return std::nullopt;
  ++i;
  skipSpace();
  if (i < text.size() && text[i] == '}')
    return keys;
  while (true) {
    skipSpace();
    if (i >= text.size() || text[i] != '"')
      return std::nullopt;
    size_t start = i;
    if (!skipString())
      return std::nullopt;
    llvm::Expected<llvm::json::Value> key =
        llvm::json::parse(text.slice(start, i));
    if (!key) {
      llvm::consumeError(key.takeError());
      return std::nullopt;
    }
    std::optional<StringRef> keyString = key->getAsString();
    if (!keyString)
      return std::nullopt;
    keys.push_back(keyString->str());
    skipSpace();
    if (i >= text.size() || text[i] != ':')
      return std::nullopt;
    ++i;
    // Skip the value: up to the ',' or '}' at depth zero.
    int depth = 0;
    while (true) {
      if (i >= text.size())
        return std::nullopt;
      char c = text[i];
      if (c == '"') {
        if (!skipString())
          return std::nullopt;
        continue;
      }
      if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (depth == 0)
          break;
        --depth;
      } else if (c == ',' && depth == 0) {
        break;
      }
      ++i;
    }
    if (text[i] == '}')
      return keys;
    ++i; // ','
  }
}

/// Reads a non-negative integer that fits in int64_t.
static std::optional<int64_t> getSize(const llvm::json::Value &value) {
  std::optional<int64_t> size = value.getAsInteger();
  if (!size || *size < 0)
    return std::nullopt;
  return size;
}

namespace {
/// A tensor entry of the header, checked on its own.
struct TensorEntry {
  std::string name;
  DType dtype;
  llvm::SmallVector<int64_t, 4> shape;
  int64_t begin, end;
};
} // namespace

llvm::Expected<std::vector<NamedArray>>
mlir::mxfp4::parseSafetensors(StringRef contents, StringRef name,
                              std::map<std::string, std::string> *metadata) {
  if (contents.size() < 8)
    return stError(name,
                   "not a .safetensors file: " + llvm::Twine(contents.size()) +
                       " bytes is too short for the 8-byte header "
                       "length");
  uint64_t headerSize = llvm::support::endian::read64le(contents.data());
  if (headerSize > contents.size() - 8)
    return stError(name, "truncated or not a .safetensors file: the header "
                         "length " +
                             llvm::Twine(headerSize) + " exceeds the " +
                             llvm::Twine(contents.size() - 8) +
                             " bytes after it");
  if (headerSize > kMaxHeaderSize)
    return stError(name, "header length " + llvm::Twine(headerSize) +
                             " is over the limit of " +
                             llvm::Twine(kMaxHeaderSize) + " bytes");
  StringRef headerText = contents.substr(8, headerSize);
  StringRef data = contents.drop_front(8 + headerSize);

  llvm::Expected<llvm::json::Value> header = llvm::json::parse(headerText);
  if (!header)
    return stError(name, "the header is not valid JSON: " +
                             llvm::toString(header.takeError()));
  const llvm::json::Object *object = header->getAsObject();
  std::optional<std::vector<std::string>> keys =
      getObjectKeysInOrder(headerText);
  if (!object || !keys)
    return stError(name, "the header is not a JSON object");
  if (keys->size() != object->size()) {
    llvm::StringSet<> seen;
    for (const std::string &key : *keys)
      if (!seen.insert(key).second)
        return stError(name, "duplicate tensor name '" + key + "'");
    return stError(name, "the header has duplicate keys");
  }

  std::vector<TensorEntry> entries;
  std::map<std::string, std::string> metadataEntries;
  for (const std::string &key : *keys) {
    const llvm::json::Value &value = *object->get(key);
    if (key == kMetadataKey) {
      const llvm::json::Object *map = value.getAsObject();
      if (!map)
        return stError(name, "'__metadata__' is not an object");
      for (const auto &[metaKey, metaValue] : *map) {
        std::optional<StringRef> text = metaValue.getAsString();
        if (!text)
          return stError(name, "'__metadata__' entry '" + metaKey.str() +
                                   "' is not a string");
        metadataEntries[metaKey.str()] = text->str();
      }
      continue;
    }

    auto entryError = [&](const llvm::Twine &message) {
      return stError(name, "tensor '" + key + "': " + message);
    };
    const llvm::json::Object *fields = value.getAsObject();
    if (!fields)
      return entryError("the header entry is not an object");
    std::optional<StringRef> dtypeName = fields->getString("dtype");
    if (!dtypeName)
      return entryError("missing or non-string 'dtype'");
    std::optional<DType> dtype = parseSafetensorsDType(*dtypeName);
    if (!dtype)
      return entryError("unsupported dtype '" + *dtypeName +
                        "' (supported: F32, F64, I32, I64, U8, U16)");
    const llvm::json::Array *shape = fields->getArray("shape");
    if (!shape)
      return entryError("missing or non-array 'shape'");
    const llvm::json::Array *offsets = fields->getArray("data_offsets");
    if (!offsets || offsets->size() != 2)
      return entryError("'data_offsets' is not an array [begin, end]");

    TensorEntry entry;
    entry.name = key;
    entry.dtype = *dtype;
    for (const llvm::json::Value &size : *shape) {
      std::optional<int64_t> dim = getSize(size);
      if (!dim)
        return entryError("'shape' holds something other than a "
                          "non-negative integer");
      entry.shape.push_back(*dim);
    }
    std::optional<int64_t> begin = getSize((*offsets)[0]);
    std::optional<int64_t> end = getSize((*offsets)[1]);
    if (!begin || !end || *begin > *end)
      return entryError("'data_offsets' is not a pair of non-negative "
                        "integers begin <= end");
    if (static_cast<uint64_t>(*end) > data.size())
      return entryError("'data_offsets' [" + llvm::Twine(*begin) + ", " +
                        llvm::Twine(*end) + "] run past the " +
                        llvm::Twine(data.size()) +
                        " data bytes of the file (truncated file?)");
    entry.begin = *begin;
    entry.end = *end;
    std::optional<int64_t> numElements = getNumElements(entry.shape);
    int64_t numBytes;
    if (!numElements ||
        llvm::MulOverflow(*numElements, getDTypeSize(*dtype), numBytes) ||
        numBytes != *end - *begin)
      return entryError("shape " + formatShape(entry.shape) + " of " +
                        *dtypeName + " does not match 'data_offsets' [" +
                        llvm::Twine(*begin) + ", " + llvm::Twine(*end) + "]");
    entries.push_back(std::move(entry));
  }

  // The tensors must tile the data exactly, as the reference implementation
  // demands: no overlaps (two tensors sharing bytes), no gaps, no tail.
  // (std::stable_sort would use the deprecated std::get_temporary_buffer; the
  // addresses make the order total instead.)
  std::vector<const TensorEntry *> byOffset;
  for (const TensorEntry &entry : entries)
    byOffset.push_back(&entry);
  llvm::sort(byOffset, [](const TensorEntry *a, const TensorEntry *b) {
    return std::make_tuple(a->begin, a->end, a) <
           std::make_tuple(b->begin, b->end, b);
  });
  int64_t expected = 0;
  const TensorEntry *previous = nullptr;
  for (const TensorEntry *entry : byOffset) {
    if (entry->begin < expected)
      return stError(name, "tensor '" + entry->name + "' overlaps tensor '" +
                               previous->name + "' (data_offsets [" +
                               llvm::Twine(entry->begin) + ", " +
                               llvm::Twine(entry->end) + "])");
    if (entry->begin > expected)
      return stError(name, "the data has a gap of " +
                               llvm::Twine(entry->begin - expected) +
                               " bytes before tensor '" + entry->name + "'");
    expected = entry->end;
    previous = entry;
  }
  if (static_cast<uint64_t>(expected) != data.size())
    return stError(name, "the tensors cover " + llvm::Twine(expected) +
                             " of the " + llvm::Twine(data.size()) +
                             " data bytes");

  std::vector<NamedArray> tensors;
  tensors.reserve(entries.size());
  for (TensorEntry &entry : entries) {
    NamedArray &tensor = tensors.emplace_back();
    tensor.name = std::move(entry.name);
    tensor.array.dtype = entry.dtype;
    tensor.array.shape = std::move(entry.shape);
    tensor.array.bytes.assign(data.bytes_begin() + entry.begin,
                              data.bytes_begin() + entry.end);
  }
  if (metadata)
    *metadata = std::move(metadataEntries);
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
