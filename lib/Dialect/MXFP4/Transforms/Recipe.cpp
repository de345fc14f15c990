//===- Recipe.cpp - MXFP4 training recipes as data ------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/MXFP4/Transforms/Recipe.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mxfp4;

RoleRecipe &Recipe::role(GemmRole role) {
  switch (role) {
  case GemmRole::fprop:
    return fprop;
  case GemmRole::dgrad:
    return dgrad;
  case GemmRole::wgrad:
    return wgrad;
  }
  llvm_unreachable("unknown GemmRole");
}

const RoleRecipe &Recipe::role(GemmRole role) const {
  return const_cast<Recipe *>(this)->role(role);
}

bool Recipe::quantizesAnything() const {
  for (const RoleRecipe *r : {&fprop, &dgrad, &wgrad})
    if (r->lhs.fp4 || r->rhs.fp4)
      return true;
  return false;
}

llvm::ArrayRef<RecipePreset> mlir::mxfp4::getRecipePresets() {
  static const RecipePreset presets[] = {
      {"bf16", "", "no MXFP4: every GEMM in high precision (baseline)"},
      {"fp4-fprop", "fprop.precision=fp4", "MXFP4 Fprop (Table 1, row 1)"},
      {"fp4-fprop-dgrad", "fprop.precision=fp4,dgrad.precision=fp4",
       "MXFP4 Fprop and Dgrad (Table 1, row 2)"},
      {"fp4-all", "all.precision=fp4",
       "MXFP4 Fprop, Dgrad and Wgrad (Table 1, full pipeline)"},
      {"fp4-all-sr",
       "all.precision=fp4,dgrad.rounding=stochastic,wgrad.rounding=stochastic",
       "full pipeline, stochastic rounding on the backward operands"},
      {"fp4-all-rht16",
       "all.precision=fp4,all.hadamard=random_per_step,all.hadamard_size=16",
       "full pipeline, random-sign H16 redrawn every step"},
      {"fp4-all-rht16-fixed",
       "all.precision=fp4,all.hadamard=random_fixed,all.hadamard_size=16",
       "full pipeline, random-sign H16 fixed for the whole run (one sign "
       "vector per layer and GEMM; NVIDIA's RHT style)"},
      {"fp4-all-dht16",
       "all.precision=fp4,all.hadamard=deterministic,all.hadamard_size=16",
       "full pipeline, deterministic H16 on every GEMM (the paper's recipe)"},
      {"fp4-all-dht32",
       "all.precision=fp4,all.hadamard=deterministic,all.hadamard_size=32",
       "full pipeline, deterministic H32"},
      {"fp4-all-dht16-wgrad-only",
       "all.precision=fp4,wgrad.hadamard=deterministic,wgrad.hadamard_size=16",
       "full pipeline, deterministic H16 on the two Wgrad operands only"},
  };
  return presets;
}

namespace {

llvm::Error recipeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "recipe: " + message);
}

/// The operands a selector's operand part names in `role`: "lhs"/"rhs", or
/// the operand's meaning ("input", "weight", "grad").
llvm::Expected<llvm::SmallVector<OperandRecipe *, 2>>
selectOperands(RoleRecipe &r, GemmRole role, llvm::StringRef operand,
               llvm::StringRef item) {
  llvm::SmallVector<OperandRecipe *, 2> out;
  bool lhsIsGrad = role != GemmRole::fprop;
  bool rhsIsWeight = role != GemmRole::wgrad;
  if (operand.empty() || operand == "*") {
    out = {&r.lhs, &r.rhs};
  } else if (operand == "lhs") {
    out = {&r.lhs};
  } else if (operand == "rhs") {
    out = {&r.rhs};
  } else if (operand == "grad") {
    if (lhsIsGrad)
      out = {&r.lhs};
  } else if (operand == "weight") {
    if (rhsIsWeight)
      out = {&r.rhs};
  } else if (operand == "input") {
    if (role == GemmRole::fprop)
      out = {&r.lhs};
    else if (role == GemmRole::wgrad)
      out = {&r.rhs};
  } else {
    return recipeError("'" + item + "': unknown operand '" + operand +
                       "' (expected lhs, rhs, input, weight or grad)");
  }
  return out;
}

