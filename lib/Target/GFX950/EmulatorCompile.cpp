//===- EmulatorCompile.cpp - translate gpu.func into emulator programs ----===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every SSA value of the kernel gets a slot; every op becomes an Instr with
// its operand and result slots and all static information (predicates,
// permutation tables of data-movement vector ops, constants) decoded once,
// so execution never looks at attributes or Values again.
//
//===----------------------------------------------------------------------===//

#include "EmulatorImpl.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::mxfp4::gfx950;
using namespace mlir::mxfp4::gfx950::emu;

/// Row-major strides of `shape`.
static SmallVector<int64_t, 4> getRowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t, 4> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

static int64_t getNumElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

/// Returns the multi-index of element `linear` of `shape`.
static SmallVector<int64_t, 4> delinearize(int64_t linear,
                                           ArrayRef<int64_t> shape) {
  SmallVector<int64_t, 4> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return index;
}

static int64_t linearize(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    linear = linear * shape[d] + index[d];
  return linear;
}

namespace {

/// Translates one gpu.func.
class Compiler {
public:
  explicit Compiler(gpu::GPUFuncOp func) : program(new Program()) {
    program->func = func;
  }

  llvm::Expected<std::unique_ptr<Program>> run();

private:
  /// Describes `type` as a slot; `loc` locates errors.
  llvm::Expected<SlotInfo> describe(Type type, Location loc);
  /// Creates the slot of `value`.
  llvm::Expected<int32_t> define(Value value);
  /// Returns the slot of `value`, which dominates its uses.
  int32_t lookup(Value value) const { return slotMap.lookup(value); }
  const SlotInfo &info(int32_t slot) const { return program->slots[slot]; }
  const SlotInfo &info(Value value) const { return info(lookup(value)); }

  /// Compiles `block` into program block `target`; its terminator's
  /// operands become the yields.
  llvm::Error compileBlock(Block &block, int32_t target);
  llvm::Error compileOp(Operation *op, int32_t target);
  llvm::Error compileConstant(Operation *op, Attribute value);
  /// Returns an Instr reading `inputs` and writing `op`'s result slots
  /// (which compileOp defines first).
  llvm::Expected<Instr> makeInstr(Opc opc, Operation *op, ValueRange inputs);
  llvm::Error compileArith(Operation *op, int32_t target, bool &handled);
  llvm::Error compileVector(Operation *op, int32_t target, bool &handled);
  llvm::Error compileAMDGPU(Operation *op, int32_t target, bool &handled);
  /// Appends a Permute of `inputs` with per-result-element sources.
  llvm::Error addPermute(Operation *op, int32_t target, ValueRange inputs,
                         std::vector<int32_t> srcInput,
                         std::vector<int64_t> srcElem);

  std::unique_ptr<Program> program;
  llvm::DenseMap<Value, int32_t> slotMap;
};

} // namespace

llvm::Expected<SlotInfo> Compiler::describe(Type type, Location loc) {
  SlotInfo slot;
  slot.type = type;
  Type elemType = type;
  if (auto vectorType = dyn_cast<VectorType>(type)) {
    if (vectorType.isScalable())
      return makeError(loc, "unsupported scalable vector type " +
                                llvm::Twine(printed(type)));
    slot.shape.assign(vectorType.getShape().begin(),
                      vectorType.getShape().end());
    slot.numElements = getNumElements(slot.shape);
    elemType = vectorType.getElementType();
  } else if (auto memrefType = dyn_cast<MemRefType>(type)) {
    if (!memrefType.hasStaticShape() || !memrefType.getLayout().isIdentity())
      return makeError(loc, "unsupported memref type " +
                                llvm::Twine(printed(type)) +
                                " (needs a static shape and identity layout)");
    Type memElem = memrefType.getElementType();
    int64_t bits;
    if (memElem.isIndex())
      bits = 64;
    else if (memElem.isIntOrFloat())
      bits = memElem.getIntOrFloatBitWidth();
    else
      return makeError(loc, "unsupported memref element type in " +
                                llvm::Twine(printed(type)));
    if (bits != 1 && bits % 8 != 0)
      return makeError(loc, "unsupported sub-byte memref element type in " +
                                llvm::Twine(printed(type)) +
                                " (store FP4 data as i8)");
    slot.kind = ElemKind::MemRef;
    slot.mem.elemBytes = bits == 1 ? 1 : bits / 8;
    slot.mem.shape.assign(memrefType.getShape().begin(),
                          memrefType.getShape().end());
    slot.mem.strides = getRowMajorStrides(slot.mem.shape);
    slot.mem.numElements = memrefType.getNumElements();
    slot.mem.space = MemSpace::Global;
    if (Attribute space = memrefType.getMemorySpace()) {
      if (auto gpuSpace = dyn_cast<gpu::AddressSpaceAttr>(space)) {
        if (gpuSpace.getValue() == gpu::AddressSpace::Workgroup)
          slot.mem.space = MemSpace::Workgroup;
        else if (gpuSpace.getValue() == gpu::AddressSpace::Private)
          return makeError(loc, "unsupported private memref " +
                                    llvm::Twine(printed(type)));
      } else if (auto amdSpace = dyn_cast<amdgpu::AddressSpaceAttr>(space)) {
        if (amdSpace.getValue() != amdgpu::AddressSpace::FatRawBuffer)
          return makeError(loc, "unsupported memory space in " +
                                    llvm::Twine(printed(type)));
        slot.mem.space = MemSpace::FatRawBuffer;
      }
    }
    return slot;
  }
  if (auto intType = dyn_cast<IntegerType>(elemType)) {
    if (intType.getWidth() > 64)
      return makeError(loc, "unsupported integer type " +
                                llvm::Twine(printed(type)));
    slot.kind = ElemKind::Int;
    slot.bits = intType.getWidth();
  } else if (elemType.isIndex()) {
    slot.kind = ElemKind::Int;
    slot.bits = 64;
  } else if (auto floatType = dyn_cast<FloatType>(elemType)) {
    slot.bits = floatType.getWidth();
    if (floatType.isF16())
      slot.kind = ElemKind::F16;
    else if (floatType.isBF16())
      slot.kind = ElemKind::BF16;
    else if (floatType.isF32())
      slot.kind = ElemKind::F32;
    else if (floatType.isF64())
      slot.kind = ElemKind::F64;
    else if (isa<Float8E8M0FNUType>(floatType))
      slot.kind = ElemKind::F8E8M0;
    else if (isa<Float4E2M1FNType>(floatType))
      slot.kind = ElemKind::F4E2M1;
    else if (slot.bits <= 64)
      slot.kind = ElemKind::OtherFloat;
    else
      return makeError(loc,
                       "unsupported float type " + llvm::Twine(printed(type)));
  } else {
    return makeError(loc, "unsupported type " + llvm::Twine(printed(type)));
  }
  return slot;
}

