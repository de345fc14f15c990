//===- HipRuntime.cpp - launching code objects through HIP ----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The HIP API is declared here with plain C types (hipError_t is an int
// enum; hipModule_t, hipFunction_t, hipEvent_t, hipStream_t and
// hipDeviceptr_t are pointers; hipDevice_t is an int), so no HIP header is
// needed to build.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Runtime/HipRuntime.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdlib>
#include <dlfcn.h>
#include <map>

using namespace mlir::mxfp4;
using llvm::StringRef;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

namespace {
/// hipError_t values the messages interpret.
enum HipStatus : int {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorInsufficientDriver = 35,
  hipErrorNoDevice = 100,
  hipErrorInvalidDevice = 101,
  hipErrorInvalidImage = 200,
  hipErrorNoBinaryForGpu = 209,
  hipErrorInvalidKernelFile = 218,
  hipErrorSharedObjectInitFailed = 303,
  hipErrorNotFound = 500,
};

/// The `extra` tags of hipModuleLaunchKernel (HIP_LAUNCH_PARAM_*).
void *const kLaunchParamBufferPointer = reinterpret_cast<void *>(1);
void *const kLaunchParamBufferSize = reinterpret_cast<void *>(2);
void *const kLaunchParamEnd = reinterpret_cast<void *>(3);
} // namespace

/// The resolved entry points.
struct HipRuntime::Api {
  int (*init)(unsigned) = nullptr;
  int (*getDeviceCount)(int *) = nullptr;
  int (*setDevice)(int) = nullptr;
  int (*deviceGetName)(char *, int, int) = nullptr; // optional
  int (*moduleLoadData)(void **, const void *) = nullptr;
  int (*moduleUnload)(void *) = nullptr;
  int (*moduleGetFunction)(void **, void *, const char *) = nullptr;
  int (*moduleLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned,
                            unsigned, unsigned, unsigned, void *, void **,
                            void **) = nullptr;
  int (*malloc)(void **, size_t) = nullptr;
  int (*free)(void *) = nullptr;
  int (*memcpyHtoD)(void *, const void *, size_t) = nullptr;
  int (*memcpyDtoH)(void *, const void *, size_t) = nullptr;
  int (*memset)(void *, int, size_t) = nullptr;
  int (*deviceSynchronize)() = nullptr;
  const char *(*getErrorName)(int) = nullptr;   // optional
  const char *(*getErrorString)(int) = nullptr; // optional
  int (*eventCreate)(void **) = nullptr;
  int (*eventRecord)(void *, void *) = nullptr;
  int (*eventSynchronize)(void *) = nullptr;
  int (*eventElapsedTime)(float *, void *, void *) = nullptr;
  int (*eventDestroy)(void *) = nullptr;

  /// Copies of the loaded code objects, kept until their module is
  /// unloaded: HIP may read the image lazily.
  std::map<void *, std::vector<uint8_t>> images;
};

//===----------------------------------------------------------------------===//
// Kernel arguments
//===----------------------------------------------------------------------===//

