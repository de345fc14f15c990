//===- Optimizer.cpp - AdamW with clipping and a schedule, as IR ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Models/Optimizer.h"

#include "TensorBuilder.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mxfp4;

llvm::Error AdamWConfig::verify() const {
  auto bad = [](const std::string &what) {
    return llvm::createStringError("optimizer: " + what);
  };
  if (!(lr > 0) || !std::isfinite(lr))
    return bad(
        llvm::formatv("lr must be positive and finite, got {0}", lr).str());
  if (!(minLrRatio >= 0 && minLrRatio <= 1))
    return bad(
        llvm::formatv("min_lr_ratio must be in [0, 1], got {0}", minLrRatio)
            .str());
  if (warmupSteps < 0 || totalSteps < 1 || warmupSteps > totalSteps)
    return bad(llvm::formatv("want 0 <= warmup_steps <= total_steps and "
                             "total_steps >= 1, got {0} and {1}",
                             warmupSteps, totalSteps)
                   .str());
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
    return bad(
        llvm::formatv("betas must be in [0, 1), got {0} and {1}", beta1, beta2)
            .str());
  if (!(eps > 0) || !(weightDecay >= 0) || !(clipNorm > 0) ||
      !std::isfinite(weightDecay) || !std::isfinite(clipNorm))
    return bad(llvm::formatv("want eps > 0, weight_decay >= 0 and clip_norm "
                             "> 0, got {0}, {1} and {2}",
                             eps, weightDecay, clipNorm)
                   .str());
  return llvm::Error::success();
}

static Value scalarTensor(OpBuilder &b, Location loc, Value scalar) {
  return tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, scalar.getType()), scalar);
}

static Value scalarOf(OpBuilder &b, Location loc, Value tensor0d) {
  return tensor::ExtractOp::create(b, loc, tensor0d, ValueRange{});
}

/// The 0-d f32 `sumSquares` of the gradients and the step as the clip
/// coefficient, the learning rate and AdamW's per-step constants.
namespace {
struct AdamWScalars {
  Value norm, clip, lr, stepSize, bc2Sqrt, decayFactor;
};
} // namespace

static AdamWScalars buildAdamWScalars(OpBuilder &b, Location loc,
                                      const AdamWConfig &c, Value sumSquares,
                                      Value step) {
  TensorBuilder tb(b, loc);
  // Global gradient norm and the clip coefficient, in f32 as
  // torch.nn.utils.clip_grad_norm_ computes them.
  Value norm = math::SqrtOp::create(b, loc, sumSquares);
  Value coef =
      arith::DivFOp::create(b, loc, tb.f32(c.clipNorm),
                            arith::AddFOp::create(b, loc, norm, tb.f32(1e-6)));
  Value clip = arith::MinimumFOp::create(b, loc, coef, tb.f32(1.0));

  // The schedule and bias corrections in f64, as PyTorch's Python scalars.
  Value t = arith::SIToFPOp::create(b, loc, b.getF64Type(), step);
  Value lr = tb.f64(c.lr), minLr = tb.f64(c.lr * c.minLrRatio);
  Value warmup =
      tb.f64(static_cast<double>(std::max<int64_t>(c.warmupSteps, 1)));
  Value one = tb.f64(1.0);
  Value warm = arith::DivFOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, lr, arith::AddFOp::create(b, loc, t, one)),
      warmup);
  double decaySteps =
      static_cast<double>(std::max<int64_t>(c.totalSteps - c.warmupSteps, 1));
  Value progress = arith::DivFOp::create(
      b, loc, arith::SubFOp::create(b, loc, t, tb.f64(c.warmupSteps)),
      tb.f64(decaySteps));
  progress = arith::MinimumFOp::create(
      b, loc, arith::MaximumFOp::create(b, loc, progress, tb.f64(0.0)), one);
  Value cosine = math::CosOp::create(
      b, loc, arith::MulFOp::create(b, loc, tb.f64(M_PI), progress));
  Value decayed = arith::AddFOp::create(
      b, loc, minLr,
      arith::MulFOp::create(
          b, loc,
          arith::MulFOp::create(b, loc, tb.f64(0.5),
                                arith::SubFOp::create(b, loc, lr, minLr)),
          arith::AddFOp::create(b, loc, one, cosine)));
  Value inWarmup = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, t,
                                         tb.f64(c.warmupSteps));
  Value lrT = arith::SelectOp::create(b, loc, inWarmup, warm, decayed);
  Value t1 = arith::AddFOp::create(b, loc, t, one);
  auto biasCorrection = [&](double beta) -> Value {
    return arith::SubFOp::create(
        b, loc, one, math::PowFOp::create(b, loc, tb.f64(beta), t1));
  };
  auto toF32 = [&](Value x) -> Value {
    return arith::TruncFOp::create(b, loc, b.getF32Type(), x);
  };
  Value stepSize = toF32(arith::NegFOp::create(
      b, loc, arith::DivFOp::create(b, loc, lrT, biasCorrection(c.beta1))));
  Value bc2Sqrt = toF32(math::SqrtOp::create(b, loc, biasCorrection(c.beta2)));
  Value decayFactor = toF32(arith::SubFOp::create(
      b, loc, one, arith::MulFOp::create(b, loc, lrT, tb.f64(c.weightDecay))));
  return {norm, clip, toF32(lrT), stepSize, bc2Sqrt, decayFactor};
}

