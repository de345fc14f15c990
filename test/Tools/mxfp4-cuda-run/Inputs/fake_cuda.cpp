//===- fake_cuda.cpp - a CUDA driver without a GPU, for tests -------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The driver calls mxfp4-cuda-run makes, with host memory at deterministic
// addresses and no kernels: every allocation, copy, module load and launch
// (with its parameters, sized by the kernel's PTX) is written to
// $MXFP4_FAKE_CUDA_LOG, so two runs that make the same calls write the same
// log. Loaded through the runner's MXFP4_CUDA_DRIVER; the PTX is
// $MXFP4_FAKE_CUDA_PTX. $MXFP4_FAKE_CUDA_FAIL_LAUNCH=N fails the Nth launch;
// $MXFP4_FAKE_CUDA_NAN_DOWNLOAD=N makes the Nth download of 4 bytes (a
// scalar result: a loss, a gradient norm, a learning rate) read a NaN, as
// a diverged step's would. The device has $MXFP4_FAKE_CUDA_MEMORY bytes
// (default 80 GiB), less what is allocated (nothing is freed).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace {

FILE *logFile() {
  static FILE *file = std::fopen(std::getenv("MXFP4_FAKE_CUDA_LOG"), "w");
  return file;
}

uint64_t fnv1a(const void *data, size_t bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < bytes; ++i)
    hash = (hash ^ static_cast<const uint8_t *>(data)[i]) * 0x100000001b3ull;
  return hash;
}

std::map<uint64_t, std::vector<char>> blocks; // by device address
uint64_t nextAddress = 0x10000000;

/// The host bytes behind [address, address + bytes), or null.
char *find(uint64_t address, size_t bytes) {
  auto it = blocks.upper_bound(address);
  if (it == blocks.begin())
    return nullptr;
  --it;
  if (address + bytes > it->first + it->second.size())
    return nullptr;
  return it->second.data() + (address - it->first);
}

/// Each kernel's parameter sizes, from the PTX's `.entry NAME(` lists.
std::map<std::string, std::vector<int>> readParams() {
  std::map<std::string, std::vector<int>> params;
  std::ifstream ptx(std::getenv("MXFP4_FAKE_CUDA_PTX"));
  std::vector<int> *current = nullptr;
  for (std::string line; std::getline(ptx, line);) {
    size_t entry = line.find(".entry ");
    if (entry != std::string::npos) {
      std::string name = line.substr(entry + 7);
      current = &params[name.substr(0, name.find('('))];
    } else if (current && line.find(".param .") != std::string::npos) {
      std::string type = line.substr(line.find(".param .") + 8);
      current->push_back(std::atoi(type.c_str() + 1) / 8);
    } else if (line.rfind(")", 0) == 0) {
      current = nullptr;
    }
  }
  return params;
}

} // namespace

extern "C" {

int cuInit(unsigned) { return logFile() ? 0 : 1; }
int cuDeviceGetCount(int *count) {
  *count = 1;
  return 0;
}
int cuDeviceGet(int *device, int) {
  *device = 0;
  return 0;
}
int cuDeviceGetName(char *name, int length, int) {
  std::snprintf(name, length, "fake");
  return 0;
}
int cuDevicePrimaryCtxRetain(void **context, int) {
  static int token;
  *context = &token;
  return 0;
}
int cuCtxSetCurrent(void *) { return 0; }
int cuCtxSynchronize() { return 0; }
int cuGetErrorName(int, const char **name) {
  *name = "CUDA_ERROR_FAKE";
  return 0;
}

/// Logs the cubin's size and hash: its ELF program or section headers end
/// it.
int cuModuleLoadData(void **module, const void *image) {
  const char *elf = static_cast<const char *>(image);
  auto end = [&](int offsetAt, int sizeAt, int countAt) {
    uint64_t offset;
    uint16_t size, count;
    std::memcpy(&offset, elf + offsetAt, 8);
    std::memcpy(&size, elf + sizeAt, 2);
    std::memcpy(&count, elf + countAt, 2);
    return offset + size_t(size) * count;
  };
  size_t bytes = std::max(end(0x20, 0x36, 0x38), end(0x28, 0x3a, 0x3c));
  std::fprintf(logFile(), "module %zu bytes, hash %016llx\n", bytes,
               (unsigned long long)fnv1a(image, bytes));
  static int token;
  *module = &token;
  return 0;
}

int cuModuleGetFunction(void **function, void *, const char *name) {
  static std::map<std::string, std::vector<int>> params = readParams();
  auto it = params.find(name);
  if (it == params.end())
    return 500; // CUDA_ERROR_NOT_FOUND
  *function = &*it;
  return 0;
}

int cuMemAlloc_v2(uint64_t *address, size_t bytes) {
  *address = nextAddress;
  blocks[nextAddress].assign(bytes, 0);
  nextAddress += (bytes + 0xfff) / 0x1000 * 0x1000;
  std::fprintf(logFile(), "alloc %zu at %llx\n", bytes,
               (unsigned long long)*address);
  return 0;
}
int cuMemFree_v2(uint64_t) { return 0; }
int cuMemGetInfo_v2(size_t *freeBytes, size_t *totalBytes) {
  const char *memory = std::getenv("MXFP4_FAKE_CUDA_MEMORY");
  *totalBytes = memory ? std::strtoull(memory, nullptr, 10) : 80ull << 30;
  size_t used = 0;
  for (const auto &[address, block] : blocks)
    used += block.size();
  *freeBytes = used < *totalBytes ? *totalBytes - used : 0;
  return 0;
}

int cuMemcpyHtoD_v2(uint64_t to, const void *from, size_t bytes) {
  char *device = find(to, bytes);
  if (!device)
    return 1;
  std::memcpy(device, from, bytes);
  std::fprintf(logFile(), "upload %zu to %llx, hash %016llx\n", bytes,
               (unsigned long long)to, (unsigned long long)fnv1a(from, bytes));
  return 0;
}
int cuMemcpyDtoH_v2(void *to, uint64_t from, size_t bytes) {
  const char *device = find(from, bytes);
  if (!device)
    return 1;
  std::memcpy(to, device, bytes);
  static int scalars = 0;
  const char *nan = std::getenv("MXFP4_FAKE_CUDA_NAN_DOWNLOAD");
  if (bytes == 4 && nan && ++scalars == std::atoi(nan)) {
    float value = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(to, &value, 4);
  }
  std::fprintf(logFile(), "download %zu from %llx\n", bytes,
               (unsigned long long)from);
  return 0;
}
int cuMemcpyDtoD_v2(uint64_t to, uint64_t from, size_t bytes) {
  char *target = find(to, bytes), *source = find(from, bytes);
  if (!target || !source)
    return 1;
  std::memcpy(target, source, bytes);
  return 0;
}

int cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                   unsigned bx, unsigned by, unsigned bz, unsigned shared,
                   void *, void **params, void **) {
  // $MXFP4_FAKE_CUDA_FAIL_LAUNCH=N: the Nth launch fails.
  static int launches = 0;
  const char *failing = std::getenv("MXFP4_FAKE_CUDA_FAIL_LAUNCH");
  if (failing && ++launches == std::atoi(failing))
    return 700; // CUDA_ERROR_ILLEGAL_ADDRESS
  auto &kernel =
      *static_cast<std::pair<const std::string, std::vector<int>> *>(function);
  std::fprintf(logFile(),
               "launch %s %u %u %u %u %u %u %u:", kernel.first.c_str(), gx, gy,
               gz, bx, by, bz, shared);
  for (size_t i = 0; i < kernel.second.size(); ++i) {
    uint64_t value = 0;
    std::memcpy(&value, params[i], kernel.second[i]);
    std::fprintf(logFile(), " %llx", (unsigned long long)value);
  }
  std::fprintf(logFile(), "\n");
  return 0;
}

