//===- QuantizeKernel.cpp - fused Hadamard + quantize ---------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One pass over a [rows, cols] source produces the row-wise quantization
// (blocks along cols; Fprop operands) and/or the quantization of its
// transpose (blocks along rows; the Dgrad and Wgrad operands), each with its
// own rotation, scale rule and outputs.
//
// Each group of 64 threads (a gfx950 wave, two NVIDIA warps) owns a 32 x 64
// region. Row phase: lane l takes the 32 values of row l % 32, column block
// l / 32, rotates and quantizes them in registers. On NVIDIA the group first
// stages its region in workgroup memory with coalesced reads, 16 lanes a
// row (one lane a row makes every 16-byte read of a quarter-warp touch
// eight rows), and lanes read their blocks back; on gfx950 each lane reads
// its block (128 bytes for f32) and parks it in workgroup memory. Column
// phase: lane l reads column l of the region (consecutive words:
// conflict-free), rotates and quantizes it. The source is read from global
// memory once; every output is written once: 16 bytes of FP4 a block, one
// canonical scale byte, and one byte of the target's GEMM scale layout
// (QuantizeConfig::scaleLayout; gfx950's is pre-shuffled). Regions cover
// that layout's padding too (ScaleLayout::padTo), where the layout's store
// writes what the GEMM needs there. On NVIDIA, where the regions tile the
// source in bands of four region rows, a workgroup gathers its blocks'
// outputs in workgroup memory and writes whole rows of them instead.
//
// An elementwise producer of the source (QuantizeConfig::producer) is
// computed where the source is read, from its inputs: the producer's result
// is never written to memory nor read back.
//
// The scale byte follows docs/Semantics.md (integer arithmetic on the amax
// encoding, as on the CPU). Values are converted by the target's instruction
// where it has one (gfx950: `v_cvt_scalef32_pk_fp4_f32`), else, and for
// stochastic rounding everywhere, by the CPU path's own builders
// (numerics::quantizeBlockPacked).
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/MXFP4ToGPUCommon/Kernels.h"

#include "mxfp4/Dialect/MXFP4/Utils/Numerics.h"
#include "mxfp4/Dialect/MXFP4/Utils/Rotation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
namespace num = mlir::mxfp4::numerics;

