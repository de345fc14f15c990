//===- ParallelLoops.h - the mark of an independent loop --------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRANSFORMS_PARALLELLOOPS_H
#define MXFP4_TRANSFORMS_PARALLELLOOPS_H

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"

#include "mlir/IR/Operation.h"

namespace mlir::mxfp4 {

/// Marks an scf.for whose iterations are independent: each writes its own
/// part of the outputs and reads nothing another iteration writes.
/// mxfp4-parallelize-loops turns marked loops into scf.parallel.
inline void markParallel(Operation *loop) {
  loop->setAttr(kParallelLoopAttrName, UnitAttr::get(loop->getContext()));
}

} // namespace mlir::mxfp4

#endif // MXFP4_TRANSFORMS_PARALLELLOOPS_H
