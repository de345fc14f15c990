//===- HipDevice.cpp - a HIP runtime, loaded at run time ------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "HipDevice.h"

#include "Failure.h"

#include <dlfcn.h>

namespace mlir::mxfp4::runtime {

/// hipError_t values the messages interpret.
enum : int {
  hipErrorInsufficientDriver = 35,
  hipErrorNoDevice = 100,
  hipErrorInvalidImage = 200,
  hipErrorNoBinaryForGpu = 209,
  hipErrorInvalidKernelFile = 218,
  hipErrorSharedObjectInitFailed = 303,
};

static const char *const kNoDeviceHint =
    "no HIP device; is the amdgpu kernel driver loaded and /dev/kfd "
    "accessible (render/video group)?";

template <typename F> void HipDevice::resolve(F &f, const char *name) {
  f = reinterpret_cast<F>(dlsym(library, name));
  if (!f && missing.empty())
    missing = name;
}

void HipDevice::load(const HipLibrary &spec) {
  std::string tried, firstError;
  for (const std::string &path : spec.paths) {
    library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library) {
      libraryPath = path;
      break;
    }
    tried += (tried.empty() ? "" : ", ") + path;
    if (firstError.empty())
      if (const char *error = dlerror())
        firstError = error;
  }
  if (!library)
    fail(spec.displayName + " not found: dlopen(" + tried + ")" +
         (firstError.empty() ? "" : ": " + firstError) + "; " + spec.hint);
  libraryHint = spec.hint;
  // All of them, so that one message names the first one missing.
  resolve(init, "hipInit");
  resolve(getDeviceCount, "hipGetDeviceCount");
  resolve(setDevice, "hipSetDevice");
  resolve(deviceGetName, "hipDeviceGetName");
  resolve(memGetInfo, "hipMemGetInfo");
  resolve(moduleLoadData, "hipModuleLoadData");
  resolve(moduleGetFunction, "hipModuleGetFunction");
  resolve(moduleLaunchKernel, "hipModuleLaunchKernel");
  resolve(memAlloc, "hipMalloc");
  resolve(memFree, "hipFree");
  resolve(memcpyHtoD, "hipMemcpyHtoD");
  resolve(memcpyDtoH, "hipMemcpyDtoH");
  resolve(memcpyDtoD, "hipMemcpyDtoD");
  resolve(deviceSynchronize, "hipDeviceSynchronize");
  resolve(eventCreate, "hipEventCreate");
  resolve(eventRecord, "hipEventRecord");
  resolve(eventSynchronize, "hipEventSynchronize");
  resolve(eventElapsedTime, "hipEventElapsedTime");
  resolve(eventDestroy, "hipEventDestroy");
  resolve(getErrorName, "hipGetErrorName");
  if (!missing.empty())
    fail(libraryPath + " has no " + missing +
         ": it is not a HIP runtime, or one older than ROCm 7.0; " + spec.hint);
  // Only the stand-in has it.
  lastMessage = reinterpret_cast<const char *(*)()>(
      dlsym(library, "mxfp4EmulatedHipLastMessage"));
}

void HipDevice::check(hipError_t status, const std::string &call,
                      const std::string &hint) {
  if (status == 0)
    return;
  const char *name = getErrorName(status);
  std::string message = call +
                        " failed: " + (name && *name ? name : "unknown error") +
                        " (" + std::to_string(status) + ")";
  if (!hint.empty())
    message += ": " + hint;
  if (lastMessage)
    if (const char *detail = lastMessage(); detail && *detail)
      message += std::string(hint.empty() ? ": " : "; ") + detail;
  fail(message);
}

HipDevice::HipDevice(const HipLibrary &library, int ordinal) {
  load(library);
  hipError_t status = init(0);
  check(status, "hipInit",
        status == hipErrorNoDevice || status == hipErrorInsufficientDriver
            ? kNoDeviceHint
            : "");
  int devices = 0;
  status = getDeviceCount(&devices);
  check(status, "hipGetDeviceCount",
        status == hipErrorNoDevice ? kNoDeviceHint : "");
  if (devices <= 0)
    fail(std::string("no HIP device: hipGetDeviceCount found 0 devices; is "
                     "the amdgpu kernel driver loaded and /dev/kfd accessible "
                     "(render/video group)?"));
  if (ordinal >= devices)
    fail("no HIP device " + std::to_string(ordinal) + ": " +
         library.displayName + " has " + std::to_string(devices) +
         " (one rank a GPU)");
  std::string device = std::to_string(ordinal);
  check(setDevice(ordinal), "hipSetDevice(" + device + ")");
  char name[256] = {};
  check(deviceGetName(name, sizeof(name) - 1, ordinal), "hipDeviceGetName");
  deviceName = name[0] ? name : "HIP device " + device;
}

