"""``fiedler_companion``, ``hessenberg``, ``rsf2csf`` and ``funm`` of ``diffsci.scipy.linalg``.

* ``fiedler_companion`` is linear in ``a / a[0]``: a gather of ``-a[k] / a[0]`` (and constant
  ones) at SciPy's pattern.
* ``hessenberg`` and ``rsf2csf`` are traced re-implementations of the algorithms SciPy runs
  (LAPACK ``gehrd``'s Householder reflectors; SciPy's sequence of Givens rotations), written
  with :mod:`diffsci.numpy` operations, so their derivatives (both modes, any order) are those
  of the computed values.  Every discrete choice (a reflector's sign, which rotation, which
  eigenvalue of a 2 x 2 block) is taken from the plain values, as the plain algorithm takes it.
* ``funm`` is one primitive whose value is ``scipy.linalg.funm``; its rules are the Fréchet
  derivative by the Daleckii-Krein formula, written in :mod:`diffsci.numpy` operations (so
  higher orders differentiate it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.linalg as sl

from .. import numpy as dnp
from .._core import defjvp, defvjp, getval, is_tracer, primitive
from ..numpy import _util
from ..numpy import linalg as dla

__all__ = ["fiedler_companion", "funm", "hessenberg", "rsf2csf"]


def _traced(*xs: Any) -> bool:
    return any(is_tracer(x) for x in xs)


def _square2(a: Any, fname: str, arg: str) -> int:
    shape = np.shape(getval(a))
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"diffsci.scipy.linalg.{fname}: {arg} must be a square 2-D matrix "
                         f"(shape (n, n)), got shape {shape}")
    return shape[0]


def _H(x: Any) -> Any:
    return dnp.swapaxes(dnp.conj(x), -1, -2)


# ---------------------------------------------------------------- fiedler_companion
def fiedler_companion(a: Any) -> Any:
    """``scipy.linalg.fiedler_companion``: the pentadiagonal Fiedler companion matrix of the
    polynomial with coefficients ``a`` (descending order), differentiable in ``a``.

    Its entries are 0, 1 or ``-a[k] / a[0]`` at SciPy's fixed pattern, so the traced result is
    a gather of those values (the gradient is the scatter-add of the cotangent through
    ``a[k] / a[0]``).  ``len(a) == 2`` gives ``[[-a[1] / a[0]]]``; shorter inputs an empty
    array, as SciPy's.

    Args:
        a: (N,) real or complex coefficients with ``a[0] != 0``.

    Returns:
        (N - 1, N - 1) matrix whose eigenvalues are the roots of ``a``.

    Raises:
        ValueError: ``a`` is not 1-D (traced input; SciPy batches plain input) or ``a[0]`` is 0.

    Example:
        >>> fiedler_companion([1.0, -6.0, 11.0, -6.0]).tolist()
        [[6.0, -11.0, 1.0], [1.0, 0.0, 0.0], [0.0, 6.0, 0.0]]

    References:
        M. Fiedler, "A note on companion matrices", Linear Algebra Appl. 372 (2003), 325-331.
    """
    if not _traced(a):
        return sl.fiedler_companion(a)
    a = dnp.atleast_1d(a)
    shape = np.shape(getval(a))
    if len(shape) != 1:
        raise ValueError(f"diffsci.scipy.linalg.fiedler_companion: traced a must be 1-D, got "
                         f"shape {shape}")
    size = shape[0]
    if size < 2:
        return np.array([], dtype=np.result_type(getval(a)))
    if getval(a)[0] == 0:
        raise ValueError("diffsci.scipy.linalg.fiedler_companion: a[0] (the leading "
                         f"coefficient) must be nonzero, got {getval(a)!r}")
    b = a / a[0]
    if size == 2:
        return dnp.reshape(-b[1], (1, 1))
    # SciPy's own function on the probe [1, -2, -3, ..., -size] puts k + 1 where -b[k] goes,
    # 1 where a constant 1 goes, 0 elsewhere: an index into vals = [0, 1, -b[1], -b[2], ...].
    probe = np.concatenate([[1.0], -np.arange(2.0, size + 1.0)])
    idx = np.rint(sl.fiedler_companion(probe)).astype(int)
    one = np.ones(1, np.result_type(getval(b)))
    vals = dnp.concatenate([0 * one, one, -b[1:]])
    return vals[idx]


# ---------------------------------------------------------------- hessenberg
def _no_reflection(xv: Any) -> bool:
    return bool(not np.any(xv[1:] != 0) and np.imag(xv[0]) == 0)


def _nonnegative_real(alpha: Any) -> bool:
    return bool(np.real(alpha) >= 0)


def _reflector(x: Any) -> tuple[Any, Any, Any] | None:
    """LAPACK ``xlarfg`` on x = [alpha, x_rest]: (beta, tau, v) with v[0] = 1,
    ``v[1:] = x_rest / (alpha - beta)``, ``tau = (beta - alpha) / beta`` and
    ``(I - tau v vᴴ)ᴴ x = beta e_1``, ``beta = -sign(Re alpha) ||x||`` (real); ``None`` when
    LAPACK takes ``tau = 0`` (``x_rest = 0`` and ``alpha`` real)."""
    xv = getval(x)
    alpha = x[0]
    # the case and the sign LAPACK takes are guards under diffsci.jit
    if _util.observed(_no_reflection, x):
        return None
    sign = 1.0 if _util.observed(_nonnegative_real, alpha) else -1.0
    nrm = dnp.sqrt(dnp.sum(dnp.real(x * dnp.conj(x))))
    beta = -sign * nrm
    tau = (beta - alpha) / beta
    v = dnp.concatenate([np.ones(1, np.result_type(xv)), x[1:] / (alpha - beta)])
    return beta, tau, v


def _hessenberg_traced(a: Any, calc_q: bool) -> Any:
    n = np.shape(getval(a))[0]
    dtype = np.result_type(getval(a), np.float64 if np.dtype(getval(a).dtype).kind in "biu"
                           else getval(a).dtype)
    h = dnp.astype(a, dtype)
    q = np.eye(n, dtype=dtype)
    for i in range(n - 1):  # the last one only makes a complex H[n-1, n-2] real
        ref = _reflector(h[i + 1:, i])
        if ref is None:
            continue
        _, tau, v = ref
        # the full reflector I - tau w wᴴ, w = [0 (i + 1 entries), v]
        w = dnp.concatenate([np.zeros(i + 1, dtype), v])
        refl = np.eye(n, dtype=dtype) - tau * w[:, None] * dnp.conj(w)[None, :]
        h = _H(refl) @ h @ refl
        q = q @ refl
    h = dnp.triu(h, -1)
    return (h, q) if calc_q else h


def hessenberg(a: Any, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Any:
    """``scipy.linalg.hessenberg``: ``a = Q H Qᴴ`` with ``H`` upper Hessenberg (zero below
    the first subdiagonal), differentiable in ``a`` (real or complex).

    For traced ``a`` the reduction is LAPACK ``gehrd``'s unblocked algorithm written with
    :mod:`diffsci.numpy` operations: for ``i = 0 .. n - 2`` the reflector
    ``P_i = I - tau_i w_i w_iᴴ`` of ``xlarfg`` (``beta = -sign(Re alpha) ||x||``) maps
    ``H[i+1:, i]`` to ``beta e_1``, and ``H <- P_iᴴ H P_i``, ``Q <- Q P_i``.  The values equal
    SciPy's (LAPACK's) to rounding (for complex ``a`` the last reflector makes ``H[n-1, n-2]``
    real, as LAPACK's does) and the derivatives are those of that map, to any order.
    The reflector's sign is read from the plain value, and a reflector LAPACK skips
    (``H[i+2:, i] = 0`` with real ``H[i+1, i]``) is skipped: at such an input (an already
    Hessenberg matrix) the reduction is not differentiable (a perturbation switches the
    reflector on and flips ``H[i+1, i]``'s sign) and the derivative given is that of the
    branch taken (identity reflector).

    Args:
        a: (n, n) real or complex matrix.
        calc_q: also return ``Q``.
        overwrite_a, check_finite: SciPy's; plain input only.

    Returns:
        ``H``, or ``(H, Q)`` with ``calc_q=True``.

    Raises:
        ValueError: ``a`` is not a square 2-D matrix.

    Example:
        >>> import diffsci as ds
        >>> a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0.0, 8.0, 9.0]])
        >>> hessenberg(a).tolist() == a.tolist()
        True
        >>> ds.grad(lambda a: hessenberg(a)[0, 0])(a)[0].tolist()
        [1.0, 0.0, 0.0]

    References:
        G. H. Golub and C. F. Van Loan, "Matrix Computations", 4th ed. (2013), §7.4.3
        (Householder reduction to Hessenberg form); LAPACK ``xgehrd``/``xlarfg``.
    """
    if not _traced(a):
        return sl.hessenberg(a, calc_q=calc_q, overwrite_a=overwrite_a,
                             check_finite=check_finite)
    n = _square2(a, "hessenberg", "a")
    if n <= 2:  # SciPy returns a itself (and the identity)
        return (a, np.eye(n)) if calc_q else a
    return _hessenberg_traced(a, calc_q)


# ---------------------------------------------------------------- rsf2csf
_EPS = np.finfo(float).eps


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """``scipy.linalg.rsf2csf``: the complex Schur form ``(T', Z')`` of a real Schur form
    ``(T, Z)``, differentiable in ``T`` and ``Z``.

    SciPy's algorithm, traced: for ``m = n - 1 .. 1``, where ``|T[m, m-1]|`` exceeds
    ``eps (|T[m-1, m-1]| + |T[m, m]|)``, ``mu`` is the first eigenvalue (SciPy's ``eigvals``
    order, read from the plain value) of the 2 x 2 block at ``m - 1`` minus ``T[m, m]``,
    computed in closed form ``(a + d)/2 ± sqrt(((a - d)/2)² + b c)``; ``r = ||(mu, T[m, m-1])||``,
    ``c = mu / r``, ``s = T[m, m-1] / r`` and the rotation ``G = [[c̄, s], [-s, c]]`` updates
    ``T[m-1:m+1, m-1:] <- G T[m-1:m+1, m-1:]``, ``T[:m+1, m-1:m+1] <- T[:m+1, m-1:m+1] Gᴴ``,
    ``Z[:, m-1:m+1] <- Z[:, m-1:m+1] Gᴴ``; then ``T[m, m-1] <- 0``.  The values equal SciPy's to
    rounding; the derivatives are those of this map (any order) away from the threshold test's
    switch and from a 2 x 2 block with a double eigenvalue.

    Args:
        T: (n, n) real Schur form (quasi upper triangular).
        Z: (n, n) its Schur vectors.
        check_finite: SciPy's; plain input only.

    Returns:
        ``(T', Z')``: complex, ``T'`` upper triangular, ``Z' T' Z'ᴴ = Z T Zᵀ``.

    Raises:
        ValueError: ``T`` or ``Z`` is not square, or their shapes differ.

    Example:
        >>> t, z = rsf2csf(np.array([[0.0, 2.0], [-0.5, 0.0]]), np.eye(2))
        >>> bool(np.allclose(np.diagonal(t), [1j, -1j], atol=1e-12))  # the sign of 0 varies
        True
    """
    if not _traced(T, Z):
        return sl.rsf2csf(T, Z, check_finite=check_finite)
    n = _square2(T, "rsf2csf", "T")
    nz = _square2(Z, "rsf2csf", "Z")
    if n != nz:
        raise ValueError(f"diffsci.scipy.linalg.rsf2csf: T and Z must have one shape, got T "
                         f"{np.shape(getval(T))} and Z {np.shape(getval(Z))}")
    ctype = np.result_type(getval(T), getval(Z), np.complex64)
    t, z = dnp.astype(T, ctype), dnp.astype(Z, ctype)
    rows, cols = np.arange(n)[:, None], np.arange(n)[None, :]
    for m in range(n - 1, 0, -1):
        # which 2 x 2 blocks are split, and which root SciPy takes: guards under diffsci.jit
        if _util.observed(_split_block, t, m):
            a_, b_, c_, d_ = t[m - 1, m - 1], t[m - 1, m], t[m, m - 1], t[m, m]
            q = dnp.sqrt(((a_ - d_) / 2) ** 2 + b_ * c_)
            root = (a_ + d_) / 2 + (q if _util.observed(_plus_root, t, q, m) else -q)
            mu = root - d_
            r = dnp.sqrt(dnp.abs(mu) ** 2 + dnp.abs(c_) ** 2)
            cc, ss = mu / r, c_ / r
            g = dnp.reshape(dnp.stack([dnp.conj(cc), ss, -ss, cc]), (2, 2))
            # the n x n rotation acting on rows/columns m-1, m
            eye = np.eye(n, dtype=ctype)
            blk = np.zeros((n, 2), ctype)
            blk[m - 1, 0] = blk[m, 1] = 1.0
            rot = eye - blk @ blk.T + blk @ g @ blk.T
            t = dnp.where((np.isin(rows, (m - 1, m))) & (cols >= m - 1), rot @ t, t)
            t = dnp.where((rows <= m) & np.isin(cols, (m - 1, m)), t @ _H(rot), t)
            z = z @ _H(rot)
        t = dnp.where((rows == m) & (cols == m - 1), 0.0, t)
    return t, z


# ---------------------------------------------------------------- funm
_NODES = 32  # points of the trapezoidal rule on a circle for f'(lambda)


def _funm_plain(a: Any, func: Callable[[Any], Any] = np.exp) -> Any:
    return sl.funm(a, func, disp=False)[0]


_funm_p = primitive(_funm_plain, name="funm")


def _split_block(tv: Any, m: int) -> bool:
    return bool(abs(tv[m, m - 1]) > _EPS * (abs(tv[m - 1, m - 1]) + abs(tv[m, m])))


def _plus_root(tv: Any, qv: Any, m: int) -> bool:
    """Whether SciPy's first eigenvalue of the block at m is the root with +q."""
    first = sl.eigvals(tv[m - 1:m + 1, m - 1:m + 1])[0]
    half = (tv[m - 1, m - 1] + tv[m, m]) / 2
    return bool(abs(half + qv - first) <= abs(half - qv - first))


