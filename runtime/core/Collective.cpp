//===- Collective.cpp - NCCL / RCCL, loaded at run time -------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Collective.h"

#include "Failure.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <exception>
#include <type_traits>

namespace mlir::mxfp4::runtime {

namespace {

/// NCCL's C ABI (nccl.h), which RCCL shares; declared here so that no
/// header of either is needed to build.
struct UniqueId {
  char internal[128];
};
enum : int { ncclSuccess = 0 };
enum : int { ncclUint64 = 5, ncclFloat32 = 7 };
enum : int { ncclSum = 0, ncclMax = 2, ncclMin = 3, ncclAvg = 4 };

/// ncclAvg is NCCL 2.10's; older libraries are refused by name.
constexpr int kMinimumVersion = 21000;

} // namespace

struct Communicator::Api {
  int (*getVersion)(int *);
  int (*getUniqueId)(UniqueId *);
  int (*commInitRank)(void **, int, UniqueId, int);
  int (*commDestroy)(void *);
  int (*commAbort)(void *);
  const char *(*getErrorString)(int);
  const char *(*getLastError)(void *);
  int (*allReduce)(const void *, void *, size_t, int, int, void *, void *);
  int (*reduceScatter)(const void *, void *, size_t, int, int, void *,
                       void *);
  int (*allGather)(const void *, void *, size_t, int, void *, void *);
  int (*groupStart)();
  int (*groupEnd)();
};

std::string getCollectiveLibrary(const std::string &vendorLibrary) {
  const char *chosen = std::getenv("MXFP4_NCCL_LIBRARY");
  return chosen && *chosen ? chosen : vendorLibrary;
}

/// Loads `library` and its functions into `api`; returns the handle.
static void *load(const std::string &library, Communicator::Api &api) {
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    fail("data-parallel training needs the collective library, and "
         "dlopen(" +
         library + ") failed: " + dlerror() +
         "; install NCCL (RCCL for AMD GPUs) or set MXFP4_NCCL_LIBRARY to "
         "its path");
  auto resolve = [&](auto &f, const char *name) {
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(
        dlsym(handle, name));
    if (!f) {
      dlclose(handle);
      fail("'" + library + "' has no " + name +
           ": not NCCL or RCCL, or older than 2.10");
    }
  };
  resolve(api.getVersion, "ncclGetVersion");
  resolve(api.getUniqueId, "ncclGetUniqueId");
  resolve(api.commInitRank, "ncclCommInitRank");
  resolve(api.commDestroy, "ncclCommDestroy");
  resolve(api.commAbort, "ncclCommAbort");
  resolve(api.getErrorString, "ncclGetErrorString");
  resolve(api.getLastError, "ncclGetLastError");
  resolve(api.allReduce, "ncclAllReduce");
  resolve(api.reduceScatter, "ncclReduceScatter");
  resolve(api.allGather, "ncclAllGather");
  resolve(api.groupStart, "ncclGroupStart");
  resolve(api.groupEnd, "ncclGroupEnd");
  int version = 0;
  if (api.getVersion(&version) != ncclSuccess || version < kMinimumVersion) {
    dlclose(handle);
    fail("'" + library + "' is version " + std::to_string(version) +
         "; data-parallel training needs NCCL/RCCL 2.10 or newer (ncclAvg)");
  }
  return handle;
}

std::string makeUniqueId(const std::string &library) {
  Communicator::Api api;
  void *handle = load(library, api);
  UniqueId id;
  std::memset(&id, 0, sizeof(id));
  int result = api.getUniqueId(&id);
  if (result != ncclSuccess) {
    std::string error = api.getErrorString(result);
    dlclose(handle);
    fail("ncclGetUniqueId of '" + library + "' failed: " + error);
  }
  // The library stays loaded: NCCL's bootstrap root, which the ranks of
  // the id connect to, is a thread of this process, running its code until
  // the job ends.
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (unsigned char c : id.internal) {
    text += digits[c >> 4];
    text += digits[c & 15];
  }
  return text;
}

Communicator::Communicator(const std::string &library, int ranks, int rank,
                           const std::string &uniqueId)
    : api(new Api), ranks(ranks), rank(rank), library(library) {
  UniqueId id;
  auto nibble = [](char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                  : -1;
  };
  bool valid = uniqueId.size() == 2 * sizeof(id.internal);
  for (size_t i = 0; valid && i < sizeof(id.internal); ++i) {
    int high = nibble(uniqueId[2 * i]), low = nibble(uniqueId[2 * i + 1]);
    valid = high >= 0 && low >= 0;
    id.internal[i] = char(high * 16 + low);
  }
  if (!valid) {
    delete api;
    fail("the job's unique id (MXFP4_NCCL_ID) is not 256 hexadecimal digits");
  }
  if (ranks < 1 || rank < 0 || rank >= ranks) {
    delete api;
    fail("rank " + std::to_string(rank) + " is not one of a job of " +
         std::to_string(ranks));
  }
  // NVLink multicast stays off whoever launched this rank: on shared
  // machines it can take the host's GPUs out of service.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  try {
    handle = load(library, *api);
  } catch (...) {
    delete api;
    throw;
  }
  int result = api->commInitRank(&comm, ranks, id, rank);
  if (result != ncclSuccess) {
    comm = nullptr;
    std::string why = api->getErrorString(result);
    // NCCL keeps what went wrong for a communicator that was never made.
    if (const char *detail = api->getLastError(nullptr); detail && *detail)
      why += std::string(" (") + detail + ")";
    dlclose(handle);
    delete api;
    fail("rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
         " could not join the job (ncclCommInitRank): " + why);
  }
}

