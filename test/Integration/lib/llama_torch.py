"""PyTorch reference of the Llama training step that mxfp4 compiles.

The compiled step (built by the C++ Llama builder from `LlamaConfig.h`) takes
the parameters in a fixed order and returns the loss, the gradients and, for
`train_step`, the AdamW update. This module computes the same things with
PyTorch autograd on a functional model with Hugging Face Llama semantics, so
`compare_step.py` can check the compiled step against it and the benchmark can
train the same model:

  * `LlamaConfig`: the run's hyper-parameters, from the snake_case JSON keys
    that `LlamaConfig::fromJSON` reads (missing keys keep the preset's values);
  * `parameter_specs(cfg)`: names, shapes and weight-decay flags, in the order
    of `getLlamaParameters`;
  * `init_params(cfg, seed)`: normal(0, init_std) matrices and unit gains;
  * `loss_and_grads(cfg, params, tokens)`: mean cross-entropy and gradients;
  * `train_step(cfg, params, m, v, tokens, step)`: gradients, global-norm
    clipping, the warm-up/cosine learning rate and one AdamW update, done by
    `torch.nn.utils.clip_grad_norm_` and `torch.optim.AdamW` themselves.

Arrays cross the interface as NumPy arrays keyed by Hugging Face names. The
model runs in the parameters' dtype (f32 for the checks; f64 serves the
finite-difference self-check).
"""

import dataclasses
import math
from typing import Dict, List, NamedTuple, Tuple

import numpy as np
import torch
import torch.nn.functional as F


@dataclasses.dataclass
class LlamaConfig:
    """The fields of `mlir::mxfp4::LlamaConfig`, in snake_case."""

    name: str = "tiny"
    vocab_size: int = 256
    dim: int = 256
    num_layers: int = 4
    num_heads: int = 4
    num_kv_heads: int = 2
    ffn_dim: int = 768
    seq_len: int = 256
    batch_size: int = 8
    norm_eps: float = 1e-5
    rope_theta: float = 500000.0
    tokenizer: str = "byte"
    lr: float = 3e-3
    min_lr_ratio: float = 0.1
    warmup_steps: int = 20
    total_steps: int = 300
    beta1: float = 0.9
    beta2: float = 0.95
    adam_eps: float = 1e-8
    weight_decay: float = 0.1
    clip_norm: float = 1.0
    init_std: float = 0.02

    @property
    def head_dim(self) -> int:
        return self.dim // self.num_heads

    @property
    def tokens_per_step(self) -> int:
        return self.batch_size * self.seq_len

    @classmethod
    def preset(cls, name: str) -> "LlamaConfig":
        if name not in PRESETS:
            raise ValueError(f"unknown preset '{name}' (known: "
                             f"{', '.join(PRESETS)})")
        return dataclasses.replace(PRESETS[name])

    @classmethod
    def from_dict(cls, d: dict) -> "LlamaConfig":
        """Reads a JSON object as `LlamaConfig::fromJSON` does: the "preset"
        key (default "tiny") gives the values of missing keys."""
        d = dict(d)
        cfg = cls.preset(d.pop("preset", "tiny"))
        fields = {f.name for f in dataclasses.fields(cls)}
        for key, value in d.items():
            if key not in fields:
                raise ValueError(f"unknown config key '{key}'")
            kind = type(getattr(cfg, key))
            if kind is int and not (isinstance(value, int) and
                                    not isinstance(value, bool)):
                raise ValueError(f"config key '{key}' must be an integer")
            setattr(cfg, key, kind(value))
        cfg.verify()
        return cfg

    def verify(self) -> None:
        """The shape checks of `LlamaConfig::verify` (not its ranges of the
        optimizer settings, nor its tokenizer/vocabulary rule, so that the
        self-check can use a 32-token vocabulary)."""
        sizes = ("vocab_size", "dim", "num_layers", "num_heads",
                 "num_kv_heads", "ffn_dim", "seq_len", "batch_size")
        for key in sizes:
            if getattr(self, key) <= 0:
                raise ValueError(f"config key '{key}' must be positive")
        if self.dim % self.num_heads:
            raise ValueError("'num_heads' must divide 'dim'")
        if self.num_heads % self.num_kv_heads:
            raise ValueError("'num_kv_heads' must divide 'num_heads'")
        if self.head_dim % 2:
            raise ValueError("the head dimension dim/num_heads must be even")


