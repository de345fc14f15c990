//===- FunctionConverter.cpp - mxfp4 functions to kernel launches ---------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Turns each function made of mxfp4 ops into a host function of device
// buffers and kernel launches plus one `gpu.module` of kernels:
//
// - every quantize, with the hadamard and the linalg.transpose feeding it,
//   becomes a job of a fused quantize kernel; the row-wise and the
//   transposed quantization of one source share a kernel (one read);
// - in mixed mode, an all-parallel linalg.generic whose result (maybe
//   reshaped) only those quantizations read is computed inside their kernel
//   from its inputs (SwiGLU and its gradients, a norm's output, the rotary
//   embedding's gradient): it is never written;
// - scaled_matmul becomes the target's GEMM kernel (with `acc`, which
//   mxfp4-fold-gemm-accumulators forms for targets that add it last),
//   reading the scales its producers wrote (in the target's GEMM scale
//   layout where it has one, KernelTarget::gemmScaleLayout, or a
//   conversion of scales from outside);
// - dequantize becomes its kernel.
//
// Tensors become flat device buffers (FP4 packed two to a byte) and keep
// their tensor type in an `mxfp4.tensor` argument/result attribute, which
// the runtimes use to marshal host arrays.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/MXFP4ToGPUCommon/FunctionConverter.h"

#include "mxfp4/Conversion/MXFP4ToGPUCommon/DeviceABI.h"
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;

namespace {

/// Where a quantize reads from: the source tensor, whether it quantizes the
/// source's transpose, and the rotation applied on the way.
struct QuantizeSource {
  Value root;
  bool transposed = false;
  RotationConfig rotation;
  Value seed, step;
};

/// A tensor living on the device.
struct DeviceTensor {
  Value buffer;   // flat memref (FP4 packed two to a byte)
  Value laidOut;  // scale tensors: the copy in the GEMM's layout, if made
};

class FunctionConverter {
public:
  FunctionConverter(func::FuncOp func, gpu::GPUModuleOp kernels,
                    const KernelTarget &target, bool mixed)
      : func(func), kernels(kernels), target(target), mixed(mixed),
        b(func.getContext()) {}

  LogicalResult run();

private:
  LogicalResult check();
  LogicalResult runStrict();
  LogicalResult runMixed();
  /// The device buffer of `value`; in mixed mode a tensor is read through a
  /// new bufferization.to_buffer at each call (scalars are used as they
  /// are). Null if there is none.
  Value bufferOf(Location loc, Value value);
  /// Records `flat` as the buffer of `result`; in mixed mode the tensor
  /// users get it through bufferization.to_tensor.
  void publish(Location loc, Value result, Value flat);
  FailureOr<QuantizeSource> analyze(QuantizeOp op);
  Value alloc(Location loc, RankedTensorType type);
  Value deviceType(Value buffer);
  void launch(Location loc, const KernelLaunch &kernel,
              ArrayRef<Value> operands);
  /// An error at `op` prefixed with the target's name.
  InFlightDiagnostic error(Operation *op) {
    return op->emitError() << target.name << ": ";
  }
  LogicalResult emitQuantizeGroup(QuantizeOp first);
  LogicalResult emitScaledMatmul(ScaledMatmulOp op);
  LogicalResult emitDequantize(DequantizeOp op);
  /// The scales of a GEMM operand in the layout the target's GEMM reads.
  Value gemmScales(Location loc, Value scales);
  template <typename BuildFn>
  gpu::GPUFuncOp getKernel(StringRef name, BuildFn build);

  func::FuncOp func;
  gpu::GPUModuleOp kernels;
  const KernelTarget &target;
  bool mixed;
  OpBuilder b;
  DenseMap<Value, DeviceTensor> device;
  DenseSet<Operation *> emittedQuantizes;
  /// Producers computed inside quantize kernels (erased once unused).
  DenseSet<Operation *> fusedOps;
};

} // namespace

/// The flat buffer type of a tensor on the device.
static MemRefType getBufferType(RankedTensorType type) {
  Type element = type.getElementType();
  int64_t elements = type.getNumElements();
  if (isa<Float4E2M1FNType>(element))
    return MemRefType::get({elements / 2},
                           IntegerType::get(type.getContext(), 8));
  if (isa<Float8E8M0FNUType>(element))
    return MemRefType::get({elements}, IntegerType::get(type.getContext(), 8));
  return MemRefType::get({elements}, element);
}

