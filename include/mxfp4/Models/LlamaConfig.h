//===- LlamaConfig.h - shape and schedule of a Llama training run -*- C++ -*-=//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The model and optimizer hyper-parameters that the training-step builder,
// the driver, checkpoints (Hugging Face `config.json`) and the PyTorch
// reference share. Parameter names are Hugging Face Llama names, so a
// checkpoint loads into `transformers.LlamaForCausalLM` as is.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_MODELS_LLAMACONFIG_H
#define MXFP4_MODELS_LLAMACONFIG_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::mxfp4 {

/// A Llama-3-style decoder and the AdamW schedule that trains it.
struct LlamaConfig {
  std::string name = "tiny";
  int64_t vocabSize = 256;
  int64_t dim = 256;
  int64_t numLayers = 4;
  int64_t numHeads = 4;
  int64_t numKVHeads = 2;
  int64_t ffnDim = 768;
  int64_t seqLen = 256;
  int64_t batchSize = 8;
  double normEps = 1e-5;
  double ropeTheta = 500000.0;
  /// "byte" or "cl100k".
  std::string tokenizer = "byte";

  // AdamW with linear warm-up then cosine decay to minLrRatio * lr.
  double lr = 3e-3;
  double minLrRatio = 0.1;
  int64_t warmupSteps = 20;
  int64_t totalSteps = 300;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double adamEps = 1e-8;
  double weightDecay = 0.1;
  double clipNorm = 1.0;
  /// Standard deviation of the normal initialization of every matrix.
  double initStd = 0.02;

  int64_t getHeadDim() const { return dim / numHeads; }
  int64_t getTokensPerStep() const { return batchSize * seqLen; }

  /// Returns the preset `name`: "tiny", "small", "pilot", "llama3.2-1b",
  /// "llama3.2-3b" or "llama3.1-8b".
  static llvm::Expected<LlamaConfig> fromPreset(llvm::StringRef name);
  /// Returns the preset names, for help texts and errors.
  static llvm::ArrayRef<llvm::StringRef> getPresetNames();
  /// Reads a JSON object whose keys are the snake_case names of the fields
  /// ("dim", "num_layers", "vocab_size", ...); missing keys keep the values
  /// of the preset named by its "preset" key (default "tiny"). Unknown keys
  /// and invalid shapes are errors naming the key.
  static llvm::Expected<LlamaConfig> fromJSON(llvm::StringRef text,
                                              llvm::StringRef fileName);
  /// Checks that the shapes fit together (heads divide dim, KV heads divide
  /// heads, even head dim, positive sizes).
  llvm::Error verify() const;
  /// Returns Hugging Face `config.json` text (`LlamaConfig` fields:
  /// architectures, hidden_size, intermediate_size, num_attention_heads,
  /// num_key_value_heads, num_hidden_layers, vocab_size, rms_norm_eps,
  /// rope_theta, max_position_embeddings, tie_word_embeddings false, ...).
  std::string toHuggingFaceJSON() const;
};

/// One trained tensor: its Hugging Face name and row-major f32 shape.
struct LlamaParameter {
  std::string name;
  llvm::SmallVector<int64_t, 2> shape;
  /// True for matrices (embedding, projections, LM head), which get weight
  /// decay; false for the RMSNorm gains, which are initialized to one.
  bool isMatrix = true;
};

/// Returns the parameters in the order the training step takes them:
///   model.embed_tokens.weight                     [vocab, dim]
///   per layer i, with p = "model.layers.<i>.":
///     p input_layernorm.weight                    [dim]
///     p self_attn.q_proj.weight                   [heads*hd, dim]
///     p self_attn.k_proj.weight                   [kv_heads*hd, dim]
///     p self_attn.v_proj.weight                   [kv_heads*hd, dim]
///     p self_attn.o_proj.weight                   [dim, heads*hd]
///     p post_attention_layernorm.weight           [dim]
///     p mlp.gate_proj.weight                      [ffn, dim]
///     p mlp.up_proj.weight                        [ffn, dim]
///     p mlp.down_proj.weight                      [dim, ffn]
///   model.norm.weight                             [dim]
///   lm_head.weight                                [vocab, dim]
llvm::SmallVector<LlamaParameter> getLlamaParameters(const LlamaConfig &config);

} // namespace mlir::mxfp4

#endif // MXFP4_MODELS_LLAMACONFIG_H
