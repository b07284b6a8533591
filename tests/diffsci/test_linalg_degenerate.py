"""diffsci.numpy.linalg at degenerate inputs: singular matrices, repeated eigen/singular values,
zero vectors and matrices.  Tables over the degenerate cases, each against a closed form
computed independently (minors, the spectral construction of the input) and, where the
derivative exists, finite differences (check_grads, both modes, second order where smooth).
Conventions are those of diffsci/DERIVATIONS.md, section "Linear algebra at degenerate inputs".
"""

from __future__ import annotations

import importlib
import itertools
import warnings

import numpy as np
import pytest

import diffsci as ds
import diffsci.numpy as dnp
import diffsci.numpy.linalg as dla
from diffsci.testing import check_grads

RNG = np.random.default_rng(20261201)


# ---------------------------------------------------------------- references
def cofactors(a):
    """C_ij = (-1)^(i+j) det(a without row i and column j): the gradient of det (real a)."""
    n = a.shape[-1]
    if n == 1:
        return np.ones_like(a)
    c = np.empty_like(a)
    for i, j in itertools.product(range(n), range(n)):
        minor = np.delete(np.delete(a, i, axis=-2), j, axis=-1)
        c[..., i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return c


def low_rank(n, r, dtype=float):
    """An n x n matrix of rank r (0 <= r <= n)."""
    x = RNG.standard_normal((n, r))
    y = RNG.standard_normal((n, r))
    if dtype is complex:
        x = x + 1j * RNG.standard_normal((n, r))
        y = y + 1j * RNG.standard_normal((n, r))
    return x @ y.T if r else np.zeros((n, n), dtype)


SINGULAR = [(n, r) for n in (1, 2, 3, 4) for r in range(n)]  # every rank below full


# ---------------------------------------------------------------- det at singular matrices
def test_det_gradient_of_the_jax_example():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    want = [[4.0, -2.0], [-2.0, 1.0]]
    np.testing.assert_allclose(ds.grad(dla.det)(a), want, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(ds.jacfwd(dla.det)(a), want, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("n,r", SINGULAR, ids=[f"n{n}-rank{r}" for n, r in SINGULAR])
def test_det_gradient_is_the_cofactor_matrix(n, r):
    a = low_rank(n, r)
    want = cofactors(a)
    scale = max(1.0, np.abs(want).max())
    for got in (ds.grad(dla.det)(a), ds.jacfwd(dla.det)(a)):
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12 * scale)


@pytest.mark.parametrize("n,r", SINGULAR, ids=[f"n{n}-rank{r}" for n, r in SINGULAR])
def test_det_hessian_at_singular_matrices(n, r):
    # det is a polynomial: its Hessian exists everywhere; reference: central differences of
    # the cofactor matrix (computed from minors, not by diffsci), exact up to O(h^2).
    a = low_rank(n, r)
    h = 1e-5
    want = np.empty((n, n, n, n))
    for k, l in itertools.product(range(n), range(n)):
        e = np.zeros((n, n))
        e[k, l] = h
        want[:, :, k, l] = (cofactors(a + e) - cofactors(a - e)) / (2 * h)
    for mode in ("rev", "fwd"):
        got = ds.hessian(dla.det, mode=mode)(a)
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-7)
    check_grads(dla.det, (a,), order=2)


@pytest.mark.parametrize("dtype", [float, complex])
def test_det_batched_over_ranks_to_second_order(dtype):
    # One stack holding a full-rank matrix and every singular rank, real and complex.
    a = np.stack([low_rank(3, r, dtype) for r in range(4)])
    check_grads(lambda a: dla.det(a), (a,), order=2)
    if dtype is float:
        np.testing.assert_allclose(ds.grad(lambda a: dnp.sum(dla.det(a)))(a), cofactors(a),
                                   rtol=1e-10, atol=1e-12)


def test_det_third_order_says_so():
    a = low_rank(3, 1)
    with pytest.raises(NotImplementedError, match="det: derivatives of order 3"):
        ds.grad(lambda t: ds.hessian(dla.det)(a * t)[0, 0, 1, 1])(1.0)


# ---------------------------------------------------------------- slogdet, inv, solve singular
@pytest.mark.parametrize("dtype", [float, complex])
def test_slogdet_at_singular_is_minus_inf_and_its_gradient_is_refused(dtype):
    a = low_rank(3, 3, dtype)
    a[..., 1] = 0  # exactly singular in floating point (LU meets a zero pivot)
    sign, logabs = np.linalg.slogdet(a)
    assert sign == 0 and logabs == -np.inf
    loss = (lambda a: dla.slogdet(a).logabsdet)
    for d in (ds.grad(loss), ds.jacfwd(loss)):
        with pytest.raises(np.linalg.LinAlgError, match=r"linalg.slogdet: a is singular"):
            d(a)


@pytest.mark.parametrize("call,name", [
    (lambda a: dla.inv(a), "inv"),
    (lambda a: dla.solve(a, np.ones(2)), "solve"),
    (lambda a: dla.solve(a, np.ones((2, 3))), "solve"),
    (lambda a: dla.matrix_power(a, -2), "inv (matrix_power)"),
])
def test_inv_and_solve_at_singular_raise_naming_the_function(call, name):
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    plain = [call] if "power" not in name else []  # matrix_power of a plain array is NumPy's
    for d in plain + [ds.grad(lambda a: dnp.sum(call(a))), ds.jacfwd(call)]:
        with pytest.raises(np.linalg.LinAlgError,
                           match=rf"diffsci.numpy.linalg.{_name(name)}: a is singular"):
            d(a)


def _name(name):
    return name.split()[0]


# ---------------------------------------------------------------- repeated eigenvalues
Q4 = np.linalg.qr(RNG.standard_normal((4, 4)))[0]
SPECTRA = {
    "simple": [0.5, 1.0, 2.0, 3.0],
    "one pair": [1.0, 1.0, 2.0, 3.0],
    "two pairs": [-1.0, -1.0, 2.0, 2.0],
    "triple": [0.7, 0.7, 0.7, -2.0],
    "all equal": [2.0, 2.0, 2.0, 2.0],
    "pair 1e-9 apart": [1.0, 1.0 + 1e-9, 2.0, 3.0],
    "pair 1e-14 apart": [1.0, 1.0 + 1e-14, 2.0, 3.0],
}
# f, f' for spectral losses tr f(A)
FUNCS = {"exp": (np.exp, np.exp, dnp.exp), "sin": (np.sin, np.cos, dnp.sin),
         "square": (np.square, lambda w: 2 * w, dnp.square)}


def _spectral(lam, f):
    return (Q4 * f(np.asarray(lam))) @ Q4.T


def _tr_f_via_eigenvectors(fd):
    def loss(x):
        w, v = dla.eigh(0.5 * (x + x.T))
        return dnp.trace((v * fd(w)[None, :]) @ v.T)
    return loss


@pytest.mark.parametrize("spectrum", list(SPECTRA))
@pytest.mark.parametrize("fname", list(FUNCS))
def test_trace_of_f_through_eigenvectors_at_repeated_eigenvalues(spectrum, fname):
    # tr f(A) = tr(V f(Λ) Vᵀ) looks at the eigenvectors but is spectral: gradient f'(A).
    f, fprime, fd = FUNCS[fname]
    lam = SPECTRA[spectrum]
    a = _spectral(lam, lambda w: w)
    want = _spectral(lam, fprime)
    loss = _tr_f_via_eigenvectors(fd)
    # pairs closer than rounding are degenerate (their term is 0), 1e-9 apart they are divided;
    # the rounding in V f(Λ) Vᵀ over a gap of 1e-9 costs ~1e-7 relative.
    tol = 1e-6 if "1e-9" in spectrum else 1e-10
    for got in (ds.grad(loss)(a), ds.jacfwd(loss)(a)):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("spectrum", list(SPECTRA))
def test_eigenvalue_functions_at_repeated_eigenvalues(spectrum):
    lam = np.asarray(SPECTRA[spectrum])
    a = _spectral(lam, lambda w: w)
    sym = (lambda x: 0.5 * (x + x.T))
    cases = [  # (loss, gradient)
        (lambda x: dnp.sum(dla.eigvalsh(sym(x))), np.eye(4)),
        (lambda x: dnp.sum(dla.eigh(sym(x))[0] ** 3), _spectral(lam, lambda w: 3 * w ** 2)),
        (lambda x: dnp.sum(dnp.exp(dla.eigvalsh(sym(x)))), _spectral(lam, np.exp)),
    ]
    for loss, want in cases:
        for got in (ds.grad(loss)(a), ds.jacfwd(loss)(a)):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_loss_looking_inside_an_eigenspace_gets_nan_not_a_wrong_number():
    # Entries of V Λ Vᵀ (= A) at a repeated eigenvalue: the eigenvector cotangent does not
    # determine the gradient (it needs the in-eigenspace term); reverse mode says NaN.
    a = _spectral(SPECTRA["one pair"], lambda w: w)
    m = np.arange(16.0).reshape(4, 4)

    def loss(x):
        w, v = dla.eigh(0.5 * (x + x.T))
        return dnp.sum(((v * w[None, :]) @ v.T) * m)

    assert np.isnan(ds.grad(loss)(a)).any()
    b = _spectral(SPECTRA["simple"], lambda w: w)  # distinct eigenvalues: exact
    np.testing.assert_allclose(ds.grad(loss)(b), 0.5 * (m + m.T), rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------- repeated singular values
@pytest.mark.parametrize("svals", [[2.0, 2.0, 2.0], [3.0, 1.0, 1.0], [1.0, 1.0, 1e-14 + 1.0],
                                   [2.0, 0.5, 0.1]])
def test_svd_spectral_losses_at_repeated_singular_values(svals):
    u = np.linalg.qr(RNG.standard_normal((4, 3)))[0]
    v = np.linalg.qr(RNG.standard_normal((3, 3)))[0]
    s = np.asarray(svals)
    a = (u * s) @ v.T
    polar = u @ v.T
    cases = [  # (loss, gradient): nuclear norm, Frobenius through U S Vh, sum of s^2
        (lambda x: dnp.sum(dla.svd(x, full_matrices=False)[1]), polar),
        (lambda x: dla.norm(x, "nuc"), polar),
        (lambda x: dnp.sum(_usv(dla.svd(x, full_matrices=False)) ** 2), 2 * a),
        (lambda x: dnp.sum(dla.svdvals(x) ** 2), 2 * a),
    ]
    for loss, want in cases:
        for got in (ds.grad(loss)(a), ds.jacfwd(loss)(a)):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def _usv(usv):
    u, s, vh = usv
    return (u * s[..., None, :]) @ vh


@pytest.mark.parametrize("rank", [0, 1, 2])
def test_zero_singular_values_get_gradient_zero(rank):
    # A zero singular value is |σ| at σ = 0: gradient 0 (abs'(0) = 0), so the nuclear norm of
    # a rank-deficient matrix gets U₊ V₊ᵀ (the minimum-norm subgradient) and 0 at 0.
    u = np.linalg.qr(RNG.standard_normal((3, 3)))[0]
    v = np.linalg.qr(RNG.standard_normal((3, 3)))[0]
    s = np.array([2.0, 1.0, 0.0])[:3] * (np.arange(3) < rank)
    a = (u * s) @ v.T
    want = u[:, :rank] @ v[:, :rank].T
    for got in (ds.grad(lambda x: dla.norm(x, "nuc"))(a),
                ds.jacfwd(lambda x: dla.norm(x, "nuc"))(a)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------- norms at zero
VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1, -2]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


def _quiet(f):
    def g(*a):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # NumPy's own negative-order norm of a zero
            return f(*a)
    return g


@pytest.mark.parametrize("ord_", VECTOR_ORDS, ids=str)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_vector_norm_subgradient_zero_at_zero(ord_, axis):
    if axis is None:
        x, f = np.zeros(3), (lambda x: dla.norm(x, ord_))
    else:
        x = np.zeros((2, 3))
        f = (lambda x: dnp.sum(dla.norm(x, ord_, axis=axis)))
    for got in (_quiet(ds.grad(f))(x), _quiet(ds.jacfwd(f))(x)):
        np.testing.assert_array_equal(got, np.zeros_like(x))


@pytest.mark.parametrize("ord_", MATRIX_ORDS, ids=str)
@pytest.mark.parametrize("axis", [None, (0, 1), (1, 0), (-1, -3)])
def test_matrix_norm_subgradient_zero_at_zero(ord_, axis):
    x = np.zeros((2, 3)) if axis is None or axis != (-1, -3) else np.zeros((2, 2, 3))
    f = (lambda x: dnp.sum(dla.norm(x, ord_, axis=axis)))
    for got in (ds.grad(f)(x), ds.jacfwd(f)(x)):
        np.testing.assert_array_equal(got, np.zeros_like(x))


def test_norm_with_a_zero_row_and_a_zero_entry():
    # axis variants: a zero row gets 0, other rows their ordinary gradient; a zero entry of a
    # p < 1 or negative-order norm gets 0 (the limit is infinite there).
    x = np.array([[0.0, 0.0], [3.0, -4.0]])
    for ord_, row in [(None, [0.6, -0.8]), (1, [1.0, -1.0]), (np.inf, [0.0, -1.0]),
                      (3, np.sign([3.0, -4.0]) * np.abs([3.0, 4.0]) ** 2 / 91 ** (2 / 3))]:
        f = (lambda x: dnp.sum(dla.norm(x, ord_, axis=1)))
        for got in (ds.grad(f)(x), ds.jacfwd(f)(x)):
            np.testing.assert_allclose(got, [[0.0, 0.0], row], rtol=1e-12, atol=1e-15)
    y = np.array([0.0, 1.0, -2.0])
    for ord_ in (0.5, -1):
        g = _quiet(ds.grad(lambda y: dla.norm(y, ord_)))(y)
        assert g[0] == 0 and np.all(np.isfinite(g))


# ---------------------------------------------------------------- matrix norms, closed forms
def test_matrix_norms_closed_forms():
    a = np.array([[3.0, -1.0, 0.5], [0.2, 2.0, -4.0]])
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    cases = {
        "fro": a / np.linalg.norm(a),
        "nuc": u @ vh,
        2: np.outer(u[:, 0], vh[0]),
        -2: np.outer(u[:, -1], vh[-1]),
        1: np.array([[0, 0, 1.0], [0, 0, -1.0]]),      # column 2 has the largest |sum|
        -1: np.array([[0, -1.0, 0], [0, 1.0, 0]]),     # column 1 the smallest
        np.inf: np.array([[0, 0, 0], [1.0, 1.0, -1.0]]),
        -np.inf: np.array([[1.0, -1.0, 1.0], [0, 0, 0]]),
    }
    for ord_, want in cases.items():
        for got in (ds.grad(lambda x: dla.norm(x, ord_))(a),
                    ds.jacfwd(lambda x: dla.norm(x, ord_))(a)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14, err_msg=str(ord_))
        check_grads(lambda x: dla.norm(x, ord_), (a,), order=2 if ord_ != "nuc" else 1)


# ---------------------------------------------------------------- eig, pinv, lstsq, cond
# Forward mode of the specs in specs_linalg.py (test_numpy_grads checks them in reverse mode).
# test_numpy_grads first: it imports specs_linalg, which imports the samplers from it.
importlib.import_module(f"{__package__}.test_numpy_grads")
specs_linalg = importlib.import_module(f"{__package__}.specs_linalg")


@pytest.mark.parametrize("k", range(len(specs_linalg.SPECS)),
                         ids=[f"{s.name}-{k}" for k, s in enumerate(specs_linalg.SPECS)])
def test_linalg_specs_forward_mode(k):
    spec = specs_linalg.SPECS[k]
    rng = np.random.default_rng(k)
    args = tuple(sample(rng) for sample in spec.args)
    check_grads(spec.fun, args, order=spec.order, modes=("fwd",))


def test_eigenvalue_gradient_is_left_times_right_eigenvector():
    # dλ_k/dA = conj(y_k x_kᵀ / (y_kᴴ x_k)) in diffsci's convention (cotangent of Re λ_k), with
    # SciPy's left eigenvectors y_k (y_kᴴ A = λ_k y_kᴴ): independent of the rule's V⁻¹.
    import scipy.linalg as sl

    a = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))
    w, yl, xr = sl.eig(a, left=True, right=True)
    for k in range(4):
        want = np.conj(np.outer(np.conj(yl[:, k]), xr[:, k]) / (np.conj(yl[:, k]) @ xr[:, k]))
        got = ds.grad(lambda a: _match(dla.eigvals(a), w[k]))(a)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