LogicalResult FunctionConverter::check() {
  for (Type t : mixed ? TypeRange() : func.getArgumentTypes()) {
    if (t.isInteger(64))
      continue;
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !tensor.hasStaticShape())
      return error(func) << "arguments must be tensors of static shape or i64, "
                            "got "
                         << t;
  }
  for (Type t : mixed ? TypeRange() : func.getResultTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !tensor.hasStaticShape())
      return error(func) << "results must be tensors of static shape, got "
                         << t;
  }
  if (!func.getBody().hasOneBlock())
    return error(func) << "the function body must be one block";
  // The top-level ops: a transpose's body is its own business.
  auto checkOp = [&](Operation *op) -> WalkResult {
    if (auto q = dyn_cast<QuantizeOp>(op)) {
      auto type = cast<RankedTensorType>(q.getInput().getType());
      if (!type.hasStaticShape())
        return error(op) << "quantize needs a static shape";
      if (static_cast<int64_t>(q.getAxis()) != type.getRank() - 1)
        return error(op) << "quantize along a leading axis; quantize the "
                            "transpose along its last axis instead (as the "
                            "recipes do)";
      if (q.getBlockSize() != 32)
        return error(op) << "only 32-element blocks are supported";
      return WalkResult::advance();
    }
    if (auto h = dyn_cast<HadamardOp>(op)) {
      auto rank = cast<RankedTensorType>(h.getType()).getRank();
      if (static_cast<int64_t>(h.getAxis()) != rank - 1)
        return error(op) << "hadamard must rotate the last axis";
      if (h.getSize() > 32)
        return error(op)
               << "hadamard size " << h.getSize()
               << " is not supported by the fused quantize kernel (16 and "
                  "32 are)";
      for (Operation *user : h->getUsers())
        if (!isa<QuantizeOp>(user))
          return error(op) << "a hadamard must feed quantize ops "
                              "only (it is fused into them)";
      return WalkResult::advance();
    }
    if (auto t = dyn_cast<linalg::TransposeOp>(op)) {
      if (mixed)
        return WalkResult::advance();
      if (t.getPermutation() != ArrayRef<int64_t>{1, 0})
        return error(op) << "only 2-D transposes are supported";
      for (Operation *user : t->getUsers())
        if (!mixed && !isa<QuantizeOp, HadamardOp>(user))
          return error(op) << "a transpose must feed quantize ops "
                              "(possibly through a hadamard)";
      return WalkResult::advance();
    }
    if (auto m = dyn_cast<ScaledMatmulOp>(op)) {
      if (!cast<RankedTensorType>(m.getType()).hasStaticShape())
        return error(op) << "scaled_matmul needs static shapes";
      return WalkResult::advance();
    }
    if (isa<DequantizeOp>(op)) {
      auto d = cast<DequantizeOp>(op);
      auto type = cast<RankedTensorType>(d.getType());
      if (static_cast<int64_t>(d.getAxis()) != type.getRank() - 1 ||
          d.getBlockSize() != 32)
        return error(op) << "dequantize must be blocked by 32 "
                            "along the last axis";
      return WalkResult::advance();
    }
    if (isa<tensor::EmptyOp, func::ReturnOp>(op))
      return WalkResult::advance();
    if (isa<arith::ConstantOp>(op) || mixed) {
      // FP4 and E8M0 tensors exist only between mxfp4 ops.
      for (Value v : op->getOperands())
        if (auto t = dyn_cast<RankedTensorType>(v.getType());
            t && isa<Float4E2M1FNType, Float8E8M0FNUType>(t.getElementType()))
          return error(op) << "FP4 values and E8M0 scales may only "
                              "be used by mxfp4 ops";
      return WalkResult::advance();
    }
    return error(op) << "'" << op->getName() << "' has no " << target.name
                     << " lowering; this conversion lowers "
                        "mxfp4.quantize/dequantize/scaled_matmul with the "
                        "mxfp4.hadamard and linalg.transpose that feed them";
  };
  for (Operation &op : func.getBody().front())
    if (checkOp(&op).wasInterrupted())
      return failure();
  return success();
}

