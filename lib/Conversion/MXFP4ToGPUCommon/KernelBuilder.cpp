//===- KernelBuilder.cpp - index math and memory access in kernels
//------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/MXFP4ToGPUCommon/KernelBuilder.h"

#include "mlir/IR/Matchers.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;

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

void KernelBuilder::when(Value condition, function_ref<void()> body) {
  auto only = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(only.thenBlock());
  body();
}

Value KernelBuilder::threadId() {
  return gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
}
Value KernelBuilder::blockId() {
  return gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
}

Value KernelBuilder::buffer(Value memref) {
  if (bounds == BoundsMode::guarded)
    return memref;
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

Value KernelBuilder::load(Type type, Value buffer, Value valid, Value offset,
                          int64_t size, unsigned alignment) {
  // A constant true `valid` needs no guard. Guarded: read element 0
  // instead (always in range), then zero it.
  bool inRange = matchPattern(valid, m_One());
  Value at = inRange ? offset
             : bounds == BoundsMode::hardware
                 ? maskedOffset(valid, offset, size)
                 : select(valid, offset, idx(0));
  Value v;
  if (auto vec = dyn_cast<VectorType>(type))
    v = vector::LoadOp::create(b, loc, vec, buffer, ValueRange{at},
                               /*nontemporal=*/false,
                               llvm::MaybeAlign(alignment));
  else
    v = memref::LoadOp::create(b, loc, buffer, ValueRange{at});
  if (inRange || bounds == BoundsMode::hardware)
    return v;
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  return select(valid, v, zero);
}

void KernelBuilder::store(Value value, Value buffer, Value valid, Value offset,
                          int64_t size, unsigned alignment) {
  auto emit = [&](OpBuilder &sb, Value at) {
    if (isa<VectorType>(value.getType()))
      vector::StoreOp::create(sb, loc, value, buffer, ValueRange{at},
                              /*nontemporal=*/false,
                              llvm::MaybeAlign(alignment));
    else
      memref::StoreOp::create(sb, loc, value, buffer, ValueRange{at});
  };
  if (matchPattern(valid, m_One()))
    return emit(b, offset);
  if (bounds == BoundsMode::hardware)
    return emit(b, maskedOffset(valid, offset, size));
  auto guard = scf::IfOp::create(b, loc, valid, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard insertion(b);
  b.setInsertionPointToStart(guard.thenBlock());
  emit(b, offset);
}

MemRefType kernels::globalBuffer(MLIRContext *context, int64_t size,
                                 Type type) {
  return MemRefType::get(
      {size}, type, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Global));
}

gpu::GPUFuncOp kernels::createKernel(OpBuilder &b, Location loc,
                                     gpu::GPUModuleOp module, StringRef name,
                                     TypeRange argTypes,
                                     TypeRange workgroupBuffers,
                                     int64_t threads) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto func =
      gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(argTypes, {}),
                             workgroupBuffers, TypeRange{});
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
  return func;
}

MemRefType kernels::workgroupBuffer(MLIRContext *context, int64_t size,
                                    Type type) {
  return MemRefType::get(
      {size}, type, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
}
