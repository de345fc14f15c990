# The PyTorch frontend: trace an MLP training step with make_fx, import the
# aten graph, compile it under a recipe and compare loss and gradients with
# PyTorch's own autograd.
# REQUIRES: python-bindings
# REQUIRES: torch
# RUN: %PYTHON %s | FileCheck %s

import os
import subprocess
import sys

try:
    import torch
except ImportError:
    # lit has no feature for torch; print what FileCheck expects to fail
    # loudly rather than pass silently.
    print("torch is not importable from", sys.executable)
    sys.exit(1)

import mxfp4  # noqa: E402

torch.manual_seed(0)


class MLP(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 96)
        self.act = act
        self.fc2 = torch.nn.Linear(96, 32)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


x = torch.randn(64, 64)
target = torch.randn(64, 32)
mse = torch.nn.functional.mse_loss


def reference(model, loss_fn, inputs):
    model.zero_grad()
    loss = loss_fn(model(*inputs[:-1]), inputs[-1])
    loss.backward()
    return loss.detach(), {n: p.grad.clone()
                           for n, p in model.named_parameters()
                           if p.requires_grad}


def rel(a, b):
    return float((a - b).norm() / b.norm())


def worst_error(model, loss_fn, recipe, **kw):
    step = mxfp4.compile_training_step(model, (x, target), loss_fn,
                                       recipe=recipe, **kw)
    loss, grads = step.step(x, target)
    ref_loss, ref_grads = reference(model, loss_fn, (x, target))
    finite = bool(torch.isfinite(loss)) and all(
        bool(torch.isfinite(g).all()) for g in grads.values())
    errors = [rel(loss, ref_loss)] + [rel(grads[n], ref_grads[n])
                                      for n in step.parameter_names]
    return step, max(errors), finite


# CHECK: import mxfp4 without torch: ok
code = "import sys, mxfp4; print('torch' in sys.modules)"
out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                     text=True, check=True).stdout.strip()
print("import mxfp4 without torch:", "ok" if out == "False" else out)

# (1) ReLU MLP, bf16 recipe.
relu_model = MLP(torch.nn.ReLU())
step, err, finite = worst_error(relu_model, mse, "bf16")
# CHECK: parameters: ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
print("parameters:", step.parameter_names)
# CHECK: {mxfp4.parameter = "fc1.weight"}
# CHECK: %step: i64 {mxfp4.step}
print("\n".join(line for line in step.mlir.splitlines()
                if "mxfp4." in line))
# CHECK: relu bf16: matches torch True
print("relu bf16: matches torch", err < 1e-4 and finite)

# (2) SiLU MLP, bf16 recipe.
silu_model = MLP(torch.nn.SiLU())
step, bf16_err, finite = worst_error(silu_model, mse, "bf16")
# CHECK: silu bf16: matches torch True
print("silu bf16: matches torch", bf16_err < 1e-4 and finite)

# A loss made of broadcasts, scalar ops, pow, sum with keepdim and mean.
def custom_loss(out, t):
    per_row = ((out - t) ** 2).sum(dim=1, keepdim=True) / 2.0
    return per_row.mean() + 0.1 * (out * out).mean() - t.mean() * 0.0


step, err, finite = worst_error(silu_model, custom_loss, "bf16")
# CHECK: custom loss bf16: matches torch True
print("custom loss bf16: matches torch", err < 1e-4 and finite)

# (3) fp4-all-dht16: every GEMM of both layers becomes a rotated MXFP4
# scaled_matmul. The input gradient is requested so that fc1's Dgrad is
# live (without it the traced graph has 5 GEMMs).
step, fp4_err, finite = worst_error(silu_model, mse, "fp4-all-dht16",
                                    input_grads=(0,))
package = os.path.dirname(mxfp4.__file__)
opt = os.path.join(package, "..", "..", "bin", "mxfp4-opt")
roles = subprocess.run([opt, "--mxfp4-annotate-roles"], input=step.mlir,
                       capture_output=True, text=True, check=True).stdout
tags = sorted(line.split("#mxfp4.gemm<")[1].split(">")[0]
              for line in roles.splitlines() if "#mxfp4.gemm<" in line)
# CHECK: roles: ['dgrad, "fc1"', 'dgrad, "fc2"', 'fprop, "fc1"', 'fprop, "fc2"', 'wgrad, "fc1"', 'wgrad, "fc2"']
print("roles:", tags)
lowered = subprocess.run(
    [opt, "--mxfp4-apply-recipe=recipe=fp4-all-dht16"], input=step.mlir,
    capture_output=True, text=True, check=True).stdout