def _derivative(func: Callable[[Any], Any], lam: Any) -> Any:
    """f'(lam) for analytic f: Cauchy's integral by the trapezoidal rule on |z - lam| = rho,
    f'(lam) ~ (1/N) sum_k f(lam + rho w^k) w^(-k) / rho with w = exp(2 pi i / N), N = 32.

    The error is (rho / R)^N relative (R the distance to f's nearest singularity) plus
    rounding ~ eps max|f| / rho; rho = 0.05 max(|lam|, 1e-3) keeps rho / R <= 0.05 for the
    principal log and sqrt and the rounding near 1e-13 relative for |lam| >~ 1e-2."""
    rho = dnp.reshape(_util.value_mask(_cauchy_radius, lam), (-1, 1))  # recomputed under jit
    w = np.exp(2j * np.pi * np.arange(_NODES) / _NODES)
    z = dnp.reshape(lam, (-1, 1)) + rho * w[None, :]
    vals = func(z)
    return dnp.sum(vals * (np.conj(w)[None, :] / rho), axis=1) / _NODES


def _cauchy_radius(lam: Any) -> Any:
    return 0.05 * np.maximum(np.abs(np.ravel(lam)), 1e-3)


def _close_pairs(lam: Any) -> Any:
    diff = lam[:, None] - lam[None, :]
    return np.abs(diff) <= 1e-8 * (np.abs(lam)[:, None] + np.abs(lam)[None, :]) + 1e-300


