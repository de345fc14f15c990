//===- CudaDevice.cpp - the CUDA driver, loaded at run time ---------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"

#include "Failure.h"

#include <cstdlib>
#include <dlfcn.h>

namespace mlir::mxfp4::runtime {

template <typename F> void CudaDevice::resolve(F &f, const char *name) {
  f = reinterpret_cast<F>(dlsym(library, name));
  if (!f)
    fail(std::string("libcuda.so.1 has no ") + name +
         ": a CUDA driver too old for this runner");
}

void CudaDevice::load() {
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
  resolve(memGetInfo, "cuMemGetInfo_v2");
  resolve(eventCreate, "cuEventCreate");
  resolve(eventRecord, "cuEventRecord");
  resolve(eventSynchronize, "cuEventSynchronize");
  resolve(eventElapsedTime, "cuEventElapsedTime");
  resolve(eventDestroy, "cuEventDestroy_v2");
  resolve(getErrorName, "cuGetErrorName");
}

void CudaDevice::check(CUresult status, const std::string &call) {
  if (status == 0)
    return;
  const char *name = "unknown error";
  getErrorName(status, &name);
  fail(call + " failed: " + name + " (" + std::to_string(status) + ")");
}

CudaDevice::CudaDevice(int ordinal) {
  load();
  check(init(0), "cuInit");
  int devices = 0;
  check(deviceGetCount(&devices), "cuDeviceGetCount");
  if (devices == 0)
    fail("no CUDA device");
  if (ordinal >= devices)
    fail("no CUDA device " + std::to_string(ordinal) + ": this machine has " +
         std::to_string(devices) + " (one rank a GPU)");
  int device = 0;
  check(deviceGet(&device, ordinal), "cuDeviceGet");
  void *context = nullptr;
  check(primaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(ctxSetCurrent(context), "cuCtxSetCurrent");
}

void *CudaDevice::loadModule(const void *image, const std::string &origin) {
  void *module = nullptr;
  check(moduleLoadData(&module, image), "cuModuleLoadData(" + origin + ")");
  return module;
}

void *CudaDevice::getKernel(void *module, const std::string &name) {
  void *kernel = nullptr;
  check(moduleGetFunction(&kernel, module, name.c_str()),
        "cuModuleGetFunction(" + name + ")");
  return kernel;
}

DevicePtr CudaDevice::allocate(size_t bytes) {
  CUdeviceptr p = 0;
  check(memAlloc(&p, bytes), "cuMemAlloc");
  return p;
}

void CudaDevice::release(DevicePtr p) noexcept { memFree(p); }

void CudaDevice::copyToDevice(DevicePtr to, const void *from, size_t bytes) {
  check(memcpyHtoD(to, from, bytes), "cuMemcpyHtoD");
}

void CudaDevice::copyToHost(void *to, DevicePtr from, size_t bytes) {
  check(memcpyDtoH(to, from, bytes), "cuMemcpyDtoH");
}

void CudaDevice::copyOnDevice(DevicePtr to, DevicePtr from, size_t bytes) {
  check(memcpyDtoD(to, from, bytes), "cuMemcpyDtoD");
}

void CudaDevice::launch(void *kernel, const std::string &name,
                        const unsigned grid[3], const unsigned block[3],
                        unsigned sharedBytes, void **params) {
  check(launchKernel(kernel, grid[0], grid[1], grid[2], block[0], block[1],
                     block[2], sharedBytes, nullptr, params, nullptr),
        "cuLaunchKernel(" + name + ")");
}

void CudaDevice::synchronize() {
  check(ctxSynchronize(), "cuCtxSynchronize");
}

void CudaDevice::memoryInfo(size_t &freeBytes, size_t &totalBytes) {
  check(memGetInfo(&freeBytes, &totalBytes), "cuMemGetInfo");
}

void *CudaDevice::createEvent() {
  void *event = nullptr;
  check(eventCreate(&event, 0), "cuEventCreate");
  return event;
}

void CudaDevice::destroyEvent(void *event) noexcept { eventDestroy(event); }

void CudaDevice::recordEvent(void *event) {
  check(eventRecord(event, nullptr), "cuEventRecord");
}

float CudaDevice::elapsedMs(void *start, void *stop) {
  check(eventSynchronize(stop), "cuEventSynchronize");
  float ms = 0;
  check(eventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
  return ms;
}

} // namespace mlir::mxfp4::runtime
