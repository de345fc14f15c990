"""Lists the gpu.funcs of a kernels.mlir that are generic contractions: an
scf.for (the K loop) whose body multiplies loads of two different buffers at
different indices (a matmul's A[m, k] and B[k, n]; not an elementwise
product such as a row's dot(dO, O), whose loads share their indices) and adds
the product into a loop-carried value. Prints their launch counts and the distinct bf16 MFMA GEMM kernels' and
their launches; with --none, fails if a generic contraction is left.

Usage: check_contractions.py kernels.mlir [--none]"""
import re, sys
text = open(sys.argv[1]).read()
funcs = re.split(r'\n    gpu\.func @', text)[1:]
hits = []
for f in funcs:
    name = f.split('(')[0]
    for m in re.finditer(r'scf\.for [^\n]*iter_args\([^)]*\)[^\n]*\{\n(.*?)scf\.yield', f, re.S):
        body = m.group(1)
        loads = {l.group(1): (l.group(2), l.group(3)) for l in re.finditer(
            r'(%\w+) = (?:memref|vector)\.load (%\w+)\[([^\]]*)\]', body)}
        ext = dict(re.findall(r'(%\w+) = arith\.extf (%\w+)', body))
        src = lambda v: loads.get(ext.get(v, v))
        found = False
        for mul in re.finditer(r'(%\w+) = arith\.mulf (%\w+), (%\w+)', body):
            a, b = src(mul.group(2)), src(mul.group(3))
            if a and b and a[0] != b[0] and a[1] != b[1] and re.search(
                    r'arith\.addf [^\n]*' + re.escape(mul.group(1)) + r'\b', body):
                found = True
        if found:
            hits.append(name)
            break
launches = {h: len(re.findall(r'@mxfp4_kernels::@' + h + r'\b', text)) for h in hits}
gemms = [f.split('(')[0] for f in funcs if 'amdgpu.mfma ' in f]
gemm_launches = sum(len(re.findall(r'@mxfp4_kernels::@' + g + r'\b', text))
                    for g in gemms)
print(f"{len(funcs)} kernels, {len(hits)} generic contraction kernels "
      f"({sum(launches.values())} launches): {launches}")
print(f"{len(gemms)} bf16 MFMA GEMM kernels, {gemm_launches} launches")
sys.exit(1 if hits and '--none' in sys.argv else 0)
