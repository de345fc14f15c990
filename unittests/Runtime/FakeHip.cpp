//===- FakeHip.cpp - a stand-in for libamdhip64.so in tests ---------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Implements the HIP entry points HipRuntime resolves, on the host: device
// memory is host memory, hipModuleLoadData accepts only AMDGPU ELF images
// whose e_flags name gfx950 (else hipErrorNoBinaryForGpu, as a real runtime
// does on another GPU), hipModuleGetFunction looks the kernel up in the
// ELF symbol table, and hipModuleLaunchKernel records its configuration and
// kernarg block for fakeHipGetLastLaunch. The environment variable
// FAKE_HIP_DEVICE_COUNT sets the number of devices (default 1),
// FAKE_HIP_DEVICE_NAME the name hipDeviceGetName gives (default "Fake HIP
// device") and FAKE_HIP_MEMORY the bytes hipMemGetInfo reports free and in
// all (default 64 GiB).
//
//===----------------------------------------------------------------------===//

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <set>
#include <string>
#include <vector>

namespace {
constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kNoDevice = 100;
constexpr int kInvalidDevice = 101;
constexpr int kInvalidImage = 200;
constexpr int kNoBinaryForGpu = 209;
constexpr int kNotFound = 500;
constexpr unsigned kEmAmdgpu = 224;
constexpr unsigned kMachGfx950 = 0x04f;

struct Module {
  const uint8_t *image;
  std::set<void *> functions;
};

struct Function {
  Module *module;
  std::string name;
};

struct Launch {
  std::string name;
  unsigned grid[3] = {0, 0, 0};
  unsigned block[3] = {0, 0, 0};
  unsigned sharedMemBytes = 0;
  std::vector<uint8_t> kernargs;
  bool usedKernelParams = false;
};

Launch lastLaunch;
int launchCount = 0;

int deviceCount() {
  const char *value = std::getenv("FAKE_HIP_DEVICE_COUNT");
  return value ? std::atoi(value) : 1;
}

/// Whether the ELF image's symbol table defines `name` (the kernel symbol).
bool hasSymbol(const uint8_t *image, const char *name) {
  const auto *header = reinterpret_cast<const Elf64_Ehdr *>(image);
  const auto *sections =
      reinterpret_cast<const Elf64_Shdr *>(image + header->e_shoff);
  for (unsigned i = 0; i < header->e_shnum; ++i) {
    const Elf64_Shdr &table = sections[i];
    if (table.sh_type != SHT_SYMTAB && table.sh_type != SHT_DYNSYM)
      continue;
    const char *strings = reinterpret_cast<const char *>(
        image + sections[table.sh_link].sh_offset);
    const auto *symbols =
        reinterpret_cast<const Elf64_Sym *>(image + table.sh_offset);
    for (size_t j = 0; j < table.sh_size / sizeof(Elf64_Sym); ++j)
      if (ELF64_ST_TYPE(symbols[j].st_info) == STT_FUNC &&
          std::strcmp(strings + symbols[j].st_name, name) == 0)
        return true;
  }
  return false;
}
} // namespace

