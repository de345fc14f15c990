"""Writes an input for every argument of FUNCTION in PLAN (a compiled
plan.txt) to DIR: zeros of each buffer's type and shape, 0 for scalars; and
prints the mxfp4-cuda-run flags that pass them.
Usage: plan_inputs.py PLAN FUNCTION DIR"""
import sys

import numpy as np

plan, function, out = sys.argv[1:]
dtypes = {"f32": np.float32, "bf16": np.uint16, "i32": np.int32,
          "i64": np.int64, "u8": np.uint8, "bytes": np.uint8}
flags, inside = [], False
for line in open(plan):
    words = line.split()
    if words[:1] == ["function"]:
        inside = words[1] == function
    elif inside and words[0] == "arg" and words[2] == "scalar":
        flags.append("--input=0")
    elif inside and words[0] == "arg":
        index, nbytes, dtype = words[1], int(words[4]), dtypes[words[5]]
        shape = [int(d) for d in words[6:]]
        data = np.zeros(nbytes // np.dtype(dtype).itemsize, dtype)
        np.save(f"{out}/in{index}.npy", data.reshape(shape) if shape else data)
        flags.append(f"--input=@{out}/in{index}.npy")
print(" ".join(flags))