llvm::Expected<std::vector<uint8_t>>
mlir::mxfp4::packKernelArguments(const KernargLayout &layout,
                                 llvm::ArrayRef<KernelArgumentValue> values) {
  StringRef kernel = layout.kernelName.empty() ? StringRef("<unnamed>")
                                               : StringRef(layout.kernelName);
  if (values.size() != layout.slots.size())
    return makeError(llvm::formatv("kernel '{0}' takes {1} explicit "
                                   "arguments (from its code-object metadata) "
                                   "but {2} were given",
                                   kernel, layout.slots.size(), values.size())
                         .str());
  std::vector<uint8_t> block(layout.getExplicitSize(), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    const KernargSlot &slot = layout.slots[i];
    if (slot.offset < 0 || slot.size <= 0)
      return makeError(llvm::formatv("kernel '{0}': argument #{1} has an "
                                     "invalid slot (offset {2}, size {3})",
                                     kernel, i, slot.offset, slot.size)
                           .str());
    if (static_cast<int64_t>(values[i].bytes.size()) != slot.size)
      return makeError(
          llvm::formatv("kernel '{0}': argument #{1} is {2} bytes but the "
                        "code object declares {3} ({4} at offset {5})",
                        kernel, i, values[i].bytes.size(), slot.size,
                        slot.valueKind.empty() ? "argument" : slot.valueKind,
                        slot.offset)
              .str());
    std::copy(values[i].bytes.begin(), values[i].bytes.end(),
              block.begin() + slot.offset);
  }
  return block;
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

HipRuntime::HipRuntime() : api(std::make_unique<Api>()) {}

// libamdhip64 is deliberately never dlclose'd: it registers exit-time
// handlers, and unloading it before they run crashes at exit.
HipRuntime::~HipRuntime() = default;

llvm::Error HipRuntime::makeError(StringRef call, int status,
                                  StringRef hint) const {
  std::string name = api->getErrorName ? api->getErrorName(status) : "";
  if (name.empty())
    name = "hipError " + std::to_string(status);
  std::string description =
      api->getErrorString ? api->getErrorString(status) : "";
  std::string message = (call + " failed: " + name).str();
  if (!description.empty() && description != name)
    message += " (" + description + ")";
  if (!hint.empty())
    message += ": " + hint.str();
  return ::makeError(message);
}

llvm::Expected<std::unique_ptr<HipRuntime>> HipRuntime::load(int device) {
  std::vector<std::string> candidates;
  const char *fromEnvironment = std::getenv("MXFP4_HIP_LIBRARY");
  if (fromEnvironment && *fromEnvironment)
    candidates.push_back(fromEnvironment);
  else
    candidates = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"};

  void *library = nullptr;
  std::string firstError;
  for (const std::string &candidate : candidates) {
    library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library)
      break;
    if (firstError.empty()) {
      const char *error = dlerror();
      firstError = error ? error : "unknown error";
    }
  }
  if (!library)
    return ::makeError("HIP runtime not found: dlopen(" + candidates.front() +
                       "): " + firstError +
                       "; gfx950 kernels need ROCm >= 7.0 (set "
                       "MXFP4_HIP_LIBRARY to its libamdhip64.so)");

  std::unique_ptr<HipRuntime> runtime(new HipRuntime());
  runtime->library = library;
  Api &api = *runtime->api;
  std::string missing;
  auto resolve = [&](auto &pointer, const char *symbol, bool required) {
    dlerror();
    void *address = dlsym(library, symbol);
    if (!address && required && missing.empty())
      missing = symbol;
    pointer =
        reinterpret_cast<std::remove_reference_t<decltype(pointer)>>(address);
  };
  resolve(api.init, "hipInit", true);
  resolve(api.getDeviceCount, "hipGetDeviceCount", true);
  resolve(api.setDevice, "hipSetDevice", true);
  resolve(api.deviceGetName, "hipDeviceGetName", false);
  resolve(api.moduleLoadData, "hipModuleLoadData", true);
  resolve(api.moduleUnload, "hipModuleUnload", true);
  resolve(api.moduleGetFunction, "hipModuleGetFunction", true);
  resolve(api.moduleLaunchKernel, "hipModuleLaunchKernel", true);
  resolve(api.malloc, "hipMalloc", true);
  resolve(api.free, "hipFree", true);
  resolve(api.memcpyHtoD, "hipMemcpyHtoD", true);
  resolve(api.memcpyDtoH, "hipMemcpyDtoH", true);
  resolve(api.memset, "hipMemset", true);
  resolve(api.deviceSynchronize, "hipDeviceSynchronize", true);
  resolve(api.getErrorName, "hipGetErrorName", false);
  resolve(api.getErrorString, "hipGetErrorString", false);
  resolve(api.eventCreate, "hipEventCreate", true);
  resolve(api.eventRecord, "hipEventRecord", true);
  resolve(api.eventSynchronize, "hipEventSynchronize", true);
  resolve(api.eventElapsedTime, "hipEventElapsedTime", true);
  resolve(api.eventDestroy, "hipEventDestroy", true);

  Dl_info info;
  if (api.init && dladdr(reinterpret_cast<void *>(api.init), &info) &&
      info.dli_fname)
    runtime->libraryPath = info.dli_fname;
  else
    runtime->libraryPath = candidates.front();
  if (!missing.empty())
    return ::makeError(runtime->libraryPath + " has no " + missing +
                       ": it is not a HIP runtime, or one older than ROCm "
                       "7.0 (set MXFP4_HIP_LIBRARY to ROCm's libamdhip64.so)");

  static constexpr StringRef kNoDeviceHint =
      "no HIP device; is the amdgpu kernel driver loaded and /dev/kfd "
      "accessible (render/video group)?";
  if (int status = api.init(0)) {
    if (status == hipErrorNoDevice || status == hipErrorInsufficientDriver)
      return runtime->makeError("hipInit", status, kNoDeviceHint);
    return runtime->makeError("hipInit", status);
  }
  int count = 0;
  if (int status = api.getDeviceCount(&count))
    return runtime->makeError("hipGetDeviceCount", status,
                              status == hipErrorNoDevice ? kNoDeviceHint
                                                         : StringRef());
  if (count <= 0)
    return ::makeError(
        "no HIP device: hipGetDeviceCount found 0 devices; is the amdgpu "
        "kernel driver loaded and /dev/kfd accessible (render/video group)?");
  if (device < 0 || device >= count)
    return ::makeError(llvm::formatv("HIP device {0} does not exist ({1} "
                                     "device(s); set HIP_VISIBLE_DEVICES or "
                                     "pick another index)",
                                     device, count)
                           .str());
  if (int status = api.setDevice(device))
    return runtime->makeError(llvm::formatv("hipSetDevice({0})", device).str(),
                              status);
  runtime->device = device;
  runtime->deviceCount = count;
  char name[256] = {0};
  if (api.deviceGetName &&
      api.deviceGetName(name, sizeof(name) - 1, device) == hipSuccess)
    runtime->deviceName = name;
  else
    runtime->deviceName = "HIP device " + std::to_string(device);
  return runtime;
}

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

