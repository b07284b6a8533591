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
from ._util import cj, unbroadcast, value_mask
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


def _real_like(c, x):
    """Cotangent ``c`` for ``x``: its real part when ``x`` is real."""
    return np.real(c) if np.iscomplexobj(getval(c)) and not np.iscomplexobj(getval(x)) else c


def _check_logdet_defined(ans, fname="slogdet"):
    """log|det a| is -inf at a singular a and has no derivative there (LA3)."""
    if np.any(np.isneginf(np.real(getval(ans)))):
        raise np.linalg.LinAlgError(
            f"diffsci.numpy.linalg.{fname}: a is singular (log|det a| = -inf), where log|det a| "
            f"has no derivative (it tends to -inf along every direction that keeps a singular "
            f"and its gradient adj(a)ᴴ/det(a) blows up); differentiate det(a) instead, whose "
            f"gradient adj(a)ᴴ exists everywhere")


def _third_order(*_):
    raise NotImplementedError(
        "diffsci.numpy.linalg.det: derivatives of order 3 and higher are not implemented (the "
        "second derivative of the adjugate); det is differentiable to order 2, at singular "
        "matrices too")


def _logdet_vjp(g, ans, a):
    _check_logdet_defined(ans)
    return np.expand_dims(g, (-2, -1)) * _H(np.linalg.inv(a))


# d det = tr(adj(A) dA): Ā = ḡ adj(A)ᴴ, exact at singular A (LA1); adj's own rules are the
# derivative of the adjugate (LA2), whose adjoint is the same map at Aᴴ.
defvjp(L.det, lambda g, ans, a: np.expand_dims(g, (-2, -1)) * _H(L._adj_p(a)))
defvjp(L._adj_p, lambda g, ans, a: _real_like(L._dadj_p(_H(a), g), a))
defvjp(L._dadj_p, _third_order, lambda g, ans, a, e: _real_like(L._dadj_p(_H(a), g), e))
defvjp(L._logdet_p, _logdet_vjp)
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
    inner = np.where(_eye(n), np.expand_dims(gw, -2),
                     _safe_div(skew, gap, vhgv, _scale(vhgv), _scale(w, vector=True)))
    return _fold(v @ inner @ _H(v), lower=UPLO.upper() == "L")


def _tol(x):
    """The relative size below which a gap or a numerator counts as rounding noise: 64 n eps."""
    v = getval(x)
    return 64 * max(np.shape(v)[-1], 1) * np.finfo(_real_dtype(v)).eps


def _scale(x, vector=False):
    """max |x| over each matrix of a stack (each vector if ``vector``), shaped (..., 1, 1)."""
    v = np.abs(getval(x))
    axes = (-1,) if vector else (-2, -1)
    if v.size == 0:
        return np.zeros(v.shape[:-len(axes)] + (1, 1))
    m = np.max(v, axis=axes)
    return m[..., None, None]


def _degenerate(gap, gap_scale):
    """Pairs (i, j) whose gap is rounding noise at the spectrum's scale (a repeated value)."""
    g = np.abs(getval(gap))
    return g <= _tol(gap) * gap_scale


def _safe_div(num, gap, probe, probe_scale, gap_scale):
    """num / gap off the diagonal, with 0 for a (numerically) repeated eigen/singular value
    where the loss does not look inside the eigenspace: ``probe`` (Vᴴ V̄, or Uᴴ Ū and Vᴴ V̄
    for the SVD) is rounding noise at that pair.  That is so for spectral functions (of the
    eigenvalues alone, however computed: sum of eigenvalues, tr f(A) = tr(V f(Λ) Vᴴ)), whose
    exact contribution there is 0 (LA4).  A loss that does look inside (entries of
    V f(Λ) Vᴴ ...) has a gradient there that the cotangents do not determine: NaN."""
    noise = np.abs(getval(probe))
    noise = noise + np.swapaxes(noise, -1, -2)
    degenerate = _degenerate(gap, gap_scale)
    zero = degenerate & (noise <= _tol(num) * probe_scale)
    out = np.where(degenerate, 0, num / np.where(degenerate, 1, gap))
    return np.where(degenerate & ~zero, np.nan, out)


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
    smax = _scale(s, vector=True)
    inner = _safe_div((uhgu - _H(uhgu)) * sk + sj * (vhgv - _H(vhgv)), gap,
                      np.abs(getval(uhgu)) + np.abs(getval(vhgv)),
                      np.maximum(_scale(uhgu), _scale(vhgv)), smax * smax)
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
    # ā = U diag(ḡ) Vh; a zero singular value (numerically: at most max(m, n) eps s_max, NumPy's
    # matrix_rank tolerance) is |σ| at σ = 0, whose gradient is 0 by the convention of abs (LA5).
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    if np.iscomplexobj(a):
        g = np.real(g)
    return (u * np.expand_dims(np.where(_zero_singular(ans, a), 0, g), -2)) @ vh


