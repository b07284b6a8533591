"""Reverse-mode rules for diffsci.numpy: shapes, indexing and products.

Same conventions as ``_vjps.py``.  Primitives over a sequence of arrays
(``concatenate``, ``stack``, ``einsum``) register a rule *factory*: the rule
for argument ``i`` is made the first time a call has that many arrays.
"""

from __future__ import annotations

import string

import numpy as np

from .._core import defvjp, getval, is_tracer
from . import _wrap as W
from ._util import cj, unbroadcast


def _reshape_back(g, ans, x, *args, **kwargs):
    return np.reshape(g, np.shape(x))


# ---------------------------------------------------------------- shapes
def _reshape_vjp(g, ans, x, shape=None, order="C", **kw):
    return np.reshape(g, np.shape(x), order=order if order in ("C", "F") else "C")


def _ravel_vjp(g, ans, x, order="C"):
    return np.reshape(g, np.shape(x), order=order if order in ("C", "F") else "C")


def _transpose_vjp(g, ans, x, axes=None):
    if axes is None:
        return np.transpose(g)
    nd = np.ndim(x)
    return np.transpose(g, tuple(np.argsort([a % nd for a in axes])))


def _roll_vjp(g, ans, x, shift, axis=None):
    back = -shift if np.ndim(shift) == 0 else tuple(-s for s in shift)
    return np.roll(g, back, axis)


def _tile_vjp(g, ans, x, reps):
    xs = np.shape(x)
    reps = tuple(reps) if np.ndim(reps) else (reps,)
    d = max(len(xs), len(reps))
    xs_, reps_ = (1,) * (d - len(xs)) + xs, (1,) * (d - len(reps)) + reps
    g = np.reshape(g, [n for r, s in zip(reps_, xs_) for n in (r, s)])  # (r0, s0, r1, s1 ...)
    return np.reshape(np.sum(g, axis=tuple(range(0, 2 * d, 2))), xs)


def _astype_vjp(g, ans, x, dtype=None, copy=True):
    dt = np.result_type(getval(x))
    if dt.kind != "c" and np.iscomplexobj(g):
        g = np.real(g)
    return g if np.result_type(getval(g)) == dt else W.astype(g, dt)


def _pad_vjp(g, ans, x, pad_width=None, mode="constant", **kwargs):
    # The padding is constant: the cotangent of x is the interior of g.
    shape = np.shape(x)
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (len(shape), 2))
    return g[tuple(slice(b, b + n) for (b, _), n in zip(pw, shape))]


defvjp(W.reshape, _reshape_vjp)
defvjp(W.ravel, _ravel_vjp)
defvjp(W.transpose, _transpose_vjp)
defvjp(W.moveaxis, lambda g, ans, x, source, destination: np.moveaxis(g, destination, source))
defvjp(W.swapaxes, lambda g, ans, x, axis1, axis2: np.swapaxes(g, axis1, axis2))
defvjp(W.expand_dims, _reshape_back)
defvjp(W.squeeze, _reshape_back)
defvjp(W._atleast_1d_p, _reshape_back)
defvjp(W._atleast_2d_p, _reshape_back)
defvjp(W._atleast_3d_p, _reshape_back)
defvjp(W.broadcast_to, lambda g, ans, x, shape, subok=False: unbroadcast(g, x))
defvjp(W.flip, lambda g, ans, x, axis=None: np.flip(g, axis))
defvjp(W.roll, _roll_vjp)
defvjp(W.tile, _tile_vjp)
defvjp(W.triu, lambda g, ans, x, k=0: unbroadcast(np.triu(g, k), x))
defvjp(W.tril, lambda g, ans, x, k=0: unbroadcast(np.tril(g, k), x))
defvjp(W.copy, lambda g, ans, x, *args, **kwargs: g)
defvjp(W._astype_p, _astype_vjp)
defvjp(W._pad_p, _pad_vjp)

# The offsets of the concatenate record being swept: its rules run once per array, so the
# offsets are computed once (O(n), not O(n²)) and released after the last array.
_last = [None, None]  # (ans, offsets)


def _offsets(ans, arrays, axis, i):
    if _last[0] is not ans:
        sizes = [np.size(a) if axis is None else np.shape(a)[axis] for a in arrays]
        _last[:] = ans, np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
    off = _last[1]
    if i == len(arrays) - 1:
        _last[:] = None, None
    return off[i], off[i + 1]


