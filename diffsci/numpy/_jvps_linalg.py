"""Forward-mode rules for diffsci.numpy.linalg.

Same conventions as ``_jvps.py`` (``Aᴴ`` is written ``_H(A)``, Ȧ is the
tangent ``t``).  References: M. Giles, "An extended collection of matrix
derivative results for forward and reverse mode AD" (2008), §3.1 (det, inv,
solve) and §3.2–3.3 (eigenvalues, Cholesky); J. Townsend, "Differentiating the
singular value decomposition" (2016) for the SVD; H.-J. Liao et al.,
"Differentiable programming tensor networks" (PRX 9, 031041, 2019) for QR.

Each rule is the linear map whose adjoint is the VJP in ``_vjps_linalg.py``,
with the same gauge choices: ``cholesky`` and ``eigh`` see only the triangle
LAPACK reads (:func:`_hermitian_part`); complex singular vectors split their
phase freedom evenly between U and V; eigenvector tangents are orthogonal to
their eigenvectors.
"""

from __future__ import annotations

import numpy as np

from .._core import defjvp, getval
from . import _wrap as W
from . import linalg as L
from ._jvps import _re_inner
from ._vjps import _safe
from ._vjps_linalg import (
    _H,
    _check_logdet_defined,
    _degenerate,
    _diag_embed,
    _eye,
    _norm_vjp,
    _scale,
    _svd_unpack,
    _third_order,
    _zero_singular,
)


def _tr(m):
    return np.sum(np.diagonal(m, 0, -2, -1), axis=-1)


def _hermitian_part(t, lower):
    """The Hermitian perturbation a triangle-reading routine sees in ``t``: the strict
    triangle mirrored, the real part of the diagonal (the adjoint of ``_vjps_linalg._fold``)."""
    tri = np.tril(t, -1) if lower else np.triu(t, 1)
    return np.where(_eye(np.shape(t)[-1]), np.real(t), tri + _H(tri))


def _like(x, packed):
    """``x`` (real) cast to the dtype of a packed complex output, to sit beside its parts."""
    dt = np.result_type(getval(packed))
    return W.astype(x, dt) if dt.kind == "c" else x


def _flat(m):
    return W.reshape(m, np.shape(m)[:-2] + (-1,))


# ---------------------------------------------------------------- determinants, inverses
def _solve_a(t, ans, a, b):
    # x = A⁻¹ b: ẋ = -A⁻¹ Ȧ x
    if np.ndim(b) == 1:
        return -L.solve(a, W.matmul(t, np.expand_dims(ans, -1)))[..., 0]
    return -L.solve(a, W.matmul(t, ans))


def _logdet_jvp(t, ans, a):
    _check_logdet_defined(ans)
    return _tr(L.solve(a, t))


def _tr_prod(x, t):
    """tr(x t) over a stack."""
    return np.sum(np.swapaxes(x, -1, -2) * t, axis=(-2, -1))


# d det = tr(adj(A) Ȧ), exact at singular A (LA1); d adj = adj'(A)[Ȧ] (LA2).
defjvp(L.det, lambda t, ans, a: _tr_prod(L._adj_p(a), t))
defjvp(L._adj_p, lambda t, ans, a: L._dadj_p(a, t))
defjvp(L._dadj_p, _third_order, lambda t, ans, a, e: L._dadj_p(a, t))
defjvp(L._logdet_p, _logdet_jvp)
defjvp(L.inv, lambda t, ans, a: -W.matmul(W.matmul(ans, t), ans))
defjvp(L.solve, _solve_a, lambda t, ans, a, b: L.solve(a, t))


# ---------------------------------------------------------------- factorizations
def _cholesky_jvp(t, ans, a, upper=False):
    # A = L Lᴴ: L̇ = L Φ(L⁻¹ Ȧ L⁻ᴴ), Φ = strict lower triangle + half the diagonal
    # (Giles 2008, §3.3; Murray 2016, eq. 8).
    low = _H(ans) if upper else ans
    linv = L.inv(low)
    x = linv @ _hermitian_part(t, lower=not upper) @ _H(linv)
    dl = low @ np.where(_eye(np.shape(x)[-1]), 0.5 * x, np.tril(x))
    return _H(dl) if upper else dl


