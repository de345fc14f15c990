//===- KernelReportTest.cpp - gfx950 kernel report and code objects -------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The inputs under Inputs/ are real compiler output (Inputs/regenerate.sh
// rebuilds them from the .mlir kernels next to them); the synthetic snippets
// below cover what those kernels do not contain.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Target/GFX950/KernelReport.h"
#include "mxfp4/Target/GFX950/CodeObject.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace mlir::mxfp4;
using namespace mlir::mxfp4::gfx950;
using llvm::StringRef;

namespace {

std::string inputPath(StringRef name) {
  return (llvm::Twine(MXFP4_GFX950_INPUTS) + "/" + name).str();
}

std::string readInput(StringRef name) {
  auto buffer = llvm::MemoryBuffer::getFile(inputPath(name), /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    ADD_FAILURE() << "cannot read " << inputPath(name);
    return {};
  }
  return (*buffer)->getBuffer().str();
}

/// Analyses an input file, failing the test on an error.
std::vector<KernelReport> analyzeInput(StringRef name,
                                       const IssueModel &model = {}) {
  auto reports = analyzeGfx950Assembly(readInput(name), model, name);
  if (!reports) {
    ADD_FAILURE() << llvm::toString(reports.takeError());
    return {};
  }
  return std::move(*reports);
}

/// The message of an error the call must return.
template <typename T> std::string errorOf(llvm::Expected<T> result) {
  if (result) {
    ADD_FAILURE() << "expected an error";
    return {};
  }
  return llvm::toString(result.takeError());
}

/// A minimal assembly file: one kernel `name` with `body` and metadata with
/// `vgprs` registers, `workgroupSize` work-items and `extraKeys`.
std::string makeAssembly(StringRef body, int vgprs = 64,
                         int workgroupSize = 256, StringRef extraKeys = "",
                         StringRef name = "k") {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "\t.text\n\t.globl\t" << name << "\n"
     << name << ":\n"
     << body << "\ts_endpgm\n.Lfunc_end0:\n"
     << "\t.amdgpu_metadata\n---\namdhsa.kernels:\n"
     << "  - .name: " << name << "\n"
     << "    .vgpr_count: " << vgprs << "\n"
     << "    .sgpr_count: 16\n"
     << "    .private_segment_fixed_size: 0\n"
     << "    .group_segment_fixed_size: 0\n"
     << "    .kernarg_segment_size: 8\n"
     << "    .max_flat_workgroup_size: " << workgroupSize << "\n"
     << "    .wavefront_size: 64\n"
     << extraKeys << "amdhsa.target: amdgcn-amd-amdhsa--gfx950\n...\n"
     << "\t.end_amdgpu_metadata\n";
  return text;
}

KernelReport analyzeOne(StringRef assembly, const IssueModel &model = {}) {
  auto reports = analyzeGfx950Assembly(assembly, model, "test.s");
  if (!reports) {
    ADD_FAILURE() << llvm::toString(reports.takeError());
    return {};
  }
  EXPECT_EQ(reports->size(), 1u);
  return reports->front();
}

constexpr StringRef kFp4Mfma16 =
    "\tv_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:7], v[8:11], v[0:3], "
    "v12, v13 op_sel_hi:[0,0,0] cbsz:4 blgp:4\n";

//===----------------------------------------------------------------------===//
// Real compiler output
//===----------------------------------------------------------------------===//

TEST(KernelReport, GemmMetadata) {
  std::vector<KernelReport> reports = analyzeInput("wave_tile_32x32.s");
  ASSERT_EQ(reports.size(), 1u);
  const KernelReport &r = reports[0];
  EXPECT_EQ(r.name, "wave_tile_32x32");
  EXPECT_EQ(r.symbol, "wave_tile_32x32.kd");
  EXPECT_EQ(r.vgprs, 52);
  EXPECT_EQ(r.agprs, 0);
  EXPECT_EQ(r.sgprs, 22);
  EXPECT_EQ(r.vgprSpills, 0);
  EXPECT_EQ(r.sgprSpills, 0);
  EXPECT_EQ(r.scratchBytes, 0);
  EXPECT_EQ(r.ldsBytes, 0);
  EXPECT_EQ(r.kernargBytes, 44);
  EXPECT_EQ(r.kernargAlign, 8);
  EXPECT_EQ(r.maxFlatWorkgroupSize, 64);
  EXPECT_EQ(r.wavefrontSize, 64);
  EXPECT_EQ(r.requiredWorkgroupSize, (std::array<int64_t, 3>{64, 1, 1}));
  ASSERT_EQ(r.arguments.size(), 6u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(r.arguments[i].offset, 8 * i);
    EXPECT_EQ(r.arguments[i].size, 8);
    EXPECT_EQ(r.arguments[i].valueKind, "global_buffer");
    EXPECT_EQ(r.arguments[i].addressSpace, "global");
  }
  EXPECT_EQ(r.arguments[5].offset, 40);
  EXPECT_EQ(r.arguments[5].size, 4);
  EXPECT_EQ(r.arguments[5].valueKind, "by_value");
  EXPECT_TRUE(r.warnings.empty());
}

TEST(KernelReport, GemmSteadyState) {
  std::vector<KernelReport> reports = analyzeInput("wave_tile_32x32.s");
  ASSERT_EQ(reports.size(), 1u);
  const KernelReport &r = reports[0];
  const SteadyState &s = r.steadyState;
  EXPECT_EQ(s.scope, SteadyState::Scope::MfmaLoop);
  EXPECT_EQ(s.label, ".LBB0_2");
  EXPECT_EQ(s.firstLine, 52u);
  EXPECT_EQ(s.lastLine, 78u);
  const LoopMix &m = s.mix;
  EXPECT_EQ(m.mfma32x32x64, 4);
  EXPECT_EQ(m.mfma16x16x128, 0);
  EXPECT_EQ(m.otherMfma, 0);
  EXPECT_EQ(m.globalLoads, 10);
  EXPECT_EQ(m.directToLdsLoads, 0);
  EXPECT_EQ(m.ldsReads + m.ldsWrites, 0);
  EXPECT_EQ(m.waits, 4);
  EXPECT_EQ(m.valu, 4);
  EXPECT_EQ(m.salu, 4); // s_add_u32, s_addc_u32, s_cmp_lg_u64, s_nop 0
  EXPECT_EQ(m.branches, 1);
  EXPECT_EQ(m.total, 27);
  // 2 dword scale loads + 8 dwordx4 fragment loads, 64 lanes each.
  EXPECT_EQ(m.globalBytes, (2 * 4 + 8 * 16) * 64);
  EXPECT_EQ(m.mfmaCycles, 4 * 32);
  EXPECT_EQ(m.issueCycles, 10 + 4 * 4 + 3 + 1 + 4 + 1 + 4 * 4);
  EXPECT_DOUBLE_EQ(m.mfmaFlops, 4 * 131072.0);

  // One-wave workgroups: 52 VGPRs allow 9 waves, the SIMD holds 8.
  EXPECT_EQ(r.wavesPerWorkgroup, 1);
  EXPECT_EQ(r.wavesPerSimd, 8);
  EXPECT_EQ(r.wavesPerCu, 32);
  EXPECT_EQ(r.occupancyLimiter, "waves");
  // Without operand reuse the loop streams 60 FLOP per byte from L2:
  // 32 waves x 8704 B / 64 B/clk against 8 waves x 128 MFMA cycles.
  EXPECT_EQ(r.bound, "l2");
  EXPECT_DOUBLE_EQ(r.roundL2Cycles, 32.0 * 8704 / 64);
  EXPECT_DOUBLE_EQ(r.roundMfmaCycles, 8.0 * 128);
  EXPECT_NEAR(r.mfmaBusy, 1024.0 / 4352.0, 1e-12);
  EXPECT_NEAR(r.estimatedTflops, r.mfmaBusy * 256 * 16384 * 2.4 / 1000, 1e-6);
  EXPECT_NEAR(r.estimatedSustainedTflops, r.estimatedTflops * 1.47 / 2.4, 1e-6);
  // The whole kernel has the loop plus the prologue and the stores.
  EXPECT_EQ(r.wholeKernel.mfma32x32x64, 4);
  EXPECT_EQ(r.wholeKernel.globalStores, 4);
  EXPECT_EQ(r.wholeKernel.scalarLoads, 3);
}

TEST(KernelReport, LdsGemmDirectToLds) {
  std::vector<KernelReport> reports = analyzeInput("lds_tile_32x32.s");
  ASSERT_EQ(reports.size(), 1u);
  const KernelReport &r = reports[0];
  EXPECT_EQ(r.name, "lds_tile_32x32");
  EXPECT_EQ(r.ldsBytes, 8192);
  EXPECT_EQ(r.wavesPerWorkgroup, 4);
  const LoopMix &m = r.steadyState.mix;
  EXPECT_EQ(m.mfma16x16x128, 2);
  EXPECT_EQ(m.directToLdsLoads, 2); // global_load_lds_dwordx4
  EXPECT_EQ(m.directToLdsBytes, 2 * 16 * 64);
  EXPECT_EQ(m.globalLoads, 2); // the scale dwords
  EXPECT_EQ(m.ldsReads, 4);    // ds_read_b128
  EXPECT_EQ(m.ldsReadBytes, 4 * 16 * 64);
  EXPECT_EQ(m.ldsWriteBytes, m.directToLdsBytes);
  EXPECT_EQ(m.barriers, 2);
  EXPECT_EQ(m.waits, 3);
  EXPECT_EQ(m.mfmaCycles, 2 * 16);
  EXPECT_EQ(r.bound, "lds");
  EXPECT_EQ(r.workgroupsPerCu, 8);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(KernelReport, QuantizeHasNoLoopAndUsesScratch) {
  std::vector<KernelReport> reports = analyzeInput("quantize_mxfp4.s");
  ASSERT_EQ(reports.size(), 1u);
  const KernelReport &r = reports[0];
  EXPECT_EQ(r.name, "quantize_mxfp4");
  EXPECT_EQ(r.steadyState.scope, SteadyState::Scope::WholeKernel);
  EXPECT_TRUE(r.steadyState.label.empty());
  EXPECT_EQ(r.scratchBytes, 64);
  EXPECT_EQ(r.vgprSpills, 0);
  const LoopMix &m = r.steadyState.mix;
  EXPECT_EQ(m.getMfmaCount(), 0);
  EXPECT_EQ(m.globalLoads, 8);  // 32 floats per lane
  EXPECT_EQ(m.globalStores, 2); // 16 FP4 bytes + 1 scale byte
  EXPECT_EQ(m.globalBytes, (8 * 16 + 16 + 1) * 64);
  EXPECT_EQ(m.scratchAccesses, 8);
  EXPECT_EQ(m.total, r.wholeKernel.total);
  EXPECT_EQ(r.mfmaBusy, 0);
  EXPECT_EQ(r.estimatedTflops, 0);
  std::string warnings = llvm::join(r.warnings, "\n");
  EXPECT_NE(warnings.find("64 bytes of scratch per lane without spills"),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("no loop"), std::string::npos);
  EXPECT_NE(warnings.find("no MFMA"), std::string::npos);
}

TEST(KernelReport, SpillsAreReported) {
  std::vector<KernelReport> reports = analyzeInput("spill_tile.s");
  ASSERT_EQ(reports.size(), 1u);
  const KernelReport &r = reports[0];
  EXPECT_EQ(r.vgprSpills, 354);
  EXPECT_EQ(r.scratchBytes, 524);
  EXPECT_EQ(r.steadyState.scope, SteadyState::Scope::MfmaLoop);
  EXPECT_EQ(r.steadyState.mix.mfma32x32x64, 8);
  EXPECT_GT(r.steadyState.mix.scratchAccesses, 0);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("354 VGPR spills"), std::string::npos)
      << r.warnings[0];
  // The spill traffic counts against L2 and makes the loop memory-bound.
  EXPECT_EQ(r.bound, "l2");
}

TEST(KernelReport, Json) {
  std::vector<KernelReport> reports = analyzeInput("wave_tile_32x32.s");
  std::string text = formatJSON(reports);
  auto parsed = llvm::json::parse(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const llvm::json::Object *root = parsed->getAsObject();
  ASSERT_TRUE(root);
  EXPECT_EQ(root->getObject("model")->getNumber("clockGHz"), 2.4);
  const llvm::json::Array *kernels = root->getArray("kernels");
  ASSERT_TRUE(kernels);
  ASSERT_EQ(kernels->size(), 1u);
  const llvm::json::Object *k = (*kernels)[0].getAsObject();
  EXPECT_EQ(k->getString("name"), "wave_tile_32x32");
  EXPECT_EQ(k->getInteger("vgprs"), 52);
  EXPECT_EQ(k->getInteger("sgprs"), 22);
  EXPECT_EQ(k->getInteger("kernargBytes"), 44);
  EXPECT_EQ(k->getArray("arguments")->size(), 6u);
  EXPECT_EQ(
      (*k->getArray("arguments"))[5].getAsObject()->getString("valueKind"),
      "by_value");
  EXPECT_EQ(k->getObject("occupancy")->getInteger("wavesPerSimd"), 8);
  const llvm::json::Object *steady = k->getObject("steadyState");
  EXPECT_EQ(steady->getString("scope"), "mfma-loop");
  EXPECT_EQ(steady->getString("label"), ".LBB0_2");
  EXPECT_EQ(steady->getObject("mix")->getInteger("mfma32x32x64"), 4);
  EXPECT_EQ(steady->getObject("mix")->getInteger("globalBytes"), 8704);
  EXPECT_EQ(k->getObject("round")->getString("bound"), "l2");
  EXPECT_NEAR(*k->getNumber("mfmaBusy"), reports[0].mfmaBusy, 1e-12);
  EXPECT_NEAR(*k->getNumber("estimatedTflops"), reports[0].estimatedTflops,
              1e-9);
  EXPECT_EQ(k->getArray("warnings")->size(), 0u);

  std::string table = formatTable(reports);
  EXPECT_EQ(llvm::count(table, '\n'), 1);
  EXPECT_NE(table.find("wave_tile_32x32: vgpr 52"), std::string::npos) << table;
  EXPECT_NE(table.find("4 mfma32x32x64"), std::string::npos) << table;
}

//===----------------------------------------------------------------------===//
// Synthetic loops
//===----------------------------------------------------------------------===//

TEST(KernelReport, PicksInnermostMfmaLoop) {
  std::string body = std::string(".LBB0_1:\n"
                                 "\tv_add_f32_e32 v1, v2, v3\n"
                                 ".LBB0_2:\n"
                                 "\tv_mul_f32_e32 v1, v2, v3\n"
                                 "\ts_cbranch_scc1 .LBB0_2\n"
                                 ".LBB0_3:\n") +
                     kFp4Mfma16.str() + kFp4Mfma16.str() +
                     "\ts_cbranch_vccnz .LBB0_3\n"
                     ".LBB0_4:\n" +
                     kFp4Mfma16.str() +
                     "\ts_cbranch_scc0 .LBB0_4\n"
                     "\ts_cbranch_scc1 .LBB0_1\n";
  KernelReport r = analyzeOne(makeAssembly(body));
  EXPECT_EQ(r.steadyState.scope, SteadyState::Scope::MfmaLoop);
  // Of the two innermost MFMA loops, the one with more MFMA cycles.
  EXPECT_EQ(r.steadyState.label, ".LBB0_3");
  EXPECT_EQ(r.steadyState.mix.mfma16x16x128, 2);
  EXPECT_EQ(r.steadyState.mix.total, 3);
  EXPECT_EQ(r.wholeKernel.mfma16x16x128, 3);
}

TEST(KernelReport, SeveralKernels) {
  // As the printer lays out a module of two kernels: each function ends at
  // its kernel descriptor (.section .rodata), the metadata lists both.
  std::string first = makeAssembly(".LBB0_1:\n" + kFp4Mfma16.str() +
                                   "\ts_cbranch_scc1 .LBB0_1\n");
  std::string text = first.substr(0, first.find("\t.amdgpu_metadata")) +
                     "\t.section\t.rodata\n\t.text\n\t.globl\tsecond\nsecond:\n"
                     "\tv_add_f32_e32 v1, v2, v3\n\ts_endpgm\n.Lfunc_end1:\n" +
                     first.substr(first.find("\t.amdgpu_metadata"));
  text.insert(text.find("amdhsa.target"),
              "  - .name: second\n    .vgpr_count: 8\n    .sgpr_count: 8\n"
              "    .private_segment_fixed_size: 0\n"
              "    .group_segment_fixed_size: 0\n"
              "    .kernarg_segment_size: 0\n"
              "    .max_flat_workgroup_size: 64\n    .wavefront_size: 64\n");
  auto reports = analyzeGfx950Assembly(text, {}, "two.s");
  ASSERT_TRUE(bool(reports)) << llvm::toString(reports.takeError());
  ASSERT_EQ(reports->size(), 2u);
  EXPECT_EQ((*reports)[0].name, "k");
  EXPECT_EQ((*reports)[0].steadyState.mix.mfma16x16x128, 1);
  EXPECT_EQ((*reports)[0].wholeKernel.total, 3);
  EXPECT_EQ((*reports)[1].name, "second");
  EXPECT_EQ((*reports)[1].wholeKernel.valu, 1);
  EXPECT_EQ((*reports)[1].wholeKernel.total, 2);
  EXPECT_EQ(llvm::count(formatTable(*reports), '\n'), 2);
}

TEST(KernelReport, HottestLoopWithoutMfma) {
  std::string body = ".LBB0_1:\n"
                     "\tv_add_f32_e32 v1, v2, v3\n"
                     "\ts_cbranch_scc1 .LBB0_1\n"
                     ".LBB0_2:\n"
                     "\tv_add_f32_e32 v1, v2, v3\n"
                     "\tv_exp_f32_e32 v1, v1\n"
                     "\ts_nop 7\n"
                     "\ts_branch .LBB0_2\n";
  KernelReport r = analyzeOne(makeAssembly(body));
  EXPECT_EQ(r.steadyState.scope, SteadyState::Scope::HottestLoop);
  EXPECT_EQ(r.steadyState.label, ".LBB0_2");
  // v_add 4 + transcendental 16 + s_nop 7 (8 cycles) + branch 1.
  EXPECT_EQ(r.steadyState.mix.issueCycles, 4 + 16 + 8 + 1);
  EXPECT_EQ(r.bound, "issue");
  std::string warnings = llvm::join(r.warnings, "\n");
  EXPECT_NE(warnings.find("no loop contains an MFMA"), std::string::npos);
}

TEST(KernelReport, ForwardBranchesAreNotLoops) {
  std::string body = "\ts_cbranch_execz .LBB0_2\n"
                     "\tv_add_f32_e32 v1, v2, v3\n"
                     ".LBB0_2:\n"
                     "\tv_add_f32_e32 v1, v2, v3\n";
  KernelReport r = analyzeOne(makeAssembly(body));
  EXPECT_EQ(r.steadyState.scope, SteadyState::Scope::WholeKernel);
  EXPECT_EQ(r.steadyState.mix.total, 4);
  EXPECT_EQ(r.steadyState.mix.branches, 1);
}

TEST(KernelReport, MemoryClassification) {
  std::string body = ".LBB0_1:\n"
                     "\tbuffer_load_dwordx4 v1, s[4:7], 0 offen lds\n"
                     "\tbuffer_load_dword v2, v1, s[4:7], 0 offen\n"
                     "\tglobal_load_ubyte v3, v[4:5], off\n"
                     "\tds_read2_b64 v[8:11], v1 offset1:8\n"
                     "\tds_read_b64_tr_b4 v[8:9], v1\n"
                     "\tds_write_b128 v1, v[8:11]\n"
                     "\tds_bpermute_b32 v1, v2, v3\n"
                     "\tscratch_store_dwordx4 off, v[0:3], off\n"
                     "\tbuffer_store_short v1, v2, s[4:7], 0 offen\n"
                     "\ts_load_dwordx2 s[0:1], s[4:5], 0x0\n"
                     "\ts_waitcnt vmcnt(0) lgkmcnt(0)\n"
                     "\ts_barrier\n"
                     "\ts_cbranch_scc1 .LBB0_1\n";
  KernelReport r = analyzeOne(makeAssembly(body));
  const LoopMix &m = r.steadyState.mix;
  EXPECT_EQ(m.directToLdsLoads, 1);
  EXPECT_EQ(m.directToLdsBytes, 16 * 64);
  EXPECT_EQ(m.bufferLoads, 1);
  EXPECT_EQ(m.globalLoads, 1);
  EXPECT_EQ(m.globalStores, 1);
  EXPECT_EQ(m.globalBytes, (16 + 4 + 1 + 2) * 64);
  EXPECT_EQ(m.ldsReads, 2);
  EXPECT_EQ(m.ldsReadBytes, (16 + 8) * 64);
  EXPECT_EQ(m.ldsWrites, 1);
  EXPECT_EQ(m.ldsWriteBytes, (16 + 16) * 64);
  EXPECT_EQ(m.ldsOther, 1);
  EXPECT_EQ(m.scratchAccesses, 1);
  EXPECT_EQ(m.scratchBytes, 16 * 64);
  EXPECT_EQ(m.scalarLoads, 1);
  EXPECT_EQ(m.waits, 1);
  EXPECT_EQ(m.barriers, 1);
  EXPECT_EQ(m.total, 13);
}

TEST(KernelReport, Fp8OperandsDoubleTheMfmaCycles) {
  std::string body = ".LBB0_1:\n"
                     "\tv_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], "
                     "v[12:19], v[0:3], v20, v21 op_sel_hi:[0,0,0]\n"
                     "\tv_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[4:11], "
                     "v[12:15], v[0:15], v20, v21 op_sel_hi:[0,0,0] blgp:4\n"
                     "\tv_mfma_f32_32x32x16_bf16 v[0:15], v[4:7], v[8:11], "
                     "v[0:15]\n"
                     "\ts_cbranch_scc1 .LBB0_1\n";
  KernelReport r = analyzeOne(makeAssembly(body));
  const LoopMix &m = r.steadyState.mix;
  EXPECT_EQ(m.mfma16x16x128, 1);
  EXPECT_EQ(m.mfma32x32x64, 1);
  EXPECT_EQ(m.otherMfma, 1);
  // No cbsz means format 0 (FP8) for A: both f8f6f4 MFMAs take twice as long.
  EXPECT_EQ(m.mfmaCycles, 2 * 16 + 2 * 32 + 32);
  EXPECT_DOUBLE_EQ(m.mfmaFlops, 65536.0 + 131072.0 + 2.0 * 32 * 32 * 16);
}

/// The calibration anchor: a loop that only issues FP4 MFMAs keeps the
/// matrix cores busy, i.e. the 10.07 PF peak; at the sustained clock that is
/// 6.17 PF, and AMD's best kernel (~94 % busy) measures ~5.8 PF.
TEST(KernelReport, PureMfmaLoopReachesPeak) {
  std::string body = ".LBB0_1:\n";
  for (int i = 0; i < 16; ++i)
    body += kFp4Mfma16.str();
  body += "\ts_cbranch_scc1 .LBB0_1\n";
  KernelReport r = analyzeOne(makeAssembly(body, /*vgprs=*/128));
  EXPECT_EQ(r.wavesPerSimd, 4);
  EXPECT_EQ(r.occupancyLimiter, "vgpr");
  EXPECT_EQ(r.bound, "mfma");
  EXPECT_DOUBLE_EQ(r.mfmaBusy, 1.0);
  EXPECT_NEAR(r.estimatedTflops, 10066.3, 0.1);
  EXPECT_NEAR(r.estimatedSustainedTflops * 0.94, 5795, 1);

  // The constants are parameters.
  IssueModel mi350;
  mi350.clockGHz = 2.2;
  EXPECT_NEAR(analyzeOne(makeAssembly(body, 128), mi350).estimatedTflops,
              256 * 16384 * 2.2 / 1000, 1e-6);
}

TEST(KernelReport, Occupancy) {
  std::string body = kFp4Mfma16.str();
  // 512 unified registers per lane: 256 allow 2 waves per SIMD; 4-wave
  // workgroups then fit twice per CU.
  KernelReport r = analyzeOne(makeAssembly(body, /*vgprs=*/256));
  EXPECT_EQ(r.wavesPerSimd, 2);
  EXPECT_EQ(r.workgroupsPerCu, 2);
  // LDS: 100 KiB leaves room for one workgroup of 160 KiB.
  r = analyzeOne(
      makeAssembly(body, 64, 256, "    .group_segment_fixed_size: 102400\n"));
  EXPECT_EQ(r.workgroupsPerCu, 1);
  EXPECT_EQ(r.occupancyLimiter, "lds");
  EXPECT_EQ(r.wavesPerSimd, 1);
  // Granule: 129 registers allocate 136, so 3 waves.
  r = analyzeOne(makeAssembly(body, 129, 64));
  EXPECT_EQ(r.wavesPerSimd, 3);
  // Does not fit: more LDS than a CU has.
  r = analyzeOne(
      makeAssembly(body, 64, 256, "    .group_segment_fixed_size: 200000\n"));
  EXPECT_EQ(r.workgroupsPerCu, 0);
  EXPECT_EQ(r.occupancyLimiter, "none");
  EXPECT_EQ(r.estimatedTflops, 0);
}

//===----------------------------------------------------------------------===//
// Launch estimates
//===----------------------------------------------------------------------===//

TEST(KernelReport, LaunchTailEffect) {
  std::vector<KernelReport> reports = analyzeInput("wave_tile_32x32.s");
  ASSERT_EQ(reports.size(), 1u);
  const KernelReport &r = reports[0];
  // 4096 x 4096 x 8192 in 32 x 32 tiles: 16384 one-wave workgroups, each
  // running K / 256 = 32 iterations; two full rounds of 256 x 32.
  auto full = estimateLaunch(r, {16384, 4096, 4096, 8192});
  ASSERT_TRUE(bool(full)) << llvm::toString(full.takeError());
  EXPECT_EQ(full->concurrentWorkgroups, 256 * 32);
  EXPECT_EQ(full->rounds, 2);
  EXPECT_DOUBLE_EQ(full->tailEfficiency, 1.0);
  EXPECT_DOUBLE_EQ(full->iterationsPerWave, 32.0);
  EXPECT_NEAR(full->estimatedTflops, r.estimatedTflops, 1e-6);
  EXPECT_NEAR(full->microseconds, 2.0 * 32 * 4352 / 2400.0,
              1e-9); // rounds x iterations x cycles
  // One workgroup more costs a third round with a single wave per CU.
  auto tail = estimateLaunch(r, {8193, 0, 0, 0});
  ASSERT_TRUE(bool(tail)) << llvm::toString(tail.takeError());
  EXPECT_EQ(tail->rounds, 2);
  EXPECT_NEAR(tail->tailEfficiency, 8193.0 / 16384.0, 1e-12);
  EXPECT_LT(tail->estimatedTflops, r.estimatedTflops);
  EXPECT_EQ(tail->microseconds, 0); // no shape, no time
  // A grid smaller than the GPU: 64 workgroups on 64 CUs, one wave each;
  // a lone wave's round is 8704 B / 64 B/clk = 136 cycles (latency is not
  // modelled, so this is optimistic).
  auto small = estimateLaunch(r, {64, 0, 0, 0});
  ASSERT_TRUE(bool(small));
  EXPECT_EQ(small->rounds, 1);
  EXPECT_NEAR(small->estimatedTflops, 64 * 524288.0 / 136 * 2.4 / 1000, 1e-6);

  auto both = analyzeGfx950Assembly(readInput("wave_tile_32x32.s"),
                                    LaunchShape{16384, 4096, 4096, 8192});
  ASSERT_TRUE(bool(both)) << llvm::toString(both.takeError());
  EXPECT_DOUBLE_EQ((*both)[0].second.iterationsPerWave, 32.0);

  EXPECT_NE(errorOf(estimateLaunch(r, {0, 0, 0, 0}))
                .find("kernel 'wave_tile_32x32': the launch needs a positive"),
            std::string::npos);
  EXPECT_NE(errorOf(estimateLaunch(r, {16, 128, 0, 0})).find("M, N and K"),
            std::string::npos);
}

TEST(KernelReport, LaunchIterationsWithoutShape) {
  std::vector<KernelReport> reports = analyzeInput("wave_tile_32x32.s");
  ASSERT_EQ(reports.size(), 1u);
  const KernelReport &r = reports[0];
  // The GEMM's 32 iterations a wave given directly time the launch as its
  // shape does.
  auto shaped = estimateLaunch(r, {16384, 4096, 4096, 8192});
  LaunchShape counted{16384, 0, 0, 0};
  counted.iterationsPerWave = 32;
  auto direct = estimateLaunch(r, counted);
  ASSERT_TRUE(bool(shaped) && bool(direct));
  EXPECT_DOUBLE_EQ(direct->iterationsPerWave, 32.0);
  EXPECT_NEAR(direct->microseconds, shaped->microseconds, 1e-9);
  EXPECT_NEAR(direct->estimatedTflops, shaped->estimatedTflops, 1e-6);
  // Half the iterations, half the time.
  counted.iterationsPerWave = 16;
  auto half = estimateLaunch(r, counted);
  ASSERT_TRUE(bool(half));
  EXPECT_NEAR(half->microseconds, shaped->microseconds / 2, 1e-9);

  LaunchShape both{16384, 4096, 4096, 8192};
  both.iterationsPerWave = 32;
  EXPECT_NE(errorOf(estimateLaunch(r, both)).find("without a GEMM shape"),
            std::string::npos);
  counted.iterationsPerWave = -1;
  EXPECT_NE(errorOf(estimateLaunch(r, counted)).find("must be positive"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Bad input
//===----------------------------------------------------------------------===//

TEST(KernelReport, NoMetadataBlock) {
  std::string message =
      errorOf(analyzeGfx950Assembly("hello world\n", {}, "garbage.s"));
  EXPECT_NE(message.find("garbage.s: no .amdgpu_metadata block"),
            std::string::npos)
      << message;
  message = errorOf(analyzeGfx950Assembly("", {}, "empty.s"));
  EXPECT_NE(message.find("empty.s: no .amdgpu_metadata"), std::string::npos);
  message = errorOf(analyzeGfx950Assembly(
      "k:\n\ts_endpgm\n\t.amdgpu_metadata\n---\n", {}, "open.s"));
  EXPECT_NE(message.find("open.s:3: .amdgpu_metadata block without "
                         ".end_amdgpu_metadata"),
            std::string::npos)
      << message;
}

TEST(KernelReport, BadYamlNamesTheLine) {
  std::string assembly = "k:\n"                   // 1
                         "\ts_endpgm\n"           // 2
                         "\t.amdgpu_metadata\n"   // 3
                         "---\n"                  // 4
                         "amdhsa.kernels:\n"      // 5
                         "  - .name: [unclosed\n" // 6
                         "    .vgpr_count: 3\n"   // 7
                         "...\n"
                         "\t.end_amdgpu_metadata\n";
  std::string message = errorOf(analyzeGfx950Assembly(assembly, {}, "bad.s"));
  // The scanner notices the missing ']' at the end of the document.
  EXPECT_NE(message.find("bad.s:8: invalid .amdgpu_metadata YAML: Could not "
                         "find closing ]"),
            std::string::npos)
      << message;
}

TEST(KernelReport, BadMetadataFields) {
  std::string assembly = makeAssembly("");
  std::string noVgprs = assembly;
  noVgprs.replace(noVgprs.find("    .vgpr_count: 64\n"), 20, "");
  std::string message = errorOf(analyzeGfx950Assembly(noVgprs, {}, "a.s"));
  EXPECT_NE(message.find("kernel 'k': missing .vgpr_count"), std::string::npos)
      << message;

  std::string text = assembly;
  text.replace(text.find(".vgpr_count: 64"), 15, ".vgpr_count: lots");
  message = errorOf(analyzeGfx950Assembly(text, {}, "a.s"));
  EXPECT_NE(message.find("kernel 'k': .vgpr_count is not an integer: 'lots'"),
            std::string::npos)
      << message;

  message = errorOf(analyzeGfx950Assembly(
      makeAssembly("", 64, 256,
                   "    .args:\n      - .offset: 4\n        .size: 8\n"
                   "        .value_kind: global_buffer\n"),
      {}, "a.s"));
  EXPECT_NE(message.find(".args[0] at offset 4 size 8 ends past "
                         ".kernarg_segment_size 8"),
            std::string::npos)
      << message;

  message = errorOf(analyzeGfx950Assembly(
      makeAssembly("", 64, 256, "    .args:\n      - .offset: 0\n"), {},
      "a.s"));
  EXPECT_NE(message.find(".args[0] has no .size"), std::string::npos)
      << message;

  text = assembly;
  text.replace(text.find(".wavefront_size: 64"), 19, ".wavefront_size: 48");
  message = errorOf(analyzeGfx950Assembly(text, {}, "a.s"));
  EXPECT_NE(message.find("expected 32 or 64"), std::string::npos) << message;

  text = assembly;
  text.replace(text.find("amdhsa.kernels:\n"), 16, "amdhsa.kernels: []\n");
  text.erase(text.find("  - .name"),
             text.find("amdhsa.target") - text.find("  - .name"));
  message = errorOf(analyzeGfx950Assembly(text, {}, "a.s"));
  EXPECT_NE(message.find("lists no kernels"), std::string::npos) << message;
}

TEST(KernelReport, KernelWithoutCode) {
  std::string text = makeAssembly("\tv_add_f32_e32 v1, v2, v3\n");
  text.replace(text.find("\nk:\n"), 4, "\nother:\n");
  std::string message = errorOf(analyzeGfx950Assembly(text, {}, "a.s"));
  EXPECT_NE(message.find("a.s: kernel 'k' is in .amdgpu_metadata but its "
                         "code (a line 'k:') is not in the assembly"),
            std::string::npos)
      << message;

  text = "k:\n.Lfunc_end0:\n" +
         makeAssembly("").substr(makeAssembly("").find("\t.amdgpu_metadata"));
  message = errorOf(analyzeGfx950Assembly(text, {}, "a.s"));
  EXPECT_NE(message.find("a.s:1: kernel 'k' has no instructions"),
            std::string::npos)
      << message;
}

//===----------------------------------------------------------------------===//
// Code objects
//===----------------------------------------------------------------------===//

TEST(CodeObject, ReadsTheMetadataNote) {
  auto object = readCodeObjectFile(inputPath("wave_tile_32x32.hsaco"));
  ASSERT_TRUE(bool(object)) << llvm::toString(object.takeError());
  EXPECT_EQ(object->processor, "gfx950");
  EXPECT_TRUE(object->isGfx950());
  EXPECT_EQ(object->elfFlags, 0x54fu); // gfx950, xnack any, sramecc any
  EXPECT_EQ(object->metadata.target, "amdgcn-amd-amdhsa--gfx950");
  EXPECT_EQ(object->metadata.version, (std::vector<int64_t>{1, 2}));
  ASSERT_EQ(object->metadata.kernels.size(), 1u);

  // The note says what the assembly's YAML says.
  auto fromAssembly =
      parseAssemblyMetadata(readInput("wave_tile_32x32.s"), "k.s");
  ASSERT_TRUE(bool(fromAssembly)) << llvm::toString(fromAssembly.takeError());
  const KernelMetadata &a = object->metadata.kernels[0];
  const KernelMetadata &b = fromAssembly->kernels[0];
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.symbol, b.symbol);
  EXPECT_EQ(a.vgprs, b.vgprs);
  EXPECT_EQ(a.sgprs, b.sgprs);
  EXPECT_EQ(a.kernargBytes, b.kernargBytes);
  EXPECT_EQ(a.maxFlatWorkgroupSize, b.maxFlatWorkgroupSize);
  EXPECT_EQ(a.requiredWorkgroupSize, b.requiredWorkgroupSize);
  ASSERT_EQ(a.arguments.size(), b.arguments.size());
  for (size_t i = 0; i < a.arguments.size(); ++i) {
    EXPECT_EQ(a.arguments[i].offset, b.arguments[i].offset);
    EXPECT_EQ(a.arguments[i].size, b.arguments[i].size);
    EXPECT_EQ(a.arguments[i].valueKind, b.arguments[i].valueKind);
  }
  EXPECT_NE(object->metadata.findKernel("wave_tile_32x32"), nullptr);
  EXPECT_EQ(object->metadata.findKernel("nope"), nullptr);

  KernargLayout layout = getKernargLayout(a);
  EXPECT_EQ(layout.kernelName, "wave_tile_32x32");
  ASSERT_EQ(layout.slots.size(), 6u);
  EXPECT_EQ(layout.slots[5].offset, 40);
  EXPECT_EQ(layout.slots[5].size, 4);
  EXPECT_EQ(layout.segmentSize, 44);
  EXPECT_EQ(layout.getExplicitSize(), 44);
}

TEST(CodeObject, HiddenArgumentsAreNotSlots) {
  KernelMetadata kernel;
  kernel.name = "h";
  kernel.kernargBytes = 272;
  kernel.arguments = {{"", 0, 8, "global_buffer", "global"},
                      {"", 8, 4, "by_value", ""},
                      {"", 16, 4, "hidden_block_count_x", ""}};
  KernargLayout layout = getKernargLayout(kernel);
  ASSERT_EQ(layout.slots.size(), 2u);
  EXPECT_EQ(layout.getExplicitSize(), 12);
  EXPECT_EQ(layout.segmentSize, 272);
}

TEST(CodeObject, OtherProcessorsAndBadFiles) {
  std::string bytes = readInput("wave_tile_32x32.hsaco");
  ASSERT_GT(bytes.size(), 64u);
  // e_flags is at offset 48 of an ELF64 header; 0x4c is gfx942.
  std::string gfx942 = bytes;
  gfx942[48] = 0x4c;
  auto object = readCodeObject(gfx942, "mi300.hsaco");
  ASSERT_TRUE(bool(object)) << llvm::toString(object.takeError());
  EXPECT_FALSE(object->isGfx950());
  EXPECT_EQ(object->processor, "gfx942");

  std::string x86 = bytes;
  x86[18] = 62; // e_machine = EM_X86_64
  x86[19] = 0;
  std::string message = errorOf(readCodeObject(x86, "x86.o"));
  EXPECT_NE(message.find("x86.o: ELF machine 62 is not EM_AMDGPU"),
            std::string::npos)
      << message;

  message = errorOf(readCodeObject("not an elf", "text.hsaco"));
  EXPECT_NE(message.find("text.hsaco: not an ELF code object"),
            std::string::npos)
      << message;
  // Truncated objects are errors, not crashes.
  for (size_t size : {size_t(4), size_t(40), size_t(100), bytes.size() / 2}) {
    auto truncated = readCodeObject(StringRef(bytes).take_front(size), "t");
    if (truncated)
      ADD_FAILURE() << "a " << size << "-byte prefix was accepted";
    else
      llvm::consumeError(truncated.takeError());
  }
  message = errorOf(readCodeObjectFile(inputPath("does-not-exist.hsaco")));
  EXPECT_NE(message.find("cannot read"), std::string::npos) << message;
}

} // namespace
