#!/usr/bin/env bash
# Prepares the NVIDIA GPU check (run it here, after scripts/build.sh): the
# cases of scripts/gpu/cases.py — quantize, GEMM and micro-step functions
# compiled for sm_90a (plan.txt, kernels.cubin), random inputs and the CPU
# path's results — in gpu-check/ (untracked, inside the repo so it travels
# to the GPU machine). Then, on the GPU machine: bash scripts/gpu/run.sh
# CASES=quantize,gemm,...,frontend,data-parallel and BENCH=NAME_PREFIX,...
# prepare a subset: the
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
# Data-parallel training (group `data-parallel`): the micro step compiled
# for one GPU (c1, @train_step) and for 1 and 2 ranks (c2, c3: --ranks), and
# a 400-step run; run.sh trains c1, then c2 with --gpus=1 and, with two GPUs
# or more, c3 with --gpus=2, and compares their metrics; it also kills and
# resumes c1's training (long enough for 8 kills).
case ",${CASES:-frontend}," in
  *,data-parallel,*)
    dp="$out/data-parallel" && mkdir -p "$dp"
    /usr/bin/python3 -c "import json, sys; c = json.load(open(sys.argv[1])); c.update(total_steps=400, warmup_steps=20); json.dump(c, open(sys.argv[2], 'w'))" \
      test/Tools/mxfp4-run/Inputs/micro.json "$dp/micro.json"
    /usr/bin/python3 test/Tools/mxfp4-run/Inputs/make_corpus.py "$dp/corpus.txt"
    build/bin/mxfp4-run compile --preset="$dp/micro.json" --recipe=fp4-all-dht16 \
      --target=sm_90a --out-dir="$dp/c1"
    for ranks in 1 2; do
      build/bin/mxfp4-run compile --preset="$dp/micro.json" --recipe=fp4-all-dht16 \
        --target=sm_90a --ranks=$ranks --out-dir="$dp/c$((ranks + 1))"
    done
    build/bin/mxfp4-run train --preset="$dp/micro.json" --recipe=fp4-all-dht16 \
      --data="$dp/corpus.txt" --tokenizer=byte --seed=5 --eval-every=50 \
      --eval-batches=1 --export-gpu-run="$dp/run" > /dev/null
    rm -f "$dp/corpus.txt" "$dp"/c*/kernels.mlir "$dp"/c*/kernels.ptx "$dp"/c*/host.so ;;
esac
# Data-parallel scaling (group `scaling`): each of SCALING_PRESETS (default
# pilot,llama3.2-1b) compiled with --ranks=N for each N of SCALING_GPUS
# (default 1,2,4,8) and a run of SCALING_STEPS (default 30) steps, weights
# drawn from the seed; then `bash scripts/gpu/scaling.sh` there.
case ",${CASES:-frontend}," in
  *,scaling,*)
    /usr/bin/python3 test/Tools/mxfp4-run/Inputs/make_corpus.py "$out/scaling-corpus.txt" 60000
    IFS=, read -r -a presets <<< "${SCALING_PRESETS:-pilot,llama3.2-1b}"
    IFS=, read -r -a counts <<< "${SCALING_GPUS:-1,2,4,8}"
    for preset in "${presets[@]}"; do
      name=$(basename "$preset" .json)
      s="$out/scaling/$name" && mkdir -p "$s"
      /usr/bin/python3 -c "import json, sys; p = sys.argv[1]; c = json.load(open(p)) if p.endswith('.json') else {'preset': p}; c.update(name=sys.argv[3], total_steps=int(sys.argv[4]), warmup_steps=2); json.dump(c, open(sys.argv[2], 'w'))" \
        "$preset" "$s/config.json" "$name" "${SCALING_STEPS:-30}"
      for n in "${counts[@]}"; do
        build/bin/mxfp4-run compile --preset="$s/config.json" --recipe=fp4-all-dht16 \
          --target=sm_90a --ranks="$n" --out-dir="$s/gpus$n"
        rm -f "$s/gpus$n"/kernels.mlir "$s/gpus$n"/kernels.ptx "$s/gpus$n"/host.so
      done
      build/bin/mxfp4-run train --preset="$s/config.json" --recipe=fp4-all-dht16 \
        --data="$out/scaling-corpus.txt" --tokenizer=byte --seed=1 \
        --export-gpu-run="$s/run" > /dev/null
    done
    rm -f "$out/scaling-corpus.txt" ;;
esac
echo "now run 'bash scripts/gpu/run.sh' (checks) and 'bash scripts/gpu/bench.sh' (benchmarks) on the GPU machine"
