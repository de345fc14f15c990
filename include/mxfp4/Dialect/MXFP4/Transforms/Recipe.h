//===- Recipe.h - MXFP4 training recipes as data ----------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A recipe says, for each GEMM role of a linear layer (Fprop, Dgrad, Wgrad)
// and each of its two operands, whether the operand is quantized to MXFP4
// and how, and which Hadamard rotation both operands get. Recipes are written
// as text (a preset name, `key=value` settings, or a preset followed by
// settings) so one string picks a whole study arm; docs/Recipes.md has the
// grammar and the presets.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DIALECT_MXFP4_TRANSFORMS_RECIPE_H
#define MXFP4_DIALECT_MXFP4_TRANSFORMS_RECIPE_H

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace mlir::mxfp4 {

/// How one operand of a GEMM is prepared.
struct OperandRecipe {
  bool fp4 = false;
  ScaleRule scaleRule = ScaleRule::even;
  Rounding rounding = Rounding::nearest_even;

  bool operator==(const OperandRecipe &other) const {
    return fp4 == other.fp4 && scaleRule == other.scaleRule &&
           rounding == other.rounding;
  }
};

/// How one GEMM role is computed. Both operands share the rotation so it
/// cancels in the product.
struct RoleRecipe {
  OperandRecipe lhs, rhs;
  std::optional<HadamardKind> hadamard;
  int64_t hadamardSize = 16;

  bool operator==(const RoleRecipe &other) const {
    return lhs == other.lhs && rhs == other.rhs &&
           hadamard == other.hadamard &&
           (!hadamard || hadamardSize == other.hadamardSize);
  }
};

/// Where the token-axis copy of X for Wgrad comes from.
enum class WgradInputSource {
  /// Quantize the high-precision activation along tokens (TE's choice).
  highPrecision,
  /// Dequantize the Fprop's MXFP4 copy of X, as if only it were saved.
  forwardQuantized,
};

struct Recipe {
  RoleRecipe fprop, dgrad, wgrad;
  /// Weights are quantized once per step and shared by every use (same
  /// stochastic-rounding bits for all micro-batches), as TE caches them.
  bool weightCache = true;
  WgradInputSource wgradInput = WgradInputSource::highPrecision;
  /// Infer roles of untagged contractions (docs/Recipes.md, "Roles").
  bool inferRoles = true;
  /// Let role inference treat the LM head (and embeddings) as linear layers.
  bool includeLmHead = false;
  /// Mixed into every seed, so two runs can draw independent bits.
  int64_t seed = 0;
  /// Return per-quantization statistics as an extra function result.
  bool telemetry = false;

  RoleRecipe &role(GemmRole role);
  const RoleRecipe &role(GemmRole role) const;
  bool quantizesAnything() const;
};

/// A named recipe.
struct RecipePreset {
  llvm::StringRef name;
  llvm::StringRef settings;
  llvm::StringRef description;
};

/// The presets (docs/Recipes.md): the paper's Table 1 and its ablations.
llvm::ArrayRef<RecipePreset> getRecipePresets();

/// Parses a recipe: a preset name, comma- or semicolon-separated settings
/// (`all.precision=fp4`, `wgrad.hadamard=deterministic`, ...), or a preset
/// followed by settings that override it. Errors name the offending item.
llvm::Expected<Recipe> parseRecipe(llvm::StringRef text);

/// Prints `recipe` as settings that parseRecipe accepts.
std::string printRecipe(const Recipe &recipe);

} // namespace mlir::mxfp4

#endif // MXFP4_DIALECT_MXFP4_TRANSFORMS_RECIPE_H