FailureOr<QuantizeSource> FunctionConverter::analyze(QuantizeOp op) {
  QuantizeSource source;
  Value v = op.getInput();
  if (auto h = v.getDefiningOp<HadamardOp>()) {
    source.rotation.size = h.getSize();
    source.rotation.kind = h.getKind();
    source.rotation.inverse = h.getInverse();
    source.rotation.roundToBF16 = !h.getType().getElementType().isF32();
    source.seed = h.getSeed();
    source.step = h.getStep();
    v = h.getInput();
  }
  if (auto t = v.getDefiningOp<linalg::TransposeOp>();
      t && t.getPermutation() == ArrayRef<int64_t>{1, 0}) {
    source.transposed = true;
    v = t.getInput();
  }
  source.root = v;
  return source;
}

Value FunctionConverter::alloc(Location loc, RankedTensorType type) {
  return memref::AllocOp::create(b, loc, getBufferType(type));
}

/// The launch operand for `buffer`: a view in the global address space.
Value FunctionConverter::deviceType(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return memref::MemorySpaceCastOp::create(b, buffer.getLoc(),
                                           globalBuffer(b.getContext(),
                                                        type.getNumElements(),
                                                        type.getElementType()),
                                           buffer);
}

void FunctionConverter::launch(Location loc, const KernelLaunch &kernel,
                               ArrayRef<Value> operands) {
  SmallVector<Value> args;
  for (Value v : operands)
    args.push_back(isa<MemRefType>(v.getType()) ? deviceType(v) : v);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value grid = arith::ConstantIndexOp::create(b, loc, kernel.blocks);
  Value block = arith::ConstantIndexOp::create(b, loc, kernel.threads);
  Value gridZ = kernel.gridZ == 1
                    ? one
                    : arith::ConstantIndexOp::create(b, loc, kernel.gridZ);
  gpu::LaunchFuncOp::create(b, loc, kernel.kernel,
                            gpu::KernelDim3{grid, one, gridZ},
                            gpu::KernelDim3{block, one, one},
                            /*dynamicSharedMemorySize=*/Value(), args);
}

template <typename BuildFn>
gpu::GPUFuncOp FunctionConverter::getKernel(StringRef name, BuildFn build) {
  if (auto existing = kernels.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing;
  OpBuilder kb(b.getContext());
  return build(kb);
}

static std::string describeJob(const QuantizeJob &job) {
  std::string s = job.transposed ? "t" : "r";
  if (job.rotation.size)
    s += llvm::formatv("_h{0}{1}{2}{3}", job.rotation.size,
                       stringifyHadamardKind(job.rotation.kind).take_front(1),
                       job.rotation.inverse ? "i" : "",
                       job.rotation.roundToBF16 ? "b" : "")
             .str();
  s += "_" + stringifyScaleRule(job.rule).str();
  s += job.stochastic ? "_sr" : "";
  s += job.values ? "v" : "";
  s += job.scales ? "s" : "";
  s += job.layoutScales ? "p" : "";
  return s;
}

static std::string typeName(Type t) { return t.isF32() ? "f32" : "bf16"; }

/// Whether every use of `v` is, through hadamards and transposes, the input
/// of one of the quantizations `members`.
static bool feedsOnly(Value v, const SmallPtrSetImpl<Operation *> &members) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto q = dyn_cast<QuantizeOp>(user)) {
      if (!members.contains(user) || q.getInput() != v)
        return false;
      continue;
    }
    auto h = dyn_cast<HadamardOp>(user);
    auto t = dyn_cast<linalg::TransposeOp>(user);
    if (!(h && h.getInput() == v) && !(t && t.getInput() == v))
      return false;
    if (!feedsOnly(user->getResult(0), members))
      return false;
  }
  return true;
}

