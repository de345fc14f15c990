//===- TokenCache.cpp - tokenized corpora, cached on disk -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Data/TokenCache.h"

#include "mxfp4/Data/Corpus.h"
#include "mxfp4/Data/Tokenizer.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/EndianStream.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <array>
#include <optional>

using namespace mlir::mxfp4;
using llvm::StringRef;
namespace endian = llvm::support::endian;

static constexpr StringRef kMagic = "MXFP4TOK";
static constexpr uint32_t kVersion = 1;

/// Returns an error "'name': message".
static llvm::Error fileError(StringRef name, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + name + "': " + message);
}

std::string mlir::mxfp4::getDefaultCacheDir() {
  auto env = [](const char *name) -> std::optional<std::string> {
    std::optional<std::string> value = llvm::sys::Process::GetEnv(name);
    if (value && value->empty())
      return std::nullopt;
    return value;
  };
  if (std::optional<std::string> dir = env("MXFP4_CACHE_DIR"))
    return *dir;
  llvm::SmallString<256> path;
  if (std::optional<std::string> xdg = env("XDG_CACHE_HOME")) {
    path = *xdg;
  } else if (std::optional<std::string> home = env("HOME")) {
    path = *home;
    llvm::sys::path::append(path, ".cache");
  } else {
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/false, path);
  }
  llvm::sys::path::append(path, "mxfp4");
  return std::string(path);
}

//===----------------------------------------------------------------------===//
// Cache file
//===----------------------------------------------------------------------===//

namespace {
/// The header fields of a cache file.
struct CacheHeader {
  std::array<uint8_t, 32> sourceHash{};
  uint32_t vocabSize = 0;
  uint32_t eosId = 0;
  SplitStats train, validation;
  std::string tokenizerName;
  std::string description;
};
} // namespace

/// The xxh3 hash of `tokens` as little-endian bytes, which catches a damaged
/// cache file before it silently changes the training data.
static uint64_t checksum(llvm::ArrayRef<uint32_t> tokens) {
  if (!llvm::sys::IsBigEndianHost)
    return llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(tokens.data()), tokens.size() * 4));
  std::vector<uint8_t> bytes(tokens.size() * 4);
  for (size_t i = 0; i < tokens.size(); ++i)
    endian::write32le(bytes.data() + 4 * i, tokens[i]);
  return llvm::xxh3_64bits(bytes);
}

/// Writes the cache file at `path` atomically.
static llvm::Error writeCache(StringRef path, const CacheHeader &header,
                              const std::vector<uint32_t> &train,
                              const std::vector<uint32_t> &validation) {
  std::string head;
  llvm::raw_string_ostream os(head);
  llvm::support::endian::Writer writer(os, llvm::endianness::little);
  os << kMagic;
  writer.write<uint32_t>(kVersion);
  writer.write<uint32_t>(0); // header size, patched below
  os.write(reinterpret_cast<const char *>(header.sourceHash.data()), 32);
  writer.write<uint32_t>(header.vocabSize);
  writer.write<uint32_t>(header.eosId);
  for (const SplitStats &stats : {header.train, header.validation}) {
    writer.write<uint64_t>(stats.documents);
    writer.write<uint64_t>(stats.bytes);
    writer.write<uint64_t>(stats.tokens);
  }
  writer.write<uint64_t>(checksum(train));
  writer.write<uint64_t>(checksum(validation));
  for (StringRef text :
       {StringRef(header.tokenizerName), StringRef(header.description)}) {
    writer.write<uint32_t>(static_cast<uint32_t>(text.size()));
    os << text;
  }
  head.resize(llvm::alignTo(head.size(), 4), '\0');
  endian::write32le(head.data() + 12, static_cast<uint32_t>(head.size()));

  StringRef dir = llvm::sys::path::parent_path(path);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return fileError(dir, "cannot create the folder: " + ec.message());
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &out) {
    out << head;
    for (const std::vector<uint32_t> *tokens : {&train, &validation}) {
      if (!llvm::sys::IsBigEndianHost) {
        out.write(reinterpret_cast<const char *>(tokens->data()),
                  tokens->size() * sizeof(uint32_t));
        continue;
      }
      for (uint32_t token : *tokens) {
        char bytes[4];
        endian::write32le(bytes, token);
        out.write(bytes, 4);
      }
    }
    return llvm::Error::success();
  });
}

