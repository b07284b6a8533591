"""``diffsci.numpy.linalg``: numpy.linalg, differentiable (rules in ``_vjps_linalg.py``).

Functions with several outputs (``eigh``, ``svd``, ``slogdet``) are one
primitive whose output packs the results into one array; the public function
unpacks them with ``getitem``, so each result is traced separately and no
multi-output primitive is needed.  On plain arrays every function is NumPy's.

Conventions: ``norm`` of a zero vector has gradient 0; ``eigh`` and
``cholesky`` read one triangle (as NumPy does), so their gradients live in
that triangle; eigenvector gradients are undefined for repeated eigenvalues,
singular-vector gradients for repeated singular values (they come out inf/NaN).
"""

from __future__ import annotations

import numpy as np
from numpy.linalg import LinAlgError  # noqa: F401  re-exported

from .._core import getval, is_tracer, primitive
from . import _wrap as W
from ._composite import _numpy_on_plain, cross, matrix_transpose, outer, vecdot  # noqa: F401
from ._composite import diagonal as _diagonal

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
    "matrix_norm", "matrix_power", "matrix_transpose", "multi_dot", "norm", "outer", "qr",
    "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]

# NumPy's own result types (namedtuples), so traced and plain results have one structure.
EighResult = type(np.linalg.eigh(np.eye(1)))
SVDResult = type(np.linalg.svd(np.eye(1)))
SlogdetResult = type(np.linalg.slogdet(np.eye(1)))
QRResult = type(np.linalg.qr(np.eye(1)))

matmul = W.matmul
tensordot = W.tensordot

# ---------------------------------------------------------------- primitives
det = primitive(np.linalg.det)
inv = primitive(np.linalg.inv)
solve = primitive(np.linalg.solve)
cholesky = primitive(np.linalg.cholesky)
_norm_p = primitive(np.linalg.norm, name="norm")  # vector norms and Frobenius


def _logdet(a):
    """log|det a| for real a; the (holomorphic) complex log det for complex a."""
    sign, logabs = np.linalg.slogdet(a)
    return np.log(sign) + logabs if np.iscomplexobj(a) else logabs


def _eigh_packed(a, UPLO="L"):
    """eigh as one array [..., n+1, n]: row 0 the eigenvalues, rows 1.. the eigenvectors."""
    w, v = np.linalg.eigh(a, UPLO)
    return np.concatenate([w[..., None, :].astype(v.dtype), v], axis=-2)


def _svd_packed(a, full_matrices=True, hermitian=False):
    """svd as one array [..., m*ku + k + kv*n]: U, S and Vh flattened side by side."""
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices, hermitian=hermitian)
    batch = u.shape[:-2]
    return np.concatenate([u.reshape(batch + (-1,)), s.astype(u.dtype),
                           vh.reshape(batch + (-1,))], axis=-1)


def _qr_packed(a):
    """Reduced qr as one array [..., m*k + k*n]: Q and R flattened side by side."""
    q, r = np.linalg.qr(a)
    batch = q.shape[:-2]
    return np.concatenate([q.reshape(batch + (-1,)), r.reshape(batch + (-1,))], axis=-1)


def _svdvals(a):
    return np.linalg.svd(a, compute_uv=False)


_logdet_p = primitive(_logdet, name="slogdet")
_eigh_p = primitive(_eigh_packed, name="eigh")
_svd_p = primitive(_svd_packed, name="svd")
_svdvals_p = primitive(_svdvals, name="svdvals")
_qr_p = primitive(_qr_packed, name="qr")


# ---------------------------------------------------------------- unpacking wrappers
_traced = is_tracer


def slogdet(a):
    """``numpy.linalg.slogdet``: ``(sign, logabsdet)``, both differentiable for complex ``a``
    (the sign of a real matrix is piecewise constant and comes back plain)."""
    if not _traced(a):
        return np.linalg.slogdet(a)
    plain_sign = np.linalg.slogdet(getval(a))[0]
    ld = _logdet_p(a)
    if not np.iscomplexobj(getval(a)):
        return SlogdetResult(plain_sign, ld)
    sign = W.where(plain_sign == 0, 0, W.exp(1j * W.imag(ld)))
    return SlogdetResult(sign, W.real(ld))


def eigh(a, UPLO="L"):
    if not _traced(a):
        return np.linalg.eigh(a, UPLO)
    p = _eigh_p(a, UPLO=UPLO)
    w = W.getitem(p, (Ellipsis, 0, slice(None)))
    if np.iscomplexobj(getval(a)):
        w = W.real(w)
    return EighResult(w, W.getitem(p, (Ellipsis, slice(1, None), slice(None))))