def _frechet(func: Callable[[Any], Any], a: Any, e: Any) -> Any:
    """L_f(a, e) = V ((V⁻¹ e V) ∘ D) V⁻¹ with a = V diag(lam) V⁻¹ and the divided differences
    D_ij = (f(lam_i) - f(lam_j)) / (lam_i - lam_j), D_ii = f'(lam_i) (Daleckii-Krein; Higham
    2008, Thm 3.11 / (3.21)); close eigenvalues (|lam_i - lam_j| <= 1e-8 (|lam_i| + |lam_j|))
    use f' at their mean."""
    lam, v = dla.eig(a)
    vinv = dla.inv(v)
    fl = func(lam)
    close = _util.value_mask(_close_pairs, lam)  # recomputed under diffsci.jit
    n = np.shape(getval(lam))[0]
    mean = dnp.reshape((lam[:, None] + lam[None, :]) / 2, (-1,))
    dmean = dnp.reshape(_derivative(func, mean), (n, n))
    den = lam[:, None] - lam[None, :]
    safe = dnp.where(close, 1.0, den)
    dd = dnp.where(close, dmean, (fl[:, None] - fl[None, :]) / safe)
    out = v @ ((vinv @ e @ v) * dd) @ vinv
    real = not np.iscomplexobj(getval(a)) and not np.iscomplexobj(getval(e))
    return dnp.real(out) if real else out


