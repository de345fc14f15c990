//===- EmulatedHipTest.cpp - libmxfp4-emulated-hip.so through dlopen ------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The HIP stand-in as runtime/hip sees it: loaded with dlopen, prototypes
// declared here (no HIP headers), a kernels.mlir image loaded, device memory
// allocated, copied, launched on and copied back; and its error codes and
// messages (bad image, unknown kernel, out of memory, emulator errors).
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// A kernel that computes out[i] = in[i] * scale + n over 128 elements of
/// two workgroups, and one that stores past its memref.
const char *kImage = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @mxfp4_kernels {
    gpu.func @scale(%in: memref<128xf32>, %out: memref<128xf32>, %s: f32,
                    %n: i64) kernel {
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %c64 = arith.constant 64 : index
      %base = arith.muli %bid, %c64 : index
      %i = arith.addi %base, %tid : index
      %v = memref.load %in[%i] : memref<128xf32>
      %m = arith.mulf %v, %s : f32
      %nf = arith.sitofp %n : i64 to f32
      %r = arith.addf %m, %nf : f32
      memref.store %r, %out[%i] : memref<128xf32>
      gpu.return
    }
    gpu.func @oob(%out: memref<16xi32>) kernel {
      %tid = gpu.thread_id x
      %c = arith.constant 7 : i32
      memref.store %c, %out[%tid] : memref<16xi32>
      gpu.return
    }
  }
}
)mlir";

