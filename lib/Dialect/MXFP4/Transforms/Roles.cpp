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
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::mxfp4;

namespace {

using DimSet = SmallVector<int64_t, 2>;

//===----------------------------------------------------------------------===//
// Views: where an operand's elements come from
//===----------------------------------------------------------------------===//

/// An operand seen through the ops that only move, convert or replicate
/// elements (casts, precision conversions, transposes, reshapes, broadcasts
/// and copies written as linalg.generic), so that a GEMM reading
/// `transpose(dY)` or `collapse_shape(X)` is matched with one reading dY or
/// X, and the axis it contracts is known in terms of that tensor.
struct View {
  Value root;
  /// For each dimension of the operand, the root dimensions it walks:
  /// several after a collapse_shape, none along a broadcast.
  SmallVector<DimSet> dims;
  /// The name of the parameter, when the root is an argument marked as one.
  StringAttr parameter;
};

/// The parameter name of `value` if it is a function argument marked
/// `{mxfp4.parameter}`.
StringAttr parameterName(Value value) {
  auto argument = dyn_cast<BlockArgument>(value);
  if (!argument)
    return {};
  auto function = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
  if (!function || argument.getOwner() != &function.getBody().front())
    return {};
  return function.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                               kParameterAttrName);
}

/// For a linalg.generic that only copies, converts, transposes or
/// broadcasts its one input, the input dimension of each result dimension
/// (std::nullopt along a broadcast).
std::optional<SmallVector<std::optional<unsigned>>>
copyGenericDims(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0 || generic->getNumResults() != 1)
    return std::nullopt;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Value yielded = yield.getValues()[0];
  if (Operation *def = yielded.getDefiningOp())
    if (isa<arith::ExtFOp, arith::TruncFOp>(def) &&
        def->getBlock() == &body)
      yielded = def->getOperand(0);
  if (yielded != body.getArgument(0) ||
      body.getOperations().size() > 2)
    return std::nullopt;
  AffineMap in = generic.getIndexingMapsArray()[0];
  AffineMap out = generic.getIndexingMapsArray()[1];
  if (!in.isProjectedPermutation() || !out.isPermutation())
    return std::nullopt;
  SmallVector<std::optional<unsigned>> dims;
  for (AffineExpr result : out.getResults())
    dims.push_back(in.getResultPosition(result));
  return dims;
}

View traceView(Value value) {
  View view;
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (type)
    for (int64_t d = 0; d < type.getRank(); ++d)
      view.dims.push_back({d});
  // Replaces every dimension d of the current value by `next(d)`.
  auto remap = [&](llvm::function_ref<DimSet(int64_t)> next) {
    for (DimSet &set : view.dims) {
      DimSet mapped;
      for (int64_t d : set)
        llvm::append_range(mapped, next(d));
      llvm::sort(mapped);
      mapped.erase(llvm::unique(mapped), mapped.end());
      set = mapped;
    }
  };
  while (type) {
    Operation *def = value.getDefiningOp();
    if (!def)
      break;
    if (isa<tensor::CastOp, arith::ExtFOp, arith::TruncFOp>(def)) {
      value = def->getOperand(0);
    } else if (auto transpose = dyn_cast<linalg::TransposeOp>(def)) {
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      remap([&](int64_t d) { return DimSet{permutation[d]}; });
      value = transpose.getInput();
    } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
      SmallVector<ReassociationIndices> groups =
          collapse.getReassociationIndices();
      remap([&](int64_t d) { return DimSet(groups[d]); });
      value = collapse.getSrc();
    } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
      SmallVector<ReassociationIndices> groups =
          expand.getReassociationIndices();
      remap([&](int64_t d) {
        for (auto [source, group] : llvm::enumerate(groups))
          if (llvm::is_contained(group, d))
            return DimSet{int64_t(source)};
        return DimSet{};
      });
      value = expand.getSrc();
    } else if (auto broadcast = dyn_cast<linalg::BroadcastOp>(def)) {
      ArrayRef<int64_t> added = broadcast.getDimensions();
      auto rank = cast<RankedTensorType>(broadcast.getInit().getType())
                      .getRank();
      SmallVector<std::optional<int64_t>> source;
      for (int64_t d = 0, next = 0; d < rank; ++d)
        source.push_back(llvm::is_contained(added, d)
                             ? std::nullopt
                             : std::optional<int64_t>(next++));
      remap([&](int64_t d) {
        return source[d] ? DimSet{*source[d]} : DimSet{};
      });
      value = broadcast.getInput();
    } else if (auto generic = dyn_cast<linalg::GenericOp>(def)) {
      std::optional<SmallVector<std::optional<unsigned>>> source =
          copyGenericDims(generic);
      if (!source)
        break;
      remap([&](int64_t d) {
        return (*source)[d] ? DimSet{int64_t(*(*source)[d])} : DimSet{};
      });
      value = generic.getDpsInputs()[0];
    } else {
      break;
    }
    type = dyn_cast<RankedTensorType>(value.getType());
  }
  view.root = value;
  view.parameter = parameterName(value);
  return view;
}

