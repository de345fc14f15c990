"""The token embedding and its gradient. Token ids are carried as f32 and
turned back into integers with arith.fptosi; ids out of range are not
checked."""

import math

from ..emitter import ttype
from .table import handles


@handles("embedding")
def embedding(call):
    """Rows of the weight table, read with tensor.extract."""
    e = call.e
    weight, ids = e.value(call.args[0]), e.value(call.args[1])
    if len(weight.shape) != 2:
        call.error("a weight that is not 2-D")
    rank = len(call.shape)
    dims = ", ".join(f"d{i}" for i in range(rank))
    idx = ", ".join(f"d{i}" for i in range(rank - 1))
    return e.generic(call.shape, [ids], lambda ar: ([
        f"%ti = arith.fptosi {ar[0]} : f32 to i64",
        "%row = arith.index_cast %ti : i64 to index",
        f"%col = linalg.index {rank - 1} : index",
        f"%r = tensor.extract {weight.name}[%row, %col] : "
        f"{ttype(weight.shape)}"], "%r"),
        in_maps=[f"({dims}) -> ({idx})"])


@handles("embedding_dense_backward")
def embedding_dense_backward(call):
    """dW[v, d] = sum over tokens t with id v (other than padding_idx) of
    dY[t, d]: a reduction over the tokens, not a GEMM."""
    e = call.e
    grad, ids, num_weights, padding_idx, by_freq = call.args[:5]
    if by_freq:
        call.error("scale_grad_by_freq")
    n = math.prod(ids.shape)
    dim = grad.shape[-1]
    g = e.reshape(grad, (n, dim))
    i = e.reshape(ids, (n,))
    pad = [] if padding_idx is None or padding_idx < 0 else [
        f"%kp = arith.constant {int(padding_idx)} : i64",
        "%np = arith.cmpi ne, %ti, %kp : i64",
        "%c = arith.andi %eq, %np : i1"]
    cond = "%c" if pad else "%eq"
    return e.generic((num_weights, dim, n), [g, i], lambda ar: ([
        "%vv = linalg.index 0 : index",
        "%v = arith.index_cast %vv : index to i64",
        f"%ti = arith.fptosi {ar[1]} : f32 to i64",
        "%eq = arith.cmpi eq, %ti, %v : i64"] + pad + [
        "%z = arith.constant 0.0 : f32",
        f"%s = arith.select {cond}, {ar[0]}, %z : f32",
        f"%r = arith.addf {ar[2]}, %s : f32"], "%r"),
        in_maps=["(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d2)"],
        reduce_dims={2}, init=0.0)
