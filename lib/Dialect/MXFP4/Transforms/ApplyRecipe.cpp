//===- ApplyRecipe.cpp - rewrite linear-layer GEMMs per a recipe ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Recipe.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Roles.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Telemetry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringMap.h"

#include <map>

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_APPLYRECIPEPASS
#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;
using namespace mlir::mxfp4;

namespace {

/// 64-bit FNV-1a, so seeds depend only on names (stable across runs and
/// builds).
uint64_t fnv1a(llvm::StringRef text, uint64_t hash = 0xCBF29CE484222325ull) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001B3ull;
  }
  return hash;
}

/// The names of an operand's meaning, for seeds and messages.
llvm::StringRef operandName(GemmRole role, bool lhs) {
  if (lhs)
    return role == GemmRole::fprop ? "input" : "grad_output";
  return role == GemmRole::wgrad ? "input" : "weight";
}

/// The operand in canonical K-major form [rows, K]: transposed if the
/// matmul contracts its dim 0.
Value canonical(OpBuilder &b, Location loc, Value operand, int contracted) {
  if (contracted == 1)
    return operand;
  auto type = cast<RankedTensorType>(operand.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, operand);
  std::swap(sizes[0], sizes[1]);
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  return linalg::TransposeOp::create(b, loc, operand, init,
                                     ArrayRef<int64_t>{1, 0})
      .getResult()[0];
}

/// True if `value` is a tensor filled with zero (a fresh accumulator).
bool isZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

struct ApplyRecipePass
    : mxfp4::impl::ApplyRecipePassBase<ApplyRecipePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *) override {
    llvm::Expected<Recipe> parsed = parseRecipe(recipeText);
    if (!parsed) {
      parseError = llvm::toString(parsed.takeError());
      return success(); // reported, located, when the pass runs
    }
    recipe = *parsed;
    return success();
  }

  void runOnOperation() override;

private:
  LogicalResult rewrite(const LinearGemm &gemm, Value step,
                        llvm::StringMap<int> &uses);

  /// A layer's Fprop input as MXFP4 (along K, possibly rotated), for a
  /// Wgrad that takes X from the forward pass.
  struct ForwardInput {
    Value values, scales;
    std::optional<HadamardKind> kind;
    int64_t size = 0;
    Value seed, step;
  };

  LogicalResult returnTelemetry(func::FuncOp function);

  Recipe recipe;
  std::string parseError;
  /// Keyed by the layer and the Fprop's activation operand (the same value
  /// the Wgrad reads): micro-batches sharing a layer stay apart, and so do
  /// layers sharing an input (q/k/v_proj, gate/up_proj), whose copies differ
  /// under random rotations or stochastic rounding.
  std::map<std::pair<std::string, void *>, ForwardInput> forwardInputs;
  /// (layer/role/operand, tensor<8xf32>) per quantization, with telemetry.
  SmallVector<std::pair<std::string, Value>> telemetry;
};

void ApplyRecipePass::runOnOperation() {
  func::FuncOp function = getOperation();
  if (!parseError.empty()) {
    function.emitError(parseError);
    return signalPassFailure();
  }
  forwardInputs.clear();
  telemetry.clear();

  LinearGemms found =
      findLinearGemms(function, recipe.inferRoles, recipe.includeLmHead);
  // Contractions of parameters that get no role stay in high precision: a
  // remark says so, or, under require-roles, an error stops the pass before
  // anything is rewritten.
  for (const UnclassifiedContraction &rest : found.unclassified) {
    if (requireRoles)
      rest.op->emitError(rest.message() +
                         ": require-roles does not let it stay in high "
                         "precision");
    else
      rest.op->emitRemark(rest.message() + ": left in high precision");
  }
  if (requireRoles && !found.unclassified.empty())
    return signalPassFailure();
  SmallVector<LinearGemm> &gemms = found.gemms;
  // Fprops first, so a Wgrad can find its layer's forward input.
  SmallVector<LinearGemm> ordered;
  for (bool fprop : {true, false})
    for (const LinearGemm &gemm : gemms)
      if ((gemm.role == GemmRole::fprop) == fprop)
        ordered.push_back(gemm);

  Value step;
  for (BlockArgument argument : function.getArguments())
    if (function.getArgAttr(argument.getArgNumber(), kStepAttrName))
      step = argument;

  llvm::StringMap<int> uses;
  for (const LinearGemm &gemm : ordered)
    if (failed(rewrite(gemm, step, uses)))
      return signalPassFailure();
  // Provenance: the complete settings the function was compiled with.
  if (!gemms.empty())
    function->setAttr(kRecipeAttrName,
                      StringAttr::get(&getContext(), printRecipe(recipe)));
  if (!telemetry.empty() && failed(returnTelemetry(function)))
    return signalPassFailure();
}

