"""PyTorch peer of the mxfp4 GPU performance benchmarks (NVIDIA H200).

Our GPU numbers only mean something next to what PyTorch does on the same
machine, so this script measures PyTorch's side of each comparison:

  step  The Llama training step that mxfp4 compiles (same architecture,
        parameters, loss, clipping, AdamW and schedule; see below), trained
        the way a PyTorch user would: `nn.Module`s with Hugging Face names,
        F.scaled_dot_product_attention(is_causal=True), clip_grad_norm_ and
        torch.optim.AdamW. Variants:
          bf16          bf16 autocast over f32 master weights, eager
                        ("PyTorch's bf16 training step");
          bf16-compile  the same with the model and loss under torch.compile
                        (forward and backward compiled; the optimizer runs
                        eagerly);
          f32           no autocast, eager: the peer of our "bf16" recipe,
                        which currently computes every GEMM in f32.
        Times each step with CUDA events over --iters steps after --warmup
        untimed ones (--compile-warmup for torch.compile) and reports mean
        and min ms per step and tokens/s (from the mean).
  gemm  cuBLAS bf16 GEMM, A[M, K] @ B[N, K]^T with f32 accumulation (bf16
        reduced-precision split-K reductions off) and a bf16 result: the
        peer of our MXFP4 GEMM. TFLOP/s = 2 M N K / time, best of --repeats
        batches of back-to-back calls on the same operands (no L2 flush
        between calls). Default shapes: the pilot preset's linear layers
        at 32768 tokens (q/o, k/v, gate/up, down) and 8192^3.
        With --scaled-shapes, also Triton's `tl.dot_scaled` on the same
        MXFP4 operands as our GEMM (e2m1 values, two a byte along K; E8M0
        scales a block of 32; A [M, K/2], B [N, K/2]; bf16 result), the
        MXFP4 GEMM's second peer: autotuned over a few tile shapes, timed
        as the cuBLAS GEMM is.
  copy  Device-to-device copy (`dst.copy_(src)`): the bandwidth peer of our
        quantize kernels. GB/s counts the bytes read plus the bytes written.

The model mirrors lib/Models/LlamaStep.cpp and LlamaBlocks.cpp: token
embedding; per layer x + attn(rmsnorm(x)), then h + mlp(rmsnorm(h)), with
RMSNorm gain * (x * rsqrt(mean(x^2) + norm_eps)); RoPE with theta rope_theta
on half-split pairs (i, i + hd/2), i.e. Hugging Face's rotate_half; grouped
query attention (KV head j serves query heads j*g .. j*g+g-1, g = heads /
kv_heads) with a causal mask and 1/sqrt(hd) scaling; SwiGLU down(silu(gate)
* up); a final RMSNorm; an untied lm_head; and the mean cross-entropy over
all batch * seq positions of tokens[:, 1:] predicted from tokens[:, :-1]
(tokens [batch, seq+1]). The step clips the global gradient norm to
clip_norm and runs AdamW (beta1, beta2, adam_eps; weight decay on the
matrices, not on the RMSNorm gains) with linear warm-up and cosine decay to
min_lr_ratio * lr. Configs, parameter order, initialization and the schedule
come from test/Integration/lib/llama_torch.py, the functional reference that
compare_step.py holds the compiled step against.

    python3 scripts/gpu/torch_reference.py step|gemm|copy|attention|all
        [--preset pilot | --config cfg.json] [--json out.json] ...
    python3 scripts/gpu/torch_reference.py step --cpu-smoke

Without a CUDA device it exits with status 2, unless --cpu-smoke asks for
one f32 step of the (default tiny) config on the CPU.
"""

import argparse
import contextlib
import dataclasses
import json
import math
import os
import sys
import time
from typing import Callable, Dict, List, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# Run on the GPU machine and by scripts/gpu/bench.py, not under lit (whose
# PYTHONPATH gives the tests their helpers): test/Integration/lib by path.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "test", "Integration", "lib"))
import llama_torch as lt  # noqa: E402