//===----------------------------------------------------------------------===//
// Contractions: a linalg op read as one GEMM
//===----------------------------------------------------------------------===//

/// True if the body computes out + in0 * in1 (each input possibly widened
/// with arith.extf first), the body of linalg.matmul.
bool hasMulAddBody(linalg::LinalgOp op) {
  if (op->getNumRegions() != 1 || op->getRegion(0).empty())
    return false;
  Block &body = op->getRegion(0).front();
  if (body.getNumArguments() != 3)
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2);
  Value product = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  if ((add.getLhs() == acc) == (add.getRhs() == acc))
    return false;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  auto input = [&](Value v) -> Value {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      return ext.getIn();
    return v;
  };
  Value a = input(mul.getLhs()), b = input(mul.getRhs());
  Value in0 = body.getArgument(0), in1 = body.getArgument(1);
  if (!((a == in0 && b == in1) || (a == in1 && b == in0)))
    return false;
  // Nothing else: the mul, the add, the yield and at most two extf.
  return body.getOperations().size() <= 5 &&
         llvm::all_of(body, [](Operation &o) {
           return isa<arith::MulFOp, arith::AddFOp, arith::ExtFOp,
                      linalg::YieldOp>(o);
         });
}

/// A two-input mul/add linalg op with at least one reduction loop: what this
/// file calls a contraction, whether or not it reads as a GEMM.
bool isContraction(linalg::LinalgOp op) {
  return op.getNumDpsInputs() == 2 && op.getNumDpsInits() == 1 &&
         op->getNumResults() == 1 && op.getNumReductionLoops() > 0 &&
         hasMulAddBody(op);
}

/// A contraction read as C[M, N] = sum_R A[M, R] B[N, R]. Every loop
/// dimension is a batch dimension (of both inputs and the result), an own
/// dimension of one input (and of the result), or a reduction dimension (of
/// both inputs). A batch dimension along which one input is a broadcast
/// (linalg.batch_matmul of an activation and a broadcast weight) is an own
/// dimension of the other input: that input is then read without it.
struct Contraction {
  linalg::LinalgOp op;
  /// The inputs with their transposes folded into the maps, and a
  /// collapse_shape replaced by the first equal one of its block, so that a
  /// Wgrad reading `transpose(X)` or its own `collapse_shape(X)` reads the
  /// value its Fprop reads (wgrad_input=forward_quantized finds that copy).
  Value inputs[2];
  /// Their indexing maps.
  AffineMap maps[2];
  View views[2];
  /// The operand dimensions of each input that broadcast a batch dimension.
  SmallVector<int64_t> dropped[2];
  /// Per input: its own loop dimensions, in the order it stores them.
  SmallVector<unsigned> own[2];
  /// The reduction loop dimensions, in the order input 0 stores them.
  SmallVector<unsigned> reduction;
  SmallVector<unsigned> batch;
  /// The result's map and each loop dimension's static size.
  AffineMap outMap;
  SmallVector<int64_t> sizes;

  /// The root dimensions that input `i` walks along `loops`.
  DimSet rootDims(unsigned i, ArrayRef<unsigned> loops) const {
    DimSet set;
    for (unsigned loop : loops)
      if (std::optional<unsigned> pos = maps[i].getResultPosition(
              getAffineDimExpr(loop, maps[i].getContext())))
        llvm::append_range(set, views[i].dims[*pos]);
    llvm::sort(set);
    set.erase(llvm::unique(set), set.end());
    return set;
  }

  /// The product of the sizes of `loops`, or kDynamic.
  int64_t extent(ArrayRef<unsigned> loops) const {
    int64_t product = 1;
    for (unsigned loop : loops) {
      if (ShapedType::isDynamic(sizes[loop]))
        return ShapedType::kDynamic;
      product *= sizes[loop];
    }
    return product;
  }

  /// A matrix product: rows, columns and a reduction, no batch left.
  bool isGemm() const {
    return batch.empty() && !own[0].empty() && !own[1].empty() &&
           !reduction.empty();
  }
};

