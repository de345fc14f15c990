# Stochastic rounding through the quantize groups the training step is made
# of (fused SwiGLU / norm producers, row jobs in nearest_even with stochastic
# column jobs, both jobs stochastic, a rotated column job; ragged and whole
# shapes), judged by its statistics over 64 counters: unbiased per element
# and overall, independent across neighbouring elements, rows, counters and
# jobs (test/Integration/lib/sr_statistics.py says how, with bounds from the
# sample sizes). The gfx950 emulator runs the same in
# gfx950/stochastic-rounding-statistics.py, sm_90a in scripts/gpu (CASES=sr).
# RUN: %PYTHON %s mxfp4-run %t cpu | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: sr statistics: {{[0-9]+}} checks, 0 failed

import sys

import sr_statistics

report = sr_statistics.run_target(*sys.argv[1:4])
sys.exit(1 if report.failed else 0)
