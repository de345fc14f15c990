//===- KernelReport.cpp - gfx950 kernel report from assembly --------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The assembly is read line by line: labels, directives (skipped) and
// instructions, whose first token is the mnemonic. Loops are recovered from
// backward branches (a branch to a label at or above it); that is exact for
// the reducible, rotated loops LLVM emits and needs no CFG. See
// docs/gfx950.md for the model.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Target/GFX950/KernelReport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir::mxfp4;
using namespace mlir::mxfp4::gfx950;
using llvm::StringRef;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

StringRef gfx950::getScopeName(SteadyState::Scope scope) {
  switch (scope) {
  case SteadyState::Scope::MfmaLoop:
    return "mfma-loop";
  case SteadyState::Scope::HottestLoop:
    return "hottest-loop";
  case SteadyState::Scope::WholeKernel:
    return "whole-kernel";
  }
  return "unknown";
}

//===----------------------------------------------------------------------===//
// Reading the assembly
//===----------------------------------------------------------------------===//

namespace {
/// A source line without its comment, trimmed.
struct Line {
  unsigned number;
  StringRef text;
};

struct Instruction {
  unsigned line;
  StringRef mnemonic;
  StringRef operands;
};

/// The code of one kernel: its instructions and where its labels point
/// (the index of the next instruction).
struct KernelBody {
  std::vector<Instruction> instructions;
  llvm::StringMap<size_t> labels;
};

/// A loop [begin, end] of instruction indices, closed by the backward
/// branch at `end`.
struct Loop {
  size_t begin;
  size_t end;
  StringRef label;
};
} // namespace

static std::vector<Line> splitLines(StringRef assembly) {
  std::vector<Line> lines;
  unsigned number = 0;
  while (!assembly.empty()) {
    auto [line, rest] = assembly.split('\n');
    assembly = rest;
    ++number;
    // ';' starts a comment in AMDGPU assembly. Directive operands may hold
    // quoted ';', but directives are skipped anyway.
    StringRef text = line.split(';').first.trim();
    if (!text.empty())
      lines.push_back({number, text});
  }
  return lines;
}

/// Returns the label a line defines, or an empty StringRef.
static StringRef getLabel(StringRef text) {
  if (!text.ends_with(":"))
    return {};
  StringRef name = text.drop_back();
  if (name.empty() || name.find_first_of(" \t") != StringRef::npos)
    return {};
  return name;
}

static llvm::Expected<KernelBody>
extractKernelBody(llvm::ArrayRef<Line> lines, StringRef kernel,
                  const llvm::StringSet<> &kernelNames, StringRef sourceName) {
  const Line *start = llvm::find_if(
      lines, [&](const Line &line) { return getLabel(line.text) == kernel; });
  if (start == lines.end())
    return makeError(sourceName + ": kernel '" + kernel +
                     "' is in .amdgpu_metadata but its code (a line '" +
                     kernel + ":') is not in the assembly");
  KernelBody body;
  for (const Line *it = start + 1; it != lines.end(); ++it) {
    StringRef text = it->text;
    // The function ends where the printer switches to the kernel descriptor
    // (.section .rodata) or at its end label.
    if (text.starts_with(".section") || text.starts_with(".size") ||
        text.starts_with(".amdhsa_kernel") ||
        text.starts_with(".end_amdgpu_metadata") ||
        text.starts_with(".amdgpu_metadata"))
      break;
    if (StringRef label = getLabel(text); !label.empty()) {
      if (label.starts_with(".Lfunc_end") || kernelNames.contains(label))
        break;
      body.labels[label] = body.instructions.size();
      continue;
    }
    if (text.starts_with("."))
      continue;
    size_t split = text.find_first_of(" \t");
    Instruction instruction;
    instruction.line = it->number;
    instruction.mnemonic = text.substr(0, split);
    instruction.operands =
        split == StringRef::npos ? StringRef() : text.substr(split).trim();
    body.instructions.push_back(instruction);
  }
  if (body.instructions.empty())
    return makeError(llvm::formatv("{0}:{1}: kernel '{2}' has no instructions",
                                   sourceName, start->number, kernel)
                         .str());
  return body;
}

//===----------------------------------------------------------------------===//
// Classifying instructions
//===----------------------------------------------------------------------===//

static bool hasOperandToken(StringRef operands, StringRef token) {
  llvm::SmallVector<StringRef, 8> parts;
  operands.split(parts, ' ', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts)
    if (part.trim(",") == token)
      return true;
  return false;
}

/// The integer value of a `name:N` modifier, or `defaultValue`.
static int64_t getModifier(StringRef operands, StringRef name,
                           int64_t defaultValue) {
  llvm::SmallVector<StringRef, 8> parts;
  operands.split(parts, ' ', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    part = part.trim(",");
    if (!part.consume_front(name) || !part.consume_front(":"))
      continue;
    int64_t value;
    if (!part.getAsInteger(0, value))
      return value;
  }
  return defaultValue;
}