def _eigh_jvp(t, ans, a, UPLO="L"):
    # A = V diag(w) Vᴴ, M = Vᴴ Ȧ V: ẇ = Re diag(M), V̇ = V (M ∘ F), F_ij = 1/(w_j - w_i)
    # off the diagonal and 0 on it (Giles 2008, §3.1).  Packed like the primal.
    w, v = ans[..., 0, :], ans[..., 1:, :]
    if np.iscomplexobj(ans):
        w = np.real(w)
    m = _H(v) @ _hermitian_part(t, lower=UPLO.upper() == "L") @ v
    n = np.shape(w)[-1]
    gap = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    f = _inv_gap(gap, _eye(n), _scale(w, vector=True))
    dw = np.real(np.diagonal(m, 0, -2, -1))
    return W.concatenate([_like(np.expand_dims(dw, -2), ans), v @ (m * f)], axis=-2)


def _inv_gap(gap, eye, gap_scale):
    """1/gap off the diagonal; 0 on it and between (numerically) repeated values (their
    rotation within the degenerate subspace is not determined; the values' own tangents stay
    exact, and so do those of losses that do not rotate within it, LA4)."""
    skip = eye | _degenerate(gap, gap_scale)
    return np.where(skip, 0, 1 / np.where(skip, 1, gap))


def _svd_jvp(t, ans, a, full_matrices=True, hermitian=False):
    # A = U S Vᴴ, P = Uᴴ Ȧ V: Ṡ = Re diag(P); Uᴴ U̇ = F ∘ (P S + S Pᴴ), Vᴴ V̇ = F ∘ (S P + Pᴴ S)
    # with F_ij = 1/(s_j² - s_i²) off the diagonal; plus (I - UUᴴ) Ȧ V S⁻¹ when m > n and
    # (I - VVᴴ) Ȧᴴ U S⁻¹ when n > m (Townsend 2016).  Complex: the phase Im P_kk / s_k is
    # split evenly between u_k and v_k.  With full_matrices on a non-square matrix the extra
    # columns of U (rows of Vh) rotate minimally (they are not unique; see the VJP).
    m_, n_ = np.shape(a)[-2:]
    k = min(m_, n_)
    u, s, vh, u_extra, vh_extra = _svd_unpack(ans, m_, n_, full_matrices)
    complex_ = np.iscomplexobj(ans)
    if complex_:
        s = np.real(s)
    v = _H(vh)
    tv = t @ v
    p = _H(u) @ tv
    ph = _H(p)
    sk, sj = np.expand_dims(s, -2), np.expand_dims(s, -1)  # s_j along columns, s_i along rows
    eye = _eye(k)
    smax = _scale(s, vector=True)
    f = _inv_gap(sk * sk - sj * sj, eye, smax * smax)
    om_u = f * (p * sk + sj * ph)
    om_v = f * (sj * p + ph * sk)
    ds = np.real(np.diagonal(p, 0, -2, -1))
    if complex_:
        phase = _diag_embed(0.5j * np.imag(np.diagonal(p, 0, -2, -1)) / s)
        om_u, om_v = om_u + phase, om_v - phase
    du, dv = u @ om_u, v @ om_v
    if m_ > k:
        rest = (tv - u @ p) / sk  # (I - UUᴴ) Ȧ V S⁻¹
        du = du + rest
        if full_matrices:
            du = W.concatenate([du, -u @ _H(_H(u_extra) @ rest)], axis=-1)
    if n_ > k:
        th_u = _H(t) @ u
        rest = (th_u - v @ ph) / sk  # (I - VVᴴ) Ȧᴴ U S⁻¹
        dv = dv + rest
        if full_matrices:
            dv = W.concatenate([dv, -v @ _H(vh_extra @ rest)], axis=-1)
    return W.concatenate([_flat(du), _like(ds, ans), _flat(_H(dv))], axis=-1)


def _qr_square(t, q, r):
    # A = Q R (m >= n, reduced): with X = Qᴴ Ȧ R⁻¹ = Ω + Ṙ R⁻¹, Ω skew-Hermitian and Ṙ R⁻¹
    # upper triangular with a real diagonal (LAPACK's gauge), Ṙ R⁻¹ = X - Ω and
    # Q̇ = Ȧ R⁻¹ - Q (Ṙ R⁻¹)  (Liao et al. 2019, §III.B).
    ar = _H(L.solve(_H(r), _H(t)))  # Ȧ R⁻¹
    x = _H(q) @ ar
    low = np.tril(x, -1)
    up = x - low + _H(low)  # X - Ω
    if np.iscomplexobj(x):
        up = up - _diag_embed(1j * np.imag(np.diagonal(x, 0, -2, -1)))
    return ar - q @ up, up @ r


