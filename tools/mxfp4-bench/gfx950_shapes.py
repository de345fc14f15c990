#!/usr/bin/env python3
"""Writes a module with one scaled_matmul function per GEMM of the gfx950
goals: 8192^3 and the Llama-3.1-8B linear layers at 16384 tokens (Fprop,
Dgrad and Wgrad of the fused q/k/v projection 4096 <-> 6144, of gate/up
4096 <-> 14336 and of down 14336 <-> 4096). Compile it with

  mxfp4-run compile gemms.mlir --target=gfx950 --report=gemms.json
"""
import sys

TOKENS = 16384
SHAPES = [("square_8192", 8192, 8192, 8192)]
for name, d_in, d_out in [("qkv", 4096, 6144), ("gate_up", 4096, 14336),
                          ("down", 14336, 4096)]:
    SHAPES += [(f"{name}_fprop", TOKENS, d_out, d_in),
               (f"{name}_dgrad", TOKENS, d_in, d_out),
               (f"{name}_wgrad", d_out, d_in, TOKENS)]


def gemm(name, m, n, k):
    a, b = f"tensor<{m}x{k}xf4E2M1FN>", f"tensor<{n}x{k}xf4E2M1FN>"
    sa, sb = f"tensor<{m}x{k // 32}xf8E8M0FNU>", f"tensor<{n}x{k // 32}xf8E8M0FNU>"
    c = f"tensor<{m}x{n}xbf16>"
    return (f"func.func @{name}(%a: {a}, %sa: {sa}, %b: {b}, %sb: {sb}) -> {c} {{\n"
            f"  %c = mxfp4.scaled_matmul %a scale %sa, %b scale %sb : {a}, {sa}, {b}, {sb} -> {c}\n"
            f"  return %c : {c}\n}}\n")


only = sys.argv[1:]
for shape in SHAPES:
    if not only or shape[0] in only:
        sys.stdout.write(gemm(*shape))
