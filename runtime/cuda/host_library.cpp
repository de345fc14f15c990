//===- host_library.cpp - an sm_90a host library, loaded at run time ------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "host_library.h"

#include <dlfcn.h>
#include <stdexcept>

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