llvm::Expected<int32_t> Compiler::define(Value value) {
  Location loc = value.getLoc();
  if (Operation *def = value.getDefiningOp())
    loc = def->getLoc();
  llvm::Expected<SlotInfo> slot = describe(value.getType(), loc);
  if (!slot)
    return slot.takeError();
  int32_t index = static_cast<int32_t>(program->slots.size());
  program->slots.push_back(std::move(*slot));
  slotMap[value] = index;
  return index;
}

llvm::Expected<Instr> Compiler::makeInstr(Opc opc, Operation *op,
                                          ValueRange inputs) {
  Instr instr;
  instr.opc = opc;
  instr.op = op;
  for (Value input : inputs) {
    auto it = slotMap.find(input);
    if (it == slotMap.end())
      return opError(op, "operand defined outside the kernel");
    instr.in.push_back(it->second);
  }
  // compileOp defined the result slots before dispatching.
  for (Value result : op->getResults())
    instr.out.push_back(lookup(result));
  return instr;
}

llvm::Expected<std::unique_ptr<Program>> Compiler::run() {
  gpu::GPUFuncOp func = program->func;
  Region &body = func.getBody();
  if (!body.hasOneBlock())
    return opError(func, "kernels with more than one block (unstructured "
                         "control flow) are not supported");
  if (!func.getPrivateAttributions().empty())
    return opError(func, "private attributions are not supported");
  for (BlockArgument arg : func.getArguments()) {
    llvm::Expected<int32_t> slot = define(arg);
    if (!slot)
      return slot.takeError();
    program->argSlots.push_back(*slot);
  }
  for (BlockArgument lds : func.getWorkgroupAttributions()) {
    llvm::Expected<int32_t> slot = define(lds);
    if (!slot)
      return slot.takeError();
    const SlotInfo &slotInfo = info(*slot);
    if (slotInfo.mem.space != MemSpace::Workgroup)
      return opError(func, "workgroup attribution is not in the workgroup "
                           "address space");
    program->ldsSlots.push_back(*slot);
    program->ldsBytes += slotInfo.mem.numElements * slotInfo.mem.elemBytes;
  }
  // gfx950 has 160 KiB of LDS per workgroup.
  constexpr int64_t kMaxLdsBytes = 160 * 1024;
  if (program->ldsBytes > kMaxLdsBytes)
    return opError(func, "workgroup attributions use " +
                             llvm::Twine(program->ldsBytes) +
                             " bytes of LDS, more than gfx950's " +
                             llvm::Twine(kMaxLdsBytes));
  program->blocks.emplace_back();
  if (llvm::Error error = compileBlock(body.front(), 0))
    return std::move(error);
  return std::move(program);
}

llvm::Error Compiler::compileBlock(Block &block, int32_t target) {
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      if (!isa<scf::YieldOp, gpu::ReturnOp>(op))
        return opError(&op, "unsupported terminator");
      if (isa<gpu::ReturnOp>(op) && op.getNumOperands() != 0)
        return opError(&op, "kernels cannot return values");
      for (Value operand : op.getOperands())
        program->blocks[target].yields.push_back(lookup(operand));
      continue;
    }
    if (llvm::Error error = compileOp(&op, target))
      return error;
  }
  return llvm::Error::success();
}

/// Returns the bits of each element of the constant `value` of `slot`'s type,
/// or nullopt if it is not a supported constant.
static std::optional<std::vector<uint64_t>>
getConstantBits(Attribute value, const SlotInfo &slot) {
  std::vector<uint64_t> bits;
  auto appendInt = [&](const APInt &v) {
    bits.push_back(truncBits(v.getZExtValue(), slot.bits));
  };
  auto appendFloat = [&](const APFloat &v) {
    bits.push_back(truncBits(v.bitcastToAPInt().getZExtValue(), slot.bits));
  };
  if (auto intAttr = dyn_cast<IntegerAttr>(value)) {
    appendInt(intAttr.getValue());
  } else if (auto floatAttr = dyn_cast<FloatAttr>(value)) {
    appendFloat(floatAttr.getValue());
  } else if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(value)) {
    if (isa<FloatType>(dense.getElementType())) {
      for (const APFloat &v : dense.getValues<APFloat>())
        appendFloat(v);
    } else {
      for (const APInt &v : dense.getValues<APInt>())
        appendInt(v);
    }
  } else {
    return std::nullopt;
  }
  if (static_cast<int64_t>(bits.size()) != slot.numElements)
    return std::nullopt;
  return bits;
}

llvm::Error Compiler::compileConstant(Operation *op, Attribute value) {
  int32_t slot = lookup(op->getResult(0));
  std::optional<std::vector<uint64_t>> bits =
      getConstantBits(value, info(slot));
  if (!bits)
    return opError(op, "unsupported constant " + llvm::Twine(printed(value)));
  program->constants.push_back({slot, std::move(*bits)});
  return llvm::Error::success();
}

llvm::Error Compiler::addPermute(Operation *op, int32_t target,
                                 ValueRange inputs,
                                 std::vector<int32_t> srcInput,
                                 std::vector<int64_t> srcElem) {
  llvm::Expected<Instr> instr = makeInstr(Opc::Permute, op, inputs);
  if (!instr)
    return instr.takeError();
  instr->permuteInput = std::move(srcInput);
  instr->permuteElem = std::move(srcElem);
  program->blocks[target].instrs.push_back(std::move(*instr));
  return llvm::Error::success();
}

