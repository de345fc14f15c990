"""Indexing along a dimension: `cumsum` (position ids from a mask),
`index_select`, `gather` and the ops their gradients trace to, `index_add`
and `scatter_add` (reductions over the selected positions, so the sums are
deterministic). Indices are carried as f32 and turned back into integers
with arith.fptosi; indices out of range are not checked."""

from ..emitter import fconst, ttype
from .table import handles


def _dim(call, dim, rank):
    if not isinstance(dim, int) or not -rank <= dim < max(rank, 1):
        call.error(f"dimension {dim} of a rank-{rank} tensor")
    return dim % rank


def _maps(rank, dim, extra):
    """The affine map of an operand indexed by the loop dims but with the
    loop dim `extra` at position `dim`."""
    loops = ", ".join(f"d{i}" for i in range(rank + 1))
    at = [f"d{i}" for i in range(rank)]
    at[dim] = f"d{extra}"
    return f"({loops}) -> ({', '.join(at)})"


def _extract(source, coords):
    """tensor.extract of `source` (a Val) at SSA index names `coords`."""
    return (f"%r = tensor.extract {source.name}[{', '.join(coords)}] : "
            f"{ttype(source.shape)}")


def _coords(rank, dim, selected):
    """linalg.index lines and the coordinates of an element whose position
    along `dim` is the index `selected` (an f32 SSA name)."""
    lines = [f"%ti = arith.fptosi {selected} : f32 to i64",
             "%sel = arith.index_cast %ti : i64 to index"]
    coords = []
    for i in range(rank):
        if i == dim:
            coords.append("%sel")
        else:
            lines.append(f"%i{i} = linalg.index {i} : index")
            coords.append(f"%i{i}")
    return lines, coords


@handles("cumsum")
def cumsum(call):
    """out[.., i, ..] = sum over k <= i of x[.., k, ..], in k order."""
    e = call.e
    x = e.value(call.args[0])
    rank = len(x.shape)
    if not rank:
        return x
    dim = _dim(call, call.args[1], rank)
    n = x.shape[dim]
    return e.generic(x.shape + (n,), [x], lambda ar: ([
        f"%k = linalg.index {rank} : index",
        f"%i = linalg.index {dim} : index",
        "%in = arith.cmpi ule, %k, %i : index",
        "%z = arith.constant 0.0 : f32",
        f"%s = arith.select %in, {ar[0]}, %z : f32",
        f"%r = arith.addf {ar[1]}, %s : f32"], "%r"),
        in_maps=[_maps(rank, dim, rank)], reduce_dims={rank}, init=0.0)


@handles("index_select")
def index_select(call):
    """out[.., i, ..] = x[.., index[i], ..]."""
    e = call.e
    x, index = e.value(call.args[0]), e.value(call.args[2])
    rank = len(x.shape)
    dim = _dim(call, call.args[1], rank)
    if len(index.shape) != 1:
        call.error("an index that is not 1-D")
    loops = ", ".join(f"d{i}" for i in range(rank))

    def body(ar):
        lines, coords = _coords(rank, dim, ar[0])
        return lines + [_extract(x, coords)], "%r"
    return e.generic(call.shape, [index], body,
                     in_maps=[f"({loops}) -> (d{dim})"])


@handles("gather")
def gather(call):
    """out[p] = x[p with its position along dim replaced by index[p]]."""
    e = call.e
    x, index = e.value(call.args[0]), e.value(call.args[2])
    rank = len(x.shape)
    dim = _dim(call, call.args[1], rank)
    if len(index.shape) != rank or any(
            index.shape[d] > x.shape[d] for d in range(rank) if d != dim):
        call.error("an index of another rank, or larger than the input "
                   "outside the gathered dimension")
    if call.kwargs.get("sparse_grad") or (len(call.args) > 3 and
                                          call.args[3]):
        call.error("sparse_grad")

    def body(ar):
        lines, coords = _coords(rank, dim, ar[0])
        return lines + [_extract(x, coords)], "%r"
    return e.generic(index.shape, [index], body)


def _add_selected(call, self, dim, index, source, index_map, alpha):
    """self + alpha * sum over positions p of `source` along an extra loop
    dim whose index (read through `index_map`) is the output's position
    along `dim`."""
    e = call.e
    rank = len(self.shape)
    extent = source.shape[dim]
    red = e.generic(self.shape + (extent,), [index, source], lambda ar: ([
        f"%j = linalg.index {dim} : index",
        f"%ti = arith.fptosi {ar[0]} : f32 to i64",
        "%tj = arith.index_cast %j : index to i64",
        "%eq = arith.cmpi eq, %ti, %tj : i64",
        "%z = arith.constant 0.0 : f32",
        f"%s = arith.select %eq, {ar[1]}, %z : f32",
        f"%r = arith.addf {ar[2]}, %s : f32"], "%r"),
        in_maps=[index_map, _maps(rank, dim, rank)],
        reduce_dims={rank}, init=0.0)
    lines = [f"%a = arith.constant {fconst(alpha)} : f32"]
    return e.generic(self.shape, [self, red], lambda ar: (lines + [
        f"%m = arith.mulf {ar[1]}, %a : f32",
        f"%r = arith.addf {ar[0]}, %m : f32"], "%r"))


@handles("index_add", "index_add_")
def index_add(call):
    """self[.., index[i], ..] += alpha * source[.., i, ..] (index_select's
    gradient)."""
    e = call.e
    self, index, source = (e.value(call.args[0]), e.value(call.args[2]),
                           e.value(call.args[3]))
    rank = len(self.shape)
    dim = _dim(call, call.args[1], rank)
    if len(index.shape) != 1 or len(source.shape) != rank or any(
            source.shape[d] != self.shape[d] for d in range(rank) if d != dim):
        call.error("an index that is not 1-D or a source of another shape "
                   "outside the indexed dimension")
    alpha = call.args[4] if len(call.args) > 4 else call.kwargs.get("alpha", 1)
    loops = ", ".join(f"d{i}" for i in range(rank + 1))
    result = _add_selected(call, self, dim, index, source,
                           f"({loops}) -> (d{rank})", alpha)
    if call.op.endswith("_"):
        call.rebind(0, result)
    return result


@handles("scatter_add", "scatter_add_")
def scatter_add(call):
    """self[p with index[p] along dim] += src[p] (gather's gradient)."""
    e = call.e
    self, index, src = (e.value(call.args[0]), e.value(call.args[2]),
                        e.value(call.args[3]))
    rank = len(self.shape)
    dim = _dim(call, call.args[1], rank)
    if index.shape != src.shape or len(index.shape) != rank or any(
            index.shape[d] != self.shape[d] for d in range(rank) if d != dim):
        call.error("an index or source of another shape than the output "
                   "outside the scattered dimension")
    result = _add_selected(call, self, dim, index, src,
                           _maps(rank, dim, rank), 1)
    if call.op.endswith("_"):
        call.rebind(0, result)
    return result
