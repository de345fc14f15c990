//===- driver.cpp - the CUDA driver API, loaded at run time ---------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "driver.h"

#include "failure.h"

#include <cstdlib>
#include <dlfcn.h>

template <typename F> void Driver::resolve(F &f, const char *name) {
  f = reinterpret_cast<F>(dlsym(library, name));
  if (!f)
    fail(std::string("libcuda.so.1 has no ") + name +
         ": a CUDA driver too old for this runner");
}

void Driver::load() {
  const char *path = getenv("MXFP4_CUDA_DRIVER");
  library = dlopen(path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    fail(std::string("CUDA driver not found: dlopen(") +
         (path ? path : "libcuda.so.1") + "): " + dlerror() +
         "; this runner needs an NVIDIA GPU and its driver");
  resolve(init, "cuInit");
  resolve(deviceGet, "cuDeviceGet");
  resolve(deviceGetCount, "cuDeviceGetCount");
  resolve(deviceGetName, "cuDeviceGetName");
  resolve(primaryCtxRetain, "cuDevicePrimaryCtxRetain");
  resolve(ctxSetCurrent, "cuCtxSetCurrent");
  resolve(moduleLoadData, "cuModuleLoadData");
  resolve(moduleGetFunction, "cuModuleGetFunction");
  resolve(memAlloc, "cuMemAlloc_v2");
  resolve(memFree, "cuMemFree_v2");
  resolve(memcpyHtoD, "cuMemcpyHtoD_v2");
  resolve(memcpyDtoH, "cuMemcpyDtoH_v2");
  resolve(memcpyDtoD, "cuMemcpyDtoD_v2");
  resolve(launchKernel, "cuLaunchKernel");
  resolve(ctxSynchronize, "cuCtxSynchronize");
  resolve(eventCreate, "cuEventCreate");
  resolve(eventRecord, "cuEventRecord");
  resolve(eventSynchronize, "cuEventSynchronize");
  resolve(eventElapsedTime, "cuEventElapsedTime");
  resolve(eventDestroy, "cuEventDestroy_v2");
  resolve(getErrorName, "cuGetErrorName");
}

void Driver::check(CUresult status, const std::string &call) {
  if (status == 0)
    return;
  const char *name = "unknown error";
  getErrorName(status, &name);
  fail(call + " failed: " + name + " (" + std::to_string(status) + ")");
}

void Driver::start() {
  load();
  check(init(0), "cuInit");
  int devices = 0;
  check(deviceGetCount(&devices), "cuDeviceGetCount");
  if (devices == 0)
    fail("no CUDA device");
  int device = 0;
  check(deviceGet(&device, 0), "cuDeviceGet");
  void *context = nullptr;
  check(primaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(ctxSetCurrent(context), "cuCtxSetCurrent");
}

void *Driver::loadModule(const void *image, const std::string &origin) {
  void *module = nullptr;
  check(moduleLoadData(&module, image), "cuModuleLoadData(" + origin + ")");
  return module;
}
