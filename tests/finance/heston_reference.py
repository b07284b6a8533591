"""Independent references for the Heston pricer's tests (not collected by pytest).

* :func:`ode_log_char_fn`: ``ln φ(z)`` from the Riccati equations, integrated by SciPy's DOP853
  (no closed form, so no branch of a complex logarithm or square root to get wrong):
  ``D' = −α/2 − bD + σ²D²/2``, ``C' = κθD``, ``D(0) = C(0) = 0``, ``α = z² + iz``,
  ``b = κ − iρσz`` (Heston 1993; the generator of ``(x, v)``).
* :func:`quad_price`: the Lewis call price ``C_BS(w) − √(SK)e^{−(r+q)T/2}/π ∫₀^∞ …`` by
  ``scipy.integrate.quad`` (adaptive Gauss–Kronrod, tight tolerances) on the real axis or on a
  rotated ray, on geometric pieces out to where the integrand is below 1e-18 of its size.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import quad, solve_ivp
from scipy.special import ndtr

from diffsci.extend import getval as ds_plain
from finance._analytic import heston as H


def ode_log_char_fn(z, expiry, kappa, theta, sigma, rho, v0):
    """``ln φ(z)`` for one complex ``z`` by integrating the Riccati ODEs (rtol 1e-13)."""
    alpha = z * z + 1j * z
    b = kappa - 1j * rho * sigma * z

    def rhs(_, y):
        d = y[0] + 1j * y[1]
        dd = -0.5 * alpha - b * d + 0.5 * sigma * sigma * d * d
        dc = kappa * theta * d
        return [dd.real, dd.imag, dc.real, dc.imag]

    sol = solve_ivp(rhs, (0.0, expiry), [0.0, 0.0, 0.0, 0.0], method="DOP853", rtol=1e-13,
                    atol=1e-15)
    y = sol.y[:, -1]
    return complex(y[2], y[3]) + complex(y[0], y[1]) * v0


def bs_call(spot, strike, expiry, rate, dividend, total_var):
    sd = np.sqrt(total_var)
    f, k = spot * np.exp(-dividend * expiry), strike * np.exp(-rate * expiry)
    d1 = np.log(f / k) / sd + 0.5 * sd
    return f * ndtr(d1) - k * ndtr(d1 - sd)


def pricer_angle(k, rho):
    """The ray angle ϑ the pricer uses (its rule, restated): sign of k, ≤ π/8, ≤ half the room."""
    sgn = 1.0 if k >= 0 else -1.0
    return sgn * min(0.5 * (0.5 * np.pi - sgn * np.arcsin(rho)), np.pi / 8)


def quad_price(spot, strike, expiry, rate, dividend, params, *, angle=None, is_call=True):
    """The Heston price by adaptive quadrature along ``u = r e^{i·angle}`` (0: the real axis;
    None: the pricer's ray)."""
    kappa, theta, sigma, rho, v0 = params
    k = np.log(spot / strike) + (rate - dividend) * expiry
    if angle is None:
        angle = pricer_angle(k, rho)
    w = float(H.integrated_variance(expiry, kappa, theta, v0))
    rot = np.exp(1j * angle)

    def fv(r):
        return H._integrand(np.asarray(r) * rot, k, expiry, w, kappa, theta, sigma, rho, v0) * rot

    def f(r):
        return complex(fv(np.complex128(r)))

    scale = 1.0 / np.sqrt(w)
    # the last geometric radius where r|f| is above 1e-19
    probe = scale * np.geomspace(1e-3, 1e9, 1200)
    with np.errstate(all="ignore"):
        mag = np.abs(fv(probe)) * probe
    live = np.nonzero(~(mag < 1e-19))[0]
    top = probe[min(live[-1] + 1, probe.size - 1)] if live.size else probe[0]
    edges = np.concatenate([[0.0], np.geomspace(min(scale, 1.0) * 1e-2, top, 40)])
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        re = quad(lambda r: f(r).real, a, b, epsabs=1e-18, epsrel=1e-13, limit=400)[0]
        total += re
    fwd, kd = spot * np.exp(-dividend * expiry), strike * np.exp(-rate * expiry)
    call = bs_call(spot, strike, expiry, rate, dividend, w) - np.sqrt(fwd * kd) / np.pi * total
    return call if is_call else call - fwd + kd


def fine_price(spot, strike, expiry, rate, dividend, params, *, panels=2000, nodes=30,
               is_call=True):
    """The Lewis price by a brute-force composite Gauss–Legendre rule on the pricer's ray:
    ``panels`` geometric panels from ``1e-4·min(1/√w, 1)`` to where ``r|f|`` < 1e-20 (an
    independent, much finer rule than the pricer's adaptive panels; differentiable by diffsci
    in every argument, so it is also a reference for the Greeks). Scalar arguments."""
    kp = [float(np.asarray(ds_plain(getattr(params, f))))
          for f in ("kappa", "theta", "sigma", "rho", "v0")]
    sp, kk, tt, rr, qq = (float(np.asarray(ds_plain(x))) for x in (spot, strike, expiry, rate,
                                                                    dividend))
    k0 = np.log(sp / kk) + (rr - qq) * tt
    w0 = float(H.integrated_variance(tt, kp[0], kp[1], kp[4]))
    rot = np.exp(1j * pricer_angle(k0, kp[3]))
    probe = np.geomspace(1e-4, 1e13, 3000) * min(1.0 / np.sqrt(w0), 1.0)
    with np.errstate(all="ignore"):
        mag = H._envelope(probe * rot, k0, tt, w0, *kp) * probe
    live = np.nonzero(~(mag < 1e-20))[0]
    top = probe[min(live[-1] + 1, probe.size - 1)]
    edges = np.concatenate([[0.0], np.geomspace(probe[0], top, panels)])
    x, wt = np.polynomial.legendre.leggauss(nodes)
    half, mid = 0.5 * np.diff(edges), 0.5 * (edges[1:] + edges[:-1])
    z = ((mid[:, None] + half[:, None] * x) * rot).ravel()
    weights = ((half[:, None] * wt) * rot).ravel()
    ka, th, si, rho, v0 = (getattr(params, f) for f in ("kappa", "theta", "sigma", "rho", "v0"))
    k = np.log(spot / strike) + (rate - dividend) * expiry
    w = H.integrated_variance(expiry, ka, th, v0)
    integral = np.real(np.sum(H._integrand(z, k, expiry, w, ka, th, si, rho, v0) * weights))
    fwd, kd = spot * np.exp(-dividend * expiry), strike * np.exp(-rate * expiry)
    call = H._bs_call(fwd, kd, w) - np.sqrt(fwd * kd) / np.pi * integral
    return call if is_call else call - fwd + kd
