"""Random inputs for the micro step's functions and the CPU's results."""
import re
import subprocess
import sys

import numpy as np

out, tool = sys.argv[1], sys.argv[2]
text = open(f"{out}/step.mlir").read()
rng = np.random.default_rng(0)
for function in ["loss_and_grads", "train_step"]:
    head = re.search(r"func\.func @" + function + r"\((.*?)\)\s*->\s*\((.*?)\)\s*(attributes|\{)",
                     text, re.S)
    types = re.findall(r"tensor<([0-9x]+)x(f32|i32)>|: (i64)", head.group(1))
    results = len(re.findall(r"tensor<", head.group(2)))
    floats = sum(1 for _, e, s in types if e == "f32")
    args = []
    for i, (shape, elem, scalar) in enumerate(types):
        if scalar:
            args.append("--input=5")
            continue
        dims = [int(d) for d in shape.split("x")]
        if elem == "i32":
            a = rng.integers(0, 256, dims).astype(np.int32)
        elif function == "train_step" and i >= floats // 3:
            a = 1e-3 * rng.standard_normal(dims)   # AdamW m, and v >= 0
            a = np.abs(a) * 1e-2 if i >= 2 * floats // 3 else a
        elif len(dims) == 1:
            a = 1 + 0.1 * rng.standard_normal(dims)
        else:
            a = 0.05 * rng.standard_normal(dims)
        np.save(f"{out}/{function}.in{i}.npy", a.astype(a.dtype if elem == "i32" else np.float32))
        args.append(f"--input=@{function}.in{i}.npy")
    open(f"{out}/{function}.args", "w").write(f"{results} " + " ".join(args) + "\n")
    outputs = [f"--output=@{out}/{function}.cpu{i}.npy" for i in range(results)]
    cmd = [tool, "exec", f"{out}/step.mlir", f"--function={function}"]
    cmd += [a.replace("@", f"@{out}/") for a in args] + outputs
    subprocess.run(cmd, check=True)
