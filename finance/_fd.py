"""American and European options by a Crank–Nicolson finite-difference solver in log-spot.

``V_τ = ½σ² V_xx + (r − q − ½σ²) V_x − rV`` on ``x = ln S``, τ = time to expiry, a uniform grid of
``n_space`` nodes over ``ln S ± width · σ√T`` centred on the plain spot; central differences in x,
Dirichlet boundaries (discounted intrinsic values, or exercise values for American options), two
Rannacher start-up steps (four implicit-Euler half steps, damping the payoff kink) then
Crank–Nicolson; early exercise by projection ``V ← max(V, h)`` after each step.

The scheme is written in differentiable NumPy (the step matrices are inverted once by
``np.linalg.inv`` on traced coefficients), so diffsci differentiates the solver; the price at the
spot is the quadratic interpolation in ``ln S`` through the three central nodes, so AD delta and
gamma are the grid's central differences (as for the tree, finance/DERIVATIONS.md §TR, §FD).

References:
    Wilmott, Howison, Dewynne, *The Mathematics of Financial Derivatives* (1995), ch. 8–9
    (projected schemes for American options). R. Rannacher, "Finite element solution of diffusion
    problems with irregular data", Numer. Math. 43 (1984) 309–327. Hull, 10th ed., §21.8.
"""

from __future__ import annotations

import numpy as np

from ._validate import check_bool, check_real, plain

__all__ = ["fd_price"]


def fd_price(*, spot, strike, expiry, rate=0.0, dividend=0.0, vol, is_call=False, american=True,
             n_space=401, n_time=800, width=5.0):
    """Crank–Nicolson (Rannacher start) finite-difference price, American or European (batched).

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
        ValueError: invalid arguments, naming them.

    Example:
        >>> round(float(fd_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)), 3)
        6.089

    References:
        Wilmott et al. (1995), ch. 9; Rannacher (1984).
    """
    who = "fd_price"
    for name, x in (("spot", spot), ("strike", strike), ("expiry", expiry), ("vol", vol)):
        check_real(who, name, x, low=0.0)
    check_real(who, "rate", rate)
    check_real(who, "dividend", dividend)
    check_real(who, "width", width, low=0.0)
    w = np.where(check_bool(who, "is_call", is_call), 1.0, -1.0)
    if not (isinstance(n_space, int | np.integer) and n_space >= 5 and n_space % 2 == 1):
        raise ValueError(f"{who}: n_space must be an odd int >= 5, got {n_space!r}")
    if not (isinstance(n_time, int | np.integer) and n_time >= 3):
        raise ValueError(f"{who}: n_time must be an int >= 3, got {n_time!r}")
    shape = np.broadcast_shapes(*(np.shape(plain(x)) for x in (spot, strike, expiry, rate,
                                                                dividend, vol)), np.shape(w))
    anchor = np.broadcast_to(plain(spot), shape)
    h = 2.0 * float(width) * np.broadcast_to(plain(vol) * np.sqrt(plain(expiry)), shape) / (
        n_space - 1)
    vals = _solve(anchor, h, strike, expiry, rate, dividend, vol, w, bool(american),
                  int(n_space), int(n_time))
    c = n_space // 2
    v_m, v_0, v_p = vals[..., c - 1], vals[..., c], vals[..., c + 1]
    x = np.log(spot / anchor)
    return v_0 + x * (v_p - v_m) / (2.0 * h) + 0.5 * x * x * (v_p - 2.0 * v_0 + v_m) / (h * h)


def _solve(anchor, h, strike, expiry, rate, dividend, vol, w, american, m, n):
    """Grid values at τ = T (last axis: nodes) on valid input; ``anchor``, ``h`` plain."""
    ex = lambda a: np.expand_dims(a, -1)  # noqa: E731
    offsets = np.arange(m) - m // 2
    s = ex(anchor) * np.exp(ex(h) * offsets)                    # plain node spots
    k, r, q, sig, ww = ex(strike), ex(rate), ex(dividend), ex(vol), ex(w)
    payoff = np.maximum(ww * (s - k), 0.0)
    # interior rows of the operator L = a D2 + b D1 − r I (boundary rows zero)
    interior = np.zeros((m, m))
    interior[np.arange(1, m - 1), np.arange(1, m - 1)] = 1.0
    d2 = np.zeros((m, m))
    d1 = np.zeros((m, m))
    i = np.arange(1, m - 1)
    d2[i, i - 1], d2[i, i], d2[i, i + 1] = 1.0, -2.0, 1.0
    d1[i, i - 1], d1[i, i + 1] = -0.5, 0.5
    hh = ex(ex(h))
    a2 = ex(0.5 * sig * sig) / hh**2
    a1 = ex(r - q - 0.5 * sig * sig) / hh
    op = a2 * d2 + a1 * d1 - ex(r) * interior
    eye = np.eye(m)
    dt = ex(ex(expiry)) / n

    def stepper(theta, tau_step):
        lhs_inv = np.linalg.inv(eye - theta * tau_step * op)
        rhs = interior + (1.0 - theta) * tau_step * op         # boundary rows: 0 (Dirichlet)
        return lhs_inv @ rhs, lhs_inv

    def boundary(tau):
        itm = ww * (s * np.exp(-q * tau) - k * np.exp(-r * tau))
        if american:
            itm = np.maximum(itm, ww * (s - k))
        edge = np.zeros(m)
        edge[0] = edge[-1] = 1.0
        return np.maximum(itm, 0.0) * edge

    def advance(v, tau, step):
        mat, lhs_inv = step
        v = (mat @ v[..., None])[..., 0] + (lhs_inv @ boundary(tau)[..., None])[..., 0]
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
