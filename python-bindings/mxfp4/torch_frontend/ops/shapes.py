"""Shape ops: identities, transposes and permutations, reshapes, broadcasts,
slices and concatenation. A 2-D transpose stays lazy so that `mm` folds it
into the matmul's indexing maps."""

import math

from ..emitter import Val, lazy_transpose
from .table import handles


@handles("detach", "alias", "lift_fresh_copy", "clone", "contiguous")
def identity(call):
    if not isinstance(call.args[0], Val):
        call.unsupported()
    return call.args[0]


@handles("getitem")
def getitem(call):
    """One result of a multi-result op."""
    return call.args[0][call.args[1]]


def _permuted(call, x, perm):
    """`x` with its dims permuted (result dim i is x's dim perm[i])."""
    rank = len(x.shape)
    src = [None] * rank
    for i, pi in enumerate(perm):
        src[pi] = f"d{i}"
    dims = ", ".join(f"d{i}" for i in range(rank))
    return call.e.generic(call.shape, [x], lambda ar: ([], ar[0]),
                          in_maps=[f"({dims}) -> ({', '.join(src)})"])


@handles("t")
def t(call):
    x = call.args[0]
    if len(x.shape) < 2:
        return x
    return lazy_transpose(x)


@handles("transpose")
def transpose(call):
    x = call.args[0]
    rank = len(x.shape)
    if rank < 2:
        return x
    if rank != 2:
        perm = list(range(rank))
        i, j = call.args[1] % rank, call.args[2] % rank
        perm[i], perm[j] = perm[j], perm[i]
        return _permuted(call, x, perm)
    if call.args[1] % 2 == call.args[2] % 2:
        return x
    return lazy_transpose(x)


@handles("permute")
def permute(call):
    x = call.args[0]
    rank = len(x.shape)
    if rank < 2:
        return x
    if rank != 2:
        return _permuted(call, x, [d % rank for d in call.args[1]])
    if [d % 2 for d in call.args[1]] == [0, 1]:
        return x
    return lazy_transpose(x)


@handles("view", "_unsafe_view", "reshape", "_reshape_alias", "squeeze",
         "unsqueeze")
def reshape(call):
    return call.e.reshape(call.args[0], call.shape)


@handles("expand")
def expand(call):
    return call.e.generic(call.shape, [call.args[0]], lambda a: ([], a[0]))


@handles("slice")
def slice_(call):
    args, e = call.args, call.e
    x = args[0]
    rank = len(x.shape)
    dim = (args[1] if len(args) > 1 else 0) % rank
    start = args[2] if len(args) > 2 else None
    end = args[3] if len(args) > 3 else None
    step = args[4] if len(args) > 4 else 1
    n = x.shape[dim]
    start, end, step = slice(start, end, step).indices(n)
    size = call.shape[dim]
    if size == 0:
        call.error("an empty slice")
    if (start, size, step) == (0, n, 1):
        return x
    return e.extract_slice(x, dim, start, size, step)


@handles("slice_backward")
def slice_backward(call):
    """The slice's gradient written into zeros of the input's shape."""
    e = call.e
    grad, sizes, dim, start, end, step = call.args[:6]
    dim %= len(sizes)
    start, end, step = slice(start, end, step).indices(sizes[dim])
    if tuple(grad.shape) == tuple(sizes):
        return grad
    return e.insert_slice(grad, e.filled(tuple(sizes), 0.0), dim, start,
                          step)


@handles("select")
def select(call):
    """x[..., i, ...]: a slice of size 1, then the dim dropped."""
    e = call.e
    if not isinstance(call.args[0], Val):
        call.unsupported()
    x, dim, index = call.args[:3]
    dim %= len(x.shape)
    index %= x.shape[dim]
    sl = e.extract_slice(x, dim, index, 1)
    return e.reshape(sl, call.shape)


@handles("select_backward")
def select_backward(call):
    e = call.e
    grad, sizes, dim, index = call.args[:4]
    dim %= len(sizes)
    index %= sizes[dim]
    shape = tuple(1 if i == dim else n for i, n in enumerate(sizes))
    return e.insert_slice(e.reshape(grad, shape),
                          e.filled(tuple(sizes), 0.0), dim, index)


@handles("cat")
def cat(call):
    """Each nonempty tensor written into zeros of the result's shape."""
    e = call.e
    tensors = [x for x in call.args[0] if math.prod(x.shape) > 0]
    dim = call.args[1] if len(call.args) > 1 else call.kwargs.get("dim", 0)
    dim %= len(call.shape)
    if len(tensors) == 1:
        return tensors[0]
    cur, offset = e.filled(call.shape, 0.0), 0
    for x in tensors:
        cur = e.insert_slice(x, cur, dim, offset)
        offset += x.shape[dim]
    return cur
