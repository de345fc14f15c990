//===- Archive.h - gzip streams and .tgz members ----------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reading of the compressed files the training data comes in: gzip (whole or
// streamed, one or more concatenated members), line by line reading of plain
// or gzipped text, and the members of a ustar/pax tar archive, gzipped or not
// (npm tarballs). Truncated or corrupt input is an error naming the file and
// the offset; nothing here asserts on bad input.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DATA_ARCHIVE_H
#define MXFP4_DATA_ARCHIVE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace mlir::mxfp4 {

/// Whether `data` starts with the gzip magic bytes 1f 8b.
bool isGzip(llvm::StringRef data);

/// Decompresses gzip `data` (all of its concatenated members) in memory;
/// `name` (usually the path) prefixes every error message.
llvm::Expected<std::string> gunzip(llvm::StringRef data, llvm::StringRef name);

/// Decompresses gzip data piece by piece, so that a large file need not be
/// held decompressed in memory.
class GzipReader {
public:
  /// `data` must outlive the reader; `name` prefixes every error message.
  GzipReader(llvm::StringRef data, llvm::StringRef name);
  ~GzipReader();
  GzipReader(const GzipReader &) = delete;
  GzipReader &operator=(const GzipReader &) = delete;

  /// Decompresses up to `buffer.size()` bytes into `buffer` and returns how
  /// many; fewer only at the end of the data, and 0 after it.
  llvm::Expected<size_t> read(llvm::MutableArrayRef<char> buffer);

private:
  struct State;
  std::unique_ptr<State> state;
};

/// Reads a text file line by line, decompressing it on the fly when it is
/// gzip (detected by its magic bytes, whatever its name).
class LineReader {
public:
  /// Opens the file at `path`.
  static llvm::Expected<std::unique_ptr<LineReader>> open(llvm::StringRef path);
  ~LineReader();

  /// Sets `line` to the next line, without its "\n" or "\r\n", and returns
  /// true; returns false at the end of the file. `line` stays valid until the
  /// next call.
  llvm::Expected<bool> next(llvm::StringRef &line);

  /// The 1-based number of the line last returned.
  uint64_t getLineNumber() const { return lineNumber; }
  llvm::StringRef getPath() const { return path; }

private:
  LineReader(std::string path, std::unique_ptr<llvm::MemoryBuffer> file);

  std::string path;
  std::unique_ptr<llvm::MemoryBuffer> file;
  std::unique_ptr<GzipReader> gzip; // Null for a plain file.
  std::string pending;              // Decompressed bytes not yet returned.
  size_t position = 0;              // Start of the next line in the input.
  bool atEnd = false;               // The decompressor is exhausted.
  uint64_t lineNumber = 0;
};

/// Calls `callback` with the name and contents of each regular file of the
/// tar archive at `path` (gzipped or not) that `select` accepts, in archive
/// order. Long names (GNU 'L' and pax 'path' records) are supported. An
/// error of `callback` stops the walk and is returned.
llvm::Error
forEachTarMember(llvm::StringRef path,
                 llvm::function_ref<bool(llvm::StringRef)> select,
                 llvm::function_ref<llvm::Error(llvm::StringRef name,
                                                llvm::StringRef contents)>
                     callback);

/// Returns the contents of the member `memberName` of the tar archive at
/// `path`; an error if it has no such member.
llvm::Expected<std::string> readTarMember(llvm::StringRef path,
                                          llvm::StringRef memberName);

} // namespace mlir::mxfp4

#endif // MXFP4_DATA_ARCHIVE_H