def _qr_jvp(t, ans, a):
    # m < n: A = [X | Y] with X = Q U square and Y = Q V: V̇ = Qᴴ (Ẏ - Q̇ V).
    m, n = np.shape(a)[-2:]
    k = min(m, n)
    batch = np.shape(ans)[:-1]
    q = W.reshape(ans[..., :m * k], batch + (m, k))
    r = W.reshape(ans[..., m * k:], batch + (k, n))
    if m >= n:
        dq, dr = _qr_square(t, q, r)
    else:
        dq, du = _qr_square(t[..., :m], q, r[..., :m])
        dv = _H(q) @ (t[..., m:] - dq @ r[..., m:])
        dr = W.concatenate([du, dv], axis=-1)
    return W.concatenate([_flat(dq), _flat(dr)], axis=-1)


def _svdvals_jvp(t, ans, a):
    # ṡ_k = Re(u_kᴴ Ȧ v_k)
    u, _, vh = L.svd(a, full_matrices=False)
    ds = np.real(np.sum(np.conj(u) * (t @ _H(vh)), axis=-2))
    return np.where(_zero_singular(ans, a), 0, ds)  # |σ|'(0) = 0, as in the VJP (LA5)


defjvp(L.cholesky, _cholesky_jvp)
defjvp(L._eigh_p, _eigh_jvp)
defjvp(L._svd_p, _svd_jvp)
defjvp(L._svdvals_p, _svdvals_jvp)
defjvp(L._qr_p, _qr_jvp)


# ---------------------------------------------------------------- norms
def _norm_jvp(t, ans, x, ord=None, axis=None, keepdims=False):  # noqa: A002
    # A real function of x: Σ Re(conj(∇‖x‖)·t) over the reduced axes, with the VJP's
    # gradient ∇‖x‖ (its conventions at zero and at ties); Euclidean norms directly.
    if ord in (None, 2, "fro"):
        d = np.sum(_re_inner(x, t), axis=axis, keepdims=keepdims)
        return np.where(ans == 0, 0, d / _safe(ans))
    ones = np.ones(np.shape(getval(ans)), np.result_type(getval(ans)))
    grad = _norm_vjp(ones, ans, x, ord=ord, axis=axis, keepdims=keepdims)
    return np.sum(_re_inner(grad, t), axis=axis, keepdims=keepdims)


defjvp(L._norm_p, _norm_jvp)


# ---------------------------------------------------------------- eig, pinv
def _eig_jvp(t, ans, a):
    # P = V⁻¹ Ȧ V: ẇ = diag(P), V̇ = V C with C = F∘P off the diagonal and
    # Re C_kk = -Re (VᴴV C_off)_kk (unit-norm eigenvectors), Im C_kk = 0 (LA6).
    from ._vjps_linalg import _eig_parts

    w, v, f, degenerate = _eig_parts(ans)
    n = np.shape(w)[-1]
    p = L.solve(v, t @ v)
    # a repeated eigenvalue: eigenvector tangents undefined (NaN) unless P vanishes there
    c_off = np.where(_eye(n), 0, np.where(degenerate & (getval(p) != 0), np.nan, f * p))
    d = -np.real(np.diagonal(_H(v) @ v @ c_off, 0, -2, -1))
    c = c_off + _diag_embed(d)
    dw = np.diagonal(p, 0, -2, -1)
    return W.concatenate([np.expand_dims(dw, -2), v @ c], axis=-2)


def _pinv_jvp(t, x, a, rcond=None, hermitian=False):
    # Ẋ = -X Ȧ X + X Xᴴ Ȧᴴ (I - A X) + (I - X A) Ȧᴴ Xᴴ X (Golub & Pereyra 1973; LA7).
    xh, th = _H(x), _H(t)
    return (-(x @ t @ x) + (x @ xh @ th - x @ xh @ th @ a @ x)
            + (th @ xh @ x - x @ a @ th @ xh @ x))


defjvp(L._eig_p, _eig_jvp)
defjvp(L._pinv_p, _pinv_jvp)
