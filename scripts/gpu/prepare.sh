#!/usr/bin/env bash
# Prepares the NVIDIA GPU check (run it here, after scripts/build.sh): the
# cases of scripts/gpu/cases.py — quantize, GEMM and micro-step functions
# compiled for sm_90a (plan.txt, kernels.cubin), random inputs and the CPU
# path's results — in gpu-check/ (untracked, inside the repo so it travels
# to the GPU machine). Then, on the GPU machine: bash scripts/gpu/run.sh
# CASES=quantize,gemm,... and BENCH=NAME_PREFIX,... prepare a subset: the
# whole check is large (tens of MiB of inputs), so it can be prepared and run
# in parts.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=gpu-check
rm -rf "$out" && mkdir -p "$out"
/usr/bin/python3 scripts/gpu/cases.py "$out" build/bin/mxfp4-run
/usr/bin/python3 scripts/gpu/bench_cases.py "$out/bench" build/bin/mxfp4-run
# The PyTorch frontend's Llama (group `frontend`); with FRONTEND_GRAPH (a
# graph file of scripts/gpu/trace_transformers.py, e.g. its
# llama-curve-sdpa.npz), also transformers' Llama in frontend-transformers.
case ",${CASES:-frontend}," in
  *,frontend,*) PYTHONPATH=build/python_packages /usr/bin/python3 \
                  scripts/gpu/frontend_cases.py "$out/frontend"
                if [ -n "${FRONTEND_GRAPH:-}" ]; then
                  PYTHONPATH=build/python_packages /usr/bin/python3 \
                    scripts/gpu/frontend_cases.py "$out/frontend-transformers" \
                    "$FRONTEND_GRAPH"
                fi ;;
esac
echo "now run 'bash scripts/gpu/run.sh' (checks) and 'bash scripts/gpu/bench.sh' (benchmarks) on the GPU machine"