/// The producer of `root` that a quantize kernel can compute where it reads
/// the source, with the ops it replaces (reshapes of it, then itself): an
/// all-parallel linalg.generic of scalar arith and math ops, constants and
/// `linalg.index`, whose result (maybe reshaped) only the quantizations
/// `members` read, and whose inputs are read at loops or constants (the
/// rotary embedding reads each pair's two halves at constant indices).
/// `key` receives a description of the computation that names its kernel.
static std::optional<std::pair<SourceProducer, SmallVector<Operation *>>>
matchProducer(Value root, const SmallPtrSetImpl<Operation *> &members,
              std::string &key) {
  if (!feedsOnly(root, members))
    return std::nullopt;
  // Reshapes keep the row-major order of the elements.
  SmallVector<Operation *> replaced;
  Value v = root;
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      v.getDefiningOp())) {
    replaced.push_back(v.getDefiningOp());
    v = v.getDefiningOp()->getOperand(0);
    if (!v.hasOneUse())
      return std::nullopt;
  }
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumResults() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops())
    return std::nullopt;
  replaced.push_back(g);
  auto isFloat = [](Type t) { return t.isF32() || t.isBF16(); };
  Block *body = g.getBody();
  SmallVector<int64_t> loops = g.getStaticLoopRanges();
  if (!isFloat(cast<RankedTensorType>(v.getType()).getElementType()) ||
      ShapedType::isDynamicShape(loops) ||
      !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity() ||
      !body->getArgument(g.getNumDpsInputs()).use_empty())
    return std::nullopt;

  SourceProducer producer;
  producer.loops = loops;
  llvm::raw_string_ostream os(key);
  os << "loops";
  for (int64_t extent : loops)
    os << " " << extent;
  os << ";";
  DenseMap<Value, int64_t> ids;
  for (OpOperand *input : g.getDpsInputOperands()) {
    auto t = dyn_cast<RankedTensorType>(input->get().getType());
    AffineMap map = g.getMatchingIndexingMap(input);
    if (!t || !t.hasStaticShape() || !isFloat(t.getElementType()) ||
        !llvm::all_of(map.getResults(), [](AffineExpr e) {
          return isa<AffineDimExpr, AffineConstantExpr>(e);
        }))
      return std::nullopt;
    int64_t id = producer.inputs.size();
    producer.inputs.push_back(
        {map, llvm::to_vector(t.getShape()), t.getElementType()});
    ids[body->getArgument(id)] = id;
    os << map << t << ";";
  }
  // Operands: earlier values of the body, or scalar constants from outside.
  auto describe = [&](Value v) -> bool {
    if (auto it = ids.find(v); it != ids.end()) {
      os << " %" << it->second;
      return true;
    }
    Attribute constant;
    if (!v.getDefiningOp<arith::ConstantOp>() ||
        !matchPattern(v, m_Constant(&constant)) || isa<ShapedType>(v.getType()))
      return false;
    os << " " << constant;
    return true;
  };
  for (Operation &op : body->without_terminator()) {
    if (op.getNumRegions() || op.getNumResults() != 1 ||
        isa<ShapedType>(op.getResult(0).getType()))
      return std::nullopt;
    if (!isa<linalg::IndexOp>(op) &&
        (!isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) ||
         !(op.hasTrait<OpTrait::Elementwise>() ||
           op.hasTrait<OpTrait::ConstantLike>())))
      return std::nullopt;
    os << op.getName() << op.getRawDictionaryAttrs()
       << op.getResult(0).getType();
    for (Value v : op.getOperands())
      if (!describe(v))
        return std::nullopt;
    int64_t id = ids.size();
    ids[op.getResult(0)] = id;
    os << ";";
  }
  os << "yield";
  if (!describe(body->getTerminator()->getOperand(0)))
    return std::nullopt;
  producer.compute = [body](OpBuilder &b, Location loc, ValueRange inputs,
                            ValueRange loopIndices) -> Value {
    IRMapping map;
    map.map(body->getArguments().take_front(inputs.size()), inputs);
    auto lookup = [&](Value v) {
      if (!map.contains(v)) // a constant from outside the body
        map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
      return map.lookup(v);
    };
    for (Operation &op : body->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(op)) {
        map.map(index.getResult(), loopIndices[index.getDim()]);
        continue;
      }
      for (Value v : op.getOperands())
        lookup(v);
      b.clone(op, map);
    }
    return lookup(body->getTerminator()->getOperand(0));
  };
  return std::make_pair(std::move(producer), std::move(replaced));
}