llvm::Expected<llvm::SmallVector<GemmRole, 3>>
selectRoles(llvm::StringRef selector, llvm::StringRef item) {
  if (selector == "all")
    return llvm::SmallVector<GemmRole, 3>{GemmRole::fprop, GemmRole::dgrad,
                                          GemmRole::wgrad};
  if (selector == "backward")
    return llvm::SmallVector<GemmRole, 3>{GemmRole::dgrad, GemmRole::wgrad};
  if (std::optional<GemmRole> role = symbolizeGemmRole(selector))
    return llvm::SmallVector<GemmRole, 3>{*role};
  return recipeError("'" + item + "': unknown GEMM selector '" + selector +
                     "' (expected all, backward, fprop, dgrad or wgrad)");
}

llvm::Error parseBool(llvm::StringRef value, bool &out,
                      llvm::StringRef item) {
  if (value == "true" || value == "1") {
    out = true;
    return llvm::Error::success();
  }
  if (value == "false" || value == "0") {
    out = false;
    return llvm::Error::success();
  }
  return recipeError("'" + item + "': expected true or false");
}

/// Applies one `key=value` item.
llvm::Error applySetting(Recipe &recipe, llvm::StringRef item) {
  auto [key, value] = item.split('=');
  key = key.trim();
  value = value.trim();
  if (!item.contains('=') || value.empty())
    return recipeError("'" + item + "': expected key=value");

  if (key == "weight_cache")
    return parseBool(value, recipe.weightCache, item);
  if (key == "infer_roles")
    return parseBool(value, recipe.inferRoles, item);
  if (key == "lm_head")
    return parseBool(value, recipe.includeLmHead, item);
  if (key == "telemetry")
    return parseBool(value, recipe.telemetry, item);
  if (key == "seed") {
    if (value.getAsInteger(0, recipe.seed))
      return recipeError("'" + item + "': expected an integer");
    return llvm::Error::success();
  }
  if (key == "wgrad_input") {
    if (value == "high_precision")
      recipe.wgradInput = WgradInputSource::highPrecision;
    else if (value == "forward_quantized")
      recipe.wgradInput = WgradInputSource::forwardQuantized;
    else
      return recipeError("'" + item +
                         "': expected high_precision or forward_quantized");
    return llvm::Error::success();
  }

  // <roles>[.<operand>].<field>
  llvm::SmallVector<llvm::StringRef, 3> parts;
  key.split(parts, '.');
  if (parts.size() < 2 || parts.size() > 3)
    return recipeError("'" + item + "': unknown setting '" + key + "'");
  llvm::StringRef field = parts.back();
  llvm::StringRef operand = parts.size() == 3 ? parts[1] : "";
  llvm::Expected<llvm::SmallVector<GemmRole, 3>> roles =
      selectRoles(parts[0], item);
  if (!roles)
    return roles.takeError();

  bool roleField = field == "hadamard" || field == "hadamard_size";
  if (roleField && !operand.empty())
    return recipeError("'" + item +
                       "': a rotation applies to both operands of a GEMM (so "
                       "it cancels); set it per GEMM, not per operand");
  for (GemmRole role : *roles) {
    RoleRecipe &r = recipe.role(role);
    if (field == "hadamard") {
      if (value == "none") {
        r.hadamard.reset();
      } else if (std::optional<HadamardKind> kind =
                     symbolizeHadamardKind(value)) {
        r.hadamard = *kind;
      } else {
        return recipeError("'" + item +
                           "': expected none, deterministic, random_fixed or "
                           "random_per_step");
      }
      continue;
    }
    if (field == "hadamard_size") {
      int64_t size;
      if (value.getAsInteger(10, size) || !isSupportedHadamardSize(size))
        return recipeError("'" + item + "': expected 16, 32, 64 or 128");
      r.hadamardSize = size;
      continue;
    }
    llvm::Expected<llvm::SmallVector<OperandRecipe *, 2>> operands =
        selectOperands(r, role, operand, item);
    if (!operands)
      return operands.takeError();
    for (OperandRecipe *o : *operands) {
      if (field == "precision") {
        if (value == "fp4" || value == "mxfp4")
          o->fp4 = true;
        else if (value == "high" || value == "bf16")
          o->fp4 = false;
        else
          return recipeError("'" + item + "': expected fp4 or high");
      } else if (field == "scale_rule") {
        std::optional<ScaleRule> rule = symbolizeScaleRule(value);
        if (!rule)
          return recipeError("'" + item +
                             "': expected floor, even, ceil or rceil");
        o->scaleRule = *rule;
      } else if (field == "rounding") {
        std::optional<Rounding> rounding = symbolizeRounding(value);
        if (!rounding)
          return recipeError("'" + item +
                             "': expected nearest_even or stochastic");
        o->rounding = *rounding;
      } else {
        return recipeError("'" + item + "': unknown field '" + field +
                           "' (expected precision, scale_rule, rounding, "
                           "hadamard or hadamard_size)");
      }
    }
  }
  return llvm::Error::success();
}

} // namespace


