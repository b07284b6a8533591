"""``diffsci.scipy.linalg``: scipy.linalg, differentiable (real and complex).

Every function takes SciPy's signature.  On plain arrays it *is* SciPy's
function; when an argument is traced it is built from primitives:

* where the maths is NumPy's it wraps :mod:`diffsci.numpy.linalg` (``inv``,
  ``det``, ``slogdet``, ``cholesky``, ``svd``, ``qr``, ``norm``, the general
  ``solve``), composed with the masks that say which entries SciPy's solver
  reads (``assume_a='pos'`` reads one triangle, ``'diagonal'`` the diagonal ...),
  so the derivative is that of SciPy's function exactly;
* ``solve_triangular``, ``eigh`` (standard and generalized), ``expm`` and
  ``expm_frechet`` are primitives of this module.  ``eigh`` calls SciPy's
  driver (its eigenvector signs differ from NumPy's) and reuses the reverse-mode
  rule of ``diffsci.numpy.linalg.eigh``; ``expm``'s rules are Fréchet
  derivatives, whose own rules are Fréchet derivatives of a 2n x 2n block
  matrix, so every order works.

Conventions: eigenvector (singular-vector) derivatives are undefined at repeated
eigenvalues (singular values); a loss must not depend on their sign/phase (the gauge).  At a
repeated value a spectral loss (sum of eigenvalues, ``tr f(A)``, even computed through the
eigenvectors) still gets its exact gradient, a loss looking inside the eigenspace gets NaN
(diffsci/DERIVATIONS.md, LA4).  ``det`` is differentiable at singular matrices (its gradient
is the adjugate, LA1-LA2); ``slogdet``'s derivative there raises.  ``cholesky``, ``eigh``, the
symmetric ``solve`` variants and ``solveh_banded`` read one triangle, so their gradients live
in it.  ``lu_factor``/``lu`` differentiate with the pivots of the plain value; ``schur``,
``polar``, ``sqrtm``, ``logm``, ``solve_sylvester`` and the Lyapunov solvers are described
in LA8-LA12.

Derivations: ``diffsci/DERIVATIONS.md``, section "diffsci.scipy.linalg".
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sl

from .._core import defjvp, defvjp, getval, is_tracer, primitive
from ..numpy import _util
from ..numpy import linalg as dla
from ..numpy._util import cj, unbroadcast
from ..numpy._vjps_linalg import _eigh_vjp, _fold

__all__ = [
    "cho_factor", "cho_solve", "cholesky", "det", "eigh", "eigvalsh", "expm", "expm_frechet",
    "inv", "logm", "lu", "lu_factor", "lu_solve", "norm", "polar", "qr", "slogdet", "solve",
    "solve_banded", "solve_continuous_lyapunov", "solve_discrete_lyapunov", "solve_sylvester",
    "schur", "solve_triangular", "solveh_banded", "sqrtm", "svd", "svdvals",
]

LinAlgError = np.linalg.LinAlgError


# ---------------------------------------------------------------- helpers
def _traced(*xs):
    return any(is_tracer(x) for x in xs)


def _H(x):
    return np.swapaxes(cj(x), -1, -2)


def _eye(n):
    return np.eye(n, dtype=bool)


def _like(c, x):
    """Cotangent ``c`` for ``x``: its real part when ``x`` is real."""
    return np.real(c) if np.iscomplexobj(getval(c)) and not np.iscomplexobj(getval(x)) else c


def _square(a, fname, arg="a"):
    shape = np.shape(getval(a))
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(
            f"diffsci.scipy.linalg.{fname}: {arg} must be a square matrix or a stack of them "
            f"(shape (..., n, n)), got shape {shape}"
        )
    return shape[-1]


def _rows(b, n, fname):
    shape = np.shape(getval(b))
    rows = shape[0] if len(shape) == 1 else shape[-2] if len(shape) >= 2 else None
    if rows != n:
        raise ValueError(
            f"diffsci.scipy.linalg.{fname}: b must have {n} rows (a is {n} x {n}), got shape "
            f"{shape}"
        )


def _one_triangle(a, lower, conj=True):
    """The matrix a solver sees when it reads one triangle of ``a``: Hermitian with a real
    diagonal (``conj=True``, LAPACK's he/po routines) or complex symmetric (sy routines)."""
    tri, k = (np.tril, -1) if lower else (np.triu, 1)
    strict = tri(a, k)
    mirror = np.swapaxes(cj(strict) if conj else strict, -1, -2)
    diag = np.real(a) if conj and np.iscomplexobj(getval(a)) else a
    return np.where(_eye(np.shape(getval(a))[-1]), diag, strict + mirror)


def _band(a, kl, ku):
    n = np.shape(getval(a))[-1]
    mask = np.tril(np.triu(np.ones((n, n), bool), -kl), ku)
    return np.where(mask, a, 0)


# assume_a -> the matrix the solver reads, as a function of (a, lower).  SciPy's names.
_STRUCTURES = {
    "general": lambda a, lower: a,
    "symmetric": lambda a, lower: _one_triangle(a, lower, conj=False),
    "hermitian": lambda a, lower: _one_triangle(a, lower),
    "positive definite": lambda a, lower: _one_triangle(a, lower),
    "diagonal": lambda a, lower: np.where(_eye(np.shape(getval(a))[-1]), a, 0),
    "tridiagonal": lambda a, lower: _band(a, 1, 1),
    # SciPy detects the band from the data, so perturbing an entry outside it changes the
    # band: as a function of a, 'banded' is the general solve.
    "banded": lambda a, lower: a,
    "upper triangular": lambda a, lower: np.triu(a),
    "lower triangular": lambda a, lower: np.tril(a),
}
_ALIASES = {None: "general", "gen": "general", "sym": "symmetric", "her": "hermitian",
            "pos": "positive definite"}


def _structure(assume_a, fname):
    key = _ALIASES.get(assume_a, assume_a)
    if key not in _STRUCTURES:
        raise ValueError(
            f"diffsci.scipy.linalg.{fname}: assume_a must be one of "
            f"{sorted(k for k in _ALIASES if k)} or {sorted(_STRUCTURES)}, got {assume_a!r}"
        )
    return key


class _singular_names:
    """Re-raise diffsci.numpy.linalg's singular-matrix error under this module's name."""

    def __init__(self, fname):
        self.fname = fname

    def __enter__(self):
        return self

    def __exit__(self, typ, err, tb):
        if typ is not None and issubclass(typ, LinAlgError) and "is singular" in str(err):
            raise LinAlgError(
                f"diffsci.scipy.linalg.{self.fname}: a is singular; its {self.fname} and their "
                f"derivatives do not exist there (use lstsq/pinv for a least-squares answer)"
            ) from None
        return False


# ---------------------------------------------------------------- solve, inv, det
def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    """``scipy.linalg.solve``: x with ``a @ x = b``, differentiable in ``a`` and ``b``.

    The derivative is that of SciPy's function: with ``assume_a`` 'sym', 'her'
    or 'pos' only the triangle chosen by ``lower`` is read (so the gradient of
    ``a`` lives there); 'diagonal', 'tridiagonal' and the triangular structures
    read only their entries.  ``None`` and 'banded' detect the structure from
    the data, so perturbing any entry matters: they differentiate as 'gen'.  Traced calls go through
    :func:`diffsci.numpy.linalg.solve` (or :func:`solve_triangular`).

    Args:
        a: (..., n, n) real or complex matrix.
        b: (n,) vector or (..., n, k) right-hand sides.
        lower: which triangle the symmetric structures read.
        overwrite_a, overwrite_b, check_finite: SciPy's; ignored for traced input.
        assume_a: None, 'gen', 'sym', 'her', 'pos', 'diagonal', 'tridiagonal',
            'banded', 'upper triangular', 'lower triangular' (SciPy's long names too).
        transposed: solve ``a.T @ x = b`` (real ``a`` only, as in SciPy).

    Returns:
        x, shaped like ``b`` (broadcast over the stack).

    Raises:
        ValueError: ``a`` is not square, ``b`` has the wrong number of rows, or
            ``assume_a`` is unknown.
        NotImplementedError: ``transposed=True`` with complex ``a``.
        LinAlgError: ``a`` is singular.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda b: solve(2 * np.eye(2), b).sum())(np.ones(2))
        array([0.5, 0.5])

    References:
        M. Giles, "An extended collection of matrix derivative results for
        forward and reverse mode algorithmic differentiation" (2008), the
        matrix inverse product.
    """
    kind = _structure(assume_a, "solve")
    n = _square(a, "solve")
    _rows(b, n, "solve")
    if not _traced(a, b):
        return sl.solve(a, b, lower=lower, overwrite_a=overwrite_a, overwrite_b=overwrite_b,
                        check_finite=check_finite, assume_a=assume_a, transposed=transposed)
    if transposed and np.iscomplexobj(getval(a)):
        raise NotImplementedError(
            "diffsci.scipy.linalg.solve: transposed=True is not supported for complex a (as in "
            "SciPy); solve with np.swapaxes(a, -1, -2) instead")
    if kind in ("upper triangular", "lower triangular"):
        return solve_triangular(a, b, trans=1 if transposed else 0,
                                lower=kind == "lower triangular")
    m = _STRUCTURES[kind](a, lower)
    with _singular_names("solve"):
        return dla.solve(np.swapaxes(m, -1, -2) if transposed else m, b)


def inv(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    """``scipy.linalg.inv``, differentiable: ``ā = -a⁻ᴴ ḡ a⁻ᴴ``.

    ``assume_a`` and ``lower`` select which entries are read, as in :func:`solve`.

    Args:
        a: (..., n, n) real or complex matrix.
        overwrite_a, check_finite: SciPy's; ignored for traced input.
        assume_a, lower: as in :func:`solve`.

    Returns:
        The inverse, shaped like ``a``.

    Raises:
        ValueError: ``a`` is not square, or ``assume_a`` is unknown.
        LinAlgError: ``a`` is singular.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda a: inv(a)[0, 0])(2 * np.eye(2))
        array([[-0.25, -0.  ],
               [-0.  , -0.  ]])

    References:
        Giles (2008), the inverse.
    """
    kind = _structure(assume_a, "inv")
    _square(a, "inv")
    if not is_tracer(a):
        if kind == "diagonal":  # SciPy 1.17 returns a's off-diagonal entries unchanged there
            a = _STRUCTURES[kind](np.asarray(a), lower)
        return sl.inv(a, overwrite_a=overwrite_a, check_finite=check_finite, assume_a=assume_a,
                      lower=lower)
    with _singular_names("inv"):
        return dla.inv(_STRUCTURES[kind](a, lower))


def det(a, overwrite_a=False, check_finite=True):
    """``scipy.linalg.det``, differentiable: ``ā = conj(det a) ḡ a⁻ᴴ``.

    Args:
        a: (..., n, n) real or complex matrix.
        overwrite_a, check_finite: SciPy's; ignored for traced input.

    Returns:
        The determinant(s), shape ``a.shape[:-2]``.

    Raises:
        ValueError: ``a`` is not square.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(det)(np.diag([2.0, 3.0]))
        array([[3., 0.],
               [0., 2.]])

    References:
        Giles (2008), the determinant (Jacobi's formula).
    """
    _square(a, "det")
    if not is_tracer(a):
        return sl.det(a, overwrite_a=overwrite_a, check_finite=check_finite)
    return dla.det(a)


def slogdet(a):
    """``(sign, log|det a|)``, differentiable (NumPy's ``slogdet``; SciPy has none).

    Args:
        a: (..., n, n) real or complex matrix.

    Returns:
        NumPy's ``SlogdetResult(sign, logabsdet)``; ``sign`` is plain for real
        ``a`` (piecewise constant) and traced for complex ``a``.

    Raises:
        ValueError: ``a`` is not square.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda a: slogdet(a)[1])(np.diag([2.0, 4.0]))
        array([[0.5 , 0.  ],
               [0.  , 0.25]])

    References:
        Giles (2008), the determinant.
    """
    _square(a, "slogdet")
    return dla.slogdet(a)


# ---------------------------------------------------------------- Cholesky
def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """``scipy.linalg.cholesky``: the *upper* factor U with ``a = Uᴴ U`` by default.

    As in SciPy only one triangle of ``a`` is read (the upper one unless
    ``lower``), so the gradient lives in that triangle.  Built on
    :func:`diffsci.numpy.linalg.cholesky` (upper: the conjugate transpose of the
    lower factor of ``aᴴ``).

    Args:
        a: (..., n, n) Hermitian positive-definite matrix.
        lower: return the lower factor L with ``a = L Lᴴ`` (reading the lower triangle).
        overwrite_a, check_finite: SciPy's; ignored for traced input.

    Returns:
        The triangular factor, shaped like ``a``.

    Raises:
        ValueError: ``a`` is not square.
        LinAlgError: ``a`` is not positive definite.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda a: cholesky(a)[0, 0])(np.diag([4.0, 1.0]))
        array([[0.25, 0.  ],
               [0.  , 0.  ]])

    References:
        I. Murray, "Differentiation of the Cholesky decomposition" (2016), eq. (10).
    """
    _square(a, "cholesky")
    if not is_tracer(a):
        return sl.cholesky(a, lower=lower, overwrite_a=overwrite_a, check_finite=check_finite)
    return dla.cholesky(a) if lower else _H(dla.cholesky(_H(a)))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``scipy.linalg.cho_factor``: ``(c, lower)`` for :func:`cho_solve`, differentiable.

    Args:
        a: (..., n, n) Hermitian positive-definite matrix.
        lower: factor as ``L Lᴴ`` (else ``Uᴴ U``).
        overwrite_a, check_finite: SciPy's; ignored for traced input.

    Returns:
        ``(c, lower)``.  For traced input ``c`` is the clean triangular factor
        (zeros in the other triangle, which SciPy leaves unspecified).

    Raises:
        ValueError: ``a`` is not square.
        LinAlgError: ``a`` is not positive definite.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda a: cho_solve(cho_factor(a), np.ones(2)).sum())(np.eye(2))
        array([[-1., -2.],
               [ 0., -1.]])

    References:
        Murray (2016), eq. (10).
    """
    _square(a, "cho_factor")
    if not is_tracer(a):
        return sl.cho_factor(a, lower=lower, overwrite_a=overwrite_a, check_finite=check_finite)
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """``scipy.linalg.cho_solve``: x with ``a @ x = b`` from ``cho_factor(a)``, differentiable.

    Two triangular solves (:func:`solve_triangular`), so only the factor's
    triangle is read and differentiated.

    Args:
        c_and_lower: ``(c, lower)`` as returned by :func:`cho_factor`.
        b: (n,) vector or (..., n, k) right-hand sides.
        overwrite_b, check_finite: SciPy's; ignored for traced input.

    Returns:
        x, shaped like ``b``.

    Raises:
        TypeError: ``c_and_lower`` is not a pair.
        ValueError: ``c`` is not square or ``b`` has the wrong number of rows.

    Example:
        >>> cho_solve(cho_factor(4 * np.eye(2)), np.ones(2))
        array([0.25, 0.25])

    References:
        Golub & Van Loan, "Matrix Computations" (4th ed.), algorithm 4.2.1.
    """
    if not isinstance(c_and_lower, (tuple, list)) or len(c_and_lower) != 2:
        raise TypeError(
            "diffsci.scipy.linalg.cho_solve: c_and_lower must be the pair (c, lower) returned "
            f"by cho_factor, got {type(c_and_lower).__name__}")
    c, lower = c_and_lower
    n = _square(c, "cho_solve", "c (the factor from cho_factor)")
    _rows(b, n, "cho_solve")
    if not _traced(c, b):
        return sl.cho_solve((c, lower), b, overwrite_b=overwrite_b, check_finite=check_finite)
    if lower:  # a = L Lᴴ: x = L⁻ᴴ (L⁻¹ b)
        return solve_triangular(c, solve_triangular(c, b, lower=True), trans=2, lower=True)
    return solve_triangular(c, solve_triangular(c, b, trans=2), lower=False)  # a = Uᴴ U


# ---------------------------------------------------------------- triangular solves
def _solve_tri_plain(a, b, trans=0, lower=False, unit_diagonal=False):
    return sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


_solve_tri = primitive(_solve_tri_plain, name="solve_triangular")
_TRANS = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}
# op(A)ᴴ written as op'(A') with A' = A or conj(A): trans -> (conjugate A?, trans')
_ADJOINT = {0: (False, 2), 1: (True, 0), 2: (False, 0)}


def _tri(x, lower, unit):
    """The entries a triangular solve reads: one triangle, without the diagonal if unit."""
    k = (-1 if lower else 1) if unit else 0
    return np.tril(x, k) if lower else np.triu(x, k)


def _op(m, trans):
    return m if trans == 0 else np.swapaxes(m if trans == 1 else cj(m), -1, -2)


def _tri_b_cotangent(g, a, trans, lower, unit):
    conj, t = _ADJOINT[trans]  # b̄ = op(A)⁻ᴴ ḡ
    return _solve_tri(cj(a) if conj else a, g, trans=t, lower=lower, unit_diagonal=unit)


def _tri_vjp_a(g, ans, a, b, trans=0, lower=False, unit_diagonal=False):
    # ā = mask(op⁻¹-adjoint of -b̄ xᴴ): -b̄ xᴴ, its transpose or its conjugate transpose.
    bb = _tri_b_cotangent(g, a, trans, lower, unit_diagonal)
    if np.ndim(b) == 1:
        m = -np.expand_dims(bb, -1) * np.expand_dims(cj(ans), -2)
    else:
        m = -(bb @ _H(ans))
    abar = m if trans == 0 else np.swapaxes(m if trans == 1 else cj(m), -1, -2)
    return _like(unbroadcast(_tri(abar, lower, unit_diagonal), a), a)


def _tri_vjp_b(g, ans, a, b, trans=0, lower=False, unit_diagonal=False):
    return _like(unbroadcast(_tri_b_cotangent(g, a, trans, lower, unit_diagonal), b), b)


def _tri_jvp_a(t, ans, a, b, trans=0, lower=False, unit_diagonal=False):
    # ẋ = -op(A)⁻¹ op(Ȧ) x, with Ȧ restricted to the entries read.
    ta = _op(_tri(t, lower, unit_diagonal), trans)
    rhs = (ta @ np.expand_dims(ans, -1))[..., 0] if np.ndim(b) == 1 else ta @ ans
    return -_solve_tri(a, rhs, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


defvjp(_solve_tri, _tri_vjp_a, _tri_vjp_b)
defjvp(_solve_tri, _tri_jvp_a,
       lambda t, ans, a, b, trans=0, lower=False, unit_diagonal=False: np.broadcast_to(
           _solve_tri(a, t, trans=trans, lower=lower, unit_diagonal=unit_diagonal),
           np.shape(getval(ans))))


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """``scipy.linalg.solve_triangular``: x with ``op(a) @ x = b``, differentiable.

    One primitive.  Only the triangle of ``a`` that is read (without the
    diagonal when ``unit_diagonal``) receives a gradient:
    ``b̄ = op(a)⁻ᴴ ḡ`` and ``ā = mask(-b̄ xᴴ)`` (transposed or conjugate-transposed
    for ``trans`` 1 or 2).  The rules call the primitive itself, so every order works.

    Args:
        a: (..., n, n) triangular matrix (the other triangle is ignored).
        b: (n,) vector or (..., n, k) right-hand sides.
        trans: 0/'N' (a), 1/'T' (aᵀ) or 2/'C' (aᴴ).
        lower: ``a`` is lower triangular (else upper).
        unit_diagonal: the diagonal is taken as ones (and not read).
        overwrite_b, check_finite: SciPy's; ignored for traced input.

    Returns:
        x, shaped like ``b`` (broadcast over the stack).

    Raises:
        ValueError: ``a`` is not square, ``b`` has the wrong number of rows, or
            ``trans`` is not one of 0, 1, 2, 'N', 'T', 'C'.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda a: solve_triangular(a, np.ones(2)).sum())(np.eye(2))
        array([[-1., -1.],
               [ 0., -1.]])

    References:
        Giles (2008), the matrix inverse product; diffsci/DERIVATIONS.md, (L2).
    """
    if trans not in _TRANS:
        raise ValueError(f"diffsci.scipy.linalg.solve_triangular: trans must be 0, 1, 2, 'N', "
                         f"'T' or 'C', got {trans!r}")
    n = _square(a, "solve_triangular")
    _rows(b, n, "solve_triangular")
    if not _traced(a, b):
        return sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal,
                                   overwrite_b=overwrite_b, check_finite=check_finite)
    return _solve_tri(a, b, trans=_TRANS[trans], lower=bool(lower),
                      unit_diagonal=bool(unit_diagonal))


# ---------------------------------------------------------------- Hermitian eigenproblems
def _pack(w, v):
    """eigh's results as one array [..., n+1, n] (diffsci.numpy.linalg's layout)."""
    return np.concatenate([np.expand_dims(w, -2).astype(v.dtype), v], axis=-2)


def _eigh_plain(a, lower=True, driver=None):
    return _pack(*sl.eigh(a, lower=lower, driver=driver))


def _geigh_plain(a, b, lower=True, driver=None):
    return _pack(*sl.eigh(a, b, lower=lower, driver=driver))


_eigh_p = primitive(_eigh_plain, name="eigh")
_geigh_p = primitive(_geigh_plain, name="eigh")


def _unpack(p):
    w, v = p[..., 0, :], p[..., 1:, :]
    return (np.real(w) if np.iscomplexobj(getval(p)) else w), v


def _over_gaps(x, w):
    """x_ij / (w_j - w_i) off the diagonal, 0 on it; also 0 where x_ij = 0 at a repeated
    eigenvalue (a loss that does not look at those eigenvectors), inf/NaN where it does."""
    n = np.shape(getval(w))[-1]
    gap = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    zero = _eye(n) | ((gap == 0) & (x == 0))
    return np.where(zero, 0, x / np.where(zero, 1, gap))


def _eigh_rule(g, ans, a, lower=True, driver=None):
    # diffsci.numpy.linalg.eigh's rule; for eigenvalue-only cotangents ā = fold(V diag(w̄) Vᴴ)
    # directly, which stays exact at repeated eigenvalues (the general rule divides 0 by 0).
    if np.any(getval(g)[..., 1:, :] != 0):
        return _eigh_vjp(g, ans, a, "L" if lower else "U")
    w, v = _unpack(ans)
    gw = _unpack(g)[0]
    return _fold((v * np.expand_dims(gw, -2)) @ _H(v), lower)


def _geigh_vjp(first):
    # With G = Vᴴ V̄, F∘G = G_ij / (w_j - w_i) off the diagonal: ā = fold(V P Vᴴ),
    # b̄ = fold(V Q Vᴴ) for P = F∘G + diag(w̄), Q = -(F∘G) Λ - diag(w̄ w) - diag(Re G)/2.
    def rule(g, ans, a, b, lower=True, driver=None):
        w, v = _unpack(ans)
        gw, gv = _unpack(g)
        n = np.shape(getval(w))[-1]
        gg = _H(v) @ gv
        fg = _over_gaps(gg, w)
        if first:
            inner = fg + np.where(_eye(n), np.expand_dims(gw, -2), 0)
        else:
            inner = -(fg * np.expand_dims(w, -2)) - np.where(
                _eye(n), np.expand_dims(gw * w + 0.5 * np.real(np.diagonal(gg, 0, -2, -1)), -2),
                0)
        s = v @ inner @ _H(v)
        return _like(unbroadcast(_fold(s, lower), a if first else b), a if first else b)
    return rule


def _eig_tangent(ans, k=None, m=None):
    """Packed tangent of (w, V) from K = Vᴴ Ȧ V and M = Vᴴ Ḃ V: ẇ = diag(K - M Λ),
    V̇ = V C with C_ij = (K - M Λ)_ij / (w_j - w_i) (i ≠ j) and C_ii = -M_ii / 2."""
    w, v = _unpack(ans)
    n = np.shape(getval(w))[-1]
    x = k if m is None else (-(m * np.expand_dims(w, -2)) if k is None else
                              k - m * np.expand_dims(w, -2))
    c = _over_gaps(x, w) - (0 if m is None else np.where(_eye(n), 0.5 * m, 0))
    dw = np.diagonal(x, 0, -2, -1)
    return np.concatenate([np.expand_dims(dw, -2), v @ c], axis=-2)


def _sandwich(t, ans, lower):
    """Vᴴ T V for the Hermitian T read from one triangle of the tangent t."""
    v = _unpack(ans)[1]
    return _H(v) @ _one_triangle(t, lower) @ v


defvjp(_eigh_p, _eigh_rule)
defjvp(_eigh_p, lambda t, ans, a, lower=True, driver=None: _eig_tangent(
    ans, k=_sandwich(t, ans, lower)))
defvjp(_geigh_p, _geigh_vjp(True), _geigh_vjp(False))
defjvp(_geigh_p,
       lambda t, ans, a, b, lower=True, driver=None: _eig_tangent(
           ans, k=_sandwich(t, ans, lower)),
       lambda t, ans, a, b, lower=True, driver=None: _eig_tangent(
           ans, m=_sandwich(t, ans, lower)))


def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         type=1, check_finite=True, subset_by_index=None, subset_by_value=None,  # noqa: A002
         driver=None):
    """``scipy.linalg.eigh``: ``a v = w b v`` for Hermitian ``a`` (and positive-definite ``b``).

    One primitive calling SciPy's driver.  Reverse mode: for the standard
    problem the rule of :func:`diffsci.numpy.linalg.eigh`,
    ``ā = V (diag(w̄) + F∘(Vᴴ V̄)) Vᴴ`` with ``F_ij = 1/(w_j - w_i)``, folded onto
    the triangle read; the generalized problem adds ``b̄`` (derivation (L4)).
    Forward mode: ``ẇ = diag(Vᴴ ȧ V)``, ``V̇ = V (F∘(Vᴴ ȧ V))``.

    Degenerate eigenvalues (standard problem): eigenvalue gradients stay exact, and so do
    those of spectral losses computed through the eigenvectors (``tr(V f(Λ) Vᴴ)``); a loss
    that looks inside a degenerate eigenspace gets NaN (DERIVATIONS.md, LA4).  The
    generalized problem divides by ``w_j - w_i`` (inf/NaN there).  A loss must not depend
    on the sign (phase) of the eigenvectors.

    Args:
        a: (..., n, n) Hermitian matrix; only the triangle selected by ``lower`` is read.
        b: optional (..., n, n) Hermitian positive-definite matrix (same triangle read).
        lower: read the lower triangles (SciPy's default) or the upper ones.
        eigvals_only: return only the eigenvalues.
        type: 1 (``a v = w b v``) only for traced input.
        subset_by_index: ``(lo, hi)``: eigenvalues lo..hi inclusive (ascending).
        subset_by_value: ``(lo, hi)``: eigenvalues in the half-open interval (lo, hi]
            (one matrix, not a stack, for traced input).
        driver: SciPy's LAPACK driver (computed with the full spectrum when traced).
        overwrite_a, overwrite_b, check_finite: SciPy's; ignored for traced input.

    Returns:
        ``(w, v)`` (ascending real eigenvalues, eigenvectors in the columns of v), or ``w``.

    Raises:
        ValueError: ``a`` or ``b`` is not square, or their sizes differ.
        NotImplementedError: ``type`` other than 1 for traced input.
        LinAlgError: ``b`` is not positive definite, or no convergence.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda a: eigh(a, eigvals_only=True)[1])(np.diag([1.0, 2.0]))
        array([[0., 0.],
               [0., 1.]])

    References:
        M. Giles (2008), eigenvalues and eigenvectors; M. Seeger et al.,
        "Auto-differentiating linear algebra" (2017); diffsci/DERIVATIONS.md, (L3), (L4).
    """
    n = _square(a, "eigh")
    if b is not None and _square(b, "eigh", "b") != n:
        raise ValueError(f"diffsci.scipy.linalg.eigh: b must be {n} x {n} like a, got shape "
                         f"{np.shape(getval(b))}")
    if not _traced(a, b):
        return sl.eigh(a, b, lower=lower, eigvals_only=eigvals_only, overwrite_a=overwrite_a,
                       overwrite_b=overwrite_b, type=type, check_finite=check_finite,
                       subset_by_index=subset_by_index, subset_by_value=subset_by_value,
                       driver=driver)
    if type != 1:
        raise NotImplementedError(
            f"diffsci.scipy.linalg.eigh: type={type} is not differentiable here; only type=1 "
            f"(a v = w b v)")
    full_driver = None if subset_by_index is not None or subset_by_value is not None else driver
    p = (_eigh_p(a, lower=bool(lower), driver=full_driver) if b is None
         else _geigh_p(a, b, lower=bool(lower), driver=full_driver))
    w, v = _unpack(p)
    if subset_by_index is not None:
        lo, hi = subset_by_index
        w, v = w[..., lo:hi + 1], v[..., lo:hi + 1]
    elif subset_by_value is not None:
        lo, hi = subset_by_value
        # which eigenvalues are kept: a guard under diffsci.jit
        keep = _util.observed(lambda wv: np.nonzero((wv > lo) & (wv <= hi))[-1], w)
        w, v = w[..., keep], v[..., keep]
    return w if eigvals_only else (w, v)


def eigvalsh(a, b=None, *, lower=True, overwrite_a=False, overwrite_b=False, type=1,  # noqa: A002
             check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """``scipy.linalg.eigvalsh``: the eigenvalues of :func:`eigh`, differentiable.

    Eigenvalue gradients are ``V diag(w̄) Vᴴ`` (folded onto the triangle read):
    well defined even at repeated eigenvalues.

    Args:
        a, b, lower, type, subset_by_index, subset_by_value, driver: as in :func:`eigh`.
        overwrite_a, overwrite_b, check_finite: SciPy's; ignored for traced input.

    Returns:
        The ascending eigenvalues, shape (..., n) (or the selected subset).

    Raises:
        As :func:`eigh`.

    Example:
        >>> float(eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]]))[0])
        1.0

    References:
        Giles (2008), eigenvalues and eigenvectors.
    """
    return eigh(a, b, lower=lower, eigvals_only=True, overwrite_a=overwrite_a,
                overwrite_b=overwrite_b, type=type, check_finite=check_finite,
                subset_by_index=subset_by_index, subset_by_value=subset_by_value, driver=driver)


# ---------------------------------------------------------------- SVD and QR
def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """``scipy.linalg.svd``: ``a = U diag(s) Vh``, differentiable (via diffsci.numpy.linalg).

    Singular values are always differentiable (``ā = U diag(s̄) Vh``); singular
    vectors with ``full_matrices=False`` (or a square ``a``), away from repeated
    singular values, for losses that do not depend on their sign/phase.  With
    ``full_matrices=True`` on a non-square matrix a loss may not depend on the
    extra columns of U (rows of Vh), which are not unique.

    Args:
        a: (..., m, n) real or complex matrix.
        full_matrices: SciPy's default True; False gives the reduced factors.
        compute_uv: False returns only ``s``.
        lapack_driver: SciPy's; traced input always uses 'gesdd' (NumPy's),
            whose singular vectors are the plain call's for the default driver.
        overwrite_a, check_finite: SciPy's; ignored for traced input.

    Returns:
        ``(U, s, Vh)``, or ``s``.

    Raises:
        NotImplementedError: (in the backward pass) a loss depends on the extra
            columns of ``full_matrices=True``.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda a: svd(a, compute_uv=False)[0])(np.diag([3.0, 1.0]))
        array([[1., 0.],
               [0., 0.]])

    References:
        J. Townsend, "Differentiating the singular value decomposition" (2016);
        the rule of diffsci/numpy/_vjps_linalg.py.
    """
    if not is_tracer(a):
        return sl.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                      overwrite_a=overwrite_a, check_finite=check_finite,
                      lapack_driver=lapack_driver)
    if not compute_uv:
        return dla.svd(a, compute_uv=False)
    return tuple(dla.svd(a, full_matrices=full_matrices))


def svdvals(a, overwrite_a=False, check_finite=True):
    """``scipy.linalg.svdvals``: the singular values, differentiable (``ā = U diag(s̄) Vh``).

    Args:
        a: (..., m, n) real or complex matrix.
        overwrite_a, check_finite: SciPy's; ignored for traced input.

    Returns:
        The descending singular values, shape (..., min(m, n)).

    Example:
        >>> svdvals(np.diag([1.0, 3.0]))
        array([3., 1.])

    References:
        Townsend (2016).
    """
    if not is_tracer(a):
        return sl.svdvals(a, overwrite_a=overwrite_a, check_finite=check_finite)
    return dla.svd(a, compute_uv=False)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """``scipy.linalg.qr``: ``a = Q R`` (``a[:, P] = Q R`` with pivoting), differentiable.

    Built on :func:`diffsci.numpy.linalg.qr` (same LAPACK gauge: R has a real
    diagonal).  The pivoting permutation is computed on the plain value (it is
    piecewise constant) and returned as SciPy does.

    Args:
        a: (m, n) real or complex matrix (a stack too, without pivoting).
        mode: 'economic' (reduced Q, R), 'full' (differentiable when m <= n,
            where it equals 'economic'), 'r' (R only, m x n as in SciPy).
        pivoting: column pivoting; the permutation is returned last.
        overwrite_a, lwork, check_finite: SciPy's; ignored for traced input.

    Returns:
        ``(Q, R)``, ``(R,)`` for mode 'r', with ``P`` appended when pivoting.

    Raises:
        NotImplementedError: mode 'raw', or mode 'full' with m > n (the extra
            columns of Q are not unique), for traced input.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda a: qr(a, mode="r")[0][0, 0])(np.diag([2.0, 1.0]))
        array([[1., 0.],
               [0., 0.]])

    References:
        H.-J. Liao et al., "Differentiable programming tensor networks" (2019), eq. (12).
    """
    if not is_tracer(a):
        return sl.qr(a, overwrite_a=overwrite_a, lwork=lwork, mode=mode, pivoting=pivoting,
                     check_finite=check_finite)
    m, n = np.shape(getval(a))[-2:]
    if mode not in ("full", "economic", "r") or (mode == "full" and m > n):
        raise NotImplementedError(
            f"diffsci.scipy.linalg.qr: mode={mode!r} is not differentiable for a {m} x {n} "
            f"matrix (the extra columns of a full Q are not unique); use mode='economic' or 'r'")
    tail = ()
    if pivoting:
        perm = _util.observed(_qr_pivots, a)  # a guard under diffsci.jit
        a, tail = a[..., perm], (perm,)
    if mode == "r":
        r = dla.qr(a, mode="r")
        if m > n:  # SciPy's R is m x n
            r = np.concatenate([r, np.zeros((m - n, n), np.result_type(getval(r)))], axis=-2)
        return (r,) + tail
    return tuple(dla.qr(a, mode="reduced")) + tail


# ---------------------------------------------------------------- the matrix exponential
def _expm_plain(a):
    return sl.expm(a)


def _frechet_plain(a, e):
    out = sl.expm_frechet(a, e, compute_expm=False)  # float64 even for float32 input
    return out.astype(np.result_type(a, e), copy=False)


_expm_p = primitive(_expm_plain, name="expm")
_frechet_p = primitive(_frechet_plain, name="expm_frechet")


def _block(a, e):
    """The 2n x 2n block matrix [[a, e], [0, a]], whose exponential is
    [[expm(a), L(a, e)], [0, expm(a)]] (Higham, Functions of Matrices, SIAM 2008, ch. 3)."""
    zero = np.zeros(np.shape(getval(a)), np.result_type(getval(a), getval(e)))
    return np.concatenate([np.concatenate([a, e], axis=-1),
                           np.concatenate([zero, a], axis=-1)], axis=-2)


def _frechet_vjp_a(g, ans, a, e):
    # L(A, E) = expm(X)_12 for X = [[A, E], [0, A]]; X̄ = L(Xᴴ, [[0, G], [0, 0]]), Ā = X̄_11 + X̄_22.
    n = np.shape(getval(a))[-1]
    xbar = _frechet_p(_H(_block(a, e)), _block(np.zeros_like(getval(g)), g))
    return _like(xbar[..., :n, :n] + xbar[..., n:, n:], a)


def _frechet_jvp_a(t, ans, a, e):
    n = np.shape(getval(a))[-1]
    zero = np.zeros(np.shape(getval(t)), np.result_type(getval(t)))
    tt = np.concatenate([np.concatenate([t, zero], axis=-1),
                         np.concatenate([zero, t], axis=-1)], axis=-2)
    return _frechet_p(_block(a, e), tt)[..., :n, n:]


defvjp(_expm_p, lambda g, ans, a: _like(_frechet_p(_H(a), g), a))
defjvp(_expm_p, lambda t, ans, a: _frechet_p(a, t))
defvjp(_frechet_p, _frechet_vjp_a, lambda g, ans, a, e: _like(_frechet_p(_H(a), g), e))
defjvp(_frechet_p, _frechet_jvp_a, lambda t, ans, a, e: _frechet_p(a, t))


def expm(A):
    """``scipy.linalg.expm``: the matrix exponential, differentiable to any order.

    One primitive.  Forward mode is the Fréchet derivative ``L(A, Ȧ)``
    (``scipy.linalg.expm_frechet``); reverse mode its adjoint, which is again a
    Fréchet derivative: ``Ā = L(Aᴴ, Ḡ)`` because ``⟨Ḡ, L(A, E)⟩ = ⟨L(Aᴴ, Ḡ), E⟩``.
    Higher orders differentiate :func:`expm_frechet`.

    Args:
        A: (..., n, n) real or complex matrix.

    Returns:
        ``exp(A)``, shaped like ``A``.

    Raises:
        ValueError: ``A`` is not square.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda a: expm(a)[0, 0])(np.zeros((2, 2)))
        array([[1., 0.],
               [0., 0.]])

    References:
        A. H. Al-Mohy and N. J. Higham, "Computing the Fréchet derivative of the
        matrix exponential, with an application to condition number estimation",
        SIAM J. Matrix Anal. Appl. 30(4) (2009), 1639-1657, algorithm 6.4;
        diffsci/DERIVATIONS.md, (L5).
    """
    _square(A, "expm", "A")
    if not is_tracer(A):
        return sl.expm(A)
    return _expm_p(A)


def expm_frechet(A, E, method=None, compute_expm=True, check_finite=True):
    """``scipy.linalg.expm_frechet``: ``L(A, E)``, the derivative of expm at A along E.

    Differentiable in ``A`` and ``E`` to any order: ``L`` is linear in ``E``
    (adjoint ``L(Aᴴ, ·)``), and in ``A`` it is the corner block of the
    exponential of ``[[A, E], [0, A]]``, so its derivatives are Fréchet
    derivatives of that 2n x 2n matrix (derivation (L6)).

    Args:
        A, E: (..., n, n) real or complex matrices of one shape.
        method: SciPy's ('SPS' or 'blockEnlarge'); the traced computation uses SciPy's default.
        compute_expm: also return ``expm(A)`` (first), as SciPy does.
        check_finite: SciPy's; ignored for traced input.

    Returns:
        ``(expm(A), L(A, E))`` or ``L(A, E)``.

    Raises:
        ValueError: ``A`` or ``E`` is not square, or their shapes differ.

    Example:
        >>> expm_frechet(np.zeros((1, 1)), np.ones((1, 1)), compute_expm=False)
        array([[1.]])

    References:
        Al-Mohy & Higham (2009), algorithm 6.4; diffsci/DERIVATIONS.md, (L6).
    """
    _square(A, "expm_frechet", "A")
    if np.shape(getval(E)) != np.shape(getval(A)):
        raise ValueError(f"diffsci.scipy.linalg.expm_frechet: E must have A's shape "
                         f"{np.shape(getval(A))}, got {np.shape(getval(E))}")
    if not _traced(A, E):
        return sl.expm_frechet(A, E, method=method, compute_expm=compute_expm,
                               check_finite=check_finite)
    frechet = _frechet_p(A, E)
    return (expm(A), frechet) if compute_expm else frechet


# ---------------------------------------------------------------- norms
def norm(a, ord=None, axis=None, keepdims=False, check_finite=True):  # noqa: A002
    """``scipy.linalg.norm``: vector and matrix norms, differentiable.

    Wraps :func:`diffsci.numpy.linalg.norm`: vector p-norms (gradient 0 at the
    zero vector), Frobenius, nuclear and spectral norms (through the SVD), and
    the ±1/±inf matrix norms.

    Args:
        a: real or complex array.
        ord, axis, keepdims: as in SciPy/NumPy.
        check_finite: SciPy's; ignored for traced input.

    Returns:
        The norm(s).

    Raises:
        ValueError: an invalid ``ord`` or ``axis`` (NumPy's message).

    Example:
        >>> import diffsci as ds
        >>> ds.grad(norm)(np.array([3.0, 4.0]))
        array([0.6, 0.8])

    References:
        Giles (2008), matrix norms (through the SVD).
    """
    if isinstance(a, (list, tuple)) and any(is_tracer(x) for x in a):
        return dla.norm(a, ord=ord, axis=axis, keepdims=keepdims)  # a list of traced values
    if not is_tracer(a):
        return sl.norm(a, ord=ord, axis=axis, keepdims=keepdims, check_finite=check_finite)
    return dla.norm(a, ord=ord, axis=axis, keepdims=keepdims)


# ---------------------------------------------------------------- Sylvester and Lyapunov
def _sylvester_plain(a, b, q):
    return sl.solve_sylvester(a, b, q)


_sylv_p = primitive(_sylvester_plain, name="solve_sylvester")


def _sylv_adjoint(g, a, b):
    """Y with Aᴴ Y + Y Bᴴ = G: the adjoint of Q ↦ X (derivation (LA8))."""
    return _sylv_p(_H(a), _H(b), g)


defvjp(_sylv_p,
       lambda g, x, a, b, q: _like(-(_sylv_adjoint(g, a, b) @ _H(x)), a),
       lambda g, x, a, b, q: _like(-(_H(x) @ _sylv_adjoint(g, a, b)), b),
       lambda g, x, a, b, q: _like(_sylv_adjoint(g, a, b), q))
defjvp(_sylv_p,
       lambda t, x, a, b, q: _sylv_p(a, b, -(t @ x)),
       lambda t, x, a, b, q: _sylv_p(a, b, -(x @ t)),
       lambda t, x, a, b, q: _sylv_p(a, b, t))


def _square_pair(a, b, q, fname):
    n = _square(a, fname)
    m = _square(b, fname, "b")
    if np.shape(getval(q)) != (n, m):
        raise ValueError(f"diffsci.scipy.linalg.{fname}: q must have shape ({n}, {m}) for a "
                         f"{n} x {n} and b {m} x {m}, got {np.shape(getval(q))}")


def solve_sylvester(a, b, q):
    """``scipy.linalg.solve_sylvester``: X with ``a X + X b = q``, differentiable in all three.

    One primitive (Bartels-Stewart, SciPy's).  Forward: ``Ẋ = sylv(a, b, q̇ - ȧ X - X ḃ)``;
    reverse: with ``Y = sylv(aᴴ, bᴴ, ḡ)``, ``q̄ = Y``, ``ā = -Y Xᴴ``, ``b̄ = -Xᴴ Y``
    (derivation (LA8)).  The rules call the primitive, so every order works.

    Args:
        a: (n, n) real or complex matrix.
        b: (m, m) matrix; a and -b must have no common eigenvalue.
        q: (n, m) right-hand side.

    Returns:
        X, shape (n, m).

    Raises:
        ValueError: a or b is not square, or q's shape does not match.

    Example:
        >>> solve_sylvester(np.eye(2), np.eye(2), 2 * np.eye(2))
        array([[1., 0.],
               [0., 1.]])

    References:
        R. H. Bartels and G. W. Stewart, "Solution of the matrix equation AX + XB = C",
        CACM 15 (1972); diffsci/DERIVATIONS.md, (LA8).
    """
    _square_pair(a, b, q, "solve_sylvester")
    if not _traced(a, b, q):
        return sl.solve_sylvester(a, b, q)
    return _sylv_p(a, b, q)


def solve_continuous_lyapunov(a, q):
    """``scipy.linalg.solve_continuous_lyapunov``: X with ``a X + X aᴴ = q``, differentiable.

    :func:`solve_sylvester` with ``b = aᴴ``, so the derivative in ``a`` is the sum of its
    ``a`` and ``b`` rules (LA8).

    Args:
        a: (n, n) matrix with no pair of eigenvalues summing to 0 (λ_i + conj(λ_j) ≠ 0).
        q: (n, n) right-hand side.

    Returns:
        X, shape (n, n).

    Raises:
        ValueError: a is not square or q's shape does not match.

    Example:
        >>> solve_continuous_lyapunov(-np.eye(2), -2 * np.eye(2))
        array([[1., 0.],
               [0., 1.]])

    References:
        Bartels & Stewart (1972); diffsci/DERIVATIONS.md, (LA8).
    """
    _square_pair(a, a, q, "solve_continuous_lyapunov")
    if not _traced(a, q):
        return sl.solve_continuous_lyapunov(a, q)
    return _sylv_p(a, _H(a), q)


def solve_discrete_lyapunov(a, q, method=None):
    """``scipy.linalg.solve_discrete_lyapunov``: X with ``a X aᴴ - X + q = 0``, differentiable.

    Traced input is solved directly (SciPy's ``method='direct'``) as the n² x n² linear
    system ``(I - a ⊗ conj(a)) vec(X) = vec(q)`` (row-major vec) with
    :func:`diffsci.numpy.linalg.solve`, so its derivative is that of ``solve``, ``kron`` and
    the reshapes (every order).  O(n⁶): meant for n up to a few tens.

    Args:
        a: (n, n) matrix with no pair of eigenvalues with λ_i conj(λ_j) = 1.
        q: (n, n) right-hand side.
        method: SciPy's ('direct' or 'bilinear') for plain input; traced input uses 'direct'.

    Returns:
        X, shape (n, n).

    Raises:
        ValueError: a is not square or q's shape does not match.

    Example:
        >>> solve_discrete_lyapunov(np.zeros((2, 2)), np.eye(2))
        array([[1., 0.],
               [0., 1.]])

    References:
        SciPy's solve_discrete_lyapunov ('direct'); diffsci/DERIVATIONS.md, (LA8).
    """
    n = _square(a, "solve_discrete_lyapunov")
    _square_pair(a, a, q, "solve_discrete_lyapunov")
    if not _traced(a, q):
        return sl.solve_discrete_lyapunov(a, q, method=method)
    big = np.eye(n * n) - np.kron(a, cj(a))
    return np.reshape(dla.solve(big, np.reshape(q, (n * n,))), (n, n))


# ---------------------------------------------------------------- matrix functions
def _sqrtm_plain(a):
    return sl.sqrtm(a)


def _logm_plain(a):
    return sl.logm(a)


_sqrtm_p = primitive(_sqrtm_plain, name="sqrtm")
_logm_p = primitive(_logm_plain, name="logm")


def _corner(f, a, e):
    """The upper-right block of f([[a, e], [0, a]]): the Fréchet derivative L_f(a, e)."""
    n = np.shape(getval(a))[-1]
    return f(_block(a, e))[..., :n, n:]


# X = sqrtm(A): X Ẋ + Ẋ X = Ȧ; the adjoint solves Xᴴ Y + Y Xᴴ = Ḡ (LA9).
defjvp(_sqrtm_p, lambda t, x, a: _sylv_p(x, x, t))
defvjp(_sqrtm_p, lambda g, x, a: _like(_sylv_p(_H(x), _H(x), g), a))
# L = logm(A): L_log(A, E) is the corner block of logm([[A, E], [0, A]]), and its adjoint
# L_log(Aᴴ, ·) (LA9).
defjvp(_logm_p, lambda t, ans, a: _corner(_logm_p, a, t))
defvjp(_logm_p, lambda g, ans, a: _like(_corner(_logm_p, _H(a), g), a))


def sqrtm(A, disp=None, blocksize=None):
    """``scipy.linalg.sqrtm``: the principal square root, differentiable to any order.

    One primitive.  Forward: ``Ẋ`` solves the Sylvester equation ``X Ẋ + Ẋ X = Ȧ``;
    reverse: ``Ā = Y`` with ``Xᴴ Y + Y Xᴴ = Ḡ`` (derivation (LA9)); both call
    :func:`solve_sylvester` on the traced root, so higher orders follow.  Defined where A has
    no eigenvalue on the closed negative real axis (X then has no λ_i + λ_j = 0).

    Args:
        A: (n, n) real or complex matrix.
        disp, blocksize: SciPy's (deprecated there); passed on for plain input only.

    Returns:
        sqrt(A), shape (n, n) (complex where SciPy's is).

    Raises:
        ValueError: A is not square.

    Example:
        >>> sqrtm(np.diag([4.0, 9.0]))
        array([[2., 0.],
               [0., 3.]])

    References:
        N. J. Higham, "Functions of Matrices" (SIAM 2008), §6.1 (the Fréchet derivative of the
        square root); diffsci/DERIVATIONS.md, (LA9).
    """
    _square(A, "sqrtm", "A")
    if not is_tracer(A):
        kw = {k: v for k, v in (("disp", disp), ("blocksize", blocksize)) if v is not None}
        return sl.sqrtm(A, **kw)
    return _sqrtm_p(A)


def logm(A, disp=None):
    """``scipy.linalg.logm``: the principal logarithm, differentiable to any order.

    One primitive.  Its Fréchet derivative ``L(A, E)`` is the upper-right block of
    ``logm([[A, E], [0, A]])`` and the reverse rule ``L(Aᴴ, Ḡ)`` (derivation (LA9)); both
    call the primitive on the 2n x 2n block, so higher orders follow (each doubling n).

    Args:
        A: (n, n) real or complex matrix with no eigenvalue on the closed negative real axis.
        disp: SciPy's (deprecated there); passed on for plain input only.

    Returns:
        log(A), shape (n, n) (complex where SciPy's is).

    Raises:
        ValueError: A is not square.

    Example:
        >>> logm(np.diag([1.0, np.e]))
        array([[0., 0.],
               [0., 1.]])

    References:
        Higham (2008), §3.2 (the block formula) and §11; diffsci/DERIVATIONS.md, (LA9).
    """
    _square(A, "logm", "A")
    if not is_tracer(A):
        return sl.logm(A) if disp is None else sl.logm(A, disp=disp)
    return _logm_p(A)


# ---------------------------------------------------------------- polar decomposition
def _polar_plain(a):
    u, p = sl.polar(a)
    return np.concatenate([u, p.astype(u.dtype)], axis=-2)


_polar_p = primitive(_polar_plain, name="polar")


def _polar_parts(ans):
    """(u, p) from the packed [u; p] of shape (m + n, n)."""
    m = np.shape(getval(ans))[-2] - np.shape(getval(ans))[-1]
    return ans[..., :m, :], ans[..., m:, :]


def _right_div(x, p):
    """x p⁻¹ for Hermitian positive-definite p."""
    return _H(dla.solve(p, _H(x)))


def _polar_jvp(t, ans, a):
    # a = u p: M = uᴴ ȧ = Ω p + ṗ, Ω anti-Hermitian, ṗ Hermitian, so p Ω + Ω p = M - Mᴴ:
    # u̇ = u Ω (+ (I - u uᴴ) ȧ p⁻¹ for a tall a), ṗ = M - Ω p (LA10).
    u, p = _polar_parts(ans)
    m = _H(u) @ t
    om = _sylv_p(p, p, m - _H(m))
    du = u @ om
    if np.shape(getval(u))[-2] > np.shape(getval(u))[-1]:
        du = du + _right_div(t - u @ m, p)
    return np.concatenate([du, m - om @ p], axis=-2)


def _polar_vjp(g, ans, a):
    # Y = sylv(p, p, uᴴ ū - p̄ p), M̄ = p̄ + Y - Yᴴ, ā = u M̄ (+ (I - u uᴴ) ū p⁻¹, tall a) (LA10).
    u, p = _polar_parts(ans)
    gu, gp = _polar_parts(g)
    y = _sylv_p(p, p, _H(u) @ gu - gp @ p)
    abar = u @ (gp + y - _H(y))
    if np.shape(getval(u))[-2] > np.shape(getval(u))[-1]:
        abar = abar + _right_div(gu - u @ (_H(u) @ gu), p)
    return _like(abar, a)


defjvp(_polar_p, _polar_jvp)
defvjp(_polar_p, _polar_vjp)


def polar(a, side="right"):
    """``scipy.linalg.polar``: ``a = u p`` (right) or ``a = p u`` (left), differentiable.

    Traced input: full rank, m >= n for the right decomposition (m <= n for the left one),
    where the factors are smooth.  One primitive; with ``M = uᴴ ȧ`` the tangents are
    ``u̇ = u Ω + (I - u uᴴ) ȧ p⁻¹``, ``ṗ = M - Ω p`` where the anti-Hermitian Ω solves
    ``p Ω + Ω p = M - Mᴴ`` (derivation (LA10)); the left decomposition is the right one of
    ``aᴴ``.  The rules call :func:`solve_sylvester`, so
    higher orders follow.

    Args:
        a: (m, n) real or complex matrix of full rank (traced: m >= n for side 'right',
            m <= n for 'left').
        side: 'right' or 'left'.

    Returns:
        ``(u, p)``: u unitary, p Hermitian positive definite.

    Raises:
        ValueError: side is not 'right' or 'left'.
        NotImplementedError: a traced wide a for 'right' (tall for 'left'), where p is
            singular.

    Example:
        >>> polar(np.diag([2.0, -3.0]))[1]
        array([[2., 0.],
               [0., 3.]])

    References:
        N. J. Higham, "Functions of Matrices" (SIAM 2008), ch. 8; diffsci/DERIVATIONS.md, (LA10).
    """
    if side not in ("right", "left"):
        raise ValueError(f"diffsci.scipy.linalg.polar: side must be 'right' or 'left', got "
                         f"{side!r}")
    if not is_tracer(a):
        return sl.polar(a, side=side)
    shape = np.shape(getval(a))
    if len(shape) != 2 or (shape[0] < shape[1] if side == "right" else shape[0] > shape[1]):
        raise NotImplementedError(
            f"diffsci.scipy.linalg.polar: traced a must be m x n with m >= n for side='right' "
            f"(m <= n for 'left'; otherwise p is singular), got shape {shape}")
    if side == "left":
        u, p = _polar_parts(_polar_p(_H(a)))
        return _H(u), p
    return _polar_parts(_polar_p(a))


# ---------------------------------------------------------------- banded solves
def _dense_from_band(ab, lower_diags, upper_diags, n):
    """The n x n matrix with a[i, j] = ab[u + i - j, j] (LAPACK's band storage), built from
    diagonals, so entries of ab outside the band's triangle corners get no gradient."""
    out = 0
    for k in range(-lower_diags, upper_diags + 1):  # offset k = j - i
        row = ab[upper_diags - k]
        vals = row[k:] if k >= 0 else row[:n + k]
        out = out + np.diag(vals, k)
    return out


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """``scipy.linalg.solve_banded``: x with ``a x = b`` for a in band storage, differentiable.

    The traced path rebuilds the dense matrix from the diagonals of ``ab`` (entries of
    ``ab`` LAPACK does not read get gradient 0) and solves with
    :func:`diffsci.numpy.linalg.solve`, so it differentiates in ``ab`` and ``b`` to any
    order.  O(n³) instead of O(n (l + u)²): meant for modest n.

    Args:
        l_and_u: ``(l, u)``, the numbers of nonzero lower and upper diagonals.
        ab: (l + u + 1, n) band storage: ``ab[u + i - j, j] = a[i, j]``.
        b: (n,) or (n, k) right-hand side(s).
        overwrite_ab, overwrite_b, check_finite: SciPy's; ignored for traced input.

    Returns:
        x, shaped like b.

    Raises:
        ValueError: ab's shape does not match ``(l, u)`` or b has the wrong number of rows.
        LinAlgError: a is singular (naming diffsci.numpy.linalg.solve).

    Example:
        >>> solve_banded((0, 0), np.array([[2.0, 4.0]]), np.ones(2))
        array([0.5 , 0.25])

    References:
        LAPACK gbsv (band storage); diffsci/DERIVATIONS.md, (L1).
    """
    lo, up = (int(v) for v in l_and_u)
    shape = np.shape(getval(ab))
    if len(shape) != 2 or shape[0] != lo + up + 1:
        raise ValueError(f"diffsci.scipy.linalg.solve_banded: ab must have l + u + 1 = "
                         f"{lo + up + 1} rows (l, u = {lo}, {up}), got shape {shape}")
    n = shape[1]
    _rows(b, n, "solve_banded")
    if not _traced(ab, b):
        return sl.solve_banded((lo, up), ab, b, overwrite_ab=overwrite_ab,
                               overwrite_b=overwrite_b, check_finite=check_finite)
    return dla.solve(_dense_from_band(ab, lo, up, n), b)


def solveh_banded(ab, b, overwrite_ab=False, overwrite_b=False, lower=False,
                  check_finite=True):
    """``scipy.linalg.solveh_banded``: x with ``a x = b`` for Hermitian positive-definite a in
    band storage (one triangle), differentiable.

    The traced path rebuilds the Hermitian matrix from the stored triangle (the other is its
    conjugate mirror, the diagonal's real part, as LAPACK pbsv reads it) and solves with
    :func:`diffsci.numpy.linalg.solve`; the gradient lives in the entries read.

    Args:
        ab: (u + 1, n) band storage; upper form ``ab[u + i - j, j] = a[i, j]`` (i <= j), lower
            form (``lower=True``) ``ab[i - j, j] = a[i, j]`` (i >= j).
        b: (n,) or (n, k) right-hand side(s).
        lower: ab holds the lower triangle.
        overwrite_ab, overwrite_b, check_finite: SciPy's; ignored for traced input.

    Returns:
        x, shaped like b.

    Raises:
        ValueError: b has the wrong number of rows.
        LinAlgError: a is singular (naming diffsci.numpy.linalg.solve).

    Example:
        >>> solveh_banded(np.array([[2.0, 4.0]]), np.ones(2))
        array([0.5 , 0.25])

    References:
        LAPACK pbsv; diffsci/DERIVATIONS.md, (L1).
    """
    shape = np.shape(getval(ab))
    if len(shape) != 2:
        raise ValueError(f"diffsci.scipy.linalg.solveh_banded: ab must be 2-D (u + 1, n), got "
                         f"shape {shape}")
    k, n = shape[0] - 1, shape[1]
    _rows(b, n, "solveh_banded")
    if not _traced(ab, b):
        return sl.solveh_banded(ab, b, overwrite_ab=overwrite_ab, overwrite_b=overwrite_b,
                                lower=lower, check_finite=check_finite)
    tri = _dense_from_band(ab, k, 0, n) if lower else _dense_from_band(ab, 0, k, n)
    return dla.solve(_one_triangle(tri, lower), b)


# ---------------------------------------------------------------- LU
def _perm_from_piv(piv):
    """The row order ``perm`` with ``a[perm] = L U`` from LAPACK's swap sequence ``piv``."""
    perm = np.arange(len(piv))
    for i, p in enumerate(piv):
        perm[[i, p]] = perm[[p, i]]
    return perm


def _lu_plain(a, perm):
    """The packed factor of lu_factor(a); ``perm`` (its row order) is for the rules."""
    return sl.lu_factor(a, check_finite=False)[0]


_lu_p = primitive(_lu_plain, name="lu_factor")


def _lu_split(lu):
    n = np.shape(getval(lu))[-1]
    low = np.tril(lu, -1) + np.eye(n, dtype=np.result_type(getval(lu)))
    return low, np.triu(lu)


def _lu_jvp(t, lu, a, perm):
    # P A = L U: X = L⁻¹ (P Ȧ) U⁻¹, d(lu) = L stril(X) + triu(X) U (LA11).
    low, up = _lu_split(lu)
    x = _solve_tri(up, _H(_solve_tri(low, t[perm], lower=True, unit_diagonal=True)), trans=2)
    x = _H(x)  # X = L⁻¹ (P Ȧ) U⁻¹
    return low @ np.tril(x, -1) + np.triu(x) @ up


def _lu_vjp(g, lu, a, perm):
    # X̄ = stril(Lᴴ Ḡ) + triu(Ḡ Uᴴ), P Ā = L⁻ᴴ X̄ U⁻ᴴ (LA11).
    low, up = _lu_split(lu)
    xbar = np.tril(_H(low) @ g, -1) + np.triu(g @ _H(up))
    y = _solve_tri(low, xbar, trans=2, lower=True, unit_diagonal=True)  # L⁻ᴴ X̄
    pa = _H(_solve_tri(up, _H(y), lower=False))  # (U⁻¹ (L⁻ᴴ X̄)ᴴ)ᴴ = L⁻ᴴ X̄ U⁻ᴴ
    inv = np.argsort(perm)
    return _like(pa[inv], a)


defjvp(_lu_p, _lu_jvp)
defvjp(_lu_p, _lu_vjp)


def lu_factor(a, overwrite_a=False, check_finite=True):
    """``scipy.linalg.lu_factor``: ``(lu, piv)`` with ``P a = L U``, differentiable in ``lu``.

    The pivots are SciPy's for the plain value (piecewise constant); ``lu`` (L's strict
    lower triangle and U packed) is one primitive with ``X = L⁻¹ (P ȧ) U⁻¹``,
    ``d lu = L stril(X) + triu(X) U`` and the adjoint ``P ā = L⁻ᴴ (stril(Lᴴ ḡ) +
    triu(ḡ Uᴴ)) U⁻ᴴ`` (derivation (LA11)); its rules use :func:`solve_triangular`, so every
    order works.

    Args:
        a: (n, n) real or complex matrix (traced input: square).
        overwrite_a, check_finite: SciPy's; ignored for traced input.

    Returns:
        ``(lu, piv)`` as SciPy (piv plain).

    Raises:
        ValueError: traced a is not square.

    Example:
        >>> lu_factor(np.array([[2.0, 0.0], [0.0, 4.0]]))[0]
        array([[2., 0.],
               [0., 4.]])

    References:
        Golub & Van Loan, "Matrix Computations" (4th ed.), §3.2; diffsci/DERIVATIONS.md, (LA11).
    """
    if not is_tracer(a):
        return sl.lu_factor(a, overwrite_a=overwrite_a, check_finite=check_finite)
    _square(a, "lu_factor")
    if np.ndim(getval(a)) != 2:
        raise ValueError(f"diffsci.scipy.linalg.lu_factor: traced a must be one n x n matrix, "
                         f"got shape {np.shape(getval(a))}")
    piv = _util.observed(_pivots, a)  # piecewise constant: a guard under diffsci.jit
    return _lu_p(a, perm=_perm_from_piv(piv)), piv


def _qr_pivots(a):
    return sl.qr(a, mode="r", pivoting=True)[1]


def _pivots(a):
    return sl.lu_factor(a, check_finite=False)[1]


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """``scipy.linalg.lu_solve``: x with ``op(a) x = b`` from :func:`lu_factor`, differentiable.

    Two triangular solves and the row permutation (:func:`solve_triangular`), so it is
    differentiable in ``lu`` and ``b`` to any order.

    Args:
        lu_and_piv: ``(lu, piv)`` from :func:`lu_factor`.
        b: (n,) or (n, k) right-hand side(s).
        trans: 0 (a x = b), 1 (aᵀ x = b) or 2 (aᴴ x = b).
        overwrite_b, check_finite: SciPy's; ignored for traced input.

    Returns:
        x, shaped like b.

    Raises:
        TypeError: lu_and_piv is not a pair.
        ValueError: trans is not 0, 1, 2, or b has the wrong number of rows.

    Example:
        >>> lu_solve(lu_factor(2 * np.eye(2)), np.ones(2))
        array([0.5, 0.5])

    References:
        Golub & Van Loan (4th ed.), §3.2.
    """
    if not isinstance(lu_and_piv, (tuple, list)) or len(lu_and_piv) != 2:
        raise TypeError("diffsci.scipy.linalg.lu_solve: lu_and_piv must be the pair (lu, piv) "
                        f"returned by lu_factor, got {type(lu_and_piv).__name__}")
    lu, piv = lu_and_piv
    if trans not in (0, 1, 2):
        raise ValueError(f"diffsci.scipy.linalg.lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    n = _square(lu, "lu_solve", "lu (the factor from lu_factor)")
    _rows(b, n, "lu_solve")
    if not _traced(lu, b):
        return sl.lu_solve((lu, piv), b, trans=trans, overwrite_b=overwrite_b,
                           check_finite=check_finite)
    perm = _perm_from_piv(np.asarray(piv))
    if trans == 0:  # L U x = P b
        y = solve_triangular(lu, b[perm], lower=True, unit_diagonal=True)
        return solve_triangular(lu, y, lower=False)
    # op(a) = op(U) op(L) P, so op(U) op(L) (P x) = b
    y = solve_triangular(lu, b, trans=trans, lower=False)
    z = solve_triangular(lu, y, trans=trans, lower=True, unit_diagonal=True)
    return z[np.argsort(perm)]


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """``scipy.linalg.lu``: ``a = P L U``, differentiable in L and U (pivots piecewise constant).

    Built on :func:`lu_factor` (derivation (LA11)).

    Args:
        a: (n, n) real or complex matrix (traced input: square).
        permute_l: return ``(P L, U)``.
        p_indices: return the permutation as row indices ``perm`` (``a = L[perm] @ U``).
        overwrite_a, check_finite: SciPy's; ignored for traced input.

    Returns:
        ``(p, l, u)``, or ``(pl, u)`` with permute_l, as SciPy.

    Raises:
        ValueError: traced a is not square.

    Example:
        >>> lu(np.diag([2.0, 3.0]))[2]
        array([[2., 0.],
               [0., 3.]])

    References:
        Golub & Van Loan (4th ed.), §3.2.
    """
    if not is_tracer(a):
        return sl.lu(a, permute_l=permute_l, overwrite_a=overwrite_a,
                     check_finite=check_finite, p_indices=p_indices)
    packed, piv = lu_factor(a)
    perm = _perm_from_piv(piv)
    low, up = _lu_split(packed)
    inv = np.argsort(perm)
    if permute_l:
        return low[inv], up
    if p_indices:
        return inv, low, up
    p = np.eye(len(perm), dtype=np.result_type(getval(a), 1.0))[perm].T
    return p, low, up


# ---------------------------------------------------------------- Schur decomposition
def _schur_plain(a, output="complex"):
    t, z = sl.schur(a, output=output)
    return np.concatenate([t, z.astype(t.dtype)], axis=-2)


_schur_p = primitive(_schur_plain, name="schur")


def _schur_parts(ans):
    n = np.shape(getval(ans))[-1]
    return ans[..., :n, :], ans[..., n:, :]


def _lower_selector(n, dtype):
    """E (n, n, p) with E[i_k, j_k, k] = 1 for the p strictly lower pairs (i_k > j_k)."""
    i, j = np.tril_indices(n, -1)
    e = np.zeros((n, n, len(i)), dtype)
    e[i, j, np.arange(len(i))] = 1
    return i, j, e


def _schur_operator(t):
    """K with (Ω T - T Ω)_ij = Σ_kl K[(i,j),(k,l)] Ω_kl over strictly lower pairs (LA12):
    K[(i,j),(k,l)] = δ_ik T_lj - T_ik δ_lj (only strictly lower Ω enters below the diagonal)."""
    n = np.shape(getval(t))[-1]
    i, j = np.tril_indices(n, -1)
    eye = np.eye(n)
    r_i, r_j = i[:, None], j[:, None]
    c_k, c_l = i[None, :], j[None, :]
    return eye[r_i, c_k] * t[c_l, r_j] - t[r_i, c_k] * eye[c_l, r_j]


def _schur_jvp(t_dot, ans, a, output="complex"):
    # Zᴴ Ȧ Z = M = Ṫ + Ω T - T Ω, Ω = Zᴴ Ż anti-Hermitian (diagonal 0: the gauge): the strictly
    # lower part of M fixes Ω's lower part through K; Ṫ = triu(M - Ω T + T Ω), Ż = Z Ω (LA12).
    t, z = _schur_parts(ans)
    n = np.shape(getval(t))[-1]
    i, j, e = _lower_selector(n, np.result_type(getval(t)))
    m = _H(z) @ t_dot @ z
    om_low = np.tensordot(e, dla.solve(_schur_operator(t), m[i, j]), axes=1)
    om = om_low - _H(om_low)
    return np.concatenate([np.triu(m - om @ t + t @ om), z @ om], axis=-2)


def _schur_vjp(g, ans, a, output="complex"):
    # T̂ = triu(T̄), Ω̄ = Zᴴ Z̄ - (T̂ Tᴴ - Tᴴ T̂), ω̄ = (Ω̄ - Ω̄ᴴ)_low, m̄ = K⁻ᴴ ω̄,
    # Ā = Z (T̂ + embed(m̄)) Zᴴ (LA12).
    t, z = _schur_parts(ans)
    gt, gz = _schur_parts(g)
    n = np.shape(getval(t))[-1]
    i, j, e = _lower_selector(n, np.result_type(getval(t)))
    that = np.triu(gt)
    ombar = _H(z) @ gz - (that @ _H(t) - _H(t) @ that)
    wbar = (ombar - _H(ombar))[i, j]
    mbar = dla.solve(_H(_schur_operator(t)), wbar)
    return _like(z @ (that + np.tensordot(e, mbar, axes=1)) @ _H(z), a)


defjvp(_schur_p, _schur_jvp)
defvjp(_schur_p, _schur_vjp)


def schur(a, output="real", lwork=None, overwrite_a=False, sort=None, check_finite=True):
    """``scipy.linalg.schur``: ``a = Z T Zᴴ`` with T upper triangular, differentiable.

    Traced input: ``output='complex'``, or ``'real'`` when every eigenvalue is real (T is
    then triangular; 2 x 2 blocks raise), distinct eigenvalues, no ``sort``.  One
    primitive: with ``M = Zᴴ ȧ Z = Ṫ + Ω T - T Ω`` (Ω = Zᴴ Ż anti-Hermitian), the strictly
    lower part of M determines Ω through a triangular Sylvester-type system (singular exactly
    at repeated eigenvalues), and ``Ṫ = triu(M - Ω T + T Ω)``, ``Ż = Z Ω`` (derivation
    (LA12)).  Ω's diagonal is a gauge (the phases of Z's columns): a loss must not depend on
    it (|T_ij|, diag(T), Z T Zᴴ, |Z_ij| are fine).  The rules use diffsci operations on the
    traced factors, so higher orders follow.

    Args:
        a: (n, n) real or complex matrix.
        output: 'real' or 'complex' (SciPy's).
        sort: SciPy's; plain input only.
        lwork, overwrite_a, check_finite: SciPy's; ignored for traced input.

    Returns:
        ``(T, Z)`` (``(T, Z, sdim)`` with sort, plain input only).

    Raises:
        NotImplementedError: traced input with sort, or output='real' with complex
            eigenvalues.
        ValueError: a is not square.

    Example:
        >>> schur(np.diag([1.0, 2.0]))[0]
        array([[1., 0.],
               [0., 2.]])

    References:
        Golub & Van Loan, "Matrix Computations" (4th ed.), §7.1; diffsci/DERIVATIONS.md, (LA12).
    """
    _square(a, "schur")
    if not is_tracer(a):
        return sl.schur(a, output=output, lwork=lwork, overwrite_a=overwrite_a, sort=sort,
                        check_finite=check_finite)
    if sort is not None:
        raise NotImplementedError("diffsci.scipy.linalg.schur: sort is not supported for "
                                  "traced input (the ordering is piecewise constant; sort the "
                                  "plain call's eigenvalues and reorder instead)")
    if output not in ("real", "complex", "r", "c"):
        raise ValueError(f"diffsci.scipy.linalg.schur: output must be 'real' or 'complex', got "
                         f"{output!r}")
    out = "complex" if output in ("complex", "c") or np.iscomplexobj(getval(a)) else "real"
    p = _schur_p(a, output=out)
    t, z = _schur_parts(p)
    if out == "real" and np.any(np.diagonal(getval(t), -1) != 0):
        raise NotImplementedError(
            "diffsci.scipy.linalg.schur: the real Schur form of a matrix with complex "
            "eigenvalues has 2 x 2 blocks, which are not differentiable here; use "
            "output='complex'")
    return t, z


# Special matrices (toeplitz, hankel, circulant, ...): diffsci/scipy/_linalg_special.py.
from . import _linalg_special  # noqa: E402, I001
from ._linalg_special import (  # noqa: E402, F401
    block_diag, circulant, companion, convolution_matrix, eigh_tridiagonal, fiedler, hankel,
    leslie, qr_multiply, toeplitz,
)
# fiedler_companion, hessenberg, rsf2csf, funm: diffsci/scipy/_linalg_decomp.py.
from . import _linalg_decomp  # noqa: E402, I001
from ._linalg_decomp import fiedler_companion, funm, hessenberg, rsf2csf  # noqa: E402, F401

__all__ = sorted(__all__ + _linalg_special.__all__ + _linalg_decomp.__all__)
