//===- RowFusion.cpp - a row reduction and its neighbours in one pass -----===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A normalization's backward reads its [rows, columns] operands three
// times: for the gain gradient (a sum over the rows), for each row's dot
// product (a sum over the columns) and for the input gradient (elementwise,
// reading the dot product). Each kernel alone is bound by memory traffic,
// so the three run as one pass that reads each operand element once:
//
// - A warp (W lanes: 32 on NVIDIA, a 64-lane wave on gfx950) takes R
//   consecutive rows, its lanes the columns lane + W j.
// - For each row, the lanes compute their columns' share of the row
//   reduction in column order and combine it through a shuffle tree: the
//   bits of the unfused lowering (a warp a row).
// - The elementwise ops then read the row's result from a register.
// - The column sums accumulate each lane's columns in registers over the
//   warp's rows, in row order; a second launch adds each column's partials
//   (a warp a column, a fixed order) to its output.
//
// An operand element that several of the ops read is loaded once a row.
//
//===----------------------------------------------------------------------===//

#include "RowFusion.h"

#include "Launches.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::mxfp4::launches;

namespace {

/// At most this many columns a lane: each holds its elements of the
/// operands for the row, and a partial per column sum.
constexpr int64_t kMaxColumnsPerLane = 16;

/// Warps for a group with column sums: enough to keep an H200's memory
/// busy, few partials for the second launch to add.
constexpr int64_t kColumnSumWarps = 1024;

/// How far (in ops that touch memory) a group's members may lie from its
/// row reduction.
constexpr int kWindow = 4;

enum class Role { RowReduction, ColumnSum, Elementwise };

/// A row reduction with the column sums before it and the elementwise ops
/// after it that read its results.
struct RowGroup {
  linalg::GenericOp rowReduction;
  SmallVector<linalg::GenericOp> columnSums;
  SmallVector<linalg::GenericOp> consumers;

  SmallVector<linalg::GenericOp> members() const {
    SmallVector<linalg::GenericOp> all(columnSums);
    all.push_back(rowReduction);
    all.append(consumers);
    return all;
  }
};

} // namespace

static AffineMap dimMap(MLIRContext *ctx, unsigned d) {
  return AffineMap::get(2, 0, getAffineDimExpr(d, ctx));
}

/// The role `op` may take in a row group: a 2-D generic with static ranges
/// on identity-layout buffers whose outputs are indexed by its rows (a sum
/// or max over the columns), by its columns (a sum over the rows) or by
/// both (elementwise).
static std::optional<Role> roleOf(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() != 2 ||
      llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return std::nullopt;
  for (Value v : op->getOperands())
    if (auto type = dyn_cast<MemRefType>(v.getType()))
      if (!type.getLayout().isIdentity())
        return std::nullopt;
  MLIRContext *ctx = op.getContext();
  auto outputsIndexedBy = [&](AffineMap map) {
    return llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &out) {
      return op.getMatchingIndexingMap(&out) == map;
    });
  };
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  bool rowsParallel = iterators[0] == utils::IteratorType::parallel;
  bool columnsParallel = iterators[1] == utils::IteratorType::parallel;
  if (rowsParallel && !columnsParallel && getCombiners(op) &&
      outputsIndexedBy(dimMap(ctx, 0)))
    return Role::RowReduction;
  if (!rowsParallel && columnsParallel && isSumReduction(op) &&
      outputsIndexedBy(dimMap(ctx, 1)))
    return Role::ColumnSum;
  if (rowsParallel && columnsParallel &&
      outputsIndexedBy(AffineMap::getMultiDimIdentityMap(2, ctx)))
    return Role::Elementwise;
  return std::nullopt;
}

