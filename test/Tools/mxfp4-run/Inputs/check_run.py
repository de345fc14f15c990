"""Checks the outputs of `mxfp4-run train`.

    check_run.py RUN --steps N [--learns]     one run's files are complete
    check_run.py --same RUN_A RUN_B           two runs are bit-identical
    check_run.py --differ RUN_A RUN_B         two runs' losses differ

A run folder holds metrics.jsonl (one record per step, plus eval records),
loss.svg and checkpoint/ (Hugging Face config.json, model.safetensors with HF
Llama names, optimizer.safetensors, trainer_state.json).
"""
import argparse
import json
import os
import xml.etree.ElementTree as ET

import safetensors_np

# The fields every step record must have, and those a resumed run's records
# must reproduce exactly (timings excluded).
EXACT = ("step", "tokens", "loss", "lr", "grad_norm")


def records(run):
    with open(os.path.join(run, "metrics.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    steps = [r for r in rows if "loss" in r]
    evals = [r for r in rows if "eval_loss" in r]
    return steps, evals


def check_one(run, steps_expected, learns):
    steps, evals = records(run)
    assert [r["step"] for r in steps] == list(range(1, steps_expected + 1)), \
        f"step records {[r['step'] for r in steps]}"
    for r in steps:
        for key in EXACT + ("tokens_per_s", "elapsed_s"):
            assert key in r, f"step {r['step']} lacks {key}"
    assert evals and evals[-1]["step"] == steps_expected, "no final eval"
    if learns:
        first = sum(r["loss"] for r in steps[:3]) / 3
        last = sum(r["loss"] for r in steps[-3:]) / 3
        assert last < first - 0.5, f"loss did not decrease: {first} -> {last}"
        assert evals[-1]["eval_loss"] < 5.0, evals
    ET.parse(os.path.join(run, "loss.svg"))  # a well-formed SVG

    ckpt = os.path.join(run, "checkpoint")
    config = json.load(open(os.path.join(ckpt, "config.json")))
    assert config["architectures"] == ["LlamaForCausalLM"], config
    assert config["tie_word_embeddings"] is False
    dim, layers = config["hidden_size"], config["num_hidden_layers"]
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    hd = dim // heads
    ffn, vocab = config["intermediate_size"], config["vocab_size"]
    expected = {"model.embed_tokens.weight": (vocab, dim),
                "model.norm.weight": (dim,), "lm_head.weight": (vocab, dim)}
    for i in range(layers):
        p = f"model.layers.{i}."
        expected.update({
            p + "input_layernorm.weight": (dim,),
            p + "post_attention_layernorm.weight": (dim,),
            p + "self_attn.q_proj.weight": (heads * hd, dim),
            p + "self_attn.k_proj.weight": (kv * hd, dim),
            p + "self_attn.v_proj.weight": (kv * hd, dim),
            p + "self_attn.o_proj.weight": (dim, heads * hd),
            p + "mlp.gate_proj.weight": (ffn, dim),
            p + "mlp.up_proj.weight": (ffn, dim),
            p + "mlp.down_proj.weight": (dim, ffn)})
    model = safetensors_np.load(os.path.join(ckpt, "model.safetensors"))
    assert {k: tuple(v.shape) for k, v in model.items()} == expected, \
        sorted(set(model) ^ set(expected))
    for name, value in model.items():
        assert str(value.dtype) == "float32" and (value == value).all(), name
    optimizer = safetensors_np.load(os.path.join(ckpt,
                                                 "optimizer.safetensors"))
    assert set(optimizer) == {n + s for n in expected
                              for s in (".exp_avg", ".exp_avg_sq")}
    state = json.load(open(os.path.join(ckpt, "trainer_state.json")))
    assert state["step"] == steps_expected, state
    print(f"ok: {run}: {len(steps)} steps, loss {steps[0]['loss']:.3f} -> "
          f"{steps[-1]['loss']:.3f}, eval {evals[-1]['eval_loss']:.3f}, "
          f"{len(model)} tensors")


def exact(run):
    steps, evals = records(run)
    return ([tuple(r[k] for k in EXACT) for r in steps],
            [(r["step"], r["eval_loss"]) for r in evals])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--steps", type=int)
    parser.add_argument("--learns", action="store_true")
    parser.add_argument("--same", action="store_true")
    parser.add_argument("--differ", action="store_true")
    args = parser.parse_args()
    if args.same or args.differ:
        a, b = args.runs
        same = exact(a) == exact(b)
        if args.same:
            assert same, "the runs' metrics differ"
            for f in ("model.safetensors", "optimizer.safetensors"):
                pa = os.path.join(a, "checkpoint", f)
                pb = os.path.join(b, "checkpoint", f)
                assert open(pa, "rb").read() == open(pb, "rb").read(), f
            print(f"ok: {a} and {b} are bit-identical")
        else:
            assert not same, "the runs are identical"
            print(f"ok: {a} and {b} differ")
        return
    check_one(args.runs[0], args.steps, args.learns)


if __name__ == "__main__":
    main()