/// AdamW on one tensor: its gradient `grad` (clipped by `k.clip`) updates
/// `w`, `m` and `v`, with weight decay where `decay` says, or, given
/// `decayMask` (a tensor of w's shape), where its element is not 0.
/// Returns the new w, m and v.
static SmallVector<Value> buildAdamWUpdate(OpBuilder &b, Location loc,
                                           const AdamWConfig &c,
                                           const AdamWScalars &k, Value grad,
                                           Value w, Value m, Value v,
                                           bool decay, Value decayMask) {
  TensorBuilder tb(b, loc);
  Value beta1 = tb.f32(c.beta1), beta2 = tb.f32(c.beta2),
        rest1 = tb.f32(1.0 - c.beta1), rest2 = tb.f32(1.0 - c.beta2),
        eps = tb.f32(c.eps), noDecay = tb.f32(1.0), zero = tb.f32(0.0);
  auto type = cast<RankedTensorType>(w.getType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<Value> ins = {grad};
  if (decayMask)
    ins.push_back(decayMask);
  // One pass over the parameter: the gradient in, the weight and both
  // moments read and overwritten through the outputs. Their destinations
  // are the arguments, so where the caller's buffers are writable (the
  // GPU targets' host plans) one-shot bufferization updates them in place
  // and the step holds no second set of weights and moments; the CPU
  // pipeline keeps its arguments read-only and copies first.
  // PyTorch 1.13 _single_tensor_adamw, in its operation order.
  auto update = linalg::GenericOp::create(
      b, loc, TypeRange{type, type, type}, ins, ValueRange{w, m, v},
      SmallVector<AffineMap>(ins.size() + 3, id),
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange s) {
        // s: the gradient (and the mask), then the weight, m and v before
        // the update.
        Value factor = decay ? k.decayFactor : noDecay;
        if (decayMask)
          factor = arith::SelectOp::create(
              nb, l,
              arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNE, s[1],
                                    zero),
              k.decayFactor, noDecay);
        size_t at = decayMask ? 2 : 1;
        Value grad = arith::MulFOp::create(nb, l, s[0], k.clip);
        Value p = arith::MulFOp::create(nb, l, s[at], factor);
        Value m1 = arith::AddFOp::create(
            nb, l, arith::MulFOp::create(nb, l, s[at + 1], beta1),
            arith::MulFOp::create(nb, l, rest1, grad));
        Value v1 = arith::AddFOp::create(
            nb, l, arith::MulFOp::create(nb, l, s[at + 2], beta2),
            arith::MulFOp::create(
                nb, l, arith::MulFOp::create(nb, l, rest2, grad), grad));
        Value denom = arith::AddFOp::create(
            nb, l,
            arith::DivFOp::create(nb, l, math::SqrtOp::create(nb, l, v1),
                                  k.bc2Sqrt),
            eps);
        Value p1 = arith::AddFOp::create(
            nb, l, p,
            arith::MulFOp::create(nb, l, k.stepSize,
                                  arith::DivFOp::create(nb, l, m1, denom)));
        linalg::YieldOp::create(nb, l, ValueRange{p1, m1, v1});
      });
  return {update.getResult(0), update.getResult(1), update.getResult(2)};
}