static int64_t roundUp(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

/// Threads that share one 32 x 64 region of the source.
constexpr int64_t kGroup = 64;
/// Words between rows of a staged region in workgroup memory: a multiple of
/// 4 (rows are read as 16-byte vectors), and 4 mod 32, so that the eight
/// rows one quarter-warp's vector reads touch lie in distinct banks.
constexpr int64_t kTileStride = 68;

namespace {
/// The rows and columns the kernel's regions cover (the source plus the
/// GEMM scale layout's padding).
struct Cover {
  int64_t rows, cols;
};
} // namespace

static Cover getCover(const QuantizeConfig &c) {
  bool laidOut = llvm::any_of(
      c.jobs, [](const QuantizeJob &j) { return j.layoutScales; });
  int64_t pad = laidOut ? c.scaleLayout.padTo : 1;
  return {roundUp(roundUp(c.rows, pad), 32), roundUp(roundUp(c.cols, pad), 64)};
}

int64_t kernels::quantizeWorkgroups(const QuantizeConfig &c) {
  Cover cover = getCover(c);
  int64_t regions = cover.rows / 32 * (cover.cols / 64);
  return (regions + 3) / 4;
}

gpu::GPUFuncOp kernels::buildQuantizeKernel(OpBuilder &b, Location loc,
                                            gpu::GPUModuleOp module,
                                            StringRef name,
                                            const QuantizeConfig &c) {
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type(), f32 = b.getF32Type(), i64 = b.getI64Type();
  Cover cover = getCover(c);
  int64_t regionCols = cover.cols / 64;
  bool hasColumnJob =
      llvm::any_of(c.jobs, [](const QuantizeJob &j) { return j.transposed; });

  // The source, or the producer's inputs to compute it from.
  SmallVector<Type> args;
  if (c.producer) {
    for (const SourceProducer::Input &input : c.producer->inputs)
      args.push_back(globalBuffer(ctx, ShapedType::getNumElements(input.shape),
                                  input.type));
  } else {
    args.push_back(globalBuffer(ctx, c.rows * c.cols, c.sourceType));
  }
  unsigned sources = args.size();
  for (const QuantizeJob &job : c.jobs) {
    int64_t outRows = job.transposed ? c.cols : c.rows;
    int64_t outCols = job.transposed ? c.rows : c.cols;
    if (job.values)
      args.push_back(globalBuffer(ctx, outRows * outCols / 2, i8));
    if (job.scales)
      args.push_back(globalBuffer(ctx, outRows * outCols / 32, i8));
    if (job.layoutScales)
      args.push_back(globalBuffer(
          ctx, c.scaleLayout.getBytes(outRows, outCols / 32), i8));
  }
  for (const QuantizeJob &job : c.jobs) {
    if (job.rotation.size && job.rotation.kind != HadamardKind::deterministic)
      args.push_back(i64);
    if (job.rotation.size && job.rotation.kind == HadamardKind::random_per_step)
      args.push_back(i64);
  }
  for (const QuantizeJob &job : c.jobs)
    if (job.stochastic)
      args.append({i64, i64});
  // Words between rows of a region in workgroup memory (see kTileStride).
  int64_t stride = c.staged ? kTileStride : 64;
  // Where the regions tile the source exactly (every workgroup's four
  // included), every access is in range: no guards, whose selects cost as
  // much as a rounding step.
  bool exact = cover.rows == c.rows && cover.cols == c.cols &&
               cover.rows / 32 * regionCols % 4 == 0;
  // Where they also form bands of four region rows, a staged kernel's
  // workgroup takes a band's four regions of one region column, gathers its
  // outputs in workgroup memory and writes them as whole rows: a transposed
  // row gets 64 contiguous bytes of codes and 4 of scales from a workgroup,
  // not four 16-byte and four 1-byte stores from four workgroups.
  // Partial-sector stores, not the arithmetic, bounded the kernel before
  // (H200: L2 85% busy, DRAM 41%).
  bool gather = c.staged && exact && cover.rows % 128 == 0 &&
                llvm::none_of(c.jobs, [](const QuantizeJob &j) {
                  return j.layoutScales;
                });
  SmallVector<Type> workgroup;
  if (c.staged || hasColumnJob)
    workgroup.push_back(workgroupBuffer(ctx, 4 * 32 * stride, f32));
  // Per phase: 16 bytes of codes and a scale byte for each of the
  // workgroup's 256 blocks.
  if (gather)
    workgroup.push_back(workgroupBuffer(ctx, 2 * 256 * 17, i8));
  gpu::GPUFuncOp func = createKernel(b, loc, module, name, args, workgroup);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  KernelBuilder kb(b, loc, c.bounds);

  unsigned nextArg = sources;
  struct Outputs {
    Value values, scales, laidOut, seed, step, roundingSeed, counter;
  };
  SmallVector<Outputs> outputs(c.jobs.size());
  for (auto [job, out] : llvm::zip(c.jobs, outputs)) {
    if (job.values)
      out.values = kb.buffer(func.getArgument(nextArg++));
    if (job.scales)
      out.scales = kb.buffer(func.getArgument(nextArg++));
    if (job.layoutScales)
      out.laidOut = kb.buffer(func.getArgument(nextArg++));
  }
  for (auto [job, out] : llvm::zip(c.jobs, outputs)) {
    if (job.rotation.size && job.rotation.kind != HadamardKind::deterministic)
      out.seed = func.getArgument(nextArg++);
    if (job.rotation.size && job.rotation.kind == HadamardKind::random_per_step)
      out.step = func.getArgument(nextArg++);
  }
  for (auto [job, out] : llvm::zip(c.jobs, outputs))
    if (job.stochastic) {
      out.roundingSeed = func.getArgument(nextArg++);
      out.counter = func.getArgument(nextArg++);
    }
  SmallVector<Value> sourceBuffers;
  for (unsigned i = 0; i < sources; ++i)
    sourceBuffers.push_back(kb.buffer(func.getArgument(i)));

  Value tid = kb.threadId();
  Value wave = kb.div(tid, kGroup), lane = kb.rem(tid, kGroup);
  Value regionRow, regionCol, band;
  if (gather) {
    // Band blockId / regionCols, its regions' column blockId % regionCols.
    band = kb.div(kb.blockId(), regionCols);
    regionRow = kb.add(kb.mul(band, 4), wave);
    regionCol = kb.rem(kb.blockId(), regionCols);
  } else {
    Value region = kb.add(kb.mul(kb.blockId(), 4), wave);
    regionRow = kb.div(region, regionCols);
    regionCol = kb.rem(region, regionCols);
  }

  auto vecType = [&](Type t) { return VectorType::get({32}, t); };
  // Rotates `v` for `job`. Where `fold` allows and the normalization is a
  // power of two, leaves it out and returns its exponent, for the
  // quantization to fold into its scaling.
  auto prepare = [&](Value v, const QuantizeJob &job, const Outputs &out,
                     bool fold) -> std::pair<Value, int64_t> {
    const RotationConfig &rot = job.rotation;
    if (!rot.size)
      return {v, 0};
    Value signs;
    if (rot.kind != HadamardKind::deterministic)
      signs = buildRotationSigns(b, loc, rot.size, 32, out.seed, out.step);
    // The hadamard's result is bf16: round as it would, after the
    // normalization. A NaN may become an infinity here, which quantizes the
    // same (a NaN block).
    std::optional<int64_t> exponent = normalizationExponent(rot.size);
    fold = fold && exponent && !rot.roundToBF16;
    v = rotateTiles(b, loc, v, rot.size, signs, rot.inverse, {},
                    /*normalize=*/!fold);
    if (rot.roundToBF16)
      v = num::roundToBF16InF32(b, loc, v);
    return {v, fold ? *exponent : 0};
  };
  // Gathered outputs: phase p's codes at byte p * kGatherPhase + 16 * slot,
  // its scales at p * kGatherPhase + kGatherScales + slot; a block's slot is
  // the thread id in both phases (a group's rows, or its columns, in lane
  // order).
  constexpr int64_t kGatherScales = 256 * 16, kGatherPhase = 256 * 17;
  Value gathered = gather ? Value(func.getWorkgroupAttributions()[1]) : Value();
  // Quantizes `v` for `job` as block (row, kBlock) of its [outRows, outCols]
  // result and writes all outputs, or gathers them for phase `phase`;
  // `valid` says the block holds data.
  auto emitJob = [&](Value v, const QuantizeJob &job, const Outputs &out,
                     Value row, Value kBlock, Value valid, int64_t phase) {
    int64_t outRows = job.transposed ? c.cols : c.rows;
    int64_t outCols = job.transposed ? c.rows : c.cols;
    int64_t kBlocks = outCols / 32;
    Value words;
    if (job.stochastic) {
      // Row-major element indices of the block in the quantized tensor.
      auto vecI64 = VectorType::get({32}, i64);
      SmallVector<int64_t> lanes(32);
      for (int64_t i = 0; i < 32; ++i)
        lanes[i] = i;
      Value first = arith::IndexCastOp::create(
          b, loc, i64, kb.add(kb.mul(row, outCols), kb.mul(kBlock, 32)));
      Value linear = arith::AddIOp::create(
          b, loc, vector::BroadcastOp::create(b, loc, vecI64, first),
          arith::ConstantOp::create(
              b, loc, DenseElementsAttr::get(vecI64, ArrayRef(lanes))));
      words = num::stochasticRoundingWords(b, loc, linear, out.roundingSeed,
                                           out.counter);
    }
    bool convert = c.convert && !words;
    auto [block, exponent] = prepare(v, job, out, /*fold=*/!convert);
    Value packed, byte;
    if (convert) {
      std::tie(packed, byte) = c.convert(b, loc, block, job.rule);
    } else {
      std::tie(packed, byte) =
          num::quantizeBlockPacked(b, loc, block, job.rule, words, exponent);
    }
    Value byte8 = arith::TruncIOp::create(b, loc, i8, byte);
    if (gathered) {
      int64_t base = phase * kGatherPhase;
      vector::StoreOp::create(b, loc, packed, gathered,
                              ValueRange{kb.add(kb.mul(tid, 16), base)},
                              /*nontemporal=*/false, llvm::MaybeAlign(16));
      memref::StoreOp::create(b, loc, byte8, gathered,
                              ValueRange{kb.add(tid, base + kGatherScales)});
      return;
    }
    if (out.values) {
      Value offset = kb.add(kb.mul(row, outCols / 2), kb.mul(kBlock, 16));
      kb.store(packed, out.values, valid, offset, outRows * outCols / 2,
               /*alignment=*/16);
    }
    if (out.scales) {
      Value offset = kb.add(kb.mul(row, kBlocks), kBlock);
      kb.store(byte8, out.scales, valid, offset, outRows * kBlocks);
    }
    if (out.laidOut)
      c.scaleLayout.emitStore(kb, out.laidOut, byte8, valid, row, kBlock,
                              outRows, kBlocks);
  };

  // Reads gathered phase `phase`'s codes of slot `slot` and the scales of
  // `count` slots `step` apart from `slot`.
  auto gatheredCodes = [&](int64_t phase, Value slot) -> Value {
    return vector::LoadOp::create(
        b, loc, VectorType::get({16}, i8), gathered,
        ValueRange{kb.add(kb.mul(slot, 16), phase * kGatherPhase)},
        /*nontemporal=*/false, llvm::MaybeAlign(16));
  };
  auto gatheredScales = [&](int64_t phase, Value slot, int64_t count,
                            int64_t step) -> Value {
    SmallVector<Value> bytes;
    for (int64_t i = 0; i < count; ++i)
      bytes.push_back(memref::LoadOp::create(
          b, loc, gathered,
          ValueRange{
              kb.add(slot, phase * kGatherPhase + kGatherScales + i * step)}));
    return vector::FromElementsOp::create(b, loc, VectorType::get({count}, i8),
                                          bytes);
  };
  Value yes = arith::ConstantIntOp::create(b, loc, 1, 1);
  // Writes gathered phase `phase` as whole rows: this thread's codes from
  // slot `codeSlot` at byte `codeOffset` of the values; where `writesScales`,
  // `count` scale bytes (the slots `step` apart from the thread's id) at
  // byte `scaleOffset` of the scales.
  auto writeGathered = [&](const Outputs &out, int64_t phase, Value codeSlot,
                           Value codeOffset, Value writesScales, int64_t count,
                           int64_t step, Value scaleOffset) {
    gpu::BarrierOp::create(b, loc);
    int64_t size = c.rows * c.cols;
    if (out.values)
      kb.store(gatheredCodes(phase, codeSlot), out.values, yes, codeOffset,
               size / 2, /*alignment=*/16);
    if (!out.scales)
      return;
    auto ifOp = scf::IfOp::create(b, loc, writesScales, false);
    OpBuilder::InsertionGuard inIf(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    kb.store(gatheredScales(phase, tid, count, step), out.scales, yes,
             scaleOffset, size / 32, /*alignment=*/count);
  };
  // The row phase: a group's 32 rows, 32 bytes of codes (two lanes) and 2
  // of scales (a lane) each.
  auto writeRows = [&](const Outputs &out) {
    Value r = kb.div(lane, 2), half = kb.rem(lane, 2);
    Value row = kb.add(kb.mul(regionRow, 32), r);
    Value scaleRow = kb.add(kb.mul(regionRow, 32), lane);
    writeGathered(out, 0,
                  kb.add(kb.mul(wave, kGroup), kb.add(kb.mul(half, 32), r)),
                  kb.add(kb.mul(row, c.cols / 2),
                         kb.add(kb.mul(regionCol, 32), kb.mul(half, 16))),
                  kb.lt(lane, 32), 2, 32,
                  kb.add(kb.mul(scaleRow, c.cols / 32), kb.mul(regionCol, 2)));
  };
  // The column phase: the workgroup's 64 transposed rows, 64 bytes of codes
  // (four threads) and 4 of scales (a thread) each.
  auto writeColumns = [&](const Outputs &out) {
    Value tRow = kb.add(kb.mul(regionCol, 64), kb.div(tid, 4));
    Value w = kb.rem(tid, 4);
    Value scaleRow = kb.add(kb.mul(regionCol, 64), tid);
    writeGathered(out, 1, kb.add(kb.mul(w, 64), kb.div(tid, 4)),
                  kb.add(kb.mul(tRow, c.rows / 2),
                         kb.mul(kb.add(kb.mul(band, 4), w), 16)),
                  kb.lt(tid, 64), 4, 64,
                  kb.add(kb.mul(scaleRow, c.rows / 32), kb.mul(band, 4)));
  };

  Value lds;
  if (hasColumnJob || c.staged)
    lds = func.getWorkgroupAttributions()[0];
  Value waveBase = kb.mul(wave, 32 * stride);
  // Lane l's row-phase block: row l % 32, column block l / 32.
  Value row = kb.add(kb.mul(regionRow, 32), kb.rem(lane, 32));
  Value colBlock = kb.add(kb.mul(regionCol, 2), kb.div(lane, 32));
  auto inRange = [&](Value condition) { return exact ? yes : condition; };
  // The alignment of a vector load of `width` elements of `type` at a
  // multiple of `width`: at most 16 bytes.
  auto alignment = [](int64_t width, Type type) {
    return static_cast<unsigned>(
        std::min<int64_t>(16, width * type.getIntOrFloatBitWidth() / 8));
  };
  // The producer's values of the `width` source elements of row `srcRow`
  // from column `srcCol` on (a multiple of `width`), zeros where not
  // `valid`: the iteration's loop indices by dividing the row by the
  // leading loops' extents and the column by the trailing ones' (where
  // they split at a row; else the row-major index by all), each input's
  // element by its map. An input that varies along the innermost loop, as
  // its last index only, is read as one vector (a run of `width` lies in
  // one row of the innermost loop where its extent is a multiple of
  // `width`), one that does not as one scalar, others element by element.
  auto computeSource = [&](int64_t width, Value srcRow, Value srcCol,
                           Value valid) -> Value {
    const SourceProducer &p = *c.producer;
    int64_t innermost = p.loops.size() - 1;
    bool runs = p.loops.back() % width == 0;
    // Loops split, from the back, where their extents multiply to cols.
    int64_t split = innermost + 1;
    for (int64_t product = 1; split > 0 && product < c.cols; --split)
      product *= p.loops[split - 1];
    bool splits =
        split > 0 && ShapedType::getNumElements(
                         ArrayRef(p.loops).drop_front(split)) == c.cols;
    // Loops [from, to) of row-major index `linear` over them.
    auto delinearize = [&](Value linear, int64_t from, int64_t to,
                           MutableArrayRef<Value> indices) {
      for (int64_t d = to - 1; d > from; --d) {
        indices[d] = kb.rem(linear, p.loops[d]);
        linear = kb.div(linear, p.loops[d]);
      }
      indices[from] = linear;
    };
    auto indicesOf = [&](Value col) {
      SmallVector<Value> indices(p.loops.size());
      if (splits) {
        delinearize(srcRow, 0, split, indices);
        delinearize(col, split, innermost + 1, indices);
      } else {
        delinearize(kb.add(kb.mul(srcRow, c.cols), col), 0, innermost + 1,
                    indices);
      }
      return indices;
    };
    SmallVector<Value> loopIndices = indicesOf(srcCol);
    // Input `input`'s row-major offset at `indices`.
    auto offsetOf = [&](const SourceProducer::Input &input,
                        ArrayRef<Value> indices) {
      Value offset = kb.idx(0);
      int64_t stride = 1;
      for (int64_t r = input.map.getNumResults() - 1; r >= 0; --r) {
        AffineExpr e = input.map.getResult(r);
        Value at = isa<AffineConstantExpr>(e)
                       ? kb.idx(cast<AffineConstantExpr>(e).getValue())
                       : indices[cast<AffineDimExpr>(e).getPosition()];
        offset = kb.add(offset, kb.mul(at, stride));
        stride *= input.shape[r];
      }
      return offset;
    };
    auto vecOf = [&](Type t) { return VectorType::get({width}, t); };
    // Per input: one value for the run, a vector along it, or null (read
    // element by element).
    SmallVector<Value> whole;
    for (auto [input, buffer] : llvm::zip(p.inputs, sourceBuffers)) {
      int64_t size = ShapedType::getNumElements(input.shape);
      bool varies = input.map.isFunctionOfDim(innermost);
      bool last = input.map.getNumResults() &&
                  input.map.getResults().back() ==
                      getAffineDimExpr(innermost, b.getContext());
      bool once = llvm::count_if(input.map.getResults(), [&](AffineExpr e) {
                    return e.isFunctionOfDim(innermost);
                  }) == 1;
      if (!varies)
        whole.push_back(kb.load(input.type, buffer, valid,
                                offsetOf(input, loopIndices), size));
      else if (runs && last && once)
        whole.push_back(kb.load(vecOf(input.type), buffer, valid,
                                offsetOf(input, loopIndices), size,
                                alignment(width, input.type)));
      else
        whole.push_back(Value());
    }
    SmallVector<Value> elements;
    for (int64_t i = 0; i < width; ++i) {
      // Where the run may cross rows of the innermost loop, index again.
      SmallVector<Value> indices =
          runs ? loopIndices : indicesOf(kb.add(srcCol, i));
      if (runs)
        indices[innermost] = kb.add(loopIndices[innermost], i);
      SmallVector<Value> operands;
      for (auto [input, buffer, value] :
           llvm::zip(p.inputs, sourceBuffers, whole)) {
        if (!value)
          operands.push_back(kb.load(input.type, buffer, valid,
                                     offsetOf(input, indices),
                                     ShapedType::getNumElements(input.shape)));
        else if (isa<VectorType>(value.getType()))
          operands.push_back(
              vector::ExtractOp::create(b, loc, value, i).getResult());
        else
          operands.push_back(value);
      }
      elements.push_back(p.compute(b, loc, operands, indices));
    }
    Value read =
        vector::FromElementsOp::create(b, loc, vecOf(c.sourceType), elements);
    // Past the source's end the inputs read 0, but the producer of zeros
    // need not be 0.
    if (!matchPattern(valid, m_One()))
      read = kb.select(valid, read,
                       arith::ConstantOp::create(
                           b, loc, b.getZeroAttr(vecOf(c.sourceType))));
    return read;
  };
  // Reads `width` consecutive source values of row `srcRow` from column
  // `srcCol` as f32 (zeros where not `valid`): from the source, or computed
  // from the producer's inputs with the producer's own ops, element by
  // element, as its generic kernel would.
  auto readSource = [&](int64_t width, Value srcRow, Value srcCol,
                        Value valid) -> Value {
    auto vecOf = [&](Type t) { return VectorType::get({width}, t); };
    Value offset = kb.add(kb.mul(srcRow, c.cols), srcCol);
    Value read;
    if (!c.producer) {
      read = kb.load(vecOf(c.sourceType), sourceBuffers[0], valid, offset,
                     c.rows * c.cols, alignment(width, c.sourceType));
    } else {
      read = computeSource(width, srcRow, srcCol, valid);
    }
    if (!c.sourceType.isF32())
      read = arith::ExtFOp::create(b, loc, vecOf(f32), read);
    return read;
  };
  Value rowValid =
      inRange(kb.andI(kb.lt(row, c.rows), kb.lt(colBlock, c.cols / 32)));
  Value ldsRow = kb.add(waveBase, kb.add(kb.mul(kb.rem(lane, 32), stride),
                                         kb.mul(kb.div(lane, 32), 32)));
  Value v;
  if (c.staged) {
    // Stage the group's region: 16 lanes read a row's 64 values
    // (coalesced), 4 rows an instruction; then read lane l's block back.
    for (int64_t i = 0; i < 8; ++i) {
      Value tileRow = kb.add(kb.div(lane, 16), 4 * i);
      Value tileCol = kb.mul(kb.rem(lane, 16), 4);
      Value srcRow = kb.add(kb.mul(regionRow, 32), tileRow);
      Value srcCol = kb.add(kb.mul(regionCol, 64), tileCol);
      Value valid =
          inRange(kb.andI(kb.lt(srcRow, c.rows), kb.lt(srcCol, c.cols)));
      Value quad = readSource(4, srcRow, srcCol, valid);
      vector::StoreOp::create(
          b, loc, quad, lds,
          ValueRange{
              kb.add(waveBase, kb.add(kb.mul(tileRow, kTileStride), tileCol))},
          /*nontemporal=*/false, llvm::MaybeAlign(16));
    }
    gpu::BarrierOp::create(b, loc);
    v = vector::LoadOp::create(b, loc, vecType(f32), lds, ValueRange{ldsRow},
                               /*nontemporal=*/false, llvm::MaybeAlign(16));
  } else {
    v = readSource(32, row, kb.mul(colBlock, 32), rowValid);
  }

  // Row phase.
  for (auto [job, out] : llvm::zip(c.jobs, outputs))
    if (!job.transposed) {
      emitJob(v, job, out, row, colBlock, rowValid, 0);
      if (gathered)
        writeRows(out);
    }
  if (!hasColumnJob) {
    gpu::ReturnOp::create(b, loc);
    return func;
  }
  if (!c.staged) {
    // Park the raw row in this group's tile for the column phase.
    vector::StoreOp::create(b, loc, v, lds, ValueRange{ldsRow});
    gpu::BarrierOp::create(b, loc);
  }

  // Column phase: lane l reads column l of the region.
  SmallVector<Value> column;
  for (int64_t i = 0; i < 32; ++i)
    column.push_back(memref::LoadOp::create(
        b, loc, lds, ValueRange{kb.add(waveBase, kb.add(lane, i * stride))}));
  Value colVector =
      vector::FromElementsOp::create(b, loc, vecType(f32), column);
  // The transpose's row is our column; its K block is our region row.
  Value tRow = kb.add(kb.mul(regionCol, 64), lane);
  Value tValid =
      inRange(kb.andI(kb.lt(tRow, c.cols), kb.lt(regionRow, c.rows / 32)));
  for (auto [job, out] : llvm::zip(c.jobs, outputs))
    if (job.transposed) {
      emitJob(colVector, job, out, tRow, regionRow, tValid, 1);
      if (gathered)
        writeColumns(out);
    }
  gpu::ReturnOp::create(b, loc);
  return func;
}