LogicalResult ApplyRecipePass::returnTelemetry(func::FuncOp function) {
  if (!function.getBody().hasOneBlock())
    return function.emitError("telemetry needs a function with one block");
  // A function pass may not look at its siblings (they are rewritten in
  // parallel), so callers cannot be counted here: only public functions,
  // the entry points a runtime calls, get the extra result.
  if (!function.isPublic())
    return function.emitError("telemetry adds a result to @")
           << function.getName()
           << ", which is private and may have callers; apply it to public "
              "entry functions only";
  auto ret = cast<func::ReturnOp>(function.getBody().front().getTerminator());
  DominanceInfo dominance(function);
  for (auto &[tag, row] : telemetry)
    if (!dominance.properlyDominates(row, ret))
      return function.emitError("telemetry of '")
             << tag << "' is not available at the return (a linear layer "
                       "inside a loop or branch)";

  // A [quantizations, fields] table as the last result, its rows named by
  // the function attribute mxfp4.telemetry.
  OpBuilder b(ret);
  Location loc = ret.getLoc();
  int64_t rows = telemetry.size(), cols = std::size(kTelemetryFields);
  auto tableType = RankedTensorType::get({rows, cols}, b.getF32Type());
  Value table = tensor::EmptyOp::create(b, loc, tableType.getShape(),
                                        b.getF32Type());
  SmallVector<Attribute> names;
  for (auto [i, entry] : llvm::enumerate(telemetry)) {
    table = tensor::InsertSliceOp::create(
        b, loc, entry.second, table,
        ArrayRef<OpFoldResult>{b.getIndexAttr(i), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(cols)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    names.push_back(b.getStringAttr(entry.first));
  }
  ret.getOperandsMutable().append(table);
  SmallVector<Type> results(function.getResultTypes());
  results.push_back(tableType);
  function.setFunctionType(
      b.getFunctionType(function.getArgumentTypes(), results));
  function->setAttr(kTelemetryAttrName, b.getArrayAttr(names));
  SmallVector<Attribute> fields;
  for (llvm::StringRef field : kTelemetryFields)
    fields.push_back(b.getStringAttr(field));
  function->setAttr(kTelemetryFieldsAttrName, b.getArrayAttr(fields));
  return success();
}

LogicalResult ApplyRecipePass::rewrite(const LinearGemm &gemm, Value step,
                                       llvm::StringMap<int> &uses) {
  const RoleRecipe &r = recipe.role(gemm.role);
  if (!r.lhs.fp4 && !r.rhs.fp4 && !r.hadamard)
    return success();
  std::string role = stringifyGemmRole(gemm.role).str();
  Operation *at = gemm.op;
  auto fail = [&](const llvm::Twine &message) {
    return at->emitError("recipe cannot rewrite the ")
           << role << " GEMM of '" << gemm.layer << "': " << message;
  };
  // Other frontends' forms (generics, batch matmuls of a broadcast weight,
  // reshaped activations, W on the left) as a 2-D matmul first.
  std::string why;
  FailureOr<linalg::MatmulOp> normalized = normalizeLinearGemm(gemm, why);
  if (failed(normalized))
    return fail(why);
  linalg::MatmulOp op = *normalized;
  at = op;

  // The contraction in canonical form: A[M, R] * B[N, R]^T.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op.getContext();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  int lhsDim, rhsDim;
  if (maps[0] == AffineMap::get(3, 0, {m, k}, ctx))
    lhsDim = 1;
  else if (maps[0] == AffineMap::get(3, 0, {k, m}, ctx))
    lhsDim = 0;
  else
    return fail("unsupported lhs indexing map");
  if (maps[1] == AffineMap::get(3, 0, {n, k}, ctx))
    rhsDim = 1;
  else if (maps[1] == AffineMap::get(3, 0, {k, n}, ctx))
    rhsDim = 0;
  else
    return fail("unsupported rhs indexing map");
  if (maps[2] != AffineMap::get(3, 0, {m, n}, ctx))
    return fail("unsupported result indexing map");

  Value lhs = op.getInputs()[0], rhs = op.getInputs()[1];
  Value init = op.getOutputs()[0];
  auto lhsType = dyn_cast<RankedTensorType>(lhs.getType());
  auto rhsType = dyn_cast<RankedTensorType>(rhs.getType());
  auto resultType = dyn_cast<RankedTensorType>(op.getResultTypes()[0]);
  if (!lhsType || !rhsType || !resultType)
    return fail("operands must be ranked tensors");
  for (Type t : {lhsType.getElementType(), rhsType.getElementType(),
                 resultType.getElementType()})
    if (!t.isF32() && !t.isBF16())
      return fail("element types must be f32 or bf16");
  int64_t reduction = lhsType.getDimSize(lhsDim);
  if (ShapedType::isDynamic(reduction))
    return fail("the reduction dimension must be static");
  if ((r.lhs.fp4 || r.rhs.fp4) && reduction % kBlockSize != 0)
    return fail("the reduction dimension (" + llvm::Twine(reduction) +
                ") is not a multiple of the MXFP4 block size 32");
  if (r.hadamard && reduction % r.hadamardSize != 0)
    return fail("the reduction dimension (" + llvm::Twine(reduction) +
                ") is not a multiple of the Hadamard size " +
                llvm::Twine(r.hadamardSize));
  bool needsStep =
      (r.hadamard == HadamardKind::random_per_step) ||
      (r.lhs.fp4 && r.lhs.rounding == Rounding::stochastic) ||
      (r.rhs.fp4 && r.rhs.rounding == Rounding::stochastic);
  if (needsStep && !step)
    return fail("stochastic rounding and random_per_step rotations need an "
                "i64 function argument marked {mxfp4.step}");

  OpBuilder b(op);
  Location loc = op.getLoc();
  Type i64 = b.getI64Type();
  auto seedConstant = [&](llvm::StringRef what) -> Value {
    uint64_t hash = fnv1a(what, fnv1a(gemm.layer));
    hash ^= static_cast<uint64_t>(recipe.seed) * 0x9E3779B97F4A7C15ull;
    return arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(i64, static_cast<int64_t>(hash)));
  };

  // One rotation for both operands: same kind, size, seed and step.
  Value rotationSeed, rotationStep;
  if (r.hadamard && *r.hadamard != HadamardKind::deterministic)
    rotationSeed = seedConstant(role + "/rotation");
  if (r.hadamard == HadamardKind::random_per_step)
    rotationStep = step;
  auto rotate = [&](Value v) -> Value {
    if (!r.hadamard)
      return v;
    return HadamardOp::create(b, loc, v.getType(), v, rotationSeed,
                              rotationStep, /*axis=*/1, r.hadamardSize,
                              *r.hadamard, /*inverse=*/false);
  };

  // Operand -> (values, scales) or a high-precision tensor.
  struct Prepared {
    Value high, values, scales;
  };
  int use = uses[gemm.layer + "/" + role]++;
  auto prepare = [&](Value v, bool isLhs, const OperandRecipe &o) {
    Prepared p;
    p.high = rotate(v);
    if (!o.fp4)
      return p;
    llvm::StringRef meaning = operandName(gemm.role, isLhs);
    Value seed, counter;
    if (o.rounding == Rounding::stochastic) {
      // A cached weight is quantized once per step for every use; anything
      // else draws fresh bits per use.
      bool cached = meaning == "weight" && recipe.weightCache;
      seed = seedConstant(role + "/" + meaning.str() +
                          (cached ? "" : "/" + std::to_string(use)));
      counter = step;
    }
    auto type = cast<RankedTensorType>(p.high.getType());
    SmallVector<int64_t> scaleShape(type.getShape());
    scaleShape[1] /= kBlockSize;
    auto q = QuantizeOp::create(
        b, loc, type.clone(b.getType<Float4E2M1FNType>()),
        RankedTensorType::get(scaleShape, b.getType<Float8E8M0FNUType>()),
        p.high, seed, counter, /*axis=*/1, kBlockSize, o.scaleRule,
        o.rounding);
    p.values = q.getValues();
    p.scales = q.getScales();
    if (recipe.telemetry)
      telemetry.push_back({gemm.layer + "/" + role + "/" + meaning.str(),
                           buildQuantizationTelemetry(b, loc, p.high, q)});
    return p;
  };

  Value a = canonical(b, loc, lhs, lhsDim);
  Value bOperand = canonical(b, loc, rhs, rhsDim);
  bool rhsIsForwardInput = gemm.role == GemmRole::wgrad &&
                           recipe.wgradInput ==
                               WgradInputSource::forwardQuantized;
  if (rhsIsForwardInput) {
    // X^T for Wgrad from the Fprop's MXFP4 copy of X: dequantized and
    // rotated back, as if only that copy had been saved for the backward.
    auto found =
        forwardInputs.find({gemm.layer, rhs.getAsOpaquePointer()});
    if (found == forwardInputs.end())
      return fail("wgrad_input=forward_quantized needs the layer's Fprop in "
                  "MXFP4 in the same function, on the same activation");
    const ForwardInput &f = found->second;
    if (!DominanceInfo(op->getParentOp()).properlyDominates(f.values, op))
      return fail("wgrad_input=forward_quantized needs the Fprop before the "
                  "Wgrad");
    auto valuesType = cast<RankedTensorType>(f.values.getType());
    Value x = DequantizeOp::create(
        b, loc, valuesType.clone(cast<RankedTensorType>(rhs.getType())
                                     .getElementType()),
        f.values, f.scales, /*axis=*/1, kBlockSize);
    if (f.kind)
      x = HadamardOp::create(b, loc, x.getType(), x, f.seed, f.step, 1, f.size,
                             *f.kind, /*inverse=*/true);
    bOperand = canonical(b, loc, x, /*contracted=*/0);
  }
  Prepared pa = prepare(a, /*isLhs=*/true, r.lhs);
  Prepared pb = prepare(bOperand, /*isLhs=*/false, r.rhs);

  if (gemm.role == GemmRole::fprop && pa.values)
    forwardInputs[{gemm.layer, lhs.getAsOpaquePointer()}] = {
        pa.values,      pa.scales,    r.hadamard,
        r.hadamardSize, rotationSeed, rotationStep};

  Value acc = isZeroFill(init) ? Value() : init;
  auto gemmAttr = GemmAttr::get(ctx, gemm.role, gemm.layer);
  Value result;
  if (pa.values && pb.values) {
    auto mm = ScaledMatmulOp::create(b, loc, resultType, pa.values, pa.scales,
                                     pb.values, pb.scales, acc);
    mm->setAttr(kGemmAttrName, gemmAttr);
    result = mm.getResult();
  } else {
    // At most one operand in MXFP4: dequantize it (fake quantization) and
    // keep a high-precision contraction of the rotated operands.
    auto operand = [&](const Prepared &p, Value original) -> Value {
      if (!p.values)
        return p.high;
      return DequantizeOp::create(b, loc,
                                  cast<RankedTensorType>(original.getType()),
                                  p.values, p.scales, 1, kBlockSize);
    };
    Value x = operand(pa, a), y = operand(pb, bOperand);
    SmallVector<AffineMap> canonicalMaps = {
        AffineMap::get(3, 0, {m, k}, ctx), AffineMap::get(3, 0, {n, k}, ctx),
        AffineMap::get(3, 0, {m, n}, ctx)};
    auto mm = linalg::MatmulOp::create(b, loc, TypeRange{resultType},
                                       ValueRange{x, y}, ValueRange{init});
    mm.setIndexingMapsAttr(b.getAffineMapArrayAttr(canonicalMaps));
    mm->setAttr(kGemmAttrName, gemmAttr);
    result = mm.getResult(0);
  }
  op.getResult(0).replaceAllUsesWith(result);
  op.erase();
  return success();
}

} // namespace