SmallVector<Value> mxfp4::buildAdamWStep(OpBuilder &b, Location loc,
                                         const AdamWConfig &c, Value loss,
                                         ArrayRef<Value> grads,
                                         ArrayRef<Value> w, ArrayRef<Value> m,
                                         ArrayRef<Value> v,
                                         ArrayRef<bool> decay, Value step) {
  TensorBuilder tb(b, loc);
  Value sumSquares = tb.f32(0.0);
  for (Value grad : grads)
    sumSquares = arith::AddFOp::create(b, loc, sumSquares,
                                       scalarOf(b, loc, tb.sumAll(grad, true)));
  AdamWScalars k = buildAdamWScalars(b, loc, c, sumSquares, step);
  SmallVector<Value> newW, newM, newV;
  for (size_t i = 0; i < w.size(); ++i) {
    SmallVector<Value> updated = buildAdamWUpdate(b, loc, c, k, grads[i], w[i],
                                                  m[i], v[i], decay[i], {});
    newW.push_back(updated[0]);
    newM.push_back(updated[1]);
    newV.push_back(updated[2]);
  }
  SmallVector<Value> results = {scalarTensor(b, loc, scalarOf(b, loc, loss)),
                                scalarTensor(b, loc, k.norm),
                                scalarTensor(b, loc, k.lr)};
  llvm::append_range(results, newW);
  llvm::append_range(results, newM);
  llvm::append_range(results, newV);
  return results;
}

SmallVector<Value> mxfp4::buildAdamWShardStep(OpBuilder &b, Location loc,
                                              const AdamWConfig &c, Value loss,
                                              Value sumSquares, Value grad,
                                              Value w, Value m, Value v,
                                              Value decayMask, Value step) {
  AdamWScalars k =
      buildAdamWScalars(b, loc, c, scalarOf(b, loc, sumSquares), step);
  SmallVector<Value> updated =
      buildAdamWUpdate(b, loc, c, k, grad, w, m, v, false, decayMask);
  return {scalarTensor(b, loc, scalarOf(b, loc, loss)),
          scalarTensor(b, loc, k.norm), scalarTensor(b, loc, k.lr), updated[0],
          updated[1], updated[2]};
}

