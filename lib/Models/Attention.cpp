//===- Attention.cpp - the causal attention composites --------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The bodies of the causal_attention composites (Composites.h): the f32
// reference decomposition that the CPU and gfx950 pipelines inline and the
// fused GPU kernels must match. The Llama builder and the PyTorch frontend
// (through getAttentionCompositeSource) call the same functions.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Models/Attention.h"

#include "TensorBuilder.h"

#include "mxfp4/Dialect/MXFP4/Transforms/Composites.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::mxfp4;

using Args = ValueRange;

/// The causal mask and scale of scores [BH, G*S, S]: row i of a stacked
/// group is query position i mod S and sees keys j <= it; visible scores
/// are divided by sqrt(hd), hidden ones are -inf.
static Value maskedScores(TensorBuilder &tb, Value scores, int64_t seq,
                          int64_t headDim) {
  Value scale = tb.f32(std::sqrt(static_cast<double>(headDim)));
  Value seqLen = tb.index(seq);
  Value negInf = tb.f32(-std::numeric_limits<double>::infinity());
  return tb.map(scores, [&](OpBuilder &b, Location l, Args a) -> Value {
    Value i = tb.loopIndex(b, l, 1), j = tb.loopIndex(b, l, 2);
    Value pos = arith::RemUIOp::create(b, l, i, seqLen);
    Value visible =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::ule, j, pos);
    return arith::SelectOp::create(
        b, l, visible, arith::DivFOp::create(b, l, a[0], scale), negInf);
  });
}

/// Query rows [B, S, KVH * G, D] (token-major, the projection's layout) to
/// [B * KVH, G * S, D]: the query heads that share a KV head are stacked,
/// so GQA is one batched matmul. Key and value rows [B, S, KVH, D] are the
/// case G = 1.
static Value stackedHeads(TensorBuilder &tb, Value x, int64_t kvHeads) {
  ArrayRef<int64_t> s = shapeOf(x);
  int64_t groups = s[2] / kvHeads;
  Value x5 = tb.reshape(x, {s[0], s[1], kvHeads, groups, s[3]});
  Value t = tb.transpose(x5, {0, 2, 3, 1, 4});
  return tb.reshape(t, {s[0] * kvHeads, groups * s[1], s[3]});
}

/// The inverse of stackedHeads: to `shape` [B, S, KVH * G, D].
static Value tokenRows(TensorBuilder &tb, Value x, ArrayRef<int64_t> shape,
                       int64_t kvHeads) {
  int64_t groups = shape[2] / kvHeads;
  Value x5 = tb.reshape(x, {shape[0], kvHeads, groups, shape[1], shape[3]});
  Value t = tb.transpose(x5, {0, 3, 1, 2, 4});
  return tb.reshape(t, shape);
}

/// The body of the causal_attention composite (Composites.h).
static SmallVector<Value> attentionBody(TensorBuilder &tb, ValueRange args) {
  int64_t seq = shapeOf(args[0])[1], headDim = shapeOf(args[0])[3];
  int64_t kvHeads = shapeOf(args[1])[2];
  SmallVector<int64_t> qShape(shapeOf(args[0]));
  Value q = stackedHeads(tb, args[0], kvHeads),
        k = stackedHeads(tb, args[1], kvHeads),
        v = stackedHeads(tb, args[2], kvHeads);
  Value masked =
      maskedScores(tb, tb.batchMatmul(q, k, false, true), seq, headDim);
  SmallVector<int64_t> shape(shapeOf(masked));
  AffineMap all = tb.identity(3), rows = tb.project(3, {0, 1});
  Value rowMax = tb.reduceLast(masked, /*isMax=*/true);
  Value exps = tb.generic({masked, rowMax}, {all, rows}, all, shape,
                          std::nullopt,
                          [](OpBuilder &b, Location l, Args a) -> Value {
                            Value z = arith::SubFOp::create(b, l, a[0], a[1]);
                            return math::ExpOp::create(b, l, z);
                          });
  Value sums = tb.reduceLast(exps);
  Value probs = tb.generic({exps, sums}, {all, rows}, all, shape,
                           std::nullopt,
                           [](OpBuilder &b, Location l, Args a) -> Value {
                             return arith::DivFOp::create(b, l, a[0], a[1]);
                           });
  Value lse = tb.map({rowMax, sums}, [](OpBuilder &b, Location l, Args a) {
    return arith::AddFOp::create(b, l, a[0], math::LogOp::create(b, l, a[1]))
        .getResult();
  });
  // lse [B * KVH, G * S] is [B, H, S] in the same order.
  return {tokenRows(tb, tb.batchMatmul(probs, v, false, false), qShape,
                    kvHeads),
          tb.reshape(lse, {qShape[0], qShape[2], seq})};
}

