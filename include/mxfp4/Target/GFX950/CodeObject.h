//===- CodeObject.h - AMDGPU code-object metadata ---------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads the per-kernel metadata of an AMDHSA code object (v4/v5/v6): either
// the YAML text of the `.amdgpu_metadata` block that the assembly printer
// writes (gpu-module-to-binary{format=isa}) or the NT_AMDGPU_METADATA
// MessagePack note of a linked code object (format=bin, a `.hsaco`). Both
// are reduced to the same structures, so the report and the launcher work
// from either.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TARGET_GFX950_CODEOBJECT_H
#define MXFP4_TARGET_GFX950_CODEOBJECT_H

#include "mxfp4/Runtime/HipRuntime.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mxfp4::gfx950 {

/// One entry of a kernel's `.args`.
struct KernelArgument {
  /// `.name`, empty when the metadata has none (MLIR emits none).
  std::string name;
  int64_t offset = 0;
  int64_t size = 0;
  /// `.value_kind`: "global_buffer", "by_value", "hidden_block_count_x", ...
  std::string valueKind;
  /// `.address_space` ("global", "local", ...), empty for by-value arguments.
  std::string addressSpace;

  /// Hidden arguments (value kinds "hidden_*") are filled by the runtime.
  bool isHidden() const;
};

/// The metadata of one kernel (the keys of an `amdhsa.kernels` entry).
struct KernelMetadata {
  std::string name;   ///< `.name`
  std::string symbol; ///< `.symbol` (the kernel descriptor, "<name>.kd")
  /// `.vgpr_count`: on gfx90a and later the unified total of architectural
  /// VGPRs (rounded up to 4) plus AGPRs, i.e. what occupancy depends on.
  int64_t vgprs = 0;
  int64_t agprs = 0;                ///< `.agpr_count` (0 if absent)
  int64_t sgprs = 0;                ///< `.sgpr_count`
  int64_t vgprSpills = 0;           ///< `.vgpr_spill_count`
  int64_t sgprSpills = 0;           ///< `.sgpr_spill_count`
  int64_t scratchBytes = 0;         ///< `.private_segment_fixed_size`, per lane
  int64_t ldsBytes = 0;             ///< `.group_segment_fixed_size`
  int64_t kernargBytes = 0;         ///< `.kernarg_segment_size`
  int64_t kernargAlign = 0;         ///< `.kernarg_segment_align`
  int64_t maxFlatWorkgroupSize = 0; ///< `.max_flat_workgroup_size`
  int64_t wavefrontSize = 0;        ///< `.wavefront_size`
  /// `.reqd_workgroup_size`, all zero when absent.
  std::array<int64_t, 3> requiredWorkgroupSize = {0, 0, 0};
  bool usesDynamicStack = false; ///< `.uses_dynamic_stack`
  std::vector<KernelArgument> arguments;

  /// The work-items of one workgroup: the product of `.reqd_workgroup_size`
  /// if present, else `.max_flat_workgroup_size` (an upper bound).
  int64_t getWorkgroupSize() const;
};

/// The whole metadata map of a code object.
struct CodeObjectMetadata {
  std::string target;           ///< `amdhsa.target`
  std::vector<int64_t> version; ///< `amdhsa.version`
  std::vector<KernelMetadata> kernels;

  /// The kernel called `name`, or null.
  const KernelMetadata *findKernel(llvm::StringRef name) const;
};

/// Parses the YAML document of an `.amdgpu_metadata` block. `sourceName`
/// and `firstLine` (the line of the document in that source) locate errors.
llvm::Expected<CodeObjectMetadata> parseMetadataYAML(llvm::StringRef yaml,
                                                     llvm::StringRef sourceName,
                                                     unsigned firstLine = 1);

/// Finds the `.amdgpu_metadata` ... `.end_amdgpu_metadata` block of an
/// assembly file and parses it.
llvm::Expected<CodeObjectMetadata>
parseAssemblyMetadata(llvm::StringRef assembly, llvm::StringRef sourceName);

/// A linked AMDGPU code object.
struct CodeObject {
  /// The processor named by the ELF header's e_flags ("gfx950").
  std::string processor;
  /// e_flags, including the xnack/sramecc target-feature bits.
  unsigned elfFlags = 0;
  CodeObjectMetadata metadata;

  /// Whether the code object is for gfx950 (EF_AMDGPU_MACH_AMDGCN_GFX950).
  bool isGfx950() const;
};

/// Reads a code object from memory: checks that it is a 64-bit
/// little-endian EM_AMDGPU ELF and decodes its NT_AMDGPU_METADATA note.
llvm::Expected<CodeObject> readCodeObject(llvm::StringRef bytes,
                                          llvm::StringRef sourceName);
llvm::Expected<CodeObject> readCodeObjectFile(llvm::StringRef path);

/// The launcher's view of a kernel's explicit arguments.
KernargLayout getKernargLayout(const KernelMetadata &kernel);

} // namespace mlir::mxfp4::gfx950

#endif // MXFP4_TARGET_GFX950_CODEOBJECT_H
