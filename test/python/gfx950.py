# Compile for gfx950 from Python: the code object, the assembly and the
# kernel report of a linear layer under fp4-all-dht16.
# REQUIRES: python-bindings
# RUN: %PYTHON %s | FileCheck %s

import json
import os

import mxfp4

layer = open(os.path.join(os.path.dirname(__file__), "..", "Recipes", "Inputs",
                          "linear_fwd_bwd.mlir")).read()
out = mxfp4.compile_gfx950(layer, recipe="fp4-all-dht16")
# CHECK: ELF True
print("ELF", out["code_object"][:4] == b"\x7fELF")
# CHECK-NEXT: mfma True
print("mfma", "v_mfma_scale_f32_16x16x128_f8f6f4" in out["assembly"])
report = json.loads(out["report"])
# CHECK-NEXT: kernels 6 spills 0
print("kernels", len(report["kernels"]), "spills",
      sum(k["vgprSpills"] for k in report["kernels"]))
try:
    mxfp4.compile_gfx950("func.func @f(")
except mxfp4.Mxfp4Error as e:
    # CHECK-NEXT: error: cannot parse
    print("error:", str(e).splitlines()[0][:12])