LogicalResult FunctionConverter::emitQuantizeGroup(QuantizeOp first) {
  FailureOr<QuantizeSource> firstSource = analyze(first);
  if (failed(firstSource))
    return failure();
  // Gather this source's other quantizations, one per orientation.
  SmallVector<std::pair<QuantizeOp, QuantizeSource>, 2> members;
  members.push_back({first, *firstSource});
  for (Operation &op : func.getBody().getOps()) {
    auto q = dyn_cast<QuantizeOp>(&op);
    if (!q || q == first || emittedQuantizes.count(q))
      continue;
    FailureOr<QuantizeSource> s = analyze(q);
    if (failed(s))
      return failure();
    if (s->root != firstSource->root || llvm::any_of(members, [&](auto &m) {
          return m.second.transposed == s->transposed;
        }))
      continue;
    members.push_back({q, *s});
  }

  Location loc = first.getLoc();
  auto sourceType = cast<RankedTensorType>(firstSource->root.getType());
  int64_t cols = sourceType.getShape().back();
  int64_t rows = sourceType.getNumElements() / cols;
  if (llvm::any_of(members, [](auto &m) { return m.second.transposed; }) &&
      sourceType.getRank() != 2)
    return error(first) << "a transposed quantization needs a 2-D "
                           "source";
  QuantizeConfig config{rows,
                        cols,
                        sourceType.getElementType(),
                        {},
                        target.bounds,
                        target.convertBlock,
                        target.stageQuantize};
  config.scaleLayout = target.gemmScaleLayout;
  std::string name = llvm::formatv("quantize_{0}x{1}_{2}", rows, cols,
                                   typeName(config.sourceType));
  SmallVector<Value> operands;
  SmallPtrSet<Operation *, 2> memberOps;
  for (auto &member : members)
    memberOps.insert(member.first);
  std::string producerKey;
  auto producer = mixed
                      ? matchProducer(firstSource->root, memberOps, producerKey)
                      : std::nullopt;
  if (producer) {
    config.producer = producer->first;
    // Kernels computing the same producer share a name (and a kernel).
    name +=
        llvm::formatv("_fused{0:x-16}", llvm::xxh3_64bits(producerKey)).str();
    fusedOps.insert(producer->second.begin(), producer->second.end());
    auto generic = cast<linalg::GenericOp>(producer->second.back());
    for (Value input : generic.getDpsInputs())
      operands.push_back(bufferOf(loc, input));
    if (llvm::any_of(operands, [](Value v) { return !v; }))
      return error(first) << "an input of the quantized tensor's producer "
                             "has no device buffer";
  } else {
    Value root = bufferOf(loc, firstSource->root);
    if (!root)
      return error(first) << "the quantized tensor must be an argument "
                             "or the result of another lowered op";
    operands.push_back(root);
  }
  SmallVector<Value> scalars;
  for (auto &[q, source] : members) {
    emittedQuantizes.insert(q);
    QuantizeJob job;
    job.transposed = source.transposed;
    job.rotation = source.rotation;
    job.rule = q.getScaleRule();
    job.stochastic = q.getRounding() == Rounding::stochastic;
    bool toGemm = false, elsewhere = false;
    for (OpOperand &use : q.getScales().getUses()) {
      auto mm = dyn_cast<ScaledMatmulOp>(use.getOwner());
      (mm ? toGemm : elsewhere) = true;
    }
    bool layout = static_cast<bool>(target.gemmScaleLayout);
    job.scales = elsewhere || (toGemm && !layout);
    job.layoutScales = toGemm && layout;
    config.jobs.push_back(job);
    name += "_" + describeJob(job);

    DeviceTensor values{alloc(loc, q.getValues().getType()), {}};
    operands.push_back(values.buffer);
    device[q.getValues()] = values;
    DeviceTensor scales;
    if (job.scales) {
      scales.buffer = alloc(loc, q.getScales().getType());
      operands.push_back(scales.buffer);
    }
    if (job.layoutScales) {
      auto type = q.getScales().getType();
      scales.laidOut = memref::AllocOp::create(
          b, loc,
          MemRefType::get({target.gemmScaleLayout.getBytes(
                              type.getDimSize(0), type.getDimSize(1))},
                          b.getI8Type()));
      operands.push_back(scales.laidOut);
    }
    device[q.getScales()] = scales;
    if (source.rotation.size &&
        source.rotation.kind != HadamardKind::deterministic)
      scalars.push_back(bufferOf(loc, source.seed));
    if (source.rotation.size &&
        source.rotation.kind == HadamardKind::random_per_step)
      scalars.push_back(bufferOf(loc, source.step));
  }
  for (auto &[q, source] : members)
    if (q.getRounding() == Rounding::stochastic)
      scalars.append(
          {bufferOf(loc, q.getSeed()), bufferOf(loc, q.getCounter())});
  if (llvm::any_of(scalars, [](Value v) { return !v; }))
    return error(first) << "a seed, step or counter must be a "
                           "function argument or a constant";
  operands.append(scalars);
  gpu::GPUFuncOp kernel = getKernel(name, [&](OpBuilder &kb) {
    return buildQuantizeKernel(kb, loc, kernels, name, config);
  });
  launch(loc, {kernel, quantizeWorkgroups(config)}, operands);
  return success();
}

