"""BDF for diffsci.scipy.integrate.solve_ivp: variable order 1–5 NDFs, steps differentiated
by the IFT.

The quasi-constant step size formulation of Shampine & Reichelt (1997, §2.1–2.3): the solution
is carried as the backward difference array D (D_0 = y_n, D_j = ∇^j y_n at the current step
size h); the numerical differentiation formula (NDF) of order k with Klopfenstein–Shampine
coefficient κ_k is, with γ_k = Σ_{j≤k} 1/j, α = (1 − κ_k) γ_k and the predictor
y⁽⁰⁾ = Σ_{j≤k} D_j,

    G(d; y⁽⁰⁾, ψ, p) = d − (h/α) f(t_{n+1}, y⁽⁰⁾ + d, p) + ψ = 0,   ψ = (1/α) Σ_{j=1}^k γ_j D_j,

solved for the correction d by Newton on plain values (Jacobian by :func:`diffsci.jacfwd`,
reused while Newton converges), y_{n+1} = y⁽⁰⁾ + d; the local error is (κ_k γ_k + 1/(k+1)) d.
A change of step size by a factor r maps D_{1..k} by the constant matrix (R(r) U)ᵀ with
R(r)_{ij} = Π_{m=1}^{i} (m − 1 − r j)/m and U = R(1) (Byrne & Hindmarsh 1975; S&R §2.2), so it
is linear in D and recorded as is.  The order moves by ±1 after k+1 steps of equal size to the
order whose error estimate allows the largest step (S&R §2.3).

Each step's d is one :class:`diffsci.custom_vjp` in (y⁽⁰⁾, ψ, p) whose reverse rule is the
implicit function theorem on G = 0: ū = (∂G/∂d)⁻ᵀ d̄ with ∂G/∂d = I − (h/α) ∂f/∂y at the
solution, then (ȳ⁽⁰⁾, ψ̄, p̄) = −ū ᵀ ∂G/∂(y⁽⁰⁾, ψ, p).  Everything else (predictor, ψ, the
difference update and step-size changes) is linear in D with plain coefficients and is recorded,
so the gradient is the exact derivative of the discrete solution for the accepted step sizes
and orders.  Dense output: the interpolating polynomial through the last k+1 points, the
Newton form of D (S&R §2.1).

References:
    L. F. Shampine, M. W. Reichelt, "The MATLAB ODE suite", SIAM J. Sci. Comput. 18 (1997) 1–22.
    G. D. Byrne, A. C. Hindmarsh, "A polyalgorithm for the numerical solution of ordinary
    differential equations", ACM TOMS 1 (1975) 71–96.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from .._api import pullback, stop_gradient
from .._core import getval
from .._custom import custom_vjp
from .._forward import jacfwd
from ._ivp import _initial_step, _rms, _too_many, _traced

__all__ = ["bdf_solve", "KAPPA", "MAX_ORDER"]

MAX_ORDER = 5
#: Klopfenstein–Shampine NDF coefficients κ_k, k = 1..5 (S&R Table 1; κ_5 = 0: BDF5).
KAPPA = np.array([0.0, -0.1850, -1 / 9, -0.0823, -0.0415, 0.0])
_GAMMA = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, MAX_ORDER + 1))])
_ALPHA = (1 - KAPPA) * _GAMMA
_ERR_CONST = KAPPA * _GAMMA + 1 / np.arange(1, MAX_ORDER + 2)
_NEWTON_MAXITER = 4
_MIN_FACTOR, _MAX_FACTOR = 0.2, 10.0


def _r_matrix(k, factor):
    """R(r)_{ij} = Π_{m=1}^{i} (m − 1 − r j)/m, i, j = 0..k (row 0 ones)."""
    i = np.arange(1, k + 1)[:, None]
    j = np.arange(1, k + 1)[None, :]
    m = np.zeros((k + 1, k + 1))
    m[1:, 1:] = (i - 1 - factor * j) / i
    m[0] = 1
    return np.cumprod(m, axis=0)


def _rescale(D, k, factor):
    """D_{0..k} at step size r h from D at h: D ← (R(r) U)ᵀ D (Byrne & Hindmarsh)."""
    RU = _r_matrix(k, factor) @ _r_matrix(k, 1.0)
    head = RU.T @ np.stack(D[:k + 1])
    return [head[i] for i in range(k + 1)] + list(D[k + 1:])


def _newton(fp, t, y_pred, psi, c, p, lu, scale, tol, stats, d0=None):
    """Newton for G(d) = d − c f(t, y⁽⁰⁾ + d) + ψ = 0 with a fixed LU of I − c J."""
    d = np.zeros_like(y_pred) if d0 is None else d0.copy()
    y = y_pred + d
    prev = None
    for it in range(_NEWTON_MAXITER):
        f = np.asarray(getval(fp(t, y, p)), dtype=np.float64)
        stats.nfev += 1
        if not np.all(np.isfinite(f)):
            return None, it + 1
        dy = scipy.linalg.lu_solve(lu, c * f - psi - d)
        norm = _rms(dy, scale)
        rate = None if prev is None else norm / prev
        if rate is not None and (rate >= 1 or rate ** (_NEWTON_MAXITER - it)
                                 / (1 - rate) * norm > tol):
            return None, it + 1
        y = y + dy
        d = d + dy
        if norm == 0 or (rate is not None and rate / (1 - rate) * norm < tol):
            return d, it + 1
        prev = norm
    return None, _NEWTON_MAXITER


def _correction(fp, t, c, d_plain, opts, stats):
    """d(y⁽⁰⁾, ψ, p) of one step as a custom_vjp, the IFT on G = 0 for its reverse rule."""
    def residual(d, y_pred, psi, p):
        return d - c * fp(t, y_pred + d, p) + psi

    def plain(y_pred, psi, p):  # Newton again from the plain solve's d (one iteration)
        J = jacfwd(lambda y: fp(t, y, p))(y_pred + d_plain)
        lu = scipy.linalg.lu_factor(np.eye(y_pred.size) - c * J)
        scale = opts.atol + opts.rtol * np.abs(y_pred + d_plain)
        d, _ = _newton(fp, t, y_pred, psi, c, p, lu, scale, 1e-3 * opts.rtol, stats, d_plain)
        return d_plain if d is None else d

    @custom_vjp
    def corr(y_pred, psi, p):
        return plain(np.asarray(y_pred, dtype=np.float64), np.asarray(psi, dtype=np.float64),
                     tuple(np.asarray(x, dtype=np.float64) for x in p))

    def fwd(y_pred, psi, p):
        d = corr(y_pred, psi, p)
        return d, (d, y_pred, psi, p)

    def bwd(res, dbar):
        d, y_pred, psi, p = res
        jd = jacfwd(lambda z: residual(z, y_pred, psi, p))(d)
        u = np.linalg.solve(np.transpose(jd), dbar)
        _, back = pullback(lambda yp_, ps_, *p_: residual(d, yp_, ps_, p_), y_pred, psi, *p)
        cts = back(u)
        return (-cts[0], -cts[1], tuple(-x for x in cts[2:]))

    corr.defvjp(fwd, bwd)
    return corr


def _dense_piece(D, k):
    """The Newton-form interpolant through y_{n+1-m}, m = 0..k, on θ ∈ [0, 1] of the step."""
    def piece(th):
        out, w = D[0], 1.0
        for j in range(1, k + 1):
            w = w * (th - 1 + (j - 1)) / j
            out = out + D[j] * w
        return out
    return piece


def bdf_solve(fp, t0, tf, y0, p, opts, stats, dense, on_step=None):
    """Adaptive variable-order BDF/NDF from t0 to tf: step times, y there, pieces, failure."""
    direction = 1.0 if tf > t0 else -1.0
    span = abs(tf - t0)
    pv = stop_gradient(p)
    traced = _traced((y0, p))
    f0 = fp(t0, y0, p)
    stats.nfev += 1
    h = opts.first_step if opts.first_step is not None else _initial_step(
        lambda t, y: fp(t, y, pv), t0, y0, f0, direction, 1, opts, stats, span)
    h = min(h, opts.max_step)
    D = [y0, f0 * (h * direction)] + [np.zeros(np.size(getval(y0)))] * (MAX_ORDER + 1)
    k, n_equal, t = 1, 0, t0
    ts, ys, pieces = [t0], [y0], []
    newton_tol = max(10 * np.finfo(float).eps / opts.rtol, min(0.03, opts.rtol ** 0.5))
    J, J_current, lu, lu_c = None, False, None, None
    nsteps = 0
    while (tf - t) * direction > 1e-13 * max(abs(tf), 1.0):
        if nsteps >= opts.max_steps:
            return ts, ys, pieces, _too_many("BDF", opts, t)
        nsteps += 1
        if h > opts.max_step:
            D = _rescale(D, k, opts.max_step / h)
            h, n_equal = opts.max_step, 0
        while True:  # one accepted step
            hs = direction * h
            t_new = t + hs
            if (t_new - tf) * direction > 0 or abs(tf - t_new) < 1e-13 * max(abs(tf), 1.0):
                D = _rescale(D, k, abs(tf - t) / h)
                h, n_equal, t_new, hs = abs(tf - t), 0, tf, tf - t
            Dv = stop_gradient(D)
            y_pred = np.sum(np.stack(Dv[:k + 1]), axis=0)
            psi = np.dot(_GAMMA[1:k + 1], np.stack(Dv[1:k + 1])) / _ALPHA[k]
            c = hs / _ALPHA[k]
            scale = opts.atol + opts.rtol * np.abs(y_pred)
            d = None
            for _attempt in range(2):
                if J is None:
                    J = jacfwd(lambda y: fp(t_new, y, pv))(y_pred)
                    stats.njev += 1
                    J_current = True
                if not np.all(np.isfinite(J)):  # fun not finite here: as a Newton failure
                    J, lu, d = None, None, None
                    break
                if lu is None or lu_c != c:
                    lu, lu_c = scipy.linalg.lu_factor(np.eye(y_pred.size) - c * J), c
                    stats.nlu += 1
                d, _ = _newton(fp, t_new, y_pred, psi, c, pv, lu, scale, newton_tol, stats)
                if d is not None or J_current:
                    break
                J, lu = None, None
            if d is None:
                h *= 0.5
                D = _rescale(D, k, 0.5)
                n_equal = 0
                if h < 1e-14 * max(abs(t), 1.0):
                    return ts, ys, pieces, f"solve_ivp: BDF's Newton iteration failed at t = {t!r}"
                continue
            y_new = y_pred + d
            scale = opts.atol + opts.rtol * np.abs(y_new)
            err = _rms(_ERR_CONST[k] * d, scale)
            if err > 1:
                factor = max(_MIN_FACTOR, 0.9 * err ** (-1 / (k + 1)))
                h *= factor
                D = _rescale(D, k, factor)
                n_equal = 0
                continue
            break
        J_current = False
        # the accepted step, recorded: d as the IFT custom_vjp of its implicit equation
        if traced:
            yp_t = np.sum(np.stack(D[:k + 1]), axis=0)
            psi_t = np.dot(_GAMMA[1:k + 1], np.stack(D[1:k + 1])) / _ALPHA[k]
            d = _correction(fp, t_new, c, d, opts, stats)(yp_t, psi_t, p)
        D = list(D)
        D[k + 2] = d - D[k + 1]
        D[k + 1] = d
        for i in range(k, -1, -1):
            D[i] = D[i] + D[i + 1]
        t = t_new
        n_equal += 1
        ts.append(t)
        ys.append(D[0])
        if dense:
            pieces.append(_dense_piece(list(D), k))
        if on_step is not None and on_step(ts, ys, pieces):
            break
        if n_equal < k + 1:
            continue
        Dv = stop_gradient(D)
        e = _rms(_ERR_CONST[k] * Dv[k + 1], scale)  # = err of this step
        e_m = _rms(_ERR_CONST[k - 1] * Dv[k], scale) if k > 1 else np.inf
        e_p = _rms(_ERR_CONST[k + 1] * Dv[k + 2], scale) if k < MAX_ORDER else np.inf
        with np.errstate(divide="ignore"):
            facs = [e_m ** (-1 / k) if k > 1 else 0.0, e ** (-1 / (k + 1)) if e > 0 else np.inf,
                    e_p ** (-1 / (k + 2)) if k < MAX_ORDER else 0.0]
        best = int(np.argmax(facs))
        k += best - 1
        factor = min(_MAX_FACTOR, 0.9 * facs[best]) if math.isfinite(facs[best]) else _MAX_FACTOR
        h *= factor
        D = _rescale(D, k, factor)
        n_equal = 0
        lu = None
    return ts, ys, pieces, None
