"""The training step: `compile_training_step` traces the joint forward and
backward graph of a module's training step (mxfp4_fx) and imports it
(importer.py); `compile_graph_file` imports one traced elsewhere. For the
CPU it compiles it with mxfp4.CpuModule, and `TrainingStep` runs it with
the module's current parameters (or the graph file's); for a GPU it adds
the optimizer (@train_step) and writes the runtime's folder, and
`GpuTrainingStep` exports the weights and token batches as a run folder and
loads a run's checkpoint back into the module."""

import os
import re

import numpy as np
import torch
from mxfp4_fx import INTEGER, graph_file, trace_training_step

from .._mxfp4 import (CpuModule, Mxfp4Error, add_train_step,
                      compile_artifact, read_safetensors, write_training_run)
from .importer import CARRIED, import_graph


def _sanitize(name):
    """`name` as an SSA name: other characters than [A-Za-z0-9_] as _."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _carried(x, what):
    """A tensor as the float32 array the compiled function takes; integer
    and bool tensors are carried as float32, which is exact below 2^24."""
    x = torch.as_tensor(x).detach().cpu()
    if x.dtype in CARRIED and x.dtype != torch.bool and x.numel() and \
            int(x.abs().max()) >= 1 << 24:
        raise Mxfp4Error(f"{what}: integer values of 2^24 or more are not "
                         "exact as float32")
    return np.ascontiguousarray(x.to(torch.float32).numpy())


def _state(source):
    """{name: tensor} of a step's parameters and buffers: a live trace's
    module's current values, or a graph file's."""
    if isinstance(source, graph_file.GraphFile):
        return {n: torch.from_numpy(v) for n, v in source.state.items()}
    return source.state()


def _integer(x):
    """Whether an example input holds integers (token ids): a tensor of an
    integer dtype, or an array of an integer or bool kind."""
    if isinstance(x, torch.Tensor):
        return x.dtype in INTEGER
    return np.asarray(x).dtype.kind in "iub"


class TrainingStep:
    """A compiled training step. `.mlir` is the imported module, `.step(
    *inputs, step=0)` returns (loss, {parameter name: gradient}).
    `.parameter_names` are the trainable parameters, in argument order;
    `.state_names` adds frozen parameters and buffers. `.source` is the
    trace (mxfp4_fx.Trace, its module's current values are the state) or
    the graph file (its state is the traced one)."""

    def __init__(self, source, mlir, recipe, func_name):
        self.source = source
        self.module = getattr(source, "module", None)
        self.mlir = mlir
        self.grad_names = list(source.grad_names)
        self.state_names = list(source.state_names)
        self.parameter_names = list(source.names)
        self.input_shapes = [tuple(x.shape) for x in source.inputs]
        self.recipe = recipe
        self.func_name = func_name
        self.graph = getattr(source, "graph_module", source)
        self._compiled = None

    @property
    def compiled(self):
        if self._compiled is None:
            self._compiled = CpuModule(self.mlir, name="<torch_frontend>",
                                       recipe=self.recipe)
        return self._compiled

    def step(self, *inputs, step=0):
        state = _state(self.source)
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
    train` (gfx950) trains from, with the module's current weights (a graph
    file's: the traced ones); `.load_checkpoint(path)` loads a run's
    checkpoint (its folder or model.safetensors) into the module (a graph
    file's state)."""

    def __init__(self, source, mlir, target, out_dir):
        self.source = source
        self.module = getattr(source, "module", None)
        self.mlir = mlir
        self.parameter_names = list(source.names)
        self.input_shapes = [tuple(x.shape) for x in source.inputs]
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
        state = _state(self.source)
        params = [np.ascontiguousarray(
            state[n].detach().cpu().to(torch.float32).numpy())
            for n in self.parameter_names]
        write_training_run(run_dir, self.parameter_names, params,
                           batches.cpu().numpy(), eval_batches=eval_batches,
                           eval_every=int(eval_every), seed=int(seed),
                           model=model or self.source.module_type)

    def load_checkpoint(self, path):
        """Loads the trained parameters of a checkpoint into the module (a
        graph file's state); every parameter of the step must be there."""
        if os.path.isdir(path):
            path = os.path.join(path, "model.safetensors")
        tensors = read_safetensors(path)
        missing = [n for n in self.parameter_names if n not in tensors]
        if missing:
            raise Mxfp4Error(f"load_checkpoint: '{path}' has no "
                             f"{', '.join(missing)}")
        state = _state(self.source)
        for n in self.parameter_names:
            if tuple(tensors[n].shape) != tuple(state[n].shape):
                raise Mxfp4Error(
                    f"load_checkpoint: '{n}' is {tuple(tensors[n].shape)} in "
                    f"'{path}', {tuple(state[n].shape)} in the step")
        if self.module is None:
            for n in self.parameter_names:
                self.source.state[n] = np.array(tensors[n], dtype=np.float32)
            return
        with torch.no_grad():
            for n in self.parameter_names:
                value = torch.from_numpy(np.array(tensors[n]))
                state[n].copy_(value.to(state[n].dtype))


TARGETS = ("cpu", "sm_90a", "gfx950")


def _check_target(target, out_dir, input_grads):
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
    return gpu


def argument_names(source):
    """The imported function's argument names and attributes for a trace
    or graph file: parameters `p_<name>` marked {mxfp4.parameter}, buffers
    `b_<name>`, inputs `in<i>`."""
    arg_names, seen = [], set()
    for n in [f"p_{_sanitize(n)}" for n in source.names + source.frozen] + \
            [f"b_{_sanitize(n)}" for n in source.buffers] + \
            [f"in{i}" for i in range(len(source.inputs))]:
        while n in seen:
            n += "_"
        seen.add(n)
        arg_names.append(n)
    arg_attrs = [f' {{mxfp4.parameter = "{n}"}}'
                 for n in source.names + source.frozen] + \
        [""] * (len(source.buffers) + len(source.inputs))
    return arg_names, arg_attrs


def _compile(source, recipe, func_name, target, out_dir, optimizer,
             no_decay, gemm_precision):
    """Imports a trace or graph file and compiles it for `target`."""
    gpu = target != "cpu"
    if func_name is None:
        func_name = "loss_and_grads" if gpu else "train_step"
    if gpu and (source.frozen or source.buffers):
        raise Mxfp4Error(
            f"target '{target}': the step takes frozen parameters or buffers "
            f"({', '.join(source.frozen + source.buffers)}) as arguments; "
            "trace it with state_arguments=False to make them constants")
    graph = getattr(source, "graph_module", source)
    text, _ = import_graph(graph, *argument_names(source), func_name)
    if not gpu:
        return TrainingStep(source, text, recipe, func_name)
    integer = [i for i, x in enumerate(source.inputs) if _integer(x)]
    name = f"<torch_frontend: {source.module_type}>"
    text = add_train_step(text, dict(optimizer or {}), func_name, no_decay,
                          integer, name=name)
    compile_artifact(text, target, out_dir, recipe=recipe,
                     gemm_precision=gemm_precision, name=name)
    return GpuTrainingStep(source, text, target, out_dir)


def compile_training_step(module, example_inputs, loss_fn, recipe="bf16",
                          func_name=None, input_grads=(), target="cpu",
                          out_dir=None, optimizer=None, no_decay=None,
                          gemm_precision="bf16"):
    """Traces the training step `loss_fn(module(*inputs[:-1]), inputs[-1])`
    (the last example input is the target; with one example input x, a
    causal LM's, `loss_fn(module(x), x)`) and its gradients with respect to
    the module's parameters (mxfp4_fx.trace_training_step), and imports it.

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
    gpu = _check_target(target, out_dir, input_grads)
    trace = trace_training_step(module, example_inputs, loss_fn, input_grads,
                                state_arguments=not gpu)
    return _compile(trace, recipe, func_name, target, out_dir, optimizer,
                    no_decay, gemm_precision)


def compile_graph_file(path, recipe="bf16", func_name=None, target="cpu",
                       out_dir=None, optimizer=None, no_decay=None,
                       gemm_precision="bf16"):
    """Imports and compiles the training step of a graph file (written by
    mxfp4_fx.save, possibly on another machine with another PyTorch), with
    the options of compile_training_step. The step's state is the file's:
    `.step` (CPU) runs with the traced parameters, `.export_run` (GPU)
    writes them. `path` may also be a GraphFile already read."""
    gpu = _check_target(target, out_dir, ())
    source = path
    if not isinstance(source, graph_file.GraphFile):
        try:
            source = graph_file.load(path)
        except graph_file.GraphFileError as error:
            raise Mxfp4Error(str(error)) from None
    if gpu and source.input_grads:
        raise Mxfp4Error(f"{source.path}: traced with input gradients; a GPU "
                         "training step returns none")
    return _compile(source, recipe, func_name, target, out_dir, optimizer,
                    no_decay, gemm_precision)
