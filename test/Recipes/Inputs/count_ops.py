"""Prints how many of each recipe-relevant op an MLIR file holds."""
import sys

text = open(sys.argv[1]).read()
counts = [("scaled_matmul", "mxfp4.scaled_matmul"), ("quantize", "mxfp4.quantize"),
          ("hadamard", "mxfp4.hadamard"), ("stochastic", "rounding = stochastic"),
          ("matmul", "linalg.matmul"), ("batch_matmul", "linalg.batch_matmul")]
print(" ".join(f"{name}={text.count(pattern)}" for name, pattern in counts))
