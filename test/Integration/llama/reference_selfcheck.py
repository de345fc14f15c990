# Checks the PyTorch Llama reference (llama_torch.py) that the compiled
# training step is compared with: HF repeat_kv and rotate-half RoPE
# semantics, causality, f64 finite differences of the gradients, agreement
# with the nn.Module peer of the benchmark, the learning-rate schedule, and
# the clipped AdamW update against a NumPy transcription of PyTorch's formula.
# REQUIRES: torch
# RUN: %PYTHON %s

import math
import sys

import numpy as np
import torch

import llama_torch as lt
import llama_torch_bench

MICRO = dict(vocab_size=32, dim=16, num_layers=2, num_heads=2, num_kv_heads=1,
             ffn_dim=32, seq_len=8, batch_size=2)
# Two KV heads each serving two query heads: tells interleaved from tiled.
MICRO_GQA = dict(MICRO, num_heads=4, num_kv_heads=2)

failures = []


def check(label, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {label} {detail}".rstrip())
    if not ok:
        failures.append(label)


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def micro_problem(overrides, dtype, seed=1):
    """Params with a large init and random gains, so every nonlinearity and
    every gain matters, and random tokens."""
    cfg = lt.LlamaConfig.from_dict(dict(overrides, init_std=0.3))
    rng = np.random.default_rng(seed)
    params = {}
    for name, a in lt.init_params(cfg, seed).items():
        if a.ndim == 1:
            a = a + 0.2 * rng.standard_normal(a.shape)
        params[name] = a.astype(dtype)
    tokens = rng.integers(0, cfg.vocab_size, (cfg.batch_size, cfg.seq_len + 1),
                          dtype=np.int32)
    return cfg, params, tokens


def check_config():
    tiny = lt.LlamaConfig.preset("tiny")
    check("tiny preset", (tiny.vocab_size, tiny.dim, tiny.num_layers,
                          tiny.num_heads, tiny.num_kv_heads, tiny.ffn_dim,
                          tiny.seq_len, tiny.batch_size, tiny.lr,
                          tiny.min_lr_ratio, tiny.warmup_steps,
                          tiny.total_steps) ==
          (256, 256, 4, 4, 2, 768, 256, 8, 3e-3, 0.1, 20, 300))
    specs = lt.parameter_specs(lt.LlamaConfig.from_dict(MICRO_GQA))
    layer = ["input_layernorm", "self_attn.q_proj", "self_attn.k_proj",
             "self_attn.v_proj", "self_attn.o_proj",
             "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj",
             "mlp.down_proj"]
    order = (["model.embed_tokens.weight"] +
             [f"model.layers.{i}.{n}.weight" for i in range(2) for n in layer]
             + ["model.norm.weight", "lm_head.weight"])
    check("parameter order", [s.name for s in specs] == order)
    check("k_proj shape", specs[3].shape == (2 * 4, 16))
    check("weight decay on matrices only",
          [s.is_matrix for s in specs] == [len(s.shape) == 2 for s in specs])
    try:
        lt.LlamaConfig.from_dict({"dimm": 3})
        check("unknown key rejected", False)
    except ValueError:
        check("unknown key rejected", True)


def check_repeat_kv():
    x = torch.randn(2, 3, 5, 4)
    n_rep = 2
    b, kv, s, hd = x.shape
    hf = x[:, :, None, :, :].expand(b, kv, n_rep, s, hd).reshape(
        b, kv * n_rep, s, hd)
    loop = torch.stack([x[:, h // n_rep] for h in range(kv * n_rep)], dim=1)
    got = lt.repeat_kv(x, n_rep)
    check("repeat_kv = HF expand/reshape", torch.equal(got, hf))
    check("repeat_kv: query head h reads KV head h // n_rep",
          torch.equal(got, loop))


def check_rope():
    cfg = lt.LlamaConfig.from_dict(dict(MICRO, rope_theta=10000.0))
    hd, s, half = cfg.head_dim, cfg.seq_len, cfg.head_dim // 2
    x = np.random.default_rng(2).standard_normal((1, 1, s, hd))
    cos, sin = lt.rope_cos_sin(cfg, torch.float64)
    got = lt.apply_rope(torch.from_numpy(x), cos, sin).numpy()
    # Rotate-half RoPE: pair (i, i + hd/2) turns by pos / theta^(2i/hd).
    want = np.empty_like(x)
    for pos in range(s):
        for i in range(half):
            angle = pos / cfg.rope_theta ** (2 * i / hd)
            a, b = x[..., pos, i], x[..., pos, i + half]
            want[..., pos, i] = a * math.cos(angle) - b * math.sin(angle)
            want[..., pos, i + half] = (b * math.cos(angle) +
                                        a * math.sin(angle))
    check("RoPE rotates pairs (i, i+hd/2)", rel(got, want) < 1e-14,
          f"rel {rel(got, want):.1e}")
    rh = lt.rotate_half(torch.arange(6.0)).tolist()
    check("rotate_half = cat(-x2, x1)",
          rh == [-3.0, -4.0, -5.0, 0.0, 1.0, 2.0])


def check_causal():
    cfg, params, tokens = micro_problem(MICRO_GQA, np.float64)
    p = {n: torch.from_numpy(a) for n, a in params.items()}
    inputs = torch.from_numpy(tokens[:, :-1].astype(np.int64))
    changed = inputs.clone()
    changed[:, 5] = (changed[:, 5] + 1) % cfg.vocab_size
    a, b = lt.logits(cfg, p, inputs), lt.logits(cfg, p, changed)
    check("causal: earlier positions unchanged",
          torch.equal(a[:, :5], b[:, :5]) and not torch.equal(a[:, 5:],
                                                              b[:, 5:]))


def check_finite_differences(overrides):
    """Central differences of the loss along one random direction per
    parameter, and along all at once, against the autograd gradient."""
    cfg, params, tokens = micro_problem(overrides, np.float64)
    _, grads = lt.loss_and_grads(cfg, params, tokens)
    rng = np.random.default_rng(3)
    directions = {n: rng.standard_normal(a.shape) for n, a in params.items()}
    h = 1e-5

    def slope(names):
        def at(sign):
            moved = dict(params)
            for n in names:
                moved[n] = params[n] + sign * h * directions[n]
            p = {n: torch.from_numpy(a) for n, a in moved.items()}
            return lt.loss(cfg, p, torch.from_numpy(tokens)).item()
        numeric = (at(1) - at(-1)) / (2 * h)
        analytic = sum(float(np.sum(grads[n] * directions[n])) for n in names)
        return abs(numeric - analytic) / max(abs(analytic), 1e-12)

    worst = max(slope([n]) for n in params)
    check(f"f64 finite differences, each parameter "
          f"({cfg.num_heads} heads, {cfg.num_kv_heads} kv)", worst < 1e-6,
          f"worst rel {worst:.1e}")
    err = slope(list(params))
    check("f64 finite differences, all parameters", err < 1e-6,
          f"rel {err:.1e}")


def check_module_peer(overrides):
    """The benchmark's nn.Module (f32 RoPE tables and additive mask as Hugging
    Face computes them) agrees with the functional reference in f32."""
    cfg, params, tokens = micro_problem(overrides, np.float32)
    loss, grads = lt.loss_and_grads(cfg, params, tokens)
    model = llama_torch_bench.LlamaForCausalLM(cfg)
    model.load_state_dict({n: torch.from_numpy(a) for n, a in params.items()})
    got = model(torch.from_numpy(tokens.astype(np.int64)))
    got.backward()
    worst = max(rel(p.grad.numpy(), grads[n])
                for n, p in model.named_parameters())
    check(f"nn.Module peer ({cfg.num_heads} heads, {cfg.num_kv_heads} kv)",
          rel(got.item(), loss) < 1e-6 and worst < 1e-5,
          f"loss rel {rel(got.item(), loss):.1e}, worst grad rel {worst:.1e}")


def check_lr():
    cfg = lt.LlamaConfig.preset("tiny")
    lr, low = cfg.lr, cfg.lr * cfg.min_lr_ratio
    want = {0: lr / 20, 9: lr / 2, 19: lr, 20: lr, 160: (lr + low) / 2,
            300: low, 400: low}
    worst = max(abs(lt.lr_at(cfg, s) - w) / w for s, w in want.items())
    check("learning-rate schedule", worst < 1e-12, f"worst rel {worst:.1e}")


def numpy_train_step(cfg, params, m, v, grads, step):
    """clip_grad_norm_ then PyTorch 1.13's _single_tensor_adamw, in f64."""
    norm = math.sqrt(sum(float(np.sum(g * g)) for g in grads.values()))
    coef = min(cfg.clip_norm / (norm + 1e-6), 1.0)
    lr = lt.lr_at(cfg, step)
    t = step + 1
    bc1, bc2 = 1 - cfg.beta1 ** t, 1 - cfg.beta2 ** t
    out = {}
    for spec in lt.parameter_specs(cfg):
        n = spec.name
        g = grads[n] * coef
        wd = cfg.weight_decay if spec.is_matrix else 0.0
        p = params[n] * (1 - lr * wd)
        mn = m[n] * cfg.beta1 + g * (1 - cfg.beta1)
        vn = v[n] * cfg.beta2 + g * g * (1 - cfg.beta2)
        denom = np.sqrt(vn) / math.sqrt(bc2) + cfg.adam_eps
        out[n] = (p - (lr / bc1) * mn / denom, mn, vn)
    return norm, lr, out


def check_train_step(clip_norm, step):
    cfg, params, tokens = micro_problem(dict(MICRO_GQA, clip_norm=clip_norm,
                                             warmup_steps=4, total_steps=20),
                                        np.float64)
    rng = np.random.default_rng(4)
    m = {n: 1e-2 * rng.standard_normal(a.shape) for n, a in params.items()}
    v = {n: (1e-2 * rng.standard_normal(a.shape)) ** 2
         for n, a in params.items()}
    _, grads = lt.loss_and_grads(cfg, params, tokens)
    loss, norm, lr, new_p, new_m, new_v = lt.train_step(cfg, params, m, v,
                                                        tokens, step)
    want_norm, want_lr, want = numpy_train_step(cfg, params, m, v, grads, step)
    worst = max(max(rel(new_p[n] - params[n], w[0] - params[n]),
                    rel(new_m[n], w[1]), rel(new_v[n], w[2]))
                for n, w in want.items())
    clipped = want_norm > clip_norm
    check(f"train_step step {step} ({'clipped' if clipped else 'unclipped'})",
          rel(norm, want_norm) < 1e-12 and rel(lr, want_lr) < 1e-7 and
          worst < 1e-10, f"worst rel {worst:.1e}")


def main():
    torch.set_num_threads(1)
    check_config()
    check_repeat_kv()
    check_rope()
    check_causal()
    check_finite_differences(MICRO)
    check_finite_differences(MICRO_GQA)
    check_module_peer(MICRO)
    check_module_peer(MICRO_GQA)
    check_lr()
    check_train_step(clip_norm=1e-3, step=2)
    check_train_step(clip_norm=1e3, step=11)
    print("FAIL" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
