//===- mxfp4-data-fuzzer.cpp - fuzz the corpus readers --------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A libFuzzer target over the readers of training data (lib/Data): an input's
// first byte picks the reader, the rest is its file or text: C4 JSON lines
// (plain and gzipped, read through forEachDocument from a file), tar archives
// (the npm corpus packages), gzip, e-mail text (MIME parts, quoted-printable,
// base64, HTML), and the cl100k pre-tokenizer over UTF-8. Errors are
// expected; crashes and hangs are findings. scripts/fuzz.sh runs it. The
// libraries are not instrumented, so libFuzzer mutates without their
// coverage.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Data/Archive.h"
#include "mxfp4/Data/Corpus.h"
#include "mxfp4/Data/Email.h"
#include "mxfp4/Data/Pretokenizer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir::mxfp4;

/// Writes `data` to a file of this process named with `suffix`; returns its
/// path.
static std::string writeInput(llvm::StringRef data, llvm::StringRef suffix) {
  llvm::SmallString<128> path;
  llvm::sys::fs::getPotentiallyUniqueTempFileName("mxfp4-data-fuzz", suffix,
                                                  path);
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (!ec)
    out << data;
  return std::string(path);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef input(reinterpret_cast<const char *>(data + 1), size - 1);
  switch (data[0] % 6) {
  case 0:
  case 1: {
    // The same bytes as plain JSON lines, or as what claims to be gzip.
    std::string path =
        writeInput(input, data[0] % 6 == 0 ? "jsonl" : "json.gz");
    size_t documents = 0;
    llvm::consumeError(forEachDocument(path, [&](llvm::StringRef text) {
      documents += !text.empty();
      return llvm::Error::success();
    }));
    llvm::sys::fs::remove(path);
    break;
  }
  case 2: {
    std::string path = writeInput(input, "tgz");
    llvm::consumeError(forEachTarMember(
        path, [](llvm::StringRef) { return true; },
        [](llvm::StringRef, llvm::StringRef) { return llvm::Error::success(); }));
    llvm::sys::fs::remove(path);
    break;
  }
  case 3:
    if (llvm::Expected<std::string> out = gunzip(input, "input.gz"))
      (void)out;
    else
      llvm::consumeError(out.takeError());
    break;
  case 4:
    (void)extractEmailText(input);
    (void)stripHtml(input);
    (void)decodeQuotedPrintable(input);
    (void)decodeBase64Lenient(input);
    break;
  default:
    (void)splitCl100k(input);
    break;
  }
  return 0;
}