llvm::Expected<HipModule>
HipRuntime::loadModule(llvm::ArrayRef<uint8_t> codeObject, StringRef name) {
  if (codeObject.size() < 4 || codeObject[0] != 0x7f || codeObject[1] != 'E' ||
      codeObject[2] != 'L' || codeObject[3] != 'F')
    return ::makeError(name + ": not an ELF code object; expected the .hsaco "
                              "that gpu-module-to-binary{format=bin} writes");
  std::vector<uint8_t> image(codeObject.begin(), codeObject.end());
  void *handle = nullptr;
  if (int status = api->moduleLoadData(&handle, image.data())) {
    std::string call = ("hipModuleLoadData(" + name + ")").str();
    if (status == hipErrorNoBinaryForGpu || status == hipErrorInvalidImage ||
        status == hipErrorInvalidKernelFile ||
        status == hipErrorSharedObjectInitFailed)
      return makeError(
          call, status,
          "the device is not a gfx950 (MI350X/MI355X): " + deviceName +
              " (or the code object is not for this device)");
    return makeError(call, status);
  }
  api->images[handle] = std::move(image);
  return HipModule{handle, name.str()};
}

llvm::Error HipRuntime::unloadModule(HipModule &module) {
  if (!module.handle)
    return llvm::Error::success();
  int status = api->moduleUnload(module.handle);
  api->images.erase(module.handle);
  void *handle = module.handle;
  module.handle = nullptr;
  if (status)
    return makeError(
        llvm::formatv("hipModuleUnload({0} at {1})", module.name, handle).str(),
        status);
  return llvm::Error::success();
}

