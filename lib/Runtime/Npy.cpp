//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Runtime/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::mxfp4;
using llvm::StringRef;

static constexpr StringRef kMagic("\x93NUMPY", 6);

/// Returns an error "'name': message".
static llvm::Error npyError(StringRef name, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + name + "': " + message);
}

//===----------------------------------------------------------------------===//
// Header dict
//===----------------------------------------------------------------------===//

namespace {
/// The fields of a `.npy` header.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  llvm::SmallVector<int64_t, 4> shape;
};

/// Parses the Python dict literal of a `.npy` header, e.g.
/// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }".
class HeaderParser {
public:
  explicit HeaderParser(StringRef text) : rest(text) {}

  /// Parses the dict; on failure returns a description of what is wrong.
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
    if (!rest.trim().empty())
      return std::string("unexpected text after the header dict");
    return std::nullopt;
  }

private:
  bool peek(char c) {
    rest = rest.ltrim();
    return rest.starts_with(StringRef(&c, 1));
  }

  bool consume(char c) {
    if (!peek(c))
      return false;
    rest = rest.drop_front();
    return true;
  }

  bool parseString(std::string &value) {
    rest = rest.ltrim();
    if (rest.empty() || (rest.front() != '\'' && rest.front() != '"'))
      return false;
    char quote = rest.front();
    size_t end = rest.find(quote, 1);
    if (end == StringRef::npos)
      return false;
    value = rest.slice(1, end).str();
    rest = rest.drop_front(end + 1);
    return true;
  }

  bool parseBool(bool &value) {
    rest = rest.ltrim();
    if (rest.consume_front("True"))
      value = true;
    else if (rest.consume_front("False"))
      value = false;
    else
      return false;
    return true;
  }

  bool parseShape(llvm::SmallVectorImpl<int64_t> &shape) {
    if (!consume('('))
      return false;
    while (!consume(')')) {
      rest = rest.ltrim();
      unsigned long long size;
      if (rest.consumeInteger(10, size) || size > (1ull << 62))
        return false;
      shape.push_back(static_cast<int64_t>(size));
      if (!consume(',') && !peek(')'))
        return false;
    }
    return true;
  }

  StringRef rest;
};
} // namespace

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

llvm::Expected<HostArray> mlir::mxfp4::parseNpy(StringRef contents,
                                                StringRef name) {
  if (!contents.starts_with(kMagic))
    return npyError(name, "not a .npy file (bad magic)");
  if (contents.size() < kMagic.size() + 2)
    return npyError(name, "truncated .npy header");
  unsigned major = static_cast<uint8_t>(contents[6]);
  unsigned minor = static_cast<uint8_t>(contents[7]);
  if (major < 1 || major > 3 || minor != 0)
    return npyError(name, "unsupported .npy format version " +
                              llvm::Twine(major) + "." + llvm::Twine(minor));

  // Version 1.0 has a 16-bit header length, 2.0 and 3.0 a 32-bit one; 3.0
  // only allows UTF-8 in the header, which the dict parser passes through.
  size_t lengthSize = major == 1 ? 2 : 4;
  size_t prefix = 8 + lengthSize;
  if (contents.size() < prefix)
    return npyError(name, "truncated .npy header");
  uint64_t headerLength =
      major == 1 ? llvm::support::endian::read16le(contents.data() + 8)
                 : llvm::support::endian::read32le(contents.data() + 8);
  if (contents.size() - prefix < headerLength)
    return npyError(name, "truncated .npy header");
  StringRef headerText = contents.substr(prefix, headerLength);

  NpyHeader header;
  if (std::optional<std::string> problem =
          HeaderParser(headerText).parse(header))
    return npyError(name, *problem);
  if (header.fortranOrder)
    return npyError(name, "Fortran-order arrays are not supported (save a "
                          "C-contiguous array, e.g. np.ascontiguousarray)");
  std::optional<DType> dtype = parseDTypeDescr(header.descr);
  if (!dtype) {
    if (header.descr.size() > 1 && header.descr[0] == '>')
      return npyError(name, "big-endian data ('" + header.descr +
                                "') is not supported");
    return npyError(name, "unsupported dtype '" + header.descr +
                              "' (supported: float32 '<f4', float64 '<f8', "
                              "int32 '<i4', int64 '<i8', uint8 '|u1', "
                              "uint16 '<u2')");
  }

  HostArray array;
  array.dtype = *dtype;
  array.shape = header.shape;
  std::optional<int64_t> numElements = getNumElements(array.shape);
  int64_t numBytes;
  StringRef data = contents.drop_front(prefix + headerLength);
  if (!numElements ||
      llvm::MulOverflow(*numElements, getDTypeSize(*dtype), numBytes) ||
      static_cast<uint64_t>(numBytes) > data.size())
    return npyError(name, "truncated data: shape " + formatShape(array.shape) +
                              " of " + getDTypeName(*dtype) + " needs " +
                              (numElements ? llvm::Twine(numBytes) + " bytes"
                                           : llvm::Twine("too many bytes")) +
                              ", the file has " + llvm::Twine(data.size()));
  // Trailing bytes are ignored, as numpy.load does (np.save may append several
  // arrays to one file).
  array.bytes.assign(data.bytes_begin(), data.bytes_begin() + numBytes);
  return array;
}

llvm::Expected<HostArray> mlir::mxfp4::readNpyFile(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (std::error_code error = file.getError())
    return npyError(path, "cannot read: " + error.message());
  return parseNpy((*file)->getBuffer(), path);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

void mlir::mxfp4::writeNpy(const HostArray &array, llvm::raw_ostream &os) {
  std::string header =
      "{'descr': '" + getDTypeDescr(array.dtype).str() +
      "', 'fortran_order': False, 'shape': " + formatShape(array.shape) + ", }";
  // Pad with spaces and a final newline so the data starts at a multiple of
  // 64 bytes; fall back to version 2.0 for headers over 64 KiB.
  size_t lengthSize = header.size() + 1 + 10 < 65536 ? 2 : 4;
  size_t prefix = 8 + lengthSize;
  size_t total = llvm::alignTo(prefix + header.size() + 1, 64);
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');

  os << kMagic;
  os << static_cast<char>(lengthSize == 2 ? 1 : 2) << '\0';
  char length[4];
  if (lengthSize == 2)
    llvm::support::endian::write16le(length, header.size());
  else
    llvm::support::endian::write32le(length, header.size());
  os.write(length, lengthSize);
  os << header;
  os.write(reinterpret_cast<const char *>(array.bytes.data()),
           array.bytes.size());
}

llvm::Error mlir::mxfp4::writeNpyFile(const HostArray &array, StringRef path) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error, llvm::sys::fs::OF_None);
  if (error)
    return npyError(path, "cannot write: " + error.message());
  writeNpy(array, os);
  os.close();
  if (os.has_error()) {
    error = os.error();
    os.clear_error();
    return npyError(path, "cannot write: " + error.message());
  }
  return llvm::Error::success();
}