PILOT_TOKENS = 32768
DEFAULT_SHAPES = (f"{PILOT_TOKENS}x512x512,{PILOT_TOKENS}x256x512,"
                  f"{PILOT_TOKENS}x1408x512,{PILOT_TOKENS}x512x1408,"
                  "8192x8192x8192")
DEFAULT_COPIES = f"{PILOT_TOKENS}x1408:f32,16384x4096:bf16"
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16,
          "f16": torch.float16, "u8": torch.uint8}


class Variant(NamedTuple):
    name: str
    autocast: bool
    compile: bool
    label: str


VARIANTS = {
    "bf16": Variant("bf16-autocast-eager", True, False,
                    "PyTorch bf16 autocast, f32 master weights, eager"),
    "bf16-compile": Variant("bf16-autocast-compile", True, True,
                            "PyTorch bf16 autocast, f32 master weights, "
                            "torch.compile (optimizer eager)"),
    "f32": Variant("f32-eager", False, False,
                   "PyTorch f32, no autocast, eager (the peer of our 'bf16' "
                   "recipe, which computes in f32)"),
}


# --- The model -------------------------------------------------------------


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        # Hugging Face's LlamaRMSNorm: normalize in f32, scale in x's dtype.
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def causal_attention(q, k, v):
    """softmax(q k^T / sqrt(hd), causal) v on [B, heads, S, hd]."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    # PyTorch 1.x (the CPU smoke test) has no fused attention.
    s = q.shape[-2]
    future = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    return scores.masked_fill(future, float("-inf")).softmax(-1) @ v


class Attention(nn.Module):
    def __init__(self, cfg: lt.LlamaConfig):
        super().__init__()
        hd = cfg.head_dim
        self.heads, self.kv_heads, self.head_dim = (cfg.num_heads,
                                                    cfg.num_kv_heads, hd)
        self.q_proj = nn.Linear(cfg.dim, cfg.num_heads * hd, bias=False)
        self.k_proj = nn.Linear(cfg.dim, cfg.num_kv_heads * hd, bias=False)
        self.v_proj = nn.Linear(cfg.dim, cfg.num_kv_heads * hd, bias=False)
        self.o_proj = nn.Linear(cfg.num_heads * hd, cfg.dim, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, -1).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, -1).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, -1).transpose(1, 2)
        cos, sin = cos.to(q.dtype), sin.to(q.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # Hugging Face's repeat_kv: KV head j serves query heads
        # j*g .. j*g+g-1.
        groups = self.heads // self.kv_heads
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        out = causal_attention(q, k, v)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, -1))


class MLP(nn.Module):
    def __init__(self, cfg: lt.LlamaConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.up_proj = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.down_proj = nn.Linear(cfg.ffn_dim, cfg.dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg: lt.LlamaConfig):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin):
        h = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return h + self.mlp(self.post_attention_layernorm(h))


class Decoder(nn.Module):
    def __init__(self, cfg: lt.LlamaConfig):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.layers = nn.ModuleList(DecoderLayer(cfg)
                                    for _ in range(cfg.num_layers))
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        # RoPE tables [S, hd] in f32, as Hugging Face and our builder make
        # them: angle(s, i) = s / theta^(2i / hd), repeated for both halves.
        hd = cfg.head_dim
        inv_freq = 1.0 / cfg.rope_theta ** (
            torch.arange(0, hd, 2, dtype=torch.int64).float() / hd)
        angles = torch.outer(torch.arange(cfg.seq_len).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, inputs):
        x = self.embed_tokens(inputs)
        for layer in self.layers:
            x = layer(x, self.cos, self.sin)
        return self.norm(x)


class LlamaForCausalLM(nn.Module):
    """Named as Hugging Face's, so the state dict is the checkpoint's."""

    def __init__(self, cfg: lt.LlamaConfig):
        super().__init__()
        self.vocab_size = cfg.vocab_size
        self.model = Decoder(cfg)
        self.lm_head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)

    def forward(self, tokens):
        """Mean next-token cross-entropy of `tokens` [B, S+1]."""
        logits = self.lm_head(self.model(tokens[:, :-1]))
        return F.cross_entropy(logits.reshape(-1, self.vocab_size),
                               tokens[:, 1:].reshape(-1))


def build_model(cfg: lt.LlamaConfig, device, seed: int) -> LlamaForCausalLM:
    """The model with llama_torch's seeded initialization (normal(0,
    init_std) matrices, unit gains); load_state_dict checks that names and
    shapes are the compiled step's parameters."""
    model = LlamaForCausalLM(cfg)
    model.load_state_dict({name: torch.from_numpy(array) for name, array in
                           lt.init_params(cfg, seed).items()})
    return model.to(device)


