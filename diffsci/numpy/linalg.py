"""``diffsci.numpy.linalg``: numpy.linalg, differentiable (rules in ``_vjps_linalg.py``).

Functions with several outputs (``eigh``, ``svd``, ``slogdet``) are one
primitive whose output packs the results into one array; the public function
unpacks them with ``getitem``, so each result is traced separately and no
multi-output primitive is needed.  On plain arrays every function is NumPy's.

Conventions at degenerate inputs (diffsci/DERIVATIONS.md, "Linear algebra at degenerate
inputs", LA1-LA5):

* ``det`` is differentiable everywhere, singular matrices included: its gradient is the
  adjugate ``adj(a)ᴴ`` (for ``[[1, 2], [2, 4]]``: ``[[4, -2], [-2, 1]]``), computed from the
  SVD without dividing by ``det``; both modes, to second order (a third order raises).
* ``slogdet`` of a singular matrix is NumPy's ``(0, -inf)``; its derivative does not exist
  there and differentiating it raises ``LinAlgError`` naming ``slogdet``.
* ``inv``/``solve`` of a singular matrix raise ``LinAlgError`` naming the function.
* ``eigh``/``svd`` at repeated eigen/singular values: a loss that is a spectral function
  (``sum`` of eigenvalues, ``tr f(A)`` even when computed as ``tr(V f(Λ) Vᴴ)``, Frobenius norm
  through ``U S Vh``) gets its exact finite gradient; a loss that looks inside the eigenspace
  (entries of ``V f(Λ) Vᴴ``) has no gradient the cotangents determine there: NaN in reverse
  mode; forward mode takes the in-eigenspace rotation as 0.  Pairs closer than
  ``64 n eps max|w|`` count as repeated.
* A zero singular value (at most NumPy's rank tolerance ``max(m, n) eps s_max``) has
  gradient 0 (it is ``|σ|`` at ``σ = 0``; ``abs'(0) = 0``), so ``norm(a, 'nuc')`` of a
  rank-deficient matrix gets ``U₊ V₊ᴴ`` and the zero matrix gets 0.
* ``norm`` at zero (every ``ord``, every ``axis``): subgradient 0; a zero entry of a
  ``p < 1`` or negative-order vector norm gets 0 too (the limit is infinite there).
* ``eigh`` and ``cholesky`` read one triangle (as NumPy does), so their gradients live in
  that triangle; singular-vector gradients at zero singular values are undefined (inf/NaN).
"""

from __future__ import annotations

import numpy as np
from numpy.linalg import LinAlgError  # noqa: F401  re-exported

from .._core import getval, is_tracer, nondifferentiable, primitive
from . import _util
from . import _wrap as W
from ._composite import _numpy_on_plain, cross, matrix_transpose, outer, vecdot  # noqa: F401
from ._composite import _traced as _traced_tree
from ._composite import asarray as _asarray
from ._composite import diagonal as _diagonal

__all__ = [
    "cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
    "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose",
    "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
    "tensordot", "trace", "vecdot", "vector_norm",
]

# NumPy's own result types (namedtuples), so traced and plain results have one structure.
EighResult = type(np.linalg.eigh(np.eye(1)))
SVDResult = type(np.linalg.svd(np.eye(1)))
SlogdetResult = type(np.linalg.slogdet(np.eye(1)))
QRResult = type(np.linalg.qr(np.eye(1)))
EigResult = type(np.linalg.eig(np.eye(1)))

matmul = W.matmul
tensordot = W.tensordot

# ---------------------------------------------------------------- primitives
def _singular(fname, e):
    return LinAlgError(
        f"diffsci.numpy.linalg.{fname}: a is singular (NumPy: {e}); the {fname} of a singular "
        f"matrix and its derivatives do not exist. Use pinv/lstsq for a least-squares answer, "
        f"or det/adjugate-based formulas, which stay defined there")


def _inv(a):
    try:
        return np.linalg.inv(a)
    except LinAlgError as e:
        raise _singular("inv", e) from None


def _solve(a, b):
    try:
        return np.linalg.solve(a, b)
    except LinAlgError as e:
        raise _singular("solve", e) from None