std::optional<Contraction> analyzeContraction(linalg::LinalgOp op) {
  if (!isContraction(op) || !op.hasPureTensorSemantics())
    return std::nullopt;
  for (Value operand : op->getOperands())
    if (!isa<RankedTensorType>(operand.getType()))
      return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap map : maps)
    if (!map.isProjectedPermutation() || map.getNumSymbols() != 0)
      return std::nullopt;
  Contraction c;
  c.op = op;
  c.outMap = maps[2];
  c.sizes = op.getStaticLoopRanges();
  MLIRContext *ctx = op.getContext();
  for (unsigned i : {0u, 1u}) {
    Value input = op.getDpsInputs()[i];
    AffineMap map = maps[i];
    // Operand dimension d of transpose(u) is u's dimension permutation[d].
    while (auto transpose = input.getDefiningOp<linalg::TransposeOp>()) {
      SmallVector<AffineExpr> results(map.getNumResults());
      for (auto [d, source] : llvm::enumerate(transpose.getPermutation()))
        results[source] = map.getResult(d);
      map = AffineMap::get(map.getNumDims(), 0, results, ctx);
      input = transpose.getInput();
    }
    if (auto collapse = input.getDefiningOp<tensor::CollapseShapeOp>())
      for (Operation *user : collapse.getSrc().getUsers()) {
        auto other = dyn_cast<tensor::CollapseShapeOp>(user);
        // Each switch goes to an earlier op: this ends at the first one.
        if (other && other.getSrc() == collapse.getSrc() &&
            other->getBlock() == collapse->getBlock() &&
            other.getType() == collapse.getType() &&
            other.getReassociationIndices() ==
                collapse.getReassociationIndices() &&
            other->isBeforeInBlock(input.getDefiningOp()))
          input = other.getResult();
      }
    c.inputs[i] = input;
    c.maps[i] = map;
    c.views[i] = traceView(input);
  }
  maps[0] = c.maps[0];
  maps[1] = c.maps[1];
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop) {
    AffineExpr dim = getAffineDimExpr(loop, ctx);
    std::optional<unsigned> pos[2] = {maps[0].getResultPosition(dim),
                                      maps[1].getResultPosition(dim)};
    bool inOut = c.outMap.getResultPosition(dim).has_value();
    bool reduction = iterators[loop] == utils::IteratorType::reduction;
    if (pos[0] && pos[1] && !inOut && reduction)
      continue; // collected below, in input 0's order
    if (reduction || !inOut)
      return std::nullopt;
    if (pos[0] && pos[1]) {
      bool broadcast[2] = {c.views[0].dims[*pos[0]].empty(),
                           c.views[1].dims[*pos[1]].empty()};
      if (broadcast[0] != broadcast[1]) {
        unsigned b = broadcast[0] ? 0 : 1;
        c.dropped[b].push_back(*pos[b]);
        continue; // an own dimension of the other input, collected below
      }
      c.batch.push_back(loop);
    } else if (!pos[0] && !pos[1]) {
      return std::nullopt; // a broadcast of the result
    }
  }
  for (unsigned i : {0u, 1u}) {
    AffineMap other = maps[1 - i];
    for (auto [pos, expr] : llvm::enumerate(maps[i].getResults())) {
      AffineExpr result = expr;
      unsigned loop = cast<AffineDimExpr>(result).getPosition();
      bool inOther = other.getResultPosition(result).has_value();
      bool droppedThere = llvm::any_of(c.dropped[1 - i], [&](int64_t d) {
        return other.getResult(d) == result;
      });
      if (llvm::is_contained(c.dropped[i], int64_t(pos)))
        continue;
      if (!inOther || droppedThere)
        c.own[i].push_back(loop);
      else if (i == 0 && iterators[loop] == utils::IteratorType::reduction)
        c.reduction.push_back(loop);
    }
  }
  return c;
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

//===----------------------------------------------------------------------===//
// Roles
//===----------------------------------------------------------------------===//

std::string layerOf(llvm::StringRef parameter) {
  llvm::StringRef name = parameter;
  name.consume_back(".weight");
  return name.str();
}

bool isLmHeadOrEmbedding(llvm::StringRef parameter) {
  return parameter.contains("lm_head") || parameter.contains("embed");
}

std::string quoted(llvm::StringRef name) { return ("\"" + name + "\"").str(); }

/// What the Fprops and Dgrads of one parameter say about its layer: the
/// activations X and output gradients dY they read (as roots, with the root
/// dimensions the GEMM contracted: K of X, N of dY), which its Wgrad must
/// read too, along its other dimensions.
struct LayerRecord {
  std::string layer;
  SmallVector<int64_t, 2> shape;
  /// An LM head or embedding left out by choice: its Wgrad is skipped
  /// silently as well.
  bool excluded = false;
  SmallVector<std::pair<Value, DimSet>> inputs, gradOutputs;
};

