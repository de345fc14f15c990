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
// base64, HTML), the cl100k pre-tokenizer over UTF-8, and the token cache:
// there the input patches a real cache file (of a small corpus, written at
// start-up), which loadOrTokenize must then either read or refuse and
// rewrite, giving the corpus's tokens either way. Errors are expected;
// crashes, hangs and wrong tokens are findings. scripts/fuzz.sh runs it. The
// libraries are not instrumented, so libFuzzer mutates without their
// coverage.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Data/Archive.h"
#include "mxfp4/Data/Corpus.h"
#include "mxfp4/Data/Email.h"
#include "mxfp4/Data/Pretokenizer.h"
#include "mxfp4/Data/TokenCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
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

/// A small corpus tokenized once, its cache file's bytes and its tokens.
struct CacheFixture {
  DataSpec spec;
  std::string cachePath, bytes;
  TokenizedCorpus reference;
};

static const CacheFixture &getCacheFixture() {
  static CacheFixture fixture = [] {
    CacheFixture f;
    llvm::SmallString<128> dir;
    if (llvm::sys::fs::createUniqueDirectory("mxfp4-cache-fuzz", dir))
      std::abort();
    static std::string removeAtExit = std::string(dir);
    std::atexit([] { (void)llvm::sys::fs::remove_directories(removeAtExit); });
    f.spec.source = std::string(dir) + "/corpus.txt";
    f.spec.tokenizer = "byte";
    f.spec.cacheDir = std::string(dir) + "/cache";
    std::error_code ec;
    llvm::raw_fd_ostream out(f.spec.source, ec);
    for (int i = 0; i < 40; ++i)
      out << "document " << i << ": some text to tokenize.\n\n";
    out.close();
    llvm::Expected<TokenizedCorpus> corpus = loadOrTokenize(f.spec);
    if (!corpus) {
      llvm::errs() << llvm::toString(corpus.takeError()) << "\n";
      std::abort();
    }
    f.reference = std::move(*corpus);
    f.cachePath = f.reference.cachePath;
    auto file = llvm::MemoryBuffer::getFile(f.cachePath);
    if (!file)
      std::abort();
    f.bytes = (*file)->getBuffer().str();
    return f;
  }();
  return fixture;
}

/// The cache file patched by `input` (a length to cut it to, then offset
/// and byte pairs), read back through loadOrTokenize.
static void fuzzTokenCache(llvm::StringRef input) {
  const CacheFixture &f = getCacheFixture();
  std::string bytes = f.bytes;
  if (input.size() >= 2) {
    size_t keep = (uint8_t(input[0]) << 8 | uint8_t(input[1])) % (bytes.size() + 1);
    if (uint8_t(input[0]) >= 0x80) // half the inputs cut the file
      bytes.resize(keep);
    input = input.drop_front(2);
  }
  for (size_t i = 0; i + 2 < input.size() && !bytes.empty(); i += 3) {
    size_t at = (uint8_t(input[i]) << 8 | uint8_t(input[i + 1])) % bytes.size();
    bytes[at] = input[i + 2];
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(f.cachePath, ec);
    out << bytes;
  }
  llvm::Expected<TokenizedCorpus> corpus = loadOrTokenize(f.spec);
  if (!corpus) {
    llvm::errs() << "token cache: " << llvm::toString(corpus.takeError())
                 << "\n";
    std::abort(); // the source is there: a bad cache is rewritten
  }
  if (corpus->train != f.reference.train ||
      corpus->validation != f.reference.validation ||
      corpus->vocabSize != f.reference.vocabSize ||
      corpus->eosId != f.reference.eosId) {
    llvm::errs() << "token cache: a patched cache file gave other tokens ("
                 << (corpus->reusedCache ? "read" : "rewritten") << ")\n";
    std::abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef input(reinterpret_cast<const char *>(data + 1), size - 1);
  if (data[0] % 7 == 6) {
    fuzzTokenCache(input);
    return 0;
  }
  switch (data[0] % 7) {
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