# The presets of `LlamaConfig::fromPreset`.
PRESETS = {
    "tiny": LlamaConfig(),
    "small": LlamaConfig(
        name="small", vocab_size=100352, tokenizer="cl100k", dim=768,
        num_layers=12, num_heads=12, num_kv_heads=4, ffn_dim=2048,
        seq_len=1024, batch_size=16, lr=1e-3, warmup_steps=100,
        total_steps=2000),
    "pilot": LlamaConfig(
        name="pilot", dim=512, num_layers=8, num_heads=8, num_kv_heads=4,
        ffn_dim=1408, seq_len=512, batch_size=64, lr=1.5e-3, warmup_steps=60,
        total_steps=1200),
    "llama3.2-1b": LlamaConfig(
        name="llama3.2-1b", vocab_size=128256, tokenizer="cl100k", dim=2048,
        num_layers=16, num_heads=32, num_kv_heads=8, ffn_dim=8192,
        seq_len=8192, batch_size=1, lr=3e-4, warmup_steps=2000,
        total_steps=100000),
    "llama3.2-3b": LlamaConfig(
        name="llama3.2-3b", vocab_size=128256, tokenizer="cl100k", dim=3072,
        num_layers=28, num_heads=24, num_kv_heads=8, ffn_dim=8192,
        seq_len=8192, batch_size=1, lr=3e-4, warmup_steps=2000,
        total_steps=100000),
    "llama3.1-8b": LlamaConfig(
        name="llama3.1-8b", vocab_size=128256, tokenizer="cl100k", dim=4096,
        num_layers=32, num_heads=32, num_kv_heads=8, ffn_dim=14336,
        seq_len=8192, batch_size=1, lr=3e-4, warmup_steps=2000,
        total_steps=100000),
}


class ParameterSpec(NamedTuple):
    name: str
    shape: Tuple[int, ...]
    is_matrix: bool


def parameter_specs(cfg: LlamaConfig) -> List[ParameterSpec]:
    """The parameters in the order the compiled step takes them."""
    hd, d, f = cfg.head_dim, cfg.dim, cfg.ffn_dim
    specs = [ParameterSpec("model.embed_tokens.weight", (cfg.vocab_size, d),
                           True)]
    for i in range(cfg.num_layers):
        p = f"model.layers.{i}."
        specs += [
            ParameterSpec(p + "input_layernorm.weight", (d,), False),
            ParameterSpec(p + "self_attn.q_proj.weight",
                          (cfg.num_heads * hd, d), True),
            ParameterSpec(p + "self_attn.k_proj.weight",
                          (cfg.num_kv_heads * hd, d), True),
            ParameterSpec(p + "self_attn.v_proj.weight",
                          (cfg.num_kv_heads * hd, d), True),
            ParameterSpec(p + "self_attn.o_proj.weight",
                          (d, cfg.num_heads * hd), True),
            ParameterSpec(p + "post_attention_layernorm.weight", (d,), False),
            ParameterSpec(p + "mlp.gate_proj.weight", (f, d), True),
            ParameterSpec(p + "mlp.up_proj.weight", (f, d), True),
            ParameterSpec(p + "mlp.down_proj.weight", (d, f), True),
        ]
    specs += [ParameterSpec("model.norm.weight", (d,), False),
              ParameterSpec("lm_head.weight", (cfg.vocab_size, d), True)]
    return specs


def init_params(cfg: LlamaConfig, seed: int) -> Dict[str, np.ndarray]:
    """normal(0, init_std) matrices and unit RMSNorm gains, f32."""
    rng = np.random.default_rng(seed)
    params = {}
    for spec in parameter_specs(cfg):
        if spec.is_matrix:
            params[spec.name] = rng.normal(0.0, cfg.init_std,
                                           spec.shape).astype(np.float32)
        else:
            params[spec.name] = np.ones(spec.shape, np.float32)
    return params