def _match(ws, target):
    """Re of the traced eigenvalue closest to ``target`` (eig's order is LAPACK's)."""
    k = int(np.argmin(np.abs(ds.extend.getval(ws) - target)))
    return dnp.real(ws[k])


def test_eig_of_a_real_matrix_with_real_spectrum_is_real_like_numpy():
    a = specs_linalg._distinct_real_spectrum(3)(np.random.default_rng(1))
    seen = {}

    def loss(a):
        w, v = dla.eig(a)
        seen["dtypes"] = (np.result_type(ds.extend.getval(w)), np.result_type(ds.extend.getval(v)))
        return dnp.sum(w)  # tr(a)

    got = ds.grad(loss)(a)
    assert seen["dtypes"] == (np.float64, np.float64) == tuple(x.dtype for x in np.linalg.eig(a))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.eye(3), atol=1e-10)


def test_pinv_and_lstsq_match_the_normal_equations():
    a = RNG.standard_normal((5, 3))
    b = RNG.standard_normal(5)

    def normal_eq(a):  # (aᵀa)⁻¹ aᵀ for full column rank, through inv: an independent path
        return dla.inv(a.T @ a) @ a.T

    np.testing.assert_allclose(ds.jacobian(dla.pinv)(a), ds.jacobian(normal_eq)(a),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ds.jacfwd(dla.pinv)(a), ds.jacobian(normal_eq)(a),
                               rtol=1e-10, atol=1e-12)
    x_ref = lambda a, b: dla.solve(a.T @ a, a.T @ b)  # noqa: E731
    for argnum in (0, 1):
        np.testing.assert_allclose(
            ds.jacobian(lambda a, b: dla.lstsq(a, b)[0], argnums=argnum)(a, b),
            ds.jacobian(x_ref, argnums=argnum)(a, b), rtol=1e-10, atol=1e-12)


