"""Graph files: a traced training step written on one machine and imported
on another, so that a graph traced with PyTorch 2.x and transformers
compiles where the compiler is built.

A graph file is one compressed NumPy archive (`.npz`):
  graph.json       the FX graph's nodes in order (name, op, target,
                   arguments, result shapes and dtypes, stack trace) and
                   the step's signature (state names, inputs, gradients)
  const/<target>   each tensor the graph captured as a constant
  state/<name>     the module's parameters and buffers when traced
  input/<i>        the example inputs
  ref/<i>          with references: the graph's own results on those
                   (loss, then gradients), computed by PyTorch
Arguments are JSON with tagged objects for what JSON lacks: a node
{"$": "node", "v": name}, a tuple, a dtype, a device, a layout, a memory
format. Reading needs NumPy and, for dtypes, torch (any version).
"""

import json

import numpy as np

from .signature import StepSignature

FORMAT = "mxfp4-fx-graph"
VERSION = 1

_NUMPY = {"float32": np.float32, "float64": np.float64, "int64": np.int64,
          "int32": np.int32, "int16": np.int16, "int8": np.int8,
          "uint8": np.uint8, "bool": np.bool_}


class GraphFileError(ValueError):
    """A graph file that cannot be read: its path and what is wrong."""


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _encode(x, torch):
    if isinstance(x, torch.fx.Node):
        return {"$": "node", "v": x.name}
    if isinstance(x, tuple):
        return {"$": "tuple", "v": [_encode(v, torch) for v in x]}
    if isinstance(x, list):
        return [_encode(v, torch) for v in x]
    if isinstance(x, dict):
        return {"$": "dict", "v": {k: _encode(v, torch) for k, v in x.items()}}
    if isinstance(x, torch.dtype):
        return {"$": "dtype", "v": _dtype_name(x)}
    if isinstance(x, torch.device):
        return {"$": "device", "v": str(x)}
    if isinstance(x, torch.layout):
        return {"$": "layout", "v": _dtype_name(x)}
    if isinstance(x, torch.memory_format):
        return {"$": "memory_format", "v": _dtype_name(x)}
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    raise GraphFileError(f"cannot write a graph argument of type "
                         f"{type(x).__name__}: {x!r}")


def _meta(node):
    """The node's result: {"shape", "dtype"}, a list of them, or None."""
    val = node.meta.get("val", node.meta.get("tensor_meta"))

    def one(v):
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            return {"shape": [int(d) for d in v.shape],
                    "dtype": _dtype_name(v.dtype)}
        return None
    if isinstance(val, (list, tuple)) and not hasattr(val, "shape"):
        return [one(v) for v in val]  # not TensorMetadata, a NamedTuple
    return one(val)


def _array(t):
    t = t.detach().cpu()
    if t.dtype.is_floating_point and str(t.dtype) != "torch.float64":
        t = t.float()
    return t.numpy()


def save(trace, path, references=True):
    """Writes `trace` (tracing.Trace) to the graph file `path`; with
    `references`, also the graph's results on the example inputs."""
    import torch
    gm = trace.graph_module
    nodes, arrays = [], {}
    for node in gm.graph.nodes:
        target = node.target
        if node.op == "call_function":
            # 'aten.mm.default' for an op, '_operator.getitem' for Python's.
            target = str(target) if hasattr(target, "overloadpacket") else \
                f"{target.__module__}.{target.__name__}"
        elif node.op == "get_attr":
            value = gm
            for part in node.target.split("."):
                value = getattr(value, part)
            if not isinstance(value, torch.Tensor):
                raise GraphFileError(f"constant '{node.target}' is a "
                                     f"{type(value).__name__}, not a tensor")
            arrays[f"const/{node.target}"] = _array(value)
        nodes.append({"name": node.name, "op": node.op, "target": str(target),
                      "args": _encode(tuple(node.args), torch)["v"],
                      "kwargs": _encode(dict(node.kwargs), torch)["v"],
                      "meta": _meta(node),
                      "stack_trace": node.meta.get("stack_trace")
                      or getattr(node, "stack_trace", None)})
    state = trace.state()
    for name in trace.state_names:
        arrays[f"state/{name}"] = _array(state[name])
    for i, x in enumerate(trace.inputs):
        arrays[f"input/{i}"] = _array(x)
    count = 0
    if references:
        with torch.no_grad():
            args = [state[n].detach().float() if state[n].is_floating_point()
                    else state[n].detach() for n in trace.state_names]
            results = gm(*args, *trace.inputs)
        for i, r in enumerate(results):
            arrays[f"ref/{i}"] = _array(r)
        count = len(results)
    header = {"format": FORMAT, "version": VERSION,
              "torch": torch.__version__, "module": trace.module_type,
              "names": trace.names, "frozen": trace.frozen,
              "buffers": trace.buffers,
              "inputs": [{"shape": list(x.shape), "dtype": _dtype_name(x.dtype)}
                         for x in trace.inputs],
              "input_grads": list(trace.input_grads), "references": count,
              "nodes": nodes}
    arrays["graph.json"] = np.frombuffer(json.dumps(header).encode(),
                                         dtype=np.uint8)
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)


