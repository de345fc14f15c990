//===- Roles.cpp - find the linear-layer GEMMs of a training step ---------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/MXFP4/Transforms/Roles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::mxfp4;

namespace {

/// A function argument marked as a parameter, seen through transposes.
struct ParameterUse {
  BlockArgument argument;
  std::string name;
  bool transposed = false;
};

/// Looks through casts, precision conversions and transposes for a parameter.
std::optional<ParameterUse> findParameter(Value value) {
  bool transposed = false;
  while (Operation *def = value.getDefiningOp()) {
    if (auto cast = dyn_cast<tensor::CastOp>(def)) {
      value = cast.getSource();
    } else if (isa<arith::ExtFOp, arith::TruncFOp>(def)) {
      value = def->getOperand(0);
    } else if (auto transpose = dyn_cast<linalg::TransposeOp>(def)) {
      if (transpose.getPermutation().size() != 2)
        return std::nullopt;
      transposed = !transposed;
      value = transpose.getInput();
    } else {
      return std::nullopt;
    }
  }
  auto argument = dyn_cast<BlockArgument>(value);
  if (!argument)
    return std::nullopt;
  auto function = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
  if (!function)
    return std::nullopt;
  auto name = function.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                    kParameterAttrName);
  if (!name)
    return std::nullopt;
  return ParameterUse{argument, name.str(), transposed};
}

/// The value behind casts and precision conversions (not transposes).
Value stripConversions(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<tensor::CastOp, arith::ExtFOp, arith::TruncFOp>(def))
      value = def->getOperand(0);
    else
      break;
  }
  return value;
}

/// Which dimension of each operand a 2-D matmul contracts (0 or 1), or
/// std::nullopt if the maps are not one of the four transposition forms.
std::optional<std::pair<int, int>> contractedDims(linalg::MatmulOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps.size() != 3 || maps[0].getNumResults() != 2 ||
      maps[1].getNumResults() != 2)
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  if (maps[2] != AffineMap::get(3, 0, {m, n}, ctx))
    return std::nullopt;
  int lhs, rhs;
  if (maps[0] == AffineMap::get(3, 0, {m, k}, ctx))
    lhs = 1;
  else if (maps[0] == AffineMap::get(3, 0, {k, m}, ctx))
    lhs = 0;
  else
    return std::nullopt;
  if (maps[1] == AffineMap::get(3, 0, {k, n}, ctx))
    rhs = 0;
  else if (maps[1] == AffineMap::get(3, 0, {n, k}, ctx))
    rhs = 1;
  else
    return std::nullopt;
  return std::make_pair(lhs, rhs);
}

std::string layerOf(llvm::StringRef parameter) {
  llvm::StringRef name = parameter;
  name.consume_back(".weight");
  return name.str();
}

bool isLmHeadOrEmbedding(llvm::StringRef parameter) {
  return parameter.contains("lm_head") || parameter.contains("embed");
}

} // namespace