def lr_at(cfg: LlamaConfig, step: int) -> float:
    """Learning rate of the 0-based update `step`: linear warm-up, then cosine
    decay to min_lr_ratio * lr at total_steps."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    min_lr = cfg.lr * cfg.min_lr_ratio
    progress = (step - cfg.warmup_steps) / max(1, cfg.total_steps -
                                               cfg.warmup_steps)
    progress = min(max(progress, 0.0), 1.0)
    return min_lr + 0.5 * (cfg.lr - min_lr) * (1.0 + math.cos(math.pi *
                                                              progress))


# --- The functional model -------------------------------------------------


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float):
    variance = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(variance + eps))


def rope_cos_sin(cfg: LlamaConfig, dtype: torch.dtype):
    """cos and sin [S, hd] of HF Llama's rotary embedding. The angles are
    computed in f64 and rounded once, so they are the exact tables that any
    f32 implementation should approximate."""
    hd = cfg.head_dim
    inv_freq = 1.0 / cfg.rope_theta ** (
        torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    freqs = torch.outer(torch.arange(cfg.seq_len, dtype=torch.float64),
                        inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x[..., :x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
    """x [B, heads, S, hd]; cos, sin [S, hd]."""
    return x * cos + rotate_half(x) * sin


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """[B, KV, S, hd] -> [B, KV*n_rep, S, hd]; KV head j serves query heads
    j*n_rep .. j*n_rep+n_rep-1 (HF `repeat_kv`)."""
    return torch.repeat_interleave(x, n_rep, dim=1)


def attention(cfg: LlamaConfig, p: Dict[str, torch.Tensor], prefix: str,
              x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
    b, s, _ = x.shape
    hd, h, kv = cfg.head_dim, cfg.num_heads, cfg.num_kv_heads
    q = F.linear(x, p[prefix + "q_proj.weight"]).view(b, s, h, hd)
    k = F.linear(x, p[prefix + "k_proj.weight"]).view(b, s, kv, hd)
    v = F.linear(x, p[prefix + "v_proj.weight"]).view(b, s, kv, hd)
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    k, v = repeat_kv(k, h // kv), repeat_kv(v, h // kv)
    scores = q @ k.transpose(-1, -2) / math.sqrt(hd)
    future = torch.ones(s, s, dtype=torch.bool).triu(1)
    probs = scores.masked_fill(future, float("-inf")).softmax(-1)
    out = (probs @ v).transpose(1, 2).reshape(b, s, h * hd)
    return F.linear(out, p[prefix + "o_proj.weight"])


def mlp(p: Dict[str, torch.Tensor], prefix: str, x: torch.Tensor):
    gate = F.silu(F.linear(x, p[prefix + "gate_proj.weight"]))
    up = F.linear(x, p[prefix + "up_proj.weight"])
    return F.linear(gate * up, p[prefix + "down_proj.weight"])


def logits(cfg: LlamaConfig, p: Dict[str, torch.Tensor],
           inputs: torch.Tensor) -> torch.Tensor:
    """Logits [B, S, vocab] of the token ids `inputs` [B, S]."""
    cos, sin = rope_cos_sin(cfg, p["model.norm.weight"].dtype)
    x = p["model.embed_tokens.weight"][inputs.long()]
    for i in range(cfg.num_layers):
        pre = f"model.layers.{i}."
        n = rms_norm(x, p[pre + "input_layernorm.weight"], cfg.norm_eps)
        h = x + attention(cfg, p, pre + "self_attn.", n, cos, sin)
        n = rms_norm(h, p[pre + "post_attention_layernorm.weight"],
                     cfg.norm_eps)
        x = h + mlp(p, pre + "mlp.", n)
    x = rms_norm(x, p["model.norm.weight"], cfg.norm_eps)
    return F.linear(x, p["lm_head.weight"])


def loss(cfg: LlamaConfig, p: Dict[str, torch.Tensor],
         tokens: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy of `tokens` [B, S+1] over all B*S
    positions."""
    out = logits(cfg, p, tokens[:, :-1])
    return F.cross_entropy(out.reshape(-1, cfg.vocab_size),
                           tokens[:, 1:].reshape(-1).long())


# --- The NumPy interface --------------------------------------------------


def _check_tokens(cfg: LlamaConfig, tokens: np.ndarray) -> torch.Tensor:
    want = (cfg.batch_size, cfg.seq_len + 1)
    if tokens.shape != want:
        raise ValueError(f"tokens have shape {tokens.shape}, expected {want}")
    return torch.from_numpy(np.ascontiguousarray(tokens, np.int64))


def _leaves(cfg: LlamaConfig, params: Dict[str, np.ndarray]):
    leaves = {}
    for spec in parameter_specs(cfg):
        array = params[spec.name]
        if array.shape != spec.shape:
            raise ValueError(f"{spec.name} has shape {array.shape}, "
                             f"expected {spec.shape}")
        leaves[spec.name] = torch.tensor(array, requires_grad=True)
    return leaves


def loss_and_grads(cfg: LlamaConfig, params: Dict[str, np.ndarray],
                   tokens: np.ndarray) -> Tuple[np.ndarray, Dict[str,
                                                                 np.ndarray]]:
    """The loss (0-d array) and the gradient of every parameter."""
    leaves = _leaves(cfg, params)
    value = loss(cfg, leaves, _check_tokens(cfg, tokens))
    value.backward()
    return (value.detach().numpy(),
            {name: t.grad.numpy() for name, t in leaves.items()})


def train_step(cfg: LlamaConfig, params: Dict[str, np.ndarray],
               m: Dict[str, np.ndarray], v: Dict[str, np.ndarray],
               tokens: np.ndarray, step: int):
    """One training update from the AdamW moments `m`, `v` left by `step`
    earlier updates. Returns (loss, grad_norm before clipping, lr, new params,
    new m, new v); scalars as 0-d f32 arrays, the rest as dicts."""
    specs = parameter_specs(cfg)
    leaves = _leaves(cfg, params)
    value = loss(cfg, leaves, _check_tokens(cfg, tokens))
    value.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(list(leaves.values()),
                                               cfg.clip_norm)
    lr = lr_at(cfg, step)
    decay = [leaves[s.name] for s in specs if s.is_matrix]
    no_decay = [leaves[s.name] for s in specs if not s.is_matrix]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.adam_eps, foreach=False)
    for name, leaf in leaves.items():
        optimizer.state[leaf] = {
            "step": torch.tensor(float(step)),
            "exp_avg": torch.tensor(m[name]),
            "exp_avg_sq": torch.tensor(v[name]),
        }
    optimizer.step()
    new_params = {n: t.detach().numpy() for n, t in leaves.items()}
    new_m = {n: optimizer.state[t]["exp_avg"].numpy()
             for n, t in leaves.items()}
    new_v = {n: optimizer.state[t]["exp_avg_sq"].numpy()
             for n, t in leaves.items()}
    return (value.detach().numpy(), grad_norm.detach().numpy(),
            np.array(lr, np.float32), new_params, new_m, new_v)