/// The role of a contraction that reads one parameter on one side: Fprop if
/// it contracts exactly the parameter's dimension 1 (K), Dgrad if exactly
/// its dimension 0 (N). `why` says what else it is, when it reads a
/// parameter but is neither; both are empty when it reads none.
struct ParameterGemm {
  GemmRole role;
  unsigned parameterInput;
};
std::optional<ParameterGemm> classifyParameterGemm(const Contraction &c,
                                                   std::string &why) {
  StringAttr names[2] = {c.views[0].parameter, c.views[1].parameter};
  if (names[0] && names[1]) {
    why = "reads parameter " + quoted(names[0].getValue()) +
          " and parameter " + quoted(names[1].getValue()) +
          "; a linear layer's GEMM reads one weight";
    return std::nullopt;
  }
  if (!names[0] && !names[1])
    return std::nullopt;
  unsigned p = names[0] ? 0 : 1;
  std::string reads = "reads parameter " + quoted(names[p].getValue());
  auto type = dyn_cast<RankedTensorType>(c.views[p].root.getType());
  if (!type || type.getRank() != 2) {
    why = reads + (type ? " of rank " + std::to_string(type.getRank())
                        : std::string(" of unranked type")) +
          "; linear layers have 2-D weights";
    return std::nullopt;
  }
  if (!c.batch.empty()) {
    why = reads + " with a batch dimension it does not broadcast (a "
                  "batched GEMM, not a linear layer's)";
    return std::nullopt;
  }
  if (!c.isGemm()) {
    why = reads + " but is not a matrix product (an operand has no "
                  "dimension of its own)";
    return std::nullopt;
  }
  DimSet contracted = c.rootDims(p, c.reduction);
  DimSet kept = c.rootDims(p, c.own[p]);
  if (contracted == DimSet{1} && kept == DimSet{0})
    return ParameterGemm{GemmRole::fprop, p};
  if (contracted == DimSet{0} && kept == DimSet{1})
    return ParameterGemm{GemmRole::dgrad, p};
  why = reads + " but contracts neither exactly its dimension 1 (an "
                "Fprop) nor exactly its dimension 0 (a Dgrad)";
  return std::nullopt;
}

/// Records a layer's Fprop or Dgrad: the other input's root and contracted
/// root dimensions.
void recordParameterGemm(llvm::MapVector<Value, LayerRecord> &layers,
                         const Contraction &c, const ParameterGemm &g,
                         llvm::StringRef layer, bool excluded) {
  Value w = c.views[g.parameterInput].root;
  LayerRecord &record = layers[w];
  record.layer = layer.str();
  record.shape.assign(cast<RankedTensorType>(w.getType()).getShape().begin(),
                      cast<RankedTensorType>(w.getType()).getShape().end());
  record.excluded = excluded;
  unsigned other = 1 - g.parameterInput;
  (g.role == GemmRole::fprop ? record.inputs : record.gradOutputs)
      .push_back({c.views[other].root, c.rootDims(other, c.reduction)});
}

/// How well a contraction reads as the Wgrad dW[N, K] = dY^T X of `record`
/// with input `g` as dY: one point for each operand that is the layer's
/// (dY along the Dgrad's contracted N, X along the Fprop's K), none if the
/// product is not shaped like the weight.
int wgradScore(const Contraction &c, const LayerRecord &record, unsigned g) {
  unsigned x = 1 - g;
  if (record.shape.size() != 2 || c.extent(c.own[g]) != record.shape[0] ||
      c.extent(c.own[x]) != record.shape[1])
    return 0;
  auto reads = [&](ArrayRef<std::pair<Value, DimSet>> seen, unsigned i) {
    DimSet kept = c.rootDims(i, c.own[i]);
    return llvm::any_of(seen, [&](const std::pair<Value, DimSet> &s) {
      return s.first == c.views[i].root && s.second == kept;
    });
  };
  return int(reads(record.gradOutputs, g)) + int(reads(record.inputs, x));
}

/// The best reading of a contraction as a Wgrad of `record`: (score, dY
/// input); input 0 as dY wins a tie.
std::pair<int, unsigned> bestWgrad(const Contraction &c,
                                   const LayerRecord &record) {
  int first = wgradScore(c, record, 0), second = wgradScore(c, record, 1);
  return second > first ? std::make_pair(second, 1u)
                        : std::make_pair(first, 0u);
}

} // namespace

std::string UnclassifiedContraction::message() const {
  return "contraction not classified as a linear layer's GEMM (" + reason +
         ")";
}