def _concatenate_rule(i):
    def rule(g, ans, *arrays, axis=0, **kwargs):
        if axis is None:
            start, stop = _offsets(ans, arrays, None, i)
            return np.reshape(g[start:stop], np.shape(arrays[i]))
        ax = axis % np.ndim(ans)
        start, stop = _offsets(ans, arrays, ax, i)
        return g[(slice(None),) * ax + (slice(start, stop),)]
    return rule


def _stack_rule(i):
    def rule(g, ans, *arrays, axis=0, **kwargs):
        return g[(slice(None),) * (axis % np.ndim(ans)) + (i,)]
    return rule


W._VARIADIC_RULES[W._concatenate_p] = _concatenate_rule
W._VARIADIC_RULES[W._stack_p] = _stack_rule


# ---------------------------------------------------------------- indexing
def _is_basic_index(idx):
    items = idx if type(idx) is tuple else (idx,)
    for it in items:
        if not (it is None or it is Ellipsis or type(it) in (int, slice)
                or isinstance(it, np.integer)):
            return False
    return True


def _getitem_vjp(g, ans, x, idx):
    # Advanced indices may repeat an element: its cotangents accumulate (np.add.at).
    if type(g) is np.ndarray and type(x) is np.ndarray:  # the plain fast path
        out = np.zeros(x.shape, g.dtype if g.dtype == x.dtype else np.result_type(g, x))
    else:
        out = np.zeros(np.shape(x), np.result_type(getval(g), getval(x)))
    # traced (g, or under jit the index: a recorded permutation): stay differentiable
    if type(g) is not np.ndarray and not isinstance(g, np.generic) or is_tracer(idx):
        return W.scatter_add(out, g, idx)  # idx positional: it may be traced
    if _is_basic_index(idx):
        out[idx] = g
    else:
        np.add.at(out, idx, g)
    return out


defvjp(W.getitem, _getitem_vjp)
defvjp(W.scatter_add,
       lambda g, ans, base, v, idx: g,
       lambda g, ans, base, v, idx: unbroadcast(W.getitem(g, idx), v))


# ---------------------------------------------------------------- products
def _plain2d(*arrays):
    """All plain 2-D ndarrays (the common dense layer): the rules' fast path."""
    return all(type(a) is np.ndarray and a.ndim == 2 for a in arrays)


def _matmul_x(g, ans, x, y, **kw):
    if _plain2d(g, x, y):
        return g @ (y.T if y.dtype.kind != "c" else y.T.conj())
    if np.ndim(y) == 1:
        if np.ndim(x) == 1:
            return g * cj(y)
        return unbroadcast(np.expand_dims(g, -1) * cj(y), x)
    if np.ndim(x) == 1:
        gy = np.matmul(np.expand_dims(g, -2), np.swapaxes(cj(y), -1, -2))
        return unbroadcast(gy[..., 0, :], x)
    return unbroadcast(np.matmul(g, np.swapaxes(cj(y), -1, -2)), x)


def _matmul_y(g, ans, x, y, **kw):
    if _plain2d(g, x, y):
        return (x.T if x.dtype.kind != "c" else x.T.conj()) @ g
    if np.ndim(x) == 1:
        if np.ndim(y) == 1:
            return g * cj(x)
        return unbroadcast(np.expand_dims(cj(x), -1) * np.expand_dims(g, -2), y)
    if np.ndim(y) == 1:
        return unbroadcast(np.matmul(np.swapaxes(cj(x), -1, -2), np.expand_dims(g, -1))[..., 0], y)
    return unbroadcast(np.matmul(np.swapaxes(cj(x), -1, -2), g), y)


def _dot_contracted(b):
    """The axis of ``b`` that numpy.dot contracts (its second-to-last, or only, axis)."""
    return max(np.ndim(b) - 2, 0)


def _dot_a(g, ans, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * cj(b), a)
    cb = _dot_contracted(b)
    free_b = [j for j in range(np.ndim(b)) if j != cb]
    return np.tensordot(g, cj(b), axes=(list(range(np.ndim(a) - 1, np.ndim(g))), free_b))


