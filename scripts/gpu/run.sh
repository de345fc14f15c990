#!/usr/bin/env bash
# The NVIDIA GPU check (on the GPU machine, after scripts/gpu/prepare.sh
# here): builds the LLVM-free plan runner, runs every case of
# gpu-check/cases.txt on the GPU and compares its results with the CPU's
# (the stochastic rounding case: one call a counter, then its statistics),
# and two cases through their host libraries with the plan's.
# Needs CMake, a C++ compiler, the NVIDIA driver and NumPy; no LLVM.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S runtime -B /tmp/mxfp4-build-runtime -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build /tmp/mxfp4-build-runtime > /dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
while read -r name function results tolerance args; do
  if [ "$function" = train ]; then
    (cd "gpu-check/$name" && /tmp/mxfp4-build-runtime/cuda/mxfp4-cuda-run train plan.txt \
       kernels.cubin --run=run --out=. | tail -5)
    continue
  fi
  if [ "$tolerance" = sr ]; then
    # Stochastic rounding's statistics: one call a counter of counters.txt,
    # the results of call k in gpu-<k>-<i>.npy (compare.py checks them).
    (cd "gpu-check/$name" && k=0 &&
     while read -r counter; do
       /tmp/mxfp4-build-runtime/cuda/mxfp4-cuda-run exec plan.txt kernels.cubin \
         --function="$function" --repeat=0 $args --input="$counter" \
         $(for i in $(seq 0 $((results - 1))); do echo "--output=@gpu-$k-$i.npy"; done) \
         < /dev/null || exit 1
       k=$((k + 1))
     done < counters.txt
     echo "$name: $k calls")
    continue
  fi
  outputs=""
  for i in $(seq 0 $((results - 1))); do outputs+=" --output=@gpu$i.npy"; done
  (cd "gpu-check/$name" &&
   /tmp/mxfp4-build-runtime/cuda/mxfp4-cuda-run exec plan.txt kernels.cubin \
     --function="$function" --repeat=0 $args $outputs)
done < gpu-check/cases.txt
# The compiled host code (--host=host.so) must make the plan's calls: the
# first loss_and_grads case and the first training case, bit for bit.
host=0
if grep -q ' loss_and_grads ' gpu-check/cases.txt; then
  read -r name function results tolerance args < <(grep -m1 ' loss_and_grads ' gpu-check/cases.txt)
  (cd "gpu-check/$name" &&
   /tmp/mxfp4-build-runtime/cuda/mxfp4-cuda-run exec --host=host.so --function="$function" \
     --repeat=0 $args $(for i in $(seq 0 $((results - 1))); do echo --output=@lib$i.npy; done) &&
   for i in $(seq 0 $((results - 1))); do cmp gpu$i.npy lib$i.npy || exit 1; done &&
   echo "host.so: $name: $results results bit-identical to the plan's") || host=1
fi
name=$(awk '$2 == "train" { print $1; exit }' gpu-check/cases.txt)
if [ -n "$name" ]; then
  (cd "gpu-check/$name" && mkdir -p lib &&
   /tmp/mxfp4-build-runtime/cuda/mxfp4-cuda-run train --host=host.so --run=run --out=lib | tail -5 &&
   cmp checkpoint/model.safetensors lib/checkpoint/model.safetensors &&
   echo "host.so: $name: trained weights bit-identical to the plan's") || host=1
fi
python3 scripts/gpu/compare.py gpu-check
# The CUDA runtime survives kill -9 (test/Tools/mxfp4-run/Inputs/kill_resume.py,
# as the CPU trainer and the HIP runtime do in CI): the data-parallel
# group's one-GPU compile on its 400-step run (a GPU trains the micro step
# at tens of thousands of steps a minute: the 40-step cases end before 8
# kills), checkpointing every step, killed at 8 random moments and resumed,
# ends with the uninterrupted run's model and optimizer files byte for byte.
if [ -d gpu-check/data-parallel ]; then
  rm -rf /tmp/mxfp4-kill-resume
  (cd gpu-check/data-parallel &&
   python3 "$OLDPWD/test/Tools/mxfp4-run/Inputs/kill_resume.py" /tmp/mxfp4-kill-resume 8 7 -- \
     /tmp/mxfp4-build-runtime/cuda/mxfp4-cuda-run train c1/plan.txt c1/kernels.cubin \
     --run=run --checkpoint-every=1) || host=1
fi
# Data-parallel training through NCCL (PyTorch's wheel ships libnccl.so.2):
# one GPU's @train_step against --gpus=1 and, where there are two GPUs,
# --gpus=2 of the same run, metrics within 1e-3 relative.
dp=gpu-check/data-parallel
if [ -d "$dp" ]; then
  export MXFP4_NCCL_LIBRARY="${MXFP4_NCCL_LIBRARY:-$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2> /dev/null || echo libnccl.so.2)}"
  rm -rf /tmp/mxfp4-dp && mkdir -p /tmp/mxfp4-dp
  gpus=$(nvidia-smi -L | wc -l)
  (/tmp/mxfp4-build-runtime/cuda/mxfp4-cuda-run train $dp/c1/plan.txt $dp/c1/kernels.cubin \
     --run=$dp/run --out=/tmp/mxfp4-dp/one | tail -2 &&
   for ranks in 1 2; do
     [ "$gpus" -ge $ranks ] || { echo "data-parallel: --gpus=$ranks skipped ($gpus GPU)"; continue; }
     c=$dp/c$((ranks + 1))
     timeout 300 /tmp/mxfp4-build-runtime/cuda/mxfp4-cuda-run train $c/plan.txt $c/kernels.cubin \
       --run=$dp/run --out=/tmp/mxfp4-dp/gpus$ranks --gpus=$ranks --checkpoint-every=50 | tail -2 &&
     echo "data-parallel: --gpus=$ranks against one GPU's @train_step:" &&
     python3 test/Integration/gfx950-emulator/Inputs/compare_metrics.py \
       /tmp/mxfp4-dp/one/metrics.jsonl /tmp/mxfp4-dp/gpus$ranks/metrics.jsonl 1e-3 || exit 1
   done) || host=1
fi
for frontend in gpu-check/frontend gpu-check/frontend-transformers; do
  if [ -d "$frontend" ]; then
    python3 scripts/gpu/frontend_check.py /tmp/mxfp4-build-runtime/cuda/mxfp4-cuda-run "$frontend" || host=1
  fi
done
exit $host