LinearGemms mlir::mxfp4::findLinearGemms(func::FuncOp function, bool infer,
                                         bool includeLmHead) {
  // Program order, which the result keeps.
  llvm::DenseMap<Operation *, unsigned> order;
  SmallVector<linalg::LinalgOp> tagged, untagged;
  function.walk([&](linalg::LinalgOp op) {
    unsigned index = order.size();
    order[op] = index;
    if (op->getAttrOfType<GemmAttr>(kGemmAttrName))
      tagged.push_back(op);
    else if (isContraction(op))
      untagged.push_back(op);
  });

  LinearGemms found;
  llvm::MapVector<Value, LayerRecord> layers;
  auto excludedName = [&](StringAttr name) {
    return name && !includeLmHead && isLmHeadOrEmbedding(name.getValue());
  };

  // Tagged GEMMs keep their role. Their Fprops and Dgrads identify their
  // layer's X and dY, so an untagged Wgrad of a partly tagged layer is
  // still found, and the weight tells which operand is the lhs.
  std::vector<std::pair<size_t, Contraction>> taggedWgrads;
  for (linalg::LinalgOp op : tagged) {
    auto tag = op->getAttrOfType<GemmAttr>(kGemmAttrName);
    LinearGemm gemm{op, tag.getRole(), tag.getLayer().str(), false, 0};
    if (std::optional<Contraction> c = analyzeContraction(op)) {
      std::string why;
      if (gemm.role == GemmRole::wgrad) {
        taggedWgrads.push_back({found.gemms.size(), *c});
      } else if (std::optional<ParameterGemm> g =
                     classifyParameterGemm(*c, why)) {
        gemm.lhsInput = 1 - g->parameterInput;
        recordParameterGemm(layers, *c, *g, gemm.layer, false);
      }
    }
    found.gemms.push_back(gemm);
  }

  auto unclassified = [&](Operation *op, const llvm::Twine &reason) {
    found.unclassified.push_back({op, reason.str()});
  };
  // Inference makes a GEMM of it; without inference it is reported.
  auto inferred = [&](linalg::LinalgOp op, GemmRole role,
                      llvm::StringRef layer, unsigned lhsInput) {
    if (infer)
      found.gemms.push_back({op, role, layer.str(), true, lhsInput});
    else
      unclassified(op, "untagged, and infer_roles=false; inference would "
                       "make it the " +
                           stringifyGemmRole(role) + " of " + quoted(layer));
  };

  // Fprop and Dgrad: a contraction of one parameter W[N, K] with an
  // activation or an output gradient. Which of W's dimensions it contracts
  // decides (K: Y = X W^T, N: dX = dY W), whatever the operand order, maps
  // and views of W, so square weights are classified correctly.
  std::vector<Contraction> rest;
  for (linalg::LinalgOp op : untagged) {
    std::optional<Contraction> c = analyzeContraction(op);
    if (!c) {
      // A contraction of another shape (a convolution, a broadcast
      // result); only one that reads a parameter is worth a word.
      for (Value input : op.getDpsInputs()) {
        StringAttr name = traceView(input).parameter;
        if (name && !excludedName(name)) {
          unclassified(op, "reads parameter " + quoted(name.getValue()) +
                               " in a contraction whose indexing maps are "
                               "not a matrix product's");
          break;
        }
      }
      continue;
    }
    if (excludedName(c->views[0].parameter) ||
        excludedName(c->views[1].parameter)) {
      // The LM head stays high precision by choice; its X and dY still
      // tell its Wgrad apart from the layers'.
      std::string ignored;
      if (std::optional<ParameterGemm> g = classifyParameterGemm(*c, ignored))
        recordParameterGemm(
            layers, *c, *g,
            layerOf(c->views[g->parameterInput].parameter.getValue()), true);
      continue;
    }
    std::string why;
    if (std::optional<ParameterGemm> g = classifyParameterGemm(*c, why)) {
      std::string layer =
          layerOf(c->views[g->parameterInput].parameter.getValue());
      recordParameterGemm(layers, *c, *g, layer, false);
      inferred(op, g->role, layer, 1 - g->parameterInput);
    } else if (!why.empty()) {
      unclassified(op, why);
    } else if (c->isGemm()) {
      rest.push_back(*c);
    }
  }

  // A tagged Wgrad's dY is the operand its layer's Dgrad reads, if any.
  for (auto &[index, c] : taggedWgrads)
    for (auto &entry : layers)
      if (entry.second.layer == found.gemms[index].layer) {
        auto [score, g] = bestWgrad(c, entry.second);
        if (score > 0)
          found.gemms[index].lhsInput = g;
      }

  // Wgrad: dW[N, K] = dY^T X contracts the token axis of the Dgrad's dY and
  // the Fprop's X of one layer. The layer whose dY and X both match wins;
  // one matching operand is enough when no other layer matches as well
  // (layers that share an input, like q/k/v, are told apart by their dY).
  for (const Contraction &c : rest) {
    const LayerRecord *match = nullptr;
    unsigned matchGrad = 0;
    SmallVector<std::string> tied;
    int best = 0;
    for (auto &entry : layers) {
      const LayerRecord &record = entry.second;
      auto [score, g] = bestWgrad(c, record);
      if (score == 0 || score < best)
        continue;
      if (score > best)
        tied.clear();
      tied.push_back(quoted(record.layer));
      best = score;
      match = &record;
      matchGrad = g;
    }
    if (match && tied.size() == 1) {
      if (!match->excluded)
        inferred(c.op, GemmRole::wgrad, match->layer, matchGrad);
      continue;
    }
    if (tied.size() > 1) {
      unclassified(c.op, "shaped like a weight gradient of layers " +
                             llvm::join(tied, ", ") +
                             ", which its operands match equally");
      continue;
    }
    // No layer's X or dY: a weight gradient is suspected only if the
    // product has a (non-excluded) parameter's shape.
    auto resultShape =
        cast<RankedTensorType>(c.op->getResult(0).getType()).getShape();
    for (BlockArgument argument : function.getArguments()) {
      StringAttr name = parameterName(argument);
      auto type = dyn_cast<RankedTensorType>(argument.getType());
      if (!name || excludedName(name) || !type ||
          type.getShape() != resultShape)
        continue;
      unclassified(c.op, "shaped like parameter " + quoted(name.getValue()) +
                             ", but its operands are no layer's Fprop input "
                             "or Dgrad output gradient");
      break;
    }
  }

  // Each op is at most one entry of either list, so the order is total.
  llvm::sort(found.gemms, [&](const LinearGemm &a, const LinearGemm &b) {
    return order.lookup(a.op) < order.lookup(b.op);
  });
  llvm::sort(found.unclassified, [&](const UnclassifiedContraction &a,
                                     const UnclassifiedContraction &b) {
    return order.lookup(a.op) < order.lookup(b.op);
  });
  return found;
}

