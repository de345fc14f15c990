"""A step composite (a private function of a compiled training step, such as
causal_attention_*) as a standalone module with a public @f that calls it:
what scripts/gpu/cases.py checks and scripts/gpu/bench_cases.py times."""
import re


def composite_module(step_text, kind):
    """(mlir, argument types, result types) of @f calling the step's first
    `kind` composite on its own arguments."""
    m = re.search(r"  func\.func private @(" + kind + r"_[0-9x_]+)\((.*?)\) -> \((.*?)\) "
                  r"attributes.*?\n  \}\n", step_text, re.S)
    if not m:
        raise SystemExit(f"no {kind} composite in the step")
    name, params, results = m.group(1), m.group(2), m.group(3)
    types = re.findall(r"tensor<[0-9x]+xf32>", params)
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    outs = re.findall(r"tensor<[0-9x]+xf32>", results)
    n = len(outs)
    aliases = "".join(l + "\n" for l in step_text.splitlines() if l.startswith("#"))
    mlir = (aliases + f"func.func @f({args}) -> ({', '.join(outs)}) {{\n"
            f"  %r:{n} = call @{name}({', '.join(f'%a{i}' for i in range(len(types)))}) : "
            f"({', '.join(types)}) -> ({', '.join(outs)})\n"
            f"  return {', '.join(f'%r#{i}' for i in range(n))} : {', '.join(outs)}\n}}\n"
            + m.group(0))
    return mlir, types, outs
