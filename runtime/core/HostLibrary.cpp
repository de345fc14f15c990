//===- HostLibrary.cpp - an sm_90a host library, loaded at run time -------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "HostLibrary.h"

#include <algorithm>
#include <dlfcn.h>
#include <exception>
#include <stdexcept>

namespace mlir::mxfp4::runtime {

HostLibrary::HostLibrary(const std::string &path) : path(path) {
  // A path without a slash would be looked up in the library search path.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw std::runtime_error("cannot load the host library: " +
                             std::string(dlerror()));
  auto *version =
      static_cast<const uint32_t *>(dlsym(handle, "mxfp4_host_abi_version"));
  if (!version) {
    dlclose(handle);
    throw std::runtime_error("'" + path +
                             "' is not an mxfp4 host library (no "
                             "mxfp4_host_abi_version)");
  }
  if (*version != MXFP4_HOST_ABI_VERSION) {
    std::string found = std::to_string(*version);
    dlclose(handle);
    throw std::runtime_error("'" + path + "' has host ABI version " + found +
                             ", this runner " +
                             std::to_string(MXFP4_HOST_ABI_VERSION) +
                             ": compile it again with this tree's mxfp4-run");
  }
}

HostLibrary::~HostLibrary() { dlclose(handle); }

void *HostLibrary::symbol(const std::string &name) const {
  void *address = dlsym(handle, name.c_str());
  if (!address)
    throw std::runtime_error("'" + path + "' has no " + name);
  return address;
}

std::string HostLibrary::manifest() const {
  auto *get =
      reinterpret_cast<const char *(*)(uint64_t *)>(symbol("mxfp4_manifest"));
  uint64_t bytes = 0;
  const char *text = get(&bytes);
  return std::string(text, bytes);
}

const void *HostLibrary::cubin() const {
  auto *get =
      reinterpret_cast<const void *(*)(uint64_t *)>(symbol("mxfp4_cubin"));
  uint64_t bytes = 0;
  return get(&bytes);
}

std::vector<std::string> HostLibrary::kernelNames() const {
  auto *get = reinterpret_cast<const char *const *(*)(uint32_t *)>(
      symbol("mxfp4_kernel_names"));
  uint32_t count = 0;
  const char *const *names = get(&count);
  return std::vector<std::string>(names, names + count);
}

mxfp4_host_function *HostLibrary::function(const std::string &name) const {
  return reinterpret_cast<mxfp4_host_function *>(symbol("mxfp4_fn_" + name));
}

namespace {

/// A call's runner and the exception that stopped it, if one did.
struct Call {
  HostCalls &calls;
  std::exception_ptr failure;
};

/// A callback's work. Exceptions cannot cross the library's frames: a
/// failure is status 1, and the exception waits in the call.
template <typename Work> int32_t guard(void *ctx, Work work) {
  auto &call = *static_cast<Call *>(ctx);
  try {
    work(call.calls);
    return 0;
  } catch (...) {
    call.failure = std::current_exception();
    return 1;
  }
}

const mxfp4_host_api callbacks = {
    /*alloc=*/
    [](void *ctx, uint64_t bytes, uint64_t *buffer) {
      return guard(ctx, [&](HostCalls &c) { *buffer = c.alloc(bytes); });
    },
    /*free=*/
    [](void *ctx, uint64_t buffer) {
      return guard(ctx, [&](HostCalls &c) { c.free(buffer); });
    },
    /*upload=*/
    [](void *ctx, const void *data, uint64_t bytes, uint64_t *buffer) {
      return guard(ctx, [&](HostCalls &c) { *buffer = c.upload(data, bytes); });
    },
    /*launch=*/
    [](void *ctx, uint32_t kernel, uint32_t gridX, uint32_t gridY,
       uint32_t gridZ, uint32_t blockX, uint32_t blockY, uint32_t blockZ,
       uint32_t sharedBytes, const uint64_t *params, uint32_t numParams) {
      return guard(ctx, [&](HostCalls &c) {
        unsigned grid[3] = {gridX, gridY, gridZ};
        unsigned block[3] = {blockX, blockY, blockZ};
        c.launch(kernel, grid, block, sharedBytes, params, numParams);
      });
    },
    /*tensor_map=*/
    [](void *ctx, const mxfp4_tensor_map *map, uint64_t buffer,
       uint64_t *address) {
      return guard(ctx, [&](HostCalls &c) {
        HostTensorMap spec;
        spec.elementType = map->element_type;
        size_t rank = std::min<uint64_t>(map->rank, 5);
        spec.dims.assign(map->dims, map->dims + rank);
        spec.strides.assign(map->strides, map->strides + (rank ? rank - 1 : 0));
        spec.box.assign(map->box, map->box + rank);
        spec.offset = map->offset;
        spec.swizzle = map->swizzle;
        spec.l2Promotion = map->l2_promotion;
        *address = c.tensorMap(spec, buffer);
      });
    },
};

} // namespace

void callHostFunction(mxfp4_host_function *function, HostCalls &calls,
                      const uint64_t *args, uint64_t *results) {
  Call call{calls, nullptr};
  int32_t status = function(&callbacks, &call, args, results);
  if (call.failure)
    std::rethrow_exception(call.failure);
  if (status != 0)
    throw std::runtime_error("the host function failed with status " +
                             std::to_string(status));
}

} // namespace mlir::mxfp4::runtime
