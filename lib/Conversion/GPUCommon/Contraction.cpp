//===- Contraction.cpp - linalg contractions as GPU GEMMs see them --------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/GPUCommon/Contraction.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;

/// The memref dimension that loop dimension `dim` indexes, or -1.
static int64_t memrefDim(AffineMap map, unsigned dim) {
  for (auto [i, expr] : llvm::enumerate(map.getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(expr); d && d.getPosition() == dim)
      return i;
  return -1;
}

std::optional<LinalgContraction>
kernels::matchLinalgContraction(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 1)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  bool batched = !dims->batch.empty();
  auto operand = [&](Value memref, AffineMap map, unsigned row,
                     unsigned col) -> std::optional<ContractionOperand> {
    if (!map.isProjectedPermutation() ||
        map.getNumResults() != (batched ? 3u : 2u))
      return std::nullopt;
    ContractionOperand o;
    o.memref = memref;
    o.batchDim = batched ? memrefDim(map, dims->batch[0]) : -1;
    o.rowDim = memrefDim(map, row);
    o.kDim = memrefDim(map, col);
    if (o.rowDim < 0 || o.kDim < 0 || (batched && o.batchDim < 0))
      return std::nullopt;
    return o;
  };
  auto a = operand(op.getDpsInputs()[0], maps[0], dims->m[0], dims->k[0]);
  auto b = operand(op.getDpsInputs()[1], maps[1], dims->n[0], dims->k[0]);
  auto c = operand(op.getDpsInits()[0], maps[2], dims->m[0], dims->n[0]);
  if (!a || !b || !c)
    return std::nullopt;
  LinalgContraction result;
  result.a = *a;
  result.b = *b;
  result.c = *c;
  result.m = ranges[dims->m[0]];
  result.n = ranges[dims->n[0]];
  result.k = ranges[dims->k[0]];
  result.batch = batched ? ranges[dims->batch[0]] : 1;
  return result;
}

bool kernels::isZeroFill(Operation *op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op);
  FloatAttr value;
  return fill && fill.hasPureBufferSemantics() &&
         matchPattern(fill.getInputs().front(), m_Constant(&value)) &&
         value.getValue().isPosZero();
}

Value kernels::openItemLaunch(KernelBuilder &kb, int64_t items, int64_t threads,
                              gpu::LaunchOp *opened) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  Value one = kb.idx(1);
  auto launch =
      gpu::LaunchOp::create(b, loc, kb.idx((items + threads - 1) / threads),
                            one, one, kb.idx(threads), one, one);
  if (opened)
    *opened = launch;
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);
  Value id =
      kb.add(kb.mul(launch.getBlockIds().x, threads), launch.getThreadIds().x);
  auto inRange = scf::IfOp::create(b, loc, kb.lt(id, items), false);
  b.setInsertionPointToStart(inRange.thenBlock());
  return id;
}