def make_optimizer(cfg: lt.LlamaConfig, model: nn.Module, fused: bool):
    """AdamW with weight decay on the matrices only, as our step."""
    matrices = {s.name for s in lt.parameter_specs(cfg) if s.is_matrix}
    params = dict(model.named_parameters())
    groups = [{"params": [p for n, p in params.items() if n in matrices],
               "weight_decay": cfg.weight_decay},
              {"params": [p for n, p in params.items() if n not in matrices],
               "weight_decay": 0.0}]
    extra = {"fused": True} if fused else {}
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2),
                             eps=cfg.adam_eps, **extra)


def random_tokens(cfg: lt.LlamaConfig, device, seed: int) -> torch.Tensor:
    rng = np.random.default_rng(seed + 1)
    tokens = rng.integers(0, cfg.vocab_size, (cfg.batch_size, cfg.seq_len + 1))
    return torch.from_numpy(tokens).to(device)


# --- Timing ----------------------------------------------------------------


def synchronize(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Clock:
    """Marks between steps: CUDA events (no host synchronization inside the
    timed loop) or, on the CPU, perf_counter."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"
        self.marks = []

    def mark(self) -> None:
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            self.marks.append(event)
        else:
            self.marks.append(time.perf_counter())

    def intervals_ms(self) -> List[float]:
        pairs = zip(self.marks, self.marks[1:])
        if self.cuda:
            torch.cuda.synchronize()
            return [start.elapsed_time(end) for start, end in pairs]
        return [(end - start) * 1e3 for start, end in pairs]


def batch_ms(fn: Callable[[], object], calls: int) -> float:
    """GPU time of `calls` back-to-back calls of fn."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


# --sustain's seconds (main sets it); 0 for the best short batch.
SUSTAIN_S = 0.0


def best_ms(fn: Callable[[], object], repeats: int,
            batch_target_ms: float = 2.0) -> float:
    """The best per-call time over `repeats` batches, each of enough calls
    to last about batch_target_ms (so launch gaps and event resolution stay
    small next to the work). With --sustain S, the mean per-call time of
    back-to-back calls for S seconds instead: the device then runs at the
    clocks its power limit allows for that work, as in training, not at
    the boost clocks of a short burst."""
    batch_ms(fn, 3)
    once = batch_ms(fn, 1)
    if SUSTAIN_S > 0:
        calls = max(1, math.ceil(SUSTAIN_S * 1e3 / max(once, 1e-3)))
        return batch_ms(fn, calls) / calls
    calls = max(1, min(1000, math.ceil(batch_target_ms / max(once, 1e-3))))
    return min(batch_ms(fn, calls) for _ in range(repeats)) / calls


# --- step ------------------------------------------------------------------


def train_step(cfg, forward, model, optimizer, tokens, step, autocast):
    """One update: loss, backward, global-norm clipping, the scheduled lr,
    AdamW. Returns the loss tensor (not synchronized)."""
    optimizer.zero_grad(set_to_none=True)
    with autocast():
        loss = forward(tokens)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_norm)
    for group in optimizer.param_groups:
        group["lr"] = lt.lr_at(cfg, step)
    optimizer.step()
    return loss


