"""Checks a compiled Llama training step against the PyTorch reference.

    compare_step.py --config cfg.json --workdir DIR --mxfp4-run PATH
        --step-mlir step.mlir [--function loss_and_grads|train_step]
        [--rtol 1e-4] [--seed 0] [--run-arg=--cpu-matmul=reference ...]
    compare_step.py --config cfg.json --workdir DIR --self-test [--function ..]

Writes seeded random parameters (p_000.npy ... in `parameter_specs` order,
and all of them as DIR/weights.safetensors) and tokens (int32 [B, S+1]) into
DIR, runs

    mxfp4-run exec step.mlir --function=F --input=@p_000.npy ...
        --input=@tokens.npy --input=STEP --output=@out_000.npy ...

with the signatures

    @loss_and_grads(params..., tokens) -> (loss, grads...)
    @train_step(params..., m..., v..., tokens, step: i64)
        -> (loss, grad_norm, lr, new params..., new m..., new v...)

and compares every result with `llama_torch`. `train_step` runs twice, at a
warm-up step and at a cosine-phase step, from nonzero random moments (scaled
to each parameter's gradient, v >= 0). Prints one line per tensor,

    name max_abs_err rel_err        (rel_err = ||got - want|| / ||want||)

then PASS or FAIL (exit status 0 or 1); a tensor fails when its rel_err
exceeds --rtol, its shape or dtype differ, or it is not finite. New
parameters are compared as updates (`update.<name>` = new - old), since the
update is small next to the weights it changes; their tolerance adds one f32
ulp of the new parameter per element (printed with a failure).

--self-test stands the reference in for the compiler (its results go through
the same output files) and asserts that the comparison passes, then that it
fails once one result is off by 1e-3 relative (the first gradient, or for
train_step the first update).
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch

import llama_torch as lt
import safetensors_np

PERTURBATION = 1e-3


def make_inputs(cfg, seed):
    """Parameters (a dict in parameter order) and tokens."""
    rng = np.random.default_rng(seed + 1)
    tokens = rng.integers(0, cfg.vocab_size, (cfg.batch_size, cfg.seq_len + 1),
                          dtype=np.int32)
    return lt.init_params(cfg, seed), tokens


def make_moments(cfg, params, tokens, seed):
    """AdamW moments of the size that training leaves: m ~ N(0, g_rms^2) and
    sqrt(v) in [0.5, inf) * g_rms per element, with g_rms each parameter's
    root-mean-square gradient (so no update divides by a near-zero v)."""
    _, grads = lt.loss_and_grads(cfg, params, tokens)
    rng = np.random.default_rng(seed + 2)
    m, v = {}, {}
    for name, g in grads.items():
        scale = float(np.sqrt(np.mean(np.square(g, dtype=np.float64)))) or 1e-3
        m[name] = (scale * rng.standard_normal(g.shape)).astype(np.float32)
        root = scale * (0.5 + np.abs(rng.standard_normal(g.shape)))
        v[name] = np.square(root).astype(np.float32)
    return m, v


def save_arrays(workdir, prefix, arrays):
    """Saves `arrays` as DIR/PREFIX_000.npy ...; returns the paths."""
    paths = []
    for i, array in enumerate(arrays):
        path = os.path.join(workdir, f"{prefix}_{i:03d}.npy")
        np.save(path, array)
        paths.append(path)
    return paths


def run_compiled(args, inputs, out_paths):
    """Runs the step on `inputs` (.npy paths or inline scalars); returns
    False with the tool's output on failure."""
    command = [args.mxfp4_run, "exec", args.step_mlir,
               f"--function={args.function}"] + args.run_arg
    command += [f"--input=@{x}" if isinstance(x, str) else f"--input={x}"
                for x in inputs]
    command += [f"--output=@{p}" for p in out_paths]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        print(" ".join(command))
        print(proc.stdout + proc.stderr)
        return False
    return True


def compare(names, got, want, floors, rtol):
    """Prints one line per tensor; returns whether each is within `rtol`
    relative plus its `floors` entry (a Frobenius norm) absolute."""
    ok = True
    for name, a, b, floor in zip(names, got, want, floors):
        if a.shape != b.shape or a.dtype != b.dtype:
            print(f"{name} got {a.dtype}{list(a.shape)}, "
                  f"expected {b.dtype}{list(b.shape)}")
            ok = False
            continue
        diff = a.astype(np.float64) - b.astype(np.float64)
        max_abs = float(np.max(np.abs(diff))) if diff.size else 0.0
        norm = float(np.linalg.norm(b.astype(np.float64)))
        err = float(np.linalg.norm(diff))
        rel = err / norm if norm else (0.0 if err == 0 else float("inf"))
        good = bool(np.all(np.isfinite(a))) and err <= rtol * norm + floor
        verdict = ""
        if not good:
            tolerance = rtol + floor / norm if norm else rtol
            verdict = f"  <-- FAIL (tolerance {tolerance:.1e})"
        print(f"{name} {max_abs:.3e} {rel:.3e}{verdict}")
        ok &= good
    return ok


