//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Runtime/Npy.h"

#include "mxfp4/Formats/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::mxfp4;
using llvm::StringRef;

/// Returns an error "'name': message".
static llvm::Error npyError(StringRef name, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + name + "': " + message);
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

llvm::Expected<HostArray> mlir::mxfp4::parseNpy(StringRef contents,
                                                StringRef name) {
  NpyHeader header;
  std::string problem = parseNpyHeader(
      std::string_view(contents.data(), contents.size()), header);
  if (!problem.empty())
    return npyError(name, problem);
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
  array.shape.assign(header.shape.begin(), header.shape.end());
  std::optional<int64_t> numElements = getNumElements(array.shape);
  int64_t numBytes;
  StringRef data = contents.drop_front(header.dataOffset);
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
  os << formatNpyHeader(getDTypeDescr(array.dtype).str(),
                        std::vector<int64_t>(array.shape.begin(),
                                             array.shape.end()));
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
