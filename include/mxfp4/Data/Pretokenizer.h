//===- Pretokenizer.h - the cl100k / Llama 3 split regex ------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Splits text into the pieces that byte-pair encoding then merges one at a
// time. cl100k_base (GPT-4) and Llama 3 split with the same regex:
//
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//    ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// It is implemented here as a hand-written scanner that tries the
// alternatives in order, as a backtracking regex engine does.
//
// Limits: the contractions are matched case-insensitively in ASCII only (the
// Rust regex also folds "ſ" to "s" and "K" to "k"); a byte that is not valid
// UTF-8 is taken as one character in no class (tiktoken only sees valid
// UTF-8); \p{L} and \p{N} follow the tables of Unicode.h.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DATA_PRETOKENIZER_H
#define MXFP4_DATA_PRETOKENIZER_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <vector>

namespace mlir::mxfp4 {

/// Calls `callback` with each piece of `text`, in order; the pieces are
/// non-empty and concatenate back to `text`.
void splitCl100k(llvm::StringRef text,
                 llvm::function_ref<void(llvm::StringRef piece)> callback);

/// Returns the pieces of `text` (see above).
std::vector<llvm::StringRef> splitCl100k(llvm::StringRef text);

} // namespace mlir::mxfp4

#endif // MXFP4_DATA_PRETOKENIZER_H