/// Bytes per lane of a memory instruction from the data-type token of its
/// mnemonic suffix (dwordx4, b128, ubyte, u16, ...); 4 when there is none.
static int64_t getBytesPerLane(StringRef suffix) {
  llvm::SmallVector<StringRef, 6> tokens;
  suffix.split(tokens, '_', -1, /*KeepEmpty=*/false);
  for (StringRef token : tokens) {
    if (token == "dword")
      return 4;
    if (token.consume_front("dwordx")) {
      int64_t count;
      if (!token.getAsInteger(10, count))
        return 4 * count;
      continue;
    }
    if (token == "ubyte" || token == "sbyte" || token == "byte" ||
        token == "u8" || token == "i8")
      return 1;
    if (token == "ushort" || token == "sshort" || token == "short" ||
        token == "u16" || token == "i16" || token == "f16" || token == "bf16")
      return 2;
    if (token == "x2" || token == "f64" || token == "u64" || token == "i64")
      return 8;
    if (token == "f32" || token == "u32" || token == "i32")
      return 4;
    if (token.consume_front("b")) {
      int64_t bits;
      if (!token.getAsInteger(10, bits) && bits % 8 == 0 && bits > 0)
        return bits / 8;
    }
  }
  return 4;
}

/// Parses the "MxNxK" token and the optional "Nb" block count of an MFMA
/// mnemonic.
static bool getMfmaShape(StringRef mnemonic, int64_t &m, int64_t &n, int64_t &k,
                         int64_t &blocks) {
  llvm::SmallVector<StringRef, 8> tokens;
  mnemonic.split(tokens, '_');
  bool found = false;
  blocks = 1;
  for (StringRef token : tokens) {
    llvm::SmallVector<StringRef, 3> dims;
    token.split(dims, 'x');
    if (dims.size() == 3 && !dims[0].getAsInteger(10, m) &&
        !dims[1].getAsInteger(10, n) && !dims[2].getAsInteger(10, k)) {
      found = true;
      continue;
    }
    if (token.ends_with("b") && token.size() > 1 &&
        !token.drop_back().getAsInteger(10, blocks))
      continue;
  }
  if (blocks < 1)
    blocks = 1;
  return found;
}

static bool isTranscendental(StringRef mnemonic) {
  for (StringRef prefix :
       {"v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_"})
    if (mnemonic.starts_with(prefix))
      return true;
  return false;
}

