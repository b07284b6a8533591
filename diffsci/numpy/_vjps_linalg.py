"""Reverse-mode rules for diffsci.numpy.linalg.

Same conventions as ``_vjps.py`` (``Aᴴ`` is written ``_H(A)``).  References:
M. Giles, "An extended collection of matrix derivative results for forward
and reverse mode AD" (2008) for det/inv/solve; I. Murray, "Differentiation of
the Cholesky decomposition" (2016, eq. 10); the eigh/svd rules follow
PyTorch's ``linalg_eig_backward`` / ``svd_backward`` (FunctionsManual.cpp),
with the complex gauge term split evenly between U and V.

``cholesky`` and ``eigh`` read one triangle of their input (as LAPACK does):
their rules compute the Hermitian gradient S and fold it onto that triangle
(:func:`_fold`), which is the exact derivative of NumPy's function — so for a
symmetric input built as ``B + B.T`` the chain rule gives the familiar result.
"""

from __future__ import annotations

import numpy as np

from .._core import defvjp, getval
from . import linalg as L
from ._util import cj, unbroadcast
from ._vjps import _expand_reduced, _real_dtype, _safe


def _H(x):
    return np.swapaxes(cj(x), -1, -2)


def _eye(n):
    return np.eye(n, dtype=bool)


def _diag_embed(d):
    n = np.shape(d)[-1]
    return np.where(_eye(n), np.expand_dims(d, -2), 0)


def _fold(s, lower):
    """The gradient w.r.t. the triangle LAPACK reads, from a gradient ``s`` valid for
    Hermitian perturbations: strict triangle s + sᴴ, real diagonal."""
    tri, k = (np.tril, -1) if lower else (np.triu, 1)
    return np.where(_eye(np.shape(s)[-1]), np.real(s), tri(s, k) + tri(_H(s), k))


# ---------------------------------------------------------------- determinants, inverses
def _solve_a(g, ans, a, b):
    if np.ndim(b) == 1:  # NumPy 2: b is a vector only when it is 1-D
        gb = np.linalg.solve(_H(a), np.expand_dims(g, -1))
        return unbroadcast(-gb * np.expand_dims(cj(ans), -2), a)
    return unbroadcast(-np.linalg.solve(_H(a), g) @ _H(ans), a)


def _solve_b(g, ans, a, b):
    if np.ndim(b) == 1:
        return unbroadcast(np.linalg.solve(_H(a), np.expand_dims(g, -1))[..., 0], b)
    return unbroadcast(np.linalg.solve(_H(a), g), b)


defvjp(L.det, lambda g, ans, a: np.expand_dims(g * cj(ans), (-2, -1)) * _H(np.linalg.inv(a)))
defvjp(L._logdet_p, lambda g, ans, a: np.expand_dims(g, (-2, -1)) * _H(np.linalg.inv(a)))
defvjp(L.inv, lambda g, ans, a: -(_H(ans) @ g @ _H(ans)))
defvjp(L.solve, _solve_a, _solve_b)


# ---------------------------------------------------------------- factorizations
def _cholesky_vjp(g, ans, a, upper=False):
    # A = L Lᴴ; with X = Lᴴ L̄ and P = tril(X) with its diagonal halved, the Hermitian
    # gradient is S = L⁻ᴴ P L⁻¹ (Murray 2016, eq. 10).
    low, gl = (_H(ans), _H(g)) if upper else (ans, g)
    x = _H(low) @ gl
    n = np.shape(x)[-1]
    p = np.where(_eye(n), 0.5 * x, np.tril(x))
    linv = np.linalg.inv(low)
    return _fold(_H(linv) @ p @ linv, lower=not upper)


def _eigh_vjp(g, ans, a, UPLO="L"):
    # Ā = V (diag(w̄) + skew(Vᴴ V̄) / (w_j - w_i)) Vᴴ, folded onto the triangle read.
    w, v = ans[..., 0, :], ans[..., 1:, :]
    gw, gv = g[..., 0, :], g[..., 1:, :]
    if np.iscomplexobj(ans):
        w, gw = np.real(w), np.real(gw)
    n = np.shape(w)[-1]
    vhgv = _H(v) @ gv
    skew = 0.5 * (vhgv - _H(vhgv))
    gap = np.where(_eye(n), 1, np.expand_dims(w, -2) - np.expand_dims(w, -1))
    inner = np.where(_eye(n), np.expand_dims(gw, -2), _safe_div(skew, gap))
    return _fold(v @ inner @ _H(v), lower=UPLO.upper() == "L")


def _safe_div(num, gap):
    """num / gap, with 0 where both vanish (a repeated eigen/singular value the loss does not
    rotate within: the eigenvalue-only gradient stays exact instead of 0/0 = NaN)."""
    both = (getval(gap) == 0) & (getval(num) == 0)
    return np.where(both, 0, num / np.where(both, 1, gap))


def _svd_unpack(p, m, n, full_matrices):
    k = min(m, n)
    ku, kv = (m, n) if full_matrices else (k, k)
    batch = np.shape(p)[:-1]
    u = np.reshape(p[..., :m * ku], batch + (m, ku))
    s = p[..., m * ku:m * ku + k]
    vh = np.reshape(p[..., m * ku + k:], batch + (kv, n))
    return u[..., :k], s, vh[..., :k, :], u[..., k:], vh[..., k:, :]


