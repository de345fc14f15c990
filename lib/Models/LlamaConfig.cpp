//===- LlamaConfig.cpp - presets, JSON and HF config of Llama runs --------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Models/LlamaConfig.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir::mxfp4;
using llvm::createStringError;
using llvm::Expected;
using llvm::StringRef;

static const StringRef presetNames[] = {
    "tiny", "small", "pilot", "llama3.2-1b", "llama3.2-3b", "llama3.1-8b"};

llvm::ArrayRef<StringRef> LlamaConfig::getPresetNames() { return presetNames; }

Expected<LlamaConfig> LlamaConfig::fromPreset(StringRef name) {
  LlamaConfig c;
  c.name = name.str();
  if (name == "tiny")
    return c; // the defaults of the struct
  if (name == "small") {
    // GPT-2-small-sized, Llama-3 tokenizer (cl100k ids, padded vocab).
    c.vocabSize = 100352;
    c.tokenizer = "cl100k";
    c.dim = 768;
    c.numLayers = 12;
    c.numHeads = 12;
    c.numKVHeads = 4;
    c.ffnDim = 2048;
    c.seqLen = 1024;
    c.batchSize = 16;
    c.lr = 1e-3;
    c.warmupSteps = 100;
    c.totalSteps = 2000;
    return c;
  }
  if (name == "pilot") {
    // The GPU study setting of issue 8 (the paper's effect shows after
    // ~10 M tokens): byte vocabulary, 39 M tokens in 1,200 steps.
    c.dim = 512;
    c.numLayers = 8;
    c.numHeads = 8;
    c.numKVHeads = 4;
    c.ffnDim = 1408;
    c.seqLen = 512;
    c.batchSize = 64;
    c.lr = 1.5e-3;
    c.warmupSteps = 60;
    c.totalSteps = 1200;
    return c;
  }
  if (name == "llama3.2-1b") {
    // Llama-3.2-1B's shapes (its embedding and output weights untied here)
    // at the 8B preset's sequence and batch.
    c.vocabSize = 128256;
    c.tokenizer = "cl100k";
    c.dim = 2048;
    c.numLayers = 16;
    c.numHeads = 32;
    c.numKVHeads = 8;
    c.ffnDim = 8192;
    c.ropeTheta = 500000.0;
    c.seqLen = 8192;
    c.batchSize = 1;
    c.lr = 3e-4;
    c.warmupSteps = 2000;
    c.totalSteps = 100000;
    return c;
  }
  if (name == "llama3.2-3b") {
    // Llama-3.2-3B's shapes (embedding and output weights untied, as the
    // 1B preset) at the 8B preset's sequence and batch.
    c.vocabSize = 128256;
    c.tokenizer = "cl100k";
    c.dim = 3072;
    c.numLayers = 28;
    c.numHeads = 24;
    c.numKVHeads = 8;
    c.ffnDim = 8192;
    c.ropeTheta = 500000.0;
    c.seqLen = 8192;
    c.batchSize = 1;
    c.lr = 3e-4;
    c.warmupSteps = 2000;
    c.totalSteps = 100000;
    return c;
  }
  if (name == "llama3.1-8b") {
    c.vocabSize = 128256;
    c.tokenizer = "cl100k";
    c.dim = 4096;
    c.numLayers = 32;
    c.numHeads = 32;
    c.numKVHeads = 8;
    c.ffnDim = 14336;
    c.seqLen = 8192;
    c.batchSize = 1;
    c.lr = 3e-4;
    c.warmupSteps = 2000;
    c.totalSteps = 100000;
    return c;
  }
  return createStringError(
      llvm::formatv("unknown preset '{0}' (expected one of: {1})", name,
                    llvm::join(llvm::ArrayRef<StringRef>(presetNames), ", "))
          .str());
}

llvm::Error LlamaConfig::verify() const {
  auto fail = [&](const llvm::Twine &message) {
    return createStringError("invalid Llama config '" + name +
                             "': " + message);
  };
  struct Size {
    const char *key;
    int64_t value;
  };
  for (Size s : {Size{"vocab_size", vocabSize}, {"dim", dim},
                 {"num_layers", numLayers}, {"num_heads", numHeads},
                 {"num_kv_heads", numKVHeads}, {"ffn_dim", ffnDim},
                 {"seq_len", seqLen}, {"batch_size", batchSize},
                 {"total_steps", totalSteps}})
    if (s.value <= 0)
      return fail(llvm::formatv("{0} must be positive, got {1}", s.key,
                                s.value));
  if (warmupSteps < 0)
    return fail("warmup_steps must not be negative");
  if (dim % numHeads != 0)
    return fail(llvm::formatv("num_heads {0} does not divide dim {1}",
                              numHeads, dim));
  if (numHeads % numKVHeads != 0)
    return fail(llvm::formatv("num_kv_heads {0} does not divide num_heads {1}",
                              numKVHeads, numHeads));
  if (getHeadDim() % 2 != 0)
    return fail(llvm::formatv("head dim {0} must be even for RoPE",
                              getHeadDim()));
  if (!(normEps > 0) || !(ropeTheta > 1) || !(lr > 0) || !(initStd > 0))
    return fail("norm_eps, lr and init_std must be positive and rope_theta "
                "greater than 1");
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) ||
      !(adamEps > 0) || !(weightDecay >= 0) || !(clipNorm > 0) ||
      !(minLrRatio >= 0 && minLrRatio <= 1))
    return fail("betas must lie in [0, 1), min_lr_ratio in [0, 1], and "
                "adam_eps, clip_norm positive");
  if (tokenizer != "byte" && tokenizer != "cl100k")
    return fail("tokenizer must be 'byte' or 'cl100k', got '" + tokenizer +
                "'");
  if (tokenizer == "byte" && vocabSize < 256)
    return fail("the byte tokenizer needs vocab_size >= 256");
  if (tokenizer == "cl100k" && vocabSize < 100258)
    return fail("the cl100k tokenizer needs vocab_size >= 100258");
  return llvm::Error::success();
}