/// Adds one instruction to `mix`.
static void addInstruction(const Instruction &instruction,
                           const IssueModel &model, int64_t waveSize,
                           LoopMix &mix) {
  std::string lowered = instruction.mnemonic.lower();
  StringRef mnemonic = lowered;
  StringRef operands = instruction.operands;
  ++mix.total;

  auto memory = [&](int64_t &counter, StringRef suffix) {
    ++counter;
    mix.issueCycles += model.memoryIssueCycles;
    return getBytesPerLane(suffix) * waveSize;
  };

  // Matrix instructions.
  if (mnemonic.starts_with("v_mfma") || mnemonic.starts_with("v_smfmac")) {
    int64_t m = 0, n = 0, k = 0, blocks = 1;
    bool hasShape = getMfmaShape(mnemonic, m, n, k, blocks);
    int64_t cycles;
    if (mnemonic.contains("_f8f6f4") && hasShape) {
      // Format codes: 0 FP8, 1 BF8, 2 FP6, 3 BF6, 4 FP4; the default (no
      // modifier printed) is 0.
      bool fp8 = getModifier(operands, "cbsz", 0) <= 1 ||
                 getModifier(operands, "blgp", 0) <= 1;
      bool is16 = m == 16 && n == 16 && k == 128;
      bool is32 = m == 32 && n == 32 && k == 64;
      if (is16 || is32) {
        ++(is16 ? mix.mfma16x16x128 : mix.mfma32x32x64);
        cycles = is16 ? model.mfma16x16x128Cycles : model.mfma32x32x64Cycles;
      } else {
        ++mix.otherMfma;
        cycles = m >= 32 ? model.otherMfma32Cycles : model.otherMfma16Cycles;
      }
      if (fp8)
        cycles *= model.fp8Factor;
    } else {
      ++mix.otherMfma;
      cycles = !hasShape || m >= 32 ? model.otherMfma32Cycles
               : m >= 16            ? model.otherMfma16Cycles
                                    : model.otherMfma4Cycles;
    }
    mix.mfmaCycles += cycles;
    mix.issueCycles += model.mfmaIssueCycles;
    if (hasShape)
      mix.mfmaFlops += 2.0 * m * n * k * blocks;
    return;
  }

  // Vector memory. Direct-to-LDS loads are `global_load_lds_*` or a buffer
  // load with the `lds` modifier: they read global memory and write LDS.
  StringRef suffix = mnemonic;
  if (suffix.consume_front("global_load_lds_") ||
      (mnemonic.starts_with("buffer_load_") &&
       hasOperandToken(operands, "lds") &&
       suffix.consume_front("buffer_load_"))) {
    int64_t bytes = memory(mix.directToLdsLoads, suffix);
    mix.globalBytes += bytes;
    mix.ldsWriteBytes += bytes;
    mix.directToLdsBytes += bytes;
    return;
  }
  if (suffix.consume_front("global_load_") ||
      suffix.consume_front("flat_load_")) {
    mix.globalBytes += memory(mix.globalLoads, suffix);
    return;
  }
  if (suffix.consume_front("buffer_load_")) {
    mix.globalBytes += memory(mix.bufferLoads, suffix);
    return;
  }
  if (suffix.consume_front("global_store_") ||
      suffix.consume_front("flat_store_") ||
      suffix.consume_front("buffer_store_") ||
      suffix.consume_front("global_atomic_") ||
      suffix.consume_front("flat_atomic_") ||
      suffix.consume_front("buffer_atomic_")) {
    mix.globalBytes += memory(mix.globalStores, suffix);
    return;
  }
  if (suffix.consume_front("scratch_")) {
    mix.scratchBytes += memory(mix.scratchAccesses, suffix);
    return;
  }

  // LDS. ds_read2*/ds_write2* move two elements per lane.
  if (mnemonic.starts_with("ds_")) {
    int64_t factor = mnemonic.starts_with("ds_read2") ||
                             mnemonic.starts_with("ds_write2") ||
                             mnemonic.contains("_2addr")
                         ? 2
                         : 1;
    if (suffix.consume_front("ds_read") || suffix.consume_front("ds_load")) {
      mix.ldsReadBytes += factor * memory(mix.ldsReads, suffix);
      return;
    }
    if (suffix.consume_front("ds_write") || suffix.consume_front("ds_store")) {
      mix.ldsWriteBytes += factor * memory(mix.ldsWrites, suffix);
      return;
    }
    ++mix.ldsOther;
    mix.issueCycles += model.memoryIssueCycles;
    return;
  }

  // Scalar.
  if (mnemonic.starts_with("s_load_") || mnemonic.starts_with("s_buffer_") ||
      mnemonic.starts_with("s_store_") || mnemonic.starts_with("s_scratch_") ||
      mnemonic.starts_with("s_dcache_") || mnemonic.starts_with("s_memtime") ||
      mnemonic.starts_with("s_memrealtime")) {
    ++mix.scalarLoads;
    mix.issueCycles += model.memoryIssueCycles;
    return;
  }
  if (mnemonic.starts_with("s_waitcnt") || mnemonic.starts_with("s_wait_")) {
    ++mix.waits;
    mix.issueCycles += model.waitCycles;
    return;
  }
  if (mnemonic.starts_with("s_barrier")) {
    ++mix.barriers;
    mix.issueCycles += model.barrierCycles;
    return;
  }
  if (mnemonic == "s_branch" || mnemonic.starts_with("s_cbranch_") ||
      mnemonic.starts_with("s_setpc_") || mnemonic.starts_with("s_swappc_") ||
      mnemonic.starts_with("s_call_")) {
    ++mix.branches;
    mix.issueCycles += model.branchCycles;
    return;
  }
  if (mnemonic == "s_nop") {
    // s_nop N idles the wave for N + 1 cycles (hazard padding).
    int64_t count = 0;
    if (operands.trim().getAsInteger(0, count) || count < 0)
      count = 0;
    ++mix.salu;
    mix.issueCycles += count + 1;
    return;
  }
  if (mnemonic.starts_with("s_")) {
    ++mix.salu;
    mix.issueCycles += model.saluCycles;
    return;
  }
  if (mnemonic.starts_with("v_")) {
    ++mix.valu;
    mix.issueCycles += isTranscendental(mnemonic) ? model.transcendentalCycles
                                                  : model.valuCycles;
    return;
  }
  ++mix.other;
  mix.issueCycles += 1;
}

static LoopMix computeMix(const KernelBody &body, size_t begin, size_t end,
                          const IssueModel &model, int64_t waveSize) {
  LoopMix mix;
  for (size_t i = begin; i <= end; ++i)
    addInstruction(body.instructions[i], model, waveSize, mix);
  return mix;
}