def eigvalsh(a, UPLO="L"):
    if not _traced(a):
        return np.linalg.eigvalsh(a, UPLO)
    return eigh(a, UPLO).eigenvalues


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``numpy.linalg.svd``.  With ``full_matrices=True`` on a non-square matrix the extra
    columns of U (rows of Vh) are not unique: a loss may not depend on them."""
    if not _traced(a):
        return np.linalg.svd(a, full_matrices, compute_uv, hermitian)
    if not compute_uv:
        return _svdvals_p(a)
    m, n = np.shape(getval(a))[-2:]
    k = min(m, n)
    ku, kv = (m, n) if full_matrices else (k, k)
    p = _svd_p(a, full_matrices=full_matrices, hermitian=hermitian)
    batch = np.shape(getval(p))[:-1]
    u = W.reshape(W.getitem(p, (Ellipsis, slice(0, m * ku))), batch + (m, ku))
    s = W.getitem(p, (Ellipsis, slice(m * ku, m * ku + k)))
    if np.iscomplexobj(getval(a)):
        s = W.real(s)
    vh = W.reshape(W.getitem(p, (Ellipsis, slice(m * ku + k, None))), batch + (kv, n))
    return SVDResult(u, s, vh)


def qr(a, mode="reduced"):
    """``numpy.linalg.qr``; differentiable for mode 'reduced' (and 'complete' when it is the
    same, m <= n) and 'r'.  The gauge is LAPACK's: R has a real diagonal."""
    if not _traced(a):
        return np.linalg.qr(a, mode)
    m, n = np.shape(getval(a))[-2:]
    k = min(m, n)
    if mode not in ("reduced", "r") and not (mode == "complete" and m <= n):
        raise NotImplementedError(
            f"diffsci.numpy.linalg.qr: mode={mode!r} is not differentiable (the extra columns "
            f"of a complete Q are not unique); use mode='reduced'")
    p = _qr_p(a)
    batch = np.shape(getval(p))[:-1]
    r = W.reshape(W.getitem(p, (Ellipsis, slice(m * k, None))), batch + (k, n))
    if mode == "r":
        return r
    return QRResult(W.reshape(W.getitem(p, (Ellipsis, slice(0, m * k))), batch + (m, k)), r)


@_numpy_on_plain(np.linalg.svdvals)
def svdvals(x, /):
    return _svdvals_p(x)


# ---------------------------------------------------------------- norms
def _keep(r, axes, keepdims):
    return W.expand_dims(r, tuple(sorted(axes))) if keepdims else r


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's keyword
    """``numpy.linalg.norm``: vector norms (any ord; gradient 0 at the zero vector) and
    matrix norms ('fro', 'nuc', ±1, ±2, ±inf; the spectral ones through the SVD)."""
    if not _traced(x):
        return np.linalg.norm(x, ord, axis, keepdims)
    nd = np.ndim(getval(x))
    if axis is None:
        if ord is None or (ord == "fro" and nd == 2) or (ord == 2 and nd == 1):
            return _norm_p(x, ord=ord, axis=None, keepdims=keepdims)
        if nd not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
        axis = tuple(range(nd))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    if len(axes) == 1 or ord in (None, "fro"):
        return _norm_p(x, ord=ord, axis=axis, keepdims=keepdims)
    if len(axes) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    row, col = (a % nd for a in axes)
    if ord in (2, -2, "nuc"):
        s = _svdvals_p(W.moveaxis(x, (row, col), (-2, -1)))
        r = W.amax(s, -1) if ord == 2 else W.amin(s, -1) if ord == -2 else W.sum(s, -1)
        return _keep(r, (row, col), keepdims)
    if ord in (1, -1, np.inf, -np.inf):
        a = W.absolute(x)
        if ord in (1, -1):
            s = W.sum(a, axis=row)
            pick = W.amax if ord == 1 else W.amin
            r = pick(s, axis=col - 1 if col > row else col)
        else:
            s = W.sum(a, axis=col)
            pick = W.amax if ord == np.inf else W.amin
            r = pick(s, axis=row - 1 if row > col else row)
        return _keep(r, (row, col), keepdims)
    raise ValueError("Invalid norm order for matrices.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    if not _traced(x):
        return np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
    shape = np.shape(getval(x))
    axes = tuple(range(len(shape))) if axis is None else (
        (axis,) if np.ndim(axis) == 0 else tuple(axis))
    axes = tuple(a % len(shape) for a in axes)
    rest = [d for d in range(len(shape)) if d not in axes]
    flat = W.reshape(W.transpose(x, rest + list(axes)), [shape[d] for d in rest] + [-1])
    return _keep(_norm_p(flat, ord=ord, axis=-1), axes, keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    if not _traced(x):
        return np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


# ---------------------------------------------------------------- composites
@_numpy_on_plain(np.linalg.trace)
def trace(x, /, *, offset=0, dtype=None):
    return W.sum(_diagonal(x, offset, -2, -1), -1, dtype)


@_numpy_on_plain(np.linalg.diagonal)
def diagonal(x, /, *, offset=0):
    return _diagonal(x, offset, -2, -1)


@_numpy_on_plain(np.linalg.matrix_power)
def matrix_power(a, n):
    if n < 0:
        a, n = inv(a), -n
    if n == 0:
        return np.broadcast_to(np.eye(np.shape(getval(a))[-1], dtype=np.result_type(getval(a))),
                               np.shape(getval(a))).copy()
    out = a
    for _ in range(n - 1):
        out = W.matmul(out, a)
    return out


@_numpy_on_plain(np.linalg.multi_dot)
def multi_dot(arrays, *, out=None):
    out = arrays[0]
    for a in arrays[1:]:
        out = W.dot(out, a)
    return out



from . import _vjps_linalg  # noqa: E402, F401  registers the rules
