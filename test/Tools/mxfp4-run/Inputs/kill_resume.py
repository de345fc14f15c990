"""Kills a trainer with SIGKILL at random moments (while it steps, evaluates
or writes a checkpoint: it checkpoints every step) and resumes it each
time; the run must end with the uninterrupted run's model and optimizer
files byte for byte. While a trainer runs, a second one into the same
folder must stop with the run-folder lock's error naming the first; once
the first is killed, the lock is gone with it. Before the last resume, the
folders a writer killed inside a checkpoint write leaves (a temporary one,
and a previous checkpoint set aside with the checkpoint itself missing)
are planted: the resumed trainer restores the one and removes the other.

    kill_resume.py WORK_DIR KILLS SEED -- TRAIN_COMMAND...

TRAIN_COMMAND is the whole `train` command line without --out and
--resume (its --steps, --checkpoint-every=1 ...); the reference run goes
to WORK_DIR/reference, the killed one to WORK_DIR/killed.
"""
import os
import random
import signal
import subprocess
import sys
import time

work, kills, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
command = sys.argv[sys.argv.index("--") + 1:]
rng = random.Random(seed)
reference = os.path.join(work, "reference")
killed = os.path.join(work, "killed")


def steps_done(run):
    try:
        with open(os.path.join(run, "metrics.jsonl")) as f:
            return sum(1 for line in f if '"loss"' in line)
    except FileNotFoundError:
        return 0


def run_to_end(run, resume):
    proc = subprocess.run(command + [f"--out={run}"] +
                          (["--resume"] if resume else []),
                          capture_output=True, text=True)
    assert proc.returncode == 0, (run, proc.stdout[-2000:], proc.stderr[-2000:])


run_to_end(reference, resume=False)
total = steps_done(reference)

resume = False
for kill in range(kills):
    start = steps_done(killed)
    proc = subprocess.Popen(command + [f"--out={killed}"] +
                            (["--resume"] if resume else []),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.time() + 300
    # Past compilation: a step of this process is logged.
    while steps_done(killed) <= start:
        assert proc.poll() is None, ("exited early", proc.communicate())
        assert time.time() < deadline, "no step within 300 s"
        time.sleep(0.01)
    if kill == 0:
        # A second trainer into the same folder is refused, naming the
        # first, and touches nothing.
        second = subprocess.run(command + [f"--out={killed}", "--resume"],
                                capture_output=True, text=True)
        expected = (f"'{killed}' is being trained into by process {proc.pid}")
        assert second.returncode != 0 and expected in second.stderr, (
            second.returncode, second.stderr[-2000:])
        print(f"second trainer refused: {second.stderr.strip().splitlines()[-1]}")
    # A few steps on, then a moment into the next step: its compute, its
    # metrics or its checkpoint write.
    target = steps_done(killed) + rng.randint(0, 5)
    while steps_done(killed) < target:
        assert proc.poll() is None, ("finished before the kill", proc.communicate())
        time.sleep(0.002)
    time.sleep(rng.uniform(0.0, 0.1))
    assert proc.poll() is None, ("finished before the kill", proc.communicate())
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    resume = os.path.isdir(os.path.join(killed, "checkpoint"))
    print(f"kill {kill + 1}: after step {steps_done(killed)}, checkpoint "
          f"{'found' if resume else 'not yet written'}")
# A writer killed between the fallback's two renames: the checkpoint set
# aside, a new one half written.
checkpoint = os.path.join(killed, "checkpoint")
assert resume, "no checkpoint after the kills"
os.rename(checkpoint, checkpoint + ".old-999999")
os.makedirs(checkpoint + ".tmp-999999")
open(os.path.join(checkpoint + ".tmp-999999", "model.safetensors"), "wb").close()
# The killed run's lock went with it: resuming takes it again.
run_to_end(killed, resume=True)

for name in ("model.safetensors", "optimizer.safetensors"):
    a = open(os.path.join(reference, "checkpoint", name), "rb").read()
    b = open(os.path.join(killed, "checkpoint", name), "rb").read()
    assert a == b, f"{name} differs from the uninterrupted run's"
leftovers = [n for n in os.listdir(killed) if ".tmp-" in n or ".old-" in n]
assert not leftovers, leftovers
print(f"ok: {kills} kills, {total} steps, model and optimizer bit-identical "
      f"to the uninterrupted run, no temporary folder left")