Value FunctionConverter::gemmScales(Location loc, Value scales) {
  if (!target.gemmScaleLayout)
    return bufferOf(loc, scales);
  auto found = device.find(scales);
  if (found != device.end() && found->second.laidOut)
    return found->second.laidOut;
  Value canonical = bufferOf(loc, scales);
  if (!canonical)
    return {};
  DeviceTensor &t = device[scales];
  auto type = cast<RankedTensorType>(scales.getType());
  int64_t rows = type.getNumElements() / type.getShape().back();
  int64_t kBlocks = type.getShape().back();
  t.laidOut = memref::AllocOp::create(
      b, loc,
      MemRefType::get({target.gemmScaleLayout.getBytes(rows, kBlocks)},
                      b.getI8Type()));
  launch(loc, target.convertScales(b, loc, kernels, rows, kBlocks),
         {t.buffer, t.laidOut});
  return t.laidOut;
}

LogicalResult FunctionConverter::emitScaledMatmul(ScaledMatmulOp op) {
  Location loc = op.getLoc();
  auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
  GemmShape shape;
  shape.m = lhsType.getDimSize(0);
  shape.k = lhsType.getDimSize(1);
  shape.n = rhsType.getDimSize(0);
  shape.resultType = op.getType().getElementType();
  Value accTensor = op.getAcc();
  if (accTensor)
    shape.accType =
        cast<RankedTensorType>(accTensor.getType()).getElementType();
  SmallVector<Value> inputs = {
      bufferOf(loc, op.getLhs()), gemmScales(loc, op.getLhsScale()),
      bufferOf(loc, op.getRhs()), gemmScales(loc, op.getRhsScale())};
  if (llvm::any_of(inputs, [](Value v) { return !v; }))
    return error(op) << "scaled_matmul operands must be arguments or "
                        "results of lowered ops";
  SmallVector<Value> outputs;
  if (accTensor) {
    Value acc = bufferOf(loc, accTensor);
    if (!acc)
      return error(op) << "the accumulator has no device buffer";
    outputs.push_back(acc);
  }
  Value result = alloc(loc, cast<RankedTensorType>(op.getType()));
  outputs.push_back(result);
  GemmLaunch gemm = target.gemm(b, loc, kernels, shape);
  if (gemm.swapOperands) {
    std::swap(inputs[0], inputs[2]);
    std::swap(inputs[1], inputs[3]);
  }
  if (gemm.expandB) {
    // B expanded once for all of the GEMM's blocks.
    Value expanded = memref::AllocOp::create(
        b, loc, MemRefType::get({gemm.expandedElements}, b.getBF16Type()));
    launch(loc, *gemm.expandB, {inputs[2], inputs[3], expanded});
    inputs.pop_back();
    inputs.back() = expanded;
  }
  if (gemm.addSplits) {
    // Split K: the splits' partial products meet in a workspace.
    Value workspace = memref::AllocOp::create(
        b, loc,
        MemRefType::get({gemm.gemm.gridZ * shape.m * shape.n}, b.getF32Type()));
    inputs.push_back(workspace);
    launch(loc, gemm.gemm, inputs);
    outputs.insert(outputs.begin(), workspace);
    launch(loc, *gemm.addSplits, outputs);
  } else {
    inputs.append(outputs);
    launch(loc, gemm.gemm, inputs);
  }
  publish(loc, op.getResult(), result);
  return success();
}