//===----------------------------------------------------------------------===//
// Normalization into a 2-D linalg.matmul
//===----------------------------------------------------------------------===//

namespace {

/// The position of `loop` in `loops`.
int64_t indexOf(ArrayRef<unsigned> loops, unsigned loop) {
  return llvm::find(loops, loop) - loops.begin();
}

/// The loop dimensions a map's results name, in order.
SmallVector<unsigned> loopsOf(AffineMap map) {
  SmallVector<unsigned> loops;
  for (AffineExpr result : map.getResults())
    loops.push_back(cast<AffineDimExpr>(result).getPosition());
  return loops;
}

/// True if `value` is a tensor filled with zero (a fresh accumulator).
bool isZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

/// Builds the views an operand needs. A view goes right after the
/// definition of what it views, so it dominates every op that value does;
/// an equal view that already dominates the GEMM is reused, so the Fprop
/// and the Wgrad of one activation keep reading one value.
class ViewBuilder {
public:
  ViewBuilder(Operation *gemm) : gemm(gemm), dominance(gemm->getParentOp()) {}

  Value transpose(Value value, ArrayRef<int64_t> permutation) {
    if (Operation *existing = first(value, [&](Operation *user) {
          auto t = dyn_cast<linalg::TransposeOp>(user);
          return t && t.getInput() == value &&
                 t.getPermutation() == permutation;
        }))
      return existing->getResult(0);
    OpBuilder b = afterDefinition(value);
    return transposeHere(b, value.getLoc(), value, permutation);
  }

  Value collapse(Value value, ArrayRef<ReassociationIndices> groups) {
    if (Operation *existing = first(value, [&](Operation *user) {
          auto c = dyn_cast<tensor::CollapseShapeOp>(user);
          return c && c.getSrc() == value &&
                 c.getReassociationIndices() == groups;
        }))
      return existing->getResult(0);
    OpBuilder b = afterDefinition(value);
    return tensor::CollapseShapeOp::create(b, value.getLoc(), value, groups);
  }

  static Value transposeHere(OpBuilder &b, Location loc, Value value,
                             ArrayRef<int64_t> permutation) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
    SmallVector<OpFoldResult> permuted;
    for (int64_t d : permutation)
      permuted.push_back(sizes[d]);
    Value init =
        tensor::EmptyOp::create(b, loc, permuted, type.getElementType());
    return linalg::TransposeOp::create(b, loc, value, init, permutation)
        ->getResult(0);
  }

private:
  /// The first of the users of `value` that `equal` accepts and that
  /// dominate the GEMM, or null. The first, because the contraction
  /// analysis reads a collapse_shape as the first equal one of its block.
  Operation *first(Value value, llvm::function_ref<bool(Operation *)> equal) {
    Operation *best = nullptr;
    for (Operation *user : value.getUsers())
      if (equal(user) && dominance.properlyDominates(user, gemm) &&
          (!best || dominance.properlyDominates(user, best)))
        best = user;
    return best;
  }