llvm::Error Compiler::compileOp(Operation *op, int32_t target) {
  auto emit = [&](Opc opc, ValueRange inputs, int sub = 0) -> llvm::Error {
    llvm::Expected<Instr> instr = makeInstr(opc, op, inputs);
    if (!instr)
      return instr.takeError();
    instr->sub = sub;
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  };

  // Result slots first, so that handlers can inspect result types.
  for (Value result : op->getResults())
    if (llvm::Expected<int32_t> slot = define(result); !slot)
      return slot.takeError();

  // GPU.
  if (auto threadId = dyn_cast<gpu::ThreadIdOp>(op))
    return emit(Opc::ThreadId, {}, static_cast<int>(threadId.getDimension()));
  if (auto blockId = dyn_cast<gpu::BlockIdOp>(op))
    return emit(Opc::BlockId, {}, static_cast<int>(blockId.getDimension()));
  if (isa<gpu::LaneIdOp>(op))
    return emit(Opc::LaneId, {});
  if (isa<gpu::BarrierOp, amdgpu::LDSBarrierOp>(op))
    return emit(Opc::Barrier, {});
  if (isa<amdgpu::SchedBarrierOp, amdgpu::MemoryCounterWaitOp>(op))
    return emit(Opc::NoOp, {});
  if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
    if (info(shuffle.getValue()).kind == ElemKind::MemRef)
      return opError(op, "cannot shuffle a memref");
    return emit(Opc::Shuffle,
                {shuffle.getValue(), shuffle.getOffset(), shuffle.getWidth()},
                static_cast<int>(shuffle.getMode()));
  }

  // Constants.
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return compileConstant(op, constant.getValue());
  if (isa<ub::PoisonOp>(op)) {
    // Poison reads as zeros: deterministic, and kernels must not use it.
    int32_t slot = lookup(op->getResult(0));
    if (info(slot).kind == ElemKind::MemRef)
      return opError(op, "poison memrefs are not supported");
    program->constants.push_back(
        {slot, std::vector<uint64_t>(info(slot).numElements, 0)});
    return llvm::Error::success();
  }

  bool handled = false;
  if (llvm::Error error = compileArith(op, target, handled))
    return error;
  if (handled)
    return llvm::Error::success();
  if (llvm::Error error = compileVector(op, target, handled))
    return error;
  if (handled)
    return llvm::Error::success();
  if (llvm::Error error = compileAMDGPU(op, target, handled))
    return error;
  if (handled)
    return llvm::Error::success();

  // Memref.
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    SmallVector<Value> inputs{load.getMemRef()};
    llvm::append_range(inputs, load.getIndices());
    return emit(Opc::Load, inputs);
  }
  if (auto store = dyn_cast<memref::StoreOp>(op)) {
    SmallVector<Value> inputs{store.getMemRef()};
    llvm::append_range(inputs, store.getIndices());
    inputs.push_back(store.getValueToStore());
    return emit(Opc::Store, inputs);
  }
  if (isa<memref::MemorySpaceCastOp, memref::CastOp, memref::AssumeAlignmentOp>(
          op)) {
    if (llvm::Error error = emit(Opc::ViewCopy, {op->getOperand(0)}))
      return error;
    const SlotInfo &src = info(op->getOperand(0));
    const SlotInfo &dst = info(op->getResult(0));
    if (src.mem.elemBytes != dst.mem.elemBytes ||
        src.mem.shape != dst.mem.shape)
      return opError(op, "casts between different shapes are not supported");
    return llvm::Error::success();
  }

  // SCF.
  if (auto forOp = dyn_cast<scf::ForOp>(op)) {
    SmallVector<Value> inputs{forOp.getLowerBound(), forOp.getUpperBound(),
                              forOp.getStep()};
    llvm::append_range(inputs, forOp.getInitArgs());
    llvm::Expected<Instr> instr = makeInstr(Opc::For, op, inputs);
    if (!instr)
      return instr.takeError();
    for (Value result : op->getResults())
      if (info(result).kind == ElemKind::MemRef)
        return opError(op, "memref-typed loop results are not supported");
    instr->imm0 = forOp.getUnsignedCmp();
    int32_t body = static_cast<int32_t>(program->blocks.size());
    program->blocks.emplace_back();
    Block &block = *forOp.getBody();
    for (BlockArgument arg : block.getArguments()) {
      llvm::Expected<int32_t> slot = define(arg);
      if (!slot)
        return slot.takeError();
      program->blocks[body].args.push_back(*slot);
    }
    if (llvm::Error error = compileBlock(block, body))
      return error;
    instr->block0 = body;
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    llvm::Expected<Instr> instr =
        makeInstr(Opc::If, op, ValueRange{ifOp.getCondition()});
    if (!instr)
      return instr.takeError();
    for (Value result : op->getResults())
      if (info(result).kind == ElemKind::MemRef)
        return opError(op, "memref-typed scf.if results are not supported");
    int32_t thenBlock = static_cast<int32_t>(program->blocks.size());
    program->blocks.emplace_back();
    if (llvm::Error error =
            compileBlock(ifOp.getThenRegion().front(), thenBlock))
      return error;
    instr->block0 = thenBlock;
    if (!ifOp.getElseRegion().empty()) {
      int32_t elseBlock = static_cast<int32_t>(program->blocks.size());
      program->blocks.emplace_back();
      if (llvm::Error error =
              compileBlock(ifOp.getElseRegion().front(), elseBlock))
        return error;
      instr->block1 = elseBlock;
    }
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  }

  // Math.
  if (isa<math::AbsFOp>(op)) {
    if (info(op->getOperand(0)).kind == ElemKind::F8E8M0)
      return opError(op, "f8E8M0FNU has no sign");
    return emit(Opc::FloatUnary, op->getOperands(),
                static_cast<int>(FloatUnaryOp::Abs));
  }
  if (isa<math::FmaOp>(op)) {
    if (!isArithFloat(info(op->getOperand(0)).kind))
      return opError(op, "unsupported element type");
    return emit(Opc::Fma, op->getOperands());
  }
  std::optional<FloatUnaryOp> function =
      llvm::TypeSwitch<Operation *, std::optional<FloatUnaryOp>>(op)
          .Case([](math::ExpOp) { return FloatUnaryOp::Exp; })
          .Case([](math::Exp2Op) { return FloatUnaryOp::Exp2; })
          .Case([](math::LogOp) { return FloatUnaryOp::Log; })
          .Case([](math::Log2Op) { return FloatUnaryOp::Log2; })
          .Case([](math::SqrtOp) { return FloatUnaryOp::Sqrt; })
          .Case([](math::RsqrtOp) { return FloatUnaryOp::Rsqrt; })
          .Case([](math::CosOp) { return FloatUnaryOp::Cos; })
          .Case([](math::SinOp) { return FloatUnaryOp::Sin; })
          .Case([](math::TanhOp) { return FloatUnaryOp::Tanh; })
          .Case([](math::ErfOp) { return FloatUnaryOp::Erf; })
          .Case([](math::FloorOp) { return FloatUnaryOp::Floor; })
          .Case([](math::CeilOp) { return FloatUnaryOp::Ceil; })
          .Case([](math::TruncOp) { return FloatUnaryOp::Trunc; })
          .Case([](math::RoundEvenOp) { return FloatUnaryOp::RoundEven; })
          .Default([](Operation *) { return std::nullopt; });
  if (function) {
    if (!isArithFloat(info(op->getOperand(0)).kind))
      return opError(op, "unsupported element type");
    return emit(Opc::FloatUnary, op->getOperands(), static_cast<int>(*function));
  }
  if (isa<math::PowFOp>(op)) {
    if (!isArithFloat(info(op->getOperand(0)).kind))
      return opError(op, "unsupported element type");
    return emit(Opc::FloatBinary, op->getOperands(),
                static_cast<int>(FloatOp::Pow));
  }

  return makeError(op->getLoc(),
                   "unsupported op '" + op->getName().getStringRef() + "'");
}

