//===- HipRuntimeTest.cpp - the HIP launcher against a fake runtime -------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// HipRuntime is pointed (through $MXFP4_HIP_LIBRARY) at the fake
// libamdhip64 built next to this test (FakeHip.cpp), which records every
// launch; the code object is the real gfx950 .hsaco of the kernel-report
// tests.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Runtime/HipRuntime.h"
#include "mxfp4/Target/GFX950/CodeObject.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstdlib>
#include <dlfcn.h>
#include <gtest/gtest.h>

using namespace mlir::mxfp4;
using llvm::StringRef;

namespace {

/// Sets an environment variable for the lifetime of the object.
class ScopedEnvironment {
public:
  ScopedEnvironment(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      previous = old;
    if (value)
      setenv(name, value, /*overwrite=*/1);
    else
      unsetenv(name);
  }
  ~ScopedEnvironment() {
    if (previous)
      setenv(name, previous->c_str(), 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> previous;
};

/// The fake's record of the last launch.
struct RecordedLaunch {
  std::string name;
  unsigned grid[3];
  unsigned block[3];
  unsigned sharedMemBytes;
  std::vector<uint8_t> kernargs;
  bool usedKernelParams;
  int count;
};

using GetLastLaunchFn = int (*)(char *, size_t, unsigned *, unsigned *,
                                unsigned *, uint8_t *, size_t *, int *);

RecordedLaunch getLastLaunch() {
  // dlopen of the path the runtime already loaded returns the same handle,
  // so this reads the same state.
  void *library = dlopen(MXFP4_FAKE_HIP_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(library, nullptr) << dlerror();
  auto get =
      reinterpret_cast<GetLastLaunchFn>(dlsym(library, "fakeHipGetLastLaunch"));
  EXPECT_NE(get, nullptr);
  RecordedLaunch launch;
  char name[256] = {0};
  uint8_t kernargs[4096];
  size_t size = sizeof(kernargs);
  int usedKernelParams = 0;
  launch.count =
      get(name, sizeof(name) - 1, launch.grid, launch.block,
          &launch.sharedMemBytes, kernargs, &size, &usedKernelParams);
  launch.name = name;
  launch.kernargs.assign(kernargs, kernargs + std::min(size, sizeof(kernargs)));
  launch.usedKernelParams = usedKernelParams;
  return launch;
}

std::vector<uint8_t> readCodeObjectBytes() {
  auto buffer = llvm::MemoryBuffer::getFile(
      MXFP4_GFX950_INPUTS "/wave_tile_32x32.hsaco", /*IsText=*/false,
      /*RequiresNullTerminator=*/false);
  if (!buffer) {
    ADD_FAILURE() << "cannot read the test code object";
    return {};
  }
  StringRef bytes = (*buffer)->getBuffer();
  return std::vector<uint8_t>(bytes.bytes_begin(), bytes.bytes_end());
}

template <typename T> std::string errorOf(llvm::Expected<T> result) {
  if (result) {
    ADD_FAILURE() << "expected an error";
    return {};
  }
  return llvm::toString(result.takeError());
}

std::string errorOf(llvm::Error error) {
  if (!error) {
    ADD_FAILURE() << "expected an error";
    return {};
  }
  return llvm::toString(std::move(error));
}

/// A runtime on the fake library with one device.
class FakeHipTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto loaded = HipRuntime::load();
    ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
    runtime = std::move(*loaded);
  }

  ScopedEnvironment library{"MXFP4_HIP_LIBRARY", MXFP4_FAKE_HIP_LIBRARY};
  ScopedEnvironment devices{"FAKE_HIP_DEVICE_COUNT", "1"};
  std::unique_ptr<HipRuntime> runtime;
};

//===----------------------------------------------------------------------===//
// Loading the library
//===----------------------------------------------------------------------===//

TEST(HipRuntime, MissingLibrary) {
  ScopedEnvironment library("MXFP4_HIP_LIBRARY",
                            "/nonexistent/rocm/lib/libamdhip64.so");
  std::string message = errorOf(HipRuntime::load());
  EXPECT_EQ(message.find("HIP runtime not found: dlopen(/nonexistent/rocm/lib/"
                         "libamdhip64.so): "),
            0u)
      << message;
  EXPECT_NE(message.find("gfx950 kernels need ROCm >= 7.0 (set "
                         "MXFP4_HIP_LIBRARY to its libamdhip64.so)"),
            std::string::npos)
      << message;
}

TEST(HipRuntime, NotAHipLibrary) {
  ScopedEnvironment library("MXFP4_HIP_LIBRARY", "libm.so.6");
  std::string message = errorOf(HipRuntime::load());
  EXPECT_NE(message.find("has no hipInit"), std::string::npos) << message;
}

TEST(HipRuntime, NoDevice) {
  ScopedEnvironment library("MXFP4_HIP_LIBRARY", MXFP4_FAKE_HIP_LIBRARY);
  ScopedEnvironment devices("FAKE_HIP_DEVICE_COUNT", "0");
  std::string message = errorOf(HipRuntime::load());
  EXPECT_NE(message.find("no HIP device"), std::string::npos) << message;
  EXPECT_NE(message.find("hipErrorNoDevice"), std::string::npos) << message;
}

TEST(HipRuntime, DeviceIndexOutOfRange) {
  ScopedEnvironment library("MXFP4_HIP_LIBRARY", MXFP4_FAKE_HIP_LIBRARY);
  ScopedEnvironment devices("FAKE_HIP_DEVICE_COUNT", "2");
  std::string message = errorOf(HipRuntime::load(/*device=*/3));
  EXPECT_NE(message.find("HIP device 3 does not exist (2 device(s)"),
            std::string::npos)
      << message;
}

TEST_F(FakeHipTest, Properties) {
  EXPECT_EQ(runtime->getDeviceName(), "Fake HIP device");
  EXPECT_EQ(runtime->getDeviceCount(), 1);
  EXPECT_EQ(runtime->getDevice(), 0);
  EXPECT_NE(runtime->getLibraryPath().find("fakeamdhip64"), StringRef::npos)
      << runtime->getLibraryPath().str();
}

//===----------------------------------------------------------------------===//
// Kernel arguments
//===----------------------------------------------------------------------===//

TEST(KernelArguments, PacksAtTheMetadataOffsets) {
  KernargLayout layout;
  layout.kernelName = "k";
  layout.slots = {
      {0, 8, "global_buffer"}, {8, 4, "by_value"}, {16, 8, "by_value"}};
  layout.segmentSize = 24;
  auto block = packKernelArguments(
      layout, {KernelArgumentValue::pointer(reinterpret_cast<void *>(0x1234)),
               KernelArgumentValue::of<int32_t>(-2),
               KernelArgumentValue::of<double>(0.5)});
  ASSERT_TRUE(bool(block)) << llvm::toString(block.takeError());
  ASSERT_EQ(block->size(), 24u);
  uint64_t pointer;
  std::memcpy(&pointer, block->data(), 8);
  EXPECT_EQ(pointer, 0x1234u);
  int32_t scalar;
  std::memcpy(&scalar, block->data() + 8, 4);
  EXPECT_EQ(scalar, -2);
  // The padding between the i32 and the f64 is zero.
  EXPECT_EQ((*block)[12] | (*block)[13] | (*block)[14] | (*block)[15], 0);
  double real;
  std::memcpy(&real, block->data() + 16, 8);
  EXPECT_EQ(real, 0.5);

  std::string message = errorOf(
      packKernelArguments(layout, {KernelArgumentValue::of<int32_t>(1)}));
  EXPECT_NE(message.find("kernel 'k' takes 3 explicit arguments (from its "
                         "code-object metadata) but 1 were given"),
            std::string::npos)
      << message;
  message = errorOf(
      packKernelArguments(layout, {KernelArgumentValue::pointer(nullptr),
                                   KernelArgumentValue::of<int64_t>(1),
                                   KernelArgumentValue::of<double>(0)}));
  EXPECT_NE(message.find("kernel 'k': argument #1 is 8 bytes but the code "
                         "object declares 4 (by_value at offset 8)"),
            std::string::npos)
      << message;

  // No arguments: an empty block.
  auto empty = packKernelArguments(KernargLayout{}, {});
  ASSERT_TRUE(bool(empty));
  EXPECT_TRUE(empty->empty());
}

//===----------------------------------------------------------------------===//
// Launching the real code object
//===----------------------------------------------------------------------===//

TEST_F(FakeHipTest, LaunchPlacesArgumentsAtMetadataOffsets) {
  std::vector<uint8_t> bytes = readCodeObjectBytes();
  auto object = gfx950::readCodeObject(
      StringRef(reinterpret_cast<const char *>(bytes.data()), bytes.size()),
      "wave_tile_32x32.hsaco");
  ASSERT_TRUE(bool(object)) << llvm::toString(object.takeError());
  const gfx950::KernelMetadata *kernel =
      object->metadata.findKernel("wave_tile_32x32");
  ASSERT_NE(kernel, nullptr);
  KernargLayout layout = gfx950::getKernargLayout(*kernel);

  auto module = runtime->loadModule(bytes, "wave_tile_32x32.hsaco");
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  auto function = runtime->getFunction(*module, "wave_tile_32x32");
  ASSERT_TRUE(bool(function)) << llvm::toString(function.takeError());

  // A, B, SA, SB, C and K, as the kernel declares them.
  std::vector<void *> buffers;
  std::vector<KernelArgumentValue> arguments;
  for (size_t size : {1048576, 1048576, 65536, 65536, 4096}) {
    auto buffer = runtime->allocate(size);
    ASSERT_TRUE(bool(buffer)) << llvm::toString(buffer.takeError());
    buffers.push_back(*buffer);
    arguments.push_back(KernelArgumentValue::pointer(*buffer));
  }
  arguments.push_back(KernelArgumentValue::of<int32_t>(8192));

  ASSERT_FALSE(bool(runtime->launch(*function, {128, 2, 1}, {64, 1, 1},
                                    /*dynamicLdsBytes=*/0, layout, arguments)));
  RecordedLaunch launch = getLastLaunch();
  EXPECT_EQ(launch.name, "wave_tile_32x32");
  EXPECT_EQ(launch.grid[0], 128u);
  EXPECT_EQ(launch.grid[1], 2u);
  EXPECT_EQ(launch.grid[2], 1u);
  EXPECT_EQ(launch.block[0], 64u);
  EXPECT_EQ(launch.block[1], 1u);
  EXPECT_EQ(launch.sharedMemBytes, 0u);
  EXPECT_FALSE(launch.usedKernelParams);
  ASSERT_EQ(launch.kernargs.size(), 44u);
  for (size_t i = 0; i < 5; ++i) {
    void *pointer;
    std::memcpy(&pointer, launch.kernargs.data() + kernel->arguments[i].offset,
                sizeof(pointer));
    EXPECT_EQ(pointer, buffers[i]) << "argument " << i;
  }
  int32_t k;
  std::memcpy(&k, launch.kernargs.data() + kernel->arguments[5].offset, 4);
  EXPECT_EQ(k, 8192);

  // A wrong argument count or size never reaches HIP.
  int launches = launch.count;
  std::vector<KernelArgumentValue> tooFew(arguments.begin(),
                                          arguments.end() - 1);
  std::string message = errorOf(
      runtime->launch(*function, {1, 1, 1}, {64, 1, 1}, 0, layout, tooFew));
  EXPECT_NE(message.find("kernel 'wave_tile_32x32' takes 6 explicit arguments "
                         "(from its code-object metadata) but 5 were given"),
            std::string::npos)
      << message;
  std::vector<KernelArgumentValue> wideK = arguments;
  wideK.back() = KernelArgumentValue::of<int64_t>(8192);
  message = errorOf(
      runtime->launch(*function, {1, 1, 1}, {64, 1, 1}, 0, layout, wideK));
  EXPECT_NE(message.find("argument #5 is 8 bytes but the code object declares "
                         "4 (by_value at offset 40)"),
            std::string::npos)
      << message;
  message = errorOf(
      runtime->launch(*function, {0, 1, 1}, {64, 1, 1}, 0, layout, arguments));
  EXPECT_NE(message.find("must not have a zero dimension"), std::string::npos);
  KernargLayout other = layout;
  other.kernelName = "lds_tile_32x32";
  message = errorOf(
      runtime->launch(*function, {1, 1, 1}, {64, 1, 1}, 0, other, arguments));
  EXPECT_NE(message.find("the kernel-argument layout is for 'lds_tile_32x32'"),
            std::string::npos);
  EXPECT_EQ(getLastLaunch().count, launches);

  for (void *buffer : buffers)
    EXPECT_FALSE(bool(runtime->deallocate(buffer)));
  EXPECT_FALSE(bool(runtime->synchronize()));
  EXPECT_FALSE(bool(runtime->unloadModule(*module)));
  EXPECT_EQ(module->handle, nullptr);
}

TEST_F(FakeHipTest, RejectsOtherProcessorsAndUnknownKernels) {
  std::vector<uint8_t> bytes = readCodeObjectBytes();
  ASSERT_GT(bytes.size(), 64u);
  std::vector<uint8_t> gfx942 = bytes;
  gfx942[48] = 0x4c; // e_flags: EF_AMDGPU_MACH_AMDGCN_GFX942
  std::string message = errorOf(runtime->loadModule(gfx942, "mi300.hsaco"));
  EXPECT_NE(message.find("hipModuleLoadData(mi300.hsaco) failed: "
                         "hipErrorNoBinaryForGpu"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("the device is not a gfx950 (MI350X/MI355X): Fake "
                         "HIP device"),
            std::string::npos)
      << message;

  std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o'};
  message = errorOf(runtime->loadModule(text, "hello.txt"));
  EXPECT_NE(message.find("hello.txt: not an ELF code object"),
            std::string::npos)
      << message;

  auto module = runtime->loadModule(bytes, "wave_tile_32x32.hsaco");
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  message = errorOf(runtime->getFunction(*module, "missing_kernel"));
  EXPECT_NE(message.find("hipErrorNotFound"), std::string::npos) << message;
  EXPECT_NE(message.find("kernel 'missing_kernel' is not in "
                         "wave_tile_32x32.hsaco"),
            std::string::npos)
      << message;
  EXPECT_FALSE(bool(runtime->unloadModule(*module)));
}

TEST_F(FakeHipTest, MemoryAndEvents) {
  auto buffer = runtime->allocate(16);
  ASSERT_TRUE(bool(buffer));
  ASSERT_FALSE(bool(runtime->fill(*buffer, 0xab, 16)));
  uint8_t host[16] = {0};
  ASSERT_FALSE(bool(runtime->copyToHost(host, *buffer, 16)));
  EXPECT_EQ(host[15], 0xab);
  uint8_t data[16];
  for (int i = 0; i < 16; ++i)
    data[i] = i;
  ASSERT_FALSE(bool(runtime->copyToDevice(*buffer, data, 16)));
  ASSERT_FALSE(bool(runtime->copyToHost(host, *buffer, 16)));
  EXPECT_EQ(host[7], 7);
  EXPECT_FALSE(bool(runtime->deallocate(*buffer)));

  auto start = runtime->createEvent();
  auto stop = runtime->createEvent();
  ASSERT_TRUE(start && stop);
  ASSERT_FALSE(bool(runtime->recordEvent(*start)));
  ASSERT_FALSE(bool(runtime->recordEvent(*stop)));
  auto elapsed = runtime->getElapsedMilliseconds(*start, *stop);
  ASSERT_TRUE(bool(elapsed)) << llvm::toString(elapsed.takeError());
  EXPECT_GE(*elapsed, 0.0f);
  EXPECT_FALSE(bool(runtime->destroyEvent(*start)));
  EXPECT_FALSE(bool(runtime->destroyEvent(*stop)));
}

} // namespace