def sdpa_backend(run: Callable[[], object]) -> str:
    """The attention kernels that one forward dispatches to, read off the
    profiler's aten::_scaled_dot_product_* ops."""
    if not hasattr(F, "scaled_dot_product_attention"):
        return (f"none (torch {torch.__version__} has no "
                "F.scaled_dot_product_attention; explicit masked softmax)")
    prefix = "aten::_scaled_dot_product_"
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        run()
    names = {e.key[len(prefix):] for e in profile.key_averages()
             if e.key.startswith(prefix)}
    return ", ".join(sorted(names)) or "unknown"


def autocast_context(device, enabled: bool):
    """A factory of bf16 autocast contexts, or of null ones."""
    if not enabled:
        return contextlib.nullcontext
    return lambda: torch.autocast(device.type, dtype=torch.bfloat16)


def time_steps(run_step: Callable[[int], torch.Tensor], warmup: int,
               iters: int, device):
    """Runs `warmup` untimed steps, then `iters` timed ones. Returns the
    wall time of the first step (None without warm-up), the timed steps'
    ms and the last loss."""
    first_step_s = None
    for step in range(warmup):
        start = time.perf_counter()
        run_step(step)
        if step == 0:
            synchronize(device)
            first_step_s = time.perf_counter() - start
    clock = Clock(device)
    clock.mark()
    for step in range(warmup, warmup + iters):
        loss = run_step(step)
        clock.mark()
    return first_step_s, clock.intervals_ms(), loss.item()


def run_variant(cfg, variant: Variant, args, device) -> Dict:
    """Builds a fresh model and optimizer and times the training step."""
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    model = build_model(cfg, device, args.seed)
    optimizer = make_optimizer(cfg, model, args.fused_adamw)
    tokens = random_tokens(cfg, device, args.seed)
    forward = model
    if variant.compile:
        if not hasattr(torch, "compile"):
            raise RuntimeError(f"torch {torch.__version__} has no "
                               "torch.compile")
        forward = torch.compile(model, mode=args.compile_mode)
    autocast = autocast_context(device, variant.autocast)
    warmup = args.compile_warmup if variant.compile else args.warmup
    first_step_s, times, loss = time_steps(
        lambda step: train_step(cfg, forward, model, optimizer, tokens, step,
                                autocast),
        warmup, args.iters, device)

    def probe_forward():
        with autocast():
            forward(tokens)

    mean_ms = sum(times) / len(times)
    result = {
        "variant": variant.name, "description": variant.label,
        "autocast_bf16": variant.autocast, "compiled": variant.compile,
        "compile_mode": args.compile_mode if variant.compile else None,
        "optimizer": "AdamW " + ("fused" if args.fused_adamw else
                                 "default implementation") + ", eager",
        "sdpa_backend": sdpa_backend(probe_forward),
        "warmup": warmup, "iters": args.iters, "first_step_s": first_step_s,
        "mean_ms": mean_ms, "min_ms": min(times),
        "tokens_per_s": cfg.tokens_per_step / (mean_ms * 1e-3),
        "final_loss": loss,
    }
    if device.type == "cuda":
        result["peak_memory_gib"] = (torch.cuda.max_memory_allocated(device)
                                     / 2**30)
    return result


def print_step(result: Dict) -> None:
    if "error" in result:
        print(f"step {result['variant']}: {result['error']}")
        return
    first = result["first_step_s"]
    extras = [f"sdpa: {result['sdpa_backend']}",
              f"loss {result['final_loss']:.4f}"]
    if first is not None:
        extras.append(f"first step {first:.2f} s")
    if "peak_memory_gib" in result:
        extras.append(f"peak {result['peak_memory_gib']:.2f} GiB")
    print(f"step {result['variant']}: mean {result['mean_ms']:.2f} ms, "
          f"min {result['min_ms']:.2f} ms, "
          f"{result['tokens_per_s']:,.0f} tokens/s ({'; '.join(extras)})")
    print(f"  = {result['description']}")