void *HipDevice::loadModule(const void *image, const std::string &origin) {
  // ROCm takes any bytes and answers "no binary for the GPU"; say what the
  // file is instead. The emulated runtime takes kernel IR. The image ends
  // with a NUL (Compiled), so the comparison stops inside it.
  if (!lastMessage) {
    const char *bytes = static_cast<const char *>(image);
    const char magic[] = "\x7f"
                         "ELF";
    for (size_t i = 0; i < 4; ++i)
      if (bytes[i] != magic[i])
        fail("'" + origin +
             "' is not a code object (an ELF file): --target=gfx950 takes "
             "the compile's kernels.hsaco (kernels.mlir is for "
             "--target=gfx950-emulator)");
  }
  void *module = nullptr;
  hipError_t status = moduleLoadData(&module, image);
  // ROCm says no more than that it has no code for the device; the
  // emulated runtime says what is wrong with the image itself.
  bool otherDevice = !lastMessage && (status == hipErrorNoBinaryForGpu ||
                                      status == hipErrorInvalidImage ||
                                      status == hipErrorInvalidKernelFile ||
                                      status == hipErrorSharedObjectInitFailed);
  check(status, "hipModuleLoadData(" + origin + ")",
        otherDevice ? "the device is not a gfx950 (MI350X/MI355X): " +
                          deviceName + " (or the code object is not for it)"
                    : "");
  return module;
}

void *HipDevice::getKernel(void *module, const std::string &name) {
  void *kernel = nullptr;
  check(moduleGetFunction(&kernel, module, name.c_str()),
        "hipModuleGetFunction(" + name + ")");
  return kernel;
}

DevicePtr HipDevice::allocate(size_t bytes) {
  void *p = nullptr;
  check(memAlloc(&p, bytes), "hipMalloc(" + std::to_string(bytes) + ")");
  return reinterpret_cast<DevicePtr>(p);
}

void HipDevice::release(DevicePtr p) noexcept {
  memFree(reinterpret_cast<void *>(p));
}

void HipDevice::copyToDevice(DevicePtr to, const void *from, size_t bytes) {
  check(memcpyHtoD(reinterpret_cast<void *>(to), from, bytes), "hipMemcpyHtoD");
}

void HipDevice::copyToHost(void *to, DevicePtr from, size_t bytes) {
  check(memcpyDtoH(to, reinterpret_cast<void *>(from), bytes), "hipMemcpyDtoH");
}

void HipDevice::copyOnDevice(DevicePtr to, DevicePtr from, size_t bytes) {
  check(memcpyDtoD(reinterpret_cast<void *>(to), reinterpret_cast<void *>(from),
                   bytes),
        "hipMemcpyDtoD");
}

void HipDevice::launch(void *kernel, const std::string &name,
                       const unsigned grid[3], const unsigned block[3],
                       unsigned sharedBytes, void **params) {
  // kernelParams, not `extra`: HIP lays the arguments out from the code
  // object's metadata, and the stand-in reads them by the kernel's types.
  check(moduleLaunchKernel(kernel, grid[0], grid[1], grid[2], block[0],
                           block[1], block[2], sharedBytes, nullptr, params,
                           nullptr),
        "hipModuleLaunchKernel(" + name + ")");
}

void HipDevice::encodeTensorMap(const HostTensorMap &, DevicePtr, void *) {
  fail("the plan uses a TMA tensor map, an NVIDIA Hopper feature: it was "
       "compiled for sm_90a, not for this runner's gfx950");
}

void HipDevice::synchronize() {
  check(deviceSynchronize(), "hipDeviceSynchronize");
}

void HipDevice::memoryInfo(size_t &freeBytes, size_t &totalBytes) {
  check(memGetInfo(&freeBytes, &totalBytes), "hipMemGetInfo");
}

void *HipDevice::createEvent() {
  void *event = nullptr;
  check(eventCreate(&event), "hipEventCreate");
  return event;
}

void HipDevice::destroyEvent(void *event) noexcept { eventDestroy(event); }

void HipDevice::recordEvent(void *event) {
  check(eventRecord(event, nullptr), "hipEventRecord");
}

float HipDevice::elapsedMs(void *start, void *stop) {
  check(eventSynchronize(stop), "hipEventSynchronize");
  float ms = 0;
  check(eventElapsedTime(&ms, start, stop), "hipEventElapsedTime");
  return ms;
}

} // namespace mlir::mxfp4::runtime
