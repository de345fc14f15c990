"""mxfp4: compile and run MXFP4 training graphs from Python.

The native module `_mxfp4` wraps the project's C++ API (lib/API). This file
adds NumPy-level helpers that run the compiled CPU path.
"""

import functools

import numpy as np

from ._mxfp4 import (CpuModule, Mxfp4Error, add_train_step, compile_artifact,
                     compile_gfx950, host_has_avx512_bf16, layer_study,
                     llama_config, llama_step_source, parse, read_safetensors,
                     run_pipeline, study, train, write_training_run)

__all__ = ["CpuModule", "Mxfp4Error", "host_has_avx512_bf16", "layer_study",
           "quantize", "dequantize", "hadamard", "scaled_matmul",
           "compile_training_step", "compile_graph_file", "parse", "run_pipeline", "llama_config",
           "llama_step_source", "train", "study", "compile_gfx950",
           "add_train_step", "compile_artifact", "write_training_run",
           "read_safetensors"]


def __getattr__(name):
    # The PyTorch frontend imports torch; load it only when asked for, so
    # that `import mxfp4` does not need torch.
    if name in ("torch_frontend", "compile_training_step",
                "compile_graph_file"):
        import importlib
        frontend = importlib.import_module(".torch_frontend", __name__)
        return frontend if name == "torch_frontend" else \
            getattr(frontend, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_SCALE_RULES = ("floor", "even", "ceil", "rceil")
_ROUNDINGS = ("nearest_even", "stochastic")


def _tensor(shape, element):
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{element}>"


def _element(array):
    if array.dtype == np.float32:
        return "f32"
    if array.dtype == np.uint16:
        return "bf16"
    raise Mxfp4Error(f"expected float32 or uint16 (bf16 bits), got {array.dtype}")


@functools.lru_cache(maxsize=64)
def _quantize_module(shape, element, axis, scale_rule, rounding):
    scales = list(shape)
    scales[axis] //= 32
    t, v, s = (_tensor(shape, element), _tensor(shape, "f4E2M1FN"),
               _tensor(scales, "f8E8M0FNU"))
    rng = " seed(%seed) counter(%ctr)" if rounding == "stochastic" else ""
    source = (f"func.func @q(%x: {t}, %seed: i64, %ctr: i64) -> ({v}, {s}) {{\n"
              f"  %v, %s = mxfp4.quantize %x axis = {axis} scale_rule = "
              f"{scale_rule} rounding = {rounding}{rng} : {t} -> {v}, {s}\n"
              f"  return %v, %s : {v}, {s}\n}}\n")
    return CpuModule(source, "mxfp4.quantize")


def quantize(array, axis=-1, scale_rule="even", rounding="nearest_even",
             seed=0, counter=0):
    """Quantizes `array` (float32, or bf16 bits as uint16) to MXFP4 along
    `axis` with the compiled CPU path. Returns (codes, scales) as uint8:
    one E2M1 code per element (sign in bit 3) and one E8M0 byte per block."""
    array = np.ascontiguousarray(array)
    axis = axis % array.ndim
    if scale_rule not in _SCALE_RULES:
        raise Mxfp4Error(f"scale_rule must be one of {_SCALE_RULES}")
    if rounding not in _ROUNDINGS:
        raise Mxfp4Error(f"rounding must be one of {_ROUNDINGS}")
    module = _quantize_module(array.shape, _element(array), axis, scale_rule,
                              rounding)
    codes, scales = module.call("q", array, int(seed), int(counter))
    return codes, scales


@functools.lru_cache(maxsize=64)
def _dequantize_module(shape, axis, element):
    scales = list(shape)
    scales[axis] //= 32
    v, s, r = (_tensor(shape, "f4E2M1FN"), _tensor(scales, "f8E8M0FNU"),
               _tensor(shape, element))
    source = (f"func.func @d(%v: {v}, %s: {s}) -> {r} {{\n"
              f"  %r = mxfp4.dequantize %v scale %s axis = {axis} : {v}, {s} "
              f"-> {r}\n  return %r : {r}\n}}\n")
    return CpuModule(source, "mxfp4.dequantize")


def dequantize(codes, scales, axis=-1, bf16=False):
    """Expands MXFP4 codes and E8M0 scales (uint8) to float32, or to bf16
    bits (uint16) with `bf16=True`."""
    codes = np.ascontiguousarray(codes, dtype=np.uint8)
    axis = axis % codes.ndim
    module = _dequantize_module(codes.shape, axis, "bf16" if bf16 else "f32")
    (result,) = module.call("d", codes, np.ascontiguousarray(scales, np.uint8))
    return result


_KINDS = ("deterministic", "random_fixed", "random_per_step")


@functools.lru_cache(maxsize=64)
def _hadamard_module(shape, element, axis, size, kind, inverse):
    t = _tensor(shape, element)
    operands = {"deterministic": "",
                "random_fixed": " kind = random_fixed seed(%seed)",
                "random_per_step": " kind = random_per_step seed(%seed) step(%step)"}
    source = (f"func.func @h(%x: {t}, %seed: i64, %step: i64) -> {t} {{\n"
              f"  %y = mxfp4.hadamard {'inverse ' if inverse else ''}%x "
              f"axis = {axis} size = {size}{operands[kind]} : {t}\n"
              f"  return %y : {t}\n}}\n")
    return CpuModule(source, "mxfp4.hadamard")


def hadamard(array, axis=-1, size=16, kind="deterministic", seed=0, step=0,
             inverse=False):
    """Block-diagonal normalized Walsh-Hadamard rotation of `array` (float32,
    or bf16 bits as uint16) along `axis` with the compiled CPU path."""
    array = np.ascontiguousarray(array)
    axis = axis % array.ndim
    if kind not in _KINDS:
        raise Mxfp4Error(f"kind must be one of {_KINDS}")
    module = _hadamard_module(array.shape, _element(array), axis, int(size),
                              kind, bool(inverse))
    (result,) = module.call("h", array, int(seed), int(step))
    return result


@functools.lru_cache(maxsize=64)
def _matmul_module(m, n, k, out, acc, matmul):
    a, sa = _tensor((m, k), "f4E2M1FN"), _tensor((m, k // 32), "f8E8M0FNU")
    b, sb = _tensor((n, k), "f4E2M1FN"), _tensor((n, k // 32), "f8E8M0FNU")
    c = _tensor((m, n), out)
    acc_arg = f", %acc: {c}" if acc else ""
    acc_use = " acc(%acc)" if acc else ""
    source = (f"func.func @mm(%a: {a}, %sa: {sa}, %b: {b}, %sb: {sb}{acc_arg})"
              f" -> {c} {{\n  %c = mxfp4.scaled_matmul %a scale %sa, %b scale "
              f"%sb{acc_use} : {a}, {sa}, {b}, {sb} -> {c}\n"
              f"  return %c : {c}\n}}\n")
    return CpuModule(source, "mxfp4.scaled_matmul", matmul)


def scaled_matmul(a, a_scales, b, b_scales, acc=None, bf16=False,
                  matmul="auto"):
    """C = A * B^T on MXFP4 operands (uint8 codes [M, K] and [N, K], uint8
    E8M0 scales [M, K/32] and [N, K/32]); float32 result, or bf16 bits with
    `bf16=True` (then `acc`, if given, is bf16 bits too)."""
    a = np.ascontiguousarray(a, np.uint8)
    b = np.ascontiguousarray(b, np.uint8)
    (m, k), n = a.shape, b.shape[0]
    module = _matmul_module(m, n, k, "bf16" if bf16 else "f32",
                            acc is not None, matmul)
    args = [a, np.ascontiguousarray(a_scales, np.uint8), b,
            np.ascontiguousarray(b_scales, np.uint8)]
    if acc is not None:
        args.append(np.ascontiguousarray(acc))
    (result,) = module.call("mm", *args)
    return result