Communicator::~Communicator() {
  // A job that failed aborts: a destroy would wait for peers that may
  // never come.
  if (comm)
    (std::uncaught_exceptions() ? api->commAbort : api->commDestroy)(comm);
  if (handle)
    dlclose(handle);
  delete api;
}

void Communicator::check(int result, const std::string &what) {
  if (result == ncclSuccess)
    return;
  std::string detail = api->getLastError ? api->getLastError(comm) : "";
  fail("rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
       ": " + what + " failed: " + api->getErrorString(result) +
       (detail.empty() ? "" : " (" + detail + ")"));
}

static int toOp(Communicator::Reduction reduction) {
  switch (reduction) {
  case Communicator::Reduction::Sum:
    return ncclSum;
  case Communicator::Reduction::Average:
    return ncclAvg;
  case Communicator::Reduction::Max:
    return ncclMax;
  case Communicator::Reduction::Min:
    return ncclMin;
  }
  return ncclSum;
}

void Communicator::allReduceF32(DevicePtr buffer, size_t count,
                                Reduction reduction) {
  void *p = reinterpret_cast<void *>(buffer);
  check(api->allReduce(p, p, count, ncclFloat32, toOp(reduction), comm,
                       nullptr),
        "all-reduce of " + std::to_string(count) + " f32 values");
}

void Communicator::allReduceU64(DevicePtr buffer, size_t count,
                                Reduction reduction) {
  void *p = reinterpret_cast<void *>(buffer);
  check(api->allReduce(p, p, count, ncclUint64, toOp(reduction), comm,
                       nullptr),
        "all-reduce of " + std::to_string(count) + " u64 values");
}

void Communicator::reduceScatterF32(DevicePtr send, DevicePtr receive,
                                    size_t count, Reduction reduction) {
  check(api->reduceScatter(reinterpret_cast<void *>(send),
                           reinterpret_cast<void *>(receive), count,
                           ncclFloat32, toOp(reduction), comm, nullptr),
        "reduce-scatter of " + std::to_string(count) + " f32 values a rank");
}

void Communicator::allGatherF32(DevicePtr send, DevicePtr receive,
                                size_t count) {
  check(api->allGather(reinterpret_cast<void *>(send),
                       reinterpret_cast<void *>(receive), count, ncclFloat32,
                       comm, nullptr),
        "all-gather of " + std::to_string(count) + " f32 values a rank");
}

void Communicator::beginGroup() { check(api->groupStart(), "ncclGroupStart"); }

void Communicator::endGroup() { check(api->groupEnd(), "ncclGroupEnd"); }

} // namespace mlir::mxfp4::runtime
