"""Writes the fuzz targets' seed corpora into OUT/<target>/: valid and
near-valid inputs of each format (small arrays written by NumPy, safetensors
files laid out as the format says, a run manifest, metrics lines, a trainer
state), plus the tests' own inputs of that format (JSON configs, host
plans). Usage: seeds.py OUT REPO_ROOT"""
import glob
import gzip
import io
import json
import os
import struct
import sys
import tarfile

import numpy as np

out, root = sys.argv[1], sys.argv[2]


def seed(target, name, data):
    os.makedirs(os.path.join(out, target), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(os.path.join(out, target, name), mode) as f:
        f.write(data)


def copy(target, pattern, limit=16, max_bytes=8192):
    files = sorted(glob.glob(os.path.join(root, pattern), recursive=True))
    for path in [p for p in files if os.path.getsize(p) <= max_bytes][:limit]:
        seed(target, os.path.relpath(path, root).replace("/", "_"),
             open(path, "rb").read())


# .npy: the dtypes and shapes the tools read and write.
for i, (dtype, shape) in enumerate([("<f4", (3,)), ("<f4", (2, 3)),
                                    ("<i4", (4,)), ("<u2", (2, 2)),
                                    ("<f4", ()), ("<i8", (1, 1, 2)),
                                    ("|u1", (5,))]):
    path = os.path.join(out, "npy", f"seed{i}.npy")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape))
np.save(os.path.join(out, "npy", "fortran.npy"),
        np.asfortranarray(np.ones((2, 3), np.float32)))


def safetensors(tensors, metadata=None):
    header, data, offset = {}, b"", 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


seed("safetensors", "two.safetensors", safetensors(
    [("w", "F32", [2, 2], np.ones(4, np.float32).tobytes()),
     ("b", "BF16", [3], b"\0\x3f" * 3)], {"format": "pt"}))
seed("safetensors", "empty.safetensors", safetensors([]))
seed("safetensors", "ids.safetensors", safetensors(
    [("ids", "I32", [2, 1], np.arange(2, dtype=np.int32).tobytes())]))

copy("json", "test/**/*.json")
seed("json", "trainer_state.json", json.dumps({
    "data": "1 file", "mxfp4_config": {"dim": 64, "name": "micro"},
    "plan": "0123456789abcdef", "recipe": "fp4-all-dht16", "run": "feed",
    "seed": 5, "step": 40, "tokenizer": "byte", "tokens_seen": 5120},
    indent=2, sort_keys=True))
seed("json", "values.json", '[null, true, false, -0.0, 1e308, 123456789012345678, '
     '"\\u00e9\\ud83d\\ude00", {"a": [], "b": {}}]')

seed("metrics", "metrics.jsonl",
     '{"step":0,"run":{"commit":"abc","config":{"dim":64}},"tokens":0}\n'
     '{"step":1,"elapsed_s":0.01,"grad_norm":2.4,"loss":5.5,"lr":0.001,'
     '"tokens":128,"tokens_per_s":9325.5}\n'
     '{"step":1,"eval_loss":5.4,"tokens":128}\n'
     '{"step":2,"diverged":"gradient norm is nan","loss":null,"tokens":256}\n'
     '{"step":3,"loss":')

seed("training-run", "run.txt",
     "# mxfp4 training run v1\nsteps 400\nbatch 4\nwindow 33\ntoken_bytes 1\n"
     "seed 5\ninit_std 2.000000000e-02\neval_every 100\neval_batches 1\n"
     "model micro\nparam 0 model.embed_tokens.weight normal 256 64\n"
     "param 1 model.norm.weight ones 64\n")

copy("host-plan", "test/**/*plan*.txt")
# The bf16 GEMM's records: tensor maps of two buffers (rank 2 and 3) and a
# launch with dynamic shared memory that passes them.
seed("host-plan", "tensor-maps.txt",
     "# mxfp4 host plan v1\nfunction f 2 1\narg 0 buffer 0 64000 bf16 200 160\n"
     "arg 1 buffer 1 61440 bf16 4 40 192\nconst 2 8 0000000000000001\n"
     "alloc 3 153600\nview 4 0\n"
     "tensormap 5 4 bf16 dims=200,160 strides=320 box=128,64 offset=0 "
     "swizzle=128 l2=256\n"
     "tensormap 6 1 bf16 dims=4,40,192 strides=15360,384 box=1,64,64 "
     "offset=16 swizzle=128 l2=0\n"
     "launch kernel_0 2 1 1 384 1 1 shared=197696 b5 b6 s2 b3\n"
     "result 0 3 153600 f32 200 192\nend\n")

# A checkpoint folder (fuzz/checkpoint-folder.cpp): trainer_state.json,
# model.safetensors, optimizer.safetensors and mxfp4_config.json, each a
# 2-byte length and its bytes (0xffff: no such file), of the target's run:
# its manifest, seed, plan hash and three F32 parameters.
def fnv1a(text):
    value = 0xcbf29ce484222325
    for byte in text.encode():
        value = ((value ^ byte) * 0x100000001b3) % (1 << 64)
    return f"{value:016x}"


run_params = [("embed.weight", [3, 2]), ("norm.weight", [2]),
              ("head.weight", [2, 3])]


def checkpoint(files):
    return b"".join(b"\xff\xff" if f is None else struct.pack("<H", len(f)) + f
                    for f in files)


