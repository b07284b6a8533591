"""Tests for solve_ivp(method="BDF"): the variable-order NDF/BDF of Shampine & Reichelt (1997).

References: scipy.integrate.solve_ivp(method="BDF") (the same family of formulas and controller,
different code: the step sequences differ, so values agree to a few × rtol, measured against a
tight Radau reference); the closed form y(T) = expm(A T) y0 of a stiff linear system and the
Fréchet derivative of expm for dA; finite differences of SciPy's solver at tight tolerance for
Robertson's rate constants; central finite differences (check_grads).
"""

import functools

import numpy as np
import pytest
import scipy.integrate as si
from scipy.linalg import expm, expm_frechet

import diffsci as ds
from diffsci.scipy._ivp_bdf import KAPPA, _r_matrix, _rescale
from diffsci.scipy.integrate import solve_ivp
from diffsci.testing import check_grads

S = np.array([[-100.0, 1.0], [0.5, -2.0]])  # eigenvalues ≈ −100, −2: stiff
Y0 = np.array([1.0, 2.0])
W = np.array([0.3, -0.7])
K_ROBER = np.array([0.04, 3e7, 1e4])


def linear(t, y, A):
    return A @ y


def rober(t, y, k):
    return np.stack([-k[0] * y[0] + k[2] * y[1] * y[2],
                     k[0] * y[0] - k[1] * y[1] ** 2 - k[2] * y[1] * y[2],
                     k[1] * y[1] ** 2])


def vdp(t, y, mu):
    return np.stack([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]])


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("r", [0.2, 0.7, 1.0, 2.5])
def test_step_size_change_maps_differences_exactly(k, r):
    """Byrne–Hindmarsh: the differences of a degree-k polynomial sampled at spacing h, mapped by
    (R(r) U)ᵀ, are its differences at spacing r h (exact for polynomials of degree ≤ k)."""
    coef = np.random.default_rng(k).standard_normal(k + 1)

    def diffs(h):
        vals = [np.array([np.polyval(coef, -j * h)]) for j in range(k + 1)]
        out, cur = [vals[0]], vals
        for _ in range(k):
            cur = [cur[i] - cur[i + 1] for i in range(len(cur) - 1)]
            out.append(cur[0])
        return out + [np.zeros(1)] * 2
    got, want = _rescale(diffs(0.1), k, r), diffs(0.1 * r)
    np.testing.assert_allclose(np.concatenate(got[:k + 1]), np.concatenate(want[:k + 1]),
                               atol=1e-13)
    np.testing.assert_allclose(_r_matrix(k, 1.0) @ _r_matrix(k, 1.0), np.eye(k + 1),
                               atol=1e-12)  # U² = I
    assert KAPPA[5] == 0.0  # order 5 is plain BDF5


ROBER_TE = np.array([1e-3, 0.1, 1.0, 10.0, 100.0])


