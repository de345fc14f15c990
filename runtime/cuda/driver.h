//===- driver.h - the CUDA driver API, loaded at run time -------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// libcuda.so.1 (or $MXFP4_CUDA_DRIVER, a fake for tests) opened with dlopen:
// the runner needs no CUDA headers and builds where there is no GPU.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CUDA_DRIVER_H
#define MXFP4_RUNTIME_CUDA_DRIVER_H

#include <cstddef>
#include <string>

using CUresult = int;
using CUdeviceptr = unsigned long long;

/// The entry points of the driver the runner calls.
struct Driver {
  void *library = nullptr;
  CUresult (*init)(unsigned);
  CUresult (*deviceGet)(int *, int);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGetName)(char *, int, int);
  CUresult (*primaryCtxRetain)(void **, int);
  CUresult (*ctxSetCurrent)(void *);
  CUresult (*moduleLoadData)(void **, const void *);
  CUresult (*moduleGetFunction)(void **, void *, const char *);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*memcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*launchKernel)(void *, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, void *, void **,
                           void **);
  CUresult (*ctxSynchronize)();
  CUresult (*eventCreate)(void **, unsigned);
  CUresult (*eventRecord)(void *, void *);
  CUresult (*eventSynchronize)(void *);
  CUresult (*eventElapsedTime)(float *, void *, void *);
  CUresult (*eventDestroy)(void *);
  CUresult (*getErrorName)(CUresult, const char **);

  /// Opens the driver, resolves every entry point and makes device 0's
  /// primary context current.
  void start();
  /// Loads the cubin `image` (read from `origin`, for messages).
  void *loadModule(const void *image, const std::string &origin);
  /// Fails with `call`'s name and the driver's error name unless `status`
  /// is success.
  void check(CUresult status, const std::string &call);

private:
  void load();
  template <typename F> void resolve(F &f, const char *name);
};

#endif // MXFP4_RUNTIME_CUDA_DRIVER_H
