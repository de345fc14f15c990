//===- TrainingRun.cpp - a training run exported for a GPU ----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Formats/TrainingRun.h"

#include "Words.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir::mxfp4;
using namespace mlir::mxfp4::detail;

std::string mlir::mxfp4::getTrainingRunParameterFile(size_t index) {
  return "param" + std::to_string(index) + ".npy";
}

/// `value` as llvm::formatv("{0:e9}") writes it, which the compiler wrote
/// before this file existed: printf's %.9e, except for NaN and infinities.
static std::string formatExponent(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return std::signbit(value) ? "-INF" : "INF";
  char text[32];
  std::snprintf(text, sizeof(text), "%.9e", value);
  return text;
}

std::string
mlir::mxfp4::formatTrainingRunManifest(const TrainingRunManifest &manifest) {
  std::string text = "# mxfp4 training run v1\n";
  auto line = [&](const char *key, const std::string &value) {
    text += key;
    text += " " + value + "\n";
  };
  line("steps", std::to_string(manifest.steps));
  line("batch", std::to_string(manifest.batch));
  line("window", std::to_string(manifest.window));
  line("token_bytes", std::to_string(manifest.tokenBytes));
  line("seed", std::to_string(manifest.seed));
  line("init_std", formatExponent(manifest.initStd));
  line("eval_every", std::to_string(manifest.evalEvery));
  line("eval_batches", std::to_string(manifest.evalBatches));
  line("model", manifest.model);
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    const TrainingRunParameter &p = manifest.params[i];
    std::string value = std::to_string(i) + " " + p.name +
                        (p.init == WeightInit::Normal ? " normal" : " ones");
    for (int64_t d : p.shape)
      value += " " + std::to_string(d);
    line("param", value);
  }
  return text;
}

/// Parses all of `word` as a double (strtod's syntax: "nan" and "INF" too).
static bool parseDouble(std::string_view word, double &value) {
  std::string text(word);
  char *end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

/// The text from the first of `words` (of one line) to the end of the last:
/// a name is not split into words.
static std::string joinWords(const std::vector<std::string_view> &words) {
  if (words.empty())
    return "";
  return std::string(words.front().data(),
                     words.back().data() + words.back().size());
}

/// Parses the `param` entry `words` (after the key) as parameter number
/// `index`.
static bool parseParameter(const std::vector<std::string_view> &words,
                           size_t index, TrainingRunParameter &param) {
  size_t number;
  if (words.size() < 3 || !parseInteger(words[0], number) || number != index)
    return false;
  param.name = std::string(words[1]);
  if (words[2] == "normal")
    param.init = WeightInit::Normal;
  else if (words[2] == "ones")
    param.init = WeightInit::Ones;
  else
    return false;
  for (size_t i = 3; i < words.size(); ++i) {
    int64_t size;
    if (!parseInteger(words[i], size) || size < 0)
      return false;
    param.shape.push_back(size);
  }
  return true;
}

std::string
mlir::mxfp4::parseTrainingRunManifest(std::string_view text,
                                      const std::string &name,
                                      TrainingRunManifest &manifest) {
  manifest = TrainingRunManifest();
  LineReader lines(text);
  for (std::string_view line; lines.next(line);) {
    std::vector<std::string_view> words = splitWords(line);
    if (words.empty() || words[0][0] == '#')
      continue;
    std::string_view key = words[0];
    words.erase(words.begin());
    auto integer = [&](auto &value) {
      return words.size() == 1 && parseInteger(words[0], value);
    };
    bool ok = true;
    if (key == "steps")
      ok = integer(manifest.steps);
    else if (key == "batch")
      ok = integer(manifest.batch);
    else if (key == "window")
      ok = integer(manifest.window);
    else if (key == "token_bytes")
      ok = integer(manifest.tokenBytes);
    else if (key == "seed")
      ok = integer(manifest.seed);
    else if (key == "init_std")
      ok = words.size() == 1 && parseDouble(words[0], manifest.initStd);
    else if (key == "eval_every")
      ok = integer(manifest.evalEvery);
    else if (key == "eval_batches")
      ok = integer(manifest.evalBatches);
    else if (key == "model")
      manifest.model = joinWords(words);
    else if (key == "param") {
      TrainingRunParameter param;
      ok = parseParameter(words, manifest.params.size(), param);
      manifest.params.push_back(std::move(param));
    }
    // Other keys are a newer writer's: ignored.
    if (!ok)
      return "'" + name + "': line " + std::to_string(lines.number()) +
             ": bad '" + std::string(key) + "' entry";
  }
  if (manifest.steps <= 0 || manifest.batch <= 0 || manifest.window <= 1 ||
      manifest.params.empty() ||
      (manifest.tokenBytes != 1 && manifest.tokenBytes != 4) ||
      manifest.evalEvery < 0 || manifest.evalBatches < 0)
    return "'" + name +
           "' is not a training run (it needs steps, batch, window, "
           "token_bytes 1 or 4 and the parameters)";
  return "";
}

void mlir::mxfp4::appendTrainingRunTokens(std::string &out,
                                          const int32_t *tokens, size_t count,
                                          int64_t tokenBytes) {
  for (size_t i = 0; i < count; ++i) {
    if (tokenBytes == 1)
      out.push_back(static_cast<char>(tokens[i]));
    else
      out.append(reinterpret_cast<const char *>(&tokens[i]), 4);
  }
}