# CHECK: fp4-all-dht16: 6 scaled_matmul, 12 hadamard, 0 linalg.matmul
print(f"fp4-all-dht16: {lowered.count('mxfp4.scaled_matmul ')} "
      f"scaled_matmul, {lowered.count('mxfp4.hadamard ')} hadamard, "
      f"{lowered.count('linalg.matmul ')} linalg.matmul")
# CHECK: fp4-all-dht16: finite True, worse than bf16 True, below 0.5 True
print(f"fp4-all-dht16: finite {finite}, worse than bf16 {fp4_err > bf16_err}"
      f", below 0.5 {fp4_err < 0.5}")
print(f"# errors: bf16 {bf16_err:.2e}, fp4-all-dht16 {fp4_err:.3f}")


# Token-major 3-D inputs (batch, sequence, features), a bias-free layer, an
# elementwise parameter, a 3-D transpose and reductions over several dims;
# the gradient of the input too.
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(32, 48)
        self.down = torch.nn.Linear(48, 32, bias=False)
        self.scale = torch.nn.Parameter(torch.rand(32) + 0.5)

    def forward(self, x):
        return self.down(torch.relu(self.up(x))) * self.scale


def block_loss(y, t):
    d = 1.0 - y / (t.abs() + 1.0)
    col = y.mean(dim=(0, 1), keepdim=True)
    return ((d * d).mean() + (y.transpose(1, 2).sum(1) ** 2).mean() * 1e-3
            + (col.neg() * col).sum())


block = Block()
x3, t3 = torch.randn(4, 16, 32), torch.randn(4, 16, 32)
step = mxfp4.compile_training_step(block, (x3, t3), block_loss,
                                   input_grads=(0,))
loss, grads = step.step(x3, t3)
x3g = x3.clone().requires_grad_()
block.zero_grad()
ref_loss = block_loss(block(x3g), t3)
ref_loss.backward()
ref = {n: p.grad for n, p in block.named_parameters()}
ref["input0"] = x3g.grad
err = max([rel(loss, ref_loss.detach())] +
          [rel(grads[n], ref[n]) for n in ref])
roles = subprocess.run([opt, "--mxfp4-annotate-roles"], input=step.mlir,
                       capture_output=True, text=True, check=True).stdout
# CHECK: 3-D block: matches torch True, 6 tagged GEMMs
print(f"3-D block: matches torch {err < 1e-4}, "
      f"{roles.count('#mxfp4.gemm<')} tagged GEMMs")

# A buffer, a frozen parameter and tensor constants made in the forward.
class Shifted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(64, 32)
        self.register_buffer("shift", torch.randn(32))

    def forward(self, x):
        return self.fc(x) * torch.tensor([[2.0]]) + self.shift + \
            torch.tensor(0.5)


shifted = Shifted()
shifted.fc.bias.requires_grad_(False)
step, err, finite = worst_error(shifted, mse, "bf16")
# CHECK: buffers: ['fc.weight'] ['fc.weight', 'fc.bias', 'shift'] matches torch True
print("buffers:", step.parameter_names, step.state_names, "matches torch",
      err < 1e-4 and finite)

# tanh-approximated GELU: tanh, pow 3 and scalar arithmetic.
class Gelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(64, 32)

    def forward(self, x):
        y = self.fc(x)
        return 0.5 * y * (1 + torch.tanh(0.7978845608 * (y + 0.044715 *
                                                         y.pow(3))))


step, err, finite = worst_error(Gelu(), mse, "bf16")
# CHECK: tanh gelu bf16: matches torch True
print("tanh gelu bf16: matches torch", err < 1e-4 and finite)

# A pre-norm attention block: RMSNorm, four projections, two heads, bmm and
# softmax (no causal mask, no RoPE yet); 32 tokens so every GEMM's reduction
# dimension is a multiple of the MXFP4 block.
class Attention(torch.nn.Module):
    def __init__(self, dim=64, heads=2):
        super().__init__()
        self.heads = heads
        self.norm = torch.nn.Parameter(torch.rand(dim) + 0.5)
        self.q_proj = torch.nn.Linear(dim, dim, bias=False)
        self.k_proj = torch.nn.Linear(dim, dim, bias=False)
        self.v_proj = torch.nn.Linear(dim, dim, bias=False)
        self.o_proj = torch.nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        hd = d // self.heads
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.norm

        def split(y):
            return y.view(b, t, self.heads, hd).transpose(1, 2)
        q, k, v = split(self.q_proj(h)), split(self.k_proj(h)), \
            split(self.v_proj(h))
        a = torch.softmax(q @ k.transpose(-2, -1) / hd ** 0.5, dim=-1)
        return x + self.o_proj((a @ v).transpose(1, 2).reshape(b, t, d))


