//===- TrainingData.cpp - token streams for the trainer -------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TrainingData.h"

#include "mxfp4/Data/TokenCache.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir::mxfp4;

llvm::Expected<TrainingTokens>
mlir::mxfp4::loadTrainingTokens(llvm::StringRef data, llvm::StringRef tokenizer,
                                llvm::StringRef cacheDir) {
  DataSpec spec;
  spec.source = data.str();
  spec.tokenizer = tokenizer.str();
  spec.cacheDir = cacheDir.empty() ? getDefaultCacheDir() : cacheDir.str();
  llvm::Expected<TokenizedCorpus> corpus = loadOrTokenize(spec);
  if (!corpus)
    return corpus.takeError();
  TrainingTokens tokens;
  tokens.train = std::move(corpus->train);
  tokens.validation = std::move(corpus->validation);
  tokens.description = corpus->description;
  tokens.tokenizer = corpus->tokenizerName;
  tokens.vocabSize = corpus->vocabSize;
  return tokens;
}