@functools.lru_cache(maxsize=1)
def _rober_tight():
    return si.solve_ivp(rober, (0, 100), np.array([1.0, 0.0, 0.0]), method="Radau",
                        t_eval=ROBER_TE, args=(K_ROBER,), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("rtol", [1e-3, 1e-6])
def test_robertson_values_close_to_scipy_bdf(rtol):
    te = ROBER_TE
    kw = dict(t_eval=te, args=(K_ROBER,), rtol=rtol, atol=1e-10)
    y0 = np.array([1.0, 0.0, 0.0])
    r = solve_ivp(rober, (0, 100), y0, method="BDF", **kw)
    ref = si.solve_ivp(rober, (0, 100), y0, method="BDF", **kw)
    tight = _rober_tight()
    assert r.success and r.status == 0 and r.njev > 0 and r.nlu > 0
    np.testing.assert_array_equal(r.t, te)
    # global error in units of the tolerance: SciPy's BDF measures 0.66 (1e-3) and 2.7 (1e-6),
    # ours 0.99 and 6.2; "a few × rtol" is asserted as 10
    ours = np.max(np.abs(r.y - tight.y) / (rtol * np.abs(tight.y) + 1e-10))
    theirs = np.max(np.abs(ref.y - tight.y) / (rtol * np.abs(tight.y) + 1e-10))
    assert ours < 10 and theirs < 10
    assert 0.5 < r.nfev / ref.nfev < 2  # the same family of formulas and controller


def test_van_der_pol_mu_1000_close_to_scipy_bdf():
    """mu = 1000 through its first relaxation jump (t ≈ 807): the global error in units of
    the tolerance against SciPy's BDF at rtol 1e-9 (measured 4.2 ours, 2.9 SciPy's BDF)."""
    te, rtol = np.array([500.0, 1000.0]), 1e-5
    kw = dict(t_eval=te, args=(1000.0,), rtol=rtol, atol=1e-8)
    y0 = np.array([2.0, 0.0])
    r = solve_ivp(vdp, (0, 1000), y0, method="BDF", **kw)
    ref = si.solve_ivp(vdp, (0, 1000), y0, method="BDF", **kw)
    tight = si.solve_ivp(vdp, (0, 1000), y0, method="BDF", **{**kw, "rtol": 1e-9,
                                                                 "atol": 1e-12})
    assert r.success and len(r.t) == 2
    ours = np.max(np.abs(r.y - tight.y) / (rtol * np.abs(tight.y) + 1e-8))
    theirs = np.max(np.abs(ref.y - tight.y) / (rtol * np.abs(tight.y) + 1e-8))
    assert ours < 10 and theirs < 10
    assert 0.5 < r.nfev / ref.nfev < 2 and r.nfev < 3000  # stiff: RK45 needs ~1e6


def test_dense_output_and_t_eval():
    te = np.linspace(0, 1, 7)
    kw = dict(args=(S,), rtol=1e-8, atol=1e-10, method="BDF")
    r = solve_ivp(linear, (0, 1), Y0, dense_output=True, **kw)
    r2 = solve_ivp(linear, (0, 1), Y0, t_eval=te, **kw)
    exact = np.stack([expm(S * t) @ Y0 for t in te], axis=1)
    # the interpolant of the last k+1 points: accurate to ~the tolerance between the steps
    np.testing.assert_allclose(r.sol(te), exact, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(r2.y, r.sol(te), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(r.sol(r.t), r.y, rtol=1e-12, atol=1e-14)  # interpolates
    # backwards in time (a non-stiff system: backwards, a stiff one blows up as it should)
    M = np.array([[-0.5, 1.0], [-1.0, -0.3]])
    back = solve_ivp(linear, (1, 0), Y0, t_eval=te[::-1], **{**kw, "args": (M,)})
    want = np.stack([expm(M * (t - 1)) @ Y0 for t in te[::-1]], axis=1)
    # global error at rtol 1e-8: measured 6.2e-8 (SciPy's BDF: 4.8e-8)
    np.testing.assert_allclose(back.y, want, rtol=0, atol=3e-7)


@pytest.mark.parametrize("adjoint", [False, True])
def test_stiff_linear_gradient_equals_expm_closed_form(adjoint):
    tol = (1e-10, 1e-12) if not adjoint else (1e-6, 1e-9)

    def obj(y0, A):
        return W @ solve_ivp(linear, (0, 1), y0, method="BDF", args=(A,), rtol=tol[0],
                             atol=tol[1], adjoint=adjoint).y[:, -1]
    gy, gA = ds.grad(obj, argnums=(0, 1))(Y0, S)
    E = expm(S)
    want_A = np.array([[W @ expm_frechet(S, np.outer(np.eye(2)[i], np.eye(2)[j]),
                                         compute_expm=False) @ Y0 for j in range(2)]
                       for i in range(2)])
    # the discrete solution's derivative is within the global error of the exact one
    # (rtol 1e-10: 1e-8 measured relative); the adjoint within its own tolerance
    # (measured 1e-8); the adjoint: forward and backward global errors at rtol 1e-6, measured
    # 2e-5 relative on the small entries, 2e-7 of the largest; a wrong rule is off by O(1)
    r, a = (1e-7, 1e-10) if not adjoint else (1e-4, 1e-6)
    np.testing.assert_allclose(gy, E.T @ W, rtol=r, atol=a)
    np.testing.assert_allclose(gA, want_A, rtol=r, atol=a)


def test_check_grads_discrete_solution():
    # the gradient of the discrete solution itself: exact (to FD's error) at a loose rtol
    def f(y0, A):
        return solve_ivp(linear, (0, 1), y0, method="BDF", args=(A,), rtol=1e-5,
                         atol=1e-8).y[:, -1]
    check_grads(f, (Y0, S), modes=("rev",), eps=1e-6, rtol=1e-5, atol=1e-8)


def test_robertson_rate_constant_gradient_vs_scipy_finite_differences():
    y0 = np.array([1.0, 0.0, 0.0])
    g = ds.grad(lambda k: solve_ivp(rober, (0, 1), y0, method="BDF", args=(k,), rtol=1e-7,
                                    atol=1e-11).y[0, -1])(K_ROBER)

    def ref(k):
        return si.solve_ivp(rober, (0, 1), y0, method="Radau", args=(k,), rtol=1e-11,
                            atol=1e-14).y[0, -1]
    fd = np.array([(ref(K_ROBER * (1 + 1e-5 * e)) - ref(K_ROBER * (1 - 1e-5 * e)))
                   / (2e-5 * K_ROBER[i]) for i, e in enumerate(np.eye(3))])
    # measured agreement 3e-7 .. 2.7e-6 relative (the discrete solution's error at rtol 1e-7)
    np.testing.assert_allclose(g, fd, rtol=1e-5)


def test_newton_failure_status_and_max_steps():
    def nan_after(t, y):  # Newton cannot converge past t = 0.5: the step halves to underflow
        return -y if t < 0.5 else y * np.nan
    r = solve_ivp(nan_after, (0, 2), np.array([1.0]), method="BDF")
    assert r.status == -1 and not r.success and "Newton" in r.message
    assert 0.45 < r.t[-1] < 0.5
    r = solve_ivp(linear, (0, 1), Y0, method="BDF", args=(S,), max_steps=3)
    assert r.status == -1 and "max_steps=3" in r.message


def test_forward_mode_and_second_order_through_the_ift_steps():
    """y' = −k y: y(T) = e^{−kT}, dy/dk = −T e^{−kT}, d²y/dk² = T² e^{−kT}; jvp and the
    Hessian go through each step's custom_vjp (forward mode from its VJP)."""
    T, k = 1.5, 0.7

    def yT(k):
        return solve_ivp(lambda t, y, k: -k * y, (0, T), np.array([1.0]), method="BDF",
                         args=(k,), rtol=1e-10, atol=1e-12).y[0, -1]
    e = np.exp(-k * T)
    # the discrete solution is within ~1e-9 relative of the exact one at rtol 1e-10 (measured)
    np.testing.assert_allclose(ds.jvp(yT, (k,), (1.0,))[1], -T * e, rtol=1e-7)
    np.testing.assert_allclose(ds.grad(yT)(k), -T * e, rtol=1e-7)
    np.testing.assert_allclose(ds.grad(ds.grad(yT))(k), T * T * e, rtol=1e-6)
    np.testing.assert_allclose(ds.jacfwd(ds.grad(yT))(k), T * T * e, rtol=1e-6)