attention = Attention()
xa, ta = torch.randn(4, 8, 64), torch.randn(4, 8, 64)
ref_loss, ref = reference(attention, mse, (xa, ta))
errors = {}
for recipe in ("bf16", "fp4-all-dht16"):
    step = mxfp4.compile_training_step(attention, (xa, ta), mse,
                                       recipe=recipe, input_grads=(0,))
    loss, grads = step.step(xa, ta)
    finite = all(bool(torch.isfinite(v).all())
                 for v in [loss] + list(grads.values()))
    errors[recipe] = max([rel(loss, ref_loss)] +
                         [rel(grads[n], ref[n]) for n in ref])
    if not finite:
        errors[recipe] = float("inf")
roles = subprocess.run([opt, "--mxfp4-annotate-roles"], input=step.mlir,
                       capture_output=True, text=True, check=True).stdout
lowered = subprocess.run(
    [opt, "--mxfp4-apply-recipe=recipe=fp4-all-dht16"], input=step.mlir,
    capture_output=True, text=True, check=True).stdout
# CHECK: attention: bf16 matches torch True, 12 tagged GEMMs, 12 scaled_matmul
print(f"attention: bf16 matches torch {errors['bf16'] < 1e-4}, "
      f"{roles.count('#mxfp4.gemm<')} tagged GEMMs, "
      f"{lowered.count('mxfp4.scaled_matmul ')} scaled_matmul")
# CHECK: attention fp4-all-dht16: finite and below 0.5 True
print("attention fp4-all-dht16: finite and below 0.5",
      errors["bf16"] < errors["fp4-all-dht16"] < 0.5)
print(f"# attention errors: bf16 {errors['bf16']:.2e}, "
      f"fp4-all-dht16 {errors['fp4-all-dht16']:.3f}")

# (4) An unsupported op names the op and the user's source line.
class Sorted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(64, 32)

    def forward(self, x):
        return torch.cumprod(self.fc(x), dim=1)  # the unsupported line


try:
    mxfp4.compile_training_step(Sorted(), (x, target), mse)
    print("unsupported: no error")
except mxfp4.Mxfp4Error as error:
    message = str(error)
    # CHECK: unsupported: torch frontend: unsupported aten op 'aten.cumprod.default' at {{.*}}torch_mlp.py:[[# @LINE - 8]] (in forward)
    print("unsupported:", message.split(": no lowering")[0])
    print("is a ValueError:", isinstance(error, ValueError))
# CHECK: is a ValueError: True

# An op that only the backward pass produces has no user line; the message
# says so. (tanh_backward is normally decomposed; undo that here.)
from mxfp4.torch_frontend.ops import DECOMPOSE  # noqa: E402

DECOMPOSE.remove(torch.ops.aten.tanh_backward)
try:
    mxfp4.compile_training_step(
        torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.Tanh()),
        (x, target), mse)
    print("backward unsupported: no error")
except mxfp4.Mxfp4Error as error:
    # CHECK: backward unsupported: torch frontend: unsupported aten op 'aten.tanh_backward.default' (graph node 'tanh_backward', from autograd's backward pass)
    print("backward unsupported:", str(error).split(": no lowering")[0])
DECOMPOSE.append(torch.ops.aten.tanh_backward)



# An in-place write through a view (a slice assignment) is refused where it
# is written: the import does not alias values, so the write would be lost.
class SliceWrite(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(64, 32)

    def forward(self, x):
        bias = torch.zeros(64, 32)
        bias[:, 0] = 5.0  # the refused line
        return self.fc(x) + bias


try:
    mxfp4.compile_training_step(SliceWrite(), (x, target), mse)
    print("slice write: no error")
except mxfp4.Mxfp4Error as error:
    # CHECK: slice write: torch frontend: unsupported aten op 'aten.fill_.Tensor' at {{.*}}torch_mlp.py:[[# @LINE - 8]] (in forward): an in-place op on a view (of 'select'); write the value out of place (torch.where, torch.cat)
    print("slice write:", error)
