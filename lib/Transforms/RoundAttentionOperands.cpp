//===- RoundAttentionOperands.cpp - attention on bf16 q, k, v -------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Transforms/Passes.h"

#include "ElementConversion.h"

#include "mxfp4/Dialect/MXFP4/Transforms/Composites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_ROUNDATTENTIONOPERANDSPASS
#include "mxfp4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;

/// The operands of an attention composite that this pass rounds: q, k, v.
static constexpr unsigned kRounded = 3;

/// The variant of composite `callee` that takes q, k and v as bf16: its
/// body widens them and then computes what `callee`'s does.
static func::FuncOp bf16Variant(SymbolTable &symbols, func::FuncOp callee) {
  std::string name = (callee.getName() + "_bf16qkv").str();
  if (auto variant = symbols.lookup<func::FuncOp>(name))
    return variant;
  OpBuilder b(callee);
  Type bf16 = b.getBF16Type();
  FunctionType type = callee.getFunctionType();
  SmallVector<Type> inputs(type.getInputs());
  for (unsigned i = 0; i < kRounded; ++i)
    inputs[i] = cast<RankedTensorType>(inputs[i]).clone(bf16);
  auto variant = func::FuncOp::create(
      b, callee.getLoc(), name, b.getFunctionType(inputs, type.getResults()));
  variant.setPrivate();
  variant->setAttr(mxfp4::kCompositeAttrName,
                   callee->getAttr(mxfp4::kCompositeAttrName));
  Block *entry = variant.addEntryBlock();
  OpBuilder body = OpBuilder::atBlockBegin(entry);
  IRMapping map;
  for (auto [i, arg] : llvm::enumerate(entry->getArguments()))
    map.map(callee.getArgument(i),
            i < kRounded ? mxfp4::convertElements(body, callee.getLoc(), arg,
                                                  b.getF32Type())
                         : Value(arg));
  for (Operation &op : callee.getBody().front())
    body.clone(op, map);
  symbols.insert(variant);
  return variant;
}

/// `value` rounded to bf16 where it is made: reshapes (which keep the
/// elements' order) that only lead to `value` are replayed on the rounded
/// tensor, so that the rounding meets the op that computes the elements
/// (and fuses into it).
static Value roundAtSource(OpBuilder &b, Value value) {
  SmallVector<Operation *> reshapes;
  Value source = value;
  while (Operation *def = source.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def) ||
        !def->getOperand(0).hasOneUse())
      break;
    reshapes.push_back(def);
    source = def->getOperand(0);
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfterValue(source);
  Type bf16 = b.getBF16Type();
  Value rounded = mxfp4::convertElements(b, value.getLoc(), source, bf16);
  for (Operation *reshape : llvm::reverse(reshapes)) {
    auto type = cast<RankedTensorType>(reshape->getResult(0).getType());
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape))
      rounded = tensor::CollapseShapeOp::create(
          b, reshape->getLoc(), type.clone(bf16), rounded,
          collapse.getReassociationIndices());
    else
      rounded = tensor::ExpandShapeOp::create(
          b, reshape->getLoc(), type.clone(bf16), rounded,
          cast<tensor::ExpandShapeOp>(reshape).getReassociationIndices(),
          cast<tensor::ExpandShapeOp>(reshape).getMixedOutputShape());
  }
  return rounded;
}

namespace {

struct RoundAttentionOperandsPass
    : mxfp4::impl::RoundAttentionOperandsPassBase<RoundAttentionOperandsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    auto attention = [&](func::CallOp call) -> func::FuncOp {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      auto kind =
          callee ? callee->getAttrOfType<StringAttr>(mxfp4::kCompositeAttrName)
                 : StringAttr();
      if (!kind || (kind.getValue() != mxfp4::kCausalAttention &&
                    kind.getValue() != mxfp4::kCausalAttentionBackward))
        return {};
      if (call.getNumOperands() < kRounded ||
          !llvm::all_of(call.getOperands().take_front(kRounded), [](Value v) {
            auto tensor = dyn_cast<RankedTensorType>(v.getType());
            return tensor && tensor.getElementType().isF32();
          }))
        return {};
      return callee;
    };
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      auto caller = call->getParentOfType<func::FuncOp>();
      // A composite's body is its reference decomposition: f32 as written.
      if (!caller->hasAttr(mxfp4::kCompositeAttrName) && attention(call))
        calls.push_back(call);
    });
    // One rounding per value, shared by the forward and backward calls.
    DenseMap<Value, Value> rounded;
    SetVector<func::FuncOp> replaced;
    for (func::CallOp call : calls) {
      func::FuncOp callee = attention(call);
      OpBuilder b(call);
      SmallVector<Value> operands(call.getOperands());
      for (unsigned i = 0; i < kRounded; ++i) {
        Value &r = rounded[operands[i]];
        if (!r)
          r = roundAtSource(b, operands[i]);
        operands[i] = r;
      }
      auto bf16Call = func::CallOp::create(
          b, call.getLoc(), bf16Variant(symbols, callee), operands);
      call.replaceAllUsesWith(bf16Call.getResults());
      call.erase();
      replaced.insert(callee);
    }
    // The f32 reshapes that led to the calls.
    for (auto [value, unused] : rounded) {
      Value v = value;
      while (v.use_empty() &&
             isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
                 v.getDefiningOp())) {
        Operation *reshape = v.getDefiningOp();
        v = reshape->getOperand(0);
        reshape->erase();
      }
    }
    for (func::FuncOp callee : replaced)
      if (SymbolTable::symbolKnownUseEmpty(callee, module))
        callee.erase();
  }
};

} // namespace
