"""American and European options by a Crank–Nicolson finite-difference solver in log-spot.

``V_τ = ½σ² V_xx + (r − q − ½σ²) V_x − rV`` on ``x = ln S``, τ = time to expiry, a uniform grid of
``n_space`` nodes over ``ln S ± width · σ√T`` centred on the plain spot; central differences in x,
Dirichlet boundaries (discounted intrinsic values, or exercise values for American options), two
Rannacher start-up steps (four implicit-Euler half steps, damping the payoff kink) then
Crank–Nicolson; early exercise by projection ``V ← max(V, h)`` after each step.

The scheme is written in differentiable NumPy; each implicit step is one tridiagonal solve
(LAPACK gtsv, O(n_space) per step: a diffsci primitive whose reverse and forward rules are
derived in finance/DERIVATIONS.md §FD, (FD2)–(FD3), and differentiate again), so diffsci
differentiates the solver; the price at the spot is the quadratic interpolation in ``ln S``
through the three central nodes, so AD delta and gamma are the grid's central differences (as for
the tree, finance/DERIVATIONS.md §TR, §FD).

References:
    Wilmott, Howison, Dewynne, *The Mathematics of Financial Derivatives* (1995), ch. 8–9
    (projected schemes for American options). R. Rannacher, "Finite element solution of diffusion
    problems with irregular data", Numer. Math. 43 (1984) 309–327. Hull, 10th ed., §21.8.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.lapack import dgtsv as _gtsv

from diffsci.extend import defjvp, defvjp, getval, primitive, value_mask
from diffsci.typing import Array, ArrayLike

from ._validate import check_real, plain, prepare

__all__ = ["fd_price"]


def fd_price(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike, rate: ArrayLike = 0.0,
             dividend: ArrayLike = 0.0, vol: ArrayLike, is_call: bool = False,
             american: bool = True, n_space: int = 401, n_time: int = 800,
             width: float = 5.0) -> Array:
    """Crank–Nicolson (Rannacher start) finite-difference price, American or European (batched).

    Units: ``expiry`` in years; ``rate`` and ``dividend`` continuously compounded, per year;
    ``vol`` per √year. AD derivatives are per unit of each input: vega per 1.00 of vol (÷ 100
    for a vol point), rho per 1.00 of rate, ∂/∂expiry per year (theta is −∂V/∂expiry per year).
    Cost: O(n_space · n_time) (one tridiagonal solve per step).

    Args:
        spot, strike, expiry, vol: > 0 (broadcastable; each option gets its own grid).
        rate, dividend: r and q (continuous).
        is_call: bool (array); default False (an American put).
        american: early exercise by projection after each step.
        n_space: grid nodes in ln S (odd int >= 5; the spot is the middle node).
        n_time: time steps (int >= 3; the first two are Rannacher's implicit-Euler half steps).
        width: half-width of the grid in standard deviations ``σ√T`` (> 0).

    Returns:
        Prices shaped like the broadcast arguments (differentiable).

    Raises:
        TypeError: a bool, complex or non-numeric number, a non-bool flag, or a non-int
            n_space/n_time (naming it).
        ValueError: invalid or non-broadcasting arguments, naming them.

    Example:
        >>> round(float(fd_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)), 3)
        6.089

    References:
        Wilmott et al. (1995), ch. 9; Rannacher (1984).
    """
    who = "fd_price"
    spot, strike, expiry, rate, dividend, vol, is_call = prepare(
        who, spot=(spot, 0.0), strike=(strike, 0.0), expiry=(expiry, 0.0), rate=(rate, None),
        dividend=(dividend, None), vol=(vol, 0.0), flags={"is_call": is_call})
    check_real(who, "width", width, low=0.0)
    if np.ndim(width):
        raise ValueError(f"{who}: width must be a scalar, got shape {np.shape(width)}")
    w = np.where(is_call, 1.0, -1.0)
    if not isinstance(american, bool | np.bool_):
        raise TypeError(f"{who}: american must be a bool, got {type(american).__name__}")
    for name, x, low, odd in (("n_space", n_space, 5, True), ("n_time", n_time, 3, False)):
        if isinstance(x, bool | np.bool_) or not isinstance(x, int | np.integer):
            raise TypeError(f"{who}: {name} must be an int, got {type(x).__name__} {x!r}")
        if x < low or (odd and x % 2 == 0):
            raise ValueError(f"{who}: {name} must be an {'odd ' if odd else ''}int >= {low}, "
                             f"got {x!r}")
    shape = np.broadcast_shapes(*(np.shape(plain(x)) for x in (spot, strike, expiry, rate,
                                                                dividend, vol)), np.shape(w))
    # the grid from plain values (not differentiated), recomputed under diffsci.jit
    anchor = value_mask(_anchor, spot, shape)
    h = value_mask(_spacing, vol, expiry, shape, float(width), n_space)
    vals = _solve(anchor, h, strike, expiry, rate, dividend, vol, w, bool(american),
                  int(n_space), int(n_time))
    c = n_space // 2
    v_m, v_0, v_p = vals[..., c - 1], vals[..., c], vals[..., c + 1]
    x = np.log(spot / anchor)
    return v_0 + x * (v_p - v_m) / (2.0 * h) + 0.5 * x * x * (v_p - 2.0 * v_0 + v_m) / (h * h)


def _anchor(spot, shape):
    return np.broadcast_to(plain(spot), shape)


def _spacing(vol, expiry, shape, width, n_space):
    return 2.0 * width * np.broadcast_to(plain(vol) * np.sqrt(plain(expiry)), shape) / (
        n_space - 1)


# ---------------------------------------------------------------- the tridiagonal solve
def _tridiag_plain(bands, rhs):
    """Solve ``A x = rhs`` for tridiagonal A per batch element (LAPACK gtsv, O(m) each).

    ``bands[..., 0, :]`` is the sub-diagonal (``A[i, i−1]`` at index i; index 0 unused),
    ``bands[..., 1, :]`` the diagonal, ``bands[..., 2, :]`` the super-diagonal (``A[i, i+1]``
    at index i; the last unused); ``rhs`` is ``(..., m)``.
    """
    bands = np.asarray(bands, dtype=np.float64)
    rhs = np.asarray(rhs, dtype=np.float64)
    shape = np.broadcast_shapes(bands.shape[:-2], rhs.shape[:-1])
    m = rhs.shape[-1]
    bb = np.broadcast_to(bands, (*shape, 3, m)).reshape(-1, 3, m)
    rr = np.broadcast_to(rhs, (*shape, m)).reshape(-1, m)
    out = np.empty_like(rr)
    for j in range(rr.shape[0]):
        *_, x, info = _gtsv(bb[j, 0, 1:], bb[j, 1], bb[j, 2, :-1], rr[j][:, None])
        if info != 0:
            raise np.linalg.LinAlgError(f"fd_price: singular step matrix (gtsv info {info})")
        out[j] = x[:, 0]
    return out.reshape(*shape, m)


_tridiag = primitive(_tridiag_plain, name="tridiag_solve")


def _transpose_bands(bands):
    """The bands of Aᵀ: sub[i] = A[i−1, i] = super[i−1], super[i] = A[i+1, i] = sub[i+1]."""
    lo, di, up = bands[..., 0, :], bands[..., 1, :], bands[..., 2, :]
    zero = 0.0 * di[..., :1]
    return np.stack([np.concatenate([zero, up[..., :-1]], axis=-1), di,
                     np.concatenate([lo[..., 1:], zero], axis=-1)], axis=-2)


def _band_outer(a, x):
    """The band part of ``a xᵀ`` in band storage: ``[a_i x_{i−1}, a_i x_i, a_i x_{i+1}]``."""
    zero = 0.0 * x[..., :1]
    left = np.concatenate([zero, x[..., :-1]], axis=-1)
    right = np.concatenate([x[..., 1:], zero], axis=-1)
    return np.stack([a * left, a * x, a * right], axis=-2)


def _band_matvec(bands, x):
    """``A x`` for tridiagonal A in band storage (differentiable)."""
    prod = _band_outer(np.ones_like(getval(x)), x)
    return np.sum(bands * prod, axis=-2)


def _tridiag_vjp_bands(g, ans, bands, rhs):
    # x = A⁻¹r: r̄ = A⁻ᵀḡ and Ā = −r̄ xᵀ on the band (finance/DERIVATIONS.md §FD, (FD2))
    rbar = _tridiag(_transpose_bands(bands), g)
    out = -_band_outer(rbar, ans)
    return _unbroadcast_to(out, np.shape(bands))


def _tridiag_vjp_rhs(g, ans, bands, rhs):
    return _unbroadcast_to(_tridiag(_transpose_bands(bands), g), np.shape(rhs))


def _unbroadcast_to(x, shape):
    while np.ndim(x) > len(shape):
        x = np.sum(x, axis=0)
    for ax, n in enumerate(shape):
        if n == 1 and np.shape(x)[ax] != 1:
            x = np.sum(x, axis=ax, keepdims=True)
    return x


defvjp(_tridiag, _tridiag_vjp_bands, _tridiag_vjp_rhs)
# ẋ = A⁻¹(ṙ − Ȧx)  (FD3); the rules call the primitive, so they differentiate again
defjvp(_tridiag, lambda t, ans, bands, rhs: -_tridiag(bands, _band_matvec(t, ans)),
       lambda t, ans, bands, rhs: _tridiag(bands, t))


# ---------------------------------------------------------------- the scheme
def _solve(anchor, h, strike, expiry, rate, dividend, vol, w, american, m, n):
    """Grid values at τ = T (last axis: nodes) on valid input; ``anchor``, ``h`` plain."""
    ex = lambda a: np.expand_dims(a, -1)  # noqa: E731
    offsets = np.arange(m) - m // 2
    s = ex(anchor) * np.exp(ex(h) * offsets)                    # plain node spots
    k, r, q, sig, ww = ex(strike), ex(rate), ex(dividend), ex(vol), ex(w)
    payoff = np.maximum(ww * (s - k), 0.0)
    inner = np.ones(m)
    inner[0] = inner[-1] = 0.0                                  # interior rows of L
    hh = ex(h)
    a2 = 0.5 * sig * sig / hh**2
    a1 = (r - q - 0.5 * sig * sig) / hh
    # L = a2 D2 + a1 D1 − r I on the interior rows, in band storage (sub, diag, super)
    op = np.stack([(a2 - 0.5 * a1) * inner, (-2.0 * a2 - r) * inner, (a2 + 0.5 * a1) * inner],
                  axis=-2)
    ident = np.stack([np.zeros(m), np.ones(m), np.zeros(m)])
    dt = ex(ex(expiry)) / n

    def stepper(theta, tau_step):
        lhs = ident - theta * tau_step * op                   # boundary rows: identity
        rhs = ident * inner + (1.0 - theta) * tau_step * op   # boundary rows: 0 (Dirichlet)
        return lhs, rhs

    edge = 1.0 - inner

    def boundary(tau):
        itm = ww * (s * np.exp(-q * tau) - k * np.exp(-r * tau))
        if american:
            itm = np.maximum(itm, ww * (s - k))
        return np.maximum(itm, 0.0) * edge

    def advance(v, tau, step):
        lhs, rhs = step
        v = _tridiag(lhs, _band_matvec(rhs, v) + boundary(tau))
        return np.maximum(v, payoff) if american else v

    euler = stepper(1.0, 0.5 * dt)
    cn = stepper(0.5, dt)
    v, tau = payoff, 0.0 * ex(expiry)
    for _ in range(4):  # Rannacher: four implicit half steps = two full steps
        tau = tau + 0.5 * dt[..., 0]
        v = advance(v, tau, euler)
    for _ in range(n - 2):
        tau = tau + dt[..., 0]
        v = advance(v, tau, cn)
    return v
