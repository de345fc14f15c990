"""Reads and writes `.safetensors` files with NumPy alone.

The `safetensors` package is not installed here; the tests and the PyTorch
reference use this instead to read the checkpoints `mxfp4-run train` writes and
to write the ones it reads. The format: an 8-byte little-endian header length
N, N bytes of JSON

    {"__metadata__": {"format": "pt"},
     "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, ...}

padded with spaces to a multiple of 8, then the tensors' bytes back to back
(offsets count from the end of the header).

    load(path) -> dict[str, np.ndarray]          in the order of the header
    load_with_metadata(path) -> (dict, dict[str, str])
    save(path, tensors, metadata=None)           in the order of `tensors`

BF16 tensors load as float32 (exactly: a bf16 is the top half of an f32),
since NumPy has no bfloat16. Torch tensors may be passed to `save`.
"""

import collections
import json
import os
import struct
import tempfile

import numpy as np

# The safetensors dtype names and their little-endian NumPy types.
_DTYPES = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U64": np.dtype("<u8"),
    "U32": np.dtype("<u4"),
    "U16": np.dtype("<u2"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}
_NAMES = {dtype: name for name, dtype in _DTYPES.items()}

# The reference implementation refuses larger headers; so do we, so that a
# garbage length fails at once.
_MAX_HEADER = 100_000_000


class SafetensorsError(ValueError):
    """A file that is not valid safetensors, or tensors that cannot be saved."""


def _fail(path, message):
    raise SafetensorsError(f"'{path}': {message}")


def _is_size(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _parse(buf, path):
    """Returns (ordered dict of arrays, metadata) from the bytes `buf`."""
    if len(buf) < 8:
        _fail(path, f"not a .safetensors file: {len(buf)} bytes is too short "
              "for the 8-byte header length")
    (n,) = struct.unpack("<Q", bytes(buf[:8]))
    if n > len(buf) - 8:
        _fail(path, f"truncated or not a .safetensors file: the header length "
              f"{n} exceeds the {len(buf) - 8} bytes after it")
    if n > _MAX_HEADER:
        _fail(path, f"header length {n} is over the limit of {_MAX_HEADER}")

    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        seen = set()
        for k in keys:
            if k in seen:
                _fail(path, f"duplicate key '{k}' in the header")
            seen.add(k)
        return collections.OrderedDict(pairs)

    try:
        header = json.loads(bytes(buf[8:8 + n]).decode("utf-8"),
                            object_pairs_hook=no_duplicates)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        _fail(path, f"the header is not valid JSON: {e}")
    if not isinstance(header, dict):
        _fail(path, "the header is not a JSON object")
    data = memoryview(buf)[8 + n:]

    metadata = {}
    entries = []
    for name, info in header.items():
        if name == "__metadata__":
            if not isinstance(info, dict) or not all(
                    isinstance(v, str) for v in info.values()):
                _fail(path, "'__metadata__' is not an object of strings")
            metadata = dict(info)
            continue
        where = f"tensor '{name}'"
        if not isinstance(info, dict):
            _fail(path, f"{where}: the header entry is not an object")
        dtype_name = info.get("dtype")
        shape = info.get("shape")
        offsets = info.get("data_offsets")
        if dtype_name != "BF16" and dtype_name not in _DTYPES:
            _fail(path, f"{where}: unsupported dtype {dtype_name!r}")
        if not isinstance(shape, list) or not all(_is_size(d) for d in shape):
            _fail(path, f"{where}: 'shape' is not a list of sizes")
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(_is_size(o) for o in offsets)
                or offsets[0] > offsets[1]):
            _fail(path, f"{where}: 'data_offsets' is not [begin, end]")
        begin, end = offsets
        if end > len(data):
            _fail(path, f"{where}: 'data_offsets' [{begin}, {end}] run past "
                  f"the {len(data)} data bytes of the file (truncated file?)")
        itemsize = 2 if dtype_name == "BF16" else _DTYPES[dtype_name].itemsize
        if int(np.prod(shape, dtype=object)) * itemsize != end - begin:
            _fail(path, f"{where}: shape {tuple(shape)} of {dtype_name} does "
                  f"not match 'data_offsets' [{begin}, {end}]")
        entries.append((name, dtype_name, shape, begin, end))

    # The tensors must tile the data exactly: no overlap, no gap, no tail.
    expected = 0
    previous = None
    for name, _, _, begin, end in sorted(entries, key=lambda e: (e[3], e[4])):
        if begin < expected:
            _fail(path, f"tensor '{name}' overlaps tensor '{previous}'")
        if begin > expected:
            _fail(path, f"the data has a gap of {begin - expected} bytes "
                  f"before tensor '{name}'")
        expected, previous = end, name
    if expected != len(data):
        _fail(path, f"the tensors cover {expected} of the {len(data)} data "
              "bytes")

    tensors = collections.OrderedDict()
    for name, dtype_name, shape, begin, end in entries:
        raw = data[begin:end]
        if dtype_name == "BF16":
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            array = bits.view(np.float32)
        else:
            array = np.frombuffer(raw, dtype=_DTYPES[dtype_name]).copy()
        tensors[name] = array.astype(array.dtype.newbyteorder("="),
                                     copy=False).reshape(shape)
    return tensors, metadata


def load_with_metadata(path):
    """Returns (tensors, metadata) of the file at `path`: an ordered dict of
    writable NumPy arrays in the order of the header, and the
    "__metadata__" strings."""
    with open(path, "rb") as f:
        buf = f.read()
    return _parse(buf, path)


def load(path):
    """Returns the tensors of the file at `path`, in the order of the header."""
    return load_with_metadata(path)[0]


def _as_numpy(value, name):
    if hasattr(value, "detach"):  # a torch.Tensor
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            raise SafetensorsError(
                f"tensor '{name}': bfloat16 cannot be saved here; convert it "
                "to float32 first")
        value = value.numpy()
    # (np.ascontiguousarray would turn a 0-d array into a 1-d one.)
    array = np.asarray(value, order="C")
    dtype = array.dtype.newbyteorder("<") if array.dtype.itemsize > 1 \
        else array.dtype
    if dtype not in _NAMES:
        raise SafetensorsError(
            f"tensor '{name}': unsupported dtype {array.dtype} (supported: "
            + ", ".join(str(d) for d in _NAMES) + ")")
    return array.astype(dtype, copy=False), _NAMES[dtype]


def save(path, tensors, metadata=None):
    """Writes `tensors` (a mapping of names to arrays or torch tensors) to
    `path` in their iteration order, with `metadata` (str -> str) as
    "__metadata__". The file is replaced atomically: a failure leaves the
    previous one intact."""
    header = collections.OrderedDict()
    if metadata:
        if not all(isinstance(k, str) and isinstance(v, str)
                   for k, v in metadata.items()):
            raise SafetensorsError("metadata keys and values must be strings")
        header["__metadata__"] = dict(metadata)
    arrays = []
    offset = 0
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise SafetensorsError(f"tensor name {name!r} is not a string")
        if name == "__metadata__":
            raise SafetensorsError("a tensor cannot be named '__metadata__'")
        array, dtype_name = _as_numpy(value, name)
        header[name] = {"dtype": dtype_name,
                        "shape": [int(d) for d in array.shape],
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
        arrays.append(array)
    text = json.dumps(header, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)

    folder = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp-",
                                dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(text)))
            f.write(text)
            for array in arrays:
                f.write(array.tobytes())
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