/// True if the group's members may all run where its last member is: no
/// op between a member and that point uses what the member writes or
/// writes what it reads, and no two members write one buffer.
static bool isLegal(RowGroup group) {
  SmallVector<linalg::GenericOp> members = group.members();
  Operation *last = members.front();
  for (linalg::GenericOp m : members)
    if (last->isBeforeInBlock(m))
      last = m;
  DenseSet<Operation *> inGroup;
  for (linalg::GenericOp m : members)
    inGroup.insert(m);
  for (linalg::GenericOp m : members) {
    Access mine = accessOf(m);
    for (Operation *op = m->getNextNode(); m != last && op != last;
         op = op->getNextNode()) {
      if (inGroup.contains(op) || touchesNoMemory(op))
        continue;
      Access theirs = accessOf(op);
      if (intersects(theirs.writes, mine.reads) ||
          intersects(theirs.writes, mine.writes) ||
          intersects(theirs.reads, mine.writes))
        return false;
    }
    for (linalg::GenericOp other : members) {
      Access theirs = accessOf(other);
      if (other != m && intersects(theirs.writes, mine.writes))
        return false;
      if (!intersects(theirs.writes, mine.reads))
        continue;
      // A member may read what another writes only at the very elements:
      // an elementwise op the row reduction's results at its rows, or an
      // elementwise op's output in place, which it and the members before
      // it read before it stores (a row's loads come first, and a warp's
      // rows are its own).
      bool rowResult =
          other == group.rowReduction && llvm::is_contained(group.consumers, m);
      bool inPlace = llvm::is_contained(group.consumers, other) &&
                     (other == m || !llvm::is_contained(group.consumers, m));
      if (!rowResult && !inPlace)
        return false;
      DenseSet<Value> written;
      for (Value out : other.getDpsInits())
        written.insert(out);
      AffineMap at = rowResult
                         ? dimMap(m.getContext(), 0)
                         : AffineMap::getMultiDimIdentityMap(2, m.getContext());
      for (OpOperand *in : m.getDpsInputOperands())
        if (isa<MemRefType>(in->get().getType()) &&
            theirs.writes.contains(rootOf(in->get())) &&
            (!written.contains(in->get()) ||
             m.getMatchingIndexingMap(in) != at))
          return false;
    }
  }
  return true;
}

/// The row group around the row reduction `row`, if it has more than one
/// member: the elementwise ops right after it that read its results and
/// the column sums shortly before it, each kept if the group stays legal.
static std::optional<RowGroup> matchGroup(linalg::GenericOp row,
                                          const DenseSet<Operation *> &taken,
                                          int64_t lanes) {
  SmallVector<int64_t> ranges = row.getStaticLoopRanges();
  int64_t columns = ranges[1];
  if (columns % lanes != 0 || columns / lanes > kMaxColumnsPerLane)
    return std::nullopt;
  auto candidate = [&](Operation *op, Role role) -> linalg::GenericOp {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic || taken.contains(op) || roleOf(generic) != role ||
        generic.getStaticLoopRanges() != ranges)
      return {};
    return generic;
  };
  RowGroup group{row, {}, {}};
  int seen = 0;
  for (Operation *op = row->getNextNode(); op && seen < kWindow;
       op = op->getNextNode()) {
    if (touchesNoMemory(op))
      continue;
    ++seen;
    linalg::GenericOp consumer = candidate(op, Role::Elementwise);
    if (!consumer || !llvm::any_of(row.getDpsInits(), [&](Value v) {
          return llvm::is_contained(consumer->getOperands(), v);
        }))
      break;
    group.consumers.push_back(consumer);
    if (!isLegal(group)) {
      group.consumers.pop_back();
      break;
    }
  }
  seen = 0;
  int64_t partials = 0;
  for (Operation *op = row->getPrevNode(); op && seen < kWindow;
       op = op->getPrevNode()) {
    if (touchesNoMemory(op))
      continue;
    ++seen;
    linalg::GenericOp sum = candidate(op, Role::ColumnSum);
    if (!sum || (partials + sum.getNumDpsInits()) * columns / lanes >
                    2 * kMaxColumnsPerLane)
      continue;
    group.columnSums.insert(group.columnSums.begin(), sum);
    if (!isLegal(group)) {
      group.columnSums.erase(group.columnSums.begin());
      continue;
    }
    partials += sum.getNumDpsInits();
  }
  if (group.columnSums.empty() && group.consumers.empty())
    return std::nullopt;
  return group;
}