def _zero_singular(s, a):
    """Singular values at or below NumPy's rank tolerance max(m, n) eps s_max."""
    sv = getval(s)
    m, n = np.shape(getval(a))[-2:]
    top = np.max(sv, axis=-1, keepdims=True) if np.shape(sv)[-1] else 0
    return sv <= max(m, n) * np.finfo(_real_dtype(sv)).eps * top


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
    # the masks and signs through value_mask: recomputed by diffsci.jit's compiled code
    sgn = x / _safe(absx) if np.iscomplexobj(x) else value_mask(np.sign, x)
    if ord == 1:
        return g * sgn
    if ord in (np.inf, -np.inf):
        hit = value_mask(np.equal, absx, nrm)
        count = np.sum(hit, axis=axis, keepdims=True, dtype=_real_dtype(x))
        return np.where(hit, g * sgn / np.maximum(count, 1), 0)
    # (|x| / ‖x‖)^(p-1) where x_i != 0; 0 at x_i = 0 (for p < 1 that limit is infinite: the
    # convention of abs'(0) = 0), without evaluating 0 to a negative power.
    nz = value_mask(np.greater, absx, 0)
    ratio = np.where(nz, absx / _safe(nrm), 1) ** (ord - 1)
    return np.where(value_mask(np.logical_or, value_mask(np.equal, nrm, 0),
                               value_mask(np.logical_not, nz)), 0, g * sgn * ratio)


defvjp(L._norm_p, _norm_vjp)


# ---------------------------------------------------------------- eig, pinv
def _eig_parts(ans):
    """(w, V, F, degenerate): F_ij = 1/(w_j - w_i) off the diagonal, 0 on it and at pairs
    whose gap is rounding noise (repeated eigenvalues; LA4, LA6)."""
    w, v = ans[..., 0, :], ans[..., 1:, :]
    n = np.shape(w)[-1]
    gap = np.expand_dims(w, -2) - np.expand_dims(w, -1)  # w_j - w_i
    degenerate = ~_eye(n) & _degenerate(gap, _scale(w, vector=True))
    skip = _eye(n) | degenerate
    f = np.where(skip, 0, 1 / np.where(skip, 1, gap))
    return w, v, f, degenerate


def _eig_vjp(g, ans, a):
    # P̄ = diag(w̄) + conj(F)∘(G - VᴴV diag(Re G))_off, G = Vᴴ V̄; Ā = V⁻ᴴ P̄ Vᴴ (LA6).  At a
    # repeated eigenvalue: 0 where the loss does not use the eigenvectors there (Ĝ exactly
    # 0: eigenvalue-only losses), NaN otherwise — unlike eigh, the general eigenproblem's
    # gauge (any invertible map within the eigenspace) leaves no way to tell a spectral loss
    # through V from one looking inside the eigenspace (LA6).
    w, v, f, degenerate = _eig_parts(ans)
    gw, gv = g[..., 0, :], g[..., 1:, :]
    n = np.shape(w)[-1]
    vh = _H(v)
    gg = vh @ gv
    re_diag = np.real(np.diagonal(gg, 0, -2, -1))
    ghat = gg - (vh @ v) * np.expand_dims(re_diag, -2)
    undetermined = degenerate & (getval(ghat) != 0)
    off = np.where(undetermined, np.nan, np.conj(f) * ghat)
    pbar = np.where(_eye(n), np.expand_dims(gw, -2), off)
    abar = np.linalg.solve(vh, pbar @ vh)
    return _real_like(abar, a)


def _pinv_vjp(g, x, a, rcond=None, hermitian=False):
    # Ā = -Xᴴ G Xᴴ + (I - A X) Gᴴ X Xᴴ + Xᴴ X Gᴴ (I - X A), X = A⁺ (LA7).
    xh, gh = _H(x), _H(g)
    ax = a @ x
    xa = x @ a
    return (-(xh @ g @ xh) + (gh @ x @ xh - ax @ (gh @ x @ xh))
            + (xh @ x @ gh - (xh @ x @ gh) @ xa))


defvjp(L._eig_p, _eig_vjp)
defvjp(L._pinv_p, _pinv_vjp)
