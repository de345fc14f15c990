//===- RoundAttentionIO.cpp - attention reading and writing bf16 ----------===//
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
#define GEN_PASS_DEF_ROUNDATTENTIONIOPASS
#include "mxfp4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;

namespace {

/// The operands and results of an attention composite that are bf16 in its
/// variant: all but the log-sum-exp.
struct Rounded {
  SmallVector<unsigned> operands, results;
};

} // namespace

static Rounded roundedOf(StringRef kind) {
  if (kind == mxfp4::kCausalAttention)
    return {{0, 1, 2}, {0}};           // q, k, v -> o
  return {{0, 1, 2, 3, 5}, {0, 1, 2}}; // q, k, v, o, dO -> dq, dk, dv
}

static bool isF32Tensor(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  return tensor && tensor.getElementType().isF32();
}

/// The variant of composite `callee` whose `rounded` operands and results
/// are bf16: its body widens those operands, computes what `callee`'s does
/// and rounds those results.
static func::FuncOp bf16Variant(SymbolTable &symbols, func::FuncOp callee,
                                const Rounded &rounded) {
  std::string name = (callee.getName() + "_bf16io").str();
  if (auto variant = symbols.lookup<func::FuncOp>(name))
    return variant;
  OpBuilder b(callee);
  Type bf16 = b.getBF16Type();
  Location loc = callee.getLoc();
  FunctionType type = callee.getFunctionType();
  SmallVector<Type> inputs(type.getInputs()), results(type.getResults());
  for (unsigned i : rounded.operands)
    inputs[i] = cast<RankedTensorType>(inputs[i]).clone(bf16);
  for (unsigned i : rounded.results)
    results[i] = cast<RankedTensorType>(results[i]).clone(bf16);
  auto variant =
      func::FuncOp::create(b, loc, name, b.getFunctionType(inputs, results));
  variant.setPrivate();
  variant->setAttr(mxfp4::kCompositeAttrName,
                   callee->getAttr(mxfp4::kCompositeAttrName));
  Block *entry = variant.addEntryBlock();
  OpBuilder body = OpBuilder::atBlockBegin(entry);
  IRMapping map;
  map.map(callee.getArguments(), entry->getArguments());
  for (unsigned i : rounded.operands)
    map.map(callee.getArgument(i),
            mxfp4::convertElements(body, loc, entry->getArgument(i),
                                   b.getF32Type()));
  for (Operation &op : callee.getBody().front().without_terminator())
    body.clone(op, map);
  auto ret = cast<func::ReturnOp>(callee.getBody().front().getTerminator());
  SmallVector<Value> values = llvm::map_to_vector(
      ret.getOperands(), [&](Value v) { return map.lookupOrDefault(v); });
  for (unsigned i : rounded.results)
    values[i] = mxfp4::convertElements(body, loc, values[i], bf16);
  func::ReturnOp::create(body, loc, values);
  symbols.insert(variant);
  return variant;
}

/// `value` rounded to bf16 where it is made: reshapes (which keep the
/// elements' order) that only lead to `value` are replayed on the rounded
/// tensor, so that the rounding meets the op that computes the elements
/// (and fuses into it); a widened bf16 tensor is used as it is.
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
  // A widened bf16 tensor rounds back to itself.
  Value rounded = mxfp4::widenedFrom(source);
  if (!rounded || !getElementTypeOrSelf(rounded.getType()).isBF16())
    rounded =
        mxfp4::convertElements(b, value.getLoc(), source, b.getBF16Type());
  for (Operation *reshape : llvm::reverse(reshapes))
    rounded = mxfp4::reshapeLike(b, reshape, rounded);
  return rounded;
}