llvm::Error mxfp4::addTrainStep(ModuleOp module,
                                const TrainStepOptions &options) {
  if (llvm::Error error = options.adamw.verify())
    return error;
  auto from = module.lookupSymbol<func::FuncOp>(options.from);
  auto fail = [&](const llvm::Twine &what) {
    return llvm::createStringError("train step from @" + options.from + ": " +
                                   what);
  };
  if (!from || from.isExternal())
    return fail("no such function with a body");
  if (module.lookupSymbol("train_step"))
    return fail("the module already has a @train_step");
  FunctionType type = from.getFunctionType();
  // Parameters first, then data tensors, then the step.
  unsigned params = 0, inputs = type.getNumInputs();
  while (params < inputs && from.getArgAttr(params, kParameterAttrName))
    ++params;
  if (!params)
    return fail("no argument is a parameter ({" + kParameterAttrName.str() +
                " = \"name\"} on the leading arguments)");
  if (inputs == params || !from.getArgAttr(inputs - 1, kStepAttrName) ||
      !type.getInput(inputs - 1).isInteger(64))
    return fail("the last argument must be the step (i64 {" +
                kStepAttrName.str() + "})");
  for (unsigned i = params; i + 1 < inputs; ++i)
    if (from.getArgAttr(i, kParameterAttrName))
      return fail(llvm::formatv("argument {0} is a parameter after a data "
                                "argument",
                                i));
  if (type.getNumResults() != params + 1)
    return fail(llvm::formatv("it returns {0} values; want the loss and one "
                              "gradient for each of its {1} parameters",
                              type.getNumResults(), params));
  auto scalarF32 =
      RankedTensorType::get({}, Float32Type::get(module.getContext()));
  if (type.getResult(0) != scalarF32)
    return fail("its first result (the loss) must be tensor<f32>");
  llvm::StringSet<> names, noDecay;
  for (const std::string &n : options.noDecay)
    noDecay.insert(n);
  SmallVector<bool> decay;
  for (unsigned i = 0; i < params; ++i) {
    auto t = dyn_cast<RankedTensorType>(type.getInput(i));
    if (!t || !t.hasStaticShape() || !t.getElementType().isF32() ||
        type.getResult(i + 1) != t)
      return fail(llvm::formatv("parameter {0} must be a static f32 tensor "
                                "with a gradient of its type as result {1}",
                                i, i + 1));
    auto name = from.getArgAttrOfType<StringAttr>(i, kParameterAttrName);
    if (!name)
      return fail(llvm::formatv("parameter {0}'s name is not a string", i));
    if (!names.insert(name.getValue()).second)
      return fail("two parameters are named '" + name.getValue() + "'");
    decay.push_back(options.noDecayGiven ? !noDecay.count(name.getValue())
                                         : t.getRank() >= 2);
  }
  for (const std::string &n : options.noDecay)
    if (!names.count(n))
      return fail("no parameter '" + n + "' (given without weight decay)");
  unsigned data = inputs - 1 - params;
  for (unsigned d : options.integerData) {
    auto t = d < data ? dyn_cast<RankedTensorType>(type.getInput(params + d))
                      : RankedTensorType();
    if (!t || !t.getElementType().isF32())
      return fail(llvm::formatv("data argument {0} (to take as i32) is not an "
                                "f32 tensor",
                                d));
  }

  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointAfter(from);
  Location loc = from.getLoc();
  // A function `name` taking `copies` sets of the parameters, the data
  // (integer data as i32) and the step, whose body is @from's followed by
  // `finish(entry, map, returned)`, which builds the returned values.
  using Finish = llvm::function_ref<SmallVector<Value>(Block *, IRMapping &,
                                                       func::ReturnOp)>;
  auto define = [&](StringRef name, unsigned copies, ArrayRef<Type> resultTypes,
                    Finish finish) {
    SmallVector<Type> argTypes;
    for (unsigned copy = 0; copy < copies; ++copy)
      for (unsigned i = 0; i < params; ++i)
        argTypes.push_back(type.getInput(i));
    for (unsigned d = 0; d < data; ++d) {
      Type t = type.getInput(params + d);
      if (llvm::is_contained(options.integerData, d))
        t = cast<RankedTensorType>(t).clone(IntegerType::get(ctx, 32));
      argTypes.push_back(t);
    }
    argTypes.push_back(b.getI64Type());
    auto func = func::FuncOp::create(b, loc, name,
                                     b.getFunctionType(argTypes, resultTypes));
    for (unsigned i = 0; i < params; ++i)
      func.setArgAttr(i, kParameterAttrName,
                      from.getArgAttr(i, kParameterAttrName));
    for (unsigned d = 0; d < data; ++d)
      if (DictionaryAttr attrs = from.getArgAttrDict(params + d))
        func.setArgAttrs(copies * params + d, attrs);
    func.setArgAttr(argTypes.size() - 1, kStepAttrName, b.getUnitAttr());
    Block *entry = func.addEntryBlock();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(entry);
    // The body of @from on (w, data, step), integer data widened first.
    IRMapping map;
    Block &source = from.getBody().front();
    for (unsigned i = 0; i < params; ++i)
      map.map(source.getArgument(i), entry->getArgument(i));
    for (unsigned d = 0; d < data; ++d) {
      Value arg = entry->getArgument(copies * params + d);
      if (llvm::is_contained(options.integerData, d)) {
        auto t = cast<RankedTensorType>(type.getInput(params + d));
        Value init =
            tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType());
        AffineMap id = b.getMultiDimIdentityMap(t.getRank());
        arg = linalg::GenericOp::create(
                  b, loc, TypeRange{t}, ValueRange{arg}, ValueRange{init},
                  SmallVector<AffineMap>(2, id),
                  SmallVector<utils::IteratorType>(
                      t.getRank(), utils::IteratorType::parallel),
                  [&](OpBuilder &nb, Location l, ValueRange s) {
                    linalg::YieldOp::create(nb, l,
                                            ValueRange{arith::SIToFPOp::create(
                                                nb, l, nb.getF32Type(), s[0])});
                  })
                  .getResult(0);
      }
      map.map(source.getArgument(params + d), arg);
    }
    map.map(source.getArgument(inputs - 1), entry->getArguments().back());
    for (Operation &op : source.without_terminator())
      b.clone(op, map);
    func::ReturnOp::create(
        b, loc,
        finish(entry, map, cast<func::ReturnOp>(source.getTerminator())));
  };

  // @loss(w, data..., step) -> loss: the forward of @from, for held-out
  // batches (canonicalization drops the unused backward).
  if (!module.lookupSymbol("loss"))
    define("loss", 1, {scalarF32},
           [&](Block *, IRMapping &map, func::ReturnOp ret) {
             return SmallVector<Value>{map.lookup(ret.getOperand(0))};
           });
  // @train_step(w, m, v, data..., step).
  SmallVector<Type> resultTypes = {scalarF32, scalarF32, scalarF32};
  for (int copy = 0; copy < 3; ++copy)
    for (unsigned i = 0; i < params; ++i)
      resultTypes.push_back(type.getInput(i));
  define("train_step", 3, resultTypes,
         [&](Block *entry, IRMapping &map, func::ReturnOp ret) {
           SmallVector<Value> grads;
           for (unsigned i = 0; i < params; ++i)
             grads.push_back(map.lookup(ret.getOperand(i + 1)));
           auto slice = [&](unsigned copy) {
             return SmallVector<Value>(
                 entry->getArguments().slice(copy * params, params));
           };
           return buildAdamWStep(b, loc, options.adamw,
                                 map.lookup(ret.getOperand(0)), grads, slice(0),
                                 slice(1), slice(2), decay,
                                 entry->getArguments().back());
         });
  return llvm::Error::success();
}
