"""Tracing a training step: the joint forward and backward graph of
`loss_fn(module(*inputs))` and its parameter gradients, at the aten level,
with `make_fx` (PyTorch 1.13 and 2.x)."""

import inspect

import contextlib

import torch
from torch.fx.experimental import proxy_tensor
import torch._decomp

from .attention import sdpa_as_composites
from .signature import StepSignature

aten = torch.ops.aten

# Composite ops traced through PyTorch's own decompositions into ops the
# importer has handlers for. A list, not a tuple: test/python/torch_mlp.py
# takes tanh_backward out to reach an op that only the backward pass
# produces.
DECOMPOSE = [aten.mse_loss, aten.mse_loss_backward, aten.silu_backward,
             aten.sigmoid_backward, aten.tanh_backward]

# Integer and boolean tensors (token ids, targets, masks, positions) keep
# their dtype in the trace, since ops like embedding need it.
INTEGER = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32,
           torch.int64)


def _decomposition_table(decompose):
    """PyTorch's decompositions of the `decompose` ops (default overloads)."""
    table = {}
    wanted = {str(op) for op in decompose}
    for op, fn in torch._decomp.decomposition_table.items():
        packet = getattr(op, "overloadpacket", None)  # not a HigherOrderOperator
        if packet is not None and str(packet) in wanted and \
                op._overloadname == "default":
            table[op] = fn
    return table


def _traced(x):
    """An example input or state tensor as traced: floating point as
    float32; integer and bool tensors keep their dtype."""
    x = torch.as_tensor(x).detach()
    if x.dtype in INTEGER:
        return x
    return x.to(torch.float32)


def _functional_call(module, mapping, args):
    """`module(*args)` with its parameters and buffers taken from
    `mapping` (torch.func in 2.x, nn.utils.stateless in 1.13). Tied names
    are not tied here: `mapping` gives each its own tensor."""
    func = getattr(getattr(torch, "func", None), "functional_call", None)
    if func is None:
        from torch.nn.utils import stateless
        return stateless.functional_call(module, mapping, args)
    return func(module, mapping, args, tie_weights=False)


def aliases(module):
    """{other name: name in named_parameters()} of the parameters that
    several modules share (a tied LM head and embedding)."""
    first, found = {}, {}
    for prefix, sub in module.named_modules(remove_duplicate=False):
        for name, p in sub._parameters.items():
            if p is None:
                continue
            full = f"{prefix}.{name}" if prefix else name
            if id(p) in first and first[id(p)] != full:
                found[full] = first[id(p)]
            else:
                first.setdefault(id(p), full)
    return found


class Trace(StepSignature):
    """A traced training step. `graph_module` computes
    `(loss, *gradients)` from `(*state, *inputs)`, where the state is the
    trainable parameters (`names`), then `frozen` parameters and `buffers`;
    the gradients are the trainable parameters' and then the inputs' of
    `input_grads`. `inputs` are the example inputs as traced."""

    def __init__(self, module, graph_module, names, frozen, buffers, inputs,
                 input_grads):
        self.module = module
        self.graph_module = graph_module
        self.names, self.frozen, self.buffers = names, frozen, buffers
        self.inputs = inputs
        self.input_grads = input_grads
        self.module_type = type(module).__name__

    def state(self):
        """{name: tensor} of the module's current parameters and buffers."""
        state = dict(self.module.named_parameters())
        state.update(self.module.named_buffers())
        return {n: state[n] for n in self.state_names}


def trace_training_step(module, example_inputs, loss_fn, input_grads=(),
                        state_arguments=True, decompose=None,
                        attention_composites=True):
    """Traces `loss_fn(module(*inputs[:-1]), inputs[-1])` (with one example
    input x, a causal LM's `loss_fn(module(x), x)`) and its gradients with
    respect to the module's trainable parameters (and the inputs listed in
    `input_grads`). With `state_arguments=False` frozen parameters and
    buffers become constants of the graph instead of arguments.
    `decompose` (default DECOMPOSE) lists the composite ops traced through
    PyTorch's decompositions. With `attention_composites`, the causal
    scaled_dot_product_attention calls trace to the mxfp4::causal_attention
    ops (attention.py), which import as the compiler's attention
    composites. Returns a Trace."""
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    names = [n for n, p in module.named_parameters() if p.requires_grad]
    frozen = [n for n, p in module.named_parameters() if not p.requires_grad]
    buffers = [n for n, _ in module.named_buffers()]
    if not state_arguments:
        frozen, buffers = [], []
    state = dict(module.named_parameters())
    state.update(module.named_buffers())
    params = [_traced(state[n]) for n in names + frozen + buffers]
    inputs = [_traced(x) for x in example_inputs]
    np_ = len(params)
    input_grads = tuple(int(i) for i in input_grads)
    tied = aliases(module)

    def call_loss(ps, ins, untied):
        mapping = dict(zip(names + frozen + buffers, ps))
        for alias, target in tied.items():
            mapping[alias] = untied.get(alias, mapping.get(target))
        if len(ins) == 1:
            return loss_fn(_functional_call(module, mapping, (ins[0],)),
                           ins[0])
        out = _functional_call(module, mapping, tuple(ins[:-1]))
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
                  for alias, target in tied.items() if target in names}
        loss = call_loss(ps, ins, untied)
        grads = list(torch.autograd.grad(loss, wrt + list(untied.values()),
                                         allow_unused=True))
        for k, alias in enumerate(untied):
            extra = grads[len(wrt) + k]
            i = names.index(tied[alias])
            if extra is not None:
                grads[i] = extra if grads[i] is None else grads[i] + extra
        for i, g in enumerate(grads[:len(wrt)]):
            if g is None:
                grads[i] = torch.zeros_like(wrt[i])
        return (loss, *grads[:len(wrt)])

    table = _decomposition_table(DECOMPOSE if decompose is None
                                 else decompose)
    # Stack traces locate unsupported ops at the user's source line: 2.x's
    # make_fx takes a flag, 1.13's tracer reads a class attribute.
    kwargs = {}
    if "record_stack_traces" in inspect.signature(
            proxy_tensor.make_fx).parameters:
        kwargs["record_stack_traces"] = True
    tracer_cls = proxy_tensor.PythonKeyTracer
    old = tracer_cls.__dict__.get("record_stack_traces")
    tracer_cls.record_stack_traces = True
    routed = sdpa_as_composites() if attention_composites else \
        contextlib.nullcontext()
    try:
        with routed:
            gm = proxy_tensor.make_fx(joint, table, **kwargs)(*params,
                                                              *inputs)
    finally:
        if old is None:
            del tracer_cls.record_stack_traces
        else:
            tracer_cls.record_stack_traces = old
    return Trace(module, gm, names, frozen, buffers, inputs, input_grads)