def _svd_vjp(g, ans, a, full_matrices=True, hermitian=False):
    m, n = np.shape(a)[-2:]
    u, s, vh, _, _ = _svd_unpack(ans, m, n, full_matrices)
    gu, gs, gvh, gu_extra, gvh_extra = _svd_unpack(g, m, n, full_matrices)
    if np.any(getval(gu_extra) != 0) or np.any(getval(gvh_extra) != 0):
        raise NotImplementedError(
            "diffsci: svd(full_matrices=True) of a non-square matrix: the extra columns of U "
            "(rows of Vh) are not unique, so a loss may not depend on them; use "
            "full_matrices=False")
    complex_ = np.iscomplexobj(ans)
    if complex_:
        s, gs = np.real(s), np.real(gs)
    k = min(m, n)
    eye = _eye(k)
    uhgu = _H(u) @ gu
    vhgv = vh @ _H(gvh)
    s2 = s * s
    gap = np.where(eye, 1, np.expand_dims(s2, -2) - np.expand_dims(s2, -1))  # s_k² - s_j²
    sk = np.expand_dims(s, -2)  # s_k along columns
    sj = np.expand_dims(s, -1)  # s_j along rows
    inner = _safe_div((uhgu - _H(uhgu)) * sk + sj * (vhgv - _H(vhgv)), gap)
    inner = np.where(eye, np.expand_dims(gs, -2), inner)
    if complex_:  # the phase of each (u_k, v_k) pair: split evenly between U and V
        dgu = np.diagonal(uhgu, 0, -2, -1)
        dgv = np.diagonal(vhgv, 0, -2, -1)
        inner = inner + _diag_embed(1j * np.imag(dgu - dgv) / (2 * s))
    if m > k:
        return (u @ inner + (gu - u @ uhgu) / sk) @ vh
    if n > k:
        return u @ (inner @ vh + (gvh - _H(vhgv) @ vh) / sj)
    return u @ inner @ vh


def _copyltu(x):
    """Lower triangle of x mirrored to a Hermitian matrix (real diagonal)."""
    low = np.tril(x, -1)
    return np.where(_eye(np.shape(x)[-1]), np.real(x), low + _H(low))


def _qr_vjp(g, ans, a):
    # m >= n: Ā = (Q̄ + Q copyltu(R R̄ᴴ - Q̄ᴴ Q)) R⁻ᴴ (Liao et al. 2019, eq. 12); for m < n,
    # A = [X | Y] with X = Q U square: Ȳ = Q V̄ and X̄ from the square case with Q̄ + Y V̄ᴴ.
    m, n = np.shape(a)[-2:]
    k = min(m, n)
    batch = np.shape(ans)[:-1]

    def unpack(p):
        return (np.reshape(p[..., :m * k], batch + (m, k)),
                np.reshape(p[..., m * k:], batch + (k, n)))

    (q, r), (gq, gr) = unpack(ans), unpack(g)
    gr = np.triu(gr)
    if m >= n:
        b = gq + q @ _copyltu(r @ _H(gr) - _H(gq) @ q)
        return _H(np.linalg.solve(r, _H(b)))
    u, gu, gv = r[..., :m], gr[..., :m], gr[..., m:]
    gq = gq + a[..., m:] @ _H(gv)
    b = gq + q @ _copyltu(u @ _H(gu) - _H(gq) @ q)
    return np.concatenate([_H(np.linalg.solve(u, _H(b))), q @ gv], axis=-1)


def _svdvals_vjp(g, ans, a):
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    if np.iscomplexobj(a):
        g = np.real(g)
    return (u * np.expand_dims(g, -2)) @ vh


defvjp(L.cholesky, _cholesky_vjp)
defvjp(L._eigh_p, _eigh_vjp)
defvjp(L._svd_p, _svd_vjp)
defvjp(L._svdvals_p, _svdvals_vjp)
defvjp(L._qr_p, _qr_vjp)


# ---------------------------------------------------------------- norms
def _norm_vjp(g, ans, x, ord=None, axis=None, keepdims=False):  # noqa: A002
    # Vector p-norms (and Frobenius): x̄ = g · sgn(x) (|x| / ‖x‖)^(p-1); ±inf share the
    # cotangent among tied extremal entries; a zero vector gets gradient 0.
    if np.iscomplexobj(x):
        g = np.real(g)
    g = _expand_reduced(g, x, axis, keepdims)
    nrm = _expand_reduced(ans, x, axis, keepdims)
    if ord in (None, 2, "fro"):
        return np.where(nrm == 0, 0, g * x / _safe(nrm))
    if ord == 0:
        return np.zeros(np.shape(x), np.result_type(getval(x)))
    absx = np.abs(x)
    sgn = x / _safe(absx) if np.iscomplexobj(x) else np.sign(getval(x))
    if ord == 1:
        return g * sgn
    if ord in (np.inf, -np.inf):
        hit = getval(absx) == getval(nrm)
        count = np.sum(hit, axis=axis, keepdims=True, dtype=_real_dtype(x))
        return np.where(hit, g * sgn / np.maximum(count, 1), 0)
    return np.where(nrm == 0, 0, g * sgn * (absx / _safe(nrm)) ** (ord - 1))


defvjp(L._norm_p, _norm_vjp)