SmallVector<LinearGemm> mlir::mxfp4::findLinearGemms(func::FuncOp function,
                                                     bool infer,
                                                     bool includeLmHead) {
  SmallVector<LinearGemm> gemms;
  SmallVector<linalg::MatmulOp> untagged;
  function.walk([&](linalg::MatmulOp op) {
    if (auto tag = op->getAttrOfType<GemmAttr>(kGemmAttrName))
      gemms.push_back({op, tag.getRole(), tag.getLayer().str(), false});
    else if (infer)
      untagged.push_back(op);
  });
  if (untagged.empty())
    return gemms;

  // Fprop and Dgrad: one operand is a parameter W[N, K] on the right;
  // contracting its K (dim 1) is Y = X W^T, contracting its N (dim 0) is
  // dX = dY W. The other operand is the activation or the output gradient.
  struct ParameterGemms {
    std::string layer;
    Value input, gradOutput; // the Fprop's X and the Dgrad's dY
    RankedTensorType type;
  };
  llvm::DenseMap<BlockArgument, ParameterGemms> byParameter;
  auto record = [&](linalg::MatmulOp op, GemmRole role, const ParameterUse &w,
                    llvm::StringRef layer) {
    ParameterGemms &entry = byParameter[w.argument];
    entry.layer = layer.str();
    entry.type = cast<RankedTensorType>(w.argument.getType());
    Value other = stripConversions(op.getInputs()[0]);
    (role == GemmRole::fprop ? entry.input : entry.gradOutput) = other;
  };
  // Tagged Fprops and Dgrads identify their layer's X and dY too, so an
  // untagged Wgrad of a partly tagged layer is still found.
  for (LinearGemm &gemm : gemms)
    if (gemm.role != GemmRole::wgrad)
      if (std::optional<ParameterUse> w =
              findParameter(gemm.op.getInputs()[1]))
        record(gemm.op, gemm.role, *w, gemm.layer);
  SmallVector<linalg::MatmulOp> rest;
  for (linalg::MatmulOp op : untagged) {
    std::optional<std::pair<int, int>> dims = contractedDims(op);
    std::optional<ParameterUse> lhsParam = findParameter(op.getInputs()[0]);
    std::optional<ParameterUse> rhsParam = findParameter(op.getInputs()[1]);
    if (!dims) {
      if (lhsParam || rhsParam)
        op->emitRemark("contraction with a parameter in an unrecognized "
                       "layout; left in high precision");
      continue;
    }
    if (lhsParam && rhsParam) {
      op->emitRemark("both operands are parameters; not a linear layer's "
                     "GEMM, left in high precision");
      continue;
    }
    if (lhsParam) {
      op->emitRemark("parameter '")
          << lhsParam->name
          << "' is the left operand; linear layers put the weight on the "
             "right (docs/Recipes.md), left in high precision";
      continue;
    }
    if (!rhsParam) {
      rest.push_back(op);
      continue;
    }
    if (!includeLmHead && isLmHeadOrEmbedding(rhsParam->name))
      continue;
    // The parameter's own dimension that is contracted.
    int contracted = dims->second ^ (rhsParam->transposed ? 1 : 0);
    GemmRole role = contracted == 1 ? GemmRole::fprop : GemmRole::dgrad;
    std::string layer = layerOf(rhsParam->name);
    gemms.push_back({op, role, layer, true});
    record(op, role, *rhsParam, layer);
  }

  // Wgrad: dW[N, K] = dY^T X contracts the token axis (dim 0 of both) and
  // reuses the Dgrad's dY or the Fprop's X of one parameter.
  for (linalg::MatmulOp op : rest) {
    std::optional<std::pair<int, int>> dims = contractedDims(op);
    if (!dims || dims->first != 0 || dims->second != 0)
      continue;
    Value dy = stripConversions(op.getInputs()[0]);
    Value x = stripConversions(op.getInputs()[1]);
    auto resultType = cast<RankedTensorType>(op.getResultTypes()[0]);
    // The layer whose Dgrad dY and Fprop X both match wins; one matching
    // operand is enough when no other layer matches as well (layers that
    // share an input, like q/k/v, are told apart by their dY).
    const ParameterGemms *match = nullptr;
    bool ambiguous = false;
    int best = 0;
    for (auto &[argument, entry] : byParameter) {
      if (entry.type.getShape() != resultType.getShape())
        continue;
      int score = int(entry.input && entry.input == x) +
                  int(entry.gradOutput && entry.gradOutput == dy);
      if (score == 0 || score < best)
        continue;
      ambiguous = score == best;
      best = score;
      match = &entry;
    }
    if (match && !ambiguous) {
      gemms.push_back({op, GemmRole::wgrad, match->layer, true});
      continue;
    }
    bool shapedLikeParameter = llvm::any_of(
        function.getArguments(), [&](BlockArgument argument) {
          auto name = function.getArgAttrOfType<StringAttr>(
              argument.getArgNumber(), kParameterAttrName);
          // The LM head's own gradient is high precision by choice.
          return name && argument.getType() == resultType &&
                 (includeLmHead || !isLmHeadOrEmbedding(name.getValue()));
        });
    if (ambiguous || shapedLikeParameter)
      op->emitRemark("looks like a weight gradient (token-axis contraction "
                     "shaped like a parameter) but ")
          << (ambiguous ? "matches several layers"
                        : "its operands match no layer's Fprop input or "
                          "Dgrad output gradient")
          << "; left in high precision";
  }
  return gemms;
}
