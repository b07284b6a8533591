"""fd_price's banded (tridiagonal) Crank–Nicolson steps: the solve against dense NumPy, its
derivative rules against finite differences (to second order), and the whole scheme against the
same scheme written with dense matrices."""

import numpy as np
import pytest

import finance
from diffsci.testing import check_grads
from finance._fd import _solve, _tridiag, _tridiag_plain


def _dense(bands):
    lo, di, up = bands[0], bands[1], bands[2]
    return np.diag(di) + np.diag(lo[1:], -1) + np.diag(up[:-1], 1)


@pytest.mark.parametrize("m", [2, 3, 9, 64])
def test_tridiagonal_solve_matches_dense(m):
    rng = np.random.default_rng(m)
    bands = rng.normal(size=(4, 3, m))
    bands[:, 1] += 4.0 * np.sign(bands[:, 1])  # diagonally dominant: well conditioned
    rhs = rng.normal(size=(4, m))
    got = _tridiag_plain(bands, rhs)
    for j in range(4):
        np.testing.assert_allclose(got[j], np.linalg.solve(_dense(bands[j]), rhs[j]),
                                   rtol=1e-13, atol=1e-14)
    # broadcasting: one matrix, several right-hand sides
    np.testing.assert_allclose(_tridiag_plain(bands[0], rhs),
                               np.stack([np.linalg.solve(_dense(bands[0]), r) for r in rhs]),
                               rtol=1e-13, atol=1e-14)


def test_tridiagonal_rules_to_second_order():
    rng = np.random.default_rng(3)
    bands = rng.normal(size=(2, 3, 6))
    bands[:, 1] += 5.0
    rhs = rng.normal(size=(2, 6))
    check_grads(_tridiag, (bands, rhs), order=2)
    check_grads(lambda b: _tridiag(b, rhs[0]), (bands[0],), order=2)   # rhs broadcasts


def _dense_scheme(anchor, h, k, t, r, q, sig, w, american, m, n):
    """The same θ-scheme with dense step matrices and np.linalg.solve (plain NumPy)."""
    s = anchor * np.exp(h * (np.arange(m) - m // 2))
    payoff = np.maximum(w * (s - k), 0.0)
    i = np.arange(1, m - 1)
    op = np.zeros((m, m))
    a2, a1 = 0.5 * sig * sig / h**2, (r - q - 0.5 * sig * sig) / h
    op[i, i - 1], op[i, i], op[i, i + 1] = a2 - 0.5 * a1, -2.0 * a2 - r, a2 + 0.5 * a1
    inner = np.zeros((m, m))
    inner[i, i] = 1.0
    dt = t / n

    def step(v, tau, theta, d):
        rhs = (inner + (1 - theta) * d * op) @ v
        itm = w * (s * np.exp(-q * tau) - k * np.exp(-r * tau))
        if american:
            itm = np.maximum(itm, w * (s - k))
        rhs[[0, -1]] = np.maximum(itm, 0.0)[[0, -1]]
        v = np.linalg.solve(np.eye(m) - theta * d * op, rhs)
        return np.maximum(v, payoff) if american else v

    v, tau = payoff, 0.0
    for _ in range(4):
        tau += 0.5 * dt
        v = step(v, tau, 1.0, 0.5 * dt)
    for _ in range(n - 2):
        tau += dt
        v = step(v, tau, 0.5, dt)
    return v


@pytest.mark.parametrize("american", [True, False])
@pytest.mark.parametrize("w", [1.0, -1.0])
def test_scheme_equals_dense_scheme(american, w):
    anchor, h, m, n = 36.0, 0.03, 41, 25
    got = _solve(np.array(anchor), np.array(h), 40.0, 1.0, 0.06, 0.03, 0.25, np.array(w),
                 american, m, n)
    ref = _dense_scheme(anchor, h, 40.0, 1.0, 0.06, 0.03, 0.25, w, american, m, n)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_scheme_gradients_on_a_fixed_grid():
    """The discrete solution's derivatives (the grid held fixed, as fd_price holds it): exact for
    the scheme, European to second order, American (projection) to first."""
    anchor, h, w = np.array([36.0, 40.5]), np.array([0.02, 0.025]), np.array([-1.0, 1.0])
    for american, order in ((False, 2), (True, 1)):
        def f(k, t, r, q, v, american=american):
            return _solve(anchor, h, k, t, r, q, v, w, american, 31, 12)

        check_grads(f, (40.0, 1.0, 0.06, 0.03, 0.25), order=order)


def test_fd_price_batch_equals_dense_per_option():
    spots = np.array([30.0, 36.0, 44.0])
    calls = np.array([False, False, True])
    got = finance.fd_price(spot=spots, strike=40.0, expiry=1.0, rate=0.06, dividend=0.03,
                           vol=0.25, is_call=calls, n_space=41, n_time=20)
    for s, c, g in zip(spots, calls, got):
        h = 2 * 5.0 * 0.25 / 40
        vals = _dense_scheme(s, h, 40.0, 1.0, 0.06, 0.03, 0.25, 1.0 if c else -1.0, True, 41,
                             20)
        assert abs(g - vals[20]) < 1e-12
