//===- Compiler.h - parse, verify, transform and print modules --*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Text in, text out: the compiler steps that tools and Python need without
// holding MLIR objects. Every failure is an llvm::Error carrying the located
// diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_COMPILER_H
#define MXFP4_API_COMPILER_H

#include "mxfp4/Models/Optimizer.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::mxfp4 {

/// Parses and verifies `source`; returns it printed back (generic form with
/// `generic`).
llvm::Expected<std::string> parseAndPrint(llvm::StringRef source,
                                          llvm::StringRef name = "<source>",
                                          bool generic = false);

/// Runs `pipeline` (textual, e.g. "func.func(mxfp4-apply-recipe{recipe=
/// fp4-all-dht16}),canonicalize" or "mxfp4-to-cpu") on `source` and returns
/// the result printed.
llvm::Expected<std::string> runPipeline(llvm::StringRef source,
                                        llvm::StringRef pipeline,
                                        llvm::StringRef name = "<source>");

/// `source` with `@train_step` added from its loss-and-gradients function
/// (addTrainStep, Optimizer.h), printed.
llvm::Expected<std::string>
addTrainStepToSource(llvm::StringRef source, const TrainStepOptions &options,
                     llvm::StringRef name = "<source>");

/// The MLIR text of the attention composite `kind` ("causal_attention" or
/// "causal_attention_backward", mxfp4/Models/Attention.h) for q [B, S, H, D]
/// and k, v [B, S, KVH, D]: one private func.func, named as
/// getAttentionCompositeName names it, for a frontend to call.
llvm::Expected<std::string>
getAttentionCompositeSource(llvm::StringRef kind, llvm::ArrayRef<int64_t> q,
                            llvm::ArrayRef<int64_t> kv);

} // namespace mlir::mxfp4

#endif // MXFP4_API_COMPILER_H
