//===- HipRuntime.h - launching code objects through HIP --------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A thin wrapper over the HIP module API (hipModuleLoadData,
// hipModuleGetFunction, hipModuleLaunchKernel, ...) that loads
// libamdhip64.so with dlopen at run time, so that nothing of ROCm is needed to
// build the compiler or to run anything but a launch. Every failure is an
// llvm::Error naming the HIP call, HIP's error name and, where one is known,
// what to do about it.
//
// Kernel arguments are passed as one packed kernarg block laid out by the
// offsets and sizes of the code object's metadata (see KernargLayout and
// docs/gfx950.md, "HIP launch").
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_HIPRUNTIME_H
#define MXFP4_RUNTIME_HIPRUNTIME_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace mlir::mxfp4 {

/// The bytes of one explicit kernel argument, exactly as the kernel reads
/// them from its kernarg segment (a device pointer is 8 bytes, an i32 4).
struct KernelArgumentValue {
  llvm::SmallVector<uint8_t, 8> bytes;

  /// The object representation of a trivially copyable value.
  template <typename T> static KernelArgumentValue of(const T &value) {
    static_assert(std::is_trivially_copyable<T>::value,
                  "kernel arguments are copied bytewise");
    KernelArgumentValue result;
    result.bytes.resize(sizeof(T));
    std::memcpy(result.bytes.data(), &value, sizeof(T));
    return result;
  }

  /// A device pointer (a `global_buffer` argument).
  static KernelArgumentValue pointer(const void *devicePointer) {
    return of(devicePointer);
  }
};

/// Where one explicit argument lives in the kernarg segment.
struct KernargSlot {
  int64_t offset = 0;
  int64_t size = 0;
  /// The metadata's `.value_kind` ("global_buffer", "by_value", ...), for
  /// error messages.
  std::string valueKind;
};

/// The explicit part of a kernel's kernarg segment, normally taken from the
/// code object's metadata (gfx950::getKernargLayout in CodeObject.h).
struct KernargLayout {
  std::string kernelName;
  std::vector<KernargSlot> slots;
  /// `.kernarg_segment_size` (explicit and hidden arguments).
  int64_t segmentSize = 0;

  /// The end of the last explicit argument: the size of the block passed to
  /// hipModuleLaunchKernel.
  int64_t getExplicitSize() const {
    int64_t end = 0;
    for (const KernargSlot &slot : slots)
      end = std::max(end, slot.offset + slot.size);
    return end;
  }
};

/// Builds the kernarg block of one launch: checks that there is one value per
/// slot and that each value has the slot's size, then copies each value to
/// its offset (padding is zero).
llvm::Expected<std::vector<uint8_t>>
packKernelArguments(const KernargLayout &layout,
                    llvm::ArrayRef<KernelArgumentValue> values);

/// Opaque HIP handles (hipModule_t, hipFunction_t, hipEvent_t).
struct HipModule {
  void *handle = nullptr;
  std::string name;
};
struct HipFunction {
  void *handle = nullptr;
  std::string name;
};
struct HipEvent {
  void *handle = nullptr;
};

/// The HIP runtime of one device, loaded with dlopen. Not thread-safe.
class HipRuntime {
public:
  /// Loads libamdhip64 (the path in $MXFP4_HIP_LIBRARY if set, else
  /// libamdhip64.so, libamdhip64.so.7, libamdhip64.so.6), resolves the API,
  /// initialises HIP and selects `device`.
  static llvm::Expected<std::unique_ptr<HipRuntime>> load(int device = 0);

  ~HipRuntime();
  HipRuntime(const HipRuntime &) = delete;
  HipRuntime &operator=(const HipRuntime &) = delete;

  /// The file the library was loaded from (as dladdr reports it).
  llvm::StringRef getLibraryPath() const { return libraryPath; }
  /// The selected device, its name (hipDeviceGetName) and the device count.
  int getDevice() const { return device; }
  llvm::StringRef getDeviceName() const { return deviceName; }
  int getDeviceCount() const { return deviceCount; }

  /// Loads a code object (an AMDGPU ELF, e.g. a `.hsaco`); `name` labels
  /// errors. A code object for another processor fails with "the device is
  /// not a gfx950 (MI350X/MI355X): <device name>".
  llvm::Expected<HipModule> loadModule(llvm::ArrayRef<uint8_t> codeObject,
                                       llvm::StringRef name);
  llvm::Error unloadModule(HipModule &module);
  /// Looks up a kernel by its symbol name (the gpu.func name).
  llvm::Expected<HipFunction> getFunction(const HipModule &module,
                                          llvm::StringRef name);

  /// Device memory.
  llvm::Expected<void *> allocate(size_t bytes);
  llvm::Error deallocate(void *devicePointer);
  llvm::Error copyToDevice(void *devicePointer, const void *host, size_t bytes);
  llvm::Error copyToHost(void *host, const void *devicePointer, size_t bytes);
  /// Sets `bytes` bytes to `value` (hipMemset).
  llvm::Error fill(void *devicePointer, uint8_t value, size_t bytes);

  /// Launches `function` on the null stream with `grid` workgroups (blocks,
  /// not work-items) of `block` work-items; the arguments are packed by
  /// `layout` (packKernelArguments) and passed through `extra`.
  llvm::Error launch(const HipFunction &function, std::array<unsigned, 3> grid,
                     std::array<unsigned, 3> block, unsigned dynamicLdsBytes,
                     const KernargLayout &layout,
                     llvm::ArrayRef<KernelArgumentValue> arguments);
  /// Waits for all work on the device.
  llvm::Error synchronize();

  /// Events on the null stream, for timing launches.
  llvm::Expected<HipEvent> createEvent();
  llvm::Error recordEvent(const HipEvent &event);
  /// Waits for `stop` and returns the time between the two events.
  llvm::Expected<float> getElapsedMilliseconds(const HipEvent &start,
                                               const HipEvent &stop);
  llvm::Error destroyEvent(HipEvent &event);

  struct Api;

private:
  HipRuntime();

  /// Returns an error "<call> failed: <hipErrorName> (<description>)" plus
  /// `hint` if not empty.
  llvm::Error makeError(llvm::StringRef call, int status,
                        llvm::StringRef hint = {}) const;

  std::unique_ptr<Api> api;
  void *library = nullptr;
  std::string libraryPath;
  std::string deviceName;
  int device = 0;
  int deviceCount = 0;
};

} // namespace mlir::mxfp4

#endif // MXFP4_RUNTIME_HIPRUNTIME_H
