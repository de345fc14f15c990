//===- MXFP4Dialect.h - mxfp4 dialect ---------------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The mxfp4 dialect: its enumerations and attributes. Ops are in MXFP4Ops.h.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DIALECT_MXFP4_IR_MXFP4DIALECT_H
#define MXFP4_DIALECT_MXFP4_IR_MXFP4DIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4OpsDialect.h.inc"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Enums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Attrs.h.inc"

#endif // MXFP4_DIALECT_MXFP4_IR_MXFP4DIALECT_H