def bench_step(cfg, args, device) -> List[Dict]:
    print(f"config {cfg.name}: dim {cfg.dim}, {cfg.num_layers} layers, "
          f"{cfg.num_heads} heads / {cfg.num_kv_heads} KV, ffn "
          f"{cfg.ffn_dim}, vocab {cfg.vocab_size}, batch {cfg.batch_size} x "
          f"seq {cfg.seq_len} = {cfg.tokens_per_step} tokens/step; "
          f"f32 matmul precision '{torch.get_float32_matmul_precision()}'")
    results = []
    for key in args.variants:
        variant = VARIANTS[key]
        try:
            result = run_variant(cfg, variant, args, device)
        except Exception as error:  # torch.compile fails in many ways
            if not variant.compile:
                raise
            first_line = (str(error).strip().splitlines() or [""])[0]
            result = {"variant": variant.name, "error":
                      f"torch.compile unavailable: "
                      f"{type(error).__name__}: {first_line}"}
        print_step(result)
        results.append(result)
    return results


# --- gemm and copy ---------------------------------------------------------


@contextlib.contextmanager
def full_precision_bf16_reductions():
    """cuBLAS bf16 GEMMs with split-K reductions in f32, too."""
    matmul = torch.backends.cuda.matmul
    previous = matmul.allow_bf16_reduced_precision_reduction
    matmul.allow_bf16_reduced_precision_reduction = False
    try:
        yield
    finally:
        matmul.allow_bf16_reduced_precision_reduction = previous


def gemm_ms(m: int, n: int, k: int, repeats: int) -> float:
    """Best time of bf16 A[M, K] @ B[N, K]^T into a preallocated C."""
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    return best_ms(lambda: torch.mm(a, b.t(), out=c), repeats)


