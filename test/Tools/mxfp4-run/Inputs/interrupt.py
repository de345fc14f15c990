"""Runs a command (a `mxfp4-run train`), sends it SIGINT once its run folder
has a few steps in metrics.jsonl, and checks that it saved a checkpoint of the
last finished step and exited with status 130.

    interrupt.py RUN_DIR -- mxfp4-run train ... --out=RUN_DIR
"""
import json
import os
import signal
import subprocess
import sys
import time

run_dir = sys.argv[1]
command = sys.argv[sys.argv.index("--") + 1:]
metrics = os.path.join(run_dir, "metrics.jsonl")


def steps_done():
    try:
        with open(metrics) as f:
            return sum(1 for line in f if '"loss"' in line)
    except FileNotFoundError:
        return 0


process = subprocess.Popen(command, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
deadline = time.time() + 300
while steps_done() < 5:
    assert process.poll() is None, f"exited early: {process.communicate()}"
    assert time.time() < deadline, "no steps within 300 s"
    time.sleep(0.05)
process.send_signal(signal.SIGINT)
out, err = process.communicate(timeout=120)
assert process.returncode == 130, (process.returncode, out, err)
state = json.load(open(os.path.join(run_dir, "checkpoint",
                                    "trainer_state.json")))
done = steps_done()
assert state["step"] == done, (state["step"], done)
assert "stopped early; continue with the same command and --resume" in out
print(f"ok: interrupted after {done} steps, checkpoint of step {state['step']}")
