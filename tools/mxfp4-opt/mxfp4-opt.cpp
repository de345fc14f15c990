//===- mxfp4-opt.cpp - mxfp4 optimizer driver -----------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mlir-opt for mxfp4 programs: parses, verifies, runs passes and prints.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/PrettyStackTrace.h"

int main(int argc, char **argv) {
  llvm::setBugReportMsg("mxfp4-opt crashed: please report this with the "
                        "input file and the command line.\n");
  mlir::DialectRegistry registry;
  mlir::mxfp4::registerAllDialects(registry);
  mlir::mxfp4::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "mxfp4 optimizer driver\n", registry));
}