def _like(c: Any, x: Any) -> Any:
    return dnp.real(c) if np.iscomplexobj(getval(c)) and not np.iscomplexobj(getval(x)) else c


defjvp(_funm_p, lambda t, ans, a, func=np.exp: _like(_frechet(func, a, t), a))
defvjp(_funm_p, lambda g, ans, a, func=np.exp: _like(_frechet(func, _H(a), g), a))


def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:
    """``scipy.linalg.funm``: the matrix function ``f(A)`` of a scalar function ``func``
    (Schur-Parlett, SciPy's value), differentiable in ``A``.

    One primitive.  Forward mode is the Fréchet derivative ``L_f(A, Ȧ)`` (the upper-right block
    of ``f([[A, Ȧ], [0, A]])``, Higham 2008 Thm 3.6 / (3.16)), computed by the Daleckii-Krein
    formula ``L_f(A, E) = V ((V⁻¹ E V) ∘ D) V⁻¹`` with ``A = V Λ V⁻¹`` and the first divided
    differences ``D`` of ``f`` at the eigenvalues; ``f'`` is Cauchy's integral on a small circle
    (32-point trapezoidal rule, relative error ~1e-12 for functions analytic on a disc of
    radius 20 times the circle's; see ``_derivative``).  Reverse mode is ``Ā = L_f(Aᴴ, Ḡ)``.
    Both are written with :mod:`diffsci.numpy` operations (``eig``, ``inv``, ``func`` on traced
    values), so higher orders differentiate them.

    Assumptions (as SciPy's): ``func`` is a scalar function analytic near A's spectrum that
    applies elementwise to complex arrays (NumPy ufuncs such as ``np.exp``, ``np.sin``, or
    compositions of them; for higher orders it must accept traced arrays); ``A`` is
    diagonalizable (distinct eigenvalues for an accurate Fréchet derivative).  The reverse rule
    ``L_f(Aᴴ, ·)`` is the adjoint of ``L_f(A, ·)`` when ``f`` has real Taylor coefficients
    (``f(z̄) = conj f(z)``: exp, sin, cos, log, sqrt, polynomials with real coefficients); for
    other ``func`` and complex ``A`` the reverse-mode gradient is not the adjoint.

    Args:
        A: (n, n) real or complex matrix.
        func: the scalar function, vectorized.
        disp: SciPy's: with ``False`` also return SciPy's error estimate (plain float).

    Returns:
        ``f(A)`` (real for real ``A`` where SciPy's is), or ``(f(A), errest)``.

    Raises:
        ValueError: ``A`` is not a square 2-D matrix.

    Example:
        >>> import diffsci as ds
        >>> a = np.array([[1.0, 2.0], [0.0, 3.0]])
        >>> np.allclose(funm(a, np.exp), sl.expm(a))
        True
        >>> np.round(ds.grad(lambda a: funm(a, np.exp)[0, 0])(np.diag([0.0, 1.0])), 10)
        array([[1., 0.],
               [0., 0.]])

    References:
        N. J. Higham, "Functions of Matrices: Theory and Computation", SIAM (2008), §3.1-3.2
        (Fréchet derivative, Thm 3.6, the Daleckii-Krein formula (3.21)), §9 (Schur-Parlett).
    """
    _square2(A, "funm", "A")
    if not callable(func):
        raise TypeError(f"diffsci.scipy.linalg.funm: func must be callable, got {func!r}")
    if not is_tracer(A):
        return sl.funm(A, func, disp=disp)
    f = _funm_p(A, func=func)
    if disp:
        return f
    return f, _util.value_mask(_funm_error, A, func)  # recomputed under diffsci.jit


def _funm_error(a: Any, func: Callable[[Any], Any]) -> Any:
    return sl.funm(a, func, disp=False)[1]
