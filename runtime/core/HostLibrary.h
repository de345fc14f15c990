//===- HostLibrary.h - an sm_90a host library, loaded at run time ---------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// host.so of `mxfp4-run compile --target=sm_90a`: the plan's host functions
// as machine code, with the cubin and the plan's text inside
// (include/mxfp4/API/HostABI.h). Opened with dlopen; needs no GPU.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_HOST_LIBRARY_H
#define MXFP4_RUNTIME_CORE_HOST_LIBRARY_H

#include "mxfp4/API/HostABI.h"
#include "mxfp4/Formats/HostPlan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mxfp4::runtime {

/// An open host library. Every failure (no such file, not a host library,
/// another ABI version, no such function) throws std::runtime_error.
class HostLibrary {
public:
  explicit HostLibrary(const std::string &path);
  HostLibrary(const HostLibrary &) = delete;
  HostLibrary &operator=(const HostLibrary &) = delete;
  ~HostLibrary();

  /// The plan's text (the library's manifest: arguments, results, types).
  std::string manifest() const;
  /// The cubin, valid while the library is open.
  const void *cubin() const;
  /// The kernels, by the index the library's launches pass.
  std::vector<std::string> kernelNames() const;
  /// `mxfp4_fn_NAME`.
  mxfp4_host_function *function(const std::string &name) const;

private:
  void *symbol(const std::string &name) const;

  std::string path;
  void *handle = nullptr;
};

/// The device operations a host function asks of its runner (the callbacks
/// of HostABI.h). Failures are exceptions.
class HostCalls {
public:
  virtual ~HostCalls() = default;
  virtual uint64_t alloc(uint64_t bytes) = 0;
  virtual void free(uint64_t buffer) = 0;
  virtual uint64_t upload(const void *data, uint64_t bytes) = 0;
  virtual void launch(uint32_t kernel, const unsigned grid[3],
                      const unsigned block[3], unsigned sharedBytes,
                      const uint64_t *params, uint32_t numParams) = 0;
  virtual uint64_t tensorMap(const HostTensorMap &map, uint64_t buffer) = 0;
};

/// Calls `function` with `calls` for its device operations. An exception
/// from a callback stops the function and is rethrown here.
void callHostFunction(mxfp4_host_function *function, HostCalls &calls,
                      const uint64_t *args, uint64_t *results);

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_HOST_LIBRARY_H
