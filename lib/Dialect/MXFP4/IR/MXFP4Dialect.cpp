//===- MXFP4Dialect.cpp - mxfp4 dialect -----------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::mxfp4;

#include "mxfp4/Dialect/MXFP4/IR/MXFP4OpsDialect.cpp.inc"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Enums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Attrs.cpp.inc"

void MXFP4Dialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Attrs.cpp.inc"
      >();
}