/// Combines `values` over a warp's lanes (a shuffle tree: every lane gets
/// the same bits).
static void combineWarp(OpBuilder &b, Location loc,
                        MutableArrayRef<Value> values,
                        ArrayRef<Operation *> combiners, int64_t lanes) {
  for (int64_t offset = lanes / 2; offset > 0; offset /= 2)
    for (auto [value, c] : llvm::zip(values, combiners)) {
      Value other = gpu::ShuffleOp::create(b, loc, value, offset, lanes,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      value = combineWith(b, loc, c, value, other);
    }
}

static Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The pass over the rows: `rowsPerWarp` rows a warp, each lane's column
/// sums stored to `partials` (one [columns, warps] buffer per column-sum
/// output) at the end.
static void emitRowPass(OpBuilder &b, Location loc, RowGroup group,
                        int64_t rowsPerWarp, int64_t warps,
                        ArrayRef<Value> partials, const ConstantInits &inits,
                        int64_t lanes) {
  linalg::GenericOp row = group.rowReduction;
  SmallVector<int64_t> ranges = row.getStaticLoopRanges();
  int64_t perLane = ranges[1] / lanes;
  Value id = openLaunch(b, loc, warps * lanes);
  Value lane =
      arith::RemUIOp::create(b, loc, id, indexConstant(b, loc, lanes));
  Value warp =
      arith::DivUIOp::create(b, loc, id, indexConstant(b, loc, lanes));
  Value first =
      arith::MulIOp::create(b, loc, warp, indexConstant(b, loc, rowsPerWarp));
  Value last = arith::MinUIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, first, indexConstant(b, loc, rowsPerWarp)),
      indexConstant(b, loc, ranges[0]));
  SmallVector<Value> columns;
  for (int64_t j = 0; j < perLane; ++j)
    columns.push_back(
        arith::AddIOp::create(b, loc, lane, indexConstant(b, loc, lanes * j)));
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  SmallVector<Value> starts(partials.size() * perLane, zero);
  auto loop =
      scf::ForOp::create(b, loc, first, last, indexConstant(b, loc, 1), starts);
  // Without column sums the builder made an empty terminator.
  if (partials.empty())
    loop.getBody()->getTerminator()->erase();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value r = loop.getInductionVar();
    // Each element is loaded once a row.
    DenseMap<std::pair<std::pair<Value, AffineMap>, int64_t>, Value> loaded;
    auto read = [&](OpOperand *operand, int64_t j) -> Value {
      Value v = operand->get();
      if (!isa<MemRefType>(v.getType()))
        return v;
      auto owner = cast<linalg::GenericOp>(operand->getOwner());
      AffineMap map = owner.getMatchingIndexingMap(operand);
      Value &x = loaded[{{v, map}, map.isFunctionOfDim(1) ? j : 0}];
      if (!x)
        x = memref::LoadOp::create(
            b, loc, v, *affine::expandAffineMap(b, loc, map, {r, columns[j]}));
      return x;
    };

    // Every operand element of the row is loaded up front: a load after
    // one of the elementwise ops' stores could not be moved above it, and
    // each would wait for memory on its own.
    DenseSet<Value> rowResults(row.getDpsInits().begin(),
                               row.getDpsInits().end());
    for (linalg::GenericOp m : group.members())
      for (OpOperand *in : m.getDpsInputOperands())
        if (!rowResults.contains(in->get()))
          for (int64_t j = 0; j < perLane; ++j)
            read(in, j);

    // The row reduction, as the unfused warp-a-row lowering computes it.
    SmallVector<Operation *> combiners = *getCombiners(row);
    SmallVector<Value> accs;
    for (Operation *c : combiners)
      accs.push_back(neutralOf(b, loc, c));
    for (int64_t j = 0; j < perLane; ++j)
      accs = emitPayload(b, row, {r, columns[j]}, accs,
                         [&](OpOperand *in) { return read(in, j); });
    combineWarp(b, loc, accs, combiners, lanes);
    SmallVector<Value> totals;
    for (auto [out, acc, c] :
         llvm::zip(row.getDpsInitsMutable(), accs, combiners))
      totals.push_back(
          combineWith(b, loc, c, loadInit(b, loc, out, r, inits), acc));
    Value firstLane = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            lane, indexConstant(b, loc, 0));
    auto store = scf::IfOp::create(b, loc, firstLane, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard storeGuard(b);
      b.setInsertionPointToStart(store.thenBlock());
      for (auto [out, total] : llvm::zip(row.getDpsInits(), totals))
        memref::StoreOp::create(b, loc, total, out, r);
    }

    // The column sums, before the elementwise ops store anything.
    SmallVector<Value> next(loop.getRegionIterArgs());
    int64_t slot = 0;
    for (linalg::GenericOp sum : group.columnSums) {
      int64_t outputs = sum.getNumDpsInits();
      for (int64_t j = 0; j < perLane; ++j) {
        SmallVector<Value> outs;
        for (int64_t k = 0; k < outputs; ++k)
          outs.push_back(next[(slot + k) * perLane + j]);
        SmallVector<Value> sums =
            emitPayload(b, sum, {r, columns[j]}, outs,
                        [&](OpOperand *in) { return read(in, j); });
        for (int64_t k = 0; k < outputs; ++k)
          next[(slot + k) * perLane + j] = sums[k];
      }
      slot += outputs;
    }

    for (linalg::GenericOp consumer : group.consumers) {
      Block &body = consumer.getRegion().front();
      for (int64_t j = 0; j < perLane; ++j) {
        SmallVector<Value> idx = {r, columns[j]};
        SmallVector<Value> outs;
        for (OpOperand &out : consumer.getDpsInitsMutable())
          outs.push_back(body.getArgument(out.getOperandNumber()).use_empty()
                             ? Value()
                             : loadInit(b, loc, out, idx, inits));
        SmallVector<Value> results =
            emitPayload(b, consumer, idx, outs, [&](OpOperand *in) -> Value {
              for (auto [out, total] : llvm::zip(row.getDpsInits(), totals))
                if (in->get() == out)
                  return total;
              return read(in, j);
            });
        for (auto [out, result] : llvm::zip(consumer.getDpsInits(), results))
          memref::StoreOp::create(b, loc, result, out, idx);
      }
    }
    scf::YieldOp::create(b, loc, next);
  }
  for (auto [k, partial] : llvm::enumerate(partials))
    for (int64_t j = 0; j < perLane; ++j)
      memref::StoreOp::create(b, loc, loop.getResult(k * perLane + j), partial,
                              ValueRange{columns[j], warp});
}

