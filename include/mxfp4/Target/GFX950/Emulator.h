//===- Emulator.h - run gfx950 kernels on the host, lane by lane -*- C++
//-*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An SIMT interpreter for the kernels the gfx950 generators emit, so they
// can be verified without an MI355X. It executes the kernel IR itself (after
// `convert-arith-to-amdgpu{chipset=gfx950}` + canonicalize/cse, before any
// ROCDL/LLVM lowering): its index math, LDS staging, lane layouts and scale
// selection, so a wrong lane mapping gives wrong numbers.
//
// Model:
//  * The host function is interpreted op by op: func.return, arith.constant,
//    memref.alloc (filled with the poison byte 0xCD, since hardware does not
//    zero memory), memref.dealloc, memref.memory_space_cast (a view) and
//    gpu.launch_func; anything else is a located error.
//  * Each `gpu.func` is translated once into a flat program with value slots.
//    Workgroups run in order of block x, then y, then z; inside a workgroup
//    all threads run in lockstep op by op (each value is an array over the
//    threads), so barriers need no scheduling. Linear thread id =
//    x + y*bx + z*bx*by, wave = id / 64, lane = id % 64. Divergent scf.if /
//    scf.for run their regions with a per-thread active mask.
//  * Workgroup attributions (LDS) are poison-filled (0xCD) per workgroup.
//  * Out-of-bounds accesses to global or LDS memrefs are errors naming the op,
//    workgroup, thread and byte offset. On `fat_raw_buffer_cast` memrefs
//    (bounds-checked buffer loads) each element past the valid byte range
//    (`validBytes`, else the source memref's size) loads 0 and stores are
//    dropped; with boundsCheck(false) they are checked like global memory.
//  * amdgpu.scaled_mfma (FP4 x FP4 only) gathers the 64 lanes' registers
//    through LaneLayout.h and computes, for each D element,
//      D = C + c_0 + c_1 + ... (K blocks of 32 in increasing K order, each an
//      f32 add with round-to-nearest-even), c_b = (exact sum of the block's
//      32 E2M1 products) * 2^(sA-127) * 2^(sB-127) rounded once to f32.
//    A scale byte 255 gives NaN. Hardware's internal summation order is not
//    documented; this order is the emulator's model. f32 denormals are kept.
//  * amdgpu.mfma with bf16 operands (16x16x32: v_mfma_f32_16x16x32_bf16,
//    32x32x16: v_mfma_f32_32x32x16_bf16; vector<8xbf16> A/B, vector<4xf32> /
//    vector<16xf32> C/D; lane layouts in LaneLayout.h) computes, for each D
//    element, D = C, then D = fma(a_k, b_k, D) for k = 0 .. K-1 in increasing
//    order: each bf16 x bf16 product exact, added to the f32 accumulator
//    with one round-to-nearest-even (f32 denormals kept). The hardware's
//    internal order and intermediate precision are not documented; this is
//    the emulator's model. Other MFMA types, blocks, cbsz/abid/blgp and
//    negation are errors.
//  * gpu.shuffle as convert-gpu-to-rocdl lowers it (ds_bpermute): for lane
//    l of the wave, end = (l + width) & -width, the partner p is l ^ offset,
//    l + offset, l - offset or offset (xor, down, up, idx), valid = p < end
//    as signed i32, and the value comes from lane (valid ? p : l) mod 64.
//    Unlike gpu.shuffle's documentation, nothing bounds p below (an `up`
//    past lane 0 reads lane p mod 64, valid). Reading a lane that is not
//    executing the shuffle is an error.
//  * amdgpu.packed_scaled_trunc to FP4: E2M1(x / 2^(e-127)) with e the
//    exponent field of the f32 scale (e = 0 means 2^-127, e = 255 is treated
//    like a NaN scale), round to nearest even, saturate to +-6, sign kept
//    (a negative that rounds to 0 gives code 8, -0); NaN inputs give code
//    7 | sign. amdgpu.scaled_ext_packed from FP4: value * 2^(e-127).
//    Omitted `existing` operands ("undef") read as zeros.
//  * arith.extf f8E8M0FNU: 2^(e-127) (byte 0 = 2^-127, 255 = NaN). Note that
//    upstream `arith-expand` lowers byte 0 to +0.0, so kernels must never
//    depend on byte 0. arith.truncf to f8E8M0FNU takes the exponent field
//    (floor(log2|x|), Inf/NaN -> 255) like `arith-expand` does. arith.truncf
//    to f4E2M1FN is rejected: upstream lowers it with round-half-up, so
//    kernels must use the scaling ops (which become packed_scaled_trunc).
//  * Float arithmetic rounds to nearest even; vector.reduction of floats
//    accumulates in element order (as LLVM's ordered reductions do).
//  * Where MLIR says "poison" the emulator picks something deterministic:
//    ub.poison and omitted operands read as zeros, shifts by >= the width
//    give 0, fptosi/fptoui saturate (NaN -> 0). Integer division by zero and
//    out-of-range dynamic vector positions in an active thread are errors.
//  * Buffer bounds are checked per element for loads/stores and per dword
//    for gather_to_lds (whose LDS destination is the wave's first lane's
//    index; lane i writes at base + i * max(4, transfer size rounded up to
//    4, 8 or 16) bytes, narrower transfers zero-extended).
//  * gpu.barrier, amdgpu.lds_barrier and the wave-level ops (mfma,
//    scaled_mfma, gather_to_lds) executed by only part of a workgroup
//    (barriers) or part of a wave (wave-level ops) are errors.
//
//
// Two entry points share the kernel executor: emulate() runs a host function
// (copies of its arguments, its own allocations), EmulatedKernelModule runs
// single launches directly on memory the caller owns (a HIP-like driver).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TARGET_GFX950_EMULATOR_H
#define MXFP4_TARGET_GFX950_EMULATOR_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::mxfp4::gfx950 {

