"""Tracing and the training step: `compile_training_step` traces the joint
forward and backward graph of a module's training step with make_fx,
imports it (importer.py) and compiles it with mxfp4.CpuModule;
`TrainingStep` runs it with the module's current parameters."""

import re

import numpy as np
import torch
from torch.fx.experimental import proxy_tensor
from torch.nn.utils import stateless
import torch._decomp

from .._mxfp4 import CpuModule, Mxfp4Error
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


def compile_training_step(module, example_inputs, loss_fn, recipe="bf16",
                          func_name="train_step", input_grads=()):
    """Traces the training step `loss_fn(module(*inputs[:-1]), inputs[-1])`
    (the last example input is the target) and its gradients with respect
    to the module's parameters, imports it and compiles it under `recipe`
    (lazily, on the first `.step`). Returns a
    TrainingStep whose `.step(*inputs)` runs the compiled joint graph with
    the module's current parameters. `input_grads` lists indices of inputs
    whose gradients are also returned (as "input<i>"); without them the
    first layer's Dgrad is dead code and is not traced."""
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    names = [n for n, _ in named]
    # Frozen parameters and buffers are arguments too, without gradients.
    frozen = [n for n, p in module.named_parameters() if not p.requires_grad]
    buffers = [n for n, _ in module.named_buffers()]
    state = dict(module.named_parameters())
    state.update(module.named_buffers())
    params = [_traced(state[n]) for n in names + frozen + buffers]
    inputs = [_traced(x) for x in example_inputs]
    np_ = len(names) + len(frozen) + len(buffers)
    input_grads = tuple(int(i) for i in input_grads)
    grad_names = names + [f"input{i}" for i in input_grads]

    def call_loss(ps, ins):
        mapping = dict(zip(names + frozen + buffers, ps))
        out = stateless.functional_call(module, mapping, tuple(ins[:-1]))
        return loss_fn(out, ins[-1])

    def joint(*args):
        ps = list(args[:np_])
        ins = list(args[np_:])
        wrt = [p.requires_grad_() for p in ps[:len(names)]] + \
            [ins[i].requires_grad_() for i in input_grads]
        loss = call_loss(ps, ins)
        return (loss, *torch.autograd.grad(loss, wrt))

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
    return TrainingStep(module, text, names + frozen + buffers, grad_names,
                        [tuple(x.shape) for x in inputs], recipe, func_name,
                        gm)