LogicalResult FunctionConverter::emitDequantize(DequantizeOp op) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  DequantizeConfig config;
  config.cols = type.getShape().back();
  config.rows = type.getNumElements() / config.cols;
  config.resultType = type.getElementType();
  config.bounds = target.bounds;
  config.expand = target.expandBlock;
  Value values = bufferOf(loc, op.getValues());
  Value scales = bufferOf(loc, op.getScales());
  if (!values || !scales)
    return error(op) << "dequantize needs FP4 values and canonical "
                        "scales from lowered ops or arguments";
  Value result = alloc(loc, type);
  std::string name = llvm::formatv("dequantize_{0}x{1}_{2}", config.rows,
                                   config.cols, typeName(config.resultType));
  gpu::GPUFuncOp kernel = getKernel(name, [&](OpBuilder &kb) {
    return buildDequantizeKernel(kb, loc, kernels, name, config);
  });
  launch(loc, {kernel, dequantizeWorkgroups(config)}, {values, scales, result});
  publish(loc, op.getResult(), result);
  return success();
}

Value FunctionConverter::bufferOf(Location loc, Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  bool tensorForm = mixed && type && type.hasStaticShape() &&
                    !isa<Float4E2M1FNType, Float8E8M0FNUType>(
                        type.getElementType());
  // A tensor is read through a to_buffer where each launch reads it, never
  // through one made for an earlier launch: bufferization sees only the
  // to_buffer as the tensor's read, and may let an op after it write into
  // the buffer in place. (Reusing one made the q/k/v Dgrad sum overwrite the
  // normed activations that two later stochastic-rounding Wgrad quantizes
  // still read, and stalled fp4-all-sr; test/Integration/gfx950/
  // launch-reads.py. CSE must not merge them either: addPostConversionCSE.)
  // FP4 values and scales exist only as device buffers.
  auto it = device.find(value);
  if (!tensorForm && it != device.end() && it->second.buffer)
    return it->second.buffer;
  if (!mixed)
    return {};
  if (!type) {
    device[value] = {value, {}};
    return value;
  }
  if (!tensorForm)
    return {};
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), value,
      /*read_only=*/true);
  if (type.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all[0].push_back(d);
    buffer = memref::CollapseShapeOp::create(b, loc, buffer, all);
  }
  return buffer;
}

void FunctionConverter::publish(Location loc, Value result, Value flat) {
  device[result] = {flat, {}};
  if (!mixed)
    return;
  auto type = cast<RankedTensorType>(result.getType());
  Value shaped = flat;
  if (type.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all[0].push_back(d);
    shaped = memref::ExpandShapeOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()), flat,
        all);
  }
  Value tensor = bufferization::ToTensorOp::create(
      b, loc, type, shaped, /*restrict=*/true, /*writable=*/true);
  result.replaceAllUsesWith(tensor);
}

LogicalResult FunctionConverter::run() {
  if (failed(check()))
    return failure();
  return mixed ? runMixed() : runStrict();
}