def _dot_b(g, ans, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * cj(a), b)
    lead = list(range(np.ndim(a) - 1))
    return np.moveaxis(np.tensordot(cj(a), g, axes=(lead, lead)), 0, _dot_contracted(b))


def _tensordot_axes(a, b, axes):
    na, nb = np.ndim(a), np.ndim(b)
    if np.ndim(axes) == 0:
        n = int(axes)
        return list(range(na - n, na)), list(range(n))
    ca, cb = axes
    ca = [ca] if np.ndim(ca) == 0 else list(ca)
    cb = [cb] if np.ndim(cb) == 0 else list(cb)
    return [int(i) % na for i in ca], [int(j) % nb for j in cb]


def _tensordot_a(g, ans, a, b, axes=2):
    ca, cb = _tensordot_axes(a, b, axes)
    fa = [i for i in range(np.ndim(a)) if i not in ca]
    fb = [j for j in range(np.ndim(b)) if j not in cb]
    r = np.tensordot(g, cj(b), axes=(list(range(len(fa), len(fa) + len(fb))), fb))
    labels = fa + [ca[cb.index(j)] for j in sorted(cb)]  # which axis of a each axis of r is
    return np.transpose(r, tuple(np.argsort(labels)))


def _tensordot_b(g, ans, a, b, axes=2):
    ca, cb = _tensordot_axes(a, b, axes)
    fa = [i for i in range(np.ndim(a)) if i not in ca]
    fb = [j for j in range(np.ndim(b)) if j not in cb]
    r = np.tensordot(cj(a), g, axes=(fa, list(range(len(fa)))))
    labels = [cb[ca.index(i)] for i in sorted(ca)] + fb
    return np.transpose(r, tuple(np.argsort(labels)))


defvjp(W.matmul, _matmul_x, _matmul_y)
defvjp(W.dot, _dot_a, _dot_b)
defvjp(W.tensordot, _tensordot_a, _tensordot_b)


def _einsum_rule(i):
    """Operand i's rule: contract g with the other operands, swapping the output's
    subscripts with operand i's (``"ij,jk->ik"``: ā = einsum("ik,jk->ij", g, conj(b))).

    Labels of operand i found nowhere else come back through a ones vector,
    repeated labels (diagonals) through identity matrices, and size-1
    dimensions that were broadcast are summed back.
    """
    def rule(g, ans, *ops, subscripts, **kwargs):
        ins, out = subscripts.split("->")
        terms = ins.split(",")
        term = terms[i]
        dtype = np.result_type(getval(g))
        full = {}
        for t, op in zip(terms, ops):
            for c, n in zip(t, np.shape(op)):
                full[c] = max(full.get(c, 1), n)
        own = dict(zip(term, np.shape(ops[i])))
        uniq = "".join(dict.fromkeys(term))
        others = [j for j in range(len(ops)) if j != i]
        seen = set(out).union(*(terms[j] for j in others))
        alone = [c for c in uniq if c not in seen]
        spec = ",".join([out] + [terms[j] for j in others] + alone) + "->" + uniq
        r = np.einsum(spec, g, *[cj(ops[j]) for j in others],
                      *[np.ones(own[c], dtype) for c in alone], **kwargs)
        summed = tuple(k for k, c in enumerate(uniq) if own[c] == 1 and full[c] != 1)
        if summed:
            r = np.sum(r, axis=summed, keepdims=True)
        if len(uniq) < len(term):
            r = _einsum_diagonal(r, uniq, term, own, dtype)
        return r
    return rule


def _einsum_diagonal(r, uniq, term, own, dtype):
    """Place ``r`` (labels ``uniq``) on the diagonal of a tensor with labels ``term``."""
    fresh = iter(c for c in string.ascii_letters if c not in term)
    seen, target, deltas = set(), [], []
    for c in term:
        if c in seen:
            f = next(fresh)
            target.append(f)
            deltas.append(c + f)
        else:
            seen.add(c)
            target.append(c)
    spec = ",".join([uniq] + deltas) + "->" + "".join(target)
    return np.einsum(spec, r, *[np.eye(own[d[0]], dtype=dtype) for d in deltas])


W._VARIADIC_RULES[W._einsum_p] = _einsum_rule