int cuFuncSetAttribute(void *function, int attribute, int value) {
  auto &kernel =
      *static_cast<std::pair<const std::string, std::vector<int>> *>(function);
  std::fprintf(logFile(), "attribute %s %d %d\n", kernel.first.c_str(),
               attribute, value);
  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES up to sm_90's 227 KiB.
  return attribute == 8 && value <= 232448 ? 0 : 1;
}

/// Logs the map's fields and writes them, in the driver's order, into the
/// 128 bytes: the same calls give the same bytes. Refuses what the driver
/// refuses that the plan reader would not catch: an unaligned address.
int cuTensorMapEncodeTiled(void *map, int type, unsigned rank, void *address,
                           const unsigned long long *dims,
                           const unsigned long long *strides,
                           const unsigned *box, const unsigned *elementStrides,
                           int interleave, int swizzle, int l2, int oob) {
  if (rank < 1 || rank > 5 || reinterpret_cast<uintptr_t>(address) % 16)
    return 1; // CUDA_ERROR_INVALID_VALUE
  std::fprintf(logFile(), "tensormap type %d rank %u address %llx dims", type,
               rank, (unsigned long long)reinterpret_cast<uintptr_t>(address));
  uint64_t words[16] = {};
  words[0] = reinterpret_cast<uintptr_t>(address);
  for (unsigned i = 0; i < rank; ++i) {
    std::fprintf(logFile(), " %llu", dims[i]);
    words[1 + i] = dims[i];
  }
  std::fprintf(logFile(), " strides");
  for (unsigned i = 0; i + 1 < rank; ++i) {
    std::fprintf(logFile(), " %llu", strides[i]);
    words[6 + i] = strides[i];
  }
  std::fprintf(logFile(), " box");
  for (unsigned i = 0; i < rank; ++i) {
    std::fprintf(logFile(), " %u", box[i]);
    words[10 + i / 2] |= uint64_t(box[i]) << (32 * (i % 2));
  }
  std::fprintf(logFile(), " element-strides");
  for (unsigned i = 0; i < rank; ++i)
    std::fprintf(logFile(), " %u", elementStrides[i]);
  std::fprintf(logFile(), " interleave %d swizzle %d l2 %d oob %d\n",
               interleave, swizzle, l2, oob);
  words[13] = uint64_t(type) | uint64_t(swizzle) << 8 | uint64_t(l2) << 16;
  std::memcpy(map, words, sizeof(words));
  return 0;
}

int cuEventCreate(void **event, unsigned) {
  static int token;
  *event = &token;
  return 0;
}
int cuEventRecord(void *, void *) { return 0; }
int cuEventSynchronize(void *) { return 0; }
int cuEventElapsedTime(float *ms, void *, void *) {
  *ms = 1.0f;
  return 0;
}
int cuEventDestroy_v2(void *) { return 0; }

} // extern "C"