/// The body of the causal_attention_backward composite: the probabilities
/// are recomputed from the scores and the saved log-sum-exp, so the
/// forward keeps O(rows) of them, not O(rows * keys).
static SmallVector<Value> attentionGradBody(TensorBuilder &tb,
                                            ValueRange args) {
  int64_t seq = shapeOf(args[0])[1], headDim = shapeOf(args[0])[3];
  int64_t kvHeads = shapeOf(args[1])[2];
  SmallVector<int64_t> qShape(shapeOf(args[0])), kShape(shapeOf(args[1]));
  Value q = stackedHeads(tb, args[0], kvHeads),
        k = stackedHeads(tb, args[1], kvHeads),
        v = stackedHeads(tb, args[2], kvHeads),
        out = stackedHeads(tb, args[3], kvHeads),
        dO = stackedHeads(tb, args[5], kvHeads);
  Value lse = tb.reshape(args[4], shapeOf(q).drop_back());
  Value masked =
      maskedScores(tb, tb.batchMatmul(q, k, false, true), seq, headDim);
  SmallVector<int64_t> shape(shapeOf(masked));
  AffineMap all = tb.identity(3), rows = tb.project(3, {0, 1});
  Value probs = tb.generic({masked, lse}, {all, rows}, all, shape,
                           std::nullopt,
                           [](OpBuilder &b, Location l, Args a) -> Value {
                             Value z = arith::SubFOp::create(b, l, a[0], a[1]);
                             return math::ExpOp::create(b, l, z);
                           });
  Value dProbs = tb.batchMatmul(dO, v, false, true);
  Value dv = tb.batchMatmul(probs, dO, true, false);
  // Softmax backward: dS = P * (dP - sum_j P dP), then the 1/sqrt(hd); the
  // row sums of P dP are those of dO * O (O = P V).
  SmallVector<int64_t> headShape(shapeOf(out));
  Value rowDot = tb.generic({dO, out}, {all, all}, rows,
                            {headShape[0], headShape[1]}, 0.0,
                            [](OpBuilder &b, Location l, Args a) -> Value {
                              Value p = arith::MulFOp::create(b, l, a[0], a[1]);
                              return arith::AddFOp::create(b, l, a[2], p);
                            });
  Value scale = tb.f32(std::sqrt(static_cast<double>(headDim)));
  Value dScores = tb.generic(
      {probs, dProbs, rowDot}, {all, all, rows}, all, shape, std::nullopt,
      [&](OpBuilder &b, Location l, Args a) -> Value {
        Value centered = arith::SubFOp::create(b, l, a[1], a[2]);
        Value ds = arith::MulFOp::create(b, l, a[0], centered);
        return arith::DivFOp::create(b, l, ds, scale);
      });
  return {tokenRows(tb, tb.batchMatmul(dScores, k, false, false), qShape,
                    kvHeads),
          tokenRows(tb, tb.batchMatmul(dScores, q, true, false), kShape,
                    kvHeads),
          tokenRows(tb, dv, kShape, kvHeads)};
}

std::string mlir::mxfp4::getAttentionCompositeName(StringRef kind,
                                                   TypeRange args) {
  std::string name = kind.str();
  for (Type t : args) {
    name += "_";
    for (int64_t d : cast<RankedTensorType>(t).getShape())
      name += std::to_string(d) + "x";
    name.pop_back();
  }
  return name;
}

std::string mlir::mxfp4::verifyAttentionCompositeTypes(StringRef kind,
                                                       TypeRange args) {
  bool backward = kind == kCausalAttentionBackward;
  if (!backward && kind != kCausalAttention)
    return "unknown attention composite '" + kind.str() + "'";
  size_t want = backward ? 6 : 3;
  if (args.size() != want)
    return kind.str() + " takes " + std::to_string(want) + " operands, got " +
           std::to_string(args.size());
  SmallVector<RankedTensorType> types;
  for (Type t : args) {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
      return kind.str() + ": operands must be static f32 tensors";
    types.push_back(type);
  }
  ArrayRef<int64_t> q = types[0].getShape(), k = types[1].getShape();
  if (q.size() != 4 || k.size() != 4 || types[2].getShape() != k ||
      k[0] != q[0] || k[1] != q[1] || k[3] != q[3] || k[2] <= 0 ||
      q[2] % k[2] != 0)
    return kind.str() + ": want q [B, S, H, D] and k, v [B, S, KVH, D] with "
                        "H a multiple of KVH";
  if (backward &&
      (types[3].getShape() != q || types[5].getShape() != q ||
       types[4].getShape() != ArrayRef<int64_t>{q[0], q[2], q[1]}))
    return kind.str() + ": want o and dO shaped as q and lse [B, H, S]";
  return "";
}

func::FuncOp mlir::mxfp4::getOrCreateAttentionComposite(ModuleOp module,
                                                        Location loc,
                                                        StringRef kind,
                                                        TypeRange args) {
  std::string name = getAttentionCompositeName(kind, args);
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  auto q = cast<RankedTensorType>(args[0]);
  SmallVector<Type> results;
  if (kind == kCausalAttention) {
    ArrayRef<int64_t> s = q.getShape();
    results = {q, RankedTensorType::get({s[0], s[2], s[1]},
                                        q.getElementType())};
  } else {
    results.assign(args.begin(), args.begin() + 3);
  }
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  auto callee =
      func::FuncOp::create(mb, loc, name, mb.getFunctionType(args, results));
  callee.setPrivate();
  callee->setAttr(kCompositeAttrName, mb.getStringAttr(kind));
  OpBuilder inner = OpBuilder::atBlockBegin(callee.addEntryBlock());
  TensorBuilder tb(inner, loc);
  SmallVector<Value> values = kind == kCausalAttention
                                  ? attentionBody(tb, callee.getArguments())
                                  : attentionGradBody(tb, callee.getArguments());
  func::ReturnOp::create(inner, loc, values);
  return callee;
}