extern "C" {

int hipInit(unsigned) { return kSuccess; }

int hipGetDeviceCount(int *count) {
  *count = deviceCount();
  return *count > 0 ? kSuccess : kNoDevice;
}

int hipSetDevice(int device) {
  return device >= 0 && device < deviceCount() ? kSuccess : kInvalidDevice;
}

int hipDeviceGetName(char *name, int length, int) {
  const char *value = std::getenv("FAKE_HIP_DEVICE_NAME");
  std::strncpy(name, value ? value : "Fake HIP device", length);
  return kSuccess;
}

int hipMemGetInfo(size_t *freeBytes, size_t *totalBytes) {
  const char *value = std::getenv("FAKE_HIP_MEMORY");
  *totalBytes = value ? std::strtoull(value, nullptr, 10) : size_t(64) << 30;
  *freeBytes = *totalBytes;
  return kSuccess;
}

const char *hipGetErrorName(int status) {
  switch (status) {
  case kSuccess:
    return "hipSuccess";
  case kInvalidValue:
    return "hipErrorInvalidValue";
  case kNoDevice:
    return "hipErrorNoDevice";
  case kInvalidDevice:
    return "hipErrorInvalidDevice";
  case kInvalidImage:
    return "hipErrorInvalidImage";
  case kNoBinaryForGpu:
    return "hipErrorNoBinaryForGpu";
  case kNotFound:
    return "hipErrorNotFound";
  default:
    return "hipErrorUnknown";
  }
}

const char *hipGetErrorString(int status) {
  return status == kNoBinaryForGpu ? "no kernel image is available for "
                                     "execution on the device"
                                   : hipGetErrorName(status);
}

int hipModuleLoadData(void **module, const void *image) {
  const auto *header = static_cast<const Elf64_Ehdr *>(image);
  if (!image || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
      header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_machine != kEmAmdgpu)
    return kInvalidImage;
  if ((header->e_flags & 0xff) != kMachGfx950)
    return kNoBinaryForGpu;
  *module = new Module{static_cast<const uint8_t *>(image), {}};
  return kSuccess;
}

int hipModuleUnload(void *module) {
  auto *m = static_cast<Module *>(module);
  for (void *function : m->functions)
    delete static_cast<Function *>(function);
  delete m;
  return kSuccess;
}

int hipModuleGetFunction(void **function, void *module, const char *name) {
  auto *m = static_cast<Module *>(module);
  if (!m || !name)
    return kInvalidValue;
  if (!hasSymbol(m->image, name))
    return kNotFound;
  *function = new Function{m, name};
  m->functions.insert(*function);
  return kSuccess;
}

int hipModuleLaunchKernel(void *function, unsigned gridX, unsigned gridY,
                          unsigned gridZ, unsigned blockX, unsigned blockY,
                          unsigned blockZ, unsigned sharedMemBytes, void *,
                          void **kernelParams, void **extra) {
  if (!function)
    return kInvalidValue;
  Launch launch;
  launch.name = static_cast<Function *>(function)->name;
  launch.grid[0] = gridX;
  launch.grid[1] = gridY;
  launch.grid[2] = gridZ;
  launch.block[0] = blockX;
  launch.block[1] = blockY;
  launch.block[2] = blockZ;
  launch.sharedMemBytes = sharedMemBytes;
  launch.usedKernelParams = kernelParams != nullptr;
  if (extra) {
    if (extra[0] != reinterpret_cast<void *>(1) ||
        extra[2] != reinterpret_cast<void *>(2) ||
        extra[4] != reinterpret_cast<void *>(3) || !extra[1])
      return kInvalidValue;
    size_t size = *static_cast<size_t *>(extra[3]);
    const auto *bytes = static_cast<const uint8_t *>(extra[1]);
    launch.kernargs.assign(bytes, bytes + size);
  }
  lastLaunch = launch;
  ++launchCount;
  return kSuccess;
}

int hipMalloc(void **pointer, size_t bytes) {
  *pointer = std::malloc(bytes ? bytes : 1);
  return *pointer ? kSuccess : 2; // hipErrorOutOfMemory
}

int hipFree(void *pointer) {
  std::free(pointer);
  return kSuccess;
}

int hipMemcpyHtoD(void *device, const void *host, size_t bytes) {
  std::memcpy(device, host, bytes);
  return kSuccess;
}

int hipMemcpyDtoH(void *host, const void *device, size_t bytes) {
  std::memcpy(host, device, bytes);
  return kSuccess;
}

int hipMemcpyDtoD(void *to, void *from, size_t bytes) {
  std::memmove(to, from, bytes);
  return kSuccess;
}

int hipMemset(void *device, int value, size_t bytes) {
  std::memset(device, value, bytes);
  return kSuccess;
}

int hipDeviceSynchronize() { return kSuccess; }

int hipEventCreate(void **event) {
  *event = new std::chrono::steady_clock::time_point();
  return kSuccess;
}

int hipEventRecord(void *event, void *) {
  *static_cast<std::chrono::steady_clock::time_point *>(event) =
      std::chrono::steady_clock::now();
  return kSuccess;
}

int hipEventSynchronize(void *) { return kSuccess; }

int hipEventElapsedTime(float *milliseconds, void *start, void *stop) {
  using TimePoint = std::chrono::steady_clock::time_point;
  *milliseconds =
      std::chrono::duration<float, std::milli>(*static_cast<TimePoint *>(stop) -
                                               *static_cast<TimePoint *>(start))
          .count();
  return kSuccess;
}

int hipEventDestroy(void *event) {
  delete static_cast<std::chrono::steady_clock::time_point *>(event);
  return kSuccess;
}

/// Test hooks.
int fakeHipGetLaunchCount() { return launchCount; }

/// Copies the last launch's configuration; `kernargs` receives up to
/// `*kernargSize` bytes and `*kernargSize` is set to the recorded size.
int fakeHipGetLastLaunch(char *name, size_t nameLength, unsigned grid[3],
                         unsigned block[3], unsigned *sharedMemBytes,
                         uint8_t *kernargs, size_t *kernargSize,
                         int *usedKernelParams) {
  std::strncpy(name, lastLaunch.name.c_str(), nameLength);
  for (int i = 0; i < 3; ++i) {
    grid[i] = lastLaunch.grid[i];
    block[i] = lastLaunch.block[i];
  }
  *sharedMemBytes = lastLaunch.sharedMemBytes;
  std::memcpy(kernargs, lastLaunch.kernargs.data(),
              std::min(*kernargSize, lastLaunch.kernargs.size()));
  *kernargSize = lastLaunch.kernargs.size();
  *usedKernelParams = lastLaunch.usedKernelParams;
  return launchCount;
}

} // extern "C"