Expected<LlamaConfig> LlamaConfig::fromJSON(StringRef text,
                                            StringRef fileName) {
  auto fail = [&](const llvm::Twine &message) {
    return createStringError(fileName + ": " + message);
  };
  Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    return fail("invalid JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return fail("expected a JSON object");
  StringRef preset = "tiny";
  if (const llvm::json::Value *p = object->get("preset")) {
    std::optional<StringRef> s = p->getAsString();
    if (!s)
      return fail("'preset' must be a string");
    preset = *s;
  }
  Expected<LlamaConfig> config = fromPreset(preset);
  if (!config)
    return fail(llvm::toString(config.takeError()));
  LlamaConfig &c = *config;
  c.name = fileName.str();

  struct IntField {
    const char *key;
    int64_t *field;
  };
  struct FloatField {
    const char *key;
    double *field;
  };
  IntField ints[] = {{"vocab_size", &c.vocabSize},
                     {"dim", &c.dim},
                     {"num_layers", &c.numLayers},
                     {"num_heads", &c.numHeads},
                     {"num_kv_heads", &c.numKVHeads},
                     {"ffn_dim", &c.ffnDim},
                     {"seq_len", &c.seqLen},
                     {"batch_size", &c.batchSize},
                     {"warmup_steps", &c.warmupSteps},
                     {"total_steps", &c.totalSteps}};
  FloatField floats[] = {{"norm_eps", &c.normEps},
                         {"rope_theta", &c.ropeTheta},
                         {"lr", &c.lr},
                         {"min_lr_ratio", &c.minLrRatio},
                         {"beta1", &c.beta1},
                         {"beta2", &c.beta2},
                         {"adam_eps", &c.adamEps},
                         {"weight_decay", &c.weightDecay},
                         {"clip_norm", &c.clipNorm},
                         {"init_std", &c.initStd}};
  for (const auto &[key, value] : *object) {
    if (key == "preset")
      continue;
    if (key == "name" || key == "tokenizer") {
      std::optional<StringRef> s = value.getAsString();
      if (!s)
        return fail("'" + key.str() + "' must be a string");
      (key == "name" ? c.name : c.tokenizer) = s->str();
      continue;
    }
    bool known = false;
    for (IntField &f : ints) {
      if (key != f.key)
        continue;
      std::optional<int64_t> v = value.getAsInteger();
      if (!v)
        return fail("'" + key.str() + "' must be an integer");
      *f.field = *v;
      known = true;
    }
    for (FloatField &f : floats) {
      if (key != f.key)
        continue;
      std::optional<double> v = value.getAsNumber();
      if (!v)
        return fail("'" + key.str() + "' must be a number");
      *f.field = *v;
      known = true;
    }
    if (!known)
      return fail("unknown key '" + key.str() + "'");
  }
  if (llvm::Error error = c.verify())
    return fail(llvm::toString(std::move(error)));
  return c;
}

std::string LlamaConfig::toHuggingFaceJSON() const {
  llvm::json::Object hf{
      {"architectures", llvm::json::Array{"LlamaForCausalLM"}},
      {"model_type", "llama"},
      {"hidden_size", dim},
      {"intermediate_size", ffnDim},
      {"num_attention_heads", numHeads},
      {"num_key_value_heads", numKVHeads},
      {"num_hidden_layers", numLayers},
      {"head_dim", getHeadDim()},
      {"vocab_size", vocabSize},
      {"rms_norm_eps", normEps},
      {"rope_theta", ropeTheta},
      {"rope_scaling", nullptr},
      {"max_position_embeddings", seqLen},
      {"hidden_act", "silu"},
      {"attention_bias", false},
      {"mlp_bias", false},
      {"attention_dropout", 0.0},
      {"initializer_range", initStd},
      {"tie_word_embeddings", false},
      {"torch_dtype", "float32"},
      {"bos_token_id", nullptr},
      {"eos_token_id", nullptr},
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(hf))) << "\n";
  return text;
}

llvm::SmallVector<LlamaParameter>
mlir::mxfp4::getLlamaParameters(const LlamaConfig &c) {
  int64_t hd = c.getHeadDim();
  llvm::SmallVector<LlamaParameter> params;
  params.push_back({"model.embed_tokens.weight", {c.vocabSize, c.dim}, true});
  for (int64_t i = 0; i < c.numLayers; ++i) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    params.push_back({p + "input_layernorm.weight", {c.dim}, false});
    params.push_back({p + "self_attn.q_proj.weight", {c.numHeads * hd, c.dim}});
    params.push_back(
        {p + "self_attn.k_proj.weight", {c.numKVHeads * hd, c.dim}});
    params.push_back(
        {p + "self_attn.v_proj.weight", {c.numKVHeads * hd, c.dim}});
    params.push_back({p + "self_attn.o_proj.weight", {c.dim, c.numHeads * hd}});
    params.push_back({p + "post_attention_layernorm.weight", {c.dim}, false});
    params.push_back({p + "mlp.gate_proj.weight", {c.ffnDim, c.dim}});
    params.push_back({p + "mlp.up_proj.weight", {c.ffnDim, c.dim}});
    params.push_back({p + "mlp.down_proj.weight", {c.dim, c.ffnDim}});
  }
  params.push_back({"model.norm.weight", {c.dim}, false});
  params.push_back({"lm_head.weight", {c.vocabSize, c.dim}, true});
  return params;
}