//===----------------------------------------------------------------------===//
// arith
//===----------------------------------------------------------------------===//

llvm::Error Compiler::compileArith(Operation *op, int32_t target,
                                   bool &handled) {
  handled = true;
  auto emit = [&](Opc opc, int sub = 0) -> llvm::Error {
    llvm::Expected<Instr> instr = makeInstr(opc, op, op->getOperands());
    if (!instr)
      return instr.takeError();
    instr->sub = sub;
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  };
  auto operandKind = [&](unsigned i) { return info(op->getOperand(i)).kind; };

  std::optional<IntOp> intOp =
      llvm::TypeSwitch<Operation *, std::optional<IntOp>>(op)
          .Case([](arith::AddIOp) { return IntOp::Add; })
          .Case([](arith::SubIOp) { return IntOp::Sub; })
          .Case([](arith::MulIOp) { return IntOp::Mul; })
          .Case([](arith::DivUIOp) { return IntOp::DivU; })
          .Case([](arith::DivSIOp) { return IntOp::DivS; })
          .Case([](arith::RemUIOp) { return IntOp::RemU; })
          .Case([](arith::RemSIOp) { return IntOp::RemS; })
          .Case([](arith::CeilDivUIOp) { return IntOp::CeilDivU; })
          .Case([](arith::CeilDivSIOp) { return IntOp::CeilDivS; })
          .Case([](arith::FloorDivSIOp) { return IntOp::FloorDivS; })
          .Case([](arith::AndIOp) { return IntOp::And; })
          .Case([](arith::OrIOp) { return IntOp::Or; })
          .Case([](arith::XOrIOp) { return IntOp::Xor; })
          .Case([](arith::ShLIOp) { return IntOp::Shl; })
          .Case([](arith::ShRUIOp) { return IntOp::ShrU; })
          .Case([](arith::ShRSIOp) { return IntOp::ShrS; })
          .Case([](arith::MinSIOp) { return IntOp::MinS; })
          .Case([](arith::MaxSIOp) { return IntOp::MaxS; })
          .Case([](arith::MinUIOp) { return IntOp::MinU; })
          .Case([](arith::MaxUIOp) { return IntOp::MaxU; })
          .Default([](Operation *) { return std::nullopt; });
  if (intOp)
    return emit(Opc::IntBinary, static_cast<int>(*intOp));

  std::optional<FloatOp> floatOp =
      llvm::TypeSwitch<Operation *, std::optional<FloatOp>>(op)
          .Case([](arith::AddFOp) { return FloatOp::Add; })
          .Case([](arith::SubFOp) { return FloatOp::Sub; })
          .Case([](arith::MulFOp) { return FloatOp::Mul; })
          .Case([](arith::DivFOp) { return FloatOp::Div; })
          .Case([](arith::RemFOp) { return FloatOp::Rem; })
          .Case([](arith::MaximumFOp) { return FloatOp::Maximum; })
          .Case([](arith::MinimumFOp) { return FloatOp::Minimum; })
          .Case([](arith::MaxNumFOp) { return FloatOp::MaxNum; })
          .Case([](arith::MinNumFOp) { return FloatOp::MinNum; })
          .Default([](Operation *) { return std::nullopt; });
  if (floatOp) {
    if (!isArithFloat(operandKind(0)))
      return opError(op, "unsupported element type (arithmetic needs f16, "
                         "bf16, f32 or f64)");
    return emit(Opc::FloatBinary, static_cast<int>(*floatOp));
  }

  if (auto cmp = dyn_cast<arith::CmpIOp>(op))
    return emit(Opc::CmpI, static_cast<int>(cmp.getPredicate()));
  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    if (!isArithFloat(operandKind(0)) && operandKind(0) != ElemKind::F8E8M0 &&
        operandKind(0) != ElemKind::F4E2M1)
      return opError(op, "unsupported element type");
    return emit(Opc::CmpF, static_cast<int>(cmp.getPredicate()));
  }
  if (isa<arith::SelectOp>(op)) {
    if (info(op->getResult(0)).kind == ElemKind::MemRef)
      return opError(op, "selecting memrefs is not supported");
    llvm::Expected<Instr> instr = makeInstr(Opc::Select, op, op->getOperands());
    if (!instr)
      return instr.takeError();
    // A scalar i1 condition selects whole vectors.
    instr->imm0 = info(op->getOperand(0)).shape.empty() &&
                  !info(op->getResult(0)).shape.empty();
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  }
  if (isa<arith::IndexCastOp, arith::ExtSIOp>(op))
    return emit(Opc::IntCast, /*signed=*/1);
  if (isa<arith::IndexCastUIOp, arith::ExtUIOp, arith::TruncIOp>(op))
    return emit(Opc::IntCast, /*signed=*/0);
  if (isa<arith::NegFOp>(op)) {
    if (operandKind(0) == ElemKind::F8E8M0)
      return opError(op, "f8E8M0FNU has no sign");
    return emit(Opc::FloatUnary, static_cast<int>(FloatUnaryOp::Neg));
  }
  if (isa<arith::BitcastOp>(op))
    return emit(Opc::Bitcast);
  if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
    ElemKind from = operandKind(0), to = info(op->getResult(0)).kind;
    if (to == ElemKind::F4E2M1)
      return opError(op, "arith.truncf to f4E2M1FN is not supported: the "
                         "upstream lowering rounds half-up; use "
                         "arith.scaling_truncf (packed_scaled_trunc on "
                         "gfx950)");
    bool fromOk = isArithFloat(from) || from == ElemKind::F8E8M0 ||
                  from == ElemKind::F4E2M1;
    bool toOk = isArithFloat(to) || to == ElemKind::F8E8M0;
    if (!fromOk || !toOk)
      return opError(op, "unsupported conversion");
    if (auto trunc = dyn_cast<arith::TruncFOp>(op))
      if (trunc.getRoundingmode() &&
          *trunc.getRoundingmode() != arith::RoundingMode::to_nearest_even)
        return opError(op, "only round-to-nearest-even truncation is "
                           "supported");
    return emit(Opc::FloatConvert);
  }
  if (isa<arith::UIToFPOp, arith::SIToFPOp>(op)) {
    if (!isArithFloat(info(op->getResult(0)).kind))
      return opError(op, "unsupported result element type");
    return emit(Opc::IntToFloat, isa<arith::SIToFPOp>(op));
  }
  if (isa<arith::FPToSIOp, arith::FPToUIOp>(op)) {
    if (!isArithFloat(operandKind(0)))
      return opError(op, "unsupported operand element type");
    return emit(Opc::FloatToInt, isa<arith::FPToSIOp>(op));
  }
  if (isa<arith::MulUIExtendedOp>(op))
    return emit(Opc::MulUIExtended);
  handled = false;
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// vector
//===----------------------------------------------------------------------===//