def test_lstsq_values_match_numpy_when_traced():
    a = RNG.standard_normal((5, 3))
    b = RNG.standard_normal((5, 2))
    want = np.linalg.lstsq(a, b)
    seen = {}

    def loss(a):
        got = dla.lstsq(a, b)
        seen["got"] = [ds.extend.getval(g) for g in got]
        return dnp.sum(got[0])

    ds.grad(loss)(a)
    for g, w in zip(seen["got"], want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)


def test_cond_gradient_closed_form():
    a = RNG.standard_normal((3, 3))
    u, s, vh = np.linalg.svd(a)
    want = np.outer(u[:, 0], vh[0]) / s[-1] - s[0] / s[-1] ** 2 * np.outer(u[:, -1], vh[-1])
    for got in (ds.grad(dla.cond)(a), ds.jacfwd(dla.cond)(a)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert dla.cond(a) == np.linalg.cond(a)


def test_norm_of_a_list_of_traced_scalars():
    got = ds.grad(lambda x, y: dla.norm([x, y]), argnums=(0, 1))(3.0, 4.0)
    np.testing.assert_allclose(got, (0.6, 0.8), rtol=1e-15)
    got = ds.jacfwd(lambda x: dla.norm([x, 2 * x, 2.0]))(1.0)
    np.testing.assert_allclose(got, 5 / 3, rtol=1e-15)


# ---------------------------------------------------------------- property: det at any rank
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 5), data=st.data(), seed=st.integers(0, 2**32 - 1),
       scale=st.sampled_from([1e-3, 1.0, 1e3]))
