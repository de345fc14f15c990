//===- Failure.h - the runner's one kind of error ---------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every failure of the runner is a Failure: main prints its message and
// exits with status 1, never a crash.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_FAILURE_H
#define MXFP4_RUNTIME_CORE_FAILURE_H

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace mlir::mxfp4::runtime {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string &message) {
  throw Failure(message);
}

/// Fails for a file that could not be written, with the system's reason
/// (a full disk, a file size limit, a read-only folder) where it left one.
[[noreturn]] inline void failWrite(const std::string &path) {
  int error = errno;
  fail("cannot write '" + path + "'" +
       (error ? std::string(": ") + std::strerror(error) : std::string()));
}

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_FAILURE_H