  OpBuilder afterDefinition(Value value) {
    OpBuilder b(gemm->getContext());
    if (Operation *def = value.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(value).getOwner());
    return b;
  }

  Operation *gemm;
  DominanceInfo dominance;
};

/// `loops` split into (own dimensions, reduction) for collapsing.
SmallVector<ReassociationIndices> twoGroups(int64_t first, int64_t second) {
  ReassociationIndices a, b;
  for (int64_t i = 0; i < first; ++i)
    a.push_back(i);
  for (int64_t i = 0; i < second; ++i)
    b.push_back(first + i);
  return {a, b};
}

} // namespace

FailureOr<linalg::MatmulOp>
mlir::mxfp4::normalizeLinearGemm(const LinearGemm &gemm, std::string &why) {
  linalg::LinalgOp op = gemm.op;
  std::optional<Contraction> analyzed = analyzeContraction(op);
  if (!analyzed) {
    why = "not a two-operand mul/add contraction with permutation indexing "
          "maps";
    return failure();
  }
  const Contraction &c = *analyzed;
  if (!c.batch.empty()) {
    why = "it has a batch dimension that neither operand broadcasts";
    return failure();
  }
  if (!c.isGemm()) {
    why = "not a matrix product (an operand has no dimension of its own)";
    return failure();
  }
  unsigned l = gemm.lhsInput, r = 1 - l;
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation()))
    if (l == 0 && contractedDims(matmul) &&
        c.inputs[0] == matmul.getInputs()[0] &&
        c.inputs[1] == matmul.getInputs()[1])
      return matmul;

  // The reduction in the lhs's order, which the rhs must follow so that
  // both are blocked along one flattened axis.
  SmallVector<unsigned> reduction;
  for (unsigned loop : loopsOf(c.maps[l]))
    if (llvm::is_contained(c.reduction, loop))
      reduction.push_back(loop);
  auto ownOf = [&](unsigned i) {
    SmallVector<unsigned> own;
    for (unsigned loop : loopsOf(c.maps[i]))
      if (llvm::is_contained(c.own[i], loop))
        own.push_back(loop);
    return own;
  };
  SmallVector<unsigned> own[2] = {ownOf(0), ownOf(1)};
  bool reshape = reduction.size() > 1 || own[l].size() > 1 ||
                 own[r].size() > 1;
  if (reshape && llvm::any_of(c.sizes, ShapedType::isDynamic)) {
    why = "dynamic dimensions in a GEMM whose operands or result must be "
          "reshaped to 2-D";
    return failure();
  }

  OpBuilder b(op);
  Location loc = op.getLoc();
  ViewBuilder views(op);

  // An operand as [own, R] or [R, own]: without its broadcast batch
  // dimensions, transposed if the two groups interleave, then collapsed.
  struct Operand2D {
    Value value;
    bool reductionFirst = false;
  };
  auto prepare = [&](unsigned i) {
    Value value = c.inputs[i];
    SmallVector<unsigned> loops = loopsOf(c.maps[i]);
    if (!c.dropped[i].empty()) {
      SmallVector<int64_t> dropped(c.dropped[i]);
      llvm::sort(dropped);
      auto broadcast = value.getDefiningOp<linalg::BroadcastOp>();
      // A generic that only broadcasts exactly those dimensions (and maybe
      // transposes, as torch-mlir writes a weight's expand): its input,
      // each dimension read along the loop of the result dimension it
      // fills.
      SmallVector<unsigned> copied;
      if (auto generic = value.getDefiningOp<linalg::GenericOp>()) {
        std::optional<SmallVector<std::optional<unsigned>>> source =
            copyGenericDims(generic);
        Value input = generic.getDpsInputs()[0];
        auto inputType = cast<RankedTensorType>(input.getType());
        if (source && inputType.getElementType() ==
                          cast<RankedTensorType>(value.getType())
                              .getElementType()) {
          copied.assign(inputType.getRank(), ~0u);
          for (auto [d, from] : llvm::enumerate(*source))
            if (from && !llvm::is_contained(dropped, int64_t(d)))
              copied[*from] = loops[d];
          if (llvm::count(copied, ~0u) != 0 ||
              int64_t(source->size()) - llvm::count(*source, std::nullopt) !=
                  int64_t(loops.size() - dropped.size()) ||
              llvm::any_of(dropped,
                           [&](int64_t d) { return (*source)[d].has_value(); }))
            copied.clear();
          else
            value = input;
        }
      }
      if (!copied.empty()) {
        loops = copied;
      } else if (broadcast &&
                 llvm::equal(broadcast.getDimensions(), dropped)) {
        value = broadcast.getInput();
      } else {
        // Any one element along a broadcast dimension is all of them.
        auto type = cast<RankedTensorType>(value.getType());
        SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
        SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
        SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
        SmallVector<int64_t> shape;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          if (llvm::is_contained(c.dropped[i], d))
            sizes[d] = b.getIndexAttr(1);
          else
            shape.push_back(type.getDimSize(d));
        }
        value = tensor::ExtractSliceOp::create(
            b, loc, RankedTensorType::get(shape, type.getElementType()), value,
            offsets, sizes, strides);
      }
      if (copied.empty()) {
        SmallVector<unsigned> kept;
        for (auto [pos, loop] : llvm::enumerate(loops))
          if (!llvm::is_contained(c.dropped[i], int64_t(pos)))
            kept.push_back(loop);
        loops = kept;
      }
    }
    SmallVector<unsigned> ownFirst(own[i]), reductionFirst(reduction);
    llvm::append_range(ownFirst, reduction);
    llvm::append_range(reductionFirst, own[i]);
    Operand2D result;
    if (loops == reductionFirst) {
      result.reductionFirst = true;
    } else if (loops != ownFirst) {
      SmallVector<int64_t> permutation;
      for (unsigned loop : ownFirst)
        permutation.push_back(indexOf(loops, loop));
      value = views.transpose(value, permutation);
    }
    if (own[i].size() > 1 || reduction.size() > 1)
      value = views.collapse(
          value, result.reductionFirst
                     ? twoGroups(reduction.size(), own[i].size())
                     : twoGroups(own[i].size(), reduction.size()));
    result.value = value;
    return result;
  };
  Operand2D lhs = prepare(l), rhs = prepare(r);

  // The accumulator as C[M, N]; a zero fill is made afresh, so the rewrite
  // still sees a zero fill and adds no accumulator.
  Value init = op.getDpsInits()[0];
  auto initType = cast<RankedTensorType>(init.getType());
  SmallVector<unsigned> outLoops = loopsOf(c.outMap);
  SmallVector<unsigned> canonicalOut(own[l]);
  llvm::append_range(canonicalOut, own[r]);
  bool permuteOut = outLoops != canonicalOut;
  SmallVector<int64_t> toCanonical, fromCanonical;
  for (unsigned loop : canonicalOut)
    toCanonical.push_back(indexOf(outLoops, loop));
  for (unsigned loop : outLoops)
    fromCanonical.push_back(indexOf(canonicalOut, loop));
  Value init2D;
  if (isZeroFill(init)) {
    SmallVector<OpFoldResult> sizes;
    if (reshape) {
      sizes = {b.getIndexAttr(c.extent(own[l])),
               b.getIndexAttr(c.extent(own[r]))};
    } else {
      SmallVector<OpFoldResult> written = tensor::getMixedSizes(b, loc, init);
      for (int64_t d : toCanonical)
        sizes.push_back(written[d]);
    }
    Value empty =
        tensor::EmptyOp::create(b, loc, sizes, initType.getElementType());
    init2D = linalg::FillOp::create(
                 b, loc, init.getDefiningOp<linalg::FillOp>().getInputs()[0],
                 empty)
                 .getResult(0);
  } else {
    init2D = init;
    if (permuteOut)
      init2D = ViewBuilder::transposeHere(b, loc, init2D, toCanonical);
    if (reshape)
      init2D = tensor::CollapseShapeOp::create(
          b, loc, init2D, twoGroups(own[l].size(), own[r].size()));
  }

  MLIRContext *ctx = op.getContext();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  SmallVector<AffineMap> maps = {
      AffineMap::get(3, 0, {lhs.reductionFirst ? k : m, lhs.reductionFirst ? m : k},
                     ctx),
      AffineMap::get(3, 0, {rhs.reductionFirst ? k : n, rhs.reductionFirst ? n : k},
                     ctx),
      AffineMap::get(3, 0, {m, n}, ctx)};
  auto matmul = linalg::MatmulOp::create(b, loc, TypeRange{init2D.getType()},
                                         ValueRange{lhs.value, rhs.value},
                                         ValueRange{init2D});
  if (maps != matmul.getIndexingMapsArray())
    matmul.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
  for (NamedAttribute attribute : op->getDiscardableAttrs())
    matmul->setAttr(attribute.getName(), attribute.getValue());

  // The product back in the original result's shape and order.
  Value result = matmul.getResult(0);
  if (reshape) {
    SmallVector<int64_t> shape;
    for (unsigned loop : canonicalOut)
      shape.push_back(c.sizes[loop]);
    result = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, initType.getElementType()),
        result, twoGroups(own[l].size(), own[r].size()));
  }
  if (permuteOut)
    result = ViewBuilder::transposeHere(b, loc, result, fromCanonical);
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  return matmul;
}
