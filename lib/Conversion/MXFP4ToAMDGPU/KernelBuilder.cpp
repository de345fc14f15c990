//===- KernelBuilder.cpp - index math for gfx950 kernels ------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "Kernels.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::gfx950;

Value KernelBuilder::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value KernelBuilder::i32(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}
Value KernelBuilder::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value KernelBuilder::mul(Value x, int64_t y) {
  if (y == 1)
    return x;
  return arith::MulIOp::create(b, loc, x, idx(y));
}
Value KernelBuilder::div(Value x, int64_t y) {
  if (y == 1)
    return x;
  return arith::DivUIOp::create(b, loc, x, idx(y));
}
Value KernelBuilder::rem(Value x, int64_t y) {
  return arith::RemUIOp::create(b, loc, x, idx(y));
}
Value KernelBuilder::min(Value x, Value y) {
  return arith::MinUIOp::create(b, loc, x, y);
}
Value KernelBuilder::lt(Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
}
Value KernelBuilder::andI(Value x, Value y) {
  return arith::AndIOp::create(b, loc, x, y);
}
Value KernelBuilder::xorI(Value x, int64_t y) {
  return arith::XOrIOp::create(b, loc, x, idx(y));
}
Value KernelBuilder::select(Value cond, Value x, Value y) {
  return arith::SelectOp::create(b, loc, cond, x, y);
}

Value KernelBuilder::threadId() {
  return gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
}
Value KernelBuilder::blockId() {
  return gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
}

Value KernelBuilder::buffer(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  auto fatType = MemRefType::get(
      type.getShape(), type.getElementType(), MemRefLayoutAttrInterface(),
      amdgpu::AddressSpaceAttr::get(b.getContext(),
                                    amdgpu::AddressSpace::FatRawBuffer));
  return amdgpu::FatRawBufferCastOp::create(
      b, loc, fatType, memref, /*validBytes=*/Value(),
      /*cacheSwizzleStride=*/Value(), /*boundsCheck=*/true,
      /*resetOffset=*/true);
}

Value KernelBuilder::maskedOffset(Value valid, Value offset, int64_t size) {
  return select(valid, offset, idx(size));
}

MemRefType gfx950::globalBuffer(MLIRContext *context, int64_t size,
                                Type type) {
  return MemRefType::get(
      {size}, type, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Global));
}

gpu::GPUFuncOp gfx950::createKernel(OpBuilder &b, Location loc,
                                    gpu::GPUModuleOp module, StringRef name,
                                    TypeRange argTypes,
                                    TypeRange workgroupBuffers) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto func = gpu::GPUFuncOp::create(
      b, loc, name, b.getFunctionType(argTypes, {}), workgroupBuffers,
      TypeRange{});
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(kWorkgroupSize), 1, 1}));
  return func;
}

Value gfx950::emitShuffledScaleOffset(KernelBuilder &kb, Value row,
                                      Value kBlock, int64_t kBlocks) {
  int64_t groups = (kBlocks + 7) / 8;
  Value g = kb.div(row, 32), mm = kb.div(kb.rem(row, 32), 16),
        r = kb.rem(row, 16);
  Value q = kb.div(kBlock, 8), s = kb.div(kb.rem(kBlock, 8), 4),
        kg = kb.rem(kBlock, 4);
  Value lane = kb.add(kb.mul(kg, 16), r);
  Value dword = kb.add(kb.mul(kb.add(kb.mul(g, groups), q), 64), lane);
  return kb.add(kb.add(kb.mul(dword, 4), kb.mul(s, 2)), mm);
}
