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
  resolve(funcSetAttribute, "cuFuncSetAttribute");
  tensorMapEncodeTiled = reinterpret_cast<decltype(tensorMapEncodeTiled)>(
      dlsym(library, "cuTensorMapEncodeTiled"));
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
  // Past 48 KiB a kernel's dynamic shared memory must be allowed first.
  constexpr int kMaxDynamicSharedSizeBytes = 8;
  if (sharedBytes > 48 * 1024 && largeShared.insert(kernel).second)
    check(funcSetAttribute(kernel, kMaxDynamicSharedSizeBytes,
                           static_cast<int>(sharedBytes)),
          "cuFuncSetAttribute(" + name + ", " + std::to_string(sharedBytes) +
              " bytes of dynamic shared memory)");
  check(launchKernel(kernel, grid[0], grid[1], grid[2], block[0], block[1],
                     block[2], sharedBytes, nullptr, params, nullptr),
        "cuLaunchKernel(" + name + ")");
}

void CudaDevice::encodeTensorMap(const HostTensorMap &map, DevicePtr address,
                                 void *encoded) {
  if (!tensorMapEncodeTiled)
    fail("libcuda.so.1 has no cuTensorMapEncodeTiled: this plan's tensor "
         "maps need a CUDA 12 driver or later");
  // CUtensorMapDataType, CUtensorMapSwizzle and CUtensorMapL2promotion.
  int type = 0;
  if (map.elementType == "u8")
    type = 0;
  else if (map.elementType == "i32")
    type = 3;
  else if (map.elementType == "i64")
    type = 5;
  else if (map.elementType == "f16")
    type = 6;
  else if (map.elementType == "f32")
    type = 7;
  else if (map.elementType == "bf16")
    type = 9;
  else
    fail("a tensor map of element type '" + map.elementType + "'");
  int swizzle = map.swizzle == 32 ? 1 : map.swizzle == 64 ? 2
                : map.swizzle == 128 ? 3 : 0;
  int l2 = map.l2Promotion == 64 ? 1 : map.l2Promotion == 128 ? 2
           : map.l2Promotion == 256 ? 3 : 0;
  // The driver takes dimensions innermost first, and the strides of all
  // but the innermost.
  size_t rank = map.dims.size();
  unsigned long long dims[5], strides[5];
  unsigned box[5], elementStrides[5];
  for (size_t i = 0; i < rank; ++i) {
    dims[i] = map.dims[rank - 1 - i];
    box[i] = static_cast<unsigned>(map.box[rank - 1 - i]);
    elementStrides[i] = 1;
    if (i + 1 < rank)
      strides[i] = map.strides[rank - 2 - i];
  }
  void *global = reinterpret_cast<void *>(address + map.offset);
  check(tensorMapEncodeTiled(encoded, type, static_cast<unsigned>(rank),
                             global, dims, strides, box, elementStrides,
                             /*interleave=*/0, swizzle, l2, /*oobFill=*/0),
        "cuTensorMapEncodeTiled(" + map.elementType + " tensor of rank " +
            std::to_string(rank) + ")");
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