/// Adds each column's partials (a [columns, warps] buffer) to the column
/// sum's output `out`: a warp a column, its lanes striding the partials in
/// order, then a shuffle tree; every load is issued before the first add.
static void emitPartialSums(OpBuilder &b, Location loc, Value partial,
                            int64_t warps, linalg::GenericOp sum,
                            OpOperand &out, Operation *combiner,
                            const ConstantInits &inits, int64_t lanes) {
  int64_t columns = cast<MemRefType>(partial.getType()).getDimSize(0);
  Value id = openLaunch(b, loc, columns * lanes);
  Value lane =
      arith::RemUIOp::create(b, loc, id, indexConstant(b, loc, lanes));
  Value column =
      arith::DivUIOp::create(b, loc, id, indexConstant(b, loc, lanes));
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value total = zero;
  for (int64_t s = 0; s < warps; s += lanes) {
    Value slice = arith::AddIOp::create(b, loc, lane, indexConstant(b, loc, s));
    if (s + lanes <= warps) {
      total = arith::AddFOp::create(
          b, loc, total,
          memref::LoadOp::create(b, loc, partial, ValueRange{column, slice}));
      continue;
    }
    // The last lanes of a ragged end add zero.
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          slice, indexConstant(b, loc, warps));
    Value clamped = arith::SelectOp::create(b, loc, inRange, slice,
                                            indexConstant(b, loc, 0));
    Value x =
        memref::LoadOp::create(b, loc, partial, ValueRange{column, clamped});
    total = arith::AddFOp::create(
        b, loc, total, arith::SelectOp::create(b, loc, inRange, x, zero));
  }
  SmallVector<Value> totals = {total};
  combineWarp(b, loc, totals, {combiner}, lanes);
  Value firstLane = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          lane, indexConstant(b, loc, 0));
  auto store = scf::IfOp::create(b, loc, firstLane, /*withElse=*/false);
  b.setInsertionPointToStart(store.thenBlock());
  SmallVector<Value> idx = *affine::expandAffineMap(
      b, loc, sum.getMatchingIndexingMap(&out), {column, column});
  Value old = loadInit(b, loc, out, idx, inits);
  memref::StoreOp::create(b, loc, combineWith(b, loc, combiner, old, totals[0]),
                          out.get(), idx);
}