def test_det_gradient_is_the_cofactor_matrix_at_any_rank(n, data, seed, scale):
    r = data.draw(st.integers(0, n))
    rng = np.random.default_rng(seed)
    a = scale * (rng.standard_normal((n, r)) @ rng.standard_normal((r, n)))
    want = cofactors(a)
    tol = 1e-9 * max(np.abs(want).max(), scale ** (n - 1) * 1e-3, 1e-300)
    for got in (ds.grad(dla.det)(a), ds.jacfwd(dla.det)(a)):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=tol)


# ---------------------------------------------------------------- eig at repeated eigenvalues
X3 = np.random.default_rng(0).standard_normal((3, 3)) + 2 * np.eye(3)


@pytest.mark.parametrize("lam", [[1.0, 1.0, 2.0], [2.0, 2.0, 2.0], [1.0, 1.5, 2.0]],
                         ids=["pair", "triple", "simple"])
def test_eig_at_repeated_eigenvalues(lam):
    # Eigenvalue-only losses keep their exact gradient (Σ w² = tr A²: 2 Aᵀ; Σ w = tr A: I);
    # a loss through the eigenvectors is NaN at a repeated eigenvalue in both modes (the
    # general eigenproblem's gauge hides whether it looks inside the eigenspace), exact at
    # simple ones: Σ_ij (V Λ² V⁻¹)_ij = Σ_ij (A²)_ij has gradient J Aᵀ + Aᵀ J.
    a = X3 @ np.diag(lam) @ np.linalg.inv(X3)
    cases = [(lambda a: dnp.real(dnp.sum(dla.eigvals(a) ** 2)), 2 * a.T),
             (lambda a: dnp.real(dnp.sum(dla.eig(a).eigenvalues)), np.eye(3))]
    for loss, want in cases:
        for got in (ds.grad(loss)(a), ds.jacfwd(loss)(a)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)

    def through_v(a):
        w, v = dla.eig(a)
        return dnp.real(dnp.sum(v @ dnp.diag(w ** 2) @ dla.inv(v)))

    j = np.ones((3, 3))
    for got in (ds.grad(through_v)(a), ds.jacfwd(through_v)(a)):
        if len(set(lam)) < 3:
            assert np.isnan(got).any()
        else:
            np.testing.assert_allclose(got, j @ a.T + a.T @ j, rtol=1e-12, atol=1e-12)
