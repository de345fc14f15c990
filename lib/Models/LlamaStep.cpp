//===- LlamaStep.cpp - the Llama training step as one MLIR module ---------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Models/LlamaStep.h"
#include "mxfp4/Models/Optimizer.h"
#include "mxfp4/Train/Sharding.h"

#include "LlamaGraph.h"

#include "mxfp4/Dialect/MXFP4/Transforms/Roles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::mxfp4;

void mlir::mxfp4::loadLlamaStepDialects(MLIRContext &context) {
  context.loadDialect<arith::ArithDialect, func::FuncDialect,
                      linalg::LinalgDialect, math::MathDialect,
                      scf::SCFDialect, tensor::TensorDialect, MXFP4Dialect>();
}

namespace {

/// What the backward pass needs of one decoder layer's forward.
struct LayerActivations {
  Value x, normed1, rstd1, attnInput; // attnInput: o_proj's input
  LlamaGraph::Attention attention;
  Value h, normed2, rstd2, gate, up, act;
};

/// The parameters of a layer, in getLlamaParameters order.
enum LayerParam {
  inputNorm,
  qProj,
  kProj,
  vProj,
  oProj,
  postNorm,
  gateProj,
  upProj,
  downProj,
  numLayerParams
};

class StepBuilder {
public:
  StepBuilder(OpBuilder &b, Location loc, const LlamaConfig &config)
      : g(b, loc, config), tb(g.tb), params(getLlamaParameters(config)) {}

  /// The forward pass: the mean loss and what the backward pass needs.
  struct Forward {
    Value loss, inputs, x, xf, rstdF, dLogits;
    SmallVector<LayerActivations> layers;
  };
  Forward forward(ArrayRef<Value> weights, Value tokens);
  /// The gradients (in parameter order) of `weights` after `forward`.
  SmallVector<Value> backward(ArrayRef<Value> weights, const Forward &fwd);

  /// Builds loss and gradients (in parameter order) of `weights`.
  Value lossAndGrads(ArrayRef<Value> weights, Value tokens,
                     SmallVectorImpl<Value> &grads) {
    Forward fwd = forward(weights, tokens);
    grads.assign(backward(weights, fwd));
    return fwd.loss;
  }

  /// Builds the AdamW update; returns loss, grad norm and lr followed by
  /// the new parameters and moments.
  SmallVector<Value> trainStep(ArrayRef<Value> weights, ArrayRef<Value> m,
                               ArrayRef<Value> v, Value tokens, Value step);

  LlamaGraph g;
  TensorBuilder &tb;
  SmallVector<LlamaParameter> params;

private:
  std::string layerName(int64_t layer, StringRef module) {
    return "model.layers." + std::to_string(layer) + "." + module.str();
  }
  Value scalarTensor(Value scalar) {
    return tensor::FromElementsOp::create(
        tb.b, tb.loc, RankedTensorType::get({}, scalar.getType()), scalar);
  }
  Value scalarOf(Value tensor0d) {
    return tensor::ExtractOp::create(tb.b, tb.loc, tensor0d, ValueRange{});
  }
};

} // namespace

/// The weight of parameter `p` of decoder layer `layer`.
static Value layerWeight(ArrayRef<Value> w, int64_t layer, LayerParam p) {
  return w[1 + layer * numLayerParams + p];
}

