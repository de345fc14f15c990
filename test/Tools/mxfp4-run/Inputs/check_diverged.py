"""Checks the outputs of a training run that diverged (mxfp4-run train or
mxfp4-cuda-run train; include/mxfp4/Train/Convergence.h).

    check_diverged.py RUN ERR           RUN diverged as the (last) error in
                                        ERR says
    check_diverged.py --poison CKPT     writes a NaN over the first value of
                                        CKPT/model.safetensors

The error names the step N and the checkpoint kept (of step K < N, the last
the log says was saved, if it says) or that none was written. Then RUN/metrics.jsonl has the training records of steps
1..N and ends with the record marking step N with the error's reason;
loss.svg is drawn; RUN/checkpoint holds step K, and every parameter and
moment in it is finite, or there is no RUN/checkpoint.
"""
import array
import json
import math
import os
import re
import struct
import sys
import xml.etree.ElementTree as ET

# The error as the trainers print it, or as a study's log quotes it.
ERROR = re.compile(
    r"training diverged at step (\d+): (.+?); (?:the last finite "
    r"checkpoint \(step (\d+)\) is kept in (\S+)|no checkpoint was written "
    r"before it)$", re.M)


def tensors(path):
    """The F32 tensors of a safetensors file, as arrays."""
    data = open(path, "rb").read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    result = {}
    for name, entry in header.items():
        assert entry["dtype"] == "F32", (path, name, entry["dtype"])
        begin, end = entry["data_offsets"]
        values = array.array("f")
        values.frombytes(data[8 + length + begin:8 + length + end])
        result[name] = values
    return result


def check(run, err):
    text = open(err).read()
    found = list(ERROR.finditer(text))
    assert found, f"no divergence error in {err}: {text!r}"
    found = found[-1]  # a study's log: the last run's
    step, reason = int(found.group(1)), found.group(2)
    kept = int(found.group(3)) if found.group(3) else None
    # The CPU trainer says what it saves: the kept checkpoint is the last.
    saved = [int(s) for s in re.findall(r"saved checkpoint of step (\d+)", text)]
    assert not saved or saved[-1] == kept, (saved, kept)

    with open(os.path.join(run, "metrics.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    trained = [r["step"] for r in rows if "loss" in r]
    assert trained == list(range(1, step + 1)), f"step records {trained}"
    assert rows[-1] == {"step": step, "diverged": reason,
                        "tokens": rows[-1].get("tokens")}, rows[-1]
    assert all(r["step"] <= step for r in rows), "records after the divergence"
    assert sum("diverged" in r for r in rows) == 1, "more than one marker"
    ET.parse(os.path.join(run, "loss.svg"))  # a well-formed SVG

    ckpt = os.path.join(run, "checkpoint")
    if kept is None:
        assert not os.path.exists(ckpt), f"{ckpt} exists"
        print(f"ok: {run} diverged at step {step} ({reason}); no checkpoint")
        return
    assert kept < step, (kept, step)
    state = json.load(open(os.path.join(ckpt, "trainer_state.json")))
    assert state["step"] == kept, state
    count = 0
    for file in ("model.safetensors", "optimizer.safetensors"):
        for name, values in tensors(os.path.join(ckpt, file)).items():
            assert all(math.isfinite(v) for v in values), f"{file}: {name}"
            count += 1
    print(f"ok: {run} diverged at step {step} ({reason}); checkpoint of step "
          f"{kept}, {count} finite tensors")


def poison(ckpt):
    path = os.path.join(ckpt, "model.safetensors")
    data = bytearray(open(path, "rb").read())
    (length,) = struct.unpack("<Q", data[:8])
    data[8 + length:8 + length + 4] = struct.pack("<f", float("nan"))
    open(path, "wb").write(data)


def main():
    if sys.argv[1] == "--poison":
        poison(sys.argv[2])
    else:
        check(sys.argv[1], sys.argv[2])


if __name__ == "__main__":
    main()
