"""PyTorch peer of the mxfp4 Llama training benchmark.

Trains the Llama of `test/Integration/lib/llama_torch.py` (tiny preset by
default) the way a PyTorch user would: eager FP32 `nn.Module`s laid out as
Hugging Face's `LlamaForCausalLM` (so `named_parameters()` are the checkpoint
names), `clip_grad_norm_` and `torch.optim.AdamW` with the reference's
warm-up/cosine schedule, on one fixed batch. It prints one JSON line:

  {"peer": "pytorch-eager-fp32", "tokens_per_s": ..., "step_ms": ...,
   "peak_rss_mib": ..., ...}

`step_ms` is the median of the timed steps. The run happens in a freshly
spawned process, so `peak_rss_mib` (getrusage's maximum resident set) is that
of PyTorch and this model alone; `baseline_rss_mib` is the same process's
resident set before the model was built.

Threads: Debian's PyTorch runs its GEMMs on OpenBLAS's pthreads build, whose
pool torch.set_num_threads does not size, next to its own OpenMP pool for the
other ops. `--threads` (the cores, default 2) sizes the OpenBLAS pool;
`--intra-op-threads` (default 1) the OpenMP one. Two busy-waiting pools of two
threads on two cores fight: on the tiny preset a step took ~1,070 ms that way,
~510 ms with OMP_WAIT_POLICY=passive, ~580 ms with one OpenBLAS and two OpenMP
threads, and ~390 ms with two OpenBLAS and one OpenMP thread, the default.

The model classes also serve `reference_selfcheck.py` as a second, module-form
implementation to hold the functional reference against.
"""

import argparse
import concurrent.futures
import ctypes
import json
import math
import multiprocessing
import os
import resource
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# train_bench.py runs this in a process of its own, not under lit (whose
# PYTHONPATH gives the tests their helpers): test/Integration/lib by path.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "test", "Integration", "lib"))
import llama_torch  # noqa: E402


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        hd = cfg.head_dim
        self.heads, self.kv_heads, self.head_dim = (cfg.num_heads,
                                                    cfg.num_kv_heads, hd)
        self.q_proj = nn.Linear(cfg.dim, cfg.num_heads * hd, bias=False)
        self.k_proj = nn.Linear(cfg.dim, cfg.num_kv_heads * hd, bias=False)
        self.v_proj = nn.Linear(cfg.dim, cfg.num_kv_heads * hd, bias=False)
        self.o_proj = nn.Linear(cfg.num_heads * hd, cfg.dim, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # Hugging Face's repeat_kv: KV head j serves n_rep consecutive heads.
        n_rep = self.heads // self.kv_heads
        k = k[:, :, None].expand(b, self.kv_heads, n_rep, s, self.head_dim)
        v = v[:, :, None].expand(b, self.kv_heads, n_rep, s, self.head_dim)
        k = k.reshape(b, self.heads, s, self.head_dim)
        v = v.reshape(b, self.heads, s, self.head_dim)
        scores = q @ k.transpose(2, 3) / math.sqrt(self.head_dim) + mask
        out = scores.softmax(-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(b, s, -1))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.up_proj = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.down_proj = nn.Linear(cfg.ffn_dim, cfg.dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, mask):
        h = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return h + self.mlp(self.post_attention_layernorm(h))


class Decoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.layers = nn.ModuleList(DecoderLayer(cfg)
                                    for _ in range(cfg.num_layers))
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        # Rotary tables in f32 as Hugging Face computes them.
        hd = cfg.head_dim
        inv_freq = 1.0 / cfg.rope_theta ** (
            torch.arange(0, hd, 2, dtype=torch.int64).float() / hd)
        freqs = torch.outer(torch.arange(cfg.seq_len).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)
        mask = torch.full((cfg.seq_len, cfg.seq_len),
                          torch.finfo(torch.float32).min).triu(1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, inputs):
        s = inputs.shape[1]
        cos, sin, mask = self.cos[:s], self.sin[:s], self.mask[:s, :s]
        x = self.embed_tokens(inputs)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.norm(x)


class LlamaForCausalLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.model = Decoder(cfg)
        self.lm_head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)

    def forward(self, tokens):
        """Mean next-token cross-entropy of `tokens` [B, S+1]."""
        logits = self.lm_head(self.model(tokens[:, :-1]))
        return F.cross_entropy(logits.reshape(-1, self.cfg.vocab_size),
                               tokens[:, 1:].reshape(-1))