StepBuilder::Forward StepBuilder::forward(ArrayRef<Value> w, Value tokens) {
  const LlamaConfig &c = g.config;
  auto layerW = [&](int64_t layer, LayerParam p) {
    return layerWeight(w, layer, p);
  };
  Value finalNorm = w[w.size() - 2], head = w.back();
  Forward fwd;
  Value inputs = g.tokenColumn(tokens, 0), targets = g.tokenColumn(tokens, 1);
  fwd.inputs = inputs;
  Value x = g.embed(w[0], inputs);
  SmallVector<LayerActivations> &saved = fwd.layers;
  for (int64_t i = 0; i < c.numLayers; ++i) {
    LayerActivations a;
    a.x = x;
    a.normed1 = g.rmsNorm(x, layerW(i, inputNorm), a.rstd1);
    Value q = g.linear(a.normed1, layerW(i, qProj),
                       layerName(i, "self_attn.q_proj"));
    Value k = g.linear(a.normed1, layerW(i, kProj),
                       layerName(i, "self_attn.k_proj"));
    Value v = g.linear(a.normed1, layerW(i, vProj),
                       layerName(i, "self_attn.v_proj"));
    a.attention = g.attention(g.rope(q, false), g.rope(k, false), v);
    a.attnInput = a.attention.out;
    Value attnOut =
        g.linear(a.attnInput, layerW(i, oProj), layerName(i, "self_attn.o_proj"));
    a.h = tb.map({x, attnOut}, [](OpBuilder &b, Location l, ValueRange s) {
      return arith::AddFOp::create(b, l, s[0], s[1]).getResult();
    });
    a.normed2 = g.rmsNorm(a.h, layerW(i, postNorm), a.rstd2);
    a.gate = g.linear(a.normed2, layerW(i, gateProj),
                      layerName(i, "mlp.gate_proj"));
    a.up = g.linear(a.normed2, layerW(i, upProj), layerName(i, "mlp.up_proj"));
    // SwiGLU: silu(gate) * up with silu(z) = z * sigmoid(z).
    a.act = tb.map({a.gate, a.up}, [](OpBuilder &b, Location l, ValueRange s) {
      Value one = arith::ConstantOp::create(b, l, b.getF32FloatAttr(1.0));
      Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, s[0]));
      Value sig =
          arith::DivFOp::create(b, l, one, arith::AddFOp::create(b, l, one, e));
      Value silu = arith::MulFOp::create(b, l, s[0], sig);
      return arith::MulFOp::create(b, l, silu, s[1]).getResult();
    });
    Value mlpOut =
        g.linear(a.act, layerW(i, downProj), layerName(i, "mlp.down_proj"));
    x = tb.map({a.h, mlpOut}, [](OpBuilder &b, Location l, ValueRange s) {
      return arith::AddFOp::create(b, l, s[0], s[1]).getResult();
    });
    saved.push_back(a);
  }
  fwd.x = x;
  fwd.xf = g.rmsNorm(x, finalNorm, fwd.rstdF);
  // The LM head stays in f32 (untagged), as in the paper's stack.
  Value logits = tb.matmul(fwd.xf, head, false, true);
  fwd.loss = g.crossEntropy(logits, targets, fwd.dLogits);
  return fwd;
}

SmallVector<Value> StepBuilder::backward(ArrayRef<Value> w,
                                         const Forward &fwd) {
  const LlamaConfig &c = g.config;
  auto layerW = [&](int64_t layer, LayerParam p) {
    return layerWeight(w, layer, p);
  };
  Value finalNorm = w[w.size() - 2], head = w.back();
  SmallVector<Value> grads(w.size());
  grads.back() = tb.matmul(fwd.dLogits, fwd.xf, true, false);
  Value dxf = tb.matmul(fwd.dLogits, head, false, false);
  Value dx =
      g.rmsNormBackward(dxf, fwd.x, finalNorm, fwd.rstdF, grads[w.size() - 2]);
  auto add = [&](Value a, Value b) {
    return tb.map({a, b}, [](OpBuilder &ob, Location l, ValueRange s) {
      return arith::AddFOp::create(ob, l, s[0], s[1]).getResult();
    });
  };
  for (int64_t i = c.numLayers - 1; i >= 0; --i) {
    const LayerActivations &a = fwd.layers[i];
    auto grad = [&](LayerParam p) -> Value & {
      return grads[1 + i * numLayerParams + p];
    };
    // MLP.
    std::string down = layerName(i, "mlp.down_proj"),
                gateName = layerName(i, "mlp.gate_proj"),
                upName = layerName(i, "mlp.up_proj");
    Value dAct = g.linearDgrad(dx, layerW(i, downProj), down);
    grad(downProj) = g.linearWgrad(dx, a.act, down);
    SmallVector<int64_t> shape(shapeOf(a.gate));
    AffineMap id = tb.identity(2);
    Value dGate = tb.generic(
        {dAct, a.gate, a.up}, {id, id, id}, id, shape, std::nullopt,
        [](OpBuilder &b, Location l, ValueRange s) -> Value {
          Value one = arith::ConstantOp::create(b, l, b.getF32FloatAttr(1.0));
          Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, s[1]));
          Value sig = arith::DivFOp::create(b, l, one,
                                            arith::AddFOp::create(b, l, one, e));
          // silu'(z) = sig * (1 + z * (1 - sig)).
          Value slope = arith::MulFOp::create(
              b, l, sig,
              arith::AddFOp::create(
                  b, l, one,
                  arith::MulFOp::create(b, l, s[1],
                                        arith::SubFOp::create(b, l, one, sig))));
          Value dz = arith::MulFOp::create(b, l, s[0], s[2]);
          return arith::MulFOp::create(b, l, dz, slope);
        });
    Value dUp = tb.generic(
        {dAct, a.gate}, {id, id}, id, shape, std::nullopt,
        [](OpBuilder &b, Location l, ValueRange s) -> Value {
          Value one = arith::ConstantOp::create(b, l, b.getF32FloatAttr(1.0));
          Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, s[1]));
          Value sig = arith::DivFOp::create(b, l, one,
                                            arith::AddFOp::create(b, l, one, e));
          Value silu = arith::MulFOp::create(b, l, s[1], sig);
          return arith::MulFOp::create(b, l, s[0], silu);
        });
    Value dNormed2 = add(g.linearDgrad(dGate, layerW(i, gateProj), gateName),
                         g.linearDgrad(dUp, layerW(i, upProj), upName));
    grad(gateProj) = g.linearWgrad(dGate, a.normed2, gateName);
    grad(upProj) = g.linearWgrad(dUp, a.normed2, upName);
    Value dh = add(dx, g.rmsNormBackward(dNormed2, a.h, layerW(i, postNorm),
                                         a.rstd2, grad(postNorm)));
    // Attention.
    std::string o = layerName(i, "self_attn.o_proj"),
                qName = layerName(i, "self_attn.q_proj"),
                kName = layerName(i, "self_attn.k_proj"),
                vName = layerName(i, "self_attn.v_proj");
    Value dAttn = g.linearDgrad(dh, layerW(i, oProj), o);
    grad(oProj) = g.linearWgrad(dh, a.attnInput, o);
    Value dqRot, dkRot, dv;
    g.attentionBackward(a.attention, dAttn, dqRot, dkRot, dv);
    Value dq = g.rope(dqRot, /*inverse=*/true);
    Value dk = g.rope(dkRot, /*inverse=*/true);
    Value dNormed1 = add(add(g.linearDgrad(dq, layerW(i, qProj), qName),
                             g.linearDgrad(dk, layerW(i, kProj), kName)),
                         g.linearDgrad(dv, layerW(i, vProj), vName));
    grad(qProj) = g.linearWgrad(dq, a.normed1, qName);
    grad(kProj) = g.linearWgrad(dk, a.normed1, kName);
    grad(vProj) = g.linearWgrad(dv, a.normed1, vName);
    dx = add(dh, g.rmsNormBackward(dNormed1, a.x, layerW(i, inputNorm),
                                   a.rstd1, grad(inputNorm)));
  }
  grads[0] = g.embedBackward(dx, fwd.inputs);
  return grads;
}

