//===- TokenCache.h - tokenized corpora, cached on disk ---------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The entry point of the data layer for training: a corpus is tokenized once
// into a binary file under the cache folder and read back on later runs, as
// long as the source documents (their sha256) and the tokenizer are the
// same. Each document's tokens are followed by the tokenizer's eosId().
//
// Cache file layout (little-endian):
//   "MXFP4TOK", u32 version (1), u32 header size, 32-byte sha256 of the
//   source, u32 vocab size, u32 eos id, u64 documents, bytes and tokens of
//   train, then of validation, u64 xxh3 of the train tokens, then of the
//   validation tokens, u32 length + tokenizer name, u32 length +
//   description, zero padding to 4 bytes; then the train tokens and the
//   validation tokens as u32.
//
// The cache directory is $MXFP4_CACHE_DIR, else $XDG_CACHE_HOME/mxfp4, else
// $HOME/.cache/mxfp4. It holds npm/ (downloaded tarballs), tokenizers/,
// default-corpus/ and tokens/.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DATA_TOKENCACHE_H
#define MXFP4_DATA_TOKENCACHE_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mxfp4 {

class Tokenizer;

/// What to train on.
struct DataSpec {
  /// "default", a document file or a folder of them (see Corpus.h).
  std::string source = "default";
  /// "byte", "cl100k" or a .tiktoken file (see createTokenizer).
  std::string tokenizer = "byte";
  /// Empty for getDefaultCacheDir().
  std::string cacheDir;
};

/// Counts of one split.
struct SplitStats {
  uint64_t documents = 0;
  uint64_t bytes = 0;  // of the documents' text
  uint64_t tokens = 0; // eos separators included
};

/// A tokenized corpus.
struct TokenizedCorpus {
  std::vector<uint32_t> train, validation;
  SplitStats trainStats, validationStats;
  std::string tokenizerName;
  uint32_t vocabSize = 0;
  uint32_t eosId = 0;
  /// The cache file, and whether it was read rather than written.
  std::string cachePath;
  bool reusedCache = false;
  /// The source, and how its validation split was made.
  std::string description;
};

/// The cache folder (see above); never empty.
std::string getDefaultCacheDir();

/// Returns the tokens of `spec.source` under `tokenizer` (`spec.tokenizer`
/// is not looked at), from the cache when
/// it is current, else by tokenizing (and writing the cache atomically). A
/// source without a validation split of its own is split by document hash
/// (Corpus.h); if that leaves validation empty (a corpus of fewer than
/// about 50 documents), validation is the last 2% of the train tokens.
llvm::Expected<TokenizedCorpus> loadOrTokenize(const DataSpec &spec,
                                               const Tokenizer &tokenizer);

/// As above, with the tokenizer that `spec.tokenizer` names.
llvm::Expected<TokenizedCorpus> loadOrTokenize(const DataSpec &spec);

} // namespace mlir::mxfp4

#endif // MXFP4_DATA_TOKENCACHE_H
