"""Special matrices of ``diffsci.scipy.linalg``: ``toeplitz``, ``hankel``, ``circulant``,
``companion``, ``leslie``, ``fiedler``, ``convolution_matrix`` and ``block_diag``.

Each is linear (``fiedler``: piecewise linear) in its inputs: a gather of their entries at a
fixed integer pattern, written with :mod:`diffsci.numpy` indexing and concatenation, so the
gradients are the scatter-adds of the cotangent (both modes, any order).  On plain values
each is SciPy's own function.  Inputs are raveled where SciPy ravels them (``toeplitz``,
``hankel`` of 1-D ``c``, ``r``).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sl

from .. import numpy as dnp
from .._core import getval, is_tracer

__all__ = ["block_diag", "circulant", "companion", "convolution_matrix", "fiedler", "hankel",
           "leslie", "toeplitz"]


def _traced(*xs):
    return any(is_tracer(x) for x in xs)


def _vec(x, fname, arg):
    x = dnp.asarray(x) if is_tracer(x) else np.asarray(x)
    if np.ndim(getval(x)) != 1:
        raise ValueError(f"diffsci.scipy.linalg.{fname}: {arg} must be 1-D, got shape "
                         f"{np.shape(getval(x))}")
    return x


def toeplitz(c, r=None):
    """``scipy.linalg.toeplitz``: ``A[i, j] = c[i - j]`` for ``i >= j``, ``r[j - i]`` above
    (``r`` defaults to ``conj(c)``; ``r[0]`` is ignored), differentiable in ``c`` and ``r``.

    Example:
        >>> toeplitz([1.0, 2.0, 3.0], [1.0, 4.0]).tolist()
        [[1.0, 4.0], [2.0, 1.0], [3.0, 2.0]]
    """
    if not _traced(c, r):
        return sl.toeplitz(c, r)
    c = _vec(c, "toeplitz", "c")
    r = dnp.conj(c) if r is None else _vec(r, "toeplitz", "r")
    m, n = np.shape(getval(c))[0], np.shape(getval(r))[0]
    vals = dnp.concatenate([c[::-1], r[1:]])
    idx = (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]
    return vals[idx]


def hankel(c, r=None):
    """``scipy.linalg.hankel``: ``A[i, j] = c[i + j]`` while ``i + j < len(c)``, then
    ``r[i + j - len(c) + 1]`` (``r`` defaults to zeros; ``r[0]`` is ignored).

    Example:
        >>> hankel([1.0, 2.0, 3.0], [9.0, 4.0]).tolist()
        [[1.0, 2.0], [2.0, 3.0], [3.0, 4.0]]
    """
    if not _traced(c, r):
        return sl.hankel(c, r)
    c = _vec(c, "hankel", "c")
    if r is None:
        r = np.zeros(np.shape(getval(c))[0], np.result_type(getval(c)))
    r = _vec(r, "hankel", "r")
    m, n = np.shape(getval(c))[0], np.shape(getval(r))[0]
    vals = dnp.concatenate([c, r[1:]])
    return vals[np.arange(m)[:, None] + np.arange(n)[None, :]]


def circulant(c):
    """``scipy.linalg.circulant``: ``A[i, j] = c[(i - j) mod n]``.

    Example:
        >>> circulant([1.0, 2.0, 3.0]).tolist()
        [[1.0, 3.0, 2.0], [2.0, 1.0, 3.0], [3.0, 2.0, 1.0]]
    """
    if not _traced(c):
        return sl.circulant(c)
    c = _vec(c, "circulant", "c")
    n = np.shape(getval(c))[0]
    return c[(np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def companion(a):
    """``scipy.linalg.companion``: first row ``-a[1:] / a[0]``, ones below the diagonal.

    Raises:
        ValueError: when ``a`` is not 1-D with at least 2 entries or ``a[0]`` is 0.

    Example:
        >>> companion([1.0, -3.0, 2.0]).tolist()
        [[3.0, -2.0], [1.0, 0.0]]
    """
    if not _traced(a):
        return sl.companion(a)
    a = _vec(a, "companion", "a")
    n = np.shape(getval(a))[0]
    if n < 2 or getval(a)[0] == 0:
        raise ValueError("diffsci.scipy.linalg.companion: a must have at least 2 entries and "
                         f"a[0] != 0, got {getval(a)!r}")
    first = -a[1:] / a[0]
    below = np.eye(n - 2, n - 1, dtype=np.result_type(getval(first)))
    return dnp.concatenate([dnp.reshape(first, (1, n - 1)), below], axis=0)


def leslie(f, s):
    """``scipy.linalg.leslie``: fecundities ``f`` in the first row, survivals ``s`` on the
    subdiagonal.

    Example:
        >>> leslie([0.1, 2.0, 1.0], [0.2, 0.8]).tolist()
        [[0.1, 2.0, 1.0], [0.2, 0.0, 0.0], [0.0, 0.8, 0.0]]
    """
    if not _traced(f, s):
        return sl.leslie(f, s)
    f, s = _vec(f, "leslie", "f"), _vec(s, "leslie", "s")
    n = np.shape(getval(f))[0]
    if np.shape(getval(s))[0] != n - 1:
        raise ValueError(f"diffsci.scipy.linalg.leslie: s must have len(f) - 1 = {n - 1} "
                         f"entries, got {np.shape(getval(s))[0]}")
    sub = dnp.concatenate([dnp.diag(s), dnp.zeros((n - 1, 1))], axis=1)
    return dnp.concatenate([dnp.reshape(f, (1, n)), sub], axis=0)


def fiedler(a):
    """``scipy.linalg.fiedler``: ``A[i, j] = |a[i] - a[j]|`` (differentiable where the
    ``a[i]`` are distinct; ``sign(0) = 0`` on the diagonal).

    Example:
        >>> fiedler([1.0, 4.0, 2.0]).tolist()
        [[0.0, 3.0, 1.0], [3.0, 0.0, 2.0], [1.0, 2.0, 0.0]]
    """
    if not _traced(a):
        return sl.fiedler(a)
    a = _vec(a, "fiedler", "a")
    return dnp.abs(a[:, None] - a[None, :])


def convolution_matrix(a, n, mode="full"):
    """``scipy.linalg.convolution_matrix``: the matrix ``A`` with ``A @ v`` equal to
    ``numpy.convolve(a, v, mode)`` for ``v`` of length ``n``, differentiable in ``a``.

    Example:
        >>> convolution_matrix([1.0, 2.0], 3).tolist()
        [[1.0, 0.0, 0.0], [2.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.0, 0.0, 2.0]]
    """
    if not _traced(a):
        return sl.convolution_matrix(a, n, mode)
    a = _vec(a, "convolution_matrix", "a")
    m = np.shape(getval(a))[0]
    if not isinstance(n, (int, np.integer)) or n < 1 or m < 1:
        raise ValueError(f"diffsci.scipy.linalg.convolution_matrix: n must be a positive "
                         f"integer and a non-empty, got n={n!r}, len(a)={m}")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"diffsci.scipy.linalg.convolution_matrix: mode must be 'full', "
                         f"'same' or 'valid', got {mode!r}")
    pad = np.zeros(n - 1, np.result_type(getval(a)))
    vals = dnp.concatenate([pad, a, pad])
    i = np.arange(m + n - 1)
    if mode == "same":
        i = i[(min(m, n) - 1) // 2:][:max(m, n)]
    elif mode == "valid":
        i = i[min(m, n) - 1:max(m, n)]
    return vals[i[:, None] - np.arange(n)[None, :] + n - 1]


def block_diag(*arrs):
    """``scipy.linalg.block_diag``: the arrays (0-D as 1 x 1, 1-D as one row) on the diagonal
    of a zero matrix, differentiable in each.

    Example:
        >>> block_diag([[1.0]], [2.0, 3.0]).tolist()
        [[1.0, 0.0, 0.0], [0.0, 2.0, 3.0]]
    """
    if not _traced(*arrs):
        return sl.block_diag(*arrs)
    blocks = []
    for k, x in enumerate(arrs):
        nd = np.ndim(getval(x))
        if nd > 2:
            raise ValueError(f"diffsci.scipy.linalg.block_diag: argument {k} must have at most "
                             f"2 dimensions, got shape {np.shape(getval(x))}")
        blocks.append(dnp.atleast_2d(x))
    dtype = np.result_type(*[getval(b) for b in blocks])
    cols = [np.shape(getval(b))[1] for b in blocks]
    total = sum(cols)
    rows, start = [], 0
    for b, c in zip(blocks, cols):
        r = np.shape(getval(b))[0]
        rows.append(dnp.concatenate([np.zeros((r, start), dtype), dnp.astype(b, dtype),
                                     np.zeros((r, total - start - c), dtype)], axis=1))
        start += c
    return dnp.concatenate(rows, axis=0)


def eigh_tridiagonal(d, e, eigvals_only=False, select="a", select_range=None,
                     check_finite=True, tol=0.0, lapack_driver="auto"):
    """``scipy.linalg.eigh_tridiagonal``: eigenvalues (and vectors) of the symmetric
    tridiagonal matrix with diagonal ``d`` and off-diagonal ``e``, differentiable in both
    through :func:`~diffsci.scipy.linalg.eigh` of that matrix (the same rules; distinct
    eigenvalues for eigenvector gradients).  ``select="i"`` (by index) and ``"v"`` (by value)
    as SciPy's.

    Example:
        >>> import diffsci as ds
        >>> [round(float(g), 12) for g in ds.grad(lambda d: eigh_tridiagonal(
        ...     d, np.array([1.0]), eigvals_only=True)[1])(np.array([0.0, 0.0]))]
        [0.5, 0.5]
    """
    from .linalg import eigh
    if not _traced(d, e):
        return sl.eigh_tridiagonal(d, e, eigvals_only=eigvals_only, select=select,
                                   select_range=select_range, check_finite=check_finite,
                                   tol=tol, lapack_driver=lapack_driver)
    d, e = _vec(d, "eigh_tridiagonal", "d"), _vec(e, "eigh_tridiagonal", "e")
    n = np.shape(getval(d))[0]
    if np.shape(getval(e))[0] != n - 1:
        raise ValueError(f"diffsci.scipy.linalg.eigh_tridiagonal: e must have len(d) - 1 = "
                         f"{n - 1} entries, got {np.shape(getval(e))[0]}")
    if np.iscomplexobj(getval(d)) or np.iscomplexobj(getval(e)):
        raise TypeError("diffsci.scipy.linalg.eigh_tridiagonal: d and e must be real")
    t = dnp.diag(d) + dnp.diag(e, 1) + dnp.diag(e, -1)
    kw = {}
    if select in ("i", "index"):
        kw["subset_by_index"] = select_range
    elif select in ("v", "value"):
        kw["subset_by_value"] = select_range
    elif select not in ("a", "all"):
        raise ValueError(f"diffsci.scipy.linalg.eigh_tridiagonal: select must be 'a', 'v' or "
                         f"'i', got {select!r}")
    return eigh(t, eigvals_only=eigvals_only, **kw)


__all__ += ["eigh_tridiagonal"]


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
    """``scipy.linalg.qr_multiply``: the economic ``a = Q R`` and ``c @ Q`` (``mode="right"``)
    or ``Q @ c`` (``"left"``), ``Q`` conjugated with ``conjugate=True``; differentiable in
    ``a`` and ``c`` through :func:`~diffsci.scipy.linalg.qr` (the same sign convention).

    Returns:
        ``(CQ, R)`` (``(CQ, R, P)`` with ``pivoting=True``).

    Example:
        >>> cq, r = qr_multiply(np.array([[3.0, 0.0], [4.0, 5.0]]), np.eye(2))
        >>> np.round(cq @ r, 12).tolist()
        [[3.0, 0.0], [4.0, 5.0]]
    """
    from .linalg import qr
    if not _traced(a, c):
        return sl.qr_multiply(a, c, mode=mode, pivoting=pivoting, conjugate=conjugate,
                              overwrite_a=overwrite_a, overwrite_c=overwrite_c)
    if mode not in ("left", "right"):
        raise ValueError(f"diffsci.scipy.linalg.qr_multiply: mode must be 'left' or 'right', "
                         f"got {mode!r}")
    out = qr(a, mode="economic", pivoting=pivoting)
    q, r = out[0], out[1]
    if conjugate:
        q = dnp.conj(q)
    cq = dnp.matmul(q, c) if mode == "left" else dnp.matmul(c, q)
    return (cq, r, out[2]) if pivoting else (cq, r)


__all__ += ["qr_multiply"]