def triton_scaled_gemm():
    """Triton's MXFP4 GEMM: C[M, N] = A B^T from e2m1 operands packed two a
    byte along K with E8M0 scales a block of 32 (our operand layout), by
    `tl.dot_scaled` with f32 accumulation, autotuned; tiles are taken in
    groups of 8 along M, as ours are."""
    import triton
    import triton.language as tl

    configs = [triton.Config({"BM": bm, "BN": bn, "BK": bk}, num_warps=w,
                             num_stages=st)
               for bm, bn, bk, w, st in [(128, 128, 128, 8, 3),
                                         (128, 256, 128, 8, 3),
                                         (128, 128, 256, 8, 3),
                                         (64, 128, 256, 4, 4)]]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, M, N, K,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BM)
        tiles_n = tl.cdiv(N, BN)
        group = pid // (8 * tiles_n)
        first_m = group * 8
        rows = tl.minimum(tiles_m - first_m, 8)
        in_group = pid % (8 * tiles_n)
        offs_m = (first_m + in_group % rows) * BM + tl.arange(0, BM)
        offs_n = (in_group // rows) * BN + tl.arange(0, BN)
        offs_kp = tl.arange(0, BK // 2)
        offs_ks = tl.arange(0, BK // 32)
        in_m = offs_m[:, None] < M
        in_n = offs_n[:, None] < N
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            a = tl.load(a_ptr + offs_m[:, None] * (K // 2)
                        + (k0 // 2 + offs_kp)[None, :], mask=in_m, other=0)
            b = tl.load(b_ptr + offs_n[:, None] * (K // 2)
                        + (k0 // 2 + offs_kp)[None, :], mask=in_n, other=0)
            sa = tl.load(sa_ptr + offs_m[:, None] * (K // 32)
                         + (k0 // 32 + offs_ks)[None, :], mask=in_m, other=127)
            sb = tl.load(sb_ptr + offs_n[:, None] * (K // 32)
                         + (k0 // 32 + offs_ks)[None, :], mask=in_n, other=127)
            acc = tl.dot_scaled(a, sa, "e2m1", b.T, sb, "e2m1", acc)
        tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :],
                 acc.to(tl.bfloat16), mask=in_m & (offs_n[None, :] < N))

    def run(a, sa, b, sb, c):
        m, n, k = a.shape[0], b.shape[0], 2 * a.shape[1]
        grid = lambda meta: (triton.cdiv(m, meta["BM"]) *
                             triton.cdiv(n, meta["BN"]),)
        kernel[grid](a, sa, b, sb, c, m, n, k)
        return kernel.best_config

    return run


def scaled_gemm(m: int, n: int, k: int, repeats: int) -> Dict:
    """Triton's dot_scaled MXFP4 GEMM on random operands (scales near 1)."""
    try:
        run = triton_scaled_gemm()
        a = torch.randint(0, 256, (m, k // 2), device="cuda", dtype=torch.uint8)
        b = torch.randint(0, 256, (n, k // 2), device="cuda", dtype=torch.uint8)
        sa = torch.randint(120, 134, (m, k // 32), device="cuda",
                           dtype=torch.uint8)
        sb = torch.randint(120, 134, (n, k // 32), device="cuda",
                           dtype=torch.uint8)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        config = run(a, sa, b, sb, c)  # autotunes
        ms = best_ms(lambda: run(a, sa, b, sb, c), repeats)
    except Exception as e:  # a peer that cannot run is reported, not fatal
        print(f"gemm {m}x{n}x{k} Triton dot_scaled: failed: {e}")
        return {"error": f"{type(e).__name__}: {e}"}
    tflops = 2 * m * n * k / (ms * 1e-3) / 1e12
    print(f"gemm {m}x{n}x{k} (MxNxK) Triton dot_scaled e2m1: "
          f"{ms * 1e3:.1f} us, {tflops:.1f} TFLOP/s ({config})")
    return {"ms": ms, "tflops": tflops, "config": str(config)}


def bench_gemm(shapes: List[List[int]], repeats: int,
               scaled: List[List[int]] = ()) -> List[Dict]:
    results = []
    with full_precision_bf16_reductions():
        for m, n, k in shapes:
            ms = gemm_ms(m, n, k, repeats)
            tflops = 2 * m * n * k / (ms * 1e-3) / 1e12
            print(f"gemm {m}x{n}x{k} (MxNxK) cuBLAS bf16, f32 accumulate: "
                  f"{ms * 1e3:.1f} us, {tflops:.1f} TFLOP/s")
            results.append({"m": m, "n": n, "k": k, "dtype": "bf16",
                            "accumulate": "f32", "ms": ms, "tflops": tflops})
            if [m, n, k] in scaled:
                results[-1]["triton_dot_scaled"] = scaled_gemm(m, n, k,
                                                               repeats)
    return results


def copy_ms(dims: List[int], dtype: torch.dtype, repeats: int) -> float:
    """Best time of a device-to-device copy of a `dims` tensor."""
    src = torch.ones(dims, device="cuda", dtype=dtype)
    dst = torch.empty_like(src)
    return best_ms(lambda: dst.copy_(src), repeats)


def bench_copy(specs: List[tuple], repeats: int) -> List[Dict]:
    results = []
    for dims, dtype_name in specs:
        dtype = DTYPES[dtype_name]
        ms = copy_ms(dims, dtype, repeats)
        size = math.prod(dims) * torch.empty((), dtype=dtype).element_size()
        gbps = 2 * size / (ms * 1e-3) / 1e9
        shape = "x".join(map(str, dims))
        print(f"copy {shape} {dtype_name} ({size / 1e6:.1f} MB): "
              f"{ms * 1e3:.1f} us, {gbps:.0f} GB/s (read + write)")
        results.append({"shape": dims, "dtype": dtype_name, "bytes": size,
                        "ms": ms, "gb_per_s": gbps})
    return results


def bench_attention(cases: List[str], repeats: int) -> List[Dict]:
    """Causal scaled_dot_product_attention in bf16 on [B, H, S, D] (k and v
    with the KV heads, enable_gqa): the forward, or the backward of one
    forward (autograd.grad with the output's gradient given), best of
    `repeats` batches. A case is DIR:B:H:HKV:S:D, DIR fwd or bwd."""
    results = []
    for case in cases:
        direction, *dims = case.split(":")
        b, h, hkv, s, d = map(int, dims)
        q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16,
                        requires_grad=True)
        k, v = (torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16,
                            requires_grad=True) for _ in range(2))

        def forward():
            return F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                  enable_gqa=True)
        if direction == "fwd":
            with torch.no_grad():
                ms = best_ms(forward, repeats)
        else:
            out = forward()
            grad = torch.randn_like(out)
            ms = best_ms(lambda: torch.autograd.grad(out, (q, k, v), grad,
                                                     retain_graph=True),
                         repeats)
        flops = 2 * b * h * s * s * d * (1 if direction == "fwd" else 2.5)
        tflops = flops / (ms * 1e-3) / 1e12
        print(f"attention {direction} B{b} H{h}/{hkv} S{s} D{d} causal, bf16 "
              f"SDPA ({sdpa_backend(forward)}): {ms * 1e3:.1f} us, "
              f"{tflops:.1f} TFLOP/s")
        results.append({"case": case, "ms": ms, "tflops": tflops})
    return results


# --- Command line ----------------------------------------------------------


def parse_shapes(text: str) -> List[List[int]]:
    try:
        shapes = [[int(d) for d in s.split("x")] for s in text.split(",")]
    except ValueError:
        shapes = []
    if not shapes or any(len(s) != 3 or min(s) <= 0 for s in shapes):
        raise argparse.ArgumentTypeError(
            f"expected MxNxK[,MxNxK...] with positive sizes, got '{text}'")
    return shapes


def parse_copies(text: str) -> List[tuple]:
    specs = []
    for item in text.split(","):
        dims, _, dtype = item.partition(":")
        try:
            shape = [int(d) for d in dims.split("x")]
        except ValueError:
            shape = []
        if not shape or min(shape) <= 0 or dtype not in DTYPES:
            raise argparse.ArgumentTypeError(
                f"expected DIMS:DTYPE (e.g. 32768x1408:f32, 1048576:u8; "
                f"dtypes {', '.join(DTYPES)}), got '{item}'")
        specs.append((shape, dtype))
    return specs


def parse_variants(text: str) -> List[str]:
    keys = text.split(",")
    unknown = [k for k in keys if k not in VARIANTS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown variant(s) {', '.join(unknown)} (known: "
            f"{', '.join(VARIANTS)})")
    return keys


def load_config(args) -> lt.LlamaConfig:
    """--config JSON (the keys of LlamaConfig::fromJSON), else --preset."""
    if args.config:
        with open(args.config) as f:
            values = json.load(f)
        values.setdefault("name", args.config)
        return lt.LlamaConfig.from_dict(values)
    return lt.LlamaConfig.preset(args.preset or
                                 ("tiny" if args.cpu_smoke else "pilot"))


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmark",
                        choices=["step", "gemm", "copy", "attention", "all"])
    model = parser.add_mutually_exclusive_group()
    model.add_argument("--preset", choices=list(lt.PRESETS),
                       help="model preset (default: pilot; tiny with "
                       "--cpu-smoke)")
    model.add_argument("--config", metavar="FILE.json",
                       help="JSON config with LlamaConfig's snake_case keys")
    parser.add_argument("--variants", type=parse_variants,
                        default=list(VARIANTS),
                        help=f"step variants (default: {','.join(VARIANTS)})")
    parser.add_argument("--iters", type=int, default=20,
                        help="timed steps (default 20)")
    parser.add_argument("--warmup", type=int, default=5,
                        help="untimed steps first (default 5)")
    parser.add_argument("--compile-warmup", type=int, default=10,
                        help="untimed steps under torch.compile, the first "
                        "one compiling (default 10)")
    parser.add_argument("--compile-mode", default="default",
                        help="torch.compile mode (default 'default')")
    parser.add_argument("--fused-adamw", action="store_true",
                        help="AdamW(fused=True) instead of the default "
                        "(foreach) implementation")
    parser.add_argument("--shapes", type=parse_shapes,
                        default=parse_shapes(DEFAULT_SHAPES),
                        help=f"GEMM shapes (default {DEFAULT_SHAPES})")
    parser.add_argument("--scaled-shapes", type=parse_shapes, default=[],
                        help="GEMM shapes (of --shapes) also timed as "
                        "Triton's dot_scaled MXFP4 GEMM")
    parser.add_argument("--copies", type=parse_copies,
                        default=parse_copies(DEFAULT_COPIES),
                        help=f"copied tensors (default {DEFAULT_COPIES})")
    parser.add_argument("--attention", type=lambda t: t.split(","),
                        default=[], metavar="DIR:B:H:HKV:S:D[,...]",
                        help="attention cases (DIR fwd or bwd)")
    parser.add_argument("--repeats", type=int, default=10,
                        help="timed batches of GEMMs and copies; the best "
                        "counts (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sustain", type=float, default=0.0, metavar="S",
                        help="gemm, copy and attention: the mean time of S "
                             "seconds of back-to-back calls instead of the "
                             "best short batch")
    parser.add_argument("--json", metavar="FILE",
                        help="also write every number to FILE as JSON")
    parser.add_argument("--cpu-smoke", action="store_true",
                        help="no GPU: one f32 step on the CPU, to check "
                        "that the script runs")
    return parser


def cuda_missing_reason():
    if torch.version.cuda is None:
        return f"this PyTorch ({torch.__version__}) is built without CUDA"
    if not torch.cuda.is_available():
        return (f"torch.cuda.is_available() is False (PyTorch "
                f"{torch.__version__}, CUDA {torch.version.cuda}); check the "
                "driver and CUDA_VISIBLE_DEVICES")
    return None


def main() -> int:
    parser = make_parser()
    args = parser.parse_args()
    if min(args.iters, args.repeats) < 1 or min(args.warmup,
                                                args.compile_warmup) < 0:
        parser.error("--iters and --repeats must be positive, the warm-ups "
                     "non-negative")
    if args.sustain < 0:
        parser.error("--sustain must be non-negative")
    global SUSTAIN_S
    SUSTAIN_S = args.sustain
    if args.cpu_smoke:
        if args.benchmark not in ("step", "all"):
            parser.error("--cpu-smoke runs the step benchmark only")
        device = torch.device("cpu")
        args.benchmark, args.variants = "step", ["f32"]
        args.iters, args.warmup = 1, 0
    else:
        reason = cuda_missing_reason()
        if reason:
            print(f"no CUDA device: {reason} (--cpu-smoke runs a CPU smoke "
                  "test of the step)", file=sys.stderr)
            return 2
        device = torch.device("cuda")
    torch.manual_seed(args.seed)
    cfg = load_config(args)
    report = {"argv": sys.argv[1:], "torch": torch.__version__,
              "cuda": torch.version.cuda,
              "device": (torch.cuda.get_device_name(device)
                         if device.type == "cuda" else "cpu (smoke test)"),
              "float32_matmul_precision":
                  torch.get_float32_matmul_precision()}
    print(f"device: {report['device']}; torch {report['torch']}, "
          f"CUDA {report['cuda']}")
    if args.benchmark in ("step", "all"):
        report["config"] = dataclasses.asdict(cfg)
        report["step"] = bench_step(cfg, args, device)
    if args.benchmark in ("gemm", "all"):
        report["gemm"] = bench_gemm(args.shapes, args.repeats,
                                    args.scaled_shapes)
    if args.benchmark in ("copy", "all"):
        report["copy"] = bench_copy(args.copies, args.repeats)
    if args.benchmark in ("attention", "all") and args.attention:
        report["attention"] = bench_attention(args.attention, args.repeats)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
