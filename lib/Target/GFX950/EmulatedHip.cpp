//===- EmulatedHip.cpp - a HIP stand-in that runs launches on the emulator ===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// libmxfp4-emulated-hip.so: the subset of the HIP C API that runtime/hip
// uses (runtime/hip/HipDevice.cpp), implemented on the host so the
// gfx950 runtime path runs in CI without ROCm or an AMD GPU. Its "code
// object" is the kernel IR text `mxfp4-run compile --target=gfx950` writes as
// kernels.mlir; every hipModuleLaunchKernel runs that kernel on the gfx950
// emulator (EmulatedKernelModule) directly over the device allocations.
//
// Device memory is host memory, poison-filled (0xCD) like fresh device
// memory; its size is $MXFP4_EMULATED_HIP_MEMORY bytes, else 288 GiB (one
// MI355X). It has $MXFP4_EMULATED_HIP_DEVICES devices (default 1), all the
// same: a data-parallel job's ranks, one process each, each open their own.
// Everything runs synchronously, so events record host time.
// Every failure keeps a message for mxfp4EmulatedHipLastMessage(); emulator
// errors (located at the kernel's ops) come back as hipErrorLaunchFailure,
// never as an abort. Only the C entry points are exported (EmulatedHip.map).
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Target/GFX950/Emulator.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

using namespace mlir::mxfp4::gfx950;

namespace {

enum : int {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorOutOfMemory = 2,
  hipErrorNoDevice = 100,
  hipErrorInvalidImage = 200,
  hipErrorNoBinaryForGpu = 209,
  hipErrorNotFound = 500,
  hipErrorLaunchFailure = 719,
};

/// One MI355X's HBM.
constexpr uint64_t kDefaultMemoryBytes = 288ull << 30;

struct Function;

/// A loaded image.
struct Module {
  std::unique_ptr<EmulatedKernelModule> kernels;
  std::map<std::string, std::unique_ptr<Function>> functions;
};

struct Function {
  Module *module;
  const EmulatedKernel *kernel;
};

struct Event {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};

struct Allocation {
  uint8_t *data;
  size_t bytes;
};

/// All state; every entry point holds `mutex`.
struct State {
  std::mutex mutex;
  std::string lastMessage;
  /// By start address.
  std::map<uintptr_t, Allocation> allocations;
  uint64_t allocatedBytes = 0;
  std::set<Module *> modules;
  std::set<Function *> functions;
  std::set<Event *> events;
};

State &state() {
  static State *s = new State(); // never destroyed: callers may outlive us
  return *s;
}

/// Records `message` and returns `error`.
int fail(State &s, int error, const llvm::Twine &message) {
  s.lastMessage = message.str();
  return error;
}

uint64_t getTotalBytes() {
  if (const char *env = std::getenv("MXFP4_EMULATED_HIP_MEMORY")) {
    char *end = nullptr;
    unsigned long long value = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0')
      return value;
  }
  return kDefaultMemoryBytes;
}

/// The number of devices the stand-in reports.
int getDeviceCount() {
  if (const char *env = std::getenv("MXFP4_EMULATED_HIP_DEVICES")) {
    char *end = nullptr;
    long value = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && value >= 1 && value <= 1024)
      return int(value);
  }
  return 1;
}

/// Returns the allocation holding [pointer, pointer + bytes), or null.
const Allocation *findAllocation(State &s, const void *pointer, size_t bytes) {
  auto address = reinterpret_cast<uintptr_t>(pointer);
  auto it = s.allocations.upper_bound(address);
  if (it == s.allocations.begin())
    return nullptr;
  --it;
  uintptr_t offset = address - it->first;
  if (offset > it->second.bytes || bytes > it->second.bytes - offset)
    return nullptr;
  return &it->second;
}

std::string describePointer(const void *pointer) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", pointer);
  return text;
}

