//===- RunLock.cpp - one trainer a run folder -----------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Formats/RunLock.h"

#include "mxfp4/Formats/Checkpoint.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#define MXFP4_POSIX 1
#endif

using namespace mlir::mxfp4;

RunFolderLock &RunFolderLock::operator=(RunFolderLock &&other) noexcept {
  if (this != &other) {
    release();
    fd = other.fd;
    other.fd = -1;
  }
  return *this;
}

RunFolderLock::~RunFolderLock() { release(); }

void RunFolderLock::release() {
#ifdef MXFP4_POSIX
  if (fd >= 0)
    ::close(fd); // drops the flock
#endif
  fd = -1;
}

std::string RunFolderLock::acquire(const std::string &dir) {
#ifdef MXFP4_POSIX
  std::string path = dir + "/" + kRunLockFile;
  int file = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (file < 0)
    return "cannot open '" + path + "': " + std::strerror(errno);
  if (::flock(file, LOCK_EX | LOCK_NB) != 0) {
    int error = errno;
    // The holder wrote who it is once it held the lock.
    char text[256] = {};
    ssize_t n = ::pread(file, text, sizeof(text) - 1, 0);
    ::close(file);
    if (error != EWOULDBLOCK)
      return "cannot lock '" + path + "': " + std::strerror(error);
    std::string holder = n > 0 ? std::string(text, size_t(n)) : "";
    while (!holder.empty() &&
           (holder.back() == '\n' || holder.back() == '\r'))
      holder.pop_back();
    return "'" + dir + "' is being trained into by " +
           (holder.empty() ? std::string("another process") : holder) +
           " (" + path + "); wait for it to end or choose another --out";
  }
  char host[128] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0)
    host[0] = 0;
  std::string who = "process " + std::to_string(long(::getpid())) +
                    (host[0] ? std::string(" on host ") + host : "") + "\n";
  if (::ftruncate(file, 0) != 0 ||
      ::pwrite(file, who.data(), who.size(), 0) != ssize_t(who.size())) {
    int error = errno;
    ::close(file);
    return "cannot write '" + path + "': " + std::strerror(error);
  }
  release();
  fd = file;
  return "";
#else
  (void)dir;
  return ""; // no advisory locks here: nothing is checked
#endif
}

std::string mlir::mxfp4::openRunFolder(const std::string &dir,
                                       RunFolderLock &lock) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return "cannot create '" + dir + "': " + ec.message();
  std::string error = lock.acquire(dir);
  if (error.empty())
    error = recoverCheckpointFolder(dir + "/checkpoint");
  return error;
}