def loss_and_grads_case(cfg, args, params, tokens):
    """(names, got, want, floors) of `loss_and_grads`, or None if the run
    failed."""
    names = [s.name for s in lt.parameter_specs(cfg)]
    inputs = save_arrays(args.workdir, "p", [params[n] for n in names])
    # The step only matters to stochastic and per-step random recipes.
    inputs += [os.path.join(args.workdir, "tokens.npy"), 0]
    loss, grads = lt.loss_and_grads(cfg, params, tokens)
    want = [loss] + [grads[n] for n in names]
    got = produce(args, inputs, want, "out")
    if got is None:
        return None
    labels = ["loss"] + [f"grad.{n}" for n in names]
    return labels, got, want, [0.0] * len(want)


def train_step_case(cfg, args, params, tokens, m, v, step):
    """(names, got, want, floors) of `train_step` at `step`, or None if the
    run failed. New parameters are turned into updates on both sides; their
    floor allows the f32 rounding of the new parameters, one ulp each, which
    is a sizable part of an update as small as lr * 1e-1 on a unit gain."""
    names = [s.name for s in lt.parameter_specs(cfg)]
    inputs = save_arrays(args.workdir, "p", [params[n] for n in names])
    inputs += save_arrays(args.workdir, "m", [m[n] for n in names])
    inputs += save_arrays(args.workdir, "v", [v[n] for n in names])
    inputs += [os.path.join(args.workdir, "tokens.npy"), step]
    loss, norm, lr, new_p, new_m, new_v = lt.train_step(cfg, params, m, v,
                                                        tokens, step)
    want = ([loss, norm, lr] + [new_p[n] for n in names] +
            [new_m[n] for n in names] + [new_v[n] for n in names])
    got = produce(args, inputs, want, f"out_step{step}")
    if got is None:
        return None
    k = len(names)
    floors = [0.0] * len(want)
    floors[3:3 + k] = [float(np.linalg.norm(np.spacing(new_p[n])))
                       for n in names]
    for results in (got, want):
        results[3:3 + k] = [p - params[n]
                            for p, n in zip(results[3:3 + k], names)]
    labels = (["loss", "grad_norm", "lr"] + [f"update.{n}" for n in names] +
              [f"m.{n}" for n in names] + [f"v.{n}" for n in names])
    return labels, got, want, floors


def produce(args, inputs, want, prefix):
    """The step's results, from the compiler or, under --self-test, from the
    reference, both through .npy files; None if the compiled run failed."""
    out_paths = [os.path.join(args.workdir, f"{prefix}_{i:03d}.npy")
                 for i in range(len(want))]
    if args.self_test:
        for path, array in zip(out_paths, want):
            np.save(path, array)
    elif not run_compiled(args, inputs, out_paths):
        return None
    return [np.load(p) for p in out_paths]


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True, help="Llama JSON config")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--mxfp4-run", help="path of mxfp4-run")
    parser.add_argument("--step-mlir", help="the compiled step's module")
    parser.add_argument("--function", default="loss_and_grads",
                        choices=("loss_and_grads", "train_step"))
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--run-arg", action="append", default=[],
                        help="extra mxfp4-run exec option (repeatable)")
    parser.add_argument("--self-test", action="store_true",
                        help="check the comparison itself, without mxfp4-run")
    args = parser.parse_args()
    if not args.self_test and not (args.mxfp4_run and args.step_mlir):
        parser.error("--mxfp4-run and --step-mlir are required unless "
                     "--self-test")
    torch.set_num_threads(1)
    with open(args.config) as f:
        cfg = lt.LlamaConfig.from_dict(json.load(f))
    os.makedirs(args.workdir, exist_ok=True)

    params, tokens = make_inputs(cfg, args.seed)
    np.save(os.path.join(args.workdir, "tokens.npy"), tokens)
    safetensors_np.save(os.path.join(args.workdir, "weights.safetensors"),
                        params, metadata={"format": "pt"})
    if args.function == "loss_and_grads":
        case = loss_and_grads_case(cfg, args, params, tokens)
        ok = case is not None and compare(*case, rtol=args.rtol)
        first = case
    else:
        m, v = make_moments(cfg, params, tokens, args.seed)
        steps = [(cfg.warmup_steps + cfg.total_steps) // 2]
        if cfg.warmup_steps > 0:
            steps.insert(0, cfg.warmup_steps // 2)
        ok, first = True, None
        for step in steps:
            phase = "warm-up" if step < cfg.warmup_steps else "cosine"
            print(f"# train_step step {step} ({phase})")
            case = train_step_case(cfg, args, params, tokens, m, v, step)
            if case is None:
                ok = False
                break
            ok = compare(*case, rtol=args.rtol) and ok
            first = first or case
    if args.self_test and ok:
        names, got, want, floors = first
        index = names.index(next(n for n in names if n.startswith(
            ("grad.", "update."))))
        got[index] = got[index] * np.float32(1 + PERTURBATION)
        print(f"# self-test: {names[index]} scaled by 1 + {PERTURBATION:g}")
        ok = not compare(names, got, want, floors, args.rtol)
        print(f"# self-test: the perturbation was "
              f"{'detected' if ok else 'NOT detected'}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
