"""Traces Hugging Face transformers' LlamaForCausalLM, as shipped, with the
PyTorch 2.x of the GPU machine (no MLIR there: the tracer, mxfp4_fx, is
pure Python) and writes graph files that compile here
(mxfp4.compile_graph_file):

  llama-tiny-<attn>.npz   2 layers, dim 64, 4/2 heads, vocab 256, tied
                          embeddings, one 2 x 32 batch, with PyTorch's
                          loss and gradients as references (for
                          test/python/Inputs/, checked by
                          test/python/torch_graph_file.py)
  llama-curve-sdpa.npz    the GPU check's model (scripts/gpu/
                          frontend_cases.py's shape: 4 layers, dim 256,
                          8/4 heads, ffn 704), 8 x 256 tokens, initial
                          weights of seed 0, no references

<attn> is each of `eager` and `sdpa` (transformers' attention
implementations). A configuration that fails to trace prints its error and
the others go on. Prints the aten ops of each graph.

Usage (on the GPU machine): PYTHONPATH=python-bindings
  python3 scripts/gpu/trace_transformers.py OUT_DIR
"""
import collections
import os
import sys
import traceback

import torch
import torch.nn.functional as F
import transformers

import mxfp4_fx

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def causal_lm_loss(output, labels):
    # LlamaForCausalLM's loss without its label shifting helper: predict
    # token i + 1 from tokens up to i (every token counts).
    logits = output.logits.float()
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    return F.cross_entropy(shift_logits.view(-1, shift_logits.shape[-1]),
                           shift_labels.view(-1))


def model_of(attn, **shape):
    config = transformers.LlamaConfig(
        vocab_size=256, max_position_embeddings=1024, rms_norm_eps=1e-5,
        use_cache=False, attention_dropout=0.0, **shape)
    config._attn_implementation = attn
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config)


TINY = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2,
            tie_word_embeddings=True)
CURVE = dict(hidden_size=256, intermediate_size=704, num_hidden_layers=4,
             num_attention_heads=8, num_key_value_heads=4,
             tie_word_embeddings=False)

# transformers looks for packed sequences in the position ids with a
# data-dependent test that a trace cannot take; these batches are not packed.
import transformers.masking_utils  # noqa: E402
transformers.masking_utils.find_packed_sequence_indices = lambda ids: None

print(f"torch {torch.__version__}, transformers {transformers.__version__}")
failed = 0
for name, shape, batch, references in [
        ("tiny-eager", TINY, (2, 32), True), ("tiny-sdpa", TINY, (2, 32), True),
        ("curve-sdpa", CURVE, (8, 256), False)]:
    attn = name.split("-")[1]
    try:
        model = model_of(attn, **shape)
        ids = torch.randint(0, 256, batch,
                            generator=torch.Generator().manual_seed(1))
        trace = mxfp4_fx.trace_training_step(model, (ids,), causal_lm_loss,
                                             state_arguments=False)
        path = os.path.join(out, f"llama-{name}.npz")
        mxfp4_fx.save(trace, path, references=references)
        ops = collections.Counter(
            str(n.target) for n in trace.graph_module.graph.nodes
            if n.op == "call_function")
        print(f"{name}: {sum(p.numel() for p in model.parameters())} "
              f"parameters, {sum(ops.values())} calls, "
              f"{os.path.getsize(path)} bytes; ops: " +
              ", ".join(f"{op} x{c}" for op, c in sorted(ops.items())))
    except Exception:  # report and go on: each configuration is a result
        failed += 1
        print(f"{name}: FAILED")
        traceback.print_exc(file=sys.stdout)
sys.exit(1 if failed else 0)
