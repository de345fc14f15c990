# Parse, verify and transform MLIR text from Python; diagnostics become
# exceptions with their locations.
# REQUIRES: python-bindings
# RUN: %PYTHON %s | FileCheck %s

import os

import mxfp4

step = open(os.path.join(os.path.dirname(__file__), "..", "Recipes", "Inputs",
                         "linear_fwd_bwd.untagged.mlir")).read()

# Role inference, then the paper's recipe and the rotation check.
tagged = mxfp4.run_pipeline(step, "func.func(mxfp4-annotate-roles)")
# CHECK: roles: fprop dgrad wgrad
print("roles:", " ".join(r for r in ("fprop", "dgrad", "wgrad")
                         if f"#mxfp4.gemm<{r}," in tagged))
out = mxfp4.run_pipeline(
    tagged, "func.func(mxfp4-apply-recipe{recipe=fp4-all-dht16},"
    "mxfp4-check-rotations),canonicalize,cse")
# CHECK-NEXT: scaled_matmul 3 hadamard 6
print("scaled_matmul", out.count("mxfp4.scaled_matmul"),
      "hadamard", out.count("mxfp4.hadamard"))
# The printed result parses again, also in generic form.
# CHECK-NEXT: round trip ok
assert mxfp4.parse(mxfp4.parse(out, generic=True)) == mxfp4.parse(out)
print("round trip ok")

for source, pipeline in (("func.func @f(", None),
                         (step, "func.func(not-a-pass)"),
                         (step, "func.func(mxfp4-apply-recipe{recipe=fp4-nope})")):
    try:
        if pipeline:
            mxfp4.run_pipeline(source, pipeline, name="step.mlir")
        else:
            mxfp4.parse(source, name="bad.mlir")
    except mxfp4.Mxfp4Error as e:
        print("error:", str(e).splitlines()[1][:90])
# CHECK-NEXT: error: bad.mlir:1:13: error: expected non-function type
# CHECK-NEXT: error: MLIR Textual PassPipeline Parser:1:11: error: 'not-a-pass' does not refer to a registered
# CHECK-NEXT: error: step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: recipe: unknown preset 'fp4-nope'