/// Reads a cache file. Returns std::nullopt, with the reason in `why`, when
/// the file is malformed (it is then rewritten, never trusted).
static std::optional<CacheHeader> readCache(StringRef contents,
                                            std::vector<uint32_t> &train,
                                            std::vector<uint32_t> &validation,
                                            std::string &why) {
  auto invalid = [&](StringRef reason) {
    why = reason.str();
    return std::nullopt;
  };
  CacheHeader header;
  size_t offset = 0;
  auto take = [&](size_t size) -> std::optional<StringRef> {
    if (contents.size() - offset < size)
      return std::nullopt;
    StringRef bytes = contents.substr(offset, size);
    offset += size;
    return bytes;
  };
  auto take32 = [&]() -> std::optional<uint32_t> {
    std::optional<StringRef> bytes = take(4);
    return bytes ? std::optional(endian::read32le(bytes->data()))
                 : std::nullopt;
  };
  auto take64 = [&]() -> std::optional<uint64_t> {
    std::optional<StringRef> bytes = take(8);
    return bytes ? std::optional(endian::read64le(bytes->data()))
                 : std::nullopt;
  };

  if (take(8) != std::optional(kMagic))
    return invalid("not a token cache file");
  if (take32() != kVersion)
    return invalid("another version of the format");
  std::optional<uint32_t> headerSize = take32();
  std::optional<StringRef> hash = take(32);
  std::optional<uint32_t> vocabSize = take32(), eosId = take32();
  if (!headerSize || !hash || !vocabSize || !eosId)
    return invalid("truncated header");
  std::copy(hash->bytes_begin(), hash->bytes_end(), header.sourceHash.begin());
  header.vocabSize = *vocabSize;
  header.eosId = *eosId;
  for (SplitStats *stats : {&header.train, &header.validation}) {
    std::optional<uint64_t> documents = take64(), bytes = take64(),
                            tokens = take64();
    if (!documents || !bytes || !tokens)
      return invalid("truncated header");
    *stats = {*documents, *bytes, *tokens};
  }
  std::optional<uint64_t> trainChecksum = take64(),
                          validationChecksum = take64();
  if (!trainChecksum || !validationChecksum)
    return invalid("truncated header");
  for (std::string *text : {&header.tokenizerName, &header.description}) {
    std::optional<uint32_t> size = take32();
    std::optional<StringRef> bytes = size ? take(*size) : std::nullopt;
    if (!bytes)
      return invalid("truncated header");
    *text = bytes->str();
  }
  if (*headerSize < offset || *headerSize > contents.size() ||
      *headerSize % 4 != 0)
    return invalid("bad header size");
  uint64_t count = header.train.tokens + header.validation.tokens;
  if (header.train.tokens > contents.size() ||
      header.validation.tokens > contents.size() ||
      contents.size() - *headerSize != count * 4)
    return invalid("the file size does not match the token counts");

  const char *data = contents.data() + *headerSize;
  for (auto [tokens, size] :
       {std::pair(&train, header.train.tokens),
        std::pair(&validation, header.validation.tokens)}) {
    tokens->resize(size);
    for (uint64_t i = 0; i < size; ++i, data += 4) {
      uint32_t token = endian::read32le(data);
      if (token >= header.vocabSize)
        return invalid("a token id is out of the vocabulary");
      (*tokens)[i] = token;
    }
  }
  if (checksum(train) != *trainChecksum ||
      checksum(validation) != *validationChecksum)
    return invalid("damaged (checksum mismatch)");
  return header;
}

//===----------------------------------------------------------------------===//
// loadOrTokenize
//===----------------------------------------------------------------------===//

/// The sha256 of the source files: their split, name (relative to the root),
/// size and contents, plus the version of the split rule.
static llvm::Expected<std::array<uint8_t, 32>>
hashSource(const CorpusFiles &files) {
  llvm::SHA256 hash;
  // Version 1 of the document split (Corpus.h) and of the eos placement.
  hash.update(StringRef("mxfp4 tokens: xxh3 % 50 split, eos after each\n"));
  for (auto [split, paths] : {std::pair("train", &files.train),
                              std::pair("validation", &files.validation)}) {
    for (const std::string &path : *paths) {
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
          llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
      if (!file)
        return fileError(path, "cannot read: " + file.getError().message());
      StringRef relative = path;
      if (!files.root.empty() && relative.starts_with(files.root))
        relative = relative.drop_front(files.root.size()).ltrim('/');
      StringRef contents = (*file)->getBuffer();
      hash.update((llvm::Twine(split) + " " + relative + " " +
                   llvm::Twine(contents.size()) + "\n")
                      .str());
      hash.update(contents);
    }
  }
  return hash.final();
}

/// The cache file of `source` for `tokenizerName`: named after the source,
/// with a hash of its absolute path so that two sources of the same name
/// do not take turns overwriting one file.
static std::string getCachePath(StringRef cacheDir, StringRef source,
                                StringRef tokenizerName) {
  std::string stem;
  if (source == "default") {
    stem = "default";
  } else {
    llvm::SmallString<256> absolute(source);
    (void)llvm::sys::fs::make_absolute(absolute);
    llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
    StringRef name = llvm::sys::path::filename(StringRef(absolute).rtrim('/'));
    stem = (name + "-" +
            llvm::utohexstr(llvm::xxh3_64bits(absolute), /*LowerCase=*/true))
               .str();
  }
  std::string file = (stem + "." + tokenizerName + ".tokens").str();
  for (char &c : file)
    if (!llvm::isAlnum(c) && c != '.' && c != '-' && c != '_')
      c = '_';
  llvm::SmallString<256> path(cacheDir);
  llvm::sys::path::append(path, "tokens", file);
  return std::string(path);
}