int copy(State &s, void *to, const void *from, size_t bytes, bool toDevice,
         bool fromDevice, const char *name) {
  if (bytes == 0)
    return hipSuccess;
  if (!to || !from)
    return fail(s, hipErrorInvalidValue, llvm::Twine(name) + ": null pointer");
  if (toDevice && !findAllocation(s, to, bytes))
    return fail(s, hipErrorInvalidValue,
                llvm::Twine(name) + ": " + llvm::Twine(bytes) +
                    " bytes at destination " + describePointer(to) +
                    " are not inside one device allocation");
  if (fromDevice && !findAllocation(s, from, bytes))
    return fail(s, hipErrorInvalidValue,
                llvm::Twine(name) + ": " + llvm::Twine(bytes) +
                    " bytes at source " + describePointer(from) +
                    " are not inside one device allocation");
  std::memmove(to, from, bytes);
  return hipSuccess;
}

} // namespace

extern "C" {

int hipInit(unsigned flags) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (flags != 0)
    return fail(s, hipErrorInvalidValue, "hipInit: flags must be 0");
  return hipSuccess;
}

int hipGetDeviceCount(int *count) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!count)
    return fail(s, hipErrorInvalidValue, "hipGetDeviceCount: null pointer");
  *count = getDeviceCount();
  return hipSuccess;
}

int hipSetDevice(int device) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (device < 0 || device >= getDeviceCount())
    return fail(s, hipErrorInvalidValue,
                "hipSetDevice: the emulator has " +
                    llvm::Twine(getDeviceCount()) +
                    " devices (MXFP4_EMULATED_HIP_DEVICES), not device " +
                    llvm::Twine(device));
  return hipSuccess;
}

int hipDeviceGetName(char *name, int length, int device) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!name || length <= 0 || device < 0 || device >= getDeviceCount())
    return fail(s, hipErrorInvalidValue, "hipDeviceGetName: bad arguments");
  const char *text = "gfx950 emulator";
  std::strncpy(name, text, static_cast<size_t>(length));
  name[length - 1] = '\0';
  return hipSuccess;
}

int hipMemGetInfo(size_t *freeBytes, size_t *totalBytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!freeBytes || !totalBytes)
    return fail(s, hipErrorInvalidValue, "hipMemGetInfo: null pointer");
  uint64_t total = getTotalBytes();
  *totalBytes = static_cast<size_t>(total);
  *freeBytes = static_cast<size_t>(
      total > s.allocatedBytes ? total - s.allocatedBytes : 0);
  return hipSuccess;
}

int hipMalloc(void **pointer, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!pointer)
    return fail(s, hipErrorInvalidValue, "hipMalloc: null pointer");
  *pointer = nullptr;
  if (bytes == 0)
    return hipSuccess;
  uint64_t total = getTotalBytes();
  uint64_t free = total > s.allocatedBytes ? total - s.allocatedBytes : 0;
  if (bytes > free)
    return fail(s, hipErrorOutOfMemory,
                "hipMalloc: " + llvm::Twine(bytes) + " bytes requested, " +
                    llvm::Twine(free) + " of the emulated device's " +
                    llvm::Twine(total) + " free");
  auto *data = static_cast<uint8_t *>(std::malloc(bytes));
  if (!data)
    return fail(s, hipErrorOutOfMemory,
                "hipMalloc: the host cannot allocate " + llvm::Twine(bytes) +
                    " bytes");
  // Device memory is not zeroed: poison it so reads of unwritten bytes show.
  std::memset(data, 0xCD, bytes);
  s.allocations[reinterpret_cast<uintptr_t>(data)] = {data, bytes};
  s.allocatedBytes += bytes;
  *pointer = data;
  return hipSuccess;
}

int hipFree(void *pointer) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!pointer)
    return hipSuccess;
  auto it = s.allocations.find(reinterpret_cast<uintptr_t>(pointer));
  if (it == s.allocations.end())
    return fail(s, hipErrorInvalidValue,
                "hipFree: " + describePointer(pointer) +
                    " is not a live device allocation");
  s.allocatedBytes -= it->second.bytes;
  std::free(it->second.data);
  s.allocations.erase(it);
  return hipSuccess;
}

int hipMemcpyHtoD(void *to, const void *from, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return copy(s, to, from, bytes, true, false, "hipMemcpyHtoD");
}

int hipMemcpyDtoH(void *to, void *from, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return copy(s, to, from, bytes, false, true, "hipMemcpyDtoH");
}