llvm::Error Compiler::compileVector(Operation *op, int32_t target,
                                    bool &handled) {
  handled = true;
  auto emit = [&](Opc opc, ValueRange inputs, int sub = 0) -> llvm::Error {
    llvm::Expected<Instr> instr = makeInstr(opc, op, inputs);
    if (!instr)
      return instr.takeError();
    instr->sub = sub;
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  };
  auto shapeOf = [&](Value v) -> ArrayRef<int64_t> { return info(v).shape; };

  // Loads and stores move contiguous elements, which n-D vectors are not.
  if (isa<vector::LoadOp, vector::StoreOp, vector::MaskedLoadOp,
          vector::MaskedStoreOp>(op)) {
    Value vector = isa<vector::StoreOp, vector::MaskedStoreOp>(op)
                       ? op->getOperand(0)
                       : op->getResult(0);
    if (isa<vector::MaskedStoreOp>(op))
      vector = cast<vector::MaskedStoreOp>(op).getValueToStore();
    if (cast<VectorType>(vector.getType()).getRank() != 1)
      return opError(op, "only 1-D vectors are supported");
  }
  if (auto load = dyn_cast<vector::LoadOp>(op)) {
    SmallVector<Value> inputs{load.getBase()};
    llvm::append_range(inputs, load.getIndices());
    return emit(Opc::Load, inputs);
  }
  if (auto store = dyn_cast<vector::StoreOp>(op)) {
    SmallVector<Value> inputs{store.getBase()};
    llvm::append_range(inputs, store.getIndices());
    inputs.push_back(store.getValueToStore());
    return emit(Opc::Store, inputs);
  }
  if (auto load = dyn_cast<vector::MaskedLoadOp>(op)) {
    SmallVector<Value> inputs{load.getBase()};
    llvm::append_range(inputs, load.getIndices());
    inputs.push_back(load.getMask());
    inputs.push_back(load.getPassThru());
    return emit(Opc::MaskedLoad, inputs);
  }
  if (auto store = dyn_cast<vector::MaskedStoreOp>(op)) {
    SmallVector<Value> inputs{store.getBase()};
    llvm::append_range(inputs, store.getIndices());
    inputs.push_back(store.getMask());
    inputs.push_back(store.getValueToStore());
    return emit(Opc::MaskedStore, inputs);
  }
  if (isa<vector::BitCastOp>(op))
    return emit(Opc::VecBitcast, op->getOperands());
  if (isa<vector::FMAOp>(op)) {
    if (!isArithFloat(info(op->getOperand(0)).kind))
      return opError(op, "unsupported element type");
    return emit(Opc::Fma, op->getOperands());
  }
  if (auto reduction = dyn_cast<vector::ReductionOp>(op)) {
    ElemKind kind = info(op->getOperand(0)).kind;
    bool isFloat = kind != ElemKind::Int;
    if (isFloat && !isArithFloat(kind))
      return opError(op, "unsupported element type");
    std::optional<ReduceOp> reduce;
    switch (reduction.getKind()) {
    case vector::CombiningKind::ADD:
      reduce = ReduceOp::Add;
      break;
    case vector::CombiningKind::MUL:
      reduce = ReduceOp::Mul;
      break;
    case vector::CombiningKind::MINUI:
      reduce = isFloat ? std::nullopt : std::optional(ReduceOp::MinUI);
      break;
    case vector::CombiningKind::MINSI:
      reduce = isFloat ? std::nullopt : std::optional(ReduceOp::MinSI);
      break;
    case vector::CombiningKind::MAXUI:
      reduce = isFloat ? std::nullopt : std::optional(ReduceOp::MaxUI);
      break;
    case vector::CombiningKind::MAXSI:
      reduce = isFloat ? std::nullopt : std::optional(ReduceOp::MaxSI);
      break;
    case vector::CombiningKind::AND:
      reduce = isFloat ? std::nullopt : std::optional(ReduceOp::And);
      break;
    case vector::CombiningKind::OR:
      reduce = isFloat ? std::nullopt : std::optional(ReduceOp::Or);
      break;
    case vector::CombiningKind::XOR:
      reduce = isFloat ? std::nullopt : std::optional(ReduceOp::Xor);
      break;
    case vector::CombiningKind::MINNUMF:
      reduce = isFloat ? std::optional(ReduceOp::MinNumF) : std::nullopt;
      break;
    case vector::CombiningKind::MAXNUMF:
      reduce = isFloat ? std::optional(ReduceOp::MaxNumF) : std::nullopt;
      break;
    case vector::CombiningKind::MINIMUMF:
      reduce = isFloat ? std::optional(ReduceOp::MinimumF) : std::nullopt;
      break;
    case vector::CombiningKind::MAXIMUMF:
      reduce = isFloat ? std::optional(ReduceOp::MaximumF) : std::nullopt;
      break;
    }
    if (!reduce)
      return opError(op, "unsupported reduction kind for this element type");
    return emit(Opc::Reduction, op->getOperands(), static_cast<int>(*reduce));
  }
  if (auto extract = dyn_cast<vector::ExtractOp>(op)) {
    ArrayRef<int64_t> srcShape = shapeOf(extract.getSource());
    ArrayRef<int64_t> positions = extract.getStaticPosition();
    int64_t inner = getNumElements(srcShape.drop_front(positions.size()));
    if (extract.getDynamicPosition().empty()) {
      for (int64_t p : positions)
        if (p < 0)
          return opError(op, "poison positions are not supported");
      SmallVector<int64_t> index(positions.begin(), positions.end());
      int64_t base =
          linearize(index, srcShape.take_front(positions.size())) * inner;
      std::vector<int32_t> srcInput(inner, 0);
      std::vector<int64_t> srcElem(inner);
      for (int64_t i = 0; i < inner; ++i)
        srcElem[i] = base + i;
      return addPermute(op, target, ValueRange{extract.getSource()},
                        std::move(srcInput), std::move(srcElem));
    }
    SmallVector<Value> inputs{extract.getSource()};
    llvm::append_range(inputs, extract.getDynamicPosition());
    llvm::Expected<Instr> instr = makeInstr(Opc::ExtractDyn, op, inputs);
    if (!instr)
      return instr.takeError();
    for (int64_t p : positions)
      instr->permuteElem.push_back(ShapedType::isDynamic(p) ? -1 : p);
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  }
  if (auto insert = dyn_cast<vector::InsertOp>(op)) {
    ArrayRef<int64_t> destShape = shapeOf(insert.getDest());
    ArrayRef<int64_t> positions = insert.getStaticPosition();
    int64_t inner = getNumElements(destShape.drop_front(positions.size()));
    if (insert.getDynamicPosition().empty()) {
      for (int64_t p : positions)
        if (p < 0)
          return opError(op, "poison positions are not supported");
      SmallVector<int64_t> index(positions.begin(), positions.end());
      int64_t base =
          linearize(index, destShape.take_front(positions.size())) * inner;
      int64_t total = getNumElements(destShape);
      std::vector<int32_t> srcInput(total, 0);
      std::vector<int64_t> srcElem(total);
      for (int64_t i = 0; i < total; ++i)
        srcElem[i] = i;
      for (int64_t i = 0; i < inner; ++i) {
        srcInput[base + i] = 1;
        srcElem[base + i] = i;
      }
      return addPermute(op, target,
                        ValueRange{insert.getDest(), insert.getValueToStore()},
                        std::move(srcInput), std::move(srcElem));
    }
    SmallVector<Value> inputs{insert.getValueToStore(), insert.getDest()};
    llvm::append_range(inputs, insert.getDynamicPosition());
    llvm::Expected<Instr> instr = makeInstr(Opc::InsertDyn, op, inputs);
    if (!instr)
      return instr.takeError();
    for (int64_t p : positions)
      instr->permuteElem.push_back(ShapedType::isDynamic(p) ? -1 : p);
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  }
  if (auto broadcast = dyn_cast<vector::BroadcastOp>(op)) {
    ArrayRef<int64_t> srcShape = shapeOf(broadcast.getSource());
    ArrayRef<int64_t> dstShape = shapeOf(broadcast.getResult());
    int64_t total = getNumElements(dstShape);
    size_t lead = dstShape.size() - srcShape.size();
    std::vector<int32_t> srcInput(total, 0);
    std::vector<int64_t> srcElem(total);
    for (int64_t i = 0; i < total; ++i) {
      SmallVector<int64_t, 4> index = delinearize(i, dstShape);
      SmallVector<int64_t, 4> srcIndex;
      for (size_t d = 0; d < srcShape.size(); ++d)
        srcIndex.push_back(srcShape[d] == 1 ? 0 : index[d + lead]);
      srcElem[i] = linearize(srcIndex, srcShape);
    }
    return addPermute(op, target, ValueRange{broadcast.getSource()},
                      std::move(srcInput), std::move(srcElem));
  }
  if (isa<vector::ShapeCastOp>(op)) {
    int64_t total = info(op->getResult(0)).numElements;
    std::vector<int64_t> srcElem(total);
    for (int64_t i = 0; i < total; ++i)
      srcElem[i] = i;
    return addPermute(op, target, op->getOperands(),
                      std::vector<int32_t>(total, 0), std::move(srcElem));
  }
  if (auto transpose = dyn_cast<vector::TransposeOp>(op)) {
    ArrayRef<int64_t> srcShape = shapeOf(transpose.getVector());
    ArrayRef<int64_t> dstShape = shapeOf(transpose.getResult());
    ArrayRef<int64_t> perm = transpose.getPermutation();
    int64_t total = getNumElements(dstShape);
    std::vector<int64_t> srcElem(total);
    for (int64_t i = 0; i < total; ++i) {
      SmallVector<int64_t, 4> index = delinearize(i, dstShape);
      SmallVector<int64_t, 4> srcIndex(srcShape.size());
      for (size_t d = 0; d < perm.size(); ++d)
        srcIndex[perm[d]] = index[d];
      srcElem[i] = linearize(srcIndex, srcShape);
    }
    return addPermute(op, target, op->getOperands(),
                      std::vector<int32_t>(total, 0), std::move(srcElem));
  }
  if (auto slice = dyn_cast<vector::ExtractStridedSliceOp>(op)) {
    ArrayRef<int64_t> srcShape = shapeOf(slice.getSource());
    ArrayRef<int64_t> dstShape = shapeOf(slice.getResult());
    SmallVector<int64_t> offsets, strides;
    for (Attribute a : slice.getOffsets())
      offsets.push_back(cast<IntegerAttr>(a).getInt());
    for (Attribute a : slice.getStrides())
      strides.push_back(cast<IntegerAttr>(a).getInt());
    int64_t total = getNumElements(dstShape);
    std::vector<int64_t> srcElem(total);
    for (int64_t i = 0; i < total; ++i) {
      SmallVector<int64_t, 4> index = delinearize(i, dstShape);
      for (size_t d = 0; d < offsets.size(); ++d)
        index[d] = offsets[d] + index[d] * strides[d];
      srcElem[i] = linearize(index, srcShape);
    }
    return addPermute(op, target, ValueRange{slice.getSource()},
                      std::vector<int32_t>(total, 0), std::move(srcElem));
  }
  if (auto slice = dyn_cast<vector::InsertStridedSliceOp>(op)) {
    ArrayRef<int64_t> srcShape = shapeOf(slice.getValueToStore());
    ArrayRef<int64_t> dstShape = shapeOf(slice.getDest());
    SmallVector<int64_t> offsets, strides;
    for (Attribute a : slice.getOffsets())
      offsets.push_back(cast<IntegerAttr>(a).getInt());
    for (Attribute a : slice.getStrides())
      strides.push_back(cast<IntegerAttr>(a).getInt());
    int64_t total = getNumElements(dstShape);
    std::vector<int32_t> srcInput(total, 0);
    std::vector<int64_t> srcElem(total);
    for (int64_t i = 0; i < total; ++i)
      srcElem[i] = i;
    size_t lead = dstShape.size() - srcShape.size();
    int64_t srcTotal = getNumElements(srcShape);
    for (int64_t j = 0; j < srcTotal; ++j) {
      SmallVector<int64_t, 4> srcIndex = delinearize(j, srcShape);
      SmallVector<int64_t, 4> index(offsets.begin(), offsets.end());
      for (size_t d = 0; d < srcShape.size(); ++d)
        index[d + lead] += srcIndex[d] * strides[d];
      int64_t dst = linearize(index, dstShape);
      srcInput[dst] = 1;
      srcElem[dst] = j;
    }
    return addPermute(op, target,
                      ValueRange{slice.getDest(), slice.getValueToStore()},
                      std::move(srcInput), std::move(srcElem));
  }
  if (auto shuffle = dyn_cast<vector::ShuffleOp>(op)) {
    ArrayRef<int64_t> v1Shape = shapeOf(shuffle.getV1());
    int64_t v1Lead = v1Shape.empty() ? 1 : v1Shape.front();
    int64_t inner = v1Shape.empty() ? 1 : getNumElements(v1Shape.drop_front());
    ArrayRef<int64_t> mask = shuffle.getMask();
    std::vector<int32_t> srcInput;
    std::vector<int64_t> srcElem;
    for (int64_t m : mask) {
      // Poison (-1) picks element 0 of v1.
      int64_t pick = m < 0 ? 0 : m;
      int32_t input = pick >= v1Lead ? 1 : 0;
      int64_t lead = pick >= v1Lead ? pick - v1Lead : pick;
      for (int64_t i = 0; i < inner; ++i) {
        srcInput.push_back(input);
        srcElem.push_back(lead * inner + i);
      }
    }
    return addPermute(op, target, op->getOperands(), std::move(srcInput),
                      std::move(srcElem));
  }
  if (isa<vector::FromElementsOp>(op)) {
    int64_t total = op->getNumOperands();
    std::vector<int32_t> srcInput(total);
    for (int64_t i = 0; i < total; ++i)
      srcInput[i] = static_cast<int32_t>(i);
    return addPermute(op, target, op->getOperands(), std::move(srcInput),
                      std::vector<int64_t>(total, 0));
  }
  if (isa<vector::ToElementsOp>(op))
    return emit(Opc::ToElements, op->getOperands());
  if (isa<vector::CreateMaskOp>(op))
    return emit(Opc::CreateMask, op->getOperands());
  if (auto mask = dyn_cast<vector::ConstantMaskOp>(op)) {
    int32_t slot = lookup(op->getResult(0));
    ArrayRef<int64_t> shape = info(slot).shape;
    ArrayRef<int64_t> sizes = mask.getMaskDimSizes();
    std::vector<uint64_t> bits(info(slot).numElements);
    for (size_t i = 0; i < bits.size(); ++i) {
      SmallVector<int64_t, 4> index = delinearize(i, shape);
      bool on = true;
      for (size_t d = 0; d < index.size(); ++d)
        on &= index[d] < sizes[d];
      bits[i] = on;
    }
    program->constants.push_back({slot, std::move(bits)});
    return llvm::Error::success();
  }
  if (isa<vector::StepOp>(op)) {
    int32_t slot = lookup(op->getResult(0));
    std::vector<uint64_t> bits(info(slot).numElements);
    for (size_t i = 0; i < bits.size(); ++i)
      bits[i] = i;
    program->constants.push_back({slot, std::move(bits)});
    return llvm::Error::success();
  }
  handled = false;
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// amdgpu
//===----------------------------------------------------------------------===//

static bool isVectorOf(Type type, int64_t length,
                       function_ref<bool(Type)> pred) {
  auto vectorType = dyn_cast<VectorType>(type);
  return vectorType && vectorType.getRank() == 1 &&
         vectorType.getNumElements() == length &&
         pred(vectorType.getElementType());
}

llvm::Error Compiler::compileAMDGPU(Operation *op, int32_t target,
                                    bool &handled) {
  handled = true;
  auto isFp4 = [](Type t) { return isa<Float4E2M1FNType>(t); };

  if (auto mfma = dyn_cast<amdgpu::ScaledMFMAOp>(op)) {
    std::optional<MfmaShape> shape =
        getMfmaShape(mfma.getM(), mfma.getN(), mfma.getK());
    if (!shape)
      return opError(op, "unsupported MFMA shape");
    if (!isVectorOf(mfma.getSourceA().getType(), 32, isFp4) ||
        !isVectorOf(mfma.getSourceB().getType(), 32, isFp4))
      return opError(op, "only FP4 (vector<32xf4E2M1FN>) x FP4 operands are "
                         "supported");
    MfmaGeometry geometry = getGeometry(*shape);
    if (!isVectorOf(mfma.getDestC().getType(), geometry.accRegisters,
                    [](Type t) { return t.isF32(); }))
      return opError(op, "unexpected accumulator type");
    bool vectorA = isa<VectorType>(mfma.getScalesA().getType());
    bool vectorB = isa<VectorType>(mfma.getScalesB().getType());
    // A scalar scale is zero-extended to 32 bits by the lowering, so bytes
    // 1..3 select 0 on hardware (amdgpu.md §1.2): almost surely a bug.
    if ((!vectorA && mfma.getScalesIdxA() != 0) ||
        (!vectorB && mfma.getScalesIdxB() != 0))
      return opError(op, "a scalar f8E8M0FNU scale with a nonzero scalesIdx "
                         "selects a zero byte on hardware; use "
                         "vector<4xf8E8M0FNU> scales");
    llvm::Expected<Instr> instr = makeInstr(
        Opc::ScaledMfma, op,
        ValueRange{mfma.getSourceA(), mfma.getSourceB(), mfma.getDestC(),
                   mfma.getScalesA(), mfma.getScalesB()});
    if (!instr)
      return instr.takeError();
    instr->sub = static_cast<int>(*shape);
    // -1 marks a scalar scale (the unsigned attribute must not absorb it).
    instr->imm0 = vectorA ? static_cast<int64_t>(mfma.getScalesIdxA()) : -1;
    instr->imm1 = vectorB ? static_cast<int64_t>(mfma.getScalesIdxB()) : -1;
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  }

  if (auto mfma = dyn_cast<amdgpu::MFMAOp>(op)) {
    auto isBf16 = [](Type t) { return t.isBF16(); };
    std::optional<Bf16MfmaShape> shape =
        getBf16MfmaShape(mfma.getM(), mfma.getN(), mfma.getK());
    if (!shape || !isVectorOf(mfma.getSourceA().getType(), 8, isBf16) ||
        !isVectorOf(mfma.getSourceB().getType(), 8, isBf16))
      return opError(op, "only the bf16 MFMAs 16x16x32 and 32x32x16 with "
                         "vector<8xbf16> operands are supported");
    Bf16MfmaGeometry geometry = getGeometry(*shape);
    if (!isVectorOf(mfma.getDestC().getType(), geometry.accRegisters,
                    [](Type t) { return t.isF32(); }))
      return opError(op, "unexpected accumulator type");
    if (mfma.getBlocks() != 1 || mfma.getCbsz() != 0 || mfma.getAbid() != 0 ||
        mfma.getBlgp() != amdgpu::MFMAPermB::none ||
        mfma.getReducePrecision() || mfma.getNegateA() || mfma.getNegateB() ||
        mfma.getNegateC())
      return opError(op, "blocks, cbsz, abid, blgp, reducePrecision and "
                         "negation are not supported");
    llvm::Expected<Instr> instr = makeInstr(
        Opc::Mfma, op,
        ValueRange{mfma.getSourceA(), mfma.getSourceB(), mfma.getDestC()});
    if (!instr)
      return instr.takeError();
    instr->sub = static_cast<int>(*shape);
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  }

  if (auto gather = dyn_cast<amdgpu::GatherToLDSOp>(op)) {
    SmallVector<Value> inputs{gather.getSrc()};
    llvm::append_range(inputs, gather.getSrcIndices());
    inputs.push_back(gather.getDst());
    llvm::append_range(inputs, gather.getDstIndices());
    llvm::Expected<Instr> instr = makeInstr(Opc::GatherToLds, op, inputs);
    if (!instr)
      return instr.takeError();
    Type transfer = gather.getTransferType();
    int64_t bits = 0;
    if (auto vectorType = dyn_cast<VectorType>(transfer))
      bits = vectorType.getNumElements() *
             vectorType.getElementType().getIntOrFloatBitWidth();
    else if (transfer.isIntOrFloat())
      bits = transfer.getIntOrFloatBitWidth();
    int64_t bytes = bits / 8;
    if (bits % 8 != 0 ||
        !llvm::is_contained(ArrayRef<int64_t>{1, 2, 4, 8, 12, 16}, bytes))
      return opError(op, "unsupported transfer type " +
                             llvm::Twine(printed(transfer)));
    if (info(gather.getDst()).mem.space != MemSpace::Workgroup)
      return opError(op, "destination must be a workgroup memref");
    if (info(gather.getSrc()).mem.space == MemSpace::Workgroup)
      return opError(op, "source must be global memory");
    instr->imm0 = static_cast<int64_t>(gather.getSrcIndices().size());
    instr->imm1 = bytes;
    // Bytes and shorts are widened to a dword, 96 bits padded to 128.
    instr->imm2 = bytes <= 4 ? 4 : (bytes == 8 ? 8 : 16);
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  }

  if (auto trunc = dyn_cast<amdgpu::PackedScaledTruncOp>(op)) {
    if (!isVectorOf(trunc.getRes().getType(), 8, isFp4))
      return opError(op, "only FP4 results (vector<8xf4E2M1FN>) are "
                         "supported");
    if (!isArithFloat(info(trunc.getSource()).kind))
      return opError(op, "unsupported source type");
    // LLVM translation rejects byte indices past 3 for FP4 (amdgpu.md §1.4).
    if (trunc.getIndex() > 3)
      return opError(op, "FP4 byte index " + llvm::Twine(trunc.getIndex()) +
                             " is out of range 0..3");
    SmallVector<Value> inputs{trunc.getSource(), trunc.getScale()};
    if (trunc.getExisting())
      inputs.push_back(trunc.getExisting());
    llvm::Expected<Instr> instr = makeInstr(Opc::PackedScaledTrunc, op, inputs);
    if (!instr)
      return instr.takeError();
    instr->imm0 = trunc.getIndex();
    instr->imm1 = trunc.getExisting() != nullptr;
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  }

  if (auto ext = dyn_cast<amdgpu::ScaledExtPackedOp>(op)) {
    auto sourceType = dyn_cast<VectorType>(ext.getSource().getType());
    if (!sourceType || !isFp4(sourceType.getElementType()))
      return opError(op, "only FP4 sources are supported");
    if (ext.getIndex() > 3)
      return opError(op, "FP4 byte index " + llvm::Twine(ext.getIndex()) +
                             " is out of range 0..3");
    llvm::Expected<Instr> instr = makeInstr(
        Opc::ScaledExtPacked, op, ValueRange{ext.getSource(), ext.getScale()});
    if (!instr)
      return instr.takeError();
    instr->imm0 = ext.getIndex();
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  }

  if (auto cast = dyn_cast<amdgpu::FatRawBufferCastOp>(op)) {
    SmallVector<Value> inputs{cast.getSource()};
    if (cast.getValidBytes())
      inputs.push_back(cast.getValidBytes());
    llvm::Expected<Instr> instr = makeInstr(Opc::FatRawBufferCast, op, inputs);
    if (!instr)
      return instr.takeError();
    instr->imm0 = cast.getValidBytes() != nullptr;
    instr->imm1 = cast.getBoundsCheck();
    const SlotInfo &src = info(cast.getSource());
    const SlotInfo &dst = info(cast.getResult());
    if (src.mem.elemBytes != dst.mem.elemBytes ||
        src.mem.shape != dst.mem.shape)
      return opError(op, "casts between different shapes are not supported");
    program->blocks[target].instrs.push_back(std::move(*instr));
    return llvm::Error::success();
  }
  handled = false;
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Program>>
emu::compileKernel(gpu::GPUFuncOp func) {
  return Compiler(func).run();
}
