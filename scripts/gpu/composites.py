"""A step composite (a private function of a compiled training step, such as
causal_attention_*) as a standalone module with a public @f that calls it:
what scripts/gpu/cases.py checks and scripts/gpu/bench_cases.py times."""
import re


def _convert(name, arg, shape, src, dst, op):
    """A linalg.generic converting `arg` (tensor<shape x src>) to `dst`."""
    rank = shape.count("x") + 1
    dims = ", ".join(f"d{i}" for i in range(rank))
    identity = f"affine_map<({dims}) -> ({dims})>"
    parallel = ", ".join(['"parallel"'] * rank)
    return (f"  %{name}e = tensor.empty() : tensor<{shape}x{dst}>\n"
            f"  %{name} = linalg.generic {{indexing_maps = [{identity}, {identity}], "
            f"iterator_types = [{parallel}]}} "
            f"ins({arg} : tensor<{shape}x{src}>) outs(%{name}e : tensor<{shape}x{dst}>) {{\n"
            f"  ^bb0(%x: {src}, %y: {dst}):\n"
            f"    %z = arith.{op} %x : {src} to {dst}\n"
            f"    linalg.yield %z : {dst}\n"
            f"  }} -> tensor<{shape}x{dst}>\n")


def composite_module(step_text, kind, bf16=False):
    """(mlir, argument types, result types) of @f calling the step's first
    `kind` composite on its own arguments. With `bf16`, @f takes and returns
    bf16 tensors where they are 4-D (attention's q, k, v, o, dO and
    gradients; the log-sum-exp stays f32), widening and rounding them
    around the call, as a bf16 model would."""
    m = re.search(r"  func\.func private @(" + kind + r"_[0-9x_]+)\((.*?)\) -> \((.*?)\) "
                  r"attributes.*?\n  \}\n", step_text, re.S)
    if not m:
        raise SystemExit(f"no {kind} composite in the step")
    name, params, results = m.group(1), m.group(2), m.group(3)
    types = re.findall(r"tensor<[0-9x]+xf32>", params)
    outs = re.findall(r"tensor<[0-9x]+xf32>", results)
    narrow = (lambda t: bf16 and t.count("x") == 4)
    shape = (lambda t: t[7:-5])
    arg_types = [f"tensor<{shape(t)}xbf16>" if narrow(t) else t for t in types]
    out_types = [f"tensor<{shape(t)}xbf16>" if narrow(t) else t for t in outs]
    def convert(prefix, values, value_types, src, dst, op):
        """(text, values): the narrow ones of `values` converted."""
        text, out = "", []
        for i, (v, t) in enumerate(zip(values, value_types)):
            if narrow(t):
                text += _convert(f"{prefix}{i}", v, shape(t), src, dst, op)
                v = f"%{prefix}{i}"
            out.append(v)
        return text, out

    n = len(outs)
    body, call_args = convert("w", [f"%a{i}" for i in range(len(types))], types,
                              "bf16", "f32", "extf")
    body += (f"  %r:{n} = call @{name}({', '.join(call_args)}) : "
             f"({', '.join(types)}) -> ({', '.join(outs)})\n")
    text, returned = convert("n", [f"%r#{i}" for i in range(n)], outs, "f32", "bf16",
                             "truncf")
    body += text
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(arg_types))
    aliases = "".join(l + "\n" for l in step_text.splitlines() if l.startswith("#"))
    mlir = (aliases + f"func.func @f({args}) -> ({', '.join(out_types)}) {{\n" + body +
            f"  return {', '.join(returned)} : {', '.join(out_types)}\n}}\n" + m.group(0))
    return mlir, arg_types, out_types