/// The optimizer fields of `c`.
static AdamWConfig getAdamWConfig(const LlamaConfig &c) {
  AdamWConfig adamw;
  adamw.lr = c.lr;
  adamw.minLrRatio = c.minLrRatio;
  adamw.warmupSteps = c.warmupSteps;
  adamw.totalSteps = c.totalSteps;
  adamw.beta1 = c.beta1;
  adamw.beta2 = c.beta2;
  adamw.eps = c.adamEps;
  adamw.weightDecay = c.weightDecay;
  adamw.clipNorm = c.clipNorm;
  return adamw;
}

SmallVector<Value> StepBuilder::trainStep(ArrayRef<Value> w, ArrayRef<Value> m,
                                          ArrayRef<Value> v, Value tokens,
                                          Value step) {
  SmallVector<Value> grads;
  Value loss = lossAndGrads(w, tokens, grads);
  SmallVector<bool> decay;
  for (const LlamaParameter &param : params)
    decay.push_back(param.isMatrix);
  return buildAdamWStep(tb.b, tb.loc, getAdamWConfig(g.config), loss, grads, w,
                        m, v, decay, step);
}

OwningOpRef<ModuleOp>
mlir::mxfp4::buildLlamaStepModule(MLIRContext &context,
                                  const LlamaConfig &config,
                                  ArrayRef<StringRef> functions,
                                  int64_t ranks) {
  auto wanted = [&](StringRef name) {
    return functions.empty() || llvm::is_contained(functions, name);
  };
  loadLlamaStepDialects(context);
  Location loc = NameLoc::get(StringAttr::get(&context, "llama." + config.name));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder b(&context);
  b.setInsertionPointToEnd(module->getBody());
  SmallVector<LlamaParameter> params = getLlamaParameters(config);
  Type f32 = b.getF32Type();
  SmallVector<Type> paramTypes;
  for (const LlamaParameter &p : params)
    paramTypes.push_back(RankedTensorType::get(p.shape, f32));
  Type tokensType =
      RankedTensorType::get({config.batchSize, config.seqLen + 1}, b.getI32Type());
  Type scalarType = RankedTensorType::get({}, f32);
  // Every function takes `copies` sets of parameter-shaped tensors (weights,
  // then AdamW moments), the tokens and the step, and returns what `build`
  // computes from them.
  using Build = std::function<SmallVector<Value>(StepBuilder &,
                                                  ArrayRef<BlockArgument>)>;
  auto define = [&](StringRef name, int copies, ArrayRef<Type> results,
                    const Build &build) {
    if (!wanted(name))
      return;
    SmallVector<Type> inputs;
    for (int k = 0; k < copies; ++k)
      llvm::append_range(inputs, paramTypes);
    inputs.push_back(tokensType);
    inputs.push_back(b.getI64Type());
    auto func = func::FuncOp::create(b, loc, name,
                                     b.getFunctionType(inputs, results));
    for (auto [i, p] : llvm::enumerate(params))
      func.setArgAttr(i, kParameterAttrName, b.getStringAttr(p.name));
    func.setArgAttr(inputs.size() - 1, kStepAttrName, b.getUnitAttr());
    Block *entry = func.addEntryBlock();
    OpBuilder body = OpBuilder::atBlockBegin(entry);
    StepBuilder step(body, loc, config);
    func::ReturnOp::create(body, loc, build(step, entry->getArguments()));
  };
  size_t n = params.size();
  auto slice = [](ArrayRef<BlockArgument> args, size_t from, size_t count) {
    return SmallVector<Value>(args.begin() + from, args.begin() + from + count);
  };

  // @loss: the forward pass only, for evaluation.
  define("loss", 1, {scalarType}, [&](StepBuilder &step, auto args) {
    return SmallVector<Value>{step.forward(slice(args, 0, n), args[n]).loss};
  });
  SmallVector<Type> gradResults = {scalarType};
  llvm::append_range(gradResults, paramTypes);
  define("loss_and_grads", 1, gradResults, [&](StepBuilder &step, auto args) {
    SmallVector<Value> grads;
    SmallVector<Value> returned = {
        step.lossAndGrads(slice(args, 0, n), args[n], grads)};
    llvm::append_range(returned, grads);
    return returned;
  });
  SmallVector<Type> stepResults = {scalarType, scalarType, scalarType};
  for (int k = 0; k < 3; ++k)
    llvm::append_range(stepResults, paramTypes);
  define("train_step", 3, stepResults, [&](StepBuilder &step, auto args) {
    return step.trainStep(slice(args, 0, n), slice(args, n, n),
                          slice(args, 2 * n, n), args[3 * n], args[3 * n + 1]);
  });

  // ZeRO-1 (data-parallel over `ranks`): @sum_squares of one shard of the
  // flat gradient, and @apply_shard, @train_step's optimizer on one shard
  // (include/mxfp4/Train/Sharding.h). Built only when asked for.
  if (ranks > 0) {
    std::vector<std::vector<int64_t>> shapes;
    for (const LlamaParameter &p : params)
      shapes.push_back(std::vector<int64_t>(p.shape.begin(), p.shape.end()));
    ShardLayout layout = getShardLayout(shapes, ranks);
    auto shardType = RankedTensorType::get({layout.shard}, f32);
    auto function = [&](StringRef name, ArrayRef<Type> inputs,
                        ArrayRef<Type> results) {
      auto func = func::FuncOp::create(b, loc, name,
                                       b.getFunctionType(inputs, results));
      Block *entry = func.addEntryBlock();
      return std::make_pair(func, OpBuilder::atBlockBegin(entry));
    };
    if (wanted("sum_squares")) {
      auto [func, body] = function("sum_squares", {shardType}, {scalarType});
      TensorBuilder tb(body, loc);
      func::ReturnOp::create(
          body, loc, tb.sumAll(func.getArgument(0), /*squares=*/true));
    }
    if (wanted("apply_shard")) {
      // (w, m, v, grad, decay mask, sum of squares, loss, step).
      SmallVector<Type> inputs(5, shardType);
      inputs.append({scalarType, scalarType, b.getI64Type()});
      SmallVector<Type> results(3, scalarType);
      results.append(3, shardType);
      auto [func, body] = function("apply_shard", inputs, results);
      func.setArgAttr(inputs.size() - 1, kStepAttrName, b.getUnitAttr());
      auto a = func.getArguments();
      func::ReturnOp::create(
          body, loc,
          buildAdamWShardStep(body, loc, getAdamWConfig(config), a[6], a[5],
                              a[3], a[0], a[1], a[2], a[4], a[7]));
    }
  }
  return module;
}