int hipMemcpyDtoD(void *to, void *from, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return copy(s, to, from, bytes, true, true, "hipMemcpyDtoD");
}

int hipDeviceSynchronize(void) { return hipSuccess; }

int hipModuleLoadData(void **module, const void *image) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!module || !image)
    return fail(s, hipErrorInvalidValue, "hipModuleLoadData: null pointer");
  *module = nullptr;
  llvm::StringRef text(static_cast<const char *>(image));
  if (text.starts_with("\x7f"
                       "ELF"))
    return fail(s, hipErrorInvalidImage,
                "hipModuleLoadData: the image is an ELF code object; the "
                "gfx950 emulator takes the kernel IR (kernels.mlir)");
  llvm::Expected<std::unique_ptr<EmulatedKernelModule>> kernels =
      EmulatedKernelModule::parse(text, "kernels.mlir");
  if (!kernels)
    return fail(s, hipErrorInvalidImage, llvm::toString(kernels.takeError()));
  auto *loaded = new Module();
  loaded->kernels = std::move(*kernels);
  s.modules.insert(loaded);
  *module = loaded;
  return hipSuccess;
}

int hipModuleUnload(void *module) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto *loaded = static_cast<Module *>(module);
  if (!s.modules.count(loaded))
    return fail(s, hipErrorInvalidValue,
                "hipModuleUnload: not a loaded module");
  for (auto &entry : loaded->functions)
    s.functions.erase(entry.second.get());
  s.modules.erase(loaded);
  delete loaded;
  return hipSuccess;
}

int hipModuleGetFunction(void **function, void *module, const char *name) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto *loaded = static_cast<Module *>(module);
  if (!function || !name || !s.modules.count(loaded))
    return fail(s, hipErrorInvalidValue, "hipModuleGetFunction: bad arguments");
  auto it = loaded->functions.find(name);
  if (it != loaded->functions.end()) {
    *function = it->second.get();
    return hipSuccess;
  }
  llvm::Expected<const EmulatedKernel *> kernel =
      loaded->kernels->getKernel(name);
  if (!kernel)
    return fail(s, hipErrorNotFound, llvm::toString(kernel.takeError()));
  auto entry = std::make_unique<Function>(Function{loaded, *kernel});
  *function = entry.get();
  s.functions.insert(entry.get());
  loaded->functions[name] = std::move(entry);
  return hipSuccess;
}

int hipModuleLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned by, unsigned bz,
                          unsigned sharedBytes, void *stream,
                          void **kernelParams, void **extra) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto *entry = static_cast<Function *>(function);
  if (!s.functions.count(entry))
    return fail(s, hipErrorInvalidValue,
                "hipModuleLaunchKernel: not a function of a loaded module");
  const EmulatedKernel &kernel = *entry->kernel;
  if (extra)
    return fail(s, hipErrorInvalidValue,
                "hipModuleLaunchKernel: 'extra' is not supported by the "
                "emulator; pass kernelParams");
  if (stream)
    return fail(s, hipErrorInvalidValue,
                "hipModuleLaunchKernel: only the null stream exists");
  if (sharedBytes != 0)
    return fail(s, hipErrorInvalidValue,
                "hipModuleLaunchKernel: dynamic shared memory is not "
                "supported (kernel '" +
                    kernel.getName() + "')");
  llvm::ArrayRef<EmulatedKernelParam> params = kernel.getParams();
  if (!params.empty() && !kernelParams)
    return fail(s, hipErrorInvalidValue,
                "hipModuleLaunchKernel: kernel '" + kernel.getName() +
                    "' takes " + llvm::Twine(params.size()) +
                    " arguments but kernelParams is null");
  std::vector<EmulatedKernelArg> args(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (!kernelParams[i])
      return fail(s, hipErrorInvalidValue,
                  "hipModuleLaunchKernel: kernelParams[" + llvm::Twine(i) +
                      "] of kernel '" + kernel.getName() + "' is null");
    if (!params[i].isMemRef) {
      uint64_t bits = 0;
      std::memcpy(&bits, kernelParams[i], static_cast<size_t>(params[i].bytes));
      args[i].bits = bits;
      continue;
    }
    void *pointer;
    std::memcpy(&pointer, kernelParams[i], sizeof(pointer));
    auto address = reinterpret_cast<uintptr_t>(pointer);
    const Allocation *allocation = findAllocation(s, pointer, 0);
    if (!allocation || address == reinterpret_cast<uintptr_t>(
                                      allocation->data + allocation->bytes))
      return fail(s, hipErrorLaunchFailure,
                  "hipModuleLaunchKernel: argument " + llvm::Twine(i) +
                      " of kernel '" + kernel.getName() + "' (" +
                      describePointer(pointer) +
                      ") is not inside a device allocation");
    args[i].pointer = pointer;
    args[i].bytes = static_cast<int64_t>(
        allocation->bytes -
        (address - reinterpret_cast<uintptr_t>(allocation->data)));
  }
  int64_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  if (llvm::Error error =
          entry->module->kernels->launch(kernel, grid, block, args))
    return fail(s, hipErrorLaunchFailure, llvm::toString(std::move(error)));
  return hipSuccess;
}

