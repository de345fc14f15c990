//===- Attention.h - the causal attention composites -------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The causal_attention and causal_attention_backward composites
// (mxfp4/Dialect/MXFP4/Transforms/Composites.h) as functions of a module:
// one private function per kind and operand shapes, whose body is the f32
// reference decomposition.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_MODELS_ATTENTION_H
#define MXFP4_MODELS_ATTENTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace mlir::mxfp4 {

/// The composite function's name for `kind` and operand types `args`:
/// `<kind>_<shape>_<shape>...` (e.g. causal_attention_2x64x8x64_2x64x4x64_...).
std::string getAttentionCompositeName(StringRef kind, TypeRange args);

/// What is wrong with operand types `args` for the composite `kind`
/// (q [B, S, H, D], k and v [B, S, KVH, D], static f32, H a multiple of KVH;
/// the backward also o and dO as q and lse [B, H, S]), or an empty string.
std::string verifyAttentionCompositeTypes(StringRef kind, TypeRange args);

/// The composite `kind` for operands of types `args` in `module`: the
/// existing function of that name, or a new private one at the module's
/// end. The types must pass verifyAttentionCompositeTypes.
func::FuncOp getOrCreateAttentionComposite(ModuleOp module, Location loc,
                                           StringRef kind, TypeRange args);

} // namespace mlir::mxfp4

#endif // MXFP4_MODELS_ATTENTION_H