class Meta:
    """A node's result as traced: shape and torch dtype."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype


class Node:
    """One node of a graph file, with the fields of a torch.fx.Node that
    the importer reads (`target` is the op's name, e.g. 'aten.mm.default')."""

    def __init__(self, name, op, target, meta):
        self.name, self.op, self.target = name, op, target
        self.args, self.kwargs = (), {}
        self.meta = meta

    def __repr__(self):
        return self.name


class GraphFile(StepSignature):
    """A graph file read back. `nodes` in order; `constant(target)`,
    `state` {name: array}, `inputs` [array], `references` [array] (empty
    when the file has none); `names`, `frozen`, `buffers`, `input_grads`
    and `module_type` as traced; `torch_version` of the tracer."""

    def __init__(self, path):
        import torch
        self.path = path
        try:
            with np.load(path, allow_pickle=False) as archive:
                arrays = {k: archive[k] for k in archive.files}
        except (OSError, ValueError) as error:
            raise GraphFileError(f"{path}: not a graph file ({error})") \
                from None
        if "graph.json" not in arrays:
            raise GraphFileError(f"{path}: no graph.json entry")
        try:
            header = json.loads(arrays.pop("graph.json").tobytes())
        except ValueError as error:
            raise GraphFileError(f"{path}: graph.json: {error}") from None
        if header.get("format") != FORMAT or header.get("version") != VERSION:
            raise GraphFileError(
                f"{path}: format {header.get('format')!r} version "
                f"{header.get('version')!r}, expected {FORMAT!r} {VERSION}")
        self.torch_version = header["torch"]
        self.module_type = header["module"]
        self.names, self.frozen = header["names"], header["frozen"]
        self.buffers = header["buffers"]
        self.input_grads = tuple(header["input_grads"])

        def dtype(name):
            value = getattr(torch, name, None)
            if not isinstance(value, torch.dtype):
                raise GraphFileError(f"{path}: unknown dtype '{name}'")
            return value

        def meta(m):
            if isinstance(m, list):
                return [meta(v) for v in m]
            return None if m is None else Meta(m["shape"], dtype(m["dtype"]))

        self.nodes, by_name = [], {}
        for n in header["nodes"]:
            node = Node(n["name"], n["op"], n["target"],
                        {"val": meta(n["meta"])})
            if n.get("stack_trace"):
                node.meta["stack_trace"] = n["stack_trace"]
            by_name[node.name] = node
            self.nodes.append(node)

        def decode(x):
            if isinstance(x, list):
                return [decode(v) for v in x]
            if not isinstance(x, dict):
                return x
            tag, v = x.get("$"), x.get("v")
            if tag == "node":
                if v not in by_name:
                    raise GraphFileError(f"{path}: argument names no node "
                                         f"'{v}'")
                return by_name[v]
            if tag == "tuple":
                return tuple(decode(e) for e in v)
            if tag == "dict":
                return {k: decode(e) for k, e in v.items()}
            if tag == "dtype":
                return dtype(v)
            if tag == "device":
                return torch.device(v)
            if tag in ("layout", "memory_format"):
                return getattr(torch, v)
            raise GraphFileError(f"{path}: unknown argument tag {tag!r}")

        for raw, node in zip(header["nodes"], self.nodes):
            node.args = tuple(decode(raw["args"]))
            node.kwargs = decode({"$": "dict", "v": raw["kwargs"]})
        self._constants = {k[len("const/"):]: v for k, v in arrays.items()
                           if k.startswith("const/")}
        def entry(key):
            if key not in arrays:
                raise GraphFileError(f"{path}: no entry '{key}'")
            return arrays[key]

        self.state = {n: entry(f"state/{n}") for n in self.state_names}
        self.inputs = [entry(f"input/{i}")
                       for i in range(len(header["inputs"]))]
        self.references = [entry(f"ref/{i}")
                           for i in range(header["references"])]

    def constant(self, target):
        """The tensor the graph captured as constant `target`."""
        if target not in self._constants:
            raise GraphFileError(f"{self.path}: no constant '{target}'")
        import torch
        return torch.from_numpy(self._constants[target])


def load(path):
    """Reads the graph file `path` (GraphFileError when it is not one)."""
    return GraphFile(path)


__all__ = ["save", "load", "GraphFile", "GraphFileError", "Node", "Meta"]