class EmulatedHipTest : public ::testing::Test {
protected:
  void SetUp() override {
    handle = dlopen(MXFP4_EMULATED_HIP_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
#define LOAD(name)                                                             \
  name = reinterpret_cast<decltype(name)>(dlsym(handle, #name));               \
  ASSERT_NE(name, nullptr) << #name;
    LOAD(hipInit);
    LOAD(hipGetDeviceCount);
    LOAD(hipSetDevice);
    LOAD(hipDeviceGetName);
    LOAD(hipMemGetInfo);
    LOAD(hipModuleLoadData);
    LOAD(hipModuleUnload);
    LOAD(hipModuleGetFunction);
    LOAD(hipModuleLaunchKernel);
    LOAD(hipMalloc);
    LOAD(hipFree);
    LOAD(hipMemcpyHtoD);
    LOAD(hipMemcpyDtoH);
    LOAD(hipMemcpyDtoD);
    LOAD(hipDeviceSynchronize);
    LOAD(hipEventCreate);
    LOAD(hipEventRecord);
    LOAD(hipEventSynchronize);
    LOAD(hipEventElapsedTime);
    LOAD(hipEventDestroy);
    LOAD(hipGetErrorName);
    LOAD(hipGetErrorString);
    LOAD(mxfp4EmulatedHipLastMessage);
#undef LOAD
    ASSERT_EQ(hipInit(0), 0);
  }
  void TearDown() override {
    unsetenv("MXFP4_EMULATED_HIP_MEMORY");
    // Not dlclosed: the library's state is process-wide anyway.
  }
  std::string message() { return mxfp4EmulatedHipLastMessage(); }

  void *handle = nullptr;
  int (*hipInit)(unsigned);
  int (*hipGetDeviceCount)(int *);
  int (*hipSetDevice)(int);
  int (*hipDeviceGetName)(char *, int, int);
  int (*hipMemGetInfo)(size_t *, size_t *);
  int (*hipModuleLoadData)(void **, const void *);
  int (*hipModuleUnload)(void *);
  int (*hipModuleGetFunction)(void **, void *, const char *);
  int (*hipModuleLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, unsigned, void *, void **,
                               void **);
  int (*hipMalloc)(void **, size_t);
  int (*hipFree)(void *);
  int (*hipMemcpyHtoD)(void *, const void *, size_t);
  int (*hipMemcpyDtoH)(void *, void *, size_t);
  int (*hipMemcpyDtoD)(void *, void *, size_t);
  int (*hipDeviceSynchronize)();
  int (*hipEventCreate)(void **);
  int (*hipEventRecord)(void *, void *);
  int (*hipEventSynchronize)(void *);
  int (*hipEventElapsedTime)(float *, void *, void *);
  int (*hipEventDestroy)(void *);
  const char *(*hipGetErrorName)(int);
  const char *(*hipGetErrorString)(int);
  const char *(*mxfp4EmulatedHipLastMessage)();
};

TEST_F(EmulatedHipTest, DeviceAndMemory) {
  int count = 0;
  ASSERT_EQ(hipGetDeviceCount(&count), 0);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(hipSetDevice(0), 0);
  EXPECT_EQ(hipSetDevice(1), 1);
  char name[64];
  ASSERT_EQ(hipDeviceGetName(name, sizeof(name), 0), 0);
  EXPECT_STREQ(name, "gfx950 emulator");

  size_t freeBytes = 0, totalBytes = 0;
  ASSERT_EQ(hipMemGetInfo(&freeBytes, &totalBytes), 0);
  EXPECT_EQ(totalBytes, size_t(288) << 30);
  void *p = nullptr;
  ASSERT_EQ(hipMalloc(&p, 1000), 0);
  size_t freeAfter = 0;
  ASSERT_EQ(hipMemGetInfo(&freeAfter, &totalBytes), 0);
  EXPECT_EQ(freeBytes - freeAfter, 1000u);
  // Fresh memory is poisoned.
  std::vector<uint8_t> bytes(1000);
  ASSERT_EQ(hipMemcpyDtoH(bytes.data(), p, 1000), 0);
  EXPECT_EQ(bytes[0], 0xCD);
  EXPECT_EQ(bytes[999], 0xCD);
  // A copy past the allocation is refused.
  EXPECT_EQ(hipMemcpyDtoH(bytes.data(), static_cast<char *>(p) + 1, 1000), 1);
  EXPECT_NE(message().find("not inside one device allocation"),
            std::string::npos)
      << message();
  ASSERT_EQ(hipFree(p), 0);
  EXPECT_EQ(hipFree(p), 1);

  setenv("MXFP4_EMULATED_HIP_MEMORY", "4096", 1);
  ASSERT_EQ(hipMemGetInfo(&freeBytes, &totalBytes), 0);
  EXPECT_EQ(totalBytes, 4096u);
  EXPECT_EQ(freeBytes, 4096u);
  void *a = nullptr, *b = nullptr;
  ASSERT_EQ(hipMalloc(&a, 3000), 0);
  EXPECT_EQ(hipMalloc(&b, 2000), 2);
  EXPECT_STREQ(hipGetErrorName(2), "hipErrorOutOfMemory");
  EXPECT_NE(message().find("2000 bytes requested, 1096"), std::string::npos)
      << message();
  ASSERT_EQ(hipFree(a), 0);
  ASSERT_EQ(hipMalloc(&b, 2000), 0);
  ASSERT_EQ(hipFree(b), 0);
}

TEST_F(EmulatedHipTest, LoadCopyLaunchCopyBack) {
  std::string image = kImage; // c_str() is the NUL-terminated image
  void *module = nullptr;
  ASSERT_EQ(hipModuleLoadData(&module, image.c_str()), 0) << message();
  void *function = nullptr;
  ASSERT_EQ(hipModuleGetFunction(&function, module, "scale"), 0) << message();

  std::vector<float> in(128), out(128, 0.0f);
  for (int i = 0; i < 128; ++i)
    in[i] = 0.25f * i - 3.0f;
  void *dIn = nullptr, *dBoth = nullptr;
  ASSERT_EQ(hipMalloc(&dIn, 512), 0);
  // The output is a view 64 bytes into a larger allocation.
  ASSERT_EQ(hipMalloc(&dBoth, 1024), 0);
  void *dOut = static_cast<char *>(dBoth) + 64;
  ASSERT_EQ(hipMemcpyHtoD(dIn, in.data(), 512), 0);
  float s = 3.0f;
  int64_t n = -5;
  void *params[] = {&dIn, &dOut, &s, &n};
  void *start = nullptr, *stop = nullptr;
  ASSERT_EQ(hipEventCreate(&start), 0);
  ASSERT_EQ(hipEventCreate(&stop), 0);
  ASSERT_EQ(hipEventRecord(start, nullptr), 0);
  ASSERT_EQ(hipModuleLaunchKernel(function, 2, 1, 1, 64, 1, 1, 0, nullptr,
                                  params, nullptr),
            0)
      << message();
  ASSERT_EQ(hipEventRecord(stop, nullptr), 0);
  ASSERT_EQ(hipEventSynchronize(stop), 0);
  float ms = -1;
  ASSERT_EQ(hipEventElapsedTime(&ms, start, stop), 0);
  EXPECT_GE(ms, 0.0f);
  ASSERT_EQ(hipDeviceSynchronize(), 0);
  ASSERT_EQ(hipMemcpyDtoH(out.data(), dOut, 512), 0);
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(out[i], in[i] * 3.0f - 5.0f) << i;
  // Bytes around the view are untouched (still poison).
  uint8_t guard[64];
  ASSERT_EQ(hipMemcpyDtoH(guard, dBoth, 64), 0);
  EXPECT_EQ(guard[63], 0xCD);

  // Device-to-device, then a launch that reads the copy.
  ASSERT_EQ(hipMemcpyDtoD(dIn, dOut, 512), 0);
  ASSERT_EQ(hipModuleLaunchKernel(function, 2, 1, 1, 64, 1, 1, 0, nullptr,
                                  params, nullptr),
            0)
      << message();
  ASSERT_EQ(hipMemcpyDtoH(out.data(), dOut, 512), 0);
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(out[i], (in[i] * 3.0f - 5.0f) * 3.0f - 5.0f) << i;

  // A view too close to the end of its allocation for a 512-byte memref.
  void *tooShort = static_cast<char *>(dBoth) + 600;
  void *shortParams[] = {&dIn, &tooShort, &s, &n};
  EXPECT_EQ(hipModuleLaunchKernel(function, 2, 1, 1, 64, 1, 1, 0, nullptr,
                                  shortParams, nullptr),
            719);
  EXPECT_NE(message().find("points at only 424 bytes"), std::string::npos)
      << message();
  // A host pointer is not device memory.
  float *host = in.data();
  void *hostParams[] = {&host, &dOut, &s, &n};
  EXPECT_EQ(hipModuleLaunchKernel(function, 2, 1, 1, 64, 1, 1, 0, nullptr,
                                  hostParams, nullptr),
            719);
  EXPECT_NE(message().find("is not inside a device allocation"),
            std::string::npos)
      << message();
  EXPECT_EQ(hipModuleLaunchKernel(function, 2, 1, 1, 64, 1, 1, 0, nullptr,
                                  params, params),
            1);

  ASSERT_EQ(hipEventDestroy(start), 0);
  ASSERT_EQ(hipEventDestroy(stop), 0);
  ASSERT_EQ(hipFree(dIn), 0);
  ASSERT_EQ(hipFree(dBoth), 0);
  ASSERT_EQ(hipModuleUnload(module), 0);
}

TEST_F(EmulatedHipTest, ErrorsHaveCodesAndMessages) {
  void *module = nullptr;
  EXPECT_EQ(hipModuleLoadData(&module, "module { func.func @f( }"), 200);
  EXPECT_STREQ(hipGetErrorName(200), "hipErrorInvalidImage");
  EXPECT_NE(message().find("cannot parse the kernel module"), std::string::npos)
      << message();
  EXPECT_NE(message().find("kernels.mlir:1:"), std::string::npos) << message();
  EXPECT_EQ(hipModuleLoadData(&module, "\x7f"
                                       "ELF\x02\x01"),
            200);
  EXPECT_NE(message().find("ELF code object"), std::string::npos) << message();

  std::string image = kImage;
  ASSERT_EQ(hipModuleLoadData(&module, image.c_str()), 0) << message();
  void *function = nullptr;
  EXPECT_EQ(hipModuleGetFunction(&function, module, "missing"), 500);
  EXPECT_NE(message().find("no kernel named 'missing'"), std::string::npos)
      << message();
  EXPECT_STREQ(hipGetErrorName(500), "hipErrorNotFound");

  // An emulator error inside a kernel: hipErrorLaunchFailure with the
  // located message, and the process goes on.
  ASSERT_EQ(hipModuleGetFunction(&function, module, "oob"), 0);
  void *d = nullptr;
  ASSERT_EQ(hipMalloc(&d, 256), 0);
  void *params[] = {&d};
  EXPECT_EQ(hipModuleLaunchKernel(function, 1, 1, 1, 64, 1, 1, 0, nullptr,
                                  params, nullptr),
            719);
  EXPECT_STREQ(hipGetErrorName(719), "hipErrorLaunchFailure");
  EXPECT_NE(message().find("kernels.mlir:21:7: gfx950 emulator: "
                           "'memref.store': out-of-bounds global access"),
            std::string::npos)
      << message();
  ASSERT_EQ(hipFree(d), 0);
  ASSERT_EQ(hipModuleUnload(module), 0);
  EXPECT_EQ(hipModuleUnload(module), 1);
  EXPECT_STREQ(hipGetErrorString(0), "no error");
}

} // namespace