/// Finds the loops closed by backward branches; one loop per header label,
/// ending at its last backward branch.
static std::vector<Loop> findLoops(const KernelBody &body) {
  std::vector<Loop> loops;
  for (size_t i = 0, e = body.instructions.size(); i != e; ++i) {
    const Instruction &instruction = body.instructions[i];
    StringRef mnemonic = instruction.mnemonic;
    if (mnemonic != "s_branch" && !mnemonic.starts_with("s_cbranch_"))
      continue;
    StringRef target = instruction.operands.split(' ').first.trim(",");
    auto it = body.labels.find(target);
    if (it == body.labels.end() || it->second > i)
      continue;
    auto existing = llvm::find_if(
        loops, [&](const Loop &loop) { return loop.label == target; });
    if (existing != loops.end())
      existing->end = std::max(existing->end, i);
    else
      loops.push_back({it->second, i, it->first()});
  }
  return loops;
}

static bool contains(const Loop &outer, const Loop &inner) {
  return &outer != &inner && outer.begin <= inner.begin &&
         inner.end <= outer.end;
}

/// Picks the steady state: the innermost loop with MFMAs (the one with the
/// most MFMA cycles if several), else the innermost loop with the most
/// instructions, else the whole kernel.
static SteadyState selectSteadyState(const KernelBody &body,
                                     const IssueModel &model,
                                     int64_t waveSize) {
  std::vector<Loop> loops = findLoops(body);
  std::vector<LoopMix> mixes;
  for (const Loop &loop : loops)
    mixes.push_back(computeMix(body, loop.begin, loop.end, model, waveSize));

  auto pick = [&](auto isCandidate, auto better) -> std::optional<size_t> {
    std::optional<size_t> best;
    for (size_t i = 0; i < loops.size(); ++i) {
      if (!isCandidate(i))
        continue;
      bool innermost =
          llvm::none_of(llvm::seq<size_t>(0, loops.size()), [&](size_t j) {
            return isCandidate(j) && contains(loops[i], loops[j]);
          });
      if (innermost && (!best || better(i, *best)))
        best = i;
    }
    return best;
  };

  SteadyState state;
  auto hasMfma = [&](size_t i) { return mixes[i].getMfmaCount() > 0; };
  std::optional<size_t> chosen = pick(hasMfma, [&](size_t a, size_t b) {
    return std::make_pair(mixes[a].mfmaCycles, mixes[a].total) >
           std::make_pair(mixes[b].mfmaCycles, mixes[b].total);
  });
  state.scope = SteadyState::Scope::MfmaLoop;
  if (!chosen) {
    chosen = pick(
        [](size_t) { return true; },
        [&](size_t a, size_t b) { return mixes[a].total > mixes[b].total; });
    state.scope = SteadyState::Scope::HottestLoop;
  }
  if (!chosen) {
    state.scope = SteadyState::Scope::WholeKernel;
    state.firstLine = body.instructions.front().line;
    state.lastLine = body.instructions.back().line;
    state.mix =
        computeMix(body, 0, body.instructions.size() - 1, model, waveSize);
    return state;
  }
  const Loop &loop = loops[*chosen];
  state.label = loop.label.str();
  state.firstLine = body.instructions[loop.begin].line;
  state.lastLine = body.instructions[loop.end].line;
  state.mix = mixes[*chosen];
  return state;
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

namespace {
/// The four terms of one round with `wavesOnCu` waves on the CU.
struct Round {
  double mfma = 0, issue = 0, l2 = 0, lds = 0, latency = 0, total = 0;
  StringRef bound = "mfma";
};
} // namespace

static Round computeRound(const LoopMix &mix, int64_t wavesOnCu,
                          const IssueModel &model) {
  Round round;
  int64_t wavesOnSimd = llvm::divideCeil(wavesOnCu, model.simdsPerCu);
  round.mfma = double(wavesOnSimd) * mix.mfmaCycles;
  round.issue = double(wavesOnSimd) * mix.issueCycles;
  // Scratch (spills) goes through the same vector-memory path as global
  // memory.
  round.l2 = double(wavesOnCu) * (mix.globalBytes + mix.scratchBytes) /
             model.l2BytesPerCycle;
  round.lds = double(wavesOnCu) * (mix.ldsReadBytes + mix.ldsWriteBytes) /
              model.ldsBytesPerCycle;
  round.total = round.mfma;
  for (auto [value, name] : {std::pair<double, StringRef>{round.issue, "issue"},
                             {round.l2, "l2"},
                             {round.lds, "lds"}}) {
    if (value > round.total) {
      round.total = value;
      round.bound = name;
    }
  }
  // Each barrier stalls its waves; the other waves of the SIMD cover the
  // stall with their MFMAs.
  round.latency =
      double(mix.barriers) *
      std::max<double>(0, model.barrierLatencyCycles -
                              double(wavesOnSimd - 1) * mix.mfmaCycles);
  round.total += round.latency;
  return round;
}

/// MFMA TFLOPS of `computeUnits` CUs each running rounds of `wavesOnCu`
/// waves.
static double getTflops(const LoopMix &mix, const Round &round,
                        int64_t wavesOnCu, double clockGHz,
                        const IssueModel &model) {
  if (round.total <= 0)
    return 0;
  return double(model.computeUnits) * wavesOnCu * mix.mfmaFlops / round.total *
         clockGHz / 1000.0;
}

static void computeOccupancy(KernelReport &report, const IssueModel &model) {
  report.workgroupSize = report.getWorkgroupSize();
  report.wavesPerWorkgroup =
      llvm::divideCeil(report.workgroupSize, report.wavefrontSize);
  int64_t allocated =
      llvm::alignTo(std::max<int64_t>(report.vgprs, 1), model.vgprGranule);
  int64_t wavesByVgprs =
      std::min(model.maxWavesPerSimd, model.vgprsPerLane / allocated);
  int64_t byVgprs = wavesByVgprs * model.simdsPerCu / report.wavesPerWorkgroup;
  int64_t byLds = report.ldsBytes > 0 ? model.ldsBytesPerCu / report.ldsBytes
                                      : std::numeric_limits<int64_t>::max();
  // Single-wave workgroups need no barrier (LLVM's getMaxWorkGroupsPerCU).
  int64_t byBarriers = report.wavesPerWorkgroup > 1
                           ? model.maxBarrierWorkgroupsPerCu
                           : std::numeric_limits<int64_t>::max();
  report.workgroupsPerCu = std::min({byVgprs, byLds, byBarriers});
  if (report.workgroupsPerCu <= 0) {
    report.workgroupsPerCu = 0;
    report.occupancyLimiter = "none";
  } else if (report.workgroupsPerCu == byVgprs) {
    // Distinguish running out of registers from running out of wave slots.
    report.occupancyLimiter =
        wavesByVgprs < model.maxWavesPerSimd ? "vgpr" : "waves";
  } else if (report.workgroupsPerCu == byLds) {
    report.occupancyLimiter = "lds";
  } else {
    report.occupancyLimiter = "barriers";
  }
  report.wavesPerCu = report.workgroupsPerCu * report.wavesPerWorkgroup;
  report.wavesPerSimd = llvm::divideCeil(report.wavesPerCu, model.simdsPerCu);
}

static void applyModel(KernelReport &report, const IssueModel &model) {
  computeOccupancy(report, model);
  const LoopMix &mix = report.steadyState.mix;
  Round round = computeRound(mix, report.wavesPerCu, model);
  report.roundMfmaCycles = round.mfma;
  report.roundIssueCycles = round.issue;
  report.roundL2Cycles = round.l2;
  report.roundLdsCycles = round.lds;
  report.roundLatencyCycles = round.latency;
  report.roundCycles = round.total;
  report.bound = round.bound.str();
  report.mfmaBusy = round.total > 0 ? round.mfma / round.total : 0;
  report.estimatedTflops =
      getTflops(mix, round, report.wavesPerCu, model.clockGHz, model);
  report.estimatedSustainedTflops =
      getTflops(mix, round, report.wavesPerCu, model.sustainedClockGHz, model);

  auto warn = [&](const llvm::Twine &message) {
    report.warnings.push_back(message.str());
  };
  if (report.vgprSpills > 0)
    warn(llvm::formatv("{0} VGPR spills ({1} scratch bytes per lane, {2} "
                       "scratch accesses per steady-state iteration)",
                       report.vgprSpills, report.scratchBytes,
                       mix.scratchAccesses)
             .str());
  if (report.sgprSpills > 0)
    warn(llvm::formatv("{0} SGPR spills", report.sgprSpills).str());
  if (report.scratchBytes > 0 && report.vgprSpills == 0 &&
      report.sgprSpills == 0)
    warn(llvm::formatv("{0} bytes of scratch per lane without spills (a "
                       "private array or a vector spilled through the stack)",
                       report.scratchBytes)
             .str());
  if (report.usesDynamicStack)
    warn("uses a dynamic stack");
  if (report.workgroupsPerCu == 0)
    warn(llvm::formatv("does not fit on a CU ({0} VGPRs, {1} bytes of LDS, "
                       "{2} waves per workgroup)",
                       report.vgprs, report.ldsBytes, report.wavesPerWorkgroup)
             .str());
  if (report.steadyState.scope == SteadyState::Scope::WholeKernel)
    warn("no loop: the whole kernel is modelled as straight-line code");
  else if (report.steadyState.scope == SteadyState::Scope::HottestLoop)
    warn("no loop contains an MFMA; the largest innermost loop is modelled");
  if (mix.getMfmaCount() == 0)
    warn("no MFMA in the steady state");
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

llvm::Expected<std::vector<KernelReport>>
gfx950::analyzeGfx950Assembly(StringRef assembly, const IssueModel &model,
                              StringRef sourceName) {
  if (model.computeUnits <= 0 || model.simdsPerCu <= 0 ||
      model.vgprGranule <= 0 || model.vgprsPerLane <= 0 ||
      model.l2BytesPerCycle <= 0 || model.ldsBytesPerCycle <= 0 ||
      model.clockGHz <= 0 || model.sustainedClockGHz <= 0)
    return makeError("the issue model has a non-positive machine constant");
  auto metadata = parseAssemblyMetadata(assembly, sourceName);
  if (!metadata)
    return metadata.takeError();
  if (metadata->kernels.empty())
    return makeError(sourceName + ": the .amdgpu_metadata lists no kernels");

  std::vector<Line> lines = splitLines(assembly);
  llvm::StringSet<> kernelNames;
  for (const KernelMetadata &kernel : metadata->kernels)
    kernelNames.insert(kernel.name);

  std::vector<KernelReport> reports;
  for (const KernelMetadata &kernel : metadata->kernels) {
    auto body = extractKernelBody(lines, kernel.name, kernelNames, sourceName);
    if (!body)
      return body.takeError();
    KernelReport report;
    static_cast<KernelMetadata &>(report) = kernel;
    report.steadyState = selectSteadyState(*body, model, kernel.wavefrontSize);
    report.wholeKernel = computeMix(*body, 0, body->instructions.size() - 1,
                                    model, kernel.wavefrontSize);
    applyModel(report, model);
    reports.push_back(std::move(report));
  }
  return reports;
}

llvm::Expected<LaunchEstimate>
gfx950::estimateLaunch(const KernelReport &report, const LaunchShape &launch,
                       const IssueModel &model) {
  auto error = [&](const llvm::Twine &message) {
    return makeError("kernel '" + report.name + "': " + message);
  };
  if (launch.workgroups <= 0)
    return error("the launch needs a positive number of workgroups");
  bool anyShape = launch.m != 0 || launch.n != 0 || launch.k != 0;
  if (anyShape && (launch.m <= 0 || launch.n <= 0 || launch.k <= 0))
    return error("the GEMM shape needs M, N and K all positive (or all 0)");
  if (launch.iterationsPerWave < 0 ||
      (anyShape && launch.iterationsPerWave != 0))
    return error("iterations per wave must be positive and are for a launch "
                 "without a GEMM shape");
  if (report.workgroupsPerCu <= 0)
    return error("the kernel does not fit on a CU");

  const LoopMix &mix = report.steadyState.mix;
  LaunchEstimate estimate;
  estimate.workgroups = launch.workgroups;
  estimate.concurrentWorkgroups = model.computeUnits * report.workgroupsPerCu;
  estimate.rounds =
      llvm::divideCeil(launch.workgroups, estimate.concurrentWorkgroups);
  estimate.tailEfficiency =
      double(launch.workgroups) /
      double(estimate.rounds * estimate.concurrentWorkgroups);

  // The dispatcher fills CUs breadth-first, so the last round puts
  // ceil(remaining / CUs) workgroups on its busiest CU.
  int64_t lastWorkgroups =
      launch.workgroups - (estimate.rounds - 1) * estimate.concurrentWorkgroups;
  int64_t lastWavesOnCu = llvm::divideCeil(lastWorkgroups, model.computeUnits) *
                          report.wavesPerWorkgroup;
  Round full = computeRound(mix, report.wavesPerCu, model);
  Round last = computeRound(mix, lastWavesOnCu, model);

  double waveIterationFlops =
      double(launch.workgroups) * report.wavesPerWorkgroup * mix.mfmaFlops;
  double iterations = 1;
  double totalFlops = waveIterationFlops;
  if (anyShape) {
    totalFlops = 2.0 * launch.m * launch.n * launch.k;
    iterations = waveIterationFlops > 0 ? totalFlops / waveIterationFlops : 0;
    estimate.iterationsPerWave = iterations;
  } else if (launch.iterationsPerWave > 0) {
    iterations = launch.iterationsPerWave;
    totalFlops = waveIterationFlops * iterations;
    estimate.iterationsPerWave = iterations;
  }
  double cycles =
      iterations * (double(estimate.rounds - 1) * full.total + last.total);
  if (cycles > 0 && totalFlops > 0) {
    estimate.estimatedTflops = totalFlops / cycles * model.clockGHz / 1000.0;
    estimate.estimatedSustainedTflops =
        totalFlops / cycles * model.sustainedClockGHz / 1000.0;
  }
  if ((anyShape || launch.iterationsPerWave > 0) && cycles > 0) {
    estimate.microseconds = cycles / (model.clockGHz * 1000.0);
    estimate.sustainedMicroseconds =
        cycles / (model.sustainedClockGHz * 1000.0);
  }
  return estimate;
}

llvm::Expected<std::vector<std::pair<KernelReport, LaunchEstimate>>>
gfx950::analyzeGfx950Assembly(StringRef assembly, const LaunchShape &launch,
                              const IssueModel &model, StringRef sourceName) {
  auto reports = analyzeGfx950Assembly(assembly, model, sourceName);
  if (!reports)
    return reports.takeError();
  std::vector<std::pair<KernelReport, LaunchEstimate>> result;
  for (KernelReport &report : *reports) {
    auto estimate = estimateLaunch(report, launch, model);
    if (!estimate)
      return estimate.takeError();
    result.emplace_back(std::move(report), *estimate);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

llvm::json::Value gfx950::toJSON(const LoopMix &mix) {
  return llvm::json::Object{
      {"mfma16x16x128", mix.mfma16x16x128},
      {"mfma32x32x64", mix.mfma32x32x64},
      {"otherMfma", mix.otherMfma},
      {"ldsReads", mix.ldsReads},
      {"ldsWrites", mix.ldsWrites},
      {"ldsOther", mix.ldsOther},
      {"globalLoads", mix.globalLoads},
      {"bufferLoads", mix.bufferLoads},
      {"directToLdsLoads", mix.directToLdsLoads},
      {"globalStores", mix.globalStores},
      {"scratchAccesses", mix.scratchAccesses},
      {"scalarLoads", mix.scalarLoads},
      {"waits", mix.waits},
      {"barriers", mix.barriers},
      {"valu", mix.valu},
      {"salu", mix.salu},
      {"branches", mix.branches},
      {"other", mix.other},
      {"total", mix.total},
      {"globalBytes", mix.globalBytes},
      {"ldsReadBytes", mix.ldsReadBytes},
      {"ldsWriteBytes", mix.ldsWriteBytes},
      {"directToLdsBytes", mix.directToLdsBytes},
      {"scratchBytes", mix.scratchBytes},
      {"mfmaCycles", mix.mfmaCycles},
      {"issueCycles", mix.issueCycles},
      {"mfmaFlops", mix.mfmaFlops},
  };
}

llvm::json::Value gfx950::toJSON(const KernelReport &report) {
  llvm::json::Array arguments;
  for (const KernelArgument &argument : report.arguments) {
    llvm::json::Object object{{"offset", argument.offset},
                              {"size", argument.size},
                              {"valueKind", argument.valueKind}};
    if (!argument.addressSpace.empty())
      object["addressSpace"] = argument.addressSpace;
    if (!argument.name.empty())
      object["name"] = argument.name;
    arguments.push_back(std::move(object));
  }
  llvm::json::Object steady{{"scope", getScopeName(report.steadyState.scope)},
                            {"firstLine", report.steadyState.firstLine},
                            {"lastLine", report.steadyState.lastLine},
                            {"mix", toJSON(report.steadyState.mix)}};
  if (!report.steadyState.label.empty())
    steady["label"] = report.steadyState.label;
  llvm::json::Array warnings;
  for (const std::string &warning : report.warnings)
    warnings.push_back(warning);
  return llvm::json::Object{
      {"name", report.name},
      {"vgprs", report.vgprs},
      {"agprs", report.agprs},
      {"sgprs", report.sgprs},
      {"vgprSpills", report.vgprSpills},
      {"sgprSpills", report.sgprSpills},
      {"scratchBytes", report.scratchBytes},
      {"ldsBytes", report.ldsBytes},
      {"kernargBytes", report.kernargBytes},
      {"maxFlatWorkgroupSize", report.maxFlatWorkgroupSize},
      {"wavefrontSize", report.wavefrontSize},
      {"arguments", std::move(arguments)},
      {"occupancy",
       llvm::json::Object{{"workgroupSize", report.workgroupSize},
                          {"wavesPerWorkgroup", report.wavesPerWorkgroup},
                          {"workgroupsPerCu", report.workgroupsPerCu},
                          {"wavesPerCu", report.wavesPerCu},
                          {"wavesPerSimd", report.wavesPerSimd},
                          {"limiter", report.occupancyLimiter}}},
      {"steadyState", std::move(steady)},
      {"wholeKernel", toJSON(report.wholeKernel)},
      {"round", llvm::json::Object{{"mfmaCycles", report.roundMfmaCycles},
                                   {"issueCycles", report.roundIssueCycles},
                                   {"l2Cycles", report.roundL2Cycles},
                                   {"ldsCycles", report.roundLdsCycles},
                                   {"latencyCycles", report.roundLatencyCycles},
                                   {"cycles", report.roundCycles},
                                   {"bound", report.bound}}},
      {"mfmaBusy", report.mfmaBusy},
      {"estimatedTflops", report.estimatedTflops},
      {"estimatedSustainedTflops", report.estimatedSustainedTflops},
      {"warnings", std::move(warnings)},
  };
}

llvm::json::Value gfx950::toJSON(const LaunchEstimate &estimate) {
  return llvm::json::Object{
      {"workgroups", estimate.workgroups},
      {"concurrentWorkgroups", estimate.concurrentWorkgroups},
      {"rounds", estimate.rounds},
      {"tailEfficiency", estimate.tailEfficiency},
      {"iterationsPerWave", estimate.iterationsPerWave},
      {"microseconds", estimate.microseconds},
      {"sustainedMicroseconds", estimate.sustainedMicroseconds},
      {"estimatedTflops", estimate.estimatedTflops},
      {"estimatedSustainedTflops", estimate.estimatedSustainedTflops},
  };
}

llvm::json::Value gfx950::toJSON(const IssueModel &model) {
  return llvm::json::Object{
      {"computeUnits", model.computeUnits},
      {"simdsPerCu", model.simdsPerCu},
      {"clockGHz", model.clockGHz},
      {"sustainedClockGHz", model.sustainedClockGHz},
      {"vgprsPerLane", model.vgprsPerLane},
      {"vgprGranule", model.vgprGranule},
      {"maxWavesPerSimd", model.maxWavesPerSimd},
      {"maxBarrierWorkgroupsPerCu", model.maxBarrierWorkgroupsPerCu},
      {"ldsBytesPerCu", model.ldsBytesPerCu},
      {"mfma16x16x128Cycles", model.mfma16x16x128Cycles},
      {"mfma32x32x64Cycles", model.mfma32x32x64Cycles},
      {"fp8Factor", model.fp8Factor},
      {"otherMfma32Cycles", model.otherMfma32Cycles},
      {"otherMfma16Cycles", model.otherMfma16Cycles},
      {"otherMfma4Cycles", model.otherMfma4Cycles},
      {"mfmaIssueCycles", model.mfmaIssueCycles},
      {"valuCycles", model.valuCycles},
      {"transcendentalCycles", model.transcendentalCycles},
      {"saluCycles", model.saluCycles},
      {"memoryIssueCycles", model.memoryIssueCycles},
      {"waitCycles", model.waitCycles},
      {"branchCycles", model.branchCycles},
      {"barrierCycles", model.barrierCycles},
      {"l2BytesPerCycle", model.l2BytesPerCycle},
      {"ldsBytesPerCycle", model.ldsBytesPerCycle},
      {"barrierLatencyCycles", model.barrierLatencyCycles},
  };
}

std::string gfx950::formatJSON(llvm::ArrayRef<KernelReport> reports,
                               const IssueModel &model) {
  llvm::json::Array kernels;
  for (const KernelReport &report : reports)
    kernels.push_back(toJSON(report));
  llvm::json::Value root = llvm::json::Object{{"model", toJSON(model)},
                                              {"kernels", std::move(kernels)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", root) << "\n";
  return text;
}

/// "8.5 KiB", "512 B".
static std::string formatBytes(int64_t bytes) {
  if (bytes >= 1024)
    return llvm::formatv("{0:f1} KiB", bytes / 1024.0).str();
  return llvm::formatv("{0} B", bytes).str();
}

std::string gfx950::formatTable(llvm::ArrayRef<KernelReport> reports) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const KernelReport &r : reports) {
    const LoopMix &mix = r.steadyState.mix;
    os << r.name << ": vgpr " << r.vgprs << " agpr " << r.agprs << " sgpr "
       << r.sgprs << " spill " << r.vgprSpills << "/" << r.sgprSpills
       << " scratch " << r.scratchBytes << " lds " << r.ldsBytes
       << " | occupancy " << r.wavesPerSimd << " waves/SIMD ("
       << r.occupancyLimiter << ") | ";
    if (r.steadyState.scope == SteadyState::Scope::WholeKernel)
      os << "no loop";
    else
      os << "loop " << r.steadyState.label << " (lines "
         << r.steadyState.firstLine << "-" << r.steadyState.lastLine << ")";
    os << ": " << mix.mfma16x16x128 << " mfma16x16x128, " << mix.mfma32x32x64
       << " mfma32x32x64, " << mix.otherMfma << " other mfma, "
       << mix.globalLoads + mix.bufferLoads + mix.directToLdsLoads +
              mix.globalStores
       << " vmem (" << formatBytes(mix.globalBytes) << ", "
       << mix.directToLdsLoads << " to LDS), " << mix.ldsReads + mix.ldsWrites
       << " ds, " << mix.valu << " valu, " << mix.salu << " salu, " << mix.waits
       << " waits, " << mix.barriers << " barriers";
    if (mix.scratchAccesses)
      os << ", " << mix.scratchAccesses << " scratch";
    os << llvm::formatv(" | mfma busy {0:f1}% ({1}-bound) | {2:f0} TF peak "
                        "clock, {3:f0} TF sustained",
                        100.0 * r.mfmaBusy, r.bound, r.estimatedTflops,
                        r.estimatedSustainedTflops);
    for (const std::string &warning : r.warnings)
      os << " | warning: " << warning;
    os << "\n";
  }
  return text;
}
