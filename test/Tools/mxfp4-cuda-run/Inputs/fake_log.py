"""Reads the fake CUDA driver's logs (fake_cuda.cpp) of training runs.
  fake_log.py step LOG RUN STEP: the log from the upload of STEP's batch
    (1-based, from RUN/batches.bin) on, without allocations and with device
    addresses as A and without the run's one-time setup (tensor maps,
    shared memory limits), so the calls of a resumed run compare with a
    whole run's, whose cache of freed blocks hands out other addresses.
  fake_log.py state CHECKPOINT: the fake's hashes of the parameters and
    moments in CHECKPOINT, in the order the runtime uploads them.
  fake_log.py uploads LOG N: the hashes of LOG's first N uploads."""
import json
import re
import struct
import sys


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def tensors(path):
    data = open(path, "rb").read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    return {name: data[8 + length + e["data_offsets"][0]:8 + length + e["data_offsets"][1]]
            for name, e in header.items()}


mode = sys.argv[1]
if mode == "step":
    log, run, step = sys.argv[2], sys.argv[3], int(sys.argv[4])
    manifest = dict(l.split(None, 1) for l in open(f"{run}/run.txt") if l[0] != "#")
    tokens = int(manifest["batch"]) * int(manifest["window"])
    width = int(manifest["token_bytes"])
    raw = open(f"{run}/batches.bin", "rb").read()[(step - 1) * tokens * width:step * tokens * width]
    values = raw if width == 1 else struct.unpack(f"<{tokens}i", raw)
    batch = fnv1a(struct.pack(f"<{tokens}i", *values))
    lines = open(log).read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("upload") and l.endswith(batch))
    mapped = False
    for line in lines[start:]:
        # A run encodes each tensor map, uploads it and raises a kernel's
        # shared memory limit once: the first call that needs them does.
        once = line.startswith(("tensormap", "attribute")) or (
            mapped and line.startswith("upload 128 "))
        if not line.startswith("alloc"):
            mapped = line.startswith("tensormap")
        if not line.startswith("alloc") and not once:
            print(re.sub(r"\b1[0-9a-f]{7}\b", "A", line))
elif mode == "state":
    model = tensors(f"{sys.argv[2]}/model.safetensors")
    moments = tensors(f"{sys.argv[2]}/optimizer.safetensors")
    for suffix, source in (("", model), (".exp_avg", moments), (".exp_avg_sq", moments)):
        for name in model:
            print(fnv1a(source[name + suffix]))
elif mode == "uploads":
    uploads = [l.split()[-1] for l in open(sys.argv[2]) if l.startswith("upload")]
    print("\n".join(uploads[:int(sys.argv[3])]))
