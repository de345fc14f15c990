"""Tracing and the training step: `compile_training_step` traces the joint
forward and backward graph of a module's training step with make_fx and
imports it (importer.py). For the CPU it compiles it with mxfp4.CpuModule,
and `TrainingStep` runs it with the module's current parameters; for a GPU
it adds the optimizer (@train_step) and writes the runtime's folder, and
`GpuTrainingStep` exports the module's weights and token batches as a run
folder and loads a run's checkpoint back into the module."""

import os
import re

import numpy as np
import torch
from torch.fx.experimental import proxy_tensor
from torch.nn.utils import stateless
import torch._decomp

from .._mxfp4 import (CpuModule, Mxfp4Error, add_train_step,
                      compile_artifact, read_safetensors, write_training_run)
from .importer import CARRIED, import_graph
from .ops import DECOMPOSE


def _decomposition_table():
    """PyTorch's decompositions of the DECOMPOSE ops (default overloads)."""
    table = {}
    wanted = {str(op) for op in DECOMPOSE}
    for op, fn in torch._decomp.decomposition_table.items():
        if str(op.overloadpacket) in wanted and op._overloadname == "default":
            table[op] = fn
    return table


def _sanitize(name):
    """`name` as an SSA name: other characters than [A-Za-z0-9_] as _."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _traced(x):
    """An example input or state tensor as traced: floating point as
    float32; integer and bool tensors keep their dtype (token ids,
    targets, masks), since ops like embedding need it."""
    x = torch.as_tensor(x).detach()
    if x.dtype in CARRIED:
        return x
    return x.to(torch.float32)


def _carried(x, what):
    """A tensor as the float32 array the compiled function takes; integer
    and bool tensors are carried as float32, which is exact below 2^24."""
    x = torch.as_tensor(x).detach().cpu()
    if x.dtype in CARRIED and x.dtype != torch.bool and x.numel() and \
            int(x.abs().max()) >= 1 << 24:
        raise Mxfp4Error(f"{what}: integer values of 2^24 or more are not "
                         "exact as float32")
    return np.ascontiguousarray(x.to(torch.float32).numpy())


class TrainingStep:
    """A compiled training step. `.mlir` is the imported module, `.step(
    *inputs, step=0)` returns (loss, {parameter name: gradient}).
    `.parameter_names` are the trainable parameters, in argument order;
    `.state_names` adds frozen parameters and buffers."""

    def __init__(self, module, mlir, state_names, grad_names,
                 input_shapes, recipe, func_name, graph):
        self.grad_names = list(grad_names)
        self.state_names = list(state_names)
        self.module = module
        self.mlir = mlir
        self.parameter_names = [n for n in grad_names
                                if n in set(state_names)]
        self.input_shapes = input_shapes
        self.recipe = recipe
        self.func_name = func_name
        self.graph = graph
        self._compiled = None

    @property
    def compiled(self):
        if self._compiled is None:
            self._compiled = CpuModule(self.mlir, name="<torch_frontend>",
                                       recipe=self.recipe)
        return self._compiled

    def step(self, *inputs, step=0):
        state = dict(self.module.named_parameters())
        state.update(self.module.named_buffers())
        arrays = [_carried(state[n], n) for n in self.state_names]
        for i, (x, shape) in enumerate(zip(inputs, self.input_shapes)):
            x = torch.as_tensor(x)
            if tuple(x.shape) != shape:
                raise Mxfp4Error(f"input shape {tuple(x.shape)} differs from "
                                 f"the traced {shape}")
            arrays.append(_carried(x, f"input {i}"))
        if len(inputs) != len(self.input_shapes):
            raise Mxfp4Error(f"expected {len(self.input_shapes)} inputs, got "
                             f"{len(inputs)}")
        results = self.compiled.call(self.func_name, *arrays, int(step))
        loss = torch.from_numpy(np.array(results[0], dtype=np.float32))
        grads = {n: torch.from_numpy(np.array(g, dtype=np.float32))
                 for n, g in zip(self.grad_names, results[1:])}
        return loss, grads


class GpuTrainingStep:
    """A training step compiled for a GPU into `out_dir`: @loss_and_grads,
    @loss (held-out evaluation) and @train_step(params, exp_avg, exp_avg_sq,
    data..., step), AdamW inside. `.export_run(run_dir, batches)` writes
    the run folder that `mxfp4-cuda-run train` (sm_90a) or `mxfp4-hip-run
    train` (gfx950) trains from, with the module's current weights;
    `.load_checkpoint(path)` loads a run's checkpoint (its folder or
    model.safetensors) into the module."""

    def __init__(self, module, mlir, parameter_names, input_shapes, target,
                 out_dir):
        self.module = module
        self.mlir = mlir
        self.parameter_names = list(parameter_names)
        self.input_shapes = input_shapes
        self.target = target
        self.out_dir = out_dir

    def export_run(self, run_dir, batches, eval_batches=None, eval_every=0,
                   seed=0, model=""):
        """Writes the run folder: the parameters' current values and
        `batches`, integer token windows [steps, batch, window] of the
        traced shape [batch, window]; with `eval_batches` (the same form),
        the runtime evaluates @loss on all of them every `eval_every` steps
        (0: at the end)."""
        batches = torch.as_tensor(batches)
        if len(self.input_shapes) != 1 or batches.dim() != 3 or \
                tuple(batches.shape[1:]) != self.input_shapes[0]:
            raise Mxfp4Error(
                "export_run: the runtimes train a step of one token input "
                f"[batch, window]; this step takes {self.input_shapes} and "
                f"the batches are {tuple(batches.shape)}")
        if batches.is_floating_point():
            raise Mxfp4Error("export_run: batches must hold integer token ids")
        if eval_batches is not None:
            eval_batches = torch.as_tensor(eval_batches).cpu().numpy()
        state = dict(self.module.named_parameters())
        params = [np.ascontiguousarray(
            state[n].detach().cpu().to(torch.float32).numpy())
            for n in self.parameter_names]
        write_training_run(run_dir, self.parameter_names, params,
                           batches.cpu().numpy(), eval_batches=eval_batches,
                           eval_every=int(eval_every), seed=int(seed),
                           model=model or type(self.module).__name__)

    def load_checkpoint(self, path):
        """Loads the trained parameters of a checkpoint into the module;
        every parameter of the step must be there."""
        if os.path.isdir(path):
            path = os.path.join(path, "model.safetensors")
        tensors = read_safetensors(path)
        missing = [n for n in self.parameter_names if n not in tensors]
        if missing:
            raise Mxfp4Error(f"load_checkpoint: '{path}' has no "
                             f"{', '.join(missing)}")
        state = dict(self.module.named_parameters())
        with torch.no_grad():
            for n in self.parameter_names:
                value = torch.from_numpy(np.array(tensors[n]))
                if tuple(value.shape) != tuple(state[n].shape):
                    raise Mxfp4Error(
                        f"load_checkpoint: '{n}' is {tuple(value.shape)} in "
                        f"'{path}', {tuple(state[n].shape)} in the module")
                state[n].copy_(value.to(state[n].dtype))


TARGETS = ("cpu", "sm_90a", "gfx950")


def _aliases(module):
    """{other name: name in named_parameters()} of the parameters that
    several modules share (a tied LM head and embedding)."""
    first, aliases = {}, {}
    for prefix, sub in module.named_modules():
        for name, p in sub._parameters.items():
            if p is None:
                continue
            full = f"{prefix}.{name}" if prefix else name
            if id(p) in first and first[id(p)] != full:
                aliases[full] = first[id(p)]
            else:
                first.setdefault(id(p), full)
    return aliases


def compile_training_step(module, example_inputs, loss_fn, recipe="bf16",
                          func_name=None, input_grads=(), target="cpu",
                          out_dir=None, optimizer=None, no_decay=None,
                          gemm_precision="bf16"):
    """Traces the training step `loss_fn(module(*inputs[:-1]), inputs[-1])`
    (the last example input is the target; with one example input x, a
    causal LM's, `loss_fn(module(x), x)`) and its gradients with respect to
    the module's parameters, and imports it.

    target="cpu": compiles it under `recipe` (lazily, on the first `.step`)
    and returns a TrainingStep whose `.step(*inputs)` runs the joint graph
    with the module's current parameters. `input_grads` lists indices of
    inputs whose gradients are also returned (as "input<i>"); without them
    the first layer's Dgrad is dead code and is not traced.

    target="sm_90a" or "gfx950": adds the optimizer as @train_step (AdamW
    with global-norm clipping and a warm-up + cosine schedule; `optimizer`
    overrides lr, min_lr_ratio, warmup_steps, total_steps, beta1, beta2,
    eps, weight_decay, clip_norm; `no_decay` names the parameters without
    weight decay, default those of rank 1), compiles it under `recipe` with
    `gemm_precision` ("bf16" tensor cores or "f32") into `out_dir`, as
    `mxfp4-run compile --out-dir` does, and returns a GpuTrainingStep.
    Buffers and frozen parameters become constants of the step; integer
    inputs (token ids) are int32 arguments of @train_step."""
    if target not in TARGETS:
        raise Mxfp4Error(f"target '{target}' is not one of "
                         f"{', '.join(TARGETS)}")
    gpu = target != "cpu"
    if gpu and not out_dir:
        raise Mxfp4Error(f"target '{target}' needs out_dir, the folder its "
                         "runtime runs from")
    if gpu and input_grads:
        raise Mxfp4Error("input_grads: a GPU training step returns no "
                         "input gradients")
    if func_name is None:
        func_name = "loss_and_grads" if gpu else "train_step"
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    names = [n for n, _ in named]
    # Frozen parameters and buffers are arguments too, without gradients
    # (on a GPU target, constants of the step).
    frozen = [n for n, p in module.named_parameters() if not p.requires_grad]
    buffers = [n for n, _ in module.named_buffers()]
    if gpu:
        frozen, buffers = [], []
    state = dict(module.named_parameters())
    state.update(module.named_buffers())
    params = [_traced(state[n]) for n in names + frozen + buffers]
    inputs = [_traced(x) for x in example_inputs]
    np_ = len(names) + len(frozen) + len(buffers)
    input_grads = tuple(int(i) for i in input_grads)
    grad_names = names + [f"input{i}" for i in input_grads]

    aliases = _aliases(module)

    def call_loss(ps, ins, untied=None):
        mapping = dict(zip(names + frozen + buffers, ps))
        for alias, target in aliases.items():
            mapping[alias] = (untied or {}).get(alias, mapping.get(target))
        if len(ins) == 1:
            out = stateless.functional_call(module, mapping, (ins[0],))
            return loss_fn(out, ins[0])
        out = stateless.functional_call(module, mapping, tuple(ins[:-1]))
        return loss_fn(out, ins[-1])

    def joint(*args):
        ps = list(args[:np_])
        ins = list(args[np_:])
        wrt = [p.requires_grad_() for p in ps[:len(names)]] + \
            [ins[i].requires_grad_() for i in input_grads]
        # A tied parameter's other names read a separate leaf, whose
        # gradient is added to the parameter's explicitly: the 1.13 trace
        # loses the autograd engine's own accumulation of the two.
        untied = {alias: ps[names.index(target)].detach().requires_grad_()
                  for alias, target in aliases.items() if target in names}
        loss = call_loss(ps, ins, untied)
        grads = list(torch.autograd.grad(loss, wrt + list(untied.values()),
                                         allow_unused=True))
        for k, (alias, leaf) in enumerate(untied.items()):
            extra = grads[len(wrt) + k]
            i = names.index(aliases[alias])
            if extra is not None:
                grads[i] = extra if grads[i] is None else grads[i] + extra
        for i, g in enumerate(grads[:len(wrt)]):
            if g is None:
                grads[i] = torch.zeros_like(wrt[i])
        return (loss, *grads[:len(wrt)])

    tracer_cls = proxy_tensor.PythonKeyTracer
    old = tracer_cls.__dict__.get("record_stack_traces")
    tracer_cls.record_stack_traces = True
    try:
        gm = proxy_tensor.make_fx(joint, _decomposition_table())(
            *params, *inputs)
    finally:
        if old is None:
            del tracer_cls.record_stack_traces
        else:
            tracer_cls.record_stack_traces = old
    arg_names, seen = [], set()
    for n in [f"p_{_sanitize(n)}" for n in names + frozen] + \
            [f"b_{_sanitize(n)}" for n in buffers] + \
            [f"in{i}" for i in range(len(inputs))]:
        while n in seen:
            n += "_"
        seen.add(n)
        arg_names.append(n)
    arg_attrs = [f' {{mxfp4.parameter = "{n}"}}' for n in names + frozen] + \
        [""] * (len(buffers) + len(inputs))
    text, _ = import_graph(gm, arg_names, arg_attrs, func_name)
    if gpu:
        integer = [i for i, x in enumerate(inputs) if x.dtype in CARRIED]
        name = f"<torch_frontend: {type(module).__name__}>"
        text = add_train_step(text, dict(optimizer or {}), func_name,
                              no_decay, integer, name=name)
        compile_artifact(text, target, out_dir, recipe=recipe,
                         gemm_precision=gemm_precision, name=name)
        return GpuTrainingStep(module, text, names,
                               [tuple(x.shape) for x in inputs], target,
                               out_dir)
    return TrainingStep(module, text, names + frozen + buffers, grad_names,
                        [tuple(x.shape) for x in inputs], recipe, func_name,
                        gm)

