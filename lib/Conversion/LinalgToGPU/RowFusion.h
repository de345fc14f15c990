//===- RowFusion.h - a row reduction and its neighbours -------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_LINALGTOGPU_ROWFUSION_H
#define MXFP4_LIB_CONVERSION_LINALGTOGPU_ROWFUSION_H

#include "Launches.h"

namespace mlir::mxfp4::launches {

/// Runs each row group of the straight-line function body `entry` (a row
/// reduction over [rows, columns], the column sums over the same space
/// before it and the elementwise ops after it that read its result: a
/// normalization's backward) as one pass over the rows with a warp of
/// `lanes` work-items (a power of two up to 64) a row, and erases the
/// group's ops (RowFusion.cpp). Outputs in `inits` start from their
/// constants.
void fuseRowGroups(OpBuilder &b, Block &entry, const ConstantInits &inits,
                   int64_t lanes);

} // namespace mlir::mxfp4::launches

#endif // MXFP4_LIB_CONVERSION_LINALGTOGPU_ROWFUSION_H