/// Replaces the group's members by its launches, placed where the last
/// member was.
static void emitGroup(OpBuilder &b, RowGroup group,
                      const ConstantInits &inits, int64_t lanes) {
  SmallVector<linalg::GenericOp> members = group.members();
  Operation *last = members.front();
  for (linalg::GenericOp m : members)
    if (last->isBeforeInBlock(m))
      last = m;
  Location loc = group.rowReduction.getLoc();
  SmallVector<int64_t> ranges = group.rowReduction.getStaticLoopRanges();
  // Without column sums a warp takes one row: the most parallelism.
  int64_t rowsPerWarp =
      group.columnSums.empty()
          ? 1
          : std::max<int64_t>(1, llvm::divideCeil(ranges[0], kColumnSumWarps));
  int64_t warps = llvm::divideCeil(ranges[0], rowsPerWarp);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(last);
  SmallVector<Value> partials;
  for (linalg::GenericOp sum : group.columnSums)
    for (int64_t k = 0, e = sum.getNumDpsInits(); k < e; ++k)
      partials.push_back(memref::AllocOp::create(
          b, loc, MemRefType::get({ranges[1], warps}, b.getF32Type())));
  emitRowPass(b, loc, group, rowsPerWarp, warps, partials, inits, lanes);
  const Value *partial = partials.begin();
  for (linalg::GenericOp sum : group.columnSums) {
    SmallVector<Operation *> combiners = *getCombiners(sum);
    for (auto [out, c] : llvm::zip(sum.getDpsInitsMutable(), combiners)) {
      b.setInsertionPoint(last);
      emitPartialSums(b, sum.getLoc(), *partial++, warps, sum, out, c, inits,
                      lanes);
    }
  }
  for (linalg::GenericOp m : members)
    m.erase();
}

void mlir::mxfp4::launches::fuseRowGroups(OpBuilder &b, Block &entry,
                                          const ConstantInits &inits,
                                          int64_t lanes) {
  SmallVector<RowGroup> groups;
  DenseSet<Operation *> taken;
  for (Operation &op : entry) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic || taken.contains(&op) ||
        roleOf(generic) != Role::RowReduction)
      continue;
    std::optional<RowGroup> group = matchGroup(generic, taken, lanes);
    if (!group)
      continue;
    for (linalg::GenericOp m : group->members())
      taken.insert(m);
    groups.push_back(std::move(*group));
  }
  for (RowGroup &group : groups)
    emitGroup(b, group, inits, lanes);
}