def make_optimizer(cfg, model):
    """AdamW with weight decay on the matrices only, as the reference."""
    matrices = {s.name for s in llama_torch.parameter_specs(cfg)
                if s.is_matrix}
    params = dict(model.named_parameters())
    return torch.optim.AdamW(
        [{"params": [p for n, p in params.items() if n in matrices],
          "weight_decay": cfg.weight_decay},
         {"params": [p for n, p in params.items() if n not in matrices],
          "weight_decay": 0.0}],
        lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.adam_eps)


def train_step(cfg, model, optimizer, tokens, step):
    """One update; returns the loss."""
    optimizer.zero_grad(set_to_none=True)
    loss = model(tokens)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_norm)
    for group in optimizer.param_groups:
        group["lr"] = llama_torch.lr_at(cfg, step)
    optimizer.step()
    return loss


def set_blas_threads(threads):
    """Sizes OpenBLAS's own thread pool, which runs PyTorch's GEMMs in
    Debian's build and which torch.set_num_threads leaves alone. Returns
    False where PyTorch runs on no OpenBLAS."""
    try:
        openblas = ctypes.CDLL("libopenblas.so.0")
    except OSError:
        return False
    openblas.openblas_set_num_threads(threads)
    return True


def _peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run(cfg, steps, warmup, threads, intra_op_threads, seed):
    """Times `steps` updates after `warmup` untimed ones, in this process."""
    torch.set_num_threads(intra_op_threads)
    openblas = set_blas_threads(threads)
    baseline = _peak_rss_mib()
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg)
    model.load_state_dict({n: torch.from_numpy(a) for n, a in
                           llama_torch.init_params(cfg, seed).items()})
    optimizer = make_optimizer(cfg, model)
    rng = np.random.default_rng(seed)
    tokens = torch.from_numpy(rng.integers(
        0, cfg.vocab_size, (cfg.batch_size, cfg.seq_len + 1), dtype=np.int64))
    times = []
    for step in range(warmup + steps):
        start = time.perf_counter()
        loss = train_step(cfg, model, optimizer, tokens, step)
        if step >= warmup:
            times.append(time.perf_counter() - start)
    step_s = statistics.median(times)
    return {"peer": "pytorch-eager-fp32", "config": cfg.name,
            "threads": threads, "intra_op_threads": intra_op_threads,
            "openblas": openblas, "steps": steps,
            "tokens_per_s": round(cfg.tokens_per_step / step_s, 1),
            "step_ms": round(step_s * 1e3, 2),
            "peak_rss_mib": round(_peak_rss_mib(), 1),
            "baseline_rss_mib": round(baseline, 1),
            "final_loss": round(loss.item(), 4)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="JSON config (default: tiny preset)")
    parser.add_argument("--steps", type=int, default=10,
                        help="timed steps (default 10)")
    parser.add_argument("--warmup", type=int, default=2,
                        help="untimed steps first (default 2)")
    parser.add_argument("--threads", type=int, default=2,
                        help="cores: OpenBLAS threads for the GEMMs "
                        "(default 2)")
    parser.add_argument("--intra-op-threads", type=int, default=1,
                        help="torch.set_num_threads, for the other ops "
                        "(default 1; see the module docstring)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.config:
        with open(args.config) as f:
            cfg = llama_torch.LlamaConfig.from_dict(json.load(f))
    else:
        cfg = llama_torch.LlamaConfig.preset("tiny")
    if args.steps < 1 or args.warmup < 0 or min(args.threads,
                                                 args.intra_op_threads) < 1:
        parser.error("--steps and the thread counts must be positive, "
                     "--warmup non-negative")
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        result = pool.submit(run, cfg, args.steps, args.warmup, args.threads,
                             args.intra_op_threads, args.seed).result()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
