"""Checks a `mxfp4-run compile --step-model` JSON against the program's
kernel IR: its launches are the host function's, its sums add up.

Usage: check_step_model.py MODEL.json KERNELS.mlir TOKENS [--no-gemms]
(--no-gemms: a program without GEMMs)."""

import json
import math
import re
import sys

model = json.load(open(sys.argv[1]))
ir = open(sys.argv[2]).read()
tokens = int(sys.argv[3])
expect_gemms = "--no-gemms" not in sys.argv[4:]

# The host function's launches, from its body in the kernel IR.
start = ir.index("func.func @" + model["function"] + "(")
end = ir.find("\n  func.func ", start + 1)
body = ir[start:end if end >= 0 else len(ir)]
launches = len(re.findall(r"gpu\.launch_func", body))

def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)

ks = model["kernels"]
assert model["modeled"] is True and model["target"] == "gfx950"
assert model["launches"] == launches > 0, (model["launches"], launches)
assert sum(k["launches"] for k in ks) == launches
assert len({k["name"] for k in ks}) == len(ks)
assert close(sum(k["microseconds"] for k in ks), model["kernel_microseconds"])
assert close(sum(k["sustained_microseconds"] for k in ks),
             model["sustained_kernel_microseconds"])
assert close(sum(k["ideal_microseconds"] for k in ks),
             model["ideal_microseconds"])
overhead = model["assumptions"]["launch_overhead_microseconds"]
assert close(model["overhead_microseconds"], launches * overhead)
assert close(model["step_microseconds"],
             model["kernel_microseconds"] + model["overhead_microseconds"])
# The sustained clock is slower than the peak clock.
assert model["sustained_step_microseconds"] > model["step_microseconds"]
assert model["tokens_per_step"] == tokens
assert close(model["tokens_per_second"],
             tokens / (model["step_microseconds"] * 1e-6))
# Every kernel is timed and has a roofline; the list is by time.
for k in ks:
    assert k["microseconds"] > 0 and k["ideal_microseconds"] > 0, k
    assert close(k["efficiency"], k["ideal_microseconds"] / k["microseconds"])
    assert k["bound"] in ("mfma", "issue", "l2", "lds", "hbm"), k
    # A launch takes at least the issue model's time and its bytes at HBM
    # bandwidth.
    assert k["microseconds"] >= k["issue_model_microseconds"] - 1e-9, k
    assert 0 <= k["hbm_bound_launches"] <= k["launches"], k
    assert k["roofline"] in ("mfma", "hbm"), k
    assert k["iteration_source"] in ("gemm-shape", "ir-loops", "no-loop",
                                     "kernel-attribute",
                                     "unknown-trip-count"), k
times = [k["microseconds"] for k in ks]
assert times == sorted(times, reverse=True)
# GEMMs are timed by their shape and are MFMA work.
gemms = [k for k in ks if k["name"].startswith("gemm_")]
assert bool(gemms) == expect_gemms and all(k["iteration_source"] == "gemm-shape" and
                     k["mfma_flops"] > 0 for k in gemms), gemms
# Fused attention walks a number of tiles that depends on the block: its
# kernels declare the mean (more than one tile: the model must not count
# one iteration).
for k in ks:
    if re.match(r"attention_(fwd|bwd_dq|bwd_dkdv)_", k["name"]):
        assert k["iteration_source"] == "kernel-attribute", k
        assert k["iterations_per_wave"] > 1, k
memory = model["memory"]
assert memory["arguments_bytes"] > 0 and memory["peak_temporaries_bytes"] > 0
assert memory["peak_bytes"] == (memory["arguments_bytes"] +
                                memory["peak_temporaries_bytes"])
print("ok: %d launches, %d kernels" % (launches, len(ks)))