llvm::Expected<HipFunction> HipRuntime::getFunction(const HipModule &module,
                                                    StringRef name) {
  if (!module.handle)
    return ::makeError("cannot look up kernel '" + name +
                       "': the module is not loaded");
  void *handle = nullptr;
  std::string symbol = name.str();
  if (int status =
          api->moduleGetFunction(&handle, module.handle, symbol.c_str()))
    return makeError(
        ("hipModuleGetFunction(" + module.name + ", " + name + ")").str(),
        status,
        status == hipErrorNotFound || status == hipErrorInvalidValue
            ? ("kernel '" + name + "' is not in " + module.name).str()
            : std::string());
  return HipFunction{handle, symbol};
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

llvm::Expected<void *> HipRuntime::allocate(size_t bytes) {
  void *pointer = nullptr;
  if (int status = api->malloc(&pointer, bytes))
    return makeError(llvm::formatv("hipMalloc({0} bytes)", bytes).str(),
                     status);
  return pointer;
}

llvm::Error HipRuntime::deallocate(void *devicePointer) {
  if (int status = api->free(devicePointer))
    return makeError(llvm::formatv("hipFree({0})", devicePointer).str(),
                     status);
  return llvm::Error::success();
}

llvm::Error HipRuntime::copyToDevice(void *devicePointer, const void *host,
                                     size_t bytes) {
  if (int status = api->memcpyHtoD(devicePointer, host, bytes))
    return makeError(llvm::formatv("hipMemcpyHtoD({0} bytes)", bytes).str(),
                     status);
  return llvm::Error::success();
}

llvm::Error HipRuntime::copyToHost(void *host, const void *devicePointer,
                                   size_t bytes) {
  if (int status = api->memcpyDtoH(host, devicePointer, bytes))
    return makeError(llvm::formatv("hipMemcpyDtoH({0} bytes)", bytes).str(),
                     status);
  return llvm::Error::success();
}

llvm::Error HipRuntime::fill(void *devicePointer, uint8_t value, size_t bytes) {
  if (int status = api->memset(devicePointer, value, bytes))
    return makeError(llvm::formatv("hipMemset({0} bytes)", bytes).str(),
                     status);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Launching and timing
//===----------------------------------------------------------------------===//

llvm::Error HipRuntime::launch(const HipFunction &function,
                               std::array<unsigned, 3> grid,
                               std::array<unsigned, 3> block,
                               unsigned dynamicLdsBytes,
                               const KernargLayout &layout,
                               llvm::ArrayRef<KernelArgumentValue> arguments) {
  if (!function.handle)
    return ::makeError("cannot launch '" + function.name +
                       "': no function handle");
  if (!layout.kernelName.empty() && layout.kernelName != function.name)
    return ::makeError("the kernel-argument layout is for '" +
                       layout.kernelName + "' but the kernel launched is '" +
                       function.name + "'");
  for (unsigned i = 0; i < 3; ++i)
    if (grid[i] == 0 || block[i] == 0)
      return ::makeError(
          llvm::formatv("cannot launch '{0}': grid {1}x{2}x{3} and block "
                        "{4}x{5}x{6} must not have a zero dimension",
                        function.name, grid[0], grid[1], grid[2], block[0],
                        block[1], block[2])
              .str());
  auto kernargs = packKernelArguments(layout, arguments);
  if (!kernargs)
    return kernargs.takeError();

  // The packed block goes through `extra`, so the layout is exactly the
  // metadata's; HIP requires a non-null buffer even when it is empty.
  size_t size = kernargs->size();
  uint8_t empty = 0;
  void *buffer = kernargs->empty() ? &empty : kernargs->data();
  void *extra[] = {kLaunchParamBufferPointer, buffer, kLaunchParamBufferSize,
                   &size, kLaunchParamEnd};
  if (int status = api->moduleLaunchKernel(
          function.handle, grid[0], grid[1], grid[2], block[0], block[1],
          block[2], dynamicLdsBytes, /*stream=*/nullptr,
          /*kernelParams=*/nullptr, extra))
    return makeError(
        llvm::formatv("hipModuleLaunchKernel({0}, grid {1}x{2}x{3}, block "
                      "{4}x{5}x{6}, {7} bytes of dynamic LDS)",
                      function.name, grid[0], grid[1], grid[2], block[0],
                      block[1], block[2], dynamicLdsBytes)
            .str(),
        status,
        "check the block against the kernel's .max_flat_workgroup_size and "
        "the LDS against 160 KiB");
  return llvm::Error::success();
}

llvm::Error HipRuntime::synchronize() {
  if (int status = api->deviceSynchronize())
    return makeError("hipDeviceSynchronize", status,
                     "a kernel faulted or the device was lost");
  return llvm::Error::success();
}

llvm::Expected<HipEvent> HipRuntime::createEvent() {
  HipEvent event;
  if (int status = api->eventCreate(&event.handle))
    return makeError("hipEventCreate", status);
  return event;
}

llvm::Error HipRuntime::recordEvent(const HipEvent &event) {
  if (int status = api->eventRecord(event.handle, /*stream=*/nullptr))
    return makeError("hipEventRecord", status);
  return llvm::Error::success();
}

llvm::Expected<float> HipRuntime::getElapsedMilliseconds(const HipEvent &start,
                                                         const HipEvent &stop) {
  if (int status = api->eventSynchronize(stop.handle))
    return makeError("hipEventSynchronize", status);
  float milliseconds = 0;
  if (int status =
          api->eventElapsedTime(&milliseconds, start.handle, stop.handle))
    return makeError("hipEventElapsedTime", status);
  return milliseconds;
}

llvm::Error HipRuntime::destroyEvent(HipEvent &event) {
  if (!event.handle)
    return llvm::Error::success();
  int status = api->eventDestroy(event.handle);
  event.handle = nullptr;
  if (status)
    return makeError("hipEventDestroy", status);
  return llvm::Error::success();
}
