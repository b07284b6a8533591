"""A solver step's linear combination as one differentiable primitive.

Every one-step solver ends a stage with ``y + Σᵢ cᵢ fᵢ + Σⱼ gⱼ·wⱼ`` (drift values fᵢ with scalar
weights cᵢ, diffusion values gⱼ applied to fixed noise arrays wⱼ). Written with NumPy operators
on traced values, that is one tape record per product and per sum, each keeping its output
array alive until the backward pass (for Euler–Heun: 8 records and ≈ 6 state-sized arrays per
step, kept besides those of the drift and diffusion). :func:`combine` is one ``custom_vjp``
record whose residuals are only the weights (the wⱼ are the Brownian increments, already
referenced by the grid's queries): the VJP is linear (DERIVATIONS.md §7),

    ȳ ↦ (ȳ,  cᵢ ȳ,  G(ȳ, wⱼ))

with ``G`` the transpose of ``g·w`` (``SDE.g_prod_transpose``), and the JVP is the same
combination of the tangents. Both are written with NumPy calls, so forward mode and higher
derivatives differentiate through them.
"""

from __future__ import annotations

import numpy as np

import diffsci as ds
from diffsci.extend import unbroadcast

__all__ = ["combine"]


def _value(y, fs, cs, gs, ws, diag):
    out = y
    for c, f in zip(cs, fs):
        out = out + c * f
    for g, w in zip(gs, ws):
        out = out + (g * w if diag else np.sum(g * w[:, None, :], axis=-1))
    return out


@ds.custom_vjp
def _combine(y, fs, cs, gs, ws, diag):
    return _value(y, fs, cs, gs, ws, diag)


def _combine_fwd(y, fs, cs, gs, ws, diag):
    return _value(y, fs, cs, gs, ws, diag), (y, fs, cs, gs, ws, diag)


def _combine_bwd(res, gy):
    y, fs, cs, gs, ws, diag = res
    fbar = tuple(unbroadcast(c * gy, f) for c, f in zip(cs, fs))
    if diag:
        gbar = tuple(unbroadcast(gy * w, g) for g, w in zip(gs, ws))
    else:
        gbar = tuple(unbroadcast(gy[:, :, None] * w[:, None, :], g) for g, w in zip(gs, ws))
    return (unbroadcast(gy, y), fbar, None, gbar, None, None)


def _combine_jvp(primals, tangents):
    y, fs, cs, gs, ws, diag = primals
    ty, tfs, _, tgs, _, _ = tangents
    out = _value(y, fs, cs, gs, ws, diag)
    tout = 0.0 * out if ty is None else ty + 0.0 * out
    for c, tf in zip(cs, tfs):
        if tf is not None:
            tout = tout + c * tf
    for tg, w in zip(tgs, ws):
        if tg is not None:
            tout = tout + (tg * w if diag else np.sum(tg * w[:, None, :], axis=-1))
    return out, tout


_combine.defvjp(_combine_fwd, _combine_bwd)
_combine.defjvp(_combine_jvp)


def combine(sde, y, drift=(), noise=()):
    """``y + Σ c·f + Σ g·w`` for ``drift = ((c, f), ...)``, ``noise = ((g, w), ...)`` (w plain
    arrays, c Python floats), as one record; ``g·w`` is ``sde.g_prod``."""
    fs = tuple(f for _, f in drift)
    cs = tuple(float(c) for c, _ in drift)
    gs = tuple(g for g, _ in noise)
    ws = tuple(w for _, w in noise)
    return _combine(y, fs, cs, gs, ws, sde.noise.value in ("diagonal", "scalar"))
