//===- HipDevice.h - a HIP runtime, loaded at run time ----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The Device of an AMD GPU: ROCm's libamdhip64 (or the emulated stand-in
// libmxfp4-emulated-hip.so, or a fake for tests) opened with dlopen, so the
// runner needs no HIP headers and builds where there is no ROCm. The entry
// points are the ones docs/gfx950.md and the stand-in agree on, declared
// here with plain C types. Messages name the hip* call that failed, HIP's
// error name and code and, from the stand-in, the emulator's own message.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_HIP_HIP_DEVICE_H
#define MXFP4_RUNTIME_HIP_HIP_DEVICE_H

#include "Device.h"

#include <cstddef>
#include <string>
#include <vector>

namespace mlir::mxfp4::runtime {

/// Which HIP library to open, and what to tell a user who has none.
struct HipLibrary {
  /// Tried in order; the first that dlopen opens is used.
  std::vector<std::string> paths;
  /// For messages ("HIP runtime", "emulated HIP runtime").
  std::string displayName;
  /// Said after a failed dlopen or a library without an entry point: what
  /// the target needs and how to point the runner at it.
  std::string hint;
};

/// Device 0 of the machine through the HIP runtime API; every operation is
/// on the null stream.
class HipDevice : public Device {
public:
  /// Opens the first of `library.paths`, resolves every entry point,
  /// initializes HIP and selects device 0.
  /// Opens GPU `ordinal` (a data-parallel rank's; 0 otherwise).
  explicit HipDevice(const HipLibrary &library, int ordinal = 0);
  HipDevice(const HipDevice &) = delete;
  HipDevice &operator=(const HipDevice &) = delete;

  /// hipDeviceGetName's name of the device.
  const std::string &name() const { return deviceName; }

  void *loadModule(const void *image, const std::string &origin) override;
  void *getKernel(void *module, const std::string &name) override;
  DevicePtr allocate(size_t bytes) override;
  void release(DevicePtr p) noexcept override;
  void copyToDevice(DevicePtr to, const void *from, size_t bytes) override;
  void copyToHost(void *to, DevicePtr from, size_t bytes) override;
  void copyOnDevice(DevicePtr to, DevicePtr from, size_t bytes) override;
  void launch(void *kernel, const std::string &name, const unsigned grid[3],
              const unsigned block[3], unsigned sharedBytes,
              void **params) override;
  void encodeTensorMap(const HostTensorMap &map, DevicePtr address,
                       void *encoded) override;
  void synchronize() override;
  void memoryInfo(size_t &freeBytes, size_t &totalBytes) override;
  void *createEvent() override;
  void destroyEvent(void *event) noexcept override;
  void recordEvent(void *event) override;
  float elapsedMs(void *start, void *stop) override;

private:
  using hipError_t = int;

  void load(const HipLibrary &spec);
  template <typename F> void resolve(F &f, const char *name);
  /// Fails with `call`, HIP's error name and code (and the stand-in's
  /// message) unless `status` is success; `hint` is said after them.
  void check(hipError_t status, const std::string &call,
             const std::string &hint = "");

  void *library = nullptr;
  /// The library opened, for messages.
  std::string libraryPath, libraryHint;
  std::string deviceName;
  /// The first entry point the library lacks, if any.
  std::string missing;

  hipError_t (*init)(unsigned);
  hipError_t (*getDeviceCount)(int *);
  hipError_t (*setDevice)(int);
  hipError_t (*deviceGetName)(char *, int, int);
  hipError_t (*memGetInfo)(size_t *, size_t *);
  hipError_t (*moduleLoadData)(void **, const void *);
  hipError_t (*moduleGetFunction)(void **, void *, const char *);
  hipError_t (*moduleLaunchKernel)(void *, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, unsigned, unsigned,
                                   void *, void **, void **);
  hipError_t (*memAlloc)(void **, size_t);
  hipError_t (*memFree)(void *);
  hipError_t (*memcpyHtoD)(void *, const void *, size_t);
  hipError_t (*memcpyDtoH)(void *, void *, size_t);
  hipError_t (*memcpyDtoD)(void *, void *, size_t);
  hipError_t (*deviceSynchronize)();
  hipError_t (*eventCreate)(void **);
  hipError_t (*eventRecord)(void *, void *);
  hipError_t (*eventSynchronize)(void *);
  hipError_t (*eventElapsedTime)(float *, void *, void *);
  hipError_t (*eventDestroy)(void *);
  const char *(*getErrorName)(hipError_t);
  /// The stand-in's located emulator error of the last failure; null for a
  /// real runtime.
  const char *(*lastMessage)() = nullptr;
};

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_HIP_HIP_DEVICE_H
