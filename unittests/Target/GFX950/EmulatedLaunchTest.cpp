//===- EmulatedLaunchTest.cpp - single launches on caller memory ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// EmulatedKernelModule: parse a kernel module, look kernels up, launch them
// one at a time over memory the test owns (the kernels write it in place),
// and the located errors of bad images, names, sizes and accesses.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Target/GFX950/Emulator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace mlir::mxfp4::gfx950;
using llvm::ArrayRef;

namespace {

/// out[i] = out[i] * scale + i + offset over 64 x grid threads; a host
/// function that is never run; and a kernel that stores past its memref.
const char *kModule = R"mlir(
module attributes {gpu.container_module} {
  func.func @host(%a: memref<128xf32>) {
    return
  }
  gpu.module @mxfp4_kernels {
    gpu.func @axpy(%out: memref<128xf32>, %scale: f32, %offset: i32) kernel {
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %c64 = arith.constant 64 : index
      %base = arith.muli %bid, %c64 : index
      %i = arith.addi %base, %tid : index
      %v = memref.load %out[%i] : memref<128xf32>
      %s = arith.mulf %v, %scale : f32
      %ii = arith.index_cast %i : index to i32
      %io = arith.addi %ii, %offset : i32
      %f = arith.sitofp %io : i32 to f32
      %r = arith.addf %s, %f : f32
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

uint64_t floatArg(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

TEST(EmulatedLaunchTest, LaunchesWriteCallerMemoryInPlace) {
  auto module = EmulatedKernelModule::parse(kModule, "kernels.mlir");
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  auto kernel = (*module)->getKernel("axpy");
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  ArrayRef<EmulatedKernelParam> params = (*kernel)->getParams();
  ASSERT_EQ(params.size(), 3u);
  EXPECT_TRUE(params[0].isMemRef);
  EXPECT_EQ(params[0].bytes, 512);
  EXPECT_FALSE(params[1].isMemRef);
  EXPECT_EQ(params[1].bytes, 4);
  EXPECT_EQ(params[2].bytes, 4);

  // The memref lies inside a larger allocation, after 8 guard floats.
  std::vector<float> memory(8 + 128 + 8, -1.0f);
  for (int i = 0; i < 128; ++i)
    memory[8 + i] = 0.5f * i;
  std::vector<EmulatedKernelArg> args(3);
  args[0].pointer = memory.data() + 8;
  args[0].bytes = (128 + 8) * 4;
  args[1].bits = floatArg(2.0f);
  args[2].bits = static_cast<uint32_t>(-3);
  int64_t grid[3] = {2, 1, 1}, block[3] = {64, 1, 1};
  EmulatorStats stats;
  llvm::Error error = (*module)->launch(**kernel, grid, block, args, &stats);
  ASSERT_FALSE(static_cast<bool>(error)) << llvm::toString(std::move(error));
  // A second launch reads what the first wrote.
  error = (*module)->launch(**kernel, grid, block, args, &stats);
  ASSERT_FALSE(static_cast<bool>(error)) << llvm::toString(std::move(error));
  EXPECT_EQ(stats.launches, 2);
  EXPECT_EQ(stats.workgroups, 4);
  for (int i = 0; i < 128; ++i) {
    float once = 0.5f * i * 2.0f + (i - 3);
    EXPECT_EQ(memory[8 + i], once * 2.0f + (i - 3)) << i;
  }
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(memory[i], -1.0f);
    EXPECT_EQ(memory[8 + 128 + i], -1.0f);
  }
}

TEST(EmulatedLaunchTest, ErrorsAreLocated) {
  auto bad = EmulatedKernelModule::parse("module { func.func @f( }", "img");
  ASSERT_FALSE(static_cast<bool>(bad));
  std::string message = llvm::toString(bad.takeError());
  EXPECT_NE(message.find("cannot parse"), std::string::npos) << message;
  EXPECT_NE(message.find("img:1:"), std::string::npos) << message;

  auto module = EmulatedKernelModule::parse(kModule, "kernels.mlir");
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  auto missing = (*module)->getKernel("host");
  ASSERT_FALSE(static_cast<bool>(missing));
  message = llvm::toString(missing.takeError());
  EXPECT_NE(message.find("no kernel named 'host'"), std::string::npos)
      << message;

  auto axpy = (*module)->getKernel("axpy");
  ASSERT_TRUE(static_cast<bool>(axpy));
  std::vector<float> small(127);
  std::vector<EmulatedKernelArg> args(3);
  args[0].pointer = small.data();
  args[0].bytes = 127 * 4;
  int64_t grid[3] = {2, 1, 1}, block[3] = {64, 1, 1};
  message = llvm::toString((*module)->launch(**axpy, grid, block, args));
  EXPECT_NE(message.find("points at only 508 bytes"), std::string::npos)
      << message;
  args.pop_back();
  message = llvm::toString((*module)->launch(**axpy, grid, block, args));
  EXPECT_NE(message.find("launched with 2 arguments"), std::string::npos)
      << message;
  int64_t bigBlock[3] = {64, 32, 1};
  args.resize(3);
  message = llvm::toString((*module)->launch(**axpy, grid, bigBlock, args));
  EXPECT_NE(message.find("2048 threads exceeds"), std::string::npos) << message;

  auto oob = (*module)->getKernel("oob");
  ASSERT_TRUE(static_cast<bool>(oob));
  std::vector<int32_t> out(64, 0);
  EmulatedKernelArg arg;
  arg.pointer = out.data();
  arg.bytes = 64 * 4; // the allocation is larger than the memref type
  message = llvm::toString((*module)->launch(**oob, grid, block, {arg}));
  EXPECT_NE(message.find("kernels.mlir:25:7"), std::string::npos) << message;
  EXPECT_NE(message.find("out-of-bounds global access: 4 bytes at byte "
                         "offset 64 of a 64-byte memref"),
            std::string::npos)
      << message;
  EXPECT_EQ(out[15], 7);
  EXPECT_EQ(out[16], 0);
}

} // namespace