def checkpoint_files(step=3, fill=None, shapes=None, **state):
    shapes = shapes or [shape for _, shape in run_params]
    tensors = {}
    for i, ((name, _), shape) in enumerate(zip(run_params, shapes)):
        count = int(np.prod(shape))
        for part, suffix in enumerate(["", ".exp_avg", ".exp_avg_sq"]):
            data = (np.full(count, fill, np.float32) if fill is not None else
                    np.arange(count, dtype=np.float32) * (part + 1) + i)
            tensors[name + suffix] = ("F32", shape, data.tobytes())
    trainer_state = dict(step=step, seed=5, tokens_seen=step * 2 * 4,
                         recipe="bf16", plan="0123456789abcdef",
                         run=fnv1a("# mxfp4 training run v1\nsteps 8\n"))
    trainer_state.update(state)
    return [json.dumps(trainer_state, indent=2, sort_keys=True).encode() + b"\n",
            safetensors([(n, *tensors[n]) for n, _ in run_params],
                        {"format": "pt"}),
            safetensors([(n + s, *tensors[n + s]) for n, _ in run_params
                         for s in [".exp_avg", ".exp_avg_sq"]], {"format": "pt"}),
            json.dumps({"dim": 2, "name": "micro"}, indent=2).encode() + b"\n"]


seed("checkpoint-folder", "valid", checkpoint(checkpoint_files()))
seed("checkpoint-folder", "step0-no-config",
     checkpoint(checkpoint_files(step=0)[:3]))
seed("checkpoint-folder", "last-step", checkpoint(checkpoint_files(step=8)))
seed("checkpoint-folder", "past-last-step", checkpoint(checkpoint_files(step=9)))
seed("checkpoint-folder", "other-seed", checkpoint(checkpoint_files(seed=6)))
seed("checkpoint-folder", "not-finite",
     checkpoint(checkpoint_files(fill=np.nan)))
seed("checkpoint-folder", "other-shapes",
     checkpoint(checkpoint_files(shapes=[[2, 3], [2], [6]])))
seed("checkpoint-folder", "no-optimizer",
     checkpoint(checkpoint_files()[:2] + [None] + checkpoint_files()[3:]))

# The folder beside a checkpoint (fuzz/checkpoint-recovery.cpp): how its
# path is spelled, then (name, what) pairs: an index into the target's
# kNames and 0 a file, 1 an empty folder, 2 a folder with a marker, 3 + 4 k
# a link to kNames[k]. Left by a writer killed between its two renames,
# while writing, or long ago beside a later checkpoint.
seed("checkpoint-recovery", "set-aside", bytes([0, 5, 2]))
seed("checkpoint-recovery", "writing", bytes([1, 0, 2, 2, 2]))
seed("checkpoint-recovery", "stale", bytes([2, 0, 2, 1, 1, 6, 2, 14, 0]))
seed("checkpoint-recovery", "look-alikes",
     bytes([3, 4, 2, 8, 2, 10, 1, 11, 2, 13, 2, 15, 0, 17, 2, 18, 3 + 4 * 4]))

# The training data's readers (tools/mxfp4-data-fuzzer): a byte picking the
# reader, then its input.
c4 = (b'{"text": "The first document.\\nWith two lines.", "url": "https://x", '
      b'"timestamp": "2019-04-25T12:57:54Z"}\n{"text": "caf\\u00e9 \\ud83d\\ude00"}\n')
seed("data", "c4.jsonl", b"\0" + c4)
seed("data", "c4.json.gz", b"\1" + gzip.compress(c4))
archive = io.BytesIO()
with tarfile.open(fileobj=archive, mode="w:gz") as tar:
    for name, text in [("package/data/a.txt", b"some text\n"),
                       ("package/" + "long/" * 30 + "b.txt", b"more")]:
        info = tarfile.TarInfo(name)
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
seed("data", "package.tgz", b"\2" + archive.getvalue())
seed("data", "text.gz", b"\3" + gzip.compress(b"hello gzip\n" * 10))
seed("data", "message.eml", b"\4" + (
    b"From: a@b\nContent-Type: multipart/alternative; boundary=XX\n\n--XX\n"
    b"Content-Type: text/plain\nContent-Transfer-Encoding: quoted-printable\n\n"
    b"caf=C3=A9 =\nsoft break\n--XX\nContent-Type: text/html\n"
    b"Content-Transfer-Encoding: base64\n\nPGI+aGk8L2I+IDxwPnRleHQ8L3A+\n--XX--\n"))
seed("data", "cache-intact", b"\6\0\0")
seed("data", "cache-patched", b"\6\0\0" + bytes([0, 8, 2, 0, 40, 0xff, 0, 90, 7]))
seed("data", "cache-cut", b"\6\x80\x30")
seed("data", "words.txt", "\5Hello, world! It's 2024: naïve café 東京 123456 'll\n".encode())

# The compiler's text inputs (tools/mxfp4-ir-fuzzer): a recipe line, then a
# module of the lit tests.
recipes = ["fp4-all-dht16", "bf16", "fp4-all,wgrad.hadamard=deterministic",
           "wgrad.precision=fp4;fprop.rounding=stochastic"]
modules = sorted(glob.glob(os.path.join(root, "test/**/*.mlir"), recursive=True))
modules = [p for p in modules if os.path.getsize(p) <= 3000][:48]
for i, path in enumerate(modules):
    seed("ir", f"seed{i}.txt",
         recipes[i % len(recipes)] + "\n" + open(path).read())
