"""Radau IIA for diffsci.scipy.integrate.solve_ivp: implicit steps differentiated by the IFT.

Three stages, order 5, stiffly accurate and L-stable (HNW II §IV.5).  The stage equations
are solved by simplified Newton on plain values; each step is one :class:`diffsci.custom_vjp`
whose reverse rule is the implicit function theorem on the stage equations
(DERIVATIONS.md "solve_ivp" (IVP1)–(IVP3)); the local error is estimated by step doubling
(IVP4).  See :mod:`diffsci.scipy._ivp` for the interface.

References:
    E. Hairer, G. Wanner, *Solving ODEs II*, 2nd ed. (1996), §IV.5 (Radau IIA), §IV.8
    (simplified Newton); E. Hairer, S. P. Nørsett, G. Wanner, *Solving ODEs I*, §II.4 (step
    doubling).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from .._api import pullback, stop_gradient
from .._core import getval
from .._custom import custom_vjp
from .._forward import jacfwd
from ._ivp import FAC_MAX, FAC_MIN, SAFETY, _initial_step, _rms, _too_many, _traced

__all__ = ["radau_solve", "RADAU_A", "RADAU_C"]


def _radau_tableau():
    """Radau IIA (3 stages): nodes the zeros of the Radau polynomial, A by collocation.

    ``A[i, j] = ∫_0^{c_i} ℓ_j(s) ds`` with ℓ_j the Lagrange basis on the nodes (HNW II
    §IV.5, Table 5.6); computed here from the nodes rather than typed in.
    """
    s6 = math.sqrt(6.0)
    c = np.array([(4 - s6) / 10, (4 + s6) / 10, 1.0])
    a = np.zeros((3, 3))
    for j in range(3):
        others = np.delete(c, j)
        poly = np.poly1d(others, r=True) / np.prod(c[j] - others)
        integ = poly.integ()
        a[:, j] = integ(c) - integ(0.0)
    return c, a


RADAU_C, RADAU_A = _radau_tableau()


# ---------------------------------------------------------------------------
# Radau IIA: stages by simplified Newton, derivative by the IFT (IVP1)-(IVP3)
# ---------------------------------------------------------------------------
def _stage_residual(fp, t0, h, y0, Z, p):
    """G(Z; y0, p) = Z − h (A ⊗ I) F(t0 + c h, y0 + Z)  (IVP1); Z has shape (3, n)."""
    F = np.stack([fp(t0 + RADAU_C[i] * h, y0 + Z[i], p) for i in range(3)])
    return Z - h * (RADAU_A @ F)


def _newton(fp, t0, h, y0, p, J, opts, stats):
    """Simplified Newton on plain values (HNW II §IV.8): I − h A⊗J factored once."""
    n = y0.size
    M = np.eye(3 * n) - h * np.kron(RADAU_A, J)
    lu = scipy.linalg.lu_factor(M)
    stats.nlu += 1
    Z = np.zeros((3, n))
    scale = opts.atol + opts.rtol * np.abs(y0)
    tol = max(10 * np.finfo(float).eps / opts.rtol, min(0.03, opts.rtol ** 0.5)) * 1e-3
    prev = None
    for _ in range(12):
        G = _stage_residual(fp, t0, h, y0, Z, p)
        stats.nfev += 3
        if not np.all(np.isfinite(G)):
            return None
        dZ = scipy.linalg.lu_solve(lu, -G.ravel()).reshape(3, n)
        Z = Z + dZ
        norm = _rms(dZ, scale)
        if norm < tol or norm == 0.0:
            return Z
        if prev is not None and norm > 2 * prev:
            return None  # diverging
        prev = norm
    return None


def _radau_step(fp, t0, h, opts, stats):
    """The stages Z(y0, p) of one Radau IIA step as a custom_vjp (IVP2)."""
    def plain_stages(y0, p):
        J = jacfwd(lambda y: fp(t0, y, p))(y0)
        stats.njev += 1
        Z = _newton(fp, t0, h, y0, p, J, opts, stats)
        if Z is None:
            raise _NewtonFailed
        return Z

    @custom_vjp
    def stages(y0, p):
        return plain_stages(np.asarray(y0, dtype=np.float64),
                            tuple(np.asarray(x, dtype=np.float64) for x in p))

    def fwd(y0, p):
        Z = stages(y0, p)  # a lower trace level sees its own custom_vjp call
        return Z, (Z, y0, p)

    def bwd(res, Zbar):
        Z, y0, p = res
        n = np.size(getval(y0))
        jz = jacfwd(lambda z: _stage_residual(fp, t0, h, y0, z.reshape(3, n), p).ravel())(
            np.reshape(Z, (-1,)))
        u = np.linalg.solve(np.transpose(jz), np.reshape(Zbar, (-1,)))  # (IVP3)
        _, back = pullback(lambda y_, *p_: _stage_residual(fp, t0, h, y_, Z, p_).ravel(),
                           y0, *p)
        cts = back(u)
        return (-cts[0], tuple(-c for c in cts[1:]))

    stages.defvjp(fwd, bwd)
    return stages


class _NewtonFailed(Exception):
    pass




def _collocation_piece(y0, Z):
    """The collocation polynomial u(θ) through (0, y0), (c_i, y0 + Z_i): Lagrange form."""
    nodes = np.concatenate([[0.0], RADAU_C])

    def piece(th):
        out = y0
        for i in range(1, 4):
            others = np.delete(nodes, i)
            w = 1.0
            for o in others:
                w = w * (th - o) / (nodes[i] - o)
            out = out + Z[i - 1] * w
        return out
    return piece


def radau_solve(fp, t0, tf, y0, p, opts, stats, dense, on_step=None):
    """Adaptive Radau IIA from t0 to tf: step boundaries, y there, pieces, failure or None.

    ``on_step(ts, ys, pieces)`` (the event tracker) is called after each kept half step; it
    returns True to stop (a terminal event, which has already cut the last piece).
    """
    direction = 1.0 if tf > t0 else -1.0
    span = abs(tf - t0)
    f0 = fp(t0, y0, p)
    stats.nfev += 1
    h = opts.first_step if opts.first_step is not None else _initial_step(
        lambda t, y: fp(t, y, stop_gradient(p)), t0, y0, f0, direction, 5, opts, stats, span)
    h = min(h, opts.max_step)
    t, y = t0, y0
    ts, ys, pieces = [t0], [y0], []
    nsteps, fac_max = 0, FAC_MAX
    while (tf - t) * direction > 1e-13 * max(abs(tf), 1.0):
        if nsteps >= opts.max_steps:
            return ts, ys, pieces, _too_many("Radau", opts, t)
        remaining = abs(tf - t)
        last = h >= remaining
        h_used = remaining if last else h
        hs = direction * h_used
        nsteps += 1
        yv, pv = stop_gradient((y, p))
        plain = not _traced((y, p))
        try:  # the error estimate on plain values: one full step against two halves
            Zf = _radau_step(fp, t, hs, opts, stats)(yv, pv)
            Za = _radau_step(fp, t, hs / 2, opts, stats)(yv, pv)
            Zb = _radau_step(fp, t + hs / 2, hs / 2, opts, stats)(yv + Za[2], pv)
        except _NewtonFailed:
            h = h_used * 0.5
            fac_max = 1.0
            if h < 1e-14 * max(abs(t), 1.0):
                return ts, ys, pieces, f"solve_ivp: Radau's Newton iteration failed at t = {t!r}"
            continue
        y_full, y_half = yv + Zf[2], yv + Za[2] + Zb[2]
        scale = opts.atol + opts.rtol * np.maximum(np.abs(yv), np.abs(y_half))
        err = _rms(y_half - y_full, scale)
        if err <= 1.0:
            # recompute the two accepted half steps on the traced values (IFT per step);
            # Newton converges at once from the same inputs, so this is cheap to record.
            t_mid, t_new = t + hs / 2, (tf if last else t + hs)
            if not plain:
                Za = _radau_step(fp, t, hs / 2, opts, stats)(y, p)
            y_mid = y + Za[2]
            if not plain:
                Zb = _radau_step(fp, t_mid, hs / 2, opts, stats)(y_mid, p)
            y_new = y_mid + Zb[2]
            stop = False
            for y_from, z, t_to, y_to in ((y, Za, t_mid, y_mid), (y_mid, Zb, t_new, y_new)):
                if dense:
                    pieces.append(_collocation_piece(y_from, z))
                ts.append(t_to)
                ys.append(y_to)
                if on_step is not None and on_step(ts, ys, pieces):
                    stop = True
                    break
            if stop:
                break
            t, y = t_new, y_new
            factor = SAFETY * err ** (-1 / 6) if err > 0 else fac_max
            h = min(h_used * min(fac_max, max(FAC_MIN, factor)), opts.max_step)
            fac_max = FAC_MAX
        else:
            h = h_used * max(FAC_MIN, SAFETY * err ** (-1 / 6)) if math.isfinite(err) \
                else h_used * FAC_MIN
            fac_max = 1.0
    return ts, ys, pieces, None
