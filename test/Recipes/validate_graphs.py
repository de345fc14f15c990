# Runs the training-step graphs of Inputs/ (see Inputs/README.md) with
# mxfp4-run exec and checks the loss and every gradient against PyTorch
# autograd in float64 on the same f32 inputs.  Also checks that the committed
# .mlir files are what Inputs/gen_graphs.py writes today, that each untagged
# variant is its tagged variant without the mxfp4.gemm attributes, and, once
# mxfp4-opt parses #mxfp4.gemm, that the tagged variants give bit-identical
# results.

# REQUIRES: torch
# RUN: %PYTHON %s mxfp4-run %S/Inputs %t

import os
import re
import subprocess
import sys

import numpy as np
import torch

RTOL = 1e-4  # max |out - ref| <= RTOL * max |ref|, per result

runner, inputs_dir, tmp = sys.argv[1:4]
opt = os.path.join(os.path.dirname(runner), "mxfp4-opt")
os.makedirs(tmp, exist_ok=True)
sys.dont_write_bytecode = True  # no __pycache__ in Inputs/
import gen_graphs  # noqa: E402 (Inputs/, on lit's PYTHONPATH)

failures = []


def fail(msg):
    print("FAILED: " + msg)
    failures.append(msg)


# --- the committed inputs are up to date ------------------------------------

graphs = gen_graphs.build_all()
for g in graphs:
    for suffix, text in ((".mlir", g.tagged), (".untagged.mlir", g.untagged)):
        path = os.path.join(inputs_dir, g.name + suffix)
        with open(path) as fh:
            if fh.read() != text:
                fail("%s differs from what gen_graphs.py writes; regenerate"
                     % path)

    # The untagged body is the tagged body without the attribute.
    def body(text):
        return [l for l in text.splitlines() if not l.startswith("//")]
    stripped = [re.sub(r' \{mxfp4\.gemm = #mxfp4\.gemm<[a-z]+, "[^"]*">\}',
                       "", l) for l in body(g.tagged)]
    if stripped != body(g.untagged):
        fail("%s: untagged variant is not the tagged one without tags"
             % g.name)

    # Every linalg.matmul is tagged with the role its indexing maps imply,
    # every layer has one GEMM of each role, and no batch_matmul is tagged.
    maps_of_role = {
        "fprop": "indexing_maps = [affine_map<(m, n, k) -> (m, k)>, "
                 "affine_map<(m, n, k) -> (n, k)>, "
                 "affine_map<(m, n, k) -> (m, n)>] ",
        "dgrad": "",
        "wgrad": "indexing_maps = [affine_map<(m, n, k) -> (k, m)>, "
                 "affine_map<(m, n, k) -> (k, n)>, "
                 "affine_map<(m, n, k) -> (m, n)>] "}
    roles = {}
    for l in body(g.tagged):
        if "linalg.batch_matmul" in l and "mxfp4.gemm" in l:
            fail("%s: tagged batch_matmul: %s" % (g.name, l.strip()))
        if "linalg.matmul" not in l:
            continue
        m = re.search(r'linalg\.matmul (.*)\{mxfp4\.gemm = '
                      r'#mxfp4\.gemm<([a-z]+), "([^"]*)">\} ins', l)
        if not m or maps_of_role.get(m.group(2)) != m.group(1):
            fail("%s: matmul not tagged as its maps say: %s"
                 % (g.name, l.strip()))
            continue
        roles.setdefault(m.group(3), []).append(m.group(2))
    for layer, rs in sorted(roles.items()):
        if sorted(rs) != ["dgrad", "fprop", "wgrad"]:
            fail("%s: layer %s has GEMMs %s" % (g.name, layer, rs))
    print("  %s: %d tagged linear layers, %d untagged batch_matmuls"
          % (g.name, len(roles), g.tagged.count("linalg.batch_matmul")))


# --- inputs -----------------------------------------------------------------

def make_inputs(g):
    rng = np.random.default_rng(sum(map(ord, g.name)))
    vals = []
    for a in g.args:
        shape, name = a["shape"], a["name"]
        if a["role"] == "step":
            vals.append(7)
        elif name.endswith("layernorm.weight"):
            vals.append((1 + 0.1 * rng.standard_normal(shape)).astype(np.float32))
        elif a["role"] == "parameter":
            fan_in = shape[-1]
            vals.append((rng.standard_normal(shape) / np.sqrt(fan_in))
                        .astype(np.float32))
        else:
            vals.append(rng.standard_normal(shape).astype(np.float32))
    return vals


def run_graph(path, g, vals, tag):
    cmd = [runner, "exec", path]
    for i, v in enumerate(vals):
        if isinstance(v, np.ndarray):
            f = os.path.join(tmp, "%s.in%d.npy" % (g.name, i))
            np.save(f, v)
            cmd.append("--input=@" + f)
        else:
            cmd.append("--input=%d" % v)
    outs = [os.path.join(tmp, "%s.%s.out%d.npy" % (g.name, tag, i))
            for i in range(len(g.results))]
    for f in outs:
        if os.path.exists(f):
            os.remove(f)
    cmd += ["--output=@" + f for f in outs]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if r.returncode != 0:
        fail("%s (%s): mxfp4-run exited %d:\n%s" % (g.name, tag, r.returncode,
                                                   r.stdout))
        return None
    return [np.load(f) for f in outs]


