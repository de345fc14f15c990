//===- InitAll.h - register everything mxfp4 tools use ---------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One place that decides which dialects and passes every mxfp4 tool knows, so
// mxfp4-opt, mxfp4-run and the Python module never drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_INITALL_H
#define MXFP4_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::mxfp4 {

/// Adds the mxfp4 dialect and every upstream dialect that mxfp4 programs and
/// their lowerings contain to `registry`.
void registerAllDialects(DialectRegistry &registry);

/// Registers the project's passes and pipelines, and the upstream passes they
/// are used with, in the global pass registry. Safe to call more than once.
void registerAllPasses();

} // namespace mlir::mxfp4

#endif // MXFP4_INITALL_H