llvm::Expected<Recipe> mlir::mxfp4::parseRecipe(llvm::StringRef text) {
  Recipe recipe;
  llvm::SmallVector<llvm::StringRef> items;
  while (!text.empty()) {
    size_t end = text.find_first_of(",;");
    items.push_back(text.take_front(end));
    text = end == llvm::StringRef::npos ? llvm::StringRef()
                                        : text.drop_front(end + 1);
  }
  bool first = true;
  for (llvm::StringRef rawItem : items) {
    llvm::StringRef item = rawItem.trim();
    if (item.empty())
      continue;
    bool isFirst = first;
    first = false;
    if (!item.contains('=')) {
      // A preset, allowed first only so later settings refine it.
      const RecipePreset *preset = llvm::find_if(
          getRecipePresets(),
          [&](const RecipePreset &p) { return p.name == item; });
      if (preset == getRecipePresets().end()) {
        std::string known;
        for (const RecipePreset &p : getRecipePresets())
          known += (known.empty() ? "" : ", ") + p.name.str();
        return recipeError("unknown preset '" + item + "' (presets: " +
                           known + ")");
      }
      if (!isFirst)
        return recipeError("preset '" + item +
                           "' must come first; later settings refine it");
      llvm::Expected<Recipe> base = parseRecipe(preset->settings);
      if (!base)
        return base.takeError();
      recipe = *base;
      continue;
    }
    if (llvm::Error error = applySetting(recipe, item))
      return std::move(error);
  }
  return recipe;
}

std::string mlir::mxfp4::printRecipe(const Recipe &recipe) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto sep = [&] {
    if (!text.empty())
      os << ",";
  };
  for (GemmRole role : {GemmRole::fprop, GemmRole::dgrad, GemmRole::wgrad}) {
    const RoleRecipe &r = recipe.role(role);
    for (auto [name, o] :
         {std::pair<const char *, const OperandRecipe *>{"lhs", &r.lhs},
          {"rhs", &r.rhs}}) {
      sep();
      os << stringifyGemmRole(role) << "." << name
         << ".precision=" << (o->fp4 ? "fp4" : "high");
      if (o->fp4)
        os << "," << stringifyGemmRole(role) << "." << name
           << ".scale_rule=" << stringifyScaleRule(o->scaleRule) << ","
           << stringifyGemmRole(role) << "." << name
           << ".rounding=" << stringifyRounding(o->rounding);
    }
    sep();
    os << stringifyGemmRole(role) << ".hadamard="
       << (r.hadamard ? stringifyHadamardKind(*r.hadamard) : "none");
    if (r.hadamard)
      os << "," << stringifyGemmRole(role)
         << ".hadamard_size=" << r.hadamardSize;
  }
  os << ",weight_cache=" << (recipe.weightCache ? "true" : "false")
     << ",wgrad_input="
     << (recipe.wgradInput == WgradInputSource::highPrecision
             ? "high_precision"
             : "forward_quantized")
     << ",infer_roles=" << (recipe.inferRoles ? "true" : "false")
     << ",lm_head=" << (recipe.includeLmHead ? "true" : "false")
     << ",seed=" << recipe.seed
     << ",telemetry=" << (recipe.telemetry ? "true" : "false");
  return text;
}