# --- PyTorch references (float64, autograd) ---------------------------------

def t64(v, grad=False):
    return torch.tensor(np.asarray(v, np.float64), dtype=torch.float64,
                        requires_grad=grad)


def ref_linear(g, vals):
    x, w, dy = t64(vals[0], True), t64(vals[1], True), t64(vals[2])
    y = x @ w.T
    y.backward(dy)
    return [y, x.grad, w.grad]


def swiglu(x, wg, wu, wd):
    return (torch.nn.functional.silu(x @ wg.T) * (x @ wu.T)) @ wd.T


def ref_mlp(g, vals):
    x, target = t64(vals[0], True), t64(vals[1])
    wg, wu, wd = (t64(v, True) for v in vals[2:5])
    loss = ((swiglu(x, wg, wu, wd) - target) ** 2).mean()
    loss.backward()
    return [loss, wg.grad, wu.grad, wd.grad, x.grad]


def ref_block(g, vals):
    s = g.sizes
    b, sq, h, dh, eps = s["batch"], s["seq"], s["heads"], s["head_dim"], s["eps"]
    x, target = t64(vals[0], True), t64(vals[1])
    params = [t64(v, True) for v in vals[2:11]]
    wn1, wq, wk, wv, wo, wn2, wg, wu, wd = params

    def rmsnorm(v, w):
        return v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + eps) * w

    def heads(v):
        return v.view(b, sq, h, dh).transpose(1, 2)

    h1 = rmsnorm(x, wn1)
    q, k, v = heads(h1 @ wq.T), heads(h1 @ wk.T), heads(h1 @ wv.T)
    scores = q @ k.transpose(-1, -2) / dh ** 0.5
    causal = torch.triu(torch.ones(sq, sq, dtype=torch.bool), 1)
    p = torch.softmax(scores.masked_fill(causal, float("-inf")), -1)
    o = (p @ v).transpose(1, 2).reshape(b * sq, h * dh)
    hres = x + o @ wo.T
    out = hres + swiglu(rmsnorm(hres, wn2), wg, wu, wd)
    loss = ((out - target) ** 2).mean()
    loss.backward()
    return [loss] + [p_.grad for p_ in params] + [x.grad]


REFERENCES = {"linear_fwd_bwd": ref_linear, "mlp_block": ref_mlp,
              "transformer_block": ref_block}


# --- can the tagged variants be parsed? ---------------------------------------

probe = subprocess.run([opt, os.path.join(inputs_dir, "linear_fwd_bwd.mlir")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
if probe.returncode == 0:
    run_tagged = True
elif "unknown attribute `gemm` in dialect `mxfp4`" in probe.stdout:
    run_tagged = False
    print("tagged variants skipped: mxfp4-opt does not know #mxfp4.gemm yet")
else:
    run_tagged = False
    fail("mxfp4-opt rejects linear_fwd_bwd.mlir:\n" + probe.stdout)


# --- run and compare ----------------------------------------------------------

for g in graphs:
    vals = make_inputs(g)
    outs = run_graph(os.path.join(inputs_dir, g.name + ".untagged.mlir"), g,
                     vals, "untagged")
    if outs is None:
        continue
    refs = [r.detach().numpy() for r in REFERENCES[g.name](g, vals)]
    ok = True
    for (rname, shape), out, ref in zip(g.results, outs, refs):
        if out.dtype != np.float32 or out.shape != tuple(shape) \
                or ref.shape != tuple(shape):
            fail("%s: result %s is %s%s, expected float32%s (reference %s)"
                 % (g.name, rname, out.dtype, out.shape, tuple(shape),
                    ref.shape))
            ok = False
            continue
        scale = np.abs(ref).max()
        err = np.abs(out.astype(np.float64) - ref).max() / scale
        print("  %s %-34s max|ref| %.3e  rel err %.2e"
              % (g.name, rname, scale, err))
        if not (err <= RTOL) or scale == 0:
            fail("%s: result %s off by %.3e (relative to max |ref|)"
                 % (g.name, rname, err))
            ok = False
    if ok:
        print("validated: %s ok" % g.name)

    if run_tagged:
        touts = run_graph(os.path.join(inputs_dir, g.name + ".mlir"), g, vals,
                          "tagged")
        if touts is None:
            continue
        same = all(a.dtype == b.dtype and a.shape == b.shape and
                   a.tobytes() == b.tobytes() for a, b in zip(outs, touts))
        if same:
            print("validated: %s tagged identical" % g.name)
        else:
            fail("%s: tagged and untagged results differ" % g.name)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