/// One argument or result of the host function: the raw little-endian bytes
/// of a memref (exactly its static size) or of a scalar (its natural width:
/// i32/f32 4 bytes, i64/index 8 bytes, i8 1 byte ...).
using EmulatorBuffer = std::vector<uint8_t>;

/// Counters of one emulate() call.
struct EmulatorStats {
  int64_t launches = 0;
  int64_t workgroups = 0;
  /// Wave-level MFMA instructions executed.
  int64_t mfmas = 0;
};

/// The initial bytes of the memref.global that `get` reads (a dense value,
/// splats expanded): what a runtime uploads for it.
llvm::Expected<EmulatorBuffer> getGlobalBytes(memref::GetGlobalOp get);

/// Runs host function `function` of `module` (a `gpu.container_module`),
/// interpreting every `gpu.launch_func`'d `gpu.func` on the host, and returns
/// the bytes of each returned value. Errors (unsupported ops, out-of-bounds
/// accesses, bad arguments) name the location of the offending op.
llvm::Expected<std::vector<EmulatorBuffer>>
emulate(ModuleOp module, llvm::StringRef function,
        llvm::ArrayRef<EmulatorBuffer> arguments,
        EmulatorStats *stats = nullptr);

//===----------------------------------------------------------------------===//
// Single launches over caller-owned memory
//===----------------------------------------------------------------------===//

/// One parameter of a kernel (`gpu.func` argument), as a launcher passes it.
struct EmulatedKernelParam {
  /// A memref (passed as a pointer to its memory) or a scalar.
  bool isMemRef = false;
  /// memref: the byte size of its static type (the bytes the kernel may
  /// address); scalar: its width in bytes (i32/f32 4, i64/index 8, ...).
  int64_t bytes = 0;
  mlir::Type type;
};

/// One argument of a launch: for a memref, `pointer` to its first byte and
/// `bytes` addressable from there (at least the parameter's `bytes`: the
/// kernel sees exactly the memref type's size; the memory stays the
/// caller's, nothing is copied); for a scalar, its bits (little-endian,
/// zero-extended) in `bits`.
struct EmulatedKernelArg {
  void *pointer = nullptr;
  int64_t bytes = 0;
  uint64_t bits = 0;
};

class EmulatedKernelModule;

/// A kernel of an EmulatedKernelModule (owned by it).
class EmulatedKernel {
public:
  llvm::StringRef getName() const { return name; }
  llvm::ArrayRef<EmulatedKernelParam> getParams() const { return params; }

private:
  friend class EmulatedKernelModule;
  EmulatedKernel() = default;
  std::string name;
  std::vector<EmulatedKernelParam> params;
  mlir::Operation *func = nullptr;
};

/// A parsed kernel module (the text `mxfp4-run compile --target=gfx950`
/// writes as kernels.mlir: host functions plus `gpu.module`s) whose kernels
/// are launched one at a time on memory the caller owns: what a HIP-like
/// driver needs (lib/Target/GFX950/EmulatedHip.cpp). Kernels are translated
/// on their first launch and kept. Not thread-safe.
class EmulatedKernelModule {
public:
  ~EmulatedKernelModule();

  /// Parses `text` (errors located in `bufferName`) in a context of its own.
  static llvm::Expected<std::unique_ptr<EmulatedKernelModule>>
  parse(llvm::StringRef text, llvm::StringRef bufferName = "<kernel image>");

  /// Returns the `gpu.func` kernel named `name` in any `gpu.module`, or an
  /// error if there is none or more than one (or a parameter has a type a
  /// launcher cannot pass).
  llvm::Expected<const EmulatedKernel *> getKernel(llvm::StringRef name);

  /// Runs `kernel` on grid `grid` (workgroups) of `block` threads with one
  /// argument per parameter. Errors (sizes, argument sizes, unsupported ops,
  /// out-of-bounds accesses) are located at the kernel's ops; memory already
  /// written stays written.
  llvm::Error launch(const EmulatedKernel &kernel, const int64_t grid[3],
                     const int64_t block[3],
                     llvm::ArrayRef<EmulatedKernelArg> args,
                     EmulatorStats *stats = nullptr);

  ModuleOp getModule();

private:
  struct Impl;
  explicit EmulatedKernelModule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace mlir::mxfp4::gfx950

#endif // MXFP4_TARGET_GFX950_EMULATOR_H
