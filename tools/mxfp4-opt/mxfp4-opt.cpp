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

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

// Upstream MLIR 22's bytecode reader aborts or reads out of bounds on some
// corrupted files (it trusts the encoded sizes), so bytecode is read only
// when the user vouches for it. Textual IR is always accepted.
static llvm::cl::opt<bool>
    trustBytecode("trust-bytecode",
                  llvm::cl::desc("Read MLIR bytecode input (upstream's "
                                 "reader is not robust to corrupted files)"),
                  llvm::cl::init(false));

int main(int argc, char **argv) {
  llvm::setBugReportMsg("mxfp4-opt crashed: please report this with the "
                        "input file and the command line.\n");
  mlir::DialectRegistry registry;
  mlir::mxfp4::registerAllDialects(registry);
  mlir::mxfp4::registerAllPasses();

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "mxfp4 optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::WithColor::error() << errorMessage << "\n";
    return 1;
  }
  if (mlir::isBytecode(input->getMemBufferRef()) && !trustBytecode) {
    llvm::WithColor::error()
        << inputFilename
        << ": input is MLIR bytecode, which is read only with "
           "--trust-bytecode (upstream's reader does not validate corrupted "
           "files); convert it to text with a trusted tool first\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::WithColor::error() << errorMessage << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry,
                                     config)))
    return 1;
  output->keep();
  return 0;
}
