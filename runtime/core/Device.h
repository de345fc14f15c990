//===- Device.h - what the runtime needs of a GPU driver --------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Plan replay, the training loop, the study and the timers see a GPU only
// through this interface, so a second driver (HIP) adds a class, not a
// second runtime. Every operation is on the device's default stream, in
// order: a copy or launch runs after every earlier one, which the memory
// cache (Memory.h) and the timers rely on. Every operation fails with a
// Failure naming the driver call and the driver's error; `release` and
// `destroyEvent` never fail, for destructors.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_DEVICE_H
#define MXFP4_RUNTIME_CORE_DEVICE_H

#include "mxfp4/Formats/HostPlan.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace mlir::mxfp4::runtime {

/// A device address, as kernels take it and the host ABI passes it.
using DevicePtr = uint64_t;

/// One GPU, its driver opened and a context current.
class Device {
public:
  virtual ~Device() = default;

  /// Loads the code object `image` (read from `origin`, for messages) and
  /// returns its module.
  virtual void *loadModule(const void *image, const std::string &origin) = 0;
  /// The kernel `name` of `module`.
  virtual void *getKernel(void *module, const std::string &name) = 0;

  virtual DevicePtr allocate(size_t bytes) = 0;
  virtual void release(DevicePtr p) noexcept = 0;
  virtual void copyToDevice(DevicePtr to, const void *from, size_t bytes) = 0;
  virtual void copyToHost(void *to, DevicePtr from, size_t bytes) = 0;
  virtual void copyOnDevice(DevicePtr to, DevicePtr from, size_t bytes) = 0;

  /// Launches `kernel` (named `name`, for messages) with one pointer per
  /// parameter, from which the driver copies as many bytes as the kernel
  /// declares.
  virtual void launch(void *kernel, const std::string &name,
                      const unsigned grid[3], const unsigned block[3],
                      unsigned sharedBytes, void **params) = 0;
  /// Encodes `map` of the buffer at `address` into the driver's 128-byte
  /// tensor map at `encoded` (CUDA's cuTensorMapEncodeTiled).
  virtual void encodeTensorMap(const HostTensorMap &map, DevicePtr address,
                               void *encoded) = 0;
  /// Waits for everything queued.
  virtual void synchronize() = 0;
  /// The device memory free now and in all, in bytes, for the checks that
  /// refuse a run that would not fit before it starts.
  virtual void memoryInfo(size_t &freeBytes, size_t &totalBytes) = 0;

  virtual void *createEvent() = 0;
  virtual void destroyEvent(void *event) noexcept = 0;
  /// Queues `event`.
  virtual void recordEvent(void *event) = 0;
  /// Milliseconds between two recorded events, once `stop` is done.
  virtual float elapsedMs(void *start, void *stop) = 0;
};

/// What a tool tells the target-neutral parts about its target.
struct DeviceTarget {
  /// The compiler's name of the target, for messages ("sm_90a").
  std::string name;
  /// The code object's file in a compile's folder ("kernels.cubin").
  std::string codeObjectFile;
  /// Opens the device, once something needs one.
  std::function<std::unique_ptr<Device>()> open;
};

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_DEVICE_H
