"""A small Hugging Face-style Llama for the frontend's tests: token
embedding, decoder blocks (RMSNorm, rotate-half RoPE computed from
inv_freq, grouped-query causal attention with HF's additive mask and
repeat_kv, SwiGLU), final norm, untied LM head, and the shifted
cross-entropy of a causal LM."""

import math

import torch
from torch import nn
import torch.nn.functional as F


# The modules follow transformers' modeling_llama.py (eager attention),
# without caches and with the config's values as arguments.
class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance +
                                                    self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, base=500000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2,
                                                dtype=torch.int64).float()
                                   / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(
            position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float() @
                 position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(
        batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen,
                                 head_dim)


class LlamaAttention(nn.Module):
    def __init__(self, hidden_size, num_heads, num_key_value_heads, theta,
                 attn_implementation="eager"):
        super().__init__()
        self.attn_implementation = attn_implementation
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.num_key_value_heads = num_key_value_heads
        self.num_key_value_groups = num_heads // num_key_value_heads
        self.attention_dropout = 0.0
        self.q_proj = nn.Linear(hidden_size, num_heads * self.head_dim,
                                bias=False)
        self.k_proj = nn.Linear(hidden_size,
                                num_key_value_heads * self.head_dim,
                                bias=False)
        self.v_proj = nn.Linear(hidden_size,
                                num_key_value_heads * self.head_dim,
                                bias=False)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.rotary_emb = LlamaRotaryEmbedding(self.head_dim, base=theta)

    def forward(self, hidden_states, attention_mask, position_ids):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states)
        key_states = self.k_proj(hidden_states)
        value_states = self.v_proj(hidden_states)
        query_states = query_states.view(bsz, q_len, self.num_heads,
                                         self.head_dim).transpose(1, 2)
        key_states = key_states.view(bsz, q_len, self.num_key_value_heads,
                                     self.head_dim).transpose(1, 2)
        value_states = value_states.view(bsz, q_len,
                                         self.num_key_value_heads,
                                         self.head_dim).transpose(1, 2)
        cos, sin = self.rotary_emb(value_states, position_ids)
        query_states, key_states = apply_rotary_pos_emb(
            query_states, key_states, cos, sin)
        if self.attn_implementation == "sdpa":
            # transformers' sdpa_attention_forward without a padding mask
            # (PyTorch >= 2.5): causal, GQA inside the call.
            attn_output = F.scaled_dot_product_attention(
                query_states, key_states, value_states, is_causal=True,
                enable_gqa=True)
            attn_output = attn_output.transpose(1, 2).contiguous()
            attn_output = attn_output.reshape(bsz, q_len, self.hidden_size)
            return self.o_proj(attn_output)
        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)
        attn_weights = torch.matmul(query_states, key_states.transpose(
            2, 3)) / math.sqrt(self.head_dim)
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask
        attn_weights = F.softmax(attn_weights, dim=-1,
                                 dtype=torch.float32).to(query_states.dtype)
        attn_weights = F.dropout(attn_weights, p=self.attention_dropout,
                                 training=self.training)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous()
        attn_output = attn_output.reshape(bsz, q_len, self.hidden_size)
        return self.o_proj(attn_output)


class LlamaMLP(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, hidden_size, intermediate_size, num_heads,
                 num_key_value_heads, eps, theta, attn_implementation):
        super().__init__()
        self.self_attn = LlamaAttention(hidden_size, num_heads,
                                        num_key_value_heads, theta,
                                        attn_implementation)
        self.mlp = LlamaMLP(hidden_size, intermediate_size)
        self.input_layernorm = LlamaRMSNorm(hidden_size, eps)
        self.post_attention_layernorm = LlamaRMSNorm(hidden_size, eps)

    def forward(self, hidden_states, attention_mask, position_ids):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, attention_mask,
                                       position_ids)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states


class LlamaForCausalLM(nn.Module):
    def __init__(self, vocab_size=256, hidden_size=64, intermediate_size=128,
                 num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, rms_norm_eps=1e-5,
                 rope_theta=500000.0, attn_implementation="eager"):
        super().__init__()
        self.vocab_size = vocab_size
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.layers = nn.ModuleList(
            LlamaDecoderLayer(hidden_size, intermediate_size,
                              num_attention_heads, num_key_value_heads,
                              rms_norm_eps, rope_theta, attn_implementation)
            for _ in range(num_hidden_layers))
        self.norm = LlamaRMSNorm(hidden_size, rms_norm_eps)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)

    def causal_mask(self, input_tensor, cache_position):
        # LlamaModel._update_causal_mask without a cache or padding.
        dtype, device = input_tensor.dtype, input_tensor.device
        min_dtype = torch.finfo(dtype).min
        sequence_length = target_length = input_tensor.shape[1]
        causal_mask = torch.full((sequence_length, target_length),
                                 fill_value=min_dtype, dtype=dtype,
                                 device=device)
        causal_mask = torch.triu(causal_mask, diagonal=1)
        causal_mask *= torch.arange(target_length, device=device) > \
            cache_position.reshape(-1, 1)
        return causal_mask[None, None, :, :].expand(input_tensor.shape[0], 1,
                                                    -1, -1)

    def forward(self, input_ids):
        inputs_embeds = self.embed_tokens(input_ids)
        cache_position = torch.arange(0, inputs_embeds.shape[1],
                                      device=inputs_embeds.device)
        position_ids = cache_position.unsqueeze(0)
        causal_mask = self.causal_mask(inputs_embeds, cache_position)
        hidden_states = inputs_embeds
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, causal_mask,
                                          position_ids)
        hidden_states = self.norm(hidden_states)
        return self.lm_head(hidden_states).float()


def causal_lm_loss(logits, labels):
    # LlamaForCausalLM's loss: predict token i + 1 from tokens up to i.
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    return F.cross_entropy(shift_logits.view(-1, shift_logits.shape[-1]),
                           shift_labels.view(-1))




def reference_adamw(model, opt):
    """PyTorch's side of the optimizer mxfp4 builds into a training step
    (lib/Models/Optimizer.cpp), from the same `opt` dict (lr, min_lr_ratio,
    warmup_steps, total_steps, beta1, beta2, eps, weight_decay, clip_norm):
    AdamW with weight decay on the parameters of rank 2 or more, and
    `lr_at(t)`, the learning rate of step t (0-based), which the caller sets
    on every group before each step (after `clip_grad_norm_`)."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    adamw = torch.optim.AdamW(
        [{"params": decay, "weight_decay": opt["weight_decay"]},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=opt["lr"], betas=(opt["beta1"], opt["beta2"]), eps=opt["eps"])

    def lr_at(t):
        lr, warmup = opt["lr"], opt["warmup_steps"]
        if t < warmup:
            return lr * (t + 1) / max(warmup, 1)
        progress = min(max((t - warmup) /
                           max(opt["total_steps"] - warmup, 1), 0.0), 1.0)
        low = lr * opt["min_lr_ratio"]
        return low + 0.5 * (lr - low) * (1 + math.cos(math.pi * progress))
    return adamw, lr_at
