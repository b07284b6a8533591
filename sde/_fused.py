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
from diffsci.extend import is_tracer

__all__ = ["combine"]


def _unpack(rest):
    """``rest`` = (f..., g..., w..., c..., n_f, diag): flat positional leaves, so that
    custom_vjp takes its fast path (no pytree rebuilding)."""
    nf, diag = rest[-2], rest[-1]
    ng = (len(rest) - 2 - 2 * nf) // 2
    fs, gs = rest[:nf], rest[nf:nf + ng]
    ws, cs = rest[nf + ng:nf + 2 * ng], rest[nf + 2 * ng:2 * nf + 2 * ng]
    return fs, gs, ws, cs, nf, ng, diag


def _prod(g, w, diag):
    return g * w if diag else np.sum(g * w[:, None, :], axis=-1)


def _value(y, *rest):
    fs, gs, ws, cs, _, _, diag = _unpack(rest)
    out = y
    for c, f in zip(cs, fs):
        out = out + c * f
    for g, w in zip(gs, ws):
        out = out + _prod(g, w, diag)
    return out


@ds.custom_vjp
def _combine(y, *rest):
    return _value(y, *rest)


class _Res:
    """The residuals, as one opaque object (custom_vjp then walks one leaf, not every array):
    the input shapes and the plain weights — no value of the forward pass."""

    __slots__ = ("shapes", "ws", "cs", "nf", "ng", "diag")

    def __init__(self, y, rest):
        fs, gs, self.ws, self.cs, self.nf, self.ng, self.diag = _unpack(rest)
        self.shapes = (np.shape(y), tuple(map(np.shape, fs)), tuple(map(np.shape, gs)))


def _sum_to(g, shape):
    """``g`` summed down to ``shape`` (undo broadcasting; the identity when shapes agree)."""
    if np.shape(g) == shape:
        return g
    lead = np.ndim(g) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and np.shape(g)[lead + i] != 1)
    return np.reshape(np.sum(g, axis=axes), shape)


def _combine_fwd(y, *rest):
    return _value(y, *rest), _Res(y, rest)


def _combine_bwd(res, gy):
    yshape, fshapes, gshapes = res.shapes
    fbar = [_sum_to(c * gy, sh) for c, sh in zip(res.cs, fshapes)]
    if res.diag:
        gbar = [_sum_to(gy * w, sh) for w, sh in zip(res.ws, gshapes)]
    else:
        gbar = [_sum_to(gy[:, :, None] * w[:, None, :], sh) for w, sh in zip(res.ws, gshapes)]
    return (_sum_to(gy, yshape), *fbar, *gbar, *([None] * (res.ng + res.nf + 2)))


def _combine_jvp(primals, tangents):
    y, *rest = primals
    ty, *trest = tangents
    fs, gs, ws, cs, nf, ng, diag = _unpack(rest)
    tfs, tgs = trest[:nf], trest[nf:nf + ng]
    out = _value(y, *rest)
    tout = 0.0 * out if ty is None else ty + 0.0 * out
    for c, tf in zip(cs, tfs):
        if tf is not None:
            tout = tout + c * tf
    for tg, w in zip(tgs, ws):
        if tg is not None:
            tout = tout + _prod(tg, w, diag)
    return out, tout


_combine.defvjp(_combine_fwd, _combine_bwd)
_combine.defjvp(_combine_jvp)


def combine(sde, y, drift=(), noise=()):
    """``y + Σ c·f + Σ g·w`` for ``drift = ((c, f), ...)``, ``noise = ((g, w), ...)`` (c Python
    floats), as one record; ``g·w`` is ``sde.g_prod``.  The record's rules treat the noise
    arrays w as constants: traced ones (``BrownianIncrements`` of traced values, differentiated
    or inputs of a ``diffsci.jit`` program) take the plain operators instead, differentiated
    in every argument."""
    diag = sde.noise.value in ("diagonal", "scalar")
    if any(is_tracer(w) for _, w in noise):
        return _value(y, *(f for _, f in drift), *(g for g, _ in noise), *(w for _, w in noise),
                      *(float(c) for c, _ in drift), len(drift), diag)
    return _combine(y, *(f for _, f in drift), *(g for g, _ in noise), *(w for _, w in noise),
                    *(float(c) for c, _ in drift), len(drift), diag)