int hipEventCreate(void **event) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!event)
    return fail(s, hipErrorInvalidValue, "hipEventCreate: null pointer");
  auto *created = new Event();
  s.events.insert(created);
  *event = created;
  return hipSuccess;
}

int hipEventRecord(void *event, void *stream) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto *e = static_cast<Event *>(event);
  if (!s.events.count(e) || stream)
    return fail(s, hipErrorInvalidValue, "hipEventRecord: bad arguments");
  e->time = std::chrono::steady_clock::now();
  e->recorded = true;
  return hipSuccess;
}

int hipEventSynchronize(void *event) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.events.count(static_cast<Event *>(event)))
    return fail(s, hipErrorInvalidValue, "hipEventSynchronize: not an event");
  return hipSuccess;
}

int hipEventElapsedTime(float *ms, void *start, void *stop) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto *a = static_cast<Event *>(start), *b = static_cast<Event *>(stop);
  if (!ms || !s.events.count(a) || !s.events.count(b))
    return fail(s, hipErrorInvalidValue, "hipEventElapsedTime: bad arguments");
  if (!a->recorded || !b->recorded)
    return fail(s, hipErrorInvalidValue,
                "hipEventElapsedTime: an event was never recorded");
  *ms = std::chrono::duration<float, std::milli>(b->time - a->time).count();
  return hipSuccess;
}

int hipEventDestroy(void *event) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto *e = static_cast<Event *>(event);
  if (!s.events.count(e))
    return fail(s, hipErrorInvalidValue, "hipEventDestroy: not an event");
  s.events.erase(e);
  delete e;
  return hipSuccess;
}

const char *hipGetErrorName(int error) {
  switch (error) {
  case hipSuccess:
    return "hipSuccess";
  case hipErrorInvalidValue:
    return "hipErrorInvalidValue";
  case hipErrorOutOfMemory:
    return "hipErrorOutOfMemory";
  case hipErrorNoDevice:
    return "hipErrorNoDevice";
  case hipErrorInvalidImage:
    return "hipErrorInvalidImage";
  case hipErrorNoBinaryForGpu:
    return "hipErrorNoBinaryForGpu";
  case hipErrorNotFound:
    return "hipErrorNotFound";
  case hipErrorLaunchFailure:
    return "hipErrorLaunchFailure";
  default:
    return "hipErrorUnknown";
  }
}

const char *hipGetErrorString(int error) {
  switch (error) {
  case hipSuccess:
    return "no error";
  case hipErrorInvalidValue:
    return "invalid argument";
  case hipErrorOutOfMemory:
    return "out of memory";
  case hipErrorNoDevice:
    return "no ROCm-capable device is detected";
  case hipErrorInvalidImage:
    return "device kernel image is invalid";
  case hipErrorNoBinaryForGpu:
    return "no kernel image is available for execution on the device";
  case hipErrorNotFound:
    return "named symbol not found";
  case hipErrorLaunchFailure:
    return "unspecified launch failure";
  default:
    return "unknown error";
  }
}

const char *mxfp4EmulatedHipLastMessage(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.lastMessage.c_str();
}

} // extern "C"