def _exclusive_products(s):
    """``p_i = prod_{k != i} s_k`` and ``q_ij = prod_{k != i, j} s_k`` (0 on the diagonal),
    over the last axis, without dividing (exact where some s_k vanish)."""
    n = s.shape[-1]

    def excl(x):  # prod over the last axis, leaving out each position in turn
        one = np.ones(x.shape[:-1] + (1,), x.dtype)
        pre = np.cumprod(np.concatenate([one, x[..., :-1]], axis=-1), axis=-1)
        post = np.cumprod(np.concatenate([one, x[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
        return pre * post

    p = excl(s)
    rows = np.where(np.eye(n, dtype=bool), 1, s[..., None, :])  # row i: s with s_i -> 1
    q = np.where(np.eye(n, dtype=bool), 0, excl(rows))
    return p, q


def _svd_gauge(a):
    """a = U diag(s) Vh with the unimodular factor c = det(U) det(Vh) (adj(a) = c V adj(S) Uᴴ)."""
    u, s, vh = np.linalg.svd(a)
    c = np.linalg.det(u) * np.linalg.det(vh)
    return u, s, vh, c


def _well_conditioned(a):
    """det(a) a⁻¹'s parts and a mask of the matrices (of a stack) where they are accurate:
    the LU-based inverse where the reciprocal 1-norm condition estimate is at least 1e-6 (an
    adjugate from it then carries ~1e-10 relative error at worst, as the inverse itself);
    the others go through the SVD (LA1)."""
    dt = np.result_type(a, 1.0)
    with np.errstate(all="ignore"):
        try:
            inv = np.linalg.inv(a)
        except LinAlgError:  # some matrix of the stack is exactly singular: one at a time
            flat = a.reshape((-1,) + a.shape[-2:])
            inv = np.full(flat.shape, np.nan, dt)
            for k, m in enumerate(flat):
                try:
                    inv[k] = np.linalg.inv(m)
                except LinAlgError:
                    pass
            inv = inv.reshape(a.shape)
        an = np.max(np.sum(np.abs(a), axis=-2), axis=-1)
        ai = np.max(np.sum(np.abs(inv), axis=-2), axis=-1)
        ok = np.isfinite(ai) & (an > 0) & (1.0 >= 1e-6 * an * ai)
        det = np.where(ok, np.linalg.det(a), 0)
    return np.where(ok[..., None, None], inv, 0), det, ok


def _adjugate_svd(a):
    u, s, vh, c = _svd_gauge(a)
    p, _ = _exclusive_products(s)
    v = np.conj(np.swapaxes(vh, -1, -2))
    out = (v * p[..., None, :].astype(v.dtype)) @ np.conj(np.swapaxes(u, -1, -2))
    return c[..., None, None] * out


def _adjugate(a):
    """The adjugate adj(a) (= det(a) a⁻¹ where a is invertible), exact at singular a:
    adj(U S Vᴴ) = det(U) det(Vᴴ) · V diag(prod_{k != i} s_k) Uᴴ (derivation (LA1)); the
    cheaper det(a) a⁻¹ where a is well conditioned."""
    a = np.asarray(a)
    dt = np.result_type(a, 1.0)
    if a.shape[-1] == 0:
        return np.zeros(a.shape, dt)
    inv, det, ok = _well_conditioned(a)
    out = (det[..., None, None] * inv).astype(dt, copy=False)
    if not np.all(ok):
        bad = ~ok
        out[bad] = _adjugate_svd(a[bad]).astype(dt, copy=False)
    return out


def _adjugate_derivative_svd(a, e):
    u, s, vh, c = _svd_gauge(a)
    _, q = _exclusive_products(s)
    v = np.conj(np.swapaxes(vh, -1, -2))
    uh = np.conj(np.swapaxes(u, -1, -2))
    et = uh @ e @ v
    n = s.shape[-1]
    d = np.diagonal(et, 0, -2, -1)
    diag = np.einsum("...ik,...k->...i", q, d)
    t = np.where(np.eye(n, dtype=bool), diag[..., None, :], -q * et)
    return c[..., None, None] * (v @ t @ uh)


def _adjugate_derivative(a, e):
    """D adj(a)[e], linear in e: with a = U S Vᴴ and Ẽ = Uᴴ e V,
    D adj(a)[e] = c V T(Ẽ) Uᴴ, T(Ẽ)_ii = sum_{k != i} q_ik Ẽ_kk, T(Ẽ)_ij = -q_ij Ẽ_ij
    (derivation (LA2)); det(a) (tr(a⁻¹ e) a⁻¹ - a⁻¹ e a⁻¹) where a is well conditioned."""
    a, e = np.asarray(a), np.asarray(e)
    a, e = np.broadcast_arrays(a, e)
    dt = np.result_type(a, e, 1.0)
    if a.shape[-1] == 0:
        return np.zeros(a.shape, dt)
    inv, det, ok = _well_conditioned(a)
    ie = inv @ e
    tr = np.trace(ie, axis1=-2, axis2=-1)
    out = det[..., None, None] * (tr[..., None, None] * inv - ie @ inv)
    out = out.astype(np.result_type(out, dt), copy=True)
    if not np.all(ok):
        bad = ~ok
        out[bad] = _adjugate_derivative_svd(a[bad], e[bad])
    return (out if dt.kind == "c" else np.real(out)).astype(dt, copy=False)


det = primitive(np.linalg.det)
inv = primitive(_inv, name="inv")
solve = primitive(_solve, name="solve")
_adj_p = primitive(_adjugate, name="adjugate")
_dadj_p = primitive(_adjugate_derivative, name="adjugate_derivative")
cholesky = primitive(np.linalg.cholesky)
_norm_p = primitive(np.linalg.norm, name="norm")  # vector norms and Frobenius


def _logdet(a):
    """log|det a| for real a; the (holomorphic) complex log det for complex a."""
    sign, logabs = np.linalg.slogdet(a)
    if not np.iscomplexobj(a):
        return logabs
    with np.errstate(divide="ignore"):  # sign 0 at a singular a: log 0 = -inf, as logabs
        return np.log(sign) + logabs


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


def _eig_packed(a):
    """eig as one complex array [..., n+1, n]: row 0 the eigenvalues, rows 1.. the vectors."""
    w, v = np.linalg.eig(a)
    dt = np.result_type(w.dtype, v.dtype, np.complex64)
    return np.concatenate([w[..., None, :].astype(dt), v.astype(dt)], axis=-2)


def _pinv(a, rcond=None, hermitian=False):
    return np.linalg.pinv(a, rcond=rcond, hermitian=hermitian)


_logdet_p = primitive(_logdet, name="slogdet")
_eigh_p = primitive(_eigh_packed, name="eigh")
_svd_p = primitive(_svd_packed, name="svd")
_svdvals_p = primitive(_svdvals, name="svdvals")
_qr_p = primitive(_qr_packed, name="qr")
_eig_p = primitive(_eig_packed, name="eig")
_pinv_p = primitive(_pinv, name="pinv")


# ---------------------------------------------------------------- unpacking wrappers
_traced = is_tracer


def _slogdet_sign(a):
    return np.linalg.slogdet(a)[0]


def slogdet(a):
    """``numpy.linalg.slogdet``: ``(sign, logabsdet)``, both differentiable for complex ``a``
    (the sign of a real matrix is piecewise constant and comes back plain)."""
    if not _traced(a):
        return np.linalg.slogdet(a)
    plain_sign = _util.value_mask(_slogdet_sign, a)  # recomputed under diffsci.jit
    ld = _logdet_p(a)
    if not np.iscomplexobj(getval(a)):
        return SlogdetResult(plain_sign, ld)
    sign = W.where(_util.value_mask(np.equal, plain_sign, 0), 0, W.exp(1j * W.imag(ld)))
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


def eig(a):
    """``numpy.linalg.eig``: eigenvalues and unit-norm right eigenvectors, differentiable.

    One primitive (``_eig_p``); the rules are those of derivation (LA6): with
    ``P = V⁻¹ Ȧ V``, ``ẇ = diag(P)`` and ``V̇ = V C``, ``C_ij = P_ij / (w_j - w_i)`` off the
    diagonal and ``Re C_kk`` keeping ``‖v_k‖ = 1``; reverse mode is the adjoint
    ``Ā = V⁻ᴴ (diag(w̄) + conj(F)∘(G - VᴴV diag(Re G))_off) Vᴴ``, ``G = Vᴴ V̄``.

    At a repeated eigenvalue, losses of the eigenvalues alone keep their exact gradient;
    any loss through the eigenvectors gets NaN there (LA6).

    Args:
        a: (..., n, n) real or complex matrix with distinct eigenvalues (where
            eigenvector derivatives are wanted; eigenvalue derivatives need only simple
            eigenvalues, or a diagonalizable matrix for their symmetric functions).

    Returns:
        NumPy's ``EigResult(eigenvalues, eigenvectors)``: complex, or real for real ``a``
        whose eigenvalues are all real (as NumPy).

    Raises:
        LinAlgError: no convergence (NumPy's).

    Example:
        >>> import diffsci as ds
        >>> import diffsci.numpy as dnp
        >>> ds.grad(lambda a: dnp.sum(dnp.real(eig(a).eigenvalues)))(np.diag([1.0, 2.0]))
        array([[1., 0.],
               [0., 1.]])

    References:
        M. Giles (2008), §3.1; diffsci/DERIVATIONS.md, (LA6).  A loss must not depend on the
        phase of the eigenvectors (LAPACK's gauge makes the largest entry real; the rules use
        another).
    """
    if not _traced(a):
        return np.linalg.eig(a)
    p = _eig_p(a)
    w = W.getitem(p, (Ellipsis, 0, slice(None)))
    v = W.getitem(p, (Ellipsis, slice(1, None), slice(None)))
    if not np.iscomplexobj(getval(a)) and _util.observed(_all_real, w):  # a guard under jit
        w, v = W.real(w), W.real(v)  # NumPy returns real results then
    return EigResult(w, v)


def _all_real(w):
    return bool(np.all(np.imag(w) == 0))


def eigvals(a):
    """``numpy.linalg.eigvals``: the eigenvalues of :func:`eig`, differentiable (LA6).

    Args:
        a: (..., n, n) real or complex matrix (simple eigenvalues where differentiated).

    Returns:
        The eigenvalues (complex, or real as NumPy returns them).

    Example:
        >>> eigvals(np.diag([1.0, 2.0]))
        array([1., 2.])

    References:
        diffsci/DERIVATIONS.md, (LA6).
    """
    if not _traced(a):
        return np.linalg.eigvals(a)
    return eig(a).eigenvalues


def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """``numpy.linalg.pinv``: the Moore-Penrose pseudo-inverse, differentiable.

    One primitive; its rules (derivation (LA7)) hold where the rank is locally constant
    (singular values below the cut-off are treated as exact zeros):
    ``Ẋ = -X Ȧ X + X Xᴴ Ȧᴴ (I - A X) + (I - X A) Ȧᴴ Xᴴ X`` and its adjoint, written with
    diffsci operations, so every order works.

    Args:
        a: (..., m, n) real or complex matrix.
        rcond, rtol: NumPy's relative cut-off for small singular values (one of them).
        hermitian: NumPy's (a is Hermitian).

    Returns:
        The (..., n, m) pseudo-inverse.

    Example:
        >>> pinv(np.array([[2.0, 0.0]]))
        array([[0.5],
               [0. ]])

    References:
        G. H. Golub and V. Pereyra, "The differentiation of pseudo-inverses and nonlinear
        least squares problems whose variables separate", SIAM J. Numer. Anal. 10 (1973),
        eq. (4.12); diffsci/DERIVATIONS.md, (LA7).
    """
    if rtol is not None:
        if rcond is not None:
            raise ValueError("diffsci.numpy.linalg.pinv: give rcond or rtol, not both")
        rcond = rtol
    if not _traced(a):
        return np.linalg.pinv(a, rcond=rcond, hermitian=hermitian)
    return _pinv_p(a, rcond=rcond, hermitian=hermitian)


def lstsq(a, b, rcond=None):
    """``numpy.linalg.lstsq``: the minimum-norm least-squares solution, differentiable.

    ``x = pinv(a, rcond) @ b`` (the same solution NumPy's SVD-based driver returns, with the
    same cut-off ``rcond`` relative to the largest singular value, default
    ``max(m, n) eps``), so its derivative is that of :func:`pinv` (LA7).

    Args:
        a: (m, n) real or complex matrix.
        b: (m,) or (m, k) right-hand side(s).
        rcond: NumPy's cut-off for small singular values.

    Returns:
        ``(x, residuals, rank, s)`` as NumPy: residuals (squared 2-norms of ``b - a x`` per
        column, differentiable) only when rank = n < m, else an empty array; rank plain;
        ``s`` the singular values (differentiable).

    Raises:
        ValueError: ``a`` is not 2-D or ``b`` has the wrong number of rows.

    Example:
        >>> lstsq(np.array([[1.0], [1.0]]), np.array([1.0, 3.0]))[0]
        array([2.])

    References:
        Golub & Pereyra (1973); diffsci/DERIVATIONS.md, (LA7).
    """
    if not (_traced(a) or _traced(b)):
        return np.linalg.lstsq(a, b, rcond=rcond)
    shape_a, shape_b = np.shape(getval(a)), np.shape(getval(b))
    if len(shape_a) != 2 or len(shape_b) not in (1, 2) or shape_b[0] != shape_a[0]:
        raise ValueError(
            f"diffsci.numpy.linalg.lstsq: a must be (m, n) and b (m,) or (m, k); got shapes "
            f"{shape_a} and {shape_b}")
    m, n = shape_a
    cut = max(m, n) * np.finfo(np.result_type(getval(a), 1.0)).eps if rcond is None else rcond
    x = W.matmul(pinv(a, rcond=cut), b)
    rank = np.linalg.matrix_rank(getval(a), tol=None if rcond is None else
                                 rcond * np.max(np.linalg.svd(getval(a), compute_uv=False),
                                                initial=0))
    s = _svdvals_p(a)
    if rank == n and m > n:
        r = W.subtract(b, W.matmul(a, x))
        res = W.sum(W.real(W.multiply(W.conj(r), r)), axis=0)
        if len(shape_b) == 1:
            res = W.reshape(res, (1,))
    else:
        res = np.empty((0,), np.result_type(getval(a), getval(b), 1.0).type(0).real.dtype)
    return x, res, rank, s


matrix_rank = nondifferentiable(np.linalg.matrix_rank, name="matrix_rank")


def cond(x, p=None):
    """``numpy.linalg.cond``: the condition number, differentiable.

    ``p`` None, 2, -2: the ratio of extreme singular values (through :func:`svdvals`);
    otherwise ``norm(x, p) · norm(inv(x), p)`` over the last two axes.

    Args:
        x: (..., m, n) matrix (square for p other than None, ±2).
        p: NumPy's order: None, 2, -2, 'fro', 'nuc', 1, -1, inf, -inf.

    Returns:
        The condition number(s), shape ``x.shape[:-2]``.

    Raises:
        LinAlgError: ``inv`` of a singular ``x`` (p other than None, ±2), naming inv.

    Example:
        >>> float(cond(np.diag([4.0, 2.0])))
        2.0

    References:
        Golub & Van Loan, "Matrix Computations" (4th ed.), §2.6.2.
    """
    if not _traced(x):
        return np.linalg.cond(x, p)
    if p in (None, 2, -2):
        s = _svdvals_p(x)
        hi = W.getitem(s, (Ellipsis, 0))
        lo = W.getitem(s, (Ellipsis, -1))
        return W.true_divide(lo, hi) if p == -2 else W.true_divide(hi, lo)
    return W.multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))


# ---------------------------------------------------------------- norms
def _keep(r, axes, keepdims):
    return W.expand_dims(r, tuple(sorted(axes))) if keepdims else r


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's keyword
    """``numpy.linalg.norm``: vector norms (any ord; gradient 0 at the zero vector) and
    matrix norms ('fro', 'nuc', ±1, ±2, ±inf; the spectral ones through the SVD)."""
    if isinstance(x, (list, tuple)) and _traced_tree(x):  # a Python list of traced values
        x = _asarray(x)
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
from ._extra import tensorinv, tensorsolve  # noqa: E402

__all__ += ["tensorinv", "tensorsolve"]
