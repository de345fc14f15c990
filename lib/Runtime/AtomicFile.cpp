//===- AtomicFile.cpp - replace files whole or not at all -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Runtime/AtomicFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#ifdef LLVM_ON_UNIX
#include <fcntl.h>
#include <unistd.h>
#endif

using namespace mlir::mxfp4;
using llvm::StringRef;

static llvm::Error fileError(StringRef path, const llvm::Twine &message) {
  return llvm::createStringError("'" + path + "': " + message);
}


/// Flushes `fd` to disk where the platform can; failures are ignored because
/// the data already reached the kernel and the rename is still atomic.
static void syncFile(int fd) {
#ifdef LLVM_ON_UNIX
  (void)::fsync(fd);
#else
  (void)fd;
#endif
}

/// Makes a rename in `dir` durable; best effort, like syncFile.
void mlir::mxfp4::syncDirectory(StringRef dir) {
#ifdef LLVM_ON_UNIX
  std::string path = dir.empty() ? std::string(".") : dir.str();
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  (void)::fsync(fd);
  ::close(fd);
#else
  (void)dir;
#endif
}

llvm::Error mlir::mxfp4::writeFileAtomically(
    StringRef path,
    llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write) {
  int fd;
  llvm::SmallString<256> tempPath;
  if (std::error_code error =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, tempPath))
    return fileError(path, "cannot create a temporary file next to it: " +
                               error.message());
  // An interrupted run must not leave the temporary file behind.
  llvm::sys::RemoveFileOnSignal(tempPath);
  auto discard = [&](llvm::Error error) {
    llvm::sys::fs::remove(tempPath);
    llvm::sys::DontRemoveFileOnSignal(tempPath);
    return error;
  };

  std::error_code streamError;
  llvm::Error written = [&]() -> llvm::Error {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    llvm::Error error = write(os);
    os.flush();
    if (!error && !os.has_error())
      syncFile(fd);
    os.close();
    // raw_fd_ostream aborts in its destructor if an error was not cleared.
    if (os.has_error()) {
      streamError = os.error();
      os.clear_error();
    }
    return error;
  }();
  if (written)
    return discard(std::move(written));
  if (streamError)
    return discard(fileError(path, "cannot write: " + streamError.message()));
  if (std::error_code error = llvm::sys::fs::rename(tempPath, path))
    return discard(fileError(path, "cannot replace it by '" + tempPath +
                                     "': " + error.message()));
  llvm::sys::DontRemoveFileOnSignal(tempPath);
  syncDirectory(llvm::sys::path::parent_path(path));
  return llvm::Error::success();
}


llvm::Error mlir::mxfp4::writeFileAtomically(StringRef path,
                                             StringRef contents) {
  StringRef dir = llvm::sys::path::parent_path(path);
  if (!dir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return fileError(dir, "cannot create the folder: " + ec.message());
  return writeFileAtomically(path, [&](llvm::raw_ostream &os) {
    os << contents;
    return llvm::Error::success();
  });
}
