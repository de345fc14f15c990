//===- Plot.cpp - SVG loss curves -----------------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Train/Plot.h"
#include "mxfp4/Runtime/AtomicFile.h"

#include "llvm/Support/JSON.h"

using namespace mlir::mxfp4;
using llvm::StringRef;

/// `text` with invalid UTF-8 replaced, which would make the whole file
/// unreadable.
static std::string fixUTF8(StringRef text) {
  return llvm::json::isUTF8(text) ? text.str() : llvm::json::fixUTF8(text);
}

llvm::Error mlir::mxfp4::writeLossPlot(StringRef svgPath, StringRef title,
                                       StringRef trainLabel,
                                       const LossCurve &train,
                                       const LossCurve &eval) {
  return writeFileAtomically(
      svgPath,
      renderLossPlot(fixUTF8(title), fixUTF8(trainLabel), train, eval));
}
