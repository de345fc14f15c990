//===- mxfp4-ir-fuzzer.cpp - fuzz the compiler's text inputs --------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A libFuzzer target over what a user hands the compiler as text: an input
// is a recipe (its first line) and an MLIR module (the rest). The recipe
// parser must accept what it prints; the module is parsed and verified,
// must print to text that parses to the same text, and, once valid, goes
// through the recipe passes and, when small, the CPU lowering. Errors are
// expected (located diagnostics); crashes and broken invariants are
// findings. scripts/fuzz.sh runs it on seeds made of the lit tests' modules.
//
// The compiler's libraries are not instrumented (only this file is), so
// libFuzzer mutates the seeds without coverage feedback from them.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/Compiler.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Recipe.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir::mxfp4;

/// Aborts with `what` unless `ok`: an invariant failed.
static void require(bool ok, const char *what, llvm::StringRef detail) {
  if (ok)
    return;
  llvm::errs() << "fuzz target invariant failed: " << what << ": " << detail
               << "\n";
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto [recipeLine, source] =
      llvm::StringRef(reinterpret_cast<const char *>(data), size).split('\n');

  std::string recipe = "fp4-all-dht16";
  if (llvm::Expected<Recipe> parsed = parseRecipe(recipeLine)) {
    recipe = printRecipe(*parsed);
    llvm::Expected<Recipe> again = parseRecipe(recipe);
    require(bool(again), "parseRecipe reads printRecipe's text",
            again ? "" : llvm::toString(again.takeError()) + " in " + recipe);
    require(printRecipe(*again) == recipe, "printRecipe is stable", recipe);
  } else {
    llvm::consumeError(parsed.takeError());
  }

  llvm::Expected<std::string> printed = parseAndPrint(source, "input.mlir");
  if (!printed) {
    llvm::consumeError(printed.takeError());
    return 0;
  }
  llvm::Expected<std::string> reprinted =
      parseAndPrint(*printed, "printed.mlir");
  require(bool(reprinted), "the printed module parses",
          reprinted ? "" : llvm::toString(reprinted.takeError()));
  require(*reprinted == *printed, "printing is stable", *printed);

  std::string pipeline = "builtin.module(func.func(mxfp4-apply-recipe{recipe=\"" +
                         recipe + "\"},mxfp4-check-rotations))";
  if (llvm::Expected<std::string> out = runPipeline(source, pipeline))
    (void)out;
  else
    llvm::consumeError(out.takeError());
  if (source.size() <= 2048) {
    if (llvm::Expected<std::string> out = runPipeline(source, "mxfp4-to-cpu"))
      (void)out;
    else
      llvm::consumeError(out.takeError());
  }
  return 0;
}
