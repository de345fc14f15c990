//===- TrainingData.h - token streams for the trainer -----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_API_TRAININGDATA_H
#define MXFP4_LIB_API_TRAININGDATA_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mxfp4 {

/// The tokenized train and validation splits of a corpus.
struct TrainingTokens {
  std::vector<uint32_t> train, validation;
  /// What the data is (source, documents, tokens), for logs and checkpoints.
  std::string description;
  std::string tokenizer;
  /// Every id is below it.
  uint64_t vocabSize = 0;
};

/// Loads `data` ("default", a file or a folder) tokenized with `tokenizer`,
/// through the token cache in `cacheDir` (empty: the default folder).
llvm::Expected<TrainingTokens> loadTrainingTokens(llvm::StringRef data,
                                                  llvm::StringRef tokenizer,
                                                  llvm::StringRef cacheDir);

} // namespace mlir::mxfp4

#endif // MXFP4_LIB_API_TRAININGDATA_H