/// Gives the readers of the f32 value `wide` the bf16 value `narrow`
/// instead, widened where they read it: reshapes are replayed on bf16, a
/// linalg.generic widens in its body (the widening fused into it),
/// and the other readers (quantizations, returns) share one widening
/// generic, which the quantize kernels compute as their source's producer.
static void widenAtReaders(OpBuilder &b, Value narrow, Value wide) {
  Value shared;
  for (OpOperand &use : llvm::make_early_inc_range(wide.getUses())) {
    Operation *user = use.getOwner();
    OpBuilder::InsertionGuard guard(b);
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user)) {
      b.setInsertionPoint(user);
      widenAtReaders(b, mxfp4::reshapeLike(b, user, narrow),
                     user->getResult(0));
      user->erase();
      continue;
    }
    auto g = dyn_cast<linalg::GenericOp>(user);
    if (g && g.isDpsInput(&use)) {
      use.set(narrow);
      mxfp4::widenInReader(g, use);
      continue;
    }
    if (!shared) {
      b.setInsertionPointAfterValue(narrow);
      shared = mxfp4::convertElements(b, narrow.getLoc(), narrow,
                                      getElementTypeOrSelf(wide.getType()));
    }
    use.set(shared);
  }
}

namespace {

struct RoundAttentionIOPass
    : mxfp4::impl::RoundAttentionIOPassBase<RoundAttentionIOPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    /// The composite `call` calls, if it is an attention whose operands and
    /// results to round are f32.
    auto attention = [&](func::CallOp call) -> func::FuncOp {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      auto kind =
          callee ? callee->getAttrOfType<StringAttr>(mxfp4::kCompositeAttrName)
                 : StringAttr();
      if (!kind || (kind.getValue() != mxfp4::kCausalAttention &&
                    kind.getValue() != mxfp4::kCausalAttentionBackward))
        return {};
      Rounded rounded = roundedOf(kind.getValue());
      if (call.getNumOperands() <= rounded.operands.back() ||
          call.getNumResults() <= rounded.results.back())
        return {};
      for (unsigned i : rounded.operands)
        if (!isF32Tensor(call.getOperand(i).getType()))
          return {};
      for (unsigned i : rounded.results)
        if (!isF32Tensor(call.getResult(i).getType()))
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
    // The bf16 form of each f32 value: one rounding per value, shared by
    // the calls that read it, and the bf16 results of the calls made here
    // (the forward's o, which the backward reads).
    DenseMap<Value, Value> narrow;
    SmallVector<Value> sources;
    SetVector<func::FuncOp> replaced;
    SmallVector<std::pair<func::CallOp, func::CallOp>> made;
    for (func::CallOp call : calls) {
      func::FuncOp callee = attention(call);
      Rounded rounded =
          roundedOf(callee->getAttrOfType<StringAttr>(mxfp4::kCompositeAttrName)
                        .getValue());
      OpBuilder b(call);
      SmallVector<Value> operands(call.getOperands());
      for (unsigned i : rounded.operands) {
        Value &r = narrow[operands[i]];
        if (!r) {
          r = roundAtSource(b, operands[i]);
          sources.push_back(operands[i]);
        }
        operands[i] = r;
      }
      auto bf16Call = func::CallOp::create(
          b, call.getLoc(), bf16Variant(symbols, callee, rounded), operands);
      for (unsigned i : rounded.results)
        narrow[call.getResult(i)] = bf16Call.getResult(i);
      made.emplace_back(call, bf16Call);
      replaced.insert(callee);
    }
    // The f32 calls go, the last first (a backward reads its forward's
    // results); their other readers read the bf16 results, widened.
    OpBuilder b(module.getContext());
    for (auto [call, bf16Call] : llvm::reverse(made)) {
      for (auto [wide, result] :
           llvm::zip(call.getResults(), bf16Call.getResults())) {
        if (result.getType() == wide.getType())
          wide.replaceAllUsesWith(result);
        else
          widenAtReaders(b, result, wide);
      }
      call.erase();
    }
    // The f32 reshapes that only led to the calls, and a widening whose
    // bf16 input the calls read instead.
    for (Value v : sources) {
      while (v.use_empty() &&
             isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
                 v.getDefiningOp())) {
        Operation *reshape = v.getDefiningOp();
        v = reshape->getOperand(0);
        reshape->erase();
      }
      if (v.use_empty() && mxfp4::widenedFrom(v))
        v.getDefiningOp()->erase();
    }
    for (func::FuncOp callee : replaced)
      if (SymbolTable::symbolKnownUseEmpty(callee, module))
        callee.erase();
  }
};

} // namespace