llvm::Expected<TokenizedCorpus>
mlir::mxfp4::loadOrTokenize(const DataSpec &spec, const Tokenizer &tokenizer) {
  std::string cacheDir =
      spec.cacheDir.empty() ? getDefaultCacheDir() : spec.cacheDir;
  llvm::Expected<CorpusFiles> files = resolveCorpus(spec.source, cacheDir);
  if (!files)
    return files.takeError();
  llvm::Expected<std::array<uint8_t, 32>> sourceHash = hashSource(*files);
  if (!sourceHash)
    return sourceHash.takeError();

  TokenizedCorpus corpus;
  corpus.tokenizerName = tokenizer.name().str();
  corpus.vocabSize = tokenizer.vocabSize();
  corpus.eosId = tokenizer.eosId();
  corpus.cachePath = getCachePath(cacheDir, spec.source, tokenizer.name());

  // A current cache file is read; a stale or malformed one is replaced.
  std::string staleReason;
  if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
          llvm::MemoryBuffer::getFile(corpus.cachePath, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false)) {
    std::optional<CacheHeader> header = readCache(
        (*file)->getBuffer(), corpus.train, corpus.validation, staleReason);
    if (header && (header->sourceHash != *sourceHash ||
                   header->tokenizerName != tokenizer.name() ||
                   header->vocabSize != tokenizer.vocabSize() ||
                   header->eosId != tokenizer.eosId())) {
      staleReason = "made from other source files or another tokenizer";
      header.reset();
    }
    if (header) {
      corpus.trainStats = header->train;
      corpus.validationStats = header->validation;
      corpus.description = header->description;
      corpus.reusedCache = true;
      return corpus;
    }
    corpus.train.clear();
    corpus.validation.clear();
  }

  bool explicitSplit = !files->validation.empty();
  for (auto [isValidationFile, paths] :
       {std::pair(false, &files->train), std::pair(true, &files->validation)}) {
    bool toValidation = isValidationFile;
    for (const std::string &path : *paths) {
      if (llvm::Error error = forEachDocument(path, [&](StringRef text) {
            bool validation =
                explicitSplit ? toValidation : isValidationDocument(text);
            std::vector<uint32_t> &tokens =
                validation ? corpus.validation : corpus.train;
            SplitStats &stats =
                validation ? corpus.validationStats : corpus.trainStats;
            size_t before = tokens.size();
            tokenizer.encode(text, tokens);
            tokens.push_back(tokenizer.eosId());
            ++stats.documents;
            stats.bytes += text.size();
            stats.tokens += tokens.size() - before;
            return llvm::Error::success();
          }))
        return std::move(error);
    }
  }
  if (corpus.train.empty())
    return fileError(spec.source, "no training documents");

  // The default corpus comes split by document hash (Corpus.h).
  std::string split = !explicitSplit || spec.source == "default"
                          ? "validation: 2% of documents by hash"
                          : "validation from its *validation* files";
  if (corpus.validation.empty()) {
    // Too few documents to split; hold out the end of the token stream.
    size_t count = std::max<size_t>(1, corpus.train.size() / 50);
    if (corpus.train.size() >= 2) {
      corpus.validation.assign(corpus.train.end() - count, corpus.train.end());
      corpus.train.resize(corpus.train.size() - count);
      corpus.trainStats.tokens -= count;
      corpus.validationStats.tokens = count;
    }
    split = "validation: the last " + std::to_string(count) +
            " tokens (too few documents to split)";
  }
  corpus.description = files->description + "; " + split;

  CacheHeader header;
  header.sourceHash = *sourceHash;
  header.vocabSize = corpus.vocabSize;
  header.eosId = corpus.eosId;
  header.train = corpus.trainStats;
  header.validation = corpus.validationStats;
  header.tokenizerName = corpus.tokenizerName;
  header.description = corpus.description;
  if (llvm::Error error =
          writeCache(corpus.cachePath, header, corpus.train, corpus.validation))
    return fileError(corpus.cachePath, "cannot write the token cache: " +
                                           llvm::toString(std::move(error)));
  if (!staleReason.empty())
    corpus.description += "; replaced a cache file that was " + staleReason;
  return corpus;
}

llvm::Expected<TokenizedCorpus>
mlir::mxfp4::loadOrTokenize(const DataSpec &spec) {
  std::string cacheDir =
      spec.cacheDir.empty() ? getDefaultCacheDir() : spec.cacheDir;
  llvm::Expected<std::unique_ptr<Tokenizer>> tokenizer =
      createTokenizer(spec.tokenizer, cacheDir);
  if (!tokenizer)
    return tokenizer.takeError();
  return loadOrTokenize(spec, **tokenizer);
}