LogicalResult FunctionConverter::runMixed() {
  // Launches go where the ops were; results reach the other ops as tensors.
  // Constants (seeds) move to the top first: a kernel shared by two
  // quantizations is launched where the first one was.
  Block &entry = func.getBody().front();
  for (Operation &op : llvm::make_early_inc_range(entry))
    if (isa<arith::ConstantOp>(op))
      op.moveBefore(&entry, entry.begin());
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().getOps())
    ops.push_back(&op);
  for (Operation *op : ops) {
    b.setInsertionPoint(op);
    LogicalResult result = success();
    if (auto q = dyn_cast<QuantizeOp>(op)) {
      if (!emittedQuantizes.count(q))
        result = emitQuantizeGroup(q);
    } else if (auto mm = dyn_cast<ScaledMatmulOp>(op)) {
      result = emitScaledMatmul(mm);
    } else if (auto d = dyn_cast<DequantizeOp>(op)) {
      result = emitDequantize(d);
    }
    if (failed(result))
      return failure();
  }
  // The mxfp4 ops, and the rotations, transposes and producers that only
  // fed them.
  for (Operation *op : llvm::reverse(ops))
    if (isa<QuantizeOp, ScaledMatmulOp, DequantizeOp>(op) ||
        ((isa<HadamardOp, linalg::TransposeOp, tensor::EmptyOp>(op) ||
          fusedOps.contains(op)) &&
         op->use_empty()))
      op->erase();
  return success();
}

LogicalResult FunctionConverter::runStrict() {
  MLIRContext *ctx = func.getContext();

  // The host function: same name, tensors as flat device buffers.
  SmallVector<Type> argTypes, resultTypes;
  for (Type t : func.getArgumentTypes())
    argTypes.push_back(isa<RankedTensorType>(t)
                           ? Type(getBufferType(cast<RankedTensorType>(t)))
                           : t);
  for (Type t : func.getResultTypes())
    resultTypes.push_back(getBufferType(cast<RankedTensorType>(t)));
  b.setInsertionPoint(func);
  auto host =
      func::FuncOp::create(b, func.getLoc(), func.getName(),
                           FunctionType::get(ctx, argTypes, resultTypes));
  host.setVisibility(func.getVisibility());
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    for (NamedAttribute attr : function_interface_impl::getArgAttrs(func, i))
      host.setArgAttr(i, attr.getName(), attr.getValue());
    if (isa<RankedTensorType>(func.getArgumentTypes()[i]))
      host.setArgAttr(i, kTensorAttrName,
                      TypeAttr::get(func.getArgumentTypes()[i]));
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    host.setResultAttr(i, kTensorAttrName,
                       TypeAttr::get(func.getResultTypes()[i]));
  Block *entry = host.addEntryBlock();
  b.setInsertionPointToStart(entry);
  for (auto [oldArg, newArg] :
       llvm::zip(func.getArguments(), entry->getArguments()))
    device[oldArg] = {newArg, {}};
  // Integer constants (seeds) first: a kernel shared by two quantizations
  // is launched where the first one was, before the second one's operands.
  for (Operation &op : func.getBody().getOps())
    if (auto c = dyn_cast<arith::ConstantOp>(&op);
        c && c.getType().isIntOrIndex())
      device[c.getResult()] = {b.clone(op)->getResult(0), {}};

  for (Operation &op : func.getBody().getOps()) {
    LogicalResult result = success();
    if (auto q = dyn_cast<QuantizeOp>(&op)) {
      if (!emittedQuantizes.count(q))
        result = emitQuantizeGroup(q);
    } else if (auto mm = dyn_cast<ScaledMatmulOp>(&op)) {
      result = emitScaledMatmul(mm);
    } else if (auto d = dyn_cast<DequantizeOp>(&op)) {
      result = emitDequantize(d);
    } else if (auto ret = dyn_cast<func::ReturnOp>(&op)) {
      SmallVector<Value> results;
      for (Value v : ret.getOperands()) {
        if (!device.count(v) || !device[v].buffer)
          return error(ret) << "a returned tensor has no device "
                               "buffer";
        results.push_back(device[v].buffer);
      }
      func::ReturnOp::create(b, ret.getLoc(), results);
    }
    if (failed(result)) {
      host.erase();
      return failure();
    }
  }
  func.erase();
  return success();
}

LogicalResult kernels::convertMXFP4Functions(ModuleOp module,
                                             const KernelTarget &target,
                                             Attribute targetAttr, bool mixed) {
  SmallVector<func::FuncOp> funcs;
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isExternal())
      funcs.push_back(f);
  if (funcs.empty() && !mixed)
    return success();
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName,
                                          b.getArrayAttr({targetAttr}));
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  for (func::FuncOp f : funcs)
    if (failed(FunctionConverter(f, kernels, target, mixed).run()))
      return failure();
  return success();
}
